"""Turn an env's ``data`` argument into a table: None, a dataset name, a path, or a table.

Used by the budget and the recommendation envs alike.

Loaded tables are kept (a few, least recently used first out), so every env over the same named
dataset or path shares one table object, and through it one cached scenario. A kept table is
keyed on the file it was read from as it is on disk (path, size, modification time in
nanoseconds, inode), so a file replaced or edited since is read, and verified, again; a named
dataset is also keyed on the cache folder (``$BANDIT_ENVS_DATA``) in force at the call.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from bandit_envs.datasets import (
    MOVIELENS,
    NYC_BBOX,
    CheckIns,
    Ratings,
    get_data_home,
    load_gowalla,
    load_movielens,
    synthetic_gowalla,
    synthetic_movielens,
)
from bandit_envs.datasets import gowalla as _gowalla
from bandit_envs.datasets import movielens as _movielens
from bandit_envs.validation import summarize

T = TypeVar("T")

#: Other names of MovieLens datasets.
MOVIELENS_ALIASES = {"movielens-latest-small": "ml-latest-small"}
#: Dataset names accepted by the MovieLens env (any MovieLens loader name, and the aliases).
MOVIELENS_NAMES: tuple[str, ...] = (*MOVIELENS, *MOVIELENS_ALIASES)
#: Dataset names accepted by the Gowalla env: the whole SNAP file, or its New York City rows.
GOWALLA_NAMES: tuple[str, ...] = ("gowalla", "gowalla-nyc")
#: Seed of the synthetic dataset used when ``data`` is None (the env's instance_seed picks the user).
SYNTHETIC_SEED = 0

# Which loader spec reads a user-supplied ratings file, by file name.
_RATINGS_FILES = {"ratings.csv": "ml-latest-small", "u.data": "ml-100k", "ratings.dat": "ml-10m"}


@dataclass(frozen=True)
class _DataArgument(Generic[T]):
    """How an env's ``data`` argument resolves to the table of one dataset (MovieLens or Gowalla).

    ``data`` is the table itself (returned as is), None (the synthetic table), one of ``names``
    (``named`` loads that dataset from the cache folder), or the path of a file or folder that
    exists (``from_path`` reads it, given the resolved path); anything else is refused with one
    sentence naming what is allowed.
    """

    table: type[T]
    names: tuple[str, ...]
    synthetic: Callable[[], T]
    named: Callable[[str], T]
    from_path: Callable[[Path], T]
    #: What the files at a path hold, for the refusal: e.g. ``"MovieLens ratings"``.
    files: str

    def resolve(self, data: Any) -> T:
        """The table ``data`` stands for (see the class docstring)."""
        if isinstance(data, self.table):
            return data
        if data is None:
            return self.synthetic()
        kind = self.table.__name__
        if isinstance(data, str | os.PathLike):
            if isinstance(data, str) and data in self.names:
                return self.named(data)
            if os.fspath(data) in ("", b""):  # Path("") is the current folder, which the user did not name
                raise ValueError(
                    f"data must be None, a {kind} table, one of {list(self.names)} or the path of a "
                    f"{self.files} file or folder, got an empty path ''."
                )
            path = Path(data).expanduser()
            if path.exists():
                return self.from_path(path.resolve())
            raise ValueError(
                f"data must be None, a {kind} table, one of {list(self.names)} or the path of a "
                f"{self.files} file or folder, got {summarize(data)} (no such dataset name or path)."
            )
        raise TypeError(f"data must be None, a {kind} table, a dataset name or a path, got {type(data).__name__}.")


def ratings_from(data: Any) -> Ratings:
    """Resolve the MovieLens env's ``data`` argument (see the env docstring)."""
    return _MOVIELENS_DATA.resolve(data)


def checkins_from(data: Any) -> CheckIns:
    """Resolve the Gowalla env's ``data`` argument (see the env docstring)."""
    return _GOWALLA_DATA.resolve(data)


