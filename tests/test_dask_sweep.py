"""Faults of the Dask path with a real ``dask scheduler`` and ``dask worker`` on loopback (subprocesses).

A scheduler or a worker that cannot import the project, or runs another version of it, is one
sentence and exit status 3 before any task is sent; a scheduler that stops answering mid-sweep
(SIGSTOP: the connection stays open) ends the sweep after ``--timeout`` seconds with exit status
3, its finished tasks kept, and the same command resumes to the results of an uninterrupted run;
a ``--timeout`` beyond :data:`~agents.experiments.core.backends.MAX_TIMEOUT` is refused with
exit status 2; a failed connection leaves no event-loop thread behind; two sweeps of the same
label on one cluster at once each get their own rows; Ctrl-C or SIGTERM mid-sweep exits with
status 130 and the same command resumes to the results of an uninterrupted local run (floats
compared to the tolerance of ``tests/recorded.py``). Every process a test starts is killed, with
its session, at its end.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import saved_tasks, wait_until
from recorded import assert_csv_match

from agents.experiments.cli import main
from agents.experiments.core import backends, partial
from agents.experiments.core.backends import MAX_TIMEOUT, make_backend

if importlib.util.find_spec("distributed") is None:
    pytest.skip("could not import 'distributed'", allow_module_level=True)

pytestmark = pytest.mark.integration  # dask scheduler and worker processes, signals

ROOT = Path(__file__).resolve().parents[1]
#: gap/regret-eps at this scale: 6 tasks, a second or two.
SCALE = ("gap/regret-eps", "--quick", "--runs", "2", "--horizon", "200", "--no-progress")
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 60.0

#: A preload module (``dask scheduler/worker --preload``) after which the project cannot be imported.
NO_PROJECT = """\
import sys


class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("agents", "bandit_envs"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Block())
"""
#: A preload module after which the project reports another version.
OTHER_VERSION = "import bandit_envs\n\nbandit_envs.__version__ = '0.0.1'\n"


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts: whatever is still alive at its end is continued and killed, with its session."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=WAIT)


def _dask(started: list[subprocess.Popen[bytes]], *args: str, cwd: Path) -> subprocess.Popen[bytes]:
    """``python -m distributed.cli.X ARGS`` in its own session, with this project on its path, its output discarded."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    started.append(proc)
    return proc


def _poll(condition, what: str) -> None:
    wait_until(condition, what, WAIT)


def _cluster(tmp_path: Path, started: list[subprocess.Popen[bytes]], scheduler: str = "", worker: str = "") -> str:
    """A scheduler and one worker (``--no-nanny``), each with the preload module text given; the address."""
    extra: dict[str, list[str]] = {}
    for role, text in (("scheduler", scheduler), ("worker", worker)):
        extra[role] = []
        if text:
            (tmp_path / f"{role}_preload.py").write_text(text)
            extra[role] = ["--preload", str(tmp_path / f"{role}_preload.py")]
    file = tmp_path / "scheduler.json"
    _dask(started, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
          "127.0.0.1:0", "--scheduler-file", str(file), *extra["scheduler"], cwd=tmp_path)  # fmt: skip
    _poll(lambda: file.exists() and file.stat().st_size > 0, "the scheduler")
    address = str(json.loads(file.read_text())["address"])
    _dask(started, "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
          *extra["worker"], cwd=tmp_path)  # fmt: skip
    return address


