"""The output folder: banditlab writes, replaces and deletes only its own recorded files; bad
``--out``, ``--data`` cache folders, ``--jobs`` values and report inputs are one sentence and exit 2."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from agents.experiments.cli import main, run_experiment

#: A small, fast run: 3 tasks.
SMALL = ["--runs", "1", "--horizon", "100", "--jobs", "1", "--no-progress"]
EID = "gap/regret-eps"


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse rejects a bad option value itself
        return int(exc.code or 0)


def _run(out: Path, *extra: str) -> int:
    return _main(["run", EID, *SMALL, "--out", str(out), *extra])


def _sentence(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("banditlab: error: "), err
    return lines[0]


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` (hidden ones too), files with their bytes."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


# --- --out never destroys what banditlab did not write ---------------------------------------


def test_a_folder_with_someone_elses_files_needs_force_and_keeps_them(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "data").mkdir(parents=True)
    (out / "notes.txt").write_text("mine\n")
    (out / "data" / "x.csv").write_text("a,b\n1,2\n")
    before = _snapshot(out)
    assert _run(out) == 2
    line = _sentence(capsys)
    assert f"--out {out} already holds files banditlab did not write" in line and "--force" in line
    assert "notes.txt" in line
    assert _snapshot(out) == before

    assert _run(out, "--force") == 0
    capsys.readouterr()
    after = _snapshot(out)
    assert {k: after[k] for k in before} == before
    assert (out / "results.csv").stat().st_size > 0
    # banditlab's folder now: the same command runs again without --force, and keeps the user's files.
    assert _run(out) == 0
    capsys.readouterr()
    assert {k: _snapshot(out)[k] for k in before} == before


@pytest.mark.parametrize(
    "name", ["results.csv", "meta.json", "summary.md", "figure.png", "parts/000000.json", "parts/mine.txt"]
)
def test_force_never_replaces_or_deletes_a_file_banditlab_did_not_write(name, tmp_path, capsys):
    out = tmp_path / "out"
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(b"the user's own file\n")
    before = _snapshot(out)
    for extra in ([], ["--force"], ["--force", "--fresh"]):
        assert _run(out, *extra) == 2
        line = _sentence(capsys)
        assert str(out / name.split("/")[0]) in line, line
        assert _snapshot(out) == before


def test_an_earlier_result_of_another_command_is_not_replaced_silently(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(out) == 0
    capsys.readouterr()
    first = _snapshot(out)
    assert _run(out, "--seed", "1") == 2
    line = _sentence(capsys)
    assert "results of another banditlab command (seed 0 there, 1 now)" in line and "--force" in line
    assert _snapshot(out) == first
    assert _run(out) == 0  # the same command replaces its own files, without --force
    capsys.readouterr()
    assert (out / "results.csv").read_bytes() == first["results.csv"]
    assert _run(out, "--force", "--seed", "1") == 0
    capsys.readouterr()
    assert (out / "results.csv").read_bytes() != first["results.csv"]
    assert json.loads((out / "meta.json").read_text())["seed"] == 1


@pytest.mark.parametrize("name", ["results.csv", "meta.json", "summary.md", "figure.png"])
def test_an_output_edited_since_banditlab_wrote_it_is_kept(name, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(out) == 0
    with (out / name).open("ab") as f:
        f.write(b"\n")
    capsys.readouterr()
    before = _snapshot(out)
    for extra in ([], ["--force"]):
        assert _run(out, *extra) == 2
        line = _sentence(capsys)
        assert f"{out / name} was written by banditlab but has been edited since" in line
        assert _snapshot(out) == before
    if name in ("summary.md", "figure.png"):
        assert main(["report", EID, str(out)]) == 2
        assert f"{out / name} was written by banditlab but has been edited since" in _sentence(capsys)
        assert _snapshot(out) == before


def test_report_writes_only_files_it_may_replace(tmp_path, capsys):
    made = tmp_path / "made"
    assert _run(made) == 0
    capsys.readouterr()
    copy = tmp_path / "copy"  # results copied by hand: banditlab did not write anything here
    copy.mkdir()
    for name in ("results.csv", "meta.json"):
        shutil.copy(made / name, copy / name)
    (copy / "summary.md").write_text("my own summary\n")
    before = _snapshot(copy)
    assert main(["report", EID, str(copy)]) == 2
    assert f"{copy / 'summary.md'} was not written by banditlab" in _sentence(capsys)
    assert _snapshot(copy) == before
    (copy / "summary.md").unlink()
    assert main(["report", EID, str(copy)]) == 0
    assert main(["report", EID, str(copy)]) == 0  # its own summary and figure now
    capsys.readouterr()
    assert (copy / "summary.md").read_bytes() == (made / "summary.md").read_bytes()


@pytest.mark.parametrize(("kind", "needle"), [("folder", "is a folder now"), ("link", "is a link now")])
def test_a_recorded_output_replaced_by_a_folder_or_link_is_named_as_such(kind, needle, tmp_path, capsys):
    """It was worded as 'written by banditlab but edited since'; it is refused either way, and left alone."""
    made = tmp_path / "made"
    assert _run(made) == 0
    capsys.readouterr()
    (made / "summary.md").unlink()
    if kind == "folder":
        (made / "summary.md").mkdir()
    else:
        (tmp_path / "elsewhere.md").write_text("not banditlab's\n")
        (made / "summary.md").symlink_to(tmp_path / "elsewhere.md")
    assert main(["report", EID, str(made)]) == 2
    assert f"{made / 'summary.md'} {needle}, where banditlab wrote a file" in _sentence(capsys)
    assert (made / "summary.md").is_symlink() == (kind == "link")
    assert kind != "link" or (tmp_path / "elsewhere.md").read_text() == "not banditlab's\n"


# --- --out, --data and --jobs values that cannot work ---------------------------------------


@pytest.mark.parametrize(("where", "needle"), [("file", "is a file, not a folder"), ("file/sub", "lies under")])
def test_out_that_is_or_lies_under_a_file_is_one_sentence(where, needle, tmp_path, capsys):
    (tmp_path / "file").write_text("not a folder\n")
    out = tmp_path / where
    assert _run(out) == 2
    line = _sentence(capsys)
    assert "--out" in line and needle in line and str(tmp_path / "file") in line
    assert (tmp_path / "file").read_text() == "not a folder\n"


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs /sys, which even root cannot write to")
def test_out_that_cannot_be_created_is_one_sentence(capsys):
    assert _run(Path("/sys/banditlab-out")) == 2
    assert "--out /sys/banditlab-out cannot be created" in _sentence(capsys)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes to read-only folders")
def test_out_that_is_read_only_is_one_sentence(tmp_path, capsys):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        assert _run(out) == 2
        assert f"--out {out} is not writable" in _sentence(capsys)
    finally:
        out.chmod(0o700)


@pytest.mark.parametrize(("where", "needle"), [("file", "is a file, not a folder"), ("file/sub", "lies under")])
def test_a_data_cache_folder_that_is_or_lies_under_a_file_is_one_sentence(where, needle, tmp_path, monkeypatch,
                                                                         capsys):  # fmt: skip
    (tmp_path / "file").write_text("not a folder\n")
    monkeypatch.setenv("BANDIT_ENVS_DATA", str(tmp_path / where))
    for eid in ("budget/alpha", "ldp-linucb/epsilon"):
        assert _main(["run", eid, "--quick", "--data", "ml-100k", "--out", str(tmp_path / "out")]) == 2
        line = _sentence(capsys)
        assert "BANDIT_ENVS_DATA" in line and needle in line, line
    assert (tmp_path / "file").read_text() == "not a folder\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_data_cache_folder_that_cannot_be_created_is_one_sentence(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    monkeypatch.setenv("BANDIT_ENVS_DATA", str(ro / "cache"))
    try:
        assert _main(["run", "budget/alpha", "--quick", "--data", "ml-100k", "--out", str(tmp_path / "out")]) == 2
        assert "BANDIT_ENVS_DATA" in _sentence(capsys)
    finally:
        ro.chmod(0o700)


def test_jobs_far_above_the_cores_is_refused(tmp_path, capsys):
    limit = 4 * len(os.sched_getaffinity(0))  # the cores this process may use, as --jobs' default counts them
    assert _main(["run", EID, "--runs", "1", "--horizon", "100", "--jobs", str(limit + 1), "--out", str(tmp_path)]) == 2
    assert f"--jobs must be at most {limit}" in _sentence(capsys)
    assert not any(tmp_path.iterdir())


def test_jobs_limit_counts_the_cores_this_process_may_use(tmp_path, capsys, monkeypatch):
    """Under a CPU affinity of one core (``taskset -c 0``), 4 workers are the most, as the default is one."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert _main(["run", EID, "--runs", "1", "--horizon", "100", "--jobs", "5", "--out", str(tmp_path)]) == 2
    assert "--jobs must be at most 4 (4 per core, 1 core this process may use here), got 5" in _sentence(capsys)
    assert not any(tmp_path.iterdir())


