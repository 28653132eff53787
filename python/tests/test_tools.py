"""edgemm.convert and edgemm.quantize against the C++ CLI (`edgemm convert --json`, `edgemm quantize
--json`) as the oracle: the same options give the same report (op histograms, opsets, node counts,
quantized nodes) and a model whose outputs equal those of the CLI's file, run with
edgemm.InferenceSession on the same seeded inputs; converted models also equal the original."""

import json

import numpy as np
import pytest

import edgemm
from testenv import ROOT, run_cli

CLS = ROOT / "models" / "ppocrv4" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
BLOCK = ROOT / "tests" / "fixtures" / "transformer_block.onnx"  # x [batch, seq, 32] -> y, pooled
CLS_SHAPE = [1, 3, 48, 192]


def cli_json(*args):
    """`edgemm ARGS... --json` that must succeed: its JSON report."""
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cli_error_code(*args):
    """The error code name (e.g. "InvalidArgument") of `edgemm ARGS... --json`, which must fail."""
    proc = run_cli(*args, "--json")
    assert proc.returncode > 0, proc.stderr
    return json.loads(proc.stdout)["error"]["code"]


def outputs(path, feeds):
    """The outputs of `path` run with edgemm.InferenceSession (1 thread) on `feeds`."""
    options = edgemm.SessionOptions()
    options.intra_op_num_threads = 1
    session = edgemm.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_outputs_equal(a, b, atol=0.0):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=0, atol=atol)


def cls_input(seed=0):
    return {"x": np.random.default_rng(seed).standard_normal(CLS_SHAPE).astype(np.float32)}


def block_inputs():
    """The fixture's input and a seeded one of another shape."""
    return [
        {"x": np.load(ROOT / "tests" / "fixtures" / "transformer_block_x.npy")},
        {"x": np.random.default_rng(1).standard_normal((3, 5, 32)).astype(np.float32)},
    ]


# ---------------------------------------------------------------------------------------------------
# convert

CONVERT_CASES = [
    ({"fix_shape": {"x": CLS_SHAPE}}, ["--fix-shape", "x=1,3,48,192"]),
    ({"fix_shape": {"x": CLS_SHAPE}, "simplify": True}, ["--fix-shape", "x=1,3,48,192", "--simplify"]),
    ({"opset": 13, "fix_shape": {"x": CLS_SHAPE}}, ["--opset", "13", "--fix-shape", "x=1,3,48,192"]),
    ({"simplify": True}, ["--simplify"]),
]
CONVERT_IDS = ["fix_shape", "fix_shape+simplify", "opset13+fix_shape", "simplify"]


@pytest.mark.parametrize("options, flags", CONVERT_CASES, ids=CONVERT_IDS)
def test_convert_matches_cli_and_original(tmp_path, options, flags):
    """edgemm.convert on the PP-OCR angle classifier (a) writes a model that loads in
    edgemm.InferenceSession and gives the original's outputs within 1e-5 on a seeded input (oracle:
    the original model), (b) reports the opsets, node counts, folds, rewrites and op histograms that
    `edgemm convert ... --json --no-verify` reports for the same flags, and whose outputs equal those
    of the CLI's file (oracle: the CLI)."""
    py_out, cli_out = tmp_path / "py.onnx", tmp_path / "cli.onnx"
    report = edgemm.convert(str(CLS), str(py_out), **options)
    cli = cli_json("convert", CLS, "-o", cli_out, "--no-verify", *flags)

    assert report["output"] == str(py_out) and py_out.is_file()
    assert report["source_opset"] == cli["opset"]["from"]
    assert report["target_opset"] == cli["opset"]["to"]
    if "opset" in options:
        assert report["target_opset"] == options["opset"]
    assert report["nodes_before"] == cli["nodes"]["before"]
    assert report["nodes_after"] == cli["nodes"]["after"]
    assert report["folded_nodes"] == cli["folded_nodes"]
    assert report["removed_nodes"] == cli["removed_nodes"]
    assert report["rewrites"] == cli["rewrites"]
    assert report["ops_before"] == cli["ops_before"]
    assert report["ops_after"] == cli["ops_after"]
    assert sum(report["ops_after"].values()) == report["nodes_after"]

    feeds = cls_input()
    original = outputs(CLS, feeds)
    converted = outputs(py_out, feeds)
    assert_outputs_equal(converted, original, atol=1e-5)
    assert_outputs_equal(converted, outputs(cli_out, feeds))


