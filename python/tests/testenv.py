"""Where the Python tests find the source tree and the `edgemm` CLI, and how they run it: one
place for conftest.py's fixtures and the test modules' module-level constants (which parametrize
lists need before any fixture exists).

    EDGEMM_ROOT  the source tree (default: the checkout holding this file): models/,
                 tests/fixtures/, data/, tools/reference/
    EDGEMM_CLI   the `edgemm` program (default <root>/build/bin/edgemm); a relative path is taken
                 from the working folder, else from the root

Nothing under /work/shared is read: the tests use only the source tree and temporary folders.
"""

import os
import pathlib
import subprocess

import pytest

CLI_TIMEOUT_S = 300


def _not_shared(path):
    """`path` resolved, refusing one under /work/shared."""
    resolved = pathlib.Path(path).resolve()
    shared = pathlib.Path("/work/shared")
    if resolved == shared or shared in resolved.parents:
        pytest.fail(f"the tests must not read {resolved} (under /work/shared)")
    return resolved


def _cli_path():
    value = os.environ.get("EDGEMM_CLI")
    if not value:
        return ROOT / "build" / "bin" / "edgemm"
    path = pathlib.Path(value)
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    return _not_shared(path)


ROOT = _not_shared(os.environ.get("EDGEMM_ROOT", pathlib.Path(__file__).resolve().parents[2]))
CLI = _cli_path()


def run_cli(*args, timeout=CLI_TIMEOUT_S):
    """Runs `edgemm ARGS...` in the repository root; returns the CompletedProcess (text)."""
    return subprocess.run([str(CLI), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
