"""The partial store ``DIR/parts`` deletes and replaces only files banditlab wrote and recorded, unedited.

A file of the user's named like a batch file, a batch file edited by hand and a ``.tmp`` file of
the user's each survive, byte for byte, a resumed run, a ``--fresh`` run and the successful end of
a sweep (which removes ``parts/`` only once nothing else is left in it); each is named in one line,
its tasks are run again, and ``results.csv`` is the uninterrupted run's byte for byte. The sweeps
are stopped with a real SIGINT in a subprocess, as in ``tests/test_faults.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from conftest import saved_tasks
from test_faults import (  # noqa: F401  (fixtures: banditlab, reference)
    TASKS,
    Banditlab,
    _assert_gone,
    _children,
    _command,
    _poll,
    banditlab,
    reference,
)

from agents.experiments.cli import main
from agents.experiments.core import partial
from agents.experiments.core.partial import PartialStore, manifest_for
from agents.experiments.registry import get_experiment

pytestmark = pytest.mark.integration  # real processes stopped by a real signal

NOTES = b"my own notes\n"
MY_TMP = b"tmp\n"


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a sweep stopped by SIGINT (exit 130) with some of its tasks saved in ``parts/``."""
    out = tmp_path_factory.mktemp("stopped") / "out"
    b = Banditlab(*_command(out), cwd=out.parent)
    try:
        batches = lambda: len(list((out / "parts").glob("0*.json")))  # noqa: E731
        _poll(lambda: batches() >= 2 or b.proc.poll() is not None, "two saved batch files")
        assert b.proc.poll() is None, "the sweep finished before it could be interrupted"
        workers = _children(b.proc.pid)
        b.seen |= workers
        os.kill(b.proc.pid, signal.SIGINT)
        code, _, err = b.finish()
        _assert_gone(workers, out)
    finally:
        b.kill_leftovers()
    assert code == 130, err
    return out


def _plant(out: Path) -> tuple[dict[str, bytes], int]:
    """Put the user's files in ``out/parts``; their bytes by name, and the number of tasks the edit loses."""
    parts = out / "parts"
    batches = sorted(parts.glob("0*.json"))
    edited = batches[1]  # a batch file banditlab wrote, edited by hand: one value changed, a key added
    data = json.loads(edited.read_bytes())
    row = data["tasks"][0]["rows"][0]
    column = next(k for k, v in row.items() if isinstance(v, float))
    row[column] += 1.0
    data["my_comment"] = "checked by hand"
    edited.write_text(json.dumps(data))
    free = next(f"{i:06d}.json" for i in range(TASKS - 1, 0, -1) if not (parts / f"{i:06d}.json").exists())
    (parts / free).write_bytes(NOTES)  # a name a batch of the resumed run may want
    (parts / "000777.json").write_bytes(NOTES)
    (parts / "000778.json.tmp").write_bytes(MY_TMP)
    (parts / "manifest.json.tmp").write_bytes(MY_TMP)
    (parts / "readme.txt").write_bytes(NOTES)
    mine = {p.name: p.read_bytes() for p in (edited, parts / free)}
    mine |= {n: (parts / n).read_bytes() for n in ("000777.json", "000778.json.tmp", "manifest.json.tmp", "readme.txt")}
    return mine, len(data["tasks"])


def _assert_kept_and_named(out: Path, mine: dict[str, bytes], err: str) -> None:
    """The user's files are all there, byte for byte, each named in one line; nothing else is left in parts/."""
    parts = out / "parts"
    assert sorted(p.name for p in parts.iterdir()) == sorted(mine), err
    for name, data in mine.items():
        assert (parts / name).read_bytes() == data, name
        if name != "readme.txt":  # not under a name the store writes: not its business
            lines = [x for x in err.splitlines() if str(parts / name) in x]
            assert len(lines) == 1 and "is kept as it is" in lines[0], (name, err)
    assert "Traceback" not in err


