#!/usr/bin/env bash
# `edgemm serve` (docs/serve.md) with real clients: curl for every endpoint and error, and the
# official `openai` npm client (tests/cli/serve_openai_client.js) for chat, streaming, embeddings
# and errors. Oracles are the other commands on the same files: OCR equals `edgemm ocr --json`,
# greedy chat ids equal `edgemm vqa --json` (and `edgemm vqa --ocr` for OCR+VQA), image
# embeddings equal `edgemm retrieve`'s index and text-image cosines its query scores. Also: the
# API key, admission (429 with Retry-After), draining on SIGTERM, body limits, bad requests.
# Usage: serve_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
tmp="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# shellcheck source=serve_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serve_lib.sh"
py=/usr/bin/python3
ocr_models="$root/models/ppocrv4"
clip="$root/tests/fixtures/clip_tiny"
vlm="$root/tests/fixtures/vlm_tiny"
photo="$root/data/demo/photo_text.jpg"
cat_png="$vlm/reference/images/p0_chelsea.png"
rocket="$vlm/reference/images/p2_rocket.png"
key=test-key-123

ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  [ -f "$tmp/body" ] && head -c 400 "$tmp/body" | sed 's/^/  | /' && echo
}

# http NAME WANT_STATUS CURL_ARGS...: the body goes to $tmp/body, the headers to $tmp/headers.
http() {
  local name="$1" want="$2"
  shift 2
  local got
  got=$(curl -s -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' "$@")
  if [ "$got" = "$want" ]; then ok; else fail "$name: HTTP $got, expected $want"; fi
}
# pycheck NAME SCRIPT ARGS...: runs a Python check (exit 0 = pass) on $tmp/body.
pycheck() {
  local name="$1" script="$2"
  shift 2
  if $py -c "$script" "$tmp/body" "$@" 2>"$tmp/pyerr"; then ok; else
    fail "$name"
    sed 's/^/  | /' "$tmp/pyerr" | tail -4
  fi
}
json_error_is() {  # json_error_is NAME TEXT: the body is OpenAI's error object and its message has TEXT
  pycheck "$1" "
import json, sys
e = json.load(open(sys.argv[1]))['error']
assert set(e) == {'message', 'type', 'param', 'code'}, e
assert sys.argv[2] in e['message'], e['message']" "$2"
}
# A chat request body: chat_body FILE IMAGE QUESTION [EXTRA_JSON_FIELDS]
chat_body() {
  $py - "$@" <<'PY'
import base64, json, sys
out, image, question = sys.argv[1:4]
extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
url = "data:image/png;base64," + base64.b64encode(open(image, "rb").read()).decode()
body = {"model": "vlm", "temperature": 0, "max_tokens": 12,
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                   {"type": "text", "text": question}]}]}
body.update(extra)
json.dump(body, open(out, "w"))
PY
}
J=(-H "Content-Type: application/json")
A=(-H "Authorization: Bearer $key")

# --- the command line ------------------------------------------------------------------------
check help 0 "$bin" serve --help
expect_text help-exit-codes "$tmp/out" "Exit codes"
check no-model 2 "$bin" serve --port 0
expect_text no-model-message "$tmp/err" "no model to serve"
check bad-port 2 "$bin" serve --ocr "$ocr_models" --port 70000
check missing-folder 6 "$bin" serve --vlm "$tmp/nope" --port 0
expect_text missing-folder-message "$tmp/err" "loading vlm from"
check empty-api-key 2 "$bin" serve --ocr "$ocr_models" --port 0 --api-key ""
expect_text empty-api-key-message "$tmp/err" "--api-key is empty"

# --- one server with every model and an API key ----------------------------------------------
start_server main --ocr "$ocr_models" --clip "$clip" --vlm "$vlm" --api-key "$key" -t 1 --max-body-mb 4 || report_and_exit
base="http://127.0.0.1:$port"
check port-in-use 6 "$bin" serve --ocr "$ocr_models" --port "$port"

http health 200 "$base/health"
http models-no-key 401 "$base/v1/models"
json_error_is models-no-key-message "API key"
http models-wrong-key 401 -H "Authorization: Bearer nope" "$base/v1/models"
http models-lowercase-bearer 200 -H "Authorization: bearer $key" "$base/v1/models"  # the scheme is case-insensitive
http models 200 "${A[@]}" "$base/v1/models"
pycheck models-listed "
import json, sys
d = json.load(open(sys.argv[1]))
assert [m['id'] for m in d['data']] == ['ocr', 'clip', 'vlm'], d"
http unknown-path 404 "${A[@]}" "$base/v2/nothing"
json_error_is unknown-path-message "no endpoint GET /v2/nothing"

