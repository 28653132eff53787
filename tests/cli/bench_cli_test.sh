#!/usr/bin/env bash
# `edgemm bench` end to end: edgemm vs ONNX Runtime on the PP-OCRv4 angle classifier (small),
# checked through the JSON report (both runtimes, run counts, ordered statistics, recorded
# settings; no timing thresholds), edgemm (model and OCR pipeline) on the opencv backend, the HTML report (well-formed XML, one <svg> per chart), a size sweep, the OCR pipeline on two images, and exit codes
# on bad input. Usage: bench_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
cls="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
export EDGEMM_REFERENCE_DIR="$root/tools/reference"

json_check() {  # json_check NAME FILE PYTHON_EXPRESSION_OVER_r  (r = the parsed report)
  if /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: ($3) is false"
    head -c 600 "$2" | sed 's/^/  | /'
  fi
}

html_check() {  # html_check NAME FILE SVG_COUNT: the page parses as XML and has SVG_COUNT charts
  if /usr/bin/python3 -c "import sys, xml.etree.ElementTree as ET
n = len(ET.parse(sys.argv[1]).getroot().findall('.//{http://www.w3.org/2000/svg}svg'))
sys.exit(0 if n == int(sys.argv[2]) else 'svg elements: %d' % n)" "$2" "$3"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: $2 is not well-formed XML with $3 <svg> elements"
  fi
}

check help 0 "$bin" bench --help
expect_text help-compare "$tmp/out" "--compare"
expect_text help-report "$tmp/out" "--report"

check compare-ort 0 "$bin" bench "$cls" --shape x=1,3,48,192 --compare ort --threads 1,2 --iters 6 --blocks 3 \
  --warmup 1 --json --markdown "$tmp/report.md" --report "$tmp/report.html"
cp "$tmp/out" "$tmp/compare.json"
json_check schema "$tmp/compare.json" 'r["schema"] == "edgemm.bench/1" and len(r["points"]) == 2'
json_check both-runtimes "$tmp/compare.json" \
  'all([x["name"] for x in p["runtimes"]] == ["edgemm", "onnxruntime"] for p in r["points"])'
json_check iters "$tmp/compare.json" \
  'all(len(x["times_ms"]) == 6 and x["latency_ms"]["count"] == 6 for p in r["points"] for x in p["runtimes"])'
json_check ordered-stats "$tmp/compare.json" 'all(l["min"] <= l["median"] <= l["p90"] <= l["p99"] <= l["max"]
  for p in r["points"] for l in [x["latency_ms"] for x in p["runtimes"]])'
json_check threads-recorded "$tmp/compare.json" \
  '[p["runtimes"][1]["settings"]["intraOpNumThreads"] for p in r["points"]] == [1, 2] and
   [p["runtimes"][0]["settings"]["threads"] for p in r["points"]] == [1, 2]'
json_check ort-settings "$tmp/compare.json" 'all(p["runtimes"][1]["version"] == "1.30.0" and
  p["runtimes"][1]["settings"]["graphOptimizationLevel"] == "all" and
  p["runtimes"][1]["settings"]["interOpNumThreads"] == 1 for p in r["points"])'
json_check ratio "$tmp/compare.json" 'all(abs(p["runtimes"][1]["edgemm_speedup"] -
  p["runtimes"][1]["latency_ms"]["median"] / p["runtimes"][0]["latency_ms"]["median"]) < 1e-9 for p in r["points"])'
json_check memory "$tmp/compare.json" \
  'all(x["memory"]["peak_rss_bytes"] >= x["memory"]["rss_before_load_bytes"] > 0 for p in r["points"] for x in p["runtimes"])'
json_check energy-honest "$tmp/compare.json" \
  'r["energy"]["note"].startswith("energy: ") and (r["energy"]["source"] != "" or
   all(x["energy"] is None for p in r["points"] for x in p["runtimes"]))'
json_check settings "$tmp/compare.json" 'r["settings"]["iters"] == 6 and r["settings"]["blocks"] == 3 and
  r["settings"]["runtimes"] == ["edgemm", "onnxruntime"] and "--compare ort" in r["command"]'
expect_text markdown "$tmp/report.md" "| 2 | onnxruntime |"
# Two thread counts: a latency plot per point, the ratio bars, latency and RSS over the threads.
html_check report-html "$tmp/report.html" 5
expect_text report-html-runtime "$tmp/report.html" "onnxruntime"

check opencv-refusal 0 "$bin" bench "$cls" --shape x=1,3,48,192 --compare opencv --iters 2 --json \
  --report "$tmp/opencv.html"
json_check opencv-reported "$tmp/out" 'r["points"][0]["runtimes"][1]["name"] == "opencv" and
  (r["points"][0]["runtimes"][1].get("failed_stage") == "load" or len(r["points"][0]["runtimes"][1]["times_ms"]) == 2)'
if grep -q '"failed_stage": "load"' "$tmp/out"; then  # a failed peer: no ratio bars, its error in the page
  html_check opencv-html "$tmp/opencv.html" 1
  expect_text opencv-html-failure "$tmp/opencv.html" "could not load"
else
  html_check opencv-html "$tmp/opencv.html" 2
fi

check sweep 0 "$bin" bench "$cls" --shape x=1,3,48,192 --sweep width=96,192 --iters 2 --json --report "$tmp/sweep.html"
html_check sweep-html "$tmp/sweep.html" 4
json_check sweep-points "$tmp/out" '[(p["sweep"]["key"], p["sweep"]["value"], p["inputs"]) for p in r["points"]] ==
  [("width", 96, "x=[1,3,48,96] float32"), ("width", 192, "x=[1,3,48,192] float32")]'
