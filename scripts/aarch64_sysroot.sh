#!/usr/bin/env bash
# aarch64 cross-build prerequisites for the edgemm core (docs/aarch64.md). Idempotent.
#
# 1. Host (amd64) packages, installed by name: the cross compiler, qemu-user (to run the tests),
#    the host protoc, and the ONNX backend test data the conformance runner reads (host files:
#    qemu-user programs read the host's file system).
# 2. `dpkg --add-architecture arm64` + `apt-get update`, then `apt-get download` of the arm64 .debs of
#    the core's dependencies and everything they need at run time (closure from `apt-cache depends
#    --recurse` on the :arm64 packages), each unpacked with `dpkg -x` into build-aarch64/sysroot.
#    No arm64 package is installed: several are not Multi-Arch: same and would replace amd64 ones.
#
# The C/C++ headers and the link-time libc/libstdc++/libgomp come from the cross toolchain
# (/usr/aarch64-linux-gnu); the arm64 libc's *-dev packages are therefore not unpacked (two libc
# header trees in one include path would mix). The arm64 runtime libraries (libc6, libstdc++6,
# libgomp1, ...) are unpacked so that `qemu-aarch64 -L build-aarch64/sysroot` runs the tests.
#
# Usage: scripts/aarch64_sysroot.sh [BUILD_DIR]   (default: build-aarch64)
# Prints the packages it downloaded; logs every version to BUILD_DIR/sysroot-versions.log.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-aarch64}"
sysroot="$build/sysroot"
debs="$build/debs"
log="$build/sysroot-versions.log"
mkdir -p "$build" "$debs" "$sysroot/.extracted"

export DEBIAN_FRONTEND=noninteractive
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

# --- 1. host packages ----------------------------------------------------------------------
host_packages=(g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user protobuf-compiler
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
# Roots: what edgemm_core, the unit tests and the conformance runner link or include.
roots=(libprotobuf-dev:arm64 libonnx-dev:arm64 libdnnl-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
       libgomp1:arm64 libstdc++6:arm64 libgcc-s1:arm64 libc6:arm64 zlib1g-dev:arm64
       nlohmann-json3-dev libcli11-dev)
# Not unpacked: libc's development packages (the cross toolchain has its own copies of these
# headers and link libraries) and host-side tools that arm64 dependencies drag in.
exclude_re='^(libc6-dev|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev|libc-dev-bin|rpcsvc-proto)$'

# Names in the closure: "pkg:arm64" for arm64 packages, bare names for host or Architecture: all ones.
names=()
while read -r name; do
  case "$name" in
    "<"*) continue ;;  # virtual package, provided by another one in the list
  esac
  [[ "${name%%:*}" =~ $exclude_re ]] || names+=("$name")
done < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
           --no-enhances "${roots[@]}" 2>/dev/null | grep -v '^ ' | sort -u)
# One apt-cache call for every candidate's architecture and version: keep arm64 and "all" packages
# (a bare name of an amd64 package is a host dependency of an arch-all one, e.g. libc6).
mapfile -t closure < <(apt-cache show --no-all-versions "${names[@]}" 2>/dev/null | awk '
  /^Package: /      {p = $2}
  /^Architecture: / {a = $2}
  /^Version: /      {v = $2}
  /^$/ { if (p != "" && (a == "arm64" || a == "all")) print p, a, v; p = a = v = "" }
  END  { if (p != "" && (a == "arm64" || a == "all")) print p, a, v }' | sort -u)

# --- 4. download + unpack ------------------------------------------------------------------
downloaded=()
# As root, apt hands downloads to the _apt user, which may not be able to write into the build folder
# (a warning per package): download as root directly.
apt_download_opts=()
[ "$(id -u)" -eq 0 ] && apt_download_opts=(-o APT::Sandbox::User=root)
: >"$log.tmp"
for entry in "${closure[@]}"; do
  read -r base arch version <<<"$entry"
  pkg="$base"
  [ "$arch" = arm64 ] && pkg="$base:arm64"
  # .deb file names encode the epoch's ':' as '%3a'.
  deb="$debs/${base}_${version//:/%3a}_${arch}.deb"
  if [ ! -s "$deb" ]; then
    (cd "$debs" && apt-get download -qq "${apt_download_opts[@]}" "$pkg=$version")
    [ -s "$deb" ] || { echo "[aarch64-sysroot] ERROR: $pkg $version: $deb not downloaded" >&2; exit 1; }
    downloaded+=("$pkg=$version")
  fi
  stamp="$sysroot/.extracted/$(basename "$deb").stamp"
  if [ ! -f "$stamp" ]; then
    dpkg -x "$deb" "$sysroot"
    touch "$stamp"
  fi
  echo "$pkg $version" >>"$log.tmp"
done
mv "$log.tmp" "$log"

# The arm64 libraries' linker names (libfoo.so -> libfoo.so.N) are absolute symlinks in some
# packages (e.g. /lib/aarch64-linux-gnu/libz.so.1.2.13): make every absolute symlink in the sysroot
# relative so that it resolves inside the sysroot, not on the host.
while IFS= read -r link; do
  target="$(readlink "$link")"
  case "$target" in
    /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link" ;;
  esac
done < <(find "$sysroot" -type l)

if [ "${#downloaded[@]}" -gt 0 ]; then
  echo "[aarch64-sysroot] downloaded ${#downloaded[@]} packages:"
  printf '  %s\n' "${downloaded[@]}"
else
  echo "[aarch64-sysroot] all ${#closure[@]} packages already there"
fi
echo "[aarch64-sysroot] sysroot: $sysroot ($(du -sh "$sysroot" | cut -f1)); versions in $log"
{
  for p in "${host_packages[@]}"; do echo "host $p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"; done
} >>"$log"
