#!/usr/bin/env bash
# Instructions executed per inference on the emulated Cortex-A76 (qemu-aarch64 -cpu cortex-a76):
# the arm64 edgemm against ONNX Runtime 1.30's arm64 build (onnxruntime-node's linux/arm64 binaries in
# Debian's arm64 node), on the same model files and the same seeded inputs, at 1 thread (docs/aarch64.md).
#
# Wall time under emulation is not A76 time, so the measure is guest instructions, counted per ELF
# file by tools/bench/qemu/insn_count.c (a TCG plugin built here against qemu-plugin.h from the
# installed qemu's Debian source package, fetched with a private apt configuration and never
# committed). Each engine runs a model 1 and 1 + K times in one process; the difference over K is one
# inference; each count is the least of --reps processes. An engine's own code: for edgemm the
# edgemm program and its kernel libraries (oneDNN, XNNPACK, pthreadpool, libgomp); for ONNX Runtime
# libonnxruntime.so. The C and C++ runtime
# libraries both call are reported beside them, not counted.
#
# Rows: PP-OCRv4 det (1x3x640x640), rec (1x3x48x320), cls (1x3x48x192) in fp32 and int8 (det and rec:
# scripts/quantize_ppocr.sh's recipe; cls: edgemm quantize --stage ocr-cls; the same QDQ files for
# both engines), the CLIP vision encoder fixture (tests/fixtures/clip_tiny) in fp32, and with
# --rows nbits one int4 MatMulNBits of a decode step (int8 A, accuracy_level 4).
# Writes build-aarch64/bench/instructions.json (rows not measured in this run keep their last counts): a list of {"model", "precision", "threads",
# "edgemm_instructions_per_run", "ort_instructions_per_run", "ratio", "edgemm_runtime_per_run",
# "ort_runtime_per_run"}, and its table into docs/benchmarks.md (between <!-- arm:begin --> and
# <!-- arm:end -->, which tools/bench/make_benchmarks_md.sh keeps).
#
# Needs: scripts/test_aarch64.sh (the arm64 build and sysroot), the x86 build (quantizes), node_modules.
# Usage: scripts/bench_aarch64.sh [--rows det,rec,cls,clip,nbits] [--k K (4)] [--reps R (2)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGEMM_AARCH64_BUILD:-$root/build-aarch64}"
out="$build/bench"
sysroot="$build/sysroot"
cache="${EDGEMM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgemm}/qemu-plugin"
rows="det,rec,cls,clip,nbits"
k=4
reps=2
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows="$2"; shift 2 ;;
    --k) k="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    *) echo "bench_aarch64.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
py=/usr/bin/python3
models="$root/models/ppocrv4"
[ -x "$build/bin/edgemm" ] || { echo "bench_aarch64.sh: $build/bin/edgemm missing: run scripts/test_aarch64.sh" >&2; exit 2; }
[ -x "$sysroot/usr/bin/node" ] || { echo "bench_aarch64.sh: no arm64 node in $sysroot: run scripts/aarch64_sysroot.sh" >&2; exit 2; }
mkdir -p "$out" "$cache"

# --- the counting plugin ---------------------------------------------------------------------
qemu_version=$(dpkg-query -W -f='${source:Version}' qemu-user)  # the source package's (no binNMU suffix)
header_dir="$cache/qemu-$qemu_version"
if [ ! -f "$header_dir/qemu-plugin.h" ]; then
  echo "[bench-aarch64] fetching qemu $qemu_version's source for qemu-plugin.h" >&2
  apt_dir="$cache/apt"
  rm -rf "$header_dir.tmp"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$header_dir.tmp"
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/*.sources >"$apt_dir/sources.sources"
  apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.sources" -o Dir::Etc::SourceParts=/dev/null
            -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir" -o APT::Sandbox::User=root -qq)
  apt-get "${apt_opts[@]}" update
  (cd "$header_dir.tmp" && apt-get "${apt_opts[@]}" source --download-only "qemu=$qemu_version")
  tar -xJf "$header_dir.tmp"/qemu_*.orig.tar.xz -C "$header_dir.tmp" --wildcards '*/include/qemu/qemu-plugin.h'
  mkdir -p "$header_dir"
  mv "$header_dir.tmp"/qemu-*/include/qemu/qemu-plugin.h "$header_dir/qemu-plugin.h"
  rm -rf "$header_dir.tmp"
fi
plugin="$out/libinsn_count.so"
cc -shared -fPIC -O2 -Wall -Wextra -Wno-unused-parameter -I "$header_dir" "$root/tools/bench/qemu/insn_count.c" -o "$plugin"
qemu=(qemu-aarch64 -cpu cortex-a76 -L "$sysroot")

