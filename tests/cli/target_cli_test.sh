#!/usr/bin/env bash
# `edgemm inspect --target` and `edgemm convert --target` (issue 10, docs/platforms.md).
# Golden verdicts, derived by hand from the profile lines (platforms/*.jsonl) and the models' op
# lists, not from an earlier run:
# - PP-OCRv4 det (opset 11; Add, BatchNormalization, Clip, Concat, Conv, ConvTranspose, Div,
#   GlobalAveragePool, HardSigmoid, Mul, Relu, Resize nearest with constant scales, Sigmoid; 62
#   Conv of which 14 depthwise), input pinned to 1x3x640x640:
#   rk3588: every op listed supported, Resize mode nearest allowed -> 0 CPU; opset 11 is below the
#     profile's 12..19 -> one whole-model issue fixed by "convert --opset 12".
#   ascend310p: Conv takes group 1 or depthwise (group = input = output channels; CANN's
#     "Convolution (DepthwiseConv, ConvolutionDepthwise)" spec: "group==num_output", filter W/H
#     1~255) -> the 14 depthwise Conv (group = channels, 3x3 or 5x5 kernels) on the NPU, 0 CPU.
#   qualcomm-htp: GlobalAveragePool 10, HardSigmoid 10, Mul 86, Relu 12, Resize 6, Sigmoid 1 are
#     "unknown" -> 125 of support unknown, 0 CPU fallback (unknown is counted apart).
#   horizon-j5: no op list (all unknown) -> all 330 non-Constant nodes of unknown support, 0 CPU.
#   generic-cpu: edgemm has a kernel for every op -> 0 CPU.
# - tests/fixtures/transformer_block.onnx (opset 17) pinned to x=1x16x32, qualcomm-htp: Add 7,
#   Concat 4, Div 3, Cast 2, Clip 1 supported (no constraints) -> 17 NPU; the other 40 unknown.
# Then convert --target writes the folder, and inspect on the result reports fewer fallbacks.
# Usage: target_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
det="$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx"
block="$root/tests/fixtures/transformer_block.onnx"
export EDGEMM_PLATFORMS_DIR="$root/platforms"

