#!/usr/bin/env bash
# Issue 28 ("no silent wrong answers"), the command line (docs/cli.md, "Resources, outputs and
# conventions"):
# 1. input shapes that cannot fit in memory are refused by every command that takes them, with one
#    message and exit 5, in seconds and without allocating (under `ulimit -v`); the estimate is
#    checked against an independent one (ONNX's Python shape inference, the same liveness rule);
# 2. output folders (convert --target, run --output-dir) appear whole or not at all: a second
#    writer is refused (exit 6), SIGINT/SIGTERM leave nothing, a killed writer's leftovers do not
#    block the next run, an earlier edgemm output is replaced whole, a folder with other files is
#    refused (exit 2); single files are replaced by rename (a reader keeps the old file whole);
# 3. conventions: --threads 0 = all cores everywhere, '-' reads an image from standard input and is
#    refused for models, .npy files and outputs, run says when its timed run is the cold first run,
#    an empty question to vqa exits 2, and libpng's warnings about PNG side chunks stay off stderr.
# Usage: guards_cli_test.sh EDGEMM_BINARY REPO_ROOT
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
det="$root/models/ppocrv4/ch_PP-OCRv4_det_infer.onnx"
cls="$root/models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx"
photo="$root/data/demo/photo_text.jpg"
det_input="$root/data/demo/photo_det_input.npy"
export EDGEMM_MODELS_DIR="$root/models/ppocrv4"
py=/usr/bin/python3
expect_eq() {  # expect_eq NAME GOT WANT
  if [ "$2" = "$3" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: got '$2', want '$3'"
  fi
}
cd "$tmp" || exit 1  # anything written to a relative path lands here
$py -c 'import numpy as np, sys; np.save(sys.argv[1], np.full((1, 3, 48, 192), 0.5, np.float32))' "$tmp/x_cls.npy"
expect_no_text() {  # expect_no_text NAME FILE PATTERN
  if grep -q -- "$3" "$2"; then
    failed=$((failed + 1))
    echo "FAIL $1: '$3' in $(basename "$2")"
    sed 's/^/  | /' "$2" | head -5
  else
    passed=$((passed + 1))
  fi
}
absent() {  # absent NAME PATH...: none of the paths exists
  local name="$1" p
  shift
  for p in "$@"; do
    if [ -e "$p" ]; then
      failed=$((failed + 1))
      echo "FAIL $name: $p exists"
      return
    fi
  done
  passed=$((passed + 1))
}
wait_for() {  # wait_for PATH...: until one exists (at most 60 s)
  for _ in $(seq 600); do
    for p in "$@"; do [ -e "$p" ] && return 0; done
    sleep 0.1
  done
  return 1
}

# 1. Memory guard. Under `ulimit -v` (1.9 GiB) the limit is the same on every machine, and a
# command that allocated the 4.5 GiB input before checking would fail with another message.
big="x=1,3,20000,20000"
guarded() {  # guarded NAME CMD...: exit 5 with the shared message; the message kept in $tmp/msg-NAME
  local name="$1"
  shift
  check "$name" 5 bash -c 'ulimit -v 2000000; exec timeout 60 "$@"' _ "$@"
  expect_text "$name-says" "$tmp/err" \
    "OutOfMemory: input shapes x=\[1,3,20000,20000\]: one run needs an estimated .* GiB (weights 4.5 MiB, inputs 4.5 GiB, .*), more than the 1.9 GiB this process may use (ulimit -v); give smaller shapes"
  grep ': error: ' "$tmp/err" | sed 's/^edgemm [a-z]*: //' >"$tmp/msg-$name"
}
guarded mem-run "$bin" run "$det" --shape "$big"
guarded mem-profile "$bin" profile "$det" --shape "$big"
guarded mem-bench "$bin" bench "$det" --shape "$big" --compare ort
guarded mem-bench-sweep "$bin" bench "$det" --shape x=1,3,640,640 --sweep size=640,20000
guarded mem-inspect "$bin" inspect "$det" --shape "$big" --optimized
guarded mem-convert "$bin" convert "$det" --fix-shape "$big" -o "$tmp/big.onnx"
guarded mem-convert-target "$bin" convert "$det" --target rk3588 --fix-shape "$big" -o "$tmp/big_rk"
for name in profile bench bench-sweep inspect convert convert-target; do
  check "mem-same-message-$name" 0 cmp -s "$tmp/msg-mem-run" "$tmp/msg-mem-$name"
done
absent mem-nothing-written "$tmp/big.onnx" "$tmp/big_rk" "$tmp/.big_rk.edgemm-tmp"
# quantize: each new shape of its .npy calibration tensors (a sparse 1x3x4800x4800 file).
mkdir "$tmp/calib_big"
$py -c 'import numpy as np, sys; np.lib.format.open_memmap(sys.argv[1], "w+", np.float32, (1, 3, 4800, 4800))' \
  "$tmp/calib_big/a.npy"
check mem-quantize 5 bash -c 'ulimit -v 2000000; exec timeout 60 "$@"' _ \
  "$bin" quantize "$det" -o "$tmp/q.onnx" --scheme int8 --calib "$tmp/calib_big"
expect_text mem-quantize-says "$tmp/err" "input shapes x=\[1,3,4800,4800\]: one run needs an estimated"
# The estimate itself, against ONNX's shape inference in Python and the rule of
# ir/memory_estimate.h (inputs held, each intermediate freed after its last reader, outputs kept).
cat >"$tmp/estimate.py" <<'EOF'
import json, sys
import numpy as np, onnx
from onnx import numpy_helper, shape_inference
model = onnx.load(sys.argv[1])
dims = [int(d) for d in sys.argv[2].split(",")]
for d, v in zip(model.graph.input[0].type.tensor_type.shape.dim, dims):
    d.Clear()
    d.dim_value = v
model = shape_inference.infer_shapes(model)
def size(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape") or any(not d.HasField("dim_value") for d in t.shape.dim):
        return 0
    return int(np.prod([d.dim_value for d in t.shape.dim])) * np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type]).itemsize
