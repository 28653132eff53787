#!/usr/bin/env node
// Generic ONNX Runtime (onnxruntime-node 1.30, CPU) runner: the oracle for edgemm parity tests.
'use strict';
const fs = require('fs');
const path = require('path');

const USAGE = `usage: node tools/reference/ort_run.js MODEL [--input NAME=FILE.npy ...] [--output-dir DIR]
                                          [--threads N] [--opt-level L] [--repeat N] [--json]

Runs MODEL with ONNX Runtime on the CPU (graphOptimizationLevel L, intraOpNumThreads N
(default 1), interOpNumThreads 1, executionMode 'sequential') and writes every output to
DIR/<output>.npy, the name with '/' and ':' replaced by '_'. A model that has inputs runs only
when --input is given (without, its inputs and outputs are listed); one without inputs always runs.

  --input NAME=FILE   a NumPy .npy file (v1-v3 header, little-endian, C order) for input NAME;
                      dtypes float32, float16, int64, int32, uint8, int8, bool
  --output-dir DIR    where to write the outputs (created if missing); without it nothing is written
  --threads N         intra-op threads (default 1)
  --opt-level L       graphOptimizationLevel: all (default), extended, basic or disabled
  --repeat N          run the session N times on the same inputs (default 1; the outputs are the
                      last run's), e.g. to count one run's instructions as the difference of two N
  --json              print JSON instead of text: the model's inputs and outputs (names, dtypes,
                      shapes with symbolic dims as strings) when it is not run, else the outputs
                      of the run (name, dtype, shape, file)
  -h, --help          this text

Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

// ---- .npy ----------------------------------------------------------------------------------
// ORT tensor type <-> numpy descr (little-endian) and typed-array class.
const DTYPES = {
  float32: ['<f4', Float32Array], float16: ['<f2', Uint16Array], int64: ['<i8', BigInt64Array],
  int32: ['<i4', Int32Array], uint8: ['|u1', Uint8Array], int8: ['|i1', Int8Array], bool: ['|b1', Uint8Array],
};
const BY_DESCR = Object.fromEntries(Object.entries(DTYPES).map(([t, [d]]) => [d, t]));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const [hlen, start] = major === 1 ? [buf.readUInt16LE(8), 10] : [buf.readUInt32LE(8), 12];
  const header = buf.toString('latin1', start, start + hlen);
  const descr = (header.match(/'descr':\s*'([^']+)'/) || [])[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = (header.match(/'shape':\s*\(([^)]*)\)/) || [])[1];
  if (!descr || shapeText === undefined) throw new Error(`${file}: malformed .npy header: ${header}`);
  // '=' and '<' are both little-endian here; single-byte types may use '|'.
  const type = BY_DESCR[descr.replace(/^[=<]/, descr.endsWith('1') ? '|' : '<')];
  if (!type) throw new Error(`${file}: unsupported dtype '${descr}' (want little-endian f4, f2, i8, i4, u1, i1, b1)`);
  if (fortran) throw new Error(`${file}: Fortran-order arrays are not supported`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const Arr = DTYPES[type][1];
  const off = start + hlen;
  if (buf.length - off !== count * Arr.BYTES_PER_ELEMENT) {
    throw new Error(`${file}: ${buf.length - off} data bytes, shape [${shape}] of ${type} needs ${count * Arr.BYTES_PER_ELEMENT}`);
  }
  const data = new Arr(count);  // copy: the file buffer may be unaligned
  Buffer.from(data.buffer).set(buf.subarray(off));
  return { type, shape, data };
}

function writeNpy(file, type, shape, data) {
  const dims = shape.join(', ') + (shape.length === 1 ? ',' : '');
  let header = `{'descr': '${DTYPES[type][0]}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';  // total header length % 64 == 0
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// ---- main ----------------------------------------------------------------------------------
function parseArgs(argv) {
  const a = { model: null, inputs: [], outDir: null, threads: 1, json: false, optLevel: 'all', repeat: 1 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${k} needs a value`); return argv[++i]; };
    if (k === '-h' || k === '--help') { console.log(USAGE); process.exit(0); }
    else if (k === '--input') {
      const v = val(); const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`--input wants NAME=FILE.npy, got '${v}'`);
      a.inputs.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (k === '--output-dir') a.outDir = val();
    else if (k === '--threads') { a.threads = Number(val()); if (!(a.threads >= 1)) throw new Error('--threads wants N >= 1'); }
    else if (k === '--json') a.json = true;
    else if (k === '--opt-level') a.optLevel = val();
    else if (k === '--repeat') { a.repeat = Number(val()); if (!(Number.isInteger(a.repeat) && a.repeat >= 1)) throw new Error('--repeat wants N >= 1'); }
    else if (k.startsWith('-')) throw new Error(`unknown option ${k}`);
    else if (!a.model) a.model = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (!a.model) throw new Error('missing MODEL');
  return a;
}

const meta = (m) => ({ name: m.name, dtype: m.type, shape: m.shape });

async function main() {
  let args;
  try { args = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`ort_run: ${e.message}\n\n${USAGE}`); process.exit(2); }
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: args.optLevel,
    intraOpNumThreads: args.threads, interOpNumThreads: 1, executionMode: 'sequential',
  });
  // A model without inputs (e.g. Constant -> output) runs on no feeds; listing it would write nothing.
  if (args.inputs.length === 0 && session.inputNames.length > 0) {
    const info = { inputs: session.inputMetadata.map(meta), outputs: session.outputMetadata.map(meta) };
    if (args.json) console.log(JSON.stringify(info, null, 2));
    else for (const [kind, list] of Object.entries(info)) for (const m of list) console.log(`${kind.slice(0, -1)} ${m.name} ${m.dtype} [${m.shape}]`);
    return;
  }
  const feeds = {};
  for (const [name, file] of args.inputs) {
    if (!session.inputNames.includes(name)) throw new Error(`model has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  let results = await session.run(feeds);
  for (let r = 1; r < args.repeat; r++) results = await session.run(feeds);
  if (args.outDir) fs.mkdirSync(args.outDir, { recursive: true });
  const report = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const file = args.outDir ? path.join(args.outDir, name.replace(/[/:]/g, '_') + '.npy') : null;
    if (file) writeNpy(file, t.type, t.dims, t.data);
    report.push({ name, dtype: t.type, shape: Array.from(t.dims), file });
    if (!args.json) console.log(`output ${name} ${t.type} [${t.dims}]${file ? ' -> ' + file : ''}`);
  }
  if (args.json) console.log(JSON.stringify({ outputs: report }, null, 2));
}

if (require.main === module) main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
module.exports = { readNpy, writeNpy };
