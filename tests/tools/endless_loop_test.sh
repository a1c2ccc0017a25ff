#!/bin/bash
# `xjit run/bench --max-while-iterations N` bounds a while loop on both
# backends (RESOURCE_EXHAUSTED, exit 1), and Ctrl-C (SIGINT) stops an endless
# run with exit status 130 and "xjit: interrupted". Every run is bounded by
# `timeout` so that a regression fails instead of hanging. Argument: XJIT.
set -uo pipefail
xjit=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "endless_loop_test: FAIL: $*" >&2; exit 1; }
cat >"$work/endless.hlo" <<'HLO'
HloModule endless
cond {
  c = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(b, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
HLO
# A loop of exactly 5 iterations passes a limit of 5 and fails a limit of 4.
cat >"$work/five.hlo" <<'HLO'
HloModule five
cond {
  c = s32[] parameter(0)
  five = s32[] constant(5)
  ROOT lt = pred[] compare(c, five), direction=LT
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(b, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
HLO

for backend in jit interpreter; do
  for command in run bench; do
    timeout 60 "$xjit" "$command" "$work/endless.hlo" --backend=$backend \
      --max-while-iterations 1000 >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [[ $rc == 1 ]] || fail "$command --backend=$backend: exit $rc, expected 1 ($(cat "$work/err.txt"))"
    grep -q "more than 1000 iterations" "$work/err.txt" ||
      fail "$command --backend=$backend: message: $(cat "$work/err.txt")"
  done
  out=$(timeout 60 "$xjit" run "$work/five.hlo" --backend=$backend --max-while-iterations 5) ||
    fail "five iterations under a limit of 5 failed on $backend"
  [[ $out == *5* ]] || fail "five.hlo printed '$out' on $backend"
  timeout 60 "$xjit" run "$work/five.hlo" --backend=$backend --max-while-iterations 4 \
    >/dev/null 2>&1 && fail "five iterations passed a limit of 4 on $backend"
  echo "$backend: --max-while-iterations OK"

  # Ctrl-C: SIGINT to a run that would never end.
  timeout 60 "$xjit" run "$work/endless.hlo" --backend=$backend 2>"$work/err.txt" &
  pid=$!
  sleep 1
  kill -INT "$(pgrep -P $pid || echo $pid)" 2>/dev/null
  wait $pid
  rc=$?
  [[ $rc == 130 ]] || fail "Ctrl-C on $backend: exit $rc, expected 130 ($(cat "$work/err.txt"))"
  grep -q "xjit: interrupted" "$work/err.txt" || fail "Ctrl-C on $backend: $(cat "$work/err.txt")"
  echo "$backend: Ctrl-C OK"
done
timeout 10 "$xjit" run "$work/endless.hlo" --max-while-iterations -1 >/dev/null 2>"$work/err.txt" &&
  fail "--max-while-iterations -1 accepted"
grep -q "non-negative integer" "$work/err.txt" || fail "bad value message: $(cat "$work/err.txt")"
echo "endless_loop_test: OK"
