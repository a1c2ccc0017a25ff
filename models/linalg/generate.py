#!/usr/bin/env python3
"""jax.numpy.linalg / jax.scipy.linalg on a CPU as xjit fixtures.

On a CPU these lower to jaxlib's LAPACK custom calls (lapack_<t><routine>_ffi,
runtime/host/jaxlib_lapack.h). For each case and element type this script
writes, under OUT/NAME_TYPE/ (models/generate.py's layout):
  module.hlo     jax.jit(f).lower(*args).as_text(dialect="hlo")
  arg0.npy ...   the entry parameters
  out0.npy ...   XLA:CPU's results, flattened in order

Where a factorisation is not unique (eigenvectors' signs and phases, SVD
vectors, Schur and Hessenberg forms, QR's signs) the case returns what is:
reconstructions and residuals (Q R, U diag(s) V^H - A, A V - V diag(w),
Q^H Q - I, ...) computed in the module itself, so the compiled LAPACK
results are checked through them on both backends.

  models/linalg/generate.py [--out DIR] [--only NAME ...]

JAX is a tool here (a virtual environment), never a dependency of xjit: the
fixtures are committed (models/linalg/fixtures) and tests/models/
linalg_models_test.cc reads them without JAX.
"""

import argparse
import os
import re
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def _jax():
  import jax
  jax.config.update("jax_platforms", "cpu")
  jax.config.update("jax_enable_x64", True)
  return jax


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def general(rng, shape, dtype):
  """A well-conditioned general matrix: random plus n on the diagonal."""
  n = shape[-1]
  return (_random(rng, shape, dtype) + n * np.eye(n, dtype=dtype)).astype(dtype)


def hermitian(rng, shape, dtype):
  """Hermitian positive definite: M M^H + n I."""
  m = _random(rng, shape, dtype)
  n = shape[-1]
  a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n, dtype=dtype)
  return a.astype(dtype)


