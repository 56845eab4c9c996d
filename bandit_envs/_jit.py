"""``njit``: :func:`numba.njit` with the on-disk cache where it can be used, without it elsewhere.

``numba.njit(cache=True)`` needs a folder for its cache files. numba looks for one in order:
``$NUMBA_CACHE_DIR``, the ``__pycache__`` folder beside the source file, then the user's cache
folder (``~/.cache/numba``); for a package inside a zip archive only the last. When none can be
written (a read-only install run by a user without a writable home, a container with a
read-only file system), numba raises at decoration time, so the import fails, or, for a zip
archive, at the first call. Every compiled function of ``bandit_envs`` and ``agents`` is decorated
with :func:`njit` instead: it asks numba which folder it would use for the function's source
file (numba's own search, so ``NUMBA_CACHE_DIR`` is respected), checks that a file can be created
there, and compiles with ``cache=True`` only then. Otherwise the function is compiled in each
process that calls it (slower start-up, same results). No shared temporary folder is used as a
fallback: numba's cache files are pickles, and loading pickles that another user could write
would let that user run code in this process.

The check runs once per source file, when its first function is decorated.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar, overload

import numba

F = TypeVar("F", bound=Callable[..., Any])


#: Per source file, the folder numba caches its functions in, or None if none can be written.
_FOLDERS: dict[str, str | None] = {}


def _cache_folder(probe: Callable[..., Any]) -> str | None:
    """The folder numba would cache ``probe`` in, if one can be written; else None."""
    try:
        from numba.core.caching import FunctionCache

        folder = FunctionCache(probe).cache_path  # numba's own search for a cache location
    except Exception:  # noqa: BLE001 - "no locator available" (RuntimeError), or numba's internals changed
        return None
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return None
    return str(folder)


def can_cache(func: Callable[..., Any]) -> bool:
    """Whether numba's on-disk cache can be used for the functions of ``func``'s source file.

    Parameters
    ----------
    func : callable
        A plain Python function (not yet compiled).

    Returns
    -------
    bool
        True if numba finds a cache folder for the file and a file can be created in it.
    """
    try:
        source = inspect.getfile(func)
    except TypeError:
        return False
    if source not in _FOLDERS:
        _FOLDERS[source] = _cache_folder(func)
    return _FOLDERS[source] is not None


@overload
def njit(func: F, /) -> F: ...


@overload
def njit(func: None = None, /, **options: Any) -> Callable[[F], F]: ...


def njit(func: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
    """Compile ``func`` with :func:`numba.njit`, caching it on disk where possible.

    Use as ``@njit`` or ``@njit(option=value, ...)`` with any option of :func:`numba.njit` but
    ``cache``, which this decorator decides (see the module docstring).

    Parameters
    ----------
    func : callable, optional
        The function, when used as ``@njit`` without options.
    **options
        Options for :func:`numba.njit`, e.g. ``inline="always"``, ``parallel=True``.

    Returns
    -------
    numba dispatcher, or a decorator that returns one
        The compiled function.

    Raises
    ------
    TypeError
        If ``cache`` is given.
    """
    if "cache" in options:
        raise TypeError(
            f"njit decides cache itself (True where a cache folder can be written), got cache={options['cache']!r}."
        )

    def decorate(function: F) -> F:
        compiled: F = numba.njit(cache=can_cache(function), **options)(function)
        return compiled

    return decorate if func is None else decorate(func)
