#!/usr/bin/env python3
"""xjit against XLA:CPU on the JAX models of models/generate.py, at realistic sizes.

  python benchmarks/models/run_models.py [--xjit build/tools/xjit] [--threads 1 2]
      [--models NAME ...] [--iterations 5] [--warmup-seconds 1] [--work DIR]

Needs JAX (the XLA:CPU baseline and the module generator); without it the
script says so and exits 0. For each model and thread count T it
  1. builds the model at --size bench (models/generate.py's MODELS) with seeded
     inputs and writes the unoptimised HLO and the inputs to --work;
  2. times XLA:CPU in a fresh process pinned with `taskset -c 0..T-1`:
     compile = `jax.jit(f).lower(*args).compile()` (the lowering to StableHLO
     is not counted, and a trivial compile first takes XLA's one-time set-up), run = the median of --iterations calls of the compiled
     executable on device-resident inputs (block_until_ready), after a warm-up
     of --warmup-seconds (untimed calls, at least one: the steady state of a
     training loop, with caches warm and each system's threads started);
  3. times xjit the same way with `taskset -c 0..T-1 xjit bench MODULE ARGS
     --threads T --iterations N --warmup-ms W` (compile ms: parse excluded; run
     ms: median after the same warm-up).
Thread control for XLA:CPU: its intra-op pool is sized from the process's CPU
affinity (taskset), and with T = 1 XLA_FLAGS also gets
--xla_cpu_multi_thread_eigen=false (Eigen's dot/convolution single-threaded).
(`intra_op_parallelism_threads=...`, often quoted, is not an XLA flag: XLA
ignores it.) Both systems get the same inputs, in the same run, one after the
other; the table prints ratios (XLA's time / xjit's time: > 1 means xjit is
faster) and the load average before and after, since the machine may be shared.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models"))


def cpus(threads):
  return ",".join(str(i) for i in range(threads))


def xla_worker(opts):
  """In a fresh, pinned process: time XLA:CPU on one model; print JSON."""
  if opts.threads == 1:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false").strip()
  import numpy as np
  import generate
  jax = generate._jax()
  # XLA's one-time set-up (LLVM, the CPU client) is not the model's compile:
  # a trivial compile first.
  jax.jit(lambda x: x + 1).lower(np.float32(1)).compile()
  fn, args = generate.MODELS[opts.worker](opts.size)
  jitted = jax.jit(fn, keep_unused=True)
  lowered = jitted.lower(*args)
  if opts.write:
    d = os.path.join(opts.work, opts.worker)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "module.hlo"), "w") as f:
      f.write(lowered.as_text(dialect="hlo"))
    for i, a in enumerate(args):
      np.save(os.path.join(d, f"arg{i}.npy"), generate.to_npy_array(a))
  start = time.perf_counter()
  compiled = lowered.compile()
  compile_ms = (time.perf_counter() - start) * 1e3
  device_args = [jax.device_put(a) for a in args]
  warmup_start = time.perf_counter()
  while True:  # warm-up: at least one call, then until --warmup-seconds have passed
    jax.block_until_ready(compiled(*device_args))
    if time.perf_counter() - warmup_start >= opts.warmup_seconds:
      break
  times = []
  for _ in range(opts.iterations):
    start = time.perf_counter()
    jax.block_until_ready(compiled(*device_args))
    times.append((time.perf_counter() - start) * 1e3)
  times.sort()
  print(json.dumps(dict(compile_ms=compile_ms, run_ms=times[len(times) // 2])))


def run_xla(name, threads, opts, write):
  cmd = ["taskset", "-c", cpus(threads), sys.executable, os.path.abspath(__file__),
         "--worker", name, "--threads", str(threads), "--size", opts.size,
         "--iterations", str(opts.iterations), "--warmup-seconds", str(opts.warmup_seconds),
         "--work", opts.work]
  if write:
    cmd.append("--write")
  r = subprocess.run(cmd, capture_output=True, text=True)
  if r.returncode != 0:
    raise RuntimeError(f"XLA worker for {name} failed:\n{r.stderr[-2000:]}")
  return json.loads(r.stdout.strip().splitlines()[-1])


def run_xjit(name, threads, opts):
  d = os.path.join(opts.work, name)
  n_args = 0
  while os.path.exists(os.path.join(d, f"arg{n_args}.npy")):
    n_args += 1
  cmd = ["taskset", "-c", cpus(threads), opts.xjit, "bench", os.path.join(d, "module.hlo"),
         *[os.path.join(d, f"arg{i}.npy") for i in range(n_args)],
         "--threads", str(threads), "--iterations", str(opts.iterations),
         "--warmup-ms", str(int(opts.warmup_seconds * 1000))]
  r = subprocess.run(cmd, capture_output=True, text=True)
  if r.returncode != 0:
    return dict(error=(r.stderr.strip().splitlines() or ["failed"])[-1])
  out = {}
  for line in r.stdout.splitlines():
    key, _, value = line.partition(":")
    if key in ("compile ms", "run ms", "kernels", "interpreted steps"):
      out[key.replace(" ", "_")] = float(value)
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--xjit", default=os.path.join(ROOT, "build", "tools", "xjit"))
  ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
  ap.add_argument("--models", nargs="*", default=None)
  ap.add_argument("--iterations", type=int, default=5)
  ap.add_argument("--warmup-seconds", type=float, default=1.0)
  ap.add_argument("--size", default="bench", choices=["bench", "test"])
  ap.add_argument("--work", default="/tmp/xjit-models-bench")
  ap.add_argument("--worker", help=argparse.SUPPRESS)
  ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
  opts = ap.parse_args()
  if opts.worker:
    opts.threads = opts.threads[0]
    return xla_worker(opts)
  try:
    import jax  # noqa: F401  (only to see whether it is there)
  except ImportError:
    print("run_models.py: JAX is not installed (pip install jax): the XLA:CPU baseline and the "
          "benchmark-size modules need it; nothing measured.")
    return 0
  import generate
  names = opts.models or list(generate.MODELS)
  if not os.path.exists(opts.xjit):
    print(f"run_models.py: no xjit at {opts.xjit} (build it, or pass --xjit)")
    return 1
  os.makedirs(opts.work, exist_ok=True)
  load_before = os.getloadavg()
  rows = []
  for name in names:
    for t in opts.threads:
      xla = run_xla(name, t, opts, write=(t == opts.threads[0]))
      xj = run_xjit(name, t, opts)
      rows.append((name, t, xla, xj))
      print(f"# {name} T={t}: xla {xla} xjit {xj}", file=sys.stderr, flush=True)
  load_after = os.getloadavg()
  print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
        f"{os.cpu_count()} CPUs; iterations {opts.iterations}, "
        f"after {opts.warmup_seconds} s of warm-up each")
  print()
  print("| model | threads | XLA compile ms | xjit compile ms | compile ratio | XLA run ms "
        "| xjit run ms | run ratio | xjit kernels / interpreted |")
  print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
  for name, t, xla, xj in rows:
    if "error" in xj:
      print(f"| {name} | {t} | {xla['compile_ms']:.1f} | error: {xj['error']} | | "
            f"{xla['run_ms']:.2f} | | | |")
      continue
    print(f"| {name} | {t} | {xla['compile_ms']:.1f} | {xj['compile_ms']:.1f} | "
          f"{xla['compile_ms'] / xj['compile_ms']:.1f} | {xla['run_ms']:.2f} | "
          f"{xj['run_ms']:.2f} | {xla['run_ms'] / xj['run_ms']:.2f} | "
          f"{int(xj['kernels'])} / {int(xj['interpreted_steps'])} |")
  print()
  print("ratio = XLA's time / xjit's time (> 1: xjit faster).")
  return 0


if __name__ == "__main__":
  sys.exit(main())
