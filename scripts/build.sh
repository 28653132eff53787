#!/usr/bin/env bash
# Configures and builds edgemm into a build folder. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# ccache keys are made independent of the checkout's path so fresh clones (CI) hit the cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$build.cmake.log" 2>&1 || {
  cat "$build.cmake.log"
  exit 1
}
ninja -C "$build" -j"$(nproc)"
