#!/usr/bin/env bash
# The CLIP section of docs/benchmarks.md (between the clip:begin / clip:end markers): a
# ViT-B/32-shaped random-weight vision encoder (tools/fixtures/make_clip_fixture.py --shape
# vit-b32, made here into build/clip_vitb32 when missing, ~490 MB) in edgemm (at precision fp32
# and bf16) and ONNX Runtime at 1 and 2 threads, then visual token pruning after layer K:
# latency per keep ratio, the time of
# the layers after K (profile, 1 thread), and the cosine of pruned vs unpruned image embeddings
# of the photos in data/photos (edgemm retrieve indexes).
# Usage: tools/bench/make_clip_md.sh [--quick]   (run on a quiet machine; about 2 minutes here)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
iters=20 blocks=5
[ "${1:-}" = "--quick" ] && iters=3 blocks=1
out="$root/build/clip_bench"
pkg="$root/build/clip_vitb32"
edgemm=build/bin/edgemm
k=3
mkdir -p "$out"
if [ ! -f "$pkg/onnx/vision_model.onnx" ]; then
  echo "[clip] exporting the ViT-B/32-shaped package into $pkg" >&2
  /usr/bin/python3 tools/fixtures/make_clip_fixture.py --shape vit-b32 --out "$pkg" \
    --tokenizer-dir tests/fixtures/tokenizers/clip_bpe >/dev/null
