#!/usr/bin/env bash
# Writes the accuracy section of docs/ocr.md (between <!-- ocr-accuracy:begin and :end -->):
# CER, precision and recall of edgemm (with and without the angle classifier) and of the Guten
# OCR peer on data/ocr_set and the whole document set (data/doc_set, rendered into the build
# folder), per orientation subset and tag, and edgemm on both sets turned by 90, 180 and 270
# degrees (the document set: every fourth page). One command, from the repository root:
#   bash tools/bench/make_ocr_md.sh [BUILD_DIR]
# Takes about an hour on 2 cores (the peer's runs are cached in ~/.cache/edgemm/peer, as the
# ocr_eval test caches them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
bin="$build/bin/edgemm"
out="$build/ocr_md"
py=/usr/bin/python3
cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/peer"
mkdir -p "$out" "$cache"
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"

peer_predictions() {  # the same cache key as tests/ocr/ocr_eval_test.sh
  local key
  key=$({
    $py -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["images"], sort_keys=True))' "$1/labels.json"
    cat "$root/tools/reference/guten_ocr.js" "$root/tools/reference/package-lock.json" "$EDGEMM_MODELS_DIR"/*
  } | sha256sum | cut -c1-24)
  if [ ! -f "$cache/guten-$key.json" ]; then
    node "$root/tools/reference/guten_ocr.js" --set "$1" --out "$cache/guten-$key.json.tmp" 2>"$out/guten.log"
    mv "$cache/guten-$key.json.tmp" "$cache/guten-$key.json"
  fi
  cp "$cache/guten-$key.json" "$2"
}

doc="$build/doc_set"
cmp -s "$doc/labels.json" "$root/data/doc_set/labels.json" ||
  $py "$root/tools/datasets/make_doc_set.py" --out "$doc" --check "$root/data/doc_set/labels.json"
$py "$root/tools/datasets/pick_set.py" --set "$doc" --every 4 --out "$out/doc_quarter"
declare -A sets=([ocr_set]="$root/data/ocr_set" [doc_set]="$doc")
for name in ocr_set doc_set; do
  echo "== $name" >&2
  peer_predictions "${sets[$name]}" "$out/${name}_guten_predictions.json"
  "$bin" eval ocr --set "${sets[$name]}" --predictions "$out/${name}_guten_predictions.json" --json >"$out/${name}_guten.json"
  "$bin" eval ocr --set "${sets[$name]}" --threads 2 --no-cls --json >"$out/${name}_no_cls.json"
  "$bin" eval ocr --set "${sets[$name]}" --threads 2 --json >"$out/${name}_edgemm.json"
done
"$bin" eval ocr --set "$out/doc_quarter" --threads 2 --json >"$out/doc_quarter_edgemm.json"
for degrees in 90 180 270; do
  for name in ocr_set doc_quarter; do
    source_set="$root/data/ocr_set"
    [ "$name" = doc_quarter ] && source_set="$out/doc_quarter"
    $py "$root/tools/datasets/turn_set.py" --set "$source_set" --degrees "$degrees" --out "$out/${name}_$degrees" 2>/dev/null
    "$bin" eval ocr --set "$out/${name}_$degrees" --threads 2 --json >"$out/${name}_${degrees}_edgemm.json"
  done
done

$py - "$out" "$out/section.md" <<'PY'
import json, sys
out, section = sys.argv[1], sys.argv[2]
load = lambda name: json.load(open(f"{out}/{name}.json"))
def cell(t, bold=False):
    text = f"{100 * t['cer']:.2f} % · P {t['precision']:.3f} R {t['recall']:.3f}"
    return f"**{text}**" if bold else text
lines = ["<!-- ocr-accuracy:begin (tools/bench/make_ocr_md.sh) -->"]
for name, title in (("ocr_set", "data/ocr_set (20 images, 161 lines)"),
                    ("doc_set", "document set (104 pages, 4087 scored lines)")):
    g, n, e = load(f"{name}_guten"), load(f"{name}_no_cls"), load(f"{name}_edgemm")
    lines += ["", f"**{title}**: CER, line precision P and recall R", "",
              "| subset | edgemm | edgemm `--no-cls` | Guten OCR |", "| --- | ---: | ---: | ---: |",
              f"| all ({len(e['per_image'])} images, {e['overall']['truth_chars']} characters) | "
              f"{cell(e['overall'], e['overall']['cer'] <= g['overall']['cer'])} | {cell(n['overall'])} | {cell(g['overall'])} |"]
    for subset in sorted(e["subsets"]):
        t = e["subsets"][subset]
        lines.append(f"| {subset} | {cell(t)} | {cell(n['subsets'][subset])} | {cell(g['subsets'][subset])} |")
    for tag in sorted(e["by_tag"]):
        lines.append(f"| tag {tag} | {cell(e['by_tag'][tag])} | {cell(n['by_tag'][tag])} | {cell(g['by_tag'][tag])} |")
lines += ["", "**Turned images** (edgemm with its defaults; the document set's every fourth page, 26 pages):", "",
          "| set | upright | turned 90° | turned 180° | turned 270° |", "| --- | ---: | ---: | ---: | ---: |"]
for name, upright in (("ocr_set", "ocr_set_edgemm"), ("doc_quarter", "doc_quarter_edgemm")):
    row = [f"{100 * load(upright)['overall']['cer']:.2f} %"]
    row += [f"{100 * load(f'{name}_{d}_edgemm')['overall']['cer']:.2f} %" for d in (90, 180, 270)]
    lines.append(f"| {name} | " + " | ".join(row) + " |")
lines += ["", "<!-- ocr-accuracy:end -->", ""]
open(section, "w").write("\n".join(lines))
PY
$py "$root/tools/bench/replace_doc_section.py" ocr-accuracy "$root/docs/ocr.md" "$out/section.md"
cat "$out/section.md"