def _movielens_named(data: str) -> Ratings:
    """A MovieLens dataset name (or alias), loaded from the cache folder."""
    name = MOVIELENS_ALIASES.get(data, data)
    home = get_data_home()
    return _named_ratings(name, str(home), _signature(_movielens.cache_path(name, home)))


def _movielens_path(resolved: Path) -> Ratings:
    """A MovieLens ratings file, or a folder holding one, keyed on the files it may read."""
    inside = [resolved / f for f in _RATINGS_FILES] if resolved.is_dir() else [resolved]
    return _ratings_file(str(resolved), tuple(_signature(p) for p in inside))


def _gowalla_named(data: str) -> CheckIns:
    """``"gowalla"`` or ``"gowalla-nyc"``, loaded from the cache folder."""
    home = get_data_home()
    return _named_checkins(data, str(home), _signature(_gowalla.cache_path(home)))


def _gowalla_path(resolved: Path) -> CheckIns:
    """A SNAP check-in file, or a folder holding the official one, keyed on the file it reads."""
    read = resolved / _gowalla.GOWALLA_FILE if resolved.is_dir() else resolved
    return _checkins_file(str(resolved), _signature(read))


@functools.lru_cache(maxsize=1)
def _synthetic_ratings() -> Ratings:
    return synthetic_movielens(seed=SYNTHETIC_SEED)


@functools.lru_cache(maxsize=1)
def _synthetic_checkins() -> CheckIns:
    return synthetic_gowalla(seed=SYNTHETIC_SEED)


def _signature(path: Path) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) of ``path``, or None if it is not a file: a kept table's key."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino) if path.is_file() else None


# The signature arguments below only key the caches: a changed file is a new key, so it is read
# (and verified) again.


@functools.lru_cache(maxsize=4)
def _named_ratings(name: str, home: str, signature: tuple[int, int, int] | None) -> Ratings:
    return load_movielens(name, data_home=home)


@functools.lru_cache(maxsize=4)
def _ratings_file(path: str, signature: tuple[tuple[int, int, int] | None, ...]) -> Ratings:
    p = Path(path)
    names = [p.name] if p.is_file() else [f for f in _RATINGS_FILES if (p / f).is_file()]
    if not names or names[0] not in _RATINGS_FILES:
        raise ValueError(
            f"data={summarize(path)} must be a MovieLens ratings file named one of {list(_RATINGS_FILES)} "
            "or a folder holding one."
        )
    spec = _RATINGS_FILES[names[0]]
    if spec == "ml-10m" and "ml-1m" in str(p).lower():
        spec = "ml-1m"
    return load_movielens(spec, path=p)


@functools.lru_cache(maxsize=2)
def _named_checkins(name: str, home: str, signature: tuple[int, int, int] | None) -> CheckIns:
    return load_gowalla(data_home=home, bbox=NYC_BBOX if name == "gowalla-nyc" else None)


@functools.lru_cache(maxsize=2)
def _checkins_file(path: str, signature: tuple[int, int, int] | None) -> CheckIns:
    return load_gowalla(path=path)


_MOVIELENS_DATA = _DataArgument(
    Ratings, MOVIELENS_NAMES, _synthetic_ratings, _movielens_named, _movielens_path, "MovieLens ratings"
)
_GOWALLA_DATA = _DataArgument(
    CheckIns, GOWALLA_NAMES, _synthetic_checkins, _gowalla_named, _gowalla_path, "SNAP check-in"
)

_SCENARIOS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()


def shared_scenario(table: Ratings | CheckIns, key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """The scenario built by ``build`` for ``table`` and ``key``, built once while the table lives.

    The cache holds the table weakly, so a scenario must not keep a reference to ``table`` itself.
    """
    per_table = _SCENARIOS.setdefault(table, {})
    if key not in per_table:
        per_table[key] = build()
    return per_table[key]
