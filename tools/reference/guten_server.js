#!/usr/bin/env node
// Guten OCR (@gutenye/ocr-node: PP-OCRv4 det + rec on onnxruntime-node, no angle classifier) as
// a long-lived benchmark peer for `edgemm bench --pipeline ocr --compare guten`. Same JSON-lines
// protocol as ort_server.js:
//   start                                              → {"ok":true,"ready":true,"version":"1.4.8","node":"v20..."}
//   {"op":"load","models":DIR,"threads":N,"images":[...]} → {"ok":true,"load_ms":..}
//   {"op":"run","iters":K}  → OCR of the next K images of the list (cycling), {"ok":true,"times_ms":[...]}
//   {"op":"quit"}
// Any failure → {"ok":false,"error":"..."}. onnxruntime: intraOpNumThreads N, interOpNumThreads 1,
// sequential. Each time is the wall time of Guten's detect() on the file (decode, det, rec).
'use strict';
const fs = require('fs');
const path = require('path');
const { serveJsonLines, msSince } = require('./json_lines_host.js');

const packageVersion = (name) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version;

let ocr = null;
let images = [];
let next = 0;

async function load(req) {
  const files = {
    detectionPath: path.join(req.models, 'ch_PP-OCRv4_det_infer.onnx'),
    recognitionPath: path.join(req.models, 'ch_PP-OCRv4_rec_infer.onnx'),
    dictionaryPath: path.join(req.models, 'ppocr_keys_v1.txt'),
  };
  for (const f of Object.values(files)) if (!fs.existsSync(f)) throw new Error(`model file not found: ${f}`);
  for (const f of req.images) if (!fs.existsSync(f)) throw new Error(`image not found: ${f}`);
  if (!req.images.length) throw new Error('no images');
  const { default: Ocr } = await import('@gutenye/ocr-node');
  const t0 = process.hrtime.bigint();
  ocr = await Ocr.create({
    models: files,
    onnxOptions: { intraOpNumThreads: req.threads, interOpNumThreads: 1, executionMode: 'sequential' },
  });
  images = req.images;
  return { load_ms: msSince(t0) };
}

async function run(req) {
  if (!ocr) throw new Error('no pipeline loaded');
  const times = [];
  for (let i = 0; i < req.iters; i++) {
    const file = images[next++ % images.length];
    const t0 = process.hrtime.bigint();
    await ocr.detect(file);
    times.push(msSince(t0));
  }
  return { times_ms: times };
}

serveJsonLines(packageVersion('@gutenye/ocr-node'), { load, run });
