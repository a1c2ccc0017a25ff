"""xjit from Python: compile HLO text with libxjit.so and run it on numpy arrays.

    import numpy as np, xjit
    f = xjit.compile(open("examples/mlp.hlo").read(), threads=1)
    logits, probs = f(np.load("examples/x.npy"))

A thin ctypes layer over the C API (xjit.h, docs/library.md): `compile`
parses, verifies and compiles a module once; the returned `Executable` is
called with one numpy array per entry parameter (a tuple or list of arrays for
a tuple-shaped parameter) and returns a new array, or a tuple of arrays (the
leaves of a tuple result, depth first). Arrays are converted to the
parameter's dtype only where that is exact for the values (the call raises
otherwise) and to the layout the module declares; results come back in
logical (C) order whatever their layout.

bf16 and the f8 types (and f4e2m1fn) travel as ml_dtypes' numpy dtypes
(ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ...): ml_dtypes is imported
when a module first needs it, so `import xjit` needs only numpy. The
sub-byte integers (s1, s2, s4, u1, u2, u4) come back as ml_dtypes.int4, ...
where ml_dtypes is installed and as int8/uint8 (one value per byte) where
not; any integer array whose values fit is accepted, packed layouts
(`{0:E(4)}`) included. `xjit.jax.jit` (python/xjit/jax.py) runs JAX
functions through xjit.

Beyond a plain call: `f(x, out=y)` writes results into caller-provided
arrays; `f.execute_replicated([...])` runs N in-process replicas;
`f.execute_mpi(communicator, ...)` runs this rank's replica over MPI
(`MpiCommunicator`); `register_custom_call` registers a Python function or
a C (ctypes) function as a typed FFI custom call. docs/python.md.

libxjit.so is found through $XJIT_LIBRARY (a path), else next to this package
as meson built or installed it, else the system's library path.
"""

import ctypes
import ctypes.util
import os
import re
import threading

from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

# What a call returns (and out= takes): an array, or a tuple of arrays for a
# tuple result.
Results = Union[np.ndarray, Tuple[np.ndarray, ...]]

__all__ = ["Error", "Executable", "MpiCommunicator", "compile", "library_path",
           "register_custom_call", "unregister_custom_call", "version"]


def version() -> str:
    """The version of the loaded libxjit.so ("MAJOR.MINOR.PATCH")."""
    return _library().xjit_version().decode()


def __getattr__(name):
    # xjit.__version__, read from the library when first asked for (importing
    # xjit never loads it); xjit.jax, imported when first asked for.
    if name == "__version__":
        return version()
    if name == "jax":  # xjit.jax without `import xjit.jax` (JAX itself loads on use).
        import importlib
        return importlib.import_module(".jax", __name__)
    raise AttributeError(f"module 'xjit' has no attribute {name!r}")