def _one_sentence(err: str) -> str:
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [x for x in err.splitlines() if x.startswith("banditlab:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_timeout_beyond_its_limit_is_refused_before_any_work(tmp_path, capsys):
    """``--timeout 1e10`` overflowed a thread's wait: an OverflowError traceback and exit status 70."""
    code = main(["run", *SCALE, "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1", "--timeout", "1e10",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "--timeout must be a positive number of seconds, at most 1e+06, got 10000000000.0" in line, line
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="--timeout"):
        make_backend("dask", scheduler="tcp://127.0.0.1:8786", timeout=MAX_TIMEOUT * 2)
    backend = make_backend("dask", scheduler="tcp://127.0.0.1:8786", timeout=MAX_TIMEOUT)
    assert isinstance(backend, backends.DaskBackend) and backend.timeout == MAX_TIMEOUT


@pytest.mark.parametrize(
    ("role", "preload", "needle"),
    [
        ("worker", NO_PROJECT, "cannot import the project (No module named 'agents')"),
        ("worker", OTHER_VERSION, "has bandit-envs 0.0.1, not "),
        ("scheduler", NO_PROJECT, "cannot import the project (No module named 'agents'), and it unpickles the tasks"),
    ],
    ids=["worker-without-project", "worker-other-version", "scheduler-without-project"],
)
def test_a_cluster_without_the_project_or_with_another_version_is_one_sentence_and_exit_3(
    role, preload, needle, started, tmp_path, capsys
):
    """A worker without the project died on the first task and was reported as "no workers" after
    ``--timeout``; a scheduler without it gave a RuntimeError traceback and exit status 70; a worker
    of another version ran the sweep."""
    address = _cluster(tmp_path, started, **{role: preload})
    code = main(["run", *SCALE, "--backend", "dask", "--scheduler", address, "--timeout", "30", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    assert code == 3
    line = _one_sentence(capsys.readouterr().err)
    assert line.startswith(f"banditlab: error: the Dask {role} at ") and needle in line, line
    assert not (tmp_path / "out" / "results.csv").exists()
    assert not saved_tasks(tmp_path / "out" / "parts")  # refused before any task was sent


@pytest.mark.slow
def test_a_scheduler_that_stops_answering_mid_sweep_ends_it_after_the_timeout_and_it_resumes(
    started, tmp_path, monkeypatch, capsys
):
    """A stopped scheduler (SIGSTOP: the connection stays open) made banditlab wait for ever."""
    monkeypatch.setattr(partial, "FLUSH_SECONDS", 0.0)  # every finished task written at once
    scale = ["gap/regret-eps", "--quick", "--runs", "12", "--horizon", "20000", "--no-progress"]
    assert main(["run", *scale, "--jobs", "1", "--out", str(tmp_path / "local")]) == 0
    address = _cluster(tmp_path, started)
    scheduler = started[0]
    parts = tmp_path / "out" / "parts"
    stopped = []

    def stop_the_scheduler() -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and len(saved_tasks(parts)) < 2:
            time.sleep(0.01)
        os.kill(scheduler.pid, signal.SIGSTOP)
        stopped.append(time.monotonic())

    stopper = threading.Thread(target=stop_the_scheduler, daemon=True)
    stopper.start()
    result: list[int] = []
    command = [
        "run",
        *scale,
        "--backend",
        "dask",
        "--scheduler",
        address,
        "--timeout",
        "2",
        "--out",
        str(tmp_path / "out"),
    ]
    # A thread: on the old code it waited for ever, and the test must still end.
    runner = threading.Thread(target=lambda: result.append(main(command)), daemon=True)
    runner.start()
    runner.join(WAIT)
    stopper.join(WAIT)
    os.kill(scheduler.pid, signal.SIGCONT)
    assert result, "banditlab still waited for the stopped scheduler"
    took = time.monotonic() - stopped[0]
    assert result == [3]
    line = _one_sentence(capsys.readouterr().err)
    assert f"the Dask scheduler at {address} has not answered for 2 s" in line, line
    assert "running the same command again resumes from them" in line
    assert took < 2 + 2 * backends.CONNECT_GRACE + 2 * 2 + 10, took  # the timeout, then a close bounded by it
    saved = saved_tasks(parts)
    assert 2 <= len(saved) < 36
    assert main(["run", *scale, "--jobs", "2", "--out", str(tmp_path / "out")]) == 0  # resumed locally
    assert_csv_match(tmp_path / "out" / "results.csv", tmp_path / "local" / "results.csv")
    assert json.loads((tmp_path / "out" / "meta.json").read_text())["resumed_tasks"] == len(saved)


def test_failed_connections_leave_no_event_loop_thread_behind():
    """Each failed connection left distributed's "IO loop" thread running (a client that never started)."""
    before = set(threading.enumerate())
    for _ in range(3):
        with pytest.raises(backends.BackendError, match="cannot reach a Dask scheduler"):
            with backends.DaskBackend("tcp://127.0.0.1:1", timeout=0.5):
                pass
    deadline = time.monotonic() + 10
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [t.name for t in set(threading.enumerate()) - before]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from an interactive shell, not a background job


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_sweep_on_the_cluster_exits_130_and_the_same_command_resumes(sig, started, tmp_path):
    """Ctrl-C or SIGTERM of the banditlab command mid-sweep: one line, status 130, no process left, then a resume
    on the cluster gives the results of an uninterrupted local run (floats within the tolerance of recorded.py)."""
    scale = ["gap/regret-eps", "--quick", "--runs", "6", "--horizon", "20000", "--no-progress"]
    assert main(["run", *scale, "--jobs", "2", "--out", str(tmp_path / "local")]) == 0
    address = _cluster(tmp_path, started)
    command = [sys.executable, "-m", "agents.experiments.cli", "run", *scale, "--backend", "dask", "--scheduler",
               address, "--timeout", "30", "--out", str(tmp_path / "out")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_default_sigint)  # fmt: skip
    started.append(proc)  # killed at the end should it still run
    parts = tmp_path / "out" / "parts"
    _poll(lambda: len(saved_tasks(parts)) >= 2 or proc.poll() is not None, "two finished tasks")
    assert proc.poll() is None, "the sweep ended before the signal"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, err
    line = _one_sentence(err)
    assert "tasks are saved in" in line and "running the same command again resumes from them" in line, line
    saved = saved_tasks(parts)
    assert 2 <= len(saved) < 18
    assert subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=WAIT).returncode == 0
    assert_csv_match(tmp_path / "out" / "results.csv", tmp_path / "local" / "results.csv")
    assert json.loads((tmp_path / "out" / "meta.json").read_text())["resumed_tasks"] == len(saved)


def test_two_sweeps_of_the_same_label_at_once_each_get_their_own_rows(started, tmp_path):
    """The Dask keys were ``{label}-{index}``: a second sweep of the same label (the same experiment and
    options, but e.g. two scripts' factories both named ``__main__:make``) got the first one's rows."""
    from agents.experiments.core.runner import run_task, tasks_for
    from agents.experiments.registry import get_experiment

    exp = get_experiment("gap/regret-eps").scaled(runs=2, horizon=200)
    first, second = list(enumerate(tasks_for(exp, 0))), list(enumerate(tasks_for(exp, 1)))
    address = _cluster(tmp_path, started)
    with backends.DaskBackend(address, timeout=30) as a, backends.DaskBackend(address, timeout=30) as b:
        sweep = a.run(first, label="same")
        rows_first = dict([next(sweep)])  # the first sweep's other tasks stay held on the scheduler meanwhile
        rows_second = dict(b.run(second, label="same"))
        rows_first.update(sweep)
    for rows, pending in ((rows_first, first), (rows_second, second)):
        for index, task in pending:
            want = [row["regret"] for row in run_task(task)]
            assert [row["regret"] for row in rows[index]] == pytest.approx(want, rel=1e-12, abs=0), index
