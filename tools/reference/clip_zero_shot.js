#!/usr/bin/env node
// Zero-shot CLIP scores with transformers.js 4.3.1 (the oracle for `edgemm retrieve --labels`):
// AutoProcessor on each image, AutoTokenizer on the labels (padding, truncation), the package's
// CLIPVisionModelWithProjection and CLIPTextModelWithProjection (dtype fp32), embeddings
// L2-normalized, cosine per (image, label), softmax over labels of exp(logit_scale_init_value) ×
// cosine (1 × cosine without it in config.json) — the rule docs/clip.md gives for edgemm.
'use strict';

const fs = require('fs');
const path = require('path');

const USAGE = `usage: node tools/reference/clip_zero_shot.js PACKAGE_DIR --labels "a,b,..." IMAGE...
       [--compare EDGEMM_JSON] [--max-diff D]

Prints {"labels", "logit_scale", "images": [{"file", "scores": [{"label", "prob", "cosine"}]}]}.
With --compare, reads the JSON of \`edgemm retrieve --labels ... --json\` for the same images and
labels and checks every prob and cosine within D (default 1e-3) and the same best label per
image; prints the largest differences; exit 1 when a check fails, 2 for bad arguments.`;

function parseArgs(argv) {
  const a = { dir: null, labels: null, images: [], compare: null, maxDiff: 1e-3 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${k} needs a value`); return argv[++i]; };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--labels') a.labels = val().split(',').map((s) => s.trim());
    else if (k === '--compare') a.compare = val();
    else if (k === '--max-diff') a.maxDiff = Number(val());
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else if (a.dir === null) a.dir = k;
    else a.images.push(k);
  }
  if (a.dir === null || a.labels === null || a.images.length === 0) throw new Error('want PACKAGE_DIR, --labels and images');
  if (!(a.maxDiff >= 0)) throw new Error('--max-diff wants a number >= 0');
  return a;
}

function normalizedRows(t) {
  const [n, d] = t.dims;
  const rows = [];
  for (let r = 0; r < n; r++) {
    const row = Array.from(t.data.slice(r * d, (r + 1) * d));
    const norm = Math.sqrt(row.reduce((s, v) => s + v * v, 0));
    rows.push(row.map((v) => v / norm));
  }
  return rows;
}

async function main() {
  let args;
  try { args = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`clip_zero_shot: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const dir = path.resolve(args.dir);
  const { env, RawImage, AutoProcessor, AutoTokenizer, CLIPVisionModelWithProjection, CLIPTextModelWithProjection } =
    await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(dir) + path.sep;
  const id = path.basename(dir);
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const scale = config.logit_scale_init_value === undefined ? 1 : Math.exp(config.logit_scale_init_value);
  const options = { dtype: 'fp32', device: 'cpu', session_options: { intraOpNumThreads: 1 } };
  const processor = await AutoProcessor.from_pretrained(id);
  const tokenizer = await AutoTokenizer.from_pretrained(id);
  const vision = await CLIPVisionModelWithProjection.from_pretrained(id, options);
  const text = await CLIPTextModelWithProjection.from_pretrained(id, options);
  const { text_embeds: textEmbeds } = await text(tokenizer(args.labels, { padding: true, truncation: true }));
  const labelRows = normalizedRows(textEmbeds);
  const images = [];
  for (const file of args.images) {
    const { pixel_values: pv } = await processor(await RawImage.read(file));
    const [img] = normalizedRows((await vision({ pixel_values: pv })).image_embeds);
    const cos = labelRows.map((l) => l.reduce((s, v, k) => s + v * img[k], 0));
    const top = Math.max(...cos);
    const e = cos.map((c) => Math.exp(scale * (c - top)));
    const sum = e.reduce((s, v) => s + v, 0);
    images.push({ file, scores: args.labels.map((label, i) => ({ label, prob: e[i] / sum, cosine: cos[i] })) });
  }
  await vision.dispose();
  await text.dispose();
  const result = { labels: args.labels, logit_scale: scale, images };
  if (!args.compare) { console.log(JSON.stringify(result, null, 2)); return; }
  const ours = JSON.parse(fs.readFileSync(args.compare, 'utf8'));
  let maxProb = 0, maxCos = 0, ok = true;
  const problems = [];
  if (Math.abs(ours.logit_scale - scale) > 1e-4 * scale) { ok = false; problems.push(`logit_scale ${ours.logit_scale} vs ${scale}`); }
  images.forEach((want, i) => {
    const got = ours.images[i];
    if (!got || !got.scores || path.resolve(got.file) !== path.resolve(want.file)) { ok = false; problems.push(`image ${i}: missing in edgemm's output`); return; }
    want.scores.forEach((w, l) => {
      const g = got.scores[l];
      if (g.label !== w.label) { ok = false; problems.push(`image ${i} label ${l}: '${g.label}' vs '${w.label}'`); }
      maxProb = Math.max(maxProb, Math.abs(g.prob - w.prob));
      maxCos = Math.max(maxCos, Math.abs(g.cosine - w.cosine));
    });
    const best = (s) => s.reduce((b, x, k) => (x.prob > s[b].prob ? k : b), 0);
    if (best(got.scores) !== best(want.scores)) { ok = false; problems.push(`image ${i}: best label differs`); }
  });
  ok = ok && maxProb <= args.maxDiff && maxCos <= args.maxDiff;
  console.log(JSON.stringify({ ok, max_prob_diff: maxProb, max_cosine_diff: maxCos, max_diff: args.maxDiff, problems, transformers_js: result }, null, 2));
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(`clip_zero_shot: ${e.stack || e.message}`); process.exit(1); });
