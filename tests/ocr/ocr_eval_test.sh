#!/usr/bin/env bash
# OCR accuracy on the committed labelled set (data/ocr_set, made by make_ocr_set.py --seed 1):
#  - edgemm --no-cls is at most 1 CER point worse than the Guten OCR peer (same PP-OCRv4 model
#    files on ONNX Runtime 1.30), overall and on the upright images;
#  - with the angle classifier the upside-down images are read (the peer reads none of them);
#  - regression: CERs stay within a stated margin of those measured when the pipeline landed.
# Usage: ocr_eval_test.sh EDGEMM_BINARY REPO_ROOT OUT_DIR
set -euo pipefail
bin="$1"
root="$2"
out="$3"
mkdir -p "$out"
set_dir="$root/data/ocr_set"
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"

node "$root/tools/reference/guten_ocr.js" --set "$set_dir" --out "$out/guten_predictions.json" 2>"$out/guten.log"
"$bin" eval ocr --set "$set_dir" --predictions "$out/guten_predictions.json" --json >"$out/guten_eval.json"
"$bin" eval ocr --set "$set_dir" --threads 2 --no-cls --json >"$out/edgemm_no_cls_eval.json"
"$bin" eval ocr --set "$set_dir" --threads 2 --json >"$out/edgemm_eval.json"

/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
guten = json.load(open(f"{out}/guten_eval.json"))
no_cls = json.load(open(f"{out}/edgemm_no_cls_eval.json"))
cls = json.load(open(f"{out}/edgemm_eval.json"))
failures = []

def cer(report, subset=None):
    return (report["subsets"][subset] if subset else report["overall"])["cer"]

def check(name, value, limit, below=True):
    ok = value <= limit if below else value >= limit
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {value:.4f} {'<=' if below else '>='} {limit:.4f}")
    if not ok:
        failures.append(name)

for report in (guten, no_cls, cls):
    if report["failed_images"]:
        failures.append(f"{report['tool']}: {report['failed_images']} images failed")
# Against the peer (issue 3: at most the peer's CER + 1 point).
check("no-cls CER overall vs Guten + 0.01", cer(no_cls), cer(guten) + 0.01)
check("no-cls CER upright vs Guten + 0.01", cer(no_cls, "normal"), cer(guten, "normal") + 0.01)
# The angle classifier reads upside-down images; without it (and for the peer) they are lost.
check("cls CER upside-down", cer(cls, "upside_down"), 0.15)
check("Guten CER upside-down (reads none)", cer(guten, "upside_down"), 0.9, below=False)
check("no-cls CER upside-down (reads none)", cer(no_cls, "upside_down"), 0.9, below=False)
# Regression: measured when the pipeline landed (docs/ocr.md), plus a stated margin of 1.5 points.
check("regression no-cls CER upright (landed 0.0385)", cer(no_cls, "normal"), 0.0385 + 0.015)
check("regression cls CER overall (landed 0.0509)", cer(cls), 0.0509 + 0.015)
check("regression cls recall", cls["overall"]["recall"], 0.97, below=False)
check("regression cls precision", cls["overall"]["precision"], 0.97, below=False)
sys.exit(1 if failures else 0)
PY
