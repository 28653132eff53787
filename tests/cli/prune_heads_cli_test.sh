#!/usr/bin/env bash
# edgemm prune --heads / --heads-keep-ratio (attention-head pruning, docs/clip.md): the tiny CLIP
# vision model without heads 0:1,2:0,2:3 and text model without head 1:2 match PyTorch with those
# heads masked (tests/fixtures/clip_tiny/reference/*_heads_pruned.npy) within 1e-5, as exported
# (dynamic shapes) and as a static export whose Reshapes hard-code [B, T, 4, 16] (made here by
# tools/fixtures/make_clip_fixture.py --static); ONNX Runtime runs every pruned file (standard ops
# only) and agrees within 1e-5; --heads-keep-ratio removes the lowest-scoring heads of the
# generator's PyTorch head scores; heads and tokens combine; bad input exits non-zero with a message.
# Usage: prune_heads_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
py=/usr/bin/python3
pkg="$root/tests/fixtures/clip_tiny"
ref="$pkg/reference"
vision="$pkg/onnx/vision_model.onnx"
text="$pkg/onnx/text_model.onnx"
ort="$root/tools/reference/ort_run.js"

check help 0 "$bin" prune --help
expect_text help-names-heads "$tmp/out" "heads-keep-ratio"
check nothing-to-prune 2 "$bin" prune "$vision" -o "$tmp/p.onnx"
expect_text nothing-to-prune-says "$tmp/err" "nothing to prune"
check heads-and-ratio 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 0:1 --heads-keep-ratio 0.5 \
  --calib "$ref/pixel_values.npy"
expect_text heads-and-ratio-says "$tmp/err" "excludes"
check ratio-without-calib 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads-keep-ratio 0.5
expect_text ratio-without-calib-says "$tmp/err" "requires --calib"
check calib-without-ratio 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 0:1 --calib "$ref/pixel_values.npy"
check rank-without-ratio 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 0:1 --heads-rank global
check ratio-zero 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads-keep-ratio 0 --calib "$ref/pixel_values.npy"
check token-keep-without-layer 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 0:1 --keep-ratio 0.5
check bad-head-list 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads "0-1"
expect_text bad-head-list-says "$tmp/err" "head list entry '0-1' should be LAYER:HEAD"
check head-out-of-range 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 1:4
expect_text head-out-of-range-says "$tmp/err" "has 4 heads; head 4 is outside 0..3"
check layer-out-of-range 2 "$bin" prune "$text" -o "$tmp/p.onnx" --heads 3:0
expect_text layer-out-of-range-says "$tmp/err" "3 attention layers (Softmax nodes); layer 3 is outside 0..2"
check all-heads-of-a-layer 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads 2:0,2:1,2:2,2:3
expect_text all-heads-says "$tmp/err" "layer 2 would lose all its 4 heads; keep at least one head per layer"
check not-a-transformer 4 "$bin" prune "$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx" -o "$tmp/p.onnx" \
  --heads 0:0
expect_text not-a-transformer-says "$tmp/err" "no MatMul of two computed operands (Q·Kᵀ) before the Softmax"
check missing-calib 6 "$bin" prune "$vision" -o "$tmp/p.onnx" --heads-keep-ratio 0.5 --calib "$tmp/none.npy"
check overwrite-input 2 "$bin" prune "$vision" -o "$vision" --heads 0:1
[ -f "$tmp/p.onnx" ] && echo "FAIL refused commands must not write the output" && failed=$((failed + 1))

compare() {  # compare NAME GOT.npy WANT.npy: within 1e-5
  check "$1" 0 "$py" - "$2" "$3" <<'PY'
import sys; sys.stdout = sys.stderr  # the numbers show when the check fails
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
print(f'{sys.argv[1]}: max abs difference {np.abs(got - want).max():.2e}')
sys.exit(0 if got.shape == want.shape and np.abs(got - want).max() < 1e-5 else 1)
PY
}

# prune_and_compare TAG MODEL INPUT_NAME INPUT.npy HEADS EMBEDS_NAME REF_DIR REF_PREFIX
prune_and_compare() {
  local tag="$1" model="$2" input="$3" x="$4" heads="$5" embeds="$6" refs="$7" prefix="$8"
  check "prune-$tag" 0 "$bin" prune "$model" -o "$tmp/$tag.onnx" --heads "$heads" --json
  expect_text "prune-$tag-json" "$tmp/out" '"heads_after"'
  check "run-$tag" 0 "$bin" run "$tmp/$tag.onnx" --input "$input=$x" -o "$tmp/out_$tag"
  compare "$tag-embeds-match-pytorch" "$tmp/out_$tag/$embeds.npy" "$refs/${embeds}_heads_pruned.npy"
  compare "$tag-hidden-match-pytorch" "$tmp/out_$tag/last_hidden_state.npy" \
    "$refs/${prefix}_last_hidden_state_heads_pruned.npy"
  check "ort-runs-$tag" 0 node "$ort" "$tmp/$tag.onnx" --input "$input=$x" --output-dir "$tmp/ort_$tag"
  compare "$tag-ort-matches-pytorch" "$tmp/ort_$tag/$embeds.npy" "$refs/${embeds}_heads_pruned.npy"
  compare "$tag-ort-matches-edgemm" "$tmp/ort_$tag/last_hidden_state.npy" "$tmp/out_$tag/last_hidden_state.npy"
}

