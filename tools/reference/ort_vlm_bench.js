#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) timing of an Idefics3/SmolVLM-style package, stage by stage, the
// way transformers.js runs it: vision encoder, embed_tokens + image-feature merge, decoder prefill
// (zero-length past), then greedy decode steps (embed_tokens on the new id, decoder with the
// presents fed back as past; the published Concat copies the cache every step). The prompt comes
// from transformers.js' processor (chat template + Idefics3 image splitting), not timed. The
// counterpart of `edgemm vqa --json` timings for tools/bench/make_vlm_md.sh.
'use strict';

const path = require('path');
const ort = require('onnxruntime-node');

const USAGE = `usage: node tools/reference/ort_vlm_bench.js PACKAGE_DIR IMAGE QUESTION [--decoder FILE]
    [--threads T] [--max-new-tokens N] [--iters K] [--warmup W]

PACKAGE_DIR/onnx/{vision_encoder.onnx, embed_tokens.onnx, FILE (default decoder_model_merged.onnx)}
in ONNX Runtime (intraOpNumThreads T (default 1), interOpNumThreads 1, graph optimizations all).
Each of K runs (default 1, after W untimed runs, default 0: like one edgemm vqa process) generates N new tokens (default 32,
greedy, no stop token) and times: vision_encoder_ms, prefill_ms (embed_tokens + merge + decoder
over the prompt + argmax), time_to_first_token_ms (vision_encoder_ms + prefill_ms),
decode_ms (the N - 1 steps after the first token), prefill_tokens_per_s (prompt tokens /
prefill), decode_tokens_per_s ((N - 1) / decode). Prints JSON {runs: [...], median: {...}, ids}.`;

