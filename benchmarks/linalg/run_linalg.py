#!/usr/bin/env python3
"""xjit against XLA:CPU on jnp.linalg's solve, cholesky, eigh and svd (f32).

  python benchmarks/linalg/run_linalg.py [--xjit build/tools/xjit] [--sizes 256 512 1024 2048]
      [--functions solve cholesky eigh svd] [--threads 1] [--iterations 5] [--work DIR]

Needs JAX (the XLA:CPU baseline and the module): without it the script says
so and exits 0. For each function and size n it lowers the jitted function on
a well-conditioned f32[n, n] (random + n I; M M^T + n I for cholesky and
eigh) to HLO text (jaxlib's lapack_*_ffi custom calls), then times
  - XLA:CPU: the median of --iterations calls of the compiled executable
    (block_until_ready) after one warm-up call, in a process pinned with
    `taskset -c 0..T-1` (XLA sizes its pool from the affinity);
  - xjit: `taskset -c 0..T-1 xjit bench MODULE ARG --threads T --iterations N`
    (`run ms`: the median after one warm-up).
Both spend their time in LAPACK (jaxlib's bundled build vs the system's
OpenBLAS), so the ratio mostly compares the two LAPACK builds plus each
system's copies around the call. Prints one line per case: XLA ms, xjit ms and
XLA / xjit (> 1: xjit is faster), with the load average, since the machine may
be shared.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FUNCTIONS = ("solve", "cholesky", "eigh", "svd")

XLA_TIMER = r"""
import sys, time, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_platforms", "cpu")
name, path, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
fs = {"solve": lambda a: jnp.linalg.solve(a, a[:, :1]), "cholesky": jnp.linalg.cholesky,
      "eigh": jnp.linalg.eigh, "svd": lambda a: jnp.linalg.svd(a, full_matrices=False)}
a = jax.device_put(np.load(path))
f = jax.jit(fs[name]).lower(a).compile()
jax.block_until_ready(f(a))
times = []
for _ in range(iterations):
  t = time.perf_counter(); jax.block_until_ready(f(a)); times.append(time.perf_counter() - t)
print(1000 * sorted(times)[len(times) // 2])
"""


def make_case(name, n, work):
  import jax
  import jax.numpy as jnp
  jax.config.update("jax_platforms", "cpu")
  rng = np.random.default_rng(n)
  m = rng.standard_normal((n, n)).astype(np.float32)
  a = (m @ m.T + n * np.eye(n)) if name in ("cholesky", "eigh") else (m + n * np.eye(n))
  a = a.astype(np.float32)
  fs = {"solve": lambda a: jnp.linalg.solve(a, a[:, :1]), "cholesky": jnp.linalg.cholesky,
        "eigh": jnp.linalg.eigh, "svd": lambda a: jnp.linalg.svd(a, full_matrices=False)}
  text = jax.jit(fs[name]).lower(a).as_text(dialect="hlo")
  module = os.path.join(work, f"{name}_{n}.hlo")
  arg = os.path.join(work, f"{name}_{n}.npy")
  with open(module, "w") as f:
    f.write(text)
  np.save(arg, a)
  return module, arg


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--xjit", default=os.path.join(ROOT, "build", "tools", "xjit"))
  parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
  parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS))
  parser.add_argument("--threads", type=int, default=1)
  parser.add_argument("--iterations", type=int, default=5)
  parser.add_argument("--work", default=None)
  options = parser.parse_args()
  try:
    import jax  # noqa: F401
  except ImportError:
    print("run_linalg.py: JAX is not installed; nothing to compare with")
    return 0
  work = options.work or tempfile.mkdtemp(prefix="xjit_linalg_bench_")
  os.makedirs(work, exist_ok=True)
  cpus = f"0-{options.threads - 1}"
  env = dict(os.environ)
  if options.threads == 1:
    env["XLA_FLAGS"] = env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
  print(f"threads {options.threads}, load average {os.getloadavg()[0]:.1f}")
  print(f"{'case':>16} {'XLA ms':>10} {'xjit ms':>10} {'XLA/xjit':>9}")
  for name in options.functions:
    for n in options.sizes:
      module, arg = make_case(name, n, work)
      xla = subprocess.run(["taskset", "-c", cpus, sys.executable, "-c", XLA_TIMER, name, arg,
                            str(options.iterations)], env=env, capture_output=True, text=True)
      ours = subprocess.run(["taskset", "-c", cpus, options.xjit, "bench", module, arg,
                             f"--threads={options.threads}",
                             f"--iterations={options.iterations}"],
                            capture_output=True, text=True)
      try:
        xla_ms = float(xla.stdout.strip().splitlines()[-1])
        xjit_ms = float([l for l in (ours.stdout + ours.stderr).splitlines()
                         if l.startswith("run ms:")][0].split()[-1])
      except (IndexError, ValueError):
        print(f"{name}_{n}: failed\n{xla.stderr[-500:]}\n{ours.stdout[-500:]}{ours.stderr[-500:]}")
        continue
      print(f"{name + '_' + str(n):>16} {xla_ms:10.2f} {xjit_ms:10.2f} {xla_ms / xjit_ms:9.2f}",
            flush=True)
  print(f"load average after {os.getloadavg()[0]:.1f}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
