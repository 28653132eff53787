#!/usr/bin/env bash
# Chat-template references for tests/unit/chat_template_test.cc (ChatTemplateOracle.*): npm
# @huggingface/jinja 0.5.11 (tools/reference/chat_template.js) renders every template of
# tests/fixtures/chat_templates/templates.json with every conversation of conversations.json.
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "usage: tools/reference/make_chat_template_refs.sh OUT_JSONL"
  echo "Writes one JSON line a case ({name, output} or {name, error}); exits 77 without node or"
  echo "tools/reference/node_modules/@huggingface/jinja (run scripts/setup.sh)."
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: tools/reference/make_chat_template_refs.sh OUT_JSONL" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
command -v node >/dev/null || { echo "make_chat_template_refs: node not found; skipping" >&2; exit 77; }
[ -d "$root/tools/reference/node_modules/@huggingface/jinja" ] ||
  { echo "make_chat_template_refs: @huggingface/jinja is missing (scripts/setup.sh); skipping" >&2; exit 77; }
fixtures="$root/tests/fixtures/chat_templates"
mkdir -p "$(dirname "$1")"
node "$root/tools/reference/chat_template.js" --matrix "$fixtures/templates.json" "$fixtures/conversations.json" >"$1"
echo "make_chat_template_refs: $(wc -l <"$1") cases -> $1"
