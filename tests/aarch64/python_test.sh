#!/usr/bin/env bash
# The Python package on aarch64 (ctest aarch64_python, label aarch64_ci; docs/aarch64.md "Python"):
# the arm64 module edgemm._edgemm (.cpython-311-aarch64-linux-gnu.so) imported by the sysroot's
# arm64 python3.11 with its numpy, under qemu-aarch64 (PYTHON_COMMAND: build-aarch64/bin/python3-emulated).
# - python/tests/ort_style_script.py, an ONNX Runtime-style script (`import edgemm as ort`, unmodified),
#   on PP-OCRv4's angle classifier: its outputs equal ONNX Runtime 1.30's (host, node
#   tools/reference/ort_run.js) on the inputs it saved, max |diff| <= 1e-4; without onnxruntime-node
#   the arm64 CLI (`edgemm run`) is the oracle instead.
# - tests/aarch64/python_smoke.py: the module is the arm64 build, a bad input raises
#   edgemm.InvalidArgument, and OcrPipeline reads the demo photo: the lines drawn on it
#   (data/demo/photo_text.json) with at most 2 character edits in all, "Good morning!" among them.
# Usage: python_test.sh PYTHON_COMMAND EDGEMM_COMMAND REPO_ROOT
set -uo pipefail
py="$1"
bin="$2"
root="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../cli/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/check_lib.sh"
host_py=/usr/bin/python3
cls="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
show() {  # the last step's output into the test's log; on failure the end of its stderr too
  sed 's/^/  /' "$tmp/out"
  [ "$failed" = "${failed_before:-0}" ] || tail -8 "$tmp/err" | sed 's/^/  ! /'
  failed_before=$failed
}

# ONNX Runtime-style script, against ONNX Runtime (or the arm64 CLI)
t=$(date +%s)
check ort-style-script 0 "$py" "$root/python/tests/ort_style_script.py" "$cls" "$tmp/ort_style"
show
echo "ort_style_script.py: $(($(date +%s) - t)) s"
inputs=()
while read -r kind name _; do
  [ "$kind" = input ] && inputs+=(--input "$name=$tmp/ort_style/inputs/$(echo "$name" | tr '/:' '__').npy")
done <"$tmp/out"
if command -v node >/dev/null && [ -d "$root/tools/reference/node_modules/onnxruntime-node" ]; then
  oracle="ONNX Runtime 1.30 (host)"
  check oracle 0 node "$root/tools/reference/ort_run.js" "$cls" "${inputs[@]}" --output-dir "$tmp/oracle" --threads 1
else
  oracle="the arm64 edgemm CLI (no onnxruntime-node in tools/reference)"
  check oracle 0 "$bin" run "$cls" "${inputs[@]}" --output-dir "$tmp/oracle" --threads 1
fi
check ort-style-vs-oracle 0 "$host_py" -c '
import glob, os, sys
import numpy as np
got = sorted(glob.glob(os.path.join(sys.argv[1], "*.npy")))
assert got, "ort_style_script.py saved no outputs"
for path in got:
    want = np.load(os.path.join(sys.argv[2], os.path.basename(path)))
    value = np.load(path)
    assert value.shape == want.shape and value.dtype == want.dtype, (path, value.shape, want.shape)
    err = float(np.abs(value.astype(np.float64) - want).max())
    assert err <= 1e-4, (path, err)
    print(os.path.basename(path), list(value.shape), f"max |diff| {err:.2g}")
' "$tmp/ort_style/outputs" "$tmp/oracle"
show
echo "  (oracle: $oracle)"

# The module, errors, OCR
check smoke 0 "$py" "$root/tests/aarch64/python_smoke.py" "$root" "$tmp/smoke" 2
show
demo_lines_read ocr-demo-lines "$tmp/smoke/ocr.txt" "$root"
expect_text ocr-good-morning "$tmp/smoke/ocr.txt" "^Good morning!$"

report_and_exit
