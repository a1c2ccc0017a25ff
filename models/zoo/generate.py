#!/usr/bin/env python3
"""The zoo: small programs as people write them, from libraries nobody here wrote.

models/generate.py holds the models xjit was tuned on and models/programs the
library programs of issue 26; this zoo (issue 28) is the rest of what users
run: layers and example models of Flax (linen and nnx), Equinox and Haiku,
Optax optimisers, Jraph graph networks, NumPyro and BlackJAX samplers,
Optimistix and Lineax solvers, and JAX idioms (per-example gradients, roll and
pad stencils, cumulative reductions, FFTs, random sampling, masking, einsums,
convolutions of every kind, pooling, attention variants, embedding bags),
and, since session 19, scientific code: a stiff diffrax ODE solve, Gamma
fits by Newton's method on special functions, Gaussian-process likelihoods,
jnp.linalg's decompositions, optax.lbfgs, an N-body simulation, a Kalman
smoother, an associative-scan recurrence and Krylov solvers.

For each program this script writes, under OUT/NAME/, the files of
models/programs/generate.py:
  module.hlo     the unoptimised module (jax.jit(f).lower(*args).as_text("hlo"))
  arg0.npy ...   the entry parameters, in the module's parameter order
  out0.npy ...   XLA:CPU's results, the result tuple flattened in order
and OUT/zoo.json: per program its library and that library's version, the
number of instructions in module.hlo, and the argument and output counts.

  models/zoo/generate.py                         # the committed fixtures (small shapes)
  models/zoo/generate.py --size bench --out DIR  # benchmark sizes (not committed)
  models/zoo/generate.py --only NAME ... --out DIR

Shapes: --size test keeps every fixture small (the interpreter runs them in
CI); --size bench is what benchmarks/zoo/run_zoo.py times. The inputs are
seeded, so a rerun writes the same arguments (XLA's outputs may differ in the
last bits between jaxlib versions).

JAX and the libraries are tools here, never a dependency of xjit: the
fixtures are committed, and the test and the benchmark read them without JAX.
"""

import argparse
import importlib.metadata
import json
import os
import sys

import numpy as np


def _jax():
  import jax
  jax.config.update("jax_platforms", "cpu")
  return jax


def _normal(rng, shape, scale=1.0):
  return (rng.standard_normal(shape) * scale).astype(np.float32)


def _key(seed):
  """A raw threefry key as JAX's default PRNG holds it (uint32[2])."""
  return np.array([0, seed], np.uint32)


PROGRAMS = {}


def program(library):
  """Registers a zoo program; `library` is the distribution it comes from
  (its version is recorded in zoo.json), "jax" for JAX idioms."""
  def register(fn):
    PROGRAMS[fn.__name__] = (fn, library)
    return fn
  return register


def _sz(size, test, bench):
  return bench if size == "bench" else test


def _flat_apply(apply, params):
  """(fn over flat leaves + inputs, flat leaves) for a parameter pytree, so
  that every parameter is an entry parameter of the module."""
  jax = _jax()
  leaves, treedef = jax.tree_util.tree_flatten(params)

  def fn(*args):
    n = len(leaves)
    return apply(jax.tree_util.tree_unflatten(treedef, args[:n]), *args[n:])
  return fn, [np.asarray(l) for l in leaves]


# =========================================================== Flax (linen)
@program("flax")
def flax_mnist_cnn(size):
  """The CNN of Flax's MNIST example (examples/mnist): two 3x3 convolutions
  with relu and 2x2 average pooling, two dense layers; one SGD step on its
  softmax cross-entropy loss (optax)."""
  jax = _jax()
  import flax.linen as nn
  import optax

  class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
      x = nn.Conv(features=8, kernel_size=(3, 3))(x)
      x = nn.relu(x)
      x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
      x = nn.Conv(features=16, kernel_size=(3, 3))(x)
      x = nn.relu(x)
      x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
      x = x.reshape((x.shape[0], -1))
      x = nn.Dense(features=32)(x)
      x = nn.relu(x)
      return nn.Dense(features=10)(x)

  b, hw = _sz(size, (4, 12), (64, 28))
  rng = np.random.default_rng(1)
  x = _normal(rng, (b, hw, hw, 1))
  labels = rng.integers(0, 10, b).astype(np.int32)
  model = CNN()
  params = model.init(jax.random.PRNGKey(1), x)

  def step(p, x, labels):
    def loss(p):
      logits = model.apply(p, x)
      return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    l, g = jax.value_and_grad(loss)(p)
    return l, jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)

  fn, leaves = _flat_apply(step, params)
  return fn, (*leaves, x, labels)


@program("flax")
def flax_self_attention(size):
  """flax.linen.MultiHeadDotProductAttention as self-attention with a causal
  mask (nn.make_causal_mask) and a padding mask, then LayerNorm."""
  jax = _jax()
  import flax.linen as nn

  class Block(nn.Module):
    @nn.compact
    def __call__(self, x, valid):
      mask = nn.combine_masks(nn.make_causal_mask(valid), nn.make_attention_mask(valid, valid))
      y = nn.MultiHeadDotProductAttention(num_heads=4, qkv_features=32)(x, x, mask=mask)
      return nn.LayerNorm()(x + y)

  b, t, d = _sz(size, (2, 8, 32), (16, 128, 256))
  rng = np.random.default_rng(2)
  x = _normal(rng, (b, t, d))
  valid = np.ones((b, t), np.int32)
  valid[0, t - 2:] = 0
  model = Block()
  params = model.init(jax.random.PRNGKey(2), x, valid)
  fn, leaves = _flat_apply(lambda p, x, v: model.apply(p, x, v), params)
  return fn, (*leaves, x, valid)


@program("flax")
def flax_lstm(size):
  """flax.linen.RNN over an OptimizedLSTMCell (a scan), the last carry's
  hidden state through a Dense head."""
  jax = _jax()
  import flax.linen as nn

  class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
      (c, h), ys = nn.RNN(nn.OptimizedLSTMCell(features=16), return_carry=True)(x)
      return nn.Dense(4)(h), ys

  b, t, d = _sz(size, (2, 6, 8), (32, 64, 128))
  rng = np.random.default_rng(3)
  x = _normal(rng, (b, t, d))
  model = Model()
  params = model.init(jax.random.PRNGKey(3), x)
  fn, leaves = _flat_apply(lambda p, x: model.apply(p, x), params)
  return fn, (*leaves, x)


@program("flax")
def flax_depthwise_separable(size):
  """A MobileNet block in flax.linen, NHWC: 3x3 depthwise convolution
  (feature_group_count = channels), BatchNorm (inference), relu6, 1x1
  pointwise convolution."""
  jax = _jax()
  import flax.linen as nn

  class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
      c = x.shape[-1]
      x = nn.Conv(c, (3, 3), feature_group_count=c, use_bias=False)(x)
      x = nn.BatchNorm(use_running_average=True)(x)
      x = nn.relu6(x)
      return nn.Conv(2 * c, (1, 1))(x)

  b, hw, c = _sz(size, (2, 8, 8), (16, 56, 64))
  rng = np.random.default_rng(4)
  x = _normal(rng, (b, hw, hw, c))
  model = Block()
  variables = model.init(jax.random.PRNGKey(4), x)
  fn, leaves = _flat_apply(lambda v, x: model.apply(v, x), variables)
  return fn, (*leaves, x)


@program("flax")
def flax_conv_transpose(size):
  """A decoder stage in flax.linen: ConvTranspose with stride 2 (NHWC), GroupNorm,
  swish, a strided 3x3 Conv back down."""
  jax = _jax()
  import flax.linen as nn

  class Up(nn.Module):
    @nn.compact
    def __call__(self, x):
      x = nn.ConvTranspose(8, (3, 3), strides=(2, 2))(x)
      x = nn.GroupNorm(num_groups=4)(x)
      x = nn.swish(x)
      return nn.Conv(8, (3, 3), strides=(2, 2))(x)

  b, hw, c = _sz(size, (2, 6, 4), (16, 32, 64))
  rng = np.random.default_rng(5)
  x = _normal(rng, (b, hw, hw, c))
  model = Up()
  params = model.init(jax.random.PRNGKey(5), x)
  fn, leaves = _flat_apply(lambda p, x: model.apply(p, x), params)
  return fn, (*leaves, x)


