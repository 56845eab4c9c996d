"""The partial store: every finished task's rows, saved as they arrive, so a sweep can resume.

Layout, under an experiment's output folder ``DIR``::

    DIR/parts/manifest.json   experiment id, runs, horizon, seed, data, number of tasks, fingerprint
    DIR/parts/000017.json     {"task": 17, "setting": ..., "run": ..., "rows": [...]}, one per task

Each task file is written to a temporary name and renamed, so a crash never leaves half a file
(one cut short by a power loss is detected and redone). JSON keeps Python floats exactly
(shortest round-trip ``repr``), so rows read back from the store equal the rows the task
returned; other values are stored as the text ``results.csv`` shows for them (numpy scalars as
Python numbers). ``results.csv``, always assembled from the store in task order, is therefore the
same byte for byte whether a sweep ran at once, locally, on Dask, or was resumed.

A store saved under another manifest (other runs, horizon, seed, data or settings) is never
mixed with new results: :meth:`PartialStore.finished` raises :class:`ManifestMismatch`.

The store deletes only files it names itself (``manifest.json``, ``NNNNNN.json`` and their
``.tmp`` files), and the folder only once it is empty; the output folder
(:mod:`agents.experiments.core.outputs`) makes sure ``parts/`` is banditlab's before it is used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.experiments.core.outputs import command_difference
from agents.experiments.core.spec import Experiment

PARTS = "parts"
FORMAT = 1
#: The names of the files the store writes (a task's file, the manifest, and their temporary files).
_OWN = re.compile(r"(?:[0-9]{6}|manifest)\.json(?:\.tmp)?")


class ManifestMismatch(ValueError):
    """The partial store was saved by a run with other options; one sentence saying which."""


def manifest_for(exp: Experiment, seed: int, n_tasks: int, data: dict[str, str] | None = None) -> dict[str, Any]:
    """What identifies a sweep: the experiment at its scale, the base seed, the data and the task list."""
    spec = {
        "id": exp.id,
        "kind": exp.kind,
        "settings": exp.settings,
        "agents": exp.agents,
        "user_agents": [u.key or u.name for u in exp.user_agents],
        "overrides": exp.overrides,
        "horizon": exp.horizon,
        "runs": exp.runs,
        "n_arms": exp.n_arms,
        "options": exp.options,
        "seed": seed,
        "tasks": n_tasks,
    }
    text = json.dumps(spec, sort_keys=True, default=_jsonable)
    return {
        "format": FORMAT,
        "experiment": exp.id,
        "runs": exp.runs,
        "horizon": exp.horizon,
        "seed": seed,
        "data": dict(data or {}),
        "agents": list(exp.all_agents),
        "overrides": dict(exp.overrides),
        "tasks": n_tasks,
        "fingerprint": hashlib.sha256(text.encode()).hexdigest()[:16],
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return repr(value)


def _cell(value: Any) -> Any:
    """A row value as stored: what ``str`` (hence the CSV) shows is kept exactly."""
    if value is None or isinstance(value, (str, bool, int, float)):  # np.float64 is a float
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(str(value))  # float32 0.1 prints as 0.1, not 0.10000000149011612
    return str(value)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class PartialStore:
    """Finished tasks of one sweep under ``folder/parts`` (see the module docstring)."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        self.path = Path(folder) / PARTS
        self.manifest = manifest

    def _file(self, index: int) -> Path:
        return self.path / f"{index:06d}.json"

    def _saved(self) -> list[int]:
        return sorted(int(p.stem) for p in self._own_files() if p.suffix == ".json" and p.stem.isdigit())

    def _readable(self, index: int) -> bool:
        try:
            return json.loads(self._file(index).read_text()).get("task") == index
        except (OSError, ValueError, AttributeError):
            return False

    def finished(self, fresh: bool = False) -> set[int]:
        """Indices of the tasks already saved (none if ``fresh``); reads, never writes.

        Raises :class:`ManifestMismatch` if tasks were saved under another manifest.
        """
        if fresh or not self.path.is_dir():
            return set()
        saved = self._saved()
        if not saved:
            return set()
        try:
            old = json.loads((self.path / "manifest.json").read_text())
        except (OSError, ValueError):
            old = None
        if not isinstance(old, dict):
            raise ManifestMismatch(
                f"{self.path} holds partial results without a readable manifest.json, so they cannot be matched to "
                "this run; pass --fresh to discard them or choose another --out."
            )
        if old != self.manifest:
            raise ManifestMismatch(
                f"{self.path} holds partial results of a different run ({command_difference(old, self.manifest)}); "
                "rerun with the same options to resume it, pass --fresh to discard it, or choose another --out."
            )
        # A file cut short by a power loss (the rename is atomic, the data not synced) is redone.
        return {i for i in saved if i < self.manifest["tasks"] and self._readable(i)}

    def prepare(self, keep: set[int]) -> None:
        """Create the store, keep the tasks ``keep`` (from :meth:`finished`), drop its other files."""
        self.path.mkdir(parents=True, exist_ok=True)
        for p in self._own_files():
            if p.name != "manifest.json" and not (p.suffix == ".json" and int(p.stem) in keep):
                p.unlink()
        _write_atomic(self.path / "manifest.json", json.dumps(self.manifest, indent=1) + "\n")

    def save(self, index: int, setting: int, run: int, rows: Sequence[dict[str, Any]]) -> None:
        """Save one finished task's rows (atomically)."""
        cells = [{key: _cell(value) for key, value in row.items()} for row in rows]
        record = {"task": index, "setting": setting, "run": run, "rows": cells}
        _write_atomic(self._file(index), json.dumps(record, allow_nan=True))

    def count(self) -> int:
        """Number of tasks saved so far."""
        return len(self._saved()) if self.path.is_dir() else 0

    def rows(self) -> list[dict[str, Any]]:
        """All rows in canonical task order; every task must have been saved."""
        out: list[dict[str, Any]] = []
        for index in range(self.manifest["tasks"]):
            record = json.loads(self._file(index).read_text())
            if record.get("task") != index:
                raise ValueError(f"{self._file(index)} holds task {record.get('task')!r}, not task {index}.")
            out.extend(record["rows"])
        return out

    def _own_files(self) -> list[Path]:
        if not self.path.is_dir():
            return []
        return [p for p in self.path.iterdir() if _OWN.fullmatch(p.name) and p.is_file() and not p.is_symlink()]

    def remove(self) -> None:
        """Delete the store's files (once ``results.csv`` holds everything), and its folder if that is then empty."""
        for p in self._own_files():
            p.unlink(missing_ok=True)
        try:
            self.path.rmdir()
        except OSError:  # absent, or holds files the store did not write: they stay
            pass
