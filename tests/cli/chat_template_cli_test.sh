#!/usr/bin/env bash
# edgemm chat-template: --help, a model folder (tokenizer_config.json with the Qwen2-VL template and
# special tokens) and a template file, both compared byte for byte with npm @huggingface/jinja
# (tools/reference/chat_template.js) when node_modules is installed; exit codes for bad input.
# Usage: chat_template_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
fixtures="$root/tests/fixtures/chat_templates"

/usr/bin/python3 - "$fixtures" "$tmp" <<'PY'
import json, sys
fixtures, tmp = sys.argv[1:]
templates = {t["name"]: t for t in json.load(open(f"{fixtures}/templates.json"))}
convs = {c["name"]: c for c in json.load(open(f"{fixtures}/conversations.json"))}
qwen, gemma = templates["qwen2_vl"], templates["gemma"]
import os
os.makedirs(f"{tmp}/model")
json.dump({"chat_template": qwen["template"], "eos_token": {"content": "<|im_end|>"}}, open(f"{tmp}/model/tokenizer_config.json", "w"))
open(f"{tmp}/gemma.jinja", "w").write(gemma["template"])
json.dump(convs["image_parts"]["messages"], open(f"{tmp}/image.json", "w"))
json.dump(convs["unicode"]["messages"], open(f"{tmp}/unicode.json", "w"))
json.dump(convs["system_multi_turn"]["messages"], open(f"{tmp}/system.json", "w"))
json.dump({"bos_token": "<bos>"}, open(f"{tmp}/vars.json", "w"))
cases = [{"name": "qwen", "template": qwen["template"], "messages": convs["image_parts"]["messages"],
          "add_generation_prompt": True, "special_tokens": {"eos_token": "<|im_end|>"}},
         {"name": "gemma", "template": gemma["template"], "messages": convs["unicode"]["messages"],
          "add_generation_prompt": False, "extra": {"bos_token": "<bos>"}}]
json.dump(cases, open(f"{tmp}/cases.json", "w"))
PY

check help 0 "$bin" chat-template --help
expect_text help-text "$tmp/out" "--add-generation-prompt"
check model 0 "$bin" chat-template --model "$tmp/model" --messages "$tmp/image.json" --add-generation-prompt
cp "$tmp/out" "$tmp/qwen.txt"
expect_text model-text "$tmp/qwen.txt" "<|vision_start|><|image_pad|><|vision_end|>What is in this image?"
check file 0 "$bin" chat-template --template "$tmp/gemma.jinja" --messages "$tmp/unicode.json" --vars "$tmp/vars.json"
cp "$tmp/out" "$tmp/gemma.txt"
check json 0 "$bin" chat-template --model "$tmp/model" --messages "$tmp/image.json" --json
cp "$tmp/out" "$tmp/qwen.json"
check json-valid 0 /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["text"].startswith("<|im_start|>system") and r["special_tokens"] == {"eos_token": "<|im_end|>"}, r' "$tmp/qwen.json"

if [ -d "$root/tools/reference/node_modules/@huggingface/jinja" ] && command -v node >/dev/null; then
  check oracle 0 node "$root/tools/reference/chat_template.js" "$tmp/cases.json"
  cp "$tmp/out" "$tmp/oracle.jsonl"
  check oracle-equal 0 /usr/bin/python3 -c '
import json, sys
refs = {r["name"]: r["output"] for r in map(json.loads, open(sys.argv[1]))}
for name in ("qwen", "gemma"):
    ours = open(f"{sys.argv[2]}/{name}.txt", encoding="utf-8", newline="").read()
    assert ours == refs[name], (name, ours, refs[name])' "$tmp/oracle.jsonl" "$tmp"
fi

# Bad input: 2 arguments / render errors, 6 missing files, 4 unsupported constructs.
check no-messages 2 "$bin" chat-template --model "$tmp/model"
check both-sources 2 "$bin" chat-template --model "$tmp/model" --template "$tmp/gemma.jinja" --messages "$tmp/image.json"
check raise-exception 2 "$bin" chat-template --template "$tmp/gemma.jinja" --messages "$tmp/system.json"
expect_text raise-message "$tmp/err" "System role not supported"
printf '{%% filter upper %%}x{%% endfilter %%}' >"$tmp/unsupported.jinja"
check unsupported 4 "$bin" chat-template --template "$tmp/unsupported.jinja" --messages "$tmp/image.json"
printf '{%% if x %%}never closed' >"$tmp/unclosed.jinja"
check unclosed 2 "$bin" chat-template --template "$tmp/unclosed.jinja" --messages "$tmp/image.json"
expect_text unclosed-message "$tmp/err" "line 1, column 1"
check missing-model 6 "$bin" chat-template --model "$tmp/nope" --messages "$tmp/image.json"
check missing-messages 6 "$bin" chat-template --model "$tmp/model" --messages "$tmp/nope.json"
report_and_exit