def cases():
  """NAME -> (function of (jax, jnp, args), arguments builder(rng, dtype), types)."""
  def ct(jnp, x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))

  def eye_like(jnp, x):
    return jnp.eye(x.shape[-1], dtype=x.dtype)

  all4 = tuple(TYPES)
  two = ("f32", "c128")  # Cases whose routines the all4 cases cover.
  return {
      # getrf + trsm.
      "solve": (lambda jax, jnp, a, b: jnp.linalg.solve(a, b),
                lambda r, t: (general(r, (6, 6), t), _random(r, (6, 2), t)), all4),
      "solve_batched": (lambda jax, jnp, a, b: jnp.linalg.solve(a, b),
                        lambda r, t: (general(r, (3, 5, 5), t), _random(r, (3, 5, 2), t)),
                        all4),
      "inv": (lambda jax, jnp, a: jnp.linalg.inv(a),
              lambda r, t: (general(r, (6, 6), t),), two),
      "det": (lambda jax, jnp, a: jnp.linalg.det(a),
              lambda r, t: (general(r, (2, 5, 5), t),), two),
      "slogdet": (lambda jax, jnp, a: jnp.linalg.slogdet(a),
                  lambda r, t: (general(r, (5, 5), t),), two),
      "lu": (lambda jax, jnp, a: jax.scipy.linalg.lu(a),
             lambda r, t: (_random(r, (6, 4), t),), all4),
      "lu_solve": (lambda jax, jnp, a, b: jax.scipy.linalg.lu_solve(
                       jax.scipy.linalg.lu_factor(a), b),
                   lambda r, t: (general(r, (6, 6), t), _random(r, (6, 3), t)), two),
      # potrf.
      "cholesky": (lambda jax, jnp, a: jnp.linalg.cholesky(a),
                   lambda r, t: (hermitian(r, (6, 6), t),), all4),
      "cholesky_batched": (lambda jax, jnp, a: jnp.linalg.cholesky(a),
                           lambda r, t: (hermitian(r, (2, 3, 5, 5), t),), all4),
      "cholesky_not_pd": (lambda jax, jnp, a: jnp.linalg.cholesky(a),
                          lambda r, t: (-hermitian(r, (4, 4), t),), ("f32", "c128")),
      "solve_triangular": (lambda jax, jnp, a, b: (
                               jax.scipy.linalg.solve_triangular(a, b, lower=True),
                               jax.scipy.linalg.solve_triangular(a, b, trans=1, unit_diagonal=True),
                               jax.scipy.linalg.solve_triangular(a, b, trans=2, lower=False)),
                           lambda r, t: (general(r, (5, 5), t), _random(r, (5, 3), t)), all4),
      # geqrf + orgqr; geqp3.
      "qr": (lambda jax, jnp, a: (lambda q, r: (q @ r, ct(jnp, q) @ q, jnp.abs(r)))(
                 *jnp.linalg.qr(a)),
             lambda r, t: (_random(r, (7, 5), t),), all4),
      "qr_complete": (lambda jax, jnp, a: (lambda q, r: (q @ r, ct(jnp, q) @ q, jnp.abs(r)))(
                          *jnp.linalg.qr(a, mode="complete")),
                      lambda r, t: (_random(r, (2, 6, 4), t),), all4),
      "qr_r": (lambda jax, jnp, a: jnp.abs(jnp.linalg.qr(a, mode="r")),
               lambda r, t: (_random(r, (4, 6), t),), two),
      "qr_pivoting": (lambda jax, jnp, a: (lambda q, r, p: (q @ r - a[:, p], jnp.abs(r), p))(
                          *jax.scipy.linalg.qr(a, pivoting=True)),
                      lambda r, t: (_random(r, (6, 5), t),), all4),
      # ormqr / unmqr (jax.lax.linalg.ormqr) on geqrf's reflectors: Q c, c Q^H.
      "ormqr": (lambda jax, jnp, a, c: (lambda qr: (
                    jax.lax.linalg.ormqr(qr[0], qr[1], c, left=True, transpose=False),
                    jax.lax.linalg.ormqr(qr[0], qr[1], ct(jnp, c), left=False, transpose=True)))(
                    jax._src.lax.linalg.geqrf(a)),
                lambda r, t: (_random(r, (6, 4), t), _random(r, (6, 3), t)), all4),
      # syevd / heevd.
      "eigh": (lambda jax, jnp, a: (lambda w, v: (w, a @ v - v * w[..., None, :],
                                                  ct(jnp, v) @ v))(*jnp.linalg.eigh(a)),
               lambda r, t: (hermitian(r, (6, 6), t),), all4),
      "eigh_batched": (lambda jax, jnp, a: (lambda w, v: (w, a @ v - v * w[..., None, :]))(
                           *jnp.linalg.eigh(a)),
                       lambda r, t: (hermitian(r, (3, 4, 4), t),), all4),
      "eigvalsh": (lambda jax, jnp, a: jnp.linalg.eigvalsh(a),
                   lambda r, t: (hermitian(r, (6, 6), t),), all4),
      # gesdd; gesvd.
      "svd": (lambda jax, jnp, a: (lambda u, s, vh: (s, (u * s[..., None, :]) @ vh - a,
                                                     ct(jnp, u) @ u, vh @ ct(jnp, vh)))(
                  *jnp.linalg.svd(a, full_matrices=False)),
              lambda r, t: (_random(r, (7, 5), t),), all4),
      "svd_full_batched": (lambda jax, jnp, a: (lambda u, s, vh: (s, ct(jnp, u) @ u,
                                                                  vh @ ct(jnp, vh)))(
                               *jnp.linalg.svd(a, full_matrices=True)),
                           lambda r, t: (_random(r, (2, 4, 6), t),), all4),
      "svd_values": (lambda jax, jnp, a: jnp.linalg.svd(a, compute_uv=False),
                     lambda r, t: (_random(r, (5, 7), t),), two),
      "svd_qr": (lambda jax, jnp, a: (lambda u, s, vh: (s, (u * s[..., None, :]) @ vh - a))(
                     *jax.lax.linalg.svd(a, full_matrices=False,
                                         algorithm=jax.lax.linalg.SvdAlgorithm.QR)),
                 lambda r, t: (_random(r, (6, 4), t),), all4),
      "lstsq": (lambda jax, jnp, a, b: jnp.linalg.lstsq(a, b)[0],
                lambda r, t: (_random(r, (7, 4), t), _random(r, (7, 2), t)), two),
      "pinv": (lambda jax, jnp, a: jnp.linalg.pinv(a),
               lambda r, t: (_random(r, (6, 4), t),), two),
      # geev.
      "eig": (lambda jax, jnp, a: (lambda w, v: (jnp.sort(w), a.astype(v.dtype) @ v - v * w))(
                  *jnp.linalg.eig(a)),
              lambda r, t: (general(r, (5, 5), t),), all4),
      "eigvals": (lambda jax, jnp, a: jnp.sort(jnp.linalg.eigvals(a)),
                  lambda r, t: (_random(r, (2, 4, 4), t),), two),
      # gees, gehrd, sytrd.
      "schur": (lambda jax, jnp, a: (lambda t_, z: (z @ t_ @ ct(jnp, z) - a, ct(jnp, z) @ z,
                                                    jnp.tril(t_, -2)))(
                    *jax.scipy.linalg.schur(a)),
                lambda r, t: (_random(r, (5, 5), t),), all4),
      "hessenberg": (lambda jax, jnp, a: (lambda h, q: (q @ h @ ct(jnp, q) - a, ct(jnp, q) @ q,
                                                        jnp.tril(h, -2)))(
                         *jax.scipy.linalg.hessenberg(a, calc_q=True)),
                     lambda r, t: (_random(r, (5, 5), t),), all4),
      "tridiagonal": (lambda jax, jnp, a: (lambda arr, d, e, taus: (d, jnp.abs(e)))(
                          *jax.lax.linalg.tridiagonal(a, lower=True)),
                      lambda r, t: (hermitian(r, (5, 5), t),), all4),
      # gtsv.
      "tridiagonal_solve": (lambda jax, jnp, dl, d, du, b: jax.lax.linalg.tridiagonal_solve(
                                dl, d, du, b),
                            lambda r, t: ((_random(r, (6,), t) * np.array([0, 1, 1, 1, 1, 1])).astype(t),
                                          (_random(r, (6,), t) + 6).astype(t),
                                          (_random(r, (6,), t) * np.array([1, 1, 1, 1, 1, 0])).astype(t),
                                          _random(r, (6, 2), t)),
                            all4),
      # Through solve: getrf.
      "expm": (lambda jax, jnp, a: jax.scipy.linalg.expm(a),
               lambda r, t: (_random(r, (4, 4), t) * 0.5,), two),
  }


