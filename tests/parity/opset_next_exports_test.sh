#!/usr/bin/env bash
# Real models at ai.onnx opset 21, as newer exporters write them: Debian's PyTorch (1.13) and
# libonnx (1.12) stop at opset 17, so tools/fixtures/upgrade_opset.py rewrites their output op by
# op (Reduce*-18 axes inputs, Split-18 num_outputs, GridSample-20 modes, DFT-20 axis input; IR 10):
# - the transformer block (tests/fixtures/transformer_block.onnx, exported at 17) and the CRNN
#   (tests/fixtures/crnn.onnx, exported at 14: conv, 2-layer BiLSTM, CTC head) at opset 21: edgemm
#   within 1e-4 of their PyTorch references (the fixtures' _y.npy);
# - PP-OCRv4 rec (opset 9, taken to 17 by `edgemm convert --fix-shape x=1,3,48,320 --opset 17`,
#   then to 21: its 10 ReduceMean nodes take their axes as inputs): `inspect` sees opset 21 and
#   the static output shape; edgemm within 1e-4 of ONNX Runtime 1.30 on the same opset-21 file
#   and of edgemm on the original file, on a seeded input; and `edgemm convert --opset 17` takes
#   it back down, verified by the command with edgemm and ONNX Runtime.
# Usage: opset_next_exports_test.sh EDGEMM_BINARY REPO_ROOT. Exits 77 (skipped) without node or
# tools/reference/node_modules (scripts/setup.sh installs them).
set -uo pipefail
bin="$(realpath "$1")"
root="$(realpath "$2")"
if [ ! -d "$root/tools/reference/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/onnxruntime-node is missing (run scripts/setup.sh)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/check_lib.sh"
fixtures="$root/tests/fixtures"
upgrade="$root/tools/fixtures/upgrade_opset.py"
py=/usr/bin/python3

# Outputs $3.. of the .npy folder $1 against the files $2<name>.npy: same shapes, largest
# absolute difference at most 1e-4.
close() {
  $py -c '
import sys
import numpy as np
a, b, names = sys.argv[1], sys.argv[2], sys.argv[3:]
for name in names:
    got = np.load(f"{a}/{name}.npy")
    ref = np.load(b + name + ".npy")
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    err = float(np.max(np.abs(got.astype(np.float64) - ref)))
    print(f"{name}: max abs error {err:.3g}")
    assert err <= 1e-4, (name, err)
' "$@"
}

# The two PyTorch fixtures at opset 21.
check block-to-21 0 $py "$upgrade" "$fixtures/transformer_block.onnx" "$tmp/block21.onnx"
check block-21-run 0 "$bin" run "$tmp/block21.onnx" -i x="$fixtures/transformer_block_x.npy" -o "$tmp/block21"
cp "$fixtures/transformer_block_y.npy" "$tmp/block_ref_y.npy"
cp "$fixtures/transformer_block_pooled.npy" "$tmp/block_ref_pooled.npy"
check block-21-vs-pytorch 0 close "$tmp/block21" "$tmp/block_ref_" y pooled
check crnn-to-21 0 $py "$upgrade" "$fixtures/crnn.onnx" "$tmp/crnn21.onnx"
for x in x x2; do
  check "crnn-21-run-$x" 0 "$bin" run "$tmp/crnn21.onnx" -i x="$fixtures/crnn_$x.npy" -o "$tmp/crnn21_$x"
  suffix="${x#x}"
  cp "$fixtures/crnn_y$suffix.npy" "$tmp/crnn_ref_${x}_y.npy"
  check "crnn-21-$x-vs-pytorch" 0 close "$tmp/crnn21_$x" "$tmp/crnn_ref_${x}_" y
done

# PP-OCRv4 rec, opset 9 → 17 (edgemm convert) → 21 (op by op).
rec="$root/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx"
if [ -f "$rec" ]; then
  check rec-to-17 0 "$bin" convert "$rec" --fix-shape x=1,3,48,320 --opset 17 --no-verify -o "$tmp/rec17.onnx"
  check rec-to-21 0 $py "$upgrade" "$tmp/rec17.onnx" "$tmp/rec21.onnx"
  expect_text rec-to-21-says "$tmp/out" "ReduceMean axes to input: 10"
  check rec-21-inspect 0 "$bin" inspect "$tmp/rec21.onnx" --json
  cp "$tmp/out" "$tmp/rec21_inspect.json"
  check rec-21-inspect-opset 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["opsets"] == {"ai.onnx": 21}, r["opsets"]
assert r["op_histogram"]["ReduceMean"] == 10 and r["ops_without_kernel"] == [], r
assert r["outputs"][0]["shape"] == [1, 40, 6625], r["outputs"]
' "$tmp/rec21_inspect.json"
  check rec-input 0 $py -c '
import sys
import numpy as np
np.save(sys.argv[1], np.random.default_rng(21).uniform(-1, 1, (1, 3, 48, 320)).astype(np.float32))
' "$tmp/rec_x.npy"
  check rec-21-run 0 "$bin" run "$tmp/rec21.onnx" -i x="$tmp/rec_x.npy" -o "$tmp/rec21_edgemm" --threads 2
  check rec-21-ort 0 node "$root/tools/reference/ort_run.js" "$tmp/rec21.onnx" --input x="$tmp/rec_x.npy" \
    --output-dir "$tmp/rec21_ort"
  check rec-original-run 0 "$bin" run "$rec" -i x="$tmp/rec_x.npy" -o "$tmp/rec_edgemm" --threads 2
  name=$(cd "$tmp/rec21_ort" && ls ./*.npy | head -1 | xargs basename -s .npy)
  check rec-21-vs-ort 0 close "$tmp/rec21_edgemm" "$tmp/rec21_ort/" "$name"
  check rec-21-vs-original 0 close "$tmp/rec21_edgemm" "$tmp/rec_edgemm/" "$name"
  check rec-21-back-to-17 0 "$bin" convert "$tmp/rec21.onnx" --opset 17 -o "$tmp/rec21_17.onnx" --json
  expect_text rec-21-back-to-17-rewrites "$tmp/out" '"ReduceMean axes input to attribute": 10'
else
  echo "SKIP: $rec is missing (scripts/setup.sh downloads it)"
fi
report_and_exit