@pytest.mark.parametrize("fresh", [False, True], ids=["resume", "fresh"])
def test_users_files_survive_resume_fresh_and_cleanup(fresh, stopped, reference, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    shutil.copytree(stopped, out)
    saved = len(saved_tasks(out / "parts"))
    mine, lost = _plant(out)
    capsys.readouterr()
    assert main([*_command(out), *(["--fresh"] if fresh else [])]) == 0
    err = capsys.readouterr().err
    assert (out / "results.csv").read_bytes() == reference
    _assert_kept_and_named(out, mine, err)
    if fresh:
        assert "Resuming" not in err
    else:
        assert f"Resuming from {out / 'parts'}: {saved - lost} of {TASKS} tasks are already done." in err, err
    edited = next(n for n in mine if n.endswith(".json") and mine[n] != NOTES)
    assert f"{out / 'parts' / edited} has changed since banditlab wrote it" in err

    # And again: the same command finds only the user's files, runs every task and keeps them once more.
    assert main(_command(out)) == 0
    err = capsys.readouterr().err
    assert (out / "results.csv").read_bytes() == reference
    _assert_kept_and_named(out, mine, err)


def test_the_users_files_planted_mid_sweep_survive_its_end_and_take_no_batch_name(banditlab, reference, tmp_path):  # noqa: F811
    """Every batch name the sweep has not used yet is taken by a file of the user's: banditlab writes beside them."""
    out = tmp_path / "out"
    b = banditlab(*_command(out))
    parts = out / "parts"
    _poll(lambda: bool(saved_tasks(parts)) or b.proc.poll() is not None, "the first saved task")
    assert b.proc.poll() is None, "the sweep finished before the files could be planted"
    mine: dict[str, bytes] = {}
    for name in [f"{i:06d}.json" for i in range(TASKS)] + ["000778.json.tmp", "manifest.json.tmp"]:
        try:
            with (parts / name).open("xb") as f:  # never over a file banditlab wrote
                f.write(NOTES)
            mine[name] = NOTES
        except FileExistsError:
            pass
    assert b.proc.poll() is None, "the sweep finished while the files were planted"
    code, _, err = b.finish()
    assert code == 0, err
    assert (out / "results.csv").read_bytes() == reference
    assert sorted(p.name for p in parts.iterdir()) == sorted(mine)  # banditlab's own files are gone
    assert all((parts / name).read_bytes() == data for name, data in mine.items())
    assert "Traceback" not in err


def test_an_edited_manifest_is_kept_and_the_run_refused_in_one_sentence(stopped, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(stopped, out)
    manifest = out / "parts" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"runs": 20', b'"runs":  20', 1))
    before = {p.name: p.read_bytes() for p in (out / "parts").iterdir()}
    for extra in ([], ["--fresh"]):
        capsys.readouterr()
        assert main([*_command(out), *extra]) == 2, extra
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and f"{manifest} was not written by this version of banditlab" in lines[0], err
        assert {p.name: p.read_bytes() for p in (out / "parts").iterdir()} == before
        assert not (out / "results.csv").exists()


# --- scratch files: banditlab's own only when it recorded them, complete ---------------------------------


def _rows(index: int) -> list[dict[str, float]]:
    return [{"task": index, "value": index / 7}]


def test_a_scratch_file_is_deleted_only_if_recorded_and_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(partial, "FLUSH_SECONDS", 60.0)
    manifest = manifest_for(get_experiment("gap/privacy").scaled(runs=1, horizon=100), 0, 3)
    store = PartialStore(tmp_path, manifest)
    store.prepare(store.finished())
    store.save(0, 0, 0, _rows(0))

    def killed(*args: object, **kwargs: object) -> bool:
        raise KeyboardInterrupt  # as a kill between a scratch file's write and its rename

    store.save(1, 1, 0, _rows(1))
    with monkeypatch.context() as mp:
        mp.setattr(PartialStore, "_place", killed)
        for _ in range(2):  # two scratch files, each recorded before it was written
            with pytest.raises(KeyboardInterrupt):
                store.flush()
    parts = tmp_path / "parts"
    complete, cut = sorted(parts.glob("000001.json.*.tmp"))
    cut.write_bytes(cut.read_bytes()[:10])  # recorded, but cut short since: kept
    copy = parts / complete.name.replace("000001", "000002")
    copy.write_bytes(complete.read_bytes())  # the same bytes under a name banditlab never recorded: kept
    (parts / "000002.json.tmp").write_bytes(MY_TMP)  # the user's, under the name earlier versions used: kept
    kept = {p.name: p.read_bytes() for p in (cut, copy, parts / "000002.json.tmp")}

    again = PartialStore(tmp_path, manifest)
    assert again.finished() == {0}
    assert sorted(line.split()[0] for line in again.redone) == sorted(str(parts / name) for name in kept)
    again.prepare({0})
    assert not complete.exists()  # banditlab's own, complete: deleted
    for i in (1, 2):
        again.save(i, i, 0, _rows(i))
    again.flush()
    assert again.rows() == [row for i in range(3) for row in _rows(i)]
    again.remove()
    assert {p.name: p.read_bytes() for p in parts.iterdir()} == kept
