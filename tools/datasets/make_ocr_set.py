#!/usr/bin/python3
"""Labelled OCR evaluation set: known English and Chinese text lines drawn onto plain pages and
real photos, with degradations, and every line's true 4-point polygon.

usage: /usr/bin/python3 tools/datasets/make_ocr_set.py --out DIR [--seed 1] [--count 20]
           [--photos data/photos] [--dict models/ppocrv4/ppocr_keys_v1.txt]

Writes DIR/NNN_<kind>_<background>.{png,jpg} and DIR/labels.json:

  {"generator": "tools/datasets/make_ocr_set.py", "seed": 1, "count": 20,
   "images": [{"file": "000_page_white.png", "width": 850, "height": 1100,
               "tags": ["page", ...],
               "lines": [{"text": "Total: $12.50", "lang": "en",
                          "polygon": [[x, y], [x, y], [x, y], [x, y]]}, ...]}, ...]}

Polygons are in pixels of the written image (continuous coordinates: pixel (i, j) covers
[i, i+1) x [j, j+1)); they are the ink box of the rendered line (anti-aliased pixels above 1/4
coverage) carried through the same affine maps as the pixels (line tilt, whole-image rotation,
180 degree turn), ordered by the text's own reading direction: top-left, top-right,
bottom-right, bottom-left (clockwise on screen), so on an upside-down image the first point is
the text's top-left, which lies at the bottom-right of the line's area in the image.

Tags (canonical order): page | photo (background), rotated (whole image turned by 3-12
degrees), tilted_lines (some lines tilted by 1-12 degrees on their own), blur (Gaussian blur,
radius 0.6-1.2 px), jpeg (saved as JPEG of quality 30-70; photos without this tag are JPEG of
quality 90, pages without it PNG), upside_down (whole image turned 180 degrees), small_text
(some line under 16 px high).

Text: 12-60 px ink height, at least a third of the lines Chinese (lang "zh", font WenQuanYi
Micro Hei), the rest English (lang "en", DejaVu and Liberation fonts); NFC, single spaces,
every character in PP-OCR's recognition dictionary (the generator refuses otherwise). Lines
never overlap (their padded areas are stacked top to bottom before any rotation). On photos
each line either sits on a semi-opaque plate or is drawn straight on a calm, contrasting
region.

Photos come from --photos (the repo's data/photos). Deterministic: the same seed, count and
inputs give byte-identical files (Pillow's basic text layout, no time stamps); other seeds give
other sets.
"""
import argparse
import json
import math
import os
import random
import re
import sys
import unicodedata

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR = 'tools/datasets/make_ocr_set.py'
FONT_DIR = '/usr/share/fonts/truetype'
EN_FONTS = [f'{FONT_DIR}/dejavu/{f}' for f in (
    'DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSansCondensed.ttf', 'DejaVuSansCondensed-Bold.ttf',
    'DejaVuSerif.ttf', 'DejaVuSerif-Bold.ttf', 'DejaVuSansMono.ttf')] + [
    f'{FONT_DIR}/liberation2/{f}' for f in (
        'LiberationSans-Regular.ttf', 'LiberationSans-Bold.ttf', 'LiberationSans-Italic.ttf',
        'LiberationSerif-Regular.ttf', 'LiberationSerif-Bold.ttf', 'LiberationSerif-Italic.ttf',
        'LiberationMono-Regular.ttf')]
ZH_FONT = f'{FONT_DIR}/wqy/wqy-microhei.ttc'
PHOTOS = ['coffee.png', 'chelsea.png', 'rocket.jpg', 'astronaut.png', 'brick.png', 'grass.png']
TAG_ORDER = ['page', 'photo', 'rotated', 'tilted_lines', 'blur', 'jpeg', 'upside_down', 'small_text']
MIN_H, MAX_H = 12, 60  # ink height of a line in pixels
INK_LEVEL = 64  # mask value (of 255) counted as ink for the tight box

PAPERS = {
    'white': (252, 252, 250), 'cream': (246, 241, 226), 'grey': (222, 222, 219),
    'yellow': (250, 238, 185), 'blue': (214, 229, 245), 'pink': (246, 220, 226),
    'mint': (214, 240, 222), 'kraft': (214, 190, 152),
}
DARK_INKS = [(20, 20, 20), (45, 45, 48), (70, 70, 72), (22, 40, 112), (130, 20, 24), (18, 78, 40)]
LIGHT_INKS = [(255, 255, 255), (250, 246, 228), (255, 236, 140)]
SOLID_PLATES = [(30, 50, 110), (150, 30, 30), (30, 90, 60), (40, 40, 44)]