g = model.graph
sizes = {vi.name: size(vi) for vi in list(g.value_info) + list(g.output) + list(g.input)}
inits = {i.name for i in g.initializer}
held = {i.name for i in g.input} | inits
outputs = {o.name for o in g.output}
last = {}
for i, n in enumerate(g.node):
    for x in n.input:
        last[x] = i
live = peak = 0
for i, n in enumerate(g.node):
    made = [o for o in n.output if o and o not in held]
    live += sum(sizes.get(o, 0) for o in made)
    peak = max(peak, live)
    freed = {x for x in n.input if x and x not in held and x not in outputs and last[x] == i}
    freed |= {o for o in made if o not in outputs and o not in last}
    live -= sum(sizes.get(x, 0) for x in freed)
weights = sum(numpy_helper.to_array(t).nbytes for t in g.initializer)
weights += sum(numpy_helper.to_array(a.t).nbytes for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value")
print(json.dumps([weights, sum(sizes[i.name] for i in g.input), peak]))
EOF
for shape in 1,3,640,640 1,3,20000,20000; do
  check "estimate-$shape" 0 "$bin" inspect "$det" --shape "x=$shape" --json
  got=$($py -c 'import json,sys; m=json.load(open(sys.argv[1]))["memory"]; print(json.dumps([m["weight_bytes"], m["input_bytes"], m["activation_bytes"]]))' "$tmp/out")
  expect_eq "estimate-$shape-vs-onnx" "$got" "$($py "$tmp/estimate.py" "$det" "$shape")"
done
expect_text estimate-says-refused "$tmp/out" '"limit_source"'

# 2. Output folders. convert --target takes seconds (verification by edgemm and ONNX Runtime),
# long enough to start a second writer or send a signal while it works.
convert_rk() {  # convert_rk OUT [CALIB_COUNT]: the rk3588 folder of PP-OCRv4 det
  "$bin" convert "$det" --target rk3588 -o "$1" --fix-shape x=1,3,640,640 --calib "$root/data/ocr_set" \
    --stage ocr-det --calib-count "${2:-4}"
}
valid_folder() {  # valid_folder NAME DIR: every file report.json lists, the manifest, verification passed
  check "$1-files" 0 $py -c '
import json, os, sys
d = sys.argv[1]
report = json.load(open(os.path.join(d, "report.json")))
listed = set(json.load(open(os.path.join(d, ".edgemm-output")))["files"])
for f in report["files"] + ["calib/" + f for f in os.listdir(os.path.join(d, "calib"))]:
    assert os.path.getsize(os.path.join(d, f)) > 0 and f in listed, f
assert report["verification"]["passed"], report["verification"]
' "$2"
  check "$1-model-loads" 0 "$bin" inspect "$2/model.onnx" --target rk3588
}
set -m  # background writers get their own process group, and SIGINT is not ignored in them
convert_rk "$tmp/rk" >"$tmp/a.out" 2>"$tmp/a.err" &
writer=$!
wait_for "$tmp/.rk.edgemm-tmp" "$tmp/rk"
check folder-busy 6 convert_rk "$tmp/rk"
expect_text folder-busy-says "$tmp/err" "'$tmp/rk' is being written by another edgemm process"
wait "$writer"
expect_eq folder-first-writer "$?" 0
valid_folder folder-complete "$tmp/rk"
absent folder-no-staging-left "$tmp/.rk.edgemm-tmp"
# An earlier output is replaced whole; a folder with a file edgemm did not write is refused.
touch "$tmp/rk/calib/zz_stale.png"
check folder-foreign-file 2 convert_rk "$tmp/rk"
expect_text folder-foreign-says "$tmp/err" "holds 'calib/zz_stale.png', which edgemm did not write"
rm "$tmp/rk/calib/zz_stale.png"
check folder-replaced 0 convert_rk "$tmp/rk" 2
valid_folder folder-replaced "$tmp/rk"
expect_eq folder-replaced-calib "$(ls "$tmp/rk/calib" | wc -l)" 2
mkdir "$tmp/mine" && touch "$tmp/mine/notes.txt"
check folder-not-edgemm 2 convert_rk "$tmp/mine"
expect_text folder-not-edgemm-says "$tmp/err" "is not empty and was not written by edgemm"
expect_eq folder-not-edgemm-kept "$(ls "$tmp/mine")" notes.txt
# SIGINT and SIGTERM while the folder is written: nothing is left, and the next run succeeds.
for sig in INT TERM; do
  convert_rk "$tmp/sig$sig" >"$tmp/s.out" 2>"$tmp/s.err" &
  writer=$!
  wait_for "$tmp/.sig$sig.edgemm-tmp/model.onnx" "$tmp/sig$sig/model.onnx"
  kill -"$sig" -- -"$writer"  # its process group, as Ctrl-C or a service manager does
  wait "$writer"
  expect_eq "signal-$sig-exit" "$?" "$((128 + $(kill -l "$sig")))"
  absent "signal-$sig-no-folder" "$tmp/sig$sig" "$tmp/.sig$sig.edgemm-tmp"
  check "signal-$sig-next-run" 0 convert_rk "$tmp/sig$sig"
  valid_folder "signal-$sig-next" "$tmp/sig$sig"
done
# A writer killed outright leaves its staging folder, unlocked: the next writer clears it.
convert_rk "$tmp/killed" >"$tmp/k.out" 2>"$tmp/k.err" &
writer=$!
wait_for "$tmp/.killed.edgemm-tmp/model.onnx" "$tmp/killed/model.onnx"
kill -KILL -- -"$writer"
wait "$writer"
check killed-next-run 0 convert_rk "$tmp/killed"
valid_folder killed-next "$tmp/killed"
absent killed-no-staging-left "$tmp/.killed.edgemm-tmp"
set +m
# run --output-dir follows the same rules: another model's run replaces the folder whole (no stale
# outputs of the first model stay beside the new ones).
check run-out-det 0 "$bin" run "$det" --input x="$det_input" --output-dir "$tmp/outs"
check run-out-cls 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --output-dir "$tmp/outs"
expect_eq run-out-only-cls "$(ls "$tmp/outs")" "$($py -c 'import onnx,sys; print(onnx.load(sys.argv[1]).graph.output[0].name + ".npy")' "$cls")"
touch "$tmp/outs/keep.txt"
check run-out-foreign 2 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --output-dir "$tmp/outs"
# A single file is replaced by rename: a reader that opened the old file still reads it whole.
check file-first 0 "$bin" convert "$det" --fix-shape x=1,3,640,640 -o "$tmp/fixed.onnx" --no-verify
cp "$tmp/fixed.onnx" "$tmp/first.onnx"
exec 3<"$tmp/fixed.onnx"
check file-second 0 "$bin" convert "$det" --fix-shape x=1,3,320,320 -o "$tmp/fixed.onnx" --no-verify
cat <&3 >"$tmp/read_through_old_fd.onnx"
exec 3<&-
check file-old-reader-whole 0 cmp -s "$tmp/first.onnx" "$tmp/read_through_old_fd.onnx"
check file-new-complete 0 "$bin" inspect "$tmp/fixed.onnx"
expect_text file-new-shape "$tmp/out" "x float32 \[1,3,320,320\]"
check file-no-temporaries 1 bash -c 'ls -a "$1" | grep -q "\.tmp-"' _ "$tmp"

# 3. Conventions.
# --threads 0 = all cores, on every command that takes --threads (bench and convert refused it).
nproc="$($py -c 'import os; print(len(os.sched_getaffinity(0)))')"
check threads0-bench 0 "$bin" bench "$cls" --shape x=1,3,48,192 --threads 0 --iters 1 --warmup 0 --json
expect_eq threads0-bench-count "$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["points"][0]["threads"])' "$tmp/out")" "$nproc"
check threads0-bench-duplicate 2 "$bin" bench "$cls" --shape x=1,3,48,192 --threads "0,$nproc" --iters 1
check threads0-convert 0 "$bin" convert "$cls" --fix-shape x=1,3,48,192 -o "$tmp/cls.onnx" --threads 0
check threads0-run 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --threads 0 --json
expect_eq threads0-run-count "$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' "$tmp/out")" "$nproc"
check threads0-profile 0 "$bin" profile "$cls" --shape x=1,3,48,192 --threads 0 --iters 1 --warmup 0
check threads0-ocr 0 "$bin" ocr "$photo" --threads 0
check threads0-quantize 0 "$bin" quantize "$cls" -o "$tmp/cls16.onnx" --scheme fp16 --threads 0
# '-': an image from standard input (the photo's printed words), refused where a model, a .npy
# file or an output is expected.
check stdin-ocr 0 bash -c '"$1" ocr - <"$2"' _ "$bin" "$photo"
expect_text stdin-ocr-espresso "$tmp/out" "ESPRESSO"
expect_text stdin-ocr-chinese "$tmp/out" "早上好"
check stdin-ocr-draw 0 bash -c '"$1" ocr - --no-cls --draw "$3" <"$2"' _ "$bin" "$photo" "$tmp/stdin_drawn.png"
check stdin-ocr-draw-size 0 $py -c '
from PIL import Image; import sys
assert Image.open(sys.argv[1]).size == Image.open(sys.argv[2]).size' "$tmp/stdin_drawn.png" "$photo"
check stdin-ocr-terminal-or-empty 2 bash -c '"$1" ocr - </dev/null' _ "$bin"
for c in run inspect profile bench "convert -o $tmp/s.onnx" "quantize -o $tmp/s.onnx --scheme fp16" \
  "prune -o $tmp/s.onnx --tokens-after-layer 0"; do
  # shellcheck disable=SC2086  # the command and its options, split on purpose
  check "stdin-model-${c%% *}" 2 "$bin" $c -
  expect_text "stdin-model-${c%% *}-says" "$tmp/err" "a model cannot be read from standard input ('-')"
done
check stdin-npy 2 "$bin" run "$cls" --input x=-
expect_text stdin-npy-says "$tmp/err" "a .npy tensor cannot be read from standard input ('-')"
check stdout-run-dir 2 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --output-dir -
check stdout-convert 2 "$bin" convert "$cls" --fix-shape x=1,3,48,192 -o - --no-verify
check stdout-trace 2 "$bin" profile "$cls" --shape x=1,3,48,192 --trace -
absent stdout-none-written "$tmp/-"
tiny="$root/tests/fixtures/vlm_tiny"
manifest="$tiny/reference/manifest.json"
image="$tiny/reference/$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["prompts"][0]["image"])' "$manifest")"
question=$($py -c 'import json,sys; m=json.load(open(sys.argv[1]))["prompts"][0]["messages"][0]["content"]; print([p["text"] for p in m if p["type"]=="text"][0])' "$manifest")
want=$($py -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["prompts"][0]["generated_ids"]))' "$manifest")
n=$($py -c "print(len($want))")
check stdin-vqa 0 bash -c '"$1" vqa --model "$2" - "$3" --max-new-tokens "$4" --threads 1 --json <"$5"' _ \
  "$bin" "$tiny" "$question" "$n" "$image"
