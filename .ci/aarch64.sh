#!/bin/bash
# CI stage: cross-build xjit for AArch64 (cross/aarch64-linux-gnu.ini) into
# build-aarch64 with warnings as errors and run the AArch64 test suites under
# qemu-aarch64 (meson's exe_wrapper). Installs nothing (.ci/install does).
# Builds only the test programs and xjit (no benchmarks) and runs the
# suites that check the jit against the evaluator on AArch64 (see
# docs/aarch64.md for the list and why); meson writes
# build-aarch64/meson-logs/testlog.json. Exits non-zero on any failure.
#   bash .ci/aarch64.sh     (from anywhere; works in the repository root)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo ".ci/aarch64.sh: $tool not found (run .ci/install)" >&2
    exit 1
  fi
done

rm -rf build-aarch64
# Debian's arm64 libasmjit.a (what the stage was verified with): the
# subproject's arm headers warn (deprecated enum arithmetic) under --werror.
# ccache, where the machine has it, through a second cross file that
# overrides the compilers (never required).
cross_files=(--cross-file cross/aarch64-linux-gnu.ini)
command -v ccache >/dev/null 2>&1 && cross_files+=(--cross-file cross/aarch64-linux-gnu-ccache.ini)
if ! meson setup build-aarch64 "${cross_files[@]}" --werror -Dasmjit=system \
    --buildtype=debugoptimized; then
  echo ".ci/aarch64.sh: meson setup failed" >&2
  exit 1
fi

# The tests run under qemu: single-threaded OpenBLAS (xjit's own pool runs
# the threaded tests), and each listed test's programs only.
export OPENBLAS_NUM_THREADS=1
tests=(${XJIT_AARCH64_TESTS:-})
if ((${#tests[@]} == 0)); then
  tests=(
    jit_ops_test jit_driver_test jit_blas_test jit_threads_test jit_control_flow_test
    jit_math_accuracy_test jit_random_test_1of2 jit_random_test_2of2 jit_reduce_test
    jit_remainder_test jit_sort_test jit_compile_cache_test jit_math_routines_test
    jit_int_vector_test jit_complex_test jit_row_fusion_test jit_dynamic_slice_test
    jit_loops_test jit_loops_guarded models programs zoo linalg_models
    conformance capi_test capi_example xjit_cli npy
  )
fi
name_args=()
for t in "${tests[@]}"; do name_args+=(--name "$t"); done
listed=$(python3 .ci/test_targets.py build-aarch64 "${name_args[@]}") || exit 1
mapfile -t targets <<<"$listed"
if ! ninja -C build-aarch64 -j "$(nproc 2>/dev/null || echo 2)" "${targets[@]}" tools/xjit; then
  echo ".ci/aarch64.sh: build failed" >&2
  exit 1
fi
meson test -C build-aarch64 --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier 3 "${tests[@]}"
