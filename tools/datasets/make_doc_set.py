#!/usr/bin/python3
"""Labelled document OCR set: pages of freely licensed PDF manuals that Debian ships, rendered
with Poppler, some with scan-like damage, and every text line's ground truth taken from the PDF
itself.

usage: /usr/bin/python3 tools/datasets/make_doc_set.py --out DIR [--seed 1]
           [--check data/doc_set/labels.json]

Writes DIR/NNN_<source>_p<page>.{png,jpg} and DIR/labels.json in the format of
data/ocr_set/labels.json (tools/datasets/make_ocr_set.py), with per-image "source" fields
(package, pdf, page, dpi, damage) and an "ignore" flag on lines too small to read.
With --check FILE, exits 1 (printing the first difference) unless the labels written equal FILE:
the committed labels are the truth for the images made here, so a changed PDF or Poppler that
would move them is caught instead of silently scoring against stale labels.

Sources (SOURCES below): Debian bookworm packages maint-guide (English, GPL-2+),
maint-guide-zh-cn (Simplified Chinese, GPL-2+), debian-refcard (English and Simplified Chinese
reference cards, GPL-3+) and bzip2-doc (BSD-style); scripts/setup.sh installs them and
poppler-utils. Each PDF is checked against its pinned sha256 before use.

Pages: a fixed, evenly spread selection per PDF (pages with fewer than 3 text lines skipped),
each rendered by `pdftoppm -r DPI` at a DPI drawn from 50-150 (seeded per page). Ground truth
per line from `pdftotext -bbox-layout` (Poppler's own text extraction of the same page): the
line's words, with a space between two where they are at least 0.12 line heights apart (Poppler
also cuts words where only the font changes), NFC; its polygon is the line's box (union of its word
boxes) scaled from PDF points to pixels, clockwise from the top-left. Lines whose box is under
MIN_LINE_PX pixels high are marked "ignore": true (ICDAR's "do not care": neither counted nor
penalized when detected), as are lines with no letter or digit (rules, dot leaders).

Damage (tags), on about half of the pages, one to three of: rotated (0.5-3 degrees, white
fill, image grown to hold the page; polygons carried through the same map), blur (Gaussian,
radius 0.5-1.0 px), noise (Gaussian, sigma 4-10 grey levels), uneven_light (a smooth
multiplicative shading down to 0.55-0.8 of full brightness and a warm tint), jpeg (quality
35-75). Clean pages are PNG. Other tags: page (every image), lang_zh or lang_en (the PDF's
language), dpi_low (< 90 dpi).

Deterministic: the same seed, PDFs and Poppler give byte-identical files.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import xml.etree.ElementTree as ET

import numpy as np
from PIL import Image, ImageFilter

GENERATOR = 'tools/datasets/make_doc_set.py'
MIN_LINE_PX = 9  # box height (pixels) below which a line is "ignore"
SPACE_GAP = 0.12  # gap between words, as a share of the line's height, from which they are apart
XHTML = '{http://www.w3.org/1999/xhtml}'

# name, Debian package, path, sha256 of the PDF (after gunzip), language, licence, pages to take
SOURCES = [
    ('maintguide_en', 'maint-guide', '/usr/share/doc/maint-guide/maint-guide.en.pdf',
     '0b94abf28167fb3fe59db3d03f99b5faa50d9f6f696a7864825c5d0378ba27ef', 'en', 'GPL-2+', 38),
    ('maintguide_zh', 'maint-guide-zh-cn', '/usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.pdf',
     '6e3d3247fc675e6678d59663f886472ef7369c82c69036eb631d3651a4913709', 'zh', 'GPL-2+', 38),
    ('refcard_en', 'debian-refcard', '/usr/share/doc/debian-refcard/refcard-en-a4.pdf.gz',
     'e876ef5e889cc82835b96a1b32df6a295e41534a1adae69def6d4ad981e38f61', 'en', 'GPL-3+', 2),
    ('refcard_zh', 'debian-refcard', '/usr/share/doc/debian-refcard/refcard-zh_CN-a4.pdf.gz',
     '35842441e40ce9df17645b2ecaafb50d39d2c0502056c767943013644c9cdfee', 'zh', 'GPL-3+', 2),
    ('bzip2', 'bzip2-doc', '/usr/share/doc/bzip2/manual.pdf.gz',
     '1dd1f12b3dcb0894481708881ed8d052c769f3820c06839c702c8cfad973d7d3', 'en', 'BSD-variant (bzip2)', 24),
]
DPI_CHOICES = [50, 72, 96, 110, 120, 135, 150]
DPI_WEIGHTS = [1, 3, 4, 4, 4, 3, 4]


def fail(message):
    print(f'make_doc_set: {message}', file=sys.stderr)
    sys.exit(2)


def read_pdf(path, sha256, package, workdir):
    """The PDF as a plain file in workdir (gunzipped), after checking its sha256."""
    if not os.path.exists(path):
        fail(f'{path} not found: install the Debian package {package} (scripts/setup.sh does)')
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith('.gz'):
        data = gzip.decompress(data)
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        fail(f'{path} has sha256 {digest}, expected {sha256} (another version of {package}?)')
    out = os.path.join(workdir, os.path.basename(path).removesuffix('.gz'))
    with open(out, 'wb') as f:
        f.write(data)
    return out, digest


def page_count(pdf):
    info = subprocess.run(['pdfinfo', pdf], check=True, capture_output=True, text=True).stdout
    for line in info.splitlines():
        if line.startswith('Pages:'):
            return int(line.split()[1])
    fail(f'pdfinfo gives no page count for {pdf}')


def is_leader(word):
    return len(word) > 0 and set(word) <= {'.', '·', '…'}


def split_at_leaders(words):
    """Parts of a line's words around dot leaders (runs of 3+ words of dots, or one word of 3+
    dots, as in tables of contents): the leaders are layout, not text."""
    parts, current, dots = [], [], []
    for word in words:
        text = word.text.strip()
        if is_leader(text):
            dots.append(word)
            continue
        if dots and (len(dots) >= 3 or any(len(d.text.strip()) >= 3 for d in dots)):
            parts.append(current)
            current = []
        else:
            current += dots
        dots = []
        current.append(word)
    if dots and not (len(dots) >= 3 or any(len(d.text.strip()) >= 3 for d in dots)):
        current += dots
    parts.append(current)
    return [part for part in parts if part]


def join_words(words):
    """The words' texts, with a space where the gap to the next word is at least SPACE_GAP of
    the line's height: Poppler also splits words where only the font changes (an italic
    "package" then ".default"), and no reader sees a space there."""
    height = max(float(w.get('yMax')) - float(w.get('yMin')) for w in words)
    text = words[0].text.strip()
    for before, word in zip(words, words[1:]):
        gap = float(word.get('xMin')) - float(before.get('xMax'))
        text += (' ' if gap >= SPACE_GAP * height else '') + word.text.strip()
    return text


def text_lines(pdf, page):
    """[(text, xmin, ymin, xmax, ymax)] in PDF points, from pdftotext -bbox-layout."""
    xml = subprocess.run(['pdftotext', '-bbox-layout', '-f', str(page), '-l', str(page), pdf, '-'],
                         check=True, capture_output=True).stdout
    root = ET.fromstring(xml)
    lines = []
    for line in root.iter(f'{XHTML}line'):
        for words in split_at_leaders([w for w in line.iter(f'{XHTML}word') if (w.text or '').strip()]):
            text = unicodedata.normalize('NFC', join_words(words))
            box = [min(float(w.get('xMin')) for w in words), min(float(w.get('yMin')) for w in words),
                   max(float(w.get('xMax')) for w in words), max(float(w.get('yMax')) for w in words)]
            lines.append((text, *box))
    return lines


def pick_pages(pdf, count):
    """`count` pages spread evenly over the PDF, skipping pages with fewer than 3 lines."""
    total = page_count(pdf)
    usable = [p for p in range(1, total + 1) if len(text_lines(pdf, p)) >= 3]
    if len(usable) <= count:
        return usable
    return [usable[round(i * (len(usable) - 1) / (count - 1))] for i in range(count)] if count > 1 else usable[:1]


def render(pdf, page, dpi, workdir):
    stem = os.path.join(workdir, 'render')
    subprocess.run(['pdftoppm', '-r', str(dpi), '-f', str(page), '-l', str(page), '-png', '-singlefile', pdf, stem],
                   check=True)
    image = Image.open(stem + '.png')
    image.load()
    return image.convert('RGB')


def has_text(text):
    return any(unicodedata.category(c)[0] in 'LN' for c in text)


def rotate(image, polygons, degrees):
    """Turns the image by `degrees` (counter-clockwise on screen) about its centre, grown to
    hold the whole page, white fill; the polygons through the same map."""
    w, h = image.size
    out = image.rotate(degrees, resample=Image.BICUBIC, expand=True, fillcolor=(255, 255, 255))
    ow, oh = out.size
    a = math.radians(degrees)
    cos, sin = math.cos(a), math.sin(a)

    def move(x, y):  # screen coordinates, y down: counter-clockwise turn
        dx, dy = x - w / 2, y - h / 2
        return [round(ow / 2 + dx * cos + dy * sin, 1), round(oh / 2 - dx * sin + dy * cos, 1)]

    return out, [[move(x, y) for x, y in poly] for poly in polygons]


def damage(image, polygons, rng):
    """Applies 1-3 scan-like damages; returns the image, polygons, tags and a JPEG quality (0: PNG)."""
    kinds = rng.sample(['rotated', 'blur', 'noise', 'uneven_light', 'jpeg'], rng.randint(1, 3))
    tags, quality = [], 0
    if 'uneven_light' in kinds:
        w, h = image.size
        low = rng.uniform(0.55, 0.8)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        yy, xx = np.mgrid[0:h, 0:w]
        distance = np.sqrt(((xx - cx) / w) ** 2 + ((yy - cy) / h) ** 2) / math.sqrt(2)
        shade = 1.0 - (1.0 - low) * np.clip(distance, 0, 1)
        tint = np.array([1.0, rng.uniform(0.93, 0.98), rng.uniform(0.82, 0.92)])
        pixels = np.asarray(image, dtype=np.float32) * shade[..., None] * tint
        image = Image.fromarray(np.clip(pixels + 0.5, 0, 255).astype(np.uint8))
        tags.append('uneven_light')
    if 'rotated' in kinds:
        image, polygons = rotate(image, polygons, rng.choice([-1, 1]) * rng.uniform(0.5, 3.0))
        tags.append('rotated')
    if 'blur' in kinds:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 1.0)))
        tags.append('blur')
    if 'noise' in kinds:
        noise_rng = np.random.default_rng(rng.randrange(2**32))
        pixels = np.asarray(image, dtype=np.float32)
        pixels += noise_rng.normal(0, rng.uniform(4, 10), pixels.shape[:2])[..., None]
        image = Image.fromarray(np.clip(pixels + 0.5, 0, 255).astype(np.uint8))
        tags.append('noise')
    if 'jpeg' in kinds:
        quality = rng.randint(35, 75)
        tags.append('jpeg')
    return image, polygons, tags, quality


def make_page(pdf, name, lang, page, seed, index, out_dir, workdir):
    rng = random.Random(f'{seed}:{name}:{page}')
    dpi = rng.choices(DPI_CHOICES, DPI_WEIGHTS)[0]
    scale = dpi / 72.0
    image = render(pdf, page, dpi, workdir)
    lines = text_lines(pdf, page)
    polygons = [[[x0 * scale, y0 * scale], [x1 * scale, y0 * scale], [x1 * scale, y1 * scale], [x0 * scale, y1 * scale]]
                for _, x0, y0, x1, y1 in lines]
    tags, quality = [], 0
    if rng.random() < 0.5:
        image, polygons, tags, quality = damage(image, polygons, rng)
    polygons = [[[round(x, 1), round(y, 1)] for x, y in poly] for poly in polygons]
    file = f'{index:03d}_{name}_p{page:02d}.{"jpg" if quality else "png"}'
    path = os.path.join(out_dir, file)
    if quality:
        image.save(path, quality=quality)
    else:
        image.save(path, optimize=False, compress_level=6)
    labelled = []
    for (text, _, y0, _, y1), poly in zip(lines, polygons):
        line = {'text': text, 'lang': 'zh' if any('\u4e00' <= c <= '\u9fff' for c in text) else 'en', 'polygon': poly}
        if (y1 - y0) * scale < MIN_LINE_PX or not has_text(text):
            line['ignore'] = True
        labelled.append(line)
    order = ['page', 'lang_zh' if lang == 'zh' else 'lang_en'] + (['dpi_low'] if dpi < 90 else []) + tags
    return {'file': file, 'width': image.size[0], 'height': image.size[1], 'tags': order,
            'source': {'pdf': os.path.basename(pdf), 'page': page, 'dpi': dpi}, 'lines': labelled}


def labels_text(header, images):
    """labels.json with one text line a line (compact, and diffs name the lines that moved)."""
    def dump(value):
        return json.dumps(value, ensure_ascii=False, separators=(',', ':'))
    out = [dump(header)[:-1] + ',"images":[']
    for k, image in enumerate(images):
        fields = {key: value for key, value in image.items() if key != 'lines'}
        out.append(dump(fields)[:-1] + ',"lines":[')
        out.append(',\n'.join(dump(line) for line in image['lines']))
        out.append(']}' + (',' if k + 1 < len(images) else ''))
    out.append(']}')
    return '\n'.join(out) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', required=True)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--check', help='committed labels.json the written labels must equal')
    args = parser.parse_args()
    for tool in ('pdftoppm', 'pdftotext', 'pdfinfo'):
        if shutil.which(tool) is None:
            fail(f'{tool} not found: install poppler-utils (scripts/setup.sh does)')
    os.makedirs(args.out, exist_ok=True)
    images, sources = [], []
    with tempfile.TemporaryDirectory() as workdir:
        for name, package, path, sha256, lang, licence, count in SOURCES:
            pdf, digest = read_pdf(path, sha256, package, workdir)
            pages = pick_pages(pdf, count)
            sources.append({'name': name, 'package': package, 'path': path, 'sha256': digest, 'licence': licence,
                            'pages': pages})
            for page in pages:
                images.append(make_page(pdf, name, lang, page, args.seed, len(images), args.out, workdir))
                print(f'{images[-1]["file"]}: {len(images[-1]["lines"])} lines', file=sys.stderr)
    text = labels_text({'generator': GENERATOR, 'seed': args.seed, 'sources': sources}, images)
    with open(os.path.join(args.out, 'labels.json'), 'w', encoding='utf-8') as f:
        f.write(text)
    if args.check:
        with open(args.check, encoding='utf-8') as f:
            expected = f.read()
        if expected != text:
            for i, (a, b) in enumerate(zip(expected.splitlines(), text.splitlines())):
                if a != b:
                    print(f'labels differ from {args.check} at line {i + 1}:\n  committed: {a}\n  made:      {b}',
                          file=sys.stderr)
                    break
            sys.exit(1)


if __name__ == '__main__':
    main()
