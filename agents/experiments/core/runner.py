"""Tasks: one (setting, run) of an experiment, a pure function of its seeds; run them on processes.

The runner only interprets an experiment's records: ``run_task`` calls the experiment's
family task function (:class:`~agents.experiments.core.spec.Family`), which runs every agent of
that setting and run with common random numbers (:mod:`agents.experiments.core.seeds`).
:func:`run_checked` is what the backends call: it reports a failing user agent, or a task that
outlives ``--task-timeout``, as one :class:`~agents.user_agents.UserAgentError`
sentence naming the setting and the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agents.experiments.core.compiling import CompileWatch
from agents.experiments.core.spec import Experiment
from agents.user_agents import AgentFailed, TaskTimeout, UserAgentError, user_frames


@dataclass(frozen=True)
class Task:
    """One (setting, run) unit of work: ``run`` is the first run of the task's block of runs.

    A family with ``runs_per_task = B`` plays runs ``run .. run + B - 1`` (up to the
    experiment's number of runs) in one task; every other family plays the one run ``run``.
    """

    experiment: Experiment
    setting_index: int
    run: int
    base_seed: int


class SettingError(ValueError):
    """A setting that cannot run, refused by this project's own checks inside its task; one sentence.

    ``out_of_memory`` tells an allocation that failed (the same command may run on a machine
    with more memory, or with fewer ``--jobs``) from a refusal of the setting's parameters, which
    the same command meets again wherever it runs.
    """

    def __init__(self, message: str, out_of_memory: bool = False) -> None:
        super().__init__(message)
        self.out_of_memory = out_of_memory


#: Packages whose argument checks raise one-sentence ValueErrors meant for the user.
_OWN_PACKAGES = ("agents", "bandit_envs")


def _raised_by_own_check(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by code of :data:`_OWN_PACKAGES` (not, e.g., deep inside numpy)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return isinstance(name, str) and name.split(".")[0] in _OWN_PACKAGES


def run_task(task: Task) -> list[dict[str, Any]]:
    """One task's rows, a pure function of the task (seeds included): the same on any process or machine.

    Raises
    ------
    SettingError
        If an agent or env of this project refuses the setting's parameters or scale (e.g. a
        horizon whose tables would exceed the memory limit, or an ε too small to play with), or
        an allocation fails (MemoryError), naming the setting.
    """
    exp = task.experiment
    try:
        return exp.family.task(exp, task.setting_index, task.run, task.base_seed)
    except UserAgentError:  # already names the user agent
        raise
    except (ValueError, MemoryError) as exc:
        if isinstance(exc, ValueError) and not _raised_by_own_check(exc):
            raise
        params = ", ".join(f"{k}={v}" for k, v in exp.settings[task.setting_index].items() if v is not None)
        reason = str(exc) if isinstance(exc, ValueError) else f"{exc or 'out of memory'}; use a shorter --horizon."
        raise SettingError(
            f"{exp.id} cannot run its setting {params or task.setting_index} at horizon {exp.horizon}: {reason}",
            out_of_memory=isinstance(exc, MemoryError),
        ) from None


def describe_task(task: Task) -> str:
    """``setting I (key=value, ...), run R``: a task as ``results.csv`` numbers it (both from 0)."""
    exp = task.experiment
    setting = exp.settings[task.setting_index]
    params = ", ".join(f"{k}={v}" for k, v in setting.items() if k in exp.family.schema)
    return f"setting {task.setting_index}{f' ({params})' if params else ''}, run {task.run}"


#: Packages whose Python code a timeout never interrupts: an exception raised in the middle of
#: numba's dispatcher, compiler or cache loader can leave a compiled function half set up, and
#: the next call into it crashes the process. ``ctypes`` too: numba unboxes a numpy Generator
#: argument by calling ``ctypes.cast`` (Python code) at every call of a kernel that takes one,
#: and does not check that call for an exception, so a timeout raised inside it crashes the
#: process (numba 0.68, ``numba/core/boxing.py``, ``unbox_numpy_random_bitgenerator``).
UNINTERRUPTIBLE = ("numba", "llvmlite", "ctypes")
#: Seconds after which a timeout that fell inside :data:`UNINTERRUPTIBLE` code is tried again.
RETRY_SECONDS = 0.05


def interruptible(frame: types.FrameType | None) -> bool:
    """Whether a timeout may be raised in ``frame``: no frame of the stack runs :data:`UNINTERRUPTIBLE` code."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.split(".")[0] in UNINTERRUPTIBLE:
            return False
        frame = frame.f_back
    return True


