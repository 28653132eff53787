#!/usr/bin/env bash
# CLI behaviour: --help everywhere, exit codes for bad input (never a signal), run/inspect on
# the real PP-OCRv4 det model, on native, on the opencv backend, through the reference vendor plugin
# and bad plugins. Usage: cli_test.sh EDGEMM_BINARY REPO_ROOT REFERENCE_PLUGIN WRONG_ABI_PLUGIN NOT_A_PLUGIN
set -uo pipefail
bin="$1"
root="$2"
reference_plugin="$3"
wrong_abi_plugin="$4"
not_a_plugin="$5"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
det="$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx"

check help 0 "$bin" --help
expect_text help-exit-codes "$tmp/out" "^Exit codes: 0 ok, 1 .*, 2 invalid argument, 3 invalid model"
for c in run inspect profile; do check "help-$c" 0 "$bin" "$c" --help; done
# Every command's help, nested ones too, ends with the exit codes.
for c in "run" "ocr" "eval ocr" "bench" "convert" "quantize" "vqa" "chat"; do
  # shellcheck disable=SC2086  # the command's words on purpose
  check "help-${c// /-}-codes" 0 "$bin" $c --help
  expect_text "help-${c// /-}-exit-codes" "$tmp/out" "^Exit codes: 0 ok"
done
check no-subcommand 2 "$bin"
expect_text no-subcommand-says "$tmp/err" "^edgemm: error: InvalidArgument: A subcommand is required"
# CLI11's argument errors read like edgemm's own: "edgemm <command>: error: InvalidArgument: ...".
check bad-number 2 "$bin" ocr --threads abc
expect_text bad-number-says "$tmp/err" "^edgemm ocr: error: InvalidArgument: --threads: Value abc not in range"
check unknown-option 2 "$bin" run "$det" --bogus
expect_text unknown-option-says "$tmp/err" "^edgemm run: error: InvalidArgument: The following argument was not expected: --bogus"
check missing-value 2 "$bin" run "$det" --input
expect_text missing-value-says "$tmp/err" "^edgemm run: error: InvalidArgument: --input"
check nested-bad-option 2 "$bin" eval ocr --bogus
expect_text nested-bad-option-says "$tmp/err" "^edgemm eval ocr: error: InvalidArgument: "
check unknown-subcommand 2 "$bin" bogus
expect_text unknown-subcommand-message "$tmp/err" "unknown command 'bogus'"

: >"$tmp/empty.onnx"
check empty-model 3 "$bin" run "$tmp/empty.onnx"
expect_text empty-message "$tmp/err" "empty"
head -c 3000 /dev/urandom >"$tmp/random.onnx"
check random-model 3 "$bin" inspect "$tmp/random.onnx"
head -c 100000 "$det" >"$tmp/truncated.onnx"
check truncated-model 3 "$bin" run "$tmp/truncated.onnx"
check missing-model 6 "$bin" run "$tmp/nope.onnx"
check bad-input-spec 2 "$bin" run "$det" --input x
check missing-npy 6 "$bin" run "$det" --input x="$tmp/none.npy"
check wrong-input-name 2 "$bin" run "$det" --input image="$root/data/demo/photo_det_input.npy"
check bad-shape-spec 2 "$bin" inspect "$det" --shape x=1,3,abc
# Extents below 1 are refused as convert --fix-shape refuses them (also with --target).
check inspect-zero-extent 2 "$bin" inspect "$det" --shape x=1,3,0,640
expect_text inspect-zero-extent-says "$tmp/err" "--shape x=\[1,3,0,640\]: extent 0 of axis 2 must be at least 1"
check inspect-target-zero-extent 2 "$bin" inspect "$det" --target rk3588 --shape x=0,3,640,640
expect_text inspect-target-zero-extent-says "$tmp/err" "extent 0 of axis 0 must be at least 1"

