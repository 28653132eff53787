#!/usr/bin/env bash
# Three `edgemm serve` instances behind nginx (docs/serve.md "Several instances: nginx and
# Kubernetes"), with the config of tests/cli/nginx/edgemm.conf.in: nginx runs as a child process
# on a loopback port with its own logs and temporary files in a temporary folder (never the
# system's service). Loads of OCR requests through nginx (tests/cli/serve_load_client.js), with
# one instance killed (SIGKILL) in the middle of the first and a second one stopped (SIGTERM,
# draining) in the middle of the second: every request must still get a 200 with the right
# answer (nginx passes those the dead instance dropped on to another one), and /health through
# nginx is still 200 after. Exit 77 (skipped) when nginx is not installed (scripts/setup.sh).
# Usage: serve_nginx_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "note: nginx is not installed (Debian's package nginx, scripts/setup.sh): skipped"
  exit 77
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
tmp="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# shellcheck source=serve_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serve_lib.sh"
py=/usr/bin/python3
here="$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
client="$here/serve_load_client.js"
max_body_mb=32
started=$(date +%s.%N)

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)) && echo "FAIL $1"; }
# assert NAME FILE PYTHON_EXPRESSION: the expression over the load summary `s` in FILE is true.
assert() {
  if $py -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    ok
  else
    fail "$1: $3"
    $py -c "import json, sys; s = json.load(open(sys.argv[1])); s.pop('latencies_ms', 0); print('  |', json.dumps(s)[:1500])" "$2"
  fi
}

# Three instances, each on a free port.
ports=()
instances=()
for i in 1 2 3; do
  launch_server "edgemm$i" --ocr "$root/models/ppocrv4" -t 1 --max-body-mb "$max_body_mb"
  instances+=("$server")
done
for i in 1 2 3; do
  await_server "edgemm$i" "${instances[$((i - 1))]}" || report_and_exit
  ports+=("$port")
done

# nginx on a free loopback port, from the template.
listen_port=$($py -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
mkdir -p "$tmp/nginx"
sed -e "s|@PREFIX@|$tmp/nginx|g" -e "s|@LISTEN_PORT@|$listen_port|g" -e "s|@PORT1@|${ports[0]}|g" \
  -e "s|@PORT2@|${ports[1]}|g" -e "s|@PORT3@|${ports[2]}|g" -e "s|@MAX_BODY_MB@|$max_body_mb|g" \
  "$here/nginx/edgemm.conf.in" >"$tmp/nginx/nginx.conf"
if grep -q "@[A-Z_0-9]*@" "$tmp/nginx/nginx.conf"; then
  fail "the template has a placeholder the test does not fill: $(grep -o "@[A-Z_0-9]*@" "$tmp/nginx/nginx.conf" | head -1)"
fi
# As root, nginx's workers would switch to an unprivileged user that cannot write the temporary
# folder: keep them as this user.
user_directive=""
[ "$(id -u)" = 0 ] && user_directive=" user root;"
nginx_args=(-p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log"
  -g "daemon off; pid $tmp/nginx/nginx.pid;$user_directive")
if "$nginx_bin" -t -q "${nginx_args[@]}" 2>"$tmp/nginx-t.err"; then ok; else
  fail "nginx -t refuses the config"
  sed 's/^/  | /' "$tmp/nginx-t.err" "$tmp/nginx/error.log" 2>/dev/null | tail -8
  report_and_exit
fi
"$nginx_bin" "${nginx_args[@]}" 2>"$tmp/nginx.stderr" &
nginx_pid=$!
pids+=("$nginx_pid")
base="http://127.0.0.1:$listen_port"
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] && break
  kill -0 "$nginx_pid" 2>/dev/null || break
  sleep 0.1
done
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ]; then ok; else
  fail "nginx does not answer /health"
  sed 's/^/  | /' "$tmp/nginx.stderr" "$tmp/nginx/error.log" 2>/dev/null | tail -8
  report_and_exit
fi

# The requests: crops of three images of data/ocr_set (an OCR takes ~0.3 s on one thread);
# their expected answers from instance 1 directly, one at a time.
$py - "$root" "$tmp" <<'PY'
import json, sys
from PIL import Image
root, tmp = sys.argv[1:3]
kinds = []
for name, box in [("013_page_grey.jpg", (90, 190, 670, 420)), ("010_photo_chelsea.jpg", (280, 20, 690, 280)),
                  ("008_page_mint.png", (20, 20, 400, 260))]:
    out = f"{tmp}/ocr_{name.split('.')[0]}.png"
    Image.open(f"{root}/data/ocr_set/{name}").crop(box).save(out)
    kinds.append({"name": "ocr " + name, "path": "/v1/ocr", "content_type": "image/png", "body": out, "check": "ocr"})
json.dump(kinds, open(f"{tmp}/kinds.json", "w"), indent=1)
PY
if node "$client" expect --base "http://127.0.0.1:${ports[0]}" --kinds "$tmp/kinds.json" --out "$tmp/expected.json" \
  >"$tmp/expect.out" 2>&1; then ok; else
  fail "expected answers"
  sed 's/^/  | /' "$tmp/expect.out"
  report_and_exit
fi

