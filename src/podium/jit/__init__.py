"""How podium's kernels run: compiled by numba where the work pays for it, as Python where it does not.

Every kernel is written once, as numba-compatible Python, and decorated with :func:`kernel`.  The decorator
returns a :class:`Kernel`, which runs the function one of two ways:

- **interpreted**: the Python source itself, with the kernels it calls also interpreted, computing what the
  compiled code computes bit for bit: ``math``, numpy's ``exp`` and ``log`` families and ``**`` are replaced by
  :mod:`podium.jit.ieee`'s (C's results where Python's raises or differs, numba's integer powers), under
  ``numpy.errstate(all="ignore")`` (compiled code neither warns nor raises on overflow).  A single match costs
  tens to hundreds of microseconds this way, and nothing is compiled or imported;
- **compiled**: numba's dispatcher of the same source (cached on disk), the kernels it calls compiled with it.
  numba is imported when the first kernel is compiled, never by ``import podium``.

Which one runs (``PODIUM_JIT``; ``docs/design.md``, "Start-up"):

- ``auto`` (the default): a call inside :func:`small` (the single-match methods, a short history) is interpreted
  until its kernel has been compiled in this process; once a kernel has spent :data:`BUDGET` seconds interpreted
  (a long-lived game server), a background thread compiles it (or loads it from numba's cache) and the calls
  after that run compiled.  :func:`adaptive` (a league's history) runs interpreted pieces while the rest would
  take under two seconds, or under :data:`COLD_BUDGET` while its kernels are not in numba's cache
  (:meth:`Kernel.cached`).  Any other call (an evaluation, a fit) compiles, or loads from the cache, first;
- ``compiled``: every call compiles first (numba's behaviour);
- ``interpreted``: nothing is ever compiled (as ``NUMBA_DISABLE_JIT=1``, which also selects it).
"""

from __future__ import annotations

import ast
import dis
import functools
import math
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from . import ieee as _ieee

__all__ = ["BUDGET", "COLD_BUDGET", "SMALL", "SMALL_TEAMS", "Kernel", "adaptive", "cached", "kernel", "kernels", "mode",
           "set_mode", "small", "small_work"]

F = TypeVar("F", bound=Callable[..., Any])

SMALL = 10_000  # items a loop may run over interpreted (at about a microsecond each) rather than load its kernel
SMALL_TEAMS = 64  # teams a single match may have and run interpreted (its orderings' cost grows faster than linearly)
BUDGET = 1.0  # seconds a kernel may spend interpreted in one process before it is compiled in the background
COLD_BUDGET = 10.0  # seconds a history may take interpreted rather than compile kernels that are not in the cache
_MODES = ("auto", "compiled", "interpreted")


def _mode_from_environment() -> str:
    if os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return "interpreted"
    value = os.environ.get("PODIUM_JIT", "auto").strip().lower() or "auto"
    if value not in _MODES:
        raise ValueError(f"PODIUM_JIT must be one of {', '.join(_MODES)}. Got {value!r}.")
    return value


_mode = _mode_from_environment()
_registry: list[Kernel] = []
_lock = threading.RLock()  # guards the creation of dispatchers and of the namespaces they compile in
_local = threading.local()
_worker: threading.Thread | None = None
_queue: list[tuple[Kernel, tuple[Any, ...]]] = []
_wake = threading.Condition(_lock)


def mode() -> str:
    """How kernels run in this process: ``"auto"``, ``"compiled"`` or ``"interpreted"`` (from ``PODIUM_JIT``)."""
    return _mode


def set_mode(value: str) -> None:
    """Change how kernels run from here on (as ``PODIUM_JIT`` would have; kernels compiled stay compiled)."""
    global _mode
    if value not in _MODES:
        raise ValueError(f"'mode' must be one of {', '.join(_MODES)}. Got {value!r:.80}.")
    _mode = value


class small:  # noqa: N801  (a context manager, named as it reads: ``with small(...)``)
    """Mark the kernel calls inside as small work (interpreted unless their kernel is compiled already) when they
    handle at most :data:`SMALL` ``items`` (players, matches: whatever the loop runs over) in matches of at most
    :data:`SMALL_TEAMS` ``teams`` (the orderings' cost grows faster than linearly in the teams)."""

    __slots__ = ("_marks", "_depth")

    def __init__(self, items: int = 0, teams: int = 0) -> None:
        self._marks = items <= SMALL and teams <= SMALL_TEAMS
        self._depth = 0

    def __enter__(self) -> None:
        if self._marks:
            self._depth = getattr(_local, "small", 0)
            _local.small = self._depth + 1

    def __exit__(self, *exc: object) -> None:
        if self._marks:
            _local.small = self._depth