check inspect-json 0 "$bin" inspect "$det" --shape x=1,3,640,640 --json
expect_text inspect-flops "$tmp/out" '"flops"'
check inspect-optimized 0 "$bin" inspect "$det" --shape x=1,3,640,640 --optimized
expect_text inspect-optimized-text "$tmp/out" 'rewritten patterns'
check inspect-optimized-json 0 "$bin" inspect "$det" --shape x=1,3,640,640 --optimized --json
cp "$tmp/out" "$tmp/inspect_optimized.json"
check inspect-plain-json 0 "$bin" inspect "$det" --shape x=1,3,640,640 --json
cp "$tmp/out" "$tmp/inspect_plain.json"
check inspect-optimized-consistent 0 /usr/bin/python3 -c '
import json, sys
o, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
r = o["optimized"]
assert "optimized" not in p
assert r["nodes_before"] == p["nodes"] and r["nodes_after"] == o["nodes"], r
assert r["nodes_after"] < r["nodes_before"], r
assert r["nodes_before"] - r["nodes_after"] == r["folded_nodes"] + r["removed_nodes"] + r["rewritten_nodes"], r
assert all(isinstance(c, int) and c > 0 for c in r["patterns"].values()), r["patterns"]
assert sum(o["op_histogram"].values()) == o["nodes"]
' "$tmp/inspect_optimized.json" "$tmp/inspect_plain.json"
check inspect-optimized-kernels 0 /usr/bin/python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["optimized"]["kernels"]
assert k[0].startswith("CPU: ") and any("Conv" in line for line in k), k
' "$tmp/inspect_optimized.json"
check verbose-logs-kernels 0 env EDGEMM_VERBOSE=1 "$bin" run "$det" --input x="$root/data/demo/photo_det_input.npy"
expect_text verbose-logs-kernels-text "$tmp/err" 'edgemm: CPU: '
rec="$root/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx"
check inspect-optimized-rec 0 "$bin" inspect "$rec" --optimized --json
cp "$tmp/out" "$tmp/inspect_rec.json"
check inspect-optimized-rec-fused 0 /usr/bin/python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
n = o["optimized"]["patterns"].get("LayerNormalization", 0)
assert n > 0 and o["op_histogram"].get("com.edgemm.LayerNormalization") == n, o["optimized"]
assert "ReduceMean" not in o["op_histogram"], o["op_histogram"]
' "$tmp/inspect_rec.json"
check run-det 0 "$bin" run "$det" --input x="$root/data/demo/photo_det_input.npy" --output-dir "$tmp/out_dir" \
  --profile "$tmp/trace.json" --threads 1 --json
