"""Output folders others can write to: a link planted under a name banditlab writes is refused in one
sentence and what it points to is left byte for byte; a second process on a folder in use is refused
in one sentence, and the lock dies with the process holding it; ``report`` refuses results that miss,
repeat or garble rows of the scale in meta.json.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pandas as pd
import pytest
from conftest import saved_tasks
from test_cli_outputs import EID, SMALL, _sentence, made  # noqa: F401
from test_faults import EXPERIMENT, _assert_gone, _children, _poll, banditlab  # noqa: F401

from agents.experiments.cli import main, run_experiment
from agents.experiments.core import backends
from agents.experiments.core.results import ResultsError, check_complete
from agents.experiments.core.runner import run_task
from agents.experiments.registry import get_experiment

#: A user agent of the interrupted runs (the interruption itself: :func:`interrupted`).
AGENT = """
from agents.stochastic.greedy import EpsilonGreedy


def factory(env, setting, seed):
    return EpsilonGreedy(env.action_space.n, seed=seed)
"""


@pytest.fixture
def interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The command of a run interrupted after its first task (of 3), saved in ``tmp_path/out/parts``."""
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    argv = ["run", EID, *SMALL, "--agent", f"{agent}:factory", "--out", str(tmp_path / "out")]
    done: list[object] = []

    def ctrl_c_after_one_task(task: object) -> object:  # as Ctrl-C in banditlab's own loop (SMALL: --jobs 1)
        if done:
            raise KeyboardInterrupt
        done.append(task)
        return run_task(task)

    with monkeypatch.context() as patch:
        patch.setattr(backends, "run_task", ctrl_c_after_one_task)
        assert main(argv) == 130
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "out" / "parts").iterdir()) == ["000000.json", "manifest.json"]
    return argv


