#!/bin/bash
# Installs the build into a temporary DESTDIR and uses it as a user would
# (docs/library.md): the header, libxjit.so's soname and exported symbols
# (nothing but xjit_*), the example C program compiled with nothing but
# `cc examples/c/*.c $(pkg-config --cflags --libs xjit)` against that prefix
# (pkg-config's sysroot set to the DESTDIR), a static link against libxjit.a,
# and the Python package from the install tree on the example MLP; that
# libxjit.so needs no libmpi (libxjit_mpi.so is installed beside it) and is
# at most 20 MB as installed (stripped).
# Arguments: BUILD_DIR SOURCE_DIR PREFIX LIBDIR PYTHON_DIR PYTHON.
set -euo pipefail
build=$1 source=$2 prefix=$3 libdir=$4 pydir=$5 python=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

step() { echo "== $*"; }
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

step "meson install --destdir"
meson install -C "$build" --destdir "$root" --no-rebuild --quiet --skip-subprojects
[[ $libdir == /* ]] || libdir="$prefix/$libdir"
lib="$root$libdir"
[[ -f "$root$prefix/include/xjit/xjit.h" ]] || fail "no include/xjit/xjit.h"
[[ -x "$root$prefix/bin/xjit" ]] || fail "no bin/xjit"
[[ -f "$lib/libxjit.a" ]] || fail "no libxjit.a"
[[ -f "$lib/pkgconfig/xjit.pc" ]] || fail "no pkgconfig/xjit.pc"

step "libxjit.so: soname and exported symbols"
soname=$(readelf -d "$lib/libxjit.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libxjit.so.0 ]] || fail "soname is '$soname', expected libxjit.so.0"
[[ -e "$lib/libxjit.so.0" ]] || fail "no libxjit.so.0 link"
exported=$(nm -D --defined-only "$lib/libxjit.so" | awk '{print $3}')
others=$(grep -v '^xjit_' <<<"$exported" || true)
[[ -z $others ]] || fail "libxjit.so exports non-xjit_ symbols: $(head -5 <<<"$others")"
count=$(grep -c '^xjit_' <<<"$exported")
((count > 100)) || fail "only $count xjit_ symbols exported"
echo "exports $count symbols, all xjit_*; NEEDED: $(readelf -d "$lib/libxjit.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v absl | tr '\n' ' ')(and Abseil's)"
grep -q asmjit <<<"$(readelf -d "$lib/libxjit.so")" && fail "libxjit.so needs a shared asmjit"

step "libxjit.so: no MPI needed, libxjit_mpi.so beside it, installed size"
# MPI is the module libxjit_mpi.so, loaded on first use (docs/library.md):
# the library itself must load on a machine without Open MPI.
grep -q 'NEEDED.*libmpi' <<<"$(readelf -d "$lib/libxjit.so")" && fail "libxjit.so needs libmpi"
if [[ -f "$build/lib/libxjit_mpi.so" ]]; then
  [[ -f "$lib/libxjit_mpi.so" ]] || fail "no libxjit_mpi.so beside libxjit.so"
  nm -D --defined-only "$lib/libxjit_mpi.so" | awk '{print $3}' | grep -qvx xjit_mpi_module &&
    fail "libxjit_mpi.so exports more than xjit_mpi_module"
fi
# What is installed is stripped (meson.build: strip=true): a few MB, not the
# build tree's tens of MB of line tables (27 MB at -g1).
size=$(stat -L -c %s "$lib/libxjit.so")
echo "installed libxjit.so: $size bytes (build tree: $(stat -L -c %s "$build/lib/libxjit.so") bytes)"
((size <= 20 * 1024 * 1024)) || fail "installed libxjit.so is $size bytes, over 20 MB (not stripped?)"

step "cc examples/c/*.c \$(pkg-config --cflags --libs xjit)"
export PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_PATH="" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs xjit)
echo "pkg-config: $flags"
cc "$source"/examples/c/*.c $flags -o "$work/example"
LD_LIBRARY_PATH="$lib" "$work/example" > "$work/out.txt" || { cat "$work/out.txt"; fail "example failed"; }
cat "$work/out.txt"
grep -q '^mlp: OK$' "$work/out.txt" || fail "example did not print 'mlp: OK'"

step "static: libxjit.a with pkg-config --static"
static_flags=$(pkg-config --cflags --libs --static xjit | sed 's/-lxjit/-Wl,-Bstatic -lxjit -Wl,-Bdynamic/')
cc "$source"/examples/c/*.c $static_flags -o "$work/example-static"
readelf -d "$work/example-static" | grep -q 'libxjit' && fail "static example needs libxjit.so"
"$work/example-static" | grep -q '^mlp: OK$' || fail "static example failed"
echo "static example: mlp: OK"

step "python3 -c 'import xjit' from the install tree"
[[ $pydir == /* ]] || pydir="$prefix/$pydir"
(cd "$work" && PYTHONPATH="$root$pydir" "$python" "$source/examples/python/mlp.py") ||
  fail "python example failed"
echo "install_test: OK"