def test_convert_accepts_pathlike_and_keeps_opset_by_default(tmp_path):
    """Paths may be os.PathLike; without opset the model's opset is kept (the CLI's default)."""
    report = edgemm.convert(CLS, tmp_path / "p.onnx", fix_shape={"x": CLS_SHAPE})
    assert report["source_opset"] == report["target_opset"]
    assert (tmp_path / "p.onnx").is_file()


@pytest.mark.parametrize(
    "options, flags, error",
    [
        ({"opset": 13}, ["--opset", "13"], edgemm.Unsupported),
        ({"opset": 5}, ["--opset", "5"], edgemm.Unsupported),
        ({"fix_shape": {"y": CLS_SHAPE}}, ["--fix-shape", "y=1,3,48,192"], edgemm.InvalidArgument),
    ],
    ids=["opset13-without-shapes", "opset5", "fix_shape-unknown-input"],
)
def test_convert_errors_match_cli(tmp_path, options, flags, error):
    """Conversions the CLI refuses raise the exception of the CLI's error code, with nothing written:
    opset 9→13 without static shapes (Unsupported), an opset outside 7-17, a fixed shape for an input
    the model lacks (InvalidArgument) (oracle: the CLI's --json error code)."""
    out = tmp_path / "out.onnx"
    with pytest.raises(error) as info:
        edgemm.convert(str(CLS), str(out), **options)
    assert info.value.code == cli_error_code("convert", CLS, "-o", tmp_path / "cli.onnx", "--no-verify", *flags)
    assert not out.exists()


def test_convert_output_is_model_raises(tmp_path):
    """Output == model raises InvalidArgument and leaves the model untouched (the CLI exits 2)."""
    model = tmp_path / "cls.onnx"
    model.write_bytes(CLS.read_bytes())
    with pytest.raises(edgemm.InvalidArgument, match="model itself"):
        edgemm.convert(str(model), str(model), fix_shape={"x": CLS_SHAPE})
    assert model.read_bytes() == CLS.read_bytes()
    assert run_cli("convert", model, "-o", model, "--no-verify").returncode == 2


def test_convert_missing_model_raises_io_error(tmp_path):
    """A model file that does not exist raises IoError, the CLI's code for it."""
    with pytest.raises(edgemm.IoError) as info:
        edgemm.convert(str(tmp_path / "none.onnx"), str(tmp_path / "out.onnx"))
    assert info.value.code == cli_error_code("convert", tmp_path / "none.onnx", "-o", tmp_path / "o.onnx",
                                             "--no-verify")


# ---------------------------------------------------------------------------------------------------
# quantize: fp16 and int4-weight

QUANTIZE_CASES = [
    ("fp16", {}, []),
    ("int4-weight", {"accuracy_level": 0}, ["--accuracy-level", "0"]),
    ("int4-weight", {"accuracy_level": 4}, ["--accuracy-level", "4"]),
    ("int4-weight", {"accuracy_level": 4, "block_size": 16}, ["--accuracy-level", "4", "--block-size", "16"]),
]
QUANTIZE_IDS = ["fp16", "int4-acc0", "int4-acc4", "int4-acc4-block16"]


@pytest.mark.parametrize("scheme, options, flags", QUANTIZE_CASES, ids=QUANTIZE_IDS)
def test_quantize_weights_match_cli(tmp_path, scheme, options, flags):
    """edgemm.quantize scheme fp16 / int4-weight on the transformer block writes a file whose outputs
    equal, bit for bit, those of the file `edgemm quantize --scheme S FLAGS` writes (both run with
    InferenceSession on the same inputs), with the report's counts and sizes the CLI's (oracle: the
    CLI)."""
    py_out, cli_out = tmp_path / "py.onnx", tmp_path / "cli.onnx"
    report = edgemm.quantize(str(BLOCK), str(py_out), scheme=scheme, **options)
    cli = cli_json("quantize", BLOCK, "-o", cli_out, "--scheme", scheme, *flags)
    assert report["scheme"] == cli["scheme"] == scheme
    assert report["bytes_before"] == cli["bytes"]["before"]
    assert report["bytes_after"] == cli["bytes"]["after"]
    if scheme == "fp16":
        assert report["weights_converted"] == cli["weights_converted"] > 0
    else:
        assert report["quantized"] == cli["int4"]["quantized"] and report["quantized"]
        assert [list(s) for s in report["skipped"]] == [[s["node"], s["reason"]] for s in cli["int4"]["skipped"]]
    for feeds in block_inputs():
        assert_outputs_equal(outputs(py_out, feeds), outputs(cli_out, feeds))


