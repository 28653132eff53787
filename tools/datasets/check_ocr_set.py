#!/usr/bin/python3
"""Validates a labelled OCR set (tools/datasets/make_ocr_set.py) and prints its statistics.

usage: /usr/bin/python3 tools/datasets/check_ocr_set.py DIR [--dict models/ppocrv4/ppocr_keys_v1.txt]
           [--json]

Checks DIR/labels.json: the schema (keys, types, tags, lang "en"/"zh", NFC text without
leading, trailing or double spaces), every image file present with the listed width and height,
polygons of 4 points inside the image, convex and clockwise on screen, their top edge running
left to right (right to left on images tagged upside_down), text heights (mean length of the
left and right edges) within 12-60 px, no two lines overlapping, Chinese lines with Chinese
characters and English lines without, at least a third of the lines Chinese, and, when the
dictionary exists, every character in PP-OCR's recognition dictionary.
Prints the statistics (images, lines, characters, tag counts, heights, sizes) as text or, with
--json, as JSON. Exit status 0 when the set is valid, 1 otherwise (each problem printed).
"""
import argparse
import json
import math
import os
import sys
import unicodedata

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAGS = ['page', 'photo', 'rotated', 'tilted_lines', 'blur', 'jpeg', 'upside_down', 'small_text']
MIN_H, MAX_H = 12, 60
HEIGHT_TOLERANCE = 0.5  # polygons are rounded to 0.1 px; tilted edges of a 12 px line may read 11.9


def is_cjk(c):
    return '\u3400' <= c <= '\u9fff' or '\uf900' <= c <= '\ufaff'


def signed_area(p):
    return sum(p[i][0] * p[(i + 1) % len(p)][1] - p[(i + 1) % len(p)][0] * p[i][1] for i in range(len(p))) / 2


def convex_clockwise(p):
    """True when the quadrilateral turns the same way at every corner, clockwise on screen."""
    crosses = []
    for i in range(4):
        a, b, c = p[i], p[(i + 1) % 4], p[(i + 2) % 4]
        crosses.append((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]))
    return all(x > 0 for x in crosses)


def clip(subject, clipper):
    """Sutherland-Hodgman: subject polygon clipped by a convex, clockwise-on-screen clipper."""
    out = list(subject)
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]

        def inside(p):
            return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0

        def cross_point(p, q):
            d = (p[0] - q[0]) * (a[1] - b[1]) - (p[1] - q[1]) * (a[0] - b[0])
            t = ((p[0] - a[0]) * (a[1] - b[1]) - (p[1] - a[1]) * (a[0] - b[0])) / d
            return (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]))

        inp, out = out, []
        if not inp:
            break
        s = inp[-1]
        for e in inp:
            if inside(e):
                if not inside(s):
                    out.append(cross_point(s, e))
                out.append(e)
            elif inside(s):
                out.append(cross_point(s, e))
            s = e
    return out


def overlap_area(p, q):
    c = clip(p, q)
    return abs(signed_area(c)) if len(c) >= 3 else 0.0


def edge_height(p):
    return (math.dist(p[0], p[3]) + math.dist(p[1], p[2])) / 2


