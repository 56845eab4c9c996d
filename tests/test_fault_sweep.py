"""Fault sweep: files of an output folder that cannot be read, and a data cache that cannot be written.

Each test runs the real command in a real process (``python -m banditlab``, or a Python process
loading a data set), with the fault made by the operating system itself: read permissions removed
(``chmod``; for root, whom permissions do not stop, the process runs without the capabilities
``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``, through ``setpriv``), and a file-size limit
(``RLIMIT_FSIZE``, which fails a write as a full disk does; Python ignores ``SIGXFSZ``).
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EID = "gap/regret-eps"
#: 12 tasks of a fraction of a second each.
SCALE = ["--quick", "--runs", "4", "--horizon", "200", "--no-progress", "--jobs", "1"]
#: Bound on every wait for a process.
WAIT = 60.0
#: Capabilities that let root read and write whatever the permissions say.
_DAC = "-dac_override,-dac_read_search"


def _unprivileged() -> list[str]:
    """The command prefix under which removed read permissions stop the process (``[]`` for a normal user)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: removed permissions would not stop the process")
    return [setpriv, f"--inh-caps={_DAC}", f"--bounding-set={_DAC}"]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """:func:`_unprivileged`, checked: a file of mode 000 cannot be read under it."""
    cmd = _unprivileged()
    probe = tmp_path_factory.mktemp("probe") / "secret"
    probe.write_text("x")
    probe.chmod(0)
    try:
        done = subprocess.run([*cmd, "cat", str(probe)], capture_output=True, timeout=WAIT, check=False)
    except OSError as exc:  # e.g. setpriv refused in a container
        pytest.skip(f"cannot drop the capabilities that bypass permissions here ({exc})")
    finally:
        probe.chmod(0o600)
    if done.returncode == 0:
        pytest.skip("a file of mode 000 can still be read here (capabilities could not be dropped)")
    return cmd


