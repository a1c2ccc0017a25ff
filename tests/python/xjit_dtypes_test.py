"""bf16 and f8 arrays through the `xjit` Python package (ml_dtypes), and what
a Python without ml_dtypes or JAX gets. The expected values are ml_dtypes'
own conversions of numpy's results. Run by meson with PYTHONPATH set to the
build tree's python/ folder; the ml_dtypes cases skip where it is missing
(CI), the others run everywhere. XJIT_TEST_PYTHON names a python with
ml_dtypes and JAX to run this file with instead, when this one lacks them."""
import os
import subprocess
import sys
import unittest

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
    if os.environ.get("XJIT_TEST_PYTHON") and __name__ == "__main__":
        os.execv(os.environ["XJIT_TEST_PYTHON"],
                 [os.environ["XJIT_TEST_PYTHON"], os.path.abspath(__file__)] + sys.argv[1:])

import numpy as np

import xjit

# y = x * 2 + b in the narrow type, and the sum of x in f32: bf16 (or f8)
# parameters, a bf16 result, a scalar result.
SCALE = """
HloModule scale
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = T[3,5] parameter(0)
  b = T[5] parameter(1)
  two = T[] constant(2)
  twos = T[3,5] broadcast(two), dimensions={}
  m = T[3,5] multiply(x, twos)
  bb = T[3,5] broadcast(b), dimensions={1}
  y = T[3,5] add(m, bb)
  xf = f32[3,5] convert(x)
  zero = f32[] constant(0)
  s = f32[] reduce(xf, zero), dimensions={0,1}, to_apply=add
  ROOT t = (T[3,5], f32[]) tuple(y, s)
}
"""

# f32 in, every narrow type out: xjit's rounding against ml_dtypes'.
CONVERT = """
HloModule convert
ENTRY e {
  x = f32[N] parameter(0)
  ROOT c = T[N] convert(x)
}
"""

NARROW_TYPES = {  # HLO type -> ml_dtypes name
    "bf16": "bfloat16", "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3",
    "f8e4m3fn": "float8_e4m3fn", "f8e3m4": "float8_e3m4", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
}


ML_DTYPES_VERSION = tuple(int(part) for part in
                          getattr(ml_dtypes, "__version__", "0.0").split(".")[:2]
                          if part.isdigit()) if ml_dtypes is not None else ()


