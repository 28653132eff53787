#!/usr/bin/env bash
# ONNX Runtime accepts what edgemm exports: PP-OCRv4 cls and rec go through import → export
# (inline, and with external data), then ONNX Runtime 1.30 runs the original and the exported
# file on the same seeded input (tools/reference/ort_compare.js) and their outputs must be equal
# (max abs diff 0), with graph optimizations off and on.
# Usage: export_parity_test.sh EXPORT_TOOL REPO_ROOT OUTDIR. Exits 77 (skipped) without the
# models or onnxruntime-node (scripts/setup.sh installs both).
set -euo pipefail
tool="$1"
root="$2"
out="$3"
models="$root/models/ppocrv4"
compare="$root/tools/reference/ort_compare.js"
if [ ! -d "$root/tools/reference/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/onnxruntime-node is missing (run scripts/setup.sh)"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out/inline" "$out/external"
failed=0
# model file | input shape
for case in "ch_ppocr_mobile_v2.0_cls_infer.onnx|1,3,48,192" "ch_PP-OCRv4_rec_infer.onnx|1,3,48,320"; do
  IFS='|' read -r model shape <<<"$case"
  if [ ! -f "$models/$model" ]; then
    echo "SKIP: $models/$model is missing (run scripts/setup.sh)"
    exit 77
  fi
  "$tool" "$models/$model" "$out/inline/$model"
  "$tool" "$models/$model" "$out/external/$model" 1024
  [ -f "$out/external/$model.data" ] || { echo "FAIL $model: no external data file written"; failed=1; }
  for exported in "$out/inline/$model" "$out/external/$model"; do
    for level in disabled all; do
      if result="$(node "$compare" "$models/$model" "$exported" --shape "x=$shape" --seed 5 --opt-level "$level")"; then
        echo "ok   $exported (ORT opt-level $level): $result"
      else
        echo "FAIL $exported (ORT opt-level $level): $result"
        failed=1
      fi
    done
  done
done
exit "$failed"
