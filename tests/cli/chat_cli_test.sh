#!/usr/bin/env bash
# `edgemm chat` on the tiny VLM package (tests/fixtures/vlm_tiny): the second turn reuses the first
# turn's KV cache (cached_prompt_tokens = the first turn's prompt) and still answers exactly as one
# generation over the whole conversation does (`edgemm vqa --raw-prompt` on the prompt that
# `edgemm chat-template` renders), with the cache bound and as published; /image, /reset, and
# errors (exit codes as docs/cli.md).
# Usage: chat_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
tiny="$root/tests/fixtures/vlm_tiny"
cat_png="$tiny/reference/images/p0_chelsea.png"
rocket="$tiny/reference/images/p2_rocket.png"

check help 0 "$bin" chat --help
expect_text help-image "$tmp/out" "/image"

for binding in "" --no-kv-binding; do
  name="chat${binding:+-unbound}"
  printf 'What is in this image?\nAnd what colour is it?\n' >"$tmp/in"
  check "$name" 0 "$bin" chat --model "$tiny" --image "$cat_png" --max-new-tokens 12 --threads 1 --json $binding \
    <"$tmp/in"
  cp "$tmp/out" "$tmp/turns.jsonl"
  # The conversation as the chat renders it, then one generation over all of it.
  if ! /usr/bin/python3 - "$tmp/turns.jsonl" "$tmp/messages.json" <<'PY'; then
import json, sys
turns = [json.loads(l) for l in open(sys.argv[1])]
assert len(turns) == 2, turns
first, second = turns[0]["timings"], turns[1]["timings"]
assert first["cached_prompt_tokens"] == 0, first
assert second["cached_prompt_tokens"] >= first["prompt_tokens"], (first, second)  # turn 1 not prefilled again
messages = [
    {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is in this image?"}]},
    {"role": "assistant", "content": [{"type": "text", "text": turns[0]["answer"]}]},
    {"role": "user", "content": [{"type": "text", "text": "And what colour is it?"}]},
]
json.dump(messages, open(sys.argv[2], "w"))
PY
    failed=$((failed + 1))
    echo "FAIL $name-reuse"
    continue
  fi
  passed=$((passed + 1))
  check "$name-template" 0 "$bin" chat-template --model "$tiny" --messages "$tmp/messages.json" --add-generation-prompt
  cp "$tmp/out" "$tmp/prompt.txt"
  check "$name-oneshot" 0 "$bin" vqa --model "$tiny" "$cat_png" "$(cat "$tmp/prompt.txt")" --raw-prompt \
    --max-new-tokens 12 --threads 1 --json $binding
  want=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/out'))['ids'])")
  got=$(/usr/bin/python3 -c "import json; print([json.loads(l) for l in open('$tmp/turns.jsonl')][1]['ids'])")
  [ "$want" = "$got" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL $name-same: $got != $want"; }
done

# /image adds an image to the next turn (its features are computed then); /reset starts over.
printf 'Hello\n/image %s\nWhat is this?\n/reset\nHi\n' "$rocket" >"$tmp/in"
check image-reset 0 "$bin" chat --model "$tiny" --max-new-tokens 4 --threads 1 --json <"$tmp/in"
if /usr/bin/python3 - "$tmp/out" <<'PY'; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL image-reset"; fi
import json, sys
turns = [json.loads(l) for l in open(sys.argv[1])]
assert [t["turn"] for t in turns] == [1, 2, 1], turns
assert turns[0]["timings"]["vision_encoder_ms"] == 0 and turns[1]["timings"]["vision_encoder_ms"] > 0
assert turns[2]["timings"]["cached_prompt_tokens"] == 0
PY

# Errors: a failed turn is reported (a JSON error line) and dropped with its images, the next
# turn is answered, and the exit status is the first failure's: 6 for a missing image, 2 for the
# context limit.
printf '/image %s\nWhat?\nAnd now?\n' "$tmp/none.png" >"$tmp/in"
check missing-image 6 "$bin" chat --model "$tiny" --max-new-tokens 4 --json <"$tmp/in"
if /usr/bin/python3 - "$tmp/out" <<'PY'; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL missing-image-goes-on"; fi
import json, sys
turns = [json.loads(l) for l in open(sys.argv[1])]
assert turns[0]["turn"] == 1 and turns[0]["error"]["code"] == "Io", turns
assert turns[1]["turn"] == 1 and len(turns[1]["ids"]) == 4, turns
PY
long=$(for i in $(seq 300); do printf 'word%d ' "$i"; done)
echo "$long" >"$tmp/in"
check too-long 2 "$bin" chat --model "$tiny" --json <"$tmp/in"
check no-model 6 "$bin" chat --model "$tmp/none" </dev/null

report_and_exit
