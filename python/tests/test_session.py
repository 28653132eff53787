"""Tests of edgemm.InferenceSession, ONNX Runtime's InferenceSession API over edgemm's engine
(python/edgemm/session.py over edgemm._edgemm._Session, python/src/session.cc).

Oracles: the C++ CLI `edgemm run` (same engine: outputs within 1e-6 at the same thread count),
ONNX Runtime 1.30 through tools/reference/ort_run.js (within 1e-4), the PyTorch reference outputs
of tests/fixtures/transformer_block.onnx, the ONNX files themselves read with python3-onnx (for
metadata), and values computed by hand for small models built with onnx.helper.

Run: cd /work/main && PYTHONPATH=build/python EDGEMM_CLI=build/bin/edgemm EDGEMM_ROOT=/work/main \
         /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests/test_session.py
"""

import gc
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import edgemm

HERE = Path(__file__).resolve().parent
THREADS = 2  # intra_op_num_threads of sessions compared with the CLI, passed as --threads

CLS = "ch_ppocr_mobile_v2.0_cls_infer.onnx"
DET = "ch_PP-OCRv4_det_infer.onnx"
REC = "ch_PP-OCRv4_rec_infer.onnx"

# Parity cases: model and the shape of a seeded random input x (None: the fixture's own x).
CASES = {
    "cls": (CLS, (1, 3, 48, 192)),
    "det": (DET, (1, 3, 320, 320)),
    "rec": (REC, (1, 3, 48, 320)),
    "transformer_block": ("transformer_block.onnx", None),
}


# ---- helpers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_path(ppocr, fixtures_dir):
    """model_path(case or file name) -> the model's Path (PP-OCRv4 or tests/fixtures)."""

    def path(name):
        file = CASES[name][0] if name in CASES else name
        return fixtures_dir / file if file.startswith("transformer_block") else ppocr / file

    return path


def case_inputs(name, fixtures_dir):
    """The feed of a parity case: the fixture's x, or seeded uniform [0, 1) noise."""
    _, shape = CASES[name]
    if shape is None:
        return {"x": np.load(fixtures_dir / "transformer_block_x.npy")}
    seed = sorted(CASES).index(name) + 1
    return {"x": np.random.default_rng(seed).random(shape, dtype=np.float32)}


def session(path, threads=THREADS, level=None, providers=("CPUExecutionProvider",)):
    """An InferenceSession on `path` with intra_op_num_threads=threads."""
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = threads
    if level is not None:
        options.graph_optimization_level = level
    return edgemm.InferenceSession(path, options, providers=list(providers))


def assert_outputs_close(names, actual, expected, atol, what):
    """`actual` (a list in `names` order) against `expected` ({name: array}), same dtype and shape."""
    assert len(actual) == len(names)
    for name, value in zip(names, actual):
        ref = expected[name]
        assert value.dtype == ref.dtype, f"{what}: output '{name}' dtype {value.dtype}, expected {ref.dtype}"
        assert value.shape == ref.shape, f"{what}: output '{name}' shape {value.shape}, expected {ref.shape}"
        np.testing.assert_allclose(value, ref, rtol=0, atol=atol, err_msg=f"{what}: output '{name}'")


@pytest.fixture(scope="module")
def cli_reference(tmp_path_factory, model_path, fixtures_dir, cli_run_model):
    """cli_reference(case) -> {output name: array} of `edgemm run --threads THREADS` on the case's
    input, computed once per case."""
    cache = {}

    def get(name):
        if name not in cache:
            workdir = tmp_path_factory.mktemp(f"cli_{name}")
            _, cache[name] = cli_run_model(model_path(name), case_inputs(name, fixtures_dir), workdir, threads=THREADS)
        return cache[name]

    return get


def write_model(path, nodes, inputs, outputs, initializers=()):
    """Writes a checked opset-17 ONNX model built with onnx.helper to `path`; returns `path`."""
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def tensor_info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


# ---- 1. an ONNX Runtime script runs unchanged but for its import -----------------------------


