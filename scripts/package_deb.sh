#!/usr/bin/env bash
# Makes edgemm's Debian package from a build folder (cmake/packaging.cmake says what is in it):
# BUILD/package/edgemm_<version>_<amd64|arm64>.deb. Depends is declared from the shared libraries
# the installed programs link (scripts/deb_depends.py: the shlibs files of the host's dpkg database
# for the x86 build, of the cached arm64 .debs for build-aarch64). Models are not in the package:
# edgemm-fetch-ppocr-models DIR fetches PP-OCRv4 (docs/aarch64.md, "Deploy on the board").
#
# Usage: scripts/package_deb.sh [BUILD_DIR]   (default: build; e.g. build-aarch64 after
#        scripts/test_aarch64.sh). Prints the package's path. Exit codes: 0 made, 1 failed, 2 usage.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" 2>/dev/null && pwd)" || { echo "package_deb: no build folder '${1:-build}'" >&2; exit 2; }
[ -x "$build/bin/edgemm" ] || { echo "package_deb: $build/bin/edgemm is missing: build first" >&2; exit 2; }
programs=("$build/bin/edgemm" "$build/bin/edgemm-opencv-probe")
if readelf -h "$build/bin/edgemm" | grep -q 'Machine:.*AArch64'; then
  debs="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/aarch64/debs"
  depends="$(/usr/bin/python3 "$root/scripts/deb_depends.py" --debs "$debs" "${programs[@]}")"
else
  depends="$(/usr/bin/python3 "$root/scripts/deb_depends.py" --dpkg-db /var/lib/dpkg "${programs[@]}")"
fi
out="$build/package"
rm -rf "$out/_CPack_Packages"
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" -D CPACK_DEBIAN_PACKAGE_DEPENDS="$depends" >"$out/cpack.log" 2>&1) || {
  cat "$out/cpack.log" >&2
  exit 1
}
deb="$(sed -n 's/^CPack: - package: \(.*\.deb\) generated\.$/\1/p' "$out/cpack.log" | tail -1)"
[ -s "$deb" ] || { echo "package_deb: cpack made no .deb (see $out/cpack.log)" >&2; exit 1; }
echo "$deb"
