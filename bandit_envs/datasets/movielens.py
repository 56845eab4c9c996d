"""MovieLens rating files: download, cache, verify, parse.

GroupLens distributes each dataset as a zip; only its ratings file is extracted and read.
ml-100k and ml-1m forbid redistribution, so the project never ships any of them: a user
downloads them (automatically, or by hand when offline).

References
----------
F. M. Harper and J. A. Konstan, "The MovieLens Datasets: History and Context",
ACM TiiS 5(4):19, 2015.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from bandit_envs.datasets._fetch import (
    DATA_ENV_VAR,
    DataFile,
    DatasetError,
    check_download,
    check_path,
    fetch,
    get_data_home,
    publish,
    staging,
)
from bandit_envs.datasets._parse import Kind, Layout, read_table, require
from bandit_envs.datasets._tables import Ratings
from bandit_envs.validation import check_choice, not_a_file

_BASE_URL = "https://files.grouplens.org/datasets/movielens/"


@dataclass(frozen=True)
class MovieLensSpec:
    """Facts about one official MovieLens dataset (see ``shared/data/README.md``).

    Parameters
    ----------
    url : str
        Official zip URL.
    folder : str
        Top-level folder inside the zip.
    file : str
        Ratings file inside that folder.
    layout : Layout
        Its columns, delimiter and header.
    half_stars : bool
        True if ratings are 0.5..5 in steps of 0.5, False if they are the integers 1..5.
    n_rows : int
        Number of ratings in the official file.
    sha256 : str or None
        Pinned sha256 of the ratings file, if known.
    """

    url: str
    folder: str
    file: str
    layout: Layout
    half_stars: bool
    n_rows: int
    sha256: str | None = None


def _layout(delimiter: str, rating: Kind, header: str | None = None) -> Layout:
    columns: tuple[tuple[str, Kind], ...] = (
        ("user_id", "int"),
        ("item_id", "int"),
        ("rating", rating),
        ("timestamp", "int"),
    )
    return Layout(columns, delimiter, header)


MOVIELENS: dict[str, MovieLensSpec] = {
    "ml-latest-small": MovieLensSpec(
        url=_BASE_URL + "ml-latest-small.zip",
        folder="ml-latest-small",
        file="ratings.csv",
        layout=_layout(",", "float", header="userId,movieId,rating,timestamp"),
        half_stars=True,
        n_rows=100_836,
        sha256="aa289ca83157595d0df6aea1be6a4ded676ddc4385472e8313a8ed9805352646",
    ),
    "ml-100k": MovieLensSpec(
        url=_BASE_URL + "ml-100k.zip",
        folder="ml-100k",
        file="u.data",
        layout=_layout("\t", "int"),
        half_stars=False,
        n_rows=100_000,
        sha256="06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
    ),
    "ml-1m": MovieLensSpec(
        url=_BASE_URL + "ml-1m.zip",
        folder="ml-1m",
        file="ratings.dat",
        layout=_layout("::", "int"),
        half_stars=False,
        n_rows=1_000_209,
    ),
    "ml-10m": MovieLensSpec(
        url=_BASE_URL + "ml-10m.zip",
        folder="ml-10M100K",
        file="ratings.dat",
        layout=_layout("::", "float"),
        half_stars=True,
        n_rows=10_000_054,
    ),
}
"""The supported datasets, by name."""


def load_movielens(
    name: str = "ml-latest-small",
    path: str | os.PathLike[str] | None = None,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    verify: str = "auto",
) -> Ratings:
    """Load the ratings of a MovieLens dataset.

    Parameters
    ----------
    name : {"ml-latest-small", "ml-100k", "ml-1m", "ml-10m"}
        Which dataset.
    path : path-like or None
        A ratings file supplied by the user (``ratings.csv``, ``u.data`` or ``ratings.dat``)
        or the extracted folder that holds it. If None, the cached copy is used, downloaded
        first if needed.
    data_home : path-like or None
        Cache directory; default ``$BANDIT_ENVS_DATA`` or ``~/.cache/bandit_envs``. Files go
        to ``<data_home>/movielens/<name>.zip`` and ``<data_home>/movielens/<folder>/<file>``.
    download : bool, default True
        Whether a file missing from the cache may be downloaded.
    verify : {"auto", "schema"}
        For a user-supplied file with the official file name: "auto" also checks the pinned
        sha256 (ml-latest-small, ml-100k) and the official row count; "schema" checks only the
        schema, for deliberately modified copies. Cached files always get every check.

    Returns
    -------
    Ratings
        Every rating of the file, in file order, with the source's user and movie ids.

    Raises
    ------
    ValueError
        If ``name`` or ``verify`` is not one of the allowed values.
    TypeError
        If ``download`` is not True or False.
    DatasetError
        If the file is missing and cannot be downloaded (the message gives the URL and the
        path to save it at), or if it fails a check (checksum, row count, schema, ranges).

    Examples
    --------
    >>> ratings = load_movielens("ml-latest-small")  # doctest: +SKIP
    >>> len(ratings), ratings.n_users, ratings.n_items  # doctest: +SKIP
    (100836, 610, 9724)
    """
    spec = MOVIELENS[check_choice("name", name, MOVIELENS)]
    check_choice("verify", verify, ("auto", "schema"))
    download = check_download(download)
    label = f"MovieLens {name} ratings"
    if path is None:
        return _cached_ratings(name, spec, get_data_home(data_home), label, download)
    return _read_ratings(_user_file(name, spec, check_path("path", path).expanduser().absolute(), label, verify), spec)


def cache_path(name: str, data_home: str | os.PathLike[str] | None = None) -> Path:
    """Where the ratings file of dataset ``name`` is cached (whether or not it is there yet)."""
    spec = MOVIELENS[check_choice("name", name, MOVIELENS)]
    return get_data_home(data_home) / "movielens" / spec.folder / spec.file


def _read_ratings(file: DataFile, spec: MovieLensSpec) -> Ratings:
    """Read ``file`` with every check of its :class:`DataFile` and the rating scale of ``spec``."""
    columns = read_table(file, spec.layout)
    first_line = 1 + (spec.layout.header is not None)
    for column in ("user_id", "item_id"):
        require(file, columns[column] >= 1, columns[column], f"a {column} below 1", first_line)
    rating = columns["rating"].astype(np.float64)
    if spec.half_stars:
        allowed, valid = "0.5..5 in steps of 0.5", np.isin(2 * rating, np.arange(1, 11))
    else:
        allowed, valid = "an integer 1..5", (rating >= 1) & (rating <= 5)
    require(file, valid, rating, f"a rating that is not {allowed}", first_line)
    stamp = columns["timestamp"]
    require(file, stamp >= 0, stamp, "a negative timestamp", first_line)
    return Ratings._adopt(
        user_id=columns["user_id"], item_id=columns["item_id"], rating=rating, timestamp=columns["timestamp"]
    )


def _user_file(name: str, spec: MovieLensSpec, path: Path, label: str, verify: str) -> DataFile:
    if path.is_dir():
        path = path / spec.file
    if (problem := not_a_file(path)) is not None:
        raise DatasetError(
            f"{problem}; point path= (data= of the envs, --data of banditlab) at the {spec.file} of the dataset "
            f"(or the folder holding it), extracted from {spec.url}."
        )
    official = path.name == spec.file and verify == "auto"
    return DataFile(
        path,
        label,
        spec.url,
        sha256=spec.sha256 if official else None,
        n_rows=spec.n_rows if official else None,
        loader=f'load_movielens("{name}", path=..., verify="schema")',
    )


def _cached_ratings(name: str, spec: MovieLensSpec, home: Path, label: str, download: bool) -> Ratings:
    """The ratings from the cache, extracting them from the (downloaded) archive first if needed.

    The ratings file is extracted into a staging folder and verified there before it gets its
    official name, and a downloaded archive is kept only once its ratings file passed.
    """
    archive = home / "movielens" / f"{name}.zip"
    target = cache_path(name, home)
    member = f"{spec.folder}/{spec.file}"
    if target.is_file():
        cached = DataFile(target, label, spec.url, spec.sha256, spec.n_rows, cached=(target, archive))
        return _read_ratings(cached, spec)

    def extract(zip_path: Path, cached: tuple[Path, ...]) -> Ratings:
        zipped = DataFile(zip_path, f"MovieLens {name} archive", spec.url, cached=cached)
        if not cached:  # a download still in its staging folder
            zipped = dataclasses.replace(zipped, staged_for=archive, origin=f"downloaded from {spec.url}")
        return _extract(zipped, member, target, label, spec)

    extracted = f"the extracted {spec.folder} folder or its {spec.file}"
    fresh = fetch(
        spec.url,
        archive,
        download=download,
        alternative=f"point path= (data= of the envs, --data of banditlab) at {extracted}",
        accept=lambda staged: extract(staged, ()),
    )
    return fresh if fresh is not None else extract(archive, (archive,))


class _WriteFailed(Exception):
    """Writing the extracted file failed (a full disk, a quota, a folder not writable): not the archive's fault."""

    def __init__(self, err: OSError) -> None:
        super().__init__(err)
        self.err = err


