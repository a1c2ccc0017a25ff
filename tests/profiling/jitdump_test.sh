#!/bin/bash
# perf sees the JIT's kernels through the jitdump file (jit/code/jitdump.h): records
# `xjit bench` with `perf record -k 1 -e cpu-clock`, runs `perf inject --jit`,
# and checks that `perf report` names the kernel and `perf annotate --stdio`
# shows its instructions with the lines of the kernel program they compute.
# The sequence of docs/profiling.md. Skips (77) with the reason where perf is
# missing or may not record here. Arguments: XJIT MODULE.hlo KERNEL (a prefix of the kernel's symbol).
set -euo pipefail
xjit=$1 module=$2 kernel=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "jitdump_test: FAIL: $*" >&2; exit 1; }

command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
if ! perf record -k 1 -e cpu-clock -o "$work/probe.data" -- true >"$work/probe.txt" 2>&1; then
  skip "perf record cannot record here: $(grep -v '^$' "$work/probe.txt" | head -3 | tr '\n' ' ')"
fi

echo "== XJIT_JITDUMP=1 perf record -k 1 -e cpu-clock xjit bench"
XJIT_JITDUMP=1 XJIT_JITDUMP_DIR="$work" perf record -k 1 -e cpu-clock -o "$work/perf.data" \
  "$xjit" bench "$module" --iterations 40 >"$work/bench.txt" 2>"$work/record.txt" ||
  { cat "$work/record.txt" "$work/bench.txt"; fail "perf record failed"; }
cat "$work/bench.txt"
dump=$(ls "$work"/jit-*.dump 2>/dev/null | head -1)
[[ -n $dump ]] || fail "xjit wrote no jit-PID.dump in $work"
pid=${dump##*/jit-}
pid=${pid%.dump}
ls "$work/xjit-$pid/" | grep -qF "${kernel//:/.}" || fail "no source text for the kernel in $work/xjit-$pid"

echo "== perf inject --jit"
perf inject --jit -i "$work/perf.data" -o "$work/perf.jit.data" 2>"$work/inject.txt" ||
  { cat "$work/inject.txt"; fail "perf inject --jit failed"; }
ls "$work"/jitted-"$pid"-*.so >/dev/null 2>&1 || fail "perf inject made no jitted-$pid-*.so"

echo "== perf report"
perf report -i "$work/perf.jit.data" --stdio --no-children --sort dso,sym 2>/dev/null \
  >"$work/report.txt" || fail "perf report failed"
head -20 "$work/report.txt" | grep -v '^#' | grep -v '^$' | head -6
grep -q "\[\.\] $kernel" "$work/report.txt" || fail "perf report does not name $kernel"
grep "\[\.\] $kernel" "$work/report.txt" | grep -q 'jitted-' ||
  fail "$kernel is not attributed to a jitted-*.so (the injected code)"

symbol=$(grep -o "\[\.\] $kernel[^ ]*" "$work/report.txt" | head -1 | cut -c5-)

echo "== perf annotate --stdio $symbol"
perf annotate -i "$work/perf.jit.data" --stdio "$symbol" 2>/dev/null >"$work/annotate.txt" ||
  fail "perf annotate failed"
sed -n 1,40p "$work/annotate.txt"
# Instructions of the kernel (x86-64: vector or scalar SSE/AVX moves and the
# final ret), and lines of the kernel program text interleaved as source.
grep -qE '\b(v?movups|v?movaps|vmovdqu|movss|vmovss|ret)\b' "$work/annotate.txt" ||
  fail "perf annotate shows no instructions of $kernel"
grep -qE '%[0-9]+ = f32 ' "$work/annotate.txt" ||
  fail "perf annotate shows no kernel program lines (JIT_CODE_DEBUG_INFO)"
# Each program line names the HLO instruction it belongs to (issue 29).
grep -qE '%[0-9]+ = f32 .*  ; [A-Za-z_]' "$work/annotate.txt" ||
  fail "perf annotate's program lines name no HLO instruction"
echo "jitdump_test: OK"
