"""The partial store's batch files: finished tasks are buffered and written together, at most
FLUSH_SECONDS apart, atomically; a file cut short is redone, a format-1 store is still read, and
only the store's own files are ever deleted."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agents.experiments.core import partial
from agents.experiments.core.outputs import OutputError
from agents.experiments.core.partial import ManifestMismatch, PartialStore, manifest_for
from agents.experiments.registry import get_experiment


@pytest.fixture(autouse=True)
def _slow_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first save and flush() write, however slowly a loaded machine runs the test."""
    monkeypatch.setattr(partial, "FLUSH_SECONDS", 60.0)


def _manifest(n_tasks: int) -> dict[str, Any]:
    return manifest_for(get_experiment("gap/privacy").scaled(runs=1, horizon=100), 0, n_tasks)


def _rows(index: int) -> list[dict[str, Any]]:
    return [{"task": index, "value": index / 7}, {"task": index, "value": -index / 3}]


def _batches(store: PartialStore) -> dict[str, list[int]]:
    """File name -> task indices of every batch file in the store."""
    return {p.name: [r["task"] for r in json.loads(p.read_text())["tasks"]] for p in sorted(store.path.glob("0*.json"))}


def _poll(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_tasks_finished_together_are_one_file_named_after_its_smallest_task(tmp_path: Path) -> None:
    store = PartialStore(tmp_path, _manifest(6))
    store.prepare(store.finished())
    store.save(4, 4, 0, _rows(4))  # the first task is written at once
    assert _batches(store) == {"000004.json": [4]}
    for i in (5, 2, 0, 3, 1):  # out of order, as the workers finish them
        store.save(i, i, 0, _rows(i))
    assert _batches(store) == {"000004.json": [4]}  # buffered: less than FLUSH_SECONDS since the last write
    assert store.count() == 1
    store.flush()
    assert _batches(store) == {"000004.json": [4], "000000.json": [5, 2, 0, 3, 1]}
    assert not list(store.path.glob("*.tmp"))
    assert store.count() == 6 and store.finished() == set(range(6))
    assert store.rows() == [row for i in range(6) for row in _rows(i)]  # canonical task order


def test_the_timer_writes_buffered_tasks_when_no_further_task_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partial, "FLUSH_SECONDS", 1.0)
    store = PartialStore(tmp_path, _manifest(3))
    store.prepare(set())
    store.save(0, 0, 0, _rows(0))
    store.save(1, 1, 0, _rows(1))
    assert store.count() == 1
    assert _poll(lambda: store.count() == 2)  # within FLUSH_SECONDS, with no save or flush
    assert _batches(store) == {"000000.json": [0], "000001.json": [1]}
    time.sleep(1.0)
    store.save(2, 2, 0, _rows(2))  # FLUSH_SECONDS after the timer's write: written at once
    assert store.count() == 3


def test_a_task_saved_twice_is_kept_once_and_no_batch_is_overwritten(tmp_path: Path) -> None:
    store = PartialStore(tmp_path, _manifest(4))
    store.prepare(set())
    for i in (1, 2):
        store.save(i, i, 0, _rows(i))
    store.flush()
    for i in (1, 0, 3):  # task 1 again, as a backend that reran it would send it
        store.save(i, i, 0, _rows(i))
    store.flush()
    assert _batches(store) == {"000001.json": [1], "000002.json": [2], "000000.json": [0, 3]}
    assert store.rows() == [row for i in range(4) for row in _rows(i)]


def test_a_changed_batch_is_redone_and_kept_and_prepare_deletes_only_the_stores_files(tmp_path: Path) -> None:
    store = PartialStore(tmp_path, _manifest(5))
    store.prepare(set())
    store.save(0, 0, 0, _rows(0))
    for i in (3, 1, 4):
        store.save(i, i, 0, _rows(i))
    store.flush()
    (store.path / "000001.json").write_text('{"tasks": [{"task": 3, "setting": 3, "ru')  # cut short, or edited
    (store.path / "000002.json.tmp").write_text("{")  # not one of banditlab's scratch files (unrecorded)
    (store.path / "mine.txt").write_text("the user's own file\n")
    theirs = ["000001.json", "000002.json.tmp", "mine.txt"]  # banditlab cannot tell these are its own

    again = PartialStore(tmp_path, _manifest(5))
    assert again.finished() == {0} and again.count() == 1  # the changed batch is not read: its tasks run again
    again.prepare(again.finished())
    assert sorted(p.name for p in again.path.iterdir()) == sorted(["000000.json", "manifest.json", *theirs])
    for i in (1, 2, 3, 4):
        again.save(i, i, 0, _rows(i))
    again.flush()
    assert again.rows() == [row for i in range(5) for row in _rows(i)]
    again.remove()
    assert sorted(p.name for p in again.path.iterdir()) == theirs  # kept as they are
    assert (again.path / "000002.json.tmp").read_text() == "{"