def write(jax, name, fn, args, out_dir):
  jnp = jax.numpy
  f = lambda *a: fn(jax, jnp, *a)
  jitted = jax.jit(f)
  text = jitted.lower(*args).as_text(dialect="hlo")
  # Source locations only: dropped to keep the committed fixtures small.
  text = re.sub(r', metadata=\{[^{}]*\}', '', text)
  text = re.sub(r',xla\.sdy\.sharding_rule="[^"]*"', '', text)  # Sharding only.
  outs = jax.tree_util.tree_leaves(jitted(*args))
  d = os.path.join(out_dir, name)
  if os.path.isdir(d):
    shutil.rmtree(d)
  os.makedirs(d)
  with open(os.path.join(d, "module.hlo"), "w") as fh:
    fh.write(text)
  for i, a in enumerate(args):
    np.save(os.path.join(d, f"arg{i}.npy"), np.asarray(a))
  for i, o in enumerate(outs):
    np.save(os.path.join(d, f"out{i}.npy"), np.asarray(o))
  targets = sorted({l.split('custom_call_target="')[1].split('"')[0]
                    for l in text.splitlines() if "custom_call_target=" in l})
  return targets


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", default=os.path.join(HERE, "fixtures"))
  parser.add_argument("--only", nargs="*")
  options = parser.parse_args()
  jax = _jax()
  os.makedirs(options.out, exist_ok=True)
  seen = set()
  for index, (name, (fn, build, types)) in enumerate(sorted(cases().items())):
    if options.only and name not in options.only:
      continue
    for type_name in types:
      rng = np.random.default_rng(1000 + index)
      args = build(rng, TYPES[type_name])
      targets = write(jax, f"{name}_{type_name}", fn, args, options.out)
      seen.update(targets)
      print(f"{name}_{type_name}: {' '.join(targets)}")
  with open(os.path.join(options.out, "README"), "w") as fh:
    fh.write(f"Generated by models/linalg/generate.py with JAX {jax.__version__} "
             "(XLA:CPU outputs); do not edit.\n")
  print("targets:", " ".join(sorted(seen)), file=sys.stderr)


if __name__ == "__main__":
  main()
