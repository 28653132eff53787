#!/usr/bin/env bash
# VLM preprocessing references for tests/unit/vlm_test.cc (VlmPreprocessOracle.*): transformers.js
# 4.3.1's Idefics3 processor (tools/reference/vlm_processor.js) with the tiny package's
# preprocessor_config.json (Lanczos-3 resize, splitting into frames) on the photos of data/photos.
set -euo pipefail
usage="usage: tools/reference/make_vlm_processor_refs.sh OUT_DIR"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "$usage"
  echo "Writes OUT_DIR/<photo>.npy and .json; exits 77 without node or @huggingface/transformers (scripts/setup.sh)."
  exit 0
fi
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
command -v node >/dev/null || { echo "make_vlm_processor_refs: node not found; skipping" >&2; exit 77; }
[ -d "$root/tools/reference/node_modules/@huggingface/transformers" ] ||
  { echo "make_vlm_processor_refs: @huggingface/transformers is missing (scripts/setup.sh); skipping" >&2; exit 77; }
node "$root/tools/reference/vlm_processor.js" "$root/tests/fixtures/vlm_tiny" "$1" "$root"/data/photos/*.png
echo "make_vlm_processor_refs: $(ls "$1"/*.npy | wc -l) images -> $1"