fi
vision="$pkg/onnx/vision_model.onnx"
shape=pixel_values=1,3,224,224
photos=(data/photos/*.png data/photos/*.jpg)

echo "[clip] edgemm vs ONNX Runtime" >&2
"$edgemm" bench "$vision" --shape "$shape" --threads 1,2 --compare ort --iters "$iters" --blocks "$blocks" \
  --markdown "$out/vs_ort.md" >/dev/null
echo "[clip] edgemm --precision bf16 vs ONNX Runtime" >&2
"$edgemm" bench "$vision" --shape "$shape" --threads 1,2 --compare ort --iters "$iters" --blocks "$blocks" \
  --precision bf16 --markdown "$out/vs_ort_bf16.md" >/dev/null
"$edgemm" retrieve --model "$pkg" --index "$out/index_bf16.idx" --threads 2 --precision bf16 "${photos[@]}" \
  >/dev/null 2>&1
for keep in 1.0 0.7 0.5 0.3; do
  model="$vision"
  if [ "$keep" != 1.0 ]; then
    model="$out/pruned_$keep.onnx"
    "$edgemm" prune "$vision" -o "$model" --tokens-after-layer "$k" --keep-ratio "$keep" >/dev/null
  fi
  echo "[clip] keep $keep" >&2
  "$edgemm" bench "$model" --shape "$shape" --threads 1 --iters "$iters" --blocks "$blocks" --json >"$out/bench_$keep.json"
  "$edgemm" profile "$model" --shape "$shape" --threads 1 --iters "$iters" --json >"$out/profile_$keep.json"
  prune=()
  [ "$keep" != 1.0 ] && prune=(--prune-tokens-after-layer "$k" --prune-keep-ratio "$keep")
  "$edgemm" retrieve --model "$pkg" --index "$out/index_$keep.idx" --threads 2 "${prune[@]}" "${photos[@]}" \
    >/dev/null 2>&1
done

/usr/bin/python3 - "$out" "$k" "$iters" "$blocks" "${#photos[@]}" >"$out/doc.md" <<'PY'
import json, re, struct, sys
import numpy as np
out, k, iters, blocks, n_photos = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])

def median_ms(keep):
    d = json.load(open(f'{out}/bench_{keep}.json'))
    return d['points'][0]['runtimes'][0]['latency_ms']['median']

def after_k_ms(keep):  # profile: time of nodes inside encoder layers k+1..
    d = json.load(open(f'{out}/profile_{keep}.json'))
    total = 0.0
    for n in d['nodes']:
        m = re.search(r'layers\.(\d+)/', n['node'])
        if m and int(m.group(1)) > k:
            total += n['median_us']
    return total / 1000

def vectors(keep):  # the float32 rows at the end of an edgemm retrieve index
    raw = open(f'{out}/index_{keep}.idx', 'rb').read()
    header_at = raw.index(b'{')
    header = json.JSONDecoder().raw_decode(raw[header_at:].decode('latin-1'))[0]
    count, dim = header['count'], header['dim']
    return np.frombuffer(raw[len(raw) - 4 * count * dim:], dtype='<f4').reshape(count, dim)

base = vectors('1.0')
print(f'### Visual token pruning after layer {k} (0-based) of 12, rule cls_attention, 1 thread\n')
print(f'Latency: `edgemm bench MODEL --shape pixel_values=1,3,224,224 --threads 1 --iters {iters} --blocks {blocks}`;')
print(f'layers after {k}: sum of the per-node medians of `edgemm profile` for nodes in layers {k + 1}..11;')
print(f'cosine: pruned vs unpruned image embeddings of the {n_photos} photos in data/photos (`edgemm retrieve`).')
print('ONNX Runtime cannot run the pruned files (com.edgemm TokenPrune).\n')
print('| keep ratio | tokens | latency ms | vs keep 1.0 | layers after k, ms | vs keep 1.0 | cosine mean | cosine min |')
print('|---|---|---|---|---|---|---|---|')
lat0, after0 = median_ms('1.0'), after_k_ms('1.0')
for keep in ('1.0', '0.7', '0.5', '0.3'):
    v = vectors(keep)
    cos = (v * base).sum(axis=1)  # rows are L2-normalized
    tokens = 1 + (49 if keep == '1.0' else int(np.ceil(float(keep) * 49 - 1e-6)))
    lat, after = median_ms(keep), after_k_ms(keep)
    print(f'| {keep} | {tokens} | {lat:.1f} | {lat / lat0:.2f} | {after:.1f} | {after / after0:.2f} | '
          f'{cos.mean():.4f} | {cos.min():.4f} |')
cos = (vectors('bf16') * base).sum(axis=1)
print(f'\nAt `--precision bf16` the image embeddings of the {n_photos} photos have cosine {cos.mean():.6f} (mean) and '
      f'{cos.min():.6f} (min) with the fp32 ones (`edgemm retrieve --precision bf16`).')
PY

doc=docs/benchmarks.md
section="$out/section.md"
{
  echo "<!-- clip:begin (tools/bench/make_clip_md.sh) -->"
  echo "## CLIP ViT-B/32-shaped vision encoder (random weights), 1×3×224×224"
  echo
  echo "Generated by \`tools/bench/make_clip_md.sh\` on $(date -u +%Y-%m-%d). The package comes from"
  echo "\`tools/fixtures/make_clip_fixture.py --shape vit-b32\` (12 layers, hidden 768, 12 heads, patch 32)."
  echo
  echo "### edgemm vs ONNX Runtime (\`edgemm bench $vision --shape $shape --threads 1,2 --compare ort --iters $iters --blocks $blocks\`)"
  echo
  grep '^|' "$out/vs_ort.md"
  echo
  echo "### At \`--precision bf16\` (bfloat16 MatMul products, float32 sums; docs/backends.md) vs ONNX Runtime in float32"
  echo
  echo "\`edgemm bench $vision --shape $shape --threads 1,2 --compare ort --iters $iters --blocks $blocks --precision bf16\`:"
  echo "the same file; ONNX Runtime's CPU provider has no bfloat16 mode on x86, so it runs float32."
  echo
  grep '^|' "$out/vs_ort_bf16.md"
  echo
  cat "$out/doc.md"
  echo "<!-- clip:end -->"
} >"$section"
/usr/bin/python3 tools/bench/replace_doc_section.py clip "$doc" "$section"
echo "updated the CLIP section of $doc" >&2
