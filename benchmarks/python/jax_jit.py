#!/usr/bin/env python3
"""xjit.jax.jit against jax.jit on the same functions and arguments, in one run.

  PYTHONPATH=build/python VENV/bin/python benchmarks/python/jax_jit.py [--size test|bench]

For each function (a tiny elementwise one and models/generate.py's models):
  first call  trace + lower + compile + run of a fresh function object, each
              side's median over 3 repetitions, alternating which side goes
              first (JAX warms caches the other side then uses);
  per call    steady state, rounds of N calls interleaved between the two
              sides, median of the rounds; xjit.jax.jit with output="jax"
              (the default: jax.Array results) and output="numpy".
Figures are ratios xjit / jax (below 1: xjit is faster). xjit runs with
threads=1; XLA:CPU with its defaults. JAX is a tool here, never a
dependency of xjit.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))

import generate  # noqa: E402  (models/generate.py)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import xjit.jax  # noqa: E402


def tiny():
    return (lambda x: x * 2 + 1), (jnp.ones(8, jnp.float32),)


def first_call_seconds(make, wrap):
    f, args = make()
    start = time.perf_counter()
    jax.block_until_ready(wrap(f)(*args))
    return time.perf_counter() - start


def per_call_seconds(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        result = call()
    jax.block_until_ready(result)
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=["test", "bench"], default="test")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    cases = {"tiny x*2+1 f32[8]": (tiny, 2000)}
    for name in ("mlp_train", "cnn_forward", "gpt_forward_f32", "lstm_forward"):
        cases[name] = (lambda name=name: _model(name, options.size), 50)
    print(f"jax {jax.__version__}, xjit {xjit.__version__}, size {options.size}")
    print("function | first call xjit/jax | per call xjit/jax (jax.Array out) | "
          "per call xjit/jax (numpy out)")
    for name, (make, calls) in cases.items():
        firsts = {"xjit": [], "jax": []}
        for repetition in range(3):
            order = ("xjit", "jax") if repetition % 2 == 0 else ("jax", "xjit")
            for side in order:
                wrap = xjit.jax.jit if side == "xjit" else jax.jit
                firsts[side].append(first_call_seconds(make, wrap))
        f, args = make()
        functions = {"xjit": xjit.jax.jit(f), "xjit_numpy": xjit.jax.jit(f, output="numpy"),
                     "jax": jax.jit(f)}
        rounds = {side: [] for side in functions}
        for side, g in functions.items():
            jax.block_until_ready(g(*args))
        for _ in range(options.rounds):
            for side, g in functions.items():
                rounds[side].append(per_call_seconds(lambda g=g: g(*args), calls))
        m = {side: statistics.median(r) for side, r in rounds.items()}
        fx, fj = statistics.median(firsts["xjit"]), statistics.median(firsts["jax"])
        print(f"{name} | {fx * 1e3:.1f} / {fj * 1e3:.1f} ms = {fx / fj:.2f} | "
              f"{m['xjit'] * 1e6:.0f} / {m['jax'] * 1e6:.0f} us = {m['xjit'] / m['jax']:.2f} | "
              f"{m['xjit_numpy'] * 1e6:.0f} / {m['jax'] * 1e6:.0f} us = "
              f"{m['xjit_numpy'] / m['jax']:.2f}", flush=True)


def _model(name, size):
    f, args = generate.MODELS[name](size)
    return f, tuple(jnp.asarray(a) for a in args)


if __name__ == "__main__":
    main()