# run_with_fault NAME REQUESTS AFTER SIGNAL INSTANCE: a load through nginx from 8 clients; once
# AFTER requests are answered, INSTANCE (1-3) gets SIGNAL. Every request must get a 200 with the
# expected answer.
run_with_fault() {
  local name="$1" requests="$2" after="$3" signal="$4" instance="$5"
  local victim="${instances[$((instance - 1))]}"
  : >"$tmp/nginx/access.log"
  echo 0 >"$tmp/$name.progress"
  node "$client" load --base "$base" --kinds "$tmp/kinds.json" --expected "$tmp/expected.json" --requests "$requests" \
    --concurrency 8 --time-limit 60 --request-timeout 60 --progress "$tmp/$name.progress" --seed "$requests" \
    --out "$tmp/$name.json" >"$tmp/$name.out" 2>&1 &
  local load=$!
  pids+=("$load")
  local answered=0
  while kill -0 "$load" 2>/dev/null && [ "$answered" -lt "$after" ]; do
    sleep 0.05
    answered=$(cat "$tmp/$name.progress" 2>/dev/null)
    answered=${answered:-0}  # read while the client rewrites it
  done
  echo "$name: $(cat "$tmp/$name.progress") answered; kill -$signal instance $instance (port ${ports[$((instance - 1))]})"
  kill "-$signal" "$victim"
  [ "$signal" = KILL ] && wait "$victim" 2>/dev/null  # reaped here, quietly
  wait "$load"
  local status=$?
  echo "$name: $(cat "$tmp/$name.out")"
  [ "$status" = 0 ] && [ -s "$tmp/$name.json" ] || {
    fail "$name: the load client failed (exit $status)"
    report_and_exit
  }
  assert "$name-none-lost" "$tmp/$name.json" "s['lost'] == 0 and s['answered'] == s['sent'] == s['planned']"
  assert "$name-all-200" "$tmp/$name.json" "s['statuses'] == {'200': s['planned']}"
  assert "$name-answers-equal-expected" "$tmp/$name.json" "s['mismatches'] == 0"
  cp "$tmp/nginx/access.log" "$tmp/$name.access.log"
}
# From an access log: how many requests nginx passed on to another instance, and how many
# each instance answered.
log_stats() {
  $py - "$1" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if '"POST /v1/ocr' in l]
tried = [re.search(r"upstream=(.*) upstream_status=", l).group(1).split(", ") for l in lines]
passed_on = [l for l, t in zip(lines, tried) if len(t) > 1]
by = {}
for t in tried:
    by[t[-1].rsplit(":", 1)[1]] = by.get(t[-1].rsplit(":", 1)[1], 0) + 1
statuses = re.findall(r"upstream_status=(.*)$", "".join(passed_on), re.M)
print(f"{len(lines)} requests logged, {len(passed_on)} passed on to another instance "
      f"(upstream statuses of those: {sorted(set(statuses))}), answered by port: {by}")
PY
}

# Run 1: SIGKILL instance 2 after 40 of 120 answers. Its requests in flight fail ("error": the
# connection is reset) and go to another instance (non_idempotent); new ones are refused at
# connect and go on too, until max_fails takes it out.
run_with_fault kill 120 40 KILL 2
stats=$(log_stats "$tmp/kill.access.log")
echo "kill: $stats"
grep -q "passed on to another instance" <<<"$stats" && ! grep -q " 0 passed on" <<<"$stats" && ok ||
  fail "kill: no request was passed on to another instance (the kill did not hit a request in flight?)"
grep -q "'${ports[1]}'" <<<"$stats" && ok || fail "kill: instance 2 answered nothing before its kill"

# Run 2: SIGTERM instance 3 after 10 of 40 answers: it drains (its running and queued requests
# finish; new connections are refused, requests on kept-alive connections get 503), then exits 0.
run_with_fault term 40 10 TERM 3
wait "${instances[2]}"
term_exit=$?
[ "$term_exit" = 0 ] && ok || fail "term: instance 3 exited $term_exit after SIGTERM (0 expected: drained)"
echo "term: $(log_stats "$tmp/term.access.log")"

# After: instance 1 alone answers through nginx.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] && ok || fail "/health through nginx after"
kill -0 "${instances[0]}" 2>/dev/null && ok || fail "instance 1 died"
code=$(curl -s -o "$tmp/after.json" -w '%{http_code}' -H "Content-Type: image/png" \
  --data-binary @"$tmp/ocr_013_page_grey.png" "$base/v1/ocr")
[ "$code" = 200 ] && $py -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert [l['text'] for l in d['lines']] == [l['text'] for l in json.load(open(sys.argv[2]))['ocr 013_page_grey.jpg']['lines']]" \
  "$tmp/after.json" "$tmp/expected.json" && ok || fail "OCR through nginx after: HTTP $code"
# A body over client_max_body_size: nginx's 413, the instances never see it.
head -c $(((max_body_mb + 1) * 1024 * 1024)) /dev/zero >"$tmp/big.bin"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Content-Type: image/png" --data-binary @"$tmp/big.bin" "$base/v1/ocr")
[ "$code" = 413 ] && ok || fail "a body over client_max_body_size: HTTP $code, expected 413"
# The same body chunked (no Content-Length): nginx counts it against client_max_body_size too,
# which edgemm itself does not (docs/serve.md "Not there (yet)").
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Transfer-Encoding: chunked" -H "Content-Type: image/png" \
  --data-binary @"$tmp/big.bin" "$base/v1/ocr")
[ "$code" = 413 ] && ok || fail "a chunked body over client_max_body_size: HTTP $code, expected 413"
rm -f "$tmp/big.bin"

kill -QUIT "$nginx_pid"  # graceful stop
wait "$nginx_pid"
kill -TERM "${instances[0]}"
wait "${instances[0]}"
echo "serve nginx test: $($py -c "import time; print('%.1f' % (time.time() - $started))") s"
report_and_exit
