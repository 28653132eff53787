#!/usr/bin/env bash
# edgemm convert: exit codes and messages for bad input, the transformer fixture converted to
# opsets 11 and 13 (checker, ONNX Runtime, edgemm, PyTorch reference), PP-OCRv4 cls, rec and det
# with fixed shapes and --simplify, verified with edgemm, ONNX Runtime and OpenCV DNN (which
# refuses the original files), and `edgemm ocr --backend opencv` on them.
# Usage: convert_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
fixtures="$root/tests/fixtures"
block="$fixtures/transformer_block.onnx"
x="$fixtures/transformer_block_x.npy"
py=/usr/bin/python3

check help 0 "$bin" convert --help
check missing-output 2 "$bin" convert "$block"
check unknown-input 2 "$bin" convert "$block" -o "$tmp/o.onnx" --fix-shape images=2,8,32
expect_text unknown-input-lists "$tmp/err" "inputs: x \[batch,seq,32\]"
check wrong-rank 2 "$bin" convert "$block" -o "$tmp/o.onnx" --fix-shape x=2,8
expect_text wrong-rank-says "$tmp/err" "has rank 3 \[batch,seq,32\]"
check zero-extent 2 "$bin" convert "$block" -o "$tmp/o.onnx" --fix-shape x=0,8,32
check contradiction 2 "$bin" convert "$block" -o "$tmp/o.onnx" --fix-shape x=2,8,16
expect_text contradiction-says "$tmp/err" "fixed to 32"
check opset-too-low 4 "$bin" convert "$block" -o "$tmp/o.onnx" --opset 5 --no-verify
expect_text opset-too-low-says "$tmp/err" "target opset 5 is outside"
check opset-too-high 4 "$bin" convert "$block" -o "$tmp/o.onnx" --opset 99 --no-verify
# The opset range is checked before the verification setup (which wants static input shapes).
check opset-too-low-verified 4 "$bin" convert "$block" -o "$tmp/o.onnx" --opset 5
expect_text opset-too-low-verified-says "$tmp/err" "target opset 5 is outside"
check unwritable-output 6 "$bin" convert "$block" -o "$tmp/no/such/dir/o.onnx" --no-verify
cp "$block" "$tmp/in.onnx"
check output-is-input 2 "$bin" convert "$tmp/in.onnx" -o "$tmp/in.onnx" --no-verify
check symbolic-needs-shape 2 "$bin" convert "$block" -o "$tmp/o.onnx" --opset 13
expect_text symbolic-needs-shape-says "$tmp/err" "verify-shape"
check input-contradicts-shape 2 "$bin" convert "$block" -o "$tmp/o.onnx" --fix-shape x=1,8,32 --input x="$x"
expect_text input-contradicts-shape-says "$tmp/err" "has shape \[2,8,32\]"
check tolerance-nan 2 "$bin" convert "$block" -o "$tmp/o.onnx" --tolerance nan
check tolerance-negative 2 "$bin" convert "$block" -o "$tmp/o.onnx" --tolerance -1
check shape-overflow 2 "$bin" convert "$block" -o "$tmp/o.onnx" --no-verify --fix-shape x=4611686018427387904,8,32
expect_text shape-overflow-says "$tmp/err" "more elements than int64 can count"
[ -e "$tmp/o.onnx" ] && { failed=$((failed + 1)); echo "FAIL: a refused conversion wrote its output"; }
# -o never replaces a file the conversion reads: the model's external data, an --input file.
$py -c '
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.save_model(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                size_threshold=0)' "$block" "$tmp/external.onnx"
cp "$tmp/weights.bin" "$tmp/weights.bin.orig"
check output-is-external-data 2 "$bin" convert "$tmp/external.onnx" -o "$tmp/weights.bin" --fix-shape x=2,8,32
expect_text output-is-external-data-says "$tmp/err" "it is an input"
check external-data-intact 0 cmp -s "$tmp/weights.bin" "$tmp/weights.bin.orig"
cp "$x" "$tmp/given.npy"
check output-is-given-input 2 "$bin" convert "$block" -o "$tmp/given.npy" --fix-shape x=2,8,32 --input x="$tmp/given.npy"
check given-input-intact 0 cmp -s "$tmp/given.npy" "$x"

