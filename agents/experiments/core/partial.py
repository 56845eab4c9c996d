"""The partial store: every finished task's rows, saved as they arrive, so a sweep can resume.

Layout, under an experiment's output folder ``DIR``::

    DIR/parts/manifest.json   experiment id, runs, horizon, seed, data, number of tasks, fingerprint,
                              then the record of every file the store wrote there, with its sha256
    DIR/parts/000017.json     {"tasks": [{"task": 17, "setting": ..., "run": ..., "rows": [...]}, ...]}

Finished tasks are buffered and written together as one batch file, named after its smallest
task index, at most every :data:`FLUSH_SECONDS`: by :meth:`PartialStore.save` when that long has
passed since the last write, by a timer otherwise (so a lull after a task does not keep it in
memory), and by :meth:`PartialStore.flush`, which the sweep calls when it ends, is interrupted or
fails. Creating a file costs milliseconds on some file systems, about as long as a small task
takes, so one file per task could double a sweep's time. A SIGKILL (or a power loss) therefore loses at
most the tasks finished in the last :data:`FLUSH_SECONDS`; they are run again on resume.

**What is banditlab's.** ``manifest.json`` is a JSON line with the sweep's identity followed by
one JSON line per file written: the names (a batch file and the scratch file it is written to
first, ``000017.json.<8 hex>.tmp``) and the sha256 of their bytes, appended *before* the scratch
file is created. Each line ends with a hash chained over every line before it, so an edit
anywhere in the manifest shows. The store reads, replaces or deletes only files the manifest
names with the hash they still have: a file in ``parts/`` that banditlab did not write, or that
changed since (edited, or cut short by a power loss), is never read, replaced or deleted; the
sweep runs its tasks again, :attr:`PartialStore.redone` names it in one line, and a new batch
goes under another name (``000017-1.json``). A scratch file is banditlab's only if it is recorded
and complete (a run killed while it wrote one leaves a file that is then kept). A
``manifest.json`` that banditlab did not write, or that changed since, is kept too, and the run is
refused with one sentence (:class:`~agents.experiments.core.outputs.OutputError`, or
:class:`ManifestMismatch` naming the other store's format or options), even with ``--fresh``: the
store's record cannot be written without replacing it. So a store an earlier banditlab wrote,
which kept no record, is not resumed, and none of it is deleted.

Each batch file is written to a scratch file and linked to its name (never over an existing
file), so a crash never leaves half a file. Each task's record holds the sha256 of its rows, and a
``check`` given to the store (the checks ``banditlab report`` applies to ``results.csv``, on the
task's rows) is applied to every task read back: a batch file of banditlab's whose task fails it
cannot be used, its tasks are redone, and :attr:`PartialStore.redone` says so. JSON keeps Python
floats exactly (shortest round-trip ``repr``), so rows read back from the store equal the rows the
task returned; other values are stored as the text ``results.csv`` shows for them (numpy scalars
as Python numbers). ``results.csv``, always assembled from the store in task order, is therefore
the same byte for byte whether a sweep ran at once, locally, on Dask, or was resumed.

A store saved under another manifest (other runs, horizon, seed, data or settings) is never
mixed with new results: :meth:`PartialStore.finished` raises :class:`ManifestMismatch`, and
``--fresh`` discards it (banditlab's own files only). A store of a format this version does not
know is refused.

:meth:`PartialStore.prepare` and :meth:`PartialStore.remove` (once ``results.csv`` holds every
task) delete the store's own unedited files, the manifest last, and the folder only once it is
empty; the output folder (:mod:`agents.experiments.core.outputs`) makes sure ``parts/`` is
banditlab's before it is used. Its files are created as the output folder creates files
(:func:`~agents.experiments.core.outputs.write_exclusive`), never through a link: a link under one
of its names, or a ``parts`` that is a link, is refused with one sentence
(:class:`~agents.experiments.core.outputs.OutputError`) and whatever it points to is left alone.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import secrets
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
MANIFEST = "manifest.json"
#: The name of a batch file: its smallest task, and a number if a file not banditlab's had that name.
_BATCH = re.compile(r"[0-9]{6}(?:-[0-9]+)?\.json")
#: The names the store writes (or an earlier version wrote): a batch file, the manifest, and their scratch files.
_OWN = re.compile(r"(?:[0-9]{6}(?:-[0-9]+)?|manifest)\.json(?:(?:\.[0-9a-f]{8})?\.tmp)?")
#: What to do instead of writing through a link, ending the sentence that refuses it.
_INSTEAD = "choose another --out"
#: errno values of a file system without hard links (a batch file is then renamed into place).
_NO_LINKS = (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP)

_Record = dict[str, Any]
#: A file's (inode, size, mtime) and its sha256: while the first is unchanged, so is the second.
_Seen = tuple[tuple[int, int, int], str]


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


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _chained(chain: str, payload: dict[str, Any]) -> str:
    """The hash that ends a manifest line: over the previous line's and this line's payload."""
    return _sha256((chain + json.dumps(payload)).encode())


def _line(chain: str, payload: dict[str, Any]) -> tuple[str, bytes]:
    """A manifest line for ``payload`` after the line ending with ``chain``: its own chain and its bytes."""
    new = _chained(chain, payload)
    return new, (json.dumps({**payload, "chain": new}) + "\n").encode()


def _manifest_lines(data: bytes) -> tuple[list[dict[str, Any]], str] | None:
    """The payloads of a manifest the store wrote, exactly as it wrote them, and its last chain; else None."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    if not text.endswith("\n"):
        return None
    chain, payloads = "", []
    for line in text[:-1].split("\n"):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or json.dumps(obj) != line:
            return None
        payload = {k: v for k, v in obj.items() if k != "chain"}
        chain = _chained(chain, payload)
        if obj.get("chain") != chain:
            return None
        payloads.append(payload)
    if not payloads or not all(_is_entry(p) for p in payloads[1:]):
        return None
    return payloads, chain