class Error(RuntimeError):
    """An error status from libxjit: `code` is its name ("INVALID_ARGUMENT", ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def library_path() -> str:
    """The libxjit.so this module loads (see the module's docstring)."""
    explicit = os.environ.get("XJIT_LIBRARY")
    if explicit:
        return explicit
    try:
        from . import _paths  # Written by meson, in the build and the install tree.
    except ImportError:
        _paths = None
    if _paths is not None:
        candidate = _paths.library(os.path.dirname(os.path.abspath(__file__)))
        if os.path.exists(candidate):
            return candidate
    return ctypes.util.find_library("xjit") or "libxjit.so.0"


_lib = None


def _library():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        p, i, i64, size = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t
        signatures = {
            "xjit_status_code": (i, [p]),
            "xjit_status_message": (ctypes.c_char_p, [p]),
            "xjit_status_free": (None, [p]),
            "xjit_code_name": (ctypes.c_char_p, [i]),
            "xjit_version": (ctypes.c_char_p, []),
            "xjit_element_type_name": (ctypes.c_char_p, [i]),
            "xjit_element_type_byte_width": (i64, [i]),
            "xjit_shape_free": (None, [p]),
            "xjit_shape_element_type": (i, [p]),
            "xjit_shape_is_array": (i, [p]),
            "xjit_shape_is_tuple": (i, [p]),
            "xjit_shape_rank": (i, [p]),
            "xjit_shape_dimension": (i64, [p, i]),
            "xjit_shape_minor_to_major": (i, [p, ctypes.POINTER(i64), i]),
            "xjit_shape_tuple_size": (i, [p]),
            "xjit_shape_tuple_element": (p, [p, i, ctypes.POINTER(p)]),
            "xjit_shape_byte_size": (i64, [p]),
            "xjit_shape_element_count": (i64, [p]),
            "xjit_shape_to_string": (p, [p]),
            "xjit_string_free": (None, [p]),
            "xjit_module_parse": (p, [ctypes.c_char_p, ctypes.POINTER(p)]),
            "xjit_module_free": (None, [p]),
            "xjit_compile_options_create": (p, []),
            "xjit_compile_options_free": (None, [p]),
            "xjit_compile_options_set_backend": (p, [p, i]),
            "xjit_compile_options_set_isa": (p, [p, ctypes.c_char_p]),
            "xjit_compile_options_set_threads": (p, [p, i]),
            "xjit_compile_options_set_passes": (p, [p, i]),
            "xjit_compile_options_set_max_while_iterations": (p, [p, i64]),
            "xjit_compile": (p, [p, p, ctypes.POINTER(p)]),
            "xjit_executable_free": (None, [p]),
            "xjit_executable_describe": (p, [p, ctypes.POINTER(p)]),
            "xjit_executable_num_parameters": (i, [p]),
            "xjit_executable_parameter_shape": (p, [p, i, ctypes.POINTER(p)]),
            "xjit_executable_num_results": (i, [p]),
            "xjit_executable_result_shape": (p, [p, i, ctypes.POINTER(p)]),
            "xjit_executable_full_result_shape": (p, [p, ctypes.POINTER(p)]),
            "xjit_execute": (p, [p, ctypes.POINTER(p), ctypes.POINTER(size), i,
                                 ctypes.POINTER(p), ctypes.POINTER(size), i]),
            "xjit_execute_replicated": (p, [p, i, ctypes.POINTER(p), ctypes.POINTER(size), i,
                                            ctypes.POINTER(p), ctypes.POINTER(size), i]),
            "xjit_mpi_communicator_create": (p, [i64, ctypes.c_double, ctypes.POINTER(p)]),
            "xjit_mpi_communicator_destroy": (None, [p]),
            "xjit_mpi_communicator_rank": (i, [p]),
            "xjit_mpi_communicator_size": (i, [p]),
            "xjit_execute_mpi": (p, [p, p, ctypes.POINTER(p), ctypes.POINTER(size), i,
                                     ctypes.POINTER(p), ctypes.POINTER(size), i]),
            "xjit_register_ffi_custom_call_with_release": (p, [ctypes.c_char_p, p, p, p]),
            "xjit_unregister_ffi_custom_call": (p, [ctypes.c_char_p]),
            "xjit_status_create": (p, [i, ctypes.c_char_p]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        _lib = lib
    return _lib


def _check(status):
    """Raises Error for a non-NULL xjit_status* (and frees it)."""
    if status:
        lib = _library()
        code = lib.xjit_code_name(lib.xjit_status_code(status)).decode()
        message = lib.xjit_status_message(status).decode(errors="replace")
        lib.xjit_status_free(status)
        raise Error(code, message)


# HLO element type name -> numpy dtype.
_DTYPES = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}

# HLO element type name -> the name of its dtype in ml_dtypes. Each has one
# element per byte (or two for bf16) in ml_dtypes and in xjit's unpacked
# arrays, with the same bits. The sub-byte integers are apart (_SUB_BYTE):
# their bits differ.
_ML_DTYPE_NAMES = {
    "bf16": "bfloat16",
    "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3", "f8e4m3fn": "float8_e4m3fn",
    "f8e3m4": "float8_e3m4", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
}

# Sub-byte integers: HLO name -> (bits, signed, ml_dtypes name). xjit keeps
# an unpacked one as a whole byte per element (an s4 -1 is the int8 -1,
# 0xFF), ml_dtypes keeps only the low bits (its int4 -1 is the byte 0x0F),
# and a packed layout (E(4)) puts 8/bits elements in a byte, low bits first.
# Values are converted, never their bytes reinterpreted: see _SubByte.
_SUB_BYTE = {
    "s1": (1, True, "int1"), "s2": (2, True, "int2"), "s4": (4, True, "int4"),
    "u1": (1, False, "uint1"), "u2": (2, False, "uint2"), "u4": (4, False, "uint4"),
}

_ml_dtypes_module = None
_ml_dtypes_lock = threading.Lock()


def _ml_dtypes():
    """The ml_dtypes module, imported on first use; None if it is not installed."""
    global _ml_dtypes_module
    with _ml_dtypes_lock:
        if _ml_dtypes_module is None:
            try:
                import ml_dtypes
                _ml_dtypes_module = ml_dtypes
            except ImportError:
                _ml_dtypes_module = False
        return _ml_dtypes_module or None


def _dtype_for(type_name):
    """(numpy dtype or None, why not): the dtype of HLO element type `type_name`."""
    if type_name in _DTYPES:
        return np.dtype(_DTYPES[type_name]), None
    if type_name in _SUB_BYTE:
        bits, signed, ml_name = _SUB_BYTE[type_name]
        ml_dtypes = _ml_dtypes()
        if ml_dtypes is not None and hasattr(ml_dtypes, ml_name):
            return np.dtype(getattr(ml_dtypes, ml_name)), None
        return np.dtype(np.int8 if signed else np.uint8), None
    if type_name in _ML_DTYPE_NAMES:
        ml_dtypes = _ml_dtypes()
        if ml_dtypes is None:
            return None, (f"element type {type_name} needs the ml_dtypes package "
                          f"(pip install ml_dtypes) for its numpy dtype")
        if hasattr(ml_dtypes, _ML_DTYPE_NAMES[type_name]):
            return np.dtype(getattr(ml_dtypes, _ML_DTYPE_NAMES[type_name])), None
        return None, (f"element type {type_name} needs ml_dtypes."
                      f"{_ML_DTYPE_NAMES[type_name]}, which ml_dtypes "
                      f"{getattr(ml_dtypes, '__version__', '?')} lacks")
    return None, (f"element type {type_name} has no numpy dtype; supported: " +
                  ", ".join(list(_DTYPES) + list(_SUB_BYTE) + list(_ML_DTYPE_NAMES)))


def _is_float(dtype):
    """numpy's floats and complexes, and ml_dtypes' floats (numpy kind 'V')."""
    if dtype.kind in "fc":
        return True
    ml_dtypes = _ml_dtypes() if dtype.kind == "V" else None
    return ml_dtypes is not None and any(
        dtype == getattr(ml_dtypes, name, None) for name in _ML_DTYPE_NAMES.values())


class _SubByte:
    """How values of a sub-byte integer type convert (see _SUB_BYTE)."""

    def __init__(self, type_name, packed_bits):
        self.bits, self.signed, _ = _SUB_BYTE[type_name]
        self.low = -(1 << (self.bits - 1)) if self.signed else 0
        self.high = (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        self.packed_bits = packed_bits  # 0: one element per byte.
        self.byte_dtype = np.dtype(np.int8 if self.signed else np.uint8)

    def to_bytes_dtype(self, array, what, text):
        """`array` (any integer dtype, ml_dtypes' int4 included) as xjit's
        unpacked values: one int8/uint8 per element; values out of range raise."""
        ml_integer = array.dtype.name in {name for _, _, name in _SUB_BYTE.values()}
        if array.dtype.kind not in "iub" and not ml_integer:
            raise ValueError(f"{what}: dtype {array.dtype} is not an integer type ({text})")
        wide = array.astype(np.int64)
        if wide.size and (wide.min() < self.low or wide.max() > self.high):
            raise ValueError(f"{what}: values outside [{self.low}, {self.high}] ({text})")
        return wide.astype(self.byte_dtype)

    def pack(self, values):
        """Unpacked values in physical order -> packed bytes (low bits first)."""
        n = self.packed_bits
        per_byte = 8 // n
        flat = values.reshape(-1).view(np.uint8) & np.uint8((1 << n) - 1)
        padded = np.zeros(-(-flat.size // per_byte) * per_byte, np.uint8)
        padded[:flat.size] = flat
        groups = padded.reshape(-1, per_byte).astype(np.uint16)
        shifts = np.arange(per_byte, dtype=np.uint16) * n
        return (groups << shifts).sum(axis=1).astype(np.uint8)

    def unpack(self, packed, count):
        """Packed bytes -> `count` unpacked values (int8/uint8), sign-extended."""
        n = self.packed_bits
        per_byte = 8 // n
        shifts = np.arange(per_byte, dtype=np.uint8) * n
        fields = ((packed.reshape(-1, 1) >> shifts) & np.uint8((1 << n) - 1)).reshape(-1)[:count]
        return self.extend(fields)

    def extend(self, fields):
        """Low-bit fields (uint8) -> values, sign-extended for a signed type."""
        fields = fields.astype(np.uint8) & np.uint8((1 << self.bits) - 1)
        if not self.signed:
            return fields
        sign = np.int16(1 << (self.bits - 1))
        return ((fields.astype(np.int16) ^ sign) - sign).astype(np.int8)


def _packed_bits(text):
    """n of a layout's E(n) in a shape's text (`s4[8]{0:E(4)}`), else 0."""
    match = re.search(r"\{[^}]*:[^}]*E\((\d+)\)", text)
    return int(match.group(1)) if match else 0


class _Leaf:
    """One array (or token) of a parameter or result: how its bytes are laid out.

    A leaf of an ml_dtypes type when ml_dtypes is not installed still
    compiles (describe() works); passing or returning its values raises
    NotImplementedError naming ml_dtypes."""

    def __init__(self, shape_handle):
        lib = _library()
        text_pointer = lib.xjit_shape_to_string(shape_handle)
        self.text = ctypes.string_at(text_pointer).decode()
        lib.xjit_string_free(text_pointer)
        self.byte_size = lib.xjit_shape_byte_size(shape_handle)
        self.unavailable = None  # Why values of this leaf cannot be converted.
        self.sub_byte = None
        if not lib.xjit_shape_is_array(shape_handle):  # A token: no bytes.
            self.dtype = None
            self.dims = ()
            return
        element_type = lib.xjit_shape_element_type(shape_handle)
        type_name = lib.xjit_element_type_name(element_type).decode()
        self.dtype, why = _dtype_for(type_name)
        if self.dtype is None and type_name not in _ML_DTYPE_NAMES:
            raise NotImplementedError(f"xjit (python): {why} ({self.text})")
        if self.dtype is None:
            self.unavailable = f"xjit (python): {why} ({self.text})"
        rank = lib.xjit_shape_rank(shape_handle)
        self.dims = tuple(lib.xjit_shape_dimension(shape_handle, d) for d in range(rank))
        minor_to_major = (ctypes.c_int64 * max(rank, 1))()
        lib.xjit_shape_minor_to_major(shape_handle, minor_to_major, rank)
        # Physical order: dimensions from major to minor.
        self.major_to_minor = tuple(reversed(minor_to_major[:rank]))
        self.physical_dims = tuple(self.dims[d] for d in self.major_to_minor)
        self.is_row_major = self.major_to_minor == tuple(range(rank))
        count = int(np.prod(self.dims, dtype=np.int64))
        if type_name in _SUB_BYTE:
            packed = _packed_bits(self.text)
            self.sub_byte = _SubByte(type_name, packed if 0 < packed < 8 else 0)
            expected = (count * packed + 7) // 8 if self.sub_byte.packed_bits else count
        else:
            width = (self.dtype.itemsize if self.dtype is not None
                     else lib.xjit_element_type_byte_width(element_type))
            expected = count * width
        if self.byte_size != expected:
            raise NotImplementedError(f"xjit (python): {self.text}: layouts with tiles or "
                                      "padding are not supported")

    def to_bytes(self, value, what, allow_downcast=False):
        """`value` as this leaf's physical bytes (a contiguous numpy array).

        Another dtype converts when that is exact for the values, or, with
        allow_downcast, from a wider float to a narrower one (float64 to
        float32: numpy's default dtype for a JAX user's f32 parameter; float32
        to bfloat16), rounded to nearest as numpy's astype rounds."""
        if self.unavailable:
            raise NotImplementedError(f"{what}: {self.unavailable}")
        if self.dtype is None:  # A token.
            return np.empty(0, np.uint8)
        array = np.asarray(value)
        if array.shape != self.dims:
            raise ValueError(f"{what}: expected shape {self.dims} ({self.text}), got {array.shape}")
        if self.sub_byte is not None:
            array = self.sub_byte.to_bytes_dtype(array, what, self.text)
        elif array.dtype != self.dtype:
            source_is_float, target_is_float = _is_float(array.dtype), _is_float(self.dtype)
            rounding = (allow_downcast and source_is_float and target_is_float and
                        (array.dtype.kind == "c") == (self.dtype.kind == "c"))
            # Exact when converting back gives the values again (compared in
            # the source dtype: numpy has no comparison of every pair of
            # ml_dtypes and numpy types). NaN converts to NaN between floats.
            with np.errstate(all="ignore"):
                converted = array.astype(self.dtype)
                exact = rounding or np.array_equal(
                    converted.astype(array.dtype), array,
                    equal_nan=source_is_float and target_is_float)
            if not exact:
                raise ValueError(f"{what}: dtype {array.dtype} does not convert exactly to "
                                 f"{self.dtype} ({self.text}); pass allow_downcast=True to "
                                 "xjit.compile to round floats")
            array = converted
        if not self.is_row_major:
            array = array.transpose(self.major_to_minor)
        # C order that keeps the rank (np.ascontiguousarray makes a scalar an
        # array of shape (1,)); no copy when the array already is.
        array = np.asarray(array, order="C")
        if self.sub_byte is not None and self.sub_byte.packed_bits:
            return self.sub_byte.pack(array)
        return array

    def empty_physical(self):
        """A new array for this leaf's physical bytes, for xjit_execute to fill."""
        if self.dtype is None:  # A token (unavailable leaves never get here).
            return np.empty(0, np.uint8)
        if self.sub_byte is not None:
            if self.sub_byte.packed_bits:
                return np.empty(self.byte_size, np.uint8)
            return np.empty(self.physical_dims, self.sub_byte.byte_dtype)
        return np.empty(self.physical_dims, self.dtype)

    def direct(self, array):
        """Whether xjit may write this leaf straight into `array` (an out=
        array): its dtype, shape and C-contiguous memory are the physical
        buffer's."""
        return (self.sub_byte is None and self.is_row_major and array.dtype == self.dtype and
                array.shape == self.dims and array.flags.c_contiguous and array.flags.writeable)

    def logical(self, physical):
        """The logical array (C order) of this leaf from empty_physical()'s
        array, filled: that array itself for a row-major layout."""
        if self.dtype is None:
            return None
        if self.sub_byte is not None:
            values = physical
            if self.sub_byte.packed_bits:
                values = self.sub_byte.unpack(physical, int(np.prod(self.dims, dtype=np.int64)))
            values = self.sub_byte.extend(values.view(np.uint8)).reshape(self.physical_dims)
            if not self.is_row_major:
                values = np.array(values.transpose(np.argsort(self.major_to_minor)), order="C")
            return values.astype(self.dtype)
        if self.is_row_major:
            return physical
        return np.array(physical.transpose(np.argsort(self.major_to_minor)), order="C")


def _leaves(shape_handle):
    """The leaves of a shape, depth first (one for an array or a token)."""
    lib = _library()
    if not lib.xjit_shape_is_tuple(shape_handle):
        return [_Leaf(shape_handle)]
    leaves = []
    for k in range(lib.xjit_shape_tuple_size(shape_handle)):
        element = ctypes.c_void_p()
        _check(lib.xjit_shape_tuple_element(shape_handle, k, ctypes.byref(element)))
        try:
            leaves.extend(_leaves(element))
        finally:
            lib.xjit_shape_free(element)
    return leaves


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for element in value for leaf in _flatten(element)]
    return [value]


class Executable:
    """A compiled module; call it with numpy arrays (see the module's docstring)."""

    def __init__(self, handle, allow_downcast=False):
        lib = _library()
        self._handle = handle
        self.allow_downcast = allow_downcast
        self.parameters = []  # Per parameter: its leaves.
        for i in range(lib.xjit_executable_num_parameters(handle)):
            shape = ctypes.c_void_p()
            _check(lib.xjit_executable_parameter_shape(handle, i, ctypes.byref(shape)))
            try:
                self.parameters.append(_leaves(shape))
            finally:
                lib.xjit_shape_free(shape)
        self.results = []
        for i in range(lib.xjit_executable_num_results(handle)):
            shape = ctypes.c_void_p()
            _check(lib.xjit_executable_result_shape(handle, i, ctypes.byref(shape)))
            try:
                self.results.append(_Leaf(shape))
            finally:
                lib.xjit_shape_free(shape)
        full = ctypes.c_void_p()
        _check(lib.xjit_executable_full_result_shape(handle, ctypes.byref(full)))
        self.result_is_tuple = bool(lib.xjit_shape_is_tuple(full))
        lib.xjit_shape_free(full)

    def describe(self) -> str:
        """What the compile produced (the C API's xjit_executable_describe):
        the backend, a line per kernel, library call and interpreted step
        (each ~100x slower than compiled code), and the summary counts."""
        lib = _library()
        text = ctypes.c_void_p()
        _check(lib.xjit_executable_describe(self._handle, ctypes.byref(text)))
        try:
            return ctypes.string_at(text).decode()
        finally:
            lib.xjit_string_free(text)

    def __del__(self):
        if getattr(self, "_handle", None) and _lib is not None:
            _lib.xjit_executable_free(self._handle)
            self._handle = None

    def _argument_buffers(self, args):
        """Each parameter's bytes (numpy arrays that must outlive the run)."""
        if len(args) != len(self.parameters):
            raise TypeError(f"the module takes {len(self.parameters)} arguments, got {len(args)}")
        buffers = []
        for i, (value, leaves) in enumerate(zip(args, self.parameters)):
            values = _flatten(value) if len(leaves) > 1 else [value]
            if len(values) != len(leaves):
                raise ValueError(f"argument {i}: expected {len(leaves)} arrays (a tuple "
                                 f"parameter), got {len(values)}")
            parts = [leaf.to_bytes(v, f"argument {i}", self.allow_downcast)
                     for leaf, v in zip(leaves, values)]
            # A tuple parameter's leaves lie one after another in one buffer.
            buffers.append(np.concatenate([p.reshape(-1).view(np.uint8) for p in parts])
                           if len(parts) > 1 else parts[0])
        return buffers

    def _result_buffers(self, out):
        """(arrays xjit fills, the value to return after the run)."""
        for k, leaf in enumerate(self.results):  # Before running: no wasted run.
            if leaf.unavailable:
                raise NotImplementedError(f"result {k}: {leaf.unavailable}")
        if out is None:
            outputs = [leaf.empty_physical() for leaf in self.results]

            def finish():
                values = [leaf.logical(o) for leaf, o in zip(self.results, outputs)]
                return tuple(values) if self.result_is_tuple else values[0]
            return outputs, finish
        # Caller-provided arrays: one per result leaf (a tuple or list for a
        # tuple result), of the leaf's dtype and shape. A C-contiguous array
        # of a row-major leaf is written in place; any other is filled from
        # a scratch buffer after the run.
        targets = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(targets) != len(self.results):
            raise ValueError(f"out: expected {len(self.results)} arrays, got {len(targets)}")
        outputs, copies = [], []
        for k, (leaf, target) in enumerate(zip(self.results, targets)):
            if leaf.dtype is None:  # A token leaf: nothing to write.
                outputs.append(np.empty(0, np.uint8))
                continue
            if not isinstance(target, np.ndarray):
                raise TypeError(f"out[{k}]: expected a numpy array, got {type(target).__name__}")
            if target.dtype != leaf.dtype or target.shape != leaf.dims:
                raise ValueError(f"out[{k}]: expected {leaf.dtype}{list(leaf.dims)} "
                                 f"({leaf.text}), got {target.dtype}{list(target.shape)}")
            if not target.flags.writeable:
                raise ValueError(f"out[{k}]: the array is read-only")
            if leaf.direct(target):
                outputs.append(target)
            else:
                scratch = leaf.empty_physical()
                outputs.append(scratch)
                copies.append((leaf, scratch, target))

        def finish():
            for leaf, scratch, target in copies:
                np.copyto(target, leaf.logical(scratch))
            return out
        return outputs, finish

    @staticmethod
    def _table(arrays):
        """A (pointers, sizes) pair of ctypes arrays for a buffer table."""
        n = len(arrays)
        pointers = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in arrays])
        sizes = (ctypes.c_size_t * max(n, 1))(*[a.nbytes for a in arrays])
        return pointers, sizes

    def __call__(self, *args: Any, out: Optional[Results] = None) -> Results:
        """Runs the module. out: None (new arrays are returned), or an array
        (a tuple or list of arrays for a tuple result) that receives the
        results, of each result's dtype and shape; it is returned. A result
        array may be an argument array: the argument is read first."""
        lib = _library()
        buffers = self._argument_buffers(args)
        outputs, finish = self._result_buffers(out)
        arg_pointers, arg_sizes = self._table(buffers)
        result_pointers, result_sizes = self._table(outputs)
        _check(lib.xjit_execute(self._handle, arg_pointers, arg_sizes, len(buffers),
                                result_pointers, result_sizes, len(outputs)))
        return finish()

    def execute_replicated(self, replica_args: Sequence[Sequence[Any]],
                           out: Optional[Sequence[Results]] = None) -> List[Results]:
        """Runs len(replica_args) in-process replicas at once, one thread
        each (replica r gets replica_args[r], a tuple of its arguments;
        collectives meet between them: docs/replicas.md). Returns a list of
        each replica's results (as a call returns them); out: None, or a
        list with each replica's out= value. The module's replica_count must
        be 1 or the number of replicas."""
        lib = _library()
        replicas = len(replica_args)
        if replicas < 1:
            raise ValueError("execute_replicated: needs at least one replica")
        if out is not None and len(out) != replicas:
            raise ValueError(f"out: expected one entry per replica ({replicas}), got {len(out)}")
        buffers = [self._argument_buffers(tuple(a)) for a in replica_args]
        results = [self._result_buffers(None if out is None else out[r]) for r in range(replicas)]
        arg_tables = [self._table(b) for b in buffers]
        result_tables = [self._table(outputs) for outputs, _ in results]
        arg_rows = (ctypes.c_void_p * replicas)(*[ctypes.addressof(t[0]) for t in arg_tables])
        result_rows = (ctypes.c_void_p * replicas)(
            *[ctypes.addressof(t[0]) for t in result_tables])
        _check(lib.xjit_execute_replicated(
            self._handle, replicas, arg_rows, arg_tables[0][1], len(buffers[0]), result_rows,
            result_tables[0][1], len(results[0][0])))
        return [finish() for _, finish in results]

    def execute_mpi(self, communicator: "MpiCommunicator", *args: Any,
                    out: Optional[Results] = None) -> Results:
        """Runs this rank's replica over MPI (every rank of the communicator
        calls it; docs/mpi.md); arguments and out= as for a call."""
        lib = _library()
        if not isinstance(communicator, MpiCommunicator):
            raise TypeError("execute_mpi: the first argument must be an xjit.MpiCommunicator")
        buffers = self._argument_buffers(args)
        outputs, finish = self._result_buffers(out)
        arg_pointers, arg_sizes = self._table(buffers)
        result_pointers, result_sizes = self._table(outputs)
        _check(lib.xjit_execute_mpi(self._handle, communicator._live_handle(), arg_pointers,
                                    arg_sizes, len(buffers), result_pointers, result_sizes,
                                    len(outputs)))
        return finish()


class MpiCommunicator:
    """An MPI communicator for Executable.execute_mpi: rank r runs replica r.

    comm: an mpi4py communicator (its py2f() handle is used) or an integer,
    the Fortran handle of an MPI communicator (MPI_Comm_c2f). MPI must be
    initialised by the application (mpi4py does it on import). Collective:
    every rank creates it, and every rank calls close() (or leaves a `with`
    block) before MPI is finalised. timeout: seconds a collective waits for
    the other ranks before failing with DEADLINE_EXCEEDED (0: no limit).
    libxjit.so loads its MPI transport (libxjit_mpi.so) on first use: an
    Error FAILED_PRECONDITION or UNIMPLEMENTED says why when it cannot."""

    def __init__(self, comm: Any, timeout: float = 0.0) -> None:
        lib = _library()
        handle = comm.py2f() if hasattr(comm, "py2f") else int(comm)
        communicator = ctypes.c_void_p()
        _check(lib.xjit_mpi_communicator_create(handle, float(timeout),
                                                ctypes.byref(communicator)))
        self._handle = communicator

    def _live_handle(self):
        if self._handle is None:
            raise ValueError("the MpiCommunicator is closed")
        return self._handle

    @property
    def rank(self) -> int:
        return _library().xjit_mpi_communicator_rank(self._live_handle())

    @property
    def size(self) -> int:
        return _library().xjit_mpi_communicator_size(self._live_handle())

    def close(self) -> None:
        """Destroys the communicator (collective: every rank calls it)."""
        if self._handle is not None:
            _library().xjit_mpi_communicator_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> "MpiCommunicator":
        return self

    def __exit__(self, *exc):
        self.close()


# ---- Custom calls (typed FFI, docs/custom_calls.md) ----

class _FfiBuffer(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.POINTER(ctypes.c_int64)),
                ("minor_to_major", ctypes.POINTER(ctypes.c_int64)),
                ("data", ctypes.c_void_p), ("byte_size", ctypes.c_int64)]


class _FfiFrame(ctypes.Structure):
    _fields_ = [("target", ctypes.c_char_p), ("backend_config", ctypes.c_char_p),
                ("operands", ctypes.POINTER(_FfiBuffer)), ("num_operands", ctypes.c_int),
                ("results", ctypes.POINTER(_FfiBuffer)), ("num_results", ctypes.c_int)]


# The C types of xjit_ffi_handler and of the release callback: a C handler
# passed as a ctypes function pointer must have the first's signature.
FFI_HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_FfiFrame))
_FFI_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_XJIT_INTERNAL = 13  # xjit_code XJIT_INTERNAL

