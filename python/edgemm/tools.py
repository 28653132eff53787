"""edgemm.quantize and edgemm.convert: `edgemm quantize` and `edgemm convert` for Python
(docs/quantize.md, docs/convert.md). Both write the output whole or not at all and return a
report dict."""

import itertools
import os

from edgemm import _edgemm


def _check_path(value, what):
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{what} must be a file path (str or os.PathLike), got {type(value).__name__}")


def _int(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return value


def _names(value, what):
    """A list of str from a list/tuple/set of str (a lone str is refused: it is not a list)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a list of str, got {type(value).__name__}")
    names = list(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} must hold str, got {type(name).__name__}")
    return names


def convert(model, output, *, opset=None, fix_shape=None, simplify=False):
    """Rewrites the ONNX file `model` into `output` with standard ops only: `opset` (7-17; None
    keeps the model's), `fix_shape` ({input: [extents]}) pinned and, with `simplify`, shape
    arithmetic folded. Unlike `edgemm convert`, the result is not verified against ONNX Runtime:
    run it with edgemm.InferenceSession. Returns the report (opsets, node counts, rewrites, op
    histograms)."""
    _check_path(model, "model")
    _check_path(output, "output")
    if fix_shape is not None and not isinstance(fix_shape, dict):
        raise TypeError(f"fix_shape must be a dict {{input name: [extents]}}, got {type(fix_shape).__name__}")
    shapes = {str(k): [_int(e, f"fix_shape['{k}']") for e in v] for k, v in (fix_shape or {}).items()}
    opset = 0 if opset is None else _int(opset, "opset")
    return _edgemm._convert(model, output, opset, shapes, bool(simplify))


def _feeds(calibration, samples):
    """Calibration data as a list of at most `samples` feed dicts (the first ones), or a path (a
    folder or manifest of .npy files, from which the C++ side draws `samples`)."""
    if calibration is None or isinstance(calibration, (str, bytes)) or hasattr(calibration, "__fspath__"):
        return calibration
    if hasattr(calibration, "get_next"):  # ONNX Runtime's CalibrationDataReader
        calibration = iter(calibration.get_next, None)
    if not hasattr(calibration, "__iter__"):
        raise TypeError(f"calibration must be feeds, a reader or a path, got {type(calibration).__name__}")
    feeds = list(itertools.islice(calibration, samples))
    if not feeds:
        raise _edgemm.InvalidArgument("the calibration data is empty: give at least one feed {input name: array}")
    return feeds


def quantize(
    model,
    output,
    *,
    scheme="int8",
    calibration=None,
    method="mse",
    percentile=99.99,
    per_channel=True,
    reduce_range=None,
    quantize_depthwise=None,
    activation_type="uint8",
    op_types=None,
    exclude_nodes=(),
    speed_check=True,
    budget_db=30.0,
    samples=256,
    seed=0,
    threads=0,
    block_size=32,
    accuracy_level=4,
    awq=False,
):
    """Post-training quantization of the ONNX file `model` into `output`, as `edgemm quantize`.

    scheme: "int8" (QDQ: int8 weights, calibrated activations), "mixed" (int8 with the most
    sensitive nodes in float until the outputs reach `budget_db` dB SQNR), "int4-weight" (MatMul
    weights to MatMulNBits, `block_size` 16/32/64/128, `accuracy_level` 4 (activations quantized
    to int8 per block) or 0 (float32 activations), `awq` for activation-aware scales) or "fp16"
    (weights stored as float16). The defaults are `edgemm quantize`'s.

    calibration (int8, mixed, awq): a list or iterable of feeds ({input name: numpy array}) or an
    ONNX Runtime CalibrationDataReader (get_next()), of which the first `samples` are used (read
    lazily: an endless reader is fine); or a folder / JSON manifest of .npy files for a one-input
    model, of which `samples` are drawn with `seed`. method: "minmax", "percentile"
    (with `percentile`), "entropy" or "mse". reduce_range (7-bit weights) and quantize_depthwise
    default to this CPU's best: both follow AVX-512 VNNI as in `edgemm quantize`. speed_check
    keeps only nodes that run faster in int8 here.

    Returns the report: the nodes quantized and skipped (with reasons), calibration counts, the
    predicted SQNR, the file sizes."""
    _check_path(model, "model")
    _check_path(output, "output")
    samples = _int(samples, "samples")
    if not 1 <= samples <= 1000000:
        raise _edgemm.InvalidArgument(f"samples must be in [1, 1000000], got {samples}")
    options = {
        "method": method,
        "percentile": float(percentile),
        "per_channel": bool(per_channel),
        "reduce_range": reduce_range,
        "quantize_depthwise": quantize_depthwise,
        "activation_type": activation_type,
        "op_types": _names(op_types, "op_types") if op_types is not None else None,
        "exclude_nodes": _names(exclude_nodes, "exclude_nodes"),
        "speed_check": bool(speed_check),
        "budget_db": budget_db,
        "samples": samples,
        "seed": _int(seed, "seed"),
        "threads": _int(threads, "threads"),
        "block_size": _int(block_size, "block_size"),
        "accuracy_level": _int(accuracy_level, "accuracy_level"),
        "awq": bool(awq),
    }
    if scheme == "int4-weight" and accuracy_level not in (0, 4):
        # Levels 1-3 compute as 0 in edgemm's kernels (float32 A): only the two that differ.
        raise _edgemm.InvalidArgument(f"accuracy_level must be 0 or 4, got {accuracy_level}")
    if activation_type not in ("uint8", "int8"):
        raise _edgemm.InvalidArgument(f"activation_type must be uint8 or int8, got '{activation_type}'")
    return _edgemm._quantize(model, output, scheme, _feeds(calibration, samples), options)
