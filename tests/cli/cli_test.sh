#!/usr/bin/env bash
# CLI behaviour: --help everywhere, exit codes for bad input (never a signal), run/inspect on
# the real PP-OCRv4 det model. Usage: cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
det="$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx"

check help 0 "$bin" --help
for c in run inspect; do check "help-$c" 0 "$bin" "$c" --help; done
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
check run-det 0 "$bin" run "$det" --input x="$root/data/demo/photo_det_input.npy" --output-dir "$tmp/out_dir" \
  --profile "$tmp/trace.json" --threads 1 --json
expect_text run-json "$tmp/out" '"share_above"'
[ -f "$tmp/out_dir/sigmoid_0.tmp_0.npy" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL output file"; }
expect_text trace "$tmp/trace.json" '"traceEvents"'

report_and_exit