def test_rows_refuses_a_store_missing_a_task(tmp_path: Path) -> None:
    store = PartialStore(tmp_path, _manifest(2))
    store.prepare(set())
    store.save(1, 1, 0, _rows(1))
    with pytest.raises(ValueError, match="no readable record of task 0"):
        store.rows()


def test_a_store_without_a_record_of_its_files_is_refused_and_kept(tmp_path: Path) -> None:
    # A store an older banditlab wrote holds no record of which files are its own: banditlab
    # cannot tell them from the user's, so it neither resumes from nor deletes any of them.
    manifest = _manifest(3)
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "format": 1}))
    for i in (0, 2):  # one file per task, as format 1 wrote them
        (parts / f"{i:06d}.json").write_text(json.dumps({"task": i, "setting": i, "run": 0, "rows": _rows(i)}))
    before = {p.name: p.read_bytes() for p in parts.iterdir()}
    store = PartialStore(tmp_path, manifest)
    with pytest.raises(OutputError, match="never replaces or deletes files it cannot tell are its own"):
        store.prepare(store.finished())
    assert {p.name: p.read_bytes() for p in parts.iterdir()} == before


def test_a_store_of_an_unknown_format_is_refused_in_one_sentence(tmp_path: Path) -> None:
    manifest = _manifest(3)
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "format": 3}))
    (parts / "000000.json").write_text(json.dumps({"tasks": [{"task": 0, "rows": []}]}))
    with pytest.raises(ManifestMismatch, match=r"store format 3, which this version of banditlab cannot read"):
        PartialStore(tmp_path, manifest).finished()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "format": 1, "runs": 2}))
    with pytest.raises(ManifestMismatch, match=r"different run \(runs 2 there, 1 now\)"):
        PartialStore(tmp_path, manifest).finished()


# --- a batch file that is valid JSON but not what the store saved -----------------------------------

RUN = ["run", "gap/regret-eps", "--runs", "1", "--horizon", "100", "--jobs", "1", "--no-progress"]


@pytest.fixture(scope="module")
def kept_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run's folder whose partial store was kept (0.json: task 0; 1.json: tasks 1 and 2)."""
    from agents.experiments.cli import main

    folder = tmp_path_factory.mktemp("kept") / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(partial, "FLUSH_SECONDS", 60.0)
        mp.setattr(PartialStore, "remove", lambda self: None)
        assert main([*RUN, "--out", str(folder)]) == 0
    assert sorted(p.name for p in (folder / "parts").glob("0*.json")) == ["000000.json", "000001.json"]
    return folder


def _first_row(task: dict[str, Any]) -> dict[str, Any]:
    return task["rows"][0]


EDITS = {
    "no-rows": lambda task: task.update(rows=[]),
    "row-dropped": lambda task: task["rows"].pop(),
    "text-for-a-number": lambda task: _first_row(task).update(regret="garbage"),
    "renamed-column": lambda task: _first_row(task).update(zzz=_first_row(task).pop("regret")),
    "number-changed": lambda task: _first_row(task).update(regret=_first_row(task)["regret"] + 1),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_batch_whose_rows_were_changed_is_redone_with_one_line(edit, kept_store, tmp_path, capsys):
    import shutil

    from agents.experiments.cli import main

    out = tmp_path / "out"
    shutil.copytree(kept_store, out)
    batch = out / "parts" / "000001.json"
    data = json.loads(batch.read_text())
    EDITS[edit](data["tasks"][-1])
    batch.write_text(json.dumps(data))
    capsys.readouterr()
    assert main([*RUN, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if str(batch) in x]
    assert len(lines) == 1 and lines[0].endswith("so its tasks are run again."), err
    assert "1 of 3 tasks are already done" in err, err
    assert (out / "results.csv").read_bytes() == (kept_store / "results.csv").read_bytes()


def test_the_check_names_what_is_wrong_with_a_tasks_rows(tmp_path: Path) -> None:
    """Without the sha256 saved with the rows (an older store), the report's checks still apply per task."""
    from agents.experiments.api import task_check

    exp = get_experiment("gap/regret-eps").scaled(runs=1, horizon=100)
    check = task_check(exp)
    rows = [{"setting": 0, "run": 0, "agent": "GAP", "t": t, "regret": 1.0} for t in (10, 100)]
    assert check({"task": 0, "run": 0, "rows": rows}) is None
    assert "the last checkpoint is t = 10" in str(check({"task": 0, "run": 0, "rows": rows[:1]}))
    bad = [rows[0], {**rows[1], "regret": "garbage"}]
    assert "column regret holds 'garbage' on row 2" in str(check({"task": 0, "run": 0, "rows": bad}))
    no_regret = [{k: v for k, v in row.items() if k != "regret"} for row in rows]
    assert "lack the columns ['regret']" in str(check({"task": 0, "run": 0, "rows": no_regret}))