# ---------------------------------------------------------------------------------------------
# Content. Only characters of PP-OCR's dictionary (checked at start-up).
EN_PHRASES = [
    'Fresh bread baked every morning', 'Please keep this door closed', 'No parking in front of the gate',
    'Open Monday to Friday', 'Staff only beyond this point', 'Thank you for shopping with us',
    'Mind the step', 'Emergency exit', 'Scan the QR code to order', 'All prices include VAT',
    'Free Wi-Fi for customers', 'Return books to the front desk', 'Lost and found',
    'Please wait to be seated', 'Push to open', 'Handmade in small batches', 'Best before the date shown',
    'Store in a cool, dry place', 'Do not feed the animals', 'Visitors must sign in at reception',
    'The meeting starts at ten', 'Quiet zone: no phone calls', 'Welcome to the science museum',
    'Cash and cards accepted', 'Closed on public holidays', 'Take one, leave one', 'Fragile: handle with care',
    'This side up', 'Recycle paper and cans here', 'Launch window opens at dawn', 'Cats are welcome inside',
    'Coffee of the day', 'Seasonal menu', 'Brick Lane Market', 'Green Valley Farm', 'Ask us about catering',
    'Delivery within 24 hours', 'Wash your hands before eating', 'Keep off the grass', 'Watch your head',
    'Lift out of order', 'Please use the other entrance', 'Tickets sold at the door only',
    'Children must be accompanied', 'Last entry one hour before closing', 'Daily specials on the board',
    'Made with local ingredients', 'Our team will be back soon', 'Press the button and wait',
    'Private property', 'Beware of the cat', 'Fasten seat belts', 'Hot drinks to go',
    'Space exploration exhibition', 'Ground floor: cafe and shop', 'Next tour starts at 14:30',
    'Mobile phones must be switched off', 'Please recycle your cup', 'Annual report 2023',
    'Chapter 3: Results and discussion', 'See page 42 for details', 'Terms and conditions apply',
]
EN_SENTENCES = [  # longer lines for pages
    'The library will be closed for maintenance on Saturday.',
    'Please submit your expense report by the end of the month.',
    'Our opening hours change during the summer holidays.', 'All visitors must wear a badge at all times.',
    'The package was delivered to the front desk at 10:42.',
    'Thank you for your order, it will ship within two days.',
    'Meeting notes: budget approved, next review in May.',
    'Keep the receipt as proof of purchase for 30 days.',
    'Room 204 is reserved for the design team until noon.',
    'Tickets can be refunded up to 24 hours before the show.',
    'The rocket reached orbit nine minutes after launch.', 'Fresh coffee is served every morning from 7:30.',
    'Please report any damage to the building manager.',
    'Parking is free for customers for up to two hours.', 'The results are summarised in Table 2 below.',
    'Payment is due within 14 days of the invoice date.',
]
EN_WORDS = ['SALE', 'EXIT', 'OPEN', 'CLOSED', 'PHARMACY', 'BAKERY', 'HOTEL', 'TAXI', 'PARKING',
            'INFORMATION', 'WELCOME', 'MENU', 'TICKETS', 'STOP', 'PULL', 'PUSH', 'NEW', 'FREE', 'ESPRESSO',
            'LIBRARY', 'STATION', 'MUSEUM', 'GARDEN', 'KITCHEN', 'RECEPTION', 'Launch', 'Mission',
            'Breakfast', 'Lunch', 'Dinner', 'Coffee', 'Tea', 'Juice', 'Bicycle', 'Platform']
EN_ITEMS = ['Latte', 'Espresso', 'Cappuccino', 'Green tea', 'Croissant', 'Bagel', 'Orange juice',
            'Sandwich', 'Muffin', 'Salad bowl', 'Notebook', 'Pencil set', 'USB cable', 'Batteries AA',
            'Cat food', 'Milk 1L', 'Apples 2kg', 'Rice 5kg', 'Olive oil', 'Dark chocolate']
EN_NAMES = ['anna', 'info', 'sales', 'hello', 'support', 'j.smith', 'office', 'orders']
EN_DOMAINS = ['northwind', 'brightside', 'bluebird-cafe', 'edgemm', 'greenvalley', 'starlab', 'papermill']
MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September',
          'October', 'November', 'December']
DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
CITIES = ['London', 'Paris', 'Berlin', 'Tokyo', 'Boston', 'Sydney', 'Madrid', 'Toronto', 'Beijing',
          'Shanghai']

