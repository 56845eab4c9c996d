"""The partial store: every finished task's rows, saved as they arrive, so a sweep can resume.

Layout, under an experiment's output folder ``DIR``::

    DIR/parts/manifest.json   experiment id, runs, horizon, seed, data, number of tasks, fingerprint
    DIR/parts/000017.json     {"tasks": [{"task": 17, "setting": ..., "run": ..., "rows": [...]}, ...]}

Finished tasks are buffered and written together as one batch file, named after its smallest
task index, at most every :data:`FLUSH_SECONDS`: by :meth:`PartialStore.save` when that long has
passed since the last write, by a timer otherwise (so a lull after a task does not keep it in
memory), and by :meth:`PartialStore.flush`, which the sweep calls when it ends, is interrupted or
fails. Creating a file costs milliseconds on some file systems, about as long as a small task
takes, so one file per task could double a sweep's time. A SIGKILL (or a power loss) therefore loses at
most the tasks finished in the last :data:`FLUSH_SECONDS`; they are run again on resume.

Each batch file is written to a temporary name and renamed, so a crash never leaves half a file
(one cut short by a power loss is detected, and its tasks are redone). Each task's record holds
the sha256 of its rows, and a ``check`` given to the store (the checks ``banditlab report``
applies to ``results.csv``, on the task's rows) is applied to every task read back: a batch file
with a task whose rows were changed, dropped or garbled is treated as one that cannot be read,
its tasks are redone, and :attr:`PartialStore.redone` says so, one line per file. JSON keeps Python floats
exactly (shortest round-trip ``repr``), so rows read back from the store equal the rows the task
returned; other values are stored as the text ``results.csv`` shows for them (numpy scalars as
Python numbers). ``results.csv``, always assembled from the store in task order, is therefore the
same byte for byte whether a sweep ran at once, locally, on Dask, or was resumed.

A store saved under another manifest (other runs, horizon, seed, data or settings) is never
mixed with new results: :meth:`PartialStore.finished` raises :class:`ManifestMismatch`. A store
written by the earlier format 1 (one file ``{"task": 17, ...}`` per task) is still read and
resumed; a store of a format this version does not know is refused.

The store deletes only files it names itself (``manifest.json``, ``NNNNNN.json`` and their
``.tmp`` files), and the folder only once it is empty; the output folder
(:mod:`agents.experiments.core.outputs`) makes sure ``parts/`` is banditlab's before it is used.
Its files are created as the output folder creates files
(:func:`~agents.experiments.core.outputs.write_exclusive`), never through a link: a link under one
of its names, or a ``parts`` that is a link, is refused with one sentence
(:class:`~agents.experiments.core.outputs.OutputError`) and whatever it points to is left alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.experiments.core.outputs import OutputError, check_no_link, command_difference, write_exclusive
from agents.experiments.core.spec import Experiment

PARTS = "parts"
FORMAT = 2
#: Store formats this version reads: 1 held one file per task, 2 holds batches of tasks.
_READABLE_FORMATS = (1, FORMAT)
#: Seconds between two writes of finished tasks at most (and at least, but for the final flush).
FLUSH_SECONDS = 0.5
#: The names of the files the store writes (a batch file, the manifest, and their temporary files).
_OWN = re.compile(r"(?:[0-9]{6}|manifest)\.json(?:\.tmp)?")
#: What to do instead of writing through a link, ending the sentence that refuses it.
_INSTEAD = "choose another --out"

_Record = dict[str, Any]


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


def _is_record(record: Any) -> bool:
    return isinstance(record, dict) and type(record.get("task")) is int and isinstance(record.get("rows"), list)


def _digest(rows: Any) -> str:
    """The sha256 of a task's rows as the store writes them."""
    return hashlib.sha256(json.dumps(rows, allow_nan=True).encode()).hexdigest()


#: Checks a task's record read back (its ``task``, ``run`` and ``rows``): None if it is sound, else why not.
Check = Callable[[_Record], "str | None"]


