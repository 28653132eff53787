#!/usr/bin/env bash
# ai.onnx opsets 18-21 against ONNX Runtime 1.30: tests/parity/opset_next_models.py writes one small
# single-op model per case at the opset where the op changed (Reduce*-18 axes input, Split-18
# num_outputs, Pad-18/19/21, Resize-18/19, ScatterND / ScatterElements-18 max/min, LpPool-18,
# AveragePool-19, Cast / CastLike-19, Q/DQ-19/21 with block_size, GridSample-20, AffineGrid-20,
# DFT-20, Mish-18, Gelu-20, Bitwise*-18, GroupNormalization-18/21, Col2Im-18, CenterCropPad-18,
# DeformConv-19, the types-only bumps of opset 21, an If-21 with ReduceMean-18 inside) and a small
# exporter-style opset-21 graph, with seeded inputs and a manifest of tolerances.
# Oracle: ONNX Runtime 1.30 (tests/parity/opset_next_ort.js: all cases in one node process, CPU,
# 1 thread, graphOptimizationLevel disabled). tests/parity/opset_next_check.py runs `edgemm run`
# on 1 thread (and 2 for some cases) and checks per case: same output names, dtypes and shapes,
# integer / bool values equal, float values within the case's tolerance (1e-5 abs + 1e-5 rel
# unless the manifest says why not), NaN where ONNX Runtime has NaN; `edgemm inspect --json` on the
# exporter-style model (opsets ai.onnx=21, its ops, the static output shape = ONNX Runtime's); an
# opset-22 model refused with "Unsupported: ... up to 21" (exit 4). One line per case, then
# "N cases, M pass".
# Usage: opset_next_test.sh EDGEMM_BINARY REPO_ROOT WORK_DIR [CASE_SUBSTRING ...]. WORK_DIR (in the
# build tree) keeps the models, ONNX Runtime's and edgemm's outputs for a look after a failure.
# Exits 77 (skipped) without node or tools/reference/node_modules (scripts/setup.sh installs them).
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
work="$3"
shift 3
if [ ! -d "$root/tools/reference/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/onnxruntime-node is missing (run scripts/setup.sh)"
  exit 77
fi
here="$(dirname "${BASH_SOURCE[0]}")"
rm -rf "$work/models" "$work/ort" "$work/edgemm"
mkdir -p "$work"
/usr/bin/python3 "$here/opset_next_models.py" "$work/models" || { echo "FAIL: writing the models"; exit 1; }
node "$here/opset_next_ort.js" "$root" "$work/models/manifest.json" "$work/ort" ||
  { echo "FAIL: running ONNX Runtime"; exit 1; }
/usr/bin/python3 "$here/opset_next_check.py" "$bin" "$work/models/manifest.json" "$work/ort" "$work/edgemm" "$@"
