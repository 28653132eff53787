#!/usr/bin/env bash
# edgemm's Debian package (scripts/package_deb.sh, cmake/packaging.cmake) made from BUILD_DIR and
# used as a user would: unpacked, nothing else from the build tree.
# - Its files: the CLI, its probe helper and edgemm-fetch-ppocr-models in usr/bin, the libraries and
#   public headers, no model files.
# - amd64 (the x86 build): Depends names the same packages as dpkg-shlibdeps (Debian's own tool,
#   the oracle) finds for the two programs, and the unpacked edgemm reads the demo photo.
# - arm64 (build-aarch64): the package and the closure of its declared Depends (nothing else;
#   scripts/aarch64_packages.py, as apt would install it on the board) unpacked into a clean root,
#   and the edgemm from it reads the demo photo under qemu-aarch64 -cpu cortex-a76 -L ROOT.
# Reading the demo photo: the lines drawn on it (data/demo/photo_text.json) with at most 2
# character edits in all, as tests/cli/aarch64_cli_test.sh checks.
# Usage: package_test.sh BUILD_DIR REPO_ROOT
set -uo pipefail
build="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
py=/usr/bin/python3
models="$root/models/ppocrv4"
photo="$root/data/demo/photo_text.jpg"

check package 0 bash "$root/scripts/package_deb.sh" "$build"
deb="$(tail -1 "$tmp/out")"
check contents 0 dpkg-deb -c "$deb"
cp "$tmp/out" "$tmp/contents.txt"
for f in ./usr/bin/edgemm ./usr/bin/edgemm-opencv-probe ./usr/bin/edgemm-fetch-ppocr-models \
  ./usr/lib/libedgemm_core.a ./usr/lib/libedgemm_pipelines.a ./usr/include/edgemm/inferencer.h \
  ./usr/include/edgemm/pipelines/ocr.h ./usr/share/doc/edgemm/docs/aarch64.md ./usr/share/doc/edgemm/docs/vlm.md; do
  expect_text "has-$f" "$tmp/contents.txt" " $f\$"
done
check no-models 1 grep -E '\.onnx$|ppocr_keys' "$tmp/contents.txt"
check recommends-a-downloader 0 sh -c "dpkg-deb -f '$deb' Recommends | grep -q curl"
arch="$(dpkg-deb -f "$deb" Architecture)"
depends="$(dpkg-deb -f "$deb" Depends)"
check depends-declared 0 test -n "$depends"


names() { tr ',' '\n' | sed 's/(.*//; s/^ *//; s/ *$//' | grep . | sort -u; }

if [ "$arch" = amd64 ]; then
  # The oracle: dpkg-shlibdeps on the packaged programs (it wants a debian/control to read).
  mkdir -p "$tmp/shlibdeps/debian" "$tmp/unpacked"
  printf 'Source: edgemm\n\nPackage: edgemm\nArchitecture: amd64\n' >"$tmp/shlibdeps/debian/control"
  dpkg-deb -x "$deb" "$tmp/unpacked"
  check dpkg-shlibdeps 0 sh -c "cd '$tmp/shlibdeps' && dpkg-shlibdeps -O '$tmp/unpacked/usr/bin/edgemm' \
    '$tmp/unpacked/usr/bin/edgemm-opencv-probe'"
  sed -n 's/^shlibs:Depends=//p' "$tmp/out" | names >"$tmp/want"
  echo "$depends" | names >"$tmp/got"
  check depends-as-dpkg-shlibdeps 0 diff "$tmp/want" "$tmp/got"
  check unpacked-ocr 0 "$tmp/unpacked/usr/bin/edgemm" ocr "$photo" --models "$models" --threads 2
  cp "$tmp/out" "$tmp/ocr.txt"
  demo_lines_read unpacked-ocr-lines "$tmp/ocr.txt" "$root"
else
  # A clean arm64 root: the closure of the declared Depends, then the package. The data packages
  # the sysroot leaves out (scripts/aarch64_sysroot.sh) are left out here too: no program reads them.
  cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/aarch64"
  mapfile -t roots < <(echo "$depends" | names)
  check closure 0 $py "$root/scripts/aarch64_packages.py" --exclude debconf proj-data gdal-data libglx-mesa0 -- \
    "${roots[@]}"
  cp "$tmp/out" "$tmp/closure.txt"
  check closure-has-no-dev 1 grep -E -- '-dev ' "$tmp/closure.txt"
  check unpack-closure 0 bash "$root/scripts/aarch64_unpack.sh" "$tmp/closure.txt" "$cache/debs" "$tmp/board"
  check unpack-package 0 dpkg-deb -x "$deb" "$tmp/board"
  check board-has-no-headers 0 test ! -e "$tmp/board/usr/include/opencv4"
  check board-ocr 0 qemu-aarch64 -cpu cortex-a76 -L "$tmp/board" "$tmp/board/usr/bin/edgemm" ocr "$photo" \
    --models "$models" --threads 2
  cp "$tmp/out" "$tmp/ocr.txt"
  demo_lines_read board-ocr-lines "$tmp/ocr.txt" "$root"
  echo "arm64 root: $(wc -l <"$tmp/closure.txt") packages, $(du -sh "$tmp/board" | cut -f1)"
fi
report_and_exit