def _banditlab(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "banditlab", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a finished run of :data:`EID` at :data:`SCALE`."""
    out = tmp_path_factory.mktemp("finished") / "out"
    done = _banditlab([], "run", EID, *SCALE, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def copy(finished: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of :func:`finished`; its permissions are given back at the end, so that pytest can remove it."""
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    yield out
    for path in [out, *out.rglob("*")]:
        path.chmod(0o700)


def _sentence(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("name", ["results.csv", "meta.json"])
def test_an_unreadable_output_is_named_as_unreadable(prefix: list[str], copy: Path, name: str) -> None:
    """A results file whose read permission was removed is neither a write failure nor invalid: it is unreadable.

    Before, ``run`` said ``cannot write ...: Permission denied (was ... removed, moved or made
    read-only while banditlab wrote it?)`` with exit status 74, and ``report`` called an unreadable
    ``meta.json`` "not valid JSON" and said to delete it.
    """
    before = (copy / name).read_bytes()
    (copy / name).chmod(0)
    done = _banditlab(prefix, "run", EID, *SCALE, "--out", str(copy))
    line = _sentence(done.stderr)
    assert done.returncode == 2, done.stderr
    assert f"{copy / name} cannot be read (Permission denied)" in line
    assert "cannot write" not in line and "while banditlab wrote it" not in line
    report = _banditlab(prefix, "report", EID, str(copy))
    line = _sentence(report.stderr)
    assert report.returncode == 2, report.stderr
    assert f"{copy / name} cannot be read (Permission denied)" in line
    assert "delete it" not in line and "not valid JSON" not in line
    (copy / name).chmod(0o600)
    assert (copy / name).read_bytes() == before  # kept as it was


def test_an_unreadable_record_is_named_as_unreadable(prefix: list[str], copy: Path) -> None:
    (copy / ".banditlab.json").chmod(0)
    for args in (["run", EID, *SCALE, "--out", str(copy)], ["report", EID, str(copy)]):
        done = _banditlab(prefix, *args)
        assert done.returncode == 2, done.stderr
        assert f"{copy / '.banditlab.json'} cannot be read (Permission denied)" in _sentence(done.stderr)


def test_a_folder_that_cannot_be_listed_is_named_so(prefix: list[str], copy: Path) -> None:
    """A folder that may be written but not read (mode 0333): before, a write failure with exit status 74."""
    copy.chmod(0o333)
    done = _banditlab(prefix, "run", EID, *SCALE, "--out", str(copy))
    assert done.returncode == 2, done.stderr
    assert f"--out {copy} cannot be listed (Permission denied)" in _sentence(done.stderr)
    copy.chmod(0o700)
    assert sorted(p.name for p in copy.iterdir()) == sorted(
        [".banditlab.json", "figure.png", "meta.json", "results.csv", "summary.md"]
    )


#: A user agent that sleeps in each act, so that a run is killed while tasks remain.
SLOW_AGENT = """
import time

from agents.stochastic.greedy import EpsilonGreedy


class Factory:
    def __init__(self, env, setting, seed):
        self.inner = EpsilonGreedy(env.action_space.n, seed=seed)

    def act(self, obs):
        time.sleep(0.003)
        return self.inner.act(obs)

    def update(self, *args):
        self.inner.update(*args)

    def reset(self, *args, **kwargs):
        self.inner.reset(*args, **kwargs)
"""


def _killed_with_saved_tasks(out: Path, agent: Path) -> list[str]:
    """Start a run, SIGKILL it once some tasks are saved under ``out/parts``; the run's arguments."""
    args = ["run", EID, *SCALE, "--agent", f"{agent}:Factory", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "banditlab", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + WAIT
        while not list((out / "parts").glob("0*.json")):
            assert proc.poll() is None, "the run ended before any task was saved"
            assert time.monotonic() < deadline, "no task was saved in time"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(WAIT)
    return args


def test_an_unreadable_store_manifest_is_named_as_unreadable(prefix: list[str], tmp_path: Path) -> None:
    """Before: ``parts/manifest.json was not written by this version of banditlab or has changed since``."""
    agent = tmp_path / "slow.py"
    agent.write_text(textwrap.dedent(SLOW_AGENT))
    out = tmp_path / "out"
    args = _killed_with_saved_tasks(out, agent)
    manifest = out / "parts" / "manifest.json"
    before = manifest.read_bytes()
    manifest.chmod(0)
    try:
        done = _banditlab(prefix, *args)
    finally:
        manifest.chmod(0o600)
    assert done.returncode == 2, done.stderr
    line = _sentence(done.stderr)
    assert f"{manifest} cannot be read (Permission denied)" in line
    assert "has changed since" not in line
    assert manifest.read_bytes() == before
    done = _banditlab([], *args)  # readable again: the run resumes
    assert done.returncode == 0, done.stderr
    assert "Resuming from" in done.stderr
    assert not (out / "parts").exists()


#: Loads ml-latest-small from the cache of ``sys.argv[1]`` (an archive only) under a file-size limit.
LOAD_UNDER_LIMIT = """
import resource
import sys

from bandit_envs.datasets import DatasetError, load_movielens

resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    load_movielens("ml-latest-small", data_home=sys.argv[1], download=False)
except DatasetError as exc:
    print(exc)
    sys.exit(3)
"""


def test_extracting_into_a_full_cache_keeps_the_archive(tmp_path: Path) -> None:
    """A cached archive that cannot be extracted for want of space is not called incomplete.

    Before, the sentence said the archive ``is not a complete zip file holding ... ([Errno 27] File
    too large)`` and told the user to delete it, though it may be the copy they downloaded by hand.
    """
    if resource.getrlimit(resource.RLIMIT_FSIZE)[1] != resource.RLIM_INFINITY:
        pytest.skip("a file-size limit is already set here")
    home = tmp_path / "home"
    archive = home / "movielens" / "ml-latest-small.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr(
            "ml-latest-small/ratings.csv", "userId,movieId,rating,timestamp\r\n" + "1,1,4.0,964982703\r\n" * 20_000
        )
    before = archive.read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", LOAD_UNDER_LIMIT, str(home), str(64 * 1024)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    sentence = done.stdout.strip()
    assert sentence.startswith("Cannot extract ml-latest-small/ratings.csv of ")
    assert "(File too large)" in sentence and "the archive is kept" in sentence
    assert "not a complete zip" not in sentence and "delete" not in sentence
    assert archive.read_bytes() == before
    assert not (home / "movielens" / "ml-latest-small" / "ratings.csv").exists()
    assert not [p for p in (home / "movielens" / "ml-latest-small").iterdir() if not p.name.startswith(".")]
    assert json.dumps(sentence)  # one line


def test_a_sweep_stopped_and_continued_does_not_blame_its_tasks_for_the_pause(tmp_path: Path) -> None:
    """SIGSTOP then SIGCONT (as Ctrl-Z then ``fg``) for longer than ``--task-timeout``: the sweep goes on.

    Before, the task running when the process group was stopped was reported as still running
    after ``--task-timeout`` (exit status 2), though each task takes a fraction of it: the timer
    counted the seconds the process was stopped.
    """
    agent = tmp_path / "slow.py"
    agent.write_text(textwrap.dedent(SLOW_AGENT))
    out = tmp_path / "out"
    args = ["run", EID, *SCALE, "--horizon", "100", "--agent", f"{agent}:Factory", "--task-timeout", "1.5"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "banditlab", *args, "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, stopped and continued as a shell's job is
    )
    try:
        deadline = time.monotonic() + WAIT
        while not list((out / "parts").glob("0*.json")):  # the sweep is under way, its kernels compiled
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no task was saved in time"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGSTOP)
        time.sleep(4.0)
        os.killpg(proc.pid, signal.SIGCONT)
        _, stderr = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(WAIT)
    assert proc.returncode == 0, stderr
    assert (out / "results.csv").is_file()


def test_the_stop_clock_counts_no_time_the_process_ran_holding_the_gil() -> None:
    """A long call holding the GIL keeps the clock's thread from ticking, yet is no stop: the task ran.

    So a task slow in such calls (a compiled loop, a long C call) still times out; only a gap in
    which the process used no CPU time (stopped, or starved) is given back.
    """
    from agents.experiments.core.runner import StopClock

    clock = StopClock()
    before = clock.lost()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    n = 10**6
    per_item = math.inf
    for _ in range(3):  # the fastest of three: a calibration slowed by other load would make the call short
        start = time.perf_counter()
        sum(range(n))  # one C call: the GIL is not released until it returns
        per_item = min(per_item, (time.perf_counter() - start) / n)
    items, ran = int(1.6 / per_item), 0.0
    for _ in range(4):  # about 1.6 s holding the GIL, longer than a stop gap (more items if it ran less)
        cpu = time.process_time()
        sum(range(items))
        ran = time.process_time() - cpu
        if ran > 1.2:
            break
        items *= 2
    lost = clock.lost() - before
    assert ran > 1.2, f"the call holding the GIL ran for {ran:.2f} s of CPU time only"
    # Only time the process did not run counts: on a loaded machine other processes take the CPU
    # from it now and then (starved, over the whole test), and that the clock may count. The call's
    # own 1.2 s and more of CPU time must not count, and they would push the loss past this bound.
    starved = max(0.0, time.perf_counter() - wall0 - (time.process_time() - cpu0))
    assert lost < 0.3 + starved, (lost, ran, starved)
