#!/usr/bin/env bash
# `edgemm inspect --target` and `edgemm convert --target` (issue 10, docs/platforms.md).
# Golden verdicts, derived by hand from the profile lines (platforms/*.jsonl) and the models' op
# lists, not from an earlier run:
# - PP-OCRv4 det (opset 11; Add, BatchNormalization, Clip, Concat, Conv, ConvTranspose, Div,
#   GlobalAveragePool, HardSigmoid, Mul, Relu, Resize nearest with constant scales, Sigmoid; 62
#   Conv of which 14 depthwise), input pinned to 1x3x640x640:
#   rk3588: every op listed supported, Resize mode nearest allowed -> 0 CPU; opset 11 is below the
#     profile's 12..19 -> one whole-model issue fixed by "convert --opset 12".
#   ascend310p: Conv requires group 1 -> the 14 depthwise Conv on CPU (attribute), nothing else.
#   qualcomm-htp: GlobalAveragePool 10, HardSigmoid 10, Mul 86, Relu 12, Resize 6, Sigmoid 1 are
#     "unknown" -> 125 CPU.
#   horizon-j5: no op list (all unknown) -> every one of the 330 non-Constant nodes on CPU.
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
expect_eq det-ascend-cpu "$(json "sorted(set((n['op_type'], r['kind']) for n in j['nodes'] for r in n['reasons']))")" \
  "[('Conv', 'attribute')]"
expect_eq det-ascend-count "$(json "j['summary']['cpu_nodes']")" 14
expect_eq det-ascend-text "$(json "j['nodes'][[n['placement'] for n in j['nodes']].index('cpu')]['reasons'][0]['text'].split(';')[0].split(' = ')[0]")" \
  "'group'"

check det-qualcomm 0 "$bin" inspect "$det" --target qualcomm-htp --shape x=1,3,640,640 --json
expect_eq det-qualcomm-cpu "$(json "j['summary']['cpu_nodes']")" 125
expect_eq det-qualcomm-ops "$(json "sorted(set(n['op_type'] for n in j['nodes'] if n['placement'] == 'cpu'))")" \
  "['GlobalAveragePool', 'HardSigmoid', 'Mul', 'Relu', 'Resize', 'Sigmoid']"
expect_eq det-qualcomm-kind "$(json "sorted(set(r['kind'] for n in j['nodes'] for r in n['reasons']))")" "['unknown']"

check det-horizon 0 "$bin" inspect "$det" --target horizon-j5 --shape x=1,3,640,640 --json
expect_eq det-horizon-cpu "$(json "(j['summary']['cpu_nodes'], j['summary']['npu_nodes'])")" "(330, 0)"

check det-generic 0 "$bin" inspect "$det" --target generic-cpu --json
expect_eq det-generic-cpu "$(json "j['summary']['cpu_nodes']")" 0

check block-qualcomm 0 "$bin" inspect "$block" --target qualcomm-htp --shape x=1,16,32 --json
expect_eq block-qualcomm-split "$(json "(j['summary']['npu_nodes'], j['summary']['cpu_nodes'])")" "(17, 40)"

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
  --calib "$tmp/calib" --no-verify --json
expect_eq horizon-raw "$(stat -c %s "$tmp/hz/calib/0000_a.bin")" $((3 * 640 * 640))

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
# Raw 0-255 pixels into a model trained on normalized ones (no --mean/--std): the int8 error is
# huge, and the run says so (stderr and README) instead of passing silently.
check int8-poor 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8p" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --int8 --no-verify
expect_text int8-poor-readme "$tmp/i8p/README.md" "Error not measured"
check int8-poor-verified 0 "$bin" convert "$det" --target generic-cpu -o "$tmp/i8v" --fix-shape x=1,3,416,640 \
  --calib "$tmp/calib" --int8
expect_text int8-poor-warns "$tmp/err" "warning: model.int8.onnx's outputs are far from float's"
expect_text int8-poor-readme-warns "$tmp/i8v/README.md" "Warning: the int8 outputs are far from float's"
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
# --bgr: horizon-j5's hb_mapper reads uint8 RGB itself (refused); on rk3588 the script swaps the
# calibration images (quant_img_RGB2BGR=True, the toolkit's Caffe example) and lists mean/std in
# the model's B, G, R order.
check bgr-vendor-color 2 "$bin" convert "$det" --target horizon-j5 -o "$tmp/bg" --fix-shape x=1,3,640,640 \
  --calib "$tmp/calib" --bgr --no-verify
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
  --calib "$tmp/badfirst" --calib-count 1 --no-verify --json
expect_eq calib-count-decodable-n "$(json "(j['calibration']['written'], len(j['calibration']['skipped']))")" "(1, 1)"
# --bgr: the float samples edgemm normalizes follow the model's channel order (B first).
check bgr-samples 0 "$bin" convert "$tmp/image.onnx" --target ascend310p -o "$tmp/bs" \
  --calib "$tmp/badfirst" --bgr --no-verify
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
report_and_exit
