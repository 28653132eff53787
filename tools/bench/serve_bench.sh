#!/usr/bin/env bash
# Serving throughput and latency of `edgemm serve` (docs/serve.md, docs/benchmarks.md "Serving"):
# OCR requests/s and p50/p99 latency over an image set at several numbers of concurrent clients
# (closed loop: each client sends its next request when its answer arrives), the server's overhead
# at 1 client (HTTP + JSON + image decoding: the request's latency minus the pipeline's own
# time, total_ms - decode_ms), the one-process CLI's images/s on the same images and threads for
# comparison, and chat time to first token and decode tokens/s on a VLM package.
# Usage: tools/bench/serve_bench.sh [--set DIR] [--clients 1,2,4,8,16] [--threads N] [--parallel N]
#                                   [--rounds R] [--vlm DIR] [--max-tokens N]
# Env: EDGEMM (binary, default build/bin/edgemm). Exit codes: 0 ok, 1 a run failed, 2 bad arguments.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${EDGEMM:-$root/build/bin/edgemm}"
set_dir="$root/data/ocr_set" clients="1,2,4,8,16" threads=1 parallel=1 rounds=2
vlm="$root/tests/fixtures/vlm_tiny" max_tokens=32
while [ $# -gt 0 ]; do
  case "$1" in
    --set) set_dir="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --vlm) vlm="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "serve_bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "serve_bench.sh: no edgemm binary at $bin (build it, or set EDGEMM)" >&2; exit 2; }
command -v node >/dev/null || { echo "serve_bench.sh: node is needed (scripts/setup.sh)" >&2; exit 2; }
mapfile -t images < <(find "$set_dir" -maxdepth 1 \( -name '*.jpg' -o -name '*.png' \) | sort)
[ "${#images[@]}" -gt 0 ] || { echo "serve_bench.sh: no .jpg/.png images in $set_dir" >&2; exit 2; }
tmp="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
client="$root/tools/bench/serve_bench_client.js"
py=/usr/bin/python3

echo "[serve_bench] the CLI: edgemm ocr on ${#images[@]} images, twice, -t $threads" >&2
"$bin" ocr "${images[@]}" "${images[@]}" --json -t "$threads" --models "$root/models/ppocrv4" >"$tmp/cli.json"

start_server() {  # start_server ARGS...: sets $server and $base
  "$bin" serve --port 0 --json -t "$threads" --queue 64 "$@" >"$tmp/server.out" 2>"$tmp/server.err" &
  server=$!
  for _ in $(seq 600); do
    grep -q '"event":"ready"' "$tmp/server.out" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$tmp/server.err" >&2; exit 1; }
    sleep 0.1
  done
  base="http://127.0.0.1:$($py -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['port'])" "$tmp/server.out")"
}
stop_server() {
  kill -TERM "$server"
  wait "$server" || true
  server=""
}

start_server --ocr "$root/models/ppocrv4" --parallel "$parallel"
echo "[serve_bench] warm-up: each image once" >&2
node "$client" ocr "$base" 1 "${#images[@]}" "${images[@]}" >/dev/null
: >"$tmp/ocr.jsonl"
for c in ${clients//,/ }; do
  n=$((${#images[@]} * rounds))
  [ "$n" -ge $((c * 2)) ] || n=$((c * 2))
  echo "[serve_bench] OCR: $c client(s), $n requests" >&2
  node "$client" ocr "$base" "$c" "$n" "${images[@]}" >>"$tmp/ocr.jsonl"
done
rss=$(awk '/VmHWM/ {print $2}' "/proc/$server/status")
stop_server

: >"$tmp/chat.jsonl"
if [ -n "$vlm" ]; then
  chat_image="$(find "$vlm/reference/images" -name '*.png' 2>/dev/null | sort | head -1)"
  [ -n "$chat_image" ] || chat_image="${images[0]}"
  start_server --vlm "$vlm"
  echo "[serve_bench] chat: 1 client, 6 streamed requests of $max_tokens tokens" >&2
  node "$client" chat "$base" 1 1 "$chat_image" "$max_tokens" >/dev/null
  node "$client" chat "$base" 1 6 "$chat_image" "$max_tokens" >"$tmp/chat.jsonl"
  "$bin" vqa --model "$vlm" "$chat_image" "What is in this image?" --max-new-tokens "$max_tokens" --json \
    -t "$threads" >"$tmp/vqa.json"
  stop_server
fi

$py - "$tmp/cli.json" "$tmp/ocr.jsonl" "$tmp/chat.jsonl" "$tmp/vqa.json" "$threads" "$parallel" "$rss" <<'PY'
import json, os, sys
cli_path, ocr_path, chat_path, vqa_path, threads, parallel, rss_kb = sys.argv[1:8]
images = json.load(open(cli_path))["images"]
second = images[len(images) // 2:]  # the second pass: warm
cli_ms = sum(i["timings_ms"]["total"] for i in second)
cli_rate = 1000 * len(second) / cli_ms
def pct(values, p):
    return values[min(len(values) - 1, int(p / 100 * len(values)))] if values else float("nan")
print(f"OCR over HTTP: {len(second)} images, server -t {threads} --parallel {parallel}; "
      f"the CLI (one process, -t {threads}): {cli_rate:.2f} images/s. Server peak RSS {int(rss_kb) / 1024:.0f} MiB.\n")
print("| clients | requests | requests/s | vs CLI | p50 ms | p99 ms | non-200 |")
print("|---|---|---|---|---|---|---|")
runs = [json.loads(l) for l in open(ocr_path)]
for r in runs:
    lat = r["latency_ms"]
    print(f"| {r['clients']} | {r['requests']} | {r['requests_per_s']:.2f} | {r['requests_per_s'] / cli_rate:.2f}x "
          f"| {pct(lat, 50):.0f} | {pct(lat, 99):.0f} | {r['non_200']} |")
one = next((r for r in runs if r["clients"] == 1), None)
if one:
    overhead = sum(one["latency_ms"]) - sum(one["pipeline_ms"])
    decode = sum(one["decode_ms"])
    print(f"\nAt 1 client the server's overhead (latency - the pipeline's time) is {overhead / sum(one['latency_ms']) * 100:.1f} % "
          f"of the request time ({overhead / len(one['latency_ms']):.1f} ms per request, of which image decoding "
          f"{decode / len(one['latency_ms']):.1f} ms).")
if os.path.getsize(chat_path) > 0:
    c = json.loads(open(chat_path).read())
    vqa = json.load(open(vqa_path))["timings"]
    print(f"\nChat (streamed, 1 client, {c['requests']} requests): time to first token p50 {pct(c['ttft_ms'], 50):.1f} ms "
          f"(edgemm vqa: {vqa['time_to_first_token_ms']:.1f} ms), decode {pct(c['decode_tokens_per_s'], 50):.0f} tokens/s "
          f"(edgemm vqa: {vqa['decode_tokens_per_s']:.0f}).")
PY
