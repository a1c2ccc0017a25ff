#!/bin/bash
# `pip install .` as a Python user does it, offline (pyproject.toml,
# docs/library.md): builds the wheel of SOURCE_DIR with Debian's python3
# in a fresh virtual environment (--system-site-packages for Debian's numpy
# and meson-python, --no-build-isolation --no-index: no PyPI), checks what
# the wheel holds (the package with its own libxjit.so, release-built and
# stripped, and libxjit_mpi.so when built with MPI; libxjit.so needing no
# libmpi), installs it into that environment and runs the example MLP from
# a folder outside the source tree. The build compiles the whole library
# again (-O2, NDEBUG), so it is a suite of its own, `wheel`, which plain
# `meson test` leaves out (meson.build: add_test_setup) and CI runs once.
# Arguments: SOURCE_DIR PYTHON WITH_MPI (1: the build found MPI, so the
# wheel must carry libxjit_mpi.so). Exits 77 (skip) when PYTHON lacks venv,
# pip or meson-python.
set -euo pipefail
source=$1 python=$2 with_mpi=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "== $*"; }
fail() { echo "wheel_test: FAIL: $*" >&2; exit 1; }

if ! "$python" -c 'import venv, ensurepip, mesonpy, numpy' 2>/dev/null; then
  echo "SKIP: $python lacks venv, ensurepip, meson-python or numpy" \
    "(Debian: apt-get install python3-venv python3-pip python3-mesonpy python3-numpy)"
  exit 77
fi

step "$python -m venv --system-site-packages"
"$python" -m venv --system-site-packages "$work/v"

step "pip wheel --no-build-isolation --no-index $source"
start=$SECONDS
# builddir: one build folder for pip's two calls into meson-python 0.12
# (metadata, then the wheel), each of which builds the project; with a
# folder of its own each, the library would be compiled twice.
"$work/v/bin/pip" wheel --no-build-isolation --no-index --no-deps -w "$work/dist" \
  --config-settings builddir="$work/build" "$source" > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "pip wheel failed"; }
echo "built in $((SECONDS - start)) s"
wheel=$(ls "$work"/dist/xjit-*.whl)
echo "$(basename "$wheel"): $(stat -c %s "$wheel") bytes"

step "the wheel's contents"
"$python" - "$wheel" "$work/unpacked" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
for name in sorted(names):
    print("  " + name)
lib = [n for n in names if n.endswith("/xjit/libxjit.so") or n == "xjit/libxjit.so"]
init = [n for n in names if n.endswith("xjit/__init__.py")]
if not lib or not init:
    sys.exit("wheel_test: FAIL: the wheel lacks xjit/libxjit.so or xjit/__init__.py")
PY
lib=$(find "$work/unpacked" -name libxjit.so)
size=$(stat -c %s "$lib")
echo "libxjit.so: $size bytes"
((size <= 20 * 1024 * 1024)) || fail "the wheel's libxjit.so is $size bytes, over 20 MB"
readelf -S "$lib" | grep -q '\.symtab' && fail "the wheel's libxjit.so is not stripped"
readelf -S "$lib" | grep -q '\.debug_' && fail "the wheel's libxjit.so has debug information"
grep -q 'NEEDED.*libmpi' <<<"$(readelf -d "$lib")" && fail "the wheel's libxjit.so needs libmpi"
# NDEBUG: no assert() left to call glibc's __assert_fail.
nm -D --undefined-only "$lib" | grep -q __assert_fail && fail "the wheel's libxjit.so has assertions (no NDEBUG)"
if [[ $with_mpi == 1 ]]; then
  [[ -n $(find "$work/unpacked" -name libxjit_mpi.so) ]] || fail "the wheel lacks libxjit_mpi.so"
  echo "libxjit_mpi.so: $(stat -c %s "$(find "$work/unpacked" -name libxjit_mpi.so)") bytes"
fi

step "pip install the wheel; the example from outside the source tree"
"$work/v/bin/pip" install --no-index --no-deps "$wheel" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "pip install failed"; }
mkdir "$work/elsewhere"
cp -r "$source/examples" "$work/elsewhere/"
(cd "$work/elsewhere" && env -u XJIT_LIBRARY -u PYTHONPATH "$work/v/bin/python" examples/python/mlp.py) ||
  fail "the example failed"
loaded=$(cd "$work/elsewhere" && env -u XJIT_LIBRARY -u PYTHONPATH "$work/v/bin/python" -c \
  'import xjit; print(xjit.library_path()); print(xjit.__version__)')
echo "$loaded"
[[ $(head -1 <<<"$loaded") == "$work/v/"* ]] || fail "xjit loaded a libxjit.so outside the environment"
echo "wheel_test: OK"
