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
# The .deb of each listed package (file names encode the epoch's ':' as '%3a').
deb_of() { echo "$debs/${1}_${3//:/%3a}_${2}.deb"; }
apt_name() { if [ "$2" = arm64 ]; then echo "$1:arm64=$3"; else echo "$1=$3"; fi; }
# The missing ones in one `apt-get download` (one call per package spent most of a cold run in
# apt's start-up).
missing=()
while read -r base arch version; do
  [ -s "$(deb_of "$base" "$arch" "$version")" ] || missing+=("$(apt_name "$base" "$arch" "$version")")
done <"$list"
if [ "${#missing[@]}" -gt 0 ]; then
  (cd "$debs" && apt-get download -qq "${apt_download_opts[@]}" "${missing[@]}")
  printf '  downloaded %s\n' "${missing[@]}"
fi
while read -r base arch version; do
  deb="$(deb_of "$base" "$arch" "$version")"
  [ -s "$deb" ] || { echo "[aarch64-unpack] ERROR: $base $arch $version: $deb not downloaded" >&2; exit 1; }
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