# Python handlers by registration id (the user_data xjit passes back): an
# entry lives until xjit releases it, i.e. while the name is registered or
# an executable compiled with it is alive. C handlers' ctypes objects are
# kept the same way.
_handlers = {}
_handlers_lock = threading.Lock()
_next_handler_id = [1]


def _ffi_array(buffer, writable):
    """A numpy view (logical index order) of one FFI buffer."""
    name = _library().xjit_element_type_name(buffer.type)
    dtype, why = _dtype_for(name.decode() if name else "?")
    if dtype is None or name.decode() in _SUB_BYTE:
        raise NotImplementedError(why or f"custom call buffers of {name.decode()} are not "
                                  "supported from Python")
    rank = buffer.rank
    dims = [buffer.dims[d] for d in range(rank)]
    minor_to_major = [buffer.minor_to_major[d] for d in range(rank)] if rank else []
    major_to_minor = list(reversed(minor_to_major))
    physical = [dims[d] for d in major_to_minor]
    count = int(np.prod(dims, dtype=np.int64))
    if count * dtype.itemsize != buffer.byte_size:
        raise NotImplementedError(f"custom call buffer {dtype}{dims}: tiled, padded or packed "
                                  "layouts are not supported from Python")
    if count == 0:
        array = np.empty(physical, dtype)
    else:
        raw = (ctypes.c_char * buffer.byte_size).from_address(buffer.data)
        array = np.frombuffer(raw, dtype).reshape(physical)
    array = array.transpose(np.argsort(major_to_minor)) if rank else array
    array.flags.writeable = writable
    return array


