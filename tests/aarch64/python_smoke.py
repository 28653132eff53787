"""The Python package on aarch64, run by the arm64 interpreter under qemu-user
(tests/aarch64/python_test.sh, ctest aarch64_python; docs/aarch64.md "Python").

usage: python_smoke.py ROOT OUT_DIR [THREADS]

Checks, on the arm64 side:
- the interpreter is aarch64's and `edgemm._edgemm` is the arm64 build of the module (its file name
  ends in the interpreter's EXT_SUFFIX, .cpython-311-aarch64-linux-gnu.so);
- a bad input is an edgemm.InvalidArgument (also a ValueError) carrying edgemm's message;
- OcrPipeline reads ROOT/data/demo/photo_text.jpg: the lines go to OUT_DIR/ocr.txt (one a line) and
  OUT_DIR/ocr.json (OcrResult.to_dict()), compared with the lines drawn on it by the host side.
Prints one line per step with its time.
"""

import json
import os
import platform
import sys
import sysconfig
import time

T0 = time.monotonic()

import numpy as np  # noqa: E402

import edgemm  # noqa: E402


def step(name, start, detail=""):
    print(f"{name}: {time.monotonic() - start:.1f} s{' ' + detail if detail else ''}", flush=True)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    root, out_dir = sys.argv[1], sys.argv[2]
    threads = int(sys.argv[3]) if len(sys.argv) == 4 else 2
    os.makedirs(out_dir, exist_ok=True)

    module = edgemm._edgemm.__file__
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert platform.machine() == "aarch64", platform.machine()
    assert module.endswith(suffix) and "aarch64" in suffix, (module, suffix)
    step("import", T0, f"(edgemm {edgemm.__version__}, numpy {np.__version__}, Python {platform.python_version()} "
         f"{platform.machine()}; {os.path.basename(module)})")

    start = time.monotonic()
    model = os.path.join(root, "models", "ppocrv4", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    session = edgemm.InferenceSession(model, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    try:
        session.run(None, {name: np.zeros((1, 3, 48), np.float32)})
    except edgemm.InvalidArgument as e:
        assert isinstance(e, ValueError) and name in str(e), e
        detail = f"(InvalidArgument: {e})"
    else:
        raise AssertionError("a rank-3 input to a rank-4 model was accepted")
    step("bad-input", start, detail)

    start = time.monotonic()
    ocr = edgemm.OcrPipeline(os.path.join(root, "models", "ppocrv4"), threads=threads)
    result = ocr.run(os.path.join(root, "data", "demo", "photo_text.jpg"))
    with open(os.path.join(out_dir, "ocr.txt"), "w", encoding="utf-8") as f:
        f.writelines(line.text + "\n" for line in result)
    with open(os.path.join(out_dir, "ocr.json"), "w", encoding="utf-8") as f:
        json.dump(result.to_dict(), f, ensure_ascii=False, indent=1)
    step("ocr", start, f"({len(result)} lines, threads {threads}: " + " | ".join(line.text for line in result) + ")")


if __name__ == "__main__":
    main()
