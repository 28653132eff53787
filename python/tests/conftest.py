"""Shared fixtures of the edgemm Python tests.

Paths come from the environment so that the tests run against any build:

    EDGEMM_ROOT, EDGEMM_CLI  as testenv.py reads them

Oracles other than the package itself: the C++ CLI (`run_cli`, `run_cli_json`, `cli_run_model`)
and ONNX Runtime 1.30 through tools/reference/ort_run.js (`ort_run_model`, skipped when node or
onnxruntime-node is missing).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import testenv
from testenv import CLI_TIMEOUT_S


@pytest.fixture(scope="session")
def root():
    """The source tree (testenv.ROOT: $EDGEMM_ROOT, default the checkout holding the tests)."""
    return testenv.ROOT


@pytest.fixture(scope="session")
def cli():
    """The `edgemm` program (testenv.CLI: $EDGEMM_CLI, default <root>/build/bin/edgemm)."""
    if not testenv.CLI.is_file():
        pytest.fail(f"the edgemm CLI is not at {testenv.CLI} (set EDGEMM_CLI)")
    return testenv.CLI


@pytest.fixture(scope="session")
def fixtures_dir(root):
    """<root>/tests/fixtures."""
    return root / "tests" / "fixtures"


@pytest.fixture(scope="session")
def ppocr(root):
    """The PP-OCRv4 model folder, <root>/models/ppocrv4."""
    path = root / "models" / "ppocrv4"
    if not path.is_dir():
        pytest.skip(f"no PP-OCRv4 models at {path}")
    return path


@pytest.fixture(scope="session")
def python_exe():
    """The interpreter running the tests (Debian's /usr/bin/python3, which has numpy), for
    subprocesses that import edgemm with the inherited PYTHONPATH."""
    return sys.executable


@pytest.fixture(scope="session")
def run_cli(cli):
    """run_cli(*args, check=True, timeout=CLI_TIMEOUT_S) -> CompletedProcess (text output) of
    `edgemm ARGS`. With check, a non-zero exit fails the test showing stderr."""

    def run(*args, check=True, timeout=CLI_TIMEOUT_S, **kwargs):
        argv = [str(cli)] + [str(a) for a in args]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
        if check and done.returncode != 0:
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        return done

    return run


@pytest.fixture(scope="session")
def run_cli_json(run_cli):
    """run_cli_json(*args, check=True) -> the parsed JSON that `edgemm ARGS --json` prints (also
    its error report {"error": {"code", "message"}} when check=False and the command fails)."""

    def run(*args, check=True, **kwargs):
        done = run_cli(*args, "--json", check=check, **kwargs)
        try:
            return json.loads(done.stdout)
        except json.JSONDecodeError:
            pytest.fail(f"edgemm {' '.join(map(str, args))} --json printed no JSON:\n{done.stdout}\n{done.stderr}")

    return run


def npy_file_name(value_name):
    """The file name the CLI and ort_run.js give an output: '/' and ':' become '_'."""
    return value_name.replace("/", "_").replace(":", "_") + ".npy"


def _save_inputs(inputs, folder):
    folder.mkdir(parents=True, exist_ok=True)
    args = []
    for i, (name, array) in enumerate(inputs.items()):
        path = folder / f"input{i}.npy"
        np.save(path, array)
        args += ["--input", f"{name}={path}"]
    return args


@pytest.fixture(scope="session")
def cli_run_model(run_cli_json):
    """cli_run_model(model, {name: array}, workdir, threads=1, extra=()) -> (report, {output name:
    array}): `edgemm run MODEL --input NAME=FILE.npy ... --output-dir DIR --threads N --json`
    on the arrays saved under `workdir`, with the outputs read back from DIR."""

    def run(model, inputs, workdir, threads=1, extra=()):
        workdir = Path(workdir)
        args = _save_inputs(inputs, workdir / "cli_in")
        out_dir = workdir / "cli_out"
        report = run_cli_json("run", model, *args, "--output-dir", out_dir, "--threads", threads, *extra)
        outputs = {o["name"]: np.load(out_dir / npy_file_name(o["name"])) for o in report["outputs"]}
        return report, outputs

    return run


@pytest.fixture(scope="session")
def ort_runner(root):
    """The argv prefix of ONNX Runtime 1.30's runner (node tools/reference/ort_run.js), or a skip
    when node or onnxruntime-node is not installed."""
    script = root / "tools" / "reference" / "ort_run.js"
    node = shutil.which("node")
    if node is None or not script.is_file():
        pytest.skip("ONNX Runtime oracle unavailable: needs node and tools/reference/ort_run.js")
    if not (root / "tools" / "reference" / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip("ONNX Runtime oracle unavailable: cd tools/reference && npm install --ignore-scripts")
    return [node, str(script)]


@pytest.fixture(scope="session")
def ort_run_model(ort_runner):
    """ort_run_model(model, {name: array}, workdir, threads=1, opt_level="all") -> {output name:
    array} computed by ONNX Runtime 1.30 (CPU) on the arrays saved under `workdir`."""

    def run(model, inputs, workdir, threads=1, opt_level="all"):
        workdir = Path(workdir)
        args = _save_inputs(inputs, workdir / "ort_in")
        out_dir = workdir / "ort_out"
        argv = ort_runner + [str(model), *args, "--output-dir", str(out_dir), "--threads", str(threads),
                             "--opt-level", opt_level, "--json"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}\n{done.stderr}")
        report = json.loads(done.stdout)
        return {o["name"]: np.load(o["file"]) for o in report["outputs"]}

    return run
