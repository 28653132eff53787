#!/usr/bin/env bash
# OCR accuracy on the committed labelled sets, against the Guten OCR peer (the same PP-OCRv4
# files on ONNX Runtime 1.30) and against edgemm itself in other orientations:
#  - data/ocr_set (20 images) and every fourth page of the document set (data/doc_set, rendered
#    by tools/datasets/make_doc_set.py into the build folder, checked against the committed
#    labels): edgemm's CER is no worse than the peer's overall, on the upright images, on the
#    page, photo and rotated tags and per language;
#  - with the angle classifier, upright images read no worse than without it;
#  - the same images turned by 90, 180 and 270 degrees read within 1 CER point of upright;
#  - regression: CERs stay within a stated margin of those measured when this landed.
# The peer's predictions are cached outside the build (EDGEMM_CACHE_DIR, default
# ~/.cache/edgemm), keyed by the set's labels, the peer script, its npm lock file and the models;
# so is the rendered document set, keyed by its generator and labels.
# Usage: ocr_eval_test.sh EDGEMM_BINARY REPO_ROOT OUT_DIR
set -euo pipefail
bin="$1"
root="$2"
out="$3"
mkdir -p "$out"
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"
py=/usr/bin/python3
cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/peer"
mkdir -p "$cache"

# Guten OCR's predictions for set $1 into $2, from the cache when the inputs are unchanged.
peer_predictions() {
  local key
  key=$({
    $py -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["images"], sort_keys=True))' "$1/labels.json"
    cat "$root/tools/reference/guten_ocr.js" "$root/tools/reference/package-lock.json" "$EDGEMM_MODELS_DIR"/*
  } | sha256sum | cut -c1-24)
  if [ ! -f "$cache/guten-$key.json" ]; then
    echo "running the Guten OCR peer on $1 (cached afterwards as $cache/guten-$key.json)"
    node "$root/tools/reference/guten_ocr.js" --set "$1" --out "$cache/guten-$key.json.tmp" 2>"$out/guten.log"
    mv "$cache/guten-$key.json.tmp" "$cache/guten-$key.json"
  fi
  cp "$cache/guten-$key.json" "$2"
}

# edgemm's evaluation of set $1 (extra options after $3) into $3.
evaluate() {
  local set="$1" report="$2"
  shift 2
  "$bin" eval ocr --set "$set" --threads 2 --json "$@" >"$report"
}

# The document set, made unless the build folder already holds it (labels equal to the committed
# ones); a rendering is kept outside the clone, keyed by the generator and the labels, and copied.
doc="$(dirname "$out")/doc_set"
if ! cmp -s "$doc/labels.json" "$root/data/doc_set/labels.json"; then
  doc_key=$(cat "$root/tools/datasets/make_doc_set.py" "$root/data/doc_set/labels.json" | sha256sum | cut -c1-24)
  doc_cache="$(dirname "$cache")/doc_set-$doc_key"
  if [ ! -f "$doc_cache/labels.json" ]; then
    rm -rf "$doc_cache.tmp"
    $py "$root/tools/datasets/make_doc_set.py" --out "$doc_cache.tmp" --check "$root/data/doc_set/labels.json" \
      2>"$out/make_doc_set.log"
    mv -T "$doc_cache.tmp" "$doc_cache"
  fi
  rm -rf "$doc"
  cp -r "$doc_cache" "$doc"
fi
$py "$root/tools/datasets/pick_set.py" --set "$doc" --every 4 --out "$out/doc_ci"
$py "$root/tools/datasets/pick_set.py" --set "$doc" --every 13 --first 4 --out "$out/doc_turn"
for degrees in 90 180 270; do
  $py "$root/tools/datasets/turn_set.py" --set "$root/data/ocr_set" --degrees "$degrees" --out "$out/ocr_set_$degrees" 2>/dev/null
  $py "$root/tools/datasets/turn_set.py" --set "$out/doc_turn" --degrees "$degrees" --out "$out/doc_turn_$degrees" 2>/dev/null
done

for set in ocr_set doc_ci; do
  dir="$root/data/ocr_set"
  [ "$set" = doc_ci ] && dir="$out/doc_ci"
  peer_predictions "$dir" "$out/${set}_guten_predictions.json"
  "$bin" eval ocr --set "$dir" --predictions "$out/${set}_guten_predictions.json" --json >"$out/${set}_guten.json"
  evaluate "$dir" "$out/${set}_edgemm_no_cls.json" --no-cls
  evaluate "$dir" "$out/${set}_edgemm.json"
done
evaluate "$out/doc_turn" "$out/doc_turn_edgemm.json"
for degrees in 90 180 270; do
  evaluate "$out/ocr_set_$degrees" "$out/ocr_set_${degrees}_edgemm.json"
  evaluate "$out/doc_turn_$degrees" "$out/doc_turn_${degrees}_edgemm.json"
done

$py - "$out" <<'PY'
import json, sys
out = sys.argv[1]
load = lambda name: json.load(open(f"{out}/{name}.json"))
failures = []

def check(name, value, limit, below=True):
    ok = value <= limit if below else value >= limit
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {value:.4f} {'<=' if below else '>='} {limit:.4f}")
    if not ok:
        failures.append(name)

def cer(report, subset=None, tag=None):
    if tag:
        return report["by_tag"][tag]["cer"]
    return (report["subsets"][subset] if subset else report["overall"])["cer"]

for set_name in ("ocr_set", "doc_ci"):
    guten, edgemm, no_cls = load(f"{set_name}_guten"), load(f"{set_name}_edgemm"), load(f"{set_name}_edgemm_no_cls")
    for report in (guten, edgemm, no_cls):
        if report["failed_images"]:
            failures.append(f"{set_name} {report['tool']}: {report['failed_images']} images failed")
    # No worse than the peer, overall, upright and on every tag.
    check(f"{set_name}: CER vs Guten", cer(edgemm), cer(guten))
    check(f"{set_name}: upright CER vs Guten", cer(edgemm, "upright"), cer(guten, "upright"))
    # The subsets issue 28 names (page, photo, rotated) and the languages; the finer tags (blur,
    # dpi_low, ...) are printed for the record (docs/ocr.md says where edgemm is behind).
    for tag in sorted(guten["by_tag"]):
        if tag in ("page", "photo", "rotated", "lang_en", "lang_zh"):
            check(f"{set_name}: tag {tag} CER vs Guten", cer(edgemm, tag=tag), cer(guten, tag=tag))
        else:
            print(f"info {set_name}: tag {tag} CER {cer(edgemm, tag=tag):.4f}, Guten {cer(guten, tag=tag):.4f}")
    # The classifier never makes upright images read worse (1e-4: rounding only).
    check(f"{set_name}: upright CER with cls vs without", cer(edgemm, "upright"), cer(no_cls, "upright") + 1e-4)

# Quarter and half turns read within 1 point of the same images upright.
upright = {"ocr_set": load("ocr_set_edgemm"), "doc_turn": load("doc_turn_edgemm")}
for set_name, report in upright.items():
    for degrees in (90, 180, 270):
        turned = load(f"{set_name}_{degrees}_edgemm")
        check(f"{set_name} turned {degrees}: CER vs upright + 0.01", cer(turned), cer(report) + 0.01)

# Regression: measured when this landed (docs/ocr.md), plus a stated margin.
check("regression ocr_set CER (landed 0.0158)", cer(load("ocr_set_edgemm")), 0.0158 + 0.01)
check("regression ocr_set upside-down CER (landed 0.0034)", cer(load("ocr_set_edgemm"), "turned_180"), 0.0034 + 0.02)
check("regression doc_ci CER (landed 0.0200)", cer(load("doc_ci_edgemm")), 0.0200 + 0.005)
check("regression ocr_set recall", load("ocr_set_edgemm")["overall"]["recall"], 0.97, below=False)
check("regression doc_ci recall", load("doc_ci_edgemm")["overall"]["recall"], 0.97, below=False)
sys.exit(1 if failures else 0)
PY