def same_bits_or_both_nan(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return bool(np.all((got == want) | (np.isnan(got) & np.isnan(want))))


@unittest.skipIf(ml_dtypes is None, "ml_dtypes is not installed")
class MlDtypesTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def test_narrow_parameters_and_results(self):
        for hlo_type in ("bf16", "f8e4m3fn", "f8e5m2"):
            dtype = np.dtype(getattr(ml_dtypes, NARROW_TYPES[hlo_type]))
            x = self.rng.uniform(-2, 2, (3, 5)).astype(dtype)
            b = self.rng.uniform(-1, 1, 5).astype(dtype)
            f = xjit.compile(SCALE.replace("T[", hlo_type + "["))
            y, s = f(x, b)
            self.assertEqual(y.dtype, dtype, hlo_type)
            self.assertEqual(s.shape, ())
            # x * 2 is exact; the add rounds once to the type.
            want = (x.astype(np.float32) * 2 + b.astype(np.float32)).astype(dtype)
            self.assertTrue(same_bits_or_both_nan(y, want), (hlo_type, y, want))
            np.testing.assert_allclose(s, x.astype(np.float32).sum(), rtol=1e-6)

    def test_every_narrow_type_rounds_as_ml_dtypes(self):
        # Normal values, ties, subnormals, overflow, -0, inf and NaN.
        values = np.concatenate([self.rng.standard_normal(20).astype(np.float32) * 8,
                                 np.float32([0.0, -0.0, 1e-6, -3e-3, 1e5, -7e38, np.inf,
                                             -np.inf, np.nan, 0.75, 1.25, 2.5, 448, 464,
                                             3.0, 6.0, 2.0 ** -127 * 1.5, 2.0 ** -128,
                                             2.0 ** 127 * 1.5])])
        for hlo_type, name in NARROW_TYPES.items():
            if not hasattr(ml_dtypes, name):
                continue
            dtype = np.dtype(getattr(ml_dtypes, name))
            module = CONVERT.replace("T[", hlo_type + "[").replace("N]", f"{values.size}]")
            got = xjit.compile(module)(values)
            self.assertEqual(got.dtype, dtype)
            with np.errstate(all="ignore"):
                want = values.astype(dtype)
            keep = np.ones(values.size, bool)
            if hlo_type == "f4e2m1fn":  # No NaN or inf: xjit and ml_dtypes agree to saturate.
                keep = np.isfinite(values)
            if hlo_type == "f8e8m0fnu" and ML_DTYPES_VERSION < (0, 6):
                # xjit converts as XLA with ml_dtypes 0.6 and later (0.75 -> 1,
                # 0 -> NaN: docs/types.md); older ml_dtypes agree on powers of two.
                keep = np.frexp(values)[0] == 0.5
            got, want = got[keep], want[keep]
            self.assertTrue(same_bits_or_both_nan(got, want),
                            (hlo_type, got.astype(np.float32), want.astype(np.float32)))

    def test_conversion_rules(self):
        module = SCALE.replace("T[", "bf16[")
        f = xjit.compile(module)
        x = np.float32([[1, 2, 3, 4, 5]] * 3)  # Exactly representable in bf16.
        y, _ = f(x, np.zeros(5, np.int32))
        self.assertEqual(y.dtype, np.dtype(ml_dtypes.bfloat16))
        np.testing.assert_array_equal(y.astype(np.float32), 2 * x)
        inexact = np.full((3, 5), 0.1, np.float32)
        with self.assertRaisesRegex(ValueError, "allow_downcast"):
            f(inexact, np.zeros(5, np.float32))
        y, _ = xjit.compile(module, allow_downcast=True)(inexact, np.zeros(5, np.float32))
        np.testing.assert_array_equal(y, (inexact * 2).astype(ml_dtypes.bfloat16))
        # NaN and inf convert; a bf16 array for an f32 parameter is exact.
        special = np.float32([np.nan, np.inf, -np.inf, -0.0, 1.0])
        got = xjit.compile(CONVERT.replace("T[", "f32[").replace("N]", "5]"))(
            special.astype(ml_dtypes.bfloat16))
        self.assertTrue(same_bits_or_both_nan(got, special))
        self.assertTrue(np.signbit(got[3]))

    def test_missing_ml_dtypes_is_named(self):
        # As a Python without ml_dtypes sees it (the other test class runs it
        # for real where ml_dtypes is missing).
        saved = xjit._ml_dtypes_module
        xjit._ml_dtypes_module = False
        try:
            f = xjit.compile(SCALE.replace("T[", "bf16["))
            self.assertIn("backend: jit", f.describe())
            with self.assertRaisesRegex(NotImplementedError, "ml_dtypes"):
                f(np.zeros((3, 5), np.float32), np.zeros(5, np.float32))
        finally:
            xjit._ml_dtypes_module = saved


class WithoutOptionalPackagesTest(unittest.TestCase):
    """What needs neither ml_dtypes nor JAX (CI has neither)."""

    def test_import_needs_neither(self):
        code = ("import sys, xjit, xjit.jax\n"
                "assert xjit.jax.jit is not None\n"
                "print(sorted(m for m in ('jax', 'ml_dtypes') if m in sys.modules))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=dict(os.environ)).stdout
        self.assertEqual(out.strip(), "[]")

    @unittest.skipIf(ml_dtypes is not None, "ml_dtypes is installed")
    def test_bf16_without_ml_dtypes(self):
        f = xjit.compile(SCALE.replace("T[", "bf16["))  # Compiles: describe() works.
        self.assertIn("backend: jit", f.describe())
        with self.assertRaisesRegex(NotImplementedError, r"bf16 needs the ml_dtypes package"):
            f(np.zeros((3, 5), np.float32), np.zeros(5, np.float32))
        # A module whose narrow values stay inside runs.
        inner = ("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                 "  b = bf16[4] convert(x)\n  ROOT y = f32[4] convert(b)\n}\n")
        np.testing.assert_array_equal(xjit.compile(inner)(np.float32([1, 0.1, -2, 3])),
                                      np.float32([1, 0.10009765625, -2, 3]))

    def test_sub_byte_integers_need_no_ml_dtypes(self):
        # Without ml_dtypes an s4 travels as int8, one value per byte
        # (xjit_features_test.py covers both ways and packed layouts).
        f = xjit.compile("HloModule m\nENTRY e {\n  ROOT x = s4[3] parameter(0)\n}\n")
        got = f(np.int8([-8, 0, 7]))
        np.testing.assert_array_equal(got.astype(np.int64), [-8, 0, 7])
        self.assertEqual(got.dtype, np.dtype(getattr(ml_dtypes, "int4", np.int8))
                         if ml_dtypes is not None else np.int8)

    def test_jax_is_named_when_missing(self):
        try:
            import jax  # noqa: F401
            self.skipTest("JAX is installed")
        except ImportError:
            pass
        f = xjit.jax.jit(lambda x: x)
        with self.assertRaisesRegex(ImportError, "xjit.jax needs JAX"):
            f(np.zeros(3))


if __name__ == "__main__":
    unittest.main(verbosity=2)
