"""The output folder of a run: banditlab writes, replaces and deletes only files it wrote and recorded.

Every file banditlab writes into an output folder ``DIR`` (``--out`` of ``banditlab run``, the
folder of ``banditlab report``) is recorded, with its sha256, in ``DIR/.banditlab.json``::

    {"written_by": "banditlab", "format": 1,
     "command": {"experiment": ..., "runs": ..., "seed": ..., "fingerprint": ...},
     "files": {"results.csv": "<sha256>", "meta.json": "<sha256>", ...},
     "writing": {},
     "folders": ["parts"]}

``command`` identifies the run that last wrote there (the manifest of
:func:`~agents.experiments.core.partial.manifest_for`); ``folders`` are folders banditlab made
(the partial store ``parts/``), inside which it deletes only files it names itself. The rules:

* A file banditlab did not record, or recorded but that has been edited since (its hash differs),
  is never replaced or deleted: the run is refused, with one sentence naming it.
* A folder that is not empty and that no ``banditlab run`` wrote to is refused unless ``force``
  (``--force``): then banditlab writes its files beside the others, under the rule above (and the
  folder counts as banditlab's from then on).
* A folder holding the results of another command (other experiment, scale, seed, agents, data
  or settings) is refused unless ``force``: then banditlab replaces its own earlier files.

When a run of another command takes a folder (``force``), banditlab first deletes that
command's outputs (its own files, recorded and unedited; an edited one is refused as above), then
records the new command: a run stopped at any point never leaves an earlier command's summary,
figure or ``meta.json`` (seed, scale) beside its own results. A run writes ``summary.md`` last.

Every file banditlab creates there (scratch files, the partial store's files, the record) is
created by :func:`create_exclusive`: created at that moment, never opened through a link, in a
folder that is not a link; a link someone planted under a name banditlab writes is refused with
one sentence, and the file it points to is never written. Outputs are written to a scratch file
in a private scratch folder ``.banditlab-tmp-*`` (made at that moment, mode 0700, so no other user
can swap the file for a link while a library writes it by name) and renamed into place. The new
hash is recorded under ``writing`` before the rename and moved to ``files`` after it, so a run
killed at any point leaves a folder the next run still recognizes as banditlab's. A scratch
folder left by a killed run is ignored, not deleted (it is not recorded); delete it at will.

One process at a time writes a folder: :meth:`OutputFolder.open` locks it (``flock`` on the
folder itself through :func:`filelock.lock_descriptor`, so no lock file is added to the folder;
the kernel releases the lock when the process ends, however it ends) until
:meth:`OutputFolder.close`, and a second ``banditlab run`` or ``report`` on the folder meanwhile is
refused with one sentence.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bandit_envs.validation import PATH_SHOWN, shorten
from bandit_envs.validation import user_path as user_path  # its home; imported from here by the CLI too

RECORD = ".banditlab.json"
#: Prefix of scratch files (a file being written, renamed into place once complete).
SCRATCH = ".banditlab-tmp-"
FORMAT = 1
#: errno values of a file that cannot be written for want of space (a full disk, a quota, a
#: file-size limit): left to the command, which says so in its own sentence and exit status.
NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
#: Command fields compared one by one for a readable sentence (see :func:`command_difference`).
FIELDS = ("experiment", "runs", "horizon", "seed", "data", "agents", "overrides", "tasks")


class OutputError(ValueError):
    """An output folder banditlab may not write to; one sentence saying which file and what to do.

    A path in the sentence longer than :data:`~bandit_envs.validation.PATH_SHOWN` characters is cut
    to its first ones and its length (a 5,000-character ``--out`` is not echoed whole).
    """

    def __str__(self) -> str:
        return re.sub(rf"\S{{{PATH_SHOWN + 1},}}", lambda m: shorten(m.group(), PATH_SHOWN), super().__str__())


def command_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """How two command identities differ, e.g. ``runs 1 there, 2 now; tasks 27 there, 54 now``."""
    diffs = [f"{k} {old.get(k)!r} there, {new.get(k)!r} now" for k in FIELDS if old.get(k) != new.get(k)]
    return "; ".join(diffs) or "the experiment's settings, agents or options differ"


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _problem(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _first_file_above(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` if it is not a folder (``path`` then cannot be one)."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def folder_argument(text: str, option: str = "--out") -> Path:
    """A folder given on the command line (argparse ``type``), ``~`` expanded (:func:`user_path`).

    An empty one is refused: ``Path("")`` is the current folder.
    """
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError(f"{option} must name a folder, got {text!r}")
    return user_path(text)


def check_folder_path(path: Path, option: str, instead: str = "choose a folder") -> None:
    """OutputError if ``path`` is a file or lies under a file (so it can never be a folder).

    The sentence reads ``{option} {path} is a file, not a folder; {instead}.``
    """
    try:
        exists = path.exists()
        above = _first_file_above(path)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise OutputError(f"{option} {path} cannot be a folder ({_problem(exc)}); {instead}.") from None
    if exists and not path.is_dir():
        raise OutputError(f"{option} {path} is a file, not a folder; {instead}.")
    if above is not None and not exists:
        raise OutputError(f"{option} {path} lies under {above}, which is a file, not a folder; {instead}.")


def create_exclusive(path: Path) -> int:
    """A descriptor open for writing on the new file ``path``, created by this call.

    Raises FileExistsError if anything has that name, a link (even a dangling one) included: no
    file is ever opened through a link, so a link planted under a name banditlab writes never
    makes it write elsewhere.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o666)


