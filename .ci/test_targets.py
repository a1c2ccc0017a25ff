#!/usr/bin/env python3
"""Prints the ninja targets that a selection of a build's tests needs.

  python3 .ci/test_targets.py BUILD_DIR [--suite S]... [--name N]...

A test is selected when one of its suites (meson's 'xjit:unit' counts as
'unit') is among the --suite values or its name among the --name values; with
neither, every test is. Prints, one a line, each selected test's program and
the programs and files it depends on that the build produces (its
arguments that name one, such as tools/xjit for the command-line tests,
count), relative to BUILD_DIR, so that `ninja -C BUILD_DIR $(...)` builds what those
tests run and nothing else (no benchmarks, no other tests). Exits 1 when the
selection is empty, so that a misspelt name is not a stage that tests nothing.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('build')
    parser.add_argument('--suite', action='append', default=[])
    parser.add_argument('--name', action='append', default=[])
    args = parser.parse_args()

    def introspect(what):
        return json.loads(subprocess.check_output(['meson', 'introspect', args.build, what]))

    tests = introspect('--tests')
    # What the build produces: a test's argument that is a folder of the
    # build (a fuzzer's --crash-dir) is not a target. A test's `depends`
    # are target ids (a module the test loads, say libxjit_mpi.so): their
    # files count too.
    all_targets = introspect('--targets')
    outputs = {os.path.abspath(f) for t in all_targets for f in t['filename']}
    files_of = {t['id']: t['filename'] for t in all_targets}
    root = os.path.abspath(args.build)
    selected = 0
    targets = set()
    for test in tests:
        suites = {s.split(':')[-1] for s in test['suite']}
        if (args.suite or args.name) and not (suites & set(args.suite) or test['name'] in args.name):
            continue
        selected += 1
        depends = [f for d in test.get('depends', []) for f in files_of.get(d, [d])]
        for path in test['cmd'] + depends:
            path = os.path.abspath(path)
            if path in outputs and path.startswith(root + os.sep):
                targets.add(os.path.relpath(path, root))
    if not selected:
        sys.exit(f'test_targets.py: no test of {args.build} matches the selection')
    print('\n'.join(sorted(targets)))


if __name__ == '__main__':
    main()
