#!/bin/sh
# Runs fft_benchmark (build dir as $1, default build) and prints FFTW's
# time / xjit's time per length from the "min" CPU-time aggregates.
build=${1:-build}
"$build/benchmarks/fft/fft_benchmark" --benchmark_min_time=0.2 --benchmark_repetitions=10 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_format=json 2>/dev/null | python3 -c '
import json, sys
runs = json.load(sys.stdin)["benchmarks"]
best = {}
for r in runs:
    if r.get("aggregate_name") == "min":
        name, n = r["run_name"].split("/")
        best[(name, n)] = r["cpu_time"]
for n in ["1024", "65536", "1048576", "1009"]:
    x, f = best.get(("BM_Xjit", n)), best.get(("BM_Fftw", n))
    if x is None:
        continue
    ratio = "%.2f" % (f / x) if f else "n/a (no FFTW)"
    print("n=%-8s xjit %10.1f ns  fftw %10s ns  fftw/xjit %s" % (n, x, "%.1f" % f if f else "-", ratio))
'
