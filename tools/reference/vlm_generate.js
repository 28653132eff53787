#!/usr/bin/env node
// Greedy generation on an Idefics3/SmolVLM-style package with a chosen decoder dtype, by two
// oracles independent of edgemm: transformers.js 4.3.1 (generate() with dtype
// {decoder_model_merged: DTYPE}, so it loads onnx/decoder_model_merged<suffix>.onnx) and a plain
// ONNX Runtime loop over the three files (prefill with a zero-length past, then one id at a time
// with the presents fed back). Both start from the package's committed tensors
// (reference/P_input_ids, P_pixel_values, ...), which equal the processor's (vlm_check.js).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./ort_run.js');

const USAGE = `usage: node tools/reference/vlm_generate.js PACKAGE_DIR [--dtype fp32|q4|...] [--new-tokens N]
    [--prompts 0,1,2] [--ort-only] [--threads T]

For each prompt P of PACKAGE_DIR/reference/manifest.json (default: all), greedy ids of N new tokens
(default: the manifest's new_tokens) from
  transformers_js: Idefics3ForConditionalGeneration.from_pretrained with
                   dtype {embed_tokens: fp32, vision_encoder: fp32, decoder_model_merged: DTYPE}
                   (file suffix from transformers.js' DEFAULT_DTYPE_SUFFIX_MAPPING: q4 -> _q4);
  onnxruntime:     onnxruntime-node on onnx/vision_encoder.onnx, embed_tokens.onnx and the same
                   decoder file, greedy (lowest id on ties), with each step's top-1/top-2 logit margin.
Prints one JSON object {decoder_file, prompts: [{prompt, transformers_js, onnxruntime, min_margin,
agree}]}; exit 0 when both oracles agree on every prompt, 1 otherwise, 2 for bad arguments.`;

function parseArgs(argv) {
  const a = { dir: null, dtype: 'fp32', newTokens: null, prompts: null, ortOnly: false, threads: 1 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--dtype') a.dtype = value();
    else if (k === '--new-tokens') a.newTokens = Number(value());
    else if (k === '--prompts') a.prompts = value().split(',').map(Number);
    else if (k === '--threads') a.threads = Number(value());
    else if (k === '--ort-only') a.ortOnly = true;
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else if (a.dir === null) a.dir = path.resolve(k);
    else throw new Error(`unexpected argument ${k}`);
  }
  if (a.dir === null) throw new Error('PACKAGE_DIR is required');
  if (a.newTokens !== null && !(Number.isInteger(a.newTokens) && a.newTokens > 0)) throw new Error('--new-tokens wants an integer > 0');
  return a;
}

async function dtypeSuffix(dtype) {
  // The mapping is not exported from the package root; read it from the installed source.
  const pkg = path.join(__dirname, 'node_modules', '@huggingface', 'transformers');
  const src = fs.readFileSync(path.join(pkg, 'src', 'utils', 'dtypes.js'), 'utf8');
  const table = src.slice(src.indexOf('DEFAULT_DTYPE_SUFFIX_MAPPING'));
  const m = table.match(new RegExp(`\\[DATA_TYPES\\.${dtype}\\]:\\s*'([^']*)'`));
  if (!m) throw new Error(`dtype ${dtype} is not in transformers.js' DEFAULT_DTYPE_SUFFIX_MAPPING`);
  return m[1];
}

async function transformersJs(dir, dtype, prompts, ref, newTokens) {
  const { env, Tensor, Idefics3ForConditionalGeneration } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(dir) + path.sep;
  const model = await Idefics3ForConditionalGeneration.from_pretrained(path.basename(dir), {
    dtype: { embed_tokens: 'fp32', vision_encoder: 'fp32', decoder_model_merged: dtype }, device: 'cpu',
    session_options: { intraOpNumThreads: 1 } });
  const tensor = (t) => new Tensor(t.type, t.data, t.shape);
  const out = {};
  for (const p of prompts) {
    const feeds = { input_ids: tensor(ref(`p${p}_input_ids.npy`)), attention_mask: tensor(ref(`p${p}_attention_mask.npy`)),
      pixel_values: tensor(ref(`p${p}_pixel_values.npy`)), pixel_attention_mask: tensor(ref(`p${p}_pixel_attention_mask.npy`)) };
    const ids = await model.generate({ ...feeds, max_new_tokens: newTokens, do_sample: false });
    out[p] = Array.from(ids.data, Number).slice(feeds.input_ids.dims[1]);
  }
  await model.dispose();
  return out;
}

