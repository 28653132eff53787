#!/usr/bin/env bash
# Rewrites CMake's unity sources in build folder $1 to include each file by its path relative to
# the checkout $2 (found through the checkout's root on the include path, CMakeLists.txt) instead
# of its absolute path, so that ccache hits across clones at different paths (CCACHE_BASEDIR makes
# the command lines relative; the unity files' contents must be too). CMake writes absolute paths
# again whenever it regenerates the build; the build stays correct either way. Only files that
# still name the checkout are rewritten: touching the others would make ninja compile them again.
# Usage: scripts/unity_relative.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
mapfile -t files < <(find "$1" -path '*/Unity/unity_*' -type f -exec grep -l "#include \"$2/" {} + || true)
[ ${#files[@]} -eq 0 ] || sed -i "s|#include \"$2/|#include \"|" "${files[@]}"
