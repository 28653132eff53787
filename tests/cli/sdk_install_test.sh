#!/usr/bin/env bash
# edgemm as an SDK (cmake/packaging.cmake, docs/sdk.md): `cmake --install BUILD_DIR --prefix P` into
# an empty prefix, then the example programs built out of tree against P only, and run.
# - P holds the public headers only (include/edgemm), and they include nothing else of edgemm's;
#   no installed file names the source or build tree.
# - examples/cpp (find_package(edgemm), target edgemm::edgemm) and the same source built with the
#   flags of `pkg-config --cflags --libs [--static] edgemm` both read the demo photo: the lines drawn
#   on it (data/demo/photo_text.json) with at most 2 character edits in all.
# - examples/c, built with gcc and `pkg-config ... edgemm-c` and as a C-only CMake project
#   (edgemm::capi), runs det through the C API.
# Usage: sdk_install_test.sh BUILD_DIR REPO_ROOT
set -uo pipefail
build="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
prefix="$tmp/prefix"
models="$root/models/ppocrv4"
photo="$root/data/demo/photo_text.jpg"
shared="$(sed -n 's/^BUILD_SHARED_LIBS:BOOL=//p' "$build/CMakeCache.txt")"

check install 0 cmake --install "$build" --prefix "$prefix"
check config-installed 0 test -f "$prefix/lib/cmake/edgemm/edgemmConfig.cmake"
check pc-installed 0 test -f "$prefix/lib/pkgconfig/edgemm.pc"
check headers-only-public 1 sh -c "find '$prefix/include' -type f ! -path '$prefix/include/edgemm/*' | grep ."
check headers-include-only-public 1 sh -c "grep -rhE '^#include \"' '$prefix/include' | grep -v '\"edgemm/'"
check no-source-tree-paths 1 grep -rlF -e "$root/src" -e "$build" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"

# CMake: examples/cpp against the prefix (no package registry, no build tree).
check cmake-configure 0 cmake -S "$root/examples/cpp" -B "$tmp/cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
check cmake-build 0 cmake --build "$tmp/cpp"
check cpp-example-ocr 0 "$tmp/cpp/ocr_example" "$models" "$photo"
sed 's/^[0-9.]* //' "$tmp/out" >"$tmp/cpp.txt"
demo_lines_read cpp-example-lines "$tmp/cpp.txt" "$root"
check cpp-example-bad-image 1 "$tmp/cpp/ocr_example" "$models" "$tmp/missing.png"
expect_text cpp-example-bad-image-message "$tmp/err" "missing.png"

# pkg-config: the same program from the flags of edgemm.pc (--static for static libraries).
static=--static
[ "$shared" = ON ] && static=
check pkg-config 0 env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs $static edgemm
read -r -a flags <"$tmp/out"
check pc-build 0 g++ -std=c++20 "$root/examples/cpp/ocr_example.cc" -o "$tmp/pc_example" "${flags[@]}" \
  -Wl,-rpath,"$prefix/lib"
check pc-example-ocr 0 "$tmp/pc_example" "$models" "$photo"
sed 's/^[0-9.]* //' "$tmp/out" >"$tmp/pc.txt"
demo_lines_read pc-example-lines "$tmp/pc.txt" "$root"

# C: examples/c through the C API, built with gcc from edgemm-c.pc's flags: DB's probability map has
# the input's height and width (one channel).
check pkg-config-c 0 env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs $static edgemm-c
read -r -a cflags <"$tmp/out"
check c-build 0 gcc -std=c11 -Wall -Werror "$root/examples/c/det_example.c" -o "$tmp/c_example" "${cflags[@]}" \
  -Wl,-rpath,"$prefix/lib"
check c-example-det 0 "$tmp/c_example" "$models/ch_PP-OCRv4_det_infer.onnx"
expect_text c-example-map-shape "$tmp/out" ": 1 1 64 96\$"
check c-example-bad-model 1 "$tmp/c_example" "$tmp/missing.onnx"
expect_text c-example-bad-model-message "$tmp/err" "missing.onnx"
# The same from a C-only CMake project (find_package enables C++ for the libraries' link).
check c-cmake-configure 0 cmake -S "$root/examples/c" -B "$tmp/c" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
check c-cmake-build 0 cmake --build "$tmp/c"
check c-cmake-example-det 0 "$tmp/c/det_example" "$models/ch_PP-OCRv4_det_infer.onnx"
expect_text c-cmake-example-map-shape "$tmp/out" ": 1 1 64 96\$"
report_and_exit
