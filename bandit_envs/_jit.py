"""``njit``: :func:`numba.njit` with the on-disk cache where it can be used, without it elsewhere.

``numba.njit(cache=True)`` needs a folder for its cache files. For the functions of
``bandit_envs`` and ``agents``, numba looks for one in this order: ``$NUMBA_CACHE_DIR``, then
this project's folder in the user's cache folder (:data:`CACHE_ROOT`, ``~/.cache/bandit-envs/numba``
or under ``$XDG_CACHE_HOME``, installed by :class:`PackageCacheLocator`), then numba's own
choices: the ``__pycache__`` folder beside the source file and ``~/.cache/numba``; for a package
inside a zip archive only the last. The project's folder comes before ``__pycache__``, and
:func:`njit` never takes a ``__pycache__`` inside the packages (where numba falls back when the
user's cache folder cannot be written but the install can), so that an
installed package holds no file pip did not install: ``pip uninstall`` (which a later
``pip install -e .`` runs) would leave such files behind in folders without an ``__init__.py``,
which Python then imports as empty namespace packages in place of the editable install. When none can be
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

**Stale caches.** numba marks a cached function stale only when *its own* source file changes
(its cache index keeps a stamp of that file alone), but a kernel compiles in the kernels it
calls and the constants it reads from other modules: after an edit of ``agents/common/sampling.py``
alone, the cached Thompson kernels of ``agents/central_dp/kernels.py`` would go on drawing with the
old sampler. So :func:`njit` adds to numba's stamp a fingerprint of the
sources the function's module depends on (:func:`module_fingerprint`: the module's file and,
transitively, those of the modules of this project whose names or objects it holds), and a change
in any of them makes numba compile afresh and overwrite the cache entry. Where numba's internals
differ from what this expects, numba's own stamp is kept.

**Unreadable or unwritable cache files.** numba raises when a cache file it loads is cut short
or garbled (a crash or a full disk while it was written, a stray edit), and then fails the same
way in every later run; a garbled entry whose pickle still loads fails later, in LLVM's reading of
its machine code (a Python error, or LLVM ending the process). It also raises when a cache file
cannot be written (a full disk, a file-size limit). :func:`njit` writes each entry with the sha256
of its bytes and checks it before numba reads the entry, makes an unreadable index or an entry
that fails its check count as missing, so the function is compiled afresh and its new entry
replaces the bad one, and makes a failed write leave the function compiled in memory only, as if
no cache folder could be written.

**No C-callable wrapper.** numba compiles, besides each function and the wrapper Python calls
it through, a C-callable wrapper (``cfunc``) that only a first-class function value needs (a
jitted function passed as an argument of type ``FunctionType`` or stored in a typed container).
The project never uses one, and :func:`njit` asks numba not to build it
(``no_cfunc_wrapper=True``, an option a caller may set otherwise): 4% less of a first run's
compilation (``banditlab run gap/regret-eps --quick``: 5.05 against 5.28 s of banditlab's own
process, the mean of four cold runs each, alternating).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

import numba
import numpy as np
import numpy.typing as npt

F = TypeVar("F", bound=Callable[..., Any])

#: Top-level packages whose modules :func:`module_fingerprint` follows (besides the function's own)
#: and whose functions :class:`PackageCacheLocator` caches.
PACKAGES = ("agents", "bandit_envs")

#: This project's folder in the user's cache folder. Not ``bandit_envs``: a folder of a package's
#: name without an ``__init__.py`` in the folder a script starts in (say ``XDG_CACHE_HOME=/tmp``
#: and a script run from ``/tmp``) is imported as an empty namespace package in place of an
#: editable install; a hyphen keeps the name out of Python's import system.
CACHE_APP = "bandit-envs"

#: The folders of :data:`PACKAGES` (siblings of this package's folder), with a trailing separator.
_PACKAGE_FOLDERS = tuple(str(Path(__file__).resolve().parent.parent / name) + os.sep for name in PACKAGES)


def _user_cache_root() -> str:
    """``bandit-envs/numba`` (:data:`CACHE_APP`) in the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``).

    Always an absolute path. As the XDG base directory rules say, an empty or relative
    ``$XDG_CACHE_HOME`` is ignored (``~/.cache`` is used): numba's own folder rule would take it
    as given and cache, and later load pickles, under whatever folder a run starts in, which
    other users may be able to write.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    xdg_base = os.path.join(xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache"), CACHE_APP)
    try:
        from numba.misc.appdirs import AppDirs

        base = AppDirs(appname=CACHE_APP, appauthor=False).user_cache_dir
    except Exception:  # noqa: BLE001 - numba's vendored appdirs moved: the XDG rule
        base = xdg_base
    if not os.path.isabs(base):  # e.g. an empty or relative $XDG_CACHE_HOME
        base = xdg_base
    return os.path.join(base, "numba")


#: Where the compiled kernels of :data:`PACKAGES` are cached unless ``$NUMBA_CACHE_DIR`` is set.
CACHE_ROOT = _user_cache_root()


def _install_locator() -> type | None:
    """Put :class:`PackageCacheLocator` in numba's list of cache locators, after ``$NUMBA_CACHE_DIR``'s.

    Returns the class, or None where numba's internals differ from what this expects (numba's
    own search is then used unchanged).
    """
    try:
        from numba.core import caching

        # Public names since numba 0.60; underscored before.
        names = vars(caching)
        user_wide = names.get("UserWideCacheLocator") or names["_UserWideCacheLocator"]
        user_provided = names.get("UserProvidedCacheLocator") or names["_UserProvidedCacheLocator"]
        locators = caching.CacheImpl._locator_classes
    except (ImportError, AttributeError, KeyError):
        return None

    class PackageCacheLocator(user_wide):  # type: ignore[misc, valid-type]
        """Caches a function of :data:`PACKAGES` in :data:`CACHE_ROOT`, in a folder per source folder.

        The sub-folder is numba's (the source folder's name and a hash of its path), so two
        installs (a checkout and a site-packages copy) never share entries.
        """

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(CACHE_ROOT, self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not os.path.realpath(py_file).startswith(_PACKAGE_FOLDERS):
                return None
            return super().from_function(py_func, py_file)

    if not any(getattr(c, "__name__", "") == "PackageCacheLocator" for c in locators):
        position = locators.index(user_provided) + 1 if user_provided in locators else 0
        locators.insert(position, PackageCacheLocator)
    return PackageCacheLocator


#: The installed locator class (None where numba's internals differ).
PackageCacheLocator = _install_locator()


#: Per source file, the folder numba caches its functions in, or None if none can be written.
_FOLDERS: dict[str, str | None] = {}


def _cache_folder(probe: Callable[..., Any]) -> str | None:
    """The folder numba would cache ``probe`` in, if one can be written; else None."""
    try:
        from numba.core.caching import FunctionCache

        folder = FunctionCache(probe).cache_path  # numba's own search for a cache location
    except Exception:  # noqa: BLE001 - "no locator available" (RuntimeError), or numba's internals changed
        return None
    if _inside_the_packages(str(folder)):
        return None
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return None
    return str(folder)


def _inside_the_packages(folder: str) -> bool:
    """Whether ``folder`` lies inside the folders of :data:`PACKAGES` and ``$NUMBA_CACHE_DIR`` does not name it.

    numba's ``__pycache__`` beside a source file, its choice for a function of :data:`PACKAGES`
    when :data:`CACHE_ROOT` cannot be written (an unwritable ``~/.cache``) and the install can:
    a file there is one pip did not install (see the module docstring), so such a function is not
    cached. A ``$NUMBA_CACHE_DIR`` the user set is taken wherever it is.
    """
    real = os.path.realpath(folder) + os.sep
    chosen = getattr(numba.config, "CACHE_DIR", "")  # $NUMBA_CACHE_DIR, or ""
    if chosen and real.startswith(os.path.realpath(chosen) + os.sep):
        return False
    return real.startswith(_PACKAGE_FOLDERS)


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


#: File digests by path (a module's source is read once per process).
_DIGESTS: dict[str, str] = {}
#: Direct dependencies of modules already imported when a kernel module asked (they do not change).
_IMPORTED_DEPENDENCIES: dict[tuple[str, tuple[str, ...]], set[str]] = {}


def _file_digest(path: str) -> str:
    if path not in _DIGESTS:
        _DIGESTS[path] = hashlib.blake2b(Path(path).read_bytes(), digest_size=16).hexdigest()
    return _DIGESTS[path]


def _dependencies(module: types.ModuleType, packages: tuple[str, ...]) -> set[str]:
    """Names of the modules of ``packages`` that ``module``'s globals are, or were defined in."""
    found = set()
    for value in list(vars(module).values()):
        name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and name != module.__name__ and name.split(".")[0] in packages:
            found.add(name)
    return found


def module_fingerprint(name: str, packages: tuple[str, ...] | None = None) -> str:
    """A digest of module ``name``'s source file and those of the modules it depends on.

    The dependencies are followed transitively through the modules of ``packages`` (default:
    :data:`PACKAGES` and ``name``'s own top-level package) that are already imported, which
    the modules a kernel calls into are by the time it is decorated (they are imported at the
    top of its module). A package's ``__init__`` counts by its file, without its dependencies
    (it may be half imported then, depending on what was imported first). A module without a
    source file counts by its name only.

    Parameters
    ----------
    name : str
        A module name in ``sys.modules``.
    packages : tuple of str, optional
        Top-level packages to follow.

    Returns
    -------
    str
        Hex digest; equal in two processes exactly when the same sources are involved.
    """
    follow = packages if packages is not None else tuple({*PACKAGES, name.split(".")[0]})
    digest = hashlib.blake2b(digest_size=16)
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in sys.modules:
            continue
        seen.add(current)
        if hasattr(sys.modules[current], "__path__"):  # a package: its file only (it may be half imported)
            continue
        if current == name:  # still being imported: its globals may grow
            todo.extend(_dependencies(sys.modules[current], follow))
            continue
        key = (current, follow)
        if key not in _IMPORTED_DEPENDENCIES:
            _IMPORTED_DEPENDENCIES[key] = _dependencies(sys.modules[current], follow)
        todo.extend(_IMPORTED_DEPENDENCIES[key])
    for current in sorted(seen):
        path = getattr(sys.modules[current], "__file__", None)
        digest.update(f"{current}:{_file_digest(path) if path and os.path.isfile(path) else '-'};".encode())
    return digest.hexdigest()


def _stamp_dependencies(compiled: Any, function: Callable[..., Any]) -> None:
    """Add :func:`module_fingerprint` of ``function``'s module to numba's stamp of its cache entry."""
    try:
        cache_file = compiled._cache._cache_file
        stamp = cache_file._source_stamp
    except AttributeError:  # numba's internals changed: keep its own stamp
        return
    cache_file._source_stamp = (stamp, module_fingerprint(function.__module__))


#: The first bytes of a cache entry written by :func:`njit`'s cache files, then the sha256 of the rest.
_ENTRY_MAGIC = b"bandit-envs numba entry, sha256:"
_DIGEST_SIZE = hashlib.sha256().digest_size


def _tolerant_cache_file() -> type | None:
    """The class of numba's per-function cache files, reading a bad file as missing and skipping failed writes."""
    try:
        from numba.core.caching import IndexDataCacheFile
    except ImportError:  # numba's internals changed: its own behaviour is kept
        return None

    class TolerantCacheFile(IndexDataCacheFile):
        def _save_data(self, name: str, data: Any) -> None:
            payload = self._dump(data)
            with self._open_for_write(self._data_path(name)) as out:
                out.write(_ENTRY_MAGIC + hashlib.sha256(payload).digest() + payload)

        def _load_data(self, name: str) -> Any:
            with open(self._data_path(name), "rb") as entry:
                blob = entry.read()
            head = len(_ENTRY_MAGIC) + _DIGEST_SIZE
            if (
                blob[: len(_ENTRY_MAGIC)] != _ENTRY_MAGIC
                or hashlib.sha256(blob[head:]).digest() != blob[len(_ENTRY_MAGIC) : head]
            ):
                raise ValueError("the cache entry is not as written (damaged, or of another version)")
            return pickle.loads(blob[head:])

        def _load_index(self) -> dict[Any, Any]:
            try:
                return super()._load_index()
            except Exception:  # noqa: BLE001 - cut short or garbled (any unpickling error): no entries
                return {}

        def load(self, key: Any) -> Any:
            try:
                return super().load(key)
            except Exception:  # noqa: BLE001 - the entry is unreadable: compiled afresh, then overwritten
                return None

        def save(self, key: Any, data: Any) -> None:
            try:
                super().save(key, data)
            except OSError:  # a full disk or a file-size limit: the function stays compiled in memory
                pass

    return TolerantCacheFile


_TOLERANT_CACHE_FILE = _tolerant_cache_file()


def _tolerate_bad_cache_files(compiled: Any) -> None:
    """Make ``compiled``'s cache recompile over an unreadable cache file and survive a failed write."""
    cache_file = getattr(getattr(compiled, "_cache", None), "_cache_file", None)
    if _TOLERANT_CACHE_FILE is not None and type(cache_file) in _TOLERANT_CACHE_FILE.__bases__:
        cache_file.__class__ = _TOLERANT_CACHE_FILE


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
        cache = can_cache(function)
        compiled: F = numba.njit(cache=cache, **{"no_cfunc_wrapper": True, **options})(function)
        if cache:
            _stamp_dependencies(compiled, function)
            _tolerate_bad_cache_files(compiled)
        return compiled

    return decorate if func is None else decorate(func)


def kernel_array(arr: npt.NDArray[Any], dtype: type[np.generic]) -> npt.NDArray[Any]:
    """``arr`` in the one form the compiled kernels take it: a C-contiguous, aligned, writable ``dtype`` array.

    numba compiles a kernel once for every combination of its array arguments' dtypes, layouts
    (C-contiguous or any) and writability, so a strided view or a read-only array where the
    kernel had been given plain arrays cost a compilation of seconds (and one more entry in the
    cache) for the same computation: a batched ``update`` of the central-DP agents took eight
    compilations of one kernel for the eight forms of its actions and rewards. Called where the
    user's arrays (actions, rewards, observations) reach a kernel; ``arr`` itself is returned when
    it has that form already (the usual case: one check of its flags), otherwise a copy (of a
    batch of N numbers, far cheaper than a compilation). A table too large to copy is made a
    read-only view instead (:func:`read_only_view`).
    """
    if arr.dtype == dtype and arr.flags.carray:
        return arr
    return np.array(arr, dtype=dtype, order="C")


def read_only_view(arr: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A read-only view of ``arr`` (C-contiguous), for the kernels that only read it: the same type whoever owns it.

    The form of a table the compiled kernels take (see :func:`kernel_array`): a table may be the
    env's read-only one or a writable one the user made, and a kernel given each would be
    compiled twice. A view costs no copy, and the caller's array stays as writable as it was.
    """
    view = arr.view()
    view.setflags(write=False)
    return view


def entry_point(kernel: Any, signature: tuple[Any, ...]) -> Callable[..., Any]:
    """``kernel`` compiled for the argument types ``signature``, called without numba's type dispatch.

    Calling a numba dispatcher looks up the compiled version for the numba types of its
    arguments at every call: about 0.1-0.2 us per array argument, more than a single-env step
    computes. ``Dispatcher.compile(signature)`` loads (from numba's disk cache) or compiles that
    version and returns it as a plain callable, which the agents' single-env steps call directly.
    Its callers must pass exactly these types, or arrays that unbox to them (the agents pass
    their own state arrays and values checked in Python; declare arrays they do not own with
    layout ``"A"``). Falls back to the dispatcher itself if numba returns something else.

    Parameters
    ----------
    kernel
        A numba dispatcher (a function decorated with :func:`njit`).
    signature
        The numba types of its arguments, e.g. ``(types.float64[:, ::1], types.int64)``.
    """
    try:
        entry = kernel.compile(signature)
    except Exception:  # noqa: BLE001 - numba's internals changed: the dispatcher is always right
        return kernel
    return entry if callable(entry) else kernel
