#!/usr/bin/env bash
# A CRNN text recognizer (conv backbone + 2-layer bidirectional LSTM + CTC log-probabilities,
# tests/fixtures/crnn.onnx, made by tools/fixtures/make_crnn_fixture.py) against PyTorch and ONNX
# Runtime 1.30 (tools/reference/ort_run.js):
# - `edgemm inspect --optimized --json`: both LSTM nodes stay standard LSTM ops (edgemm's own
#   recurrent kernel, src/kernels/cpu/recurrent.cc), not lowered or replaced; `run --json`'s
#   placement puts them (and every other node) on the native backend;
# - `edgemm run` at 1 and 2 threads, on x [1, 3, 32, 100] and x2 [2, 3, 32, 64] (the symbolic batch
#   and width): y within 1e-4 of PyTorch's (crnn_y.npy, crnn_y2.npy) and of ONNX Runtime's;
# - the greedy CTC decode (argmax per step, repeats collapsed, blank dropped) of every output gives
#   PyTorch's strings per batch item (crnn_labels.json).
# Usage: crnn_parity_test.sh EDGEMM_BINARY REPO_ROOT. Exits 77 (skipped) without node or
# tools/reference/node_modules (scripts/setup.sh installs them).
set -uo pipefail
bin="$(realpath "$1")"
root="$2"
if [ ! -d "$root/tools/reference/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or tools/reference/node_modules/onnxruntime-node is missing (run scripts/setup.sh)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/check_lib.sh"
fixtures="$root/tests/fixtures"
model="$fixtures/crnn.onnx"
py=/usr/bin/python3

# The LSTMs after edgemm's load-time passes: still two standard LSTM nodes.
check inspect 0 "$bin" inspect "$model" --optimized --json
cp "$tmp/out" "$tmp/inspect.json"
check inspect-lstm 0 $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
hist = r["op_histogram"]
assert r["inputs"][0]["shape"] == ["batch", 3, 32, "width"], r["inputs"]
assert hist.get("LSTM") == 2, hist
assert not [op for op in hist if op.startswith("com.edgemm.") and "LSTM" in op], hist
' "$tmp/inspect.json"

# inputs: x (batch 1, width 100) and x2 (batch 2, width 64); y and y2 are PyTorch's outputs.
for input in x x2; do
  suffix="${input#x}"
  node "$root/tools/reference/ort_run.js" "$model" --input x="$fixtures/crnn_$input.npy" --output-dir "$tmp/ort_$input" \
    >/dev/null 2>"$tmp/err" || { failed=$((failed + 1)); echo "FAIL $input-ort: $(head -3 "$tmp/err")"; }
  for threads in 1 2; do
    run="$input-${threads}t"
    check "$run" 0 "$bin" run "$model" --input x="$fixtures/crnn_$input.npy" --threads "$threads" \
      --output-dir "$tmp/edgemm_$run" --json
    cp "$tmp/out" "$tmp/run_$run.json"
    # Every node on the native backend, the two LSTMs among them.
    check "$run-placement" 0 $py -c '
import json, sys
p = json.load(open(sys.argv[1]))["placement"]
lstm = [n for n in p["nodes"] if n["op_type"] == "LSTM"]
assert p["backend"] == "native" and p["fallback_nodes"] == 0, p
assert len(lstm) == 2 and all(n["backend"] == "native" for n in lstm), lstm
' "$tmp/run_$run.json"
    # y within 1e-4 of PyTorch and of ONNX Runtime; the same greedy CTC strings as PyTorch.
    check "$run-values" 0 $py -c '
import json, sys
import numpy as np
got_file, torch_file, ort_file, labels_file, input = sys.argv[1:6]
labels = json.load(open(labels_file))
charset = labels["charset"]

def greedy_ctc(y):  # y [T, N, classes] -> one string per batch item
    out = []
    for best in y.argmax(axis=2).T:
        keep = [k for i, k in enumerate(best) if k != labels["blank"] and (i == 0 or k != best[i - 1])]
        out.append("".join(charset[k] for k in keep))
    return out

got = np.load(got_file)
for oracle, file in (("pytorch", torch_file), ("onnxruntime", ort_file)):
    want = np.load(file)
    assert got.shape == want.shape, (oracle, got.shape, want.shape)
    err = float(np.abs(got - want).max())
    print(f"max abs error vs {oracle}: {err:.3g}")
    assert err <= 1e-4, (oracle, err)
assert greedy_ctc(np.load(torch_file)) == labels[input], "the labels do not match crnn_y*.npy: regenerate"
assert greedy_ctc(got) == labels[input], (greedy_ctc(got), labels[input])
' "$tmp/edgemm_$run/y.npy" "$fixtures/crnn_y$suffix.npy" "$tmp/ort_$input/y.npy" "$fixtures/crnn_labels.json" "$input"
    echo "$run: $(tr '\n' ' ' <"$tmp/out")"
  done
done
report_and_exit
