"""The `xjit` package beyond a plain call (issue 29): results written into
caller-provided arrays, in-process replicas, custom calls written in Python or
as C (ctypes) function pointers, and the sub-byte integers (s1/s2/s4,
u1/u2/u4) with and without ml_dtypes, unpacked and in packed layouts. Every
expected value is computed by numpy. Needs only numpy (the ml_dtypes cases
skip without it)."""
import ctypes
import gc
import unittest

import numpy as np

import xjit

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

TWO_RESULTS = """
HloModule two
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  n = f32[2,3] negate(a)
  z = f32[] constant(0)
  s = f32[] reduce(a, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[2,3], f32[]) tuple(n, s)
}
"""

COLUMN_MAJOR = """
HloModule column
ENTRY e {
  a = s32[2,3]{0,1} parameter(0)
  ROOT n = s32[2,3]{0,1} negate(a)
}
"""

ALL_REDUCE = """
HloModule allreduce, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
ENTRY e {
  a = f32[5] parameter(0)
  s = f32[5] all-reduce(a), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  ROOT t = (f32[5], u32[]) tuple(s, id)
}
"""

CUSTOM = """
HloModule custom
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  ROOT c = f32[2,3] custom-call(x, y), custom_call_target="TARGET", backend_config="2.5"
}
"""

# s4 and u2 through an add, unpacked and packed (E(4): two elements a byte).
SUB_BYTE = """
HloModule subbyte
ENTRY e {
  a = T[7] parameter(0)
  b = T[7] parameter(1)
  ROOT s = T[7] add(a, b)
}
"""
PACKED = """
HloModule packed
ENTRY e {
  a = s4[9]{0:E(4)} parameter(0)
  n = s4[9]{0:E(4)} negate(a)
  w = s8[9] convert(a)
  ROOT t = (s4[9]{0:E(4)}, s8[9]) tuple(n, w)
}
"""


class OutputBuffersTest(unittest.TestCase):
    def test_results_are_written_in_place(self):
        f = xjit.compile(TWO_RESULTS)
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        n, s = np.empty((2, 3), np.float32), np.empty((), np.float32)
        returned = f(a, out=(n, s))
        self.assertIs(returned[0], n)
        self.assertIs(returned[1], s)
        np.testing.assert_array_equal(n, -a)
        self.assertEqual(float(s), 15.0)

    def test_strided_target_and_column_major_result(self):
        f = xjit.compile(COLUMN_MAJOR)
        a = np.arange(6, dtype=np.int32).reshape(2, 3)
        target = np.zeros((2, 3), np.int32)
        f(a, out=target)  # The layout differs: filled from scratch memory.
        np.testing.assert_array_equal(target, -a)
        wide = np.zeros((2, 6), np.int32)
        xjit.compile(COLUMN_MAJOR)(a, out=wide[:, ::2])  # Not contiguous.
        np.testing.assert_array_equal(wide[:, ::2], -a)
        np.testing.assert_array_equal(wide[:, 1::2], 0)

    def test_result_may_be_the_argument(self):
        f = xjit.compile(TWO_RESULTS)
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        s = np.empty((), np.float32)
        f(a, out=(a, s))
        np.testing.assert_array_equal(a, -np.arange(6, dtype=np.float32).reshape(2, 3))
        self.assertEqual(float(s), 15.0)

    def test_bad_targets_are_errors(self):
        f = xjit.compile(TWO_RESULTS)
        a = np.ones((2, 3), np.float32)
        s = np.empty((), np.float32)
        with self.assertRaisesRegex(ValueError, "expected 2 arrays"):
            f(a, out=np.empty((2, 3), np.float32))
        with self.assertRaisesRegex(ValueError, "out\\[0\\]: expected float32"):
            f(a, out=(np.empty((2, 3), np.float64), s))
        with self.assertRaisesRegex(ValueError, "out\\[0\\]"):
            f(a, out=(np.empty((3, 2), np.float32), s))
        frozen = np.empty((2, 3), np.float32)
        frozen.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            f(a, out=(frozen, s))
        with self.assertRaisesRegex(TypeError, "numpy array"):
            f(a, out=([0] * 6, s))