expect_text run-json "$tmp/out" '"share_above"'
[ -f "$tmp/out_dir/sigmoid_0.tmp_0.npy" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL output file"; }
expect_text trace "$tmp/trace.json" '"traceEvents"'

cls="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
check profile-missing-model 6 "$bin" profile "$tmp/nope.onnx"
check profile-bad-shape-spec 2 "$bin" profile "$cls" --shape x=1,3,abc
check profile-wrong-input-name 2 "$bin" profile "$cls" --shape image=1,3,48,192
check profile-symbolic-no-shape 2 "$bin" profile "$cls"
expect_text profile-symbolic-message "$tmp/err" "symbolic"
check profile-bad-input-spec 2 "$bin" profile "$cls" --input x
check profile-zero-iters 2 "$bin" profile "$cls" --shape x=1,3,48,192 --iters 0
check profile-json 0 "$bin" profile "$cls" --shape x=1,3,48,192 --iters 2 --threads 1 --json \
  --trace "$tmp/profile_trace.json" --markdown "$tmp/profile.md" --report "$tmp/profile.html"
cp "$tmp/out" "$tmp/profile.json"
check profile-json-content 0 /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "edgemm.profile/1" and r["iterations"] == 2, r["schema"]
assert len(r["nodes"]) > 0 and r["flops"] > 0
for key in ("nodes", "op_types"):
    total = sum(x["share_percent"] for x in r[key])
    assert abs(total - 100) < 0.01, (key, total)
assert sum(o["count"] for o in r["op_types"]) == len(r["nodes"])
' "$tmp/profile.json"
check profile-trace-json 0 /usr/bin/python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
assert events and all(e["ph"] == "X" and "flops" in e["args"] and "bytes" in e["args"] for e in events)
' "$tmp/profile_trace.json"
expect_text profile-markdown "$tmp/profile.md" '| op type | nodes |'
check profile-html 0 /usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
text = open(sys.argv[1], encoding="utf-8").read()
assert text.startswith("<!DOCTYPE html>")
root = ET.fromstring(text[text.index("<html"):])
svgs = [e for e in root.iter() if e.tag.endswith("svg")]
assert len(svgs) == 3, len(svgs)  # op-type time, op-type GFLOP/s, slowest nodes
' "$tmp/profile.html"
check profile-text 0 "$bin" profile "$cls" --shape x=1,3,48,192 --iters 1 --warmup 0 --top 3
expect_text profile-text-header "$tmp/out" 'median wall time'
expect_text profile-text-top "$tmp/out" '(3 of '

# --backend opencv (docs/backends.md): settings it cannot honour exit 2; inspect and run report the
# placement with OpenCV's reasons; outputs equal native's.
photo="$root/data/demo/photo_det_input.npy"
check opencv-fp16 2 "$bin" run "$det" --input x="$photo" --backend opencv --precision fp16
expect_text opencv-fp16-message "$tmp/err" "backend 'opencv' does not support precision 'fp16' (it supports: fp32)"
check opencv-gpu 2 "$bin" inspect "$cls" --shape x=1,3,48,192 --backend opencv --device gpu
expect_text opencv-gpu-message "$tmp/err" "backend 'opencv' does not support device 'gpu' (it supports: cpu)"
check opencv-unknown-backend 2 "$bin" run "$det" --input x="$photo" --backend tpu9000
expect_text opencv-unknown-backend-lists "$tmp/err" "available: native, opencv, plugin"
check opencv-inspect 0 "$bin" inspect "$cls" --shape x=1,3,48,192 --backend opencv --json
cp "$tmp/out" "$tmp/inspect_opencv.json"
check opencv-inspect-all-nodes 0 /usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["placement"]
assert p["backend"] == "opencv" and p["fallback_nodes"] == 0 and len(p["nodes"]) > 100, p["fallback_nodes"]
' "$tmp/inspect_opencv.json"
check opencv-dynamic 0 "$bin" inspect "$cls" --backend opencv
expect_text opencv-dynamic-reason "$tmp/out" 'dynamic input shape \[?,3,?,?\] (OpenCV DNN 4.6 needs static shapes'
expect_text opencv-dynamic-hint "$tmp/out" 'pin them with --shape on run, inspect and bench, or make the file static with'
check opencv-run-native 0 "$bin" run "$det" --input x="$photo" --threads 1 --json
cp "$tmp/out" "$tmp/run_native.json"
check opencv-run 0 "$bin" run "$det" --input x="$photo" --shape x=1,3,416,640 --backend opencv --threads 1 --json
cp "$tmp/out" "$tmp/run_opencv.json"
expect_text opencv-run-warning "$tmp/err" "backend 'opencv' cannot run 24 of 269 nodes"
check opencv-run-matches-native 0 /usr/bin/python3 -c '
import json, sys
n, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = o["placement"]
assert p["fallback_nodes"] == 24 and all(x["op_type"] == "Clip" and "input_size() == 1" in x["reason"]
                                         for x in p["nodes"] if x["backend"] != "opencv"), p["fallback_nodes"]
a, b = n["outputs"][0], o["outputs"][0]
assert a["shape"] == b["shape"] and all(abs(a[k] - b[k]) < 1e-4 for k in ("min", "max", "mean", "std", "share_above")), (a, b)
' "$tmp/run_native.json" "$tmp/run_opencv.json"
# Reports never overwrite what they read: --profile and --output-dir aimed at the model or an input.
cp "$cls" "$tmp/cls.onnx"
/usr/bin/python3 -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((1,3,48,192), np.float32))' "$tmp/x.npy"
check run-profile-onto-model 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --profile "$tmp/cls.onnx"
check run-profile-onto-input 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --profile "$tmp/x.npy"
check run-profile-model-intact 0 cmp -s "$cls" "$tmp/cls.onnx"
output_name="$(/usr/bin/python3 -c 'import onnx, sys; print(onnx.load(sys.argv[1]).graph.output[0].name)' "$cls")"
cp "$tmp/x.npy" "$tmp/$output_name.npy"
check run-output-dir-onto-input 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/$output_name.npy" --output-dir "$tmp"
check run-above-nan 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --above nan
# Backend options: unknown backend, unsupported precision/device (named in the message).
check run-unknown-backend 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --backend tpu9000
expect_text run-unknown-backend-message "$tmp/err" "unknown backend 'tpu9000'"
check run-native-fp8 2 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --precision fp8
expect_text run-native-fp8-message "$tmp/err" "does not support precision 'fp8'"
check inspect-native-fp8 2 "$bin" inspect "$tmp/cls.onnx" --precision fp8
expect_text inspect-native-fp8-message "$tmp/err" "(it supports: fp32, bf16, fp16)"
check inspect-native-gpu 2 "$bin" inspect "$tmp/cls.onnx" --device gpu
check profile-native-fp8 2 "$bin" profile "$tmp/cls.onnx" --precision fp8
# fp16 is for Arm CPUs with FP16 arithmetic: elsewhere it warns and runs float32 (as bf16 does without AVX512_BF16).
check run-native-fp16-elsewhere 0 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --precision fp16
expect_text run-native-fp16-warning "$tmp/err" "precision fp16 needs an Arm CPU with FP16 arithmetic"
check run-native-bf16 0 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --precision bf16
check run-placement-json 0 "$bin" run "$tmp/cls.onnx" --input x="$tmp/x.npy" --json
expect_text run-placement-in-json "$tmp/out" '"fallback_nodes": 0'
# Vendor plugins (docs/plugins.md): the reference plugin runs det's Conv/Relu/Add/Mul/... and leaves the rest
# (Sigmoid, Resize, ...) to native with its reasons; the output matches the native run's.
det_input=x="$root/data/demo/photo_det_input.npy"
check plugin-native-run 0 "$bin" run "$det" --input "$det_input" --threads 1 --json
cp "$tmp/out" "$tmp/native_run.json"
check plugin-run 0 "$bin" run "$det" --input "$det_input" --threads 1 --json --backend plugin --plugin "$reference_plugin"
cp "$tmp/out" "$tmp/plugin_run.json"
check plugin-run-placement 0 /usr/bin/python3 -c '
import json, sys
run, native = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = run["placement"]
assert p["backend"] == "reference", p["backend"]
on = [n for n in p["nodes"] if n["backend"] == "reference"]
off = [n for n in p["nodes"] if n["backend"] == "native"]
assert on and off and len(on) + len(off) == len(p["nodes"]) and p["fallback_nodes"] == len(off), p
assert {n["op_type"] for n in on} <= {"Add", "Conv", "Gemm", "MatMul", "MaxPool", "Mul", "Relu"}, on
assert all(n["reason"] == "" for n in on) and all(n["reason"] for n in off)
assert any(n["op_type"] == "Sigmoid" and n["reason"].startswith("Sigmoid is not among the reference plugin") for n in off)
for a, b in zip(run["outputs"], native["outputs"]):
    assert a["shape"] == b["shape"], (a, b)
    for k in ("min", "max", "mean", "std"):
        assert abs(a[k] - b[k]) < 1e-4, (k, a[k], b[k])
