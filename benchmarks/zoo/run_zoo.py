#!/usr/bin/env python3
"""xjit against XLA:CPU on the zoo (models/zoo/generate.py) at benchmark sizes,
or on issue 26's programs (models/programs/generate.py, --suite programs).

  python benchmarks/zoo/run_zoo.py [--suite zoo|programs] [--xjit build/tools/xjit]
      [--threads 1 2] [--programs NAME ...] [--iterations 5] [--min-seconds 0.5]
      [--warmup-seconds 1] [--rounds 3] [--work DIR] [--markdown FILE] [--json FILE]

Needs JAX and the zoo's libraries (the XLA:CPU baseline and the modules);
without JAX the script says so and exits 0. A row is one program at one
thread count T. The script
  1. builds each program at --size bench (models/zoo/generate.py's PROGRAMS;
     the programs suite has one size, its fixtures') with seeded inputs and
     writes the unoptimised HLO and the inputs to --work (once, in the
     program's first XLA:CPU process);
  2. runs --rounds rounds over all rows (round 1 of every row, then round 2,
     ...); a row's round is one fresh XLA:CPU process, then one fresh xjit
     process, both pinned with `taskset -c 0..T-1`:
     - XLA:CPU: the process's time = the median of at least --iterations
       calls of the compiled executable on device-resident inputs
       (block_until_ready), and more until the timed calls add up to
       --min-seconds, after --warmup-seconds of untimed calls (at least one);
     - xjit: `taskset -c 0..T-1 xjit bench MODULE ARGS --threads T
       --iterations N --min-time-ms M --warmup-ms W` (`run ms`: the median
       of as many runs, after the same warm-up);
  3. takes each side's time as the median of its R per-process medians
     (the mean of the middle two for an even R) and keeps their minimum and
     maximum as the side's spread.
Thread control for XLA:CPU as in benchmarks/models/run_models.py: its pool is
sized from the process's affinity, and with T = 1 XLA_FLAGS also gets
--xla_cpu_multi_thread_eigen=false.

Why rounds: on a shared machine whole processes, and stretches of
iterations inside one, run up to twice as slow while anything else runs
(docs/zoo.md, sessions 17 and 18), so one process per side is one draw of
that noise and decides a row's ratio on its own. The two sides' processes
alternate, so that a slow stretch of the machine hits both alike; a row's
rounds are a whole round apart (minutes at the zoo's size), so that one
burst of load, such as another build, falls on one of them, not on all;
and the median of R processes ignores up to (R-1)/2 slow ones per side.
Within a process the machine has slow phases of tens of milliseconds, on
both sides alike (session 19: jraph_gcn, 1.3-1.5 ms a run, had stretches of
10-30 runs at 1.7-2.8 ms in both XLA:CPU and xjit traces on a quiet
machine), so a median of 5 runs of a millisecond program sampled one
moment and decided a row; --min-seconds makes a process's median span
enough of them.
The default, 3, is the smallest R for which one slow process cannot set a
side's time. Each XLA:CPU process imports JAX and compiles the program (3-6
s for most programs, 12-17 s for flax_mnist_cnn; an xjit process is about
--warmup-seconds plus the iterations), so the whole zoo at 1 and 2 threads
takes about R times the ~10 minutes of one round. --rounds 1 is the old
single draw per side, and its table has the old columns.

The table's ratio is xjit's time / XLA:CPU's time (< 1: xjit is faster), the
convention of issue 28's targets, computed from the two medians; with
R > 1 each side's time is followed by its spread, "min-max" of its
per-process medians. The summary counts, per thread count, the programs at
or below 1 and gives the geometric mean of the ratios and the worst five;
with R > 1 it also lists the rows whose per-round ratios (xjit's process /
the XLA:CPU process of the same round) lie on both sides of 1.0 or of 1.25,
whose verdict therefore rests on the median. The load average before and
after is printed: compare ratios measured in the same run, not absolute
times across runs.

Outputs: progress per process on stderr; the table and summary on stdout
and, with --markdown FILE, in FILE; with --json FILE, every row as JSON
(program, library, threads, each side's per-process results in round order
(run_ms, wall_s, load1: the 1-minute load average after the process, ...),
its median run_ms and spread, the ratio and the per-round ratios).
"""