# OCR: raw bytes and a data: URL give what `edgemm ocr --json` gives.
"$bin" ocr "$photo" --json -t 1 --models "$ocr_models" >"$tmp/ocr_cli.json"
same_ocr='
import json, sys
got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))["images"][0]
assert (got["width"], got["height"]) == (want["width"], want["height"])
assert [l["text"] for l in got["lines"]] == [l["text"] for l in want["lines"]], [l["text"] for l in got["lines"]]
assert [l["polygon"] for l in got["lines"]] == [l["polygon"] for l in want["lines"]]
assert all(abs(a["score"] - b["score"]) < 1e-6 for a, b in zip(got["lines"], want["lines"]))'
http ocr-bytes 200 "${A[@]}" -H "Content-Type: image/jpeg" --data-binary @"$photo" "$base/v1/ocr"
pycheck ocr-bytes-equals-cli "$same_ocr" "$tmp/ocr_cli.json"
$py -c "import base64,json,sys; json.dump({'image': 'data:image/jpeg;base64,' + base64.b64encode(open(sys.argv[1],'rb').read()).decode()}, open(sys.argv[2],'w'))" \
  "$photo" "$tmp/ocr.json"
http ocr-data-url 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/ocr.json" "$base/v1/ocr"
pycheck ocr-data-url-equals-cli "$same_ocr" "$tmp/ocr_cli.json"
http ocr-no-length 400 "${A[@]}" -H "Content-Type: image/png" -X POST "$base/v1/ocr"
json_error_is ocr-no-length-message "Content-Length"
http ocr-empty 400 "${A[@]}" -H "Content-Type: image/png" -d "" "$base/v1/ocr"
json_error_is ocr-empty-message "no body"
head -c 3000 /dev/urandom >"$tmp/noise.bin"
http ocr-noise 400 "${A[@]}" -H "Content-Type: image/png" --data-binary @"$tmp/noise.bin" "$base/v1/ocr"
json_error_is ocr-noise-message "cannot decode"
head -c 20000 "$photo" >"$tmp/truncated.jpg"
http ocr-truncated 400 "${A[@]}" -H "Content-Type: image/jpeg" --data-binary @"$tmp/truncated.jpg" "$base/v1/ocr"
json_error_is ocr-truncated-message "truncated"
http ocr-json-model 404 "${A[@]}" "${J[@]}" -d '{"model": "bogus", "image": "data:image/png;base64,AAAA"}' "$base/v1/ocr"
http ocr-json-no-image 400 "${A[@]}" "${J[@]}" -d '{"picture": 1}' "$base/v1/ocr"
http ocr-http-url 400 "${A[@]}" "${J[@]}" -d '{"image": "https://example.com/a.png"}' "$base/v1/ocr"
json_error_is ocr-http-url-message "no outbound requests"
http ocr-bad-base64 400 "${A[@]}" "${J[@]}" -d '{"image": "data:image/png;base64,@@@@"}' "$base/v1/ocr"
json_error_is ocr-bad-base64-message "bad base64"
head -c $((5 * 1024 * 1024)) /dev/zero >"$tmp/big.bin"
http body-too-large 413 "${A[@]}" -H "Content-Type: image/png" --data-binary @"$tmp/big.bin" "$base/v1/ocr"
json_error_is body-too-large-message "larger than"
http form-encoded 200 "${A[@]}" --data-binary @"$tmp/ocr.json" "$base/v1/ocr"  # curl's default Content-Type
pycheck form-encoded-equals-cli "$same_ocr" "$tmp/ocr_cli.json"

# Embeddings: the image row equals `edgemm retrieve`'s index, text·image its query score.
"$bin" retrieve --model "$clip" --index "$tmp/cat.idx" "$cat_png" -t 1 >/dev/null
"$bin" retrieve --model "$clip" --index "$tmp/cat.idx" --query "a photo of a cat" --json -t 1 >"$tmp/query.json"
$py -c "
import base64, json, sys
url = 'data:image/png;base64,' + base64.b64encode(open(sys.argv[1], 'rb').read()).decode()
json.dump({'model': 'clip', 'input': ['a photo of a cat', {'type': 'image_url', 'image_url': {'url': url}}]},
          open(sys.argv[2], 'w'))" "$cat_png" "$tmp/emb.json"
