#!/usr/bin/env bash
# `edgemm retrieve --labels ... --json` against transformers.js 4.3.1 on the tiny CLIP package:
# the whole chain (decoding, preprocessing, tokenizer, both models, softmax of scaled cosines) on
# five real photos; every prob and cosine within 2e-3 and the same best label
# (tools/reference/clip_zero_shot.js; measured 7.4e-4, from the one-level resize differences).
# rocket.jpg is left out: it carries an Adobe RGB ICC profile, which sharp (transformers.js in
# node) converts to sRGB and edgemm, OpenCV and PIL (Python transformers) ignore (docs/clip.md).
# Usage: clip_zero_shot_test.sh EDGEMM_BINARY REPO_ROOT. Exits 77 (skipped) without node or
# transformers.js (scripts/setup.sh installs it).
set -euo pipefail
bin="$1"
root="$2"
if [ ! -d "$root/tools/reference/node_modules/@huggingface/transformers" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/@huggingface/transformers is missing (run scripts/setup.sh)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
model="$root/tests/fixtures/clip_tiny"
labels="a photo of a cat,A cup of coffee on a table.,rocket launch at night!!,a brick wall,an astronaut"
images=("$root/data/photos/chelsea.png" "$root/data/photos/coffee.png" "$root/data/photos/astronaut.png"
  "$root/data/photos/brick.png" "$root/data/photos/grass.png")
"$bin" retrieve --model "$model" --labels "$labels" --json --threads 1 "${images[@]}" >"$tmp/edgemm.json"
node "$root/tools/reference/clip_zero_shot.js" "$model" --labels "$labels" "${images[@]}" \
  --compare "$tmp/edgemm.json" --max-diff 2e-3 >"$tmp/result.json" || { cat "$tmp/result.json"; exit 1; }
head -6 "$tmp/result.json"