class _Sink:
    """The unbuffered file being extracted, whose failed writes are :class:`_WriteFailed`, not the archive's."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        try:
            while view:
                view = view[self.raw.write(view) or 0 :]
        except OSError as err:
            raise _WriteFailed(err) from None
        return len(data)

    def flush(self) -> None:
        """Nothing is buffered: each write reached the file system."""


def _copy_member(archive: DataFile, member: str, staged: Path) -> None:
    """Copy ``member`` of ``archive`` to ``staged``: DatasetError for a bad archive, :class:`_WriteFailed` else.

    ``staged`` is written unbuffered, so every failure to write it surfaces in a write of :class:`_Sink`.
    """
    try:
        with zipfile.ZipFile(archive.path) as zipped, zipped.open(member) as src:
            try:
                raw = staged.open("wb", buffering=0)
            except OSError as err:
                raise _WriteFailed(err) from None
            with raw:
                shutil.copyfileobj(src, _Sink(raw))
    except (zipfile.BadZipFile, KeyError, OSError, EOFError, zlib.error) as err:
        archive.fail(f"is not a complete zip file holding {member} ({err})")


def _extract(archive: DataFile, member: str, target: Path, label: str, spec: MovieLensSpec) -> Ratings:
    """Extract ``member`` of ``archive``, read it with every check, and only then name it ``target``.

    zipfile checks the member's CRC while reading; :func:`_read_ratings` the checksum and schema.
    Whatever fails, nothing is left under ``target``. A file that cannot be written there (a full
    disk, a quota, a folder that cannot be written) is a :class:`DatasetError` saying so, which
    keeps the archive: it is not the archive's fault.
    """
    try:
        with staging(target.parent) as stage:
            staged = stage / target.name
            _copy_member(archive, member, staged)
            origin = f"extracted from {archive.staged_for or archive.path}"
            cached = archive.cached if archive.staged_for is None else ()
            file = DataFile(staged, label, spec.url, spec.sha256, spec.n_rows, cached, staged_for=target, origin=origin)
            ratings = _read_ratings(file, spec)
            publish(staged, target)
    except (_WriteFailed, OSError) as exc:
        err = exc.err if isinstance(exc, _WriteFailed) else exc
        reason = err.strerror or type(err).__name__
        kept = "the archive is kept" if archive.staged_for is None else "the downloaded archive was not kept"
        raise DatasetError(
            f"Cannot extract {member} of {archive.staged_for or archive.path} into {target.parent} ({reason}); "
            f"{kept}; free some space there (or make it writable), or set ${DATA_ENV_VAR} to another folder, and "
            "try again."
        ) from None
    return ratings
