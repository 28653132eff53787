#!/usr/bin/env bash
# edgemm quantize: exit codes and messages for bad input (also run under ASan), and fp16 weight
# storage. The int8 recipe is checked by quantize_recipe_test.sh.
# Usage: quantize_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
py=/usr/bin/python3
models="$root/models/ppocrv4"
det="$models/ch_PP-OCRv4_det_infer.onnx"
photo="$root/data/demo/photo_text.jpg"

check help 0 "$bin" quantize --help
check missing-model 6 "$bin" quantize "$tmp/none.onnx" -o "$tmp/q.onnx" --scheme fp16
check output-is-input 2 "$bin" quantize "$det" -o "$det" --scheme fp16
check no-calib 2 "$bin" quantize "$det" -o "$tmp/q.onnx"
expect_text no-calib-says "$tmp/err" "needs a calibration set"
check bad-scheme 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme int3
check fp16-with-calib 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme fp16 --calib "$tmp"
check fp16-with-block-size 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme fp16 --block-size 64
expect_text fp16-with-block-size-says "$tmp/err" "apply to --scheme int4-weight, not fp16"
check accuracy-level-2 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme int4-weight --accuracy-level 2
check bad-method 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp" --method magic
check bad-percentile 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp" --percentile 40
# Flag errors come before the model is read and the calibration set is drawn.
check method-before-model 2 "$bin" quantize "$tmp/none.onnx" -o "$tmp/q.onnx" --calib "$tmp/nowhere" --method magic
expect_text method-before-model-says "$tmp/err" "magic"
check conflict-before-calib 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/nowhere" --full-range --reduce-range
expect_text conflict-before-calib-says "$tmp/err" "contradict"
mkdir -p "$tmp/empty" "$tmp/one" "$tmp/bad"
check empty-calib 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/empty" --stage ocr-det
expect_text empty-calib-says "$tmp/err" "has no samples"
check missing-calib 6 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/nowhere" --stage ocr-det
cp "$photo" "$tmp/one/photo.jpg"
echo "not an image" > "$tmp/one/broken.jpg"
check images-need-stage 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/one"
expect_text images-need-stage-says "$tmp/err" "stage ocr-det"
check bad-stage 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-table
check no-quantizable-op 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-det --op-types Gemm
expect_text no-quantizable-op-says "$tmp/err" "no node edgemm can quantize"
echo "not an image" > "$tmp/bad/broken.png"
check all-samples-bad 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/bad" --stage ocr-det
expect_text all-samples-bad-says "$tmp/err" "none of the 1 calibration samples"
# A calibration input of NaNs gives no range to quantize: refused, never a model of zeros judged
# perfect.
mkdir -p "$tmp/nan"
"$py" -c "import numpy as np, sys; np.save(sys.argv[1], np.full((1, 3, 64, 64), np.nan, np.float32))" "$tmp/nan/a.npy"
check nan-calibration 2 "$bin" quantize "$det" -o "$tmp/q_nan.onnx" --calib "$tmp/nan" --no-speed-check
expect_text nan-calibration-says "$tmp/err" "only NaN or infinite values"
# An image that does not decode is skipped and counted; a set below --samples is a warning.
check skips-broken 0 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-det --threads 2 \
  --no-speed-check --json
expect_text skips-broken-counted "$tmp/out" '"samples_skipped": 1'
expect_text below-minimum-warned "$tmp/err" "has 2 samples, fewer than the 256"

# Mixed precision on the small cls model (its saturated softmax gives 127 dB all-int8): a budget
# of 135 dB it meets by keeping a few nodes in float, the plan
# saved and read back (those nodes are then excluded by the user).
cls="$models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
check mixed-budget-zero 2 "$bin" quantize "$cls" -o "$tmp/q.onnx" --scheme mixed --budget 0 --calib "$tmp/one" \
  --stage ocr-cls
check save-plan-needs-mixed 2 "$bin" quantize "$cls" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-cls \
  --save-plan "$tmp/plan.json"
echo '{"float": []}' >"$tmp/bad_plan.json"
check bad-plan 2 "$bin" quantize "$cls" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-cls --plan "$tmp/bad_plan.json"
check mixed 0 "$bin" quantize "$cls" -o "$tmp/cls_mixed.onnx" --scheme mixed --budget 135 --calib "$tmp/one" \
  --stage ocr-cls --no-speed-check --save-plan "$tmp/plan.json" --threads 2
expect_text mixed-table "$tmp/out" "sensitivity (output SQNR"
expect_text mixed-met "$tmp/out" "dB, met)"
check plan-read-back 0 "$bin" quantize "$cls" -o "$tmp/cls_plan.onnx" --calib "$tmp/one" --stage ocr-cls \
  --no-speed-check --plan "$tmp/plan.json" --threads 2 --json
cp "$tmp/out" "$tmp/plan_report.json"
check plan-applied 0 "$py" - "$tmp/plan.json" "$tmp/plan_report.json" <<'PY'
import sys; sys.stdout = sys.stderr  # the numbers show when the check fails
import json
plan = set(json.load(open(sys.argv[1]))['float_nodes'])
report = json.load(open(sys.argv[2]))['int8']
excluded = {s['node'].split("'")[1] for s in report['skipped'] if s['reason'] == 'excluded by the user'}
quantized = {q['node'] for q in report['quantized']}
print(f'plan {sorted(plan)}, excluded {sorted(excluded)}')
sys.exit(0 if plan and plan == excluded and not plan & quantized else 1)
PY