@program("flax")
def flax_nnx_dropout_train(size):
  """A flax.nnx MLP (Linear, LayerNorm, gelu, Dropout) in training mode: one
  gradient step with the dropout mask drawn from an nnx.Rngs stream made from
  the key argument (threefry in HLO)."""
  jax = _jax()
  jnp = jax.numpy
  from flax import nnx

  class MLP(nnx.Module):
    def __init__(self, din, dh, dout, rngs):
      self.l1 = nnx.Linear(din, dh, rngs=rngs)
      self.ln = nnx.LayerNorm(dh, rngs=rngs)
      self.drop = nnx.Dropout(0.2)
      self.l2 = nnx.Linear(dh, dout, rngs=rngs)

    def __call__(self, x, rngs):
      return self.l2(self.drop(nnx.gelu(self.ln(self.l1(x))), rngs=rngs))

  b, din, dh = _sz(size, (8, 16, 32), (256, 512, 1024))
  graphdef, state = nnx.split(MLP(din, dh, 4, nnx.Rngs(params=6)))
  rng = np.random.default_rng(6)
  x = _normal(rng, (b, din))
  y = _normal(rng, (b, 4))

  def step(state, key, x, y):
    def loss(state):
      m = nnx.merge(graphdef, state)
      return jnp.mean(jnp.square(m(x, nnx.Rngs(dropout=key)) - y))
    l, g = jax.value_and_grad(loss)(state)
    return l, g

  fn, leaves = _flat_apply(step, state)
  return fn, (*leaves, _key(6), x, y)


# =========================================================== Equinox
@program("equinox")
def equinox_conv1d(size):
  """eqx.nn.Conv1d (channels first, dilation 2, 'SAME'-style padding) then
  eqx.nn.MaxPool1d and a Linear head, vmapped over the batch."""
  jax = _jax()
  jnp = jax.numpy
  import equinox as eqx
  k = jax.random.split(jax.random.PRNGKey(8), 3)
  c, length = _sz(size, (4, 32), (64, 1024))
  conv = eqx.nn.Conv1d(c, 8, kernel_size=3, dilation=2, padding=2, key=k[0])
  conv2 = eqx.nn.Conv1d(8, 8, kernel_size=5, stride=2, padding=2, key=k[1])
  pool = eqx.nn.MaxPool1d(kernel_size=2, stride=2)
  head = eqx.nn.Linear(8, 3, key=k[2])
  model = (conv, conv2, pool, head)
  params, static = eqx.partition(model, eqx.is_array)

  def apply(p, x):
    conv, conv2, pool, head = eqx.combine(p, static)
    def one(x):
      h = pool(jax.nn.relu(conv2(jax.nn.relu(conv(x)))))
      return head(jnp.mean(h, axis=-1))
    return jax.vmap(one)(x)

  b = _sz(size, 2, 32)
  x = _normal(np.random.default_rng(8), (b, c, length))
  fn, leaves = _flat_apply(apply, params)
  return fn, (*leaves, x)


@program("equinox")
def equinox_mha(size):
  """eqx.nn.MultiheadAttention (cross-attention, 4 heads, per-head query/key
  and value/output sizes differ) vmapped over a batch, with a boolean mask."""
  jax = _jax()
  import equinox as eqx
  d, tq, tk, b = _sz(size, (16, 5, 7, 2), (256, 128, 256, 16))
  mha = eqx.nn.MultiheadAttention(4, d, qk_size=d // 8, vo_size=d // 2, key=jax.random.PRNGKey(9))
  params, static = eqx.partition(mha, eqx.is_array)
  rng = np.random.default_rng(9)
  q = _normal(rng, (b, tq, d))
  kv = _normal(rng, (b, tk, d))
  mask = rng.random((b, tq, tk)) > 0.3
  mask[:, :, 0] = True

  def apply(p, q, kv, mask):
    m = eqx.combine(p, static)
    return jax.vmap(lambda q, kv, mk: m(q, kv, kv, mask=mk))(q, kv, mask)

  fn, leaves = _flat_apply(apply, params)
  return fn, (*leaves, q, kv, mask)


@program("equinox")
def equinox_grouped_conv(size):
  """eqx.nn.Conv2d (NCHW, groups=4, stride 2) then eqx.nn.GroupNorm and a
  second ungrouped 3x3 Conv2d: value and gradient of a squared loss."""
  jax = _jax()
  jnp = jax.numpy
  import equinox as eqx
  k = jax.random.split(jax.random.PRNGKey(10), 2)
  c, hw, b = _sz(size, (8, 8, 2), (64, 32, 16))
  model = (eqx.nn.Conv2d(c, 16, 3, stride=2, padding=1, groups=4, key=k[0]),
           eqx.nn.GroupNorm(4, 16),
           eqx.nn.Conv2d(16, 8, 3, padding=1, key=k[1]))
  params, static = eqx.partition(model, eqx.is_array)
  x = _normal(np.random.default_rng(10), (b, c, hw, hw))

  def apply(p, x):
    def loss(p):
      c1, gn, c2 = eqx.combine(p, static)
      y = jax.vmap(lambda x: c2(jax.nn.gelu(gn(c1(x)))))(x)
      return jnp.mean(y ** 2)
    l, g = jax.value_and_grad(loss)(p)
    return l, g

  fn, leaves = _flat_apply(apply, params)
  return fn, (*leaves, x)


# =========================================================== Haiku
@program("dm-haiku")
def haiku_resnet_block(size):
  """A ResNet basic block (v1) from Haiku modules: hk.Conv2D (strided),
  hk.BatchNorm in training mode (batch statistics, state updated), hk.Conv2D,
  a strided 1x1 projection shortcut (hk.transform_with_state)."""
  jax = _jax()
  import haiku as hk

  def f(x):
    bn = lambda: hk.BatchNorm(create_scale=True, create_offset=True, decay_rate=0.9)
    y = hk.Conv2D(16, 3, stride=2, with_bias=False)(x)
    y = jax.nn.relu(bn()(y, is_training=True))
    y = hk.Conv2D(16, 3, with_bias=False)(y)
    y = bn()(y, is_training=True)
    s = hk.Conv2D(16, 1, stride=2, with_bias=False)(x)
    return jax.nn.relu(y + s)

  t = hk.transform_with_state(f)
  b, hw, c = _sz(size, (2, 8, 4), (16, 56, 64))
  x = _normal(np.random.default_rng(11), (b, hw, hw, c))
  params, state = t.init(jax.random.PRNGKey(11), x)

  def apply(ps, x):
    p, s = ps
    return t.apply(p, s, None, x)

  fn, leaves = _flat_apply(apply, (params, state))
  return fn, (*leaves, x)


@program("dm-haiku")
def haiku_gru_unroll(size):
  """hk.GRU unrolled over time with hk.dynamic_unroll (a scan), time-major,
  then an hk.Linear on every step."""
  jax = _jax()
  import haiku as hk

  def f(x):
    core = hk.GRU(16)
    ys, _ = hk.dynamic_unroll(core, x, core.initial_state(x.shape[1]))
    return hk.BatchApply(hk.Linear(2))(ys)

  t = hk.without_apply_rng(hk.transform(f))
  steps, b, d = _sz(size, (6, 2, 8), (64, 32, 128))
  x = _normal(np.random.default_rng(12), (steps, b, d))
  params = t.init(jax.random.PRNGKey(12), x)
  fn, leaves = _flat_apply(t.apply, params)
  return fn, (*leaves, x)


@program("dm-haiku")
def haiku_embed_mlp(size):
  """hk.Embed lookups (a gather) averaged over a bag of tokens with a
  padding mask, then hk.nets.MLP: a bag-of-words classifier."""
  jax = _jax()
  jnp = jax.numpy
  import haiku as hk
  vocab, d = _sz(size, (50, 16), (20000, 128))

  def f(tokens):
    e = hk.Embed(vocab, d)(tokens)
    mask = (tokens != 0)[..., None]
    bag = jnp.sum(e * mask, axis=1) / jnp.maximum(jnp.sum(mask, axis=1), 1)
    return hk.nets.MLP([32, 4])(bag)

  t = hk.without_apply_rng(hk.transform(f))
  b, length = _sz(size, (4, 6), (256, 64))
  tokens = np.random.default_rng(13).integers(0, vocab, (b, length)).astype(np.int32)
  tokens[0, 3:] = 0
  params = t.init(jax.random.PRNGKey(13), tokens)
  fn, leaves = _flat_apply(t.apply, params)
  return fn, (*leaves, tokens)


# =========================================================== Optax
@program("optax")
def optax_adamw_clip(size):
  """optax.chain(clip_by_global_norm, adamw with a warmup-cosine schedule)
  for 20 steps of logistic regression in fori_loop."""
  jax = _jax()
  import optax
  n, d = _sz(size, (16, 8), (4096, 256))
  rng = np.random.default_rng(14)
  x = _normal(rng, (n, d))
  y = (rng.random(n) > 0.5).astype(np.float32)
  sched = optax.warmup_cosine_decay_schedule(0.0, 0.1, 5, 20)
  opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=1e-3))

  def train(w, x, y):
    def loss(w):
      return optax.sigmoid_binary_cross_entropy(x @ w[:-1] + w[-1], y).mean()
    def body(_, c):
      w, s = c
      u, s = opt.update(jax.grad(loss)(w), s, w)
      return optax.apply_updates(w, u), s
    w, _ = jax.lax.fori_loop(0, 20, body, (w, opt.init(w)))
    return w, loss(w)

  return train, (np.zeros(d + 1, np.float32), x, y)


