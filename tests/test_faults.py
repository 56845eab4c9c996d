"""Faults with real processes and real signals: a ``--jobs 2`` sweep stopped by SIGINT, SIGTERM or
SIGKILL leaves no worker behind, says what it saved, and resumes to the uninterrupted results.csv
byte for byte; an ``--out`` folder holding someone else's files keeps them byte for byte.

Processes are found through ``/proc`` (Linux only): the children of the banditlab process, recorded
before the signal, and any process whose command line names the test's output folder.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import saved_tasks, wait_until

from agents.experiments.cli import main, run_experiment

pytestmark = pytest.mark.integration  # injects faults: killed workers, timeouts, signals to subprocesses

if not Path("/proc/self/stat").exists():  # pragma: no cover - not Linux
    pytest.skip("these tests find processes through /proc (Linux)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = "gap/privacy"
#: 540 tasks of about a hundredth of a second each: seconds of work on two workers after the first task is
#: saved (the partial store writes every half second), so the sweep is still running when it is stopped.
SCALE = ("--runs", "20", "--horizon", "100000")
#: The sweep's number of tasks (settings x runs).
TASKS = 27 * 20
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 90.0


def _state(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a live process, None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else (fields[0], int(fields[1]))


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            state = _state(int(entry.name))
            if state is not None and state[1] == pid:
                found.add(int(entry.name))
    return found


def _naming(text: str) -> set[int]:
    """Live processes whose command line contains ``text``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and _state(int(entry.name)) is not None:
                found.add(int(entry.name))
    return found


def _poll(condition, what: str) -> None:
    wait_until(condition, what, WAIT)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _python_m(*args: str, cwd: Path, **popen: Any) -> subprocess.Popen[Any]:
    """``python -m ARGS`` in its own session, importing this tree; ``popen``: where its output goes, and so on."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env, start_new_session=True, **popen)


class Banditlab:
    """``python -m agents.experiments.cli ARGS`` in its own session, output captured through pipes."""

    def __init__(self, *args: str, cwd: Path) -> None:
        pipe = subprocess.PIPE
        # As from an interactive shell: a shell that runs these tests in the background ignores
        # SIGINT for its children, and banditlab (rightly) keeps an ignored SIGINT.
        self.proc = _python_m(
            "agents.experiments.cli", *args, cwd=cwd, stdout=pipe, stderr=pipe, text=True, preexec_fn=_default_sigint
        )
        self.seen: set[int] = {self.proc.pid}

    def finish(self) -> tuple[int, str, str]:
        """Wait for the process and for everything holding its pipes; (exit code, stdout, stderr)."""
        try:
            out, err = self.proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"banditlab (pid {self.proc.pid}) or a process holding its output did not finish")
        return self.proc.returncode, out, err

    def kill_leftovers(self) -> None:
        """SIGKILL what this test started and is still alive (by pid, so a failing test leaves nothing)."""
        for pid in self.seen:
            if _state(pid) is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=WAIT)


@pytest.fixture
def banditlab(tmp_path: Path) -> Iterator[type[Banditlab]]:
    started: list[Banditlab] = []

    class Started(Banditlab):
        def __init__(self, *args: str) -> None:
            super().__init__(*args, cwd=tmp_path)
            started.append(self)

    yield Started
    for b in started:
        b.kill_leftovers()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """results.csv of the uninterrupted sweep (in this process, one job: the rows do not depend on jobs)."""
    folder = tmp_path_factory.mktemp("reference")
    runs, horizon = int(SCALE[1]), int(SCALE[3])
    run_experiment(EXPERIMENT, runs=runs, horizon=horizon, jobs=1, out=folder, progress=False)
    return (folder / "results.csv").read_bytes()


def _command(out: Path, *dask: str) -> list[str]:
    """The sweep's command: two local workers, or ``--backend dask`` with the options ``dask`` (no ``--jobs`` there)."""
    where = ["--backend", "dask", *dask] if dask else ["--jobs", "2"]
    return ["run", EXPERIMENT, *SCALE, *where, "--no-progress", "--out", str(out)]


