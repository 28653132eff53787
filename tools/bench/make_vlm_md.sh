#!/usr/bin/env bash
# The VLM section of docs/benchmarks.md (between the vlm:begin / vlm:end markers): the
# SmolVLM-256M-shaped random-weight package (tools/fixtures/make_vlm_fixture.py --shape smolvlm-256m,
# made into /tmp/smolvlm256/pkg when missing, ~5 minutes, 1 GB) at 1 and 2 threads: vision
# encoder ms, time to first token, prefill and decode tokens/s for edgemm fp32, edgemm INT4
# weight-only (edgemm quantize --scheme int4-weight: MatMulNBits decoder, decoder_model_merged_q4.onnx)
# and ONNX Runtime on the same files (tools/reference/ort_vlm_bench.js). Runs are interleaved
# (per iteration, per thread count: edgemm fp32, ORT fp32, edgemm int4, ORT int4; one process per
# run) and the table shows medians. Decode is memory-bound: the decoder's initializer bytes (read
# once per decode token), the bandwidth they imply at the median decode step time, and the
# machine's read bandwidth (build/bin/edgemm_read_bandwidth, before and after the runs) with the
# fastest decode step it allows (weight bytes / bandwidth).
# Usage: tools/bench/make_vlm_md.sh [--quick] [--package DIR]
#   --quick: 1 iteration, 8 new tokens, the image resized to 2048x512 (5 frames, not 17): a smoke
#            run; prints the section and leaves docs/benchmarks.md alone.
#   EDGEMM=path overrides build/bin/edgemm. Run on a quiet machine (the full run: ~1 hour).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
usage() { sed -n 's/^# Usage: //p' "$0"; }
quick=0
src=/tmp/smolvlm256/pkg
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --package) src="$2"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
iters=5 new=32
[ "$quick" = 1 ] && iters=1 new=8
edgemm="${EDGEMM:-build/bin/edgemm}"
out="$root/build/vlm_bench"
pkg="$out/smolvlm256"
mkdir -p "$out/runs"
rm -f "$out"/runs/*.json

if [ ! -f "$src/onnx/decoder_model_merged.onnx" ]; then
  echo "[vlm] exporting the SmolVLM-256M-shaped package into $src (~5 minutes)" >&2
  /usr/bin/python3 tools/fixtures/make_vlm_fixture.py --shape smolvlm-256m --out "$src" >/dev/null
fi
src="$(cd "$src" && pwd)"

# The bench package: links to the export's files, plus
# - tokenizer.json with filler tokens <fill_N> up to config.json's vocab_size: the export reuses the
#   512-id tiny tokenizer, and random weights pick ids beyond it, which edgemm's decode refuses;
# - onnx/decoder_model_merged_q4.onnx (transformers.js' file name for dtype q4).
mkdir -p "$pkg/onnx"
for f in "$src"/*; do
  case "$(basename "$f")" in onnx | tokenizer.json) ;; *) ln -sfn "$f" "$pkg/$(basename "$f")" ;; esac
done
for f in "$src"/onnx/*.onnx; do ln -sfn "$f" "$pkg/onnx/$(basename "$f")"; done
/usr/bin/python3 - "$src" "$pkg" <<'PY'
import json, sys
src, pkg = sys.argv[1], sys.argv[2]
vocab_size = json.load(open(f'{src}/config.json'))['text_config']['vocab_size']
t = json.load(open(f'{src}/tokenizer.json'))
used = set(t['model']['vocab'].values()) | {a['id'] for a in t.get('added_tokens', [])}
for i in range(max(used) + 1, vocab_size):
    t['model']['vocab'][f'<fill_{i}>'] = i
json.dump(t, open(f'{pkg}/tokenizer.json', 'w'), ensure_ascii=False)
PY
q4="$pkg/onnx/decoder_model_merged_q4.onnx"
quantize_cmd=("$edgemm" quantize "$src/onnx/decoder_model_merged.onnx" -o "$q4" --scheme int4-weight --accuracy-level 0 --json)
if [ ! -f "$q4" ] || [ "$q4" -ot "$src/onnx/decoder_model_merged.onnx" ]; then
  echo "[vlm] ${quantize_cmd[*]}" >&2
  "${quantize_cmd[@]}" >"$out/quantize.json"
fi

image="$src/reference/images/p0_chelsea.png"
if [ "$quick" = 1 ]; then
  /usr/bin/python3 -c "from PIL import Image; Image.open('$image').convert('RGB').resize((2048, 512)).save('$out/quick.png')"
  image="$out/quick.png"
fi
question="What is in this image?"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
bandwidth="${edgemm%/edgemm}/edgemm_read_bandwidth"
[ -x "$bandwidth" ] || { echo "[vlm] $bandwidth is missing: build it (scripts/build.sh)" >&2; exit 1; }
"$bandwidth" 2 >"$out/bandwidth_before.json"

for ((it = 1; it <= iters; it++)); do
  for t in 1 2; do
    for dtype in fp32 q4; do
      decoder=decoder_model_merged.onnx
      [ "$dtype" = q4 ] && decoder=decoder_model_merged_q4.onnx
      echo "[vlm] iteration $it/$iters, $t thread(s), $dtype: edgemm, ONNX Runtime" >&2
      "$edgemm" vqa --model "$pkg" "$image" "$question" --decoder "$decoder" --threads "$t" \
        --max-new-tokens "$new" --json >"$out/runs/edgemm_${dtype}_t${t}_$it.json"
      node tools/reference/ort_vlm_bench.js "$pkg" "$image" "$question" --decoder "$decoder" --threads "$t" \
        --max-new-tokens "$new" >"$out/runs/ort_${dtype}_t${t}_$it.json"
    done
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
"$bandwidth" 2 >"$out/bandwidth_after.json"

/usr/bin/python3 - "$out" "$pkg" "$iters" "$new" >"$out/table.md" <<'PY'
import glob, json, os, statistics, sys
import onnx
out, pkg, iters, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def weight_bytes(path):  # bytes of the decoder's initializers (outer graph and subgraphs)
    m = onnx.load(path)
    total = 0
    def visit(g):
        nonlocal total
        for t in g.initializer:
            total += len(t.raw_data) if t.raw_data else onnx.numpy_helper.to_array(t).nbytes
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    visit(a.g)
    visit(m.graph)
    return total

wbytes = {'fp32': weight_bytes(f'{pkg}/onnx/decoder_model_merged.onnx'),
          'q4': weight_bytes(f'{pkg}/onnx/decoder_model_merged_q4.onnx')}

def runs(rt, dtype, t):
    rows = []
    for f in sorted(glob.glob(f'{out}/runs/{rt}_{dtype}_t{t}_*.json')):
        d = json.load(open(f))
        if rt == 'edgemm':
            m = d['timings']
            rows.append(dict(vision=m['vision_encoder_ms'], ttft=m['time_to_first_token_ms'] - m['preprocess_ms'],
                             prefill=m['prefill_tokens_per_s'], decode=m['decode_tokens_per_s'],
                             prompt=m['prompt_tokens'], new=m['new_tokens'], ids=d['ids'], kv=d['kv_cache']))
        else:
            m = d['median']
            rows.append(dict(vision=m['vision_encoder_ms'], ttft=m['time_to_first_token_ms'],
                             prefill=m['prefill_tokens_per_s'], decode=m['decode_tokens_per_s'],
                             prompt=m['prompt_tokens'], new=m['new_tokens'], ids=d['ids'], kv='Concat (as published)'))
    return rows

name = {('edgemm', 'fp32'): 'edgemm fp32', ('edgemm', 'q4'): 'edgemm INT4 (MatMulNBits)',
        ('ort', 'fp32'): 'ONNX Runtime fp32', ('ort', 'q4'): 'ONNX Runtime INT4 (MatMulNBits)'}
med = lambda rows, k: statistics.median(r[k] for r in rows)
summary = {}
print('| threads | runtime, decoder | vision encoder ms | TTFT ms | prefill tok/s | decode tok/s | decode ms/token '
      '| decoder weight MB read per token | achieved GB/s | runs |')
print('|---|---|---|---|---|---|---|---|---|---|')
for t in (1, 2):
    for dtype in ('fp32', 'q4'):
        for rt in ('edgemm', 'ort'):
            rows = runs(rt, dtype, t)
            if not rows:
                continue
            dec = med(rows, 'decode')
            step_ms = 1000 / dec if dec else float('nan')
            summary[(rt, dtype, t)] = dict(decode=dec, rows=rows)
            print(f'| {t} | {name[(rt, dtype)]} | {med(rows, "vision"):.0f} | {med(rows, "ttft"):.0f} | '
                  f'{med(rows, "prefill"):.1f} | {dec:.2f} | {step_ms:.1f} | {wbytes[dtype] / 1e6:.1f} | '
                  f'{wbytes[dtype] / 1e9 / (step_ms / 1000):.2f} | {len(rows)} |')
print()
any_rows = next(iter(summary.values()))['rows'][0]
print(f'Prompt: {any_rows["prompt"]} tokens; {new} new tokens (greedy); edgemm KV cache: {any_rows["kv"]}; '
      f'ONNX Runtime feeds the presents back (the graph\'s Concat copies the cache every step).')
print()
print('| threads | edgemm fp32 / ONNX Runtime fp32, decode (target ≥ 1.3) | edgemm INT4 / edgemm fp32, decode (target ≥ 2) '
      '| edgemm INT4 / ONNX Runtime INT4, decode | greedy ids equal, edgemm vs ORT (fp32, INT4) |')
print('|---|---|---|---|---|')
ratio = lambda a, b: f'{summary[a]["decode"] / summary[b]["decode"]:.2f}×' if a in summary and b in summary else 'n/a'
for t in (1, 2):
    same = []
    for dtype in ('fp32', 'q4'):
        e, o = summary.get(('edgemm', dtype, t)), summary.get(('ort', dtype, t))
        same.append('n/a' if not e or not o else
                    'yes' if e['rows'][-1]['ids'] == o['rows'][-1]['ids'][:len(e['rows'][-1]['ids'])] else 'no')
    print(f'| {t} | {ratio(("edgemm", "fp32", t), ("ort", "fp32", t))} | {ratio(("edgemm", "q4", t), ("edgemm", "fp32", t))} | '
          f'{ratio(("edgemm", "q4", t), ("ort", "q4", t))} | {", ".join(same)} |')
print()
bw = [json.load(open(f'{out}/bandwidth_{when}.json')) for when in ('before', 'after')]
print('The ceiling: memory read bandwidth (`build/bin/edgemm_read_bandwidth 2`: each thread sums its slice of a 1 GiB '
      'buffer, best of 7 rounds), measured before and after the runs, and the fastest fp32 decode step it allows '
      '(decoder weight bytes / bandwidth; KV cache and activations not counted):')
print()
print('| threads | read GB/s (before, after) | fp32 decode floor ms (best bandwidth) | ORT fp32 decode ms | '
      'largest possible edgemm fp32 / ORT fp32 | edgemm fp32 decode ms | edgemm fp32 step / floor |')
print('|---|---|---|---|---|---|---|')
for i, t in enumerate((1, 2)):
    rates = [b['gb_per_s'][i] for b in bw]
    floor_ms = wbytes['fp32'] / 1e9 / max(rates) * 1000
    step = lambda key: 1000 / summary[key]['decode'] if key in summary and summary[key]['decode'] else float('nan')
    ort_ms, ours_ms = step(('ort', 'fp32', t)), step(('edgemm', 'fp32', t))
    print(f'| {t} | {rates[0]:.1f}, {rates[1]:.1f} | {floor_ms:.1f} | {ort_ms:.1f} | {ort_ms / floor_ms:.2f}× | '
          f'{ours_ms:.1f} | {ours_ms / floor_ms:.2f} |')
print()
print(f'Decoder weights (initializer bytes, all read once per decode token): fp32 {wbytes["fp32"]:,} B, '
      f'INT4 {wbytes["q4"]:,} B ({wbytes["q4"] / wbytes["fp32"]:.3f} of fp32). '
      'Achieved GB/s = those bytes / the median decode step time (KV cache and activations not counted).')
PY

section="$out/section.md"
frames=$(/usr/bin/python3 -c "import json; print(json.load(open('$out/runs/ort_fp32_t1_1.json'))['frames'])")
{
  echo "<!-- vlm:begin (tools/bench/make_vlm_md.sh) -->"
  echo "## SmolVLM-256M-shaped VLM (random weights): edgemm fp32, edgemm INT4 and ONNX Runtime"
  echo
  echo "Generated by \`tools/bench/make_vlm_md.sh$([ "$quick" = 1 ] && echo ' --quick')\` on $(date -u +%Y-%m-%d)," \
    "load average $load_before before, $load_after after, OMP_WAIT_POLICY ${OMP_WAIT_POLICY:-unset}. Package: \`tools/fixtures/make_vlm_fixture.py --shape smolvlm-256m\`"
  echo "(SigLIP-B/16 at 512, 12 layers; SmolLM2-135M decoder, 30 layers, hidden 576, vocab 49280); image"
  echo "\`$(basename "$image")\`, $frames frames. INT4 decoder: \`${quantize_cmd[*]}\`."
  echo "Medians of $iters run(s) per row, runs interleaved (edgemm fp32, ORT fp32, edgemm INT4, ORT INT4 per thread count):"
  echo
  echo "- edgemm: \`edgemm vqa --model PKG IMAGE \"$question\" --decoder DECODER --threads T --max-new-tokens $new --json\`;"
  echo "  TTFT = time_to_first_token_ms − preprocess_ms (image decoding and resizing not counted)."
  echo "- ONNX Runtime: \`node tools/reference/ort_vlm_bench.js PKG IMAGE \"$question\" --decoder DECODER --threads T --max-new-tokens $new\`"
  echo "  (inputs from transformers.js' processor, not timed; TTFT = vision encoder + prefill)."
  echo
  cat "$out/table.md"
  echo "<!-- vlm:end -->"
} >"$section"
if [ "$quick" = 1 ]; then
  cat "$section"
  echo "[vlm] --quick: docs/benchmarks.md left alone (section in $section)" >&2
  exit 0
fi
doc=docs/benchmarks.md
/usr/bin/python3 tools/bench/replace_doc_section.py vlm "$doc" "$section"
echo "updated the VLM section of $doc" >&2