@program("optax")
def optax_lion_multisteps(size):
  """optax.lion wrapped in optax.MultiSteps (gradient accumulation over 2
  micro-batches, conditional apply) on a small two-layer regression, 10
  steps under lax.scan, the loss per step."""
  jax = _jax()
  jnp = jax.numpy
  import optax
  n, d, h = _sz(size, (16, 8, 16), (2048, 256, 512))
  rng = np.random.default_rng(15)
  x = _normal(rng, (n, d))
  y = _normal(rng, (n, 1))
  w1 = _normal(rng, (d, h), 0.3)
  w2 = _normal(rng, (h, 1), 0.3)
  opt = optax.MultiSteps(optax.lion(1e-3), every_k_schedule=2)

  def train(w1, w2, x, y):
    def loss(p):
      return jnp.mean((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)
    def body(c, _):
      p, s = c
      l, g = jax.value_and_grad(loss)(p)
      u, s = opt.update(g, s, p)
      return (optax.apply_updates(p, u), s), l
    params = (w1, w2)
    (p, _), ls = jax.lax.scan(body, (params, opt.init(params)), None, length=10)
    return ls, p[0], p[1]

  return train, (w1, w2, x, y)


# =========================================================== Jraph
def _graph(rng, n_graphs, nodes_per, edges_per, d):
  import jraph
  n = n_graphs * nodes_per
  e = n_graphs * edges_per
  senders = np.concatenate([rng.integers(0, nodes_per, edges_per) + g * nodes_per
                            for g in range(n_graphs)]).astype(np.int32)
  receivers = np.concatenate([rng.integers(0, nodes_per, edges_per) + g * nodes_per
                              for g in range(n_graphs)]).astype(np.int32)
  return jraph.GraphsTuple(
      nodes=_normal(rng, (n, d)), edges=_normal(rng, (e, d)), senders=senders,
      receivers=receivers, globals=_normal(rng, (n_graphs, d)),
      n_node=np.full(n_graphs, nodes_per, np.int32), n_edge=np.full(n_graphs, edges_per, np.int32))


@program("jraph")
def jraph_gcn(size):
  """Two jraph.GraphConvolution layers (symmetric normalisation: segment
  sums of degrees, gathers by sender, scatter by receiver), then a readout
  with jraph.segment_mean over the nodes of each graph."""
  jax = _jax()
  jnp = jax.numpy
  import jraph
  g_count, nodes_per, edges_per, d = _sz(size, (2, 6, 12, 8), (64, 128, 1024, 64))
  rng = np.random.default_rng(16)
  g = _graph(rng, g_count, nodes_per, edges_per, d)
  w1 = _normal(rng, (d, 16), 0.3)
  w2 = _normal(rng, (16, 16), 0.3)

  def apply(nodes, senders, receivers, n_node, w1, w2):
    graph = g._replace(nodes=nodes, senders=senders, receivers=receivers, n_node=n_node)
    graph = jraph.GraphConvolution(lambda x: jax.nn.relu(x @ w1), add_self_edges=True)(graph)
    graph = jraph.GraphConvolution(lambda x: x @ w2)(graph)
    gid = jnp.repeat(jnp.arange(g_count), n_node, total_repeat_length=nodes.shape[0])
    return jraph.segment_mean(graph.nodes, gid, num_segments=g_count)

  return apply, (g.nodes, g.senders, g.receivers, g.n_node, w1, w2)


@program("jraph")
def jraph_graph_network(size):
  """A jraph.GraphNetwork step (interaction network with globals): edge,
  node and global update MLPs, segment sums and a segment softmax
  (jraph.segment_softmax) for attention-weighted messages."""
  jax = _jax()
  jnp = jax.numpy
  import jraph
  g_count, nodes_per, edges_per, d = _sz(size, (2, 5, 10, 8), (32, 128, 1024, 64))
  rng = np.random.default_rng(17)
  g = _graph(rng, g_count, nodes_per, edges_per, d)
  we = _normal(rng, (4 * d, d), 0.2)
  wn = _normal(rng, (3 * d, d), 0.2)
  wg = _normal(rng, (3 * d, d), 0.2)
  wa = _normal(rng, (d,), 0.2)

  def apply(nodes, edges, globals_, senders, receivers, we, wn, wg, wa):
    graph = g._replace(nodes=nodes, edges=edges, globals=globals_, senders=senders,
                       receivers=receivers)

    def update_edge(e, s, r, gl):
      return jax.nn.relu(jnp.concatenate([e, s, r, gl], axis=-1) @ we)

    def attention_logit(e, s, r, gl):
      return e @ wa

    def attention_reduce(e, w):
      return e * w[:, None]

    def update_node(n, s, r, gl):
      return jnp.tanh(jnp.concatenate([n, r, gl], axis=-1) @ wn)

    def update_global(n, e, gl):
      return jnp.concatenate([n, e, gl], axis=-1) @ wg

    net = jraph.GraphNetwork(update_edge, update_node, update_global,
                             attention_logit_fn=attention_logit,
                             attention_reduce_fn=attention_reduce)
    out = net(graph)
    return out.nodes, out.edges, out.globals

  return apply, (g.nodes, g.edges, g.globals, g.senders, g.receivers, we, wn, wg, wa)


# =========================================================== NumPyro
@program("numpyro")
def numpyro_hmc(size):
  """NumPyro's HMC kernel (numpyro.infer.hmc.hmc with a fixed step size and
  trajectory length) on a Bayesian logistic regression's potential, 20
  samples under lax.scan."""
  jax = _jax()
  jnp = jax.numpy
  import numpyro.distributions as dist
  from numpyro.infer.hmc import hmc
  n, d = _sz(size, (16, 3), (2048, 32))
  rng = np.random.default_rng(18)
  x = _normal(rng, (n, d))
  y = (rng.random(n) > 0.5).astype(np.float32)

  def run(key, x, y):
    def potential(w):
      prior = dist.Normal(0.0, 1.0).log_prob(w).sum()
      return -(prior + dist.Bernoulli(logits=x @ w).log_prob(y).sum())
    init_kernel, sample_kernel = hmc(potential_fn=potential, algo="HMC")
    k0, k1 = jax.random.split(key)
    state = init_kernel(jnp.zeros(d), num_warmup=0, step_size=0.05, trajectory_length=0.4,
                        adapt_step_size=False, adapt_mass_matrix=False, rng_key=k0)
    def body(s, _):
      s = sample_kernel(s)
      return s, (s.z, s.potential_energy)
    _, (zs, pe) = jax.lax.scan(body, state, None, length=20)
    return zs, pe

  return run, (_key(18), x, y)


@program("numpyro")
def numpyro_distributions(size):
  """NumPyro distributions as a model's log-joint is written: samples from
  MultivariateNormal (Cholesky), Categorical and LogNormal (a transformed
  Normal), their log-densities (triangular solves, logsumexp), and StudentT's
  log-density (lgamma)."""
  jax = _jax()
  jnp = jax.numpy
  import numpyro.distributions as dist
  n, d = _sz(size, (8, 3), (4096, 16))
  rng = np.random.default_rng(19)
  a = _normal(rng, (d, d))
  cov = (a @ a.T + d * np.eye(d)).astype(np.float32)
  logits = _normal(rng, (5,))

  def f(key, cov, logits):
    k = jax.random.split(key, 4)
    mvn = dist.MultivariateNormal(jnp.zeros(d), covariance_matrix=cov)
    xs = mvn.sample(k[0], (n,))
    cat = dist.Categorical(logits=logits)
    cs = cat.sample(k[1], (n,))
    ln = dist.LogNormal(0.5, 0.8)
    ls = ln.sample(k[2], (n,))
    st = dist.StudentT(4.0, 0.0, 1.0)
    return (xs, cs, ls, mvn.log_prob(xs), cat.log_prob(cs), ln.log_prob(ls),
            st.log_prob(ls))

  return f, (_key(19), cov, logits)


# =========================================================== BlackJAX
@program("blackjax")
def blackjax_mala(size):
  """BlackJAX's MALA kernel (blackjax.mala) on a banana-shaped 2-d density,
  30 steps under lax.scan: gradients, a Metropolis correction with uniform
  draws and log-density differences."""
  jax = _jax()
  import blackjax
  chains = _sz(size, 4, 256)

  def logdensity(x):
    return -0.5 * (x[0] ** 2 / 4.0 + (x[1] - 0.25 * x[0] ** 2) ** 2)

  def run(key, x0):
    mala = blackjax.mala(logdensity, step_size=0.1)

    def chain(k, x):
      s = mala.init(x)
      def one(s, kk):
        s, info = mala.step(kk, s)
        return s, (s.position, info.is_accepted)
      _, out = jax.lax.scan(one, s, jax.random.split(k, 30))
      return out
    return jax.vmap(chain)(jax.random.split(key, chains), x0)

  x0 = _normal(np.random.default_rng(20), (chains, 2))
  return run, (_key(20), x0)


@program("blackjax")
def blackjax_rmh(size):
  """BlackJAX's random-walk Metropolis-Hastings (blackjax.additive_step_random_walk
  with a normal proposal) on a 2-component Gaussian mixture, 50 steps."""
  jax = _jax()
  jnp = jax.numpy
  import blackjax
  d, chains = _sz(size, (3, 2), (64, 128))

  def logdensity(x):
    a = -0.5 * jnp.sum((x - 1.0) ** 2)
    b = -0.5 * jnp.sum((x + 1.0) ** 2)
    return jnp.logaddexp(a, b)

  def run(key, x0):
    rw = blackjax.additive_step_random_walk.normal_random_walk(logdensity, 0.5 * jnp.ones(d))

    def chain(k, x):
      def one(s, kk):
        s, info = rw.step(kk, s)
        return s, s.position
      _, xs = jax.lax.scan(one, rw.init(x), jax.random.split(k, 50))
      return xs
    return jax.vmap(chain)(jax.random.split(key, chains), x0)

  return run, (_key(21), _normal(np.random.default_rng(21), (chains, d)))


# =========================================================== Optimistix / Lineax
@program("optimistix")
def optimistix_newton(size):
  """optimistix.root_find with optimistix.Newton on a nonlinear system
  (a discretised Bratu problem): Jacobians by automatic differentiation, an
  LU solve per step (lineax), a while loop until the Cauchy termination holds."""
  jax = _jax()
  jnp = jax.numpy
  import optimistix as optx
  n = _sz(size, 6, 128)
  h = 1.0 / (n + 1)

  def fn(u, lam):
    up = jnp.concatenate([u[1:], jnp.zeros(1)])
    um = jnp.concatenate([jnp.zeros(1), u[:-1]])
    return (up - 2 * u + um) / h ** 2 + lam * jnp.exp(u)

  def solve(u0, lam):
    sol = optx.root_find(fn, optx.Newton(rtol=1e-5, atol=1e-5), u0, args=lam, max_steps=50,
                         throw=False)
    # Not the residual at the solution: that is rounding noise (|F| ~ 1e-5
    # of terms ~ 1), which no two summation orders agree on.
    return sol.value

  return solve, (np.zeros(n, np.float32), np.float32(1.0))


@program("optimistix")
def optimistix_levenberg_marquardt(size):
  """optimistix.least_squares with optimistix.LevenbergMarquardt fitting a
  damped sinusoid to noisy samples: a trust-region loop around a
  damped normal-equations solve."""
  jax = _jax()
  jnp = jax.numpy
  import optimistix as optx
  m = _sz(size, 24, 4096)
  rng = np.random.default_rng(23)
  t = np.linspace(0, 4, m).astype(np.float32)
  y = (1.5 * np.exp(-0.4 * t) * np.sin(2.0 * t + 0.3) + 0.01 * rng.standard_normal(m)) \
      .astype(np.float32)

  def residual(p, args):
    t, y = args
    return p[0] * jnp.exp(-p[1] * t) * jnp.sin(p[2] * t + p[3]) - y

  def solve(p0, t, y):
    sol = optx.least_squares(residual, optx.LevenbergMarquardt(rtol=1e-6, atol=1e-6), p0,
                             args=(t, y), max_steps=100, throw=False)
    return sol.value, jnp.sum(residual(sol.value, (t, y)) ** 2)

  return solve, (np.array([1.0, 0.5, 1.8, 0.0], np.float32), t, y)


@program("lineax")
def lineax_cg(size):
  """lineax.linear_solve with lineax.CG on a symmetric positive definite
  matrix-free operator (a 1-D Laplacian plus a shift, written with jnp.roll):
  a while loop of matrix-vector products and dot products."""
  jax = _jax()
  jnp = jax.numpy
  import lineax as lx
  n = _sz(size, 16, 1 << 16)
  b = _normal(np.random.default_rng(24), (n,))

  def solve(b, shift):
    def mv(x):
      return (2.0 + shift) * x - jnp.roll(x, 1) - jnp.roll(x, -1)
    op = lx.FunctionLinearOperator(mv, jax.ShapeDtypeStruct((n,), jnp.float32),
                                   tags=lx.positive_semidefinite_tag)
    sol = lx.linear_solve(op, b, lx.CG(rtol=1e-5, atol=1e-5, max_steps=200), throw=False)
    return sol.value

  return solve, (b, np.float32(0.5))


@program("lineax")
def lineax_lu_qr(size):
  """lineax.linear_solve with lineax.LU on a dense square system and
  lineax.QR on an overdetermined least-squares problem."""
  _jax()
  import lineax as lx
  n = _sz(size, 6, 512)
  rng = np.random.default_rng(25)
  a = (_normal(rng, (n, n)) + n * np.eye(n)).astype(np.float32)
  m = _normal(rng, (2 * n, n))
  b = _normal(rng, (n,))
  c = _normal(rng, (2 * n,))

  def solve(a, b, m, c):
    x = lx.linear_solve(lx.MatrixLinearOperator(a), b, lx.LU()).value
    y = lx.linear_solve(lx.MatrixLinearOperator(m), c, lx.QR()).value
    return x, y

  return solve, (a, b, m, c)


# =========================================================== JAX idioms
@program("jax")
def per_example_grads(size):
  """Per-example gradients of a two-layer MLP (jax.vmap(jax.grad(loss)) over
  the batch), their norms clipped as DP-SGD does, then averaged."""
  jax = _jax()
  jnp = jax.numpy
  b, d, h = _sz(size, (8, 6, 16), (128, 256, 512))
  rng = np.random.default_rng(26)
  w1, w2 = _normal(rng, (d, h), 0.3), _normal(rng, (h, 1), 0.3)
  x, y = _normal(rng, (b, d)), _normal(rng, (b, 1))

  def f(w1, w2, x, y):
    def loss(p, x, y):
      return jnp.sum((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)
    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))((w1, w2), x, y)
    norms = jnp.sqrt(sum(jnp.sum(a.reshape(b, -1) ** 2, axis=1) for a in g))
    scale = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
    return tuple(jnp.mean(a * scale.reshape((b,) + (1,) * (a.ndim - 1)), axis=0) for a in g)

  return f, (w1, w2, x, y)


