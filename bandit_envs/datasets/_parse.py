"""Strict parsing of delimited text files into numpy columns.

Every row must have exactly the expected fields, each of the expected type; the header of a
CSV must match exactly; a file cut in the middle of a line, an empty line, or a row count that
differs from the official file's is an error. Errors are raised through
:meth:`DataFile.fail`, so a bad file never yields a partial table.
"""

from __future__ import annotations

import gzip
import io
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import numpy as np

from bandit_envs.datasets._fetch import DataFile

Kind = Literal["int", "float", "time"]
"""Column types: integer, real number, or UTC time written as ``YYYY-MM-DDThh:mm:ssZ``."""

_DTYPES: dict[str, str] = {"int": "i8", "float": "f8", "time": "U32"}
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_CHECKS: dict[str, tuple[Callable[[str], Any], str]] = {
    "int": (int, "an integer"),
    "float": (float, "a number"),
    "time": (lambda s: datetime.strptime(s, _TIME_FORMAT), "a time like 2010-10-12T00:21:28Z"),
}


@dataclass(frozen=True)
class Layout:
    """The layout of a delimited text table.

    Parameters
    ----------
    columns : tuple of (name, kind)
        Column names and types, in file order.
    delimiter : str
        Field separator: a comma, a tab or ``"::"``.
    header : str or None
        The exact first line, or None if the file has no header.
    """

    columns: tuple[tuple[str, Kind], ...]
    delimiter: str
    header: str | None = None


def read_table(file: DataFile, layout: Layout) -> dict[str, np.ndarray]:
    """Read, verify and parse ``file``; return one contiguous array per column.

    The pinned sha256 (if any) is checked on the bytes on disk; ``.gz`` files are then
    decompressed; ``time`` columns are returned as int64 Unix seconds.
    """
    try:
        raw = file.path.read_bytes()
    except OSError as err:
        file.fail(f"cannot be read ({err.strerror or err})")
    file.check_sha256(raw)
    if file.path.name.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as err:
            file.fail(f"is not a complete gzip file ({err})")
    return _parse(file, layout, raw)


def require(file: DataFile, ok: np.ndarray, values: np.ndarray, what: str, first_line: int) -> None:
    """Fail on the first row where ``ok`` is False, quoting its value and line number.

    Parameters
    ----------
    file : DataFile
        The file the rows come from.
    ok : ndarray of bool
        One entry per data row.
    values : ndarray
        The column that was checked.
    what : str
        Completes "has <what> on line N", e.g. ``"a latitude outside [-90, 90]"``.
    first_line : int
        Line number of the first data row (2 if the file has a header).
    """
    if not ok.all():
        i = int(np.argmin(ok))
        file.fail(f"has {what} on line {i + first_line} ({values[i].item()!r})")


def _parse(file: DataFile, layout: Layout, data: bytes) -> dict[str, np.ndarray]:
    if not data:
        file.fail("is empty")
    n_header = 0 if layout.header is None else 1
    complete = data.endswith(b"\n")
    # The official files end with a line end, so a missing one means the copy was cut; only
    # when the official row count is known (and checked below) can the last line be trusted.
    if not complete and file.n_rows is None:
        file.fail("ends in the middle of a line, so it is truncated")
    if layout.header is not None:
        first = data[: data.find(b"\n")].rstrip(b"\r")
        if first != layout.header.encode():
            file.fail(f"does not start with the header {layout.header!r} (found {first[:80]!r})")
    n_rows = data.count(b"\n") + (not complete) - n_header
    if n_rows <= 0:
        file.fail("has no data rows")

    delimiter = layout.delimiter
    text = data
    if len(delimiter) > 1:  # np.loadtxt needs a one-character delimiter
        if b"\t" in data:
            file.fail(_first_bad_line(data, layout) or "contains a tab character")
        text, delimiter = data.replace(delimiter.encode(), b"\t"), "\t"
    dtype = np.dtype([(name, _DTYPES[kind]) for name, kind in layout.columns])
    stream = io.TextIOWrapper(io.BytesIO(text), encoding="ascii", newline=None)
    try:
        with warnings.catch_warnings():
            # numpy 2.0 parses an integer field through a float with only a DeprecationWarning: "3.5"
            # would read as 3 and an id beyond int64 as its smallest value; later numpy refuses both.
            warnings.simplefilter("error", DeprecationWarning)
            table = np.loadtxt(stream, dtype=dtype, delimiter=delimiter, comments=None, skiprows=n_header, ndmin=1)
    except (ValueError, UnicodeDecodeError, DeprecationWarning) as err:
        file.fail(_first_bad_line(data, layout) or f"cannot be parsed ({err})")
    if table.shape[0] != n_rows:  # np.loadtxt skips empty lines
        file.fail(_first_bad_line(data, layout) or f"has {n_rows} lines but {len(table)} rows")
    if file.n_rows is not None and table.shape[0] != file.n_rows:
        file.fail(
            f"has {table.shape[0]} data rows but the official file has {file.n_rows}, so it is incomplete or altered",
            pinned=True,
        )
    columns = {name: np.ascontiguousarray(table[name]) for name, _ in layout.columns}
    for name, kind in layout.columns:
        if kind == "time":
            columns[name] = _unix_seconds(file, columns[name], n_header + 1)
    return columns


