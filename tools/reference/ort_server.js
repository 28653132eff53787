#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node 1.30, CPU) as a long-lived benchmark peer for `edgemm bench`.
// Speaks JSON lines (json_lines_host.js): one request per stdin line, one reply per stdout line.
//   start                                   → {"ok":true,"ready":true,"version":"1.30.0","node":"v20..."}
//   {"op":"load","model":M,"threads":N,"inputs":{"x":"x.npy"}}
//                                           → {"ok":true,"load_ms":..,"settings":{...}}
//   {"op":"run","iters":K}                  → {"ok":true,"times_ms":[...]}   (K runs back to back)
//   {"op":"quit"}                           → exits
// Any failure → {"ok":false,"error":"..."}; the process keeps serving.
// Session: CPU provider, graphOptimizationLevel 'all', intraOpNumThreads N,
// interOpNumThreads 1, executionMode 'sequential'. Timing: process.hrtime around session.run.
'use strict';
const { serveJsonLines, msSince } = require('./json_lines_host.js');
const { readNpy } = require('./ort_run.js');

const ort = require('onnxruntime-node');
const version = require('onnxruntime-node/package.json').version;
let session = null;
let feeds = null;


async function load(req) {
  const settings = {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all',
    intraOpNumThreads: req.threads, interOpNumThreads: 1, executionMode: 'sequential',
  };
  const t0 = process.hrtime.bigint();
  session = await ort.InferenceSession.create(req.model, settings);
  const loadMs = msSince(t0);
  feeds = {};
  for (const [name, file] of Object.entries(req.inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  return { load_ms: loadMs, settings };
}

async function run(req) {
  if (!session) throw new Error('no model loaded');
  const times = [];
  for (let i = 0; i < req.iters; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(msSince(t0));
  }
  return { times_ms: times };
}

serveJsonLines(version, { load, run });
