"""Where data files live, how they are downloaded, and how their checksums are verified.

The integrity policy is described in the docstring of :mod:`bandit_envs.datasets`.

A file enters the cache in three steps: it is written (downloaded by pooch, or extracted from an
archive) inside a private staging folder ``.incomplete-*`` next to its official name, it is
verified there, and only then is it renamed to its official name with :func:`os.replace`, which
is atomic on one file system. So a process killed midway, or a file that fails its checks,
never leaves anything under an official name; the loaders look only at official names, so a
staging folder never counts as data. A process holds a lock (:class:`filelock.FileLock`) on the
file ``.lock`` of its staging folder while it works, and once it holds it writes its process id
to ``.owner``; the operating system releases the lock when the process dies, so the next download
or extraction in that folder removes the staging folders whose lock is free and that have an
``.owner`` (runs that died). A folder without ``.owner`` may belong to a run that has made it but
not locked it yet: it is removed only once it is an hour old.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import numpy as np

from bandit_envs.validation import shorten, summarize

T = TypeVar("T")

DATA_ENV_VAR = "BANDIT_ENVS_DATA"


class DatasetError(ValueError):
    """A data file is missing, cannot be downloaded, or is corrupt or incomplete."""


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the cache directory for downloaded datasets.

    Parameters
    ----------
    data_home : path-like or None
        Explicit directory. If None, ``$BANDIT_ENVS_DATA`` is used when set, else
        ``~/.cache/bandit_envs``.

    Returns
    -------
    pathlib.Path
        The directory (not created by this function).
    """
    if data_home is None:
        data_home = os.environ.get(DATA_ENV_VAR) or Path("~/.cache/bandit_envs")
    return check_path("data_home", data_home).expanduser()


def check_path(name: str, value: object) -> Path:
    """``value`` as a :class:`pathlib.Path` if it is a path (a ``str`` or an ``os.PathLike`` of a ``str``).

    Raises
    ------
    TypeError
        One sentence naming the argument ``name`` and what was given, instead of pathlib's.
    """
    path = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(path, str):
        raise TypeError(
            f"{name} must be a path (a str or an os.PathLike such as pathlib.Path), got {summarize(value)} "
            f"({type(value).__name__})."
        )
    return Path(path)


def check_download(download: object) -> bool:
    """``download`` as a ``bool``: True or False (a numpy bool too), never a value Python would take for one.

    Raises
    ------
    TypeError
        One sentence for anything else (``"yes"``, ``1``, None, ...), which would otherwise
        decide by its truth value whether the network is used.
    """
    if not isinstance(download, bool | np.bool_):
        raise TypeError(f"download must be True or False, got {summarize(download)} ({type(download).__name__}).")
    return bool(download)


#: Characters of a download error that a message quotes (a network error's text nests its causes).
_ERROR_SHOWN = 100


#: errno values of a download that reached the machine but could not be written (not a network
#: failure): a full disk, a disk quota, a file-size limit.
_LOCAL_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _error_text(err: BaseException) -> str:
    """``"ConnectionError: ..."``: the error's type and its text on one line, cut to :data:`_ERROR_SHOWN` characters."""
    return f"{type(err).__name__}: {shorten(' '.join(str(err).split()), _ERROR_SHOWN)}"