import argparse
import json
import math
import os
import statistics
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
  while len(times) < opts.iterations or sum(times) < opts.min_seconds * 1e3:
    t = time.perf_counter()
    jax.block_until_ready(compiled(*device_args))
    times.append((time.perf_counter() - t) * 1e3)
  times.sort()
  print(json.dumps(dict(run_ms=times[len(times) // 2])))
  return 0


def run_xla(name, threads, opts, write):
  """One fresh XLA:CPU process: its median run_ms and its wall time, or an error."""
  cmd = ["taskset", "-c", cpus(threads), sys.executable, os.path.abspath(__file__),
         "--suite", opts.suite, "--worker", name, "--threads", str(threads), "--iterations", str(opts.iterations),
         "--min-seconds", str(opts.min_seconds),
         "--warmup-seconds", str(opts.warmup_seconds), "--work", opts.work]
  if write:
    cmd.append("--write")
  start = time.perf_counter()
  r = subprocess.run(cmd, capture_output=True, text=True)
  wall_s = round(time.perf_counter() - start, 2)
  if r.returncode != 0:
    return dict(error=(r.stderr.strip().splitlines() or ["failed"])[-1], wall_s=wall_s)
  out = json.loads(r.stdout.strip().splitlines()[-1])
  out["wall_s"] = wall_s
  return out


def run_xjit(name, threads, opts):
  """One fresh `xjit bench` process: its run_ms, compile_ms, kernel counts and wall time."""
  d = os.path.join(opts.work, name)
  n_args = 0
  while os.path.exists(os.path.join(d, f"arg{n_args}.npy")):
    n_args += 1
  cmd = ["taskset", "-c", cpus(threads), opts.xjit, "bench", os.path.join(d, "module.hlo"),
         *[os.path.join(d, f"arg{i}.npy") for i in range(n_args)],
         "--threads", str(threads), "--iterations", str(opts.iterations),
         "--min-time-ms", str(int(opts.min_seconds * 1000)),
         "--warmup-ms", str(int(opts.warmup_seconds * 1000))]
  start = time.perf_counter()
  r = subprocess.run(cmd, capture_output=True, text=True)
  wall_s = round(time.perf_counter() - start, 2)
  if r.returncode != 0:
    return dict(error=(r.stderr.strip().splitlines() or ["failed"])[-1], wall_s=wall_s)
  out = {}
  for line in r.stdout.splitlines():
    key, _, value = line.partition(":")
    if key in ("compile ms", "run ms", "kernels", "interpreted steps"):
      out[key.replace(" ", "_")] = float(value)
  out["wall_s"] = wall_s
  return out


def combine(processes):
  """One side of a row from its processes' results, in round order: the
  median of their run_ms and its spread (min, max), or the first error (a
  failed compile fails the same way in every process, so one is reported)."""
  for p in processes:
    if "error" in p:
      return dict(error=p["error"], processes=processes)
  times = [p["run_ms"] for p in processes]
  side = dict(run_ms=statistics.median(times), min_ms=min(times), max_ms=max(times),
              processes=processes)
  for key in ("kernels", "interpreted_steps"):
    if key in processes[-1]:
      side[key] = processes[-1][key]
  return side


def measure_round(name, threads, r, opts, write):
  """Round r of a row: one XLA:CPU process, then one xjit process right
  after it, so that a slow stretch of a shared machine falls on both."""
  xla = run_xla(name, threads, opts, write=write)
  xla["load1"] = round(os.getloadavg()[0], 2)
  xj = run_xjit(name, threads, opts)
  xj["load1"] = round(os.getloadavg()[0], 2)
  print(f"# {name} T={threads} round {r + 1}/{opts.rounds}: xla {xla} xjit {xj}",
        file=sys.stderr, flush=True)
  return xla, xj


def make_row(name, lib, threads, xla_runs, xjit_runs):
  """A row from its rounds' processes: each side combined, the ratio of the
  medians and the per-round ratios."""
  row = dict(program=name, library=lib, threads=threads,
             xla=combine(xla_runs), xjit=combine(xjit_runs))
  if "run_ms" in row["xla"] and "run_ms" in row["xjit"]:
    row["ratio"] = row["xjit"]["run_ms"] / row["xla"]["run_ms"]
    # The same round's two processes shared the machine's state, so their
    # ratio is the paired draw; its range says whether the row's verdict
    # depends on the round.
    row["round_ratios"] = [b["run_ms"] / a["run_ms"] for a, b in zip(xla_runs, xjit_runs)]
  return row


def measure(names, library, opts):
  """All rows, round by round: round 1 of every program and thread count,
  then round 2, and so on. A row's rounds are thus minutes apart, not
  seconds, so one burst of load (another build, minutes long) slows at most
  one or two of them and the median drops it; back to back, all of a row's
  rounds would fall in the same burst. The modules are written in round 1
  by each program's first process; a row that failed is not run again
  (a failed compile fails the same way every time)."""
  keys = [(name, t) for name in names for t in opts.threads]
  runs = {key: ([], []) for key in keys}
  for r in range(opts.rounds):
    for name, t in keys:
      xla_runs, xjit_runs = runs[(name, t)]
      if any("error" in p for p in xla_runs + xjit_runs):
        continue
      xla, xj = measure_round(name, t, r, opts, write=(r == 0 and t == opts.threads[0]))
      xla_runs.append(xla)
      xjit_runs.append(xj)
  return [make_row(name, library(name), t, *runs[(name, t)]) for name, t in keys]


def across(rows, threads, bound):
  """Rows at `threads` whose per-round ratios lie on both sides of `bound`."""
  return [(min(r["round_ratios"]), max(r["round_ratios"]), r["program"]) for r in rows
          if r["threads"] == threads and "ratio" in r
          and min(r["round_ratios"]) <= bound < max(r["round_ratios"])]


def summary(rows, threads, rounds):
  """Lines: how many at or below XLA:CPU, the geometric mean, the worst five;
  with several rounds, the rows whose verdict changes from round to round."""
  ratios = [(r["ratio"], r["program"]) for r in rows if r["threads"] == threads and "ratio" in r]
  if not ratios:
    return [f"{threads} thread(s): nothing measured"]
  at_most = sum(1 for r, _ in ratios if r <= 1.0)
  geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
  worst = sorted(ratios, reverse=True)[:5]
  lines = [f"{threads} thread(s): {at_most} of {len(ratios)} programs at or below XLA:CPU's time; "
           f"geometric mean ratio {geo:.2f}; worst five: "
           + ", ".join(f"{n} {r:.2f}" for r, n in worst)]
  if rounds > 1:
    for bound in (1.0, 1.25):
      split = across(rows, threads, bound)
      lines.append(f"{threads} thread(s): {len(split)} row(s) with per-round ratios on both sides "
                   f"of {bound:.2f}" + (": " if split else "")
                   + ", ".join(f"{n} {lo:.2f}-{hi:.2f}" for lo, hi, n in split))
  return lines


def table(rows, rounds):
  """The markdown table; with several rounds, each side's spread beside its time."""
  if rounds > 1:
    lines = ["| program | library | threads | XLA:CPU ms | XLA:CPU spread | xjit ms | xjit spread | "
             "xjit / XLA | xjit kernels / interpreted |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
  else:
    lines = ["| program | library | threads | XLA:CPU ms | xjit ms | xjit / XLA | "
             "xjit kernels / interpreted |",
             "| --- | --- | --- | --- | --- | --- | --- |"]

  def cells(side):
    if "error" in side:
      return [side["error"]] + ([""] if rounds > 1 else [])
    return [f"{side['run_ms']:.3f}"] + ([f"{side['min_ms']:.3f}-{side['max_ms']:.3f}"]
                                        if rounds > 1 else [])

  for row in rows:
    xla, xj = row["xla"], row["xjit"]
    tail = ["", ""]
    if "ratio" in row:
      tail = [f"{row['ratio']:.2f}",
              f"{int(xj.get('kernels', 0))} / {int(xj.get('interpreted_steps', 0))}"]
    lines.append("| " + " | ".join([row["program"], row["library"], str(row["threads"]),
                                    *cells(xla), *cells(xj), *tail]) + " |")
  return lines


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--suite", default="zoo", choices=sorted(SUITES))
  ap.add_argument("--xjit", default=os.path.join(ROOT, "build", "tools", "xjit"))
  ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
  ap.add_argument("--programs", nargs="*", default=None)
  ap.add_argument("--iterations", type=int, default=5)
  ap.add_argument("--min-seconds", type=float, default=0.5,
                  help="time more runs until they add up to this (default 0.5)")
  ap.add_argument("--warmup-seconds", type=float, default=1.0)
  ap.add_argument("--rounds", type=int, default=3,
                  help="processes per side per program and thread count, alternated (default 3)")
  ap.add_argument("--work", default="/tmp/xjit-zoo-bench")
  ap.add_argument("--markdown", default=None, help="also write the table to this file")
  ap.add_argument("--json", default=None, help="also write every row, per process, to this file")
  ap.add_argument("--worker", help=argparse.SUPPRESS)
  ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
  opts = ap.parse_args()
  if opts.worker:
    opts.threads = opts.threads[0]
    return xla_worker(opts)
  if opts.rounds < 1:
    ap.error("--rounds must be at least 1")
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
  start = time.perf_counter()
  rows = measure(names, library, opts)
  elapsed = time.perf_counter() - start
  load_after = os.getloadavg()
  method = (f"median of {opts.iterations} runs or more (at least {opts.min_seconds} s) after {opts.warmup_seconds} s of warm-up per "
            f"process; {opts.rounds} round(s) over all rows, one XLA:CPU process then one xjit "
            f"process per row and round")
  if opts.rounds > 1:
    method += ", a side's time the median of its process medians, spread their min-max"
  lines = [f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
           f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
           f"{os.cpu_count()} CPUs; {method}; {elapsed / 60:.1f} min in all", ""]
  lines.extend(table(rows, opts.rounds))
  lines.append("")
  for t in opts.threads:
    lines.extend(summary(rows, t, opts.rounds))
  loads = [p["load1"] for row in rows for side in ("xla", "xjit")
           for p in row[side]["processes"]]
  busy = sum(1 for load in loads if load > os.cpu_count())
  if busy:
    # Rounds outvote a burst of load, not load that lasts the whole run:
    # then every round of a row is slow, and the two systems need not slow
    # alike (docs/zoo.md, session 18: jraph_gcn at 2 threads), so the
    # table's ratios are not the quiet machine's. The run's own processes
    # count in the load average too (about 1.3 at the end of session 17's
    # whole run on a quiet 2-CPU machine), so above the CPU count means
    # that something else was running.
    lines.append(f"warning: the 1-minute load average exceeded the {os.cpu_count()} CPUs after "
                 f"{busy} of {len(loads)} processes (highest {max(loads):.2f}); this table "
                 f"measured a loaded machine")
  text = "\n".join(lines) + "\n"
  print(text)
  if opts.markdown:
    with open(opts.markdown, "w") as fh:
      fh.write(text)
  if opts.json:
    with open(opts.json, "w") as fh:
      json.dump(dict(suite=opts.suite, xjit=opts.xjit, threads=opts.threads,
                     iterations=opts.iterations, min_seconds=opts.min_seconds,
                     warmup_seconds=opts.warmup_seconds,
                     rounds=opts.rounds, load_before=load_before, load_after=load_after,
                     elapsed_s=round(elapsed, 1), rows=rows), fh, indent=1)
      fh.write("\n")
  return 0


if __name__ == "__main__":
  sys.exit(main())
