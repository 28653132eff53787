#!/usr/bin/env bash
# Issue 9 item 6, INT4 weight-only decoder end to end: `edgemm quantize --scheme int4-weight
# --accuracy-level 0` (float32 A: with the default int8 A, greedy ids can leave ONNX Runtime's,
# docs/quantize.md "Int8 activations") on the tiny VLM packages' decoders (tests/fixtures/vlm_tiny, and vlm_tiny_if: Optimum's If form, MatMuls
# inside the branches), written as onnx/decoder_model_merged_q4.onnx
# (transformers.js' file name for dtype q4) in a copy of the package; `edgemm vqa --decoder
# decoder_model_merged_q4.onnx` must keep the KV binding and give, for every prompt of the
# manifest, exactly the greedy ids of two oracles on the same q4 file: transformers.js 4.3.1
# (dtype {decoder_model_merged: 'q4'}) and a plain ONNX Runtime loop (tools/reference/vlm_generate.js,
# which also requires the two to agree). Also with the KV cache as published (--no-kv-binding).
# Usage: vqa_int4_test.sh EDGEMM_BINARY REPO_ROOT. Exits 77 (skipped) without node or
# tools/reference/node_modules (scripts/setup.sh installs them).
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
if [ ! -d "$root/tools/reference/node_modules/@huggingface/transformers" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/@huggingface/transformers is missing (run scripts/setup.sh)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# vlm_tiny: one decoder graph, 22 MatMuls (3 layers x 7 projections + lm_head); vlm_tiny_if: the
# same MatMuls in both If branches (44), each weight packed once into the main graph.
for form in vlm_tiny:22 vlm_tiny_if:44; do
  name="${form%%:*}" want_q="${form##*:}"
  pkg="$tmp/${name}_q4"
  cp -rL "$root/tests/fixtures/$name" "$pkg"
  manifest="$pkg/reference/manifest.json"
  check "$name-quantize" 0 "$bin" quantize "$pkg/onnx/decoder_model_merged.onnx" \
    -o "$pkg/onnx/decoder_model_merged_q4.onnx" --scheme int4-weight --accuracy-level 0 --json
  n_q=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$tmp/out'))['int4']['quantized']))" 2>/dev/null)
  if [ "$n_q" = "$want_q" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name-quantize: $n_q MatMulNBits, expected $want_q"
  fi
  if node "$root/tools/reference/vlm_generate.js" "$pkg" --dtype q4 >"$tmp/oracle.json" 2>"$tmp/oracle.err"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name-oracle: transformers.js and ONNX Runtime disagree or failed"
    head -c 2000 "$tmp/oracle.json" "$tmp/oracle.err"
  fi
  prompts=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$manifest'))['prompts']))")
  for ((i = 0; i < prompts; i++)); do
    image="$pkg/reference/$(/usr/bin/python3 -c "import json; print(json.load(open('$manifest'))['prompts'][$i]['image'])")"
    question=$(/usr/bin/python3 -c "import json; m=json.load(open('$manifest'))['prompts'][$i]['messages'][0]['content']; print([p['text'] for p in m if p['type']=='text'][0])")
    want=$(/usr/bin/python3 -c "import json; print(json.dumps(json.load(open('$tmp/oracle.json'))['prompts'][$i]['onnxruntime']))" 2>/dev/null)
    n=$(/usr/bin/python3 -c "print(len($want))" 2>/dev/null || echo 32)
    check "$name-$i" 0 "$bin" vqa --model "$pkg" "$image" "$question" --decoder decoder_model_merged_q4.onnx \
      --max-new-tokens "$n" --threads 1 --json
    same_ids "$name-$i-ids" "$want"
    expect_text "$name-$i-bound" "$tmp/out" '"kv_cache": "bound (capacity 256)"'
    expect_text "$name-$i-bytes" "$tmp/out" '"kv_bytes_copied_last_step": 768'
    check "$name-$i-unbound" 0 "$bin" vqa --model "$pkg" "$image" "$question" --decoder decoder_model_merged_q4.onnx \
      --max-new-tokens "$n" --threads 1 --json --no-kv-binding
    same_ids "$name-$i-unbound-ids" "$want"
  done
done
report_and_exit