@program("jax")
def roll_stencil_fft(size):
  """A 2-D heat equation stepped 10 times in fori_loop with jnp.roll (periodic
  5-point stencil), then jnp.fft.rfft2 and the spectrum's magnitude."""
  jax = _jax()
  jnp = jax.numpy
  n = _sz(size, 16, 256)
  u0 = _normal(np.random.default_rng(27), (n, n))

  def f(u):
    def step(_, u):
      lap = (jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1)
             - 4 * u)
      return u + 0.1 * lap
    u = jax.lax.fori_loop(0, 10, step, u)
    return u, jnp.abs(jnp.fft.rfft2(u))

  return f, (u0,)


@program("jax")
def pad_stencil(size):
  """A 3x3 Gaussian blur written with jnp.pad (edge mode) and nine shifted
  slices, applied 5 times in fori_loop, then a Sobel gradient magnitude."""
  jax = _jax()
  jnp = jax.numpy
  n = _sz(size, 12, 512)
  img = np.random.default_rng(28).random((n, n)).astype(np.float32)

  def f(img):
    k = jnp.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], jnp.float32) / 16
    def blur(_, u):
      p = jnp.pad(u, 1, mode="edge")
      return sum(k[i, j] * p[i:i + n, j:j + n] for i in range(3) for j in range(3))
    u = jax.lax.fori_loop(0, 5, blur, img)
    p = jnp.pad(u, 1, mode="reflect")
    gx = p[1:-1, 2:] - p[1:-1, :-2]
    gy = p[2:, 1:-1] - p[:-2, 1:-1]
    return jnp.sqrt(gx ** 2 + gy ** 2)

  return f, (img,)