def small_work(method: F) -> F:
    """A method whose kernel calls are small work (:func:`small`): a single match or prediction (its first argument
    after ``self``, a :class:`podium.Match` or a list of teams), or a query that calls scalar kernels one by one."""
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        teams = getattr(args[1], "teams", args[1]) if len(args) > 1 else ()
        with small(teams=len(teams) if isinstance(teams, (list, tuple)) else 0):
            return method(*args, **kwargs)

    return call  # type: ignore[return-value]


def _namespace(module_name: str, compiled: bool) -> dict[str, Any]:
    """The globals a kernel of ``module_name`` runs in: the module's own, with every kernel in them replaced by
    its dispatcher (``compiled``) or by its interpreted function, and ``math`` by :mod:`podium.jit.ieee` (interpreted).

    Filled when first asked for and again for names added since, while the module was still being imported."""
    spaces = _compiled_spaces if compiled else _interpreted_spaces
    space = spaces.get(module_name)
    source = sys.modules[module_name].__dict__
    if space is not None and _filled[compiled, module_name] == len(source):
        return space
    with _lock:
        space = spaces.setdefault(module_name, {} if compiled else {"_ieee_power": _ieee.power})
        _filled[compiled, module_name] = len(source)
        missing = [key for key in source if key not in space]
        space.update({key: source[key] for key in missing})  # first: the kernels below may refer back to it
        for key in missing:
            value = source[key]
            if isinstance(value, Kernel):
                space[key] = value.dispatcher() if compiled else _Deferred(value, space, key)
            elif value is math and not compiled:
                space[key] = _ieee
            elif value is np and not compiled:
                space[key] = _ieee.numpy
    return space


_compiled_spaces: dict[str, dict[str, Any]] = {}
_filled: dict[tuple[bool, str], int] = {}  # how many names a module had when its namespace was filled
_interpreted_spaces: dict[str, dict[str, Any]] = {}


class _Deferred:
    """A kernel's interpreted function in another's namespace, made on its first call (most of a module's kernels
    are never called by a given match) and then put in its place there."""

    __slots__ = ("kernel", "space", "key")

    def __init__(self, kernel: Kernel, space: dict[str, Any], key: str) -> None:
        self.kernel, self.space, self.key = kernel, space, key

    def __call__(self, *args: Any) -> Any:
        function = self.kernel.interpreted
        self.space[self.key] = function
        return function(*args)


def _copy(func: Callable[..., Any], namespace: dict[str, Any]) -> Callable[..., Any]:
    """``func`` with other globals (its code, name, defaults and qualname kept, so numba's cache finds it)."""
    copy = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__)
    copy.__qualname__ = func.__qualname__
    copy.__doc__ = func.__doc__
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__annotations__ = func.__annotations__
    copy.__module__ = func.__module__
    return copy


class _Powers(ast.NodeTransformer):
    """``a ** b`` and ``a **= b`` become ``_ieee_power(a, b)`` (numba's integer powers are repeated squaring)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow):
            return node
        call = ast.Call(ast.Name("_ieee_power", ast.Load()), [node.left, node.right], [])
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow) or not isinstance(node.target, ast.Name):
            return node
        value = ast.Call(ast.Name("_ieee_power", ast.Load()), [ast.Name(node.target.id, ast.Load()), node.value], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(value, node)), node)


def _has_power(code: types.CodeType) -> bool:
    """Whether the function's bytecode raises anything to a power (``**`` or ``**=``)."""
    return any(i.opname == "BINARY_OP" and i.argrepr in ("**", "**=") for i in dis.get_instructions(code))