same_ids stdin-vqa-ids "$want"
check stdin-chat-image 2 "$bin" chat --model "$tiny" --image -
# run: a single timed run right after load says it includes the cold start.
check cold-text 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy"
expect_text cold-text-says "$tmp/out" "the first after load: it includes one-time setup"
check cold-json 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --json
expect_text cold-json-says "$tmp/out" '"first_run_timed": true'
check warm-json 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --json --warmup 1
expect_text warm-json-says "$tmp/out" '"first_run_timed": false'
check warm-text 0 "$bin" run "$cls" --input x="$tmp/x_cls.npy" --warmup 1
expect_no_text warm-text-quiet "$tmp/out" "after load"
# vqa: an empty or blank question is an error, not a generation from nothing.
check vqa-empty 2 "$bin" vqa --model "$tiny" "$image" ""
check vqa-blank 2 "$bin" vqa --model "$tiny" "$image" $' \t\n'
expect_text vqa-blank-says "$tmp/err" "the question is empty"
check vqa-raw-blank 2 "$bin" vqa --model "$tiny" "$image" " " --raw-prompt
# PNG side chunks libpng warns about (a too-short iCCP profile, a bad tEXt CRC) print nothing,
# and the pixels are those written: palette entry 0 (10,20,30) opaque, entry 1 transparent (tRNS)
# composited on white (docs/ocr.md). A damaged IDAT still fails (exit 2).
$py - "$tmp" <<'EOF'
import struct, sys, zlib
def chunk(kind, data, crc=None):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", (zlib.crc32(kind + data) if crc is None else crc) & 0xFFFFFFFF)
w, h = 64, 32
signature = b"\x89PNG\r\n\x1a\n"
rows = b"".join(b"\x00" + bytes([0] * (w // 2) + [1] * (w // 2)) for _ in range(h))
odd = [chunk(b"iCCP", b"ICC Profile\x00\x00" + zlib.compress(b"\x00" * 200)), chunk(b"tEXt", b"Comment\x00hi", crc=1)]
body = [chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))] + odd + [
    chunk(b"PLTE", bytes([10, 20, 30, 250, 250, 250])), chunk(b"tRNS", bytes([255, 0])),
    chunk(b"IDAT", zlib.compress(rows)), chunk(b"IEND", b"")]
open(sys.argv[1] + "/odd_chunks.png", "wb").write(signature + b"".join(body))
body = [chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)), chunk(b"IDAT", b"\x78\x9c" + b"\xff" * 50), chunk(b"IEND", b"")]
open(sys.argv[1] + "/damaged.png", "wb").write(signature + b"".join(body))
EOF
check png-odd-chunks 0 "$bin" ocr "$tmp/odd_chunks.png" --no-cls --draw "$tmp/odd_drawn.png"
expect_no_text png-no-libpng-warning "$tmp/err" "libpng"
check png-pixels 0 $py -c '
from PIL import Image; import sys
im = Image.open(sys.argv[1]).convert("RGB")
assert im.getpixel((5, 5)) == (10, 20, 30) and im.getpixel((60, 5)) == (255, 255, 255), (im.getpixel((5, 5)), im.getpixel((60, 5)))
' "$tmp/odd_drawn.png"
check png-damaged 2 "$bin" ocr "$tmp/damaged.png"
report_and_exit
