#!/usr/bin/env python3
"""Programs from JAX's own and third-party libraries as xjit fixtures.

models/generate.py covers model-shaped programs (one big dataflow graph);
these are program-shaped: while loops inside while loops, conditionals, small
tensors, thousands of scalar instructions, written by libraries (diffrax,
jax.experimental.ode, jax.scipy.optimize, Optax, Equinox, BlackJAX) rather than
by hand. They are what issue 26's compile-time target is measured on
(docs/compile_time.md) and what tests/models/programs_test.cc runs on both
backends.

For each program this script writes, under OUT/NAME/, the same files as
models/generate.py:
  module.hlo     the unoptimised module (jax.jit(f).lower(*args).as_text("hlo"))
  arg0.npy ...   the entry parameters, in the module's parameter order
  out0.npy ...   XLA:CPU's results, the result tuple flattened in order
and OUT/programs.json: per program the number of instructions in module.hlo
and XLA:CPU's compile time (the median of --repeats compiles of a fresh
lowering in a warm process: `jitted.lower(*args).compile()`, the compile
timed alone), wall and process CPU time (all threads): on a shared machine
the CPU time is the comparable figure.

  models/programs/generate.py            # the committed fixtures (models/programs)
  models/programs/generate.py --out DIR [--only NAME ...] [--repeats N]

JAX and the libraries are tools here, never a dependency of xjit: the
fixtures are committed, and the test and the benchmark read them without JAX.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def _jax():
  import jax
  jax.config.update("jax_platforms", "cpu")
  return jax


def _normal(rng, shape, scale=1.0):
  return (rng.standard_normal(shape) * scale).astype(np.float32)


# ------------------------------------------------- 1. diffrax: Tsit5 + PID
def diffrax_tsit5(_):
  """The issue's program: an adaptive Tsit5 solve of a 2-state ODE (a damped
  nonlinear oscillator) with a PID step-size controller, 301 saved points."""
  import diffrax
  jnp = _jax().numpy

  def vector_field(t, y, args):
    k, c = args[0], args[1]
    return jnp.stack([y[1], -k * jnp.sin(y[0]) - c * y[1]])

  def solve(y0, args):
    term = diffrax.ODETerm(vector_field)
    sol = diffrax.diffeqsolve(
        term, diffrax.Tsit5(), t0=0.0, t1=10.0, dt0=0.05, y0=y0, args=args,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 10.0, 301)),
        stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5, pcoeff=0.3,
                                                  icoeff=0.4),
        max_steps=4096)
    return sol.ys, sol.stats["num_steps"]

  return solve, (np.array([1.0, 0.0], np.float32), np.array([4.0, 0.3], np.float32))


# ------------------------------------------------- 2. jax.experimental.ode
def odeint(_):
  """Dormand-Prince with JAX's own adaptive controller (odeint): a
  Lotka-Volterra system, 101 saved points."""
  jax = _jax()
  jnp = jax.numpy
  from jax.experimental.ode import odeint as jodeint

  def f(y, t, p):
    a, b, c, d = p[0], p[1], p[2], p[3]
    return jnp.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])

  def solve(y0, p):
    return jodeint(f, y0, jnp.linspace(0.0, 5.0, 101), p, rtol=1e-5, atol=1e-5)

  return solve, (np.array([1.0, 0.5], np.float32),
                 np.array([1.5, 1.0, 3.0, 1.0], np.float32))


# ------------------------------------------------- 3. jax.scipy.optimize BFGS
def bfgs_minimize(_):
  """BFGS with a zoom line search (jax.scipy.optimize.minimize) on a 4-d
  Rosenbrock function: a while loop around a line search's while loop."""
  jax = _jax()
  jnp = jax.numpy
  from jax.scipy.optimize import minimize

  def rosen(x, a):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)

  def run(x0, a):
    r = minimize(rosen, x0, args=(a,), method="BFGS", options=dict(maxiter=50))
    # Not r.nit: where the iteration stops on an exact minimum depends on the
    # last bits of the gradient norm, which differ between XLA and xjit.
    return r.x, r.fun, r.status

  return run, (np.array([-1.2, 1.0, -0.5, 0.8], np.float32), np.array(1.0, np.float32))


