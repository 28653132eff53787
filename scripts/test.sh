#!/usr/bin/env bash
# Set up, check the layering of the includes (scripts/check_layers.py), build and run every test:
# the Release build's full CTest suite (unit, conformance, parity with ONNX Runtime, bad inputs,
# CLI, the SDK installed), the unit, conformance, quick bad-input CLI and SDK tests again with
# shared libraries under ASan + UBSan, then everything cross-built for aarch64 with its CI subset under qemu (docs/aarch64.md,
# label aarch64_ci).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
echo "== layers: no #include reaches up (docs/architecture.md)"
/usr/bin/python3 "$root/scripts/check_layers.py"
bash "$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure --timeout 900 -j2)
echo "== sanitizers: ASan + UBSan build of shared libraries, unit tests (one process) + conformance + quick"
echo "   bad-input CLI tests + the SDK installed and used (shared: a layer calling upwards fails to link)"
EDGEMM_TARGETS="edgemm edgemm_unit_tests edgemm_conformance edgemm_fork_pool_test" \
  bash "$root/scripts/build.sh" "$root/build-asan" -DEDGEMM_SANITIZE=ON -DBUILD_SHARED_LIBS=ON
# Unit tests in one process (unit_all_in_one, label sanitize), not one per test: ASan's start-up.
(cd "$root/build-asan" &&
  ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 1800 -j2 -L 'conformance|sanitize|sdk')
echo "== aarch64: cross-built, unit tests + architecture-sensitive conformance tests + the CLI under qemu"
EDGEMM_AARCH64_LABELS=aarch64_ci bash "$root/scripts/test_aarch64.sh"
