"""Dask backend and partial store: a real LocalCluster on loopback gives the local results.csv,
interrupted sweeps resume without redoing finished tasks, cluster failures are one sentence.

Results computed in the cluster's worker processes are compared with the local run as recorded
results are (:mod:`recorded`: integers and identifiers exactly, floats to a relative 1e-12).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
import time

import pytest
from conftest import lazy_module, saved_tasks

if importlib.util.find_spec("distributed") is None:
    pytest.skip("could not import 'distributed'", allow_module_level=True)
distributed = lazy_module("distributed")  # imported by the first test (a second of imports at collection otherwise)
cloudpickle = pytest.importorskip("cloudpickle")

from recorded import assert_csv_match  # noqa: E402

from agents.experiments.cli import main, run_experiment  # noqa: E402
from agents.experiments.core import backends  # noqa: E402
from agents.experiments.core.runner import run_task  # noqa: E402

# Functions of this module are sent to the Dask workers by value (the workers cannot import it).
cloudpickle.register_pickle_by_value(sys.modules[__name__])
# A second cluster's scheduler HTTP server (loopback) moves off a busy default port with a warning.
pytestmark = [
    pytest.mark.integration,  # a Dask LocalCluster with worker processes
    pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning"),
]

CLUSTER = {"threads_per_worker": 1, "processes": True, "host": "127.0.0.1", "dashboard_address": None}
SMALL = {"gap/regret-p": ("--runs", "2", "--horizon", "2000"), "gap/privacy": ("--runs", "1", "--horizon", "3000")}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, **CLUSTER) as c:
        yield c


@pytest.fixture(scope="module")
def local_csv(tmp_path_factory):
    """results.csv of the local backend (one process) for each small experiment."""
    out = {}
    for eid, scale in SMALL.items():
        folder = tmp_path_factory.mktemp("local")
        assert main(["run", eid, *scale, "--jobs", "1", "--out", str(folder), "--no-progress"]) == 0
        out[eid] = (folder / "results.csv").read_bytes()
    return out


def _run(eid, folder, *extra):
    try:
        return main(["run", eid, *SMALL[eid], "--out", str(folder), "--no-progress", *extra])
    except SystemExit as exc:  # argparse rejects a bad option value itself
        return exc.code


def _error_line(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.startswith("banditlab:")]
    assert len(lines) == 1, err
    return lines[0]


# gap/privacy on the cluster is also compared with a local run by
# test_a_killed_worker_is_replaced_and_the_sweep_completes; here it runs with -m slow.
@pytest.mark.parametrize(
    "eid", [pytest.param(e, marks=pytest.mark.slow) if e == "gap/privacy" else e for e in sorted(SMALL)]
)
def test_dask_backend_gives_the_local_results(eid, cluster, local_csv, tmp_path, capsys):
    assert _run(eid, tmp_path, "--backend", "dask", "--scheduler", cluster.scheduler_address) == 0
    assert_csv_match((tmp_path / "results.csv").read_bytes(), local_csv[eid])
    assert not (tmp_path / "parts").exists()  # the partial store is removed once results.csv is written
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["backend"] == "dask" and meta["jobs"] == 2 and meta["resumed_tasks"] == 0
    assert "Wrote" in capsys.readouterr().out


def test_user_agents_run_on_the_cluster_as_locally(cluster, tmp_path, capsys):
    """--agent module:Factory and --agent file.py:Factory (a path the workers can read) on Dask == local."""
    agent_file = tmp_path / "mine.py"
    agent_file.write_text(
        "import agents\n\n\ndef make(env, setting, seed):\n    return agents.UCBN(env.action_space.n, seed=seed)\n"
    )
    extra = ("--agent", "agents:Random", "--agent", f"{agent_file}:make")
    local, remote = tmp_path / "local", tmp_path / "dask"
    assert _run("gap/regret-p", local, "--jobs", "1", *extra) == 0
    assert _run("gap/regret-p", remote, "--backend", "dask", "--scheduler", cluster.scheduler_address, *extra) == 0
    capsys.readouterr()
    assert_csv_match((remote / "results.csv").read_bytes(), (local / "results.csv").read_bytes())
    assert b",UCB-N," in (local / "results.csv").read_bytes()  # make's agent, by its own name


def test_interrupted_run_resumes_only_the_missing_tasks(local_csv, tmp_path, monkeypatch, capsys):
    eid = "gap/privacy"  # 27 tasks
    calls = []

    def interrupt_after_10(task):
        if len(calls) == 10:
            raise KeyboardInterrupt
        calls.append((task.setting_index, task.run))
        return run_task(task)

    monkeypatch.setattr(backends, "run_task", interrupt_after_10)
    assert _run(eid, tmp_path, "--jobs", "1") == 130
    line = _error_line(capsys)
    assert "interrupted; 10 of 27 tasks are saved in" in line and "running the same command again resumes" in line
    assert len(saved_tasks(tmp_path / "parts")) == 10
    assert not (tmp_path / "results.csv").exists()

    # Other options over the saved sweep are refused, and the saved tasks are left alone.
    assert main(["run", eid, "--runs", "2", "--horizon", "3000", "--out", str(tmp_path), "--no-progress"]) == 2
    line = _error_line(capsys)
    assert "holds partial results of a different run (runs 1 there, 2 now; tasks 27 there, 54 now)" in line
    assert "--fresh" in line
    assert len(saved_tasks(tmp_path / "parts")) == 10

    # The same command resumes: only the 17 missing tasks run, and results.csv is the uninterrupted one.
    first = list(calls)
    calls.clear()
    monkeypatch.setattr(backends, "run_task", lambda t: calls.append((t.setting_index, t.run)) or run_task(t))
    assert _run(eid, tmp_path, "--jobs", "1") == 0
    assert "Resuming from" in capsys.readouterr().err
    assert len(calls) == 17 and not set(calls) & set(first)
    assert_csv_match((tmp_path / "results.csv").read_bytes(), local_csv[eid])
    assert json.loads((tmp_path / "meta.json").read_text())["resumed_tasks"] == 10


def test_a_local_interruption_resumes_on_the_cluster(cluster, local_csv, tmp_path, monkeypatch, capsys):
    eid = "gap/regret-p"  # 6 tasks
    calls = []

    def interrupt_after_2(task):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(task)
        return run_task(task)

    monkeypatch.setattr(backends, "run_task", interrupt_after_2)
    with pytest.raises(backends.SweepInterrupted, match="2 of 6 tasks are saved"):
        run_experiment(eid, runs=2, horizon=2000, jobs=1, out=tmp_path, progress=False)
    monkeypatch.undo()
    folder, _ = run_experiment(
        eid, runs=2, horizon=2000, out=tmp_path, progress=False, backend="dask", scheduler=cluster.scheduler_address
    )
    assert_csv_match((folder / "results.csv").read_bytes(), local_csv[eid])
    assert json.loads((folder / "meta.json").read_text())["resumed_tasks"] == 2


def test_fresh_discards_thesaved_tasks(local_csv, tmp_path, monkeypatch, capsys):
    eid = "gap/privacy"

    def interrupt_after_1(task, calls=[]):  # noqa: B006 - counts the calls
        if calls:
            raise KeyboardInterrupt
        calls.append(task)
        return run_task(task)

    monkeypatch.setattr(backends, "run_task", interrupt_after_1)
    assert main(["run", eid, "--runs", "7", "--horizon", "3000", "--jobs", "1", "--out", str(tmp_path),
                 "--no-progress"]) == 130  # fmt: skip
    assert "1 of 189 tasks are saved" in _error_line(capsys)
    monkeypatch.undo()
    assert _run(eid, tmp_path, "--jobs", "1") == 2
    assert "runs 7 there, 1 now" in _error_line(capsys)
    assert _run(eid, tmp_path, "--jobs", "1", "--fresh") == 0
    assert_csv_match((tmp_path / "results.csv").read_bytes(), local_csv[eid])


@pytest.mark.parametrize(
    ("extra", "code", "needle"),
    [
        (["--backend", "dask", "--scheduler", "nonsense"], 2, "--scheduler must be a Dask scheduler address"),
        (["--backend", "dask", "--scheduler", "tcp://127.0.0.1:99999"], 2, "--scheduler must be a Dask scheduler"),
        (["--backend", "dask", "--scheduler", "http://127.0.0.1:8786"], 2, "--scheduler must be a Dask scheduler"),
        (["--backend", "dask"], 2, "--backend dask needs --scheduler ADDRESS"),
        (["--scheduler", "tcp://127.0.0.1:8786"], 2, "--scheduler applies only to --backend dask"),
        (
            ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:8786", "--jobs", "2"],
            2,
            "--jobs applies only to --backend local, got --jobs 2 with --backend dask",
        ),
        (["--backend", "dask", "--scheduler", "tcp://127.0.0.1:1", "--timeout=0"], 2, "--timeout must be a positive"),
        (
            ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:1", "--timeout", "1"],
            3,
            "cannot reach a Dask scheduler at tcp://127.0.0.1:1 within 1 s",
        ),
    ],
)
def test_bad_or_unreachable_scheduler_is_one_sentence(extra, code, needle, tmp_path, capsys):
    start = time.monotonic()
    assert _run("gap/privacy", tmp_path, *extra) == code
    assert needle in _error_line(capsys)
    assert time.monotonic() - start < 10
    assert not (tmp_path / "results.csv").exists()


def test_a_scheduler_without_workers_is_one_sentence(tmp_path, capsys):
    with distributed.LocalCluster(n_workers=0, **CLUSTER) as empty:
        code = _run("gap/privacy", tmp_path, "--backend", "dask", "--scheduler", empty.scheduler_address, "--timeout=1")
    assert code == 3
    assert f"the Dask scheduler at {empty.scheduler_address} has no workers (waited 1 s)" in _error_line(capsys)


def _die_on_setting_5(task):
    if task.setting_index == 5:
        os._exit(1)  # the worker process dies mid-task, as on an out-of-memory kill
    return run_task(task)


def test_a_worker_dying_mid_sweep_keeps_the_finished_tasks(cluster, local_csv, tmp_path, monkeypatch, capsys):
    eid = "gap/privacy"
    # The scheduler gives a task up after one dead worker (by default it retries it on 3 more).
    monkeypatch.setattr(cluster.scheduler, "allowed_failures", 0)
    monkeypatch.setattr(backends, "run_task", _die_on_setting_5)
    assert _run(eid, tmp_path, "--backend", "dask", "--scheduler", cluster.scheduler_address) == 3
    line = _error_line(capsys)
    assert "were lost because the Dask workers running them died" in line
    assert "tasks are saved in" in line and "running the same command again resumes from them" in line
    saved = saved_tasks(tmp_path / "parts")
    assert 5 not in saved and len(saved) >= 20
    monkeypatch.undo()
    assert _run(eid, tmp_path, "--jobs", "1") == 0  # resume locally
    assert_csv_match((tmp_path / "results.csv").read_bytes(), local_csv[eid])


def test_a_killed_worker_is_replaced_and_the_sweep_completes(cluster, tmp_path, monkeypatch):
    """SIGKILL one worker mid-sweep: Dask reruns its task elsewhere, results are still exact."""
    from agents.experiments.core import partial

    # Every finished task written at once: with the default batching (FLUSH_SECONDS), a sweep that
    # ends within one interval of its first write (a fast or quiet machine) shows 1 task, then all
    # 81, and the killer never sees it mid-sweep.
    monkeypatch.setattr(partial, "FLUSH_SECONDS", 0.0)
    kwargs = {"runs": 3, "horizon": 20_000, "progress": False}
    reference, _ = run_experiment("gap/privacy", jobs=1, out=tmp_path / "local", **kwargs)
    cluster.wait_for_workers(2, timeout=30)  # a worker killed by an earlier test is back
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)
    parts = tmp_path / "dask" / "parts"
    seen = []

    def kill_one_worker():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(saved_tasks(parts)) < 5:
            time.sleep(0.01)
        seen.append(len(saved_tasks(parts)))
        os.kill(next(iter(pids.values())), signal.SIGKILL)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    folder, _ = run_experiment(
        "gap/privacy", out=tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address, **kwargs
    )
    killer.join()
    assert 5 <= seen[0] < 81  # the kill came mid-sweep
    assert_csv_match((folder / "results.csv").read_bytes(), (reference / "results.csv").read_bytes())


def test_partial_store_keeps_what_the_csv_shows_and_redoes_a_cut_file(tmp_path):
    import numpy as np

    from agents.experiments.core.partial import PartialStore, manifest_for
    from agents.experiments.registry import get_experiment

    exp = get_experiment("gap/privacy").scaled(runs=1, horizon=100)
    store = PartialStore(tmp_path, manifest_for(exp, 0, 3))
    store.prepare(store.finished())
    row = {"a": np.float32(0.1), "b": np.int64(3), "c": np.bool_(True), "d": (1, 2), "e": 0.1 + 0.2, "f": None}
    for i in range(3):
        store.save(i, i, 0, [row])
        store.flush()  # one batch file per task here: 000000.json, 000001.json, 000002.json
    assert [str(v) for v in store.rows()[0].values()] == [str(v) for v in row.values()]
    (tmp_path / "parts" / "000001.json").write_text('{"tasks": [{"task": 1, "ro')  # cut short by a power loss
    assert store.finished() == {0, 2}


def test_a_failing_user_agent_on_the_cluster_is_one_sentence_with_its_frames(cluster, tmp_path, capsys):
    """The sentence and the agent's frames are made on the worker and reach banditlab; exit 2, tasks kept."""
    agent_file = tmp_path / "mine.py"
    agent_file.write_text(
        "import agents\n\n\nclass Mine(agents.Random):\n    def act(self, obs=None):\n"
        "        raise ValueError('no arm for you')\n\n\n"
        "def make(env, setting, seed):\n"
        "    if setting['edge_probability'] == 0.3:\n        return Mine(env.action_space.n, seed=seed)\n"
        "    return agents.Random(env.action_space.n, seed=seed)\n"
    )
    code = _run("gap/regret-p", tmp_path / "out", "--backend", "dask", "--scheduler", cluster.scheduler_address,
                "--agent", f"{agent_file}:make")  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    # Named after the agent make builds for the first setting (agents.Random).
    assert lines[0].startswith("banditlab: error: agent 'Random' failed in act (ValueError: no arm for you) in setting")
    assert " in setting 2 " in lines[0]
    assert "round 1 of 2,000 (counted from 1)" in lines[0]
    assert f'File "{agent_file}", line 6, in act' in err and "/agents/" not in err.replace(str(agent_file), "")
