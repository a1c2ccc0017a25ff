#!/bin/bash
# Runs mpi_module_test with a libxjit.so that has no libxjit_mpi.so beside it
# and none on the loader's path: a folder holding only a link to the build's
# libxjit.so.0, put first on LD_LIBRARY_PATH (ahead of the program's
# RUNPATH), so the module lookup has nowhere to succeed.
#   mpi_module_absent.sh PROGRAM LIBXJIT_SO MODE
set -euo pipefail
program=$1 library=$2 mode=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$(readlink -f "$library")" "$work/libxjit.so.0"
LD_LIBRARY_PATH="$work" "$program" "$mode"
