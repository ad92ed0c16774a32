"""The kernels, compiled with numba when it is installed, else as plain Python.

``backend(pure=False)`` gives a ``Backend``: the kernel functions and how to make the
arrays they work on. The compiled one is built on first use, never at import: importing
numba and compiling take seconds, which belong in a bot's worker thread, not in the
import of a server module. ``compiled_backend(wait=False)`` starts that work in a
background thread and answers None until it is done, so a bot can play its first moves
with the pure kernels instead of overrunning its clock.

When numba can cache (``cache=True``: in ``NUMBA_CACHE_DIR`` when set, else next to the
source, or in its user cache, ``~/.cache/numba``, where site-packages is read-only), the
compiling itself happens in a child process that fills the cache, and this process only
loads the result: some 15 s the first time on an idle core, 2 s from the cache. Bot
servers wait for it before they say they are ready (``SearchBot.warm_up``);
``python -m bot.bots.search`` does it alone (``make`` runs it after installing).

The pure fallback is the same source run by CPython on lists (faster to index than numpy
arrays there). ``HTTTX_SEARCH_PURE=1`` in the environment forces it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from bot.bots.search import kernels as pure_kernels
from bot.bots.search.layout import MAXM, MAXPLY, TT_BITS_COMPILED, TT_BITS_PURE

log = logging.getLogger(__name__)

_CACHE = os.environ.get("HTTTX_SEARCH_CACHE", "1") != "0"

KERNEL_NAMES = (
    "axis_step",
    "_set_add",
    "_set_remove",
    "place",
    "unplace",
    "evaluate",
    "cell_score",
    "top_cells",
    "gen_blocks",
    "gen_pairs",
    "order_moves",
    "out_of_time",
    "tt_slot",
    "negamax",
    "search_root",
    "threat_move",
)


@dataclass(frozen=True)
class Backend:
    """Kernel functions and array makers of one implementation."""

    name: str  # "numba" or "python"
    module: ModuleType

    @property
    def compiled(self) -> bool:
        return self.name == "numba"

    def array(self, values: Sequence[int]) -> Any:
        if self.compiled:
            import numpy as np

            return np.array(values, dtype=np.int64)
        return list(values)

    def zeros(self, size: int) -> Any:
        if self.compiled:
            import numpy as np

            return np.zeros(size, dtype=np.int64)
        return [0] * size

    def table(self) -> Any:
        """An empty transposition table."""
        return self.zeros(4 << (TT_BITS_COMPILED if self.compiled else TT_BITS_PURE))

    def move_buffers(self) -> tuple[Any, Any]:
        return self.zeros(MAXM * MAXPLY), self.zeros(MAXM * MAXPLY)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        function: Callable[..., Any] = getattr(self.module, name)
        return function


PURE = Backend("python", pure_kernels)

_lock = threading.Lock()
_compiled: Backend | None = None
_failed = False
_worker: threading.Thread | None = None


def numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def pure_forced() -> bool:
    return os.environ.get("HTTTX_SEARCH_PURE", "") not in ("", "0")


def _compile_elsewhere() -> None:
    """Compile into numba's on-disk cache in a child process, so that the compiler (C++
    that holds the GIL for long stretches) never stalls this process's event loop; the
    caller then loads the machine code from the cache in a fraction of a second."""
    if not _CACHE or os.environ.get("HTTTX_SEARCH_CHILD"):
        return
    env = {**os.environ, "HTTTX_SEARCH_CHILD": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    code = "from bot.bots.search.backend import _build; _build()"
    try:
        subprocess.run([sys.executable, "-c", code], env=env, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError):
        log.warning("compiling the search kernels in a child process failed", exc_info=True)


def _build() -> Backend | None:
    """Load a second copy of the kernels module, jit its functions in place and compile
    them with a first call on a tiny board (cache=True: numba keeps the machine code on
    disk, next to the source or in its user cache if that is read-only)."""
    global _compiled, _failed
    child = bool(os.environ.get("HTTTX_SEARCH_CHILD"))
    started = time.monotonic()
    if not child:
        log.info(
            "search kernels: compiling them with numba, or loading them from its disk "
            "cache (a compile, after an install or a change to the kernels, takes ~15 s)"
        )
    try:
        _compile_elsewhere()
        import numba

        spec = importlib.util.spec_from_file_location(
            "bot.bots.search._kernels_numba", pure_kernels.__file__
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # numba links a recursive function through its module: it must be importable.
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        for name in KERNEL_NAMES:
            function = _never if name == "out_of_time" else getattr(module, name)
            try:
                jitted = numba.njit(cache=_CACHE, nogil=True)(function)
            except RuntimeError:  # "no locator available": nowhere to write a cache
                jitted = numba.njit(cache=False, nogil=True)(function)
            setattr(module, name, jitted)
        built = Backend("numba", module)
        _warm_up(built)
    except Exception:  # a broken numba install: play on with the pure kernels
        log.exception("compiling the search kernels failed; using the pure-Python ones")
        with _lock:
            _failed = True
        return None
    with _lock:
        _compiled = built
    if not child:
        cache = getattr(getattr(module.search_root, "_cache", None), "_cache_path", None)
        log.info(
            "search kernels: ready (numba) in %.1f s; disk cache: %s",
            time.monotonic() - started,
            cache or "none",
        )
    return built


def _never(mem: Any) -> bool:
    """The compiled kernels' ``out_of_time``: numba compiles no clock."""
    return False


def _warm_up(built: Backend) -> None:
    """Compile (or load from the cache) every kernel the engine calls, for the argument
    types it calls them with."""
    from bot.bots.search.layout import BUDGET, INF, empty_mem

    mem = built.array(empty_mem(6, 2))
    mem[BUDGET] = 10_000
    mv, ms = built.move_buffers()
    tt = built.zeros(4 << 4)
    built.place(mem, 64 * 128 + 64, 0)
    built.search_root(mem, tt, mv, ms, 2)
    built.threat_move(mem, mv, ms, 0, 1)
    n = built.gen_pairs(mem, mv, 0, 1, 14)
    built.order_moves(mem, mv, ms, 0, n, -1)
    built.place(mem, 64 * 128 + 65, 0)
    built.place(mem, 64 * 128 + 66, 0)
    built.place(mem, 64 * 128 + 67, 0)
    built.gen_blocks(mem, mv, 0, 1, 6)
    built.negamax(mem, tt, mv, ms, 1, -INF, INF, 1)
    built.unplace(mem, 64 * 128 + 67, 0)


def compiled_backend(*, wait: bool = True) -> Backend | None:
    """The numba backend, None if numba is missing or failed (or, with ``wait=False``,
    still compiling: the compilation then runs on in a background thread)."""
    global _worker
    if pure_forced() or not numba_available():
        return None
    with _lock:
        if _compiled is not None or _failed:
            return _compiled
        if _worker is None:
            _worker = threading.Thread(target=_build, name="search-kernels-jit", daemon=True)
            _worker.start()
        worker = _worker
    if not wait:
        return None
    worker.join()
    return _compiled


def backend(*, pure: bool = False, wait: bool = True) -> Backend:
    """The fastest kernels available (``pure``: the Python ones)."""
    if pure:
        return PURE
    return compiled_backend(wait=wait) or PURE
