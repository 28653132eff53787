#!/usr/bin/env bash
# OCR end to end, edgemm vs the Guten OCR peer (the same PP-OCRv4 files on ONNX Runtime 1.30),
# on the committed set (data/ocr_set, 20 images) and on one large photo (set image 016 enlarged
# 4×, 3468×2188), at 1 and 2 threads. Rounds alternate between the two tools so drift on
# a shared machine hits both. Per-image times are medians over all images and rounds; peak RSS
# is the largest of the rounds (/usr/bin/time). Guten reports only a total per image (decode,
# det, rec; no angle classifier), so edgemm is also shown with --no-cls.
# Usage: tools/bench/ocr_vs_guten.sh [ROUNDS=3]   (needs build/bin/edgemm; prints Markdown)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds="${1:-3}"
edgemm="$root/build/bin/edgemm"
guten="$root/tools/reference/guten_ocr.js"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"

large="$out/large_photo.jpg"
/usr/bin/python3 -c "
from PIL import Image
im = Image.open('$root/data/ocr_set/016_photo_rocket.jpg')
im.resize((im.width * 4, im.height * 4), Image.LANCZOS).save('$large', quality=90)"
large_runs=("$large" "$large" "$large" "$large")  # first one cold; all counted

timed() {  # timed NAME STDOUT CMD...: peak RSS (KiB) to $out/NAME.rss, stdout to STDOUT
  local rss="$out/$1.rss" stdout="$2"
  shift 2
  /usr/bin/time -f %M -o "$rss" "$@" >"$stdout"
}
for threads in 1 2; do
  for ((r = 0; r < rounds; r++)); do
    timed "edgemm_set_t${threads}_r$r" /dev/null "$edgemm" eval ocr --set "$root/data/ocr_set" --threads "$threads" \
      --json --save-predictions "$out/edgemm_set_t${threads}_r$r.json"
    timed "edgemm-no-cls_set_t${threads}_r$r" /dev/null "$edgemm" eval ocr --set "$root/data/ocr_set" \
      --threads "$threads" --no-cls --json --save-predictions "$out/edgemm-no-cls_set_t${threads}_r$r.json"
    timed "guten_set_t${threads}_r$r" /dev/null node "$guten" --set "$root/data/ocr_set" --threads "$threads" \
      --out "$out/guten_set_t${threads}_r$r.json"
    timed "edgemm_large_t${threads}_r$r" "$out/edgemm_large_t${threads}_r$r.json" "$edgemm" ocr "${large_runs[@]}" \
      --threads "$threads" --json
    timed "edgemm-no-cls_large_t${threads}_r$r" "$out/edgemm-no-cls_large_t${threads}_r$r.json" "$edgemm" ocr \
      "${large_runs[@]}" --threads "$threads" --no-cls --json
    timed "guten_large_t${threads}_r$r" /dev/null node "$guten" "${large_runs[@]}" --threads "$threads" \
      --out "$out/guten_large_t${threads}_r$r.json"
  done
done

/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
stages = ["decode", "det", "post", "cls", "rec", "total"]
print("| input | threads | tool | total ms (median/image) | decode | det | post | cls | rec | peak RSS MiB | Guten / tool |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for data in ("set", "large"):
    for threads in (1, 2):
        rows = {}
        for tool in ("edgemm", "edgemm-no-cls", "guten"):
            times = {s: [] for s in stages}
            rss = 0
            for r in range(rounds):
                doc = json.load(open(f"{out}/{tool}_{data}_t{threads}_r{r}.json"))
                for image in doc["images"]:
                    for s in stages:
                        if s in image.get("timings_ms", {}):
                            times[s].append(image["timings_ms"][s])
                rss = max(rss, int(open(f"{out}/{tool}_{data}_t{threads}_r{r}.rss").read().split()[-1]))
            rows[tool] = ({s: statistics.median(v) for s, v in times.items() if v}, rss / 1024)
        for tool, (med, rss) in rows.items():
            cells = [f"{med[s]:.1f}" if s in med else "–" for s in stages[:-1]]
            ratio = rows["guten"][0]["total"] / med["total"]
            label = "large photo 3468×2188 (4 runs)" if data == "large" else "data/ocr_set (20 images)"
            print(f"| {label} | {threads} | {tool} | {med['total']:.1f} | " + " | ".join(cells) +
                  f" | {rss:.0f} | {ratio:.2f} |")
PY
