#!/usr/bin/env bash
# The Python package as a user installs it (docs/python.md): pip installs python/ offline into a
# venv with Debian's site packages (setuptools, wheel and numpy from Debian; --no-build-isolation
# --no-index: nothing downloaded), reusing the build folder's CMake build; the installed package,
# not the checkout's, runs an ONNX Runtime-style script; `pip wheel` makes a wheel that installs into
# a second venv and runs too; pip uninstalls it.
# Usage: python_install_test.sh BUILD_DIR ROOT
set -euo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$2" && pwd)"
work="$build/python-install-test"
rm -rf "$work"
mkdir -p "$work/run"
unset PYTHONPATH
fails=0
check() {  # check NAME COMMAND...: runs the command, prints ok/FAIL
  local name="$1"
  shift
  if "$@" >"$work/last.log" 2>&1; then
    echo "ok: $name"
  else
    echo "FAIL: $name"
    cat "$work/last.log"
    fails=$((fails + 1))
  fi
}
model="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
script="$root/python/tests/ort_style_script.py"

/usr/bin/python3 -m venv --system-site-packages "$work/venv"
export EDGEMM_BUILD_DIR="$build"
check "pip install --no-build-isolation --no-index ./python" \
  "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$root/python"
# Imported from the venv's site-packages, from a folder outside the checkout.
check "the venv imports its installed edgemm" bash -c "cd '$work/run' && '$work/venv/bin/python' -c '
import edgemm, sys
assert edgemm.__file__.startswith(sys.prefix), edgemm.__file__
print(edgemm.__version__, edgemm.__file__)'"
check "the installed package runs the ONNX Runtime-style script" bash -c \
  "cd '$work/run' && '$work/venv/bin/python' '$script' '$model' | tee /dev/stderr | grep -q 'output softmax_0.tmp_0 float32 \[1, 2\]'"

check "pip wheel makes a wheel" "$work/venv/bin/pip" wheel -q --no-build-isolation --no-index --no-deps \
  "$root/python" -w "$work/dist"
wheel="$(ls "$work"/dist/edgemm-*.whl 2>/dev/null | head -1)"
check "the wheel holds the module and the package" bash -c \
  "unzip -l '$wheel' | grep -q 'edgemm/_edgemm.cpython' && unzip -l '$wheel' | grep -q 'edgemm/session.py'"
/usr/bin/python3 -m venv --system-site-packages "$work/venv2"
check "the wheel installs offline into another venv" "$work/venv2/bin/pip" install -q --no-index "$wheel"
check "the wheel's package runs the script" bash -c \
  "cd '$work/run' && '$work/venv2/bin/python' '$script' '$model' | grep -q 'output softmax_0.tmp_0 float32 \[1, 2\]'"
check "pip uninstall" "$work/venv/bin/pip" uninstall -q -y edgemm
check "after uninstall the venv has no edgemm" bash -c \
  "cd '$work/run' && ! '$work/venv/bin/python' -c 'import edgemm' 2>/dev/null"

if [ "$fails" -ne 0 ]; then
  echo "python_install: $fails check(s) failed"
  exit 1
fi
rm -rf "$work"
echo "python_install: all checks passed"
