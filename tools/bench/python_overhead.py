#!/usr/bin/python3
"""What calling edgemm from Python costs: the median latency of InferenceSession.run (Python,
numpy in and out) against `edgemm bench`'s median for the same model, input shape, thread count and
input, in alternating rounds (docs/python.md "Overhead").

  PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_overhead.py \\
      models/ppocrv4/ch_ppocr_mobile_v2.0_cls_infer.onnx --shape x=1,3,48,192 --threads 1
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import edgemm


def cli_median_ms(cli, model, shape_arg, threads, iters):
    out = subprocess.run(
        [cli, "bench", model, "--shape", shape_arg, "--threads", str(threads), "--iters", str(iters), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    point = json.loads(out)["points"][0]
    return next(r for r in point["runtimes"] if r["name"] == "edgemm")["latency_ms"]["median"]


def python_median_ms(model, name, shape, threads, iters):
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = threads
    session = edgemm.InferenceSession(model, options)
    declared = session.get_inputs()[0].shape
    for dim, value in zip(declared, shape):  # pin the shape as `edgemm bench --shape` does
        if isinstance(dim, str):
            options.add_free_dimension_override_by_name(dim, value)
    session = edgemm.InferenceSession(model, options)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    for _ in range(5):
        session.run(None, {name: x})
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        session.run(None, {name: x})
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--shape", required=True, help="NAME=D0,D1,... of the model's one input")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", default="build/bin/edgemm")
    args = parser.parse_args()
    name, dims = args.shape.split("=")
    shape = [int(d) for d in dims.split(",")]
    rows = []
    for r in range(args.rounds):
        cpp = cli_median_ms(args.cli, args.model, args.shape, args.threads, args.iters)
        py = python_median_ms(args.model, name, shape, args.threads, args.iters)
        rows.append((cpp, py))
        print(f"round {r + 1}: edgemm bench {cpp:.4f} ms, Python run {py:.4f} ms, +{(py - cpp) * 1e3:.1f} us "
              f"({py / cpp:.3f}x)", flush=True)
    added_us = statistics.median((p - c) * 1e3 for c, p in rows)
    ratio = statistics.median(p / c for c, p in rows)
    print(f"median over rounds: +{added_us:.1f} us per run ({ratio:.3f}x), {args.threads} thread(s), "
          f"{args.iters} runs a round")
    return 0


if __name__ == "__main__":
    sys.exit(main())
