#!/usr/bin/env node
// Loads a CLIP model package (transformers.js / Optimum layout, e.g. tests/fixtures/clip_tiny made by
// tools/fixtures/make_clip_fixture.py) with transformers.js 4.3.1 and checks it against the
// generator's PyTorch references: the independent oracle that the package is what transformers.js
// expects and that its ONNX files compute what PyTorch does.
'use strict';

const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy } = require('./ort_run.js');

const ROOT = path.resolve(__dirname, '../..');
const IMAGES = ['data/photos/chelsea.png', 'data/photos/coffee.png'];
// All fit the tiny model's 16 positions: transformers.js 4.3.1 truncates after adding the special
// tokens (the EOS is cut off, unlike Python transformers), so over-long text is no oracle here.
const PROMPTS = ['a photo of a cat', 'A cup of coffee on a table.', 'rocket launch at night!!'];
const USAGE = `usage: node tools/reference/clip_check.js PACKAGE_DIR [--max-diff D] [--write-refs]

Loads PACKAGE_DIR with transformers.js (local files only, dtype 'fp32', so onnx/vision_model.onnx and
onnx/text_model.onnx), runs CLIPVisionModelWithProjection on PACKAGE_DIR/reference/pixel_values.npy
and CLIPTextModelWithProjection on PACKAGE_DIR/reference/input_ids.npy, with ONNX Runtime's graph
optimizations off and on, and compares image_embeds, text_embeds and both last_hidden_state outputs
with the PyTorch references beside them (max abs diff at most D, default 1e-4).
Then runs the package's processor (AutoProcessor: CLIPImageProcessor from preprocessor_config.json)
on ${IMAGES.join(' and ')} and its tokenizer (AutoTokenizer, padding and truncation on) on
${PROMPTS.length} prompts, and compares with the committed references: pixel_values with
reference/processor/<image>.npy (max abs diff at most 1e-6: same library, same input), the ids with
reference/prompt_input_ids.npy (equal) and CLIPTextModelWithProjection on them with PyTorch's
reference/prompt_text_embeds.npy (at most D). With --write-refs it writes the processor outputs
(the references for edgemm's C++ preprocessing), reference/prompts.json (texts and ids) and
reference/prompt_input_ids.npy instead; then run tools/fixtures/make_clip_fixture.py again to add
PyTorch's prompt_text_embeds.npy.
Prints one JSON object; exit status 0 when every check passes, 1 otherwise, 2 for bad arguments.

Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

function parseArgs(argv) {
  const a = { dir: null, maxDiff: 1e-4, writeRefs: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${k} needs a value`); return argv[++i]; };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--max-diff') a.maxDiff = Number(val());
    else if (k === '--write-refs') a.writeRefs = true;
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else if (a.dir === null) a.dir = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (a.dir === null) throw new Error('want PACKAGE_DIR');
  if (!(a.maxDiff >= 0)) throw new Error('--max-diff wants a number >= 0');
  return a;
}

function compare(name, got, want) {
  const shape = Array.from(got.dims);
  if (shape.join(',') !== want.shape.join(',')) {
    return { name, ok: false, error: `shape [${shape}] differs from the reference [${want.shape}]` };
  }
  let maxAbs = 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < want.data.length; i++) {
    const a = got.data[i];
    const b = want.data[i];
    const d = Math.abs(a - b);
    maxAbs = Number.isNaN(d) ? Infinity : Math.max(maxAbs, d);
    dot += a * b; na += a * a; nb += b * b;
  }
  return { name, shape, max_abs_diff: maxAbs, cosine: dot / Math.sqrt(na * nb) };
}

