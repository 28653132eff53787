#!/usr/bin/env bash
# edgemm tokenize: --help, ids of the committed CLIP-style fixture (expected ids from npm
# @huggingface/tokenizers 0.2.0 and transformers.js 4.3.1, which agree), --decode, --json,
# truncation/padding, and exit codes for bad input. Usage: tokenize_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$1"
root="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
clip="$root/tests/fixtures/tokenizers/clip_bpe"

check help 0 "$bin" tokenize --help
expect_text help-text "$tmp/out" "tokenizer.json"
check encode 0 "$bin" tokenize --tokenizer "$clip" "A photo of a cat."
expect_text encode-ids "$tmp/out" '^\[1022, 320, 691, 521, 320, 830, 269, 1023\]$'
check encode-file 0 "$bin" tokenize --tokenizer "$clip/tokenizer.json" "two dogs" --no-special
expect_text encode-no-special "$tmp/out" '^\[979, 587, 636\]$'
check encode-tokens 0 "$bin" tokenize --tokenizer "$clip" "a cat" --tokens
expect_text encode-token-lines "$tmp/out" "320 -> 'a</w>'"
check encode-json 0 "$bin" tokenize --tokenizer "$clip" --json "A photo of a cat." "two dogs"
cp "$tmp/out" "$tmp/encode.json"
check encode-json-valid 0 /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["ids"] for x in r] == [[1022, 320, 691, 521, 320, 830, 269, 1023], [1022, 979, 587, 636, 1023]], r
assert r[1]["attention_mask"] == [1] * 5 and r[1]["tokens"][0] == "<|startoftext|>", r' "$tmp/encode.json"
check pad-truncate 0 "$bin" tokenize --tokenizer "$clip" --max-length 5 --pad-to 6 "A photo of a cat." "two"
expect_text truncated "$tmp/out" '^\[1022, 320, 691, 521, 1023, 1023\]$'
expect_text padded "$tmp/out" '^\[1022, 979, 1023, 1023, 1023, 1023\]$'
check decode 0 "$bin" tokenize --tokenizer "$clip" --decode "1022,320,691,521,320,830,269,1023"
expect_text decoded "$tmp/out" '^<|startoftext|>a photo of a cat . <|endoftext|>$'
check decode-skip 0 "$bin" tokenize --tokenizer "$clip" --decode --skip-special "1022 320 691 1023"
expect_text decoded-skip "$tmp/out" '^a photo$'

# Bad input: exit 2 arguments, 3 malformed file, 4 unsupported, 6 missing file.
check no-text 2 "$bin" tokenize --tokenizer "$clip"
check no-tokenizer 2 "$bin" tokenize "text"
check missing-file 6 "$bin" tokenize --tokenizer "$tmp/nope.json" "text"
check folder-without-file 6 "$bin" tokenize --tokenizer "$tmp" "text"
echo '{"model": ' >"$tmp/broken.json"
check malformed 3 "$bin" tokenize --tokenizer "$tmp/broken.json" "text"
expect_text malformed-message "$tmp/err" "not valid JSON"
echo '{"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Sequence",
  "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "_"}]}}' >"$tmp/meta.json"
check unsupported 4 "$bin" tokenize --tokenizer "$tmp/meta.json" "text"
expect_text unsupported-message "$tmp/err" 'pre_tokenizer.pretokenizers\[1\].type "Metaspace" is not supported'
check unsupported-json 4 "$bin" tokenize --tokenizer "$tmp/meta.json" --json "text"
expect_text unsupported-json-error "$tmp/out" '"error"'
check bad-id 2 "$bin" tokenize --tokenizer "$clip" --decode "1,2,x"
check id-out-of-range 2 "$bin" tokenize --tokenizer "$clip" --decode "5000"
check invalid-utf8 2 "$bin" tokenize --tokenizer "$clip" "$(printf 'bad \xff text')"
check max-length-too-small 2 "$bin" tokenize --tokenizer "$clip" --max-length 1 "text"
report_and_exit
