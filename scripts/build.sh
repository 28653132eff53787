#!/usr/bin/env bash
# Configures and builds edgemm into a build folder. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# EDGEMM_TARGETS (space-separated) limits what is built; default: everything.
# ccache keys are made independent of the checkout's path so fresh clones (CI) hit the cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log"
  exit 1
}
bash "$root/scripts/unity_relative.sh" "$build" "$root"
# shellcheck disable=SC2086  # a word list on purpose
ninja -C "$build" -j"$(nproc)" ${EDGEMM_TARGETS:-}
