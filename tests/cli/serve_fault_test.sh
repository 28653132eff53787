#!/usr/bin/env bash
# `edgemm serve` against faulty and hostile clients (docs/serve.md "Tests"), with raw sockets from
# Python: truncated and slow bodies, idle connections, clients that vanish in the middle of a
# streamed chat or an OCR request, garbage request lines, huge headers, chunked bodies (within and
# over --max-body-mb), and 200 connections opened and closed at once. Each case says what it
# expects. Throughout, other clients must still be served; at the end the server must be alive,
# healthy, answer OCR exactly as before, and hold no more file descriptors than after warm-up.
# Usage: serve_fault_test.sh EDGEMM_BINARY REPO_ROOT
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
started=$(date +%s.%N)

start_server server --ocr "$root/models/ppocrv4" --vlm "$root/tests/fixtures/vlm_tiny" -t 1 || report_and_exit

# The cases, in Python: `faults.py CASE PORT TMP ROOT PID [N]` exits 0 when the case went as expected.
cat >"$tmp/faults.py" <<'PY'
import base64, json, re, socket, struct, sys, threading, time

case, port, tmp, root, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
OCR_IMAGE = f"{tmp}/ocr.png"  # a small crop: one OCR takes ~0.3 s
BIG_IMAGE = f"{tmp}/big.jpg"  # 2x2 copies of a page, 40 lines: one OCR takes ~1.8 s on one thread
CAT = f"{root}/tests/fixtures/vlm_tiny/reference/images/p0_chelsea.png"


def connect(timeout=30):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def reset_on_close(s):  # close() sends RST instead of FIN: an abrupt disconnect
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def head(method, path, length=None, ctype=None, extra=b""):
    h = b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % (method.encode(), path.encode())
    if ctype:
        h += b"Content-Type: " + ctype.encode() + b"\r\n"
    if length is not None:
        h += b"Content-Length: %d\r\n" % length
    return h + extra + b"\r\n"


