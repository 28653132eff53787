#!/usr/bin/env bash
# aarch64 cross-build prerequisites for edgemm (docs/aarch64.md). Idempotent.
#
# 1. Host (amd64) packages, installed by name: the cross compiler, qemu-user (to run the tests),
#    the host protoc, python3-apt (resolves the arm64 closure) and the ONNX backend test data the
#    conformance runner reads (host files: qemu-user programs read the host's file system).
# 2. `dpkg --add-architecture arm64` + `apt-get update`, then the arm64 closure of what edgemm
#    links (scripts/aarch64_packages.py: Depends and Pre-Depends, one package per alternative, as apt
#    would install it on an arm64 machine), each .deb `apt-get download`ed and unpacked with `dpkg -x`.
#    No arm64 package is installed: several are not Multi-Arch: same and would replace amd64 ones.
#
# The sysroot lives outside the clone, in the cache (EDGEMM_CACHE_DIR, default ~/.cache/edgemm), in a
# folder named for the sha256 of the resolved package list (names, architectures, versions): a new
# clone reuses it, and a changed list (a Debian update, a new root) makes a new one beside it. It is
# unpacked into a temporary folder and renamed into place when whole. BUILD_DIR/sysroot links to it.
#
# The C/C++ headers and the link-time libc/libstdc++/libgomp come from the cross toolchain
# (/usr/aarch64-linux-gnu); the arm64 libc's *-dev packages are therefore excluded (two libc header
# trees in one include path would mix). The arm64 runtime libraries (libc6, libstdc++6, libgomp1, ...)
# are unpacked so that `qemu-aarch64 -L SYSROOT` runs the programs.
#
# Usage: scripts/aarch64_sysroot.sh [BUILD_DIR]   (default: build-aarch64)
# Prints what it downloaded; logs every version to BUILD_DIR/sysroot-versions.log.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-aarch64}"
cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/aarch64"
debs="$cache/debs"
log="$build/sysroot-versions.log"
mkdir -p "$build" "$debs"

export DEBIAN_FRONTEND=noninteractive
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

# --- 1. host packages ----------------------------------------------------------------------
host_packages=(g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user protobuf-compiler python3-apt
               cmake ninja-build ccache libonnx-testdata)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# --- 2. arm64 architecture + package lists --------------------------------------------------
need_update=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "[aarch64-sysroot] dpkg --add-architecture arm64"
  $sudo_cmd dpkg --add-architecture arm64
  need_update=1
fi
# Update once per run unless the arm64 lists are already there and EDGEMM_APT_UPDATE=0.
if [ "$need_update" = 1 ] || [ "${EDGEMM_APT_UPDATE:-1}" != 0 ] || ! apt-cache show libc6:arm64 >/dev/null 2>&1; then
  echo "[aarch64-sysroot] apt-get update"
  $sudo_cmd apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[aarch64-sysroot] installing host packages: ${missing[*]}"
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- 3. arm64 dependency closure ------------------------------------------------------------
# Roots: what the edgemm libraries, CLI, tests and kernels' libraries link or include, and node.
roots=(libprotobuf-dev libonnx-dev libdnnl-dev libgtest-dev libgmock-dev zlib1g-dev
       libgomp1 libstdc++6 libgcc-s1 libc6
       libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libopencv-dnn-dev
       libpolyclipping-dev libicu-dev libjpeg62-turbo-dev nlohmann-json3-dev libcli11-dev
       libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libcpp-httplib-dev
       nodejs   # runs ONNX Runtime's arm64 build (onnxruntime-node) for scripts/bench_aarch64.sh
       # The Python package (python/): Python.h and the aarch64 pyconfig.h, pybind11's headers and
       # CMake files; the arm64 interpreter (python3.11, its standard library) and numpy to run it
       # under qemu (tests/aarch64/python_test.sh). Not python3-pytest: it is architecture-independent
       # and so are its dependencies (python3-packaging, ...), which aarch64_packages.py looks up as
       # arm64 packages that the lists do not have ("nothing provides python3-packaging:arm64").
       libpython3-dev pybind11-dev python3-numpy)
# Left out, with whatever only they need: libc's development packages (the cross toolchain has its
# own), host tools and data files that packages depend on but no program here reads, and Mesa's GLX
# driver (OpenCV's core links libGLX, which loads a vendor driver only when a GL context is made;
# the driver brings LLVM, 35 MB of the 130 MB).
exclude=(libc6-dev linux-libc-dev libcrypt-dev libnsl-dev libtirpc-dev libc-dev-bin rpcsvc-proto
         debconf proj-data gdal-data libglx-mesa0)
closure_file="$build/sysroot-packages.txt"
# An amd64 line is a ':any' dependency taken by its first provider (python3-numpy's python3.11:any →
# python3.11 amd64, whose x86-64 /usr/bin/python3.11 would be unpacked beside the arm64 one, which the
# list has too): drop it.
/usr/bin/python3 "$root/scripts/aarch64_packages.py" --exclude "${exclude[@]}" -- "${roots[@]}" |
  awk '$2 != "amd64"' >"$closure_file.tmp"
mv "$closure_file.tmp" "$closure_file"
key=$(sha256sum "$closure_file" | cut -c1-16)
sysroot="$cache/sysroot-$key"

# --- 4. download + unpack ------------------------------------------------------------------
downloaded=""
if [ ! -d "$sysroot" ]; then
  downloaded="$(bash "$root/scripts/aarch64_unpack.sh" "$closure_file" "$debs" "$sysroot")"
fi
# BUILD_DIR/sysroot: a link to the cache (an unpacked folder there, from before the cache, goes).
[ -L "$build/sysroot" ] || rm -rf "$build/sysroot"
ln -sfn "$sysroot" "$build/sysroot.tmp" && mv -T "$build/sysroot.tmp" "$build/sysroot"

{
  awk '{print ($2 == "arm64" ? $1 ":arm64" : $1), $3}' "$closure_file"
  for p in "${host_packages[@]}"; do echo "host $p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"; done
} >"$log"
if [ -n "$downloaded" ]; then
  echo "[aarch64-sysroot] downloaded $(echo "$downloaded" | wc -l) packages:"
  echo "$downloaded"
fi
echo "[aarch64-sysroot] sysroot: $sysroot ($(wc -l <"$closure_file") packages, $(du -sh "$sysroot" | cut -f1)); versions in $log"
