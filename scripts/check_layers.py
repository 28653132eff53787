#!/usr/bin/python3
"""Fails when a file of src/ includes a header of a layer it may not use (docs/architecture.md),
a file of plugins/ or examples/ includes anything but edgemm's public headers, or a file of the
CLI (tools/cli/) anything but public headers and its own.

Each folder of src/ is a layer (one CMake library); a layer may include its own headers, those of
the layers in its LAYERS entry, and the public headers (include/edgemm/) of those layers. The
example plugin and the examples are built against the installed API only (EXTERNAL). Run from
anywhere; prints each offending include as FILE:LINE and exits 1, or exits 0 when there are none.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Layer -> the layers it may include, besides itself. Engine layers only look down; the tool-side
# libraries (convert, quant, targets, bench) and pipelines sit above the session.
ENGINE = ["core", "ir", "kernels", "runtime", "passes", "backends", "session"]
LAYERS = {name: ENGINE[:i] for i, name in enumerate(ENGINE)}
LAYERS["convert"] = ENGINE
LAYERS["quant"] = ENGINE + ["convert"]
LAYERS["targets"] = ENGINE + ["convert"]
LAYERS["pipelines"] = ENGINE
LAYERS["capi"] = ENGINE + ["pipelines"]
LAYERS["bench"] = ENGINE + ["pipelines"]

# Public headers (include/edgemm/...) -> the layer that implements them.
PUBLIC = {
    "status.h": "core",
    "tensor.h": "core",
    "value_info.h": "core",
    "runtime_options.h": "core",
    "profile.h": "runtime",
    "image_view.h": "core",
    "npy.h": "core",
    "atomic_file.h": "core",
    "process_memory.h": "core",
    "memory_limit.h": "core",
    "onnx_model.h": "ir",
    "model_estimates.h": "ir",
    "tools/inspect.h": "passes",
    "tools/prune.h": "passes",
    "tools/convert.h": "convert",
    "tools/calibration.h": "quant",
    "tools/quantize.h": "quant",
    "tools/head_scoring.h": "quant",
    "tools/targets.h": "targets",
    "tools/bench.h": "bench",
    "tools/bench_inputs.h": "bench",
    "tools/model_profile.h": "bench",
    "cpu.h": "kernels",
    "memory_check.h": "ir",
    "plugin_abi.h": "backends",
    "backends.h": "backends",
    "inferencer.h": "session",
    "edgemm_c.h": "capi",
}

# Folders built against the installed API: their sources may include edgemm's public headers
# (quoted "edgemm/..." includes) and, where the value is True, their own files.
EXTERNAL = {"plugins": False, "examples": False, "tools/cli": True, "python": True}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of_header(header):
    """The layer a quoted include names, or None for a header outside src/ and include/edgemm/."""
    parts = header.split("/")
    if parts[0] == "edgemm":
        rest = "/".join(parts[1:])
        return "pipelines" if rest.startswith("pipelines/") else PUBLIC.get(rest, "unknown public header")
    return parts[0] if parts[0] in LAYERS else None


def main():
    bad = []
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        layer = path.relative_to(ROOT / "src").parts[0]
        allowed = set(LAYERS.get(layer, [])) | {layer}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = layer_of_header(match.group(1))
            if target is not None and target not in allowed:
                bad.append(f"{path.relative_to(ROOT)}:{number}: layer '{layer}' includes \"{match.group(1)}\""
                           f" of layer '{target}' (allowed: {', '.join(sorted(allowed))})")
    for folder, own in EXTERNAL.items():
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".h", ".cc", ".c", ".cpp") or "node_modules" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = INCLUDE.match(line)
                if not match or match.group(1).startswith("edgemm/"):
                    continue
                if own and (path.parent / match.group(1)).is_file():
                    continue
                bad.append(f"{path.relative_to(ROOT)}:{number}: includes \"{match.group(1)}\"; {folder}/ may"
                           " include only edgemm's public headers (\"edgemm/...\")" + (" and its own" if own else ""))
    for message in bad:
        print(message)
    if bad:
        print(f"{len(bad)} include(s) against the layering (scripts/check_layers.py, docs/architecture.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