def read_response(s):
    """One response: (status, headers, body); status None when the server closed without one."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, buf, b""
        buf += chunk
    header, _, body = buf.partition(b"\r\n\r\n")
    status = int(header.split(b" ", 2)[1])
    m = re.search(rb"(?im)^content-length: *(\d+)", header)
    if m:
        while len(body) < int(m.group(1)):
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    elif re.search(rb"(?im)^transfer-encoding: *chunked", header):
        while not body.endswith(b"0\r\n\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    return status, header.decode("latin-1"), body


def request(method, path, body=b"", ctype=None, timeout=60):
    t = time.time()
    s = connect(timeout)
    s.sendall(head(method, path, len(body) if method == "POST" else None, ctype) + body)
    status, header, data = read_response(s)
    s.close()
    return status, data, time.time() - t


def health():
    status, _, seconds = request("GET", "/health", timeout=30)
    return status, seconds


def ocr_key(body):
    d = json.loads(body)
    return [d["width"], d["height"], d["orientation"],
            [[l["text"], l["polygon"], l["score"], l["box_score"], l["rotated_180"]] for l in d["lines"]]]


def ocr_ok():
    """A normal OCR request answers exactly as at the start."""
    status, body, _ = request("POST", "/v1/ocr", open(OCR_IMAGE, "rb").read(), "image/png")
    assert status == 200, ("ocr", status, body[:300])
    assert ocr_key(body) == json.load(open(f"{tmp}/ocr_expected.json")), "the OCR answer changed"


def chat_body(max_tokens, stream=False):
    url = "data:image/png;base64," + base64.b64encode(open(CAT, "rb").read()).decode()
    return json.dumps({"model": "vlm", "temperature": 0, "max_tokens": max_tokens, "stream": stream,
                       "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                                 {"type": "text", "text": "What is in this image?"}]}]}
                      ).encode()


def chat_ok():
    """A normal greedy chat answers the ids it answered at the start."""
    status, body, _ = request("POST", "/v1/chat/completions", chat_body(8), "application/json")
    assert status == 200, ("chat", status, body[:300])
    assert json.loads(body)["edgemm"]["ids"] == json.load(open(f"{tmp}/chat_expected.json")), "the chat answer changed"


def metric(name):
    _, body, _ = request("GET", "/metrics")
    m = re.search(r"^%s (\S+)$" % re.escape(name), body.decode(), re.M)
    return float(m.group(1)) if m else 0.0


def wait_for(what, predicate, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds} s")


def served_meanwhile(during):
    """While `during` runs in a thread, /health answers within 1 s (four times) and OCR exactly."""
    done = threading.Event()
    error = []

    def run():
        try:
            during()
        except Exception as e:  # reported below
            error.append(e)
        done.set()
    threading.Thread(target=run, daemon=True).start()
    time.sleep(0.3)
    for _ in range(4):
        status, seconds = health()
        assert status == 200 and seconds < 1.0, f"/health meanwhile: {status} in {seconds:.2f} s"
        time.sleep(0.3)
    ocr_ok()
    assert done.wait(60), "the faulty client did not finish"
    if error:
        raise error[0]


def rss_kib():
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))


def expected():
    """The answers every later check compares with, one request at a time."""
    status, body, _ = request("POST", "/v1/ocr", open(OCR_IMAGE, "rb").read(), "image/png")
    assert status == 200, (status, body[:300])
    json.dump(ocr_key(body), open(f"{tmp}/ocr_expected.json", "w"))
    status, body, _ = request("POST", "/v1/chat/completions", chat_body(8), "application/json")
    assert status == 200, (status, body[:300])
    json.dump(json.loads(body)["edgemm"]["ids"], open(f"{tmp}/chat_expected.json", "w"))
    slow = json.dumps({"model": "vlm", "temperature": 0, "max_tokens": 4,
                       "messages": [{"role": "user", "content": "Hello there, what do you see?"}]}).encode()
    open(f"{tmp}/slow.json", "wb").write(slow)
    status, body, _ = request("POST", "/v1/chat/completions", slow, "application/json")
    assert status == 200, (status, body[:300])
    json.dump(json.loads(body)["edgemm"]["ids"], open(f"{tmp}/slow_expected.json", "w"))
    status, body, _ = request("POST", "/v1/ocr", open(BIG_IMAGE, "rb").read(), "image/jpeg")  # warms up big shapes
    assert status == 200, (status, body[:300])


def truncated_body():
    """A body shorter than its Content-Length, then the client half-closes: the server sees the end
    of the stream, answers nothing or a 4xx (never 200 or 5xx) and closes the connection at once
    (not after its 10 s read timeout). The same with an abrupt close (RST) instead: nothing to read;
    the server goes on."""
    image = open(OCR_IMAGE, "rb").read()
    s = connect(10)
    s.sendall(head("POST", "/v1/ocr", len(image), "image/png") + image[:1000])
    s.shutdown(socket.SHUT_WR)
    t = time.time()
    status, _, _ = read_response(s)
    assert status is None or 400 <= status < 500, f"HTTP {status}"
    assert s.recv(100) == b"" and time.time() - t < 3, "the connection stayed open"
    s.close()
    s = connect(10)
    reset_on_close(s)
    s.sendall(head("POST", "/v1/ocr", len(image), "image/png") + image[:1000])
    time.sleep(0.1)
    s.close()
    ocr_ok()


def slow_body():
    """Headers, then the body one byte per 200 ms for 4 s, then the rest: meanwhile /health answers
    within 1 s and OCR exactly; the slow request is then answered as when sent at once."""
    body = open(f"{tmp}/slow.json", "rb").read()
    s = connect(60)
    s.sendall(head("POST", "/v1/chat/completions", len(body), "application/json"))
    answer = []

    def drip():
        for i in range(20):
            s.sendall(body[i:i + 1])
            time.sleep(0.2)
        s.sendall(body[20:])
        answer.append(read_response(s))
    served_meanwhile(drip)
    status, _, data = answer[0]
    assert status == 200, f"the slow request: HTTP {status} {data[:300]}"
    assert json.loads(data)["edgemm"]["ids"] == json.load(open(f"{tmp}/slow_expected.json")), "slow answer differs"
    s.close()


def idle():
    """A client connects and sends nothing: others are served meanwhile, and the server closes the
    idle connection itself after its keep-alive timeout (5 s), freeing its worker thread."""
    s = connect(15)
    t = time.time()
    served_meanwhile(lambda: None)
    assert s.recv(100) == b"", "the idle connection got data"
    assert time.time() - t < 10, f"the idle connection was closed after {time.time() - t:.1f} s"
    s.close()


def idle_flood_note():
    """Not a check, a measurement: 40 idle connections, fewer than the server's worker threads
    (2 models x (1 + 8) + 32 = 50), leave /health answered at once (with more than 50, /health
    waits until the keep-alive timeout frees a worker)."""
    socks = [connect() for _ in range(40)]
    time.sleep(0.2)
    status, seconds = health()
    for s in socks:
        s.close()
    print(f"note: with 40 idle connections open, /health answered {status} in {seconds:.2f} s")


def stream_disconnect():
    """A streamed chat (max_tokens 200; ~137 tokens when read to the end) whose client reads the
    first event and goes away: the next write fails and generation stops, so the VLM is free again
    at once (edgemm_requests_running 0) after far fewer tokens than a full answer, and the next
    greedy chat answers exactly as before (the KV cache of the aborted one does not leak into it).
    Done twice: closing with FIN and with RST."""
    for abrupt in (False, True):
        tokens = metric("edgemm_generated_tokens_total")
        s = connect(30)
        if abrupt:
            reset_on_close(s)
        s.sendall(head("POST", "/v1/chat/completions", len(chat_body(200, True)), "application/json")
                  + chat_body(200, True))
        buf = b""
        while b"data: " not in buf:
            chunk = s.recv(4096)
            assert chunk, "closed before the first event"
            buf += chunk
        assert buf.startswith(b"HTTP/1.1 200"), buf[:200]
        s.close()
        wait_for("the VLM free again", lambda: metric('edgemm_requests_running{model="vlm"}') == 0, 3)
        generated = metric("edgemm_generated_tokens_total") - tokens
        assert generated < 50, f"{generated:.0f} tokens generated after the client left"
        print(f"{'RST' if abrupt else 'FIN'}: generation stopped after {generated:.0f} tokens")
        chat_ok()


def ocr_disconnect():
    """An OCR request (~1.8 s) whose client goes away 0.3 s in (RST, then FIN): the run goes on to
    its end (docs/serve.md: a request without streaming cannot see its client leave), its answer
    is dropped, the OCR slot is free again afterwards, and OCR still answers exactly."""
    image = open(BIG_IMAGE, "rb").read()
    answered = 'edgemm_requests_total{endpoint="/v1/ocr",status="200"}'
    for abrupt in (True, False):
        count = metric(answered)
        s = connect(30)
        if abrupt:
            reset_on_close(s)
        s.sendall(head("POST", "/v1/ocr", len(image), "image/jpeg") + image)
        time.sleep(0.3)
        s.close()
        assert metric('edgemm_requests_running{model="ocr"}') == 1, "the OCR request was not running when its client left"
        wait_for("the OCR slot free again", lambda: metric('edgemm_requests_running{model="ocr"}') == 0, 15)
        wait_for("the request counted", lambda: metric(answered) == count + 1, 2)
    ocr_ok()


def garbage():
    """A garbage request line, and binary noise: 400 with OpenAI's error object, promptly."""
    for junk in (b"GARBAGE\r\n\r\n", bytes(range(256)) * 4 + b"\r\n\r\n", b"GET\r\n\r\n"):
        s = connect(10)
        t = time.time()
        s.sendall(junk)
        status, _, body = read_response(s)
        assert status == 400 and "error" in json.loads(body), (junk[:20], status, body[:200])
        assert time.time() - t < 2, f"answered after {time.time() - t:.1f} s"
        s.close()