@functools.lru_cache(maxsize=None)
def _source_tree(filename: str) -> ast.Module | None:
    """A source file's syntax tree (parsed once for all its kernels)."""
    try:
        with open(filename, encoding="utf-8") as file:
            return ast.parse(file.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return None


def _as_numba_computes(func: Callable[..., Any], namespace: dict[str, Any]) -> Callable[..., Any]:
    """``func`` run in ``namespace``, its ``**`` as numba computes it (rewritten in its source: the same lines)."""
    code = func.__code__
    if func.__closure__ or not _has_power(code):
        return _copy(func, namespace)
    tree = _source_tree(code.co_filename)
    found = [node for node in (tree.body if tree is not None else [])
             if isinstance(node, ast.FunctionDef) and node.name == func.__name__
             and min([node.lineno] + [d.lineno for d in node.decorator_list]) == code.co_firstlineno]
    if len(found) != 1:  # (never for podium's own kernels, all defined at a module's top level)
        raise RuntimeError(f"the source of kernel {func.__qualname__} was not found in {code.co_filename}")
    definition = found[0]  # (rewritten in place: each kernel's interpreted function is made once)
    definition.decorator_list = []
    module = ast.fix_missing_locations(_Powers().visit(ast.Module([definition], [])))
    scope: dict[str, Any] = {}
    exec(compile(module, code.co_filename, "exec"), namespace, scope)  # noqa: S102  (podium's own source)
    return _copy(scope[func.__name__], namespace)


class Kernel:
    """A numba-compatible function that runs compiled or interpreted (the module docstring says when).

    Attributes
    ----------
    py_func : callable
        The function as written.
    options : dict
        The options it is compiled with (``numba.njit``'s).
    """

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = func
        self.options = options
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._interpreted: Callable[..., Any] | None = None
        self._dispatcher: Any = None
        self._ready: Any = None  # the dispatcher, once it has run in this process (then every call uses it)
        self._seconds = 0.0
        self._queued = False

    def __repr__(self) -> str:
        state = "compiled" if self._ready is not None else "interpreted"
        return f"<podium kernel {self.__module__}.{self.__qualname__} ({state})>"

    @property
    def interpreted(self) -> Callable[..., Any]:
        """The function as numba would compute it, run by Python: calling the other kernels' Python directly,
        with C's ``math`` (:mod:`podium.jit.ieee`) and ``**`` as numba compiles it."""
        if self._interpreted is None:
            self._interpreted = _as_numba_computes(self.py_func, _namespace(self.__module__, compiled=False))
        return self._interpreted

    def dispatcher(self) -> Any:
        """numba's dispatcher of the function (imports numba; compiles nothing until it is called)."""
        if self._dispatcher is None:
            with _lock:
                if self._dispatcher is None:
                    compiled = _copy(self.py_func, _namespace(self.__module__, compiled=True))
                    options = dict(self.options)
                    cache = options.pop("cache", False)
                    dispatcher = _dispatcher_class()(py_func=compiled, locals={},
                                                     targetoptions={**options, "nopython": True, "boundscheck": None})
                    if cache:
                        dispatcher.enable_caching()
                    self._dispatcher = dispatcher
        return self._dispatcher

    @property
    def compiled(self) -> bool:
        """Whether calls in this process run compiled."""
        return self._ready is not None

    def __call__(self, *args: Any) -> Any:
        ready = self._ready
        if ready is not None and _mode != "interpreted":
            return ready(*args)
        if _mode == "interpreted" or (_mode == "auto" and getattr(_local, "small", 0) > 0):
            entered = getattr(_local, "entered", None)
            if entered is not None:
                entered.add(self)
            start = time.perf_counter()
            with np.errstate(all="ignore"):
                out = self.interpreted(*args)
            if _mode == "auto":
                self._seconds += time.perf_counter() - start
                if self._seconds > BUDGET and not self._queued:
                    _enqueue(self, args)
            return out
        out = self.dispatcher()(*args)
        self._ready = self._dispatcher
        return out

    def cached(self) -> bool:
        """Whether running it compiled costs no compile: it runs compiled in this process already, or numba's disk
        cache holds a compilation of its current source (loading one takes a fraction of a second where compiling
        takes seconds to minutes).  Imports numba."""
        if self._ready is not None:
            return True
        if not self.options.get("cache"):
            return False
        try:
            return bool(self.dispatcher()._cache._cache_file._load_index())
        except Exception:  # noqa: BLE001  (numba's cache layout is its own: when unreadable, count it as not cached)
            return False

    def compile(self, *args: Any) -> None:
        """Compile (or load from numba's cache) the signature of ``args``; calls run compiled after it."""
        import numba

        dispatcher = self.dispatcher()
        dispatcher.compile(tuple(numba.typeof(a) for a in args))
        self._ready = dispatcher


@functools.lru_cache(maxsize=1)
def _dispatcher_class() -> type:
    """numba's CPU dispatcher, made to compile a kernel called from another with the arguments' plain types.

    numba compiles a callee for the types at the call site, and a constant argument there has a literal type
    (``Literal[int](0)``, ``Literal[bool](True)``): each constant passed made another whole compilation of the
    callee and of everything it calls, several times over for the ordering engine (most of the compile time).
    With the plain types every caller shares one compilation; LLVM still folds the constants where it inlines."""
    from numba.core import types
    from numba.core.registry import CPUDispatcher

    class Dispatcher(CPUDispatcher):
        def get_call_template(self, args: Any, kws: Any) -> Any:
            return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                             {k: types.unliteral(v) for k, v in kws.items()})

    return Dispatcher