@program("jax")
def cumulative_ops(size):
  """jnp.cumsum, jnp.cumprod, lax.cummax, lax.cumlogsumexp along rows, a
  reversed lax.cumsum down the columns, and ranks by a double argsort."""
  jax = _jax()
  jnp = jax.numpy
  r, c = _sz(size, (4, 24), (512, 1024))
  x = _normal(np.random.default_rng(29), (r, c))

  def f(x):
    return (jnp.cumsum(x, axis=1), jnp.cumprod(1.0 + 0.01 * x, axis=1),
            jax.lax.cummax(x, axis=1), jax.lax.cumlogsumexp(x, axis=1),
            jax.lax.cumsum(x, axis=0, reverse=True),
            jnp.argsort(jnp.argsort(x, axis=1), axis=1).astype(jnp.int32))

  return f, (x,)


@program("jax")
def random_sampling(size):
  """jax.random as people sample: split, normal, uniform, categorical
  (Gumbel-max), permutation (a sort of random bits), truncated normal and
  bernoulli."""
  jax = _jax()
  n = _sz(size, 16, 1 << 16)
  logits = _normal(np.random.default_rng(30), (5,))

  def f(key, logits):
    k = jax.random.split(key, 6)
    return (jax.random.normal(k[0], (n, 4)), jax.random.uniform(k[1], (n,), minval=-2, maxval=3),
            jax.random.categorical(k[2], logits, shape=(n,)),
            jax.random.permutation(k[3], n),
            jax.random.truncated_normal(k[4], -1.0, 2.0, (n,)),
            jax.random.bernoulli(k[5], 0.3, (n,)))

  return f, (_key(30), logits)


@program("jax")
def dropout_grad_step(size):
  """Inverted dropout with jax.random.bernoulli inside a gradient step of a
  two-layer MLP (the mask is drawn in the forward pass and reused by the
  backward pass), SGD update."""
  jax = _jax()
  jnp = jax.numpy
  b, d, h = _sz(size, (8, 16, 32), (256, 512, 1024))
  rng = np.random.default_rng(31)
  w1, w2 = _normal(rng, (d, h), 0.2), _normal(rng, (h, 4), 0.2)
  x, y = _normal(rng, (b, d)), _normal(rng, (b, 4))

  def step(key, w1, w2, x, y):
    def loss(w1, w2):
      hdn = jax.nn.relu(x @ w1)
      keep = jax.random.bernoulli(key, 0.8, hdn.shape)
      hdn = jnp.where(keep, hdn / 0.8, 0.0)
      return jnp.mean((hdn @ w2 - y) ** 2)
    l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
    return l, w1 - 0.1 * g1, w2 - 0.1 * g2

  return step, (_key(31), w1, w2, x, y)


@program("jax")
def where_masking(size):
  """Masking with jnp.where as written in practice: a masked mean and
  variance over valid positions, a masked log-softmax with -inf fill, and the
  double-where trick for a NaN-safe gradient of sqrt and log."""
  jax = _jax()
  jnp = jax.numpy
  b, t = _sz(size, (4, 10), (512, 1024))
  rng = np.random.default_rng(32)
  x = _normal(rng, (b, t))
  lengths = rng.integers(1, t + 1, b).astype(np.int32)

  def f(x, lengths):
    mask = jnp.arange(t)[None, :] < lengths[:, None]
    n = jnp.sum(mask, axis=1, keepdims=True)
    mean = jnp.sum(jnp.where(mask, x, 0), axis=1, keepdims=True) / n
    var = jnp.sum(jnp.where(mask, (x - mean) ** 2, 0), axis=1, keepdims=True) / n
    logp = jax.nn.log_softmax(jnp.where(mask, x, -jnp.inf), axis=1)
    logp = jnp.where(mask, logp, 0.0)

    def safe(x):
      pos = x > 0
      xs = jnp.where(pos, x, 1.0)
      return jnp.sum(jnp.where(pos, jnp.sqrt(xs) + jnp.log(xs), 0.0))
    return mean, var, logp, jax.grad(safe)(x)

  return f, (x, lengths)


@program("jax")
def einsum_shapes(size):
  """jnp.einsum across the shapes people write: batched matmul, attention
  scores with heads, a bilinear form, an outer product, a trace and
  diagonal, a contraction over two axes, and a broadcasting reduction."""
  jax = _jax()
  jnp = jax.numpy
  b, h, t, d = _sz(size, (2, 2, 5, 4), (16, 8, 128, 64))
  rng = np.random.default_rng(33)
  q, k = _normal(rng, (b, h, t, d)), _normal(rng, (b, h, t, d))
  m = _normal(rng, (d * h, d * h))
  x = _normal(rng, (b, d * h))
  sq = _normal(rng, (b, d, d))

  def f(q, k, m, x, sq):
    return (jnp.einsum("bhqd,bhkd->bhqk", q, k),
            jnp.einsum("bi,ij,bj->b", x, m, x),
            jnp.einsum("bi,bj->bij", x, x),
            jnp.einsum("bii->b", sq), jnp.einsum("bii->bi", sq),
            jnp.einsum("bhtd,bhsd->ts", q, k),
            jnp.einsum("bij,bjk->bik", sq, sq),
            jnp.einsum("bhtd,d->bht", q, x[0, :d]))

  return f, (q, k, m, x, sq)


def _conv(lhs, rhs, **kw):
  return _jax().lax.conv_general_dilated(lhs, rhs, **kw)