http embeddings 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/emb.json" "$base/v1/embeddings"
pycheck embeddings-equal-retrieve "
import json, struct, sys
d = json.load(open(sys.argv[1]))
text, image = d['data'][0]['embedding'], d['data'][1]['embedding']
assert [r['index'] for r in d['data']] == [0, 1]
raw = open(sys.argv[2], 'rb').read()
assert raw[:8] == b'EDGEMMIX'
header_len = struct.unpack_from('<I', raw, 12)[0]
header = json.loads(raw[16:16 + header_len])
at = 16 + header_len
for _ in range(header['count']):
    at += 4 + struct.unpack_from('<I', raw, at)[0]
want = struct.unpack_from('<%df' % header['dim'], raw, at)
assert len(image) == header['dim'] and max(abs(a - b) for a, b in zip(image, want)) < 1e-5
score = json.load(open(sys.argv[3]))['results'][0]['score']
cos = sum(a * b for a, b in zip(text, image))
assert abs(cos - score) < 1e-5, (cos, score)" "$tmp/cat.idx" "$tmp/query.json"
cp "$tmp/body" "$tmp/emb_float.json"
http embeddings-base64 200 "${A[@]}" "${J[@]}" -d '{"input": "a photo of a cat", "encoding_format": "base64"}' \
  "$base/v1/embeddings"
pycheck embeddings-base64-decodes "
import base64, json, struct, sys
got = base64.b64decode(json.load(open(sys.argv[1]))['data'][0]['embedding'])
want = json.load(open(sys.argv[2]))['data'][0]['embedding']
assert list(struct.unpack('<%df' % len(want), got)) == [float(struct.unpack('<f', struct.pack('<f', w))[0]) for w in want]" \
  "$tmp/emb_float.json"
# A 1x70000 strip: CLIP's shortest-edge resize would make it 64 x 4.48M pixels before the crop.
$py - "$tmp/strip.json" <<'PY'
import base64, json, struct, sys, zlib
width, height = 1, 70000
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
raw = b"".join(b"\x00\x80" for _ in range(height))  # filter byte + one gray pixel per row
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
url = "data:image/png;base64," + base64.b64encode(png).decode()
json.dump({"input": [{"type": "image_url", "image_url": {"url": url}}]}, open(sys.argv[1], "w"))
PY
http embeddings-strip 400 "${A[@]}" "${J[@]}" --data-binary @"$tmp/strip.json" "$base/v1/embeddings"
json_error_is embeddings-strip-message "aspect ratio is too extreme"
http embeddings-empty 400 "${A[@]}" "${J[@]}" -d '{"input": []}' "$base/v1/embeddings"
http embeddings-token-ids 400 "${A[@]}" "${J[@]}" -d '{"input": [[1, 2, 3]]}' "$base/v1/embeddings"
http embeddings-format 400 "${A[@]}" "${J[@]}" -d '{"input": "x", "encoding_format": "int8"}' "$base/v1/embeddings"
http embeddings-wrong-model 404 "${A[@]}" "${J[@]}" -d '{"input": "x", "model": "vlm"}' "$base/v1/embeddings"

# Chat: greedy ids equal `edgemm vqa`'s, streamed or not.
"$bin" vqa --model "$vlm" "$cat_png" "What is in this image?" --max-new-tokens 12 --json -t 1 >"$tmp/vqa.json"
chat_body "$tmp/chat.json" "$cat_png" "What is in this image?"
http chat 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/chat.json" "$base/v1/chat/completions"
pycheck chat-equals-vqa "
import json, sys
d = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
assert d['object'] == 'chat.completion' and d['model'] == 'vlm'
assert d['edgemm']['ids'] == want['ids'], (d['edgemm']['ids'], want['ids'])
c = d['choices'][0]
assert c['message'] == {'role': 'assistant', 'content': want['answer']}, c
assert c['finish_reason'] == ('stop' if want['stop_reason'] == 'stop_token' else 'length')
u = d['usage']
assert u['completion_tokens'] == len(want['ids']) and u['total_tokens'] == u['prompt_tokens'] + u['completion_tokens']" \
  "$tmp/vqa.json"
