#!/usr/bin/python3
"""Writes the bundled example: a small classifier (a 2-layer MLP with softmax) as HLO text.

  examples/mlp.hlo            the module: x f32[4,8] -> (logits f32[4,3], probabilities f32[4,3]);
                              the weights are constants in the module
  examples/x.npy              an input batch (4 rows of 8 features)
  examples/expected_logits.npy, examples/expected_probs.npy
                              the answers, computed here with numpy in float64 from the same float32
                              weights (so they agree with xjit to about 1e-6, not bit for bit)

Run from anywhere: python3 examples/make_mlp.py. The outputs are committed; rerunning rewrites them
identically (seeded). Needs numpy (Debian: python3-numpy).
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, FEATURES, HIDDEN, CLASSES = 4, 8, 16, 3


def literal(a):
    """HLO literal text of a float32 array: nested braces, values that round-trip exactly."""
    if a.ndim == 0:
        return '%.9g' % a
    return '{' + ', '.join(literal(x) for x in a) + '}'


def main():
    rng = np.random.default_rng(20240601)
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    w1 = (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, CLASSES)) / np.sqrt(HIDDEN)).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(CLASSES)).astype(np.float32)

    hlo = f'''HloModule mlp

%max_f32 (a: f32[], b: f32[]) -> f32[] {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}

%add_f32 (a: f32[], b: f32[]) -> f32[] {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  x = f32[{BATCH},{FEATURES}]{{1,0}} parameter(0)
  w1 = f32[{FEATURES},{HIDDEN}]{{1,0}} constant({literal(w1)})
  b1 = f32[{HIDDEN}]{{0}} constant({literal(b1)})
  xw1 = f32[{BATCH},{HIDDEN}]{{1,0}} dot(x, w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  b1b = f32[{BATCH},{HIDDEN}]{{1,0}} broadcast(b1), dimensions={{1}}
  z1 = f32[{BATCH},{HIDDEN}]{{1,0}} add(xw1, b1b)
  zero = f32[] constant(0)
  zeros = f32[{BATCH},{HIDDEN}]{{1,0}} broadcast(zero), dimensions={{}}
  h = f32[{BATCH},{HIDDEN}]{{1,0}} maximum(z1, zeros)
  w2 = f32[{HIDDEN},{CLASSES}]{{1,0}} constant({literal(w2)})
  b2 = f32[{CLASSES}]{{0}} constant({literal(b2)})
  hw2 = f32[{BATCH},{CLASSES}]{{1,0}} dot(h, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  b2b = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(b2), dimensions={{1}}
  logits = f32[{BATCH},{CLASSES}]{{1,0}} add(hw2, b2b)
  neg_inf = f32[] constant(-inf)
  row_max = f32[{BATCH}]{{0}} reduce(logits, neg_inf), dimensions={{1}}, to_apply=%max_f32
  row_max_b = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(row_max), dimensions={{0}}
  shifted = f32[{BATCH},{CLASSES}]{{1,0}} subtract(logits, row_max_b)
  e = f32[{BATCH},{CLASSES}]{{1,0}} exponential(shifted)
  row_sum = f32[{BATCH}]{{0}} reduce(e, zero), dimensions={{1}}, to_apply=%add_f32
  row_sum_b = f32[{BATCH},{CLASSES}]{{1,0}} broadcast(row_sum), dimensions={{0}}
  probs = f32[{BATCH},{CLASSES}]{{1,0}} divide(e, row_sum_b)
  ROOT out = (f32[{BATCH},{CLASSES}]{{1,0}}, f32[{BATCH},{CLASSES}]{{1,0}}) tuple(logits, probs)
}}
'''
    with open(os.path.join(HERE, 'mlp.hlo'), 'w') as f:
        f.write(hlo)

    f64 = lambda a: a.astype(np.float64)
    h = np.maximum(f64(x) @ f64(w1) + f64(b1), 0)
    logits = h @ f64(w2) + f64(b2)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    np.save(os.path.join(HERE, 'x.npy'), x)
    np.save(os.path.join(HERE, 'expected_logits.npy'), logits.astype(np.float32))
    np.save(os.path.join(HERE, 'expected_probs.npy'), probs.astype(np.float32))


if __name__ == '__main__':
    main()
