#!/usr/bin/env bash
# `edgemm ocr` and `edgemm eval ocr` from the command line: output formats, --draw, several
# images, and every kind of bad image (clear error, documented exit code, never a signal).
# Usage: ocr_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
is_png() {  # is_png NAME FILE
  if [ "$(head -c 4 "$2" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e47" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: $2 is not a PNG"
  fi
}
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"
photo="$root/data/demo/photo_text.jpg"

for c in ocr eval "eval ocr"; do
  # shellcheck disable=SC2086  # "eval ocr" is two words on purpose
  check "help-$c" 0 "$bin" $c --help
done
check no-image 2 "$bin" ocr
check bad-limit 2 "$bin" ocr "$photo" --det-limit-side 5
check bad-score-mode 2 "$bin" ocr "$photo" --score-mode medium

# The demo photo: plain text in reading order, JSON, a drawing.
check photo 0 "$bin" ocr "$photo" --threads 2 --draw "$tmp/drawn.png"
expect_text photo-espresso "$tmp/out" "ESPRESSO"
expect_text photo-chinese "$tmp/out" "早上好"
is_png photo-draw "$tmp/drawn.png"
check photo-json 0 "$bin" ocr "$photo" --threads 2 --json --no-cls
for key in '"polygon"' '"text"' '"score"' '"timings_ms"' '"rec"' '"models"' '"cls": null'; do
  expect_text "json-$key" "$tmp/out" "$key"
done

# Several images: models loaded once, one block per image, drawings in a folder.
cp "$photo" "$tmp/a.jpg"
cp "$root/data/ocr_set/002_page_yellow.png" "$tmp/b.png"
mkdir "$tmp/drawings"
check several 0 "$bin" ocr "$tmp/a.jpg" "$tmp/b.png" --threads 2 --draw "$tmp/drawings"
expect_text several-header-a "$tmp/out" "# $tmp/a.jpg"
expect_text several-header-b "$tmp/out" "# $tmp/b.png"
is_png several-draw-a "$tmp/drawings/a.ocr.png"
is_png several-draw-b "$tmp/drawings/b.ocr.png"

# Bad images: each a clear error with its exit code; the good image in the same call still works.
: >"$tmp/empty.png"
check zero-byte 2 "$bin" ocr "$tmp/empty.png"
expect_text zero-byte-message "$tmp/err" "zero-byte"
echo "not an image" >"$tmp/notes.jpg"
check not-an-image 2 "$bin" ocr "$tmp/notes.jpg"
expect_text not-an-image-message "$tmp/err" "cannot decode"
head -c 2000 "$root/data/photos/grass.png" >"$tmp/truncated.png"
check truncated 2 "$bin" ocr "$tmp/truncated.png"
# 64 bytes garbled inside the JPEG scan: libjpeg decodes past them with a warning; refused.
/usr/bin/python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); m = len(b) // 2
b[m:m + 64] = bytes((i * 37 + 11) % 254 for i in range(64)); open(sys.argv[2], "wb").write(b)' "$photo" "$tmp/garbled.jpg"
check garbled-jpeg 2 "$bin" ocr "$tmp/garbled.jpg"
expect_text garbled-jpeg-message "$tmp/err" "is a corrupt JPEG"
check missing 6 "$bin" ocr "$tmp/missing.png"
check directory 6 "$bin" ocr "$tmp"
check mixed 2 "$bin" ocr "$tmp/empty.png" "$photo" --threads 2
expect_text mixed-still-reads "$tmp/out" "ESPRESSO"
check mixed-json 2 "$bin" ocr "$tmp/empty.png" "$photo" --threads 2 --json
expect_text mixed-json-error "$tmp/out" '"InvalidArgument"'
# The published models have dynamic shapes: on opencv every node falls back, and the hint
# names what `ocr` can use (it has no --shape).
check opencv-dynamic 0 "$bin" ocr "$photo" --threads 2 --no-cls --backend opencv
expect_text opencv-dynamic-hint "$tmp/err" 'edgemm convert --fix-shape ... --simplify'
check no-models 6 "$bin" ocr "$photo" --models "$tmp/no-models"
expect_text no-models-message "$tmp/err" "setup.sh"

# Hostile paths and values: no crash, no hang, a clear exit code.
latin1="$tmp/$(printf 'latin1_\xe9.jpg')"
cp "$photo" "$latin1"
check non-utf8-path-json 0 "$bin" ocr "$latin1" --threads 2 --json --no-cls
expect_text non-utf8-path-json-text "$tmp/out" "ESPRESSO"
check absurd-threads 2 "$bin" ocr "$photo" --threads 100000
check usage-error-json 2 "$bin" ocr --json
expect_text usage-error-json-body "$tmp/out" '"InvalidArgument"'
mkfifo "$tmp/fifo.png"
check fifo 2 timeout 20 "$bin" ocr "$tmp/fifo.png"
expect_text fifo-message "$tmp/err" "not a regular file"