def check_no_link(folder: Path, root: Path, instead: str) -> None:
    """OutputError if ``folder`` or a folder between ``root`` and it is a link (``root`` itself may be one).

    The sentence ends with ``instead`` (what to do, e.g. ``choose another --out``).
    """
    for part in [folder, *folder.parents]:
        if part == root or root not in part.parents:
            return
        if part.is_symlink():
            raise OutputError(
                f"{part} is a link, and banditlab writes only into folders it made, never through a link; move it "
                f"away or {instead}."
            )


def write_exclusive(path: Path, data: bytes, root: Path, instead: str) -> None:
    """Write ``data`` to the new file ``path`` under the folder ``root`` (see :func:`create_exclusive`).

    OutputError (one sentence ending with ``instead``) if something already has that name or a
    folder on the way is a link; the file is removed again if writing it fails.
    """
    check_no_link(path.parent, root, instead)
    try:
        fd = create_exclusive(path)
    except FileExistsError:
        what = "a link" if path.is_symlink() else "something banditlab did not expect"
        raise OutputError(
            f"{path} is {what}, and banditlab writes only files it creates itself, never through a link; move it "
            f"away or {instead}."
        ) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _scratch(folder: Path, suffix: str) -> Path:
    """A new, empty scratch file ``suffix`` in a new private folder ``.banditlab-tmp-*`` of ``folder``.

    The private folder is made by this call (``mkdir`` never follows a link) with mode 0700, so
    no other user can put anything in it: whatever writes the scratch file by its name (pandas,
    matplotlib) writes this file and nothing else, even in an output folder others can write to.
    :func:`_discard` removes both.
    """
    while True:
        private = folder / f"{SCRATCH}{secrets.token_hex(6)}"
        try:
            os.mkdir(private, 0o700)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        except BaseException:  # a stop signal's KeyboardInterrupt right after mkdir returned: the folder is ours
            with contextlib.suppress(OSError):
                private.rmdir()
            raise
        path = private / suffix
        try:
            os.close(create_exclusive(path))
        except BaseException:
            _discard(path)
            raise
        return path


def _discard(scratch: Path) -> None:
    """Remove the scratch file ``scratch`` (if still there) and its private folder (see :func:`_scratch`)."""
    with contextlib.suppress(OSError):
        scratch.unlink()
    with contextlib.suppress(OSError):
        scratch.parent.rmdir()


def _is_scratch(name: str) -> bool:
    return name.startswith(SCRATCH)