def test_quantize_int4_defaults_match_cli_defaults(tmp_path):
    """edgemm.quantize(scheme="int4-weight") with its defaults writes what `edgemm quantize --scheme
    int4-weight` writes with the CLI's defaults (documented "as `edgemm quantize`"): the same
    accuracy_level, hence the same outputs (oracle: the CLI)."""
    py_out, cli_out = tmp_path / "py.onnx", tmp_path / "cli.onnx"
    edgemm.quantize(str(BLOCK), str(py_out), scheme="int4-weight")
    cli = cli_json("quantize", BLOCK, "-o", cli_out, "--scheme", "int4-weight")
    for feeds in block_inputs():
        for a, b in zip(outputs(py_out, feeds), outputs(cli_out, feeds)):
            assert np.array_equal(a, b), (
                f"outputs differ by up to {np.abs(a - b).max():g} from the CLI's (whose default accuracy_level "
                f"is {cli['int4']['accuracy_level']}, block_size {cli['int4']['block_size']})")


# ---------------------------------------------------------------------------------------------------
# quantize: int8 with calibration


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """Four seeded calibration inputs: as a list of feeds, and as .npy files in a folder."""
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.standard_normal((1, 8, 32)).astype(np.float32)} for _ in range(4)]
    folder = tmp_path_factory.mktemp("calib")
    for i, feed in enumerate(feeds):
        np.save(folder / f"sample_{i}.npy", feed["x"])
    return feeds, folder


class Reader:
    """An ONNX Runtime CalibrationDataReader: get_next() gives feeds, then None."""

    def __init__(self, feeds):
        self._items = iter(feeds)

    def get_next(self):
        return next(self._items, None)


@pytest.mark.parametrize("method", ["mse", "minmax"])
@pytest.mark.parametrize("source", ["feeds", "folder", "reader"])
def test_quantize_int8_matches_cli(tmp_path, calibration, method, source):
    """int8 calibrated on a list of {input: array} feeds (or the same samples as a folder of .npy
    files, or an ONNX Runtime CalibrationDataReader), speed_check=False, equals `edgemm quantize
    --calib DIR --samples 4 --seed 0 --no-speed-check --method M` on those samples written as .npy
    files: same quantized nodes, samples used, predicted SQNR and weight bits, outputs within 1e-6
    (oracle: the CLI's file, both run with InferenceSession)."""
    feeds, folder = calibration
    data = {"feeds": feeds, "folder": str(folder), "reader": Reader(feeds)}[source]
    py_out, cli_out = tmp_path / "py.onnx", tmp_path / "cli.onnx"
    report = edgemm.quantize(str(BLOCK), str(py_out), scheme="int8", calibration=data, samples=4, seed=0,
                             method=method, speed_check=False)
    cli = cli_json("quantize", BLOCK, "-o", cli_out, "--calib", folder, "--samples", "4", "--seed", "0",
                   "--no-speed-check", "--method", method)
    assert [name for name, _ in report["quantized"]] == [q["node"] for q in cli["int8"]["quantized"]]
    assert report["quantized"]
    assert report["samples_used"] == cli["int8"]["calibration"]["samples_used"] == 4
    assert report["predicted_sqnr_db"] == pytest.approx(cli["int8"]["predicted_error"]["sqnr_db"], abs=1e-6)
    assert report["weight_bits"] == cli["weight_bits"]
    assert report["bytes_after"] == cli["bytes"]["after"]
    for feed in block_inputs():
        assert_outputs_equal(outputs(py_out, feed), outputs(cli_out, feed), atol=1e-6)