heads_of() {  # the generator's --heads list for vision or text, from the manifest
  "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['head_pruning'][sys.argv[2]]['heads'])" "$1" "$2"
}
vheads="$(heads_of "$ref/manifest.json" vision)"
theads="$(heads_of "$ref/manifest.json" text)"
prune_and_compare vision "$vision" pixel_values "$ref/pixel_values.npy" "$vheads" image_embeds "$ref" vision
prune_and_compare text "$text" input_ids "$ref/input_ids.npy" "$theads" text_embeds "$ref" text

# A static export: its Reshapes hard-code [2, 65, 4, 16] and [2, 65, 64] (text: [3, 12, 4, 16], [3, 12, 64]).
check make-static 0 "$py" "$root/tools/fixtures/make_clip_fixture.py" --static --out "$tmp/static"
sref="$tmp/static/reference"
prune_and_compare static-vision "$tmp/static/onnx/vision_model.onnx" pixel_values "$sref/pixel_values.npy" \
  "$vheads" image_embeds "$sref" vision
prune_and_compare static-text "$tmp/static/onnx/text_model.onnx" input_ids "$sref/input_ids.npy" \
  "$theads" text_embeds "$sref" text

# Scored: keep 0.75 per layer removes each layer's lowest-scoring head of PyTorch's scores.
check scored 0 "$bin" prune "$vision" -o "$tmp/scored.onnx" --heads-keep-ratio 0.75 --calib "$ref/pixel_values.npy" \
  --json
cp "$tmp/out" "$tmp/scored.json"
check scored-removes-lowest 0 "$py" - "$tmp/scored.json" "$ref/vision_head_scores.npy" <<'PY'
import json, sys; sys.stdout = sys.stderr
import numpy as np
report, scores = json.load(open(sys.argv[1]))['heads'], np.load(sys.argv[2])
removed = {r['layer']: r['heads'] for r in report['removed']}
want = {l: [int(np.argmin(s))] for l, s in enumerate(scores)}
print('removed', removed, 'lowest by PyTorch scores', want)
print('max score difference', np.abs(np.array(report['scores']) - scores).max())
sys.exit(0 if removed == want and np.allclose(report['scores'], scores, rtol=1e-5) else 1)
PY
check scored-text-table 0 "$bin" prune "$vision" -o "$tmp/scored.onnx" --heads-keep-ratio 0.5 --heads-rank global \
  --calib "$ref/pixel_values.npy"
expect_text scored-text-says "$tmp/out" "heads: 16 → 8 over 4 attention layers (keep ratio 0.5, ranked globally"
check scored-images 0 "$bin" prune "$vision" -o "$tmp/scored.onnx" --heads-keep-ratio 0.75 \
  --calib "$root/data/photos/chelsea.png" "$root/data/photos/coffee.png"
expect_text scored-images-says "$tmp/out" "scored on 2 runs"
check scored-ort-runs 0 node "$ort" "$tmp/scored.onnx" --input pixel_values="$ref/pixel_values.npy"
check scored-text-model 0 "$bin" prune "$text" -o "$tmp/scored_text.onnx" --heads-keep-ratio 0.5 \
  --calib "$ref/input_ids.npy" "$ref/prompt_input_ids.npy"
expect_text scored-text-model-says "$tmp/out" "heads: 12 → 6 over 3 attention layers"
cp "$vision" "$tmp/loose_vision.onnx"  # outside a package: images cannot be preprocessed
check images-without-package 2 "$bin" prune "$tmp/loose_vision.onnx" -o "$tmp/p.onnx" --heads-keep-ratio 0.75 \
  --calib "$root/data/photos/chelsea.png"
expect_text images-without-package-says "$tmp/err" "calibration images need a CLIP package"
check images-with-package 0 "$bin" prune "$tmp/loose_vision.onnx" -o "$tmp/p.onnx" --heads-keep-ratio 0.75 \
  --calib "$root/data/photos/chelsea.png" --package "$pkg"

# Heads and tokens at once: heads go first, then tokens after layer 1 (edgemm only: TokenPrune).
check heads-and-tokens 0 "$bin" prune "$vision" -o "$tmp/both.onnx" --heads "$vheads" --tokens-after-layer 1 \
  --keep-ratio 0.5 --json
expect_text heads-and-tokens-json "$tmp/out" '"after_layer": 1'
check run-heads-and-tokens 0 "$bin" run "$tmp/both.onnx" --input pixel_values="$ref/pixel_values.npy" \
  -o "$tmp/out_both"
check heads-and-tokens-shape 0 "$py" -c \
  "import numpy as np,sys; sys.exit(0 if np.load('$tmp/out_both/last_hidden_state.npy').shape == (2, 33, 64) else 1)"
report_and_exit