function parseArgs(argv) {
  const a = { pos: [], decoder: 'decoder_model_merged.onnx', threads: 1, newTokens: 32, iters: 1, warmup: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--decoder') a.decoder = value();
    else if (k === '--threads') a.threads = Number(value());
    else if (k === '--max-new-tokens') a.newTokens = Number(value());
    else if (k === '--iters') a.iters = Number(value());
    else if (k === '--warmup') a.warmup = Number(value());
    else if (k.startsWith('--')) throw new Error(`unknown option ${k}`);
    else a.pos.push(k);
  }
  if (a.pos.length !== 3) throw new Error('PACKAGE_DIR, IMAGE and QUESTION are required');
  for (const [name, v] of [['--threads', a.threads], ['--max-new-tokens', a.newTokens], ['--iters', a.iters]]) {
    if (!(Number.isInteger(v) && v > 0)) throw new Error(`${name} wants an integer > 0`);
  }
  if (!(Number.isInteger(a.warmup) && a.warmup >= 0)) throw new Error('--warmup wants an integer >= 0');
  return a;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const argmax = (logits) => {
  const vocab = logits.dims[2];
  const row = logits.data.subarray(logits.data.length - vocab);
  let best = 0;
  for (let j = 1; j < vocab; j++) if (row[j] > row[best]) best = j;
  return best;
};

async function main() {
  let a;
  try { a = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`ort_vlm_bench: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const [dirArg, imagePath, question] = a.pos;
  const dir = path.resolve(dirArg);
  const { env, RawImage, AutoProcessor } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(dir) + path.sep;
  const processor = await AutoProcessor.from_pretrained(path.basename(dir));
  const messages = [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: question }] }];
  const text = processor.apply_chat_template(messages, { add_generation_prompt: true });
  const inputs = await processor(text, [await RawImage.read(path.resolve(imagePath))]);
  const config = require(path.join(dir, 'config.json'));
  const imageTokenId = config.image_token_id;

  const options = { intraOpNumThreads: a.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
  const open = (name) => ort.InferenceSession.create(path.join(dir, 'onnx', name), options);
  const loadStart = now();
  const vision = await open('vision_encoder.onnx');
  const embed = await open('embed_tokens.onnx');
  const decoder = await open(a.decoder);
  const loadMs = now() - loadStart;
  const pastNames = decoder.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const hasFlag = decoder.inputNames.includes('use_cache_branch');
  const pastShape = (name) => {  // [batch, kv_heads, 0, head_dim] from the declared dims
    const meta = decoder.inputMetadata?.find?.((m) => m.name === name);
    if (meta && Array.isArray(meta.shape)) return meta.shape.map((d, i) => (i === 2 ? 0 : typeof d === 'number' ? d : 1));
    return [1, config.text_config.num_key_value_heads,
      0, config.text_config.head_dim ?? config.text_config.hidden_size / config.text_config.num_attention_heads];
  };
  const t = (x) => new ort.Tensor(x.type, x.data, x.dims);
  const i64 = (values, shape) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), shape);
  const ids = Array.from(inputs.input_ids.data, Number);

  async function once() {
    const r = {};
    let start = now();
    const features = (await vision.run({ pixel_values: t(inputs.pixel_values),
      pixel_attention_mask: t(inputs.pixel_attention_mask) })).image_features;
    r.vision_encoder_ms = now() - start;
    start = now();
    const embeds = (await embed.run({ input_ids: t(inputs.input_ids) })).inputs_embeds;
    const hidden = embeds.dims[2];
    let f = 0;
    ids.forEach((id, row) => {
      if (id !== imageTokenId) return;
      embeds.data.set(features.data.subarray(f * hidden, (f + 1) * hidden), row * hidden);
      f++;
    });
    if (f * hidden !== features.data.length) throw new Error(`${f} image tokens, ${features.data.length / hidden} image features`);
    const feeds = { inputs_embeds: embeds, attention_mask: i64(ids.map(() => 1), [1, ids.length]),
      position_ids: i64(ids.map((_, i) => i), [1, ids.length]) };
    for (const n of pastNames) feeds[n] = new ort.Tensor('float32', new Float32Array(0), pastShape(n));
    if (hasFlag) feeds.use_cache_branch = new ort.Tensor('bool', [false], [1]);
    let out = await decoder.run(feeds);
    const got = [argmax(out.logits)];
    r.prefill_ms = now() - start;
    r.time_to_first_token_ms = r.vision_encoder_ms + r.prefill_ms;
    start = now();
    let total = ids.length;
    while (got.length < a.newTokens) {
      for (const n of pastNames) feeds[n] = out[n.replace('past_key_values.', 'present.')];
      feeds.inputs_embeds = (await embed.run({ input_ids: i64([got[got.length - 1]], [1, 1]) })).inputs_embeds;
      total++;
      feeds.attention_mask = i64(Array(total).fill(1), [1, total]);
      feeds.position_ids = i64([total - 1], [1, 1]);
      if (hasFlag) feeds.use_cache_branch = new ort.Tensor('bool', [true], [1]);
      out = await decoder.run(feeds);
      got.push(argmax(out.logits));
    }
    r.decode_ms = now() - start;
    r.prompt_tokens = ids.length;
    r.new_tokens = got.length;
    r.prefill_tokens_per_s = ids.length / (r.prefill_ms / 1000);
    r.decode_tokens_per_s = got.length > 1 ? (got.length - 1) / (r.decode_ms / 1000) : 0;
    return { r, got };
  }

  for (let i = 0; i < a.warmup; i++) await once();
  const runs = [];
  let lastIds = [];
  for (let i = 0; i < a.iters; i++) {
    const { r, got } = await once();
    runs.push(r);
    lastIds = got;
  }
  const keys = Object.keys(runs[0]);
  const med = Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))]));
  console.log(JSON.stringify({ runtime: `onnxruntime-node ${require('onnxruntime-node/package.json').version}`,
    package: dir, decoder: a.decoder, threads: a.threads, load_ms: loadMs, frames: inputs.pixel_values.dims[1],
    median: med, runs, ids: lastIds }));
  for (const s of [vision, embed, decoder]) await s.release();
}

main().catch((e) => { console.error(`ort_vlm_bench: ${e.stack || e.message}`); process.exit(1); });