class OutputFolder:
    """An output folder and banditlab's record of what it wrote there (see the module docstring).

    Open one with :meth:`open`; it creates the folder if needed, checks it can be written and
    locks it until :meth:`close` (or the end of a ``with`` block, or of the process).
    """

    def __init__(self, path: Path, record: dict[str, Any] | None, option: str, lock: int | None = None) -> None:
        self.path = path
        self.option = option
        self._lock = lock
        #: What to do instead, ending the sentences that refuse a file.
        self.instead = "or " + _elsewhere(option)
        #: Whether the folder holds a record, i.e. banditlab wrote here before.
        self.recorded = record is not None
        self.record: dict[str, Any] = record or {
            "written_by": "banditlab",
            "format": FORMAT,
            "command": None,
            "files": {},
            "writing": {},
            "folders": [],
        }

    @classmethod
    def open(cls, path: Path, option: str = "--out", create: bool = True) -> OutputFolder:
        """The output folder at ``path`` (created if ``create``), locked; OutputError if it cannot be one.

        ``option`` names the folder in messages (``--out``, or ``the folder`` of ``report``). A
        folder another process holds open (a run or report under way) is refused.
        """
        path = Path(path)
        check_folder_path(path, option)
        if create:
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                if exc.errno in NO_SPACE:  # the command's sentence for a full disk, and its exit status
                    raise
                if path.is_symlink() and not path.exists():  # mkdir's "File exists" would not say why
                    raise OutputError(
                        f"{option} {path} is a link to {os.readlink(path)}, which does not exist; create that "
                        "folder, or choose another folder."
                    ) from None
                raise OutputError(
                    f"{option} {path} cannot be created ({_problem(exc)}); choose another folder."
                ) from None
        probe = _scratch_name(path)
        try:
            os.close(create_exclusive(probe))
            os.unlink(probe)
        except OSError as exc:  # not made (a FileExistsError: not ours), or made and not removable
            if exc.errno in NO_SPACE:
                raise
            raise OutputError(
                f"{option} {path} is not writable ({_problem(exc)}); choose a folder you can write to."
            ) from None
        except BaseException:  # a stop signal's KeyboardInterrupt, raised right after a call returned
            with contextlib.suppress(OSError):  # the probe, if its exclusive creation got through, is ours
                os.unlink(probe)
            raise
        lock = _lock_folder(path, option)
        try:
            return cls(path, _read_record(path / RECORD, _elsewhere(option)), option, lock)
        except BaseException:
            if lock is not None:
                os.close(lock)
            raise

    def close(self) -> None:
        """Release the folder's lock (the kernel releases it anyway when the process ends)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what is whose ------------------------------------------------------------------------

    def _hashes(self, name: str) -> set[str]:
        return {h for h in (self.record["files"].get(name), self.record["writing"].get(name)) if h}

    def is_ours(self, name: str) -> bool:
        """Whether ``name`` (a file, or a folder banditlab made) may be replaced or deleted by banditlab."""
        target = self.path / name
        if name in self.record["folders"]:
            return target.is_dir() and not target.is_symlink()
        if not target.is_file() or target.is_symlink():
            return False
        hashes = self._hashes(name)
        if not hashes:
            return False
        try:
            digest = sha256_of(target)
        except OSError as exc:  # e.g. its read permission removed: banditlab cannot tell it is unedited
            raise OutputError(
                f"{target} cannot be read ({_problem(exc)}), so banditlab cannot tell whether it is the file it "
                f"wrote, and it never replaces or deletes a file it cannot tell is its own; make it readable, or move "
                f"it away {self.instead}."
            ) from None
        return digest in hashes

    def check_replaceable(self, names: Iterable[str]) -> None:
        """OutputError naming the first of ``names`` that exists and is not banditlab's to replace."""
        for name in names:
            target = self.path / name
            if not (target.exists() or target.is_symlink()) or self.is_ours(name):
                continue
            if self._hashes(name) and (target.is_symlink() or not target.is_file()):
                what = "a link" if target.is_symlink() else "a folder" if target.is_dir() else "not a regular file"
                raise OutputError(
                    f"{target} is {what} now, where banditlab wrote a file, and banditlab never replaces or deletes "
                    f"what it did not write; move it away {self.instead}."
                )
            if self._hashes(name):
                raise OutputError(
                    f"{target} was written by banditlab but has been edited since, so it is yours now and is kept; "
                    f"move it away {self.instead}."
                )
            what = "is a folder banditlab did not make" if target.is_dir() else "was not written by banditlab"
            raise OutputError(
                f"{target} {what} (it has no record of it in {self.path / RECORD}), and banditlab never replaces or "
                f"deletes such files; move it away {self.instead}."
            )

    def foreign_entries(self) -> list[str]:
        """Names in the folder that banditlab did not write (its record and scratch files aside)."""
        names = []
        try:
            entries = os.listdir(self.path)
        except OSError as exc:  # e.g. a folder that may be written but not read (mode 0333)
            raise OutputError(
                f"{self.option} {self.path} cannot be listed ({_problem(exc)}), so banditlab cannot tell which files "
                f"there are its own; make it readable, {self.instead}."
            ) from None
        for entry in sorted(entries):
            if entry == RECORD or _is_scratch(entry):
                continue
            if entry in self.record["folders"] or entry in self.record["files"] or entry in self.record["writing"]:
                continue
            names.append(entry + ("/" if (self.path / entry).is_dir() else ""))
        return names

    def check_may_write(self, command: Mapping[str, Any], force: bool, outputs: Iterable[str]) -> None:
        """Refuse (OutputError) a run of ``command`` writing ``outputs`` here, unless allowed (module docstring).

        Someone else's files are refused unless ``force``, and never replaced; so are the results
        of another command; outputs that exist must be banditlab's own, unedited.
        """
        outputs = list(outputs)
        self.check_replaceable(outputs)  # first: --force would not help there
        foreign = self.foreign_entries()
        made_by_a_run = self.recorded and self.record["command"] is not None  # not only `report` wrote here
        if not made_by_a_run and foreign and not force:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise OutputError(
                f"{self.option} {self.path} already holds files banditlab did not write ({shown}); choose a new or "
                "empty folder, or pass --force to write banditlab's files beside them (it never replaces or deletes "
                "files it did not write)."
            )
        old = self.record["command"]
        if old is not None and old != _plain(command) and not force:
            present = [n for n in outputs if (self.path / n).is_file()]  # saved tasks: see PartialStore
            if present:
                raise OutputError(
                    f"{self.option} {self.path} holds the results of another banditlab command "
                    f"({command_difference(old, command)}); choose another {self.option}, or pass --force to replace "
                    "them."
                )

    # --- writing ------------------------------------------------------------------------------

    def set_command(self, command: Mapping[str, Any], outputs: Iterable[str] = ()) -> None:
        """Record that ``command`` writes here from now on.

        If another command wrote here, its ``outputs`` are deleted first (see :meth:`remove`), so
        none of them is ever taken for an output of ``command``.
        """
        old = self.record["command"]
        if old is not None and old != _plain(command):
            for name in outputs:
                self.remove(name)
        self.record["command"] = _plain(command)
        self._save()

    def claim_folder(self, name: str) -> Path:
        """Record ``name`` as a folder banditlab makes, then make it; its path."""
        if name not in self.record["folders"]:
            self.record["folders"].append(name)
            self._save()
        target = self.path / name
        target.mkdir(exist_ok=True)
        return target

    def release_folder(self, name: str) -> None:
        """Forget the folder ``name`` once banditlab has removed it (kept in the record while it exists)."""
        if name in self.record["folders"] and not (self.path / name).exists():
            self.record["folders"].remove(name)
            self._save()

    def write(self, name: str, produce: Callable[[Path], object]) -> None:
        """Write the file ``name``: ``produce(path)`` writes a scratch file, which then replaces it.

        OutputError if ``name`` exists and is not banditlab's to replace (checked again here, as
        the user may have edited it while the run went on).
        """
        self.check_replaceable([name])
        target = self.path / name
        tmp = _scratch(target.parent, target.name)
        try:
            produce(tmp)
            digest = sha256_of(tmp)
            self.record["writing"][name] = digest
            self._save()
            if target.exists():
                self.check_replaceable([name])
                os.replace(tmp, target)
            else:
                try:  # a link fails if someone created the name meanwhile: never replace their file
                    os.link(tmp, target)
                except FileExistsError:
                    raise OutputError(
                        f"{target} appeared while banditlab was writing it, so it is kept; move it away {self.instead}."
                    ) from None
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP):
                        raise
                    os.replace(tmp, target)  # a file system without hard links
        finally:
            _discard(tmp)
        self.record["files"][name] = digest
        self.record["writing"].pop(name, None)
        self._save()

    def remove(self, name: str) -> None:
        """Delete banditlab's own file ``name`` (if there) and forget it; OutputError if it is not banditlab's.

        The file goes first, then its entry in the record: a run killed in between leaves a record
        naming a file that is not there, never a file of banditlab's that it does not recognize.
        """
        self.check_replaceable([name])
        target = self.path / name
        if target.is_file() and not target.is_symlink():
            target.unlink()
        if name in self.record["files"] or name in self.record["writing"]:
            self.record["files"].pop(name, None)
            self.record["writing"].pop(name, None)
            self._save()

    def write_text(self, name: str, text: str) -> None:
        """Write ``text`` (UTF-8) to the file ``name``; see :meth:`write`."""
        self.write(name, lambda p: p.write_text(text, encoding="utf-8"))

    def _save(self) -> None:
        tmp = _scratch(self.path, RECORD)
        try:
            tmp.write_text(json.dumps(self.record, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, self.path / RECORD)
        finally:
            _discard(tmp)
        self.recorded = True


def _lock_folder(path: Path, option: str) -> int | None:
    """A descriptor of the folder ``path`` holding an exclusive ``flock`` on it (None where it cannot be locked).

    OutputError if another process holds the lock. The lock goes with the descriptor: closing it,
    or the end of the process, releases it. :class:`filelock.FileLock` would need a lock file in
    the folder, a file banditlab did not record; :func:`filelock.lock_descriptor` locks the
    folder's own descriptor with the same primitive.
    """
    from filelock import lock_descriptor  # deferred: ``import agents`` does not need it

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:  # a folder that can be written but not read: it stays unlocked
        return None
    try:
        locked = lock_descriptor(fd, blocking=False)
    except OSError:  # a file system without locks: it stays unlocked
        os.close(fd)
        return None
    if not locked:
        os.close(fd)
        raise OutputError(
            f"{option} {path} is in use by another banditlab process (a run or report is writing there); wait until "
            f"it ends, or {_elsewhere(option)}."
        )
    return fd


def _scratch_name(folder: Path) -> Path:
    return folder / f"{SCRATCH}{secrets.token_hex(6)}-probe"


def _plain(value: Mapping[str, Any]) -> Any:
    """``value`` as it reads back from JSON (tuples become lists), so stored and new commands compare."""
    return json.loads(json.dumps(value, default=str))


def _elsewhere(option: str) -> str:
    return f"choose another {option}" if option.startswith("--") else "report on a copy of the folder"


def _read_record(path: Path, elsewhere: str) -> dict[str, Any] | None:
    """The record in ``path`` (None if absent); OutputError if it is not one (then it is never overwritten)."""
    if not path.exists() and not path.is_symlink():
        return None
    if not stat.S_ISREG(path.lstat().st_mode):
        what = "a link" if path.is_symlink() else "not a plain file"
        raise OutputError(
            f"{path} is {what}, so it is not a record banditlab wrote (banditlab keeps the list of files it wrote "
            f"there in a plain file, never read or written through a link); {elsewhere}."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:  # e.g. its read permission removed
        raise OutputError(
            f"{path} cannot be read ({_problem(exc)}), so banditlab does not know which files in {path.parent} are "
            f"its own (it keeps the list of files it wrote there in it); make it readable, or {elsewhere}."
        ) from None
    except UnicodeDecodeError:
        text = ""
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        record = None
    valid = (
        isinstance(record, dict)
        and record.get("written_by") == "banditlab"
        and record.get("format") == FORMAT
        and (record.get("command") is None or isinstance(record.get("command"), dict))
        and all(isinstance(record.get(k), dict) for k in ("files", "writing"))
        and all(isinstance(v, str) for key in ("files", "writing") for v in record[key].values())
        and isinstance(record.get("folders"), list)
        and all(isinstance(f, str) for f in record["folders"])
    )
    if not valid:
        raise OutputError(
            f"{path} is not a record banditlab can read (banditlab keeps the list of files it wrote there), so "
            f"banditlab does not know which files in {path.parent} are its own; {elsewhere}."
        )
    assert isinstance(record, dict)
    return record
