#!/usr/bin/env python3
"""Real models from JAX as xjit fixtures: HLO text, inputs, XLA:CPU's outputs.

Each model is a jitted JAX function on seeded inputs. For each one this script
writes, under OUT/NAME/:
  module.hlo     the unoptimised module JAX hands to XLA
                 (jax.jit(f).lower(*args).as_text(dialect="hlo"))
  arg0.npy ...   the entry parameters, in the module's parameter order
  out0.npy ...   XLA:CPU's results, the result tuple flattened in order
bf16 arrays travel as uint16 raw bits (xjit's .npy convention, docs/cli.md).

  models/generate.py                     # the committed fixtures (models/fixtures)
  models/generate.py --size bench --out DIR [--only NAME ...]

JAX is a tool here, never a dependency of xjit: the fixtures are committed, and
tests/models reads them without JAX. benchmarks/models/run_models.py imports
MODELS from this file to build the benchmark-size modules.
"""

import argparse
import json
import os
import sys

import numpy as np


def _jax():
  import jax  # Imported late: run_models.py sets XLA_FLAGS first.
  jax.config.update("jax_platforms", "cpu")
  return jax


# Sizes: "test" is the committed fixture (small, a few hundred KB per model),
# "bench" a realistic size for benchmarks/models (never committed).
SIZES = {
    "mlp": {"test": dict(batch=32, d_in=64, hidden=128, classes=10),
            "bench": dict(batch=256, d_in=784, hidden=1024, classes=10)},
    "cnn": {"test": dict(batch=4, hw=16, c_in=3, channels=16, classes=10),
            "bench": dict(batch=16, hw=32, c_in=3, channels=64, classes=10)},
    "gpt": {"test": dict(batch=2, seq=16, d=64, heads=4, vocab=128),
            "bench": dict(batch=4, seq=128, d=768, heads=12, vocab=4096)},
    "lstm": {"test": dict(seq=8, batch=4, d_in=16, hidden=32),
             "bench": dict(seq=64, batch=32, d_in=128, hidden=256)},
    "sparse": {"test": dict(vocab=64, d=16, ids=48, rows=8, cols=64, k=5),
               "bench": dict(vocab=32768, d=256, ids=4096, rows=256, cols=4096, k=16)},
}


def _normal(rng, shape, scale=1.0):
  return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------- 1. MLP
def mlp_train(size):
  jax = _jax()
  jnp = jax.numpy
  s = SIZES["mlp"][size]
  rng = np.random.default_rng(1)
  dims = [s["d_in"], s["hidden"], s["hidden"], s["classes"]]
  params = []
  for a, b in zip(dims[:-1], dims[1:]):
    params += [_normal(rng, (a, b), 1 / np.sqrt(a)), _normal(rng, (b,), 0.1)]
  x = _normal(rng, (s["batch"], s["d_in"]))
  labels = rng.integers(0, s["classes"], s["batch"]).astype(np.int32)

  def loss_fn(params, x, labels):
    h = x
    for i in range(0, len(params) - 2, 2):
      h = jax.nn.relu(h @ params[i] + params[i + 1])
    logits = h @ params[-2] + params[-1]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

  def step(*args):
    *params, x, labels = args
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    new = [p - 0.1 * g for p, g in zip(params, grads)]
    return (loss, *grads, *new)

  return step, (*params, x, labels)


