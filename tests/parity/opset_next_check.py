#!/usr/bin/env python3
"""The checks of the opset 18-21 parity test (tests/parity/opset_next_test.sh).

usage: opset_next_check.py EDGEMM MANIFEST ORT_DIR OUT_DIR [CASE_SUBSTRING ...]

For every case of MANIFEST (tests/parity/opset_next_models.py) with ONNX Runtime's outputs in
ORT_DIR (tests/parity/opset_next_ort.js), runs `EDGEMM run MODEL -i ... -o OUT_DIR/<case>-<t>t
--threads t` for each thread count of the case and checks: exit 0, the same output names (in
order), dtypes and shapes as ONNX Runtime, and values: integer and bool outputs equal, float
outputs with NaN where ONNX Runtime has NaN, the same infinities and finite values within
atol + rtol * |expected| (the case's tolerance). Then two more cases:
- inspect: `EDGEMM inspect --json` on the multi-op opset-21 model lists opsets {ai.onnx: 21},
  its ops, and a static output shape equal to ONNX Runtime's output shape;
- unsupported: an opset-22 model is refused by `run` and `inspect` with exit 4 (unsupported)
  and "Unsupported: ... opset 22; edgemm supports opsets up to 21".
Prints one line per case (PASS / FAIL / SKIP when ONNX Runtime refuses the model) and
`N cases, M pass`; exits 1 when a case fails. CASE_SUBSTRING arguments keep only matching cases.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys

import numpy as np


def first_line(text, limit=300):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return (lines[0] if lines else '')[:limit]


def call(args, timeout=120):
    """subprocess.run, or a CompletedProcess with returncode 'none' when the program cannot start."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(args, 'none', '', f'cannot run {args[0]}: {e}')


def run_edgemm(edgemm, case, threads, out_root):
    out = os.path.join(out_root, f"{case['name']}-{threads}t")
    cmd = [edgemm, 'run', case['model'], '-o', out, '--threads', str(threads), '--json']
    for name, file in case['inputs'].items():
        cmd += ['-i', f'{name}={file}']
    p = call(cmd)
    report = None
    if p.returncode == 0:
        try:
            report = json.loads(p.stdout)
        except ValueError:
            pass
    return {'threads': threads, 'rc': p.returncode, 'stderr': p.stderr, 'report': report, 'dir': out}


def compare_values(want, got, atol, rtol):
    """None when equal within tolerance, else the problem."""
    if want.dtype.kind in 'biu':
        bad = want != got
        if bad.any():
            i = tuple(int(v) for v in np.argwhere(bad)[0])
            return (f'{int(bad.sum())}/{want.size} values differ, first at {i}: got {got[i]!r}, '
                    f'expected {want[i]!r}')
        return None
    w, g = want.astype(np.float64), got.astype(np.float64)
    problems = []
    nan_w, nan_g = np.isnan(w), np.isnan(g)
    if (nan_w != nan_g).any():
        i = tuple(int(v) for v in np.argwhere(nan_w != nan_g)[0])
        problems.append(f'{int((nan_w != nan_g).sum())} NaN positions differ, first {i}: got {g[i]}, expected {w[i]}')
    both = ~(nan_w | nan_g)
    inf_bad = both & (np.isinf(w) | np.isinf(g)) & (w != g)
    if inf_bad.any():
        i = tuple(int(v) for v in np.argwhere(inf_bad)[0])
        problems.append(f'{int(inf_bad.sum())} infinities differ, first {i}: got {g[i]}, expected {w[i]}')
    fin = both & np.isfinite(w) & np.isfinite(g)
    err = np.where(fin, np.abs(g - w), 0.0)
    over = fin & (err > atol + rtol * np.abs(w))
    if over.any():
        i = tuple(int(v) for v in np.unravel_index(np.argmax(np.where(over, err, -1.0)), w.shape))
        problems.append(f'{int(over.sum())}/{w.size} values off by more than {atol:g}+{rtol:g}*|x|, max abs err '
                        f'{err[i]:.3g} at {i}: got {g[i]:.7g}, expected {w[i]:.7g}')
    return '; '.join(problems) or None


