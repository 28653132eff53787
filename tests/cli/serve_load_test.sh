#!/usr/bin/env bash
# `edgemm serve` under a bounded load (docs/serve.md "Tests"): one server with OCR, CLIP and the
# tiny VLM (--parallel 2 --queue 32), the expected answers first collected one request at a time,
# then a few hundred requests mixing /v1/ocr, /v1/embeddings and /v1/chat/completions (plain and
# streamed) from 16 concurrent keep-alive clients (tests/cli/serve_load_client.js). Checks: every
# request answered (none lost), every 200 exactly the expected answer (OCR texts, polygons and
# scores; embedding vectors; chat ids and text), no status but 200 (a 429 would need Retry-After,
# and with 16 clients against --queue 32 there must be none), the server's RSS bounded during the
# load, /health still 200 and /metrics' edgemm_requests_total grown by exactly what was sent.
# Usage: serve_load_test.sh EDGEMM_BINARY REPO_ROOT [REQUESTS] [CONCURRENCY]
# (KEEP_TMP=1 keeps the temporary folder: the requests, the expected answers, each run's summary.)
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
requests="${3:-300}"
concurrency="${4:-16}"
tmp="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; [ -n "${KEEP_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# shellcheck source=serve_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serve_lib.sh"
py=/usr/bin/python3
here="$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
client="$here/serve_load_client.js"
vlm="$root/tests/fixtures/vlm_tiny"
rss_slack_mib=300  # peak RSS during the load may exceed the RSS after warm-up by this much

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)) && echo "FAIL $1"; }
# assert NAME PYTHON_EXPRESSION: the expression, over the load summary `s` ($summary), is true.
assert() {
  if $py -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$summary"; then
    ok
  else
    fail "$1: $2"
    $py -c "import json, sys; s = json.load(open(sys.argv[1])); s.pop('latencies_ms'); print('  |', json.dumps(s)[:1500])" "$summary"
  fi
}

started=$(date +%s.%N)

# Inputs: crops of four images of data/ocr_set around a few of their lines (small, so that one
# OCR takes ~0.3 s on one thread), two chats (the second image evicts the first's KV cache, so
# the load mixes cache hits and misses), a streamed chat, a text and an image embedding.
$py - "$root" "$tmp" <<'PY'
import base64, json, sys
from PIL import Image
root, tmp = sys.argv[1:3]
kinds = []
for name, box in [("013_page_grey.jpg", (90, 190, 670, 420)), ("010_photo_chelsea.jpg", (280, 20, 690, 280)),
                  ("016_photo_rocket.jpg", (120, 90, 600, 340)), ("008_page_mint.png", (20, 20, 400, 260))]:
    out = f"{tmp}/ocr_{name.split('.')[0]}.png"
    Image.open(f"{root}/data/ocr_set/{name}").crop(box).save(out)
    kinds.append({"name": "ocr " + name, "path": "/v1/ocr", "content_type": "image/png", "body": out, "check": "ocr"})
def url(image):
    return "data:image/png;base64," + base64.b64encode(open(image, "rb").read()).decode()
images = f"{root}/tests/fixtures/vlm_tiny/reference/images"
def chat(name, image, stream):
    body = {"model": "vlm", "temperature": 0, "max_tokens": 8, "stream": stream,
            "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url(image)}},
                                                      {"type": "text", "text": "What is in this image?"}]}]}
    json.dump(body, open(f"{tmp}/{name}.json", "w"))
    kinds.append({"name": name, "path": "/v1/chat/completions", "content_type": "application/json",
                  "body": f"{tmp}/{name}.json", "check": "chat_stream" if stream else "chat"})
chat("chat_cat", f"{images}/p0_chelsea.png", False)
chat("chat_cat_stream", f"{images}/p0_chelsea.png", True)
chat("chat_rocket", f"{images}/p2_rocket.png", False)
for name, body in [("embed_text", {"model": "clip", "input": ["a photo of a cat", "a diagram", "a rocket"]}),
                   ("embed_image", {"input": [{"type": "image_url", "image_url": {"url": url(f"{images}/p1_coffee.png")}},
                                              "a cup of coffee"]})]:
    json.dump(body, open(f"{tmp}/{name}.json", "w"))
    kinds.append({"name": name, "path": "/v1/embeddings", "content_type": "application/json",
                  "body": f"{tmp}/{name}.json", "check": "embeddings"})
json.dump(kinds, open(f"{tmp}/kinds.json", "w"), indent=1)
PY

start_server server --ocr "$root/models/ppocrv4" --clip "$root/tests/fixtures/clip_tiny" --vlm "$vlm" -t 1 \
  --parallel 2 --queue 32 || report_and_exit
base="http://127.0.0.1:$port"

# The expected answers, one request at a time (this also warms every model up).
if node "$client" expect --base "$base" --kinds "$tmp/kinds.json" --out "$tmp/expected.json" >"$tmp/expect.out" 2>&1; then
  ok
else
  fail "expected answers"
  sed 's/^/  | /' "$tmp/expect.out"
  report_and_exit