cp "$tmp/body" "$tmp/chat_answer.json"
chat_body "$tmp/chat_stream.json" "$cat_png" "What is in this image?" '{"stream": true, "stream_options": {"include_usage": true}}'
http chat-stream 200 -N "${A[@]}" "${J[@]}" --data-binary @"$tmp/chat_stream.json" "$base/v1/chat/completions"
pycheck chat-stream-events "
import json, sys
lines = open(sys.argv[1]).read().split('\n\n')
assert lines[-1] == '' and lines[-2] == 'data: [DONE]', lines[-3:]
events = [json.loads(l[len('data: '):]) for l in lines[:-2]]
assert all(e['object'] == 'chat.completion.chunk' for e in events)
text = ''.join(e['choices'][0]['delta'].get('content', '') for e in events if e['choices'])
whole = json.load(open(sys.argv[2]))
assert text == whole['choices'][0]['message']['content'], (text, whole)
finals = [e for e in events if e['choices'] and e['choices'][0]['finish_reason']]
assert len(finals) == 1 and finals[0]['edgemm']['ids'] == whole['edgemm']['ids']
assert events[-1]['choices'] == [] and events[-1]['usage']['completion_tokens'] == len(whole['edgemm']['ids'])" \
  "$tmp/chat_answer.json"
grep -qi "^content-type: text/event-stream" "$tmp/headers" && ok || fail "chat-stream-content-type"

# Sampled (temperature 2, seed 0): characters whose bytes span two tokens come whole, streamed or
# not, as `edgemm vqa` decodes them (with U+0590 in this answer), and a stop string of such a
# character cuts there.
"$bin" vqa --model "$vlm" "$cat_png" "What is this?" --temperature 2 --top-k 0 --seed 0 --max-new-tokens 60 --json \
  -t 1 >"$tmp/vqa_sampled.json"
chat_body "$tmp/sampled.json" "$cat_png" "What is this?" '{"temperature": 2, "seed": 0, "max_tokens": 60}'
http chat-sampled 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/sampled.json" "$base/v1/chat/completions"
pycheck chat-sampled-equals-vqa "
import json, sys
d, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d['edgemm']['ids'] == want['ids'] and d['choices'][0]['message']['content'] == want['answer'], (d, want)
assert any(ord(c) > 0x7F and c != '\ufffd' for c in want['answer']), 'no multi-byte character to check'" \
  "$tmp/vqa_sampled.json"
chat_body "$tmp/sampled_stream.json" "$cat_png" "What is this?" '{"temperature": 2, "seed": 0, "max_tokens": 60, "stream": true}'
http chat-sampled-stream 200 -N "${A[@]}" "${J[@]}" --data-binary @"$tmp/sampled_stream.json" "$base/v1/chat/completions"
pycheck chat-sampled-stream-whole "
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]).read().split('\n\n') if l.startswith('data: {')]
text = ''.join(e['choices'][0]['delta'].get('content', '') for e in events if e['choices'])
assert text == json.load(open(sys.argv[2]))['answer'], text" "$tmp/vqa_sampled.json"
$py - "$tmp/vqa_sampled.json" "$tmp/sampled.json" "$tmp/sampled_stop.json" <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))["answer"]
c = next(c for c in answer if ord(c) > 0x7F and c != "\ufffd")
body = json.load(open(sys.argv[2]))
body["stop"] = c
json.dump(body, open(sys.argv[3], "w"))
open(sys.argv[3] + ".want", "w").write(json.dumps(answer[:answer.index(c)]))
PY
http chat-stop-multibyte 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/sampled_stop.json" "$base/v1/chat/completions"
pycheck chat-stop-multibyte-cuts "
import json, sys
c = json.load(open(sys.argv[1]))['choices'][0]
assert c['finish_reason'] == 'stop' and c['message']['content'] == json.load(open(sys.argv[2])), c" \
  "$tmp/sampled_stop.json.want"

# A stop string cuts the answer before it.
$py - "$tmp/chat_answer.json" "$tmp/chat.json" "$tmp/chat_stop.json" <<'PY'
import json, re, sys
answer = json.load(open(sys.argv[1]))["choices"][0]["message"]["content"]
m = re.search(r"[A-Za-z0-9]{2}", answer[1:])
body = json.load(open(sys.argv[2]))
body["stop"] = [m.group(0)]
json.dump(body, open(sys.argv[3], "w"))
open(sys.argv[3] + ".want", "w").write(json.dumps(answer[:answer.index(m.group(0))]))
PY
http chat-stop 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/chat_stop.json" "$base/v1/chat/completions"
pycheck chat-stop-cuts "
import json, sys
c = json.load(open(sys.argv[1]))['choices'][0]
assert c['finish_reason'] == 'stop' and c['message']['content'] == json.load(open(sys.argv[2])), c" "$tmp/chat_stop.json.want"