# The value of a Python expression over the JSON in $tmp/out (as `j`).
json() { /usr/bin/python3 -c "import json,sys; j=json.load(open('$tmp/out')); print($1)"; }
expect_eq() {  # expect_eq NAME GOT WANT
  if [ "$2" = "$3" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: got '$2', expected '$3'"
  fi
}

check inspect-help 0 "$bin" inspect --help
expect_text inspect-help-target "$tmp/out" "--target"
check convert-help 0 "$bin" convert --help
expect_text convert-help-target "$tmp/out" "--target"

check det-rk3588 0 "$bin" inspect "$det" --target rk3588 --shape x=1,3,640,640 --json
expect_eq det-rk3588-cpu "$(json "j['summary']['cpu_nodes']")" 0
expect_eq det-rk3588-npu "$(json "j['summary']['npu_nodes']")" 330
expect_eq det-rk3588-partitions "$(json "(j['summary']['npu_partitions'], j['summary']['cpu_partitions'])")" "(1, 0)"
expect_eq det-rk3588-opset "$(json "[i['fix'] for i in j['model_issues']]")" "['convert opset (convert --opset 12)']"

check det-ascend 0 "$bin" inspect "$det" --target ascend310p --shape x=1,3,640,640 --json
expect_eq det-ascend-count "$(json "(j['summary']['npu_nodes'], j['summary']['cpu_nodes'], j['summary']['unknown_nodes'])")" \
  "(330, 0, 0)"
# The depthwise Conv of det, found with the onnx package (group = weight dim 0, weight dim 1 = 1):
# 14 of them, all on the NPU (before: all 14 on the CPU for 'group').
/usr/bin/python3 - "$det" >"$tmp/depthwise" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
weights = {i.name: list(i.dims) for i in m.graph.initializer}  # Paddle exports weights as Constant nodes:
weights.update({n.output[0]: list(n.attribute[0].t.dims) for n in m.graph.node if n.op_type == 'Constant'})
for n in m.graph.node:
    if n.op_type != 'Conv': continue
    group = next((a.i for a in n.attribute if a.name == 'group'), 1)
    w = weights.get(n.input[1])
    if group > 1 and w and w[0] == group and w[1] == 1: print(n.name)
PY
expect_eq det-ascend-depthwise "$(json "sorted(n['placement'] for n in j['nodes'] if n['node'] in open('$tmp/depthwise').read().split())")" \
  "$(/usr/bin/python3 -c "print(['npu'] * 14)")"

check det-qualcomm 0 "$bin" inspect "$det" --target qualcomm-htp --shape x=1,3,640,640 --json
expect_eq det-qualcomm-split "$(json "(j['summary']['unknown_nodes'], j['summary']['cpu_nodes'])")" "(125, 0)"
expect_eq det-qualcomm-ops "$(json "sorted(set(n['op_type'] for n in j['nodes'] if n['placement'] == 'unknown'))")" \
  "['GlobalAveragePool', 'HardSigmoid', 'Mul', 'Relu', 'Resize', 'Sigmoid']"
expect_eq det-qualcomm-kind "$(json "sorted(set(r['kind'] for n in j['nodes'] for r in n['reasons']))")" "['unknown']"
expect_eq det-qualcomm-crossings "$(json "(j['summary']['crossings'], j['summary']['unknown_crossings'] > 0)")" "(0, True)"

# Unknown is not fallback: horizon-j5 has no op list, so every node is of unknown support, in
# every total (JSON summary, text, convert's report and README below).
check det-horizon 0 "$bin" inspect "$det" --target horizon-j5 --shape x=1,3,640,640 --json
expect_eq det-horizon-split "$(json "(j['summary']['npu_nodes'], j['summary']['cpu_nodes'], j['summary']['unknown_nodes'])")" \
  "(0, 0, 330)"
expect_eq det-horizon-schema "$(json "j['schema']")" "edgemm.target_report/2"
check det-horizon-text 0 "$bin" inspect "$det" --target horizon-j5 --shape x=1,3,640,640
expect_text det-horizon-text-split "$tmp/out" "NPU-eligible: 0 of 330 nodes; CPU fallback: 0; support unknown: 330"

check det-generic 0 "$bin" inspect "$det" --target generic-cpu --json
expect_eq det-generic-cpu "$(json "j['summary']['cpu_nodes']")" 0

check block-qualcomm 0 "$bin" inspect "$block" --target qualcomm-htp --shape x=1,16,32 --json
expect_eq block-qualcomm-split "$(json "(j['summary']['npu_nodes'], j['summary']['cpu_nodes'], j['summary']['unknown_nodes'])")" \
  "(17, 0, 40)"

# Small models for single rules (made with the onnx package):
# - attention.onnx: x [1,16,32] -> Reshape [16,4,8] -> Transpose [4,16,8] (heads, tokens, dim) ->
#   Softmax. rk3588's op table says Softmax "batchsize: 1": the model's batch (dim 0 of its
#   inputs, which rknn.build(rknn_batch_size) scales) is 1, so the Softmax is taken although its
#   own input's dim 0 is 4 (heads).
# - batch2_softmax.onnx: x [2,3,8,8] -> Softmax: batch 2 -> CPU, the reason naming input 'x' and
#   the Softmax line.
# - grouped.onnx: x [1,4,8,8] -> Conv group 2 (w [4,2,3,3]); wide.onnx: depthwise Conv with a 1x256
#   kernel. ascend310p: group 2 is neither 1 nor depthwise -> CPU; the depthwise 1x256 breaks
#   "Filter_W 1~255" -> CPU.
/usr/bin/python3 - "$tmp" <<'PY'
import sys, onnx
import numpy as np
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
def save(name, nodes, x, y, inits=()):
    g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, x)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, y)],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), f'{out}/{name}.onnx')
save('attention', [helper.make_node('Reshape', ['x', 's'], ['r']),
                   helper.make_node('Transpose', ['r'], ['t'], perm=[1, 0, 2]),
                   helper.make_node('Softmax', ['t'], ['y'], axis=-1)],
     [1, 16, 32], [4, 16, 8], [('s', np.array([16, 4, 8], np.int64))])
save('batch2_softmax', [helper.make_node('Softmax', ['x'], ['y'], axis=1)], [2, 3, 8, 8], [2, 3, 8, 8])
save('grouped', [helper.make_node('Conv', ['x', 'w'], ['y'], group=2, pads=[1, 1, 1, 1])],
     [1, 4, 8, 8], [1, 4, 8, 8], [('w', np.full((4, 2, 3, 3), 0.1, np.float32))])
save('wide', [helper.make_node('Conv', ['x', 'w'], ['y'], group=4, pads=[0, 128, 0, 127])],
     [1, 4, 8, 8], [1, 4, 8, 8], [('w', np.full((4, 1, 1, 256), 0.1, np.float32))])
PY
check attention-rk3588 0 "$bin" inspect "$tmp/attention.onnx" --target rk3588 --json
expect_eq attention-softmax-npu "$(json "[(n['op_type'], n['placement']) for n in j['nodes']]")" \
  "[('Reshape', 'npu'), ('Transpose', 'npu'), ('Softmax', 'npu')]"
softmax_line=$(grep -n '"op": "Softmax",' "$root/platforms/rk3588.jsonl" | cut -d: -f1)
check batch2-rk3588 0 "$bin" inspect "$tmp/batch2_softmax.onnx" --target rk3588 --json
expect_eq batch2-softmax-cpu "$(json "[(r['kind'], r['text'].split(';')[0], r['profile_line']) for r in j['nodes'][0]['reasons']]")" \
  "[('input', \"model input 'x' has batch 2 [2,3,8,8]\", $softmax_line)]"
