#!/usr/bin/env python3
"""xjit against XLA:CPU on the zoo (models/zoo/generate.py) at benchmark sizes,
or on issue 26's programs (models/programs/generate.py, --suite programs).

  python benchmarks/zoo/run_zoo.py [--suite zoo|programs] [--xjit build/tools/xjit]
      [--threads 1 2] [--programs NAME ...] [--iterations 5] [--warmup-seconds 1]
      [--work DIR] [--markdown FILE]

Needs JAX and the zoo's libraries (the XLA:CPU baseline and the modules);
without JAX the script says so and exits 0. For each program and thread
count T it
  1. builds the program at --size bench (models/zoo/generate.py's PROGRAMS;
     the programs suite has one size, its fixtures') with seeded inputs and writes the unoptimised HLO and the inputs to
     --work (once, in the first thread count's worker);
  2. times XLA:CPU in a fresh process pinned with `taskset -c 0..T-1`: run =
     the median of --iterations calls of the compiled executable on
     device-resident inputs (block_until_ready), after --warmup-seconds of
     untimed calls (at least one);
  3. times xjit the same way: `taskset -c 0..T-1 xjit bench MODULE ARGS
     --threads T --iterations N --warmup-ms W` (`run ms`: the median after
     the same warm-up).
Thread control for XLA:CPU as in benchmarks/models/run_models.py: its pool is
sized from the process's affinity, and with T = 1 XLA_FLAGS also gets
--xla_cpu_multi_thread_eigen=false.

The table's ratio is xjit's time / XLA:CPU's time (< 1: xjit is faster), the
convention of issue 28's targets; the summary counts the programs at or
below 1 and gives the geometric mean of the ratios and the worst five, per
thread count. Both systems run in the same invocation, one after the other;
the load average before and after is printed, since the machine may be
shared: compare ratios measured in the same run, not absolute times across
runs.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Each suite's generate.py: its folder under models/, how one of its programs
# is built ((module, name) -> (function, arguments)) and the library it
# comes from.
SUITES = {
    "zoo": ("zoo", lambda gen, name: gen.PROGRAMS[name][0]("bench"),
            lambda gen, name: gen.PROGRAMS[name][1]),
    "programs": ("programs", lambda gen, name: gen.PROGRAMS[name](None),
                 lambda gen, name: name.split("_")[0]),
}


def load_suite(suite):
  """Imports the suite's generate.py; returns it, its program builder and
  its library names."""
  folder, build, library = SUITES[suite]
  sys.path.insert(0, os.path.join(ROOT, "models", folder))
  import generate
  return (generate, lambda name: build(generate, name),
          lambda name: library(generate, name))


def to_npy_array(a):
  """An array as xjit's .npy convention wants it (bf16 as uint16 bits)."""
  import numpy as np
  a = np.asarray(a)
  return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def cpus(threads):
  return ",".join(str(i) for i in range(threads))