@program("jax")
def conv_nchw_grouped_strided(size):
  """lax.conv_general_dilated in PyTorch's layout (NCHW input, OIHW kernel):
  a grouped (4 groups) 3x3 convolution with stride 2, and its gradient with
  respect to input and kernel."""
  jax = _jax()
  jnp = jax.numpy
  b, c, hw = _sz(size, (2, 8, 9), (16, 128, 56))
  rng = np.random.default_rng(34)
  x = _normal(rng, (b, c, hw, hw))
  w = _normal(rng, (c, c // 4, 3, 3), 0.2)

  def f(x, w):
    def g(x, w):
      y = _conv(x, w, window_strides=(2, 2), padding=((1, 1), (1, 1)),
                dimension_numbers=("NCHW", "OIHW", "NCHW"), feature_group_count=4)
      return jnp.sum(jax.nn.silu(y) ** 2), y
    (l, y), grads = jax.value_and_grad(g, argnums=(0, 1), has_aux=True)(x, w)
    return y, *grads

  return f, (x, w)


@program("jax")
def conv_depthwise_nhwc(size):
  """A depthwise 3x3 convolution (feature_group_count = channels, channel
  multiplier 2) in NHWC/HWIO with 'SAME' padding, then a 1x1 pointwise
  convolution: the depthwise-separable block of issue 28."""
  jax = _jax()
  b, hw, c = _sz(size, (2, 8, 6), (16, 112, 32))
  rng = np.random.default_rng(35)
  x = _normal(rng, (b, hw, hw, c))
  wd = _normal(rng, (3, 3, 1, 2 * c), 0.3)
  wp = _normal(rng, (1, 1, 2 * c, 2 * c), 0.3)

  def f(x, wd, wp):
    dn = ("NHWC", "HWIO", "NHWC")
    y = _conv(x, wd, window_strides=(1, 1), padding="SAME", dimension_numbers=dn,
              feature_group_count=c)
    return _conv(jax.nn.relu(y), wp, window_strides=(1, 1), padding="VALID", dimension_numbers=dn)

  return f, (x, wd, wp)


@program("jax")
def conv_dilated_nhwc(size):
  """Atrous (dilated) 3x3 convolutions in NHWC as in DeepLab's ASPP: rates
  1, 2 and 4 side by side, concatenated along channels, and an
  input-dilated (fractionally strided) one."""
  jax = _jax()
  jnp = jax.numpy
  b, hw, c = _sz(size, (2, 10, 4), (8, 64, 64))
  rng = np.random.default_rng(36)
  x = _normal(rng, (b, hw, hw, c))
  w = _normal(rng, (3, 3, 3, c, c), 0.3)

  def f(x, w):
    dn = ("NHWC", "HWIO", "NHWC")
    ys = [_conv(x, w[i], window_strides=(1, 1), padding="SAME", rhs_dilation=(r, r),
                dimension_numbers=dn) for i, r in enumerate((1, 2, 4))]
    up = _conv(x, w[0], window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(2, 2),
               dimension_numbers=dn)
    return jnp.concatenate(ys, axis=-1), up

  return f, (x, w)


@program("jax")
def conv_transpose_nhwc(size):
  """jax.lax.conv_transpose (stride 2, 'SAME' and 'VALID', 4x4 kernel), the
  upsampling of a DCGAN generator, with tanh."""
  jax = _jax()
  jnp = jax.numpy
  b, hw, c = _sz(size, (2, 4, 8), (16, 32, 128))
  rng = np.random.default_rng(37)
  x = _normal(rng, (b, hw, hw, c))
  w1 = _normal(rng, (4, 4, c, c // 2), 0.2)
  w2 = _normal(rng, (3, 3, c // 2, 3), 0.2)

  def f(x, w1, w2):
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.nn.relu(jax.lax.conv_transpose(x, w1, (2, 2), "SAME", dimension_numbers=dn))
    return jnp.tanh(jax.lax.conv_transpose(y, w2, (2, 2), "VALID", dimension_numbers=dn))

  return f, (x, w1, w2)


@program("jax")
def conv1d_causal(size):
  """A WaveNet-style stack of 1-D causal convolutions (NWC, kernel 2,
  dilations 1, 2, 4, 8, left padding) with gated tanh/sigmoid activations and
  residual connections."""
  jax = _jax()
  jnp = jax.numpy
  b, length, c = _sz(size, (2, 16, 4), (16, 4096, 64))
  rng = np.random.default_rng(38)
  x = _normal(rng, (b, length, c))
  w = _normal(rng, (4, 2, c, 2 * c), 0.3)

  def f(x, w):
    for i, r in enumerate((1, 2, 4, 8)):
      y = jax.lax.conv_general_dilated(x, w[i], window_strides=(1,), padding=((r, 0),),
                                       rhs_dilation=(r,), dimension_numbers=("NWC", "WIO", "NWC"))
      x = x + jnp.tanh(y[..., :c]) * jax.nn.sigmoid(y[..., c:])
    return x

  return f, (x, w)


@program("jax")
def patch_embed_nchw(size):
  """A ViT patch embedding as PyTorch users write it: NCHW images, a
  convolution whose stride equals its window, flattened to tokens, a class
  token concatenated, position embeddings added, LayerNorm."""
  jax = _jax()
  jnp = jax.numpy
  b, c, hw, p, d = _sz(size, (2, 3, 8, 4, 16), (32, 3, 224, 16, 384))
  rng = np.random.default_rng(39)
  x = _normal(rng, (b, c, hw, hw))
  w = _normal(rng, (d, c, p, p), 0.1)
  cls = _normal(rng, (1, 1, d))
  pos = _normal(rng, (1, (hw // p) ** 2 + 1, d), 0.02)

  def f(x, w, cls, pos):
    y = _conv(x, w, window_strides=(p, p), padding="VALID",
              dimension_numbers=("NCHW", "OIHW", "NCHW"))
    tok = y.reshape(b, d, -1).transpose(0, 2, 1)
    tok = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, d)), tok], axis=1) + pos
    mu = tok.mean(-1, keepdims=True)
    var = ((tok - mu) ** 2).mean(-1, keepdims=True)
    return (tok - mu) * jax.lax.rsqrt(var + 1e-6)

  return f, (x, w, cls, pos)


@program("jax")
def pooling(size):
  """Pooling as lax.reduce_window: 3x3 max pooling with stride 2 and SAME
  padding (ResNet's stem), 2x2 average pooling, global average and max, and
  the gradient of max pooling (select-and-scatter)."""
  jax = _jax()
  jnp = jax.numpy
  b, hw, c = _sz(size, (2, 8, 4), (16, 112, 64))
  x = _normal(np.random.default_rng(40), (b, hw, hw, c))

  def f(x):
    def maxpool(x):
      return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    mp, vjp = jax.vjp(maxpool, x)
    avg = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return mp, avg, x.mean((1, 2)), x.max((1, 2)), vjp(jnp.ones_like(mp))[0]

  return f, (x,)


@program("jax")
def attention_variants(size):
  """Attention beyond the textbook block: grouped-query attention (query
  heads grouped over 2 key/value heads) with a causal mask, sliding-window (local)
  attention, rotary position embeddings, and jax.nn.dot_product_attention."""
  jax = _jax()
  jnp = jax.numpy
  b, t, hq, hkv, d = _sz(size, (2, 8, 4, 2, 8), (8, 512, 8, 2, 64))
  rng = np.random.default_rng(41)
  q = _normal(rng, (b, t, hq, d))
  k = _normal(rng, (b, t, hkv, d))
  v = _normal(rng, (b, t, hkv, d))

  def rope(x):
    half = d // 2
    freq = 1.0 / (10000 ** (jnp.arange(half) / half))
    ang = jnp.arange(t)[:, None] * freq[None, :]
    c, s = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)

  def f(q, k, v):
    qr, kr = rope(q), rope(k)
    g = hq // hkv
    qg = qr.reshape(b, t, hkv, g, d)
    s = jnp.einsum("btkgd,bskd->bkgts", qg, kr) / jnp.sqrt(d)
    i = jnp.arange(t)
    causal = i[:, None] >= i[None, :]
    local = causal & (i[:, None] - i[None, :] < 4)
    gqa = jnp.einsum("bkgts,bskd->btkgd", jax.nn.softmax(jnp.where(causal, s, -1e9), -1), v)
    win = jnp.einsum("bkgts,bskd->btkgd", jax.nn.softmax(jnp.where(local, s, -1e9), -1), v)
    dpa = jax.nn.dot_product_attention(qr, kr, v, is_causal=True)
    return gqa.reshape(b, t, hq, d), win.reshape(b, t, hq, d), dpa

  return f, (q, k, v)


@program("jax")
def embedding_bag(size):
  """An embedding bag as recommendation models write it (PyTorch's
  EmbeddingBag): ragged bags given by offsets, rows gathered by index,
  per-sample weights, summed and averaged with jax.ops.segment_sum; plus the
  table's gradient (a scatter-add)."""
  jax = _jax()
  jnp = jax.numpy
  vocab, d, bags, nnz = _sz(size, (40, 8, 4, 14), (100000, 64, 2048, 40000))
  rng = np.random.default_rng(42)
  table = _normal(rng, (vocab, d))
  idx = rng.integers(0, vocab, nnz).astype(np.int32)
  seg = np.sort(rng.integers(0, bags, nnz)).astype(np.int32)
  wts = rng.random(nnz).astype(np.float32)

  def f(table, idx, seg, wts):
    def bag(table):
      rows = jnp.take(table, idx, axis=0) * wts[:, None]
      s = jax.ops.segment_sum(rows, seg, num_segments=bags, indices_are_sorted=True)
      n = jax.ops.segment_sum(jnp.ones_like(wts), seg, num_segments=bags)
      return s, s / jnp.maximum(n, 1)[:, None]
    (s, m), vjp = jax.vjp(bag, table)
    return s, m, vjp((jnp.ones_like(s), jnp.zeros_like(m)))[0]

  return f, (table, idx, seg, wts)


@program("jax")
def topk_label_smoothing(size):
  """jax.lax.top_k over scores with jax.nn.one_hot labels (a top-5 accuracy
  and a label-smoothed cross entropy), and jnp.take_along_axis."""
  jax = _jax()
  jnp = jax.numpy
  b, c = _sz(size, (6, 20), (1024, 1000))
  rng = np.random.default_rng(43)
  logits = _normal(rng, (b, c))
  labels = rng.integers(0, c, b).astype(np.int32)

  def f(logits, labels):
    vals, idx = jax.lax.top_k(logits, 5)
    top5 = jnp.any(idx == labels[:, None], axis=1)
    onehot = jax.nn.one_hot(labels, c) * 0.9 + 0.1 / c
    ce = -jnp.sum(onehot * jax.nn.log_softmax(logits), axis=1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return vals, idx, top5, ce, picked

  return f, (logits, labels)


# =========================================================== Scientific code (session 19)
@program("diffrax")
def diffrax_robertson_kvaerno5(size):
  """Robertson's stiff chemical kinetics (three species; rate constants 0.04,
  3e7 and 1e4, the first and last scaled per batch element) solved by
  diffrax.diffeqsolve with the implicit Kvaerno5 (an ESDIRK method: chord
  iterations with an LU solve per stage) and a PIDController, SaveAt at
  log-spaced times, vmapped over the batch of rate constants."""
  jax = _jax()
  jnp = jax.numpy
  import diffrax
  b = _sz(size, 2, 16)
  scales = np.linspace(0.5, 1.5, b).astype(np.float32)
  ts = np.logspace(-2, 2, 9).astype(np.float32)

  def rhs(t, y, k):
    k1, k2, k3 = 0.04 * k, 3e7, 1e4 * k
    y1, y2, y3 = y[0], y[1], y[2]
    return jnp.stack([-k1 * y1 + k3 * y2 * y3,
                      k1 * y1 - k3 * y2 * y3 - k2 * y2 ** 2,
                      k2 * y2 ** 2])

  def solve(y0, scales, ts):
    def one(k):
      sol = diffrax.diffeqsolve(
          diffrax.ODETerm(rhs), diffrax.Kvaerno5(), t0=0.0, t1=100.0, dt0=1e-4, y0=y0, args=k,
          saveat=diffrax.SaveAt(ts=ts),
          stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6), max_steps=4096)
      return sol.ys
    return jax.vmap(one)(scales)

  return solve, (np.array([1.0, 0.0, 0.0], np.float32), scales, ts)


@program("jax")
def gamma_mle_newton(size):
  """Maximum-likelihood fits of Gamma distributions, vmapped over datasets:
  Newton's method on the shape (Minka's update with jax.scipy.special's
  digamma and polygamma) in a while_loop until the relative step is small,
  then each fit's log-likelihood (jax.scipy.stats.gamma.logpdf: gammaln) and
  its CDF at the sample median (gamma.cdf: the regularised incomplete gamma
  function)."""
  jax = _jax()
  jnp = jax.numpy
  from jax.scipy import special, stats
  sets, n = _sz(size, (3, 32), (256, 2048))
  rng = np.random.default_rng(51)
  shapes = rng.uniform(0.5, 5.0, sets)
  x = rng.gamma(shapes[:, None], 2.0, (sets, n)).astype(np.float32)

  def fit(x):
    mean, mlog = jnp.mean(x), jnp.mean(jnp.log(x))
    s = jnp.log(mean) - mlog
    a0 = (3 - s + jnp.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)

    def newton(carry):
      a, _, i = carry
      num = mlog - jnp.log(mean) + jnp.log(a) - special.digamma(a)
      den = a * a * (1 / a - special.polygamma(1, a))
      a_new = 1 / (1 / a + num / den)
      return a_new, jnp.abs(a_new - a) / a, i + 1

    def go_on(carry):
      _, step, i = carry
      return (step > 1e-4) & (i < 50)

    a, _, iters = jax.lax.while_loop(go_on, newton, (a0, jnp.float32(1.0), 0))
    scale = mean / a
    ll = jnp.sum(stats.gamma.logpdf(x, a, scale=scale))
    return a, scale, ll, stats.gamma.cdf(jnp.median(x), a, scale=scale), iters

  return jax.vmap(fit), (x,)


@program("jax")
def gp_marginal_likelihood(size):
  """Gaussian-process regression with an RBF kernel: the negative log
  marginal likelihood and its gradient with respect to the log
  hyperparameters (jax.scipy.linalg.cho_factor / cho_solve, the
  log-determinant from the Cholesky diagonal), the posterior mean and
  variance at test points (solve_triangular), and jnp.linalg.slogdet of the
  kernel matrix."""
  jax = _jax()
  jnp = jax.numpy
  from jax.scipy import linalg as sl
  n, m, d = _sz(size, (16, 6, 2), (512, 128, 4))
  rng = np.random.default_rng(52)
  x = rng.uniform(-2, 2, (n, d)).astype(np.float32)
  y = (np.sin(x.sum(1)) + 0.1 * rng.standard_normal(n)).astype(np.float32)
  xs = rng.uniform(-2, 2, (m, d)).astype(np.float32)
  log_params = np.log(np.array([1.0, 1.0, 0.1], np.float32))

  def kernel(a, b, lp):
    d2 = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    return jnp.exp(lp[1]) * jnp.exp(-0.5 * d2 / jnp.exp(2 * lp[0]))

  def gram(lp, x):
    return kernel(x, x, lp) + jnp.exp(lp[2]) * jnp.eye(x.shape[0])

  def f(lp, x, y, xs):
    def nlml(lp):
      c = sl.cho_factor(gram(lp, x), lower=True)
      alpha = sl.cho_solve(c, y)
      return (0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(c[0])))
              + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi))
    value, grad = jax.value_and_grad(nlml)(lp)
    k = gram(lp, x)
    chol = jnp.linalg.cholesky(k)
    ks = kernel(xs, x, lp)
    mean = ks @ sl.cho_solve((chol, True), y)
    v = sl.solve_triangular(chol, ks.T, lower=True)
    var = jnp.exp(lp[1]) - jnp.sum(v ** 2, axis=0)
    return value, grad, mean, var, jnp.linalg.slogdet(k)[1]

  return f, (log_params, x, y, xs)


@program("jax")
def linalg_decompositions(size):
  """jnp.linalg's decompositions of moderate matrices, as sign-free
  quantities: eigh of a symmetric positive definite matrix (eigenvalues and
  the matrix square root V sqrt(w) V^T), svd (singular values, and the
  projector U U^T of the thin factorisation), pinv and lstsq of a tall
  matrix (jaxlib's syevd and gesdd LAPACK calls)."""
  jax = _jax()
  jnp = jax.numpy
  n, m, k = _sz(size, (8, 12, 6), (256, 384, 192))
  rng = np.random.default_rng(53)
  g = _normal(rng, (n, n))
  a = (g @ g.T / n + np.eye(n)).astype(np.float32)
  bm = _normal(rng, (m, k))
  c = _normal(rng, (m,))

  def f(a, bm, c):
    w, v = jnp.linalg.eigh(a)
    sqrt_a = (v * jnp.sqrt(w)) @ v.T
    u, s, _ = jnp.linalg.svd(bm, full_matrices=False)
    x, _, rank, _ = jnp.linalg.lstsq(bm, c)
    return w, sqrt_a, s, u @ u.T, jnp.linalg.pinv(bm), x, rank

  return f, (a, bm, c)


@program("optax")
def optax_lbfgs(size):
  """optax.lbfgs (memory 10, its zoom line search: a while loop inside the
  step) minimising an L2-regularised logistic regression loss in a
  lax.while_loop until the gradient norm is below 1e-4 or 100 iterations,
  the loop optax's documentation writes (optax.value_and_grad_from_state,
  optax.tree.get)."""
  jax = _jax()
  jnp = jax.numpy
  import optax
  n, d = _sz(size, (32, 8), (4096, 256))
  rng = np.random.default_rng(54)
  x = _normal(rng, (n, d))
  w_true = _normal(rng, (d,))
  labels = (rng.random(n) < 1 / (1 + np.exp(-x @ w_true))).astype(np.float32)

  def run(w0, x, labels):
    def loss(w):
      return (jnp.mean(optax.sigmoid_binary_cross_entropy(x @ w, labels))
              + 0.5e-2 * jnp.sum(w * w))
    opt = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)

    def step(carry):
      w, state = carry
      value, grad = value_and_grad(w, state=state)
      updates, state = opt.update(grad, state, w, value=value, grad=grad, value_fn=loss)
      return optax.apply_updates(w, updates), state

    def go_on(carry):
      _, state = carry
      count = optax.tree.get(state, "count")
      return (count == 0) | ((count < 100) & (optax.tree.norm(optax.tree.get(state, "grad"))
                                              >= 1e-4))

    w, state = jax.lax.while_loop(go_on, step, (w0, opt.init(w0)))
    return w, loss(w), optax.tree.get(state, "count")

  return run, (np.zeros(d, np.float32), x, labels)


