#!/bin/bash
# Runs the StableHLO interpreter corpus (../shared/corpus/stablehlo-interpret)
# through `xjit run --backend=interpreter` with ../shared/tools/run-corpus, and
# fails unless every case passes, except the cases listed in
# corpus_divergences.txt beside this script: where StableHLO's reference
# interpreter and XLA disagree, xjit follows XLA (DESIGN.md), and each such
# case must fail with the listed message part (a listed case that passes, or
# fails otherwise, fails this test, so the list cannot go stale). Skips (exit
# 77, meson's skip code) when the shared folder or numpy for run-corpus's
# Python is absent.
#   run_corpus.sh SHARED_DIR XJIT [BACKEND]
set -u
shared=$1
xjit=$2
backend=${3:-interpreter}
corpus=$shared/corpus/stablehlo-interpret
runner=$shared/tools/run-corpus
if [[ ! -d $corpus || ! -f $runner ]]; then
  echo "SKIP: $corpus or $runner is absent"
  exit 77
fi
# run-corpus names its interpreter in its #! line; numpy must import there.
python=$(head -n 1 "$runner" | sed -n 's/^#![[:space:]]*//p' | awk '{print $1}')
[[ $python == */env ]] && python=$(head -n 1 "$runner" | awk '{print $2}')
python=${python:-python3}
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: numpy is not importable by $python (Debian: python3-numpy)"
  exit 77
fi
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)
(( jobs > 2 )) && jobs=2
output=$("$python" "$runner" "$corpus" --backend "$backend" --xjit "$xjit" --jobs "$jobs" \
         --timeout 120 --failures "$failures" --quiet)
status=$?
echo "$output"
if [[ -s $failures ]]; then
  echo "--- failures (first 100):"
  head -n 100 "$failures"
fi
last=$(echo "$output" | tail -n 1)
if [[ $status -ne 0 || ! $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  echo "run-corpus did not finish (exit $status)"
  exit 1
fi
# Each listed divergence must be among the failures, with its message.
divergences=$(dirname "$0")/corpus_divergences.txt
expected=0
unexpected=0
while IFS='|' read -r name message reason; do
  [[ -z $name || $name == \#* ]] && continue
  if grep -F "/$name.hlo: " "$failures" | grep -qF "$message"; then
    echo "expected divergence: $name ($reason)"
    expected=$((expected + 1))
  else
    echo "listed divergence $name did not fail with '$message': update corpus_divergences.txt"
    unexpected=$((unexpected + 1))
  fi
done < "$divergences"
(( BASH_REMATCH[2] == expected && unexpected == 0 ))