def kernel(func: F | None = None, **options: Any) -> Any:
    """Register a kernel: ``@kernel`` or ``@kernel(cache=True, nogil=True)`` (``numba.njit``'s options)."""
    def wrap(f: F) -> F:
        k = Kernel(f, options)
        _registry.append(k)
        return k  # type: ignore[return-value]

    return wrap(func) if func is not None else wrap


def kernels() -> list[Kernel]:
    """Every kernel registered so far (those of the modules imported)."""
    return list(_registry)


def _enqueue(k: Kernel, args: tuple[Any, ...]) -> None:
    """Compile ``k`` for ``args``'s signature in the background thread (started on first need)."""
    global _worker
    with _lock:
        if k._queued:
            return
        k._queued = True
        _queue.append((k, args))
        if _worker is None:
            _worker = threading.Thread(target=_work, name="podium-compile", daemon=True)
            _worker.start()
        _wake.notify()


def _work() -> None:
    while True:
        with _lock:
            while not _queue:
                _wake.wait()
            k, args = _queue.pop(0)
        try:
            k.compile(*args)
        except Exception:  # noqa: BLE001  (the kernel stays interpreted; the interpreted calls keep working)
            pass


_clock = time.perf_counter  # what adaptive times its pieces by (a test gives it a clock of its own)


def cached(*entries: Kernel) -> bool:
    """Whether every one of ``entries`` runs compiled without a compile (:meth:`Kernel.cached`; imports numba)."""
    return all(k.cached() for k in entries)


def adaptive(n: int, run: Callable[[int, int], None], *, teams: int = 0, budget: float = 2.0,
             cold_budget: float | None = None) -> None:
    """Run items ``[0, n)`` as ``run(start, stop)`` calls, interpreted while that is the quicker way.

    In ``auto`` mode pieces of 1, 2, 4, ... items run as small work while the time they took, with the rest at the
    latest piece's pace, stays under ``budget`` seconds; past it the rest runs compiled, loading its kernels from
    numba's cache (a fraction of a second).  When the kernels the pieces ran are not in the cache (a fresh
    install: compiling them takes from seconds to minutes), the pieces go on interpreted up to ``cold_budget``
    seconds instead (default :data:`COLD_BUDGET`, read at the call).  Items of more than :data:`SMALL_TEAMS` ``teams`` (the most of any), and other modes: one call.
    """
    if _mode != "auto" or n == 0 or teams > SMALL_TEAMS:
        run(0, n)
        return
    cold_budget = COLD_BUDGET if cold_budget is None else cold_budget
    done, step, spent = 0, 1, 0.0
    entered: set[Kernel] = set()
    limit = budget
    while done < n:
        stop = min(n, done + step)
        began = _clock()
        outer, _local.entered = getattr(_local, "entered", None), entered
        try:
            with small():
                run(done, stop)
        finally:
            _local.entered = outer
        took = _clock() - began
        spent += took
        # the pace of the latest piece, once it is long enough for its fixed costs (the first one's also pays for
        # setting the interpreted kernels up) not to pass for the pace
        long_enough = step >= 64 or (step > 1 and took > 0.05)
        projected = spent + took / (stop - done) * (n - stop)
        if long_enough and stop < n and projected > limit:
            if limit == budget and projected <= cold_budget and not cached(*entered):
                limit = cold_budget  # a compile would cost more than the rest interpreted
            else:
                run(stop, n)
                return
        done, step = stop, 2 * step
