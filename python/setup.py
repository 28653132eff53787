"""Builds the extension module edgemm._edgemm with the project's CMake build and packages it with
the Python files of edgemm/ (pyproject.toml holds the metadata).

The build folder is $EDGEMM_BUILD_DIR, else the checkout's build/ (the one scripts/demo.sh and
scripts/test.sh make): when it is configured, only the target _edgemm is built in it; otherwise
scripts/build.sh configures it for this interpreter and builds that target. Nothing is downloaded.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    """build_ext that builds the CMake target _edgemm and copies the module into the package."""

    def build_extension(self, ext):
        build_dir = pathlib.Path(os.environ.get("EDGEMM_BUILD_DIR", ROOT / "build")).resolve()
        if (build_dir / "build.ninja").exists():
            subprocess.run(["cmake", "--build", str(build_dir), "--target", "_edgemm"], check=True)
        else:
            env = dict(os.environ, EDGEMM_TARGETS="_edgemm")
            subprocess.run(
                ["bash", str(ROOT / "scripts" / "build.sh"), str(build_dir), f"-DPython_EXECUTABLE={sys.executable}"],
                check=True,
                env=env,
            )
        built = build_dir / "python" / "edgemm" / pathlib.Path(self.get_ext_filename(ext.name)).name
        if not built.exists():
            sys.exit(f"the build made no {built}: is it configured for this Python ({sys.version.split()[0]})?")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("edgemm._edgemm", sources=[])], cmdclass={"build_ext": CMakeBuild})
