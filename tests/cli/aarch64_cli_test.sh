#!/usr/bin/env bash
# The edgemm command line on aarch64 under qemu-user (the CI's representative set, label aarch64_ci;
# docs/aarch64.md): one case per command family, each against an independent oracle, kept small
# because every emulated run is slow.
# - ocr: the demo photo at --precision fp16 (float32: tests/cli/package_test.sh, label aarch64_ci
#   too); the lines drawn on it (data/demo/photo_text.json; NFKC, spaces dropped) are read with at
#   most 2 character edits in all (each line aligned to its best place in the text read; x86 reads
#   1: the '·' of "Table 7 · 2 cups" as ':'), and an undecodable image is a clear error.
# - run: the transformer fixture equals PyTorch's outputs (tests/fixtures/transformer_block_*.npy).
# - convert: the fixture taken to opset 13 by the arm64 edgemm, run by it, equals PyTorch's.
# - quantize: the fixture with int4 weights (float A), run by the arm64 edgemm, equals ONNX Runtime
#   1.30 (host, node) on the same file.
# - vqa: the tiny VLM's greedy ids equal PyTorch's (the fixture's reference/manifest.json).
# Usage: aarch64_cli_test.sh EDGEMM_COMMAND REPO_ROOT   (EDGEMM_COMMAND runs the arm64 edgemm)
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
py=/usr/bin/python3
fixtures="$root/tests/fixtures"
block="$fixtures/transformer_block.onnx"
x="$fixtures/transformer_block_x.npy"

check version 0 "$bin" --version
expect_text version-text "$tmp/out" "edgemm "

# ocr
printf 'not a picture' >"$tmp/notes.jpg"
check not-an-image 2 "$bin" ocr "$tmp/notes.jpg"
expect_text not-an-image-message "$tmp/err" "cannot decode"
# At float32 the demo photo is read by tests/cli/package_test.sh (the packaged edgemm in a clean
# root); here at --precision fp16 (half-precision Conv and MatMul; the A76 has FP16 arithmetic).
check ocr-demo-fp16 0 "$bin" ocr "$root/data/demo/photo_text.jpg" --models "$root/models/ppocrv4" --threads 2 \
  --precision fp16
cp "$tmp/out" "$tmp/ocr16.txt"
demo_lines_read ocr-demo-fp16-lines "$tmp/ocr16.txt" "$root"

# run, convert: against PyTorch
same_as_pytorch() {  # same_as_pytorch NAME OUTPUT_DIR
  check "$1" 0 $py -c '
import numpy as np, sys
for name in ("y", "pooled"):
    want = np.load(f"{sys.argv[1]}/transformer_block_{name}.npy")
    got = np.load(f"{sys.argv[2]}/{name}.npy")
    err = float(np.abs(got - want).max())
    assert got.shape == want.shape and err <= 1e-4, (name, err)
' "$fixtures" "$2"
}
check run 0 "$bin" run "$block" --input x="$x" --output-dir "$tmp/run"
same_as_pytorch run-vs-pytorch "$tmp/run"
check convert 0 "$bin" convert "$block" -o "$tmp/block_13.onnx" --opset 13 --verify-shape x=2,8,32 --json
check convert-run 0 "$bin" run "$tmp/block_13.onnx" --input x="$x" --output-dir "$tmp/convert"
same_as_pytorch convert-vs-pytorch "$tmp/convert"

# quantize: against ONNX Runtime on the same file
check quantize 0 "$bin" quantize "$block" -o "$tmp/block_q4.onnx" --scheme int4-weight --accuracy-level 0
check quantize-run 0 "$bin" run "$tmp/block_q4.onnx" --input x="$x" --output-dir "$tmp/q4_edgemm"
if [ -d "$root/tools/reference/node_modules/onnxruntime-node" ]; then
  check quantize-ort 0 node "$root/tools/reference/ort_run.js" "$tmp/block_q4.onnx" --input x="$x" \
    --output-dir "$tmp/q4_ort"
  check quantize-vs-ort 0 $py -c '
import numpy as np, sys
for name in ("y", "pooled"):
    got, want = np.load(f"{sys.argv[1]}/{name}.npy"), np.load(f"{sys.argv[2]}/{name}.npy")
    err = float(np.abs(got - want).max())
    assert got.shape == want.shape and err <= 1e-4, (name, err)
' "$tmp/q4_edgemm" "$tmp/q4_ort"
fi

# vqa: against PyTorch's greedy ids
tiny="$fixtures/vlm_tiny"
manifest="$tiny/reference/manifest.json"
image="$tiny/reference/$($py -c "import json; print(json.load(open('$manifest'))['prompts'][0]['image'])")"
question=$($py -c "import json; m=json.load(open('$manifest'))['prompts'][0]['messages'][0]['content']; print([p['text'] for p in m if p['type']=='text'][0])")
want=$($py -c "import json; print(json.dumps(json.load(open('$manifest'))['prompts'][0]['generated_ids']))")
n=$($py -c "print(len($want))")
check vqa 0 "$bin" vqa --model "$tiny" "$image" "$question" --max-new-tokens "$n" --threads 1 --json
same_ids vqa-ids "$want"

report_and_exit
