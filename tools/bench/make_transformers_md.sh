#!/usr/bin/env bash
# The transformers section of docs/benchmarks.md (between the transformers:begin / transformers:end
# markers): edgemm fp32 and ONNX Runtime measured in the same `edgemm bench --compare ort` run on the
# random-weight transformer models of the CLIP and VLM sections: the ViT-B/32 vision encoder (224²),
# the CLIP text encoder (77 tokens), SigLIP-B/16 at 512² (SmolVLM-256M's vision encoder) and one
# decode step of the SmolLM2-135M-shaped decoder (decoder_model_merged.onnx: 1 new token on a KV
# cache of 1024 tokens (past=), every past_key_values input pinned with --shape). Per model and thread count
# (1, 2): the median latency of each runtime, ORT ms / edgemm ms, the peak RSS added and the load
# time of each, against the issue 31 targets (≥ 1.3× ORT's speed on the encoders; peak RSS added
# and load ≤ ORT's on every row), with whether each is met.
# Usage: tools/bench/make_transformers_md.sh [--quick] [--only vit,text,siglip,decoder] [--help]
#   --quick: 1 timed run in 1 block, no warm-up: a smoke run; prints the section and leaves
#            docs/benchmarks.md alone. --only: just these rows; also leaves docs/benchmarks.md alone.
#   EDGEMM=path overrides build/bin/edgemm. Makes build/clip_vitb32 (make_clip_fixture.py, ~1 minute)
#   and /tmp/smolvlm256/pkg (make_vlm_fixture.py, ~5 minutes) when missing. Run on a quiet machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
usage() { sed -n 's/^# Usage: //p' "$0"; }
args="$*" quick=0 only=vit,text,siglip,decoder write=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 write=0 ;;
    --only) only="$2" write=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
