"""xjit.jax.jit against jax.jit: the same function on the same arguments,
compiled by xjit and by XLA:CPU, gives the same pytree of results. Skipped
where JAX is not installed (CI); XJIT_TEST_PYTHON names a python with JAX
to run this file with instead. Run by meson with PYTHONPATH set to the build
tree's python/ folder; by hand:
  PYTHONPATH=build/python /work/venv-jax/bin/python tests/python/xjit_jax_test.py
"""
import os
import subprocess
import sys
import threading
import unittest
import warnings

# HLO's semantics round every bf16 operation; XLA:CPU by default keeps excess
# f32 precision through fused bf16 chains (as models/generate.py notes).
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_allow_excess_precision=false").strip()
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None
    if os.environ.get("XJIT_TEST_PYTHON") and __name__ == "__main__":
        os.execv(os.environ["XJIT_TEST_PYTHON"],
                 [os.environ["XJIT_TEST_PYTHON"], os.path.abspath(__file__)] + sys.argv[1:])

from typing import NamedTuple

import numpy as np

import xjit
import xjit.jax

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Params(NamedTuple):
    w: object
    b: object


def assert_trees_close(test, got, want, rtol=1e-5, atol=1e-6):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    test.assertEqual(got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        test.assertIsInstance(g, jax.Array)
        test.assertEqual(g.shape, w.shape)
        test.assertEqual(g.dtype, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        else:
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=rtol, atol=atol)


@unittest.skipIf(jax is None, "JAX is not installed")
class XjitJaxTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def normal(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def check(self, f, *args, rtol=1e-5, atol=1e-6, **options):
        got = xjit.jax.jit(f, **options)(*args)
        want = jax.jit(f, **options)(*args)
        assert_trees_close(self, got, want, rtol, atol)
        return got

    def test_models(self):
        # Every function of models/generate.py at its "test" size: MLP, conv
        # net, GPT-2 block (f32 and bf16) and LSTM scan, forward and training
        # step, and gather/scatter/sort/top-k. Compared per leaf against the
        # leaf's largest magnitude (gradients have entries near zero); bf16
        # within a few bf16 ulps (2^-8) of it.
        sys.path.insert(0, os.path.join(SOURCE_ROOT, "models"))
        try:
            import generate
        finally:
            sys.path.pop(0)
        for name, make in generate.MODELS.items():
            tolerance = 3e-2 if name.endswith("bf16") else 1e-4
            with self.subTest(model=name):
                f, args = make("test")
                got, want = xjit.jax.jit(f)(*args), jax.jit(f)(*args)
                self.assertEqual(jax.tree_util.tree_structure(got),
                                 jax.tree_util.tree_structure(want))
                for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                    self.assertEqual((g.shape, g.dtype), (w.shape, w.dtype))
                    g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
                    scale = max(float(np.max(np.abs(w), initial=0)), 1e-30)
                    self.assertLessEqual(float(np.max(np.abs(g - w), initial=0)),
                                         tolerance * scale)

    def test_function_sweep(self):
        # A spread of JAX's library: each leaf within 1e-5 of its largest
        # magnitude (NaN where JAX has NaN), integers exact.
        v = self.normal(16)
        a = self.normal(5, 5)
        spd = a @ a.T + 5 * np.eye(5, dtype=np.float32)
        cases = {
            "random": (lambda k: (jax.random.normal(k, (4, 3)), jax.random.bits(k, (3,))),
                       (jax.random.key(0),)),
            "fft": (jnp.fft.rfft, (v,)),
            "cumulative": (lambda x: (jnp.cumsum(x), jnp.cumprod(x[:5]), jnp.argsort(x)), (v,)),
            "linalg": (lambda m: (jnp.linalg.inv(m), jnp.linalg.solve(m, m[:, 0]),
                                  jnp.linalg.cholesky(m), jnp.linalg.eigh(m)[0],
                                  jnp.linalg.svd(m)[1], jnp.abs(jnp.linalg.qr(m)[1]),
                                  jnp.linalg.slogdet(m)[1]), (spd,)),
            "indexing": (lambda x, i, idx: (jax.lax.dynamic_slice(x, (i,), (4,)), x.at[i].set(7.0),
                                            jnp.zeros(6).at[idx].add(x[:4])),
                         (v, np.int32(3), np.int32([0, 2, 2, 5]))),
            "control flow": (lambda x, p: (jax.lax.cond(p > 0, jnp.sin, jnp.cos, x),
                                           jax.lax.fori_loop(0, 10, lambda i, c: c * 0.9 + i, x),
                                           jax.lax.associative_scan(jnp.add, x)),
                             (v, np.int32(1))),
            "grouped conv": (lambda x, w: jax.lax.conv_general_dilated(
                x, w, (1, 1), "SAME", feature_group_count=2),
                (self.normal(1, 4, 6, 6), self.normal(4, 2, 3, 3))),
            "special": (lambda x: (jax.scipy.special.erf(x), jax.lax.lgamma(jnp.abs(x) + 1),
                                   jax.nn.logsumexp(x), jax.lax.top_k(x, 3)), (v,)),
            "integers": (lambda a, b: (a // b, a % b, a >> 1, a ^ b, a.astype(jnp.uint8)),
                         (np.int32([-7, 9, 100, 3]), np.int32([2, -4, 7, 3]))),
            "specials": (lambda x: (jnp.nanmax(x), jnp.isnan(x), jnp.where(jnp.isinf(x), 0, x)),
                         (np.float32([np.nan, np.inf, -0.0, 1]),)),
            "complex and f16": (lambda z, h: (z * z.conj(), jnp.abs(z), jnp.angle(z),
                                              (h * h).sum()),
                                (np.complex64([1 + 2j, -3j, 0.5]), v.astype(np.float16))),
            "transformed": (lambda x: (
                jax.vmap(jax.grad(lambda y: jnp.sum(jnp.tanh(y) ** 2)))(x.reshape(4, 4)),
                jax.grad(lambda y: jnp.sum(jax.checkpoint(jnp.sin)(y) ** 2))(x)), (v,)),
        }
        for name, (f, args) in cases.items():
            with self.subTest(function=name):
                got, want = xjit.jax.jit(f)(*args), jax.jit(f)(*args)
                self.assertEqual(jax.tree_util.tree_structure(got),
                                 jax.tree_util.tree_structure(want))
                for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                    if jax.dtypes.issubdtype(w.dtype, jax.dtypes.prng_key):
                        g, w = jax.random.key_data(g), jax.random.key_data(w)
                    self.assertEqual((g.shape, g.dtype), (w.shape, w.dtype))
                    g, w = np.asarray(g), np.asarray(w)
                    if w.dtype.kind not in "fc":
                        np.testing.assert_array_equal(g, w)
                        continue
                    finite = np.isfinite(w)
                    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
                    np.testing.assert_array_equal(g[~finite & ~np.isnan(w)],
                                                  w[~finite & ~np.isnan(w)])
                    scale = max(float(np.max(np.abs(w[finite]), initial=0)), 1e-30)
                    self.assertLessEqual(float(np.max(np.abs(g[finite] - w[finite]), initial=0)),
                                         1e-5 * scale)

    def test_pytrees_in_and_out(self):
        def f(params, inputs, scale=1.0):
            h = jnp.tanh(inputs["x"] @ params.w + params.b) * scale
            return {"h": h, "stats": (jnp.sum(h), jnp.max(h, axis=0)), "none": None,
                    "pair": Params(w=h.T, b=inputs["y"][0] + 1)}

        params = Params(w=self.normal(4, 3), b=self.normal(3))
        inputs = {"y": (np.arange(5, dtype=np.int32), np.float32(2)), "x": self.normal(6, 4)}
        got = self.check(f, params, inputs)
        self.assertEqual(got["stats"][0].shape, ())  # Rank 0 stays rank 0.
        self.assertIsInstance(got["pair"], Params)
        self.assertIsNone(got["none"])
        # A keyword argument is a leaf too.
        assert_trees_close(self, xjit.jax.jit(f)(params, inputs, scale=np.float32(3)),
                           jax.jit(f)(params, inputs, scale=np.float32(3)))

    def test_static_arguments(self):
        def f(x, n, mode="sum"):
            y = x
            for _ in range(n):  # Python control flow on static values.
                y = jnp.sin(y)
            return jnp.sum(y) if mode == "sum" else jnp.max(y)

        x = self.normal(7)
        jitted = xjit.jax.jit(f, static_argnums=1, static_argnames="mode")
        for n, mode in ((1, "sum"), (3, "sum"), (3, "max")):
            want = jax.jit(f, static_argnums=1, static_argnames="mode")(x, n, mode=mode)
            assert_trees_close(self, jitted(x, n, mode=mode), want)
        self.assertEqual(jitted._cache_size(), 3)
        # A static positional argument passed by name (jax.jit infers the name
        # when only static_argnums is given), and a negative index.
        by_number = xjit.jax.jit(f, static_argnums=(1, 2))
        assert_trees_close(self, by_number(x, n=3, mode="max"), f(x, 3, "max"))
        negative = xjit.jax.jit(lambda x, n: x * n, static_argnums=-1)
        assert_trees_close(self, negative(x, 4), x * 4)
        with self.assertRaisesRegex(ValueError, "hashable"):
            xjit.jax.jit(lambda x, n: x, static_argnums=1)(x, [1])

    def test_while_loop_and_scan(self):
        def f(x, limit):
            def body(state):
                i, v = state
                return i + 1, v * 1.5 + jnp.cos(v)

            count, v = jax.lax.while_loop(lambda s: s[0] < limit, body, (0, x))
            total, ys = jax.lax.scan(lambda c, e: (c + e, c * e), jnp.zeros(3), v.reshape(4, 3))
            return count, v, total, ys

        self.check(f, self.normal(12), np.int32(9))
        self.check(f, self.normal(12), np.int32(0))

    def test_narrow_types(self):
        def f(x, y, s):
            return x * y + s, (x.astype(jnp.float32) * 2).sum(), y.astype(jnp.float8_e4m3fn)

        x = jnp.asarray(self.normal(5, 3), jnp.bfloat16)
        y = self.normal(5, 3).astype(jnp.bfloat16)  # A numpy (ml_dtypes) bf16 array.
        got = self.check(f, x, y, 0.5, rtol=1e-2, atol=1e-2)  # A weak-typed Python float.
        self.assertEqual(got[0].dtype, jnp.bfloat16)
        self.assertEqual(got[2].dtype, jnp.float8_e4m3fn)
        f8 = jnp.asarray(self.normal(8), jnp.float8_e5m2)
        self.check(lambda a: (a.astype(jnp.float32) * 3, a * a), f8, rtol=0.2, atol=0.2)

    def test_scalars_and_canonical_dtypes(self):
        def f(x, k):
            return x.mean(), k * 2, x.astype(jnp.int32)

        # A float64 numpy array and a Python int, as JAX canonicalises them.
        got = self.check(f, self.rng.standard_normal(6) * 10, 3)
        self.assertEqual(got[0].shape, ())
        self.assertEqual(got[0].dtype, jnp.float32)
        self.check(lambda: jnp.arange(4.0))  # No arguments.
        # Results computed from Python scalars only are weakly typed in JAX,
        # and promote as such afterwards.
        got = xjit.jax.jit(lambda b, i, c: (jnp.where(b, i, 0), c * 2, i * np.float32(2)))(
            True, 7, 1 + 2j)
        self.assertEqual([r.weak_type for r in got], [True, True, False])
        self.assertEqual((got[0] + np.int8(1)).dtype, np.int8)
        for f in (lambda x: None, lambda x: (x,), lambda x: x.sum(0)):  # Result shapes.
            self.check(f, np.zeros((0, 3), np.float32))

    def test_prng_keys_and_float0(self):
        # Typed keys travel as their key data; key and float0 results come
        # back as jax.jit's do.
        def f(key, x):
            keys = jax.random.split(key)
            noise = jax.random.normal(keys[0], (3,)) + x
            grads = jax.grad(lambda a, i: a * i, argnums=(0, 1), allow_int=True)(x, 3)
            return keys, noise, grads

        key = jax.random.key(7)
        got, want = xjit.jax.jit(f)(key, 1.5), jax.jit(f)(key, 1.5)
        self.assertEqual(got[0].dtype, want[0].dtype)
        np.testing.assert_array_equal(jax.random.key_data(got[0]), jax.random.key_data(want[0]))
        assert_trees_close(self, got[1:2], want[1:2])
        self.assertEqual(float(got[2][0]), float(want[2][0]))
        self.assertEqual(got[2][1].dtype, want[2][1].dtype)  # float0
        # A raw uint32 key is a plain array.
        self.check(lambda k: jax.random.uniform(k, (4,)), jax.random.PRNGKey(3))

    def test_donation(self):
        def step(x, y):
            return x + y, jnp.sum(y)

        x, y = jnp.asarray(self.normal(4, 4)), jnp.asarray(self.normal(4, 4))
        want = jax.jit(step)(x, y)
        jitted = xjit.jax.jit(step, donate_argnums=0)
        got = jitted(x, y)
        assert_trees_close(self, got, want)
        self.assertTrue(x.is_deleted())   # As jax.jit deletes a donated array.
        self.assertFalse(y.is_deleted())
        # A numpy argument is never deleted (JAX copies it in as well).
        xn = self.normal(4, 4)
        assert_trees_close(self, jitted(xn, y), jax.jit(step)(xn, y))
        self.assertTrue(np.isfinite(xn).all())

    def test_sub_byte_integers(self):
        # jnp.int4 / uint2 arrays (ml_dtypes' layout: low bits of a byte)
        # against xjit's one sign-extended byte per element (issue 29).
        def f(x, y, u):
            return x + y, x * 2, u + u

        x = jnp.array([-8, -1, 0, 7, 3], jnp.int4)
        y = jnp.array([1, 1, 1, -8, 5], jnp.int4)
        u = jnp.array([0, 1, 2, 3, 3], jnp.uint2)
        got, want = xjit.jax.jit(f)(x, y, u), jax.jit(f)(x, y, u)
        for g, w in zip(got, want):
            self.assertEqual(g.dtype, w.dtype)
            np.testing.assert_array_equal(np.asarray(g).astype(np.int8),
                                          np.asarray(w).astype(np.int8))

    def test_cache_and_retrace(self):
        traces = []

        def f(x):
            traces.append(x.shape)
            return jnp.exp(x) - 1

        jitted = xjit.jax.jit(f)
        for _ in range(3):
            x = self.normal(5)
            np.testing.assert_allclose(jitted(x), np.expm1(x), rtol=1e-5, atol=1e-6)
        self.assertEqual(traces, [(5,)])
        self.assertEqual(jitted._cache_size(), 1)
        jitted(self.normal(2, 3))       # A new shape traces and compiles again,
        jitted(jnp.ones(5, jnp.bfloat16))  # and so does a new dtype.
        self.assertEqual(traces, [(5,), (2, 3), (5,)])
        self.assertEqual(jitted._cache_size(), 3)

    def test_threads(self):
        traces = []

        def f(x):
            traces.append(x.shape)
            return jnp.tanh(x) @ x.T

        jitted = xjit.jax.jit(f)
        inputs = [self.normal(1 + k % 3, 4) for k in range(12)]
        results = [None] * len(inputs)

        def run(k):
            for _ in range(5):
                results[k] = jitted(inputs[k])

        threads = [threading.Thread(target=run, args=(k,)) for k in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(traces), [(1, 4), (2, 4), (3, 4)])  # Each signature once.
        for x, got in zip(inputs, results):
            assert_trees_close(self, got, jax.jit(f)(x))

    def test_unsupported_is_named_and_falls_back(self):
        def f(x):
            y = jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            return y + 1

        x = self.normal(3)
        with self.assertRaisesRegex(xjit.Error, "xla_ffi_python_cpu_callback.*fallback=True"):
            xjit.jax.jit(f)(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            jitted = xjit.jax.jit(f, fallback=True)
            np.testing.assert_allclose(jitted(x), np.sin(x) + 1, rtol=1e-6)
        self.assertTrue(any("running it on jax.jit" in str(w.message) for w in caught))
        self.assertIn("fallback to jax.jit", jitted.describe(x))

    def test_inside_transformations(self):
        # Under jax.grad / jax.vmap / jax.jit the arguments are tracers: the
        # function is traced as jax.jit's, and the outer function may be
        # xjit's again.
        def f(x):
            return jnp.sum(jnp.sin(x) * x)

        x = self.normal(5)
        jitted = xjit.jax.jit(f)
        assert_trees_close(self, jax.grad(jitted)(x), jax.grad(f)(x))
        batch = self.normal(3, 5)
        assert_trees_close(self, jax.vmap(jitted)(batch), jax.vmap(f)(batch))
        outer = xjit.jax.jit(lambda x: jax.grad(jitted)(x) * 2)
        assert_trees_close(self, outer(x), jax.grad(f)(x) * 2)
        self.assertEqual(jitted._cache_size(), 0)  # Only traced, never compiled.

    def test_example(self):
        example = os.path.join(SOURCE_ROOT, "examples", "python", "jax_jit.py")
        done = subprocess.run([sys.executable, example], capture_output=True, text=True,
                              env=dict(os.environ))
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("jax_jit (python): OK (1 compile", done.stdout)

    def test_output_numpy_and_describe(self):
        jitted = xjit.jax.jit(lambda x: (x * 2, x.sum()), output="numpy")
        got = jitted(np.float32([1, 2]))
        self.assertIsInstance(got[0], np.ndarray)
        np.testing.assert_array_equal(got[0], [2, 4])
        self.assertIn("backend: jit", jitted.describe(np.float32([1, 2])))
        self.assertIn("HloModule", jitted.lower(np.float32([1, 2])).as_text(dialect="hlo"))


if __name__ == "__main__":
    if jax is None:  # 77: meson's "skipped".
        print("xjit_jax_test: skipped: JAX is not installed (XJIT_TEST_PYTHON names a python "
              "that has it)")
        sys.exit(77)
    unittest.main(verbosity=2)