# --draw is checked before OCR runs, never overwrites an input, and keeps repeated stems apart.
check draw-bad-extension 2 "$bin" ocr "$photo" --draw "$tmp/out.txt"
check draw-missing-folder 6 "$bin" ocr "$photo" --draw "$tmp/none/x.png"
# A folder is an existing one or a path ending in '/', for any number of images; it is never
# created, and a file path is for one image only.
check draw-missing-folder-several 6 "$bin" ocr "$tmp/a.jpg" "$tmp/b.png" --draw "$tmp/none/out/"
expect_text draw-missing-folder-several-message "$tmp/err" "folder '$tmp/none/out/' does not exist"
check draw-missing-folder-not-created 1 test -e "$tmp/none"
check draw-file-for-several 2 "$bin" ocr "$tmp/a.jpg" "$tmp/b.png" --draw "$tmp/single.png"
expect_text draw-file-for-several-message "$tmp/err" "2 images are given"
check draw-file-for-several-not-created 1 test -e "$tmp/single.png"
check draw-neither 2 "$bin" ocr "$tmp/a.jpg" "$tmp/b.png" --draw "$tmp/newdir"
mkdir "$tmp/one_folder"
check draw-folder-one-image 0 "$bin" ocr "$tmp/a.jpg" --threads 2 --no-cls --draw "$tmp/one_folder"
is_png draw-folder-one-image-png "$tmp/one_folder/a.ocr.png"
cp "$photo" "$tmp/self.png"
check draw-over-input 2 "$bin" ocr "$tmp/self.png" --draw "$tmp/self.png"
mkdir -p "$tmp/s1" "$tmp/s2"
cp "$root/data/ocr_set/002_page_yellow.png" "$tmp/s1/a.png"
cp "$root/data/ocr_set/002_page_yellow.png" "$tmp/s2/a.png"
mkdir "$tmp/same"
check draw-same-stem 0 "$bin" ocr "$tmp/s1/a.png" "$tmp/s2/a.png" --threads 2 --no-cls --draw "$tmp/same/"
is_png draw-same-stem-1 "$tmp/same/a.ocr.png"
is_png draw-same-stem-2 "$tmp/same/a-2.ocr.png"

# A JPEG's EXIF orientation is applied (6: stored landscape, shown portrait).
/usr/bin/python3 -c "
import sys
from PIL import Image
im = Image.open(sys.argv[1]).rotate(90, expand=True)  # text now runs bottom to top
exif = Image.Exif()
exif[0x0112] = 6  # rotate 90° clockwise to display
im.save(sys.argv[2], exif=exif)" "$photo" "$tmp/exif6.jpg"
check exif 0 "$bin" ocr "$tmp/exif6.jpg" --threads 2 --json --no-cls
expect_text exif-width "$tmp/out" '"width": 960'
expect_text exif-text "$tmp/out" "ESPRESSO"

