#!/usr/bin/env bash
# The HTML bench report in a real browser: writes a report (edgemm vs ONNX Runtime and OpenCV on
# the PP-OCRv4 angle classifier, threads 1 and 2), loads it in headless Chromium with --dump-dom,
# and checks that the rendered DOM has the page's title, its five charts as <svg> elements and no
# parser error. Prints SKIP and passes when chromium is not installed (scripts/setup.sh installs it).
# Usage: bench_html_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
if ! command -v chromium >/dev/null; then
  echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export EDGEMM_REFERENCE_DIR="$root/tools/reference"

check report 0 "$bin" bench "$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx" --shape x=1,3,48,192 \
  --compare ort,opencv --threads 1,2 --iters 4 --blocks 2 --warmup 1 --report "$tmp/report.html"
check render 0 timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" \
  --dump-dom "file://$tmp/report.html"
cp "$tmp/out" "$tmp/dom.html"
expect_text title "$tmp/dom.html" "<h1>edgemm bench: "
expect_text end "$tmp/dom.html" "</body></html>"
svgs="$(grep -o '<svg ' "$tmp/dom.html" | wc -l)"
if [ "$svgs" -eq 5 ]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "FAIL svg-count: the rendered DOM has $svgs <svg> elements, expected 5"
fi
if grep -q "parsererror" "$tmp/dom.html"; then
  failed=$((failed + 1))
  echo "FAIL no-parser-error: the DOM has a <parsererror>"
else
  passed=$((passed + 1))
fi

report_and_exit
