#!/usr/bin/env bash
# Issue 9 item 6, INT4 weight-only decoder end to end: `edgemm quantize --scheme int4-weight` on the
# tiny VLM package's decoder (tests/fixtures/vlm_tiny), written as onnx/decoder_model_merged_q4.onnx
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
pkg="$tmp/vlm_tiny_q4"
cp -rL "$root/tests/fixtures/vlm_tiny" "$pkg"
manifest="$pkg/reference/manifest.json"

check quantize 0 "$bin" quantize "$pkg/onnx/decoder_model_merged.onnx" -o "$pkg/onnx/decoder_model_merged_q4.onnx" \
  --scheme int4-weight --json
# 3 layers x 7 projections + lm_head; the float file is larger than the int4 one.
n_q=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$tmp/out'))['int4']['quantized']))" 2>/dev/null)
[ "$n_q" = 22 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL quantize: $n_q MatMulNBits, expected 22"; }

if node "$root/tools/reference/vlm_generate.js" "$pkg" --dtype q4 >"$tmp/oracle.json" 2>"$tmp/oracle.err"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "FAIL oracle: transformers.js and ONNX Runtime disagree or failed"
  head -c 2000 "$tmp/oracle.json" "$tmp/oracle.err"
fi

ids() { /usr/bin/python3 -c "import json; print(json.dumps(json.load(open('$tmp/out'))['ids']))"; }
oracle() { /usr/bin/python3 -c "import json; print(json.dumps(json.load(open('$tmp/oracle.json'))['prompts'][$1]['onnxruntime']))"; }
same_ids() {  # same_ids NAME WANT_JSON
  if [ "$(ids 2>/dev/null)" = "$2" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: ids $(ids 2>/dev/null) != $2"
  fi
}

prompts=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$manifest'))['prompts']))")
for ((i = 0; i < prompts; i++)); do
  image="$pkg/reference/$(/usr/bin/python3 -c "import json; print(json.load(open('$manifest'))['prompts'][$i]['image'])")"
  question=$(/usr/bin/python3 -c "import json; m=json.load(open('$manifest'))['prompts'][$i]['messages'][0]['content']; print([p['text'] for p in m if p['type']=='text'][0])")
  want=$(oracle "$i" 2>/dev/null)
  n=$(/usr/bin/python3 -c "print(len($want))" 2>/dev/null || echo 32)
  check "q4-$i" 0 "$bin" vqa --model "$pkg" "$image" "$question" --decoder decoder_model_merged_q4.onnx \
    --max-new-tokens "$n" --threads 1 --json
  same_ids "q4-$i-ids" "$want"
  expect_text "q4-$i-bound" "$tmp/out" '"kv_cache": "bound (capacity 256)"'
  expect_text "q4-$i-bytes" "$tmp/out" '"kv_bytes_copied_last_step": 768'
  check "q4-$i-unbound" 0 "$bin" vqa --model "$pkg" "$image" "$question" --decoder decoder_model_merged_q4.onnx \
    --max-new-tokens "$n" --threads 1 --json --no-kv-binding
  same_ids "q4-$i-unbound-ids" "$want"
done
report_and_exit
