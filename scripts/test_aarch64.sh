#!/usr/bin/env bash
# Cross-builds edgemm for aarch64 and runs its tests under qemu-user (docs/aarch64.md).
# Usage: scripts/test_aarch64.sh [extra ctest args...]
#
# Environment:
#   EDGEMM_AARCH64_BUILD  build folder (default build-aarch64; the sysroot goes in its sysroot/)
#   EDGEMM_AARCH64_LABELS ctest label regex (default 'unit|conformance|aarch64_cli'; 'aarch64_ci' = the CI subset)
#   EDGEMM_QEMU_CPU       emulated CPU (default cortex-a76, the RK3588's big core; 'max' has SVE)
#   EDGEMM_JOBS           compile jobs (default 2); compiles run under `nice -n 10`
#   EDGEMM_CTEST_JOBS     tests run at once (default 2; each test is single-threaded, OMP_NUM_THREADS=1)
#   EDGEMM_AARCH64_PYTHON the Python package for arm64 and its test aarch64_python (default ON; OFF skips
#                         both; passed on every configure: a build folder made before had it OFF)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGEMM_AARCH64_BUILD:-$root/build-aarch64}"
labels="${EDGEMM_AARCH64_LABELS:-unit|conformance|aarch64_cli}"
jobs="${EDGEMM_JOBS:-2}"
ctest_jobs="${EDGEMM_CTEST_JOBS:-2}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
t_start=$(date +%s)

bash "$root/scripts/aarch64_sysroot.sh" "$build"
t_sysroot=$(date +%s)

cmake_args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
            -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake"
            -DEDGEMM_AARCH64_SYSROOT="$build/sysroot" -DEDGEMM_BUILD_PYTHON="${EDGEMM_AARCH64_PYTHON:-ON}")
[ -n "${EDGEMM_QEMU_CPU:-}" ] && cmake_args+=(-DEDGEMM_QEMU_CPU="$EDGEMM_QEMU_CPU")
echo "[aarch64] configure: cmake ${cmake_args[*]}"
cmake "${cmake_args[@]}" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
bash "$root/scripts/unity_relative.sh" "$build" "$root"
command -v ccache >/dev/null && ccache --zero-stats >/dev/null 2>&1 || true
echo "[aarch64] build (nice -n 10, -j$jobs)"
nice -n 10 ninja -C "$build" -j"$jobs"
t_build=$(date +%s)
ccache_line=""
if command -v ccache >/dev/null; then
  ccache_line="$(ccache --print-stats 2>/dev/null | awk -F'\t' '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit|cache_miss)$/ {s[$1]=$2} END {printf "ccache: %d hits, %d misses", s["direct_cache_hit"]+s["preprocessed_cache_hit"], s["cache_miss"]}')"
fi

echo "[aarch64] ctest -L '$labels' under qemu-aarch64 -cpu $(sed -n 's/^EDGEMM_QEMU_CPU:[A-Z]*=//p' "$build/CMakeCache.txt" | grep . || echo cortex-a76) (OMP_NUM_THREADS=1)"
touch "$build/.ctest-start"
set +e
(cd "$build" && OMP_NUM_THREADS=1 nice -n 10 ctest --output-on-failure -j"$ctest_jobs" -L "$labels" "$@" 2>&1 |
   tee "$build/ctest.log")
rc=${PIPESTATUS[0]}
set -e
t_end=$(date +%s)

echo
echo "== aarch64 summary"
grep -E 'tests passed|tests failed' "$build/ctest.log" | tail -1 || true
for json in "$build/conformance.json" "$build/conformance_ci.json"; do
  [ "$json" -nt "$build/.ctest-start" ] || continue  # written by this run
  python3 - "$json" <<'EOF' || true
import json, os, sys
j = json.load(open(sys.argv[1]))
t = j.get("totals", {})
print(os.path.basename(sys.argv[1]) + ":", ", ".join(f"{k} {v}" for k, v in t.items()),
      f"(elapsed {j.get('elapsed_s', 0):.0f} s, gate {'OK' if j.get('gate_ok') else 'FAILED'})")
EOF
done
echo "times: sysroot $((t_sysroot - t_start)) s, configure+build $((t_build - t_sysroot)) s${ccache_line:+ ($ccache_line)}, tests $((t_end - t_build)) s, total $((t_end - t_start)) s"
exit "$rc"