expect_eq batch2-softmax-cites "$(json "'batchsize: 1' in j['nodes'][0]['reasons'][0]['text'] and 'RKNNToolKit2_OP_Support-v2.1.0.md' in j['nodes'][0]['reasons'][0]['source']")" True
conv_line=$(grep -n '"op": "Conv",' "$root/platforms/ascend310p.jsonl" | cut -d: -f1)
check grouped-ascend 0 "$bin" inspect "$tmp/grouped.onnx" --target ascend310p --json
expect_eq grouped-ascend-cpu "$(json "[(r['kind'], r['text'].split(' (')[0], r['profile_line']) for r in j['nodes'][0]['reasons']]")" \
  "[('attribute', \"'group' = 2; profile: attribute 'group' in [1] or depthwise\", $conv_line)]"
check wide-ascend 0 "$bin" inspect "$tmp/wide.onnx" --target ascend310p --json
expect_eq wide-ascend-cpu "$(json "[r['text'].split(';')[0] for r in j['nodes'][0]['reasons']]")" \
  "[\"input 1 'w' dim 3 = 256 [4,1,1,256]\"]"
expect_eq wide-ascend-cites "$(json "'operatorlist_00110' in j['nodes'][0]['reasons'][0]['source']")" True

# Dynamic shapes: the published det on rk3588 has CPU fallbacks for its symbolic dims.
check det-dynamic 0 "$bin" inspect "$det" --target rk3588 --json
expect_eq det-dynamic-kind "$(json "'dynamic_shape' in set(r['kind'] for n in j['nodes'] for r in n['reasons'])")" True
dynamic_cpu="$(json "j['summary']['cpu_nodes']")"
check det-text 0 "$bin" inspect "$det" --target rk3588
expect_text det-text-fix "$tmp/out" "fix shapes (convert --fix-shape)"
expect_text det-text-honest "$tmp/out" "No NPU was run"

