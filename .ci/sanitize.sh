#!/bin/bash
# CI stage: AddressSanitizer + UndefinedBehaviorSanitizer (docs/limits.md).
# Configures build-asan with -Db_sanitize=address,undefined, builds only what
# the selected tests need, and runs
#   - the unit suite and the fuzz suite (the fuzzers' fixed-seed runs),
#   - the command-line limits tests (xjit_limits),
#   - a sample of the random JIT-vs-evaluator tests (XJIT_RANDOM_MODULES
#     modules per test) with kernel buffers against guard pages
#     (XJIT_GUARD_PAGES=1), since emitted code is not instrumented.
# All results end up in build-asan/meson-logs/testlog.json. Installs nothing.
# Exits non-zero when the build or any test fails.
#   bash .ci/sanitize.sh          (from anywhere; works in the repository root)
# XJIT_TIMEOUT_MULTIPLIER=N multiplies the tests' time limits (default 3:
# instrumented code runs two to three times slower than in the builds the
# limits were set for; more on a machine shared with other work).
# Each phase prints its wall and CPU seconds (CPU: user + sys of everything
# it ran; on an otherwise idle 2-core machine the wall time of a parallel
# phase is about half of it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

timed() {  # phase command...: runs the command, then prints its times
  local phase=$1
  shift
  local TIMEFORMAT=".ci/sanitize.sh: $phase took %R s wall, %U s user + %S s sys CPU"
  time "$@"
}

build=build-asan
if [[ ! -f $build/build.ninja ]]; then
  rm -rf "$build"
  # -O1 without debug info: about half the compile time of debugoptimized,
  # and sanitizer reports still name the functions.
  if ! meson setup "$build" --buildtype=custom -Doptimization=1 -Ddebug=false \
      -Db_sanitize=address,undefined -Db_lundef=false; then
    echo ".ci/sanitize.sh: meson setup failed"
    exit 1
  fi
fi

# Stop at the first error of either sanitizer; leaks fail too.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# The executables (and their dependencies) of the selected tests only: the
# benchmarks and the corpus tools are not needed here.
targets=$(python3 .ci/test_targets.py "$build" --suite unit --suite fuzz --name xjit_limits \
  --name jit_random_test_1of2 --name jit_random_test_2of2) || exit 1
# xjit_limits runs the xjit binary.
# shellcheck disable=SC2086
if ! timed build ninja -C "$build" -j "${XJIT_CI_JOBS:-$(nproc 2>/dev/null || echo 2)}" $targets tools/xjit; then
  echo ".ci/sanitize.sh: build failed"
  exit 1
fi

status=0
multiplier=${XJIT_TIMEOUT_MULTIPLIER:-3}
timed "unit and fuzz suites" meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier "$multiplier" --suite unit --suite fuzz --logbase unit || status=1
XJIT_GUARD_PAGES=1 XJIT_RANDOM_MODULES=${XJIT_RANDOM_MODULES:-40} \
  timed "limits and random sample" meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier "$multiplier" xjit_limits jit_random_test_1of2 jit_random_test_2of2 \
  --logbase sample || status=1

# One log for the CI summary, as .ci/run reads it.
cat "$build/meson-logs/unit.json" "$build/meson-logs/sample.json" > "$build/meson-logs/testlog.json"
exit $status