class ReplicasTest(unittest.TestCase):
    def test_all_reduce_over_two_replicas(self):
        for backend in ("jit", "interpreter"):
            f = xjit.compile(ALL_REDUCE, backend=backend)
            x0 = np.arange(5, dtype=np.float32)
            x1 = np.float32([10, 20, 30, 40, 50])
            results = f.execute_replicated([(x0,), (x1,)])
            self.assertEqual(len(results), 2)
            for r, (s, replica) in enumerate(results):
                np.testing.assert_array_equal(s, x0 + x1)
                self.assertEqual(int(replica), r)

    def test_replicas_write_into_out(self):
        f = xjit.compile(ALL_REDUCE)
        outs = [(np.empty(5, np.float32), np.empty((), np.uint32)) for _ in range(2)]
        x = np.ones(5, np.float32)
        f.execute_replicated([(x,), (x * 3,)], out=outs)
        np.testing.assert_array_equal(outs[1][0], np.full(5, 4, np.float32))
        self.assertEqual(int(outs[1][1]), 1)

    def test_wrong_replica_count_is_an_error(self):
        f = xjit.compile(ALL_REDUCE)
        x = np.ones(5, np.float32)
        with self.assertRaises(xjit.Error):
            f.execute_replicated([(x,), (x,), (x,)])
        with self.assertRaises(ValueError):
            f.execute_replicated([])


class CustomCallTest(unittest.TestCase):
    def test_python_handler(self):
        calls = []

        def scaled_add(x, y, backend_config):
            calls.append(backend_config)
            self.assertFalse(x.flags.writeable)
            return x * float(backend_config) + y

        xjit.register_custom_call("py_scaled_add", scaled_add, backend_config=True)
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        y = np.float32([1, -1, 0.5])
        for backend in ("jit", "interpreter"):
            f = xjit.compile(CUSTOM.replace("TARGET", "py_scaled_add"), backend=backend)
            np.testing.assert_array_equal(f(x, y), x * 2.5 + y)
        self.assertEqual(calls, ["2.5", "2.5"])
        xjit.unregister_custom_call("py_scaled_add")

    def test_exception_fails_the_run(self):
        def broken(x, y):
            raise KeyError("no such weight")

        xjit.register_custom_call("py_broken", broken)
        f = xjit.compile(CUSTOM.replace("TARGET", "py_broken"))
        with self.assertRaisesRegex(xjit.Error, "KeyError.*no such weight") as caught:
            f(np.ones((2, 3), np.float32), np.ones(3, np.float32))
        self.assertEqual(caught.exception.code, "INTERNAL")
        xjit.register_custom_call("py_broken", lambda x, y: np.ones((3, 2), np.float32))
        f = xjit.compile(CUSTOM.replace("TARGET", "py_broken"))
        with self.assertRaisesRegex(xjit.Error, "shape"):
            f(np.ones((2, 3), np.float32), np.ones(3, np.float32))
        xjit.unregister_custom_call("py_broken")

    def test_executable_keeps_its_handler(self):
        xjit.register_custom_call("py_kept", lambda x, y: x - y)
        f = xjit.compile(CUSTOM.replace("TARGET", "py_kept"))
        xjit.unregister_custom_call("py_kept")
        gc.collect()
        x, y = np.ones((2, 3), np.float32), np.float32([1, 2, 3])
        np.testing.assert_array_equal(f(x, y), x - y)  # Still there.
        before = len(xjit._handlers)
        del f
        gc.collect()
        self.assertEqual(len(xjit._handlers), before - 1)  # Released with the executable.

    def test_c_function_pointer(self):
        # A handler of xjit_ffi_handler's C type: here made by ctypes from a
        # Python function, as one would pass a function of a shared library.
        seen = []

        def negate_first(user_data, frame_pointer):
            frame = frame_pointer.contents
            seen.append(user_data)
            x, out = frame.operands[0], frame.results[0]
            count = x.byte_size // 4
            source = (ctypes.c_float * count).from_address(x.data)
            target = (ctypes.c_float * count).from_address(out.data)
            for k in range(count):
                target[k] = -source[k]
            return None

        handler = xjit.FFI_HANDLER(negate_first)
        xjit.register_custom_call("c_negate", handler, user_data=1234)
        f = xjit.compile(CUSTOM.replace("TARGET", "c_negate"))
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(f(x, np.zeros(3, np.float32)), -x)
        self.assertEqual(seen, [1234])
        xjit.unregister_custom_call("c_negate")

    def test_bad_handler(self):
        with self.assertRaises(TypeError):
            xjit.register_custom_call("py_bad", 42)
        with self.assertRaises(ValueError):
            xjit.register_custom_call("py_bad", lambda x: x, user_data=1)