# ------------------------------------------------- 4. Optax Adam in fori_loop
def optax_adam(_):
  """100 Adam steps (Optax) on a small least-squares problem inside
  lax.fori_loop."""
  jax = _jax()
  jnp = jax.numpy
  import optax
  rng = np.random.default_rng(4)
  xs = _normal(rng, (32, 8))
  ys = _normal(rng, (32,))
  w0 = np.zeros(8, np.float32)
  opt = optax.adam(0.05)

  def loss(w, xs, ys):
    return jnp.mean(jnp.square(xs @ w - ys))

  def train(w, xs, ys):
    def body(_, carry):
      w, state = carry
      g = jax.grad(loss)(w, xs, ys)
      updates, state = opt.update(g, state, w)
      return optax.apply_updates(w, updates), state
    w, _ = jax.lax.fori_loop(0, 100, body, (w, opt.init(w)))
    return w, loss(w, xs, ys)

  return train, (w0, xs, ys)


# ------------------------------------------------- 5. Equinox MLP training step
def equinox_mlp(_):
  """One training step of an Equinox MLP (eqx.nn.MLP, tanh, 3 layers) with
  Optax's Adam: value, gradient and update, the parameters flattened as
  arguments."""
  jax = _jax()
  jnp = jax.numpy
  import equinox as eqx
  import optax
  model = eqx.nn.MLP(4, 2, 32, 3, activation=jax.nn.tanh, key=jax.random.PRNGKey(5))
  params, static = eqx.partition(model, eqx.is_array)
  leaves, treedef = jax.tree_util.tree_flatten(params)
  opt = optax.adam(1e-2)
  rng = np.random.default_rng(5)
  x = _normal(rng, (16, 4))
  y = _normal(rng, (16, 2))

  def step(*args):
    *leaves_, x, y = args
    p = jax.tree_util.tree_unflatten(treedef, leaves_)
    state = opt.init(p)

    def loss(p):
      m = eqx.combine(p, static)
      return jnp.mean(jnp.square(jax.vmap(m)(x) - y))

    l, g = jax.value_and_grad(loss)(p)
    updates, _ = opt.update(g, state, p)
    return (l, *jax.tree_util.tree_leaves(optax.apply_updates(p, updates)))

  return step, (*[np.asarray(a) for a in leaves], x, y)


# ------------------------------------------------- 6. lax.scan RNN
def scan_rnn(_):
  """An Elman RNN over 16 steps with lax.scan, loss and gradient (the
  backward pass is a second, reversed scan)."""
  jax = _jax()
  jnp = jax.numpy
  rng = np.random.default_rng(6)
  wx = _normal(rng, (8, 16), 0.3)
  wh = _normal(rng, (16, 16), 0.25)
  b = np.zeros(16, np.float32)
  xs = _normal(rng, (16, 4, 8))
  y = _normal(rng, (4, 16))

  def loss(wx, wh, b, xs, y):
    def cell(h, x):
      h = jnp.tanh(x @ wx + h @ wh + b)
      return h, h
    h, _ = jax.lax.scan(cell, jnp.zeros((4, 16), jnp.float32), xs)
    return jnp.mean(jnp.square(h - y))

  def step(wx, wh, b, xs, y):
    l, g = jax.value_and_grad(loss, argnums=(0, 1, 2))(wx, wh, b, xs, y)
    return (l, *g)

  return step, (wx, wh, b, xs, y)


# ------------------------------------------------- 7. BlackJAX NUTS
def blackjax_nuts(_):
  """10 NUTS transitions (BlackJAX) on a correlated 2-d Gaussian: a scan over
  steps around the tree-doubling while loop around the trajectory
  integration, with the threefry PRNG in HLO."""
  jax = _jax()
  jnp = jax.numpy
  import blackjax

  def logdensity(x):
    prec = jnp.array([[2.0, -1.2], [-1.2, 2.0]], jnp.float32)
    return -0.5 * x @ prec @ x

  def run(key, x0):
    nuts = blackjax.nuts(logdensity, step_size=0.4,
                         inverse_mass_matrix=jnp.ones(2, jnp.float32))
    state = nuts.init(x0)

    def one(state, k):
      state, info = nuts.step(k, state)
      return state, (state.position, info.num_integration_steps)

    _, (xs, n) = jax.lax.scan(one, state, jax.random.split(key, 10))
    return xs, n

  return run, (np.array([0, 7], np.uint32), np.array([0.5, -0.5], np.float32))


