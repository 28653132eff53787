#!/usr/bin/python3
"""Turns every image of a labelled OCR set by 90, 180 or 270 degrees clockwise, with its labels.

usage: /usr/bin/python3 tools/datasets/turn_set.py --set DIR --degrees 90|180|270 --out DIR2

Writes DIR2/<stem>.png (lossless: pixels are moved, never resampled or re-encoded, so the turned
image holds exactly the upright one's pixels) and DIR2/labels.json with every polygon carried
through the same map. A polygon keeps its point order (the text's own top-left first), so it
still says which way the text runs. The orientation tag becomes the image's total turn:
"upside_down" (tools/datasets/make_ocr_set.py) counts as 180 degrees, "turned_D" as D; the
result is tagged "turned_90", "turned_180" or "turned_270" (none when it comes back upright),
which `edgemm eval ocr` reports as orientation subsets.
"""
import argparse
import json
import os
import sys

from PIL import Image

TRANSPOSE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


def turn_point(x, y, width, height, degrees):
    """(x, y) in continuous pixel coordinates of a width x height image, turned clockwise."""
    if degrees == 90:
        return [round(height - y, 2), round(x, 2)]
    if degrees == 180:
        return [round(width - x, 2), round(height - y, 2)]
    return [round(y, 2), round(width - x, 2)]


def turned_tags(tags, degrees):
    total = degrees
    kept = []
    for tag in tags:
        if tag == 'upside_down':
            total += 180
        elif tag.startswith('turned_'):
            total += int(tag[len('turned_'):])
        else:
            kept.append(tag)
    total %= 360
    return kept + ([f'turned_{total}'] if total else [])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--set', required=True)
    parser.add_argument('--degrees', type=int, choices=[90, 180, 270], required=True)
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    with open(os.path.join(args.set, 'labels.json'), encoding='utf-8') as f:
        labels = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    for image in labels['images']:
        width, height = image['width'], image['height']
        with Image.open(os.path.join(args.set, image['file'])) as source:
            turned = source.transpose(TRANSPOSE[args.degrees])
            image['file'] = os.path.splitext(image['file'])[0] + '.png'
            turned.save(os.path.join(args.out, image['file']))
        if args.degrees != 180:
            image['width'], image['height'] = height, width
        image['tags'] = turned_tags(image.get('tags', []), args.degrees)
        for line in image['lines']:
            line['polygon'] = [turn_point(x, y, width, height, args.degrees) for x, y in line['polygon']]
    labels['turned'] = {'from': args.set, 'degrees_clockwise': args.degrees}
    with open(os.path.join(args.out, 'labels.json'), 'w', encoding='utf-8') as f:
        json.dump(labels, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'turn_set: {len(labels["images"])} images turned {args.degrees} degrees into {args.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