# A model without graph inputs (Constant -> y): ONNX Runtime runs both models on no feeds (it
# used to only list them, leaving no y.npy to compare) and gives the constant's values.
$py -c '
import onnx, sys
from onnx import helper, TensorProto
c = helper.make_node("Constant", [], ["y"], value=helper.make_tensor("c", TensorProto.FLOAT, [2, 3], [1, 2, 3, 4, 5, 6]))
g = helper.make_graph([c], "const", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), sys.argv[1])' "$tmp/const.onnx"
check no-inputs-verified 0 "$bin" convert "$tmp/const.onnx" -o "$tmp/const_out.onnx" --json
cp "$tmp/out" "$tmp/const.json"
check no-inputs-report 0 $py -c '
import json, sys
v = json.load(open(sys.argv[1]))["verification"]
assert v["passed"] and [c["engine"] for c in v["checks"] if "skipped" not in c] == ["edgemm", "onnxruntime"], v
' "$tmp/const.json"
check no-inputs-ort-run 0 node "$root/tools/reference/ort_run.js" "$tmp/const_out.onnx" --output-dir "$tmp/ort_const"
check no-inputs-ort-values 0 $py -c '
import numpy as np, sys
assert np.load(sys.argv[1]).tolist() == [[1, 2, 3], [4, 5, 6]]' "$tmp/ort_const/y.npy"

# Opset 21 down to 17, 13 and 11 (tests/cli/opset21_models.py: GroupNormalization-21, Gelu-20,
# Mish-18, Pad-18 axes, Reduce*-18 axes inputs, Split-18 num_outputs, Resize-18): verified by the
# command against the original with edgemm and ONNX Runtime, then libonnx 1.12's full checker
# (strict shape inference) accepts each result. BitwiseAnd-18 and Resize-18 antialias have no
# older form: refused, nothing written.
check opset21-models 0 $py "$root/tests/cli/opset21_models.py" "$tmp"
# inspect: the opset-21 file's ops, each with a CPU kernel; an op without one (ImageDecoder-20)
# is listed as such, and run refuses it by name.
check opset21-inspect 0 "$bin" inspect "$tmp/ops21.onnx" --json
cp "$tmp/out" "$tmp/ops21_inspect.json"
check opset21-inspect-ops 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["opsets"] == {"ai.onnx": 21}, r["opsets"]
assert {"GroupNormalization", "Gelu", "Mish", "Split", "Pad", "ReduceMean"} <= set(r["op_histogram"]), r["op_histogram"]
assert r["ops_without_kernel"] == [], r["ops_without_kernel"]
assert [o["shape"] for o in r["outputs"]][0] == [1, 4, 13, 1], r["outputs"]
' "$tmp/ops21_inspect.json"
check image-decoder-inspect 0 "$bin" inspect "$tmp/image_decoder20.onnx"
expect_text image-decoder-inspect-says "$tmp/out" "ImageDecoder .*(no CPU kernel)"
check image-decoder-run 4 "$bin" run "$tmp/image_decoder20.onnx"
expect_text image-decoder-run-says "$tmp/err" "no CPU kernel: ImageDecoder"
for opset in 17 13 11; do
  check "opset21-to-$opset" 0 "$bin" convert "$tmp/ops21.onnx" -o "$tmp/ops21_$opset.onnx" --opset "$opset" --json
  cp "$tmp/out" "$tmp/ops21_$opset.json"
  check "opset21-to-$opset-verified" 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["opset"] == {"from": 21, "to": int(sys.argv[2])}, r["opset"]
engines = {c["engine"] for c in r["verification"]["checks"]}
assert r["verification"]["passed"] and engines >= {"edgemm", "onnxruntime"}, r["verification"]
assert not {"Gelu", "Mish", "GroupNormalization"} & set(r["ops_after"]), r["ops_after"]
' "$tmp/ops21_$opset.json" "$opset"
  check "opset21-to-$opset-checker" 0 $py -c '
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [int(sys.argv[2])]
' "$tmp/ops21_$opset.onnx" "$opset"
done
check bitwise18-to-17 4 "$bin" convert "$tmp/bitwise18.onnx" -o "$tmp/refused.onnx" --opset 17
expect_text bitwise18-to-17-says "$tmp/err" "BitwiseAnd exists only from opset 18"
check antialias18-to-17 4 "$bin" convert "$tmp/antialias18.onnx" -o "$tmp/refused.onnx" --opset 17
expect_text antialias18-to-17-says "$tmp/err" "antialias = 1 exists only from Resize-18"
[ -e "$tmp/refused.onnx" ] && { failed=$((failed + 1)); echo "FAIL: a refused conversion wrote its output"; }