def timeout_supported() -> bool:
    """Whether ``--task-timeout`` can stop a task here: it needs a POSIX interval timer (SIGALRM)."""
    return hasattr(signal, "setitimer")


#: Seconds between two ticks of :data:`STOP_CLOCK`'s thread.
_TICK = 0.1
#: A gap between two ticks longer than this many seconds is time the process did not run.
_STOP_GAP = 1.0


class StopClock:
    """Seconds this process has spent stopped (SIGSTOP, Ctrl-Z then ``fg``), which no task timeout counts.

    A daemon thread (started by the first :meth:`lost` in each process, so also in a forked
    worker) ticks every :data:`_TICK` seconds. Over a gap between two ticks longer than
    :data:`_STOP_GAP`, the wall time the process's threads did not use the CPU
    (``time.process_time``) is time it did not run: it was stopped, or starved of the CPU. A
    long gap in which the process did run (a compiled call that holds the GIL, so the thread
    could not tick) counts nothing, so a task that is slow in such calls still times out. The
    wall clock of ``--task-timeout`` (an interval timer, the watchdog, the wait for workers)
    goes on while a process is stopped, so without this a sweep suspended longer than its
    timeout would blame a task that was never slow. :meth:`lost` counts a gap still in progress
    too: a timer that fires right after SIGCONT, before the thread has ticked, already sees the stop.
    """

    def __init__(self) -> None:
        self._pid: int | None = None
        #: (seconds lost so far, monotonic and process CPU time of the last tick), replaced whole: read without a lock.
        self._state = (0.0, 0.0, 0.0)

    @staticmethod
    def _idle(lost: float, last: float, cpu: float, now: float, cpu_now: float) -> float:
        """``lost`` plus the wall time since ``last`` the process did not run, if that gap is long."""
        gap = now - last
        return lost + max(0.0, gap - _TICK - (cpu_now - cpu)) if gap > _STOP_GAP else lost

    def lost(self) -> float:
        """Seconds this process has not run since its clock started (in gaps longer than :data:`_STOP_GAP`)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._state = (0.0, time.monotonic(), time.process_time())
            threading.Thread(target=self._run, args=(self._pid,), name="banditlab-stop-clock", daemon=True).start()
        return self._idle(*self._state, time.monotonic(), time.process_time())

    def _run(self, pid: int) -> None:
        while self._pid == pid:
            time.sleep(_TICK)
            now, cpu_now = time.monotonic(), time.process_time()
            self._state = (self._idle(*self._state, now, cpu_now), now, cpu_now)


#: The stop clock of this process (see :class:`StopClock`).
STOP_CLOCK = StopClock()


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`~agents.user_agents.TaskTimeout` in this block after ``seconds``.

    A POSIX interval timer (SIGALRM, so in the main thread only: a local worker process, or
    banditlab's own process with one job) raises it in whatever Python code runs then, a user
    agent's included, and again every second until the block ends, should that code catch it.
    Compiled code (a numba kernel, a C extension) is interrupted when it returns to Python, and
    numba's own Python code (its dispatcher, compiler and cache loader) and ctypes' (which numba
    calls while it unboxes a Generator) once it has returned (:func:`interruptible`): stopped
    half-way, it could leave a kernel broken for the next call, or crash the process. The
    timer is paused while numba compiles (a first run's kernels), which is no part of a task's
    time, and time the process spent stopped (:class:`StopClock`) is given back to the task.
    ``None`` sets no timer.
    """
    if seconds is None:
        yield
        return
    if threading.current_thread() is not threading.main_thread() or not timeout_supported():
        raise RuntimeError("--task-timeout needs a POSIX interval timer in the main thread")

    counted = STOP_CLOCK.lost()

    def alarm(signum: int, frame: types.FrameType | None) -> None:
        nonlocal counted
        lost = STOP_CLOCK.lost()
        if lost - counted > RETRY_SECONDS:  # the process was stopped meanwhile: the task gets that time back
            signal.setitimer(signal.ITIMER_REAL, lost - counted, 1.0)
            counted = lost
            return
        if not interruptible(frame):  # inside numba's own Python code: try again once it has returned
            signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS, 1.0)
            return
        raise TaskTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        with _PausedWhileCompiling():
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _PausedWhileCompiling(CompileWatch):
    """Stop the interval timer while numba compiles, and restart it with the time that was left.

    Listens as :class:`~agents.experiments.core.compiling.CompileWatch` does (outermost
    compilations); where numba's event API is missing, compiling counts as the task's time.
    """

    left = 0.0  # seconds the timer had left when the outermost compilation started

    def _start(self, ev: Any) -> None:
        if not self._stack:
            self.left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        super()._start(ev)

    def _end(self) -> None:
        paused = bool(self._stack)
        super()._end()
        if paused and not self._stack:
            signal.setitimer(signal.ITIMER_REAL, max(self.left, 1e-3), 1.0)