ZH_PHRASES = [
    '欢迎光临', '营业时间', '今日特价', '请勿吸烟', '安全出口', '会议室', '停车场入口', '小心地滑', '禁止停车',
    '请排队等候', '谢谢惠顾', '新鲜面包每天出炉', '本店支持微信支付', '顾客休息区', '员工通道', '请保持安静',
    '图书归还处', '失物招领', '请随手关门', '节约用水', '爱护环境人人有责', '手工咖啡', '拿铁咖啡', '热巧克力',
    '招牌牛肉面', '火箭发射中心', '航天员训练基地', '科学技术博物馆', '宠物友好餐厅', '猫咪咖啡馆',
    '城市图书馆', '人民公园', '火车站', '地铁二号线', '公交车站', '前方施工请绕行', '注意安全',
    '电梯故障暂停使用', '办公时间周一至周五', '学生证打八折', '会员专享优惠', '满一百减二十', '买一送一',
    '新品上市', '限时抢购', '全场五折起', '春季新款', '欢迎下次光临', '祝您生活愉快', '天气晴朗适合出游',
    '明天下午三点开会', '请在此处签名', '收银台', '服务台', '洗手间', '儿童游乐区', '医院急诊', '药店',
    '银行', '超市', '书店', '花店', '面包店', '茶叶专卖店', '杭州西湖风景区', '今天是个好日子',
    '我们明天见', '请出示健康码', '外卖自取处', '小猫正在睡觉', '这只猫叫小花', '早上好', '晚安',
    '读书使人进步', '学而时习之', '年度工作报告', '第三章实验结果', '详见第十二页', '保质期十二个月',
    '请放在阴凉干燥处', '易碎物品轻拿轻放', '此面向上', '可回收垃圾', '其他垃圾', '厨余垃圾',
    '航天事业发展', '发射窗口在清晨打开', '砖墙上的小广告', '草地上请勿践踏', '咖啡豆产地云南',
]
ZH_SENTENCES = [  # longer lines for pages
    '本周六图书馆闭馆维护，请提前安排借阅。', '请在月底前提交报销单据', '会议纪要：预算已通过，五月再次评审',
    '所有访客必须全程佩戴证件', '包裹已于上午十点送到前台', '感谢您的订购，我们将在两天内发货',
    '请保留收据作为购物凭证', '火箭发射九分钟后进入预定轨道', '每天早上七点半供应新鲜咖啡',
    '如发现设施损坏请及时联系管理员', '顾客停车两小时内免费', '实验结果总结在下表中', '夏季营业时间有所调整',
    '演出前二十四小时可以退票', '本产品适合三岁以上儿童使用', '请将手机调至静音模式',
]
ZH_DISHES = ['宫保鸡丁', '麻婆豆腐', '西红柿炒鸡蛋', '小笼包', '北京烤鸭', '水果沙拉', '牛肉拉面',
             '酸辣汤', '蛋炒饭', '红烧肉', '豆浆油条', '绿茶', '奶茶', '美式咖啡', '鲜榨橙汁']
ZH_PLACES = ['北京市海淀区中关村大街', '上海市浦东新区世纪大道', '广州市天河区体育西路',
             '深圳市南山区科技园', '成都市武侯区人民南路', '杭州市西湖区文三路', '南京市鼓楼区中山路']
ZH_WEEKDAYS = '一二三四五六日'


