#!/usr/bin/env bash
# Produces the PP-OCRv4 parity references (inputs + ONNX Runtime 1.30 outputs) for edgemm tests.
set -euo pipefail
usage() {
  cat <<'EOF'
usage: tools/reference/make_parity_refs.sh OUTDIR [MODELS_DIR]

Writes, for each case, OUTDIR/<case>/input_x.npy and OUTDIR/<case>/<output>.npy (ONNX Runtime
1.30 on the CPU, 1 thread, via tools/reference/ort_run.js), and OUTDIR/cases.json:
  [{"name", "model" (file name in MODELS_DIR), "inputs": {"x": "<case>/input_x.npy"},
    "outputs": {"<output name>": {"file": "<case>/<file>.npy", "dtype", "shape"}}}]
Paths in cases.json are relative to OUTDIR. MODELS_DIR defaults to models/ppocrv4 of the repo
(scripts/setup.sh fetches it). Inputs come from the committed demo photo
data/demo/photo_text.jpg (preprocessed by tools/datasets/ppocr_preprocess.py as PP-OCR does)
and from seeded uniform noise in [-2, 2). Deterministic; takes about half a minute.

cases:
  det_photo_640x640  det_photo_960x640  det_noise_640x640      det  1x3xHxW
  rec_noise_48x320   rec_photo_zh       rec_photo_en           rec  1x3x48x320
  cls_noise_48x192   cls_photo_zh                              cls  1x3x48x192
EOF
}
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { usage; exit 0; }
[ $# -ge 1 ] && [ $# -le 2 ] || { usage >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"
models="$(cd "${2:-$root/models/ppocrv4}" 2>/dev/null && pwd)" ||
  { echo "make_parity_refs: no models folder '${2:-$root/models/ppocrv4}' (run scripts/setup.sh)" >&2; exit 1; }
det=ch_PP-OCRv4_det_infer.onnx rec=ch_PP-OCRv4_rec_infer.onnx cls=ch_ppocr_mobile_v2.0_cls_infer.onnx
for m in $det $rec $cls; do
  [ -f "$models/$m" ] || { echo "make_parity_refs: missing $models/$m (run scripts/setup.sh)" >&2; exit 1; }
done
prep="/usr/bin/python3 $root/tools/datasets/ppocr_preprocess.py"
photo="$root/data/demo/photo_text.jpg"
# Text-line boxes from data/demo/photo_text.json, widened by 4 px (as an unclipped det box would be).
box_zh=572,84,834,126   # "浓缩咖啡 · 拿铁", dark on a light panel
box_en=786,353,921,381  # "Since 2009", light text straight on the wood

# case name | model | preprocess arguments (the output file is appended)
cases=(
  "det_photo_640x640|$det|det $photo --size 640x640"
  "det_photo_960x640|$det|det $photo --limit 960"
  "det_noise_640x640|$det|noise --shape 1,3,640,640 --seed 0"
  "rec_noise_48x320|$rec|noise --shape 1,3,48,320 --seed 1"
  "rec_photo_zh|$rec|line $photo --box $box_zh --width 320"
  "rec_photo_en|$rec|line $photo --box $box_en --width 320"
  "cls_noise_48x192|$cls|noise --shape 1,3,48,192 --seed 2"
  "cls_photo_zh|$cls|line $photo --box $box_zh --width 192"
)
mkdir -p "$out"
list="$out/.cases.tsv"
: >"$list"
for c in "${cases[@]}"; do
  IFS='|' read -r name model args <<<"$c"
  mkdir -p "$out/$name"
  # shellcheck disable=SC2086  # args is a word list on purpose
  $prep $args "$out/$name/input_x.npy" >/dev/null
  # The reference executes the graph as written, op by op (no fusions that change rounding);
  # ORT's fully optimized outputs go to ort_all/ for a looser, reported comparison.
  node "$root/tools/reference/ort_run.js" "$models/$model" --input "x=$out/$name/input_x.npy" \
    --output-dir "$out/$name" --threads 1 --opt-level disabled --json >"$out/$name/.ort.json"
  node "$root/tools/reference/ort_run.js" "$models/$model" --input "x=$out/$name/input_x.npy" \
    --output-dir "$out/$name/ort_all" --threads 1 --opt-level all >/dev/null
  printf '%s\t%s\n' "$name" "$model" >>"$list"
done

/usr/bin/python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
cases = []
for line in open(os.path.join(out, '.cases.tsv')):
    name, model = line.rstrip('\n').split('\t')
    ort = json.load(open(os.path.join(out, name, '.ort.json')))
    os.remove(os.path.join(out, name, '.ort.json'))
    cases.append({'name': name, 'model': model, 'inputs': {'x': f'{name}/input_x.npy'},
                  'outputs': {o['name']: {'file': f"{name}/{os.path.basename(o['file'])}",
                                          'file_all': f"{name}/ort_all/{os.path.basename(o['file'])}",
                                          'dtype': o['dtype'], 'shape': o['shape']} for o in ort['outputs']}})
    print(name, model, *(f"{n} {v['dtype']} {v['shape']}" for n, v in cases[-1]['outputs'].items()))
os.remove(os.path.join(out, '.cases.tsv'))
json.dump({'oracle': 'onnxruntime-node 1.30.0, CPU, 1 thread, graphOptimizationLevel disabled (outputs.file) and all (outputs.file_all)',
           'cases': cases}, open(os.path.join(out, 'cases.json'), 'w'), indent=1)
EOF
