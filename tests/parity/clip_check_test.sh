#!/usr/bin/env bash
# transformers.js 4.3.1 loads the tiny CLIP package (tests/fixtures/clip_tiny) like a published
# one and agrees with the generator's PyTorch references within 1e-4 (image_embeds, text_embeds,
# last_hidden_state; ONNX Runtime optimizations off and on), and its processor still gives the
# committed pixel_values references (tools/reference/clip_check.js).
# Usage: clip_check_test.sh REPO_ROOT. Exits 77 (skipped) without node or transformers.js
# (scripts/setup.sh installs it).
set -euo pipefail
root="$1"
if [ ! -d "$root/tools/reference/node_modules/@huggingface/transformers" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/@huggingface/transformers is missing (run scripts/setup.sh)"
  exit 77
fi
exec node "$root/tools/reference/clip_check.js" "$root/tests/fixtures/clip_tiny"