# convert --target: the deployment folder, verified against the original (edgemm and ONNX Runtime).
mkdir -p "$tmp/calib"
cp "$root/tests/fixtures/ocr_vqa/boarding_line.png" "$tmp/calib/a.png"
cp "$root/tests/fixtures/ocr_vqa/boarding_line.png" "$tmp/calib/b.png"
printf 'not an image' >"$tmp/calib/c.png"
check convert-rk3588 0 "$bin" convert "$det" --target rk3588 -o "$tmp/rk" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --json
for f in model.onnx convert_rknn.py dataset.txt README.md report.json calib/0000_a.png calib/0001_b.png; do
  [ -f "$tmp/rk/$f" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL convert-rk3588: no $f"; }
done
expect_eq convert-calib "$(json "(j['calibration']['written'], len(j['calibration']['skipped']))")" "(2, 1)"
expect_eq convert-after "$(json "(j['after']['summary']['cpu_nodes'], j['after']['model_issues'])")" "(0, [])"
expect_eq convert-verified "$(json "j['verification']['passed']")" True
expect_eq convert-no-npu "$(json "j['npu_run']")" False
expect_text convert-recipe "$tmp/rk/convert_rknn.py" "target_platform='rk3588'"
expect_text convert-mean "$tmp/rk/convert_rknn.py" "123.675"
expect_eq convert-dataset "$(cat "$tmp/rk/dataset.txt")" "$(printf 'calib/0000_a.png\ncalib/0001_b.png')"
expect_text convert-readme "$tmp/rk/README.md" "No NPU or vendor tool was run here"
check converted-rk3588 0 "$bin" inspect "$tmp/rk/model.onnx" --target rk3588 --json
expect_eq converted-fewer "$(json "j['summary']['cpu_nodes'] < $dynamic_cpu and not j['model_issues']")" True

check convert-horizon 0 "$bin" convert "$det" --target horizon-j5 -o "$tmp/hz" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --stage ocr-det --no-verify --json
expect_eq horizon-raw "$(stat -c %s "$tmp/hz/calib/0000_a.bin")" $((3 * 640 * 640))
expect_eq horizon-report-unknown "$(json "[(j[k]['summary']['cpu_nodes'], j[k]['summary']['unknown_nodes'] > 0) for k in ('before', 'after')]")" \
  "[(0, True), (0, True)]"
expect_text horizon-readme-unknown "$tmp/hz/README.md" "| CPU fallback nodes | support unknown |"

# convert --target --int8: model.int8.onnx, QDQ calibrated on the --calib images. Golden: the 62
# Conv of det are quantized (ConvTranspose is not a QDQ op type; depthwise is included for NPUs).
# Oracles: the onnx package reads the file (a DequantizeLinear of int8 per-channel weights and one
# of the activation before every Conv); ONNX Runtime runs it and the float model.onnx on a real
# photo's det input (probability maps binarized at 0.3 agree on >= 98 % of pixels); edgemm agrees
# with ONNX Runtime on the int8 file within one output step on >= 99.5 % of the values.
check convert-int8 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --int8 --int8-method minmax --json
expect_eq int8-counts "$(json "(j['int8']['quantized_nodes'], j['int8']['samples_used'], j['int8']['samples_skipped'])")" \
  "(62, 2, 1)"
expect_eq int8-files "$(json "'model.int8.onnx' in j['files']")" True
expect_text int8-readme "$tmp/i8/README.md" "whether the vendor converter imports a pre-quantized QDQ model was not checked"
check int8-qdq-form 0 /usr/bin/python3 - "$tmp/i8/model.int8.onnx" <<'PY'
import sys
import onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
inits = {i.name: i for i in m.graph.initializer}
made_by = {o: n for n in m.graph.node for o in n.output}
convs = [n for n in m.graph.node if n.op_type == 'Conv']
bad = []
for c in convs:
    x, w = made_by.get(c.input[0]), made_by.get(c.input[1])
    if x is None or x.op_type != 'DequantizeLinear' or w is None or w.op_type != 'DequantizeLinear':
        bad.append(c.name); continue
    q, scale = inits.get(w.input[0]), inits.get(w.input[1])
    out_channels = q.dims[0] if q is not None else -1
    if q is None or q.data_type != onnx.TensorProto.INT8 or numpy_helper.to_array(scale).size != out_channels:
        bad.append(c.name)
print(len(convs), 'Conv;', 'not QDQ with per-channel int8 weights:', bad, file=sys.stderr)
sys.exit(0 if len(convs) == 62 and not bad else 1)
PY
for form in model model.int8; do
  check "int8-ort-$form" 0 node "$root/tools/reference/ort_run.js" "$tmp/i8/$form.onnx" \
    --input x="$root/data/demo/photo_det_input.npy" --output-dir "$tmp/ort_$form"
done
check int8-edgemm-runs 0 "$bin" run "$tmp/i8/model.int8.onnx" --input x="$root/data/demo/photo_det_input.npy" \
  --output-dir "$tmp/edgemm_int8"
check int8-ort-agrees 0 /usr/bin/python3 - "$tmp/ort_model" "$tmp/ort_model.int8" "$tmp/edgemm_int8" <<'PY'
import glob, os, sys
import numpy as np
f, q, e = (np.load(glob.glob(os.path.join(d, '*.npy'))[0]) for d in sys.argv[1:4])
binarized = float(((f > 0.3) == (q > 0.3)).mean())
step = (q.max() - q.min()) / 255
share = float((np.abs(q - e) <= step).mean())
print(f'ORT float vs int8: {100 * binarized:.2f} % of pixels binarized alike; ORT vs edgemm on int8: '
      f'{100 * share:.3f} % within one step', file=sys.stderr)
sys.exit(0 if binarized >= 0.98 and share >= 0.995 else 1)
PY
# Raw 0-255 pixels into a model trained on normalized ones (--mean 0,0,0 --std 1,1,1, said on
# purpose): the int8 error is huge, and the run says so (stderr and README).
check int8-poor 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8p" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --mean 0,0,0 --std 1,1,1 --int8 --no-verify
expect_text int8-poor-readme "$tmp/i8p/README.md" "Error not measured"
check int8-poor-verified 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8v" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --mean 0,0,0 --std 1,1,1 --int8
expect_text int8-poor-warns "$tmp/err" "warning: model.int8.onnx's outputs are far from float's"
expect_text int8-poor-readme-warns "$tmp/i8v/README.md" "Warning: the int8 outputs are far from float's"
# A missing normalization is an error, not raw pixels calibrated in silence (before, the samples and
# the int8 check were raw 0-255 pixels with a one-line warning).
check calib-no-normalization 2 "$bin" convert "$det" --target rk3588 -o "$tmp/nn" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --no-verify
expect_text calib-no-normalization-why "$tmp/err" "give --mean and --std .* or --stage ocr-det|ocr-cls|ocr-rec"
[ ! -e "$tmp/nn" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL calib-no-normalization wrote"; }
check int8-no-normalization 2 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8x" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --int8 --no-verify
check stage-and-mean 2 "$bin" convert "$det" --target ascend310p -o "$tmp/sm" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --stage ocr-det --mean 1,2,3 --std 1,1,1 --no-verify
expect_text stage-and-mean-why "$tmp/err" "drop --mean, --std and --bgr"
check stage-no-calib 2 "$bin" convert "$det" --target ascend310p -o "$tmp/sc" --fix-shape x=1,3,640,640 \
  --stage ocr-det --no-verify
check stage-bad 2 "$bin" convert "$det" --target ascend310p -o "$tmp/sb" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --stage det --no-verify
expect_text stage-bad-why "$tmp/err" "must be ocr-det, ocr-cls or ocr-rec"
check int8-no-calib 2 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8n" --fix-shape x=1,3,640,640 --int8
expect_text int8-no-calib-why "$tmp/err" "--int8 calibrates on --calib images"
check int8-bad-method 2 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8m" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --int8 --int8-method kl
check int8-no-target 2 "$bin" convert "$det" -o "$tmp/x.onnx" --int8

# Bad input: clear errors with the documented exit codes (2 invalid argument, 3 invalid model).
check unknown-target 2 "$bin" inspect "$det" --target rk9999
expect_text unknown-target-lists "$tmp/err" "known in .*: ascend310p, generic-cpu, horizon-j5, qualcomm-htp, rk3588"
# bad_line NAME JSON_LINE MESSAGE: rk3588.jsonl with JSON_LINE appended is refused (exit 3) with
# MESSAGE after the new line's number.
mkdir -p "$tmp/bad"
line=$(($(wc -l <"$root/platforms/rk3588.jsonl") + 1))
bad_line() {
  cp "$root/platforms/rk3588.jsonl" "$tmp/bad/rk3588.jsonl"
  echo "$2" >>"$tmp/bad/rk3588.jsonl"
  check "$1" 3 "$bin" inspect "$det" --target rk3588 --platforms "$tmp/bad"
  expect_text "$1-line" "$tmp/err" "rk3588.jsonl:$line: $3"
}
bad_line bad-op '{"kind": "op", "op": "Convolution", "domain": "", "verdict": "supported", "source": "x"}' \
  "'Convolution' is not an ONNX operator"
bad_line no-source '{"kind": "op", "op": "Gelu", "domain": "", "verdict": "supported"}' "missing 'source'"
check convert-dynamic 2 "$bin" convert "$det" --target rk3588 -o "$tmp/dyn"
expect_text convert-dynamic-flag "$tmp/err" "pass --fix-shape x=..."
check convert-conflict 2 "$bin" convert "$det" --target rk3588 -o "$tmp/c" --fix-shape x=1,3,640,640 --simplify
touch "$tmp/file"
check convert-file-out 2 "$bin" convert "$det" --target rk3588 -o "$tmp/file" --fix-shape x=1,3,640,640
check convert-bad-std 2 "$bin" convert "$det" --target rk3588 -o "$tmp/s" --fix-shape x=1,3,640,640 --std 1,0,1
check target-optimized 2 "$bin" inspect "$det" --target rk3588 --optimized
check target-empty 2 "$bin" inspect "$det" --target ""
check no-platforms-dir 6 "$bin" inspect "$det" --target rk3588 --platforms "$tmp/none"
bad_line second-setting '{"kind": "unlisted_ops", "verdict": "unknown", "source": "x"}' "second 'unlisted_ops' line"
bad_line impossible-rank \
  '{"kind": "op", "op": "Gelu", "verdict": "supported", "constraints": [{"input": 0, "rank_min": 5, "rank_max": 2}], "source": "x"}' \
  "'rank_min' is above 'rank_max'"
# Folder and calibration errors, all before anything is written.
mkdir -p "$tmp/full" && touch "$tmp/full/keep"
check convert-nonempty 2 "$bin" convert "$det" --target rk3588 -o "$tmp/full" --fix-shape x=1,3,640,640 --no-verify
check convert-nan-mean 2 "$bin" convert "$det" --target rk3588 -o "$tmp/n" --fix-shape x=1,3,640,640 --mean nan,0,0 --std 1,1,1
check convert-mean-alone 2 "$bin" convert "$det" --target rk3588 -o "$tmp/n" --fix-shape x=1,3,640,640 --mean 1,2,3
check calib-no-target 2 "$bin" convert "$det" -o "$tmp/x.onnx" --calib "$tmp/calib"
check calib-text-input 2 "$bin" convert "$root/tests/fixtures/clip_tiny/onnx/text_model.onnx" --target rk3588 \
  -o "$tmp/t" --fix-shape input_ids=1,16 --calib "$tmp/calib" --no-verify
expect_text calib-text-input-why "$tmp/err" "calibration images need a static float32 4-D image input"
[ ! -e "$tmp/t/model.onnx" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL calib-text-input wrote"; }
/usr/bin/python3 - "$tmp/noinput.onnx" <<'PY'
import sys, onnx
from onnx import helper, TensorProto
c = helper.make_node('Constant', [], ['c'], value=helper.make_tensor('v', TensorProto.FLOAT, [1], [1.0]))
r = helper.make_node('Relu', ['c'], ['y'])
g = helper.make_graph([c, r], 'g', [], [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
PY
check no-inputs 2 "$bin" convert "$tmp/noinput.onnx" --target rk3588 -o "$tmp/ni" --no-verify
expect_text no-inputs-why "$tmp/err" "has no graph inputs"
# The rewrites never add CPU fallbacks: simplify runs without the OpenCV-only rewrites, which
# would turn Clip (listed for qualcomm-htp) into HardSigmoid (unknown there).
check convert-qualcomm 0 "$bin" convert "$det" --target qualcomm-htp -o "$tmp/qc" --fix-shape x=1,3,640,640 \
  --no-verify --json
expect_eq convert-qualcomm-no-worse "$(json "j['after']['summary']['cpu_nodes'] <= j['before']['summary']['cpu_nodes'] and 'HardSigmoid' not in str(j['convert'])")" True

# An If whose op the profile lists (ascend310p: supported) is still unknown: its branches are not
# checked (edgemm checks the main graph only).
/usr/bin/python3 - "$tmp/if.onnx" <<'PY'
import sys, onnx
from onnx import helper, TensorProto
def branch(op):
    return helper.make_graph([helper.make_node(op, ['x'], ['b'])], op, [],
                             [helper.make_tensor_value_info('b', TensorProto.FLOAT, [1, 4])])
nodes = [helper.make_node('If', ['c'], ['y'], then_branch=branch('Relu'), else_branch=branch('Sigmoid'))]
g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('c', TensorProto.BOOL, []),
                                   helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
PY
check if-subgraph 0 "$bin" inspect "$tmp/if.onnx" --target ascend310p --json
expect_eq if-subgraph-unknown "$(json "sorted((r['kind'], r['text'].split(' is ')[0]) for n in j['nodes'] for r in n['reasons'])")" \
  "[('unknown', \"subgraph 'else_branch'\"), ('unknown', \"subgraph 'then_branch'\")]"

# Image inputs the recipes cannot feed are refused before anything is written: NHWC where the
# recipe declares NCHW samples, a batch above 1, a name the tools would read as an option, a
# dynamic shape the scripts would write; horizon-j5 always quantizes, so it needs --calib.
/usr/bin/python3 - "$tmp" <<'PY'
import sys, onnx
from onnx import helper, TensorProto
def relu(path, shape, name='x'):
    g = helper.make_graph([helper.make_node('Relu', [name], ['y'])], 'g',
                          [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, shape)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), path)
relu(sys.argv[1] + '/nhwc.onnx', [1, 32, 32, 3])
relu(sys.argv[1] + '/batch2.onnx', [2, 3, 32, 32])
relu(sys.argv[1] + '/dash.onnx', [1, 3, 32, 32], '-x')
relu(sys.argv[1] + '/dynamic.onnx', ['n', 3, 'h', 'w'])
relu(sys.argv[1] + '/image.onnx', [1, 3, 32, 32])
PY
check nhwc-calib 2 "$bin" convert "$tmp/nhwc.onnx" --target ascend310p -o "$tmp/nh" --calib "$tmp/calib" --no-verify
expect_text nhwc-calib-why "$tmp/err" "is NHWC .* declares NCHW"
[ ! -e "$tmp/nh" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL nhwc-calib made a folder"; }
check batch2-calib 2 "$bin" convert "$tmp/batch2.onnx" --target qualcomm-htp -o "$tmp/b2" --calib "$tmp/calib" --no-verify
expect_text batch2-calib-why "$tmp/err" "has batch 2: fix it to 1"
check dash-name 2 "$bin" convert "$tmp/dash.onnx" --target ascend310p -o "$tmp/da" --no-verify
check dynamic-script 2 "$bin" convert "$tmp/dynamic.onnx" --target qualcomm-htp -o "$tmp/dy" --no-verify
expect_text dynamic-script-why "$tmp/err" "recipe writes the input shape: pass --fix-shape x="
check horizon-no-calib 2 "$bin" convert "$det" --target horizon-j5 -o "$tmp/hn" --fix-shape x=1,3,640,640 --no-verify
expect_text horizon-no-calib-why "$tmp/err" "always quantizes"
# --bgr on rk3588: the script swaps the calibration images (quant_img_RGB2BGR=True, the toolkit's
# Caffe example) and lists mean/std in the model's B, G, R order.
check bgr-rk3588 0 "$bin" convert "$det" --target rk3588 -o "$tmp/bgr_rk" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --bgr --no-verify
expect_text bgr-rk3588-swap "$tmp/bgr_rk/convert_rknn.py" "quant_img_RGB2BGR=True"
expect_text bgr-rk3588-mean "$tmp/bgr_rk/convert_rknn.py" "mean_values=\[\[103.53,116.28,123.675\]\]"
expect_text rk3588-rgb-default "$tmp/rk/convert_rknn.py" "quant_img_RGB2BGR=False"
check calib-count-alone 2 "$bin" convert "$det" --target rk3588 -o "$tmp/cc" --fix-shape x=1,3,640,640 --calib-count 3
check int8-method-alone 2 "$bin" convert "$det" --target rk3588 -o "$tmp/im" --fix-shape x=1,3,640,640 \
  --int8-method minmax
check empty-out 2 "$bin" convert "$det" --target rk3588 -o "" --fix-shape x=1,3,640,640
# --calib-count counts decodable images: c.png (undecodable) is passed over, not counted.
mkdir -p "$tmp/badfirst" && printf 'bad' >"$tmp/badfirst/0.png" && cp "$tmp/calib/a.png" "$tmp/badfirst/1.png"
check calib-count-decodable 0 "$bin" convert "$det" --target ascend310p -o "$tmp/bf" --fix-shape x=1,3,640,640 \
  --calib "$tmp/badfirst" --calib-count 1 --mean 0,0,0 --std 1,1,1 --no-verify --json
expect_eq calib-count-decodable-n "$(json "(j['calibration']['written'], len(j['calibration']['skipped']))")" "(1, 1)"
# --bgr: the float samples edgemm normalizes follow the model's channel order (B first).
check bgr-samples 0 "$bin" convert "$tmp/image.onnx" --target ascend310p -o "$tmp/bs" \
  --calib "$tmp/badfirst" --mean 0,0,0 --std 1,1,1 --bgr --no-verify
check bgr-order 0 /usr/bin/python3 - "$tmp/bs/calib" "$tmp/calib/a.png" <<'PY'
import glob, sys
import numpy as np
from PIL import Image
x = np.fromfile(glob.glob(sys.argv[1] + '/*.bin')[0], dtype=np.float32).reshape(3, 32, 32)
rgb = np.asarray(Image.open(sys.argv[2]).convert('RGB').resize((32, 32), Image.BILINEAR), dtype=np.float32)
means = x.reshape(3, -1).mean(1)  # mean 0 / std 1: raw pixel values, B, G, R
want = rgb.reshape(-1, 3).mean(0)[::-1]
print('sample channel means', means, 'image B,G,R means', want, file=sys.stderr)
# The resamplers differ (PIL filters, OpenCV does not), so compare the two orders, not values.
as_bgr, as_rgb = np.abs(means - want).max(), np.abs(means - want[::-1]).max()
sys.exit(0 if as_bgr < 12 and as_bgr < as_rgb / 3 else 1)
PY
# Calibration through the OCR pipeline's own preprocessing (--stage). Oracles: pixels computed by
# hand from images drawn here, and PaddleOCR's preprocessing as documented (det: ImageNet
# mean/std applied to B, G, R, (p / 255 - mean) / std; cls/rec: 48 pixels high, (p / 255 - 0.5)
# / 0.5, right-padded with 0).
# two.png: 320x160, left half R,G,B = 30,200,10, right half 220,40,100. Letterboxed into 640x640
# (det_preprocess) it is scaled by min(640/320, 640/160) = 2 to 640x320 at the top; rows 320-639
# are the mean color round(255 * (0.485, 0.456, 0.406)) = B,G,R 124,116,104. Stretched (the old
# samples) it would fill all 640 rows.
# lines.png: a white 640x360 page with two lines drawn, "HELLO" and "WORLD 42".
mkdir -p "$tmp/two" "$tmp/lines"
/usr/bin/python3 - "$tmp" <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
out = sys.argv[1]
im = Image.new('RGB', (320, 160), (30, 200, 10))
im.paste((220, 40, 100), (160, 0, 320, 160))
im.save(out + '/two/two.png')
page = Image.new('RGB', (640, 360), (255, 255, 255))
d = ImageDraw.Draw(page)
font = ImageFont.truetype('/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf', 48)
d.text((40, 60), 'HELLO', font=font, fill=(0, 0, 0))
d.text((40, 220), 'WORLD 42', font=font, fill=(0, 0, 0))
page.save(out + '/lines/lines.png')
PY
check stage-det 0 "$bin" convert "$det" --target ascend310p -o "$tmp/sd" --fix-shape x=1,3,640,640 \
  --calib "$tmp/two" --stage ocr-det --no-verify --json
expect_eq stage-det-report "$(json "(j['calibration']['stage'], j['calibration']['written'], j['calibration']['color'])")" \
  "('ocr-det', 1, 'BGR')"
check stage-det-letterboxed 0 /usr/bin/python3 - "$tmp/sd/calib/0000_two.bin" <<'PY'
import sys
import numpy as np
x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(3, 640, 640)
mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
def normalized(bgr): return (np.array(bgr) / 255 - mean) / std
want = {'left half': ((100, 100), normalized([10, 200, 30])), 'right half': ((200, 500), normalized([100, 40, 220])),
        'padding': ((500, 300), normalized([124, 116, 104]))}
errors = {k: float(np.abs(x[:, y, c] - v).max()) for k, ((y, c), v) in want.items()}
pad = np.abs(x - normalized([124, 116, 104])[:, None, None]).max(axis=(0, 2)) < 1e-5
print('max abs error', errors, 'padding rows', np.nonzero(pad)[0][[0, -1]], file=sys.stderr)
sys.exit(0 if max(errors.values()) < 1e-5 and pad[320:].all() and not pad[:320].any() else 1)
PY
expect_text stage-det-readme "$tmp/sd/README.md" "letterboxed into the static input \[1,3,640,640\]"
rec="$root/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx"
cls="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
check stage-rec 0 "$bin" convert "$rec" --target ascend310p -o "$tmp/sr" --fix-shape x=1,3,48,320 \
  --calib "$tmp/lines" --stage ocr-rec --no-verify --json
# Three crops: 'WORLD 42' is ~350 px wide at height 48, wider than the static 320, so the
# pipeline cuts it at its word gap as it does when it reads (split_line), not squeezed.
expect_eq stage-rec-samples "$(json "(j['calibration']['images'], j['calibration']['written'])")" "(1, 3)"
check stage-rec-crops 0 /usr/bin/python3 - "$tmp/sr/calib" <<'PY'
import glob, sys
import numpy as np
files = sorted(glob.glob(sys.argv[1] + '/*.bin'))
xs = [np.fromfile(f, dtype=np.float32).reshape(3, 48, 320) for f in files]  # fails unless 48 high
ok = len(xs) == 3
for x in xs:
    ok &= x.min() >= -1.0001 and x.max() <= 1.0001 and (x > 0.99).any() and (x < -0.5).any()  # white page, dark text
padded = [int((np.abs(x).max(axis=(0, 1)) == 0)[::-1].argmin()) for x in xs]  # zero columns at the right
print('samples', len(xs), 'zero columns at the right', padded, file=sys.stderr)
sys.exit(0 if ok and max(padded) > 0 else 1)
PY
check stage-cls 0 "$bin" convert "$cls" --target rk3588 -o "$tmp/sl" --fix-shape x=1,3,48,192 \
  --calib "$tmp/lines" --stage ocr-cls --no-verify
expect_eq stage-cls-crops "$(/usr/bin/python3 -c "
import sys
from PIL import Image
print([Image.open('$tmp/sl/' + l.strip()).size for l in open('$tmp/sl/dataset.txt')])")" "[(192, 48), (192, 48)]"
expect_text stage-cls-mean "$tmp/sl/convert_rknn.py" "mean_values=\[\[127.5,127.5,127.5\]\]"
expect_text stage-cls-swap "$tmp/sl/convert_rknn.py" "quant_img_RGB2BGR=True"
# --int8 with --stage: the ranges and the SQNR check use the letterboxed inputs of the samples.
check stage-int8 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/si" --fix-shape x=1,3,640,640 \
  --calib "$tmp/two" --stage ocr-det --int8 --int8-method minmax --json
expect_eq stage-int8-feeds "$(json "(j['int8']['samples_used'], j['calibration']['stage'])")" "(1, 'ocr-det')"
expect_text stage-int8-readme "$tmp/si/README.md" "first calibration input, preprocessed as in Calibration"

# horizon-j5 passes the channel order through: hb_mapper's input_type_train (Horizon's YAML
# template: "the data formats in network training, available options: rgb/bgr/gray/featuremap/
# yuv444") is bgr for a B, G, R model (PP-OCRv4 det with --bgr, or --stage ocr-det), with
# mean_value in that order and calibration files in it (J5 calibration page: samples have "the
# dtype of input_type_train"); rgb for an R, G, B one. hb_mapper.sh runs with a stub hb_mapper
# that records its arguments, and the YAML it wrote is read with PyYAML.
mkdir -p "$tmp/stub" && printf '#!/bin/sh\necho "$*" >>"$(dirname "$0")/calls"\n' >"$tmp/stub/hb_mapper"
chmod +x "$tmp/stub/hb_mapper"
yaml_input() {  # yaml_input FOLDER: input_type_train, input_type_rt, mean_value of the YAML hb_mapper.sh writes
  (cd "$1" && PATH="$tmp/stub:$PATH" sh hb_mapper.sh >/dev/null) &&
    /usr/bin/python3 -c "import yaml; p = yaml.safe_load(open('$1/model_hb_mapper.yaml'))['input_parameters']; \
print(p['input_type_train'], p['input_type_rt'], p['mean_value'])"
}
check horizon-bgr 0 "$bin" convert "$det" --target horizon-j5 -o "$tmp/hb" --fix-shape x=1,3,640,640 \
  --calib "$tmp/two" --mean 103.53,116.28,123.675 --std 57.375,57.12,58.395 --bgr --no-verify
expect_eq horizon-bgr-yaml "$(yaml_input "$tmp/hb")" "bgr bgr 123.675 116.28 103.53"
check horizon-stage 0 "$bin" convert "$det" --target horizon-j5 -o "$tmp/hs" --fix-shape x=1,3,640,640 \
  --calib "$tmp/two" --stage ocr-det --no-verify
expect_eq horizon-stage-yaml "$(yaml_input "$tmp/hs")" "bgr bgr 123.675 116.28 103.53"
expect_eq horizon-stage-pixels "$(/usr/bin/python3 -c "
import numpy as np
x = np.fromfile('$tmp/hs/calib/0000_two.bin', dtype=np.uint8).reshape(3, 640, 640)
print(x[:, 100, 100].tolist(), x[:, 500, 300].tolist())")" "[10, 200, 30] [124, 116, 104]"
check horizon-rgb 0 "$bin" convert "$tmp/image.onnx" --target horizon-j5 -o "$tmp/hr" --calib "$tmp/two" \
  --mean 1,2,3 --std 1,1,1 --no-verify
expect_eq horizon-rgb-yaml "$(yaml_input "$tmp/hr")" "rgb rgb 1 2 3"
expect_eq horizon-rgb-pixels "$(/usr/bin/python3 -c "
import numpy as np
print(np.fromfile('$tmp/hr/calib/0000_two.bin', dtype=np.uint8).reshape(3, 32, 32)[:, 16, 4].tolist())")" "[30, 200, 10]"
report_and_exit