@program("jax")
def nbody_leapfrog(size):
  """A gravitational N-body simulation: pairwise softened forces
  (broadcast differences over all pairs), kick-drift-kick leapfrog steps in
  fori_loop, then the total energy (kinetic plus pairwise potential with the
  diagonal masked)."""
  jax = _jax()
  jnp = jax.numpy
  n, steps = _sz(size, (8, 10), (256, 40))
  rng = np.random.default_rng(55)
  pos = _normal(rng, (n, 3))
  vel = _normal(rng, (n, 3), 0.1)
  mass = rng.uniform(0.5, 1.5, n).astype(np.float32) / n

  def f(pos, vel, mass):
    eps2, dt = 1e-2, 1e-2

    def accel(x):
      d = x[None, :, :] - x[:, None, :]
      inv3 = mass[None, :] * (jnp.sum(d * d, axis=-1) + eps2) ** -1.5
      return jnp.sum(d * inv3[..., None], axis=1)

    def step(_, s):
      x, v = s
      v = v + 0.5 * dt * accel(x)
      x = x + dt * v
      return x, v + 0.5 * dt * accel(x)

    x, v = jax.lax.fori_loop(0, steps, step, (pos, vel))
    r = jnp.sqrt(jnp.sum((x[None] - x[:, None]) ** 2, axis=-1) + eps2)
    pot = jnp.where(jnp.eye(n, dtype=bool), 0.0, mass[:, None] * mass[None, :] / r)
    return x, v, 0.5 * jnp.sum(mass[:, None] * v * v) - 0.5 * jnp.sum(pot)

  return f, (pos, vel, mass)


