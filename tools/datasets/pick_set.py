#!/usr/bin/python3
"""Takes every Nth image of a labelled OCR set into a smaller set (the images linked, not copied).

usage: /usr/bin/python3 tools/datasets/pick_set.py --set DIR --every N [--first K] --out DIR2

Writes DIR2/labels.json with images K, K + N, K + 2N, ... of DIR/labels.json (K defaults to 0)
and a symbolic link to each of their files, so that a quick check (CI) scores a fixed, evenly
spread part of a large set.
"""
import argparse
import json
import os


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--set', required=True)
    parser.add_argument('--every', type=int, required=True)
    parser.add_argument('--first', type=int, default=0)
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    if args.every < 1 or args.first < 0:
        parser.error('--every must be >= 1 and --first >= 0')
    with open(os.path.join(args.set, 'labels.json'), encoding='utf-8') as f:
        labels = json.load(f)
    labels['images'] = labels['images'][args.first::args.every]
    labels['picked'] = {'from': args.set, 'every': args.every, 'first': args.first}
    os.makedirs(args.out, exist_ok=True)
    for image in labels['images']:
        link = os.path.join(args.out, image['file'])
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(os.path.join(args.set, image['file'])), link)
    with open(os.path.join(args.out, 'labels.json'), 'w', encoding='utf-8') as f:
        json.dump(labels, f, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
