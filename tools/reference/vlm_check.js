#!/usr/bin/env node
// Loads an Idefics3/SmolVLM-style package (tests/fixtures/vlm_tiny and vlm_tiny_if, made by
// tools/fixtures/make_vlm_fixture.py) with transformers.js 4.3.1 and ONNX Runtime, and checks them
// against the generator's PyTorch references: the independent oracle that the package is what
// transformers.js expects and that its ONNX files compute what PyTorch does.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./ort_run.js');

const ROOT = path.resolve(__dirname, '../..');
const DEFAULT_DIRS = ['tests/fixtures/vlm_tiny', 'tests/fixtures/vlm_tiny_if'];
const USAGE = `usage: node tools/reference/vlm_check.js [PACKAGE_DIR ...] [--max-diff D] [--ort-only]

For each PACKAGE_DIR (default: ${DEFAULT_DIRS.join(' ')}), with the references in
PACKAGE_DIR/reference (manifest.json lists the prompts):
  transformers.js (local files only, dtype fp32, Idefics3ForConditionalGeneration + AutoProcessor):
    the chat template rendered by the processor equals the manifest's text; the processor's
    input_ids equal P_input_ids; its pixel_values vs P_pixel_values (max abs diff, at most D) and
    pixel_attention_mask equal; greedy generate() of the manifest's new-token count on the
    committed tensors gives exactly P_generated_ids (and again on the processor's own
    pixel_values); the first forward's logits vs P_logits (at most D);
  ONNX Runtime (onnxruntime-node, no transformers.js) on the three files with PyTorch's tensors:
    vision_encoder vs P_image_features, embed_tokens vs P_inputs_embeds off the image tokens,
    decoder_model_merged prefill (zero-length past; use_cache_branch false when the graph has it)
    vs P_logits, and the decode step with past (use_cache_branch true) vs decode_logits, each at
    most D (default 1e-4).
--ort-only skips transformers.js: for the SmolVLM-256M-shaped export (--shape smolvlm-256m), whose
processor splits the 512x512 reference image into 17 frames while its references use one frame.
Prints one JSON object; exit status 0 when every check passes, 1 otherwise, 2 for bad arguments.

Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

function parseArgs(argv) {
  const a = { dirs: [], maxDiff: 1e-4, ortOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--max-diff') {
      if (i + 1 >= argv.length) throw new Error('--max-diff needs a value');
      a.maxDiff = Number(argv[++i]);
    } else if (k === '--ort-only') a.ortOnly = true;
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else a.dirs.push(k);
  }
  if (a.dirs.length === 0) a.dirs = DEFAULT_DIRS.map((d) => path.join(ROOT, d));
  if (!(a.maxDiff >= 0)) throw new Error('--max-diff wants a number >= 0');
  return a;
}

// Max abs diff of two tensors ({dims|shape, data}) of the same shape; Infinity on NaN.
function maxDiff(got, want) {
  const shape = Array.from(got.dims ?? got.shape, Number);
  if (shape.join(',') !== want.shape.join(',')) return { shape, error: `shape [${shape}] differs from [${want.shape}]` };
  let m = 0;
  for (let i = 0; i < want.data.length; i++) {
    const d = Math.abs(Number(got.data[i]) - Number(want.data[i]));
    m = Number.isNaN(d) ? Infinity : Math.max(m, d);
  }
  return { shape, max_abs_diff: m };
}

function sameValues(got, want) {
  const shape = Array.from(got.dims ?? got.shape, Number);
  return shape.join(',') === want.shape.join(',') && want.data.every((v, i) => Number(got.data[i]) === Number(v));
}

// transformers.js: processor + model on every prompt of the manifest.
async function checkTransformersJs(dir, manifest, maxAllowed) {
  const { env, Tensor, RawImage, AutoProcessor, Idefics3ForConditionalGeneration } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(dir) + path.sep;
  const id = path.basename(dir);
  const ref = (name) => readNpy(path.join(dir, 'reference', name));
  const tensor = (t) => new Tensor(t.type, t.data, t.shape);
  const processor = await AutoProcessor.from_pretrained(id);
  const model = await Idefics3ForConditionalGeneration.from_pretrained(id, {
    dtype: 'fp32', device: 'cpu', session_options: { intraOpNumThreads: 1 } });
  const sessions = Object.fromEntries(Object.entries(model.sessions).map(([k, s]) => [k, { inputs: s.inputNames, outputs: s.outputNames }]));
  const results = [];
  for (const [p, prompt] of manifest.prompts.entries()) {
    const r = { prompt: p, image: prompt.image };
    const text = processor.apply_chat_template(prompt.messages, { add_generation_prompt: true });
    r.chat_template_equal = text === prompt.text;
    const image = await RawImage.read(path.join(dir, 'reference', prompt.image));
    const inputs = await processor(text, [image]);
    r.input_ids_equal = sameValues(inputs.input_ids, ref(`p${p}_input_ids.npy`));
    r.pixel_values = maxDiff(inputs.pixel_values, ref(`p${p}_pixel_values.npy`));
    r.pixel_attention_mask_equal = sameValues(inputs.pixel_attention_mask, ref(`p${p}_pixel_attention_mask.npy`));
    const want = Array.from(ref(`p${p}_generated_ids.npy`).data, Number);
    const committed = {
      input_ids: tensor(ref(`p${p}_input_ids.npy`)), attention_mask: tensor(ref(`p${p}_attention_mask.npy`)),
      pixel_values: tensor(ref(`p${p}_pixel_values.npy`)),
      pixel_attention_mask: tensor(ref(`p${p}_pixel_attention_mask.npy`)),
    };
    const generate = async (feeds) => {
      const out = await model.generate({ ...feeds, max_new_tokens: want.length, do_sample: false });
      return Array.from(out.data, Number).slice(feeds.input_ids.dims[1]);
    };
    const got = await generate(committed);
    r.generated_equal = got.join(',') === want.join(',');
    if (!r.generated_equal) Object.assign(r, { generated_ids: got, want_ids: want });
    r.generated_equal_on_processor_tensors = (await generate(inputs)).join(',') === want.join(',');
    const { logits } = await model(committed);
    r.first_step_logits = maxDiff(logits, ref(`p${p}_logits.npy`));
    r.ok = r.chat_template_equal && r.input_ids_equal && r.pixel_attention_mask_equal && r.generated_equal &&
      r.generated_equal_on_processor_tensors && r.pixel_values.max_abs_diff <= maxAllowed &&
      r.first_step_logits.max_abs_diff <= maxAllowed;
    results.push(r);
  }
  await model.dispose();
  return { sessions, prompts: results, ok: results.every((r) => r.ok) };
}

// ONNX Runtime on the package's three files with PyTorch's tensors.
async function checkOrt(dir, manifest, maxAllowed) {
  const ref = (name) => readNpy(path.join(dir, 'reference', name));
  const ortTensor = (t) => new ort.Tensor(t.type, t.data, t.shape);
  const options = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
  const open = (name) => ort.InferenceSession.create(path.join(dir, 'onnx', name), options);
  const [vision, embed, decoder] = await Promise.all(['vision_encoder.onnx', 'embed_tokens.onnx',
    'decoder_model_merged.onnx'].map(open));
  const pastNames = decoder.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const hasFlag = decoder.inputNames.includes('use_cache_branch');
  const checks = [];
  const add = (name, diff) => { diff.name = name; diff.ok = !diff.error && diff.max_abs_diff <= maxAllowed; checks.push(diff); };
  for (const p of manifest.prompts.keys()) {
    const v = await vision.run({ pixel_values: ortTensor(ref(`p${p}_pixel_values.npy`)),
      pixel_attention_mask: ortTensor(ref(`p${p}_pixel_attention_mask.npy`)) });
    add(`p${p} vision_encoder image_features`, maxDiff(v.image_features, ref(`p${p}_image_features.npy`)));
    // embed_tokens vs the merged embeddings at the rows that are not image tokens.
    const ids = ref(`p${p}_input_ids.npy`);
    const e = (await embed.run({ input_ids: ortTensor(ids) })).inputs_embeds;
    const merged = ref(`p${p}_inputs_embeds.npy`);
    const hidden = merged.shape[2];
    let m = 0;
    ids.data.forEach((t, row) => {
      if (Number(t) === manifest.image_token_id) return;
      for (let j = row * hidden; j < (row + 1) * hidden; j++) m = Math.max(m, Math.abs(e.data[j] - merged.data[j]));
    });
    add(`p${p} embed_tokens inputs_embeds (text rows)`, { shape: Array.from(e.dims), max_abs_diff: m });
    const feeds = { inputs_embeds: ortTensor(merged), attention_mask: ortTensor(ref(`p${p}_attention_mask.npy`)),
      position_ids: ortTensor(ref(`p${p}_position_ids.npy`)) };
    for (const n of pastNames) feeds[n] = ortTensor(ref('empty_past.npy'));
    if (hasFlag) feeds.use_cache_branch = ortTensor(ref('use_cache_branch_false.npy'));
    add(`p${p} decoder prefill logits (zero-length past)`, maxDiff((await decoder.run(feeds)).logits, ref(`p${p}_logits.npy`)));
  }
  const step = { inputs_embeds: ortTensor(ref('decode_inputs_embeds.npy')),
    attention_mask: ortTensor(ref('decode_attention_mask.npy')), position_ids: ortTensor(ref('decode_position_ids.npy')) };
  for (const n of pastNames) step[n] = ortTensor(ref(`decode_${n}.npy`));
  if (hasFlag) step.use_cache_branch = ortTensor(ref('use_cache_branch_true.npy'));
  add('p0 decoder decode step logits (past from the prefill)', maxDiff((await decoder.run(step)).logits, ref('decode_logits.npy')));
  const io = { inputs: decoder.inputNames, outputs: decoder.outputNames };
  for (const s of [vision, embed, decoder]) await s.release();
  return { decoder: io, checks, ok: checks.every((c) => c.ok) };
}

async function main() {
  let args;
  try { args = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`vlm_check: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const packages = [];
  for (const d of args.dirs) {
    const dir = path.resolve(d);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'reference', 'manifest.json'), 'utf8'));
    const transformersJs = args.ortOnly ? { ok: true, note: 'skipped (--ort-only)' }
      : await checkTransformersJs(dir, manifest, args.maxDiff);
    const onnxruntime = await checkOrt(dir, manifest, args.maxDiff);
    packages.push({ package: dir, ok: transformersJs.ok && onnxruntime.ok, transformers_js: transformersJs, onnxruntime });
  }
  const ok = packages.every((p) => p.ok);
  console.log(JSON.stringify({ ok, max_diff: args.maxDiff, packages }, null, 1));
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(`vlm_check: ${e.stack || e.message}`); process.exit(1); });
