"""How long this process spends compiling numba functions, from numba's event API.

numba broadcasts a ``"numba:compile"`` event around each compilation of a function for a new
signature; loading a function from its on-disk cache broadcasts none. Compiling a function first
compiles the functions it calls, so events nest: :class:`CompileWatch` counts the outermost ones
(their total duration is the time spent compiling) and splits that time between what later
processes load from numba's on-disk cache instead (functions compiled with ``cache=True``, and
everything compiled while compiling them) and what every process compiles again.
``numba.core.event`` is not part of numba's documented API: where it is missing or has changed,
the watch records nothing, and it never makes a compilation fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

#: Compilations shorter than this (seconds) are not worth a line of output.
NOTE_SECONDS = 0.5


def _name(dispatcher: Any) -> str:
    """``module.qualname`` of a numba dispatcher's Python function."""
    function = getattr(dispatcher, "py_func", None)
    if function is None:
        return repr(dispatcher)
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"


def _cached(dispatcher: Any) -> bool:
    """Whether numba saves this dispatcher's compilations on disk (``cache=True`` and a cache folder)."""
    cache = getattr(dispatcher, "_cache", None)
    return cache is not None and type(cache).__name__ != "NullCache"


def _saved(dispatcher: Any) -> bool:
    """Whether the dispatcher's cache index file exists (True where numba's cache internals differ).

    numba saves a compilation to its cache folder after compiling it and says nothing if that
    fails (a full disk, a quota): the index file is then missing.
    """
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except Exception:  # noqa: BLE001 - another numba: do not guess
        return True


class CompileWatch:
    """Record this process's numba compilations while in a ``with`` block.

    Processes forked inside the block inherit the listener; their compilations are not recorded.

    Parameters
    ----------
    on_first : callable, optional
        Called once, when the first outermost compilation starts, with whether that function is
        cached on disk. An exception it raises is ignored.
    on_done : callable, optional
        Called when each outermost compilation ends. An exception it raises propagates (into
        numba's caller: :func:`agents.experiments.core.backends.catch_interrupts` raises a
        signal there that numba's callbacks swallowed).

    Attributes
    ----------
    seconds : float
        Time spent compiling (outermost compilations only).
    cached_seconds : float
        The part of ``seconds`` that later processes skip: spent on functions numba caches on disk,
        or compiled while compiling one.
    names : list of str
        ``module.qualname`` of each outermost compilation, in order (a function compiled for two
        signatures appears twice).
    active : bool
        Whether the watch listens (False where numba's event API is unavailable).
    """

    def __init__(
        self, on_first: Callable[[bool], object] | None = None, on_done: Callable[[], object] | None = None
    ) -> None:
        self.on_first = on_first
        self.on_done = on_done
        self.seconds = 0.0
        self.cached_seconds = 0.0
        self.names: list[str] = []
        self.active = False
        self._stack: list[list[Any]] = []  # per open compilation: [start, time in nested ones, cached]
        self._to_save: list[Any] = []  # the outermost cached dispatchers, whose cache files should now exist
        self._event: Any = None
        self._listener: Any = None
        self._pid = 0  # the process that listens: forked children inherit the listener, and are ignored

    def __enter__(self) -> CompileWatch:
        try:
            from numba.core import event

            watch = self

            class _Listener(event.Listener):
                def on_start(self, ev: Any) -> None:
                    if os.getpid() == watch._pid:
                        watch._start(ev)

                def on_end(self, ev: Any) -> None:
                    if os.getpid() == watch._pid:
                        watch._end()

            listener = _Listener()
            event.register("numba:compile", listener)
        except Exception:  # noqa: BLE001 - no event API in this numba: record nothing
            return self
        self._event, self._listener, self.active = event, listener, True
        self._pid = os.getpid()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.active:
            try:
                self._event.unregister("numba:compile", self._listener)
            except Exception:  # noqa: BLE001 - nothing to undo if numba lost it
                pass
            self.active = False

    def _start(self, ev: Any) -> None:
        try:
            data = getattr(ev, "data", None)
            dispatcher = data.get("dispatcher") if isinstance(data, dict) else None
            cached, name = _cached(dispatcher), _name(dispatcher)
        except Exception:  # noqa: BLE001 - never make numba's compilation fail
            cached, name = False, "?"
        if not self._stack:
            self.names.append(name)
            if cached:
                self._to_save.append(dispatcher)
            if self.on_first is not None and len(self.names) == 1:
                try:
                    self.on_first(cached)
                except Exception:  # noqa: BLE001 - e.g. a closed standard error
                    pass
        # Nested in a cached function, a compilation is skipped too when a later run loads that function.
        self._stack.append([time.perf_counter(), 0.0, cached or (bool(self._stack) and self._stack[-1][2])])

    def _end(self) -> None:
        if not self._stack:
            return
        start, nested, cached = self._stack.pop()
        took = time.perf_counter() - start
        if cached:
            self.cached_seconds += max(0.0, took - nested)
        if self._stack:
            self._stack[-1][1] += took
        else:
            self.seconds += took
            if self.on_done is not None:
                self.on_done()

    def unsaved(self) -> int:
        """How many of the cached functions compiled here have no file in their cache folder."""
        return sum(not _saved(d) for d in dict.fromkeys(self._to_save))

    def message(self) -> str:
        """One sentence: the time spent compiling, and how much of it later runs skip."""
        repeated = self.seconds - self.cached_seconds
        lost = self.unsaved()
        if lost:
            later = (
                f"{lost} of the kernels meant for the disk cache could not be saved there (is its folder full?): "
                "later runs compile them again"
            )
        elif repeated < 0.05 and self.cached_seconds > 0.0:
            later = "cached: later runs skip this"
        elif self.cached_seconds < 0.05:
            later = "not cached on disk: every run compiles them"
        else:
            later = f"later runs skip the {self.cached_seconds:.1f} s cached on disk"
        return f"Compiled numba kernels in {self.seconds:.1f} s ({later})."
