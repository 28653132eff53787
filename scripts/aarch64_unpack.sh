#!/usr/bin/env bash
# Unpacks a list of arm64 packages into a root folder with `dpkg -x`, as scripts/aarch64_sysroot.sh
# does for the sysroot and tests/cli/package_test.sh for a clean one (docs/aarch64.md). The .debs
# come from DEBS_DIR, `apt-get download`ed there first when missing (the arm64 package lists must be
# there: scripts/aarch64_sysroot.sh). dpkg -x runs no maintainer scripts, so afterwards absolute
# symlinks are made relative (they would point at the host) and libblas.so.3 / liblapack.so.3 are
# linked where update-alternatives would (when the packages are there). The root is unpacked into
# DEST.tmp.PID and renamed to DEST when whole.
#
# Usage: aarch64_unpack.sh LIST DEBS_DIR DEST   (LIST: lines "name architecture version", as
#        scripts/aarch64_packages.py prints them). Prints the packages it downloaded.
set -euo pipefail
list="$1"
debs="$2"
dest="$3"
mkdir -p "$debs"
# As root, apt hands downloads to the _apt user, which may not be able to write into the cache
# (a warning per package): download as root directly.
apt_download_opts=()
[ "$(id -u)" -eq 0 ] && apt_download_opts=(-o APT::Sandbox::User=root)
staging="$dest.tmp.$$"
rm -rf "$staging"
mkdir -p "$staging"
while read -r base arch version; do
  pkg="$base"
  [ "$arch" = arm64 ] && pkg="$base:arm64"
  # .deb file names encode the epoch's ':' as '%3a'.
  deb="$debs/${base}_${version//:/%3a}_${arch}.deb"
  if [ ! -s "$deb" ]; then
    (cd "$debs" && apt-get download -qq "${apt_download_opts[@]}" "$pkg=$version")
    [ -s "$deb" ] || { echo "[aarch64-unpack] ERROR: $pkg $version: $deb not downloaded" >&2; exit 1; }
    echo "  downloaded $pkg=$version"
  fi
  dpkg -x "$deb" "$staging"
done <"$list"

# The arm64 libraries' linker names (libfoo.so -> libfoo.so.N) are absolute symlinks in some
# packages (e.g. /lib/aarch64-linux-gnu/libz.so.1.2.13): make every absolute symlink relative so
# that it resolves inside the root, not on the host.
while IFS= read -r link; do
  target="$(readlink "$link")"
  case "$target" in
    /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$staging$target")" "$link" ;;
  esac
done < <(find "$staging" -type l)
# OpenCV's core needs libblas.so.3 and liblapack.so.3, which update-alternatives would link.
for lib in blas lapack; do
  if [ -e "$staging/usr/lib/aarch64-linux-gnu/$lib/lib$lib.so.3" ]; then
    ln -sfn "$lib/lib$lib.so.3" "$staging/usr/lib/aarch64-linux-gnu/lib$lib.so.3"
  fi
done
rm -rf "$dest"
mv "$staging" "$dest"