@pytest.mark.parametrize(
    "name, expected_inputs",
    [
        ("cls", {"x": [1, 3, 64, 64]}),
        ("det", {"x": [1, 3, 64, 64]}),
        ("transformer_block", {"x": [1, 64, 32]}),
    ],
)
def test_ort_style_script(name, expected_inputs, model_path, python_exe, cli_run_model, tmp_path):
    """ort_style_script.py (`import edgemm as ort`, SessionOptions, get_inputs, run(None, feed)) runs
    as a subprocess, feeds the shapes its symbolic-dimension rule gives, and prints the output
    names, dtypes and shapes `edgemm run` reports for the same input; the outputs it saves equal
    the CLI's."""
    model = model_path(name)
    save = tmp_path / "saved"
    done = subprocess.run(
        [python_exe, str(HERE / "ort_style_script.py"), str(model), str(save)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"script failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr

    printed = {"input": {}, "output": {}}
    for line in done.stdout.splitlines():
        kind, value_name, dtype, shape = line.split(" ", 3)
        printed[kind][value_name] = (dtype, json.loads(shape))
    assert {k: s for k, (_, s) in printed["input"].items()} == expected_inputs

    inputs = {k: np.load(save / "inputs" / f"{k}.npy") for k in printed["input"]}
    assert {k: list(v.shape) for k, v in inputs.items()} == expected_inputs
    report, cli_outputs = cli_run_model(model, inputs, tmp_path, threads=2)  # the script's THREADS
    cli_printed = {o["name"]: (o["dtype"], o["shape"]) for o in report["outputs"]}
    assert list(printed["output"]) == [o["name"] for o in report["outputs"]]
    assert printed["output"] == cli_printed
    for value_name, expected in cli_outputs.items():
        saved = np.load(save / "outputs" / f"{value_name}.npy")
        np.testing.assert_allclose(saved, expected, rtol=0, atol=1e-6, err_msg=value_name)


# ---- 2. parity with the C++ CLI, ONNX Runtime and PyTorch ------------------------------------


@pytest.mark.parametrize("case", list(CASES))
def test_parity_with_cli(case, model_path, fixtures_dir, cli_reference):
    """InferenceSession.run equals `edgemm run --threads 2` (same engine, same thread count) on the
    same seeded input: names, dtypes, shapes, and values within 1e-6."""
    sess = session(model_path(case))
    names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(None, case_inputs(case, fixtures_dir))
    expected = cli_reference(case)
    assert names == list(expected)
    assert_outputs_close(names, outputs, expected, 1e-6, f"{case} vs edgemm run")


@pytest.mark.parametrize("case", list(CASES))
def test_parity_with_onnxruntime(case, model_path, fixtures_dir, ort_run_model, tmp_path):
    """InferenceSession.run agrees with ONNX Runtime 1.30 (CPU, node) within 1e-4 on the same input."""
    feed = case_inputs(case, fixtures_dir)
    sess = session(model_path(case))
    names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(None, feed)
    expected = ort_run_model(model_path(case), feed, tmp_path, threads=THREADS)
    assert names == list(expected)
    assert_outputs_close(names, outputs, expected, 1e-4, f"{case} vs ONNX Runtime")


def test_transformer_block_matches_pytorch(model_path, fixtures_dir):
    """transformer_block.onnx on transformer_block_x.npy gives PyTorch's outputs
    (transformer_block_y.npy, transformer_block_pooled.npy) within 1e-5."""
    sess = session(model_path("transformer_block"))
    y, pooled = sess.run(None, {"x": np.load(fixtures_dir / "transformer_block_x.npy")})
    np.testing.assert_allclose(y, np.load(fixtures_dir / "transformer_block_y.npy"), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pooled, np.load(fixtures_dir / "transformer_block_pooled.npy"), rtol=1e-5, atol=1e-5)


# ---- 3. ONNX Runtime's API surface -----------------------------------------------------------


def declared(value_info):
    """(name, ONNX Runtime type string, shape) of an ONNX ValueInfo as onnxruntime.NodeArg shows
    it: an int per fixed axis, the symbol of a named one, None for an unnamed one."""
    tensor = value_info.type.tensor_type
    type_name = "tensor(" + TensorProto.DataType.Name(tensor.elem_type).lower() + ")"
    shape = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            shape.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            shape.append(dim.dim_param)
        else:
            shape.append(None)
    return value_info.name, type_name, shape


def node_args(args):
    """[(name, type, shape)] of NodeArgs, checking the types of the shape entries on the way."""
    out = []
    for arg in args:
        assert isinstance(arg.name, str) and isinstance(arg.type, str) and isinstance(arg.shape, list)
        for dim in arg.shape:
            assert dim is None or type(dim) in (int, str), f"{arg.name}: dim {dim!r} of type {type(dim)}"
        out.append((arg.name, arg.type, arg.shape))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_metadata_matches_model_file(case, model_path):
    """get_inputs() / get_outputs() list the graph's inputs (initializers excluded) and outputs as the
    ONNX file declares them (read with python3-onnx): names, 'tensor(float)' types, int and str dims."""
    path = model_path(case)
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    sess = session(path)
    assert node_args(sess.get_inputs()) == [declared(v) for v in graph.input if v.name not in initializers]
    assert node_args(sess.get_outputs()) == [declared(v) for v in graph.output]


def test_metadata_types_and_unnamed_dims(tmp_path):
    """NodeArg.type is 'tensor(int64)' for an int64 value and a dim with neither value nor name is
    None, on inputs and on outputs alike (as onnxruntime.NodeArg.shape); the int64 value round-trips."""
    path = write_model(
        tmp_path / "meta.onnx",
        [helper.make_node("Relu", ["a"], ["b"]), helper.make_node("Identity", ["ids"], ["c"])],
        [tensor_info("a", TensorProto.FLOAT, ["batch", None, 4]), tensor_info("ids", TensorProto.INT64, [2])],
        [tensor_info("b", TensorProto.FLOAT, ["batch", None, 4]), tensor_info("c", TensorProto.INT64, [2])],
    )
    sess = edgemm.InferenceSession(str(path))
    assert node_args(sess.get_inputs()) == [
        ("a", "tensor(float)", ["batch", None, 4]),
        ("ids", "tensor(int64)", [2]),
    ]
    b, c = sess.run(None, {"a": np.full((2, 3, 4), -1.5, np.float32), "ids": np.array([5, -7], np.int64)})
    assert b.dtype == np.float32 and b.shape == (2, 3, 4) and not b.any()
    assert c.dtype == np.int64 and c.tolist() == [5, -7]
    assert node_args(sess.get_outputs()) == [
        ("b", "tensor(float)", ["batch", None, 4]),
        ("c", "tensor(int64)", [2]),
    ]


def test_module_level_functions():
    """get_device() is 'CPU'; get_available_providers() has CPUExecutionProvider; get_all_providers()
    has ONNX Runtime's names (CPU and CUDA)."""
    assert edgemm.get_device() == "CPU"
    assert "CPUExecutionProvider" in edgemm.get_available_providers()
    assert {"CPUExecutionProvider", "CUDAExecutionProvider"} <= set(edgemm.get_all_providers())


@pytest.mark.parametrize("providers", [None, ["CPUExecutionProvider"], ["native"], [("CPUExecutionProvider", {})]])
def test_cpu_providers(providers, model_path, fixtures_dir, cli_reference):
    """providers None, ['CPUExecutionProvider'], ['native'] and a (name, {}) tuple all run on the CPU:
    get_providers() is ['CPUExecutionProvider'] and the outputs are the CLI's."""
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = THREADS
    sess = edgemm.InferenceSession(str(model_path("cls")), options, providers=providers)
    assert sess.get_providers() == ["CPUExecutionProvider"]
    outputs = sess.run(None, case_inputs("cls", fixtures_dir))
    assert_outputs_close(["softmax_0.tmp_0"], outputs, cli_reference("cls"), 1e-6, "cls")


def test_unavailable_ort_provider_warns_and_runs(model_path, fixtures_dir, cli_reference):
    """['CUDAExecutionProvider', 'CPUExecutionProvider'] warns (UserWarning naming CUDA, as ONNX
    Runtime does for a provider missing from its build) and runs on the CPU."""
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = THREADS
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        sess = edgemm.InferenceSession(
            str(model_path("cls")), options, providers=["CUDAExecutionProvider", "CPUExecutionProvider"]
        )
    assert sess.get_providers() == ["CPUExecutionProvider"]
    outputs = sess.run(None, case_inputs("cls", fixtures_dir))
    assert_outputs_close(["softmax_0.tmp_0"], outputs, cli_reference("cls"), 1e-6, "cls")


def test_unknown_provider_raises_value_error(model_path):
    """providers=['NoSuchProvider'] raises ValueError naming the provider; a bare str is a TypeError."""
    with pytest.raises(ValueError, match="NoSuchProvider"):
        edgemm.InferenceSession(str(model_path("cls")), providers=["NoSuchProvider"])
    with pytest.raises(TypeError, match="list"):
        edgemm.InferenceSession(str(model_path("cls")), providers="CPUExecutionProvider")


def test_opencv_provider(model_path, fixtures_dir, cli_run_model, ort_run_model, tmp_path):
    """providers=['opencv'] is accepted on the cls model: get_providers() is ['opencv',
    'CPUExecutionProvider'] and the outputs equal `edgemm run --backend opencv` (1e-6) and ONNX
    Runtime (1e-4)."""
    feed = case_inputs("cls", fixtures_dir)
    sess = session(model_path("cls"), providers=["opencv"])
    assert sess.get_providers() == ["opencv", "CPUExecutionProvider"]
    outputs = sess.run(None, feed)
    _, cli_outputs = cli_run_model(model_path("cls"), feed, tmp_path / "cli", threads=THREADS,
                                   extra=("--backend", "opencv"))
    assert_outputs_close(["softmax_0.tmp_0"], outputs, cli_outputs, 1e-6, "opencv vs edgemm run --backend opencv")
    ort_outputs = ort_run_model(model_path("cls"), feed, tmp_path / "ort", threads=THREADS)
    assert_outputs_close(["softmax_0.tmp_0"], outputs, ort_outputs, 1e-4, "opencv vs ONNX Runtime")


def test_run_selects_outputs(model_path, fixtures_dir, cli_reference):
    """run(['pooled'], feed) returns just that output; run(['pooled', 'y']) in that order; None and
    [] return every output in the model's order (y, pooled); values are the CLI's."""
    sess = session(model_path("transformer_block"))
    feed = case_inputs("transformer_block", fixtures_dir)
    expected = cli_reference("transformer_block")
    assert_outputs_close(["pooled"], sess.run(["pooled"], feed), expected, 1e-6, "['pooled']")
    assert_outputs_close(["pooled", "y"], sess.run(["pooled", "y"], feed), expected, 1e-6, "['pooled', 'y']")
    assert_outputs_close(["y", "pooled"], sess.run(None, feed), expected, 1e-6, "None")
    assert_outputs_close(["y", "pooled"], sess.run([], feed), expected, 1e-6, "[]")
    assert_outputs_close(["y"], sess.run(["y"], feed, edgemm.RunOptions()), expected, 1e-6, "with RunOptions")


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_load_from_bytes(kind, model_path, fixtures_dir, cli_reference):
    """A model given as the file's bytes (open(path, 'rb').read()) loads and runs like the file."""
    path = model_path("transformer_block")
    with open(path, "rb") as f:
        data = kind(f.read())
    sess = session(data)
    assert [o.name for o in sess.get_outputs()] == ["y", "pooled"]
    outputs = sess.run(None, case_inputs("transformer_block", fixtures_dir))
    assert_outputs_close(["y", "pooled"], outputs, cli_reference("transformer_block"), 1e-6, kind.__name__)


@pytest.mark.parametrize("case", ["cls", "transformer_block"])
def test_disable_all_optimizations(case, model_path, fixtures_dir, cli_reference):
    """GraphOptimizationLevel.ORT_DISABLE_ALL (edgemm's passes off) gives the optimized CLI's outputs
    within 1e-5; ORT_ENABLE_BASIC is accepted too."""
    feed = case_inputs(case, fixtures_dir)
    expected = cli_reference(case)
    for level in (edgemm.GraphOptimizationLevel.ORT_DISABLE_ALL, edgemm.GraphOptimizationLevel.ORT_ENABLE_BASIC):
        sess = session(model_path(case), level=level)
        assert_outputs_close(list(expected), sess.run(None, feed), expected, 1e-5, level.name)


def test_profiling_writes_json(model_path, fixtures_dir, tmp_path):
    """enable_profiling with profile_file_prefix under tmp_path: end_profiling() returns the path of a
    Chrome trace JSON file starting with that prefix, whose events name nodes of the model."""
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "prof_")
    sess = edgemm.InferenceSession(str(model_path("transformer_block")), options)
    sess.run(None, case_inputs("transformer_block", fixtures_dir))
    path = Path(sess.end_profiling())
    assert path.parent == tmp_path and path.name.startswith("prof_") and path.suffix == ".json"
    assert path.is_file()
    trace = json.loads(path.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert events, "the profile has no events"
    graph = onnx.load(str(model_path("transformer_block"))).graph
    node_names = {n.name for n in graph.node}
    event_names = {e.get("name", "") for e in events}
    assert any(any(n and n in e for n in node_names) for e in event_names), sorted(event_names)[:10]

    quiet = session(model_path("transformer_block"))
    assert quiet.end_profiling() == ""


def test_unknown_session_option_raises_attribute_error():
    """A misspelt SessionOptions attribute raises AttributeError naming it; known ones are kept."""
    options = edgemm.SessionOptions()
    with pytest.raises(AttributeError, match="intra_op_threads"):
        options.intra_op_threads = 2
    options.intra_op_num_threads = 3
    options.inter_op_num_threads = 1
    options.execution_mode = edgemm.ExecutionMode.ORT_SEQUENTIAL
    assert options.intra_op_num_threads == 3


# ---- 4. bad inputs raise clear exceptions ----------------------------------------------------

GOOD_X = np.random.default_rng(7).random((1, 3, 48, 96), dtype=np.float32)

BAD_FEEDS = {
    "wrong_name": (None, lambda: {"image": GOOD_X}, ["'image'"]),
    "missing_input": (None, lambda: {}, ["'x'", "missing"]),
    "float64": (None, lambda: {"x": GOOD_X.astype(np.float64)}, ["'x'", "float64"]),
    "wrong_rank": (None, lambda: {"x": GOOD_X[0]}, ["'x'", "rank"]),
    "wrong_fixed_extent": (None, lambda: {"x": np.zeros((1, 4, 48, 96), np.float32)}, ["'x'", "[1,4,48,96]"]),
    "transposed": (None, lambda: {"x": np.ascontiguousarray(GOOD_X.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)},
                   ["'x'", "contiguous"]),
    "object_array": (None, lambda: {"x": np.full((1, 3, 48, 96), None, dtype=object)}, ["'x'", "object"]),
    "string_array": (None, lambda: {"x": np.full((1, 3, 48, 96), "a")}, ["'x'", "str"]),
    "python_list": (None, lambda: {"x": GOOD_X.tolist()}, ["'x'", "list"]),
    "unknown_output_name": (["no_such_output"], lambda: {"x": GOOD_X}, ["'no_such_output'"]),
}


@pytest.fixture(scope="module")
def cls_session(model_path):
    return session(model_path("cls"))


@pytest.mark.parametrize("case", list(BAD_FEEDS))
def test_bad_feed_raises(case, cls_session):
    """A bad feed raises edgemm.InvalidArgument (also a ValueError) whose message names the input or
    output, and the interpreter and session survive."""
    output_names, feed, words = BAD_FEEDS[case]
    with pytest.raises(edgemm.InvalidArgument) as raised:
        cls_session.run(output_names, feed())
    assert isinstance(raised.value, ValueError)
    assert raised.value.code == "InvalidArgument"
    for word in words:
        assert word in str(raised.value), f"message {str(raised.value)!r} lacks {word!r}"


def test_bad_feed_container_raises_type_error(cls_session):
    """A list instead of the feed dict, and a str as output_names, are TypeErrors."""
    with pytest.raises(TypeError, match="dict"):
        cls_session.run(None, [GOOD_X])
    with pytest.raises(TypeError, match="output_names"):
        cls_session.run("softmax_0.tmp_0", {"x": GOOD_X})


def test_session_survives_bad_feeds(cls_session, model_path, ort_run_model, tmp_path):
    """After every bad feed above, the same session still runs a good one correctly (vs ONNX Runtime)."""
    for output_names, feed, _ in BAD_FEEDS.values():
        with pytest.raises(edgemm.InvalidArgument):
            cls_session.run(output_names, feed())
    (out,) = cls_session.run(None, {"x": GOOD_X})
    expected = ort_run_model(model_path("cls"), {"x": GOOD_X}, tmp_path)
    np.testing.assert_allclose(out, expected["softmax_0.tmp_0"], rtol=0, atol=1e-4)


def _write(path, data):
    path.write_bytes(data)
    return str(path)


# label: (model argument from (tmp_path, bytes of a real model), accepted exception classes,
#         words the message must contain, as functions of the argument)
BAD_MODELS = {
    "missing_file": (lambda d, data: str(d / "no_such_model.onnx"), (edgemm.IoError,), lambda a: [a]),
    "missing_file_pathlike": (lambda d, data: d / "no_such_model.onnx", (edgemm.IoError,), lambda a: [str(a)]),
    "random_bytes_file": (lambda d, data: _write(d / "random.onnx", np.random.default_rng(3).bytes(4096)),
                          (edgemm.InvalidModel, edgemm.IoError), lambda a: [a]),
    "truncated_file": (lambda d, data: _write(d / "truncated.onnx", data[: len(data) // 2]),
                       (edgemm.InvalidModel, edgemm.IoError), lambda a: [a]),
    "directory": (lambda d, data: str(d), (edgemm.IoError,), lambda a: [a]),
    "random_bytes": (lambda d, data: np.random.default_rng(4).bytes(4096), (edgemm.InvalidModel,), lambda a: ["ONNX"]),
    "truncated_bytes": (lambda d, data: data[: len(data) // 3], (edgemm.InvalidModel,), lambda a: ["ONNX"]),
    "empty_bytes": (lambda d, data: b"", (edgemm.InvalidModel,), lambda a: ["empty"]),
}


@pytest.mark.parametrize("label", list(BAD_MODELS))
def test_bad_model_raises(label, tmp_path, model_path):
    """A missing file (edgemm.IoError), random or truncated bytes in a file or given as bytes
    (edgemm.InvalidModel or IoError), empty bytes and a directory raise edgemm errors whose
    message names the path (or says what is wrong with the bytes)."""
    make, classes, words = BAD_MODELS[label]
    argument = make(tmp_path, model_path("cls").read_bytes())
    with pytest.raises(edgemm.Error) as raised:
        edgemm.InferenceSession(argument)
    assert isinstance(raised.value, classes), f"{type(raised.value).__name__}: {raised.value}"
    for word in words(argument):
        assert word in str(raised.value), f"message {str(raised.value)!r} lacks {word!r}"


# ---- 5. threads ------------------------------------------------------------------------------


def test_concurrent_runs_match_serial(model_path, cli_run_model, tmp_path):
    """4 Python threads × 20 runs on ONE cls session, each run on its own seeded input, give exactly
    the outputs of serial runs of the same inputs; the serial outputs agree with one batched
    `edgemm run` of the first 8 inputs (1e-5)."""
    sess = session(model_path("cls"))
    n_threads, n_runs = 4, 20
    inputs = {
        (t, r): np.random.default_rng(1000 + 100 * t + r).random((1, 3, 48, 96), dtype=np.float32)
        for t in range(n_threads) for r in range(n_runs)
    }
    serial = {key: sess.run(None, {"x": x})[0] for key, x in inputs.items()}

    results, errors = {}, []
    barrier = threading.Barrier(n_threads)

    def worker(t):
        try:
            barrier.wait()
            for r in range(n_runs):
                results[(t, r)] = sess.run(None, {"x": inputs[(t, r)]})[0]
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hangs"
    assert not errors, errors
    assert sorted(results) == sorted(inputs)
    for key in inputs:
        assert np.array_equal(results[key], serial[key]), f"thread {key[0]} run {key[1]} differs from serial"

    keys = sorted(inputs)[:8]
    batch = np.concatenate([inputs[k] for k in keys])
    _, cli_outputs = cli_run_model(model_path("cls"), {"x": batch}, tmp_path, threads=THREADS)
    np.testing.assert_allclose(np.concatenate([serial[k] for k in keys]), cli_outputs["softmax_0.tmp_0"],
                               rtol=0, atol=1e-5)


def test_gil_released_during_run(model_path):
    """While run() executes det at 640x640, a pure-Python counter thread keeps advancing: it counts at
    least a few hundred increments strictly inside run()'s time window (20 ms away from its edges,
    with a 1 ms switch interval), which cannot happen if run() holds the GIL."""
    sess = session(model_path("det"), threads=1)
    x = np.random.default_rng(11).random((1, 3, 640, 640), dtype=np.float32)
    margin = 0.02
    samples = []  # (time, count), at most one per ms
    started, stop = threading.Event(), threading.Event()

    def counter():
        count, last = 0, 0.0
        while not stop.is_set():
            count += 1
            now = time.perf_counter()
            if now - last >= 0.001:
                samples.append((now, count))
                last = now
            if count == 1:
                started.set()

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    thread = threading.Thread(target=counter, daemon=True)
    try:
        thread.start()
        assert started.wait(10)
        windows = []
        for _ in range(8):  # a few runs, until 0.3 s of run() interior time has been observed
            t0 = time.perf_counter()
            sess.run(None, {"x": x})
            t1 = time.perf_counter()
            if t1 - t0 > 3 * margin:
                windows.append((t0 + margin, t1 - margin))
            if sum(b - a for a, b in windows) >= 0.3 and len(windows) >= 2:
                break
    finally:
        stop.set()
        thread.join(10)
        sys.setswitchinterval(old_interval)
    assert windows, "det 640x640 ran too fast to observe"
    advanced = 0
    for a, b in windows:
        inside = [count for t, count in samples if a <= t <= b]
        if inside:
            advanced += inside[-1] - inside[0]
    assert advanced >= 300, f"the counter advanced {advanced} times during {len(windows)} run(s)"


# ---- 6. memory -------------------------------------------------------------------------------


def test_input_unchanged_and_read_only_accepted(model_path, fixtures_dir, cli_reference):
    """run() neither modifies its input nor needs it writable: a read-only array runs, stays equal to
    a copy taken before, and gives the CLI's outputs."""
    x = case_inputs("transformer_block", fixtures_dir)["x"]
    before = x.copy()
    x.flags.writeable = False
    sess = session(model_path("transformer_block"))
    outputs = sess.run(None, {"x": x})
    assert np.array_equal(x, before)
    assert_outputs_close(["y", "pooled"], outputs, cli_reference("transformer_block"), 1e-6, "read-only input")


def test_misaligned_input(model_path, fixtures_dir):
    """A float32 array at an odd byte offset (np.frombuffer of read-only bytes) runs and gives
    PyTorch's reference output."""
    x = np.load(fixtures_dir / "transformer_block_x.npy")
    misaligned = np.frombuffer(b"\0" + x.tobytes(), dtype=np.float32, offset=1).reshape(x.shape)
    assert not misaligned.flags.aligned and not misaligned.flags.writeable
    y, _ = session(model_path("transformer_block")).run(None, {"x": misaligned})
    np.testing.assert_allclose(y, np.load(fixtures_dir / "transformer_block_y.npy"), rtol=1e-5, atol=1e-5)


def test_outputs_writable_and_outlive_session(model_path, fixtures_dir, cli_reference):
    """Outputs are writable numpy arrays that own or keep alive their memory
    (owndata or base is not None) and keep their values after the session is deleted and collected
    and other allocations reuse freed memory."""
    sess = session(model_path("transformer_block"))
    outputs = sess.run(None, case_inputs("transformer_block", fixtures_dir))
    for out in outputs:
        assert out.flags.writeable
        assert out.flags.owndata or out.base is not None
    del sess
    gc.collect()
    other = session(model_path("transformer_block"))  # reuses freed memory
    other.run(None, {"x": np.full((4, 16, 32), 9.0, np.float32)})
    junk = [np.full(1 << 14, np.nan, np.float32) for _ in range(64)]
    assert_outputs_close(["y", "pooled"], outputs, cli_reference("transformer_block"), 1e-6, "after del session")
    del junk
    outputs[0][...] = 0.0  # writable
    assert not outputs[0].any()


def test_outputs_not_overwritten_by_later_runs(model_path, fixtures_dir):
    """An output kept from one run keeps its values through later runs on other inputs, and writing
    into it does not change later runs' outputs (PyTorch's reference is the oracle)."""
    sess = session(model_path("transformer_block"))
    x = np.load(fixtures_dir / "transformer_block_x.npy")
    y_ref = np.load(fixtures_dir / "transformer_block_y.npy")
    first_y, first_pooled = sess.run(None, {"x": x})
    for seed in range(3):
        sess.run(None, {"x": np.random.default_rng(seed).standard_normal(x.shape, dtype=np.float32)})
    np.testing.assert_allclose(first_y, y_ref, rtol=1e-5, atol=1e-5)
    first_y[...] = np.nan
    first_pooled[...] = np.nan
    again_y, _ = sess.run(None, {"x": x})
    np.testing.assert_allclose(again_y, y_ref, rtol=1e-5, atol=1e-5)


X23 = tensor_info("x", TensorProto.FLOAT, [2, 3])
ALIAS_MODELS = {
    # name: (nodes, outputs, initializers, expected outputs as functions of x)
    "identity": ([helper.make_node("Identity", ["x"], ["y"])], [tensor_info("y", TensorProto.FLOAT, [2, 3])], [],
                 [lambda x: x]),
    "identity_chain": ([helper.make_node("Identity", ["x"], ["t"]), helper.make_node("Identity", ["t"], ["y"])],
                       [tensor_info("y", TensorProto.FLOAT, [2, 3])], [], [lambda x: x]),
    "two_identities": ([helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["x"], ["z"])],
                       [tensor_info("y", TensorProto.FLOAT, [2, 3]), tensor_info("z", TensorProto.FLOAT, [2, 3])],
                       [], [lambda x: x, lambda x: x]),
    "reshape": ([helper.make_node("Reshape", ["x", "s"], ["y"])], [tensor_info("y", TensorProto.FLOAT, [3, 2])],
                [numpy_helper.from_array(np.array([3, 2], np.int64), "s")], [lambda x: x.reshape(3, 2)]),
    "graph_input_is_output": ([], [tensor_info("x", TensorProto.FLOAT, [2, 3])], [], [lambda x: x]),
}


@pytest.mark.parametrize("name", list(ALIAS_MODELS))
def test_output_of_input_does_not_share_memory(name, tmp_path):
    """A model whose output IS its input (Identity, a chain, two Identities, Reshape, the graph input
    listed as output; built with onnx.helper) returns arrays equal to the hand-computed values that
    share memory neither with the input nor with each other; writing them leaves the input intact."""
    nodes, outputs, initializers, expected = ALIAS_MODELS[name]
    path = write_model(tmp_path / f"{name}.onnx", nodes, [X23], outputs, initializers)
    sess = edgemm.InferenceSession(str(path))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = x.copy()
    results = sess.run(None, {"x": x})
    assert len(results) == len(expected)
    for result, f in zip(results, expected):
        assert np.array_equal(result, f(before))
        assert not np.shares_memory(result, x)
        assert result.flags.writeable and (result.flags.owndata or result.base is not None)
    for i in range(len(results)):
        for j in range(i + 1, len(results)):
            assert not np.shares_memory(results[i], results[j]), f"outputs {i} and {j} share memory"
    for result in results:
        result[...] = -1.0
    assert np.array_equal(x, before)


def test_initializer_output_outlives_session(tmp_path):
    """An output that is a weight (Identity of an initializer) is a fresh array per run: writing one
    does not change the session's weight, and it stays valid after the session is deleted."""
    weight = np.random.default_rng(5).random((2, 3), dtype=np.float32)
    path = write_model(
        tmp_path / "weight.onnx",
        [helper.make_node("Identity", ["w"], ["y"])],
        [],
        [tensor_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(weight, "w")],
    )
    sess = edgemm.InferenceSession(str(path))
    (first,) = sess.run(None, {})
    (second,) = sess.run(None, {})
    assert np.array_equal(first, weight) and not np.shares_memory(first, second)
    first[...] = 0.0
    (third,) = sess.run(None, {})
    assert np.array_equal(third, weight)
    del sess
    gc.collect()
    junk = [np.full(1 << 12, np.nan, np.float32) for _ in range(64)]
    assert np.array_equal(second, weight) and np.array_equal(third, weight)
    del junk


def test_session_options_are_checked_by_name(ppocr):
    """SessionOptions values of the wrong type or range are refused at InferenceSession(), the
    message naming the attribute (not pybind11's signature dump)."""
    model = str(ppocr / "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    for attribute, value in [("intra_op_num_threads", "2"), ("intra_op_num_threads", 2**70),
                             ("graph_optimization_level", "ORT_ENABLE_ALL"), ("enable_profiling", "yes")]:
        options = edgemm.SessionOptions()
        setattr(options, attribute, value)
        with pytest.raises(edgemm.InvalidArgument, match=attribute):
            edgemm.InferenceSession(model, options)


def test_provider_options_set_precision_and_refuse_others(ppocr):
    """Provider options carry the backend's device and precision; other keys raise ValueError.
    bf16 runs (on any CPU: float32 where AVX512_BF16 is missing) within bfloat16's error of fp32."""
    model = str(ppocr / "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    x = np.random.default_rng(3).random((1, 3, 48, 192), dtype=np.float32)
    fp32 = edgemm.InferenceSession(model).run(None, {"x": x})[0]
    bf16 = edgemm.InferenceSession(model, providers=[("CPUExecutionProvider", {"precision": "bf16"})])
    np.testing.assert_allclose(bf16.run(None, {"x": x})[0], fp32, atol=2e-2)
    with pytest.raises(ValueError, match="arena"):
        edgemm.InferenceSession(model, providers=[("CPUExecutionProvider", {"arena": "1"})])
    with pytest.raises(ValueError, match="null byte"):
        edgemm.InferenceSession(model + "\0junk")
