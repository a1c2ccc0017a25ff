"""Trains a small MLP classifier with xjit.jax.jit in place of jax.jit: the
same training step, written once in JAX, runs on xjit and on XLA:CPU, and
the two loss curves agree.

    PYTHONPATH=build/python VENV/bin/python examples/python/jax_jit.py

Needs JAX (a virtual environment with `pip install jax`). Prints the losses
and "jax_jit (python): OK"; exits 1 on a mismatch, 77 (skipped) without JAX.
"""
import sys

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("jax_jit (python): skipped: needs JAX (pip install jax)")
    sys.exit(77)

import xjit.jax


def init(rng, sizes):
    return [{"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
             "b": np.zeros(b, np.float32)} for a, b in zip(sizes[:-1], sizes[1:])]


def loss_fn(params, x, labels):
    h = x
    for layer in params[:-1]:
        h = jax.nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ params[-1]["w"] + params[-1]["b"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


def step(params, batch, learning_rate):
    # A pytree of parameters in and out, a static learning rate, a rank-0 loss.
    loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads), loss


def train(jit, steps=20):
    rng = np.random.default_rng(0)
    params = init(rng, [16, 32, 32, 4])
    x = rng.standard_normal((64, 16)).astype(np.float32)
    labels = (x[:, :4].argmax(axis=1)).astype(np.int32)  # A learnable rule.
    train_step = jit(step, static_argnums=2, donate_argnums=0)
    losses = []
    for _ in range(steps):
        params, loss = train_step(params, (x, labels), 0.5)
        losses.append(float(loss))
    return np.array(losses), train_step


def main():
    got, train_step = train(xjit.jax.jit)
    want, _ = train(jax.jit)
    print("losses (xjit):", np.round(got, 4))
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5) or not got[-1] < got[0]:
        print(f"jax_jit (python): losses differ from jax.jit's:\n{got}\n{want}", file=sys.stderr)
        return 1
    print(f"jax_jit (python): OK ({train_step._cache_size()} compile, JAX {jax.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