class SubByteTest(unittest.TestCase):
    def compile_without_ml_dtypes(self, text):
        saved = xjit._ml_dtypes_module
        xjit._ml_dtypes_module = False  # As if ml_dtypes were not installed.
        try:
            return xjit.compile(text)
        finally:
            xjit._ml_dtypes_module = saved

    def test_raw_int8_values(self):
        for hlo_type, low, high, dtype in (("s4", -8, 7, np.int8), ("u4", 0, 15, np.uint8),
                                           ("s2", -2, 1, np.int8), ("u2", 0, 3, np.uint8),
                                           ("s1", -1, 0, np.int8), ("u1", 0, 1, np.uint8)):
            f = self.compile_without_ml_dtypes(SUB_BYTE.replace("T[", hlo_type + "["))
            a = np.int64([low, high, 0, low, high, 1 if high > 0 else 0, low])
            b = np.int64([0, 0, low, high, low, 0, high])
            s = f(a.astype(dtype), b)  # Any integer dtype whose values fit.
            self.assertEqual(s.dtype, dtype, hlo_type)
            span = high - low + 1
            want = (a + b - low) % span + low  # Two's complement wraps.
            np.testing.assert_array_equal(s, want, hlo_type)
            with self.assertRaisesRegex(ValueError, "outside"):
                f(np.int8([high + 1] * 7), b)

    def test_packed_layout(self):
        f = self.compile_without_ml_dtypes(PACKED)
        a = np.int8([-8, -1, 0, 1, 7, -3, 5, -7, 2])  # Odd: the last byte is half used.
        n, w = f(a)
        np.testing.assert_array_equal(n, ((-a.astype(np.int64) + 8) % 16 - 8).astype(np.int8))
        np.testing.assert_array_equal(w, a)
        self.assertEqual(n.dtype, np.int8)

    @unittest.skipIf(ml_dtypes is None, "ml_dtypes is not installed")
    def test_ml_dtypes_values(self):
        f = xjit.compile(PACKED)
        a = np.array([-8, -1, 0, 1, 7, -3, 5, -7, 2], ml_dtypes.int4)
        n, w = f(a)
        self.assertEqual(n.dtype, np.dtype(ml_dtypes.int4))
        want = (-a.astype(np.int64) + 8) % 16 - 8
        np.testing.assert_array_equal(n.astype(np.int64), want)
        np.testing.assert_array_equal(w, a.astype(np.int8))
        g = xjit.compile(SUB_BYTE.replace("T[", "u2["))
        u = np.array([0, 1, 2, 3, 3, 2, 1], ml_dtypes.uint2)
        s = g(u, u)
        self.assertEqual(s.dtype, np.dtype(ml_dtypes.uint2))
        np.testing.assert_array_equal(s.astype(np.int64), (u.astype(np.int64) * 2) % 4)


if __name__ == "__main__":
    unittest.main()
