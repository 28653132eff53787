#!/usr/bin/python3
"""PP-OCR input preprocessing (PaddleOCR inference defaults, see ../shared/PPOCR.md) to .npy.

usage:
  ppocr_preprocess.py det IMAGE OUT.npy [--limit 960 | --size WxH]
      DB detection input 1x3xHxW float32: longer side limited to --limit (never enlarged),
      each side rounded to a multiple of 32 (PaddleOCR DetResizeForTest, limit_type max);
      --size forces W and H instead. BGR, x/255, mean (0.485,0.456,0.406), std (0.229,0.224,0.225).
  ppocr_preprocess.py line IMAGE OUT.npy --box X0,Y0,X1,Y1 [--width 320]
      rec (--width 320) or cls (--width 192) input 1x3x48xW float32 of the crop: resized to
      48 high keeping the aspect ratio (squeezed if wider than W), BGR, (x/255-0.5)/0.5,
      padded right with 0 (PaddleOCR resize_norm_img).
  ppocr_preprocess.py noise OUT.npy --shape 1,3,640,640 [--seed 0]
      seeded uniform noise in [-2, 2), float32 (numpy default_rng(seed).uniform).

Resizing is bilinear with OpenCV's INTER_LINEAR conventions (half-pixel centres, no
antialiasing, result rounded to uint8 as cv2.resize does on uint8 images).
Runs with /usr/bin/python3 (PIL + numpy). Prints the written shape.
"""
import argparse

import numpy as np
from PIL import Image


def load_bgr(path):
    return np.asarray(Image.open(path).convert('RGB'))[:, :, ::-1]


def resize_bilinear(img, w, h):
    """cv2.resize(img, (w, h), interpolation=INTER_LINEAR) for a uint8 HxWxC image."""
    def taps(dst, src):
        s = np.clip((np.arange(dst) + 0.5) * (src / dst) - 0.5, 0, src - 1)
        i0 = np.floor(s).astype(np.int64)
        return i0, np.minimum(i0 + 1, src - 1), (s - i0).astype(np.float32)
    y0, y1, fy = taps(h, img.shape[0])
    x0, x1, fx = taps(w, img.shape[1])
    a = img.astype(np.float32)
    rows = a[y0] * (1 - fy)[:, None, None] + a[y1] * fy[:, None, None]
    out = rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def det_size(h, w, limit):
    ratio = limit / max(h, w) if max(h, w) > limit else 1.0
    return (max(int(round(int(w * ratio) / 32) * 32), 32), max(int(round(int(h * ratio) / 32) * 32), 32))


def det_input(img, limit=960, size=None):
    w, h = size or det_size(img.shape[0], img.shape[1], limit)
    x = resize_bilinear(img, w, h).astype(np.float32) / 255.0
    x = (x - np.float32([0.485, 0.456, 0.406])) / np.float32([0.229, 0.224, 0.225])
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def line_input(img, box, width=320, height=48):
    x0, y0, x1, y1 = box
    crop = img[y0:y1, x0:x1]
    rw = min(width, int(np.ceil(height * crop.shape[1] / crop.shape[0])))
    x = resize_bilinear(crop, rw, height).astype(np.float32) / 255.0
    out = np.zeros((1, 3, height, width), np.float32)
    out[0, :, :, :rw] = ((x - 0.5) / 0.5).transpose(2, 0, 1)
    return out


def ints(text, sep):
    return tuple(int(v) for v in text.split(sep))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage=argparse.SUPPRESS)
    ap.add_argument('mode', choices=['det', 'line', 'noise'])
    ap.add_argument('paths', nargs='+', help='IMAGE OUT.npy (det, line) or OUT.npy (noise)')
    ap.add_argument('--limit', type=int, default=960)
    ap.add_argument('--size', type=lambda s: ints(s, 'x'), help='WxH')
    ap.add_argument('--box', type=lambda s: ints(s, ','), help='X0,Y0,X1,Y1')
    ap.add_argument('--width', type=int, default=320)
    ap.add_argument('--shape', type=lambda s: ints(s, ','))
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_intermixed_args()
    if a.mode == 'noise':
        if len(a.paths) != 1 or not a.shape:
            ap.error('noise wants OUT.npy and --shape')
        x = np.random.default_rng(a.seed).uniform(-2.0, 2.0, a.shape).astype(np.float32)
    else:
        if len(a.paths) != 2:
            ap.error(f'{a.mode} wants IMAGE OUT.npy')
        img = load_bgr(a.paths[0])
        if a.mode == 'det':
            x = det_input(img, a.limit, a.size)
        elif not a.box:
            ap.error('line wants --box X0,Y0,X1,Y1')
        else:
            x = line_input(img, a.box, a.width)
    np.save(a.paths[-1], x)
    print(f'{a.paths[-1]}: {x.dtype} {list(x.shape)}')


if __name__ == '__main__':
    main()
