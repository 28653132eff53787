#!/usr/bin/env python3
"""Per-line comparison of OCR prediction files on a labelled set (data/ocr_set).

Usage: ocr_line_diff.py SET PRED_A PRED_B [PRED_C ...] [--bootstrap N] [--show K]

Each PRED is what `edgemm eval ocr --save-predictions` (or `edgemm ocr --json`) writes. Lines
are matched to the truth as `edgemm eval ocr` does (polygon IoU >= 0.5, best pairs first; the
quadrilaterals are convex, so Sutherland-Hodgman clipping gives the intersection), texts are
compared after the same whitespace normalization, and an unmatched true line counts all of its
characters as errors. Prints each file's CER (all, upright, upside down), the lines whose
edits differ between A and each other file (with texts and the angle classifier's decision),
and a bootstrap 95 % interval of the CER difference B - A, resampling images (lines of one
image share its rendering, so they are not independent) and, for comparison, lines.
"""
import argparse
import json
import os
import random


def area(poly):
    s = 0.0
    for i in range(len(poly)):
        x1, y1 = poly[i]
        x2, y2 = poly[(i + 1) % len(poly)]
        s += x1 * y2 - x2 * y1
    return s / 2.0


def ccw(poly):
    return poly if area(poly) >= 0 else list(reversed(poly))


def clip(subject, clipper):
    """Sutherland-Hodgman: subject polygon clipped by a convex counter-clockwise polygon."""
    out = subject
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]
        inside = lambda p: (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0
        src, out = out, []
        for j in range(len(src)):
            p, q = src[j], src[(j + 1) % len(src)]
            if inside(q):
                if not inside(p):
                    out.append(cross(p, q, a, b))
                out.append(q)
            elif inside(p):
                out.append(cross(p, q, a, b))
        if not out:
            return []
    return out


def cross(p, q, a, b):
    dx, dy = q[0] - p[0], q[1] - p[1]
    ex, ey = b[0] - a[0], b[1] - a[1]
    den = dx * ey - dy * ex
    if den == 0:
        return q
    t = ((a[0] - p[0]) * ey - (a[1] - p[1]) * ex) / den
    return (p[0] + t * dx, p[1] + t * dy)


def iou(a, b):
    a, b = ccw([tuple(p) for p in a]), ccw([tuple(p) for p in b])
    inter = clip(a, b)
    i = abs(area(inter)) if len(inter) >= 3 else 0.0
    u = abs(area(a)) + abs(area(b)) - i
    return i / u if u > 0 else 0.0


def normalize(text):
    return " ".join(text.split())


def edits(a, b):
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        prev, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
            prev = cur
    return row[len(b)]


def score(truth_images, pred_path, iou_threshold=0.5):
    """{(file, truth index): (edits, chars, predicted text or None, rotated_180 or None)}"""
    pred = json.load(open(pred_path))
    by_name = {os.path.basename(p["file"]): p for p in pred["images"]}
    out = {}
    for image in truth_images:
        lines = by_name.get(image["file"], {}).get("lines", [])
        candidates = []
        for t, tl in enumerate(image["lines"]):
            for p, pl in enumerate(lines):
                v = iou(tl["polygon"], pl["polygon"])
                if v >= iou_threshold:
                    candidates.append((-v, t, p))
        candidates.sort()
        used_t, used_p = set(), set()
        for _, t, p in candidates:
            if t in used_t or p in used_p:
                continue
            used_t.add(t)
            used_p.add(p)
            truth = normalize(image["lines"][t]["text"])
            text = normalize(lines[p]["text"])
            out[(image["file"], t)] = (edits(truth, text), len(truth), text, lines[p].get("rotated_180"))
        for t, tl in enumerate(image["lines"]):
            if t not in used_t:
                n = len(normalize(tl["text"]))
                out[(image["file"], t)] = (n, n, None, None)
    return out


def cer(result, keys):
    e = sum(result[k][0] for k in keys)
    n = sum(result[k][1] for k in keys)
    return 100.0 * e / n if n else 0.0


def bootstrap(a, b, groups, n, rng):
    """95 % interval of CER(b) - CER(a) in points, resampling the groups (lists of keys)."""
    diffs = []
    for _ in range(n):
        ea = eb = chars = 0
        for _ in range(len(groups)):
            for k in groups[rng.randrange(len(groups))]:
                ea += a[k][0]
                eb += b[k][0]
                chars += a[k][1]
        diffs.append(100.0 * (eb - ea) / chars)
    diffs.sort()
    return diffs[int(0.025 * n)], diffs[int(0.975 * n) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set")
    ap.add_argument("predictions", nargs="+")
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--show", type=int, default=60, help="changed lines to print per pair")
    args = ap.parse_args()
    truth = json.load(open(os.path.join(args.set, "labels.json")))["images"]
    upside = {im["file"] for im in truth if "upside_down" in im["tags"]}
    keys = [(im["file"], t) for im in truth for t in range(len(im["lines"]))]
    results = [score(truth, p) for p in args.predictions]
    up = [k for k in keys if k[0] not in upside]
    down = [k for k in keys if k[0] in upside]
    print(f"{len(keys)} lines ({len(down)} on upside-down images), {len(truth)} images")
    for path, r in zip(args.predictions, results):
        print(f"{cer(r, keys):6.2f} %  upright {cer(r, up):6.2f} %  upside down {cer(r, down):6.2f} %  {path}")
    rng = random.Random(1)
    by_image = [[k for k in keys if k[0] == im["file"]] for im in truth]
    by_line = [[k] for k in keys]
    a = results[0]
    for path, b in zip(args.predictions[1:], results[1:]):
        changed = [k for k in keys if a[k][2] != b[k][2] or a[k][0] != b[k][0]]
        worse = sum(b[k][0] - a[k][0] for k in changed if b[k][0] > a[k][0])
        better = sum(a[k][0] - b[k][0] for k in changed if b[k][0] < a[k][0])
        flips = sum(1 for k in keys if a[k][3] is not None and b[k][3] is not None and a[k][3] != b[k][3])
        print(f"\n{path} vs {args.predictions[0]}: {len(changed)} lines changed, +{worse} / -{better} edits, "
              f"{flips} angle-classifier flips")
        print("  95 %% interval of the CER difference (points): images %.2f .. %.2f, lines %.2f .. %.2f"
              % (bootstrap(a, b, by_image, args.bootstrap, rng) + bootstrap(a, b, by_line, args.bootstrap, rng)))
        for k in sorted(changed, key=lambda k: a[k][0] - b[k][0])[: args.show]:
            tag = "down" if k[0] in upside else "up"
            print(f"  {k[0]}#{k[1]} [{tag}] edits {a[k][0]} -> {b[k][0]} / {a[k][1]} rot {a[k][3]}->{b[k][3]}: "
                  f"{a[k][2]!r} -> {b[k][2]!r}")


if __name__ == "__main__":
    main()