# --- models and inputs -----------------------------------------------------------------------
int8="$out/ppocrv4_int8"
if [[ ",$rows," == *,det,* || ",$rows," == *,rec,* || ",$rows," == *,cls,* ]] && [ ! -f "$int8/cls_int8.onnx" ]; then
  echo "[bench-aarch64] int8 models (scripts/quantize_ppocr.sh --samples 16, x86 edgemm)" >&2
  bash "$root/scripts/quantize_ppocr.sh" "$int8" --samples 16 --no-speed-check >"$out/quantize.log" 2>&1
  "$root/build/bin/edgemm" quantize "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
    -o "$int8/cls_int8.onnx" --calib "$root/build/calib_ocr_seed2_16/manifest.json" \
    --stage ocr-cls --ocr-models "$models" --samples 16 --no-speed-check >>"$out/quantize.log" 2>&1
fi
# row: name precision model input-name shape
table=()
for r in ${rows//,/ }; do
  case "$r" in
    det) table+=("det fp32 $models/ch_PP-OCRv4_det_infer.onnx x 1,3,640,640"
                 "det int8 $int8/ch_PP-OCRv4_det_infer.onnx x 1,3,640,640") ;;
    rec) table+=("rec fp32 $models/ch_PP-OCRv4_rec_infer.onnx x 1,3,48,320"
                 "rec int8 $int8/ch_PP-OCRv4_rec_infer.onnx x 1,3,48,320") ;;
    cls) table+=("cls fp32 $models/ch_ppocr_mobile_v2.0_cls_infer.onnx x 1,3,48,192"
                 "cls int8 $int8/cls_int8.onnx x 1,3,48,192") ;;
    clip) table+=("clip_vision fp32 $root/tests/fixtures/clip_tiny/onnx/vision_model.onnx pixel_values 1,3,64,64") ;;
    nbits)
      # A decode step's int4 MatMulNBits, [1, 1024] x [1024, 1024], block 32, accuracy_level 4 (A
      # quantized to int8 per block in both engines): seeded codes and scales, no zero points.
      nbits_model="$out/matmul_nbits_1024.onnx"
      $py - "$nbits_model" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
