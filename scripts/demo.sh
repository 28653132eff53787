#!/usr/bin/env bash
# The main job on a real input: set up, build, then read the text of a real photo with the
# PP-OCRv4 pipeline (det + angle classifier + rec) and print the lines in reading order.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
mkdir -p "$root/build"
echo "[demo] building edgemm (log: build/demo-build.log)"
if ! EDGEMM_TARGETS=edgemm bash "$root/scripts/build.sh" "$root/build" >"$root/build/demo-build.log" 2>&1; then
  tail -n 40 "$root/build/demo-build.log" >&2
  echo "[demo] ERROR: the build failed; the full log is build/demo-build.log" >&2
  exit 1
fi
echo
echo "== edgemm ocr data/demo/photo_text.jpg (boxes drawn to build/demo_ocr.png)"
"$root/build/bin/edgemm" ocr "$root/data/demo/photo_text.jpg" --threads 2 --models "$root/models/ppocrv4" \
  --draw "$root/build/demo_ocr.png"