def huge_header():
    """A 1 MiB header line: 400 (httplib reads the line and refuses it, over its 8 KiB limit) without
    the RSS growing more than 64 MiB; a 100 KiB URL: 414; 20000 small headers: an answer, no crash."""
    before = rss_kib()
    s = connect(20)
    s.sendall(head("GET", "/health", extra=b"X-Big: " + b"a" * (1 << 20) + b"\r\n"))
    status, _, _ = read_response(s)
    s.close()
    assert status in (400, 431), f"1 MiB header: HTTP {status}"
    assert rss_kib() - before < 64 * 1024, f"RSS grew {(rss_kib() - before) // 1024} MiB"
    s = connect(20)
    s.sendall(head("GET", "/" + "a" * 100000))
    status, _, _ = read_response(s)
    s.close()
    assert status == 414, f"100 KiB URL: HTTP {status}"
    s = connect(20)
    s.sendall(head("GET", "/health", extra=b"".join(b"X-H%d: v\r\n" % i for i in range(20000))))
    status, _, _ = read_response(s)
    s.close()
    assert status is not None, "20000 headers: no answer"


def chunked(piece):
    """A chunked POST (Transfer-Encoding: chunked, chunks of `piece` bytes) of the image to /v1/ocr:
    the same answer as with a Content-Length."""
    image = open(OCR_IMAGE, "rb").read()
    s = connect(30)
    s.sendall(b"POST /v1/ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    for i in range(0, len(image), piece):
        part = image[i:i + piece]
        s.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
    s.sendall(b"0\r\n\r\n")
    status, _, body = read_response(s)
    s.close()
    assert status == 200, (status, body[:300])
    assert ocr_key(body) == json.load(open(f"{tmp}/ocr_expected.json")), "the chunked OCR answer differs"


def chunked_over_limit():
    """A chunked body larger than --max-body-mb (40 MiB > the default 32): 413, as with a
    Content-Length, so that a chunked body cannot grow the server's memory without bound."""
    s = connect(60)
    s.sendall(b"POST /v1/ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    piece = b"\0" * (1 << 20)
    try:
        for _ in range(40):
            s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
        s.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may refuse before reading it all
    status, _, body = read_response(s)
    s.close()
    assert status == 413, f"a 40 MiB chunked body: HTTP {status} {body[:200]}"


def many_connections():
    """200 connections opened at once, then closed without a request; then 100 that each send
    GET /health and close before reading the answer (the server writes to closed sockets): the
    server stays up and /health answers within 1 s right after."""
    socks = []
    for _ in range(200):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        socks.append(s)
    time.sleep(0.5)
    for s in socks:
        s.close()
    socks = [connect() for _ in range(100)]
    for s in socks:
        s.sendall(head("GET", "/health"))
    for s in socks:
        reset_on_close(s)
        s.close()
    status, seconds = health()
    assert status == 200 and seconds < 1.0, f"/health after: {status} in {seconds:.2f} s"


def final():
    """After everything: healthy, OCR and chat answer exactly as at the start."""
    status, _ = health()
    assert status == 200, f"/health {status}"
    ocr_ok()
    chat_ok()


try:
    globals()[case.replace("-", "_")](*[int(a) for a in sys.argv[6:]])
except AssertionError as e:
    print(f"  | {e}")
    sys.exit(1)
except Exception as e:
    print(f"  | {type(e).__name__}: {e}")
    sys.exit(1)
PY

$py -c "
from PIL import Image
Image.open('$root/data/ocr_set/010_photo_chelsea.jpg').crop((280, 20, 690, 280)).save('$tmp/ocr.png')
page = Image.open('$root/data/ocr_set/006_page_white.jpg')
big = Image.new('RGB', (page.width * 2, page.height * 2))
for x in (0, page.width):
    for y in (0, page.height):
        big.paste(page, (x, y))
big.save('$tmp/big.jpg', quality=90)"

fds() { ls "/proc/$server/fd" 2>/dev/null | wc -l; }
# run_case NAME [N]: one case of faults.py; then the server must still be alive.
run_case() {
  local name="$1"
  local t0
  t0=$(date +%s.%N)
  if $py "$tmp/faults.py" "$name" "$port" "$tmp" "$root" "$server" "${@:2}" >"$tmp/case.out" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
  sed 's/^/  /' "$tmp/case.out"
  if ! kill -0 "$server" 2>/dev/null; then
    failed=$((failed + 1))
    echo "FAIL $name: the server died"
    tail -5 "$tmp/server.err" | sed 's/^/  | /'
    report_and_exit
  fi
  printf '  %-20s %.1f s\n' "$name${2:+ $2}" "$($py -c "import time; print(time.time() - $t0)")"
}

run_case expected  # the answers to compare with, and a warm-up
fd_start=$(fds)
run_case truncated-body
run_case slow-body
run_case idle
run_case stream-disconnect
run_case ocr-disconnect
run_case garbage
run_case huge-header
# A chunked POST: curl's own chunked upload (expects 200 and the same answer as with a
# Content-Length), then chunks of 997 and 64 bytes by hand (the same).
curl -s -o "$tmp/chunked_curl.json" -w '%{http_code}' -H "Transfer-Encoding: chunked" -H "Content-Type: image/png" \
  --data-binary @"$tmp/ocr.png" "http://127.0.0.1:$port/v1/ocr" >"$tmp/chunked_curl.code"
if [ "$(cat "$tmp/chunked_curl.code")" = 200 ] && $py -c "
import json, sys
d = json.load(open(sys.argv[1]))
got = [d['width'], d['height'], d['orientation'], [[l['text'], l['polygon'], l['score'], l['box_score'], l['rotated_180']] for l in d['lines']]]
assert got == json.load(open(sys.argv[2]))" "$tmp/chunked_curl.json" "$tmp/ocr_expected.json"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "FAIL chunked-curl: HTTP $(cat "$tmp/chunked_curl.code")"
fi
run_case chunked 997
run_case chunked 64
run_case chunked-over-limit
run_case many-connections
$py "$tmp/faults.py" idle-flood-note "$port" "$tmp" "$root" "$server" 2>&1 | sed 's/^/  /'  # a note, not a check

# Every connection closed: the worker threads let go of their sockets within the keep-alive
# timeout (5 s); allow 2 descriptors of slack (e.g. a log file opened late).
fd_end=$(fds)
for _ in $(seq 150); do
  fd_end=$(fds)
  [ "$fd_end" -le $((fd_start + 2)) ] && break
  sleep 0.1
done
if [ "$fd_end" -le $((fd_start + 2)) ]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "FAIL file descriptors: $fd_start after warm-up, $fd_end at the end"
  ls -la "/proc/$server/fd" | sed 's/^/  | /'
fi
echo "  file descriptors: $fd_start after warm-up, $fd_end at the end; RSS $(grep VmRSS "/proc/$server/status" | tr -s ' \t' ' ')"
run_case final
if grep -qiE "terminate called|segmentation|abort|exception" "$tmp/server.err"; then
  failed=$((failed + 1))
  echo "FAIL the server's stderr:"
  sed 's/^/  | /' "$tmp/server.err" | tail -10
else
  passed=$((passed + 1))
fi
kill -TERM "$server"
wait "$server"
[ $? = 0 ] && passed=$((passed + 1)) || { failed=$((failed + 1)) && echo "FAIL the exit code after SIGTERM"; }
echo "serve fault test: $($py -c "import time; print('%.1f' % (time.time() - $started))") s"
report_and_exit