def en_line(rng, long_ok=False):
    if long_ok and rng.random() < 0.35:
        return rng.choice(EN_SENTENCES)
    k = rng.random()
    if k < 0.38:
        return rng.choice(EN_PHRASES)
    if k < 0.46:
        return rng.choice(EN_WORDS)
    n = rng.randrange(18)
    price = lambda lo, hi: f'{rng.randint(lo, hi)}.{rng.randrange(100):02d}'
    y, mo, d = rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)
    hh, mm = rng.randint(6, 22), rng.choice([0, 5, 10, 15, 20, 30, 40, 45, 50])
    up = lambda k: ''.join(rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ') for _ in range(k))
    dig = lambda k: ''.join(rng.choice('0123456789') for _ in range(k))
    return [
        lambda: f'Total: ${price(5, 240)}',
        lambda: f'Subtotal ${price(5, 90)}',
        lambda: f'{rng.choice(EN_ITEMS)} x{rng.randint(1, 4)} ${price(1, 30)}',
        lambda: f'Tax ({rng.choice([5, 7, 8, 10, 13])}%) ${price(0, 12)}',
        lambda: f'Date: {y}-{mo:02d}-{d:02d}',
        lambda: f'{d} {MONTHS[mo - 1]} {y}',
        lambda: f'{rng.choice(DAYS)}, {d:02d} {MONTHS[mo - 1][:3]} {y} {hh:02d}:{mm:02d}',
        lambda: f'Order #{up(1)}{dig(5)}',
        lambda: f'Invoice No. INV-{y}-{dig(4)}',
        lambda: f'SN: {up(2)}{dig(1)}-{dig(4)}-{up(1)}{dig(2)}',
        lambda: f'Tel: +1 {dig(3)} {dig(3)} {dig(4)}',
        lambda: f'{rng.choice(EN_NAMES)}@{rng.choice(EN_DOMAINS)}.com',
        lambda: f'www.{rng.choice(EN_DOMAINS)}.org',
        lambda: f'Gate {up(1)}{rng.randint(1, 40)} Boarding {hh:02d}:{mm:02d}',
        lambda: f'Room {rng.randint(101, 920)}, Floor {rng.randint(1, 9)}',
        lambda: f'Flight {up(2)}{dig(4)} to {rng.choice(CITIES)}',
        lambda: f'Open daily {rng.randint(6, 10)}:00 - {rng.randint(17, 23)}:00',
        lambda: f'{rng.randint(2, 40)} items, {rng.randint(1, 30)}.{rng.randrange(10)} kg',
    ][n]()


def zh_line(rng, long_ok=False):
    if long_ok and rng.random() < 0.35:
        return rng.choice(ZH_SENTENCES)
    k = rng.random()
    if k < 0.5:
        return rng.choice(ZH_PHRASES)
    y, mo, d = rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)
    dig = lambda k: ''.join(rng.choice('0123456789') for _ in range(k))
    return [
        lambda: f'{rng.choice(ZH_DISHES)}{rng.randint(6, 88)}元',
        lambda: f'价格：{rng.randint(3, 399)}元',
        lambda: f'{y}年{mo}月{d}日',
        lambda: f'{y}年{mo}月{d}日星期{rng.choice(ZH_WEEKDAYS)}',
        lambda: f'营业时间：{rng.randint(6, 10)}:00-{rng.randint(17, 23)}:00',
        lambda: f'电话：{dig(3)}-{dig(4)}-{dig(4)}',
        lambda: f'订单号：{dig(10)}',
        lambda: f'第{rng.randint(1, 20)}号窗口',
        lambda: f'{rng.randint(1, 30)}号楼{rng.randint(1, 6)}单元',
        lambda: f'{rng.choice(ZH_PLACES)}{rng.randint(1, 300)}号',
        lambda: f'共{rng.randint(2, 30)}件商品',
        lambda: f'合计：{rng.randint(10, 999)}元',
        lambda: f'特价{rng.randint(5, 500)}元',
    ][rng.randrange(13)]()


def normalise(text):
    return re.sub(r'\s+', ' ', unicodedata.normalize('NFC', text)).strip()


# ---------------------------------------------------------------------------------------------
# Geometry: 3x3 matrices acting on column vectors (x, y, 1) in continuous pixel coordinates.
def rotation(deg, cx, cy):
    """Turns counter-clockwise on screen (y down) by deg around (cx, cy)."""
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, s, cx - c * cx - s * cy], [-s, c, cy + s * cx - c * cy], [0, 0, 1]], dtype=np.float64)


def translation(dx, dy):
    return np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], dtype=np.float64)


def apply(m, pts):
    p = np.asarray(pts, dtype=np.float64)
    return p @ m[:2, :2].T + m[:2, 2]


def warp(image, m, size, resample=Image.BICUBIC, fill=None):
    """Image under forward map m (source -> destination), destination of the given size."""
    inv = np.linalg.inv(m)
    data = (inv[0, 0], inv[0, 1], inv[0, 2], inv[1, 0], inv[1, 1], inv[1, 2])
    return image.transform(size, Image.AFFINE, data, resample=resample, fillcolor=fill)


# ---------------------------------------------------------------------------------------------
class FontCache:
    def __init__(self):
        self._fonts = {}

    def get(self, path, size):
        key = (path, size)
        if key not in self._fonts:
            self._fonts[key] = ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.BASIC)
        return self._fonts[key]


