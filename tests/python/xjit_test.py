"""The `xjit` Python package (python/xjit) against numpy: every result here is
computed by numpy from the same inputs. Run by meson with PYTHONPATH set to
the build tree's python/ folder."""
import unittest

import numpy as np

import xjit

ELEMENTWISE = """
HloModule elementwise
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5] parameter(1)
  bb = f32[3,5] broadcast(b), dimensions={1}
  m = f32[3,5] multiply(a, bb)
  ROOT t = f32[3,5] tanh(m)
}
"""

DOT = """
HloModule dot
ENTRY e {
  a = f64[6,4] parameter(0)
  b = f64[4,7] parameter(1)
  ROOT d = f64[6,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

# A column-major parameter and a column-major result: the package converts.
LAYOUTS = """
HloModule layouts
ENTRY e {
  a = s32[2,3]{0,1} parameter(0)
  n = s32[2,3]{0,1} negate(a)
  ROOT c = s32[2,3]{0,1} copy(n)
}
"""

TUPLE = """
HloModule tuple
ENTRY e {
  a = f32[4] parameter(0)
  p = (f32[4], s64[]) parameter(1)
  v = f32[4] get-tuple-element(p), index=0
  k = s64[] get-tuple-element(p), index=1
  s = f32[4] add(a, v)
  k2 = s64[] multiply(k, k)
  lt = pred[4] compare(a, v), direction=LT
  ROOT t = (f32[4], s64[], pred[4]) tuple(s, k2, lt)
}
"""

ENDLESS = """
HloModule endless
cond {
  c = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(b, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"""


class XjitTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def test_elementwise_with_broadcast(self):
        a = self.rng.uniform(-2, 2, (3, 5)).astype(np.float32)
        b = self.rng.uniform(-2, 2, (5,)).astype(np.float32)
        for backend in ("jit", "interpreter"):
            f = xjit.compile(ELEMENTWISE, backend=backend)
            np.testing.assert_allclose(f(a, b), np.tanh(a * b), rtol=2e-6, atol=1e-7)

    def test_strided_and_readonly_arguments(self):
        # Views that are not C-contiguous (a column slice, reversed rows) and
        # read-only arrays (a jax.Array's buffer is one) are read as values.
        wide = self.rng.uniform(-2, 2, (3, 10)).astype(np.float32)
        b = self.rng.uniform(-2, 2, (10,)).astype(np.float32)[::-2]
        a = wide[::-1, ::2]
        a_readonly = np.array(a)
        a_readonly.flags.writeable = False
        f = xjit.compile(ELEMENTWISE)
        for x in (a, a_readonly):
            np.testing.assert_allclose(f(x, b), np.tanh(x * b), rtol=2e-6, atol=1e-7)
        got = f(a, b)
        self.assertTrue(got.flags.c_contiguous and got.flags.writeable)

    def test_dot_with_threads(self):
        a = self.rng.standard_normal((6, 4))
        b = self.rng.standard_normal((4, 7))
        for threads in (1, 2):
            f = xjit.compile(DOT, threads=threads)
            got = f(a, b)
            self.assertEqual(got.dtype, np.float64)
            np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)

    def test_layouts_are_converted(self):
        a = np.arange(6, dtype=np.int32).reshape(2, 3)
        got = xjit.compile(LAYOUTS)(a)
        np.testing.assert_array_equal(got, -a)
        # Exactly convertible integers of another dtype are accepted.
        np.testing.assert_array_equal(xjit.compile(LAYOUTS)(a.astype(np.int64)), -a)

    def test_tuple_parameter_and_result(self):
        a = self.rng.uniform(-1, 1, 4).astype(np.float32)
        v = self.rng.uniform(-1, 1, 4).astype(np.float32)
        s, k2, less = xjit.compile(TUPLE)(a, (v, np.int64(7)))
        np.testing.assert_array_equal(s, a + v)
        self.assertEqual(k2, 49)
        self.assertEqual(k2.shape, ())  # A scalar result keeps shape (), as JAX's do.
        self.assertEqual(k2.dtype, np.int64)
        np.testing.assert_array_equal(less, a < v)

    def test_allow_downcast_rounds_wider_floats(self):
        module = "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n"
        x = np.array([0.1, 1.5])  # float64, numpy's default; 0.1 is not an f32.
        with self.assertRaises(ValueError) as caught:
            xjit.compile(module)(x)
        self.assertIn("allow_downcast", str(caught.exception))
        got = xjit.compile(module, allow_downcast=True)(x)
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, -x.astype(np.float32))
        # Exactly representable values need no opt-in.
        np.testing.assert_array_equal(xjit.compile(module)(np.array([0.5, 2.0])), [-0.5, -2.0])

    def test_describe(self):
        text = xjit.compile(LAYOUTS).describe()
        self.assertIn("backend: jit", text)
        self.assertIn("\ninterpreted steps: 0\n", text)
        self.assertIn("backend: interpreter", xjit.compile(LAYOUTS, backend="interpreter").describe())

    def test_type_hints(self):
        # Issue 29: the package had none.
        import typing
        self.assertIs(typing.get_type_hints(xjit.compile)["return"], xjit.Executable)
        self.assertIn("out", typing.get_type_hints(xjit.Executable.__call__))
        self.assertIs(typing.get_type_hints(xjit.version)["return"], str)

    def test_version(self):
        self.assertRegex(xjit.__version__, r"^\d+\.\d+\.\d+$")
        self.assertEqual(xjit.__version__, xjit.version())

    def test_bad_module_is_an_error(self):
        with self.assertRaises(xjit.Error) as caught:
            xjit.compile("HloModule m\nENTRY e {\n  ROOT x = f32[2] bogus()\n}\n")
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")

    def test_bad_arguments_are_errors(self):
        f = xjit.compile(ELEMENTWISE)
        with self.assertRaisesRegex(ValueError, "expected shape"):
            f(np.zeros((5, 3), np.float32), np.zeros(5, np.float32))
        with self.assertRaisesRegex(ValueError, "does not convert exactly"):
            xjit.compile(LAYOUTS)(np.full((2, 3), 0.5))
        with self.assertRaises(TypeError):
            f(np.zeros((3, 5), np.float32))
        with self.assertRaises(ValueError):
            xjit.compile(ELEMENTWISE, backend="gpu")

    def test_max_while_iterations(self):
        for backend in ("interpreter", "jit"):
            f = xjit.compile(ENDLESS, backend=backend, max_while_iterations=1000)
            with self.assertRaises(xjit.Error) as caught:
                f()
            self.assertEqual(caught.exception.code, "RESOURCE_EXHAUSTED", backend)


if __name__ == "__main__":
    unittest.main(verbosity=2)
