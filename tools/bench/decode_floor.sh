#!/usr/bin/env bash
# Decode against the read-bandwidth floor (issue 31's item 4): `edgemm chat` on a VLM package with
# a fixed ~1100-token text prompt (no image, so no vision encoder), 64 new tokens on the bound KV
# cache, for each decoder file present (fp32 decoder_model_merged.onnx; INT4 _q4.onnx, A float32;
# INT4 _q4a4.onnx, A int8), at 1 and 2 threads, RUNS runs each interleaved; the median ms/token
# against the floor: (decoder file bytes + the KV cache bytes a step reads at the mean position) /
# the best read bandwidth of build/bin/edgemm_read_bandwidth before and after the runs.
# Usage: tools/bench/decode_floor.sh [PACKAGE] [RUNS]
#   PACKAGE: default build/vlm_bench/smolvlm256 (tools/bench/make_vlm_md.sh makes it); RUNS: 3.
#   EDGEMM=path overrides build/bin/edgemm (edgemm_read_bandwidth is taken from its folder). Run on a
#   quiet machine (a run: ~15 s). Exit codes: 0 done, 1 a run failed (its error is printed), 2 bad
#   arguments (no package, binary or decoder).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
pkg="${1:-$root/build/vlm_bench/smolvlm256}"
runs="${2:-3}"
edgemm="${EDGEMM:-$root/build/bin/edgemm}"
bandwidth="$(dirname "$edgemm")/edgemm_read_bandwidth"
[ -f "$pkg/config.json" ] || { echo "decode_floor.sh: no VLM package at '$pkg' (config.json missing)" >&2; exit 2; }
[ -x "$edgemm" ] || { echo "decode_floor.sh: no edgemm binary at '$edgemm'" >&2; exit 2; }
decoders=()
for d in decoder_model_merged.onnx decoder_model_merged_q4.onnx decoder_model_merged_q4a4.onnx; do
  [ -f "$pkg/onnx/$d" ] && decoders+=("$d")
done
[ ${#decoders[@]} -gt 0 ] || { echo "decode_floor.sh: no decoder_model_merged*.onnx in '$pkg/onnx'" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "
import random
random.seed(1)
words = 'the quick brown fox jumps over lazy dog while small cats sleep under warm sun and birds sing'.split()
print(' '.join(random.choice(words) for _ in range(440)))" >"$work/prompt.txt"
"$bandwidth" 2 512 >"$work/bw_before.json"
for ((i = 0; i < runs; ++i)); do
  for t in 1 2; do
    for d in "${decoders[@]}"; do
      if ! "$edgemm" chat --model "$pkg" --decoder "$d" --threads "$t" --max-new-tokens 64 --json \
        <"$work/prompt.txt" >"$work/chat.out" 2>"$work/chat.err"; then
        echo "decode_floor.sh: edgemm chat failed on $d at $t thread(s):" >&2
        cat "$work/chat.err" >&2
        exit 1
      fi
      head -1 "$work/chat.out" >"$work/run_${d}_${t}_${i}.json"
    done
  done
done
"$bandwidth" 2 512 >"$work/bw_after.json"
/usr/bin/python3 - "$work" "$pkg" "$runs" "${decoders[@]}" <<'PY'
import json, os, statistics, sys
work, pkg, runs, decoders = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
text = json.load(open(os.path.join(pkg, 'config.json')))['text_config']
heads = text['num_attention_heads']
kv_heads = text.get('num_key_value_heads', heads)
head_dim = text.get('head_dim', text['hidden_size'] // heads)
kv_row = text['num_hidden_layers'] * 2 * kv_heads * head_dim * 4  # float32 K and V per position
bw = [json.load(open(os.path.join(work, f'bw_{w}.json')))['gb_per_s'] for w in ('before', 'after')]
best = [max(b[i] for b in bw) for i in range(2)]
print(f'read GB/s before {bw[0]}, after {bw[1]} (1, 2 threads); KV cache {kv_row} B per position')
print('| decoder | threads | prompt tokens | decode ms/token (median of %d) | weights MB | KV MB read (mean step) | floor ms | ms/token / floor |' % runs)
print('|---|---|---|---|---|---|---|---|')
for d in decoders:
    weights = os.path.getsize(os.path.join(pkg, 'onnx', d))
    for t in (1, 2):
        steps, prompt = [], 0
        for i in range(runs):
            j = json.load(open(os.path.join(work, f'run_{d}_{t}_{i}.json')))['timings']
            prompt = j['prompt_tokens']
            steps.append(j['decode_ms'] / max(1, j['new_tokens'] - 1))
        ms = statistics.median(steps)
        kv = (prompt + 32) * kv_row
        floor = (weights + kv) / (best[t - 1] * 1e9) * 1e3
        print(f'| {d} | {t} | {prompt} | {ms:.2f} | {weights / 1e6:.1f} | {kv / 1e6:.1f} | {floor:.2f} | {ms / floor:.2f}x |')
PY
