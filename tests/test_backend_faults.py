"""Faults of the backends with real processes, sockets and signals: a Dask address where something
other than a scheduler answers, scheduler schemes banditlab cannot use, a worker process a user
agent ends, and a user agent that swallows the task timer's exception and the interruption.

Every case must end in bounded time with one sentence and the documented exit status (2 for bad
input or a task stopped by ``--task-timeout``, 3 for an unusable cluster, 130 after Ctrl-C or
SIGTERM), never a traceback. Servers listen on loopback only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import saved_tasks

from agents.experiments.cli import main
from agents.experiments.core import backends
from agents.experiments.core.backends import LocalBackend, catch_interrupts, make_backend, parse_scheduler
from agents.experiments.core.runner import tasks_for
from agents.experiments.registry import get_experiment

pytestmark = pytest.mark.integration  # subprocesses, sockets, signals, a Dask scheduler

if not hasattr(signal, "setitimer") or sys.platform == "win32":  # pragma: no cover - not POSIX
    pytest.skip("these tests send POSIX signals and use --task-timeout", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
#: gap/regret-eps at this scale: 6 tasks (settings ε = 0.05, 0.1, 0.2, runs 0 and 1, runs outermost).
SCALE = ("gap/regret-eps", "--quick", "--runs", "2", "--horizon", "200", "--no-progress")
#: Bound on every wait for a process (generous: the machine may be shared).
WAIT = 60.0

AGENT = """\
import os
import signal
import time

HOW = {how!r}
EPSILON = {epsilon!r}
MARK = {mark!r}


class Mine:
    def __init__(self, n_arms, fails):
        self.n_arms, self.fails, self.t = n_arms, fails, 0

    def reset(self, seed=None):
        pass

    def act(self, obs=None):
        self.t += 1
        if self.fails and self.t == 3:
            if HOW == "swallow":  # catches the timer's TaskTimeout, Ctrl-C and SIGTERM alike
                open(MARK, "w").close()
                while True:
                    try:
                        time.sleep(100)
                    except BaseException:
                        pass
            if HOW == "exit":
                os._exit(7)
            if HOW == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
        return self.t % self.n_arms

    def update(self, action, reward, info=None):
        pass


def make(env, setting, seed):
    return Mine(env.action_space.n, setting["epsilon"] == EPSILON)
"""


def _banditlab_command() -> list[str]:
    """The installed ``banditlab`` script beside this Python, else ``python -m agents.experiments.cli``."""
    script = Path(sys.executable).with_name("banditlab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agents.experiments.cli"]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from an interactive shell, not a background job


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([*_banditlab_command(), *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)  # fmt: skip


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """(exit status, standard error) of ``proc``; killed (its whole session) if it does not end in time."""
    try:
        _, err = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"banditlab (pid {proc.pid}) did not end within {WAIT:g} s")
    return proc.returncode, err


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts: whatever is still alive at its end is killed, with its session."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=WAIT)


def _one_sentence(err: str) -> str:
    """The one line of ``err`` (a cold numba cache says it compiles first); no traceback."""
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [x for x in err.splitlines() if x and not x.startswith(("Compiling numba kernels", "Compiled numba"))]
    assert len(lines) == 1, err
    return lines[0]


def _agent(tmp_path: Path, how: str, epsilon: float) -> tuple[Path, Path]:
    """A user agent file that fails (``how``) in the tasks of setting ε = ``epsilon``; (file, its marker file)."""
    agent, mark = tmp_path / "mine.py", tmp_path / "stuck"
    agent.write_text(AGENT.format(how=how, epsilon=epsilon, mark=str(mark)))
    return agent, mark


def _poll(condition, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"banditlab ended (status {proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


# Defect 1: something answers at the address, but not a Dask scheduler ----------------------------------------------


class _Server:
    """A TCP server thread on loopback: ``silent`` accepts and never answers, ``http`` answers as a web server."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            self.conns.append(conn)
            if self.mode == "http":
                conn.settimeout(1.0)
                try:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                except OSError:
                    pass
                conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for conn in self.conns:
            conn.close()
        self.sock.close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    s = _Server(request.param)
    yield s
    s.close()


