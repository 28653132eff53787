#!/usr/bin/env node
// Tokenizer oracle for edgemm tests: npm @huggingface/tokenizers 0.2.0 (the tokenizer of
// transformers.js) encodes every line of a corpus file with a Hugging Face tokenizer.json.
'use strict';
const fs = require('fs');
const path = require('path');

const USAGE = `usage: node tools/reference/tokenize.js TOKENIZER_JSON CORPUS_FILE [--no-special]
                                          [--max-length N] [--pad longest|N] [--pad-id ID] [--decode]

Prints one JSON object a corpus line: {"ids": [...], "attention_mask": [...]} and, with
--decode, "text" (decode(ids)) and "text_skip" (decode(ids, skip_special_tokens)).
tokenizer_config.json beside TOKENIZER_JSON is passed to the tokenizer when present.

Corpus lines are unescaped first: \\n newline, \\t tab, \\r carriage return, \\\\ backslash
(other backslashes stay). An empty line is an empty text.

  --no-special     encode without the post-processor's special tokens
  --max-length N   truncate as the Rust tokenizers crate does (TruncationParams, direction Right):
                   the text's tokens are cut to N minus the number of special tokens the
                   post-processor adds, then the special tokens are added (the library itself
                   does not truncate; transformers.js cuts after the special tokens instead)
  --pad longest    pad every line to the longest line (right side, attention_mask 0)
  --pad N          pad every line to N tokens
  --pad-id ID      the padding id (default: the id of tokenizer_config's pad_token, else 0)
  --decode         also decode the ids
  --transformers   encode with transformers.js 4.3.1 (AutoTokenizer.from_pretrained on the folder of
                   TOKENIZER_JSON, local files only) instead, ids and attention_mask only
  -h, --help       this text

Needs: cd tools/reference && npm install --ignore-scripts (scripts/setup.sh does it).`;

function unescape_line(line) {
  return line.replace(/\\(\\|n|t|r)/g, (_, c) => ({'\\': '\\', n: '\n', t: '\t', r: '\r'})[c]);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  const positional = [];
  const opts = {special: true, max_length: null, pad: null, pad_id: null, decode: false, transformers: false};
  for (let i = 0; i < args.length; ++i) {
    const a = args[i];
    if (a === '--no-special') opts.special = false;
    else if (a === '--decode') opts.decode = true;
    else if (a === '--transformers') opts.transformers = true;
    else if (a === '--max-length') opts.max_length = parseInt(args[++i], 10);
    else if (a === '--pad') opts.pad = args[++i];
    else if (a === '--pad-id') opts.pad_id = parseInt(args[++i], 10);
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}\n${USAGE}`);
    else positional.push(a);
  }
  if (positional.length !== 2) throw new Error(USAGE);
  const [tokenizer_path, corpus_path] = positional;
  if (opts.transformers) return transformers_js(tokenizer_path, corpus_path, opts);
  const {Tokenizer} = await import('@huggingface/tokenizers');
  const json = JSON.parse(fs.readFileSync(tokenizer_path, 'utf8'));
  const config_path = path.join(path.dirname(tokenizer_path), 'tokenizer_config.json');
  const config = fs.existsSync(config_path) ? JSON.parse(fs.readFileSync(config_path, 'utf8')) : {};
  const tok = new Tokenizer(json, config);
  const to_id = (t) => tok.token_to_id(t) ?? tok.model.unk_token_id;
  let pad_id = opts.pad_id;
  if (pad_id === null) {
    const pad = typeof config.pad_token === 'string' ? config.pad_token : config.pad_token?.content;
    pad_id = (pad !== undefined && tok.token_to_id(pad)) ?? 0;
  }
  const n_special = opts.special && tok.post_processor ? tok.post_processor([], null, true).tokens.length : 0;

  let lines = fs.readFileSync(corpus_path, 'utf8').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const rows = lines.map((line) => {
    const text = unescape_line(line);
    let ids;
    if (opts.max_length === null) {
      ids = tok.encode(text, {add_special_tokens: opts.special}).ids;
    } else {
      let tokens = tok.tokenize(text, {add_special_tokens: false});
      tokens = tokens.slice(0, Math.max(0, opts.max_length - n_special));
      if (opts.special && tok.post_processor) tokens = tok.post_processor(tokens, null, true).tokens;
      ids = tokens.map(to_id);
    }
    return {ids, attention_mask: ids.map(() => 1)};
  });
  if (opts.pad !== null) {
    const target = opts.pad === 'longest' ? Math.max(0, ...rows.map((r) => r.ids.length)) : parseInt(opts.pad, 10);
    for (const r of rows) {
      while (r.ids.length < target) {
        r.ids.push(pad_id);
        r.attention_mask.push(0);
      }
    }
  }
  for (const r of rows) {
    if (opts.decode) {
      const ids = r.ids.filter((_, i) => r.attention_mask[i] === 1);
      r.text = ids.length ? tok.decode(ids, {skip_special_tokens: false}) : '';
      r.text_skip = ids.length ? tok.decode(ids, {skip_special_tokens: true}) : '';
    }
    process.stdout.write(JSON.stringify(r) + '\n');
  }
  return 0;
}

function read_corpus(corpus_path) {
  const lines = fs.readFileSync(corpus_path, 'utf8').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.map(unescape_line);
}

// The same corpus through transformers.js' AutoTokenizer (the loader of published model folders).
async function transformers_js(tokenizer_path, corpus_path, opts) {
  const {AutoTokenizer, env} = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  const dir = path.resolve(path.dirname(tokenizer_path));
  env.localModelPath = path.dirname(dir) + path.sep;
  const tok = await AutoTokenizer.from_pretrained(path.basename(dir), {local_files_only: true});
  for (const text of read_corpus(corpus_path)) {
    const enc = tok(text, {add_special_tokens: opts.special, return_tensor: false});
    process.stdout.write(JSON.stringify({ids: enc.input_ids, attention_mask: enc.attention_mask}) + '\n');
  }
  return 0;
}

main().then((code) => process.exit(code), (err) => {
  console.error(`tokenize.js: ${err.message}`);
  process.exit(1);
});