PROGRAMS = {
    "diffrax_tsit5": diffrax_tsit5,
    "odeint": odeint,
    "bfgs_minimize": bfgs_minimize,
    "optax_adam": optax_adam,
    "equinox_mlp": equinox_mlp,
    "scan_rnn": scan_rnn,
    "blackjax_nuts": blackjax_nuts,
}


def count_instructions(text):
  """Instructions in HLO text: lines of the form `name = shape op(...)`."""
  return sum(1 for line in text.splitlines()
             if " = " in line and not line.lstrip().startswith(("HloModule", "//")))


def xla_compile_ms(jitted, args, repeats):
  """XLA:CPU's compile of a fresh lowering, median of `repeats` (JAX's
  in-memory caches cleared before each, so that XLA compiles every time)."""
  jax = _jax()
  wall, cpu = [], []
  for _ in range(repeats):
    jax.clear_caches()
    lowered = jitted.lower(*args)
    t, c = time.perf_counter(), time.process_time()
    lowered.compile()
    wall.append((time.perf_counter() - t) * 1e3)
    cpu.append((time.process_time() - c) * 1e3)
  return statistics.median(wall), statistics.median(cpu)


def write_program(name, out_dir, repeats):
  jax = _jax()
  fn, args = PROGRAMS[name](None)
  jitted = jax.jit(fn, keep_unused=True)
  text = jitted.lower(*args).as_text(dialect="hlo")
  d = os.path.join(out_dir, name)
  os.makedirs(d, exist_ok=True)
  for f in os.listdir(d):
    if f.endswith(".npy") or f.endswith(".hlo"):
      os.remove(os.path.join(d, f))
  with open(os.path.join(d, "module.hlo"), "w") as f:
    f.write(text)
  for i, a in enumerate(args):
    np.save(os.path.join(d, f"arg{i}.npy"), np.asarray(a))
  outs = jax.tree_util.tree_leaves(jitted(*args))
  for i, o in enumerate(outs):
    np.save(os.path.join(d, f"out{i}.npy"), np.asarray(o))
  wall, cpu = xla_compile_ms(jitted, args, repeats)
  return dict(args=len(args), outs=len(outs), instructions=count_instructions(text),
              xla_compile_ms=round(wall, 1), xla_compile_cpu_ms=round(cpu, 1))


def main():
  here = os.path.dirname(os.path.abspath(__file__))
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--out", default=here)
  ap.add_argument("--only", nargs="*", choices=sorted(PROGRAMS), default=None)
  ap.add_argument("--repeats", type=int, default=5)
  opts = ap.parse_args()
  jax = _jax()
  # Warm the process (XLA's own initialisation is not a compile's cost).
  jax.jit(lambda x: x + 1).lower(np.float32(0)).compile()
  path = os.path.join(opts.out, "programs.json")
  manifest = {}
  if os.path.exists(path):
    with open(path) as f:
      manifest = json.load(f).get("programs", {})
  import importlib.metadata as md
  versions = {}
  for pkg in ("jax", "jaxlib", "diffrax", "optax", "equinox", "blackjax"):
    try:
      versions[pkg] = md.version(pkg)
    except md.PackageNotFoundError:
      pass
  for name in opts.only or list(PROGRAMS):
    manifest[name] = write_program(name, opts.out, opts.repeats)
    m = manifest[name]
    print(f"{name}: {m['instructions']} instructions, {m['args']} args, {m['outs']} outputs, "
          f"XLA:CPU compile {m['xla_compile_ms']} ms ({m['xla_compile_cpu_ms']} ms CPU)", flush=True)
  with open(path, "w") as f:
    json.dump({"generated_by": "models/programs/generate.py", "versions": versions,
               "programs": manifest}, f, indent=1, sort_keys=True)
    f.write("\n")
  return 0


if __name__ == "__main__":
  sys.exit(main())