@pytest.mark.parametrize(
    ("server", "needle"),
    [("silent", "no Dask scheduler answered at"), ("http", "is not a Dask scheduler: it answered")],
    indirect=["server"],
)
def test_a_server_that_is_not_a_dask_scheduler_is_one_sentence_and_exit_3_within_the_timeout(
    server, needle, started, tmp_path
):
    """It hung for ever (a listener that never answers), or printed a MemoryError traceback (an HTTP reply)."""
    address = f"tcp://127.0.0.1:{server.port}"
    start = time.monotonic()
    proc = _start("run", *SCALE, "--backend", "dask", "--scheduler", address, "--timeout", "2",
                  "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    started.append(proc)
    code, err = _finish(proc)
    took = time.monotonic() - start
    assert code == 3, err
    line = _one_sentence(err)
    assert line.startswith("banditlab: error: ") and needle in line and address in line, line
    assert server.accepted >= 1
    assert took < 2 + backends.CONNECT_GRACE + 20, took  # the timeout, its grace, and banditlab's start-up


@pytest.mark.parametrize("server", ["silent"], indirect=True)
def test_sigterm_while_a_silent_server_holds_the_connection_is_one_line_and_no_client_traceback(
    server, started, tmp_path
):
    """SIGTERM during the handshake printed "Exception ignored in Client.__del__" and a TimeoutError traceback."""
    proc = _start("run", *SCALE, "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{server.port}",
                  "--timeout", "30", "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    started.append(proc)
    _poll(lambda: server.accepted >= 1, "the connection to the server", proc)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGTERM)
    code, err = _finish(proc)
    assert code == 130, err
    assert _one_sentence(err).startswith("banditlab: interrupted by SIGTERM"), err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _dask(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """``python -m distributed.cli.X ARGS`` in its own session, its output discarded."""
    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)  # fmt: skip


def _scheduler(tmp_path: Path, started: list[subprocess.Popen[str]], *extra: str) -> str:
    """Start a ``dask scheduler`` on loopback; its address."""
    pytest.importorskip("distributed")
    file = tmp_path / "scheduler.json"
    proc = _dask("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
                 str(file), *extra, cwd=tmp_path)  # fmt: skip
    started.append(proc)
    _poll(lambda: file.exists() and file.stat().st_size > 0, "the scheduler", proc)
    return str(json.loads(file.read_text())["address"])


def test_the_dashboard_port_of_a_real_scheduler_is_one_sentence_and_exit_3(started, tmp_path):
    """``--scheduler`` given the dashboard's port (an HTTP server), an easy mistake, used to hang until killed."""
    dashboard = _free_port()
    _scheduler(tmp_path, started, "--dashboard-address", f"127.0.0.1:{dashboard}")
    _poll(lambda: _listening(dashboard), "the dashboard")
    start = time.monotonic()
    proc = _start("run", *SCALE, "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{dashboard}", "--timeout",
                  "2", "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    started.append(proc)
    code, err = _finish(proc)
    assert code == 3, err
    assert "Dask scheduler" in _one_sentence(err), err
    assert time.monotonic() - start < 2 + backends.CONNECT_GRACE + 20


# Defect 2: schemes the parser accepted but that cannot work ---------------------------------------------------------


@pytest.mark.parametrize("scheme", ["tls", "wss", "ucx", "inproc"])
def test_a_scheme_banditlab_cannot_use_is_refused_at_once_with_exit_2(scheme, tmp_path, capsys):
    """tls:// failed after 29 s with "TLS expects a ssl_context", ucx:// with "Can't instantiate abstract class"."""
    start = time.monotonic()
    code = main(["run", *SCALE, "--backend", "dask", "--scheduler", f"{scheme}://127.0.0.1:1", "--out",
                 str(tmp_path / "out")])  # fmt: skip
    assert code == 2
    line = _one_sentence(capsys.readouterr().err)
    assert f"{scheme}://" in line and "tcp:// or ws://" in line, line
    assert time.monotonic() - start < 5
    assert not (tmp_path / "out" / "results.csv").exists()
    with pytest.raises(ValueError, match="cannot be used"):
        make_backend("dask", scheduler=f"{scheme.upper()}://127.0.0.1:8786")


@pytest.mark.parametrize(
    ("given", "normal"),
    [("127.0.0.1:8786", "tcp://127.0.0.1:8786"), ("tcp://h:1", "tcp://h:1"), ("ws://[::1]:8786", "ws://[::1]:8786")],
)
def test_tcp_and_ws_addresses_are_accepted(given, normal):
    assert parse_scheduler(given) == normal


def test_a_ws_scheduler_runs_the_sweep(started, tmp_path):
    """ws:// is accepted because it works without security settings: a real scheduler and worker over websockets."""
    address = _scheduler(tmp_path, started, "--protocol", "ws", "--dashboard-address", "127.0.0.1:0")
    assert address.startswith("ws://"), address
    started.append(_dask("distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                         cwd=tmp_path))  # fmt: skip
    proc = _start("run", *SCALE, "--backend", "dask", "--scheduler", address, "--timeout", "20", "--out",
                  str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    started.append(proc)
    code, err = _finish(proc)
    assert code == 0, err
    assert (tmp_path / "out" / "results.csv").exists()


# Defect 3: a worker process a user agent ends ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_user_agent_that_ends_its_worker_is_named_in_the_sentence(how, started, tmp_path):
    """The worker dies in a task of setting ε = 0.2 (not the first task, which runs in banditlab's own process)."""
    agent, _ = _agent(tmp_path, how, 0.2)
    out = tmp_path / "out"
    proc = _start("run", *SCALE, "--jobs", "2", "--agent", f"{agent}:make", "--out", str(out), cwd=tmp_path)
    started.append(proc)
    code, err = _finish(proc)
    assert code == 3, err
    line = _one_sentence(err)
    assert line.startswith("banditlab: error: a worker process died before its tasks finished"), line
    assert "the user agent 'make' may have ended it" in line and "fewer --jobs will not help" in line, line
    assert 0 in saved_tasks(out / "parts")


def test_a_worker_death_without_user_agents_keeps_the_generic_sentence():
    exp = get_experiment("gap/regret-eps").scaled(runs=2, horizon=200)
    pending = list(enumerate(tasks_for(exp)))
    assert backends._worker_died(pending) == (
        "a worker process died (killed, or out of memory?) before its tasks finished; try fewer --jobs"
    )


# Defect 4: a task in banditlab's own process that swallows the timer's exception and the signals -------------------


@pytest.mark.parametrize("jobs", [pytest.param("1", marks=pytest.mark.slow), "2"])
def test_a_task_that_swallows_its_timeout_in_banditlab_s_process_ends_it_with_exit_2(jobs, started, tmp_path):
    """The first task (setting ε = 0.05, run 0) runs in banditlab's own process with either --jobs."""
    agent, mark = _agent(tmp_path, "swallow", 0.05)
    proc = _start("run", *SCALE, "--jobs", jobs, "--agent", f"{agent}:make", "--task-timeout", "2", "--out",
                  str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    started.append(proc)
    _poll(mark.exists, "the agent's loop", proc)
    stuck = time.monotonic()
    code, err = _finish(proc)
    took = time.monotonic() - stuck
    assert code == 2, err
    line = _one_sentence(err)
    assert line.startswith(
        "banditlab: error: the task of setting 0 (gap=0.2, edge_probability=0.1, epsilon=0.05), run 0 was still "
        "running after --task-timeout 2 s and was stopped"
    ), line
    assert "running the same command again resumes from them" in line, line
    assert took < 2 + backends.STUCK_GRACE + 10, took


@pytest.mark.parametrize(
    ("sig", "jobs"),
    [  # each signal and each --jobs once in the default run; the other pairs behind the slow marker
        pytest.param(signal.SIGINT, "1", id="1-SIGINT"),
        pytest.param(signal.SIGTERM, "2", id="2-SIGTERM"),
        pytest.param(signal.SIGTERM, "1", id="1-SIGTERM", marks=pytest.mark.slow),
        pytest.param(signal.SIGINT, "2", id="2-SIGINT", marks=pytest.mark.slow),
    ],
)
def test_a_signal_swallowed_by_a_task_in_banditlab_s_process_still_ends_it(sig, jobs, started, tmp_path):
    agent, mark = _agent(tmp_path, "swallow", 0.05)
    proc = _start("run", *SCALE, "--jobs", jobs, "--agent", f"{agent}:make", "--out", str(tmp_path / "out"),
                  cwd=tmp_path)  # fmt: skip
    started.append(proc)
    _poll(mark.exists, "the agent's loop", proc)
    os.kill(proc.pid, sig)
    signalled = time.monotonic()
    code, err = _finish(proc)
    took = time.monotonic() - signalled
    assert code == 130, err
    line = _one_sentence(err)
    reason = "interrupted by SIGTERM" if sig == signal.SIGTERM else "interrupted,"
    assert line.startswith(f"banditlab: {reason}"), line
    assert took < backends.STOPPING_GRACE + 10, took


def _threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == name and t.is_alive()]


def test_the_watchdog_fires_in_no_normal_run_and_ends_with_the_block(tmp_path):
    """Tasks armed under a timeout that return in time: nothing happens, and the thread stops with the block."""
    exp = get_experiment("gap/regret-eps").scaled(runs=2, horizon=200)
    tasks = tasks_for(exp)
    with catch_interrupts():
        assert len(_threads("banditlab-watchdog")) == 1
        rows = dict(LocalBackend(1, task_timeout=backends.MAX_TASK_TIMEOUT).run(list(enumerate(tasks))))
        assert backends._Caught.watchdog is not None and backends._Caught.watchdog.task is None
    assert sorted(rows) == list(range(len(tasks)))
    assert backends._Caught.watchdog is None
    deadline = time.monotonic() + 5
    while _threads("banditlab-watchdog") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _threads("banditlab-watchdog")