' "$tmp/plugin_run.json" "$tmp/native_run.json"
check plugin-inspect 0 "$bin" inspect "$det" --backend plugin --plugin "$reference_plugin"
expect_text plugin-inspect-placement "$tmp/out" 'nodes (the graph after the load-time standard-op passes) on reference'
check plugin-no-path 2 "$bin" run "$det" --input "$det_input" --backend plugin
expect_text plugin-no-path-message "$tmp/err" 'needs a plugin library'
check plugin-missing 6 "$bin" run "$det" --input "$det_input" --backend plugin --plugin "$tmp/libnone.so"
expect_text plugin-missing-message "$tmp/err" "plugin library '$tmp/libnone.so' does not exist"
check plugin-directory 6 "$bin" run "$det" --input "$det_input" --backend plugin --plugin "$tmp"
expect_text plugin-directory-message "$tmp/err" "is a directory, not a shared library"
check plugin-without-plugin-backend 2 "$bin" run "$det" --input "$det_input" --backend native --plugin "$reference_plugin"
expect_text plugin-without-plugin-backend-message "$tmp/err" "choose backend 'plugin' to load it"
echo "not a library" >"$tmp/libtext.so"
check plugin-text-file 4 "$bin" inspect "$det" --backend plugin --plugin "$tmp/libtext.so"
expect_text plugin-text-file-message "$tmp/err" "plugin '$tmp/libtext.so' is not a loadable shared library"
check plugin-no-entry-point 4 "$bin" run "$det" --input "$det_input" --backend plugin --plugin "$not_a_plugin"
expect_text plugin-no-entry-point-message "$tmp/err" "does not export edgemm_plugin_get_api"
check plugin-wrong-abi 4 "$bin" run "$det" --input "$det_input" --backend plugin --plugin "$wrong_abi_plugin"
expect_text plugin-wrong-abi-message "$tmp/err" "has ABI version 999; this edgemm needs 1"
check plugin-wrong-device 2 "$bin" run "$det" --input "$det_input" --backend plugin --plugin "$reference_plugin" \
  --device npu
expect_text plugin-wrong-device-message "$tmp/err" "backend 'reference' does not support device 'npu'"

report_and_exit
