"""xjit.jax.jit: a drop-in for jax.jit that runs the function on xjit (CPU).

    import jax.numpy as jnp, xjit.jax
    @xjit.jax.jit
    def predict(params, x):
        return jnp.tanh(x @ params["w"] + params["b"])
    y = predict({"w": w, "b": b}, x)          # a jax.Array, computed by xjit

Contract (docs/python.md):
- The function is traced and lowered by JAX itself
  (`jax.jit(f, ..., keep_unused=True).lower(*args).as_text(dialect="hlo")`),
  so what it computes is what jax.jit computes; xjit compiles that HLO module.
- Executables are cached by the abstract signature, as jax.jit caches: the
  pytree structure of the dynamic arguments, each leaf's shape, dtype and weak
  type (after JAX's dtype canonicalisation: float64 is float32 unless
  jax_enable_x64), the static arguments' values (hashed), and jax_enable_x64.
  A call with a new signature traces and compiles again.
- Arguments are pytrees of jax.Array, numpy arrays and Python/numpy scalars,
  flattened in JAX's leaf order (jax.tree_util); each leaf is converted to the
  dtype JAX lowered for it (numpy float64 rounds to float32 as in JAX).
  bf16 and f8 arrays travel as ml_dtypes dtypes (JAX's own).
- Results are the function's output pytree with jax.Array leaves, weakly
  typed where jax.jit's are; PRNG keys as key arrays, float0 as jax.jit
  returns it (output="numpy": numpy arrays, without jax.device_put).
  Typed PRNG key arguments travel as their key data.
- donate_argnums / donate_argnames: accepted; a donated jax.Array that JAX
  aliases to an output (the module's input_output_alias) is deleted after
  the call, as jax.jit does, so code that donates behaves the same. The
  result is written to new memory: xjit does not reuse the donated buffer
  (a jax.Array's memory is not writable from Python, and it may be shared).
- Inside a JAX transformation (jax.grad, jax.vmap, an enclosing jax.jit)
  the arguments are tracers: the call is jax.jit's, so that the function
  composes with transformations as a jax.jit function does.
- Thread-safe: one wrapped function may be called from many threads; a
  signature compiles once (other callers of the same function wait for it).
- A module xjit cannot compile (a custom call it lacks, an element type
  Python cannot carry) raises xjit.Error / NotImplementedError naming it;
  with fallback=True that signature runs on jax.jit instead, with a warning.

JAX is imported when a wrapped function is first called (or lowered), never
by `import xjit` or `import xjit.jax`.
"""

import functools
import inspect
import re
import threading
import warnings

import numpy as np

from . import Error
from . import compile as _xjit_compile

__all__ = ["jit"]


def _jax():
    try:
        import jax
    except ImportError as error:
        raise ImportError("xjit.jax needs JAX (pip install jax)") from error
    if not hasattr(jax, "typeof"):  # What the cache key reads each leaf with.
        raise ImportError(f"xjit.jax needs a JAX with jax.typeof (tested with 0.10.2); "
                          f"this is JAX {jax.__version__}")
    return jax


def _index_tuple(value):
    if value is None:
        return None
    return (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)


def _name_tuple(value):
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def _argnums_and_argnames(fun, argnums, argnames):
    """The positions and names of a set of arguments, each inferred from the
    other through fun's signature where only one is given (as jax.jit does)."""
    argnums, argnames = _index_tuple(argnums), _name_tuple(argnames)
    if argnums is None and argnames is None:
        return (), ()
    if argnums is not None and argnames is not None:
        return argnums, argnames
    try:
        parameters = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):  # No signature (a builtin): nothing to infer.
        return argnums or (), argnames or ()
    by_position = [(i, p.name) for i, p in enumerate(parameters)
                   if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if argnums is None:
        return tuple(i for i, name in by_position if name in argnames), argnames
    return argnums, tuple(name for i, name in by_position if i in argnums)


def _aliased_parameters(hlo_text):
    """Entry parameters the module's input_output_alias lets an output reuse
    (the arguments jax.jit deletes when they are donated)."""
    header = hlo_text.split("\n", 1)[0]
    match = re.search(r"input_output_alias=\{(.*?)\}\s*(,\s*\w+=|$)", header)
    if not match:
        return frozenset()
    return frozenset(int(p) for p in re.findall(r"\}\s*:\s*\(\s*(\d+)", match.group(1)))


def _refuse_unregistered_custom_calls(executable):
    """Raises xjit.Error (NOT_FOUND) naming the custom calls nothing registered.

    xjit looks such a target up only when the step runs (a handler may be
    registered after compiling, docs/custom_calls.md); a JAX function's
    targets (a pure_callback's Python callback, say) never will be, so they
    are refused here, before any run, where fallback= can still take over."""
    found = re.findall(r"^library call (\S+): custom call (\S+) \(unregistered",
                       executable.describe(), re.MULTILINE)
    if found:
        raise Error("NOT_FOUND", "custom-call targets xjit has no handler for: " + ", ".join(
            f'"{target}" ({instruction})' for instruction, target in found))


def _weakly_typed(array):
    """`array` as a weakly typed jax.Array, as jax.jit returns a result computed
    from Python scalars only (so that it promotes as JAX's would). JAX has no
    public way to make one; where its internal one is missing the result stays
    strongly typed."""
    try:
        from jax._src.lax import lax as lax_internal
        return lax_internal._convert_element_type(array, weak_type=True)
    except (ImportError, AttributeError, TypeError):
        return array


# An argument leaf that is a typed PRNG key (jax.random.key): xjit takes its
# key data (jax.random.key_data), as the lowered module's parameter holds.
_KEY = object()


def _argument_dtype(jax, aval):
    """The numpy dtype an argument of abstract value `aval` converts to, or _KEY."""
    if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key):
        return _KEY
    if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.extended) or aval.dtype == jax.dtypes.float0:
        raise NotImplementedError(f"arguments of dtype {aval.dtype} are not supported")
    return np.dtype(aval.dtype)


