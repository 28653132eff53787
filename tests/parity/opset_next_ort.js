#!/usr/bin/env node
// ONNX Runtime 1.30 (onnxruntime-node, CPU) on every case of an opset_next_models.py manifest, in one
// process (one `node tools/reference/ort_run.js` per case would spend most of the test starting node).
// Same session options as tools/reference/ort_run.js --threads 1 --opt-level disabled: every op as
// written. Writes OUTDIR/<case>/<output>.npy and OUTDIR/results.json:
//   {"<case>": {"outputs": [{name, dtype, shape, file}]} | {"error": "..."}}
// usage: node opset_next_ort.js REPO_ROOT MANIFEST OUTDIR
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [root, manifestFile, outDir] = process.argv.slice(2);
  if (!outDir) { console.error('usage: node opset_next_ort.js REPO_ROOT MANIFEST OUTDIR'); process.exit(2); }
  const refDir = path.resolve(root, 'tools', 'reference');
  const { readNpy, writeNpy } = require(path.join(refDir, 'ort_run.js'));
  const ort = require(path.join(refDir, 'node_modules', 'onnxruntime-node'));
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  const results = {};
  for (const c of manifest.cases) {
    try {
      const session = await ort.InferenceSession.create(c.model, {
        executionProviders: ['cpu'], graphOptimizationLevel: 'disabled', intraOpNumThreads: 1,
        interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 4,
      });
      const feeds = {};
      for (const [name, file] of Object.entries(c.inputs)) {
        const t = readNpy(file);
        feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
      }
      const out = await session.run(feeds);
      const dir = path.join(outDir, c.name);
      fs.mkdirSync(dir, { recursive: true });
      const outputs = [];
      for (const name of session.outputNames) {
        const t = out[name];
        const file = path.join(dir, name.replace(/[/:]/g, '_') + '.npy');
        writeNpy(file, t.type, t.dims, t.data);
        outputs.push({ name, dtype: t.type, shape: Array.from(t.dims), file });
      }
      results[c.name] = { outputs };
      await session.release();
    } catch (e) {
      results[c.name] = { error: String(e.message || e).split('\n')[0] };
    }
  }
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 1));
}

main().catch((e) => { console.error(`opset_next_ort: ${e.message}`); process.exit(1); });