def sha256(data: bytes) -> str:
    """Return the hex sha256 digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class DataFile:
    """A file to load, where it came from, and what it is checked against.

    Parameters
    ----------
    path : pathlib.Path
        The file on disk.
    label : str
        What the file is, for messages, e.g. ``"MovieLens ml-100k ratings"``.
    url : str
        The official download URL of the dataset.
    sha256 : str or None
        The pinned sha256 of the file, or None if it is not checked.
    n_rows : int or None
        The number of data rows of the official file, or None if it is not checked.
    cached : tuple of pathlib.Path
        For a file from the cache, the cached copies to delete so that the next call downloads
        them again; empty for a file supplied by the user.
    staged_for : pathlib.Path or None
        For a file still in a staging folder, the official path it gets once verified; messages
        name that path and say where the file came from (``origin``) and that it was not kept.
    origin : str
        Where a staged file came from, e.g. ``"extracted from /cache/ml-100k.zip"``.
    loader : str
        For a file supplied by the user, the call that loads it with ``verify="schema"``, e.g.
        ``'load_movielens("ml-100k", path=..., verify="schema")'``: the remedy of a failed check
        that ``verify="schema"`` skips, followable whether the file was given to the loader or as
        an env's ``data=`` (an env takes the loaded table as ``data=``).
    """

    path: Path
    label: str
    url: str
    sha256: str | None = None
    n_rows: int | None = None
    cached: tuple[Path, ...] = ()
    staged_for: Path | None = None
    origin: str = ""
    loader: str = ""

    @property
    def shown(self) -> str:
        """The file as messages name it."""
        if self.staged_for is None:
            return str(self.path)
        return f"{self.staged_for} ({self.origin}; not kept)"

    def remedy(self, *, pinned: bool = False) -> str:
        """Return what the user should do about a bad file.

        ``pinned`` says that the failed check is one that ``verify="schema"`` skips (checksum,
        official row count), so that option is offered for a user-supplied file, as the call of
        :attr:`loader` (an env, which has no ``verify``, takes that call's table as ``data=``).
        """
        if self.staged_for is not None and not self.cached:
            return f"nothing was saved; try again later, or download {self.url} by hand and load it with path="
        if self.cached:
            paths = " and ".join(str(p) for p in self.cached)
            return f"delete {paths} so that the next call downloads it again from {self.url}"
        text = f"fix it or replace it with an intact copy from {self.url}"
        if pinned and self.loader:
            text += (
                f", or load a deliberately modified copy with bandit_envs.datasets.{self.loader} "
                "(and give an env that table as data=)"
            )
        return text

    def fail(self, problem: str, *, pinned: bool = False) -> NoReturn:
        """Raise :class:`DatasetError`: this file ``problem``, and what to do about it."""
        raise DatasetError(f"The {self.label} file {self.shown} {problem}; {self.remedy(pinned=pinned)}.")

    def check_sha256(self, data: bytes) -> None:
        """Raise :class:`DatasetError` if ``data`` does not have the pinned sha256."""
        if self.sha256 is None:
            return
        actual = sha256(data)
        if actual != self.sha256:
            raise DatasetError(
                f"The {self.label} file {self.shown} has sha256 {actual} but the official file "
                f"has {self.sha256}, so it is corrupt, incomplete or modified; "
                f"{self.remedy(pinned=True)}."
            )


#: Name prefix of the staging folders where files are written before they are verified.
STAGING_PREFIX = ".incomplete-"
#: A staging folder whose owner may still be starting (no ``.owner`` file) is removed once it is
#: this old (seconds).
_UNLOCKED_STALE_AFTER = 3600.0
_LOCK_NAME = ".lock"
_OWNER_NAME = ".owner"


def _dead_owner(stage: Path) -> bool:
    """Whether the run that made staging folder ``stage`` has died, so that the folder can go.

    Its lock must be free and it must hold an ``.owner`` file (written once the lock was taken);
    a folder without one (a run between making the folder and taking the lock, or killed there)
    counts as dead only once it is :data:`_UNLOCKED_STALE_AFTER` seconds old. The lock file is
    opened as it is (never created), and locked with the primitive that :class:`filelock.FileLock`
    uses, so that this check contends with the owner's lock.
    """
    from filelock import lock_descriptor  # deferred: only downloads and extractions need it

    try:
        fd = os.open(stage / _LOCK_NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return _old(stage)
    except OSError:
        return False
    try:
        if not lock_descriptor(fd, blocking=False):
            return False  # a live run holds it
        return (stage / _OWNER_NAME).is_file() or _old(stage)
    except OSError:  # a file system without locks: left in place
        return False
    finally:
        os.close(fd)


def _old(stage: Path) -> bool:
    try:
        return time.time() - stage.stat().st_mtime > _UNLOCKED_STALE_AFTER
    except OSError:  # it went meanwhile
        return False


def remove_stale_staging(folder: Path) -> list[Path]:
    """Remove the staging folders in ``folder`` left by killed downloads or extractions.

    A staging folder is removed only if the run that made it has died (:func:`_dead_owner`).

    Parameters
    ----------
    folder : pathlib.Path
        The cache folder to clean.

    Returns
    -------
    list of pathlib.Path
        The staging folders removed.
    """
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for stage in folder.glob(STAGING_PREFIX + "*"):
        if stage.is_dir() and not stage.is_symlink() and _dead_owner(stage):
            shutil.rmtree(stage, ignore_errors=True)
            removed.append(stage)
    return removed


@contextmanager
def staging(folder: Path) -> Iterator[Path]:
    """A private, locked staging folder inside ``folder``, removed on exit.

    Files written there are renamed into ``folder`` with :func:`publish` once verified; the
    staging folders of earlier killed runs are removed first (:func:`remove_stale_staging`).

    Parameters
    ----------
    folder : pathlib.Path
        The cache folder the files are for (created if missing).

    Yields
    ------
    pathlib.Path
        The staging folder.
    """
    from filelock import FileLock  # deferred: only downloads and extractions need it

    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(folder)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    try:
        with FileLock(stage / _LOCK_NAME):
            (stage / _OWNER_NAME).write_text(f"{os.getpid()}\n", encoding="ascii")
            yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def publish(staged: Path, target: Path) -> None:
    """Flush ``staged`` to disk and rename it to ``target`` atomically (same file system)."""
    with staged.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(staged, target)


def fetch(
    url: str,
    target: Path,
    *,
    download: bool,
    alternative: str,
    accept: Callable[[Path], T],
) -> T | None:
    """Make sure ``target`` exists, downloading ``url`` there with pooch if allowed.

    The file is downloaded into a staging folder next to ``target``, passed to ``accept``
    there, and renamed to ``target`` only if ``accept`` returns; so an interrupted download or a
    file that fails its checks never leaves anything under ``target``.

    Parameters
    ----------
    url : str
        The official URL.
    target : pathlib.Path
        Where the file is stored in the cache.
    download : bool
        Whether a missing file may be downloaded.
    alternative : str
        The other way to supply the data, completing "..., or <alternative>." in messages.
    accept : callable
        Called with the path of the downloaded file before it is kept; raises
        :class:`DatasetError` to refuse it. Its result is returned.

    Returns
    -------
    object or None
        What ``accept`` returned, or None if ``target`` was already in the cache.

    Raises
    ------
    DatasetError
        If the file is missing and cannot (or may not) be downloaded, the message naming the URL
        and the path to save the file at; or whatever ``accept`` raises.
    """
    if target.is_file():
        return None
    by_hand = f"download {url} by hand and save it as {target}, or {alternative}"
    if not download:
        raise DatasetError(f"{target} is not in the cache and download=False; {by_hand}.")
    import pooch  # deferred: only downloads need it

    try:
        with staging(target.parent) as stage:
            try:
                pooch.retrieve(url, known_hash=None, fname=target.name, path=stage, progressbar=False)
            except (OSError, ValueError) as err:  # requests' network errors are OSErrors
                if isinstance(err, OSError) and err.errno in _LOCAL_WRITE_ERRORS:  # the disk, not the network
                    raise DatasetError(
                        f"Could not save {url} as {target} while downloading it ({_error_text(err)}); free "
                        f"space there or point the data cache elsewhere, or {by_hand}."
                    ) from err
                raise DatasetError(
                    f"Could not download {url} ({_error_text(err)}); without network access, {by_hand}."
                ) from err
            staged = stage / target.name
            if not staged.is_file():
                raise DatasetError(f"Downloading {url} did not produce {target}; {by_hand}.")
            result = accept(staged)
            publish(staged, target)
    except OSError as err:
        raise DatasetError(f"Could not save {url} as {target} ({_error_text(err)}); {by_hand}.") from err
    return result
