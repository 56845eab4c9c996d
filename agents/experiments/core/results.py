"""The results of a run on disk: ``results.csv`` (tidy, pandas), ``meta.json`` (provenance), checks.

``results.csv`` has one row per setting × agent × run × checkpoint (privacy pairs: one row per
pair), setting parameters as columns; it is written and read with pandas. ``meta.json`` records
how the results were made: the experiment, scale and seed, the package version, the git commit
when run from a checkout, the command line, the Python / numpy / numba versions, the number of
jobs and the wall time. :func:`read_results`, :func:`check_results`, :func:`read_meta` and
:func:`check_meta_complete` refuse a missing, empty, cut-short or malformed file with one
sentence (:class:`ResultsError`).
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd

from agents.experiments.core import package_version
from bandit_envs.validation import check_memory, format_bytes, not_a_file, summarize

RESULTS = "results.csv"
META = "meta.json"


class ResultsError(ValueError):
    """A results folder that cannot be read back; one sentence saying which file and why."""


def to_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The tidy table of a run's rows (columns in the order of the first row)."""
    return pd.DataFrame.from_records(list(rows), columns=list(rows[0]) if rows else None)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` to ``path`` as ``results.csv`` is written (no index, CRLF line ends)."""
    frame.to_csv(path, index=False, lineterminator="\r\n")


#: Columns that hold names the user chooses (``--agent NAME=...``): text, whatever the name reads like
#: (``NA``, ``None``, ``1.5``, ``True``), so they are neither read as missing values nor as numbers.
NAME_COLUMNS = ("agent",)


#: Bytes of memory per byte of a ``results.csv`` that reading it may take (pandas' parse and the
#: table: a quick run's 0.7 MB table holds 1.8 MB, its parse about twice that), with a margin.
READ_FACTOR = 8
#: What to do about a ``results.csv`` too large to read.
READ_REMEDY = "check that it is the results of `banditlab run`, whose tables hold checkpoints, not rounds"


def read_results(path: Path, required: Sequence[str] = ()) -> pd.DataFrame:
    """Read a ``results.csv``; ResultsError if it is missing, empty, unreadable or lacks ``required`` columns.

    A file too large to read within :func:`bandit_envs.validation.memory_limit` (about
    :data:`READ_FACTOR` bytes of memory per byte of the file) is refused before it is read, in one
    sentence, rather than ending the process for want of memory.

    The columns of :data:`NAME_COLUMNS`, and any other column of text, are read as text as
    written (only an empty cell is a missing value), so that every name ``banditlab run`` accepts
    reads back as itself; the other columns are read as pandas reads them (numbers, True/False,
    and text such as ``NA`` or ``nan`` as a missing value, which :func:`check_results` refuses).
    """
    if (problem := not_a_file(path)) is not None:
        raise ResultsError(f"the folder must contain {path.name}, but {problem}.")
    try:
        size = path.stat().st_size
        check_memory(f"{path} ({format_bytes(size)}) read as a table", READ_FACTOR * size, READ_REMEDY)
    except OSError:  # said by the read below
        pass
    except ValueError as exc:  # too large for the memory limit, or a malformed limit
        raise ResultsError(str(exc)) from None
    try:
        frame = pd.read_csv(path)
        _read_text_columns(path, frame)
    except pd.errors.EmptyDataError:
        raise ResultsError(f"{path} is empty; rerun `banditlab run` to write it.") from None
    except UnicodeDecodeError as exc:  # e.g. saved again by a spreadsheet as UTF-16 or Latin-1
        raise ResultsError(
            f"{path} is not UTF-8 text (byte {exc.start} is not UTF-8), as banditlab writes it; save it as UTF-8 "
            "(CSV UTF-8) or rerun `banditlab run` to write it."
        ) from None
    except OSError as exc:  # e.g. its read permission removed
        raise ResultsError(f"{path} cannot be read ({exc.strerror or type(exc).__name__}); make it readable.") from None
    except pd.errors.ParserError as exc:
        raise ResultsError(f"{path} is not a readable CSV table ({type(exc).__name__}).") from None
    if frame.empty:
        raise ResultsError(f"{path} has a header but no rows; rerun `banditlab run` to write it.")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ResultsError(
            f"{path} must have the columns {list(required)} of this experiment, but lacks {missing}; is it the "
            "results of another experiment?"
        )
    return frame


def _is_text(values: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _read_text_columns(path: Path, frame: pd.DataFrame) -> None:
    """Read ``frame``'s columns of text again from ``path``, as written: only an empty cell is a missing value.

    pandas reads ``NA``, ``None``, ``null``, ``nan`` and the like as missing values, and a column
    of names that all read like numbers (``1.5``) as numbers. Only the columns that need it are
    read again: a name column read as numbers or with a missing value, and a column of other
    text with a missing value.
    """
    names = [c for c in frame.columns if c in NAME_COLUMNS]
    again = [
        c
        for c in frame.columns
        if (c in names and not _is_text(frame[c])) or ((c in names or _is_text(frame[c])) and frame[c].isna().any())
    ]
    if not again:
        return
    try:
        cells = pd.read_csv(path, usecols=again, dtype=str, keep_default_na=False, na_values=[""])
    except (ValueError, OSError, UnicodeDecodeError):  # e.g. repeated names pandas renamed: keep them as read
        return
    if len(cells) != len(frame):  # the file changed meanwhile: keep what was read
        return
    for column in again:
        frame[column] = cells[column].set_axis(frame.index)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: Largest magnitude of a number in a results table: the summaries square them, and no run writes more.
MAX_MAGNITUDE = 1e100


def check_results(
    frame: pd.DataFrame, path: Path, required: Sequence[str], n_settings: int | None = None, runs: int | None = None
) -> None:
    """ResultsError if a results table cannot be what ``banditlab run`` wrote (one sentence, naming the line).

    Every ``required`` column must be filled (an empty cell, or text such as ``nan`` that reads as a
    missing value, is named as such) and hold finite numbers in every row or in none, and
    ``True``/``False`` in every row or in none; ``setting`` and ``run`` (when required) must be
    whole numbers below ``n_settings`` and ``runs``.
    """
    for column in required:
        values = frame[column]
        empty = values.isna().to_numpy()
        if empty.any():
            line = int(empty.argmax()) + 2  # the header is line 1
            text = _cell_text(path, column, line - 2)
            if text:  # e.g. "nan" or "NA", which pandas reads as a missing value
                raise ResultsError(
                    f"{path}: column {column} holds {_shown(text)} on line {line}, which reads as a missing value, "
                    "but every row must fill it; rerun `banditlab run` to write the file."
                )
            raise ResultsError(
                f"{path}: column {column} has an empty value on line {line}, so the file is cut short or edited; "
                "rerun `banditlab run` to write it."
            )
        if column in NAME_COLUMNS:  # any text: a name may read like a number or True/False
            continue
        if not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            numbers = pd.to_numeric(values, errors="coerce").isna().to_numpy()
            if not numbers.all():  # some rows hold numbers: the others must too
                line = int(numbers.argmax())
                raise ResultsError(
                    f"{path}: column {column} holds {_shown(values.iloc[line])} on line {line + 2}, where the other "
                    "rows hold numbers; rerun `banditlab run` to write the file."
                )
            flags = values.astype(str).isin(("True", "False")).to_numpy()
            if flags.any() and not flags.all():  # some rows hold True or False: the others must too
                line = int((~flags).argmax())
                raise ResultsError(
                    f"{path}: column {column} holds {_shown(values.iloc[line])} on line {line + 2}, where the other "
                    "rows hold True or False; rerun `banditlab run` to write the file."
                )
        elif not pd.api.types.is_bool_dtype(values):
            # 1e400 reads as inf; past 1e100 the summaries' squares overflow (no run writes such values)
            outside = ~(np.abs(values.to_numpy(dtype=float)) <= MAX_MAGNITUDE)
            if outside.any():
                line = int(outside.argmax())
                raise ResultsError(
                    f"{path}: column {column} holds {values.iloc[line]} on line {line + 2}, but its values must be "
                    f"finite numbers of magnitude at most {MAX_MAGNITUDE:g}; rerun `banditlab run` to write the file."
                )
    limits = {
        "setting": (n_settings, "this experiment has {n} settings, numbered 0 to {last}"),
        "run": (runs, "meta.json says runs = {n}, numbered 0 to {last}"),
    }
    for column, (limit, what) in limits.items():
        if column not in required:
            continue
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        whole = np.isfinite(values) & (values >= 0) & (values == np.floor(values))
        reason = "it must be a whole number >= 0"
        bad = ~whole
        if whole.all() and limit is not None:
            bad = values >= limit
            reason = what.format(n=limit, last=limit - 1)
        if bad.any():
            line = int(bad.argmax())
            raise ResultsError(
                f"{path}: column {column} holds {_shown(frame[column].iloc[line])} on line {line + 2}, but {reason}; "
                "rerun `banditlab run` to write the file."
            )


def _cell_text(path: Path, column: str, index: int) -> str:
    """Row ``index`` of ``column`` as written in ``path``: "" for an empty or absent cell, or an unreadable file."""
    try:
        cells = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False)[column]
        text = cells.iloc[index]
    except (ValueError, OSError, IndexError, KeyError, UnicodeDecodeError):  # ParserError is a ValueError
        return ""
    return text if isinstance(text, str) else ""


def _row(frame: pd.DataFrame, columns: Sequence[str], index: int) -> str:
    """Columns ``columns`` of row ``index``, e.g. ``setting 2, run 1, agent 'GAP'``."""
    return ", ".join(f"{c} {_shown(frame[c].iloc[index])}" for c in columns)


def check_complete(
    frame: pd.DataFrame,
    path: Path,
    keys: Sequence[str],
    runs: int,
    horizon: int,
    n_settings: int | None = None,
) -> None:
    """ResultsError unless the table holds every row of its scale once (one sentence, naming a row).

    ``keys`` are the columns that identify a row (the family's ``keys``; checked already by
    :func:`check_results`). Each combination must appear once; every series (the keys but ``t``)
    must hold the same checkpoints ``t``, the last being ``horizon``; with ``run``, the rows of
    each setting and agent must hold every run 0 to ``runs - 1``; with ``setting`` and
    ``n_settings``, every setting must have rows. ``runs`` and ``horizon`` are meta.json's.
    """
    if not keys:
        return
    rerun = "so the file is cut short or edited, or meta.json is not its own; rerun `banditlab run` to write it."
    keys = list(keys)
    repeated = frame.duplicated(subset=keys).to_numpy()
    if repeated.any():
        line = int(repeated.argmax())
        first = int(np.flatnonzero((frame[keys] == frame[keys].iloc[line]).all(axis=1).to_numpy())[0])
        raise ResultsError(
            f"{path}: line {line + 2} repeats the row of {_row(frame, keys, line)} of line {first + 2}, so rows are "
            "duplicated; rerun `banditlab run` to write the file."
        )
    if "t" in keys:
        checkpoints = np.unique(frame["t"].to_numpy())
        off_grid = checkpoints[(checkpoints < 1) | (checkpoints != np.floor(checkpoints))]
        if off_grid.size:
            raise ResultsError(
                f"{path}: the checkpoints t must be whole rounds from 1 to the horizon, got t = "
                f"{_shown(off_grid[0])}, {rerun}"
            )
        if checkpoints[-1] != horizon:
            raise ResultsError(f"{path}: the last checkpoint is t = {_shown(checkpoints[-1])}, but meta.json says "
                               f"horizon = {horizon}, {rerun}")  # fmt: skip
        series = [k for k in keys if k != "t"]
        if series:
            sizes = frame.groupby(series, sort=False).size().to_numpy()
            starts = frame.drop_duplicates(subset=series).index.to_numpy()
            short = sizes != checkpoints.size
            if short.any():
                i = int(starts[int(short.argmax())])
                raise ResultsError(
                    f"{path}: the rows of {_row(frame, series, i)} (from line {i + 2}) hold "
                    f"{int(sizes[short.argmax()])} of the {checkpoints.size} checkpoints t the other rows hold, {rerun}"
                )
    if "run" in keys:
        cells = [k for k in keys if k not in ("run", "t")]
        counts = frame.groupby(cells, sort=False)["run"].nunique().to_numpy() if cells else [frame["run"].nunique()]
        starts = frame.drop_duplicates(subset=cells).index.to_numpy() if cells else np.zeros(1, dtype=int)
        wrong = np.asarray(counts) != runs
        if wrong.any():
            i = int(starts[int(wrong.argmax())])
            where = f"the rows of {_row(frame, cells, i)} (from line {i + 2})" if cells else "the file"
            raise ResultsError(
                f"{path}: {where} hold {int(np.asarray(counts)[wrong.argmax()])} runs, but meta.json says runs = "
                f"{runs}, {rerun}"
            )
    if "setting" in keys and n_settings is not None:
        missing = sorted(set(range(n_settings)) - set(pd.to_numeric(frame["setting"]).astype(int).tolist()))
        if missing:
            raise ResultsError(f"{path} holds no rows of setting {missing[0]}, but this experiment has {n_settings} "
                               f"settings, {rerun}")  # fmt: skip


def check_agents(frame: pd.DataFrame, path: Path, listed: Sequence[str]) -> None:
    """ResultsError unless the table's agents are the ``agents`` meta.json lists (one sentence naming one).

    A row of an agent meta.json does not list, or a listed agent without rows, means the file
    was edited or meta.json is not its own; the analysis would otherwise fail on the missing
    agent's rows with a message about the table's internals.
    """
    if "agent" not in frame.columns:
        return
    names = frame["agent"].astype(str)
    rerun = "so the file is edited, or meta.json is not its own; rerun `banditlab run` to write it."
    unlisted = ~names.isin(list(listed)).to_numpy()
    if unlisted.any():
        line = int(unlisted.argmax())
        raise ResultsError(
            f"{path}: line {line + 2} holds agent {_shown(names.iloc[line])}, which meta.json's agents "
            f"({', '.join(listed)}) do not list, {rerun}"
        )
    missing = [name for name in listed if name not in set(names)]
    if missing:
        raise ResultsError(f"{path} holds no rows of agent {missing[0]!r}, which meta.json lists, {rerun}")


#: The fields ``banditlab report`` needs from ``meta.json`` (every ``banditlab run`` writes them).
META_REQUIRED = ("experiment", "runs", "horizon", "seed", "seconds", "jobs")
#: Least values of meta.json's integer fields.
_LEAST = {"runs": 1, "horizon": 10, "seed": 0, "jobs": 1}


def read_meta(path: Path, required: bool = False) -> dict[str, Any]:
    """Read ``meta.json``; ResultsError if it is not a JSON object of valid fields.

    An absent file is an empty dict, or a ResultsError if ``required``. Missing fields are
    checked by :func:`check_meta_complete`.
    """
    if (problem := not_a_file(path)) is not None:
        if required or path.exists():
            raise ResultsError(
                f"the folder must contain {path.name} (written by `banditlab run` beside results.csv), but {problem}."
            )
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:  # e.g. its read permission removed: not a reason to delete it
        raise ResultsError(f"{path} cannot be read ({exc.strerror or type(exc).__name__}); make it readable.") from None
    except UnicodeDecodeError:
        text = ""
    try:
        meta = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        raise ResultsError(f"{path} is not valid JSON; delete it or rerun `banditlab run`.") from None
    if not isinstance(meta, dict):
        raise ResultsError(f"{path} must hold a JSON object, got {type(meta).__name__}.")
    for key, least in _LEAST.items():
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ResultsError(f"{path}: {key} must be a non-negative integer, got {summarize(value)}.")
        if value is not None and value < least:
            raise ResultsError(f"{path}: {key} must be an integer >= {least}, got {summarize(value)}.")
    seconds = meta.get("seconds")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0
    ):
        raise ResultsError(f"{path}: seconds must be a finite number >= 0, got {summarize(seconds)}.")
    experiment = meta.get("experiment")
    if experiment is not None and not isinstance(experiment, str):
        raise ResultsError(f"{path}: experiment must be an experiment id (text), got {summarize(experiment)}.")
    for key in ("data", "overrides", "user_agents"):
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            raise ResultsError(f"{path}: {key} must be an object, got {summarize(meta[key])}.")
    agents = meta.get("agents")
    if agents is not None and not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
        raise ResultsError(f"{path}: agents must be a list of agent names, got {summarize(agents)}.")
    return meta


def check_meta_complete(meta: Mapping[str, Any], path: Path) -> None:
    """ResultsError if ``meta`` lacks a field of :data:`META_REQUIRED`."""
    missing = [key for key in META_REQUIRED if meta.get(key) is None]
    if missing:
        raise ResultsError(
            f"{path} lacks {', '.join(missing)}, which every `banditlab run` writes; rerun `banditlab run` to write "
            "the folder again."
        )


def git_commit() -> str | None:
    """The commit of the checkout this package runs from, or None (installed package, no git)."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    if out.returncode != 0 or len(commit) != 40:
        return None
    dirty = subprocess.run(
        ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    )
    return commit + ("-dirty" if dirty.stdout.strip() else "")


def provenance(command: Sequence[str] | None = None) -> dict[str, Any]:
    """Package version, git commit, command line and library versions of this process."""
    return {
        "version": package_version(),
        "git_commit": git_commit(),
        "command": list(sys.argv if command is None else command),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
    }