# ---------------------------------------------------------------- 2. CNN
def _cnn(size, train):
  jax = _jax()
  jnp, lax = jax.numpy, jax.lax
  s = SIZES["cnn"][size]
  rng = np.random.default_rng(2)
  c, ci = s["channels"], s["c_in"]

  def conv_w(kh, kw, i, o):
    return _normal(rng, (kh, kw, i, o), np.sqrt(2.0 / (kh * kw * i)))

  # stem conv 3x3, then one residual block (conv-bn-relu-conv-bn + skip).
  params = [conv_w(3, 3, ci, c), np.ones(c, np.float32), np.zeros(c, np.float32),
            conv_w(3, 3, c, c), np.ones(c, np.float32), np.zeros(c, np.float32),
            conv_w(3, 3, c, c), np.ones(c, np.float32), np.zeros(c, np.float32),
            _normal(rng, (c, s["classes"]), 1 / np.sqrt(c)),
            np.zeros(s["classes"], np.float32)]
  x = _normal(rng, (s["batch"], s["hw"], s["hw"], ci))
  labels = rng.integers(0, s["classes"], s["batch"]).astype(np.int32)

  def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))

  def bn(x, g, b):  # Batch norm with batch statistics (training mode).
    mean = jnp.mean(x, axis=(0, 1, 2))
    var = jnp.mean(jnp.square(x - mean), axis=(0, 1, 2))
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b

  def forward(params, x):
    w0, g0, b0, w1, g1, b1, w2, g2, b2, wd, bd = params
    h = jax.nn.relu(bn(conv(x, w0), g0, b0))
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    r = jax.nn.relu(bn(conv(h, w1), g1, b1))
    r = bn(conv(r, w2), g2, b2)
    h = jax.nn.relu(h + r)
    return jnp.mean(h, axis=(1, 2)) @ wd + bd

  if not train:
    return (lambda *a: forward(a[:-1], a[-1])), (*params, x)

  def loss_fn(params, x, labels):
    logp = jax.nn.log_softmax(forward(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

  def step(*args):
    *params, x, labels = args
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    return (loss, *grads, *[p - 0.1 * g for p, g in zip(params, grads)])

  return step, (*params, x, labels)


def cnn_forward(size):
  return _cnn(size, train=False)


def cnn_train(size):
  return _cnn(size, train=True)


# ---------------------------------------------------------------- 3. GPT-2 block
def _gpt(size, train, dtype_name):
  jax = _jax()
  jnp = jax.numpy
  dtype = jnp.bfloat16 if dtype_name == "bf16" else jnp.float32
  s = SIZES["gpt"][size]
  rng = np.random.default_rng(3)
  b, t, d, nh, v = s["batch"], s["seq"], s["d"], s["heads"], s["vocab"]
  f32 = [_normal(rng, (v, d), 0.02), _normal(rng, (t, d), 0.01),       # wte, wpe
         np.ones(d, np.float32), np.zeros(d, np.float32),              # ln1
         _normal(rng, (d, 3 * d), 0.02), np.zeros(3 * d, np.float32),  # qkv
         _normal(rng, (d, d), 0.02), np.zeros(d, np.float32),          # attn proj
         np.ones(d, np.float32), np.zeros(d, np.float32),              # ln2
         _normal(rng, (d, 4 * d), 0.02), np.zeros(4 * d, np.float32),  # fc
         _normal(rng, (4 * d, d), 0.02), np.zeros(d, np.float32),      # proj
         np.ones(d, np.float32), np.zeros(d, np.float32)]              # ln_f
  params = [np.asarray(jnp.asarray(p, dtype)) for p in f32]
  tokens = rng.integers(0, v, (b, t)).astype(np.int32)
  targets = rng.integers(0, v, (b, t)).astype(np.int32)

  def ln(x, g, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + bias

  def forward(p, tokens):
    (wte, wpe, g1, b1, wqkv, bqkv, wo, bo, g2, b2, wfc, bfc, wpr, bpr, gf, bf) = p
    x = wte[tokens] + wpe[None, :t]                       # embedding lookup: gather
    q, k, vv = jnp.split(ln(x, g1, b1) @ wqkv + bqkv, 3, axis=-1)
    heads = lambda z: z.reshape(b, t, nh, d // nh).transpose(0, 2, 1, 3)
    q, k, vv = heads(q), heads(k), heads(vv)
    att = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(jnp.asarray(d // nh, dtype))
    causal = jnp.tril(jnp.ones((t, t), bool))
    att = jnp.where(causal, att, jnp.asarray(-1e4, dtype))
    y = jax.nn.softmax(att, axis=-1) @ vv
    x = x + y.transpose(0, 2, 1, 3).reshape(b, t, d) @ wo + bo
    h = jax.nn.gelu(ln(x, g2, b2) @ wfc + bfc)            # tanh approximation
    x = x + h @ wpr + bpr
    return ln(x, gf, bf) @ wte.T                          # tied output embedding

  if not train:
    return (lambda *a: forward(a[:-1], a[-1])), (*params, tokens)

  def loss_fn(p, tokens, targets):
    logp = jax.nn.log_softmax(forward(p, tokens).astype(jnp.float32))
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

  def step(*args):
    *p, tokens, targets = args
    loss, grads = jax.value_and_grad(loss_fn)(p, tokens, targets)
    new = [w - jnp.asarray(0.1, dtype) * g for w, g in zip(p, grads)]
    return (loss, *grads, *new)

  return step, (*params, tokens, targets)


def gpt_forward_f32(size):
  return _gpt(size, False, "f32")


def gpt_train_f32(size):
  return _gpt(size, True, "f32")


def gpt_forward_bf16(size):
  return _gpt(size, False, "bf16")


def gpt_train_bf16(size):
  return _gpt(size, True, "bf16")


# ---------------------------------------------------------------- 4. LSTM
def _lstm(size, train):
  jax = _jax()
  jnp = jax.numpy
  s = SIZES["lstm"][size]
  rng = np.random.default_rng(4)
  t, b, di, h = s["seq"], s["batch"], s["d_in"], s["hidden"]
  params = [_normal(rng, (di, 4 * h), 1 / np.sqrt(di)),
            _normal(rng, (h, 4 * h), 1 / np.sqrt(h)),
            _normal(rng, (4 * h,), 0.1), _normal(rng, (h, 1), 1 / np.sqrt(h))]
  xs = _normal(rng, (t, b, di))
  y = _normal(rng, (b, 1))

  def run(p, xs):
    wx, wh, bias, _ = p

    def cell(carry, x):
      hh, cc = carry
      z = x @ wx + hh @ wh + bias
      i, f, g, o = jnp.split(z, 4, axis=-1)
      cc = jax.nn.sigmoid(f) * cc + jax.nn.sigmoid(i) * jnp.tanh(g)
      hh = jax.nn.sigmoid(o) * jnp.tanh(cc)
      return (hh, cc), hh

    zeros = jnp.zeros((b, h), jnp.float32)
    (hh, cc), hs = jax.lax.scan(cell, (zeros, zeros), xs)
    return hs, cc

  if not train:
    return (lambda *a: run(a[:-1], a[-1])), (*params, xs)

  def loss_fn(p, xs, y):
    hs, _ = run(p, xs)
    return jnp.mean(jnp.square(hs[-1] @ p[3] - y))

  def step(*args):
    *p, xs, y = args
    loss, grads = jax.value_and_grad(loss_fn)(p, xs, y)
    return (loss, *grads, *[w - 0.1 * g for w, g in zip(p, grads)])

  return step, (*params, xs, y)


def lstm_forward(size):
  return _lstm(size, train=False)


def lstm_train(size):
  return _lstm(size, train=True)


# ---------------------------------------------------------------- 5. gather/scatter/sort
def sparse(size):
  jax = _jax()
  jnp = jax.numpy
  s = SIZES["sparse"][size]
  rng = np.random.default_rng(5)
  emb = _normal(rng, (s["vocab"], s["d"]))
  ids = rng.integers(0, s["vocab"], s["ids"]).astype(np.int32)  # with repeats
  upstream = _normal(rng, (s["ids"], s["d"]))
  scores = _normal(rng, (s["rows"], s["cols"]))

  def f(emb, ids, upstream, scores):
    # The embedding gradient: the transpose of a gather is a scatter-add.
    grad = jax.grad(lambda e: jnp.sum(e[ids] * upstream))(emb)
    top_vals, top_idx = jax.lax.top_k(scores, s["k"])
    order = jnp.argsort(scores, axis=-1)                 # a two-operand sort
    ranked = jnp.take_along_axis(scores, order, axis=-1)  # a gather by indices
    return grad, top_vals, top_idx, order, ranked

  return f, (emb, ids, upstream, scores)


MODELS = {
    "mlp_train": mlp_train,
    "cnn_forward": cnn_forward,
    "cnn_train": cnn_train,
    "gpt_forward_f32": gpt_forward_f32,
    "gpt_train_f32": gpt_train_f32,
    "gpt_forward_bf16": gpt_forward_bf16,
    "gpt_train_bf16": gpt_train_bf16,
    "lstm_forward": lstm_forward,
    "lstm_train": lstm_train,
    "sparse": sparse,
}


def to_npy_array(a):
  """An array as xjit's .npy convention wants it (bf16 as uint16 bits)."""
  a = np.asarray(a)
  if a.dtype.name == "bfloat16":
    return a.view(np.uint16)
  return a


def lower(name, size):
  """(jitted function, flat args, HLO text) for one model."""
  jax = _jax()
  fn, args = MODELS[name](size)
  jitted = jax.jit(fn, keep_unused=True)
  text = jitted.lower(*args).as_text(dialect="hlo")
  return jitted, args, text


def write_model(name, size, out_dir):
  jax = _jax()
  jitted, args, text = lower(name, size)
  d = os.path.join(out_dir, name)
  os.makedirs(d, exist_ok=True)
  for f in os.listdir(d):
    if f.endswith(".npy") or f.endswith(".hlo"):
      os.remove(os.path.join(d, f))
  with open(os.path.join(d, "module.hlo"), "w") as f:
    f.write(text)
  for i, a in enumerate(args):
    np.save(os.path.join(d, f"arg{i}.npy"), to_npy_array(a))
  outs = jax.tree_util.tree_leaves(jitted(*args))
  for i, o in enumerate(outs):
    np.save(os.path.join(d, f"out{i}.npy"), to_npy_array(o))
  return len(args), len(outs)


def main():
  here = os.path.dirname(os.path.abspath(__file__))
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--out", default=os.path.join(here, "fixtures"))
  ap.add_argument("--size", choices=["test", "bench"], default="test")
  ap.add_argument("--only", nargs="*", choices=sorted(MODELS), default=None)
  opts = ap.parse_args()
  if opts.size == "test":
    # The fixtures are references for HLO's semantics, where every bf16 op
    # rounds its result; XLA:CPU by default keeps excess f32 precision through
    # fused bf16 chains. (The benchmark keeps XLA's defaults.)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_allow_excess_precision=false").strip()
  jax = _jax()
  names = opts.only or list(MODELS)
  manifest = {}
  for name in names:
    n_args, n_outs = write_model(name, opts.size, opts.out)
    manifest[name] = dict(args=n_args, outs=n_outs)
    print(f"{name}: {n_args} args, {n_outs} outputs", flush=True)
  with open(os.path.join(opts.out, "README"), "w") as f:
    f.write(f"Generated by models/generate.py --size {opts.size} with JAX {jax.__version__}"
            " (XLA:CPU outputs); do not edit.\n")
  return 0


if __name__ == "__main__":
  sys.exit(main())