def _dispatch(user_data, frame_pointer):
    """The C handler of every Python custom call: runs the registered
    function on numpy views of the operands and copies its results."""
    try:
        with _handlers_lock:
            entry = _handlers.get(user_data or 0)
        if entry is None:
            raise RuntimeError("the Python handler is gone")
        function, with_config = entry[0], entry[1]
        frame = frame_pointer.contents
        operands = [_ffi_array(frame.operands[k], False) for k in range(frame.num_operands)]
        results = [_ffi_array(frame.results[k], True) for k in range(frame.num_results)]
        if with_config:
            value = function(*operands, backend_config=(frame.backend_config or b"").decode())
        else:
            value = function(*operands)
        values = list(value) if isinstance(value, (tuple, list)) else [value]
        if len(values) != len(results):
            raise ValueError(f"returned {len(values)} arrays, the custom call has "
                             f"{len(results)} results")
        for k, (target, v) in enumerate(zip(results, values)):
            v = np.asarray(v)
            if v.shape != target.shape:
                raise ValueError(f"result {k}: shape {v.shape}, expected {target.shape}")
            np.copyto(target, v, casting="same_kind")
        return None
    except BaseException as error:  # Never across the C boundary: a status.
        message = f"python custom call: {type(error).__name__}: {error}"
        return _library().xjit_status_create(_XJIT_INTERNAL, message.encode(errors="replace"))