def test_quantize_output_is_model_raises(tmp_path):
    """Output == model raises InvalidArgument and leaves the model untouched (the CLI exits 2)."""
    model = tmp_path / "block.onnx"
    model.write_bytes(BLOCK.read_bytes())
    with pytest.raises(edgemm.InvalidArgument, match="model itself"):
        edgemm.quantize(str(model), str(model), scheme="fp16")
    assert model.read_bytes() == BLOCK.read_bytes()
    assert run_cli("quantize", model, "-o", model, "--scheme", "fp16").returncode == 2


def test_quantize_bad_scheme_raises(tmp_path):
    """An unknown scheme raises InvalidArgument naming it, writing nothing (the CLI exits 2)."""
    out = tmp_path / "q.onnx"
    with pytest.raises(edgemm.InvalidArgument, match="int3"):
        edgemm.quantize(str(BLOCK), str(out), scheme="int3")
    assert not out.exists()
    assert run_cli("quantize", BLOCK, "-o", out, "--scheme", "int3").returncode == 2


def test_quantize_int8_without_calibration_raises(tmp_path):
    """int8 without calibration data raises InvalidArgument saying it needs some (the CLI exits 2,
    "needs a calibration set"), writing nothing."""
    out = tmp_path / "q.onnx"
    with pytest.raises(edgemm.InvalidArgument, match="calibration"):
        edgemm.quantize(str(BLOCK), str(out), scheme="int8")
    assert not out.exists()
    assert run_cli("quantize", BLOCK, "-o", out).returncode == 2


def test_quantize_bad_calibration_items_raise(tmp_path):
    """Calibration items that are not {input: numpy array} dicts, an empty calibration list, and a bad
    activation_type raise InvalidArgument; nothing is written."""
    with pytest.raises(edgemm.InvalidArgument, match="calibration item 0"):
        edgemm.quantize(str(BLOCK), str(tmp_path / "q.onnx"), calibration=[np.zeros((1, 8, 32), np.float32)])
    with pytest.raises(edgemm.InvalidArgument):
        edgemm.quantize(str(BLOCK), str(tmp_path / "q.onnx"), calibration=[{"x": [[1.0]]}])
    with pytest.raises(edgemm.InvalidArgument, match="calibration"):
        edgemm.quantize(str(BLOCK), str(tmp_path / "q.onnx"), calibration=[], speed_check=False)
    with pytest.raises(edgemm.InvalidArgument, match="activation_type"):
        edgemm.quantize(str(BLOCK), str(tmp_path / "q.onnx"), calibration=[], activation_type="int4")
    assert not (tmp_path / "q.onnx").exists()


def test_quantize_missing_model_raises_io_error(tmp_path):
    """A missing model raises IoError (the CLI exits 6)."""
    with pytest.raises(edgemm.IoError):
        edgemm.quantize(str(tmp_path / "none.onnx"), str(tmp_path / "q.onnx"), scheme="fp16")
    assert run_cli("quantize", tmp_path / "none.onnx", "-o", tmp_path / "q.onnx", "--scheme", "fp16").returncode == 6


def test_endless_reader_reads_only_samples(tmp_path):
    """An endless CalibrationDataReader is read lazily: `samples` feeds are taken and used (the
    review saw memory grow without bound when the whole reader was drained first)."""

    class Endless:
        def get_next(self):
            return {"x": np.random.default_rng(0).random(CLS_SHAPE, dtype=np.float32)}

    report = edgemm.quantize(str(CLS), str(tmp_path / "q.onnx"), calibration=Endless(), samples=3, speed_check=False)
    assert report["samples_used"] == 3


def test_calibration_mistakes_are_named(tmp_path):
    """A feed for an input the model lacks, a lone str where a list of names goes, and samples
    outside [1, 1000000] are refused with the value named, before any conversion runs."""
    feed = {"y": np.zeros(CLS_SHAPE, np.float32)}
    with pytest.raises(edgemm.InvalidArgument, match="'y'"):
        edgemm.quantize(str(CLS), str(tmp_path / "q.onnx"), calibration=[feed])
    good = [{"x": np.zeros(CLS_SHAPE, np.float32)}]
    with pytest.raises(TypeError, match="op_types"):
        edgemm.quantize(str(CLS), str(tmp_path / "q.onnx"), calibration=good, op_types="Conv")
    with pytest.raises(edgemm.InvalidArgument, match="samples"):
        edgemm.quantize(str(CLS), str(tmp_path / "q.onnx"), calibration=good, samples=0)
    assert not (tmp_path / "q.onnx").exists()