# No text: an empty result and exit 0 (1×1 PNG, and a texture photo).
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0\x90wS\xde\0\0\0\x0cIDATx\x9cc\xf8\xcf\xc0\0\0\x03\x01\x01\0\xc9\xfe\x92\xef\0\0\0\0IEND\xaeB`\x82' >"$tmp/one.png"
check one-pixel 0 "$bin" ocr "$tmp/one.png" --json
expect_text one-pixel-empty "$tmp/out" '"lines": \[\]'

# eval: a two-image set cut from data/ocr_set; bad sets and prediction files.
mkdir -p "$tmp/set"
cp "$root/data/ocr_set/002_page_yellow.png" "$root/data/ocr_set/001_photo_coffee.jpg" "$tmp/set/"
/usr/bin/python3 -c "
import json, sys
labels = json.load(open(sys.argv[1]))
labels['images'] = [i for i in labels['images'] if i['file'] in ('002_page_yellow.png', '001_photo_coffee.jpg')]
json.dump(labels, open(sys.argv[2], 'w'), ensure_ascii=False)" "$root/data/ocr_set/labels.json" "$tmp/set/labels.json"
check eval 0 "$bin" eval ocr --set "$tmp/set" --threads 2 --save-predictions "$tmp/pred.json"
expect_text eval-table "$tmp/out" "CER %"
check eval-predictions 0 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/pred.json" --json
expect_text eval-json "$tmp/out" '"cer"'
# edgemm's graph passes change no text: the same set without them reads the same lines and boxes.
check eval-no-optimize 0 "$bin" eval ocr --set "$tmp/set" --threads 2 --no-optimize --save-predictions "$tmp/pred_plain.json" \
  --json
expect_text eval-json-backend "$tmp/out" '"backend": "native"'
expect_text eval-json-placement "$tmp/out" '"placement"'
check passes-keep-text 0 /usr/bin/python3 -c "
import json, sys
lines = lambda f: [(l['text'], l['polygon']) for i in json.load(open(f))['images'] for l in i['lines']]
a, b = lines(sys.argv[1]), lines(sys.argv[2])
assert len(a) >= 10 and a == b, (len(a), [x for x, y in zip(a, b) if x != y][:3])" "$tmp/pred.json" "$tmp/pred_plain.json"
check eval-no-set 6 "$bin" eval ocr --set "$tmp/no-set"
mkdir -p "$tmp/bad-set"
echo '{"images": [{"file": "a.png", "lines": [{"text": 5}]}]}' >"$tmp/bad-set/labels.json"
check eval-bad-labels 2 "$bin" eval ocr --set "$tmp/bad-set"
expect_text eval-bad-labels-names-the-field "$tmp/err" "labels.json' is malformed at images\[0\].lines\[0\]"
echo '{"images": [{"file": 3}]}' >"$tmp/bad_pred.json"
check eval-bad-predictions 2 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/bad_pred.json"
check eval-missing-predictions 6 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/none.json"
echo '{"images": []}' >"$tmp/empty_pred.json"
check eval-empty-predictions 2 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/empty_pred.json"
expect_text eval-empty-predictions-message "$tmp/err" "no images in predictions file"

# Predictions written by `ocr DIR/*.png --json` (paths relative to here) match the set's files.
(cd "$tmp" && "$bin" ocr set/002_page_yellow.png set/001_photo_coffee.jpg --threads 2 --json >"$tmp/ocr_pred.json")
check eval-ocr-json 0 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/ocr_pred.json" --json
expect_text eval-ocr-json-matched "$tmp/out" '"failed_images": 0'
check eval-save-and-predictions 2 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/pred.json" --save-predictions "$tmp/x.json"
check eval-unwritable-save 6 timeout 20 "$bin" eval ocr --set "$tmp/set" --save-predictions "$tmp/none/p.json"
/usr/bin/python3 -c "
import json, sys
p = json.load(open(sys.argv[1])); p['images'].append(p['images'][0]); p['tool'] = 7
json.dump(p, open(sys.argv[2], 'w'))" "$tmp/pred.json" "$tmp/dup_pred.json"
check eval-duplicate-predictions 2 "$bin" eval ocr --set "$tmp/set" --predictions "$tmp/dup_pred.json"
expect_text eval-duplicate-message "$tmp/err" "twice"

# Long lines: an upright page of 50:1 lines stays upright with every line read. Squeezed whole
# into the classifier's 48x192, such lines were called upside down, the page was turned 180°
# and lines were lost (the classifier now sees a line's first 12:1). Oracle: the drawn text.
/usr/bin/python3 - "$tmp" <<'PY'
import sys, textwrap
from PIL import Image, ImageDraw, ImageFont
text = ("Edge deployment of optical character recognition requires careful attention to latency, memory and "
        "accuracy. In this report we describe the evaluation of a toolkit that converts ONNX models for "
        "static-shape runtimes and measures their character error rate on a labelled set of photos and scanned "
        "pages, comparing the results with a peer.")
for size, width in ((16, 900), (20, 1200)):
    font = ImageFont.truetype('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', size)
    lines = textwrap.wrap(text, width=int(width / (size * 0.55)))
    page = Image.new('RGB', (width, int(size * 1.6) * len(lines) + 40), 'white')
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(lines):
        draw.text((15, 20 + i * int(size * 1.6)), line, fill='black', font=font)
    page.save(f'{sys.argv[1]}/long{size}.png')
    open(f'{sys.argv[1]}/long{size}.txt', 'w').write('\n'.join(lines))
PY
for size in 16 20; do
  check "long-lines-$size" 0 "$bin" ocr "$tmp/long$size.png" --threads 2 --json
  cp "$tmp/out" "$tmp/long$size.json"
  check "long-lines-$size-upright" 0 /usr/bin/python3 -c "
import json, sys
image = json.load(open(sys.argv[1]))['images'][0]
read = [l['text'].replace(' ', '') for l in image['lines']]
drawn = [l.replace(' ', '') for l in open(sys.argv[2]).read().split('\n')]
print('orientation', image['orientation'], 'read', read, file=sys.stderr)
assert image['orientation'] == 0 and len(read) == len(drawn), (image['orientation'], len(read), len(drawn))
assert all(r[:12] == d[:12] and r[-6:] == d[-6:] for r, d in zip(read, drawn)), (read, drawn)
" "$tmp/long$size.json" "$tmp/long$size.txt"
done

report_and_exit