def _resume(out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the same command again (in this process, whose compiled kernels the workers inherit); its stderr."""
    capsys.readouterr()
    assert main(_command(out)) == 0
    return capsys.readouterr().err


def _stop_mid_sweep(
    banditlab: type[Banditlab], out: Path, sig: signal.Signals, *, group: bool = False
) -> tuple[Banditlab, set[int]]:
    """Start the sweep, send ``sig`` once a task is saved and both workers run; the workers' pids.

    ``group``: to the whole process group (banditlab and its workers), as a closed terminal sends SIGHUP.
    """
    b = banditlab(*_command(out))
    _poll(lambda: bool(saved_tasks(out / "parts")) or b.proc.poll() is not None, "the first saved task")
    assert b.proc.poll() is None, "the sweep finished before it could be interrupted"
    workers = _children(b.proc.pid)
    b.seen |= workers | _naming(str(out))
    assert len(workers) >= 2, f"expected the two pool workers of --jobs 2, found {sorted(workers)}"
    if group:
        os.killpg(b.proc.pid, sig)  # its own session: the group is banditlab's
    else:
        os.kill(b.proc.pid, sig)
    return b, workers


def _assert_gone(pids: set[int], out: Path) -> None:
    _poll(lambda: not any(_state(p) is not None for p in pids) and not _naming(str(out)), "the workers to exit")


@pytest.mark.parametrize(  # SIGTERM's stop is also the first of the two signals below
    "sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)], ids=["SIGINT", "SIGTERM"]
)
def test_an_interrupted_sweep_stops_its_workers_and_resumes_byte_identical(sig, banditlab, reference, tmp_path, capsys):
    out = tmp_path / "out"
    b, workers = _stop_mid_sweep(banditlab, out, sig)
    code, _, err = b.finish()
    _assert_gone(workers, out)
    assert code == 130, err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.startswith("banditlab:")]
    assert len(lines) == 1, err
    assert "interrupted" in lines[0] and "tasks are saved in" in lines[0], lines[0]
    assert "running the same command again resumes from them" in lines[0]
    assert not (out / "results.csv").exists()

    assert "Resuming from" in _resume(out, capsys)
    assert (out / "results.csv").read_bytes() == reference
    assert not (out / "parts").exists()


def test_a_closed_terminal_stops_the_sweep_as_sigterm_does(banditlab, reference, tmp_path, capsys):
    """SIGHUP to banditlab and its workers (the terminal closed): the sweep stops cleanly and resumes.

    It ended the process at once (status 129, killed by the signal), losing the finished tasks not yet
    saved, and the workers died by it too while the parent went on.
    """
    out = tmp_path / "out"
    b, workers = _stop_mid_sweep(banditlab, out, signal.SIGHUP, group=True)
    code, _, err = b.finish()
    _assert_gone(workers, out)
    _assert_stopped_in_one_sentence(code, err)
    assert "interrupted by SIGHUP" in err, err
    assert not (out / "results.csv").exists()
    assert "Resuming from" in _resume(out, capsys)
    assert (out / "results.csv").read_bytes() == reference


def _assert_stopped_in_one_sentence(code: int, err: str, *, saved: bool = True) -> None:
    """Exit 130 with the one sentence saying the sweep was interrupted (and what it saved), nothing else."""
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [x for x in err.splitlines() if not x.startswith("Compiling numba kernels")]
    assert len(lines) == 1 and lines[0].startswith("banditlab: interrupted"), err
    if saved:
        assert "tasks are saved in" in lines[0] and "running the same command again resumes from them" in lines[0]


#: Two signals in quick succession, as a user pressing Ctrl-C after a SIGTERM, or twice.
TWO_SIGNALS = {"SIGTERM,SIGINT": (signal.SIGTERM, signal.SIGINT), "SIGINT,SIGINT": (signal.SIGINT, signal.SIGINT)}


def _two_signals(banditlab: type[Banditlab], tmp_path: Path, signals: tuple[signal.Signals, ...], tries: int) -> None:
    rng = random.Random()
    for attempt in range(tries):
        out = tmp_path / f"out{attempt}"
        b, workers = _stop_mid_sweep(banditlab, out, signals[0])
        time.sleep(rng.choice([0.0, rng.uniform(0.0, 0.05)]))
        os.kill(b.proc.pid, signals[1])
        code, _, err = b.finish()
        _assert_gone(workers, out)
        _assert_stopped_in_one_sentence(code, err)


@pytest.mark.parametrize(  # both pairs, fifteen times each, in the slow test below
    "signals",
    [
        pytest.param(pair, id=name, marks=() if name == "SIGTERM,SIGINT" else pytest.mark.slow)
        for name, pair in TWO_SIGNALS.items()
    ],
)
def test_a_second_signal_while_the_sweep_stops_is_ignored(signals, banditlab, tmp_path):
    """Two signals a few milliseconds apart: the second must not interrupt the first one's stop half-way.

    Interrupted, the stop printed tracebacks (a lock of the threading module released twice, a bad file
    descriptor at exit) or hung joining the pool's manager thread. The race is timing-dependent: a few tries,
    each with a random delay (up to 50 ms: also after the stop, while the command exits).
    """
    _two_signals(banditlab, tmp_path, signals, 3)


@pytest.mark.slow  # fifteen sweeps, each stopped by two signals: about half a minute
@pytest.mark.parametrize("signals", list(TWO_SIGNALS.values()), ids=list(TWO_SIGNALS))
def test_a_second_signal_while_the_sweep_stops_is_ignored_every_time(signals, banditlab, tmp_path):
    """As above, with more tries: a race the fast test may miss."""
    _two_signals(banditlab, tmp_path, signals, 15)


_SIGNAL_INSIDE_A_COMPILER_CALLBACK = r"""
import os, signal, sys
from numba.core.codegen import JITCodeLibrary

# numba's compiler calls back into Python through ctypes when LLVM has compiled a module: a signal handled
# there raises in the callback, where ctypes swallows the exception. Send it there, on the first compilation.
hook = JITCodeLibrary._object_compiled_hook.__func__
sent = []

def compiled(cls, module, buf):
    if not sent:
        sent.append(True)
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    return hook(cls, module, buf)

JITCodeLibrary._object_compiled_hook = classmethod(compiled)
from agents.experiments.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_numba_compiles_stops_the_run(sig, tmp_path):
    """A signal handled inside numba's compiler (a first run, empty cache) stops the run: it is not swallowed."""
    script, out = tmp_path / "compile.py", tmp_path / "out"
    script.write_text(_SIGNAL_INSIDE_A_COMPILER_CALLBACK)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    command = ["run", "gap/regret-eps", "--quick", "--jobs", "2", "--no-progress", "--out", str(out)]
    done = subprocess.run([sys.executable, str(script), sig.name, *command], capture_output=True, text=True,
                          timeout=WAIT, cwd=tmp_path, env=env, preexec_fn=_default_sigint)  # fmt: skip
    _assert_stopped_in_one_sentence(done.returncode, done.stderr, saved=False)
    assert not (out / "results.csv").exists()
    assert not _naming(str(out))


@pytest.mark.slow  # four first runs with an empty numba cache, each signalled while it compiles: up to a minute
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_random_moment_of_a_first_run_s_compilation_stops_it(sig, tmp_path, monkeypatch):
    """As above, with the signal sent from outside at a random moment while a first run compiles."""
    rng = random.Random()
    for attempt in range(4):
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / f"numba-cache{attempt}"))
        out = tmp_path / f"out{attempt}"
        code, err = _signal_while_compiling(tmp_path, out, sig, rng.uniform(0.1, 2.0))
        _assert_stopped_in_one_sentence(code, err, saved=False)
        assert not (out / "results.csv").exists()
        _assert_gone(set(), out)


