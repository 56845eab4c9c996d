"""The results of a run on disk: ``results.csv`` (tidy, pandas), ``meta.json`` (provenance), checks.

``results.csv`` has one row per setting × agent × run × checkpoint (privacy pairs: one row per
pair), setting parameters as columns; it is written and read with pandas. ``meta.json`` records
how the results were made: the experiment, scale and seed, the package version, the git commit
when run from a checkout, the command line, the Python / numpy / numba versions, the number of
jobs and the wall time. :func:`read_results` and :func:`read_meta` refuse a missing, empty or
malformed file with one sentence (:class:`ResultsError`).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy
import pandas as pd

from agents.experiments.core import package_version

RESULTS = "results.csv"
META = "meta.json"


class ResultsError(ValueError):
    """A results folder that cannot be read back; one sentence saying which file and why."""


def to_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The tidy table of a run's rows (columns in the order of the first row)."""
    return pd.DataFrame.from_records(list(rows), columns=list(rows[0]) if rows else None)


def write_results(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` to ``path`` atomically (a temporary file renamed into place)."""
    tmp = path.with_name(path.name + ".tmp")
    frame.to_csv(tmp, index=False, lineterminator="\r\n")
    os.replace(tmp, path)


def read_results(path: Path, required: Sequence[str] = ()) -> pd.DataFrame:
    """Read a ``results.csv``; ResultsError if it is missing, empty, unreadable or lacks ``required`` columns."""
    if not path.is_file():
        raise ResultsError(f"the folder must contain {path.name}, but {path} does not exist.")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ResultsError(f"{path} is empty; rerun `banditlab run` to write it.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError) as exc:
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


def read_meta(path: Path) -> dict[str, Any]:
    """Read ``meta.json`` (an empty dict if absent); ResultsError if it is not a JSON object of valid fields."""
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        raise ResultsError(f"{path} is not valid JSON; delete it or rerun `banditlab run`.") from None
    if not isinstance(meta, dict):
        raise ResultsError(f"{path} must hold a JSON object, got {type(meta).__name__}.")
    for key in ("runs", "horizon", "seed", "jobs"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ResultsError(f"{path}: {key} must be a non-negative integer, got {value!r}.")
    seconds = meta.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))):
        raise ResultsError(f"{path}: seconds must be a number, got {seconds!r}.")
    if meta.get("data") is not None and not isinstance(meta["data"], dict):
        raise ResultsError(f"{path}: data must be an object, got {meta['data']!r}.")
    return meta


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
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
    }