def render_mask(text, font):
    """Text mask (L) and its ink box [x0, y0, x1, y1] in the mask's continuous coordinates."""
    l, t, r, b = font.getbbox(text)
    pad = 4
    mask = Image.new('L', (r - l + 2 * pad, b - t + 2 * pad), 0)
    ImageDraw.Draw(mask).text((pad - l, pad - t), text, font=font, fill=255)
    ys, xs = np.nonzero(np.asarray(mask) > INK_LEVEL)
    return mask, (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def render_line(text, font_path, height, fonts):
    """Renders text so that its ink is `height` px high (within [MIN_H, MAX_H]); returns the
    mask and its ink box."""
    size = max(6, round(height * 1.2))
    for _ in range(6):
        mask, (x0, y0, x1, y1) = render_mask(text, fonts.get(font_path, size))
        h = y1 - y0
        if MIN_H <= h <= MAX_H and abs(h - height) <= max(1, height * 0.06):
            break
        size = max(6, round(size * height / h))
    mask, (x0, y0, x1, y1) = render_mask(text, fonts.get(font_path, size))
    while y1 - y0 < MIN_H:
        size += 1
        mask, (x0, y0, x1, y1) = render_mask(text, fonts.get(font_path, size))
    while y1 - y0 > MAX_H:
        size -= 1
        mask, (x0, y0, x1, y1) = render_mask(text, fonts.get(font_path, size))
    return mask, (x0, y0, x1, y1)


# ---------------------------------------------------------------------------------------------
class Line:
    """One text line: its mask, padding (plate area) and placement on the canvas."""

    def __init__(self, text, lang, mask, ink_box, pad_x, pad_y, angle):
        self.text, self.lang, self.mask, self.ink_box = text, lang, mask, ink_box
        self.ink_w, self.ink_h = ink_box[2] - ink_box[0], ink_box[3] - ink_box[1]
        self.pad_x, self.pad_y, self.angle = pad_x, pad_y, angle
        self.w = self.ink_w + 2 * pad_x  # padded local frame: ink box at (pad_x, pad_y)
        self.h = self.ink_h + 2 * pad_y
        a = math.radians(angle)
        self.extent_w = self.w * abs(math.cos(a)) + self.h * abs(math.sin(a))
        self.extent_h = self.w * abs(math.sin(a)) + self.h * abs(math.cos(a))
        self.to_canvas = None  # local -> canvas
        self.plate = None  # (rgb, alpha) or None
        self.ink = None  # rgb

    def place(self, cx, cy):
        self.to_canvas = translation(cx - self.w / 2, cy - self.h / 2) @ rotation(self.angle, self.w / 2, self.h / 2)

    def ink_quad(self):
        x0, y0 = self.pad_x, self.pad_y
        x1, y1 = x0 + self.ink_w, y0 + self.ink_h
        return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]

    def pad_quad(self):
        return [(0, 0), (self.w, 0), (self.w, self.h), (0, self.h)]


def draw_line(canvas, line):
    """Draws the line's plate and ink onto canvas (RGB) through its affine placement."""
    quad = apply(line.to_canvas, line.pad_quad())
    bx0 = max(0, math.floor(quad[:, 0].min()) - 2)
    by0 = max(0, math.floor(quad[:, 1].min()) - 2)
    bx1 = min(canvas.width, math.ceil(quad[:, 0].max()) + 2)
    by1 = min(canvas.height, math.ceil(quad[:, 1].max()) + 2)
    m = translation(-bx0, -by0) @ line.to_canvas
    size = (bx1 - bx0, by1 - by0)
    if line.plate is not None:
        rgb, alpha = line.plate
        plate = Image.new('L', (line.w, line.h), 0)
        radius = max(2, min(line.pad_x, line.pad_y))
        ImageDraw.Draw(plate).rounded_rectangle((0, 0, line.w - 1, line.h - 1), radius=radius,
                                                fill=round(255 * alpha))
        canvas.paste(rgb, (bx0, by0, bx1, by1), warp(plate, m, size))
    ink = Image.new('L', (line.w, line.h), 0)
    ink.paste(line.mask, (line.pad_x - line.ink_box[0], line.pad_y - line.ink_box[1]))
    canvas.paste(line.ink, (bx0, by0, bx1, by1), warp(ink, m, size))


def luminance(rgb):
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


