#!/usr/bin/env bash
# PP-OCRv4 det (1x3x640x640) and rec (1x3x48x320) latency, edgemm vs ONNX Runtime 1.30, same
# inputs and thread counts, in one run: blocks of runs alternate between the two runtimes so
# drift on a shared machine hits both; the reported figure is the median over all timed runs.
# Usage: tools/bench/ppocr_vs_ort.sh [BLOCKS=5] [RUNS_PER_BLOCK=10]  (needs build/ and build/parity)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
blocks="${1:-5}" runs="${2:-10}"
edgemm="$root/build/bin/edgemm" models="$root/models/ppocrv4" refs="$root/build/parity"
[ -f "$refs/cases.json" ] || bash "$root/tools/reference/make_parity_refs.sh" "$refs" >/dev/null
median() { /usr/bin/python3 -c 'import sys,statistics; print("%.2f" % statistics.median(float(x) for x in sys.stdin.read().split()))'; }
printf '| model | input | threads | edgemm median ms | ORT median ms | edgemm / ORT |\n|---|---|---|---|---|---|\n'
for spec in "det:ch_PP-OCRv4_det_infer.onnx:det_photo_640x640:1x3x640x640" "rec:ch_PP-OCRv4_rec_infer.onnx:rec_photo_en:1x3x48x320"; do
  IFS=: read -r name model case shape <<<"$spec"
  for threads in 1 2; do
    ours="" theirs=""
    for ((b = 0; b < blocks; b++)); do
      ours+=" $("$edgemm" run "$models/$model" --input x="$refs/$case/input_x.npy" --threads "$threads" \
        --warmup 2 --repeat "$runs" --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(map(str, json.load(sys.stdin)["times_ms"])))')"
      theirs+=" $(node "$root/tools/reference/ort_bench.js" "$models/$model" --input x="$refs/$case/input_x.npy" \
        --threads "$threads" --warmup 2 --repeat "$runs" | /usr/bin/python3 -c 'import json,sys; print(" ".join(map(str, json.load(sys.stdin)["times_ms"])))')"
    done
    m1=$(echo "$ours" | median) m2=$(echo "$theirs" | median)
    printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$shape" "$threads" "$m1" "$m2" \
      "$(/usr/bin/python3 -c "print('%.2f' % ($m1 / $m2))")"
  done
done