def _signal_while_compiling(tmp_path: Path, out: Path, sig: signal.Signals, delay: float) -> tuple[int, str]:
    """A run into ``out``, sent ``sig`` ``delay`` seconds after it says it compiles; (exit code, stderr)."""
    err_path = out.with_name(out.name + ".err")
    command = ["run", "gap/regret-eps", "--quick", "--jobs", "2", "--no-progress", "--out", str(out)]
    with err_path.open("w") as err_file:
        proc = _python_m("agents.experiments.cli", *command, cwd=tmp_path, stdout=subprocess.DEVNULL,
                         stderr=err_file, preexec_fn=_default_sigint)  # fmt: skip
    try:
        _poll(lambda: "Compiling" in err_path.read_text() or proc.poll() is not None, "the compilation")
        time.sleep(delay)
        os.kill(proc.pid, sig)
        code = proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
    return code, err_path.read_text()


def test_sigterm_stops_score_like_run(banditlab, tmp_path):
    """``banditlab score`` runs a sweep as ``run`` does: SIGTERM stops its workers and says what it saved."""
    out = tmp_path / "score"
    b = banditlab("score", "UCB", "--quick", "--jobs", "2", "--no-progress", "--out", str(out))
    _poll(lambda: bool(saved_tasks(out / "parts")) or b.proc.poll() is not None, "the first saved task")
    assert b.proc.poll() is None, "the sweep finished before it could be stopped"
    workers = _children(b.proc.pid)
    b.seen |= workers | _naming(str(out))
    os.kill(b.proc.pid, signal.SIGTERM)
    code, _, err = b.finish()
    _assert_gone(workers, out)
    _assert_stopped_in_one_sentence(code, err)
    assert "interrupted by SIGTERM" in err


