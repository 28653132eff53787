#!/usr/bin/env node
// Peer OCR reference: Guten OCR (@gutenye/ocr-node, PP-OCRv4 in JavaScript on onnxruntime-node)
// run over a labelled set (data/ocr_set) or a list of images, with edgemm's own model files.
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const MODEL_FILES = {
  det: 'ch_PP-OCRv4_det_infer.onnx',
  rec: 'ch_PP-OCRv4_rec_infer.onnx',
  dictionary: 'ppocr_keys_v1.txt',
};

const USAGE = `usage: node tools/reference/guten_ocr.js --set DIR [--models DIR] [--out FILE] [--threads N]
       node tools/reference/guten_ocr.js IMAGE... [--models DIR] [--out FILE] [--threads N]

Runs Guten OCR (@gutenye/ocr-node 1.4.8: PP-OCRv4 detection + recognition, no angle
classifier) on every image listed in DIR/labels.json (or on the IMAGE files) and writes
predictions as JSON:

  {"tool": "guten-ocr", "version": "1.4.8", "runtime": "onnxruntime-node 1.30.0",
   "models": {"det": "${MODEL_FILES.det}", "rec": "${MODEL_FILES.rec}",
              "dictionary": "${MODEL_FILES.dictionary}"},
   "images": [{"file": "000_page_white.png", "width": 850, "height": 1100,
               "lines": [{"polygon": [[x, y], [x, y], [x, y], [x, y]], "text": "...", "score": 0.97}],
               "timings_ms": {"total": 123.4}}]}

"file" is the path relative to DIR with --set, else the IMAGE argument as given. Polygons are
Guten's boxes (top-left, top-right, bottom-right, bottom-left) in pixels of the image. Guten
itself reports them in its detection frame (the image letterboxed into sides that are multiples
of 32, which shifts and scales them by up to a few percent); they are mapped back here, and
--raw-boxes keeps Guten's numbers. score is the mean probability of the recognised characters.
Guten drops lines scoring under 0.5 and joins boxes whose midlines are closer than half the mean
box height into one line (texts joined by a space, box from the first and last). No angle
classifier: upside-down text is not read. timings_ms.total is the wall time of Guten's detect()
on the image (decode, detection, recognition); one untimed warm-up run on the first image
comes before.

  --set DIR       labelled set folder with labels.json (tools/datasets/make_ocr_set.py)
  --models DIR    folder with ${MODEL_FILES.det}, ${MODEL_FILES.rec} and ${MODEL_FILES.dictionary}
                  (default: models/ppocrv4, set up by scripts/setup.sh)
  --out FILE      where to write the JSON (default: standard output)
  --threads N     onnxruntime intra-op threads (default 1; inter-op 1, sequential)
  --raw-boxes     write Guten's boxes in its detection frame, without mapping them back
  -h, --help      this text

A one-line summary per image goes to standard error. Exit codes: 0 ok, 2 invalid argument,
6 missing or unreadable set, image or model file, 7 OCR failure.
Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

class CliError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

function parseArgs(argv) {
  const args = { set: null, models: path.join(ROOT, 'models', 'ppocrv4'), out: null, threads: 1, rawBoxes: false, images: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new CliError(`${a} needs a value`, 2);
      return argv[++i];
    };
    if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a === '--set') args.set = value();
    else if (a === '--models') args.models = value();
    else if (a === '--out') args.out = value();
    else if (a === '--raw-boxes') args.rawBoxes = true;
    else if (a === '--threads') {
      args.threads = Number(value());
      if (!Number.isInteger(args.threads) || args.threads < 1) throw new CliError('--threads must be a positive integer', 2);
    } else if (a.startsWith('-')) throw new CliError(`unknown option ${a}`, 2);
    else args.images.push(a);
  }
  if (args.set && args.images.length) throw new CliError('give either --set DIR or image files, not both', 2);
  if (!args.set && !args.images.length) throw new CliError('nothing to do: give --set DIR or image files', 2);
  return args;
}

function listImages(args) {
  if (!args.set) {
    for (const f of args.images) if (!fs.existsSync(f)) throw new CliError(`image not found: ${f}`, 6);
    return args.images.map((f) => ({ file: f, abs: path.resolve(f) }));
  }
  const labels = path.join(args.set, 'labels.json');
  if (!fs.existsSync(args.set) || !fs.statSync(args.set).isDirectory()) throw new CliError(`set folder not found: ${args.set}`, 6);
  if (!fs.existsSync(labels)) throw new CliError(`not a labelled set (no labels.json): ${args.set}`, 6);
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(labels, 'utf8'));
  } catch (e) {
    throw new CliError(`${labels}: ${e.message}`, 6);
  }
  if (!Array.isArray(parsed.images)) throw new CliError(`${labels}: no "images" array`, 6);
  return parsed.images.map((im) => {
    const abs = path.resolve(args.set, im.file);
    if (!fs.existsSync(abs)) throw new CliError(`image listed in labels.json not found: ${abs}`, 6);
    return { file: im.file, abs };
  });
}

function packageVersion(name) {
  // Read from node_modules directly: @gutenye/ocr-node's "exports" hide its package.json.
  return JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version;
}

// Guten's detection letterboxes the image into a frame whose sides are the next multiples of
// 32 (sharp resize, fit 'contain': scaled to fit, centred on black) and returns the boxes in
// that frame's pixels, not the image's. This is the inverse map back to image pixels.
function fromDetectionFrame(width, height) {
  const fw = Math.max(32, Math.ceil(width / 32) * 32);
  const fh = Math.max(32, Math.ceil(height / 32) * 32);
  const s = Math.min(fw / width, fh / height);
  const rw = Math.round(width * s);
  const rh = Math.round(height * s);
  const ox = Math.floor((fw - rw) / 2);
  const oy = Math.floor((fh - rh) / 2);
  const clamp = (v, hi) => Math.min(hi, Math.max(0, v));
  return ([x, y]) => [clamp(((x - ox) * width) / rw, width), clamp(((y - oy) * height) / rh, height)];
}

// Pretty JSON with one text line per row (polygons stay on the row).
function toJson(result) {
  const { images, ...head } = result;
  const rows = images.map((im) => {
    const { lines, ...rest } = im;
    const body = lines.map((l) => `    ${JSON.stringify(l)}`).join(',\n');
    const first = JSON.stringify({ file: rest.file, width: rest.width, height: rest.height });
    return `  ${first.slice(0, -1)},\n   "lines": [${lines.length ? `\n${body}\n   ` : ''}],\n` +
      `   "timings_ms": ${JSON.stringify(rest.timings_ms)}}`;
  });
  const top = JSON.stringify(head, null, 1).slice(0, -2);
  return `${top},\n "images": [${rows.length ? `\n${rows.join(',\n')}\n ` : ''}]\n}\n`;
}

function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const images = listImages(args);
  const models = {};
  for (const [key, file] of Object.entries(MODEL_FILES)) {
    models[key] = path.resolve(args.models, file);
    if (!fs.existsSync(models[key])) throw new CliError(`model file not found: ${models[key]} (run scripts/setup.sh)`, 6);
  }
  const { default: Ocr } = await import('@gutenye/ocr-node');
  const sharp = require('sharp');
  const ocr = await Ocr.create({
    models: { detectionPath: models.det, recognitionPath: models.rec, dictionaryPath: models.dictionary },
    onnxOptions: { intraOpNumThreads: args.threads, interOpNumThreads: 1, executionMode: 'sequential' },
  });
  const result = {
    tool: 'guten-ocr',
    version: packageVersion('@gutenye/ocr-node'),
    runtime: `onnxruntime-node ${packageVersion('onnxruntime-node')}`,
    models: { ...MODEL_FILES },
    images: [],
  };
  for (const im of images) {
    try {
      im.meta = await sharp(im.abs).metadata();
    } catch (e) {
      throw new CliError(`${im.file}: cannot decode the image: ${e.message}`, 6);
    }
  }
  if (images.length) await ocr.detect(images[0].abs); // warm-up, untimed
  for (const im of images) {
    const meta = im.meta;
    const t0 = process.hrtime.bigint();
    let lines;
    try {
      lines = await ocr.detect(im.abs);
    } catch (e) {
      throw new CliError(`${im.file}: Guten OCR failed: ${e.stack || e}`, 7);
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const toImage = args.rawBoxes ? (p) => p : fromDetectionFrame(meta.width, meta.height);
    const out = lines
      .filter((l) => l.box)
      .map((l) => ({
        polygon: l.box.map(toImage).map((p) => [round(p[0], 1), round(p[1], 1)]),
        text: l.text,
        score: round(l.mean, 4),
      }));
    result.images.push({ file: im.file, width: meta.width, height: meta.height, lines: out, timings_ms: { total: round(ms, 1) } });
    const preview = out.map((l) => l.text).join(' | ');
    console.error(`${im.file}: ${meta.width}x${meta.height}, ${out.length} lines, ${ms.toFixed(0)} ms: ${preview.length > 100 ? preview.slice(0, 97) + '...' : preview}`);
  }
  const text = toJson(result);
  if (args.out) fs.writeFileSync(args.out, text);
  else process.stdout.write(text);
}

main().catch((e) => {
  console.error(`guten_ocr: ${e instanceof CliError ? e.message : e.stack || e}`);
  process.exit(e instanceof CliError ? e.code : 7);
});