def check(set_dir, dict_path):
    errors = []
    err = errors.append
    path = os.path.join(set_dir, 'labels.json')
    try:
        with open(path, encoding='utf-8') as f:
            labels = json.load(f)
    except (OSError, ValueError) as e:
        return [f'{path}: {e}'], None
    charset = None
    if dict_path and os.path.isfile(dict_path):
        with open(dict_path, encoding='utf-8') as f:
            charset = frozenset(f.read().split('\n'))
    if not isinstance(labels, dict) or set(labels) != {'generator', 'seed', 'count', 'images'}:
        return [f'{path}: top level must have exactly generator, seed, count, images'], None
    images = labels['images']
    if not isinstance(images, list) or len(images) != labels['count']:
        err(f'"images" must be a list of "count" ({labels["count"]}) entries')
    stats = {'images': 0, 'lines': 0, 'lines_zh': 0, 'lines_en': 0, 'chars': 0, 'chars_zh_lines': 0,
             'tags': {t: 0 for t in TAGS}, 'heights': [], 'widths': [], 'image_sides': [], 'bytes': 0,
             'formats': {}}
    files = set()
    for im in images if isinstance(images, list) else []:
        name = im.get('file') if isinstance(im, dict) else None
        where = f'{name}'
        if not isinstance(im, dict) or set(im) != {'file', 'width', 'height', 'tags', 'lines'}:
            err(f'{where}: image entry must have exactly file, width, height, tags, lines')
            continue
        if name in files:
            err(f'{where}: listed twice')
        files.add(name)
        stats['images'] += 1
        w, h = im['width'], im['height']
        file_path = os.path.join(set_dir, name)
        if not os.path.isfile(file_path):
            err(f'{where}: file missing')
        else:
            with Image.open(file_path) as img:
                if img.size != (w, h):
                    err(f'{where}: image is {img.size[0]}x{img.size[1]}, labels say {w}x{h}')
                stats['formats'][img.format] = stats['formats'].get(img.format, 0) + 1
            stats['bytes'] += os.path.getsize(file_path)
        stats['image_sides'] += [w, h]
        tags = im['tags']
        if not isinstance(tags, list) or len(set(tags)) != len(tags) or any(t not in TAGS for t in tags):
            err(f'{where}: tags {tags} must be distinct values of {TAGS}')
            tags = [t for t in tags if t in TAGS] if isinstance(tags, list) else []
        if ('page' in tags) == ('photo' in tags):
            err(f'{where}: exactly one of the tags page, photo')
        for t in set(tags):
            stats['tags'][t] += 1
        upside_down = 'upside_down' in tags
        polys = []
        for k, line in enumerate(im['lines']):
            lw = f'{where} line {k}'
            if not isinstance(line, dict) or set(line) != {'text', 'lang', 'polygon'}:
                err(f'{lw}: line must have exactly text, lang, polygon')
                continue
            text, lang, poly = line['text'], line['lang'], line['polygon']
            if not isinstance(text, str) or not text or text != unicodedata.normalize('NFC', text) \
                    or text != text.strip() or '  ' in text or any(c.isspace() and c != ' ' for c in text):
                err(f'{lw}: text {text!r} must be non-empty NFC, single spaces, no leading/trailing space')
                continue
            if lang not in ('en', 'zh'):
                err(f'{lw}: lang {lang!r} must be "en" or "zh"')
            if lang == 'zh' and not any(is_cjk(c) for c in text):
                err(f'{lw}: Chinese line without Chinese characters: {text!r}')
            if lang == 'en' and any(is_cjk(c) for c in text):
                err(f'{lw}: English line with Chinese characters: {text!r}')
            if charset is not None:
                bad = sorted({c for c in text if c != ' ' and c not in charset})
                if bad:
                    err(f'{lw}: characters not in the recognition dictionary: {bad}')
            if not (isinstance(poly, list) and len(poly) == 4 and all(
                    isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) for v in p) for p in poly)):
                err(f'{lw}: polygon must be 4 [x, y] points')
                continue
            if any(not (0 <= x <= w and 0 <= y <= h) for x, y in poly):
                err(f'{lw}: polygon {poly} leaves the {w}x{h} image')
            if not convex_clockwise(poly):
                err(f'{lw}: polygon {poly} is not convex and clockwise')
            dx, dy = poly[1][0] - poly[0][0], poly[1][1] - poly[0][1]
            angle = math.degrees(math.atan2(dy, dx))
            if upside_down and abs(angle) < 150 or not upside_down and abs(angle) > 30:
                err(f'{lw}: top edge runs at {angle:.1f} degrees, not '
                    f'{"right to left (upside_down)" if upside_down else "left to right"}')
            height = edge_height(poly)
            if not MIN_H - HEIGHT_TOLERANCE <= height <= MAX_H + HEIGHT_TOLERANCE:
                err(f'{lw}: text height {height:.1f} px outside {MIN_H}-{MAX_H}')
            stats['heights'].append(height)
            stats['widths'].append((math.dist(poly[0], poly[1]) + math.dist(poly[3], poly[2])) / 2)
            stats['lines'] += 1
            stats['chars'] += len(text)
            if lang == 'zh':
                stats['lines_zh'] += 1
                stats['chars_zh_lines'] += len(text)
            else:
                stats['lines_en'] += 1
            polys.append((k, poly))
        for a in range(len(polys)):
            for b in range(a + 1, len(polys)):
                area = overlap_area(polys[a][1], polys[b][1])
                if area > 0.5:
                    err(f'{where}: lines {polys[a][0]} and {polys[b][0]} overlap ({area:.1f} px2)')
    if stats['lines'] and stats['lines_zh'] * 3 < stats['lines']:
        err(f'only {stats["lines_zh"]} of {stats["lines"]} lines are Chinese (need at least a third)')
    for f in sorted(os.listdir(set_dir)):
        if f.lower().endswith(('.png', '.jpg', '.jpeg')) and f not in files:
            err(f'{f}: image file not listed in labels.json')
    return errors, stats


def summary(stats):
    hs, sides = sorted(stats['heights']), stats['image_sides']
    return {
        'images': stats['images'], 'lines': stats['lines'], 'lines_zh': stats['lines_zh'],
        'lines_en': stats['lines_en'], 'chars': stats['chars'], 'chars_in_zh_lines': stats['chars_zh_lines'],
        'tags': stats['tags'], 'formats': stats['formats'], 'bytes': stats['bytes'],
        'text_height_px': {'min': round(hs[0], 1), 'median': round(hs[len(hs) // 2], 1), 'max': round(hs[-1], 1),
                           'under_16': sum(h < 16 for h in hs)} if hs else None,
        'image_side_px': {'min': min(sides), 'max': max(sides)} if sides else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('dir')
    ap.add_argument('--dict', default=os.path.join(ROOT, 'models/ppocrv4/ppocr_keys_v1.txt'),
                    help='recognition dictionary; skipped when the file does not exist')
    ap.add_argument('--json', action='store_true', help='print the statistics as JSON')
    args = ap.parse_args()
    if not os.path.isdir(args.dir):
        sys.exit(f'check_ocr_set: not a folder: {args.dir}')
    errors, stats = check(args.dir, args.dict)
    for e in errors:
        print(f'ERROR {e}', file=sys.stderr)
    if stats is not None:
        s = summary(stats)
        if args.json:
            print(json.dumps(s, indent=1))
        else:
            print(f'{s["images"]} images ({", ".join(f"{n} {k}" for k, n in sorted(s["formats"].items()))}), '
                  f'{s["bytes"] / 1e6:.2f} MB, sides {s["image_side_px"]["min"]}-{s["image_side_px"]["max"]} px')
            print(f'{s["lines"]} lines: {s["lines_zh"]} zh ({100 * s["lines_zh"] / max(1, s["lines"]):.0f}%), '
                  f'{s["lines_en"]} en; {s["chars"]} characters ({s["chars_in_zh_lines"]} in zh lines)')
            th = s['text_height_px']
            if th:
                print(f'text height px: min {th["min"]}, median {th["median"]}, max {th["max"]}, '
                      f'{th["under_16"]} lines under 16')
            print('tags: ' + ', '.join(f'{t} {n}' for t, n in s['tags'].items()))
    print('OK' if not errors else f'{len(errors)} problem(s)', file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == '__main__':
    main()