# ---------------------------------------------------------------------------------------------
def plan_images(rng, count):
    """Kinds, backgrounds and degradations of every image, spread evenly over the set."""
    n_photo = round(count * 0.6)
    kinds = ['photo'] * n_photo + ['page'] * (count - n_photo)
    rng.shuffle(kinds)
    photo_order = PHOTOS[:]
    rng.shuffle(photo_order)
    papers = sorted(PAPERS)
    rng.shuffle(papers)

    def pick(fraction, minimum=1):
        k = min(count, max(minimum, round(count * fraction))) if count >= 3 else 0
        return set(rng.sample(range(count), k))

    upside = pick(0.18)
    rotated = pick(0.3)
    tilted = pick(0.35)
    blur = pick(0.3)
    jpeg = pick(0.35)
    plans, n_ph, n_pg = [], 0, 0
    for i, kind in enumerate(kinds):
        if kind == 'photo':
            bg = photo_order[n_ph % len(photo_order)]
            n_ph += 1
        else:
            bg = papers[n_pg % len(papers)]
            n_pg += 1
        plans.append({'index': i, 'kind': kind, 'background': bg, 'upside_down': i in upside,
                      'rotated': i in rotated, 'tilted': i in tilted, 'blur': i in blur, 'jpeg': i in jpeg})
    return plans


def image_size(rng, plan, photos_dir):
    if plan['kind'] == 'page':
        w, h = rng.choice([(850, 1100), (1100, 800), (560, 1000), (1000, 700), (800, 800)])
        s = rng.uniform(0.8, 1.2)
        w, h = round(w * s), round(h * s)
    else:
        with Image.open(os.path.join(photos_dir, plan['background'])) as im:
            pw, ph = im.size
        long_side = rng.randint(720, 1280)
        if pw >= ph:
            w, h = long_side, round(long_side * ph / pw * rng.uniform(0.85, 1.0))
        else:
            w, h = round(long_side * pw / ph * rng.uniform(0.85, 1.0)), long_side
    return min(1400, max(400, w)), min(1400, max(400, h))


def make_background(plan, size, photos_dir):
    if plan['kind'] == 'page':
        return Image.new('RGB', size, PAPERS[plan['background']])
    photo = Image.open(os.path.join(photos_dir, plan['background'])).convert('RGB')
    s = max(size[0] / photo.width, size[1] / photo.height)
    sw, sh = math.ceil(photo.width * s), math.ceil(photo.height * s)
    photo = photo.resize((sw, sh), Image.LANCZOS)
    x0, y0 = (sw - size[0]) // 2, (sh - size[1]) // 2
    return photo.crop((x0, y0, x0 + size[0], y0 + size[1]))


def build_lines(rng, plan, region, fonts, charset):
    """Chooses texts, sizes and tilts and stacks the lines inside region (canvas coordinates)."""
    rx0, ry0, rx1, ry1 = region
    rw, rh = rx1 - rx0, ry1 - ry0
    page = plan['kind'] == 'page'
    min_h = 16 if (plan['blur'] or plan['jpeg']) else MIN_H
    target = rng.randint(8, 15) if page else rng.randint(4, 8)
    align = rng.choice(['left', 'left', 'center', 'free']) if page else 'free'
    indent = rng.uniform(0, 0.08) * rw
    lines, used_h, n_zh = [], 0.0, 0
    tries = 0
    while len(lines) < target and tries < target * 6:
        tries += 1
        i = len(lines)
        lang = 'zh' if (n_zh < math.floor((i + 1) * 0.4 + 0.5) or rng.random() < 0.45) else 'en'
        long_ok = page and i > 0
        text = normalise(zh_line(rng, long_ok) if lang == 'zh' else en_line(rng, long_ok))
        bad = [c for c in text if c != ' ' and c not in charset]
        if bad:
            raise SystemExit(f'make_ocr_set: characters not in the recognition dictionary: {bad} in {text!r}')
        if page and i == 0:
            height = rng.randint(30, MAX_H)
        elif rng.random() < 0.12 and min_h == MIN_H:
            height = rng.randint(MIN_H, 15)
        else:
            height = round(math.exp(rng.uniform(math.log(max(min_h, 15)), math.log(46))))
        font = ZH_FONT if lang == 'zh' else rng.choice(EN_FONTS)
        mask, box = render_line(text, font, height, fonts)
        ink_h = box[3] - box[1]
        pad_x, pad_y = max(4, round(0.35 * ink_h)), max(3, round(0.28 * ink_h))
        angle = 0.0
        if plan['tilted'] and rng.random() < 0.65:
            w = box[2] - box[0] + 2 * pad_x
            limit = min(12.0, math.degrees(math.atan(3.0 * ink_h / w)))
            angle = rng.choice([-1, 1]) * rng.uniform(min(1.0, limit), max(1.0, limit))
        line = Line(text, lang, mask, box, pad_x, pad_y, angle)
        if line.extent_w > rw or used_h + line.extent_h > rh:
            continue
        lines.append(line)
        used_h += line.extent_h
        n_zh += lang == 'zh'
    # Spread the spare height over the gaps (minimum gap 0.4 of the neighbouring line height).
    gaps = [0.0] + [0.4 * max(a.ink_h, b.ink_h) for a, b in zip(lines, lines[1:])] + [0.0]
    spare = rh - used_h - sum(gaps)
    while spare < 0 and lines:  # too tight: drop the last line
        last = lines.pop()
        used_h -= last.extent_h
        gaps = [0.0] + [0.4 * max(a.ink_h, b.ink_h) for a, b in zip(lines, lines[1:])] + [0.0]
        spare = rh - used_h - sum(gaps)
    weights = [rng.uniform(0.2, 1.0) for _ in gaps]
    weights[0] *= 0.5
    weights[-1] *= 0.5
    y = ry0
    for k, line in enumerate(lines):
        y += gaps[k] + spare * weights[k] / sum(weights)
        free = rw - line.extent_w
        if align == 'left':
            x = rx0 + min(free, indent + rng.uniform(0, 0.02) * rw)
        elif align == 'center':
            x = rx0 + free / 2
        else:
            x = rx0 + rng.uniform(0, free)
        line.place(x + line.extent_w / 2, y + line.extent_h / 2)
        y += line.extent_h
    return lines