def xla_worker(opts):
  """In a fresh, pinned process: time XLA:CPU on one program; print JSON."""
  if opts.threads == 1:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false").strip()
  import numpy as np
  generate, build, _ = load_suite(opts.suite)
  jax = generate._jax()
  jax.jit(lambda x: x + 1).lower(np.float32(1)).compile()
  f, args = build(opts.worker)
  args = [np.asarray(a) for a in args]
  jitted = jax.jit(f, keep_unused=True)
  lowered = jitted.lower(*args)
  if opts.write:
    d = os.path.join(opts.work, opts.worker)
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
      if old.endswith((".npy", ".hlo")):
        os.remove(os.path.join(d, old))
    with open(os.path.join(d, "module.hlo"), "w") as fh:
      fh.write(lowered.as_text(dialect="hlo"))
    for i, a in enumerate(args):
      np.save(os.path.join(d, f"arg{i}.npy"), to_npy_array(a))
  compiled = lowered.compile()
  device_args = [jax.device_put(a) for a in args]
  start = time.perf_counter()
  while True:
    jax.block_until_ready(compiled(*device_args))
    if time.perf_counter() - start >= opts.warmup_seconds:
      break
  times = []
  for _ in range(opts.iterations):
    t = time.perf_counter()
    jax.block_until_ready(compiled(*device_args))
    times.append((time.perf_counter() - t) * 1e3)
  times.sort()
  print(json.dumps(dict(run_ms=times[len(times) // 2])))
  return 0


def run_xla(name, threads, opts, write):
  cmd = ["taskset", "-c", cpus(threads), sys.executable, os.path.abspath(__file__),
         "--suite", opts.suite, "--worker", name, "--threads", str(threads), "--iterations", str(opts.iterations),
         "--warmup-seconds", str(opts.warmup_seconds), "--work", opts.work]
  if write:
    cmd.append("--write")
  r = subprocess.run(cmd, capture_output=True, text=True)
  if r.returncode != 0:
    return dict(error=(r.stderr.strip().splitlines() or ["failed"])[-1])
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


def summary(rows, threads):
  """Lines: how many at or below XLA:CPU, the geometric mean, the worst five."""
  ratios = [(xj["run_ms"] / xla["run_ms"], name) for name, t, xla, xj in rows
            if t == threads and "run_ms" in xj and "run_ms" in xla]
  if not ratios:
    return [f"{threads} thread(s): nothing measured"]
  at_most = sum(1 for r, _ in ratios if r <= 1.0)
  geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
  worst = sorted(ratios, reverse=True)[:5]
  return [f"{threads} thread(s): {at_most} of {len(ratios)} programs at or below XLA:CPU's time; "
          f"geometric mean ratio {geo:.2f}; worst five: "
          + ", ".join(f"{n} {r:.2f}" for r, n in worst)]


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--suite", default="zoo", choices=sorted(SUITES))
  ap.add_argument("--xjit", default=os.path.join(ROOT, "build", "tools", "xjit"))
  ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
  ap.add_argument("--programs", nargs="*", default=None)
  ap.add_argument("--iterations", type=int, default=5)
  ap.add_argument("--warmup-seconds", type=float, default=1.0)
  ap.add_argument("--work", default="/tmp/xjit-zoo-bench")
  ap.add_argument("--markdown", default=None, help="also write the table to this file")
  ap.add_argument("--worker", help=argparse.SUPPRESS)
  ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
  opts = ap.parse_args()
  if opts.worker:
    opts.threads = opts.threads[0]
    return xla_worker(opts)
  try:
    import jax  # noqa: F401  (only to see whether it is there)
  except ImportError:
    print("run_zoo.py: JAX is not installed (pip install jax and the zoo's libraries); "
          "nothing measured.")
    return 0
  generate, _, library = load_suite(opts.suite)
  names = opts.programs or list(generate.PROGRAMS)
  if not os.path.exists(opts.xjit):
    print(f"run_zoo.py: no xjit at {opts.xjit} (build it, or pass --xjit)")
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
  lines = [f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
           f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
           f"{os.cpu_count()} CPUs; median of {opts.iterations} runs after "
           f"{opts.warmup_seconds} s of warm-up each", "",
           "| program | library | threads | XLA:CPU ms | xjit ms | xjit / XLA | "
           "xjit kernels / interpreted |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
  for name, t, xla, xj in rows:
    lib = library(name)
    if "error" in xla or "error" in xj:
      lines.append(f"| {name} | {lib} | {t} | {xla.get('run_ms', xla.get('error', ''))} | "
                   f"{xj.get('run_ms', xj.get('error', ''))} | | |")
      continue
    lines.append(f"| {name} | {lib} | {t} | {xla['run_ms']:.3f} | {xj['run_ms']:.3f} | "
                 f"{xj['run_ms'] / xla['run_ms']:.2f} | "
                 f"{int(xj['kernels'])} / {int(xj['interpreted_steps'])} |")
  lines.append("")
  for t in opts.threads:
    lines.extend(summary(rows, t))
  text = "\n".join(lines) + "\n"
  print(text)
  if opts.markdown:
    with open(opts.markdown, "w") as fh:
      fh.write(text)
  return 0


if __name__ == "__main__":
  sys.exit(main())
