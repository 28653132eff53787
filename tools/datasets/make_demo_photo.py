#!/usr/bin/python3
"""Draws English and Chinese text onto a real photo: the OCR demo input of edgemm.

usage: /usr/bin/python3 tools/datasets/make_demo_photo.py [--photo data/photos/coffee.png]
           [--out data/demo/photo_text.jpg]

Scales the photo 1.6x (coffee.png 600x400 -> 960x640), draws text lines of 16-48 px with
Debian fonts (fonts-dejavu, fonts-liberation2, fonts-wqy-microhei): dark text on light panels
and light text straight on the photo, and writes the JPEG (quality 92) plus, beside it,
<out>.json with each line's text and box [x0, y0, x1, y1] in pixels of the written image.
Deterministic: the same inputs give the same file.
"""
import argparse
import json
import os

from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FONTS = '/usr/share/fonts/truetype'
DEJAVU_BOLD = f'{FONTS}/dejavu/DejaVuSans-Bold.ttf'
CONDENSED_BOLD = f'{FONTS}/dejavu/DejaVuSansCondensed-Bold.ttf'
DEJAVU = f'{FONTS}/dejavu/DejaVuSans.ttf'
SERIF = f'{FONTS}/liberation2/LiberationSerif-Bold.ttf'
SANS = f'{FONTS}/liberation2/LiberationSans-Regular.ttf'
CJK = f'{FONTS}/wqy/wqy-microhei.ttc'

DARK, LIGHT = (30, 24, 20), (250, 246, 236)
# Light panels: box, fill.
PANELS = [((560, 16, 952, 192), (244, 238, 222)), ((16, 500, 420, 624), (236, 236, 230))]
# Text lines: text, font, size in px, top-left position, colour.
LINES = [
    ('ESPRESSO BAR', CONDENSED_BOLD, 48, (574, 22), DARK),
    ('浓缩咖啡 · 拿铁', CJK, 36, (576, 84), DARK),
    ('Open daily 7:00 - 19:00', SANS, 24, (576, 132), DARK),
    ('Wi-Fi: edgemm-guest', DEJAVU, 16, (576, 164), DARK),
    ('今日特价 ¥18', CJK, 40, (30, 508), DARK),
    ('Fresh beans, roasted in-house', SERIF, 22, (30, 562), DARK),
    ('Table 7  ·  2 cups', DEJAVU, 18, (30, 596), DARK),
    ('Good morning!', DEJAVU_BOLD, 32, (14, 14), LIGHT),
    ('早上好', CJK, 30, (14, 58), LIGHT),
    ('手工烘焙', CJK, 34, (790, 300), LIGHT),
    ('Since 2009', SERIF, 28, (790, 352), LIGHT),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--photo', default=os.path.join(ROOT, 'data/photos/coffee.png'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'data/demo/photo_text.jpg'))
    args = ap.parse_args()

    im = Image.open(args.photo).convert('RGB')
    im = im.resize((im.width * 8 // 5, im.height * 8 // 5), Image.LANCZOS)
    draw = ImageDraw.Draw(im)
    for box, fill in PANELS:
        draw.rounded_rectangle(box, radius=10, fill=fill)
    labels = []
    for text, font_file, size, xy, colour in LINES:
        font = ImageFont.truetype(font_file, size)
        draw.text(xy, text, font=font, fill=colour)
        labels.append({'text': text, 'box': list(draw.textbbox(xy, text, font=font)), 'size_px': size})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    im.save(args.out, quality=92)
    with open(os.path.splitext(args.out)[0] + '.json', 'w', encoding='utf-8') as f:
        json.dump({'image': os.path.basename(args.out), 'width': im.width, 'height': im.height,
                   'source': os.path.basename(args.photo), 'lines': labels}, f, ensure_ascii=False, indent=1)
    print(f'wrote {args.out} ({im.width}x{im.height}, {len(labels)} text lines)')


if __name__ == '__main__':
    main()