# The key for arguments that hold tracers: the call is inside a JAX
# transformation (jax.grad, jax.vmap, an enclosing jax.jit), where the
# function must be traced, not run; jax.jit of it takes part in the trace.
_TRACED = object()


class _Compiled:
    """One signature's executable and how its flat results map to the output pytree."""

    def __init__(self, executable, out_tree, dtypes, aliased, weak, keys, float0s):
        self.executable = executable
        self.out_tree = out_tree
        self.dtypes = dtypes        # Per flat argument: the dtype JAX lowered it with (or _KEY).
        self.aliased = aliased      # Flat argument indices an output may reuse.
        self.weak = weak            # Flat results JAX types weakly (from Python scalars).
        self.keys = keys            # (flat result, key dtype): PRNG keys, as their key data.
        self.float0s = float0s      # (flat result, shape): float0 results, as pred.


class _Fallback:
    """A signature that runs on jax.jit (fallback=True after xjit refused it)."""

    def __init__(self, reason):
        self.reason = reason


class _Jitted:
    """The callable xjit.jax.jit returns (see the module's docstring)."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                 fallback, threads, isa, output):
        if not callable(fun):
            raise TypeError(f"xjit.jax.jit: expected a function, got {fun!r}")
        if output not in ("jax", "numpy"):
            raise ValueError(f"xjit.jax.jit: output must be 'jax' or 'numpy', got {output!r}")
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums, self._static_argnames = _argnums_and_argnames(
            fun, static_argnums, static_argnames)
        self._donate = dict(donate_argnums=_index_tuple(donate_argnums),
                            donate_argnames=_name_tuple(donate_argnames))
        self._fallback = fallback
        self._threads = threads
        self._isa = isa
        self._output = output
        self._lock = threading.RLock()  # Re-entered when tracing calls this function again.
        self._cache = {}
        self._jax_jitted = None

    def _jax_function(self):
        """jax.jit of the function: what lowers it, and what a fallback runs."""
        with self._lock:
            if self._jax_jitted is None:
                self._jax_jitted = _jax().jit(
                    self._fun, static_argnums=self._static_argnums,
                    static_argnames=self._static_argnames, keep_unused=True, **self._donate)
            return self._jax_jitted

    def lower(self, *args, **kwargs):
        """jax.jit(f).lower(*args, **kwargs) (keep_unused=True): what xjit compiles."""
        return self._jax_function().lower(*args, **kwargs)

    def _cache_size(self):
        """Signatures compiled so far (as jax.jit's _cache_size)."""
        with self._lock:
            return len(self._cache)

    def describe(self, *args, **kwargs):
        """What xjit compiled for these arguments' signature (Executable.describe)."""
        entry, _ = self._entry(args, kwargs)
        if entry is _TRACED:
            return "traced by an enclosing JAX transformation: jax.jit runs it"
        if isinstance(entry, _Fallback):
            return f"fallback to jax.jit: {entry.reason}"
        return entry.executable.describe()

    def _key(self, jax, args, kwargs):
        """(cache key, flat dynamic leaves, their treedef, abstract values)."""
        n = len(args)
        static_positions = set()
        for i in self._static_argnums:
            if -n <= i < n:
                static_positions.add(i % n)
        dynamic_args = tuple(a for i, a in enumerate(args) if i not in static_positions)
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static = (tuple((i, args[i]) for i in sorted(static_positions)),
                  tuple(sorted(((k, v) for k, v in kwargs.items() if k in self._static_argnames),
                               key=lambda item: item[0])))
        leaves, treedef = jax.tree_util.tree_flatten((dynamic_args, dynamic_kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return _TRACED, leaves, treedef, None
        avals = tuple(jax.typeof(leaf) for leaf in leaves)
        signature = tuple((a.shape, a.dtype, a.weak_type) for a in avals)
        key = (treedef, signature, static, bool(jax.config.jax_enable_x64))
        try:
            hash(key)
        except TypeError as error:
            raise ValueError("xjit.jax.jit: static arguments must be hashable (as for jax.jit): "
                             f"{error}") from None
        return key, leaves, treedef, avals

    def _entry(self, args, kwargs):
        jax = _jax()
        key, leaves, treedef, avals = self._key(jax, args, kwargs)
        if key is _TRACED:
            return _TRACED, leaves
        entry = self._cache.get(key)  # A dict read is atomic; a miss compiles under the lock.
        if entry is None:
            jitted = self._jax_function()
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._compile(jitted, args, kwargs, treedef, avals)
                    self._cache[key] = entry
        return entry, leaves

    def _compile(self, jitted, args, kwargs, treedef, avals):
        name = getattr(self._fun, "__qualname__", repr(self._fun))
        # Traced first, where JAX has it (one trace either way): its jaxpr
        # says which outputs are weakly typed, PRNG keys or float0, which the
        # lowered module does not (it has their key data, and pred).
        jax = _jax()
        if hasattr(jitted, "trace"):
            traced = jitted.trace(*args, **kwargs)
            lowered = traced.lower()
            out_avals = traced.jaxpr.out_avals
        else:
            lowered, out_avals = jitted.lower(*args, **kwargs), ()
        weak = tuple(k for k, aval in enumerate(out_avals) if getattr(aval, "weak_type", False))
        keys = tuple((k, aval.dtype) for k, aval in enumerate(out_avals)
                     if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key))
        float0s = tuple((k, aval.shape) for k, aval in enumerate(out_avals)
                        if aval.dtype == jax.dtypes.float0)
        if lowered.in_tree != treedef:  # Our split of static arguments differs from JAX's.
            raise NotImplementedError(
                f"xjit.jax.jit({name}): JAX lowered the arguments as {lowered.in_tree}, "
                f"xjit flattened them as {treedef}")
        text = lowered.as_text(dialect="hlo")
        try:
            dtypes = [_argument_dtype(jax, aval) for aval in avals]
            executable = _xjit_compile(text, threads=self._threads, isa=self._isa)
            if len(executable.parameters) != len(avals) or any(
                    len(p) != 1 for p in executable.parameters):
                raise NotImplementedError(
                    f"the module has {len(executable.parameters)} parameters for "
                    f"{len(avals)} argument leaves")
            _refuse_unregistered_custom_calls(executable)
        except (Error, NotImplementedError) as error:
            reason = error.message if isinstance(error, Error) else str(error)
            if self._fallback:
                warnings.warn(f"xjit.jax.jit({name}): xjit cannot run this signature, running "
                              f"it on jax.jit instead: {reason}", RuntimeWarning, stacklevel=4)
                return _Fallback(reason)
            message = (f"xjit.jax.jit({name}): xjit cannot run this function: {reason} "
                       "(pass fallback=True to run it on jax.jit instead)")
            if isinstance(error, Error):
                raise Error(error.code, message) from error
            raise NotImplementedError(message) from error
        return _Compiled(executable, lowered.out_tree, dtypes, _aliased_parameters(text), weak,
                         keys, float0s)

    def __call__(self, *args, **kwargs):
        entry, leaves = self._entry(args, kwargs)
        if entry is _TRACED or isinstance(entry, _Fallback):
            return self._jax_function()(*args, **kwargs)
        jax = _jax()
        arrays = [np.asarray(leaf, dtype=dtype) if dtype is not _KEY else
                  np.asarray(jax.random.key_data(leaf)) for leaf, dtype in zip(leaves, entry.dtypes)]
        results = entry.executable(*arrays)
        results = list(results) if entry.executable.result_is_tuple else [results]
        # JAX writes input_output_alias only for donated arguments it can
        # reuse; jax.jit deletes those after the call, and so does this.
        for i in entry.aliased:
            if i < len(leaves) and isinstance(leaves[i], jax.Array):
                leaves[i].delete()
        if self._output == "jax":
            results = jax.device_put(results)
            for k in entry.weak:
                results[k] = _weakly_typed(results[k])
        for k, dtype in entry.keys:  # A jax.Array whatever `output` says: numpy has no keys.
            results[k] = jax.random.wrap_key_data(results[k], dtype=dtype)
        for k, shape in entry.float0s:  # What jax.jit returns for them.
            results[k] = np.zeros(shape, jax.dtypes.float0)
        return jax.tree_util.tree_unflatten(entry.out_tree, results)


def jit(fun, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, keep_unused=False, fallback=False, threads=1, isa="auto",
        output="jax"):
    """jax.jit's drop-in on xjit (see the module's docstring).

    static_argnums/static_argnames, donate_argnums/donate_argnames: as jax.jit;
    keep_unused: accepted (xjit always lowers with keep_unused=True, which
    changes no result); fallback: run signatures xjit cannot compile on
    jax.jit, with a RuntimeWarning, instead of raising; threads, isa: as
    xjit.compile; output: "jax" (jax.Array leaves, the default) or "numpy".
    """
    del keep_unused
    return _Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                   fallback, threads, isa, output)
