#!/usr/bin/env bash
# `edgemm retrieve` on the tiny CLIP package (tests/fixtures/clip_tiny): index build, text query,
# zero-shot labels, --json, and every bad input (clear error, documented exit code, never a signal).
# Exit codes: 2 invalid argument, 3 invalid model, 6 I/O (docs/cli.md).
# Usage: retrieve_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
model="$root/tests/fixtures/clip_tiny"
photos="$root/data/photos"
cat="$photos/chelsea.png"
coffee="$photos/coffee.png"
labels="a photo of a cat,A cup of coffee on a table.,rocket launch at night!!"

check help 0 "$bin" retrieve --help
expect_text help-query "$tmp/out" "--query"

# Build an index, query it (text and JSON), --top-k larger than the index.
check build 0 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --threads 1 "$cat" "$coffee" \
  "$photos/rocket.jpg" "$photos/brick.png"
expect_text build-count "$tmp/out" "indexed 4 images"
check build-json 0 "$bin" retrieve --model "$model" --index "$tmp/json.idx" --json "$cat" "$coffee"
expect_text build-json-sha "$tmp/out" '"vision_model_sha256"'
expect_text build-json-count "$tmp/out" '"count": 2'
check query 0 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --query "a photo of a cat" --top-k 2
[ "$(wc -l <"$tmp/out")" = 2 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL query-lines"; }
check query-json 0 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --query "rocket" --top-k 10 --json
expect_text query-json-rank "$tmp/out" '"rank": 4'
expect_text query-json-path "$tmp/out" "rocket.jpg"

# Zero-shot: plain text (one line per label) and JSON with probabilities summing to 1.
check labels 0 "$bin" retrieve --model "$model" --labels "$labels" "$cat"
[ "$(wc -l <"$tmp/out")" = 3 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL labels-lines"; }
check labels-json 0 "$bin" retrieve --model "$model" --labels "$labels" --json "$cat" "$coffee"
expect_text labels-json-prob "$tmp/out" '"prob"'
expect_text labels-json-scale "$tmp/out" '"logit_scale": 14.2'
sum="$(grep '"prob"' "$tmp/out" | head -3 | awk -F': ' '{gsub(",", "", $2); s += $2} END {printf "%.4f", s}')"
[ "$sum" = "1.0000" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL labels-sum: $sum"; }

# Bad input.
check no-args 2 "$bin" retrieve
check no-model 2 "$bin" retrieve --index "$tmp/x.idx" "$cat"
expect_text no-model-message "$tmp/err" "--model"
check missing-model-dir 6 "$bin" retrieve --model "$tmp/nowhere" --index "$tmp/x.idx" "$cat"
expect_text missing-model-dir-message "$tmp/err" "does not exist"
mkdir -p "$tmp/novision/onnx"
cp "$model"/*.json "$tmp/novision/"
cp "$model/onnx/text_model.onnx" "$tmp/novision/onnx/"
check no-vision-model 6 "$bin" retrieve --model "$tmp/novision" --index "$tmp/x.idx" "$cat"
expect_text no-vision-model-message "$tmp/err" "no vision model"
check no-vision-model-labels 6 "$bin" retrieve --model "$tmp/novision" --labels "a,b" "$cat"
check no-vision-model-query 6 "$bin" retrieve --model "$tmp/novision" --index "$tmp/photos.idx" --query "a cat"
expect_text no-vision-model-query-message "$tmp/err" "vision model file is missing"
mkdir -p "$tmp/notext/onnx"
cp "$model"/*.json "$tmp/notext/"
cp "$model/onnx/vision_model.onnx" "$tmp/notext/onnx/"
check no-text-model-build 0 "$bin" retrieve --model "$tmp/notext" --index "$tmp/notext.idx" "$cat"
check no-text-model-query 6 "$bin" retrieve --model "$tmp/notext" --index "$tmp/notext.idx" --query "a cat"
expect_text no-text-model-message "$tmp/err" "no text model"
mkdir -p "$tmp/badpp"
cp -r "$model/onnx" "$model"/*.json "$tmp/badpp/"
echo '{"size": {"shortest_edge": 64}, "do_center_crop": true}' >"$tmp/badpp/preprocessor_config.json"
check bad-preprocessor-config 3 "$bin" retrieve --model "$tmp/badpp" --index "$tmp/x.idx" "$cat"
expect_text bad-preprocessor-config-message "$tmp/err" "preprocessor_config.json: field 'crop_size'"
check images-without-index 2 "$bin" retrieve --model "$model" "$cat"
check missing-index-for-query 2 "$bin" retrieve --model "$model" --query "a cat"
expect_text missing-index-message "$tmp/err" "--query needs --index"
check query-missing-index-file 6 "$bin" retrieve --model "$model" --index "$tmp/none.idx" --query "a cat"
check empty-query 2 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --query "  "
expect_text empty-query-message "$tmp/err" "empty"
check top-k-zero 2 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --query "a cat" --top-k 0
expect_text top-k-zero-message "$tmp/err" "--top-k"
check query-and-labels 2 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --query "a" --labels "b"
check empty-label 2 "$bin" retrieve --model "$model" --labels "a cat,,a dog" "$cat"
check labels-no-image 2 "$bin" retrieve --model "$model" --labels "a cat"
echo "not an index" >"$tmp/foreign.idx"
check foreign-index 2 "$bin" retrieve --model "$model" --index "$tmp/foreign.idx" --query "a cat"
expect_text foreign-index-message "$tmp/err" "not an edgemm embedding index"
# An index made by another model: its header names another model and vision model checksum.
cp "$tmp/photos.idx" "$tmp/other.idx"
python3 - "$tmp/other.idx" <<'PY'
import sys, json, struct
p = sys.argv[1]; b = open(p, 'rb').read()
n = struct.unpack('<I', b[12:16])[0]; h = json.loads(b[16:16 + n]); h['vision_model_sha256'] = '0' * 64; h['model_id'] = 'other/clip'
j = json.dumps(h).encode(); open(p, 'wb').write(b[:12] + struct.pack('<I', len(j)) + j + b[16 + n:])
PY
check other-model-index 2 "$bin" retrieve --model "$model" --index "$tmp/other.idx" --query "a cat"
expect_text other-model-index-message "$tmp/err" "another model"
expect_text other-model-index-name "$tmp/err" "other/clip"
# --precision bf16: its own index identity (an fp32 index is refused at bf16), other values refused.
check bf16-query-fp32-index 2 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --precision bf16 \
  --query "a cat"
expect_text bf16-query-fp32-index-message "$tmp/err" "+precision(bf16)"
check bf16-build 0 "$bin" retrieve --model "$model" --index "$tmp/bf16.idx" --precision bf16 "$cat" "$coffee"
check bf16-query 0 "$bin" retrieve --model "$model" --index "$tmp/bf16.idx" --precision bf16 --query "a cat"
check precision-int8 2 "$bin" retrieve --model "$model" --index "$tmp/photos.idx" --precision int8 --query "a cat"
expect_text precision-int8-message "$tmp/err" "--precision"

# Unreadable images: skipped and counted, the index of the rest written, exit code of the first error.
: >"$tmp/empty.png"
echo "not an image" >"$tmp/notes.jpg"
check skip-unreadable 2 "$bin" retrieve --model "$model" --index "$tmp/partial.idx" "$cat" "$tmp/empty.png" \
  "$tmp/notes.jpg" "$coffee"
expect_text skip-unreadable-count "$tmp/out" "indexed 2 images"
expect_text skip-unreadable-skipped "$tmp/out" "(2 skipped)"
expect_text skip-unreadable-message "$tmp/err" "zero-byte"
check skip-unreadable-usable 0 "$bin" retrieve --model "$model" --index "$tmp/partial.idx" --query "a cat" --top-k 5
[ "$(wc -l <"$tmp/out")" = 2 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL partial-lines"; }
check missing-image 6 "$bin" retrieve --model "$model" --index "$tmp/y.idx" "$tmp/missing.png"
expect_text missing-image-message "$tmp/err" "no index written"
[ ! -e "$tmp/y.idx" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL missing-image wrote an index"; }
check labels-unreadable 2 "$bin" retrieve --model "$model" --labels "$labels" --json "$cat" "$tmp/notes.jpg"
expect_text labels-unreadable-json "$tmp/out" '"error"'
check index-over-image 2 "$bin" retrieve --model "$model" --index "$cat" "$cat"
check bad-threads 2 "$bin" retrieve --model "$model" --index "$tmp/z.idx" --threads -1 "$cat"

# Visual token pruning (docs/clip.md): runs, changes the embeddings a little, and an index built
# with pruning is refused without it (the identity includes the pruning settings).
check pruned-labels 0 "$bin" retrieve --model "$model" --labels "$labels" --json --prune-tokens-after-layer 1 \
  --prune-keep-ratio 0.5 "$cat"
check pruned-build 0 "$bin" retrieve --model "$model" --index "$tmp/pruned.idx" --prune-tokens-after-layer 1 "$cat" "$coffee"
check pruned-query 0 "$bin" retrieve --model "$model" --index "$tmp/pruned.idx" --prune-tokens-after-layer 1 --query "a cat"
check pruned-index-unpruned-model 2 "$bin" retrieve --model "$model" --index "$tmp/pruned.idx" --query "a cat"
check prune-layer-too-late 2 "$bin" retrieve --model "$model" --labels "$labels" --prune-tokens-after-layer 3 "$cat"
expect_text prune-layer-too-late-says "$tmp/err" "4 attention layers"

# A combined package (one onnx/model.onnx with pixel_values, input_ids, attention_mask; made by
# tools/fixtures/make_clip_combined.py): the same scores as the separate models.
if /usr/bin/python3 -c "import onnx" 2>/dev/null; then
  /usr/bin/python3 "$root/tools/fixtures/make_clip_combined.py" "$model" "$tmp/combined"
  check combined-labels 0 "$bin" retrieve --model "$tmp/combined" --labels "$labels" --json "$cat" "$coffee"
  cp "$tmp/out" "$tmp/combined.json"
  check separate-labels 0 "$bin" retrieve --model "$model" --labels "$labels" --json "$cat" "$coffee"
  if /usr/bin/python3 - "$tmp/combined.json" "$tmp/out" <<'PY'; then
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
diff = max(abs(x[k] - y[k]) for ia, ib in zip(a["images"], b["images"])
           for x, y in zip(ia["scores"], ib["scores"]) for k in ("prob", "cosine"))
print("combined vs separate: max diff", diff)
sys.exit(0 if diff <= 1e-5 and len(a["images"]) == 2 else 1)
PY
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL combined-vs-separate"
  fi
  check combined-build 0 "$bin" retrieve --model "$tmp/combined" --index "$tmp/combined.idx" "$cat" "$coffee"
  check combined-query 0 "$bin" retrieve --model "$tmp/combined" --index "$tmp/combined.idx" --query "a cat"
  check combined-index-other-model 2 "$bin" retrieve --model "$model" --index "$tmp/combined.idx" --query "a cat"
else
  echo "python3-onnx missing: combined-package checks skipped"
fi

report_and_exit