def _contents(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file's under a folder, by relative name."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _plant(planted: Path, outside: Path) -> Path:
    """Replace ``planted`` (if it exists) by a link to a file or folder in ``outside``; the link's target."""
    target = outside / "target"
    if planted.is_dir():
        shutil.copytree(planted, target)  # what banditlab would resume from, had it followed the link
        (target / "mine.txt").write_text("someone else's file\n")
        shutil.rmtree(planted)
    elif planted.name == ".banditlab.json":
        shutil.copy(planted, target)  # a valid record, read through the link
        planted.unlink()
    else:
        target.write_text("someone else's file\n")
        planted.unlink(missing_ok=True)
    planted.symlink_to(target)
    return target


@pytest.mark.parametrize(
    "name",
    [
        "parts/manifest.json.tmp",
        "parts/000000.json.tmp",
        "parts/000001.json.tmp",
        "parts/000001.json",
        "parts/000000.json",
        "parts/manifest.json",
        "parts",
        ".banditlab.json",
        "results.csv",
        "meta.json",
        "summary.md",
        "figure.png",
    ],
)
def test_a_link_planted_in_an_interrupted_runs_folder_is_refused_and_its_target_kept(
    name, interrupted, tmp_path_factory, capsys
):
    out = Path(interrupted[-1])
    planted = out / name
    target = _plant(planted, tmp_path_factory.mktemp("outside"))
    before = _contents(target)
    for extra in ([], ["--fresh"], ["--fresh", "--force"]):
        assert main([*interrupted, *extra]) == 2, (name, extra)
        line = _sentence(capsys)
        assert str(planted) in line, line
        assert _contents(target) == before
        assert planted.is_symlink()


@pytest.mark.integration  # fault injection: a named pipe planted for banditlab run in a subprocess
@pytest.mark.parametrize("name", ["parts/manifest.json", "parts/000001.json", ".banditlab.json"])
def test_a_fifo_planted_under_a_name_banditlab_reads_is_refused_without_waiting_on_it(name, interrupted, banditlab):  # noqa: F811
    """A named pipe is not read (reading one waits for a writer forever): refused like a link."""
    out = Path(interrupted[-1])
    (out / name).unlink(missing_ok=True)
    os.mkfifo(out / name)
    code, _, err = banditlab(*interrupted).finish()  # fails if it waits on the pipe
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"{out / name} is not a plain file" in lines[0], lines[0]


@pytest.mark.parametrize("name", [".banditlab.json", "summary.md", "figure.png"])
def test_report_refuses_a_planted_link_and_keeps_its_target(name, tmp_path, tmp_path_factory, capsys):
    out = tmp_path / "out"
    assert main(["run", EID, *SMALL, "--out", str(out)]) == 0
    capsys.readouterr()
    planted = out / name
    target = _plant(planted, tmp_path_factory.mktemp("outside"))
    before = _contents(target)
    assert main(["report", EID, str(out)]) == 2
    line = _sentence(capsys)
    assert str(planted) in line, line
    assert _contents(target) == before and planted.is_symlink()


@pytest.mark.integration  # a second banditlab process, and the first one killed
def test_a_second_process_on_a_folder_in_use_is_refused_and_the_lock_dies_with_the_first(banditlab, tmp_path):  # noqa: F811
    """Two runs of other horizons (or a report) on one --out: the second is refused while the first runs."""
    out = tmp_path / "out"
    # Minutes of work (the sweep of tests/test_faults.py, 20 times the runs): it is killed below.
    first = banditlab("run", EXPERIMENT, "--runs", "400", "--horizon", "100000", "--jobs", "2", "--no-progress",
                      "--out", str(out))  # fmt: skip
    _poll(lambda: bool(saved_tasks(out / "parts")) or first.proc.poll() is not None, "the first saved task")
    assert first.proc.poll() is None, "the first run finished before the second started"
    workers = _children(first.proc.pid)
    first.seen |= workers
    other = ["run", EXPERIMENT, "--runs", "1", "--horizon", "100", "--jobs", "1", "--no-progress", "--out", str(out)]
    argvs = ([*other, "--fresh"], [*other, "--fresh", "--force"], ["report", EXPERIMENT, str(out)])
    for argv, second in [(argv, banditlab(*argv)) for argv in argvs]:  # started together, to save time
        code, _, err = second.finish()
        assert code == 2, (argv, err)
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert f"{out} is in use by another banditlab process" in lines[0], lines[0]
    assert first.proc.poll() is None
    assert saved_tasks(out / "parts")  # the first run's saved tasks are still there

    os.kill(first.proc.pid, signal.SIGKILL)  # the kernel releases the lock of a killed process
    first.finish()
    _assert_gone(workers, out)
    code, _, err = banditlab(*other, "--fresh").finish()
    assert code == 0, err
    meta = json.loads((out / "meta.json").read_text())
    assert (meta["runs"], meta["horizon"]) == (1, 100)
    runs = {line.split(",")[4] for line in (out / "results.csv").read_text().splitlines()[1:]}
    assert runs == {"0"}  # rows of this run only
    assert not (out / "parts").exists()


# --- report on results that miss, repeat or garble rows ------------------------------------------


@pytest.fixture(scope="module")
def privacy(tmp_path_factory) -> Path:
    """A gap/privacy folder: one row per (setting, run), boolean columns; 27 settings x 3 runs."""
    folder, _ = run_experiment("gap/privacy", runs=3, horizon=100, jobs=1, out=tmp_path_factory.mktemp("privacy"),
                               progress=False)  # fmt: skip
    return folder


def _cut(csv: bytes, keep: int) -> bytes:
    """The header and the first ``keep`` rows, each line complete (a file cut at a line boundary)."""
    return b"".join(line + b"\r\n" for line in csv.split(b"\r\n")[: keep + 1])


def _drop(csv: bytes, row: int) -> bytes:
    lines = csv.split(b"\r\n")
    return b"\r\n".join(lines[: row + 1] + lines[row + 2 :])


def _set_last(csv: bytes, row: int, value: bytes, column: int = -1) -> bytes:
    lines = csv.split(b"\r\n")
    cells = lines[row + 1].split(b",")
    cells[column] = value
    lines[row + 1] = b",".join(cells)
    return b"\r\n".join(lines)


def _read_as_inf(column: str, line: int) -> tuple[str, str]:
    """The sentences for a 1e400 in ``column``: read as text by some releases (pandas 3.0, numpy 2.0), else as inf."""
    return f"column {column} holds inf on line {line}", f"column {column} holds '1e400' on line {line}"


@pytest.mark.parametrize(
    ("folder", "edit", "needle"),
    [
        ("made", lambda c, m: (_cut(c, 2250), m), "hold 50 of the 100 checkpoints t the other rows hold"),
        ("made", lambda c, m: (_cut(c, 2500), m), "hold 1 runs, but meta.json says runs = 2"),
        ("made", lambda c, m: (c + c.split(b"\r\n", 1)[1], m), "line 3002 repeats the row of setting 0, run 0"),
        ("made", lambda c, m: (c + c.split(b"\r\n")[7] + b"\r\n", m), "line 3002 repeats the row of setting 0"),
        ("made", lambda c, m: (_drop(c, 9), m), "hold 99 of the 100 checkpoints t"),
        ("made", lambda c, m: (_set_last(c, 3, b"1e400"), m), _read_as_inf("regret", 5)),
        ("made", lambda c, m: (_set_last(c, 3, b"nan"), m), "column regret holds 'nan' on line 5"),
        ("made", lambda c, m: (_set_last(c, 3, b"abc", -2), m), "column t holds 'abc' on line 5"),
        ("made", lambda c, m: (c, {**m, "runs": 10**12}), "meta.json says runs = 1000000000000"),
        ("made", lambda c, m: (c, {**m, "runs": 3}), "hold 2 runs, but meta.json says runs = 3"),
        ("made", lambda c, m: (c, {**m, "horizon": 100}), "t = 200, but meta.json says horizon = 100"),
        ("privacy", lambda c, m: (_cut(c, 80), m), "setting 26, agent 'GAP' (from line 28) hold 2 runs"),
        ("privacy", lambda c, m: (c + c.split(b"\r\n", 1)[1], m), "line 83 repeats the row of setting 0, run 0"),
        ("privacy", lambda c, m: (_drop(c, 30), m), "setting 3, agent 'GAP' (from line 5) hold 2 runs"),
        ("privacy", lambda c, m: (_set_last(c, 0, b"maybe", -3), m), "column entry_observed holds 'maybe' on line 2"),
        ("privacy", lambda c, m: (_set_last(c, 0, b"1e400"), m), _read_as_inf("first_difference", 2)),
        ("privacy", lambda c, m: (_cut(c, 54), m), "hold 2 runs, but meta.json says runs = 3"),
    ],
)  # fmt: skip
def test_report_refuses_results_that_miss_repeat_or_garble_rows(folder, edit, needle, request, tmp_path, capsys):
    source = request.getfixturevalue(folder)
    eid = json.loads((source / "meta.json").read_text())["experiment"]
    csv, meta = edit((source / "results.csv").read_bytes(), json.loads((source / "meta.json").read_text()))
    (tmp_path / "results.csv").write_bytes(csv)
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert main(["report", eid, str(tmp_path)]) == 2
    line = _sentence(capsys)
    assert any(one in line for one in ((needle,) if isinstance(needle, str) else needle)), line
    assert not (tmp_path / "summary.md").exists() and not (tmp_path / "figure.png").exists()


#: Results of the other families at a small scale (tests/fixtures/experiment-results-small): (runs, horizon).
FIXTURES = {
    "budget/alpha": (1, 100),
    "ldp-linucb/epsilon": (1, 2000),
    "ldp-linucb/realistic": (1, 2000),
    "rl/graph": (1, 100),
    "gap/regret-p": (2, 2000),
}


@pytest.mark.parametrize("experiment_id", sorted(FIXTURES))
def test_every_familys_keys_accept_its_results_and_refuse_a_row_missing_or_repeated(experiment_id):
    path = Path(__file__).parent / "fixtures" / "experiment-results-small" / f"{experiment_id.replace('/', '-')}.csv.gz"
    frame = pd.read_csv(path)
    family = get_experiment(experiment_id).family
    runs, horizon = FIXTURES[experiment_id]
    check_complete(frame, path, family.keys, runs, horizon)  # whole: accepted
    middle = len(frame) // 2
    edits = {
        "cut at a line boundary": frame.iloc[: len(frame) - 7],
        "a row dropped": frame.drop(index=middle),
        "a row repeated": pd.concat([frame, frame.iloc[[middle]]]),
    }
    for what, edited in edits.items():
        with pytest.raises(ResultsError, match="cut short or edited|repeats the row"):
            check_complete(edited.reset_index(drop=True), path, family.keys, runs, horizon)
            pytest.fail(f"{what} accepted")
    with pytest.raises(ResultsError, match=f"meta.json says (runs|horizon) = {horizon + 1}"):
        check_complete(frame, path, family.keys, runs, horizon + 1)


def test_outputs_are_written_by_name_only_inside_a_private_scratch_folder(tmp_path):
    """pandas and matplotlib write a scratch file by its name: it lies in a folder made for it, mode 0700.

    In an output folder others can write to, another user could otherwise swap the scratch file
    for a link between its creation and the library's write; nobody but its owner can add or
    replace an entry of a 0700 folder.
    """
    from agents.experiments.core.outputs import SCRATCH, OutputFolder

    seen = []

    def produce(path: Path) -> None:
        private = path.parent
        seen.append((private.name, private.parent, private.lstat().st_mode & 0o777, sorted(os.listdir(private))))
        path.write_text("data\n")

    with OutputFolder.open(tmp_path / "out") as output:
        output.write("results.csv", produce)
    name, parent, mode, entries = seen[0]
    assert name.startswith(SCRATCH) and parent == tmp_path / "out" and mode == 0o700, seen
    assert entries == ["results.csv"], entries
    assert (tmp_path / "out" / "results.csv").read_text() == "data\n"
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(SCRATCH)]  # removed afterwards


def test_a_folder_open_for_writing_is_refused_until_closed_and_gets_no_lock_file(tmp_path):
    """The lock is on the folder's own descriptor: a second opening is refused, none of its files is a lock file."""
    from agents.experiments.core.outputs import OutputError, OutputFolder

    out = tmp_path / "out"
    with OutputFolder.open(out):
        with pytest.raises(OutputError, match=f"--out {out} is in use by another banditlab process"):
            OutputFolder.open(out)
        assert list(out.iterdir()) == []
    with OutputFolder.open(out):  # released by close
        pass
    assert list(out.iterdir()) == []
