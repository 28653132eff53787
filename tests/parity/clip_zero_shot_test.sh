#!/usr/bin/env bash
# `edgemm retrieve --labels ... --json` against transformers.js 4.3.1 on the tiny CLIP package:
# the whole chain (decoding, preprocessing, tokenizer, both models, softmax of scaled cosines) on
# five real photos, a JPEG and a page of the OCR set, and (with PIL) small images that are upscaled (the black right/
# bottom taps), an RGBA one (alpha dropped), a gray one and a tall one; every prob and cosine
# within 2e-3 and the same best label (tools/reference/clip_zero_shot.js; measured 1.44e-3 at
# most, from the one-level resize differences).
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
  "$root/data/photos/brick.png" "$root/data/photos/grass.png" "$root/data/ocr_set/000_photo_chelsea.jpg"
  "$root/data/ocr_set/002_page_yellow.png")
if /usr/bin/python3 -c "import PIL, numpy" 2>/dev/null; then
  /usr/bin/python3 - "$tmp" "$root/data/photos/coffee.png" <<'PY'
import sys
import numpy as np
from PIL import Image
out, coffee = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
Image.fromarray((rng.random((30, 41, 3)) * 255).astype(np.uint8)).save(f"{out}/up_noise.png")
yy, xx = np.mgrid[0:50, 0:37]
smooth = np.stack([xx * 6, yy * 5, (xx + yy) * 3], -1).astype(np.uint8)
Image.fromarray(smooth).save(f"{out}/up_smooth.png")
alpha = (rng.random((50, 37, 1)) * 255).astype(np.uint8)
Image.fromarray(np.concatenate([smooth, alpha], -1), "RGBA").save(f"{out}/rgba.png")
Image.fromarray(smooth[:, :, 0]).save(f"{out}/gray.png")
Image.open(coffee).resize((200, 700)).save(f"{out}/tall.png")
PY
  images+=("$tmp/up_noise.png" "$tmp/up_smooth.png" "$tmp/rgba.png" "$tmp/gray.png" "$tmp/tall.png")
fi
"$bin" retrieve --model "$model" --labels "$labels" --json --threads 1 "${images[@]}" >"$tmp/edgemm.json"
node "$root/tools/reference/clip_zero_shot.js" "$model" --labels "$labels" "${images[@]}" \
  --compare "$tmp/edgemm.json" --max-diff 2e-3 >"$tmp/result.json" || { cat "$tmp/result.json"; exit 1; }
head -6 "$tmp/result.json"