# The fixture at opsets 11 and 13: verified by the command, then checked against PyTorch.
check_fixture() {  # check_fixture OPSET EXTRA_ARGS...
  local opset="$1" out="$tmp/block_$1.onnx"
  shift
  check "fixture-$opset" 0 "$bin" convert "$block" -o "$out" --opset "$opset" --input x="$x" --json "$@"
  cp "$tmp/out" "$tmp/block_$opset.json"
  check "fixture-$opset-report" 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = r["verification"]
assert r["opset"]["to"] == int(sys.argv[2]) and v["passed"], v
engines = {(c["engine"], c["input_set"]) for c in v["checks"] if "skipped" not in c}
assert {e for e, _ in engines} == {"edgemm", "onnxruntime"}, v["checks"]
assert all(c["max_abs_error"] <= 1e-4 for c in v["checks"] if "skipped" not in c), v["checks"]
assert "LayerNormalization" not in r["ops_after"] and r["ops_after"].get("ReduceMean", 0) >= 4, r["ops_after"]
' "$tmp/block_$opset.json" "$opset"
  check "fixture-$opset-checker" 0 $py -c '
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [int(sys.argv[2])]
' "$out" "$opset"
  check "fixture-$opset-edgemm-run" 0 "$bin" run "$out" --input x="$x" --output-dir "$tmp/edgemm_$opset"
  check "fixture-$opset-ort-run" 0 node "$root/tools/reference/ort_run.js" "$out" --input x="$x" --output-dir "$tmp/ort_$opset"
  check "fixture-$opset-vs-pytorch" 0 $py -c '
import numpy as np, sys
fixtures, tmp, opset = sys.argv[1:4]
for engine in ("edgemm", "ort"):
    for name in ("y", "pooled"):
        want = np.load(f"{fixtures}/transformer_block_{name}.npy")
        got = np.load(f"{tmp}/{engine}_{opset}/{name}.npy")
        err = float(np.abs(got - want).max())
        assert got.shape == want.shape and err <= 1e-4, (engine, name, err)
' "$fixtures" "$tmp" "$opset"
}
check_fixture 11 --fix-shape x=2,8,32
check_fixture 13 --verify-shape x=2,8,32

# The fixture at opset 11, batch 1, --simplify: OpenCV DNN 4.6 (which has no LayerNormalization)
# loads it and matches the original, thanks to the scale moved before attention's Q·Kᵀ MatMul.
check fixture-opencv 0 "$bin" convert "$block" -o "$tmp/block_opencv.onnx" --opset 11 --fix-shape x=1,8,32 \
  --simplify --verify-opencv --json
cp "$tmp/out" "$tmp/block_opencv.json"
check fixture-opencv-report 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = r["verification"]
ran = [c for c in v["checks"] if "skipped" not in c]
assert v["passed"] and {c["engine"] for c in ran} == {"edgemm", "onnxruntime", "opencv"}, v
assert all(c["max_abs_error"] <= 1e-4 for c in ran if "max_abs_error" in c), v
assert r["rewrites"]["scalar Mul/Div moved before MatMul"] == 1, r["rewrites"]
' "$tmp/block_opencv.json"

# PP-OCRv4 with fixed shapes and --simplify: edgemm, ONNX Runtime and OpenCV DNN 4.6 (which
# refuses each original file) within 1e-4. det and rec guard the rewrites OpenCV needs
# (HardSwish without Clip-11, LayerNorm scales at full shape).
check_ppocr() {  # check_ppocr NAME FILE SHAPE
  local name="$1" model="$root/models/ppocrv4/$2"
  if [ ! -f "$model" ]; then
    echo "skip: PP-OCRv4 $name model missing ($model)"
    return
  fi
  check "$name-convert" 0 "$bin" convert "$model" -o "$tmp/$name.onnx" --fix-shape "x=$3" --simplify --verify-opencv \
    --threads 2 --json
  cp "$tmp/out" "$tmp/$name.json"
  check "$name-report" 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = r["verification"]
ran = [c for c in v["checks"] if "skipped" not in c]
assert v["passed"] and {c["engine"] for c in ran} == {"edgemm", "onnxruntime", "opencv"}, v
assert v.get("opencv_original"), v  # OpenCV DNN 4.6 refuses the original (det: Clip inputs, else Shape)
assert r["nodes"]["after"] < r["nodes"]["before"] and "BatchNormalization" not in r["ops_after"], r
assert "Clip" not in r["ops_after"] or r["opset"]["to"] < 11, r["ops_after"]
' "$tmp/$name.json"
}
check_ppocr cls ch_ppocr_mobile_v2.0_cls_infer.onnx 1,3,48,192
check_ppocr rec ch_PP-OCRv4_rec_infer.onnx 1,3,48,320
check_ppocr det ch_PP-OCRv4_det_infer.onnx 1,3,640,640
# Extents the model cannot take (det's strides and upsampling need multiples of 32): a usage error.
if [ -f "$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx" ]; then
  check det-bad-extent 2 "$bin" convert "$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx" -o "$tmp/det_bad.onnx" \
    --fix-shape x=1,3,100,3000 --simplify --no-verify
  expect_text det-bad-extent-says "$tmp/err" "the extents may not suit it"
fi