def test_jobs_above_the_number_of_tasks_is_capped_in_one_line(tmp_path, capsys):
    folder, _ = run_experiment(EID, runs=1, horizon=100, jobs=4, out=tmp_path, progress=False)  # 3 tasks
    err = capsys.readouterr().err
    assert "--jobs 4 is more than the 3 tasks to run, so 3 worker processes start." in err
    assert json.loads((folder / "meta.json").read_text())["jobs"] == 3


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_the_api_refuses_a_jobs_value_that_is_not_a_positive_integer(jobs, tmp_path):
    from agents.experiments import UsageError, run

    with pytest.raises(UsageError, match=r"jobs must be an integer >= 1, got"):
        run_experiment(EID, runs=1, horizon=100, jobs=jobs, out=tmp_path, progress=False)
    with pytest.raises(UsageError, match=r"jobs must be an integer >= 1, got"):
        run(EID, runs=1, horizon=100, jobs=jobs)


# --- report on results it cannot summarize ---------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    folder, _ = run_experiment(EID, runs=2, horizon=200, jobs=1, out=tmp_path_factory.mktemp("made"), progress=False)
    return folder


def _second_line(csv: bytes) -> bytes:
    return csv.split(b"\r\n")[1]


def _first_checkpoint_at(csv: bytes, t: int) -> bytes:
    """The table with every row of its first checkpoint moved to round ``t``."""
    frame = pd.read_csv(io.BytesIO(csv))
    frame.loc[frame["t"] == frame["t"].min(), "t"] = t
    return frame.to_csv(index=False).encode()


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda c, m: (c.replace(_second_line(c), _second_line(c).rsplit(b",", 1)[0] + b",abc", 1), m),
         "column regret holds 'abc'"),
        (lambda c, m: (c.replace(_second_line(c), _second_line(c).rsplit(b",", 1)[0] + b",", 1), m),
         "column regret has an empty value"),
        (lambda c, m: (c[: c.rindex(b",")], m), "has an empty value"),  # cut short inside its last row
        (lambda c, m: (c.replace(_second_line(c), _second_line(c).rsplit(b",", 1)[0] + b",nan", 1), m),
         "column regret holds 'nan' on line 2, which reads as a missing value, but every row must fill it"),
        (lambda c, m: (c.replace(_second_line(c), _second_line(c).replace(b",GAP,", b",NA,"), 1), m),
         "agent 'NA' (from line 2) hold 1 of the 100 checkpoints"),  # NA is a name run accepts
        (lambda c, m: (c, {**m, "runs": 1}), "column run holds 1"),
        (lambda c, m: (c.replace(_second_line(c), b"0.2,0.1,0.1,99," + _second_line(c).split(b",", 4)[4], 1), m),
         "column setting holds 99"),
        (lambda c, m: (c.replace(_second_line(c), b"0.2,0.1,0.1,0.5," + _second_line(c).split(b",", 4)[4], 1), m),
         "column setting holds 0.5"),
        (lambda c, m: (c.replace(_second_line(c), _second_line(c).rsplit(b",", 1)[0] + b",1e300", 1), m),
         "column regret holds 1e+300 on line 2, but its values must be finite numbers of magnitude at most 1e+100"),
        (lambda c, m: (_first_checkpoint_at(c, 0), m), "the checkpoints t must be whole rounds from 1 to the horizon"),
        (lambda c, m: (c.replace(b",GAP,", b",Mystery,"), m),
         "results.csv: line 2 holds agent 'Mystery', which meta.json's agents (GAP, GAPU, AlphaSample, DPSE, AAE) "
         "do not list, so the file is edited, or meta.json is not its own"),
        (lambda c, m: (c, {**m, "agents": [*m["agents"], "Extra"]}),
         "holds no rows of agent 'Extra', which meta.json lists"),
        (lambda c, m: (c, None), "must contain meta.json"),
        (lambda c, m: (c, {}), "meta.json lacks"),
        (lambda c, m: (c, {k: v for k, v in m.items() if k != "seconds"}), "meta.json lacks seconds"),
        (lambda c, m: (c, {k: v for k, v in m.items() if k != "runs"}), "meta.json lacks runs"),
        (lambda c, m: (c, {**m, "seconds": math.nan}), "seconds must be a finite number"),
        (lambda c, m: (c, {**m, "seconds": -1}), "seconds must be a finite number >= 0"),
        (lambda c, m: (c, {**m, "runs": 0}), "runs must be an integer >= 1"),
        (lambda c, m: (c, {**m, "horizon": 5}), "horizon must be an integer >= 10"),
        (lambda c, m: (c, {**m, "jobs": 0}), "jobs must be an integer >= 1"),
        (lambda c, m: (c, {**m, "experiment": 3}), "experiment must be"),
        (lambda c, m: (c, {**m, "overrides": []}), "overrides must be an object"),
    ],
)  # fmt: skip
def test_report_refuses_results_or_meta_it_cannot_summarize(edit, needle, made, tmp_path, capsys):
    meta = json.loads((made / "meta.json").read_text())
    csv, meta = edit((made / "results.csv").read_bytes(), meta)
    (tmp_path / "results.csv").write_bytes(csv)
    if meta is not None:
        (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert main(["report", EID, str(tmp_path)]) == 2
    line = _sentence(capsys)
    assert needle in line, line
    assert not (tmp_path / "summary.md").exists() and not (tmp_path / "figure.png").exists()


@pytest.mark.parametrize("under", [False, True], ids=["file", "under-a-file"])
def test_report_on_a_file_says_it_is_a_file_not_a_folder(under, made, capsys):
    given = made / "meta.json" / "results" if under else made / "meta.json"
    assert main(["report", EID, str(given)]) == 2
    line = _sentence(capsys)
    if under:
        expected = f"the folder {given} lies under {made / 'meta.json'}, which is a file, not a folder"
    else:
        expected = f"the folder {given} is a file, not a folder"
    assert line == f"banditlab: error: {expected}; give the folder that holds results.csv.", line


@pytest.mark.parametrize("name", ["results.csv", "meta.json"])
@pytest.mark.parametrize("kind", ["folder", "FIFO"])
def test_report_names_a_results_path_that_is_a_folder_or_fifo(name, kind, made, tmp_path, capsys):
    for other in ("results.csv", "meta.json"):
        if other != name:
            shutil.copy(made / other, tmp_path / other)
    if kind == "folder":
        (tmp_path / name).mkdir()
    else:
        os.mkfifo(tmp_path / name)  # reading it would block for ever
    assert main(["report", EID, str(tmp_path)]) == 2
    line = _sentence(capsys)
    what = "is a folder, not a file" if kind == "folder" else "is a FIFO (named pipe), not a regular file"
    assert f"the folder must contain {name}" in line and f"{tmp_path / name} {what}" in line, line


@pytest.mark.parametrize("command", [["run", EID], ["audit", "all"], ["score", "UCB"]])
def test_an_empty_out_is_refused_not_taken_for_the_current_folder(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--out", ""])
    assert exc.value.code == 2
    assert "--out must name a folder, got ''" in capsys.readouterr().err


def test_an_out_that_is_a_dangling_link_says_so(tmp_path, capsys):
    link = tmp_path / "results"
    link.symlink_to(tmp_path / "gone")
    assert _main(["run", EID, "--runs", "1", "--horizon", "100", "--out", str(link)]) == 2
    assert f"--out {link} is a link to {tmp_path / 'gone'}, which does not exist" in _sentence(capsys)
    assert link.is_symlink() and not (tmp_path / "gone").exists()