def choose_colours(rng, plan, lines, canvas):
    lum = np.asarray(canvas.convert('L'), dtype=np.float64)
    if plan['kind'] == 'page':
        paper = PAPERS[plan['background']]
        inks = [c for c in DARK_INKS if abs(luminance(c) - luminance(paper)) > 120]
        page_ink = rng.choice(inks)
        for line in lines:
            if rng.random() < 0.12:
                line.plate, line.ink = (rng.choice(SOLID_PLATES), 1.0), rng.choice(LIGHT_INKS)
            else:
                line.ink = page_ink if rng.random() < 0.8 else rng.choice(inks)
        return
    for line in lines:
        quad = apply(line.to_canvas, line.pad_quad())
        x0, y0 = max(0, int(quad[:, 0].min())), max(0, int(quad[:, 1].min()))
        x1, y1 = int(math.ceil(quad[:, 0].max())), int(math.ceil(quad[:, 1].max()))
        patch = lum[y0:y1, x0:x1]
        mean, std = float(patch.mean()), float(patch.std())
        dark, light = rng.choice(DARK_INKS[:4]), rng.choice(LIGHT_INKS)
        if std < 38 and mean > 150 and rng.random() < 0.5:
            line.ink = dark
        elif std < 38 and mean < 95 and rng.random() < 0.5:
            line.ink = light
        elif rng.random() < 0.5:
            line.plate, line.ink = ((245, 244, 238), rng.uniform(0.8, 0.92)), dark
        else:
            line.plate, line.ink = ((18, 18, 22), rng.uniform(0.68, 0.82)), light


def make_image(plan, rng, photos_dir, fonts, charset):
    w, h = image_size(rng, plan, photos_dir)
    theta = rng.choice([-1, 1]) * rng.uniform(3.0, 12.0) if plan['rotated'] else 0.0
    a = math.radians(abs(theta))
    c, s = math.cos(a), math.sin(a)
    # Canvas big enough that the turned canvas covers the whole image; text only inside the
    # central rectangle whose turned copy fits in the image.
    cw, ch = (math.ceil(w * c + h * s) + 4, math.ceil(w * s + h * c) + 4) if theta else (w, h)
    k = min(w / (w * c + h * s), h / (w * s + h * c)) if theta else 1.0
    lw, lh = w * k, h * k
    margin = max(14.0, 0.04 * min(lw, lh))
    region = ((cw - lw) / 2 + margin, (ch - lh) / 2 + margin, (cw + lw) / 2 - margin, (ch + lh) / 2 - margin)
    canvas = make_background(plan, (cw, ch), photos_dir)
    lines = build_lines(rng, plan, region, fonts, charset)
    choose_colours(rng, plan, lines, canvas)
    for line in lines:
        draw_line(canvas, line)
    to_image = np.eye(3)
    image = canvas
    if theta:
        to_image = translation(w / 2, h / 2) @ rotation(theta, 0, 0) @ translation(-cw / 2, -ch / 2)
        image = warp(canvas, to_image, (w, h))
    if plan['blur']:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 1.2)))
    if plan['upside_down']:
        image = image.transpose(Image.ROTATE_180)
        to_image = np.array([[-1, 0, w], [0, -1, h], [0, 0, 1]], dtype=np.float64) @ to_image
    tags = [plan['kind']]
    if theta:
        tags.append('rotated')
    if any(line.angle for line in lines):
        tags.append('tilted_lines')
    if plan['blur']:
        tags.append('blur')
    if plan['jpeg']:
        tags.append('jpeg')
    if plan['upside_down']:
        tags.append('upside_down')
    if any(line.ink_h < 16 for line in lines):
        tags.append('small_text')
    labels = []
    for line in lines:
        quad = apply(to_image @ line.to_canvas, line.ink_quad())
        if quad.min() < 0 or (quad[:, 0] > w).any() or (quad[:, 1] > h).any():
            raise SystemExit(f'make_ocr_set: internal error, line {line.text!r} outside the image')
        labels.append({'text': line.text, 'lang': line.lang,
                       'polygon': [[round(float(x), 1), round(float(y), 1)] for x, y in quad]})
    return image, tags, labels


