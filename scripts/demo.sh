#!/usr/bin/env bash
# The main job on a real input: set up, build, then run PP-OCRv4 detection on a real photo with
# text (preprocessed as PP-OCR does) and print a summary of the probability map.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build" >/dev/null
echo
echo "== edgemm run: PP-OCRv4 det on data/demo/photo_text.jpg (1x3x416x640, BGR, PP-OCR normalization)"
"$root/build/bin/edgemm" run "$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx" \
  --input x="$root/data/demo/photo_det_input.npy" --above 0.3 --threads 2
