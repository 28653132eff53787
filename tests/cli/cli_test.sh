#!/usr/bin/env bash
# CLI behaviour: --help everywhere, exit codes for bad input (never a signal), run/inspect on
# the real PP-OCRv4 det model, on native and on the opencv backend. Usage: cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
det="$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx"

check help 0 "$bin" --help
for c in run inspect profile; do check "help-$c" 0 "$bin" "$c" --help; done
check no-subcommand 2 "$bin"

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
expect_text opencv-unknown-backend-lists "$tmp/err" "available: native, opencv"
check opencv-inspect 0 "$bin" inspect "$cls" --shape x=1,3,48,192 --backend opencv --json
cp "$tmp/out" "$tmp/inspect_opencv.json"
check opencv-inspect-all-nodes 0 /usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["placement"]
assert p["backend"] == "opencv" and p["fallback_nodes"] == 0 and len(p["nodes"]) > 100, p["fallback_nodes"]
' "$tmp/inspect_opencv.json"
check opencv-dynamic 0 "$bin" inspect "$cls" --backend opencv
expect_text opencv-dynamic-reason "$tmp/out" 'dynamic input shape \[?,3,?,?\] (OpenCV DNN 4.6 needs static shapes'
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

report_and_exit