def _batch(path: Path, check: Check | None = None) -> tuple[list[_Record] | None, str]:
    """The task records of a batch file (or of a format-1 task file), or None and why it cannot be used.

    A file cut short, not JSON, of another shape, or not named after its smallest task cannot be
    read; nor can one with a task whose rows are not a non-empty list of objects, differ from the
    sha256 saved with them, or fail ``check``.
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep
        return None, "it is not a complete JSON file"
    if not isinstance(data, dict):
        return None, "it is not a batch of tasks"
    records = data.get("tasks") if "tasks" in data else [data]  # format 1: one task per file
    if not isinstance(records, list) or not records or not all(_is_record(r) for r in records):
        return None, "it is not a batch of tasks"
    if min(r["task"] for r in records) != int(path.stem):
        return None, "it is not named after its first task"
    for r in records:
        if not r["rows"] or not all(isinstance(row, dict) for row in r["rows"]):
            return None, f"task {r['task']} has no rows"
        if "sha256" in r and r["sha256"] != _digest(r["rows"]):
            return None, f"the rows of task {r['task']} changed since they were saved"
        problem = check(r) if check is not None else None
        if problem:
            return None, f"task {r['task']}: {problem}"
    return records, ""


class PartialStore:
    """Finished tasks of one sweep under ``folder/parts`` (see the module docstring).

    :meth:`save` may be called from one thread at a time; the store's own timer writes the
    buffered tasks from another thread, under a lock.
    """

    def __init__(self, folder: Path, manifest: dict[str, Any], check: Check | None = None) -> None:
        self.root = Path(folder)
        self.path = self.root / PARTS
        self.manifest = manifest
        self.check = check
        #: One line per batch file found unusable by :meth:`finished`: its tasks are run again.
        self.redone: list[str] = []
        #: Batch files read (or written) and found sound, by name, with their (inode, size, mtime).
        self._sound: dict[str, tuple[tuple[int, int, int], list[_Record]]] = {}
        self._lock = threading.Lock()
        self._buffer: list[_Record] = []
        self._saved: set[int] = set()  # tasks written or buffered since prepare(), and the kept ones
        self._last_write = -math.inf  # the first finished task is written at once
        self._timer: threading.Timer | None = None

    def _write_atomic(self, path: Path, text: str) -> None:
        """Write ``text`` to ``path``: to its new ``.tmp`` file first (never through a link), then renamed."""
        tmp = path.with_name(path.name + ".tmp")
        write_exclusive(tmp, text.encode(), self.root, _INSTEAD)
        os.replace(tmp, path)

    def check_no_links(self) -> None:
        """OutputError if ``parts`` is a link, or something under one of the store's names is not a plain file."""
        check_no_link(self.path, self.root, _INSTEAD)
        if not self.path.is_dir():
            return
        for entry in sorted(self.path.iterdir()):
            if _OWN.fullmatch(entry.name) and not stat.S_ISREG(entry.lstat().st_mode):
                what = "a link" if entry.is_symlink() else "not a plain file"
                raise OutputError(
                    f"{entry} is {what}, so the partial store did not write it and never reads or writes through it; "
                    f"move it away or {_INSTEAD}."
                )

    def _file(self, index: int) -> Path:
        return self.path / f"{index:06d}.json"

    def _batch_files(self) -> list[Path]:
        return sorted(p for p in self._own_files() if p.suffix == ".json" and p.stem.isdigit())

    def _records(self, path: Path) -> tuple[list[_Record] | None, str]:
        """:func:`_batch` of ``path`` with this store's check, remembered while the file is unchanged."""
        try:
            st = path.stat()
        except OSError:
            return None, "it cannot be read"
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        known = self._sound.get(path.name)
        if known is not None and known[0] == key:
            return known[1], ""
        records, why = _batch(path, self.check)
        if records is not None:
            self._sound[path.name] = (key, records)
        return records, why

    def _saved_tasks(self, report: bool = False) -> dict[int, list[dict[str, Any]]]:
        """The rows of every task saved in a sound file, by task index (files cut short or garbled are left out).

        With ``report``, :attr:`redone` gets a line for each file left out.
        """
        found: dict[int, list[dict[str, Any]]] = {}
        for path in self._batch_files():
            records, why = self._records(path)
            if records is None and report:
                self.redone.append(f"{path} cannot be used ({why}), so its tasks are run again.")
            for record in records or ():
                if 0 <= record["task"] < self.manifest["tasks"]:
                    found.setdefault(record["task"], record["rows"])
        return found

    def finished(self, fresh: bool = False) -> set[int]:
        """Indices of the tasks already saved (none if ``fresh``); reads, never writes.

        Raises :class:`ManifestMismatch` if tasks were saved under another manifest, and
        :class:`~agents.experiments.core.outputs.OutputError` if a link was planted in the store.
        """
        self.check_no_links()
        if fresh or not self.path.is_dir() or not self._batch_files():
            return set()
        try:
            old = json.loads((self.path / "manifest.json").read_text())
        except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep
            old = None
        if not isinstance(old, dict):
            raise ManifestMismatch(
                f"{self.path} holds partial results without a readable manifest.json, so they cannot be matched to "
                "this run; pass --fresh to discard them or choose another --out."
            )
        if old.get("format") not in _READABLE_FORMATS:
            raise ManifestMismatch(
                f"{self.path} holds partial results in store format {old.get('format')!r}, which this version of "
                "banditlab cannot read; pass --fresh to discard them or choose another --out."
            )
        if {**old, "format": FORMAT} != self.manifest:
            raise ManifestMismatch(
                f"{self.path} holds partial results of a different run ({command_difference(old, self.manifest)}); "
                "rerun with the same options to resume it, pass --fresh to discard it, or choose another --out."
            )
        # A file cut short by a power loss (the rename is atomic, the data not synced), or edited, is redone.
        self.redone = []
        return set(self._saved_tasks(report=True))

    def prepare(self, keep: set[int]) -> None:
        """Create the store, keep the tasks ``keep`` (from :meth:`finished`), drop its other files.

        A batch file is kept if all its tasks are kept; ``.tmp`` files and unreadable files go.
        OutputError, before anything is written, if a link was planted in the store.
        """
        self.check_no_links()
        self.path.mkdir(parents=True, exist_ok=True)
        for p in self._own_files():
            if p.name == "manifest.json":
                continue
            records = self._records(p)[0] if p.suffix == ".json" else None
            if records is None or not {r["task"] for r in records} <= keep:
                p.unlink()
        self._write_atomic(self.path / "manifest.json", json.dumps(self.manifest, indent=1) + "\n")
        with self._lock:
            self._buffer = []
            self._saved = set(keep)

    def save(self, index: int, setting: int, run: int, rows: Sequence[dict[str, Any]]) -> None:
        """Buffer one finished task's rows; write the buffer if :data:`FLUSH_SECONDS` have passed since the last write.

        Otherwise a timer writes it once they have. A task already saved (a backend that ran it
        twice) is not saved again: its rows are the same.
        """
        cells = [{key: _cell(value) for key, value in row.items()} for row in rows]
        record = {"task": index, "setting": setting, "run": run, "rows": cells, "sha256": _digest(cells)}
        with self._lock:
            if index in self._saved:
                return
            self._saved.add(index)
            self._buffer.append(record)
            wait = self._last_write + FLUSH_SECONDS - time.monotonic()
            if wait <= 0:
                self._write_buffer()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self._flush_from_timer)
                self._timer.daemon = True  # never holds the process up: the final flush writes what is left
                self._timer.start()

    def flush(self) -> None:
        """Write the buffered tasks now (atomically, as one file) and stop the timer."""
        with self._lock:
            self._write_buffer()

    def _flush_from_timer(self) -> None:
        with self._lock:
            if self._timer is not threading.current_thread():
                return  # cancelled while it waited for the lock: the buffer was written meanwhile
            self._timer = None
            try:
                self._write_buffer()
            except (
                OSError,
                OutputError,
            ):  # the tasks stay buffered: the next save or flush writes them or says why not
                pass

    def _write_buffer(self) -> None:
        """Write the buffer as one batch file named after its smallest task; the caller holds the lock."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer:
            return
        first = min(r["task"] for r in self._buffer)
        path = self._file(first)
        self._write_atomic(path, json.dumps({"tasks": self._buffer}, allow_nan=True))
        st = path.stat()  # written by this process: sound, not checked again when read back
        self._sound[path.name] = ((st.st_ino, st.st_size, st.st_mtime_ns), self._buffer)
        self._buffer = []
        self._last_write = time.monotonic()

    def count(self) -> int:
        """Number of tasks saved in readable files so far (buffered tasks not yet written are not counted)."""
        return len(self._saved_tasks())

    def rows(self) -> list[dict[str, Any]]:
        """All rows in canonical task order; every task must have been saved and flushed."""
        saved = self._saved_tasks()
        out: list[dict[str, Any]] = []
        for index in range(self.manifest["tasks"]):
            if index not in saved:
                raise ValueError(f"{self.path} holds no readable record of task {index}.")
            out.extend(saved[index])
        return out

    def _own_files(self) -> list[Path]:
        try:
            if not self.path.is_dir():
                return []
            return [p for p in self.path.iterdir() if _OWN.fullmatch(p.name) and p.is_file() and not p.is_symlink()]
        except OSError:  # the folder removed or moved meanwhile: nothing is saved there any more
            return []

    def remove(self) -> None:
        """Delete the store's files (once ``results.csv`` holds everything), and its folder if that is then empty."""
        for p in self._own_files():
            p.unlink(missing_ok=True)
        try:
            self.path.rmdir()
        except OSError:  # absent, or holds files the store did not write: they stay
            pass