async function onnxRuntime(dir, decoderFile, prompts, ref, newTokens, imageTokenId, threads) {
  const options = { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
  const open = (name) => ort.InferenceSession.create(path.join(dir, 'onnx', name), options);
  const [vision, embed, decoder] = await Promise.all(['vision_encoder.onnx', 'embed_tokens.onnx', decoderFile].map(open));
  const pastNames = decoder.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const hasFlag = decoder.inputNames.includes('use_cache_branch');
  const t = (x) => new ort.Tensor(x.type, x.data, x.shape);
  const i64 = (values, shape) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), shape);
  const out = {};
  for (const p of prompts) {
    const idsRef = ref(`p${p}_input_ids.npy`);
    const ids = Array.from(idsRef.data, Number);
    const features = (await vision.run({ pixel_values: t(ref(`p${p}_pixel_values.npy`)),
      pixel_attention_mask: t(ref(`p${p}_pixel_attention_mask.npy`)) })).image_features;
    const embeds = (await embed.run({ input_ids: t(idsRef) })).inputs_embeds;
    const hidden = embeds.dims[2];
    let f = 0;
    ids.forEach((id, row) => {
      if (id !== imageTokenId) return;
      embeds.data.set(features.data.subarray(f * hidden, (f + 1) * hidden), row * hidden);
      f++;
    });
    if (f * hidden !== features.data.length) throw new Error(`prompt ${p}: ${f} image tokens, ${features.data.length / hidden} features`);
    const feeds = { inputs_embeds: embeds, attention_mask: i64(ids.map(() => 1), [1, ids.length]),
      position_ids: i64(ids.map((_, i) => i), [1, ids.length]) };
    const empty = ref('empty_past.npy');
    for (const n of pastNames) feeds[n] = t(empty);
    if (hasFlag) feeds.use_cache_branch = new ort.Tensor('bool', [false], [1]);
    const got = [];
    let minMargin = Infinity;
    let total = ids.length;
    for (let step = 0; step < newTokens; step++) {
      const r = await decoder.run(feeds);
      const vocab = r.logits.dims[2];
      const row = r.logits.data.subarray(r.logits.data.length - vocab);
      let best = 0;
      for (let j = 1; j < vocab; j++) if (row[j] > row[best]) best = j;
      let second = -Infinity;
      for (let j = 0; j < vocab; j++) if (j !== best && row[j] > second) second = row[j];
      minMargin = Math.min(minMargin, row[best] - second);
      got.push(best);
      for (const n of pastNames) feeds[n] = r[n.replace('past_key_values.', 'present.')];
      feeds.inputs_embeds = (await embed.run({ input_ids: i64([best], [1, 1]) })).inputs_embeds;
      total++;
      feeds.attention_mask = i64(Array(total).fill(1), [1, total]);
      feeds.position_ids = i64([total - 1], [1, 1]);
      if (hasFlag) feeds.use_cache_branch = new ort.Tensor('bool', [true], [1]);
    }
    out[p] = { ids: got, min_margin: minMargin };
  }
  for (const s of [vision, embed, decoder]) await s.release();
  return out;
}

async function main() {
  let a;
  try { a = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`vlm_generate: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const manifest = JSON.parse(fs.readFileSync(path.join(a.dir, 'reference', 'manifest.json'), 'utf8'));
  const ref = (name) => readNpy(path.join(a.dir, 'reference', name));
  const prompts = a.prompts ?? [...manifest.prompts.keys()];
  const newTokens = a.newTokens ?? manifest.new_tokens;
  const decoderFile = `decoder_model_merged${await dtypeSuffix(a.dtype)}.onnx`;
  const tjs = a.ortOnly ? null : await transformersJs(a.dir, a.dtype, prompts, ref, newTokens);
  const rt = await onnxRuntime(a.dir, decoderFile, prompts, ref, newTokens, manifest.image_token_id, a.threads);
  const results = prompts.map((p) => {
    const r = { prompt: p, onnxruntime: rt[p].ids, min_margin: rt[p].min_margin };
    if (tjs) r.transformers_js = tjs[p];
    r.agree = !tjs || tjs[p].join(',') === rt[p].ids.join(',');
    return r;
  });
  const ok = results.every((r) => r.agree);
  console.log(JSON.stringify({ ok, package: a.dir, dtype: a.dtype, decoder_file: decoderFile, new_tokens: newTokens,
    prompts: results }));
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(`vlm_generate: ${e.stack || e.message}`); process.exit(1); });