# A second turn re-uses the cache of the first, and answers as a fresh cache does.
$py - "$tmp/chat.json" "$tmp/chat_answer.json" "$tmp/turn2.json" <<'PY'
import json, sys
body = json.load(open(sys.argv[1]))
answer = json.load(open(sys.argv[2]))["choices"][0]["message"]["content"]
body["messages"] += [{"role": "assistant", "content": answer}, {"role": "user", "content": "And what colour is it?"}]
json.dump(body, open(sys.argv[3], "w"))
PY
turn2='
import json, sys
d = json.load(open(sys.argv[1]))
cached = d["usage"]["prompt_tokens_details"]["cached_tokens"]
assert (cached > 0) == (sys.argv[2] == "hit"), d["usage"]
if len(sys.argv) > 3:
    assert d["edgemm"]["ids"] == json.load(open(sys.argv[3]))["edgemm"]["ids"]'
http chat-turn2 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/turn2.json" "$base/v1/chat/completions"
pycheck chat-turn2-cached "$turn2" hit
cp "$tmp/body" "$tmp/turn2_answer.json"
chat_body "$tmp/other.json" "$rocket" "Describe it."
http chat-other 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/other.json" "$base/v1/chat/completions"
http chat-turn2-fresh 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/turn2.json" "$base/v1/chat/completions"
pycheck chat-turn2-same-answer "$turn2" miss "$tmp/turn2_answer.json"

# OCR+VQA: "ocr": true answers as `edgemm vqa --ocr`.
line="$root/tests/fixtures/ocr_vqa/boarding_line.png"  # few enough OCR lines for the tiny VLM's context
"$bin" vqa --model "$vlm" "$line" "What does the sign say?" --ocr --ocr-models "$ocr_models" --max-new-tokens 12 \
  --json -t 1 >"$tmp/vqa_ocr.json"
$py -c "
import base64, json, sys
url = 'data:image/png;base64,' + base64.b64encode(open(sys.argv[1], 'rb').read()).decode()
json.dump({'temperature': 0, 'max_tokens': 12, 'ocr': True, 'messages': [{'role': 'user', 'content': [
    {'type': 'image_url', 'image_url': {'url': url}}, {'type': 'text', 'text': 'What does the sign say?'}]}]},
    open(sys.argv[2], 'w'))" "$line" "$tmp/chat_ocr.json"
http chat-ocr 200 "${A[@]}" "${J[@]}" --data-binary @"$tmp/chat_ocr.json" "$base/v1/chat/completions"
pycheck chat-ocr-equals-vqa-ocr "
import json, sys
assert json.load(open(sys.argv[1]))['edgemm']['ids'] == json.load(open(sys.argv[2]))['ids']" "$tmp/vqa_ocr.json"

# Bad chat requests: 400 (404 for a model not served), never a crash.
bad_chat() {  # bad_chat NAME STATUS BODY TEXT
  http "$1" "$2" "${A[@]}" "${J[@]}" -d "$3" "$base/v1/chat/completions"
  json_error_is "$1-message" "$4"
}
bad_chat chat-malformed 400 '{"messages": [' "not valid JSON"
bad_chat chat-not-object 400 '[1, 2]' "must be a JSON object"
bad_chat chat-no-messages 400 '{"model": "vlm"}' "'messages' must be a non-empty list"
bad_chat chat-bad-role 400 '{"messages": [{"role": "tool", "content": "x"}]}' "role 'tool'"
bad_chat chat-last-assistant 400 '{"messages": [{"role": "assistant", "content": "x"}]}' "last message"
bad_chat chat-temperature-type 400 '{"temperature": "hot", "messages": [{"role": "user", "content": "x"}]}' \
  "'temperature' must be a number"
bad_chat chat-temperature-range 400 '{"temperature": 7, "messages": [{"role": "user", "content": "x"}]}' \
  "'temperature' must be in"
bad_chat chat-max-tokens 400 '{"max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}' "'max_tokens'"
bad_chat chat-max-tokens-fraction 400 '{"max_tokens": 2.7, "messages": [{"role": "user", "content": "x"}]}' \
  "'max_tokens' must be an integer"