# Saved histograms: a second run from them (no calibration) writes the same ranges and file; another
# model's histograms are refused by name. Weight bits: forced either way, never both.
check save-histograms 0 "$bin" quantize "$cls" -o "$tmp/cls_h1.onnx" --calib "$tmp/one" --stage ocr-cls \
  --no-speed-check --save-histograms "$tmp/hist.json" --reduce-range --threads 1 --json
cp "$tmp/out" "$tmp/h1.json"
expect_text reduce-range-reported "$tmp/h1.json" '"weight_bits": 7'
check reuse-histograms 0 "$bin" quantize "$cls" -o "$tmp/cls_h2.onnx" --calib "$tmp/one" --stage ocr-cls \
  --no-speed-check --histograms "$tmp/hist.json" --reduce-range --threads 1 --json
cp "$tmp/out" "$tmp/h2.json"
check reuse-histograms-same 0 "$py" - "$tmp/h1.json" "$tmp/h2.json" "$tmp/cls_h1.onnx" "$tmp/cls_h2.onnx" <<'PY'
import sys; sys.stdout = sys.stderr  # the numbers show when the check fails
import json
a, b = (json.load(open(p))['int8']['tensors'] for p in sys.argv[1:3])
same_file = open(sys.argv[3], 'rb').read() == open(sys.argv[4], 'rb').read()
print(f'{len(a)} tensors, ranges equal: {a == b}, files equal: {same_file}')
sys.exit(0 if a and a == b and same_file else 1)
PY
check histograms-of-another-model 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-det \
  --no-speed-check --histograms "$tmp/hist.json" --threads 1
expect_text histograms-of-another-model-says "$tmp/err" "the given histograms have none for"
check histograms-need-int8 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme fp16 --save-histograms "$tmp/h.json"
check full-and-reduced-range 2 "$bin" quantize "$cls" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-cls \
  --full-range --reduce-range
check full-range-reported 0 "$bin" quantize "$cls" -o "$tmp/q.onnx" --calib "$tmp/one" --stage ocr-cls \
  --no-speed-check --histograms "$tmp/hist.json" --full-range --threads 1 --json
expect_text full-range-reported-says "$tmp/out" '"weight_bits": 8'

# int4 weight-only: refused where nothing fits, bad block sizes, calibration it does not use.
check int4-no-matmul 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme int4-weight
expect_text int4-no-matmul-says "$tmp/err" "no MatMul with a constant float32"
check int4-bad-block 2 "$bin" quantize "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$tmp/q.onnx" --scheme int4-weight \
  --block-size 48
check awq-needs-calib 2 "$bin" quantize "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$tmp/q.onnx" --scheme int4-weight --awq
check awq-needs-int4 2 "$bin" quantize "$det" -o "$tmp/q.onnx" --awq --calib "$tmp/one" --stage ocr-det
check int4-with-calib 2 "$bin" quantize "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$tmp/q.onnx" --scheme int4-weight \
  --calib "$tmp/one"
# accuracy_level: 0-4 only; 4 (the default) is written on every MatMulNBits and reported, 0 leaves it unset.
check int4-bad-accuracy 2 "$bin" quantize "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$tmp/q.onnx" --scheme int4-weight \
  --accuracy-level 5
expect_text int4-bad-accuracy-says "$tmp/err" "--accuracy-level: 5 not in {0,4}"
for level in 0 4 default; do
  option=(--accuracy-level "$level")
  [ "$level" = default ] && option=() && level=4
  check "int4-accuracy-$level" 0 "$bin" quantize "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$tmp/q$level.onnx" \
    --scheme int4-weight "${option[@]}" --json
  expect_text "int4-accuracy-$level-reported" "$tmp/out" "\"accuracy_level\": $level"
  check "int4-accuracy-$level-nodes" 0 "$py" -c "
import onnx, sys
levels = {a.i for n in onnx.load('$tmp/q$level.onnx').graph.node if n.op_type == 'MatMulNBits'
          for a in n.attribute if a.name == 'accuracy_level'}
sys.exit(0 if levels == ({4} if $level else set()) else f'accuracy_level attributes {levels}')"
done

# fp16 weights: about half the file; det's probability map within 0.05 (measured 0.032 max, 1.6e-5
# mean: float16 weights through 60 convolutions, largest where the map crosses 0.5).
check fp16 0 "$bin" quantize "$det" -o "$tmp/det_fp16.onnx" --scheme fp16
check fp16-run 0 "$bin" run "$tmp/det_fp16.onnx" --input x="$root/data/demo/photo_det_input.npy" --output-dir "$tmp/h"
check fp32-run 0 "$bin" run "$det" --input x="$root/data/demo/photo_det_input.npy" --output-dir "$tmp/f"
check fp16-close 0 "$py" - "$det" "$tmp/det_fp16.onnx" "$tmp/f" "$tmp/h" <<'PY'
import sys; sys.stdout = sys.stderr  # the numbers show when the check fails
import glob, os, sys
import numpy as np
a, b = (np.load(glob.glob(os.path.join(d, '*.npy'))[0]) for d in sys.argv[3:5])
ratio = os.path.getsize(sys.argv[2]) / os.path.getsize(sys.argv[1])
d = np.abs(a - b)
print(f'fp16: size ratio {ratio:.3f}, max abs error {d.max():.2e}, mean {d.mean():.2e}')
sys.exit(0 if ratio < 0.55 and d.max() < 0.05 and d.mean() < 1e-4 else 1)
PY

report_and_exit
