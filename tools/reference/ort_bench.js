#!/usr/bin/env node
// Times ONNX Runtime (onnxruntime-node 1.30, CPU) on one model and input: the peer for
// edgemm's benchmark comparisons. Prints JSON {median_ms, min_ms, times_ms, ...}.
'use strict';
const { readNpy } = require('./ort_run.js');

const USAGE = `usage: node tools/reference/ort_bench.js MODEL --input NAME=FILE.npy [--threads N] [--warmup W] [--repeat K]

Session settings: graphOptimizationLevel 'all', intraOpNumThreads N (default 1),
interOpNumThreads 1, executionMode 'sequential'. W untimed runs (default 3), then K timed runs
(default 10); prints one JSON line with the median and all times in milliseconds.`;

async function main() {
  const argv = process.argv.slice(2);
  const a = { model: null, inputs: [], threads: 1, warmup: 3, repeat: 10 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => argv[++i];
    if (k === '-h' || k === '--help') { console.log(USAGE); return; }
    if (k === '--input') { const v = val(); const eq = v.indexOf('='); a.inputs.push([v.slice(0, eq), v.slice(eq + 1)]); }
    else if (k === '--threads') a.threads = Number(val());
    else if (k === '--warmup') a.warmup = Number(val());
    else if (k === '--repeat') a.repeat = Number(val());
    else if (!a.model) a.model = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (!a.model || a.inputs.length === 0) throw new Error(`missing MODEL or --input\n\n${USAGE}`);
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all',
    intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
  });
  const feeds = {};
  for (const [name, file] of a.inputs) { const t = readNpy(file); feeds[name] = new ort.Tensor(t.type, t.data, t.shape); }
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < a.repeat; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const sorted = [...times].sort((x, y) => x - y);
  console.log(JSON.stringify({ runtime: 'onnxruntime-node', version: ort.env.versions ? ort.env.versions.common : '1.30.0',
    threads: a.threads, median_ms: sorted[Math.floor(sorted.length / 2)], min_ms: sorted[0], times_ms: times }));
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