def _is_entry(payload: dict[str, Any]) -> bool:
    files, sha = payload.get("files"), payload.get("sha256")
    return isinstance(files, list) and all(isinstance(n, str) for n in files) and isinstance(sha, str)


def _read(path: Path) -> tuple[bytes, tuple[int, int, int]] | None:
    """A plain file's bytes and (inode, size, mtime), read without following a link; None if it cannot be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
        return data, (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    finally:
        os.close(fd)


def _unreadable(path: Path) -> str | None:
    """Why the file ``path`` cannot be opened for reading (e.g. ``Permission denied``), or None if it can.

    A link (which the store never reads through) or a file gone meanwhile is not this kind of problem: None.
    """
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOENT):
            return None
        return exc.strerror or type(exc).__name__
    return None


def _key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _batch(name: str, data: bytes, check: Check | None = None) -> tuple[list[_Record] | None, str]:
    """The task records of a batch file's bytes (or a format-1 task file's), or None and why they cannot be used.

    A file cut short, not JSON, of another shape, or not named after its smallest task cannot be
    read; nor can one with a task whose rows are not a non-empty list of objects, differ from the
    sha256 saved with them, or fail ``check``.
    """
    try:
        data = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        return None, "it is not a complete JSON file"
    if not isinstance(data, dict):
        return None, "it is not a batch of tasks"
    records = data.get("tasks") if "tasks" in data else [data]  # format 1: one task per file
    if not isinstance(records, list) or not records or not all(_is_record(r) for r in records):
        return None, "it is not a batch of tasks"
    if min(r["task"] for r in records) != int(name[:6]):
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
        #: One line per file found unusable or not banditlab's by :meth:`finished`: its tasks are run again.
        self.redone: list[str] = []
        #: The sha256 of every file the store recorded writing, by name (from the manifest, and this run's writes).
        self._recorded: dict[str, set[str]] = {}
        #: The chain ending the manifest on disk and its (inode, size, mtime); None while it has none of its own.
        self._chain: str | None = None
        self._manifest_key: tuple[int, int, int] | None = None
        #: Files read (or written) by name: what they were when last seen, and their task records if sound.
        self._seen: dict[str, _Seen] = {}
        self._sound: dict[str, tuple[tuple[int, int, int], list[_Record]]] = {}
        self._lock = threading.Lock()
        self._buffer: list[_Record] = []
        self._saved: set[int] = set()  # tasks written or buffered since prepare(), and the kept ones
        self._last_write = -math.inf  # the first finished task is written at once
        self._timer: threading.Timer | None = None

    # --- what is banditlab's ----------------------------------------------------------------------

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

    def _load(self) -> dict[str, Any] | None:
        """Read the manifest's identity and record (None if there is none); refuse one that is not banditlab's.

        Raises :class:`ManifestMismatch` or :class:`~agents.experiments.core.outputs.OutputError`
        (one sentence) if ``manifest.json`` exists but is not exactly as the store wrote it.
        """
        self._recorded, self._chain, self._manifest_key = {}, None, None
        path = self.path / MANIFEST
        if not (path.exists() or path.is_symlink()):
            return None
        got = _read(path)
        if got is None and (problem := _unreadable(path)) is not None:
            raise OutputError(
                f"{path} cannot be read ({problem}), so banditlab cannot tell which files in {self.path} are its own "
                f"(it keeps their record there) and never replaces or deletes them; make it readable, or move "
                f"{self.path} away or {_INSTEAD}."
            )
        lines = _manifest_lines(got[0]) if got is not None else None
        if got is None or lines is None:
            raise self._not_own_manifest(got[0] if got is not None else b"")
        payloads, self._chain = lines
        self._manifest_key = got[1]
        for entry in payloads[1:]:
            for name in entry["files"]:
                self._recorded.setdefault(name, set()).add(entry["sha256"])
        return payloads[0]

    def _not_own_manifest(self, data: bytes) -> Exception:
        """The sentence refusing a ``manifest.json`` the store did not write (or that changed since)."""
        try:
            old = json.loads(data)
        except (ValueError, RecursionError):
            old = None
        keep = (
            f"banditlab never replaces or deletes files it cannot tell are its own; move {self.path} away or "
            f"{_INSTEAD}."
        )
        if isinstance(old, dict) and "format" in old and old["format"] not in _READABLE_FORMATS:
            return ManifestMismatch(
                f"{self.path} holds partial results in store format {old['format']!r}, which this version of "
                f"banditlab cannot read, and {keep}"
            )
        if isinstance(old, dict) and "fingerprint" in old and {**old, "format": FORMAT} != self.manifest:
            return ManifestMismatch(
                f"{self.path} holds partial results of a different run ({command_difference(old, self.manifest)}) "
                f"without banditlab's record of its files, and {keep}"
            )
        return OutputError(
            f"{self.path / MANIFEST} was not written by this version of banditlab or has changed since (it holds "
            f"the record of the files banditlab wrote in {self.path}), so it is kept and {keep}"
        )

    def _look(self, path: Path) -> tuple[bool, str | None]:
        """Whether ``path`` is banditlab's own, unchanged file (recorded with the sha256 it has), and that sha256."""
        hashes = self._recorded.get(path.name)
        if not hashes:
            return False, None
        try:
            key = _key(path.lstat())
        except OSError:
            return False, None
        seen = self._seen.get(path.name)
        if seen is None or seen[0] != key:
            got = _read(path)
            if got is None:
                return False, None
            seen = (got[1], _sha256(got[0]))
            self._seen[path.name] = seen
        return seen[1] in hashes, seen[1]

    def _records(self, path: Path) -> tuple[list[_Record] | None, str]:
        """:func:`_batch` of the store's own batch file ``path``, with its check, remembered while unchanged."""
        try:
            known = self._sound.get(path.name)
            if known is not None and known[0] == _key(path.lstat()):
                return known[1], ""
        except OSError:
            return None, "it cannot be read"
        got = _read(path)
        if got is None:
            return None, "it cannot be read"
        data, key = got
        if _sha256(data) not in self._recorded.get(path.name, ()):
            return None, "it changed since banditlab wrote it"
        records, why = _batch(path.name, data, self.check)
        if records is not None:
            self._sound[path.name] = (key, records)
        return records, why

    def _entries(self) -> list[Path]:
        """The plain files in ``parts`` under the store's names, but for the manifest."""
        try:
            found = sorted(p for p in self.path.iterdir() if _OWN.fullmatch(p.name) and p.name != MANIFEST)
        except OSError:  # absent, or removed or moved meanwhile: nothing is saved there any more
            return []
        plain = []
        for p in found:
            try:
                if stat.S_ISREG(p.lstat().st_mode):
                    plain.append(p)
            except OSError:  # removed meanwhile
                pass
        return plain

    def _own_files(self) -> list[Path]:
        """The store's own, unchanged files in ``parts`` (batch and scratch files), the manifest aside."""
        return [p for p in self._entries() if self._look(p)[0]]

    def _batch_files(self) -> list[Path]:
        return [p for p in self._own_files() if _BATCH.fullmatch(p.name)]

    def _not_own(self, path: Path) -> str:
        """The line saying that ``path`` (not banditlab's, or changed since) is kept and not read."""
        if (problem := _unreadable(path)) is not None:
            return f"{path} cannot be read ({problem}): it is kept as it is, so any tasks it holds are run again."
        if not _BATCH.fullmatch(path.name):
            return f"{path} is not a scratch file banditlab can show it wrote, so it is kept as it is."
        if path.name in self._recorded:
            return (
                f"{path} has changed since banditlab wrote it (edited, or cut short by a power loss): it is kept as it "
                "is and not read, so its tasks are run again."
            )
        return (
            f"{path} was not written by banditlab: it is kept as it is and not read, so any tasks it holds are run "
            "again."
        )

    def _saved_tasks(self, report: bool = False) -> dict[int, list[dict[str, Any]]]:
        """The rows of every task saved in a sound file of banditlab's, by task index.

        With ``report``, :attr:`redone` gets a line for each file left out: banditlab's own that
        cannot be used, and any other under the store's names, which is kept as it is.
        """
        found: dict[int, list[dict[str, Any]]] = {}
        for path in self._entries():
            if not self._look(path)[0]:
                if report:
                    self.redone.append(self._not_own(path))
                continue
            if not _BATCH.fullmatch(path.name):
                continue  # a scratch file of a write a crash interrupted: prepare() deletes it
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
        :class:`~agents.experiments.core.outputs.OutputError` if a link was planted in the store or
        its ``manifest.json`` is not banditlab's. :attr:`redone` names the files left out.
        """
        self.check_no_links()
        self.redone = []
        if not self.path.is_dir():
            return set()
        old = self._load()
        found = self._saved_tasks(report=True)  # lines for every file kept and not read, with --fresh too
        if fresh or not found:
            return set()
        assert old is not None  # files of the store's own are recorded in its manifest
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
        return set(found)

    # --- writing ------------------------------------------------------------------------------------

    def _append(self, payload: dict[str, Any]) -> None:
        """Append a line recording ``payload`` to the store's own manifest, as it last left it.

        OutputError if the manifest changed since (someone edited it); the line is taken back if
        writing it fails (a full disk), so the manifest stays exactly as the store wrote it.
        """
        assert self._chain is not None
        path = self.path / MANIFEST
        check_no_link(self.path, self.root, _INSTEAD)
        chain, line = _line(self._chain, payload)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            fd = -1
        try:
            st = os.fstat(fd) if fd >= 0 else None
            if st is None or not stat.S_ISREG(st.st_mode) or _key(st) != self._manifest_key:
                raise OutputError(
                    f"{path} changed while banditlab was writing {self.path}, so it is kept and banditlab no longer "
                    f"records its files there; move {self.path} away or {_INSTEAD}."
                )
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
            except BaseException:  # e.g. a full disk: the manifest is put back as the store wrote it
                try:
                    os.ftruncate(fd, st.st_size)
                    self._manifest_key = _key(os.fstat(fd))
                except OSError:
                    pass
                raise
            self._manifest_key = _key(os.fstat(fd))
        finally:
            if fd >= 0:
                os.close(fd)
        self._chain = chain
        for name in payload["files"]:
            self._recorded.setdefault(name, set()).add(payload["sha256"])

    def _scratch(self, name: str) -> Path:
        """A new scratch file name for ``name``, ``NAME.<8 hex>.tmp``, not taken."""
        while True:
            path = self.path / f"{name}.{secrets.token_hex(4)}.tmp"
            if not (path.exists() or path.is_symlink()):
                return path

    def _write_scratch(self, tmp: Path, final: Path, data: bytes) -> None:
        """Create ``tmp`` with ``data`` (never through a link); an OSError names ``final``, the file it is for."""
        try:
            write_exclusive(tmp, data, self.root, _INSTEAD)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(final)) from None

    def _free(self, first: int) -> Path:
        """The name of a new batch file whose smallest task is ``first``: ``NNNNNN.json``, else ``NNNNNN-K.json``."""
        path, k = self._file(first), 0
        while path.exists() or path.is_symlink():
            k += 1
            path = self.path / f"{first:06d}-{k}.json"
        return path

    def _file(self, index: int) -> Path:
        return self.path / f"{index:06d}.json"

    def prepare(self, keep: set[int]) -> None:
        """Create the store, keep the tasks ``keep`` (from :meth:`finished`), drop its other files.

        Of banditlab's own unchanged files, a batch file is kept if all its tasks are kept; the
        others (scratch files, unusable files) go. Any other file is kept as it is. OutputError,
        before anything is written, if a link was planted in the store or its manifest is not banditlab's.
        """
        self.check_no_links()
        self.path.mkdir(parents=True, exist_ok=True)
        self._load()
        kept: list[tuple[str, str]] = []
        for p in self._entries():
            own, sha = self._look(p)
            if not own:
                continue
            records = self._records(p)[0] if _BATCH.fullmatch(p.name) else None
            if records is not None and {r["task"] for r in records} <= keep:
                assert sha is not None
                kept.append((p.name, sha))
            else:
                p.unlink()
        # The new manifest records the kept files; a scratch file for it is recorded in the old one first.
        chain, text = "", b""
        for payload in [self.manifest, *({"files": [name], "sha256": sha} for name, sha in kept)]:
            chain, line = _line(chain, payload)
            text += line
        target = self.path / MANIFEST
        tmp = self._scratch(MANIFEST)
        if self._chain is not None:
            self._append({"files": [tmp.name], "sha256": _sha256(text)})
        self._write_scratch(tmp, target, text)
        if not self._place(tmp, target, replace=self._chain is not None):
            os.unlink(tmp)  # created just now by this process
            raise OutputError(
                f"{target} appeared while banditlab was making {self.path}, so it is kept; move it away or {_INSTEAD}."
            )
        self._chain, self._manifest_key = chain, _key(target.stat())
        self._recorded = {name: {sha} for name, sha in kept}
        with self._lock:
            self._buffer = []
            self._saved = set(keep)

    def _place(self, tmp: Path, target: Path, replace: bool = False) -> bool:
        """Give the scratch file ``tmp`` the name ``target``; False if something else took that name meanwhile.

        A new name is made by a hard link (which never replaces anything), ``tmp`` then removed;
        ``replace`` replaces the store's own manifest, checked unchanged.
        """
        if replace:
            if _key(target.lstat()) != self._manifest_key:
                os.unlink(tmp)  # recorded, and not needed any more
                raise OutputError(
                    f"{target} changed while banditlab was writing {self.path}, so it is kept; move {self.path} away "
                    f"or {_INSTEAD}."
                )
            os.replace(tmp, target)
            return True
        try:
            os.link(tmp, target, follow_symlinks=False)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINKS or target.exists() or target.is_symlink():
                raise
            os.replace(tmp, target)  # a file system without hard links
            return True
        os.unlink(tmp)
        return True

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
        """Write the buffer as one batch file named after its smallest task; the caller holds the lock.

        The file and its scratch file are recorded in the manifest before the scratch file is created.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer:
            return
        first = min(r["task"] for r in self._buffer)
        data = json.dumps({"tasks": self._buffer}, allow_nan=True).encode()
        sha = _sha256(data)
        path = self._free(first)
        tmp = self._scratch(path.name)
        self._append({"files": [path.name, tmp.name], "sha256": sha})
        self._write_scratch(tmp, path, data)
        while not self._place(tmp, path):  # a file that is not banditlab's took the name meanwhile: another one
            path = self._free(first)
            self._append({"files": [path.name], "sha256": sha})
        key = _key(path.stat())  # written by this process: sound, not checked again when read back
        self._seen[path.name] = (key, sha)
        self._sound[path.name] = (key, self._buffer)
        self._buffer = []
        self._last_write = time.monotonic()

    # --- reading back -------------------------------------------------------------------------------

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

    def remove(self) -> None:
        """Delete the store's own unchanged files (once ``results.csv`` holds everything), the manifest last.

        The folder goes too if it is then empty: files that are not banditlab's, or that changed
        since it wrote them, stay, and so do the manifest and the folder with them.
        """
        if self._chain is None:  # not prepared by this store: its own files are the ones its manifest records
            try:
                self._load()
            except (ManifestMismatch, OutputError):  # not banditlab's: nothing there is known to be its own
                return
        for p in self._own_files():
            p.unlink(missing_ok=True)
        manifest = self.path / MANIFEST
        try:
            unchanged = self._manifest_key is not None and _key(manifest.lstat()) == self._manifest_key
        except OSError:
            unchanged = False
        if unchanged:
            manifest.unlink(missing_ok=True)
        try:
            self.path.rmdir()
        except OSError:  # absent, or holds files the store did not write: they stay
            pass
