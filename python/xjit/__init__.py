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
when a module first needs it, so `import xjit` needs only numpy.
`xjit.jax.jit` (python/xjit/jax.py) runs JAX functions through xjit.

libxjit.so is found through $XJIT_LIBRARY (a path), else next to this package
as meson built or installed it, else the system's library path.
"""

import ctypes
import ctypes.util
import os
import threading

import numpy as np

__all__ = ["Error", "Executable", "compile", "library_path", "version"]


def version():
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

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def library_path():
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
# arrays, with the same bits. The sub-byte integers (s1/s2/s4, u1/u2/u4)
# are left out: ml_dtypes keeps only the low bits of a negative s4 where
# xjit's one-element-per-byte arrays keep the whole int8.
_ML_DTYPE_NAMES = {
    "bf16": "bfloat16",
    "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3", "f8e4m3fn": "float8_e4m3fn",
    "f8e3m4": "float8_e3m4", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
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
                  ", ".join(list(_DTYPES) + list(_ML_DTYPE_NAMES)))


def _is_float(dtype):
    """numpy's floats and complexes, and ml_dtypes' floats (numpy kind 'V')."""
    if dtype.kind in "fc":
        return True
    ml_dtypes = _ml_dtypes() if dtype.kind == "V" else None
    return ml_dtypes is not None and any(
        dtype == getattr(ml_dtypes, name, None) for name in _ML_DTYPE_NAMES.values())


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
        width = (self.dtype.itemsize if self.dtype is not None
                 else lib.xjit_element_type_byte_width(element_type))
        if self.byte_size != int(np.prod(self.dims, dtype=np.int64)) * width:
            raise NotImplementedError(f"xjit (python): {self.text}: layouts with tiles, padding "
                                      "or packed elements are not supported")

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
        if array.dtype != self.dtype:
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
        return np.asarray(array, order="C")

    def empty_physical(self):
        """A new array for this leaf's physical bytes, for xjit_execute to fill."""
        if self.dtype is None:  # A token (unavailable leaves never get here).
            return np.empty(0, np.uint8)
        return np.empty(self.physical_dims, self.dtype)

    def logical(self, physical):
        """The logical array (C order) of this leaf from empty_physical()'s
        array, filled: that array itself for a row-major layout."""
        if self.dtype is None:
            return None
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

    def describe(self):
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

    def __call__(self, *args):
        lib = _library()
        if len(args) != len(self.parameters):
            raise TypeError(f"the module takes {len(self.parameters)} arguments, got {len(args)}")
        for k, leaf in enumerate(self.results):  # Before running: no wasted run.
            if leaf.unavailable:
                raise NotImplementedError(f"result {k}: {leaf.unavailable}")
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
        outputs = [leaf.empty_physical() for leaf in self.results]
        n_args, n_results = len(buffers), len(outputs)
        arg_pointers = (ctypes.c_void_p * max(n_args, 1))(*[b.ctypes.data for b in buffers])
        arg_sizes = (ctypes.c_size_t * max(n_args, 1))(*[b.nbytes for b in buffers])
        result_pointers = (ctypes.c_void_p * max(n_results, 1))(*[o.ctypes.data for o in outputs])
        result_sizes = (ctypes.c_size_t * max(n_results, 1))(*[o.nbytes for o in outputs])
        _check(lib.xjit_execute(self._handle, arg_pointers, arg_sizes, n_args, result_pointers,
                                result_sizes, n_results))
        values = [leaf.logical(o) for leaf, o in zip(self.results, outputs)]
        return tuple(values) if self.result_is_tuple else values[0]


def compile(hlo_text, threads=1, isa="auto", backend="jit", passes=True,
            max_while_iterations=None, allow_downcast=False):
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
