"""SNAP Gowalla check-ins: download, cache, verify, parse.

The file has one check-in per line, ``user<TAB>time<TAB>latitude<TAB>longitude<TAB>location``,
with times in ISO 8601 UTC (``2010-10-12T00:21:28Z``) and no header.

References
----------
E. Cho, S. A. Myers and J. Leskovec, "Friendship and Mobility: User Movement in Location-Based
Social Networks", KDD 2011. https://snap.stanford.edu/data/loc-gowalla.html
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from bandit_envs.datasets._fetch import DataFile, DatasetError, check_download, check_path, fetch, get_data_home
from bandit_envs.datasets._parse import Layout, read_table, require
from bandit_envs.datasets._tables import BBox, CheckIns
from bandit_envs.validation import check_choice, not_a_file, summarize

GOWALLA_URL = "https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz"
GOWALLA_FILE = "loc-gowalla_totalCheckins.txt.gz"
GOWALLA_ROWS = 6_442_890
_LAYOUT = Layout(
    (
        ("user_id", "int"),
        ("timestamp", "time"),
        ("lat", "float"),
        ("lon", "float"),
        ("location_id", "int"),
    ),
    delimiter="\t",
)
_LABEL = "SNAP Gowalla check-ins"


def load_gowalla(
    path: str | os.PathLike[str] | None = None,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    bbox: BBox | tuple[float, float, float, float] | None = None,
    verify: str = "auto",
) -> CheckIns:
    """Load the SNAP Gowalla check-ins, optionally only those inside a bounding box.

    Parameters
    ----------
    path : path-like or None
        A check-in file supplied by the user, gzipped (``.gz``) or plain text, in SNAP's format,
        or a folder holding ``loc-gowalla_totalCheckins.txt.gz``. Subsets such as a single
        city's rows are fine. If None, the cached copy is used, downloaded first if needed.
    data_home : path-like or None
        Cache directory; default ``$BANDIT_ENVS_DATA`` or ``~/.cache/bandit_envs``. The file
        goes to ``<data_home>/gowalla/loc-gowalla_totalCheckins.txt.gz``.
    download : bool, default True
        Whether a file missing from the cache may be downloaded.
    bbox : BBox or (lat_min, lat_max, lon_min, lon_max) or None
        Keep only check-ins inside this box, e.g. :data:`NYC_BBOX`. The whole file is still
        verified.
    verify : {"auto", "schema"}
        For a user-supplied file named like the official one
        (``loc-gowalla_totalCheckins.txt[.gz]``): "auto" also checks the official row count,
        "schema" only the schema. Other file names (subsets) get the schema check only, and
        cached files always get every check. No sha256 of the official file is pinned.

    Returns
    -------
    CheckIns
        The check-ins in file order (SNAP orders them by user, newest first).

    Raises
    ------
    ValueError
        If ``verify`` or ``bbox`` is invalid.
    TypeError
        If ``download`` is not True or False.
    DatasetError
        If the file is missing and cannot be downloaded (the message gives the URL and the
        path to save it at), or if it fails a check (row count, gzip integrity, schema, ranges).
    """
    check_choice("verify", verify, ("auto", "schema"))
    download = check_download(download)
    box = _as_bbox(bbox)
    if path is None:
        target = cache_path(data_home)
        official = DataFile(target, _LABEL, GOWALLA_URL, n_rows=GOWALLA_ROWS, cached=(target,))
        staged = dataclasses.replace(official, cached=(), staged_for=target, origin=f"downloaded from {GOWALLA_URL}")
        alternative = "point path= (data= of the envs, --data of banditlab) at a copy of it (gzipped or not)"
        checkins = fetch(
            GOWALLA_URL,
            target,
            download=download,
            alternative=alternative,
            accept=lambda downloaded: _read_checkins(dataclasses.replace(staged, path=downloaded)),
        )
        if checkins is None:
            checkins = _read_checkins(official)
    else:
        checkins = _read_checkins(_user_file(check_path("path", path).expanduser().absolute(), verify))
    return checkins if box is None else checkins.within(box)


def cache_path(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Where the check-in file is cached (whether or not it is there yet)."""
    return get_data_home(data_home) / "gowalla" / GOWALLA_FILE


def _read_checkins(file: DataFile) -> CheckIns:
    """Read ``file`` with every check of its :class:`DataFile` and the coordinate ranges."""
    columns = read_table(file, _LAYOUT)
    for name, low, high in (("lat", -90, 90), ("lon", -180, 180)):
        values = columns[name]
        inside = (values >= low) & (values <= high)
        require(file, inside, values, f"a {name} outside [{low}, {high}]", 1)
    for name in ("user_id", "location_id"):
        require(file, columns[name] >= 0, columns[name], f"a negative {name}", 1)
    return CheckIns._adopt(**columns)


def _as_bbox(bbox: BBox | tuple[float, float, float, float] | None) -> BBox | None:
    if bbox is None or isinstance(bbox, BBox):
        return bbox
    if not isinstance(bbox, tuple | list) or len(bbox) != 4:
        raise ValueError(f"bbox must be a BBox or a tuple (lat_min, lat_max, lon_min, lon_max), got {summarize(bbox)}.")
    return BBox(*bbox)


def _user_file(path: Path, verify: str) -> DataFile:
    if path.is_dir():
        path = path / GOWALLA_FILE
    if (problem := not_a_file(path)) is not None:
        raise DatasetError(
            f"{problem}; point path= (data= of the envs, --data of banditlab) at a check-in file in SNAP's format, "
            f"such as {GOWALLA_FILE} downloaded from {GOWALLA_URL}."
        )
    official = path.name in (GOWALLA_FILE, GOWALLA_FILE.removesuffix(".gz")) and verify == "auto"
    loader = 'load_gowalla(path=..., verify="schema")'
    return DataFile(path, _LABEL, GOWALLA_URL, n_rows=GOWALLA_ROWS if official else None, loader=loader)