json_check sweep-flops "$tmp/out" 'r["points"][0]["flops"] < r["points"][1]["flops"] or r["points"][1]["flops"] == 0'

mkdir -p "$tmp/set"
cp "$root/data/ocr_set/001_photo_coffee.jpg" "$root/data/ocr_set/002_page_yellow.png" "$tmp/set/"
check pipeline 0 "$bin" bench --pipeline ocr --set "$tmp/set" --compare guten --json
json_check pipeline-stages "$tmp/out" '[s["stage"] for s in r["points"][0]["runtimes"][0]["stages"]] ==
  ["decode", "det", "post", "cls", "rec"] and r["kind"] == "pipeline"'
json_check pipeline-one-pass "$tmp/out" 'r["settings"]["warmup"] == 1 and r["settings"]["iters"] == 2 and
  [(x["name"], len(x["times_ms"])) for x in r["points"][0]["runtimes"]] == [("edgemm", 2), ("guten-ocr", 2)]'
check pipeline-bad-peer 2 "$bin" bench --pipeline ocr --set "$tmp/set" --compare ort

check unknown-peer 2 "$bin" bench "$cls" --shape x=1,3,48,192 --compare tensorrt
check iters-and-seconds 2 "$bin" bench "$cls" --iters 3 --seconds 1
check no-model 2 "$bin" bench
check missing-model 6 "$bin" bench "$tmp/nope.onnx"
: >"$tmp/empty.onnx"
check empty-model 3 "$bin" bench "$tmp/empty.onnx"
check symbolic-without-shape 2 "$bin" bench "$cls" --iters 1
expect_text symbolic-message "$tmp/err" "is symbolic"
check wrong-input-name 2 "$bin" bench "$cls" --shape image=1,3,48,192
check bad-sweep 2 "$bin" bench "$cls" --shape x=1,3,48,192 --sweep depth=1,2
check negative-threads 2 "$bin" bench "$cls" --shape x=1,3,48,192 --threads -1  # 0 = all cores (guards_cli)
check absurd-shape 5 "$bin" bench "$cls" --shape x=1,3,100000,100000
check pipeline-with-sweep 2 "$bin" bench --pipeline ocr --set "$tmp/set" --sweep size=320,640
check model-with-set 2 "$bin" bench "$cls" --shape x=1,3,48,192 --set "$tmp/set"
check seconds-nan 2 "$bin" bench "$cls" --shape x=1,3,48,192 --seconds nan
check duplicate-threads 2 "$bin" bench "$cls" --shape x=1,3,48,192 --threads 1,1
check duplicate-shape 2 "$bin" bench "$cls" --shape x=1,3,48,192 --shape x=1,3,48,96
check report-over-model 2 "$bin" bench "$cls" --shape x=1,3,48,192 --report "$cls"
check unwritable-report 6 "$bin" bench "$cls" --shape x=1,3,48,192 --report "$tmp/no_dir/r.html"
expect_text unwritable-message "$tmp/err" "No such file or directory"
/usr/bin/python3 -c 'import numpy; numpy.save("'"$tmp"'/x_f64.npy", numpy.zeros((1, 3, 48, 192)))'
check npy-wrong-dtype 2 "$bin" bench "$cls" --input x="$tmp/x_f64.npy"
mkdir -p "$tmp/badset" && head -c 2000 /dev/urandom >"$tmp/badset/corrupt.png"
check edgemm-fails-exit-code 2 "$bin" bench --pipeline ocr --set "$tmp/badset" --json
json_check edgemm-failure-reported "$tmp/out" 'r["points"][0]["runtimes"][0]["failed_stage"] == "run" and
  r["points"][0]["runtimes"][0]["failed_code"] == "InvalidArgument"'
check pipeline-no-set 2 "$bin" bench --pipeline ocr
check pipeline-empty-set 6 "$bin" bench --pipeline ocr --set "$tmp/empty_dir_missing"
check backend-opencv 0 "$bin" bench "$cls" --shape x=1,3,48,192 --backend opencv --iters 2 --warmup 0 --json
json_check backend-opencv-settings "$tmp/out" 'r["points"][0]["runtimes"][0]["settings"]["backend"] == "opencv" and
  r["points"][0]["runtimes"][0]["settings"]["placement"] == {"nodes": 180, "on_backend": 180, "fallback_nodes": 0}'
check backend-opencv-fp16 2 "$bin" bench "$cls" --shape x=1,3,48,192 --backend opencv --precision fp16
expect_text backend-opencv-fp16-message "$tmp/err" "does not support precision 'fp16'"
# The published PP-OCRv4 files have dynamic shapes: on opencv every node falls back, and says so.
check backend-with-pipeline 0 "$bin" bench --pipeline ocr --set "$tmp/set" --backend opencv --json
json_check backend-with-pipeline-placement "$tmp/out" 'r["points"][0]["runtimes"][0]["settings"]["backend"] == "opencv" and
  all(p["on_backend"] == 0 and p["fallback_nodes"] == p["nodes"] > 100
      for p in r["points"][0]["runtimes"][0]["settings"]["placement"].values())'
expect_text backend-with-pipeline-warning "$tmp/err" "OpenCV DNN 4.6 needs static shapes"
check backend-with-pipeline-fp16 2 "$bin" bench --pipeline ocr --set "$tmp/set" --backend opencv --precision fp16
check json-error 2 "$bin" bench "$cls" --compare nope --json
expect_text json-error-body "$tmp/out" '"error"'

report_and_exit