fi
$py -c "
import json, sys
e = json.load(open(sys.argv[1]))
assert all(len(v['lines']) >= 3 for k, v in e.items() if k.startswith('ocr ')), 'an OCR crop reads fewer than 3 lines'
assert all(len(v['ids']) == 8 or v['finish_reason'] == 'stop' for k, v in e.items() if k.startswith('chat'))
assert e['chat_cat']['ids'] == e['chat_cat_stream']['ids'], 'streamed and plain chats differ'
assert all(len(r['embedding']) > 0 for k, v in e.items() if k.startswith('embed') for r in v)" "$tmp/expected.json" \
  && ok || fail "expected answers are not sane"

# The load: a warm-up burst of 96 requests (concurrent, so that both OCR slots' buffers and the
# allocator's per-thread arenas are allocated: the one-at-a-time requests above use one slot and
# one thread; they leave the RSS at ~375 MiB, a first concurrent run takes it to 800-950 MiB, then
# it stays there), then two rounds; each request's answer is checked in all three. RSS: the peak
# of the rounds stays within $rss_slack_mib MiB of the RSS after the warm-up (its peak, as the RSS
# moves by ~100 MiB between samples), and the second round's peak within 64 MiB of the first's
# (no growth with the number of requests).
# run_load NAME REQUESTS SEED: one client run; its summary in $tmp/NAME.json.
run_load() {
  node "$client" load --base "$base" --kinds "$tmp/kinds.json" --expected "$tmp/expected.json" --requests "$2" \
    --concurrency "$concurrency" --time-limit "$time_limit" --request-timeout 60 --pid "$server" --metrics --seed "$3" \
    --out "$tmp/$1.json" >"$tmp/$1.out" 2>&1
  local status=$?
  echo "$1: $(cat "$tmp/$1.out")"
  if [ "$status" != 0 ] || [ ! -s "$tmp/$1.json" ]; then
    fail "$1: the load client failed (exit $status)"
    report_and_exit
  fi
  summary="$tmp/$1.json"
  kill -0 "$server" 2>/dev/null && ok || fail "$1: the server died"
  assert "$1-sent-all" "s['sent'] == s['planned'] or s['time_limited']"
  assert "$1-none-lost" "s['lost'] == 0 and s['answered'] == s['sent']"
  assert "$1-only-200-and-429" "set(s['statuses']) <= {'200', '429'} and s['bad_429'] == 0"
  assert "$1-no-429-with-queue-32" "s['statuses'].get('429', 0) == 0"
  assert "$1-answers-equal-expected" "s['mismatches'] == 0"
  assert "$1-every-endpoint" "len({k.split()[0] for k in s['per_endpoint']}) == 3"
  assert "$1-metrics-count-every-request" "s['metrics_delta'] == dict(sorted(s['per_endpoint'].items()))"
}
time_limit=30  # seconds after which a run starts no new request (a slow machine sends fewer)
run_load warmup 96 1
time_limit=35
half=$((requests / 2))
run_load round1 "$half" 2
run_load round2 "$((requests - half))" 3
summary="$tmp/round2.json"
assert enough-sent "s['sent'] + json.load(open('$tmp/round1.json'))['sent'] >= min(100, $requests)"
warm_kib=$($py -c "import json; print(max(json.load(open('$tmp/warmup.json'))['rss_peak_kib'], json.load(open('$tmp/round1.json'))['rss_before_kib']))")
assert rss-bounded "max(s['rss_peak_kib'], json.load(open('$tmp/round1.json'))['rss_peak_kib']) <= $warm_kib + $rss_slack_mib * 1024"
assert rss-no-growth "s['rss_peak_kib'] <= json.load(open('$tmp/round1.json'))['rss_peak_kib'] + 64 * 1024"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] && ok || fail "health after the load"
$py - "$tmp" <<'PY'
import json, sys
w, r1, r2 = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("warmup", "round1", "round2"))
lat = sorted(r1["latencies_ms"] + r2["latencies_ms"])
pct = lambda p: lat[min(len(lat) - 1, -(-p * len(lat) // 100) - 1)]
sent = r1["sent"] + r2["sent"]
errors = sum(r["sent"] - r["statuses"].get("200", 0) + r["mismatches"] for r in (r1, r2))
print("serve load: %d requests (%d clients, 2 rounds after a %d-request warm-up), %d errors, %.1f req/s, "
      "p50 %.0f ms, p99 %.0f ms, max %.0f ms; RSS after the one-at-a-time requests %.0f MiB, after the warm-up "
      "%.0f MiB (peak %.0f MiB), peak %.0f / %.0f MiB (round 1 / 2), after %.0f MiB" % (
      sent, r1["concurrency"], w["sent"], errors, sent / (r1["seconds"] + r2["seconds"]), pct(50), pct(99), lat[-1],
      w["rss_before_kib"] / 1024, r1["rss_before_kib"] / 1024, w["rss_peak_kib"] / 1024, r1["rss_peak_kib"] / 1024,
      r2["rss_peak_kib"] / 1024,
      r2["rss_after_kib"] / 1024))
per = {}
for r in (r1, r2):
    for k, v in r["per_endpoint"].items():
        per[k] = per.get(k, 0) + v
print("  per endpoint:", dict(sorted(per.items())))
PY

kill -TERM "$server"
wait "$server"
[ $? = 0 ] && ok || fail "the server's exit code after SIGTERM"
echo "serve load test: $($py -c "import time; print('%.1f' % (time.time() - $started))") s"
report_and_exit
