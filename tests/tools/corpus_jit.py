#!/usr/bin/env python3
"""The StableHLO interpreter corpus on the JIT (issue 4's "done" criterion).

Runs every case of SHARED/corpus/stablehlo-interpret twice through xjit, with
SHARED/tools/run-corpus's own case runner (imported, so cases are run and
compared exactly as `run-corpus` does):
  - the baseline:  --backend=interpreter
  - the candidate: --backend=jit --lift  (non-scalar entry constants become
    parameters, so kernels, not constant folding, compute the answers)
and fails if any case that passes on the interpreter fails on the JIT. It
prints both counts, then every such case with the reason (expected vs got).
This is `run-corpus ... --backend=jit --lift` compared case by case; it does
not call run-corpus's main() because that names a lifted case's failure by
its temporary file rather than by the case.

  corpus_jit.py SHARED_DIR XJIT [--only SUBSTR] [--jobs N]

Exit 0: no regression; 1: some; 77 (meson's skip): SHARED or numpy absent.
"""
import argparse
import concurrent.futures
import importlib.machinery
import importlib.util
import os
import shutil
import sys


def load_runner(path):
    loader = importlib.machinery.SourceFileLoader('run_corpus', path)
    spec = importlib.util.spec_from_loader('run_corpus', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('shared')
    ap.add_argument('xjit')
    ap.add_argument('--only', default='')
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 2))
    ap.add_argument('--timeout', type=float, default=120)
    args = ap.parse_args()
    corpus = os.path.join(args.shared, 'corpus', 'stablehlo-interpret')
    runner_path = os.path.join(args.shared, 'tools', 'run-corpus')
    if not os.path.isdir(corpus) or not os.path.isfile(runner_path):
        print('SKIP: %s or %s is absent' % (corpus, runner_path))
        return 77
    try:
        import numpy  # noqa: F401  (run-corpus needs it)
    except ImportError:
        # run-corpus names its Python in its #! line (the system one, which
        # has Debian's numpy); meson may have started another one.
        with open(runner_path) as f:
            first = f.readline()
        words = first[2:].split() if first.startswith('#!') else []
        python = words[0] if words else None
        if python and python.endswith('/env'):
            python = shutil.which(words[1]) if len(words) > 1 else None
        if python and os.path.exists(python) and not os.environ.get('XJIT_CORPUS_REEXEC'):
            os.environ['XJIT_CORPUS_REEXEC'] = '1'
            os.execv(python, [python] + sys.argv)
        print('SKIP: numpy is not importable (Debian: python3-numpy)')
        return 77
    runner = load_runner(runner_path)
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus)
                   if f.endswith('.hlo') and '.tmpl.' not in f and args.only in f)

    def run_all(backend, lift):
        case_args = argparse.Namespace(xjit=os.path.abspath(args.xjit), backend=backend,
                                       lift=lift, timeout=args.timeout)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            reasons = pool.map(lambda f: runner.run_case(f, case_args)[2], files)
            return dict(zip(files, reasons))

    interpreter = run_all('interpreter', False)
    jit = run_all('jit', True)
    name = os.path.basename
    for label, results in (('interpreter', interpreter), ('jit --lift', jit)):
        failed = sum(1 for r in results.values() if r is not None)
        print('%-12s %d passed, %d failed' % (label + ':', len(files) - failed, failed))
    regressions = [f for f in files if interpreter[f] is None and jit[f] is not None]
    both = [f for f in files if interpreter[f] is not None and jit[f] is not None]
    gains = [f for f in files if interpreter[f] is not None and jit[f] is None]
    if both:
        print('--- failing on both backends (not counted against the jit):')
        for f in both:
            print('%s: jit: %s' % (name(f), jit[f]))
    if gains:
        print('--- passing on the jit only:')
        for f in gains:
            print('%s: interpreter: %s' % (name(f), interpreter[f]))
    if regressions:
        print('--- FAILING ON THE JIT, PASSING ON THE INTERPRETER (%d):' % len(regressions))
        for f in regressions:
            print('%s: %s' % (name(f), jit[f]))
    print('%d passed, %d failed' % (len(files) - len(regressions), len(regressions)))
    return 1 if regressions else 0


if __name__ == '__main__':
    sys.exit(main())
