#!/usr/bin/env bash
# Issue 28 ("no silent wrong answers"): fused epilogues and elementwise chains propagate NaN and
# +-Inf as the unfused ONNX ops do. tests/parity/nonfinite_models.py writes small graphs that
# edgemm fuses (Conv / ConvTranspose / MatMul epilogues, elementwise chains, an Int8Conv with a
# float epilogue) with NaN, +Inf and -Inf in their inputs. Oracle: ONNX Runtime 1.30
# (tools/reference/ort_run.js, CPU, 1 thread, graphOptimizationLevel disabled: every op as
# written). For each case, `edgemm inspect --optimized` must show the fused op and none of the
# ops it absorbs, and `edgemm run` (passes on) must give NaN exactly where ONNX Runtime does, the
# same infinities, and finite values within 1e-4 relative (+1e-5 absolute), on 1 thread (and 2
# for the default variant).
# The kernel variants: as this CPU selects them (AVX-512 oneDNN kernels, edgemm's AVX-512 MatMul
# panels, the AVX2 step loops), oneDNN capped at AVX2 (ONEDNN_MAX_CPU_ISA=AVX2), the plain
# reference kernels (EDGEMM_ONEDNN=0), and for MatMul epilogues the bfloat16 panels
# (--precision bf16, on CPUs with AVX512_BF16: NaN and infinities only, bf16 rounds the rest).
# Usage: nonfinite_test.sh EDGEMM_BINARY REPO_ROOT. Exits 77 (skipped) without node or
# tools/reference/node_modules (scripts/setup.sh installs them).
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
if [ ! -d "$root/tools/reference/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/onnxruntime-node is missing (run scripts/setup.sh)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/check_lib.sh"

/usr/bin/python3 "$root/tests/parity/nonfinite_models.py" "$tmp/models" || { echo "FAIL: writing the models"; exit 1; }

# same_values NAME WANT.npy GOT.npy [RTOL]: NaN positions equal, infinities equal, finite values
# within RTOL relative (default 1e-4; "none" skips them).
same_values() {
  if /usr/bin/python3 - "$2" "$3" "${4:-1e-4}" >"$tmp/cmp" 2>&1 <<'EOF'; then
import sys
import numpy as np
want, got = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol = None if sys.argv[3] == 'none' else float(sys.argv[3])
if want.shape != got.shape:
    sys.exit(f'shape {got.shape}, expected {want.shape}')
problems = []
nan_w, nan_g = np.isnan(want), np.isnan(got)
if (nan_w != nan_g).any():
    i = np.argwhere(nan_w != nan_g)[0]
    problems.append(f'{int((nan_w != nan_g).sum())} NaN positions differ, first {tuple(i)}: '
                    f'got {got[tuple(i)]}, expected {want[tuple(i)]}')
inf_w = np.isinf(want)
bad_inf = (inf_w | np.isinf(got)) & ~(nan_w | nan_g) & (want != got)
if bad_inf.any():
    i = np.argwhere(bad_inf)[0]
    problems.append(f'{int(bad_inf.sum())} infinities differ, first {tuple(i)}: '
                    f'got {got[tuple(i)]}, expected {want[tuple(i)]}')
finite = np.isfinite(want) & np.isfinite(got)
err = np.abs(got[finite] - want[finite]) - (rtol or 0) * np.abs(want[finite]) - 1e-5
if rtol is not None and (err > 0).any():
    problems.append(f'{int((err > 0).sum())} finite values off by more than {rtol} relative')
print(f'{int(nan_w.sum())} NaN, {int(inf_w.sum())} inf, {int(finite.sum())} finite compared')
sys.exit('; '.join(problems) if problems else 0)
EOF
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: $(tail -1 "$tmp/cmp")"
  fi
}

while IFS=$'\t' read -r name fused absorbed pairs; do
  model="$tmp/models/$name.onnx"
  inputs=()
  for p in $pairs; do inputs+=(--input "$p"); done
  node "$root/tools/reference/ort_run.js" "$model" "${inputs[@]}" --output-dir "$tmp/ort/$name" --threads 1 \
    --opt-level disabled >/dev/null 2>"$tmp/err" || { failed=$((failed + 1)); echo "FAIL $name-ort: $(head -3 "$tmp/err")"; continue; }
  check "$name-inspect" 0 "$bin" inspect "$model" --optimized --json
  if /usr/bin/python3 - "$tmp/out" "$fused" "$absorbed" >"$tmp/fusion" 2>&1 <<'EOF'; then
import json, sys
hist = json.load(open(sys.argv[1]))['op_histogram']
fused, absorbed = 'com.edgemm.' + sys.argv[2], sys.argv[3].split(',')
left = [op for op in absorbed if op in hist]
if fused not in hist or left:
    sys.exit(f'no {fused} in {hist}' if fused not in hist else f'{left} not fused: {hist}')
EOF
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name-fused: $(cat "$tmp/fusion")"
  fi
  variants="default avx2 reference"
  if [ "$fused" = FusedMatMul ] && grep -q avx512_bf16 /proc/cpuinfo; then variants="$variants bf16"; fi
  for variant in $variants; do
    case "$variant" in
      avx2) env=(env ONEDNN_MAX_CPU_ISA=AVX2) ;;
      reference) env=(env EDGEMM_ONEDNN=0) ;;
      *) env=(env) ;;
    esac
    extra=() rtol=1e-4
    if [ "$variant" = bf16 ]; then extra=(--precision bf16) rtol=none; fi
    threads_list="1"
    [ "$variant" = default ] && threads_list="1 2"
    for threads in $threads_list; do
      run="$name-$variant-${threads}t"
      check "$run" 0 "${env[@]}" "$bin" run "$model" "${inputs[@]}" "${extra[@]}" --threads "$threads" \
        --output-dir "$tmp/edgemm/$run"
      same_values "$run" "$tmp/ort/$name/y.npy" "$tmp/edgemm/$run/y.npy" "$rtol"
    done
  done
done <"$tmp/models/cases.tsv"
report_and_exit