iters=20 blocks=5 warm=()
[ "$quick" = 1 ] && iters=1 blocks=1 warm=(--warmup 0)
past=1024
edgemm="${EDGEMM:-build/bin/edgemm}"
out="$root/build/transformers_bench"
clip=build/clip_vitb32
vlm=/tmp/smolvlm256/pkg
mkdir -p "$out"
rm -f "$out"/*.json "$out/commands.tsv"

if [ ! -f "$clip/onnx/vision_model.onnx" ] || [ ! -f "$clip/onnx/text_model.onnx" ]; then
  echo "[transformers] exporting the ViT-B/32-shaped CLIP package into $clip" >&2
  /usr/bin/python3 tools/fixtures/make_clip_fixture.py --shape vit-b32 --out "$clip" \
    --tokenizer-dir tests/fixtures/tokenizers/clip_bpe >/dev/null
fi
if [ ! -f "$vlm/onnx/decoder_model_merged.onnx" ]; then
  echo "[transformers] exporting the SmolVLM-256M-shaped package into $vlm (~5 minutes)" >&2
  /usr/bin/python3 tools/fixtures/make_vlm_fixture.py --shape smolvlm-256m --out "$vlm" >/dev/null
fi

# pin MODEL SYMBOL=VALUE...: a --shape for every input of MODEL (edgemm inspect --json), its symbolic
# axes set from the arguments; a bool input of shape [1] (Optimum's use_cache_branch) gets --input
# with a .npy holding true (edgemm bench fills bool inputs with 1 = true anyway; this makes it explicit).
pin() {
  "$edgemm" inspect "$1" --json >"$out/inspect_$(basename "$1" .onnx).json"
  /usr/bin/python3 - "$out/inspect_$(basename "$1" .onnx).json" "$out" "${@:2}" <<'PY'
import json, sys
import numpy as np
values = dict(a.split('=') for a in sys.argv[3:])
for i in json.load(open(sys.argv[1]))['inputs']:
    if i['dtype'] == 'bool' and i['shape'] == [1]:
        np.save(f'{sys.argv[2]}/{i["name"]}_true.npy', np.array([True]))
        print(f'--input\n{i["name"]}={sys.argv[2]}/{i["name"]}_true.npy')
    else:
        print(f'--shape\n{i["name"]}=' + ','.join(str(values.get(str(d), d)) for d in i['shape']))
PY
}
text_shape=() decoder_shape=()
[[ ",$only," == *,text,* ]] && mapfile -t text_shape < <(pin "$clip/onnx/text_model.onnx" batch_size=1 sequence_length=77)
[[ ",$only," == *,decoder,* ]] && mapfile -t decoder_shape < <(pin "$vlm/onnx/decoder_model_merged.onnx" batch_size=1 sequence_length=1 \
  past_sequence_length="$past" total_sequence_length="$((past + 1))")

run() {  # run KEY MODEL ARGS...: one edgemm bench --compare ort at 1 and 2 threads, its JSON and command kept
  local key="$1" model="$2"
  shift 2
  [[ ",$only," == *",$key,"* ]] || return 0
  local cmd=("$edgemm" bench "$model" "$@" --threads 1,2 --compare ort --iters "$iters" --blocks "$blocks"
    "${warm[@]}" --json)
  echo "[transformers] $key: edgemm bench $model (--threads 1,2 --compare ort --iters $iters --blocks $blocks)" >&2
  "${cmd[@]}" >"$out/$key.json"
  printf '%s\t%s\n' "$key" "${cmd[*]}" >>"$out/commands.tsv"
}

start=$(date +%s)
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
run vit "$clip/onnx/vision_model.onnx" --shape pixel_values=1,3,224,224
run text "$clip/onnx/text_model.onnx" "${text_shape[@]}"
run siglip "$vlm/onnx/vision_encoder.onnx" --shape pixel_values=1,1,3,512,512 --shape pixel_attention_mask=1,1,512,512
run decoder "$vlm/onnx/decoder_model_merged.onnx" "${decoder_shape[@]}"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
took=$(($(date +%s) - start))

/usr/bin/python3 - "$out" "$past" >"$out/table.md" <<'PY'
import json, os, sys
out, past = sys.argv[1], sys.argv[2]
rows = [('vit', 'ViT-B/32 vision encoder (CLIP), 1×3×224×224', 1.3),
        ('text', 'CLIP text encoder, 1×77 tokens', 1.3),
        ('siglip', 'SigLIP-B/16 vision encoder (SmolVLM-256M), 1×1×3×512×512', 1.3),
        ('decoder', f'SmolLM2-135M-shaped decoder, 1 decode step, KV cache {past}', None)]
mib = lambda b: b / 1048576
yes = lambda ok: 'yes' if ok else '**no**'
print('| model, inputs | threads | edgemm ms | ORT ms | ORT ms / edgemm ms | target | met '
      '| edgemm peak RSS added MiB | ORT peak RSS added MiB | ≤ ORT | edgemm load ms | ORT load ms | ≤ ORT |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
checks, missed, versions = 0, [], set()
for key, label, target in rows:
    if not os.path.exists(f'{out}/{key}.json'):
        continue
    report = json.load(open(f'{out}/{key}.json'))
    for point in report['points']:
        rt = {r['name']: r for r in point['runtimes']}
        e, o, t = rt.get('edgemm'), rt.get('onnxruntime'), point['threads']
        versions |= {f'{r["name"]} {r["version"]}' for r in point['runtimes']}
        bad = [f'{n} failed ({r["failed_stage"]}: {r["error"][:80]})' for n, r in rt.items() if 'error' in r]
        if bad:
            print(f'| {label} | {t} | ' + '; '.join(bad) + ' |' + ' |' * 10)
            missed.append(f'{key} at {t} thread(s): failed')
            continue
        em, om = e['latency_ms']['median'], o['latency_ms']['median']
        er, orr = e['memory']['peak_added_bytes'], o['memory']['peak_added_bytes']
        speed_ok, rss_ok, load_ok = target is None or om / em >= target, er <= orr, e['load_ms'] <= o['load_ms']
        for ok, what in ((speed_ok, 'speed'), (rss_ok, 'peak RSS'), (load_ok, 'load')):
            checks += 1
            if not ok:
                missed.append(f'{key} at {t} thread(s): {what}')
        print(f'| {label} | {t} | {em:.1f} | {om:.1f} | {om / em:.2f}× | '
              + (f'≥ {target}× | {yes(speed_ok)}' if target else '— | —')
              + f' | {mib(er):.0f} | {mib(orr):.0f} | {yes(rss_ok)} | {e["load_ms"]:.0f} | {o["load_ms"]:.0f} | {yes(load_ok)} |')
print()
print(f'Targets (issue 31): met {checks - len(missed)} of {checks}' +
      ('.' if not missed else '; not met: ' + ', '.join(missed) + '.') + f' Versions: {", ".join(sorted(versions))}.')
PY

section="$out/section.md"
{
  echo "<!-- transformers:begin (tools/bench/make_transformers_md.sh) -->"
  echo "## Transformer models (random weights): edgemm fp32 vs ONNX Runtime, latency, memory and load"
  echo
  echo "Generated by \`tools/bench/make_transformers_md.sh${args:+ $args}\` on $(date -u +%Y-%m-%d), CPU"
  echo "$(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) logical CPUs), load average $load_before before, $load_after"
  echo "after (the runs took $took s), OMP_WAIT_POLICY ${OMP_WAIT_POLICY:-unset}. Each model is one"
  echo "\`edgemm bench --compare ort\` run (commands below): both runtimes load the same file and get the same"
  echo "seeded inputs; medians of $iters timed run(s) per runtime in $blocks alternating block(s). Each thread count"
  echo "loads the model anew, so peak RSS added (the host's high-water mark over load, cold run and warm-up"
  echo "minus its RSS before the load; node's own baseline is not counted against ONNX Runtime) and load"
  echo "time (edgemm: Inferencer::create, import + passes + weight packing; ONNX Runtime: InferenceSession.create"
  echo "in node) are per row. edgemm's two-thread runs slow down far more than ONNX Runtime's when another"
  echo "process keeps a core busy (see the top of this page): mind the load average. Packages:"
  echo "\`tools/fixtures/make_clip_fixture.py --shape vit-b32\` (text and vision encoders) and"
  echo "\`tools/fixtures/make_vlm_fixture.py --shape smolvlm-256m\` (vision encoder, decoder). The decode step:"
  echo "inputs_embeds 1×1×576, position_ids 1×1, attention_mask 1×$((past + 1)), past_key_values.N.key/value"
  echo "1×3×$past×64 for N = 0…29 (synthetic values: the step's cost does not depend on them). This is the"
  echo "exported graph run as it is, past and new keys concatenated and transposed on every step; \`edgemm vqa\`"
  echo "decodes on a bound KV cache instead (passes::bind_kv_cache): its decode against the read-bandwidth floor"
  echo "is in the VLM section."
  echo
  cat "$out/table.md"
  echo
  echo "Commands (each row's numbers are from its model's JSON report, \`points[].runtimes[]\`:"
  echo "\`latency_ms.median\`, \`memory.peak_added_bytes\`, \`load_ms\`):"
  echo
  echo '```sh'
  cut -f2 "$out/commands.tsv"
  echo '```'
  echo "<!-- transformers:end -->"
} >"$section"
if [ "$write" = 0 ]; then
  cat "$section"
  echo "[transformers] --quick or --only: docs/benchmarks.md left alone (section in $section)" >&2
  exit 0
fi
/usr/bin/python3 tools/bench/replace_doc_section.py transformers docs/benchmarks.md "$section"
echo "updated the transformers section of docs/benchmarks.md" >&2
