#!/usr/bin/env bash
# `edgemm serve`'s page at GET / (docs/serve.md "The page") in a real browser: Debian's chromium,
# headless, driven by puppeteer-core (tests/cli/serve_page_browser.js, pinned in
# tools/reference/package.json). curl checks that GET / is the HTML file built in, with no API key;
# the browser checks that the page shows the 401 of /v1/models without the key and works with it,
# that OCR lists the lines `edgemm ocr --json` reads (same texts, same order) and draws them on
# the image, that a greedy chat streams `edgemm vqa --json`'s answer and sends the whole
# conversation on the next turn, that retrieval ranks images as `edgemm retrieve --query`, and that
# server errors are shown. Screenshots: build/serve_page.png (OCR), build/serve_page_chat.png.
# Exits 77 (skipped) without tools/reference/node_modules/puppeteer-core or chromium.
# Usage: serve_page_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -d "$root/tools/reference/node_modules/puppeteer-core" ]; then
  echo "note: tools/reference/node_modules/puppeteer-core is missing (scripts/setup.sh): serve_page is skipped"
  exit 77
fi
if [ ! -x "$chromium" ]; then
  echo "note: no chromium at $chromium (apt-get install chromium, or set CHROMIUM): serve_page is skipped"
  exit 77
fi
tmp="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# shellcheck source=serve_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serve_lib.sh"
py=/usr/bin/python3
ocr_models="$root/models/ppocrv4"
vlm="$root/tests/fixtures/vlm_tiny"
clip="$root/tests/fixtures/clip_tiny"
photo="$root/data/demo/photo_text.jpg"
images="$vlm/reference/images"
cat_png="$images/p0_chelsea.png"
message="What is in this image?"
query="a photo of a cat"
key=page-key-456
mkdir -p "$root/build"
shot="$root/build/serve_page.png"
chat_shot="$root/build/serve_page_chat.png"

ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
}

# The oracles: the other commands on the same files.
check ocr-cli 0 "$bin" ocr "$photo" --json --models "$ocr_models" -t 1
cp "$tmp/out" "$tmp/ocr.json"
check vqa-cli 0 "$bin" vqa --model "$vlm" "$cat_png" "$message" --max-new-tokens 12 --json -t 1
cp "$tmp/out" "$tmp/vqa.json"
check retrieve-index 0 "$bin" retrieve --model "$clip" --index "$tmp/page.idx" "$images"/*.png -t 1
check retrieve-query 0 "$bin" retrieve --model "$clip" --index "$tmp/page.idx" --query "$query" --json -t 1
cp "$tmp/out" "$tmp/retrieve.json"
head -c 3000 /dev/urandom >"$tmp/noise.txt"

# --- GET / needs no key, and is the file built in --------------------------------------------
start_server ocr --ocr "$ocr_models" --api-key "$key" -t 1 || report_and_exit
ocr_base="http://127.0.0.1:$port"
code=$(curl -s -o "$tmp/page.html" -D "$tmp/headers" -w '%{http_code}' "$ocr_base/")
[ "$code" = 200 ] && ok || fail "page-no-key: HTTP $code"
grep -qi '^content-type: text/html; charset=utf-8' "$tmp/headers" && ok || fail "page-content-type"
cmp -s "$tmp/page.html" "$root/tools/cli/serve/web/index.html" && ok || fail "page-is-index-html"
! grep -qE '(src|href)="(https?:)?//' "$tmp/page.html" && ok || fail "page-no-external-urls"
code=$(curl -s -o /dev/null -w '%{http_code}' "$ocr_base/v1/models")
[ "$code" = 401 ] && ok || fail "models-need-key: HTTP $code"

# --- the browser -------------------------------------------------------------------------------
start_server chat --vlm "$vlm" --clip "$clip" -t 1 || report_and_exit
chat_base="http://127.0.0.1:$port"
$py - "$tmp/config.json" <<PY
import json, sys
load = lambda f: json.load(open(f))
json.dump({
    "root": "$root", "chromium": "$chromium", "key": "$key",
    "ocr": {"base": "$ocr_base", "image": "$photo", "want": load("$tmp/ocr.json"), "screenshot": "$shot",
            "noise": "$tmp/noise.txt"},
    "chat": {"base": "$chat_base", "image": "$cat_png", "message": "$message", "want": load("$tmp/vqa.json"),
             "screenshot": "$chat_shot", "clip_images": ["$images/p0_chelsea.png", "$images/p1_coffee.png",
                                                          "$images/p2_rocket.png"],
             "clip_query": "$query", "clip_want": load("$tmp/retrieve.json")},
}, open(sys.argv[1], "w"))
PY
rm -f "$shot" "$chat_shot"
node "$root/tests/cli/serve_page_browser.js" "$tmp/config.json" >"$tmp/browser.out" 2>"$tmp/browser.err"
browser_exit=$?
while read -r status rest; do
  case "$status" in
    ok) ok ;;
    FAIL) fail "$rest" ;;
    *) echo "  | $status $rest" ;;
  esac
done <"$tmp/browser.out"
grep -q '^ok ' "$tmp/browser.out" || fail "browser: no check ran (exit $browser_exit)"
[ -s "$tmp/browser.err" ] && sed 's/^/  | /' "$tmp/browser.err" | tail -8
[ -s "$shot" ] && ok || fail "screenshot: $shot not written"
[ -s "$chat_shot" ] && ok || fail "screenshot: $chat_shot not written"
echo "screenshots: $shot $chat_shot"

for name in ocr chat; do
  kill -TERM "${pids[0]}" 2>/dev/null
  wait "${pids[0]}"
  [ $? = 0 ] && ok || fail "$name-server-exit-code"
  pids=("${pids[@]:1}")
done
report_and_exit