k = n = 1024
block = 32
rng = np.random.default_rng(7)
codes = numpy_helper.from_array(rng.integers(0, 256, (n, k // block, block // 2), dtype=np.uint8), "B")
scales = numpy_helper.from_array((rng.random(n * k // block) * 0.01).astype(np.float32), "scales")
node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], domain="com.microsoft", K=k, N=n, bits=4,
                        block_size=block, accuracy_level=4)
graph = helper.make_graph([node], "matmul_nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, k])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, n])], [codes, scales])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
PY
      table+=("matmul_nbits int4_a8 $nbits_model A 1,1024") ;;
    *) echo "bench_aarch64.sh: unknown row $r" >&2; exit 2 ;;
  esac
done

# count ENGINE MODEL INPUT NPY RUNS TSV: one process running MODEL RUNS times under the plugin.
count() {
  local engine="$1" model="$2" input="$3" npy="$4" runs="$5" tsv="$6"
  if [ "$engine" = edgemm ]; then
    "${qemu[@]}" -plugin "$plugin,out=$tsv" "$build/bin/edgemm" bench "$model" --input "$input=$npy" --threads 1 \
      --warmup 0 --iters "$runs" --blocks 1 >/dev/null 2>"$tsv.log"
  else
    "${qemu[@]}" -plugin "$plugin,out=$tsv" "$sysroot/usr/bin/node" "$root/tools/reference/ort_run.js" "$model" \
      --input "$input=$npy" --threads 1 --repeat "$runs" >/dev/null 2>"$tsv.log"
  fi
}

results="$out/instructions.jsonl"
: >"$results"
for row in "${table[@]}"; do
  read -r name precision model input shape <<<"$row"
  npy="$out/${name}_input.npy"
  $py -c 'import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(1).uniform(-1, 1, [int(d) for d in sys.argv[2].split(",")]).astype(np.float32))' "$npy" "$shape"
  for engine in edgemm ort; do
    for rep in $(seq 1 "$reps"); do
      echo "[bench-aarch64] $name $precision $engine: runs 1 and $((1 + k)) ($rep of $reps)" >&2
      count "$engine" "$model" "$input" "$npy" 1 "$out/${name}_${precision}_${engine}_1_$rep.tsv"
      count "$engine" "$model" "$input" "$npy" $((1 + k)) "$out/${name}_${precision}_${engine}_n_$rep.tsv"
    done
  done
  $py - "$out" "$name" "$precision" "$k" "$model" "$reps" >>"$results" <<'PY'
import json, os, re, sys
out, name, precision, k, model, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
OWN = {"edgemm": re.compile(r"/bin/edgemm$|libdnnl\.so|libXNNPACK\.so|libpthreadpool\.so|libgomp\.so"),
       "ort": re.compile(r"libonnxruntime\.so")}
RUNTIME = re.compile(r"/lib(c|m|stdc\+\+|gcc_s)\.so")
def load(path):
    counts = {}
    for line in open(path):
        n, f = line.rstrip("\n").split("\t", 1)
        counts[f] = int(n)
    return counts
row = {"model": name, "precision": precision, "threads": 1, "file": os.path.relpath(model)}
# Each process count is the least of `reps` processes (ONNX Runtime's count of one process was seen
# a third above its others' once, not reproducibly); per run: (N + k runs − 1 run) / k.
def least(runs, rx):
    return min(sum(n for f, n in load(f"{out}/{name}_{precision}_{engine}_{runs}_{r}.tsv").items() if rx.search(f))
               for r in range(1, reps + 1))
for engine in ("edgemm", "ort"):
    per = lambda rx: (least("n", rx) - least("1", rx)) / k
    row[f"{engine}_instructions_per_run"] = round(per(OWN[engine]))
    row[f"{engine}_runtime_per_run"] = round(per(RUNTIME))
row["ratio"] = round(row["edgemm_instructions_per_run"] / row["ort_instructions_per_run"], 3)
print(json.dumps(row))
PY
  tail -1 "$results" >&2
done
# Rows measured now replace their earlier counts; rows not measured now keep theirs.
$py - "$results" "$out/instructions.json" <<'PY'
import json, os, sys
new = [json.loads(l) for l in open(sys.argv[1])]
old = json.load(open(sys.argv[2])) if os.path.exists(sys.argv[2]) else []
key = lambda r: (r["model"], r["precision"], r["threads"])
measured = {key(r) for r in new}
order = ["det", "rec", "cls", "clip_vision", "matmul_nbits"]
rows = sorted([r for r in old if key(r) not in measured] + new,
              key=lambda r: (order.index(r["model"]) if r["model"] in order else len(order), r["precision"]))
json.dump(rows, open(sys.argv[2] + ".tmp", "w"), indent=1)
PY
mv "$out/instructions.json.tmp" "$out/instructions.json"
echo "[bench-aarch64] wrote $out/instructions.json" >&2

# --- docs/benchmarks.md --------------------------------------------------------------------
$py - "$out/instructions.json" "$root/docs/benchmarks.md" "$qemu_version" <<'PY'
import json, re, sys
rows, doc, qemu = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
m = lambda n: f"{n / 1e6:.1f}"
lines = ["<!-- arm:begin -->", "## aarch64: instructions per inference under qemu (Cortex-A76), 1 thread", "",
         f"`bash scripts/bench_aarch64.sh` (qemu {qemu}, `-cpu cortex-a76`; docs/aarch64.md). Guest instructions",
         "executed per inference in each engine's own code (edgemm: the program, oneDNN, XNNPACK, pthreadpool,",
         "libgomp; ONNX Runtime 1.30 arm64: libonnxruntime.so), from processes running the model 1 and 1 + k",
         "times (k = 4; each count the least of 2 such processes); the same model files and seeded inputs. Instructions are not time (a NEON instruction does more",
         "than a scalar one), but both engines run NEON code on the same emulated CPU. Below 1, edgemm executes",
         "fewer. libc/libstdc++/libm: what each engine's calls into them executed, per inference.", "",
         "| model | precision | edgemm (M instr.) | ONNX Runtime (M instr.) | edgemm / ORT | libc etc.: edgemm | libc etc.: ORT |",
         "|---|---|---:|---:|---:|---:|---:|"]
for r in rows:
    lines.append(f"| {r['model']} | {r['precision']} | {m(r['edgemm_instructions_per_run'])} | "
                 f"{m(r['ort_instructions_per_run'])} | {r['ratio']:.2f} | {m(r['edgemm_runtime_per_run'])} | "
                 f"{m(r['ort_runtime_per_run'])} |")
lines.append("<!-- arm:end -->")
text = open(doc).read()
block = "\n".join(lines) + "\n"
if "<!-- arm:begin -->" in text:
    text = re.sub(r"<!-- arm:begin -->.*?<!-- arm:end -->\n?", lambda _: block, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + block
open(doc + ".tmp", "w").write(text)
PY
mv "$root/docs/benchmarks.md.tmp" "$root/docs/benchmarks.md"
echo "[bench-aarch64] updated docs/benchmarks.md" >&2
