#!/usr/bin/env bash
# `edgemm vqa` on the tiny VLM packages (tests/fixtures/vlm_tiny: one decoder graph accepting a
# zero-length past; vlm_tiny_if: Optimum's use_cache_branch + If): greedy ids equal PyTorch's (the
# generator's reference/manifest.json) for every prompt, with the KV cache bound and as published,
# through the chat template and as a raw prompt; the KV bytes per step; sampling by seed; and
# every bad input (clear error, documented exit code, never a signal).
# Exit codes: 2 invalid argument, 3 invalid model, 6 I/O (docs/cli.md).
# Usage: vqa_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
tiny="$root/tests/fixtures/vlm_tiny"
manifest="$tiny/reference/manifest.json"

# Field `key` of prompt `i` of the manifest, as JSON.
field() { /usr/bin/python3 -c "import json,sys; print(json.dumps(json.load(open('$manifest'))['prompts'][$1]['$2']))"; }

check help 0 "$bin" vqa --help
expect_text help-temperature "$tmp/out" "--temperature"

prompts=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$manifest'))['prompts']))")
for form in vlm_tiny vlm_tiny_if; do
  for ((i = 0; i < prompts; i++)); do
    image="$root/tests/fixtures/$form/reference/$(field "$i" image | tr -d '"')"
    question=$(/usr/bin/python3 -c "import json; m=json.load(open('$manifest'))['prompts'][$i]['messages'][0]['content']; print([p['text'] for p in m if p['type']=='text'][0])")
    want=$(field "$i" generated_ids)
    n=$(/usr/bin/python3 -c "print(len($want))")
    check "$form-$i" 0 "$bin" vqa --model "$root/tests/fixtures/$form" "$image" "$question" --max-new-tokens "$n" \
      --threads 1 --json
    same_ids "$form-$i-ids" "$want"
    expect_text "$form-$i-bound" "$tmp/out" '"kv_cache": "bound (capacity 256)"'
    expect_text "$form-$i-bytes" "$tmp/out" '"kv_bytes_copied_last_step": 768'
    check "$form-$i-unbound" 0 "$bin" vqa --model "$root/tests/fixtures/$form" "$image" "$question" \
      --max-new-tokens "$n" --threads 1 --json --no-kv-binding
    same_ids "$form-$i-unbound-ids" "$want"
  done
done

# The raw prompt the chat template renders gives the same answer; --stream prints the text.
image="$tiny/reference/$(field 0 image | tr -d '"')"
raw=$(/usr/bin/python3 -c "import json; print(json.load(open('$manifest'))['prompts'][0]['text'], end='')")
check raw 0 "$bin" vqa --model "$tiny" "$image" "$raw" --raw-prompt --max-new-tokens 32 --json
same_ids raw-ids "$(field 0 generated_ids)"
check stream 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 4 --stream
[ -s "$tmp/out" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL stream: no text"; }

# Sampling: the same seed gives the same ids, another seed others; temperature 0 is greedy.
check seed-a 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 16 --temperature 0.9 \
  --top-p 0.95 --seed 5 --json
first=$(ids)
check seed-b 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 16 --temperature 0.9 \
  --top-p 0.95 --seed 5 --json
same_ids seed-same "$first"
check seed-c 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 16 --temperature 0.9 \
  --top-p 0.95 --seed 6 --json
[ "$(ids)" != "$first" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL seed-other: same ids"; }
check greedy 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 32 --temperature 0 --json
same_ids greedy-ids "$(field 0 generated_ids)"
# More new tokens than the context holds: generation stops at the limit and keeps the answer.
check context-full 0 "$bin" vqa --model "$tiny" "$image" "What is in this image?" --max-new-tokens 5000 --json
if /usr/bin/python3 - "$tmp/out" <<'PY'; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL context-full"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stop_reason"] == "context", d["stop_reason"]
capacity = int(d["kv_cache"].split("capacity ")[1].rstrip(")"))  # "bound (capacity N)"
assert d["timings"]["prompt_tokens"] + len(d["ids"]) - 1 == capacity, (d["kv_cache"], len(d["ids"]))
PY

# OCR+VQA: the recognized lines, in reading order with their positions, precede the question.
check ocr 0 "$bin" vqa --model "$tiny" "$root/tests/fixtures/ocr_vqa/boarding_line.png" "When does boarding start?" \
  --ocr --max-new-tokens 8 --threads 1 --json
if /usr/bin/python3 - "$tmp/out" <<'PY'; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL ocr-prompt"; fi
import json, re, sys
d = json.load(open(sys.argv[1]))
lines = re.findall(r"^\[(\d+), (\d+)\] (.*)$", d["prompt"], re.M)
texts = [t for _, _, t in lines]
assert texts == ["Gate", "T9", "Boarding", "11:00"], texts
assert [l["text"] for l in d["ocr_lines"]] == texts
assert d["prompt"].index("11:00") < d["prompt"].index("Question: When does boarding start?")
assert len(d["ids"]) == 8 and d["timings"]["ocr_ms"] > 0, d["timings"]
PY

# Bad input.
check no-model 6 "$bin" vqa --model "$tmp/none" "$image" "q"
cp -r "$tiny" "$tmp/no_embed" && rm "$tmp/no_embed/onnx/embed_tokens.onnx"
check missing-file 6 "$bin" vqa --model "$tmp/no_embed" "$image" "q"
expect_text missing-file-name "$tmp/err" "embed_tokens.onnx"
cp -r "$tiny" "$tmp/seq8" && echo '{"image_seq_len": 8, "processor_class": "Idefics3Processor"}' \
  >"$tmp/seq8/processor_config.json"
check token-count 3 "$bin" vqa --model "$tmp/seq8" "$image" "q"
expect_text token-count-numbers "$tmp/err" "image tokens"
long=$(for i in $(seq 300); do printf 'word%d ' "$i"; done)
check too-long 2 "$bin" vqa --model "$tiny" "$image" "$long"
expect_text too-long-says "$tmp/err" "context"
echo "not an image" >"$tmp/bad.png"
check bad-image 2 "$bin" vqa --model "$tiny" "$tmp/bad.png" "q"
check no-image 6 "$bin" vqa --model "$tiny" "$tmp/none.png" "q"
check two-images-tokens 2 "$bin" vqa --model "$tiny" "$image" "<image><image>q" --raw-prompt
expect_text two-images-says "$tmp/err" "images were given"
check bad-top-p 2 "$bin" vqa --model "$tiny" "$image" "q" --top-p 0
check json-error 3 "$bin" vqa --model "$tmp/seq8" "$image" "q" --json
expect_text json-error-code "$tmp/out" '"code"'

report_and_exit