def write_labels(path, seed, count, images):
    out = ['{"generator": %s, "seed": %d, "count": %d,' % (json.dumps(GENERATOR), seed, count), ' "images": [']
    for i, im in enumerate(images):
        head = {k: im[k] for k in ('file', 'width', 'height', 'tags')}
        out.append('  ' + json.dumps(head, ensure_ascii=False)[:-1] + ', "lines": [')
        for j, line in enumerate(im['lines']):
            out.append('    ' + json.dumps(line, ensure_ascii=False) + (',' if j + 1 < len(im['lines']) else ''))
        out.append('  ]}' + (',' if i + 1 < len(images) else ''))
    out.append(']}')
    text = '\n'.join(out) + '\n'
    json.loads(text)  # well-formed
    with open(path, 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', required=True, help='output folder (created; stale NNN_* images removed)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=20)
    ap.add_argument('--photos', default=os.path.join(ROOT, 'data/photos'))
    ap.add_argument('--dict', default=os.path.join(ROOT, 'models/ppocrv4/ppocr_keys_v1.txt'),
                    help="PP-OCR recognition dictionary (every text character must be in it)")
    args = ap.parse_args()
    if args.count < 1:
        ap.error('--count must be at least 1')
    for f in PHOTOS:
        if not os.path.isfile(os.path.join(args.photos, f)):
            sys.exit(f'make_ocr_set: missing photo {os.path.join(args.photos, f)}')
    for f in EN_FONTS + [ZH_FONT]:
        if not os.path.isfile(f):
            sys.exit(f'make_ocr_set: missing font {f} (Debian packages fonts-dejavu, fonts-liberation2, '
                     'fonts-wqy-microhei)')
    if not os.path.isfile(args.dict):
        sys.exit(f'make_ocr_set: missing dictionary {args.dict} (run scripts/setup.sh)')
    with open(args.dict, encoding='utf-8') as f:
        charset = frozenset(f.read().split('\n'))

    rng = random.Random(args.seed)
    np.random.seed(args.seed)  # not used for drawing; set for any numpy-based helper
    fonts = FontCache()
    plans = plan_images(rng, args.count)
    os.makedirs(args.out, exist_ok=True)
    images, written = [], set()
    for plan in plans:
        image_rng = random.Random(f'{args.seed}/{plan["index"]}')
        image, tags, labels = make_image(plan, image_rng, args.photos, fonts, charset)
        stem = f'{plan["index"]:03d}_{plan["kind"]}_{os.path.splitext(plan["background"])[0]}'
        if plan['jpeg']:
            name, params = stem + '.jpg', {'quality': image_rng.randint(30, 70)}
        elif plan['kind'] == 'photo':
            name, params = stem + '.jpg', {'quality': 90}
        else:
            name, params = stem + '.png', {'optimize': True}
        image.save(os.path.join(args.out, name), **params)
        written.add(name)
        images.append({'file': name, 'width': image.width, 'height': image.height, 'tags': tags, 'lines': labels})
        print(f'{name}: {image.width}x{image.height}, {len(labels)} lines, {" ".join(tags)}', file=sys.stderr)
    for f in sorted(os.listdir(args.out)):
        if re.fullmatch(r'\d{3}_.*\.(png|jpg)', f) and f not in written:
            os.remove(os.path.join(args.out, f))
    write_labels(os.path.join(args.out, 'labels.json'), args.seed, args.count, images)
    n_lines = sum(len(im['lines']) for im in images)
    n_zh = sum(line['lang'] == 'zh' for im in images for line in im['lines'])
    print(f'wrote {args.out}: {len(images)} images, {n_lines} lines ({n_zh} Chinese)')


if __name__ == '__main__':
    main()
