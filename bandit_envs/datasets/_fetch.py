"""Where data files live, how they are downloaded, and how their checksums are verified.

The integrity policy is described in the docstring of :mod:`bandit_envs.datasets`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

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
    return Path(data_home).expanduser()


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
    """

    path: Path
    label: str
    url: str
    sha256: str | None = None
    n_rows: int | None = None
    cached: tuple[Path, ...] = ()

    def remedy(self, *, pinned: bool = False) -> str:
        """Return what the user should do about a bad file.

        ``pinned`` says that the failed check is one that ``verify="schema"`` skips (checksum,
        official row count), so that option is offered for a user-supplied file.
        """
        if self.cached:
            paths = " and ".join(str(p) for p in self.cached)
            return f"delete {paths} so that the next call downloads it again from {self.url}"
        text = f"fix it or replace it with an intact copy from {self.url}"
        if pinned:
            text += ', or pass verify="schema" to load a deliberately modified copy'
        return text

    def fail(self, problem: str, *, pinned: bool = False) -> NoReturn:
        """Raise :class:`DatasetError`: this file ``problem``, and what to do about it."""
        raise DatasetError(f"The {self.label} file {self.path} {problem}; {self.remedy(pinned=pinned)}.")

    def check_sha256(self, data: bytes) -> None:
        """Raise :class:`DatasetError` if ``data`` does not have the pinned sha256."""
        if self.sha256 is None:
            return
        actual = sha256(data)
        if actual != self.sha256:
            raise DatasetError(
                f"The {self.label} file {self.path} has sha256 {actual} but the official file "
                f"has {self.sha256}, so it is corrupt, incomplete or modified; "
                f"{self.remedy(pinned=True)}."
            )


def fetch(url: str, target: Path, *, download: bool, alternative: str) -> None:
    """Make sure ``target`` exists, downloading ``url`` there with pooch if allowed.

    pooch writes to a temporary file and renames it when complete, so an interrupted download
    never leaves a partial ``target``.

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

    Raises
    ------
    DatasetError
        If the file is missing and cannot (or may not) be downloaded; the message names the URL
        and the path to save the file at.
    """
    if target.is_file():
        return
    by_hand = f"download {url} by hand and save it as {target}, or {alternative}"
    if not download:
        raise DatasetError(f"{target} is not in the cache and download=False; {by_hand}.")
    import pooch  # deferred: only downloads need it

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        pooch.retrieve(url, known_hash=None, fname=target.name, path=target.parent, progressbar=False)
    except (OSError, ValueError) as err:  # requests' network errors are OSErrors
        raise DatasetError(
            f"Could not download {url} ({type(err).__name__}: {err}); without network access, {by_hand}."
        ) from err
    if not target.is_file():
        raise DatasetError(f"Downloading {url} did not produce {target}; {by_hand}.")