def run_checked(
    run: Callable[[Task], list[dict[str, Any]]], task: Task, timeout: float | None = None
) -> list[dict[str, Any]]:
    """``run(task)`` (:func:`run_task`), its failures as one sentence naming the task.

    A user agent that fails (:class:`~agents.user_agents.AgentFailed`), or a task
    still running after ``timeout`` seconds (:func:`deadline`), raises
    :class:`~agents.user_agents.UserAgentError`: which agent failed and how, in
    which setting, run and round, with the agent's own frames of the traceback in ``frames``.
    """
    try:
        with deadline(timeout):
            return run(task)
    except AgentFailed as exc:
        sentence = exc.sentence(describe_task(task), task.experiment.horizon)
        raise UserAgentError(sentence, user_frames(exc.cause)) from None
    except TaskTimeout:
        raise UserAgentError(timeout_sentence(task, timeout)) from None


def timeout_sentence(task: Task, seconds: float | None) -> str:
    """The sentence (no final period) that reports ``task`` stopped by ``--task-timeout seconds``.

    :func:`run_checked` says it when the timer stops the task; the watchdog of
    :class:`~agents.experiments.core.backends.LocalBackend` says it too when the task goes on
    running in banditlab's own process after its timer fired (its code catches the timeout).
    """
    return f"the task of {describe_task(task)} was still running after --task-timeout {seconds:g} s and was stopped"


def warm_up_parts(task: Task, parts: int) -> list[Task]:
    """``task`` with its built-in agents split into ``parts`` contiguous groups, one task per group.

    A first run compiles every built-in agent's numba kernels inside the first task, one agent
    after another. Played by ``parts`` processes at once, one group each, these tasks compile the
    groups' kernels side by side and save them to numba's on-disk cache, from which the full task
    then loads them (:class:`~agents.experiments.core.backends.LocalBackend`). The groups are
    contiguous (``agents[i * n // parts : (i + 1) * n // parts]``), so that agents listed side by
    side, which often share kernels (GAP and GAPU), are compiled by one process. The tasks have no
    user agents: their rows are thrown away, and a user's code runs only in real tasks. Empty
    where the family does not allow it (:attr:`~agents.experiments.core.spec.Family.split_first_task`)
    or there are fewer than two built-in agents.
    """
    exp = task.experiment
    n = len(exp.agents)
    parts = min(parts, n)
    if parts < 2 or not exp.family.split_first_task:
        return []
    groups = [exp.agents[i * n // parts : (i + 1) * n // parts] for i in range(parts)]
    return [
        dataclasses.replace(task, experiment=dataclasses.replace(exp, agents=group, user_agents=())) for group in groups
    ]


def tasks_for(experiment: Experiment, base_seed: int = 0) -> list[Task]:
    """Every (setting, block of runs) task of an experiment, runs outermost so partial output is balanced."""
    step = experiment.family.runs_per_task
    return [
        Task(experiment, s, r, base_seed)
        for r in range(0, experiment.runs, step)
        for s in range(len(experiment.settings))
    ]


def default_jobs() -> int:
    """Number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