def check_run(case, ort, run):
    """None when edgemm's run matches ONNX Runtime's outputs, else the problem."""
    if run['rc'] != 0:
        return f"exit {run['rc']}: {first_line(run['stderr'])}"
    want_names = [o['name'] for o in ort['outputs']]
    got_names = [o['name'] for o in (run['report'] or {}).get('outputs', [])]
    if run['report'] is not None and got_names != want_names:
        return f'outputs {got_names}, expected {want_names}'
    problems = []
    for o in ort['outputs']:
        want = np.load(o['file'])
        path = os.path.join(run['dir'], re.sub(r'[/:]', '_', o['name']) + '.npy')
        if not os.path.exists(path):
            problems.append(f"{o['name']}: not written")
            continue
        got = np.load(path)
        if got.dtype != want.dtype:
            problems.append(f"{o['name']}: dtype {got.dtype}, expected {want.dtype}")
            continue
        if got.shape != want.shape:
            problems.append(f"{o['name']}: shape {list(got.shape)}, expected {list(want.shape)}")
            continue
        diff = compare_values(want, got, case['atol'], case['rtol'])
        if diff:
            problems.append(f"{o['name']}: {diff}" if len(ort['outputs']) > 1 else diff)
    return '; '.join(problems) or None


def check_inspect(edgemm, spec, ort_results):
    p = call([edgemm, 'inspect', spec['model'], '--json'])
    if p.returncode != 0:
        return f'inspect exit {p.returncode}: {first_line(p.stderr)}'
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return f'inspect --json printed no JSON: {first_line(p.stdout)!r}'
    problems = []
    if j.get('opsets') != {'ai.onnx': spec['opset']}:
        problems.append(f"opsets {j.get('opsets')}, expected {{'ai.onnx': {spec['opset']}}}")
    missing = [op for op in spec['ops'] if op not in j.get('op_histogram', {})]
    if missing:
        problems.append(f"ops {missing} not in op_histogram {j.get('op_histogram')}")
    ort = ort_results.get(spec['case'], {})
    if 'outputs' not in ort:
        problems.append('no ONNX Runtime output to compare the shape with')
    else:
        want = {o['name']: o['shape'] for o in ort['outputs']}
        got = {o['name']: o.get('shape') for o in j.get('outputs', [])}
        if got != want:
            problems.append(f'static output shapes {got}, ONNX Runtime ran {want}')
    return '; '.join(problems) or None


def check_unsupported(edgemm, spec):
    problems = []
    want = re.compile(r"Unsupported: .*opset %d; edgemm supports opsets up to 21" % spec['opset'])
    for cmd in ('run', 'inspect'):
        args = [edgemm, cmd, spec['model']]
        p = call(args)
        if p.returncode != 4 or not want.search(p.stderr):
            problems.append(f'{cmd}: exit {p.returncode} (expected 4), stderr {first_line(p.stderr)!r}')
    return '; '.join(problems) or None


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    edgemm, manifest_file, ort_dir, out_root = sys.argv[1:5]
    only = sys.argv[5:]
    manifest = json.load(open(manifest_file))
    ort_results = json.load(open(os.path.join(ort_dir, 'results.json')))
    cases = [c for c in manifest['cases'] if not only or any(s in c['name'] for s in only)]
    jobs = [(c, t) for c in cases if 'outputs' in ort_results.get(c['name'], {}) for t in c['threads']]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {(c['name'], t): pool.submit(run_edgemm, edgemm, c, t, out_root) for c, t in jobs}
        runs = {k: f.result() for k, f in futures.items()}

    total = passed = skipped = 0
    failures = []
    width = max([len(c['name']) for c in cases] + [20])

    def report(name, problem, skip=False):
        nonlocal total, passed, skipped
        total += 1
        if skip:
            skipped += 1
            print(f'SKIP {name:<{width}}  {problem}')
        elif problem:
            failures.append(name)
            print(f'FAIL {name:<{width}}  {problem}')
        else:
            passed += 1
            print(f'PASS {name}')

    for c in cases:
        ort = ort_results.get(c['name'], {'error': 'no ONNX Runtime result'})
        if 'outputs' not in ort:
            report(c['name'], f"ONNX Runtime refuses the model: {first_line(ort['error'])}", skip=True)
            continue
        per_threads = [(t, check_run(c, ort, runs[(c['name'], t)])) for t in c['threads']]
        problems = [(t, p) for t, p in per_threads if p]
        if not problems:
            report(c['name'], None)
        elif len(problems) == len(per_threads) and len({p for _, p in problems}) == 1:
            report(c['name'], problems[0][1])  # the same on every thread count
        else:
            report(c['name'], '; '.join(f'[{t} threads] {p}' for t, p in problems))
    if not only or any(s in 'inspect' for s in only):
        report(f"inspect_{manifest['inspect']['case']}", check_inspect(edgemm, manifest['inspect'], ort_results))
    if not only or any(s in 'unsupported_opset22' for s in only):
        report('unsupported_opset22', check_unsupported(edgemm, manifest['unsupported']))
    print(f'{total} cases, {passed} pass' + (f', {skipped} skipped (ONNX Runtime refuses them)' if skipped else '')
          + (f', {len(failures)} fail' if failures else ''))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