def _unix_seconds(file: DataFile, text: np.ndarray, first_line: int) -> np.ndarray:
    """Convert ``YYYY-MM-DDThh:mm:ssZ`` strings to int64 Unix seconds, strictly."""
    what = "a time not of the form YYYY-MM-DDThh:mm:ssZ"
    require(file, np.char.str_len(text) == 20, text, what, first_line)
    chars = text.astype("U20").view("U1").reshape(-1, 20)
    shape_ok = np.ones(len(text), dtype=bool)
    for position, char in ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")):
        shape_ok &= chars[:, position] == char
    require(file, shape_ok, text, what, first_line)
    stamps = np.ascontiguousarray(chars[:, :19]).view("U19").ravel()
    try:
        return stamps.astype("datetime64[s]").astype(np.int64)
    except ValueError as err:
        ok = np.array([not _is_bad(s, "time") for s in text])
        require(file, ok, text, "an invalid time", first_line)
        file.fail(f"has an invalid time ({err})")


#: The range of an ``int`` column (numpy's int64).
_INT64 = np.iinfo(np.int64)


def _is_bad(field: str, kind: str) -> bool:
    if kind == "int" and "_" in field:  # Python's int() takes 1_000, numpy does not
        return True
    try:
        _CHECKS[kind][0](field)
    except ValueError:
        return True
    return False


def _beyond_int64(field: str) -> bool:
    """Whether ``field``, an integer, lies outside numpy's int64 (which numpy refuses to parse)."""
    return not _INT64.min <= int(field) <= _INT64.max


def _first_bad_line(data: bytes, layout: Layout) -> str | None:
    """Describe the first malformed line (slow; only used once parsing has failed)."""
    n_header = 0 if layout.header is None else 1
    n_fields = len(layout.columns)
    for number, raw in enumerate(io.BytesIO(data), start=1):
        if number <= n_header:
            continue
        line = raw.rstrip(b"\n")
        line = line[:-1] if line.endswith(b"\r") else line
        try:
            text = line.decode("ascii")
        except UnicodeDecodeError:
            return f"has a non-ASCII byte on line {number} ({line[:80]!r})"
        if not text.strip():
            return f"has an empty line (line {number})"
        fields = text.split(layout.delimiter)
        if len(fields) != n_fields:
            found = f"{len(fields)} fields instead of {n_fields}"
            return f"has {found} on line {number} ({text[:80]!r})"
        if len(layout.delimiter) > 1 and "\t" in text:
            return f"has a tab character on line {number} ({text[:80]!r})"
        for field, (name, kind) in zip(fields, layout.columns, strict=True):
            article = "an" if name[0] in "aeio" else "a"  # a user_id, an item_id
            if _is_bad(field, kind):
                return f"has {article} {name} that is not {_CHECKS[kind][1]} on line {number} ({field!r})"
            if kind == "int" and _beyond_int64(field):
                return f"has {article} {name} beyond the range of a 64-bit integer on line {number} ({field[:80]!r})"
    return None
