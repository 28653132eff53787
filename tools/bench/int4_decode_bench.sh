#!/usr/bin/env bash
# Decoder-shaped MatMul 1..8 × 2048 by 2048 × 2048 as float, int8 QDQ (Int8MatMul), int4 MatMulNBits
# with float32 activations (--accuracy-level 0) and with int8 activations (accuracy_level 4, edgemm
# quantize's default): edgemm bench medians at 1 and 2 threads, and each one's ratio to int8.
# Usage: tools/bench/int4_decode_bench.sh EDGEMM_BINARY OUTDIR [ITERS]. Measure on a quiet machine.
set -euo pipefail
bin="$(realpath "$1")"
out="$2"
iters="${3:-300}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$out"
/usr/bin/python3 "$root/tools/fixtures/make_decode_matmul.py" "$out"
"$bin" quantize "$out/float.onnx" -o "$out/int8.onnx" --scheme int8 --calib "$out/calib" --samples 8 \
  --no-speed-check >/dev/null
"$bin" quantize "$out/float.onnx" -o "$out/int4.onnx" --scheme int4-weight --accuracy-level 0 >/dev/null
"$bin" quantize "$out/float.onnx" -o "$out/int4_a8.onnx" --scheme int4-weight --accuracy-level 4 >/dev/null
for m in float int8 int4 int4_a8; do
  "$bin" bench "$out/$m.onnx" --shape a=1,2048 --sweep batch=1,2,4,8 --threads 1,2 --iters "$iters" --json \
    >"$out/$m.json"
done
/usr/bin/python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
names = {'float': 'float32 MatMul', 'int8': 'int8 QDQ (Int8MatMul)', 'int4': 'int4 MatMulNBits, A float32',
         'int4_a8': 'int4 MatMulNBits, A int8 (accuracy_level 4)'}
med = {}
for m in names:
    for p in json.load(open(os.path.join(out, m + '.json')))['points']:
        r = [x for x in p['runtimes'] if x['name'] == 'edgemm'][0]
        med[(m, p['threads'], p['sweep']['value'])] = r['latency_ms']['median']
print('| model | threads | ' + ' | '.join(f'M={b} ms (vs int8)' for b in (1, 2, 4, 8)) + ' |')
print('|---|---|' + '---|' * 4)
for m, label in names.items():
    for t in (1, 2):
        cells = [f"{med[(m, t, b)]:.3f} ({med[(m, t, b)] / med[('int8', t, b)]:.2f}x)" for b in (1, 2, 4, 8)]
        print(f'| {label} | {t} | ' + ' | '.join(cells) + ' |')
PY