@program("jax")
def kalman_rts(size):
  """A Kalman filter and Rauch-Tung-Striebel smoother for a 2-D
  constant-velocity model (state 4, observations 2), as lax.scan forward
  and a reversed lax.scan back over small matrices: jnp.linalg.solve and
  slogdet (jaxlib's getrf) in every step, the log-likelihood, the filtered
  and smoothed means and covariances."""
  jax = _jax()
  jnp = jax.numpy
  steps = _sz(size, 12, 1000)
  rng = np.random.default_rng(56)
  dt = 0.1
  F = np.eye(4, dtype=np.float32)
  F[0, 2] = F[1, 3] = dt
  H = np.eye(2, 4, dtype=np.float32)
  Q = (0.01 * np.eye(4)).astype(np.float32)
  R = (0.1 * np.eye(2)).astype(np.float32)
  truth = np.cumsum(np.tile([[0.3, -0.2]], (steps, 1)) * dt, axis=0)
  ys = (truth + 0.3 * rng.standard_normal((steps, 2))).astype(np.float32)

  def f(ys, F, H, Q, R):
    def filt(carry, y):
      m, P, ll = carry
      mp, Pp = F @ m, F @ P @ F.T + Q
      S = H @ Pp @ H.T + R
      K = jnp.linalg.solve(S, H @ Pp).T
      r = y - H @ mp
      ll = ll - 0.5 * (r @ jnp.linalg.solve(S, r) + jnp.linalg.slogdet(S)[1]
                       + 2 * jnp.log(2 * jnp.pi))
      return (mp + K @ r, Pp - K @ S @ K.T, ll), (mp + K @ r, Pp - K @ S @ K.T, mp, Pp)

    init = (jnp.zeros(4), jnp.eye(4), jnp.float32(0.0))
    (_, _, ll), (ms, Ps, mps, Pps) = jax.lax.scan(filt, init, ys)

    def smooth(carry, inp):
      m_next, P_next = carry
      m, P, mp, Pp = inp
      G = jnp.linalg.solve(Pp, F @ P).T
      m_s, P_s = m + G @ (m_next - mp), P + G @ (P_next - Pp) @ G.T
      return (m_s, P_s), (m_s, P_s)

    _, (msm, Psm) = jax.lax.scan(smooth, (ms[-1], Ps[-1]),
                                 (ms[:-1], Ps[:-1], mps[1:], Pps[1:]), reverse=True)
    return ll, ms, Ps, msm, Psm

  return f, (ys, F, H, Q, R)


@program("jax")
def linear_recurrence_scan(size):
  """A diagonal linear recurrence h_t = a_t h_{t-1} + b_t (the core of
  linear RNNs and state-space models) by lax.associative_scan, resampled at
  irregular times with jnp.interp and jnp.searchsorted, and its integral by
  a cumulative trapezoid rule."""
  jax = _jax()
  jnp = jax.numpy
  t_len, d, m = _sz(size, (32, 4, 20), (1 << 16, 16, 4096))
  rng = np.random.default_rng(57)
  a = rng.uniform(0.9, 0.999, (t_len, d)).astype(np.float32)
  b = _normal(rng, (t_len, d), 0.1)
  t = np.cumsum(rng.uniform(0.5, 1.5, t_len)).astype(np.float32)
  tq = np.sort(rng.uniform(t[0], t[-1], m)).astype(np.float32)

  def f(a, b, t, tq):
    def combine(x, y):
      return x[0] * y[0], y[0] * x[1] + y[1]
    _, h = jax.lax.associative_scan(combine, (a, b))
    hq = jax.vmap(lambda col: jnp.interp(tq, t, col), in_axes=1, out_axes=1)(h)
    integral = jnp.cumsum(0.5 * (h[1:] + h[:-1]) * jnp.diff(t)[:, None], axis=0)
    return h, hq, jnp.searchsorted(t, tq).astype(jnp.int32), integral

  return f, (a, b, t, tq)


@program("jax")
def krylov_poisson(size):
  """jax.scipy.sparse.linalg on a matrix-free 2-D Poisson operator with a
  shift (5-point stencil with zero Dirichlet boundaries by jnp.pad): GMRES
  restarted every 20 (the batched Arnoldi with its least-squares solve, and
  the incremental one with Givens rotations and solve_triangular) and
  BiCGSTAB, each a while loop until the residual tolerance."""
  jax = _jax()
  jnp = jax.numpy
  from jax.scipy.sparse import linalg as sla
  n = _sz(size, 8, 96)
  rhs = _normal(np.random.default_rng(58), (n, n))

  def f(rhs, shift):
    def op(u):
      p = jnp.pad(u, 1)
      return (4 + shift) * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
    x1, _ = sla.gmres(op, rhs, tol=1e-5, restart=20, maxiter=50, solve_method="batched")
    x2, _ = sla.gmres(op, rhs, tol=1e-5, restart=20, maxiter=50, solve_method="incremental")
    x3, _ = sla.bicgstab(op, rhs, tol=1e-5, maxiter=500)
    return x1, x2, x3

  return f, (rhs, np.float32(0.5))


def count_instructions(text):
  """Instructions in HLO text: lines of the form `name = shape op(...)`."""
  return sum(1 for line in text.splitlines()
             if " = " in line and not line.lstrip().startswith(("HloModule", "//")))


def version(library):
  return importlib.metadata.version("jax" if library == "jax" else library)


def to_npy_array(a):
  """An array as xjit's .npy convention wants it (bf16 as uint16 bits)."""
  a = np.asarray(a)
  return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def write_program(name, out_dir, size):
  jax = _jax()
  fn, library = PROGRAMS[name]
  f, args = fn(size)
  args = [np.asarray(a) for a in args]
  jitted = jax.jit(f, keep_unused=True)
  text = jitted.lower(*args).as_text(dialect="hlo")
  d = os.path.join(out_dir, name)
  os.makedirs(d, exist_ok=True)
  for old in os.listdir(d):
    if old.endswith((".npy", ".hlo")):
      os.remove(os.path.join(d, old))
  with open(os.path.join(d, "module.hlo"), "w") as fh:
    fh.write(text)
  for i, a in enumerate(args):
    np.save(os.path.join(d, f"arg{i}.npy"), to_npy_array(a))
  outs = jax.tree_util.tree_leaves(jitted(*args))
  for i, o in enumerate(outs):
    np.save(os.path.join(d, f"out{i}.npy"), to_npy_array(o))
  return dict(library=library, version=version(library), args=len(args), outs=len(outs),
              instructions=count_instructions(text))


def main():
  here = os.path.dirname(os.path.abspath(__file__))
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--out", default=None, help="default: this folder (test size only)")
  ap.add_argument("--size", default="test", choices=["test", "bench"])
  ap.add_argument("--only", nargs="*", choices=sorted(PROGRAMS), default=None)
  opts = ap.parse_args()
  if opts.out is None:
    if opts.size != "test":
      ap.error("benchmark sizes are not committed: pass --out DIR")
    opts.out = here
  path = os.path.join(opts.out, "zoo.json")
  manifest = {}
  if os.path.exists(path):
    with open(path) as f:
      manifest = json.load(f).get("programs", {})
  failed = []
  for name in opts.only or list(PROGRAMS):
    try:
      manifest[name] = write_program(name, opts.out, opts.size)
    except Exception as e:  # Report every program that does not lower, then fail.
      print(f"{name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
      failed.append(name)
      continue
    m = manifest[name]
    print(f"{name}: {m['library']} {m['version']}, {m['instructions']} instructions, "
          f"{m['args']} args, {m['outs']} outputs", flush=True)
  with open(path, "w") as f:
    json.dump({"generated_by": "models/zoo/generate.py", "size": opts.size,
               "versions": {"jax": version("jax"), "jaxlib": importlib.metadata.version("jaxlib")},
               "programs": manifest}, f, indent=1, sort_keys=True)
    f.write("\n")
  if failed:
    print(f"failed: {' '.join(failed)}", file=sys.stderr)
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