def test_a_killed_sweep_leaves_no_worker_and_resumes_byte_identical(banditlab, reference, tmp_path, capsys):
    """SIGKILL cannot be handled: the workers notice their parent is gone and exit by themselves."""
    out = tmp_path / "out"
    b, workers = _stop_mid_sweep(banditlab, out, signal.SIGKILL)
    code, _, _ = b.finish()  # returns only once no worker holds the pipes any more
    assert code == -signal.SIGKILL
    _assert_gone(workers, out)
    saved = len(saved_tasks(out / "parts"))
    assert 0 < saved < TASKS  # everything written before the kill, none of what was still buffered

    err = _resume(out, capsys)
    assert f"Resuming from {out / 'parts'}: {saved} of {TASKS} tasks are already done." in err
    assert (out / "results.csv").read_bytes() == reference


def test_out_with_someone_elses_files_keeps_them_byte_identical(banditlab, tmp_path):
    out = tmp_path / "mine"
    files = {
        "notes.txt": b"my notes\n",
        "results.csv": b"my,own\r\n1,2\r\n",
        "summary.md": b"# my summary\n",
        "figure.png": b"\x89PNG not really",
        "meta.json": b'{"mine": true}\n',
        "parts/keep.json": b'{"task": 0}',
    }
    for name, data in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    for extra in ([], ["--force"]):
        code, stdout, err = banditlab("run", "gap/regret-eps", "--runs", "1", "--horizon", "100", "--jobs", "2",
                                      "--no-progress", "--out", str(out), *extra).finish()  # fmt: skip
        assert code == 2, (extra, stdout, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert str(out) in err
        for name, data in files.items():
            assert (out / name).read_bytes() == data, name
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == sorted([*files, "parts"])


@pytest.mark.parametrize("how", ["removed", "moved", "parts-removed"])
def test_an_output_folder_removed_or_moved_mid_sweep_is_one_sentence_and_exit_74(how, banditlab, tmp_path):
    out = tmp_path / "out"
    b = banditlab(*_command(out))
    _poll(lambda: bool(saved_tasks(out / "parts")) or b.proc.poll() is not None, "the first saved task")
    assert b.proc.poll() is None, "the sweep finished before its folder could be removed"
    workers = _children(b.proc.pid)
    b.seen |= workers | _naming(str(out))
    if how == "removed":
        shutil.rmtree(out)
    elif how == "moved":
        out.rename(tmp_path / "elsewhere")
    else:
        shutil.rmtree(out / "parts")
    code, _, err = b.finish()
    _assert_gone(workers, out)
    assert code == 74, err
    assert "Traceback" not in err and "During handling" not in err, err
    lines = [x for x in err.splitlines() if x.startswith("banditlab:")]
    assert len(lines) == 1 and len(err.strip().splitlines()) <= 2, err  # and the compiling note
    assert lines[0].startswith(f"banditlab: error: cannot write {out}/"), lines[0]
    assert "No such file or directory" in lines[0] and "run the same command again" in lines[0], lines[0]


def test_a_force_rerun_stopped_while_it_writes_its_outputs_leaves_no_earlier_summary_or_figure(tmp_path):
    """A file-size limit stops the --seed 1 rerun at figure.png, after results.csv and meta.json."""
    out = tmp_path / "out"
    small = ["gap/privacy", "--runs", "1", "--horizon", "100", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert main(["run", *small]) == 0
    before = {name: (out / name).read_bytes() for name in ("summary.md", "figure.png", "meta.json")}
    assert len(before["figure.png"]) > 20_000 > (out / "results.csv").stat().st_size

    def limit() -> None:
        _default_sigint()
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    proc = _python_m("agents.experiments.cli", "run", *small, "--seed", "1", "--force", cwd=tmp_path,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)  # fmt: skip
    _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 74, err
    assert json.loads((out / "meta.json").read_text())["seed"] == 1
    for name, data in before.items():  # none of the seed-0 run's files is left beside seed 1's results
        assert not (out / name).exists() or (out / name).read_bytes() != data, name
    assert not (out / "summary.md").exists()
    record = json.loads((out / ".banditlab.json").read_text())
    assert "summary.md" not in record["files"] and "figure.png" not in record["files"]


@pytest.mark.slow  # a local cluster and fresh workers: about half a minute
def test_sigterm_on_the_dask_backend_stops_the_client_and_leaves_no_process(banditlab, tmp_path):
    """The Dask backend starts no process of its own: SIGTERM closes the client like Ctrl-C does."""
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "out"
    cluster_options = {"threads_per_worker": 1, "processes": True, "host": "127.0.0.1", "dashboard_address": None}
    with distributed.LocalCluster(n_workers=2, **cluster_options) as cluster:
        b = banditlab(*_command(out, "--scheduler", cluster.scheduler_address))
        _poll(lambda: bool(saved_tasks(out / "parts")) or b.proc.poll() is not None, "the first saved task")
        assert b.proc.poll() is None, "the sweep finished before it could be interrupted"
        started = _children(b.proc.pid) | _naming(str(out))
        b.seen |= started
        os.kill(b.proc.pid, signal.SIGTERM)
        code, _, err = b.finish()
        _assert_gone(started, out)
        assert code == 130, err
        assert "Traceback" not in err
        assert "interrupted" in err and "running the same command again resumes from them" in err
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            assert len(client.nthreads()) == 2  # the cluster's own workers are untouched


# A user agent that fails while the tasks run ------------------------------------------------------------------

#: gap/regret-eps at this scale: settings ε = 0.05, 0.1, 0.2 and runs 0, 1, i.e. 6 tasks, runs outermost; the agent
#: below fails in the third task (setting 2, run 0), so tasks 0 and 1 finish first.
AGENT_SCALE = ("--runs", "2", "--horizon", "200")
AGENT = """\
import sys
import time

FAIL = {fail!r}


class Mine:
    def __init__(self, n_arms, fails):
        self.n_arms, self.fails, self.t = n_arms, fails, 0

    def reset(self, seed=None):
        pass

    def act(self, obs=None):
        self.t += 1
        if self.fails and self.t == 3:
            if FAIL == "act":
                raise ValueError("no arm for you")
            if FAIL == "exit":
                sys.exit(4)
            if FAIL == "invalid":
                return 99
            if FAIL == "hang":
                time.sleep(3600)
        return self.t % self.n_arms

    def update(self, action, reward, info=None):
        if self.fails and self.t == 3 and FAIL == "update":
            raise RuntimeError("cannot learn")


def make(env, setting, seed):
    fails = setting["epsilon"] == 0.2
    if fails and FAIL == "factory":
        raise KeyError("no such agent")
    return Mine(env.action_space.n, fails)
"""
#: Each failure: what the sentence says it did, and whether the agent's own frame is shown (not for an invalid
#: action, which our code finds) and the round (not for the factory).
FAILURES = {
    "factory": ("could not be built (KeyError: 'no such agent')", True, False),
    "act": ("failed in act (ValueError: no arm for you)", True, True),
    "update": ("failed in update (RuntimeError: cannot learn)", True, True),
    "invalid": (
        "returned an invalid action (action must be an integer (int or numpy integer) in [0, 9], got 99",
        False,
        True,
    ),  # fmt: skip
    "exit": ("failed in act (it called sys.exit(4))", True, True),
    "hang": ("failed in act (still running after --task-timeout 5 s, and stopped)", True, True),
}


@pytest.mark.parametrize(
    ("fail", "jobs"),
    [  # every failure once in the default run, three of them with each --jobs; the others behind the slow marker
        *(
            (f, "1") if f in ("factory", "act", "invalid") else pytest.param(f, "1", marks=pytest.mark.slow)
            for f in FAILURES
        ),
        *((f, "2") for f in ("act", "exit", "hang")),
    ],
)
def test_a_failing_user_agent_is_one_sentence_with_its_frames_and_the_fixed_agent_resumes(
    fail, jobs, banditlab, tmp_path
):
    """Exit 2, one sentence naming agent, setting, run and round, the agent's frames only; fixed, it resumes."""
    agent, out = tmp_path / "mine.py", tmp_path / "out"
    agent.write_text(AGENT.format(fail=fail))
    command = ["run", "gap/regret-eps", *AGENT_SCALE, "--jobs", jobs, "--no-progress", "--out", str(out),
               "--agent", f"{agent}:make", *(("--task-timeout", "5") if fail == "hang" else ())]  # fmt: skip
    code, _, err = banditlab(*command).finish()
    assert code == 2, err
    what, frames, in_round = FAILURES[fail]
    lines = [x for x in err.splitlines() if not x.startswith("Compiling numba kernels")]  # a cold cache says so first
    assert lines[0].startswith(f"banditlab: error: agent 'make' {what}"), err
    # The first failing task: setting 2 of run 0 with one job; with two, run 1 may fail first on the other worker.
    failed = re.search(r"in setting 2 \(gap=0\.2, edge_probability=0\.1, epsilon=0\.2\), run ([01])\b", lines[0])
    assert failed is not None and (jobs == "2" or failed[1] == "0"), err
    assert ("round 3 of 200" in lines[0]) == in_round, err
    assert "Traceback (most recent call last)" not in err
    assert [x for x in lines if x.startswith("banditlab")] == lines[:1], err
    shown = [x.strip() for x in lines if x.strip().startswith("File ")]
    assert shown == ([f'File "{agent}", line {_line(agent, fail)}, in {_where(fail)}'] if frames else []), err
    saved = saved_tasks(out / "parts")
    # One job: tasks 0 and 1 are saved, not the failing task 2; two: task 0 (in banditlab's process) and others
    assert 3 * int(failed[1]) + 2 not in saved and (saved == [0, 1] if jobs == "1" else 0 in saved), (saved, err)
    assert f"{len(saved)} of 6 tasks are saved in {out / 'parts'}" in lines[0]

    agent.write_text(AGENT.format(fail=None))  # the agent fixed: the same command resumes
    code, _, err = banditlab(*command).finish()
    assert code == 0, err
    assert f"Resuming from {out / 'parts'}: {len(saved)} of 6 tasks are already done." in err
    assert json.loads((out / "meta.json").read_text())["resumed_tasks"] == len(saved)


def _line(agent: Path, fail: str) -> int:
    """The line of the agent file where ``fail`` happens."""
    needle = {"factory": "KeyError", "act": "ValueError", "update": "RuntimeError", "exit": "sys.exit(4)",
              "hang": "time.sleep"}[fail]  # fmt: skip
    return next(i for i, x in enumerate(agent.read_text().splitlines(), 1) if needle in x)


def _where(fail: str) -> str:
    return {"factory": "make", "update": "update"}.get(fail, "act")


def _dask(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    """``dask ARGS`` (scheduler or worker) in its own session, importing this tree, its output discarded."""
    return _python_m(*args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_the_last_dask_worker_dying_mid_sweep_exits_3_after_timeout(banditlab, tmp_path):
    """The cluster's only worker (no nanny to restart it) is SIGKILLed mid-sweep: exit 3 within --timeout + margin.

    The results it held die with it: banditlab, fetching one of them, must neither wait for ever for a worker to
    compute it again nor let dask.distributed print the traceback of the fetch it gave up.
    """
    distributed = pytest.importorskip("distributed")
    out, address = tmp_path / "out", tmp_path / "scheduler.json"
    started = [_dask("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
                     ":0", "--scheduler-file", str(address), cwd=tmp_path)]  # fmt: skip
    try:
        _poll(lambda: address.exists() and address.stat().st_size > 0, "the scheduler")
        scheduler = json.loads(address.read_text())["address"]
        worker = _dask("distributed.cli.dask_worker", scheduler, "--no-nanny", "--nthreads", "1", cwd=tmp_path)
        started.append(worker)
        # The worker joins before the sweep starts: --timeout 3 also bounds banditlab's wait for a first
        # worker, and a fresh worker process on a loaded machine can take longer than that to start.
        with distributed.Client(scheduler, set_as_default=False, timeout=WAIT) as client:
            client.wait_for_workers(1, timeout=WAIT)
        b = banditlab(*_command(out, "--scheduler", scheduler, "--timeout", "3"))
        _poll(lambda: bool(saved_tasks(out / "parts")) or b.proc.poll() is not None, "the first saved task")
        if b.proc.poll() is not None:
            code, _, err = b.finish()
            pytest.fail(f"the sweep ended (status {code}) before its worker could be killed: {err}")
        worker.kill()
        killed = time.monotonic()
        code, _, err = b.finish()
        took = time.monotonic() - killed
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=WAIT)
    assert code == 3, err
    assert "Traceback" not in err and "exception" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"banditlab: error: the Dask cluster at {scheduler} has had no workers for 3 s"), err
    assert "tasks are saved in" in lines[0] and "running the same command again resumes from them" in lines[0]
    assert took < 3 + 30, took  # the timeout, a second between checks and a slow, shared machine's margin


def test_a_worker_its_timer_cannot_stop_is_killed_after_task_timeout(banditlab, tmp_path):
    """An agent that blocks SIGALRM and hangs in a worker: the workers are killed, exit 2, the finished tasks kept."""
    agent, out = tmp_path / "stuck.py", tmp_path / "out"
    agent.write_text(
        AGENT.format(fail=None).replace(
            "        return self.t % self.n_arms",
            "        if self.fails and self.t == 3:\n"
            "            import signal\n"
            "            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
            "            time.sleep(3600)\n"
            "        return self.t % self.n_arms",
        )
    )
    b = banditlab("run", "gap/regret-eps", *AGENT_SCALE, "--jobs", "2", "--no-progress", "--out", str(out),
                  "--agent", f"{agent}:make", "--task-timeout", "2")  # fmt: skip
    code, _, err = b.finish()  # returns only once no process holds banditlab's output: the stuck worker is gone
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("banditlab: error: no task finished for 7 s although --task-timeout 2 s"), err
    assert "the worker processes were stopped" in lines[0] and "tasks are saved in" in lines[0], err
    assert 0 in saved_tasks(out / "parts")


_KILLED_HOLDING_NUMBAS_LOCK = r"""
import multiprocessing, os, signal, sys
import numba
from numba.np.ufunc import parallel
from agents.experiments.core.backends import _init_worker

def worker():
    _init_worker(None, 1)
    with parallel._backend_init_process_lock:  # as numba holds it while it starts a thread pool
        os.kill(os.getpid(), signal.SIGKILL)

parallel._set_init_process_lock()  # made at the parent's first parallel kernel, before the workers are forked
child = multiprocessing.get_context("fork").Process(target=worker)
child.start()
child.join()
assert child.exitcode == -signal.SIGKILL, child.exitcode
numba.get_num_threads()  # takes numba's start lock: hangs for ever if the killed worker held the parent's
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="forks a worker (Linux)")
def test_a_worker_killed_while_numba_starts_its_threads_leaves_the_parent_working():
    """banditlab kills workers (Ctrl-C, SIGTERM, --task-timeout); numba's start lock must not die held with one."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_HOLDING_NUMBAS_LOCK], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


_STOPPED_HALF_WAY_THROUGH_A_RESULT = r"""
import multiprocessing, struct, sys, time
from concurrent.futures import ProcessPoolExecutor
from agents.experiments.core.backends import _stop

def send_half_a_result():
    # What a worker stopped half-way through sending its result leaves in the pipe: a length, part of a body.
    pool._result_queue._writer._send(struct.pack("!i", 1000) + b"x" * 10)
    time.sleep(3600)

pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
started = pool.submit(send_half_a_result)
time.sleep(1.0)  # the manager thread has read the length and waits for the rest
manager = pool._executor_manager_thread
_stop(pool)
manager.join(30)  # the interpreter joins it at exit too
print("stuck" if manager.is_alive() else "ok", flush=True)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="forks the pool's workers (Linux)")
def test_workers_stopped_half_way_through_sending_a_result_let_banditlab_exit():
    """A worker stopped mid-message must not leave the pool's manager thread (joined at exit) waiting for ever."""
    done = subprocess.run(
        [sys.executable, "-c", _STOPPED_HALF_WAY_THROUGH_A_RESULT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.stdout, done.stderr[-2000:])


_STOPPED_WHILE_TASKS_RUN = r"""
import sys, time
from concurrent.futures import ProcessPoolExecutor
from agents.experiments.core.backends import _stop

def task(x):
    time.sleep(0.05)
    return x

if __name__ == "__main__":
    pool = ProcessPoolExecutor(max_workers=2)
    futures = [pool.submit(task, i) for i in range(40)]
    futures[0].result()
    manager = pool._executor_manager_thread
    _stop(pool)
    print("running" if manager.is_alive() else "ended", flush=True)
    sys.exit(130)  # at once, as banditlab does after saying what it saved
"""


def test_stopping_the_pool_waits_for_its_manager_thread_so_the_exit_prints_no_traceback(tmp_path):
    """Ctrl-C stops the pool and banditlab exits: the pool's manager thread must be done by then.

    Still running, it may be closing the pool's wake-up pipe while the interpreter's exit hook of
    concurrent.futures writes to it, which prints a traceback (bad file descriptor) after the
    one-sentence message.
    """
    script = tmp_path / "stop.py"
    script.write_text(_STOPPED_WHILE_TASKS_RUN)
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 130, done.stderr[-2000:]
        assert done.stdout.strip() == "ended", done.stdout
        assert "Traceback" not in done.stderr, done.stderr[-2000:]


_TIMEOUTS_AROUND_A_GENERATOR_KERNEL = r"""
import sys
import numba
import numpy as np
from agents.experiments.core.runner import deadline
from agents.user_agents import TaskTimeout

@numba.njit(cache=False)
def draw(rng, n):
    total = 0.0
    for _ in range(n):
        total += rng.random()
    return total

draw(np.random.default_rng(0), 1)
for i in range(int(sys.argv[1])):
    try:
        with deadline(0.002):
            while True:  # a fresh Generator per call: numba unboxes it through ctypes.cast every time
                draw(np.random.default_rng(i), 10)
    except TaskTimeout:
        pass
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="SIGALRM interval timer (POSIX)")
def test_task_timeouts_around_kernels_that_take_a_generator_never_crash_the_process():
    """A timeout must not fire inside the Python code numba runs to unbox a Generator (it would segfault)."""
    done = subprocess.run(
        [sys.executable, "-c", _TIMEOUTS_AROUND_A_GENERATOR_KERNEL, "150"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-2000:])


_SIGNALLED_RIGHT_AFTER_FORK = r"""
import os, signal, sys
from agents.experiments.core.backends import catch_interrupts

sig = getattr(signal, sys.argv[1])
with catch_interrupts():
    pid = os.fork()  # as the pool forks a worker while banditlab's handler is installed
    if pid == 0:
        try:
            os.kill(os.getpid(), sig)  # before the worker's initializer replaced the handler
            for _ in range(1000):  # the handler runs at one of these steps
                pass
        except BaseException:
            os._exit(3)  # raised in the child: it would unwind into its parent's code
        os._exit(0)
    _, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="forks (Linux)")
@pytest.mark.parametrize(("name", "expected"), [("SIGTERM", 128 + signal.SIGTERM), ("SIGINT", 0)])
def test_a_worker_signalled_before_its_initializer_ends_or_ignores_it_and_never_raises(name, expected):
    """A forked worker inherits banditlab's handler until its initializer runs; the handler must not raise there.

    Raised in the child right after ``os.fork()``, the exception unwound the worker out of the
    pool's start into the parent's code, which it went on running as a second parent: under
    pytest-xdist, a second worker reporting the same tests. SIGTERM now ends such a worker
    (128 + SIGTERM) and SIGINT is ignored.
    """
    done = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_RIGHT_AFTER_FORK, name], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(expected), (done.stdout, done.stderr[-2000:])