def _release(user_data):
    with _handlers_lock:
        _handlers.pop(user_data or 0, None)


_DISPATCH = FFI_HANDLER(_dispatch)
_RELEASE = _FFI_RELEASE(_release)


def register_custom_call(name: str, handler: Callable[..., Any], user_data: Optional[int] = None,
                         backend_config: bool = False) -> None:
    """Registers `handler` process-wide as the typed FFI custom call `name`
    (custom_call_target="name"; replaces an earlier one of that name).

    handler: a Python function, called with one numpy array per operand leaf
    (read-only views, logical index order) and, with backend_config=True,
    the keyword backend_config (the custom call's text); it returns an array
    per result leaf (a tuple for several), converted as numpy's same_kind
    casting allows. An exception fails the run (Error INTERNAL naming it).
    Or a C function as a ctypes function pointer of type
    xjit.FFI_HANDLER (xjit_ffi_handler in xjit.h), called with user_data
    (an integer address or None). Handlers may run on xjit's threads, also
    several at once; Python ones hold the GIL while they run. Executables
    compiled while `name` is registered keep calling this handler after it
    is unregistered; xjit keeps it alive as long as they do."""
    lib = _library()
    with _handlers_lock:
        key = _next_handler_id[0]
        _next_handler_id[0] += 1
    if isinstance(handler, ctypes._CFuncPtr):
        if backend_config:
            raise ValueError("backend_config=True is for Python handlers")
        # The ctypes object must outlive every call; xjit releases nothing
        # of ours for a C handler (its user_data is the caller's), so it is
        # kept for the life of the process.
        with _handlers_lock:
            _handlers[key] = (handler, False)
        _check(lib.xjit_register_ffi_custom_call_with_release(
            name.encode(), ctypes.cast(handler, ctypes.c_void_p), ctypes.c_void_p(user_data),
            None))
        return
    if not callable(handler):
        raise TypeError("register_custom_call: handler must be callable or a ctypes "
                        "function pointer")
    if user_data is not None:
        raise ValueError("user_data is for C handlers; a Python handler keeps its own state")
    with _handlers_lock:
        _handlers[key] = (handler, bool(backend_config))
    try:
        _check(lib.xjit_register_ffi_custom_call_with_release(
            name.encode(), ctypes.cast(_DISPATCH, ctypes.c_void_p), ctypes.c_void_p(key),
            ctypes.cast(_RELEASE, ctypes.c_void_p)))
    except BaseException:
        with _handlers_lock:
            _handlers.pop(key, None)
        raise


