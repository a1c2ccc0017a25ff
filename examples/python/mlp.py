"""Runs the bundled example (examples/mlp.hlo, a 2-layer MLP with softmax) on
examples/x.npy through the `xjit` Python package and compares the result with
numpy's answers (examples/expected_*.npy, written by examples/make_mlp.py).

    PYTHONPATH=build/python python3 examples/python/mlp.py

Prints the probabilities and "mlp (python): OK"; exits 1 on a mismatch.
"""
import os
import sys

import numpy as np

import xjit

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)


def main():
    with open(os.path.join(EXAMPLES, "mlp.hlo")) as f:
        mlp = xjit.compile(f.read(), threads=1)
    x = np.load(os.path.join(EXAMPLES, "x.npy"))
    logits, probs = mlp(x)
    print(probs)
    ok = True
    for name, got in (("logits", logits), ("probs", probs)):
        expected = np.load(os.path.join(EXAMPLES, f"expected_{name}.npy"))
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
            print(f"mlp (python): {name} differ from numpy's:\n{got}\n{expected}", file=sys.stderr)
            ok = False
    if not ok:
        return 1
    print(f"mlp (python): OK ({xjit.library_path()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
