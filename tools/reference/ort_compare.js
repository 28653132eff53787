#!/usr/bin/env node
// Runs two ONNX models with ONNX Runtime (onnxruntime-node 1.30, CPU) on the same seeded input and
// compares their outputs: the independent check that a model edgemm exported computes what the
// original does.
'use strict';

const USAGE = `usage: node tools/reference/ort_compare.js MODEL_A MODEL_B --shape NAME=D0,D1,... [--seed S]
                                              [--opt-level L] [--max-diff D]

Loads both models in ONNX Runtime on the CPU (graphOptimizationLevel L (default disabled),
1 intra-op and 1 inter-op thread, sequential), feeds each float32 input NAME of the given shape
with the same values (uniform in [-1, 1) from a seeded mulberry32 generator, seed S, default 1)
and compares every output by name: same dtype and shape, and the largest absolute difference.
Prints one JSON object {"outputs": [{name, dtype, shape, max_abs_diff}], "max_abs_diff"}.
Exit status: 0 when every difference is at most D (default 0, i.e. equal), 1 otherwise or when
the models' outputs differ in names, dtypes or shapes, 2 for bad arguments.

Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

function parseArgs(argv) {
  const a = { models: [], shapes: [], seed: 1, optLevel: 'disabled', maxDiff: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${k} needs a value`); return argv[++i]; };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--shape') {
      const v = val(); const eq = v.indexOf('=');
      const dims = eq > 0 ? v.slice(eq + 1).split(',').map(Number) : [];
      if (eq <= 0 || dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`--shape wants NAME=D0,D1,..., got '${v}'`);
      a.shapes.push([v.slice(0, eq), dims]);
    } else if (k === '--seed') a.seed = Number(val());
    else if (k === '--opt-level') a.optLevel = val();
    else if (k === '--max-diff') a.maxDiff = Number(val());
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else a.models.push(k);
  }
  if (a.models.length !== 2) throw new Error('want exactly two models');
  if (a.shapes.length === 0) throw new Error('want at least one --shape');
  return a;
}

// mulberry32: a small, well-known 32-bit generator; enough for reproducible test inputs.
function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function maxAbsDiff(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const x = typeof a[i] === 'bigint' ? Number(a[i] - b[i]) : a[i] - b[i];
    const d = Number.isNaN(x) ? (Number.isNaN(a[i]) && Number.isNaN(b[i]) ? 0 : Infinity) : Math.abs(x);
    if (d > worst) worst = d;
  }
  return worst;
}

async function main() {
  let args;
  try { args = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`ort_compare: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const ort = require('onnxruntime-node');
  const options = {
    executionProviders: ['cpu'], graphOptimizationLevel: args.optLevel,
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  };
  const random = mulberry32(args.seed);
  const feeds = {};
  for (const [name, dims] of args.shapes) {
    const data = new Float32Array(dims.reduce((p, d) => p * d, 1));
    for (let i = 0; i < data.length; i++) data[i] = random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  const results = [];
  for (const model of args.models) {
    const session = await ort.InferenceSession.create(model, options);
    results.push({ names: session.outputNames, outputs: await session.run(feeds) });
  }
  const [a, b] = results;
  if (a.names.join('\n') !== b.names.join('\n')) {
    console.error(`ort_compare: output names differ: [${a.names}] vs [${b.names}]`);
    process.exit(1);
  }
  const report = { outputs: [], max_abs_diff: 0 };
  for (const name of a.names) {
    const x = a.outputs[name], y = b.outputs[name];
    if (x.type !== y.type || x.dims.join(',') !== y.dims.join(',')) {
      console.error(`ort_compare: output '${name}' is ${x.type} [${x.dims}] vs ${y.type} [${y.dims}]`);
      process.exit(1);
    }
    const diff = maxAbsDiff(x.data, y.data);
    report.outputs.push({ name, dtype: x.type, shape: Array.from(x.dims), max_abs_diff: diff });
    report.max_abs_diff = Math.max(report.max_abs_diff, diff);
  }
  console.log(JSON.stringify(report));
  process.exit(report.max_abs_diff <= args.maxDiff ? 0 : 1);
}

main().catch((e) => { console.error(`ort_compare: ${e.message}`); process.exit(1); });
