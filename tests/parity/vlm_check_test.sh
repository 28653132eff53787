#!/usr/bin/env bash
# transformers.js 4.3.1 loads the tiny VLM packages (tests/fixtures/vlm_tiny and vlm_tiny_if) like
# published ones: its greedy ids equal PyTorch's, its processor gives the committed pixel values and
# prompt ids, and ONNX Runtime agrees with the references (tools/reference/vlm_check.js).
# Usage: vlm_check_test.sh REPO_ROOT. Exits 77 (skipped) without node or transformers.js
# (scripts/setup.sh installs it).
set -euo pipefail
root="$1"
if [ ! -d "$root/tools/reference/node_modules/@huggingface/transformers" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/@huggingface/transformers is missing (run scripts/setup.sh)"
  exit 77
fi
exec node "$root/tools/reference/vlm_check.js" "$root/tests/fixtures/vlm_tiny" "$root/tests/fixtures/vlm_tiny_if"