# edgemm ocr on the converted files: the opencv backend runs every node and reads the same text
# as native on the same files (three images of the set, one upside down).
if [ -f "$tmp/det.onnx" ] && [ -f "$tmp/rec.onnx" ] && [ -f "$tmp/cls.onnx" ]; then
  static="$tmp/static_models"
  mkdir -p "$static"
  cp "$tmp/det.onnx" "$static/ch_PP-OCRv4_det_infer.onnx"
  cp "$tmp/rec.onnx" "$static/ch_PP-OCRv4_rec_infer.onnx"
  cp "$tmp/cls.onnx" "$static/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  cp "$root/models/ppocrv4/ppocr_keys_v1.txt" "$static/"
  images=("$root/data/ocr_set/000_photo_chelsea.jpg" "$root/data/ocr_set/002_page_yellow.png"
    "$root/data/ocr_set/005_photo_rocket.jpg")
  check ocr-static-native 0 "$bin" ocr --models "$static" --threads 2 --json "${images[@]}"
  expect_text ocr-static-det-warning "$tmp/err" "static input is 640x640; images are letterboxed"
  cp "$tmp/out" "$tmp/ocr_native.json"
  check ocr-static-opencv 0 "$bin" ocr --models "$static" --threads 2 --backend opencv --json "${images[@]}"
  cp "$tmp/out" "$tmp/ocr_opencv.json"
  check ocr-opencv-same-text 0 $py -c '
import json, sys
native, opencv = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for stage, p in opencv["placement"].items():
    assert p["backend"] == "opencv" and p["fallback_nodes"] == 0, (stage, p)
text = lambda r: [[line["text"] for line in image["lines"]] for image in r["images"]]
assert text(native) == text(opencv), (text(native), text(opencv))
assert sum(len(t) for t in text(native)) >= 10 and any(i["orientation"] == 180 for i in native["images"])
' "$tmp/ocr_native.json" "$tmp/ocr_opencv.json"

  # Static recognizers: lines wider than 48x320 are cut at gaps and read in pieces (squeezed, the
  # set read at CER 21.8 %), and --rec-bucket sends each line to the narrowest recognizer that
  # holds it. Oracle: the set's labels.
  buckets="$tmp/rec_buckets"
  mkdir -p "$buckets"
  for f in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_keys_v1.txt; do
    ln -sf "$root/models/ppocrv4/$f" "$buckets/$f"
  done
  cp "$tmp/rec.onnx" "$buckets/ch_PP-OCRv4_rec_infer.onnx"
  check rec-960 0 "$bin" convert "$root/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx" --fix-shape x=1,3,48,960 \
    --simplify --no-verify -o "$buckets/rec_960.onnx"
  check ocr-rec-320 0 "$bin" eval ocr --set "$root/data/ocr_set" --models "$buckets" --threads 2 --json
  cp "$tmp/out" "$tmp/eval_320.json"
  check ocr-rec-buckets 0 "$bin" eval ocr --set "$root/data/ocr_set" --models "$buckets" --rec-bucket rec_960.onnx \
    --threads 2 --json
  cp "$tmp/out" "$tmp/eval_buckets.json"
  # One file per --rec-bucket: the image after it stays an image; a det model or a recognizer
  # with a dynamic width is refused as a bucket, by name.
  check ocr-bucket-then-image 0 "$bin" ocr --models "$buckets" --rec-bucket rec_960.onnx "$root/data/demo/photo_text.jpg" \
    --threads 2 --json
  expect_text ocr-bucket-then-image-reads "$tmp/out" '"text"'
  check ocr-bucket-det 2 "$bin" ocr --models "$buckets" --rec-bucket ch_PP-OCRv4_det_infer.onnx \
    "$root/data/demo/photo_text.jpg"
  expect_text ocr-bucket-det-says "$tmp/err" "'ch_PP-OCRv4_det_infer.onnx' is not a text recognizer"
  ln -sf "$root/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx" "$buckets/rec_dynamic.onnx"
  check ocr-bucket-dynamic 2 "$bin" ocr --models "$buckets" --rec-bucket rec_dynamic.onnx \
    "$root/data/demo/photo_text.jpg"
  expect_text ocr-bucket-dynamic-says "$tmp/err" "has a dynamic input width"
  check ocr-rec-static-cer 0 $py -c '
import json, sys
only, buckets = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert only["overall"]["cer"] <= 0.03, only["overall"]     # measured 0.0180
assert buckets["overall"]["cer"] <= 0.03, buckets["overall"]  # measured 0.0205
assert set(buckets["placement"]) == {"det", "cls", "rec", "rec:rec_960.onnx"}, buckets["placement"].keys()
' "$tmp/eval_320.json" "$tmp/eval_buckets.json"
fi
report_and_exit