def unregister_custom_call(name: str) -> None:
    """Unregisters the FFI custom call `name` (executables compiled with it
    keep it; see register_custom_call)."""
    _check(_library().xjit_unregister_ffi_custom_call(name.encode()))


def compile(hlo_text: Union[str, bytes], threads: int = 1, isa: str = "auto",
            backend: str = "jit", passes: bool = True,
            max_while_iterations: Optional[int] = None,
            allow_downcast: bool = False) -> Executable:
    """Parses, verifies and compiles an HLO module; returns an Executable.

    threads: threads for large kernels and OpenBLAS calls of this executable;
    isa: "auto", "sse4", "avx2" or "avx512"; backend: "jit" or "interpreter"
    (the reference evaluator); passes: run the pass pipeline;
    max_while_iterations: bound on one while loop's iterations (a run past it
    raises Error with code RESOURCE_EXHAUSTED), None for no bound;
    allow_downcast: accept wider floats for narrower float parameters
    (float64 arrays for f32, f32 for bf16), rounded; otherwise only exact
    conversions.
    """
    lib = _library()
    if isinstance(hlo_text, str):
        hlo_text = hlo_text.encode()
    module = ctypes.c_void_p()
    _check(lib.xjit_module_parse(hlo_text, ctypes.byref(module)))
    options = lib.xjit_compile_options_create()
    try:
        backends = {"jit": 0, "interpreter": 1}
        if backend not in backends:
            raise ValueError(f"backend must be 'jit' or 'interpreter', got {backend!r}")
        _check(lib.xjit_compile_options_set_backend(options, backends[backend]))
        _check(lib.xjit_compile_options_set_isa(options, isa.encode()))
        _check(lib.xjit_compile_options_set_threads(options, int(threads)))
        _check(lib.xjit_compile_options_set_passes(options, 1 if passes else 0))
        if max_while_iterations is not None:
            _check(lib.xjit_compile_options_set_max_while_iterations(options,
                                                                     int(max_while_iterations)))
        executable = ctypes.c_void_p()
        _check(lib.xjit_compile(module, options, ctypes.byref(executable)))
        return Executable(executable, allow_downcast=allow_downcast)
    finally:
        lib.xjit_compile_options_free(options)
        lib.xjit_module_free(module)