bad_chat chat-number-overflow 400 '{"temperature": 1e999, "messages": [{"role": "user", "content": "x"}]}' "cannot be read"
bad_chat chat-no-role 400 '{"messages": [{"content": "x"}]}' "messages[0] has no role"
bad_chat chat-n 400 '{"n": 2, "messages": [{"role": "user", "content": "x"}]}' "'n': 1"
bad_chat chat-stop 400 '{"stop": [""], "messages": [{"role": "user", "content": "x"}]}' "'stop'"
bad_chat chat-model 404 '{"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}' "'gpt-4o' is not served"
bad_chat chat-part-type 400 '{"messages": [{"role": "user", "content": [{"type": "audio"}]}]}' "'audio' is not supported"
bad_chat chat-image-url 400 \
  '{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]}' \
  "no outbound requests"
bad_chat chat-image-noise 400 \
  '{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}' \
  "cannot decode"
bad_chat chat-ocr-no-image 400 '{"ocr": true, "messages": [{"role": "user", "content": "x"}]}' "needs an image"

http metrics 200 "${A[@]}" "$base/metrics"
pycheck metrics-text "
import sys
t = open(sys.argv[1]).read()
for want in ['edgemm_requests_total{endpoint=\"/v1/ocr\",status=\"200\"} 3',
             'edgemm_request_duration_seconds_bucket{endpoint=\"/v1/chat/completions\",le=\"+Inf\"}',
             'edgemm_queue_depth{model=\"vlm\"} 0', 'edgemm_generated_tokens_total', 'edgemm_ready 1',
             'process_resident_memory_bytes']:
    assert want in t, want"

# The official openai client (npm, pinned in tools/reference).
if [ -d "$root/tools/reference/node_modules/openai" ]; then
  if node "$root/tests/cli/serve_openai_client.js" "$root" "$base" "$key" "$cat_png" "$tmp/vqa.json" \
    "$tmp/emb_float.json" >"$tmp/node.out" 2>&1; then ok; else
    fail "openai-client"
    sed 's/^/  | /' "$tmp/node.out" | tail -8
  fi
else
  echo "note: tools/reference/node_modules/openai is missing (scripts/setup.sh): the openai client part is skipped"
fi
http still-healthy 200 "$base/health"
kill -TERM "$server"
wait "$server"
[ $? = 0 ] && ok || fail "main-server-exit-code"

# --- admission: one OCR run at a time, no queue: the rest get 429 with Retry-After -------------
# (OCR, as each of its runs takes long enough here that 8 requests sent at once always overlap.)
start_server busy --ocr "$ocr_models" --queue 0 -t 1 || report_and_exit
base="http://127.0.0.1:$port"
clients=()
for i in $(seq 8); do
  curl -s -o "$tmp/busy$i.body" -D "$tmp/busy$i.headers" -w '%{http_code}\n' -H "Content-Type: image/jpeg" \
    --data-binary @"$photo" "$base/v1/ocr" >"$tmp/busy$i.code" &
  clients+=($!)
done
wait "${clients[@]}"
codes=$(cat "$tmp"/busy*.code | sort | uniq -c | tr -s ' ' | tr '\n' ';')
if grep -qx 429 "$tmp"/busy*.code && grep -qx 200 "$tmp"/busy*.code && ! grep -qvx '200\|429' "$tmp"/busy*.code; then
  ok
else
  fail "busy: expected 200s and 429s only, got $codes"
fi
busy_headers=$(grep -l "^HTTP/1.1 429" "$tmp"/busy*.headers | head -1)
[ -n "$busy_headers" ] && grep -qi "^retry-after: 1" "$busy_headers" && ok || fail "busy-retry-after"
http busy-still-healthy 200 "$base/health"
kill -TERM "$server"
wait "$server"

# --- draining: SIGTERM lets the requests already running or queued finish -----------------------
start_server drain --ocr "$ocr_models" -t 1 || report_and_exit
base="http://127.0.0.1:$port"
clients=()
for i in 1 2 3; do
  curl -s -o "$tmp/drain$i.body" -w '%{http_code}\n' -H "Content-Type: image/jpeg" --data-binary @"$photo" \
    "$base/v1/ocr" >"$tmp/drain$i.code" &
  clients+=($!)
done
sleep 0.3
kill -TERM "$server"
wait "$server"
drain_exit=$?
wait "${clients[@]}"
[ "$drain_exit" = 0 ] && ok || fail "drain: exit $drain_exit"
[ "$(cat "$tmp"/drain*.code | tr '\n' ' ')" = "200 200 200 " ] && ok || fail "drain: codes $(cat "$tmp"/drain*.code | tr '\n' ' ')"
expect_text drain-message "$tmp/drain.err" "finishing the requests in flight"
curl -s -o /dev/null "$base/health"
[ $? = 7 ] && ok || fail "drain: the port still answers after the server stopped"

report_and_exit
