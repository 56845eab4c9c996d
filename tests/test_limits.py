"""Limits and resources: inputs and faults beyond what the machine or the file system allows are one
sentence and a distinct exit status, never a traceback, and lose nothing.

* sizes: a scale whose tasks or results would not fit, a horizon or parameter that an agent or env
  refuses inside a task, an audit horizon whose reward tables would not fit: exit 2;
* files: an ``--out`` name longer than the file system allows, JSON nested too deep: exit 2.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_outputs import EID, SMALL, _main, _sentence

from agents.experiments.api import UsageError, configure
from agents.experiments.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 90.0


def _banditlab(*args: str, cwd: Path, memory: int | None = None, env: dict[str, str] | None = None):
    """Run ``python -m agents.experiments.cli ARGS`` to the end (its address space capped at ``memory`` bytes)."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "agents.experiments.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **(env or {})},
        capture_output=True,
        text=True,
        timeout=WAIT,
        preexec_fn=limit,
    )


def _one_sentence(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("banditlab: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a small finished run (3 tasks)."""
    folder = tmp_path_factory.mktemp("small") / "out"
    assert main(["run", EID, *SMALL, "--out", str(folder)]) == 0
    return folder


# --- names and files the file system or the JSON reader cannot take ------------------------------


@pytest.mark.parametrize("nested", [False, True], ids=["folder", "parent"])
def test_an_out_name_longer_than_the_file_system_allows_is_one_sentence(nested, tmp_path, capsys):
    out = tmp_path / ("A" * 300)
    if nested:
        out = out / "results"
    assert _main(["run", EID, *SMALL, "--out", str(out)]) == 2
    line = _sentence(capsys)
    assert f"--out {out} cannot be a folder (File name too long)" in line
    assert not any(tmp_path.iterdir())  # nothing created


@pytest.mark.parametrize("name", ["meta.json", ".banditlab.json"])
def test_json_nested_100000_levels_deep_is_one_sentence(name, small_run, tmp_path, capsys):
    folder = tmp_path / "out"
    shutil.copytree(small_run, folder)
    deep = "[" * 100_000 + "]" * 100_000
    (folder / name).write_text(deep)
    code = _main(["report", EID, str(folder)] if name == "meta.json" else ["run", EID, *SMALL, "--out", str(folder)])
    assert code == 2
    line = _sentence(capsys)
    assert str(folder / name) in line or str(folder) in line
    assert (folder / name).read_text() == deep  # never overwritten


# --- sizes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eid", ["gap/privacy", "dp-mab/epsilon"])
def test_runs_whose_tasks_and_results_would_not_fit_are_refused_before_allocating(eid, tmp_path):
    """A child capped at 3 GiB of address space: building a billion tasks would fail there, or run on."""
    done = _banditlab("run", eid, "--runs", "1000000000", "--no-progress", "--out", "out", cwd=tmp_path, memory=3 << 30)
    assert done.returncode == 2, done.stderr
    line = _one_sentence(done.stderr)
    assert "--runs 1000000000" in line and f"the largest --runs for {eid} is " in line
    assert not (tmp_path / "out").exists()


def test_the_largest_runs_named_fits_and_one_more_does_not(monkeypatch):
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", str(64 << 20))
    with pytest.raises(UsageError, match="--runs 100000 ") as refused:
        configure(EID, runs=100_000)
    largest = int(str(refused.value).rsplit(" is ", 1)[1].rstrip(".").replace(",", ""))
    assert configure(EID, runs=largest).runs == largest
    with pytest.raises(UsageError, match=f"--runs {largest + 1} "):
        configure(EID, runs=largest + 1)


@pytest.mark.parametrize(
    ("eid", "option", "needle"),
    [
        ("gap/privacy", "--set=epsilon=1e-320", "epsilon=1e-320"),
        ("ldp-linucb/sqrt-t", "--set=epsilon=1e-320", "epsilon=1e-320"),
        ("ldp-linucb/epsilon", "--horizon=10000000000000", "would need about"),
    ],
    ids=["gap-epsilon", "ldp-epsilon", "ldp-horizon"],
)
def test_a_setting_an_agent_or_env_refuses_inside_its_task_is_one_sentence(eid, option, needle, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", eid, "--runs", "1", "--horizon", "100", option, "--jobs", "2", "--no-progress", "--out", str(out)]
    assert main(argv) == 2
    line = _sentence(capsys)
    assert f"{eid} cannot run its setting " in line and needle in line
    assert not (out / "results.csv").exists()


@pytest.mark.parametrize("agent", ["GAP", "LDPLinUCB"])
def test_an_audit_horizon_whose_inputs_would_not_fit_is_refused_before_building_them(agent, capsys):
    assert main(["audit", agent, "--horizon", "1000000000000"]) == 2
    line = _sentence(capsys)
    assert "horizon=1000000000000" in line and "use a shorter horizon" in line
