#!/usr/bin/env node
// transformers.js 4.3.1's Idefics3 / SmolVLM processor on real photos, as the oracle of edgemm's
// VLM image preprocessing (resize by `size` with the configured resample — Lanczos-3 through sharp
// for SmolVLM —, rescale, normalize, split into frames, global frame). For each image writes
// OUT_DIR/<name>.npy (pixel_values [frames, 3, S, S] float32) and OUT_DIR/<name>.json ({rows, cols}).
const USAGE = 'usage: node tools/reference/vlm_processor.js PACKAGE_DIR OUT_DIR IMAGE...';
const fs = require('fs');
const path = require('path');
const { writeNpy } = require('./ort_run.js');

async function main(argv) {
  if (argv.length < 3 || argv.includes('-h') || argv.includes('--help')) {
    console.log(USAGE);
    process.exit(argv.length < 3 ? 2 : 0);
  }
  const [dir, out, ...images] = argv;
  const { env, RawImage, AutoProcessor } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(path.resolve(dir)) + path.sep;
  const processor = await AutoProcessor.from_pretrained(path.basename(path.resolve(dir)));
  fs.mkdirSync(out, { recursive: true });
  for (const file of images) {
    const name = path.basename(file).replace(/\.[^.]+$/, '');
    const inputs = await processor.image_processor(await RawImage.read(file), { return_row_col_info: true });
    const pv = inputs.pixel_values;  // [1, frames, 3, S, S]
    writeNpy(path.join(out, `${name}.npy`), 'float32', pv.dims.slice(1), pv.data);
    fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify({ rows: inputs.rows[0][0], cols: inputs.cols[0][0] }));
  }
}

main(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