// Tokenizes PROMPTS (padded to the longest, truncated at model_max_length) and embeds them.
async function checkPrompts(args, ref, id, { AutoTokenizer, CLIPTextModelWithProjection }) {
  const idsFile = path.join(ref, 'prompt_input_ids.npy');
  if (!fs.existsSync(path.join(ref, '..', 'tokenizer.json'))) return { ok: true, note: 'no tokenizer.json: not checked' };
  if (!args.writeRefs && !fs.existsSync(idsFile)) return { ok: true, note: `no ${path.relative(ROOT, idsFile)}: not checked` };
  const tokenizer = await AutoTokenizer.from_pretrained(id);
  const encoded = tokenizer(PROMPTS, { padding: true, truncation: true });
  const ids = encoded.input_ids;
  const rows = [];
  for (let r = 0; r < ids.dims[0]; r++) rows.push(Array.from(ids.data.slice(r * ids.dims[1], (r + 1) * ids.dims[1]), Number));
  if (args.writeRefs) {
    writeNpy(idsFile, 'int64', ids.dims, ids.data);
    const json = { tokenizer: 'transformers.js 4.3.1 AutoTokenizer, padding: true, truncation: true', texts: PROMPTS, input_ids: rows };
    fs.writeFileSync(path.join(ref, 'prompts.json'), JSON.stringify(json, null, 1) + '\n');
    return { ok: true, input_ids: rows, note: 'written; run make_clip_fixture.py again for prompt_text_embeds.npy' };
  }
  const want = readNpy(idsFile);
  const same = want.shape.join(',') === Array.from(ids.dims).join(',') && want.data.every((v, i) => v === ids.data[i]);
  const text = await CLIPTextModelWithProjection.from_pretrained(id, { dtype: 'fp32', device: 'cpu' });
  const { text_embeds: embeds } = await text({ input_ids: ids });
  await text.dispose();
  const c = compare('prompt text_embeds', embeds, readNpy(path.join(ref, 'prompt_text_embeds.npy')));
  c.ok = c.ok !== false && c.max_abs_diff <= args.maxDiff;
  return { ok: same && c.ok, input_ids_equal: same, input_ids: rows, text_embeds: c };
}

async function main() {
  let args;
  try { args = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`clip_check: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const dir = path.resolve(args.dir);
  const ref = path.join(dir, 'reference');
  const { env, Tensor, RawImage, AutoProcessor, AutoTokenizer, CLIPVisionModelWithProjection, CLIPTextModelWithProjection } =
    await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(dir) + path.sep;
  const id = path.basename(dir);
  const toTensor = (t) => new Tensor(t.type, t.data, t.shape);
  const pixels = readNpy(path.join(ref, 'pixel_values.npy'));
  const ids = readNpy(path.join(ref, 'input_ids.npy'));
  const checks = [];
  for (const level of ['disabled', 'all']) {
    const options = { dtype: 'fp32', device: 'cpu', session_options: { graphOptimizationLevel: level, intraOpNumThreads: 1 } };
    const vision = await CLIPVisionModelWithProjection.from_pretrained(id, options);
    const text = await CLIPTextModelWithProjection.from_pretrained(id, options);
    const v = await vision({ pixel_values: toTensor(pixels) });
    const t = await text({ input_ids: toTensor(ids) });
    for (const [name, got, file] of [['image_embeds', v.image_embeds, 'image_embeds'],
      ['vision last_hidden_state', v.last_hidden_state, 'vision_last_hidden_state'],
      ['text_embeds', t.text_embeds, 'text_embeds'],
      ['text last_hidden_state', t.last_hidden_state, 'text_last_hidden_state']]) {
      const c = compare(name, got, readNpy(path.join(ref, `${file}.npy`)));
      c.ort_opt_level = level;
      c.ok = c.ok !== false && c.max_abs_diff <= args.maxDiff;
      checks.push(c);
    }
    await vision.dispose();
    await text.dispose();
  }
  const processor = await AutoProcessor.from_pretrained(id);
  const processed = [];
  for (const rel of IMAGES) {
    const image = await RawImage.read(path.join(ROOT, rel));
    const { pixel_values: pv } = await processor(image);
    const base = path.basename(rel).replace(/\.[^.]+$/, '');
    const entry = { image: rel, shape: Array.from(pv.dims) };
    if (args.writeRefs) {
      fs.mkdirSync(path.join(ref, 'processor'), { recursive: true });
      entry.file = path.join(ref, 'processor', `${base}.npy`);
      writeNpy(entry.file, 'float32', pv.dims, pv.data);
      entry.ok = true;
    } else {
      const file = path.join(ref, 'processor', `${base}.npy`);
      if (fs.existsSync(file)) {
        Object.assign(entry, compare(`processor ${base}`, pv, readNpy(file)));
        entry.ok = entry.ok !== false && entry.max_abs_diff <= 1e-6;
      } else {
        entry.ok = true;
        entry.note = `no ${path.relative(ROOT, file)}: not compared`;
      }
    }
    processed.push(entry);
  }
  const prompts = await checkPrompts(args, ref, id, { AutoTokenizer, CLIPTextModelWithProjection });
  const ok = checks.every((c) => c.ok) && processed.every((p) => p.ok) && prompts.ok;
  console.log(JSON.stringify({ package: dir, ok, models: checks, processor: processed, prompts }, null, 2));
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(`clip_check: ${e.stack || e.message}`); process.exit(1); });
