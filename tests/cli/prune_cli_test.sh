#!/usr/bin/env bash
# edgemm prune (visual token pruning, docs/clip.md): the tiny CLIP vision model pruned after
# layer 1 at keep 0.5 with both rules matches the PyTorch reference of the same rule within 1e-4,
# both as exported (dynamic token count) and as a static export whose Reshapes hard-code 65
# tokens (made here by tools/fixtures/make_clip_fixture.py --static); bad input exits non-zero
# with a message.
# Usage: prune_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
py=/usr/bin/python3
pkg="$root/tests/fixtures/clip_tiny"
vision="$pkg/onnx/vision_model.onnx"

check help 0 "$bin" prune --help
expect_text help-names-rule "$tmp/out" "cls_attention"
check missing-layer 2 "$bin" prune "$vision" -o "$tmp/p.onnx"
check keep-zero 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --tokens-after-layer 1 --keep-ratio 0
expect_text keep-zero-says "$tmp/err" "keep ratio must be in (0, 1]"
check bad-rule 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --tokens-after-layer 1 --rule random
check layer-too-late 2 "$bin" prune "$vision" -o "$tmp/p.onnx" --tokens-after-layer 3
expect_text layer-too-late-says "$tmp/err" "4 attention layers (Softmax nodes); the layer to prune after must be in 0..2"
check not-a-transformer 4 "$bin" prune "$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx" -o "$tmp/p.onnx" \
  --tokens-after-layer 0
expect_text not-a-transformer-says "$tmp/err" "1 attention layers (Softmax nodes); pruning needs a transformer encoder"
check missing-model 6 "$bin" prune "$tmp/none.onnx" -o "$tmp/p.onnx" --tokens-after-layer 1
head -c 1000 "$vision" >"$tmp/truncated.onnx"
check truncated-model 3 "$bin" prune "$tmp/truncated.onnx" -o "$tmp/p.onnx" --tokens-after-layer 1
check overwrite-input 2 "$bin" prune "$vision" -o "$vision" --tokens-after-layer 1

compare() {  # compare NAME RUN_DIR REFERENCE.npy: image_embeds within 1e-4, 33 tokens kept
  check "$1-matches-pytorch" 0 "$py" - "$2" "$3" <<'PY'
import sys; sys.stdout = sys.stderr  # the numbers show when the check fails
import numpy as np
got, want = np.load(sys.argv[1] + '/image_embeds.npy'), np.load(sys.argv[2])
tokens = np.load(sys.argv[1] + '/last_hidden_state.npy').shape[1]
print(f'max abs difference {np.abs(got - want).max():.2e}, {tokens} tokens after pruning')
sys.exit(0 if got.shape == want.shape and np.abs(got - want).max() < 1e-4 and tokens == 33 else 1)
PY
}

# The exported package (dynamic token count), both rules.
for rule in cls_attention mean_abs; do
  check "prune-$rule" 0 "$bin" prune "$vision" -o "$tmp/$rule.onnx" --tokens-after-layer 1 --keep-ratio 0.5 \
    --rule "$rule" --json
  expect_text "prune-$rule-json" "$tmp/out" '"layers": 4'
  check "run-$rule" 0 "$bin" run "$tmp/$rule.onnx" --input pixel_values="$pkg/reference/pixel_values.npy" \
    -o "$tmp/out_$rule"
  compare "$rule" "$tmp/out_$rule" "$pkg/reference/image_embeds_prune_${rule}_k1_keep0.5.npy"
done

# A static export: its Reshapes hard-code [2, 65, 4, 16] and [2, 65, 64].
check make-static 0 "$py" "$root/tools/fixtures/make_clip_fixture.py" --static --out "$tmp/static"
check prune-static 0 "$bin" prune "$tmp/static/onnx/vision_model.onnx" -o "$tmp/static.onnx" \
  --tokens-after-layer 1 --keep-ratio 0.5
expect_text prune-static-rewrites "$tmp/out" "tokens 65 → 33; 8 Reshape shapes"
check run-static 0 "$bin" run "$tmp/static.onnx" --input pixel_values="$tmp/static/reference/pixel_values.npy" \
  -o "$tmp/out_static"
compare static "$tmp/out_static" "$tmp/static/reference/image_embeds_prune_cls_attention_k1_keep0.5.npy"
report_and_exit
