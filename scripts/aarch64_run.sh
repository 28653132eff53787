#!/usr/bin/env bash
# Runs the arm64 `edgemm` (build-aarch64/bin/edgemm, from scripts/test_aarch64.sh) under
# `qemu-aarch64 -cpu cortex-a76` (the RK3588's big core) with the aarch64 sysroot as the guest's
# root for its loader and libraries (docs/aarch64.md). Arguments go to edgemm unchanged; the exit
# code is edgemm's. Paths are the host's: qemu-user programs read the host's file system.
#
#   scripts/aarch64_run.sh ocr data/demo/photo_text.jpg --models models/ppocrv4
#
# Environment: EDGEMM_AARCH64_BUILD (default build-aarch64), EDGEMM_QEMU_CPU (default cortex-a76).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGEMM_AARCH64_BUILD:-$root/build-aarch64}"
bin="$build/bin/edgemm"
if [ ! -x "$bin" ] || [ ! -d "$build/sysroot/usr/lib/aarch64-linux-gnu" ]; then
  echo "aarch64_run: $bin or its sysroot is missing: run scripts/test_aarch64.sh (or scripts/aarch64_sysroot.sh and the build) first" >&2
  exit 2
fi
exec qemu-aarch64 -cpu "${EDGEMM_QEMU_CPU:-cortex-a76}" -L "$build/sysroot" "$bin" "$@"
