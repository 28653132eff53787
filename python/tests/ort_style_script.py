#!/usr/bin/env python3
"""Runs an ONNX model once on a random input and prints its inputs' and outputs' shapes, written
as an ONNX Runtime user writes it; the only edgemm-specific line is the import.

usage: ort_style_script.py MODEL [SAVE_DIR]

Prints one line per input and output: `input NAME DTYPE [d0, d1, ...]` / `output NAME DTYPE [...]`.
Symbolic dimensions become 1 on the batch axis (the first, or one named like "batch") and 64
elsewhere. With SAVE_DIR, the inputs and outputs are also saved as SAVE_DIR/{inputs,outputs}/NAME.npy.
"""

import os
import sys

import numpy as np

import edgemm as ort

NUMPY_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}
THREADS = 2
SEED = 0


def concrete_shape(shape):
    """A shape to feed for the model's declared `shape` (ints, symbol strings, None)."""
    dims = []
    for axis, dim in enumerate(shape):
        if isinstance(dim, int):
            dims.append(dim)
        elif axis == 0 or (isinstance(dim, str) and dim.lower() in ("batch", "batch_size", "n")):
            dims.append(1)
        else:
            dims.append(64)
    return dims


def random_input(rng, shape, numpy_type):
    if np.issubdtype(numpy_type, np.floating):
        return rng.random(shape, dtype=np.float32).astype(numpy_type)
    if numpy_type is np.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(0, 10, size=shape).astype(numpy_type)


def file_name(value_name):
    return value_name.replace("/", "_").replace(":", "_") + ".npy"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    model = sys.argv[1]
    save_dir = sys.argv[2] if len(sys.argv) == 3 else None

    sess_options = ort.SessionOptions()
    sess_options.intra_op_num_threads = THREADS
    sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, sess_options, providers=["CPUExecutionProvider"])

    rng = np.random.default_rng(SEED)
    feed = {}
    for meta in sess.get_inputs():
        x = random_input(rng, concrete_shape(meta.shape), NUMPY_TYPES[meta.type])
        feed[meta.name] = x
        print(f"input {meta.name} {x.dtype} {list(x.shape)}")

    outputs = sess.run(None, feed)
    for meta, value in zip(sess.get_outputs(), outputs):
        print(f"output {meta.name} {value.dtype} {list(value.shape)}")

    if save_dir:
        for kind, values in (("inputs", feed), ("outputs", dict(zip([o.name for o in sess.get_outputs()], outputs)))):
            os.makedirs(os.path.join(save_dir, kind), exist_ok=True)
            for name, value in values.items():
                np.save(os.path.join(save_dir, kind, file_name(name)), value)


if __name__ == "__main__":
    main()
