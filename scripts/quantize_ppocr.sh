#!/usr/bin/env bash
# Recipe: INT8 PP-OCRv4 det and rec for `edgemm ocr --models OUT_DIR` (docs/quantize.md).
# Calibration images come from the OCR set generator with seed 2 (the committed evaluation set
# data/ocr_set is seed 1); cls stays float (its convolutions are too small to gain from int8).
# Usage: scripts/quantize_ppocr.sh OUT_DIR [--samples N] [--method minmax|percentile|entropy|mse]
#        [--threads T] [--no-speed-check] [--save-histograms DIR | --histograms DIR]
# --save-histograms DIR keeps each stage's calibration histograms (DIR/det.hist.json, rec.hist.json);
# --histograms DIR reuses them instead of calibrating (same --samples; e.g. another --method).
# Needs a build (scripts/build.sh) and the models (scripts/setup.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: quantize_ppocr.sh OUT_DIR [--samples N] [--method M] [--threads T] [--no-speed-check] [--save-histograms DIR | --histograms DIR]}"
shift
samples=256
method=mse
threads=0
extra=()
save_hist=""
load_hist=""
while [ $# -gt 0 ]; do
  case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --method) method="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --no-speed-check) extra+=(--no-speed-check); shift ;;
    --save-histograms) save_hist="$2"; shift 2 ;;
    --histograms) load_hist="$2"; shift 2 ;;
    *) echo "quantize_ppocr.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="${EDGEMM_BIN:-$root/build/bin/edgemm}"
models="$root/models/ppocrv4"
calib="$root/build/calib_ocr_seed2_$samples"
if [ ! -f "$calib/labels.json" ]; then
  echo "making $samples calibration images in $calib" >&2
  /usr/bin/python3 "$root/tools/datasets/make_ocr_set.py" --out "$calib" --seed 2 --count "$samples" \
    >"$calib.log" 2>&1 || { cat "$calib.log" >&2; exit 1; }
fi
# Manifest with the generator's scene of each image (pages and photos), drawn 40 % / 60 %.
/usr/bin/python3 - "$calib" <<'PY'
import json, os, sys
d = sys.argv[1]
labels = json.load(open(os.path.join(d, 'labels.json')))
samples = [{'path': i['file'], 'scene': 'page' if 'page' in i['tags'] else 'photo'} for i in labels['images']]
json.dump({'samples': samples}, open(os.path.join(d, 'manifest.json'), 'w'), indent=1)
PY
mkdir -p "$out"
[ -n "$save_hist" ] && mkdir -p "$save_hist"
for stage in det rec; do
  hist=()
  [ -n "$save_hist" ] && hist=(--save-histograms "$save_hist/$stage.hist.json")
  [ -n "$load_hist" ] && hist=(--histograms "$load_hist/$stage.hist.json")
  "$bin" quantize "$models/ch_PP-OCRv4_${stage}_infer.onnx" -o "$out/ch_PP-OCRv4_${stage}_infer.onnx" \
    --calib "$calib/manifest.json" --scene-weights page=0.4,photo=0.6 --stage "ocr-$stage" --samples "$samples" --method "$method" --threads "$threads" \
    --ocr-models "$models" ${extra[@]+"${extra[@]}"} ${hist[@]+"${hist[@]}"} --json > "$out/quantize_$stage.json"
done
cp "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$models/ppocr_keys_v1.txt" "$out/"
echo "wrote $out (det and rec int8, cls float); run: $bin ocr --models $out IMAGE"
