"""Where an experiment's tasks run: local processes, or a Dask distributed cluster.

A backend takes ``(index, task)`` pairs and yields ``(index, rows)`` as each task finishes, in
completion order; the caller saves each result at once (:mod:`agents.experiments.core.partial`) and
writes ``results.csv`` in task order at the end. Tasks are frozen dataclasses and
:func:`~agents.experiments.core.runner.run_task` is a pure function of its task (seeds included), so
every backend returns the same rows.

Failures are :class:`BackendError` with one sentence (no trailing period) and an exit code:
2 for a bad option (a malformed scheduler address or one of a scheme banditlab cannot use, a
``--timeout`` out of range, dask not installed), 3 for a cluster that cannot be reached, is not a
Dask scheduler, has no workers, whose scheduler or workers cannot import the project or run
another version of it, that loses its workers or its scheduler, or whose scheduler stops
answering (for ``--timeout`` seconds).

Local worker processes die with the process that started them, however it ends (Ctrl-C,
SIGTERM, SIGKILL, a crash): on Linux the kernel kills them (``PR_SET_PDEATHSIG``), and on every
platform a watchdog thread in each worker exits once its parent is gone. They never outlive it
holding its standard output and error open.

Under :func:`catch_interrupts` (the ``banditlab`` command), a watchdog thread ends banditlab's own
process, as a last resort, when it cannot stop by itself: a task running in this process that
goes on :data:`STUCK_GRACE` seconds after its ``--task-timeout``, or a process still running
:data:`STOPPING_GRACE` seconds after Ctrl-C or SIGTERM (Python code that catches every
exception, such as a user agent's ``except BaseException: pass``, swallows both the timer's
exception and the interruption). See :class:`_Watchdog`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import faulthandler
import functools
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.synchronize
import numbers
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, as_completed, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from types import TracebackType
from typing import Any

import numba

from agents.experiments.core.compiling import CompileWatch
from agents.experiments.core.runner import (
    RETRY_SECONDS,
    STOP_CLOCK,
    Task,
    default_jobs,
    run_checked,
    run_task,
    timeout_sentence,
    timeout_supported,
    warm_up_parts,
)
from agents.user_agents import UserAgentError
from bandit_envs.validation import summarize

Rows = list[dict[str, Any]]

#: Address schemes of a Dask scheduler that banditlab can connect to (without security or UCX settings).
SCHEMES = ("tcp", "ws")
#: Schemes dask.distributed knows that banditlab cannot use, and why (the end of the sentence refusing them).
UNUSABLE_SCHEMES = {
    "tls": "needs TLS certificates (a security configuration), which banditlab does not take",
    "wss": "needs TLS certificates (a security configuration), which banditlab does not take",
    "ucx": "needs UCX and the distributed-ucxx package, which banditlab does not use",
    "inproc": "reaches only a scheduler in the same process, and banditlab starts none",
}
#: Loggers of dask.distributed silenced while a backend is connected: it reports failures itself,
#: in one sentence, where distributed would log comm errors with tracebacks (e.g. on Ctrl-C).
_QUIET = ("distributed", "distributed.client")
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})")


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a sweep, with one sentence saying what was saved and how to resume."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (raised by the handler :func:`catch_interrupts` installs)."""


class Hangup(Terminated):
    """SIGHUP (the terminal closed, sent to banditlab and its workers alike), handled as SIGTERM."""


#: SIGHUP where the system has it (not on Windows).
_SIGHUP: signal.Signals | None = getattr(signal, "SIGHUP", None)


def stop_reason(stop: type[BaseException] | BaseException | None) -> str:
    """``interrupted``, or ``interrupted by SIGTERM`` / ``by SIGHUP``: how a sweep was stopped, for its last line."""
    kind = stop if isinstance(stop, type) or stop is None else type(stop)
    if kind is not None and issubclass(kind, Hangup):
        return "interrupted by SIGHUP (the terminal closed)"
    if kind is not None and issubclass(kind, Terminated):
        return "interrupted by SIGTERM"
    return "interrupted"


class _Caught:
    """The first Ctrl-C or SIGTERM caught by :func:`catch_interrupts`' handler (None before one)."""

    signal: type[KeyboardInterrupt] | None = None
    #: The process that installed the handler (a forked child inherits the handler, not the role).
    pid: int = 0
    #: The watchdog of :func:`catch_interrupts`' block (None outside it, or outside the main thread).
    watchdog: _Watchdog | None = None


def _on_signal(signum: int, frame: object) -> None:
    """Raise the first SIGINT (KeyboardInterrupt) or SIGTERM (:class:`Terminated`); only note those after it.

    Once the first is raised, the sweep is stopping: a second signal (Ctrl-C pressed twice, SIGTERM
    then Ctrl-C) must not interrupt that stop half-way (a pool left half-stopped, a lock of the
    threading module released twice, a process left behind), so it is ignored.

    In a worker forked while the handler is installed, and signalled before its initializer
    replaces the handler (the pool stopped at once, a task failing at its start), raising would
    unwind the worker out of ``os.fork()`` into its parent's code, which it would then go on
    running as a second copy of the parent. There, SIGTERM ends the worker at once (exit status
    128 + SIGTERM) and SIGINT is ignored, as the worker's initializer would have it.
    """
    if os.getpid() != _Caught.pid:
        if signum == signal.SIGTERM:
            os._exit(128 + signum)
        return  # SIGINT and SIGHUP: the parent stops the workers
    if _Caught.signal is not None:
        return
    _Caught.signal = Terminated if signum == signal.SIGTERM else Hangup if signum == _SIGHUP else KeyboardInterrupt
    if _Caught.watchdog is not None:
        _Caught.watchdog.interrupted()
    raise _Caught.signal


def _unraisable(previous: Any, hook: Any) -> None:
    """``sys.unraisablehook`` that drops the interruption a C callback swallowed (it is raised again later)."""
    if isinstance(hook.exc_value, KeyboardInterrupt) and _Caught.signal is not None:
        return
    previous(hook)


def check_interrupted() -> None:
    """Raise the Ctrl-C or SIGTERM caught since :func:`catch_interrupts` began, if one was.

    A signal's exception raised in Python code that C calls back (numba's compiler calls llvmlite's
    ctypes callbacks) is swallowed there: the code that runs next would go on as if nothing
    happened. The sweep calls this where it is safe to stop (after each compilation, after each
    task), so that such a signal still stops it.
    """
    if _Caught.signal is not None:
        raise _Caught.signal


@contextlib.contextmanager
def errors_after_a_stop() -> Iterator[None]:
    """Within: an error raised once :func:`catch_interrupts`' handler has noted Ctrl-C or SIGTERM is that stop.

    A signal's exception raised in Python code that compiled code called back into (numba unboxing
    a numpy Generator through ctypes, when the signal lands there) can surface as another error
    (a ``SystemError`` or ``TypeError`` of the caller). The sweep is stopping anyway: such an error,
    in this process and after a noted stop, is raised as the noted KeyboardInterrupt (or
    :class:`Terminated`), so the run ends with its "interrupted" line and its finished tasks kept,
    not a traceback. Errors with no stop noted go on as they are.
    """
    try:
        yield
    except Exception as exc:
        caught = _Caught.signal
        if caught is not None and _Caught.pid == os.getpid():
            raise caught from exc
        raise


@contextlib.contextmanager
def catch_interrupts() -> Iterator[None]:
    """While in the block, SIGTERM raises :class:`Terminated` as Ctrl-C raises KeyboardInterrupt, once.

    SIGHUP (the terminal closed) raises :class:`Hangup`, a :class:`Terminated`: the sweep stops
    and saves its finished tasks as after SIGTERM, where the default would end the process at
    once. An ignored SIGHUP (``nohup``) stays ignored, and the pool workers ignore it (the
    terminal sends it to them too; the parent stops them).

    Only the first of them raises (see :func:`_on_signal`); :func:`check_interrupted` raises it
    again where it was swallowed, and the "Exception ignored" report of a swallowed one is not
    printed. An ignored SIGINT (a command started in the background by a shell) stays ignored.
    The previous handlers are restored at the end, unless a signal was caught: the command is then
    ending, and SIGINT and SIGTERM stay ignored until it exits. Outside the main thread (where
    Python cannot install handlers), nothing changes.

    While in the block, a :class:`_Watchdog` thread ends the process should it not stop by itself
    (see the module docstring); it stops at the end of the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Caught.signal = None
    _Caught.pid = os.getpid()
    watch = _CompileWatch(on_done=check_interrupted)
    watchdog = _Watchdog(watch)
    watchdog.start()
    _Caught.watchdog = watchdog
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.signal(signal.SIGTERM, _on_signal)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_signal)
    previous_hup = signal.getsignal(_SIGHUP) if _SIGHUP is not None else None
    if _SIGHUP is not None and previous_hup is signal.SIG_DFL:
        signal.signal(_SIGHUP, _on_signal)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = partial(_unraisable, previous_hook)
    try:
        # After each outermost compilation, a signal numba's callbacks swallowed is raised again.
        with watch:
            yield
    finally:
        _Caught.watchdog = None
        watchdog.stop()
        # Interrupted, the command is ending: a later signal (Ctrl-C pressed again) must not interrupt its exit.
        stopping = _Caught.signal is not None
        signal.signal(signal.SIGTERM, signal.SIG_IGN if stopping else previous_term)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_IGN if stopping else previous_int)
        if _SIGHUP is not None and previous_hup is signal.SIG_DFL:
            signal.signal(_SIGHUP, signal.SIG_IGN if stopping else previous_hup)
        sys.unraisablehook = previous_hook
        _Caught.signal = None


#: Largest ``--task-timeout`` in seconds (about 11 days; the interval timer's range is finite).
MAX_TASK_TIMEOUT = 1e6
#: Largest ``--timeout`` in seconds (about 11 days; thread and event-loop waits overflow far beyond it).
MAX_TIMEOUT = 1e6

#: With ``--task-timeout S``, workers that finish no chunk of ``n`` tasks for ``n * S`` plus this many
#: seconds are stuck where their timer cannot stop a task (compiled code, SIGALRM blocked): they are stopped.
STUCK_GRACE = 5.0
#: Seconds a stopped worker gets to exit on SIGTERM before it is killed.
STOP_GRACE = 5.0
#: Seconds banditlab's own process gets to stop after Ctrl-C or SIGTERM before its watchdog ends it; more
#: while it stops its worker processes or closes its Dask client (bounded waits), or while numba compiles.
STOPPING_GRACE = 5.0
#: Seconds between two looks of the watchdog at its deadlines.
_WATCHDOG_TICK = 0.25


class _CompileWatch(CompileWatch):
    """:class:`~agents.experiments.core.compiling.CompileWatch` that another thread may ask how long numba compiled."""

    def compiled(self) -> float:
        """Seconds spent compiling so far, the compilation under way included.

        The compilation under way is read before the finished ones: one ending meanwhile is then
        counted twice (a watchdog fires a little later), never missed (it would fire too early).
        """
        stack = self._stack
        try:
            current = time.perf_counter() - stack[0][0] if stack else 0.0
        except IndexError:  # it ended meanwhile: it is in `seconds` now
            current = 0.0
        return current + self.seconds


class _Armed:
    """A task running in banditlab's own process under ``--task-timeout``: when it began, and the compile time then."""

    __slots__ = ("compiled", "lost", "start", "task", "timeout")

    def __init__(self, task: Task, timeout: float, compiled: float) -> None:
        self.task = task
        self.timeout = timeout
        self.start = time.monotonic()
        self.compiled = compiled
        self.lost = STOP_CLOCK.lost()  # time the process spent stopped is no part of the task's


class _Watchdog:
    """A daemon thread that ends banditlab's own process when it cannot stop by itself: the last resort.

    Python code that catches every exception (a user agent's ``while True: try: ... except
    BaseException: pass``) swallows the task timer's exception and the KeyboardInterrupt of Ctrl-C
    and SIGTERM alike, and compiled code that never returns is out of their reach: such a task,
    run in banditlab's own process (one job, or the first task), would go on until SIGKILL. So:

    - a task armed with :meth:`arm` (the :class:`LocalBackend` arms each task it runs in this
      process under ``--task-timeout``) and still running :data:`STUCK_GRACE` seconds after its
      timeout ends the process with the sentence that reports a timeout, and exit status 2;
    - a process still running :data:`STOPPING_GRACE` seconds after the first Ctrl-C or SIGTERM
      (more while it stops its workers or closes its Dask client, whose waits are bounded:
      :func:`_stopping`) ends with the usual "interrupted" line and :data:`INTERRUPTED`.

    Time spent compiling numba kernels counts for neither, as for the task timer. Ending, it
    flushes standard output and error where it can (a thread stuck holding one is not waited for
    long), writes its line and calls ``os._exit``; the finished tasks are already saved (the
    partial store writes within half a second), and local workers die with this process.

    The thread only looks at its deadlines every :data:`_WATCHDOG_TICK` seconds: arming a task
    costs two clock reads and an attribute, and the signal handler sets attributes and takes no
    lock. It runs from :func:`catch_interrupts`' start to its end (:meth:`stop`), so it never
    outlives the command's block, and fires in no normal run.
    """

    def __init__(self, watch: _CompileWatch) -> None:
        self.watch = watch
        #: The task running in this process under --task-timeout (set and cleared by the main thread only).
        self.task: _Armed | None = None
        #: When to end the process after a signal, not counting time spent compiling after it (set by the
        #: signal handler, pushed back by :meth:`stopping`), and the compile time at the signal.
        self.signal_at: float | None = None
        self.signal_compiled = 0.0
        #: Whether a backend runs a sweep (its finished tasks are saved, and the same command resumes).
        self.sweeping = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="banditlab-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Never fire (the block ends: the command returns)."""
        self._done.set()

    @contextlib.contextmanager
    def arm(self, task: Task, timeout: float) -> Iterator[None]:
        """End the process if the block, which runs ``task`` here, outlives ``timeout`` by :data:`STUCK_GRACE`."""
        self.task = _Armed(task, timeout, self.watch.compiled())
        try:
            yield
        finally:
            self.task = None

    def interrupted(self) -> None:
        """The first Ctrl-C or SIGTERM (called by the signal handler: it sets attributes and takes no lock)."""
        if self.signal_at is None:
            self.signal_compiled = self.watch.compiled()  # before signal_at, which the thread reads first
            self.signal_at = time.monotonic() + STOPPING_GRACE

    def stopping(self, seconds: float) -> None:
        """After a signal, the process stops in a wait bounded by ``seconds``: give it that much more time."""
        if self.signal_at is not None:
            self.signal_at = max(self.signal_at, time.monotonic() + seconds + STOPPING_GRACE)

    def _run(self) -> None:
        while not self._done.wait(_WATCHDOG_TICK):
            signal_at, armed = self.signal_at, self.task
            if signal_at is None and armed is None:
                continue
            compiled, now = self.watch.compiled(), time.monotonic()
            if signal_at is not None and now - (compiled - self.signal_compiled) >= signal_at:
                self._end(self._interrupted_line(), INTERRUPTED)
            elif (
                armed is not None
                and now - armed.start - (compiled - armed.compiled) - (STOP_CLOCK.lost() - armed.lost)
                >= armed.timeout + STUCK_GRACE
            ):
                if self.task is armed:  # not a task that has just returned
                    self._end(self._timeout_line(armed), 2)

    def _saved(self) -> str:
        if not self.sweeping:
            return "."
        return "; any finished tasks are saved, and running the same command again resumes from them."

    def _interrupted_line(self) -> str:
        reason = stop_reason(_Caught.signal)
        return (
            f"banditlab: {reason}, but still running {STOPPING_GRACE:g} s later (Python code that catches the "
            f"interruption, e.g. a user agent's `except BaseException`?), so it ended at once{self._saved()}"
        )

    def _timeout_line(self, armed: _Armed) -> str:
        return (
            f"banditlab: error: {timeout_sentence(armed.task, armed.timeout)}: it went on {STUCK_GRACE:g} s more in "
            f"banditlab's own process (code that catches the timeout, e.g. a user agent's `except BaseException`, "
            f"or compiled code that never returns), so banditlab ended at once{self._saved()}"
        )

    def _end(self, line: str, status: int) -> None:
        """Flush what can be flushed, write ``line`` to standard error and end the process with ``status``."""
        if self._done.is_set():  # the block ended meanwhile: the command is returning by itself
            return
        flusher = threading.Thread(target=_flush_streams, name="banditlab-flush", daemon=True)
        flusher.start()
        flusher.join(1.0)  # a stream held by the stuck thread is not waited for
        try:
            tty = sys.stderr is not None and sys.stderr.isatty()
            encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
        except Exception:  # noqa: BLE001 - a closed or replaced standard error
            tty, encoding = False, "utf-8"
        with contextlib.suppress(OSError):
            os.write(2, (("\n" if tty else "") + line + "\n").encode(encoding, errors="backslashreplace"))
        os._exit(status)


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def _here() -> _Watchdog | None:
    """The watchdog, if :func:`catch_interrupts`' block runs in this process (not in a forked worker)."""
    watchdog = _Caught.watchdog
    return watchdog if watchdog is not None and os.getpid() == _Caught.pid else None


def _stopping(seconds: float) -> None:
    """Tell the watchdog that the process stops in a wait bounded by ``seconds`` (after a signal)."""
    watchdog = _here()
    if watchdog is not None:
        watchdog.stopping(seconds)


def _sweeping() -> None:
    watchdog = _here()
    if watchdog is not None:
        watchdog.sweeping = True


#: At most this many worker processes per core this process may use (:func:`default_jobs`, its CPU
#: affinity: under ``taskset -c 0``, one core); more only compete for the cores.
JOBS_PER_CORE = 4


def check_jobs(jobs: object) -> int:
    """``jobs`` if it is a number of worker processes this machine can use; ValueError (one sentence) if not."""
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1, got {summarize(jobs)}.")
    jobs = int(jobs)  # a numpy integer, as runs and horizon accept
    cores = default_jobs()  # the cores this process may use, as --jobs' default counts them
    if jobs > JOBS_PER_CORE * cores:
        raise ValueError(
            f"--jobs must be at most {JOBS_PER_CORE * cores} ({JOBS_PER_CORE} per core, {cores} "
            f"core{'s' if cores != 1 else ''} this process may use here), got "
            f"{jobs}; more processes than that only compete for the cores and memory."
        )
    return jobs


class BackendError(RuntimeError):
    """A backend failure reported as one sentence without a traceback; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 3) -> None:
        super().__init__(message)
        self.code = code


#: Exit status after Ctrl-C or SIGTERM (128 + SIGINT, as shells report an interrupted command).
INTERRUPTED = 130


def run_error_status(exc: BaseException) -> int:
    """Say on stderr why a run (``banditlab run`` or ``score``) stopped; its exit status.

    Bad input (a user agent that fails shows up in the tasks): the sentence, then the failing
    user agent's own frames (not banditlab's), status 2; a backend's failure: its sentence and
    :attr:`~agents.experiments.core.backends.BackendError.code`; an interrupted sweep:
    :data:`INTERRUPTED`.
    """
    if isinstance(exc, SweepInterrupted):
        print(f"banditlab: {exc}", file=sys.stderr)
        return INTERRUPTED
    print(f"banditlab: error: {exc}", file=sys.stderr)
    if isinstance(exc, BackendError):
        return exc.code
    frames = getattr(exc, "frames", "")
    if frames:
        print(frames, file=sys.stderr)
    return 2


def parse_scheduler(address: str) -> str:
    """Normalize a Dask scheduler address (``tcp://host:port``, ``ws://host:port`` or ``host:port``).

    ValueError (one sentence) if it is malformed, or of a scheme banditlab cannot connect with
    (:data:`UNUSABLE_SCHEMES`: it takes no security or UCX settings).
    """
    text = address.strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else None
    if scheme in UNUSABLE_SCHEMES:
        raise ValueError(
            f"--scheduler {summarize(address)} cannot be used: its scheme {scheme}:// {UNUSABLE_SCHEMES[scheme]}; "
            f"give a scheduler address of scheme {' or '.join(s + '://' for s in SCHEMES)} (e.g. tcp://127.0.0.1:8786)."
        )
    match = _ADDRESS.fullmatch(text)
    if match is None or (match["scheme"] or "tcp") not in SCHEMES or not 1 <= int(match["port"]) <= 65535:
        raise ValueError(
            f"--scheduler must be a Dask scheduler address such as tcp://127.0.0.1:8786 (scheme "
            f"{' or '.join(SCHEMES)}, then host:port), got {summarize(address)}."
        )
    return f"{match['scheme'] or 'tcp'}://{match['host']}:{int(match['port'])}"


#: What a failed connection raises (asyncio's TimeoutError is not the builtin one before Python 3.11).
_TIMEOUTS = (OSError, TimeoutError, asyncio.TimeoutError)
#: Seconds beyond ``--timeout`` that connecting to a Dask scheduler, or waiting for its first worker, may take.
CONNECT_GRACE = 1.0
#: Evaluated by the builtin ``eval`` on the scheduler and on each worker once connected (:meth:`DaskBackend._probe`):
#: it imports what the tasks need and gives the project's version. ``eval`` is sent, not a function of the project,
#: because a process without the project could not unpickle that (a worker dies on it, and looks merely "lost").
_PROBE = "__import__('agents.experiments.core.runner') and __import__('bandit_envs').__version__"


def _within(seconds: float, call: Any) -> tuple[bool, Any, BaseException | None]:
    """``call()`` in a daemon thread waited for at most ``seconds``: (finished, its value, what it raised).

    A Ctrl-C or SIGTERM while this thread waits interrupts the wait (the thread is left to end by itself).
    """
    outcome: list[tuple[Any, BaseException | None]] = []

    def target() -> None:
        try:
            outcome.append((call(), None))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome.append((None, exc))

    thread = threading.Thread(target=target, name="banditlab-dask-connect", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        return False, None, None
    return True, *outcome[0]


@functools.cache
def _client_class() -> Any:
    """dask.distributed's Client, made to record itself as soon as it is built and to close quietly.

    A Client whose construction fails or is abandoned (a server that never answers as a scheduler)
    still exists: the constructor records it in the ``building`` list so that
    :meth:`DaskBackend._discard` can close it. Its ``__del__`` closes it again should it not be
    closed, and would report a failed close as "Exception ignored in ... Client.__del__" with a
    traceback, after the one sentence banditlab prints: here it is silent.
    """
    from distributed import Client

    class _Client(Client):
        def __init__(self, *args: Any, building: list[Any], **kwargs: Any) -> None:
            building.append(self)
            super().__init__(*args, **kwargs)

        def __del__(self) -> None:
            with contextlib.suppress(Exception):
                super().__del__()

    return _Client


def _ready() -> None:
    """Nothing: submitted to start a pool's workers."""


def _warm_up(task: Task, timeout: float | None = None) -> None:
    """Play ``task``, a group of the first task's agents, for the kernels it compiles and saves.

    Its rows and its failures are dropped: the full first task reports them
    (:func:`~agents.experiments.core.runner.warm_up_parts`).
    """
    try:
        run_checked(run_task, task, timeout)
    except Exception:  # noqa: BLE001 - a warm-up only compiles; the full first task raises what it raises
        pass


def _run_chunk(chunk: Sequence[tuple[int, Task]], timeout: float | None = None) -> list[tuple[int, Rows]]:
    return [(index, run_checked(run_task, task, timeout)) for index, task in chunk]


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _kernel_kills_me_with_my_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.prctl(
            ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0), ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )  # fmt: skip
    except (OSError, AttributeError):
        return False
    return bool(result == 0)


def _watch_parent(sentinel: int | None, parent: int) -> None:
    """Exit this process once its parent is gone (the sentinel pipe closes, or it is re-parented)."""
    while True:
        if sentinel is not None:
            if multiprocessing.connection.wait([sentinel], timeout=1.0):
                os._exit(1)
        else:
            time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


def die_with_parent(parent: int | None) -> None:
    """Make this worker process exit when its parent does, even by SIGKILL (see the module docstring).

    ``parent`` is the pid the parent had when it started the worker (None if the worker's
    operating-system parent is another process, e.g. a fork server). A parent that died before
    this runs is noticed too: the worker then exits at once.
    """
    _kernel_kills_me_with_my_parent()
    me = multiprocessing.parent_process()
    sentinel = me.sentinel if me is not None else None
    gone = parent is not None and os.getppid() != parent
    if gone or (sentinel is not None and multiprocessing.connection.wait([sentinel], timeout=0)):
        os._exit(1)
    ppid = os.getppid()
    threading.Thread(target=_watch_parent, args=(sentinel, ppid), name="banditlab-watch-parent", daemon=True).start()


def own_numba_start_lock() -> None:
    """Give this forked worker a lock of its own for the start of numba's thread pool.

    numba guards the start of its threading layer with a multiprocessing lock made when numba is
    imported, and takes it on every call that may start the threads (``numba.set_num_threads``,
    ``get_num_threads``, each parallel kernel). A forked worker shares that lock with its parent:
    a worker killed while holding it (banditlab kills its workers on Ctrl-C, SIGTERM and
    ``--task-timeout``) would leave it held for ever, and the parent would hang at its next
    parallel kernel. A worker's thread pool is its own, so a lock of its own is all it needs.
    Where numba's internals differ from what this expects, nothing is changed.
    """
    try:
        from numba.np.ufunc import parallel
    except ImportError:  # pragma: no cover - numba's layout changed
        return
    if isinstance(getattr(parallel, "_backend_init_process_lock", None), multiprocessing.synchronize.RLock):
        setattr(parallel, "_backend_init_process_lock", threading.RLock())  # noqa: B010 - numba's private name


def load_numba_registries() -> None:
    """Load numba's typing and lowering registries in this process, before it forks its workers.

    numba loads them on its first compilation or first load from its cache in a process (about a
    quarter of a second: it imports some seventy of its modules); forked after, every worker
    inherits them instead of loading them again. It compiles nothing and starts no thread.
    ``refresh`` is not part of numba's documented API: where it is missing, nothing is done.
    """
    try:
        from numba.core.registry import cpu_target

        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()
    except Exception:  # noqa: BLE001 - numba's internals changed: each worker loads them itself
        pass


def _init_worker(parent: int | None, threads: int) -> None:
    """Pool worker set-up: the parent handles Ctrl-C and SIGTERM (it stops the workers); die with it.

    ``threads`` is the worker's share of numba's threads (the cores divided among the workers), so
    that ``jobs`` workers running parallel kernels do not oversubscribe the cores: with more
    threads than cores, numba's parallel loops spin-wait for each other and run many times slower.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, inherited by a fork
    if _SIGHUP is not None:
        signal.signal(_SIGHUP, signal.SIG_IGN)  # a closed terminal: the parent stops the workers
    die_with_parent(parent)
    own_numba_start_lock()
    numba.set_num_threads(threads)


class LocalBackend:
    """Run tasks in this process (``jobs=1``) or on ``jobs`` worker processes.

    ``task_timeout`` (seconds, or None) stops a task that runs longer, in whichever process runs
    it (:func:`~agents.experiments.core.runner.deadline`), as a
    :class:`~agents.user_agents.UserAgentError` naming the task. Should the
    workers finish nothing for longer than their chunks' timeouts and :data:`STUCK_GRACE`
    (a task stuck where the timer cannot interrupt it), they are killed, with a
    :class:`~agents.user_agents.UserAgentError` saying so.

    At most one worker per task starts (:attr:`workers` is the number that did). With workers,
    the first task runs in this process before any other, so that the numba kernels are compiled
    once and saved to numba's on-disk cache, from which the workers then load them; started
    together, every worker would compile the same kernels at the same time. Where the family
    allows it (:attr:`~agents.experiments.core.spec.Family.split_first_task`), this process and
    the workers first play that task's built-in agents in groups, one group each
    (:func:`~agents.experiments.core.runner.warm_up_parts`), and this process waits for them all:
    on a first run each process compiles its group's kernels side by side, and the first task
    then loads every kernel from the cache; on later runs the groups cost about one task's work
    more, before the first result. Before forking the workers, this process loads numba's
    registries (:func:`load_numba_registries`), which each worker would otherwise load again. The
    workers are started before that first task: a process forked after it ran a parallel kernel
    would abort (GNU OpenMP, one of numba's threading layers, cannot be forked once its threads
    run).
    """

    name = "local"

    def __init__(self, jobs: int = 1, task_timeout: float | None = None) -> None:
        self.jobs = check_jobs(jobs)
        self.workers = self.jobs
        self.task_timeout = task_timeout

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, pending: Sequence[tuple[int, Task]], label: str = "banditlab") -> Iterator[tuple[int, Rows]]:
        """Yield ``(index, rows)`` of every pending task as it finishes (``label`` is unused here)."""
        self.workers = max(1, min(self.jobs, len(pending)))
        _sweeping()
        if self.workers == 1:
            for index, task in pending:
                yield index, self._run_here(task)
            return
        # Workers ignore Ctrl-C: this process handles it, saves what finished and stops them.
        context = multiprocessing.get_context()
        parent = os.getpid() if context.get_start_method() in ("fork", "spawn") else None
        # numba's configured count, not numba.get_num_threads(): that starts the threads before fork.
        cores: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
        threads = max(1, cores // self.workers)
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(parent, threads),
        )
        finished = False
        try:
            if context.get_start_method() == "fork":
                load_numba_registries()  # once here, not again in every forked worker
            pool.submit(_ready)  # with the fork start method, every worker is forked at the first submit
            first, rest = pending[0], pending[1:]
            # A first run compiles the first task's agents in groups, side by side (see the class docstring).
            groups = warm_up_parts(first[1], min(1 + self.workers, cores))
            if groups:
                others = [pool.submit(_warm_up, group, self.task_timeout) for group in groups[1:]]
                _warm_up(groups[0], self.task_timeout)
                wait(others)
                check_interrupted()  # a Ctrl-C swallowed while compiling
            yield first[0], self._run_here(first[1])
            # Small contiguous chunks: few round trips, a worker reuses a run's reward table across
            # settings, and an interruption loses at most `jobs` chunks of work.
            size = max(1, min(len(rest) // (self.workers * 8), 8))
            chunks = [rest[i : i + size] for i in range(0, len(rest), size)]
            for future in self._completed([pool.submit(_run_chunk, c, self.task_timeout) for c in chunks], size):
                yield from future.result()
            finished = True
        except BrokenProcessPool:
            raise BackendError(_worker_died(pending)) from None
        finally:
            if finished:
                pool.shutdown()
            else:  # Ctrl-C, a failed task or an abandoned generator: drop the work in flight
                _stop(pool)

    def _run_here(self, task: Task) -> Rows:
        """``task``'s rows, run in this process; under the watchdog if it has a timeout (see :class:`_Watchdog`).

        A crash meanwhile (a segfault, e.g. in a user agent's compiled code or its ``os.kill``) ends
        this process, so it cannot be the sentence of a worker that died: :func:`_crash_report`
        prints Python's fatal-error report, whose frames name the file and line that crashed.
        """
        watchdog = _here() if self.task_timeout is not None else None
        with _crash_report():
            if watchdog is None or self.task_timeout is None:
                return run_checked(run_task, task, self.task_timeout)
            with watchdog.arm(task, self.task_timeout):
                return run_checked(run_task, task, self.task_timeout)

    def _completed(self, futures: list[Future[Any]], size: int) -> Iterator[Future[Any]]:
        """The chunks' futures as they finish; with a task timeout, UserAgentError once the workers seem stuck."""
        if self.task_timeout is None:
            yield from as_completed(futures)
            return
        limit = size * self.task_timeout + STUCK_GRACE
        waiting = set(futures)
        lost = STOP_CLOCK.lost()
        while waiting:
            done, waiting = wait(waiting, timeout=limit, return_when=FIRST_COMPLETED)
            if not done and STOP_CLOCK.lost() - lost > RETRY_SECONDS:  # stopped meanwhile (Ctrl-Z): wait again
                lost = STOP_CLOCK.lost()
                continue
            lost = STOP_CLOCK.lost()
            if not done:  # the caller's `finally` kills the workers
                raise UserAgentError(
                    f"no task finished for {limit:g} s although --task-timeout {self.task_timeout:g} s stops each "
                    "task: a worker process is stuck where its timer cannot stop a task (in compiled code, or with "
                    "SIGALRM blocked), so the worker processes were stopped"
                )
            yield from done


@contextlib.contextmanager
def _crash_report() -> Iterator[None]:
    """Within the block, a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) prints Python's fatal-error report.

    The report (:mod:`faulthandler`, on standard error) shows the frames of the crash; the process
    then ends by the signal, as it did before without a word. Left as it is when it is on already,
    or when standard error is not a file (e.g. captured by a test).
    """
    if faulthandler.is_enabled():
        yield
        return
    try:
        faulthandler.enable(file=sys.stderr, all_threads=False)
    except (AttributeError, OSError, RuntimeError, ValueError):  # no standard error, or no file descriptor behind it
        yield
        return
    try:
        yield
    finally:
        faulthandler.disable()


def _user_agents(tasks: Sequence[tuple[int, Task]]) -> list[str]:
    """The names of the user agents (``--agent``) the tasks run, in order of first appearance."""
    return list(dict.fromkeys(u.name for _, task in tasks for u in task.experiment.user_agents))


def _worker_died(pending: Sequence[tuple[int, Task]]) -> str:
    """The sentence for a local worker process that died (:class:`BrokenProcessPool`), naming any user agents."""
    users = _user_agents(pending)
    if not users:
        return "a worker process died (killed, or out of memory?) before its tasks finished; try fewer --jobs"
    named = ", ".join(repr(name) for name in users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    agents = f"the user agent {named}" if len(users) == 1 else f"one of the user agents {named}"
    return (
        f"a worker process died before its tasks finished: {agents} may have ended it (os._exit, a signal, a crash "
        "in compiled code), and fewer --jobs will not help then; or it was killed or ran out of memory (then try "
        "fewer --jobs)"
    )


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool``'s workers now, dropping the work in flight, so that this process can exit.

    A worker stopped half-way through sending a result leaves part of a message in the pool's
    result pipe; the pool's manager thread then waits for the rest of it for ever, and the
    interpreter, which joins that thread at exit, never exits. So once every worker is gone,
    this process's own copy of the pipe's write end is closed too: the manager thread's read then
    ends (end of file), and it winds the pool down as it does for a worker that died.

    That thread is then waited for (at most :data:`STOP_GRACE` seconds). Left running, it could
    still be closing the pool's wake-up pipe when the interpreter exits, and the exit hook of
    :mod:`concurrent.futures` writes to that pipe without a lock: it would print a traceback
    (bad file descriptor) after the message that the sweep was interrupted.
    """
    _stopping(2 * STOP_GRACE + 1.0)  # its waits below are bounded: the watchdog lets them end
    processes = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)  # shutdown() forgets it
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it too
    for process in processes:
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.join(STOP_GRACE)
        if process.is_alive():  # SIGTERM blocked or ignored by the user's code
            process.kill()
            process.join()
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()
    if manager is not None:
        manager.join(STOP_GRACE)


def _ignore_abandoned_gathers(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler, without the gathers dask.distributed abandons (AllExit).

    A result waited for in slices (:meth:`DaskBackend._result`) leaves a gather behind each time
    the wait times out; once its future is released they end with distributed's internal
    ``AllExit``, which nobody retrieves, and asyncio would print its traceback.
    """
    if type(context.get("exception")).__name__ == "AllExit":
        return
    loop.default_exception_handler(context)


class DaskBackend:
    """Send tasks to the Dask distributed scheduler at ``scheduler`` (``with DaskBackend(...) as b:``)."""

    name = "dask"

    def __init__(self, scheduler: str, timeout: float = 10.0) -> None:
        self.address = parse_scheduler(scheduler)
        self.timeout = timeout
        self.workers = 0
        self.client: Any = None
        self._levels: dict[str, int] = {}
        self._no_workers_since: float | None = None

    def __enter__(self) -> DaskBackend:
        """Connect to the scheduler and wait for a worker, each within ``timeout`` (plus :data:`CONNECT_GRACE`) s.

        dask.distributed bounds the connection by ``timeout``, not the handshake after it: a server
        that accepts the connection and never answers as a scheduler (its dashboard's port, a web
        server, a bare listener) would keep ``Client()`` waiting for ever, and one that answers in
        another protocol makes it raise whatever those bytes give (e.g. a MemoryError for a message
        "length" read from an HTTP reply). So the client is built, and waits for its first worker,
        in a thread this one waits for with a deadline, and any failure is one sentence
        (:class:`BackendError`, exit status 3); a client left half-built is closed quietly.
        """
        try:
            _client_class()
        except ImportError:
            raise BackendError(
                "--backend dask needs dask.distributed; install it with pip install 'bandit-envs[dask]'", code=2
            ) from None
        self._levels = {name: logging.getLogger(name).level for name in _QUIET}
        for name in _QUIET:
            logging.getLogger(name).setLevel(logging.CRITICAL)
        building: list[Any] = []
        try:
            self._connect(building)
        except BaseException:  # a failure, Ctrl-C or SIGTERM: no client is left behind, half-built or not
            self.client = None
            self._discard(building)
            self.close()
            raise
        loop = getattr(self.client.loop, "asyncio_loop", None)
        if loop is not None:  # left installed: the abandoned gathers may end after close()
            loop.set_exception_handler(_ignore_abandoned_gathers)
        return self

    def _connect(self, building: list[Any]) -> None:
        """Set :attr:`client` and :attr:`workers`; BackendError if the scheduler or a worker does not answer in time."""
        limit = self.timeout + CONNECT_GRACE
        client_class = _client_class()
        finished, client, error = _within(
            limit, lambda: client_class(self.address, timeout=self.timeout, set_as_default=False, building=building)
        )
        if not finished:
            raise BackendError(
                f"no Dask scheduler answered at {self.address} within {self.timeout:g} s: something accepts "
                "connections there but does not answer as a scheduler (the scheduler's dashboard, a web server?), or "
                "the scheduler is overloaded; check the address (the scheduler's own port, 8786 by default), or raise "
                "--timeout"
            )
        if isinstance(error, _TIMEOUTS):
            raise BackendError(
                f"cannot reach a Dask scheduler at {self.address} within {self.timeout:g} s; check the address, that "
                f"`dask scheduler` runs there and its port is open, or raise --timeout"
            )
        if isinstance(error, ImportError):  # the scheduler refused this client (e.g. its versions)
            raise BackendError(f"the Dask scheduler at {self.address} refused this client ({error})")
        if isinstance(error, Exception):
            raise BackendError(
                f"the server at {self.address} is not a Dask scheduler: it answered, but not in Dask's protocol (is "
                "it the scheduler's dashboard, a web server or a proxy?); check the address (the scheduler's own "
                "port, 8786 by default)"
            )
        if error is not None:  # e.g. SystemExit: not ours to swallow
            raise error
        self.client = client
        no_workers = BackendError(
            f"the Dask scheduler at {self.address} has no workers (waited {self.timeout:g} s); start some with "
            f"`dask worker {self.address}`"
        )
        finished, _, error = _within(limit, lambda: client.wait_for_workers(1, timeout=self.timeout))
        if not finished or isinstance(error, _TIMEOUTS):
            raise no_workers
        if isinstance(error, Exception):
            raise BackendError(f"lost the connection to the Dask scheduler at {self.address}")
        if error is not None:
            raise error
        finished, nthreads, error = _within(limit, client.nthreads)
        if not finished or error is not None:
            raise BackendError(f"lost the connection to the Dask scheduler at {self.address}")
        self.workers = sum(nthreads.values())
        self._probe(client, limit)

    def _probe(self, client: Any, limit: float) -> None:
        """BackendError (exit status 3) unless the scheduler and every worker import the project, this version.

        The scheduler unpickles the tasks it is sent, and the workers run them: one without the
        project fails every task (a worker dies on the task's message, a scheduler reports a
        "deserialization" RuntimeError), and one of another version could compute other results.
        Checked once, before any task is sent (:data:`_PROBE`); workers that join later are not.
        """
        import bandit_envs

        here = bandit_envs.__version__
        install = f"install bandit-envs {here} (the version here) in the environment of"
        finished, version, error = _within(limit, lambda: client.run_on_scheduler(eval, _PROBE))
        if not finished or isinstance(error, (OSError, TimeoutError)):
            raise BackendError(f"lost the connection to the Dask scheduler at {self.address}")
        if isinstance(error, ImportError):
            raise BackendError(
                f"the Dask scheduler at {self.address} cannot import the project ({error}), and it unpickles the "
                f"tasks; {install} the scheduler and of every worker"
            )
        if error is None and version != here:
            raise BackendError(
                f"the Dask scheduler at {self.address} has bandit-envs {version}, not {here}; {install} the scheduler "
                "and of every worker"
            )
        finished, answers, error = _within(limit, lambda: client.run(eval, _PROBE, on_error="return"))
        if not finished or isinstance(error, (OSError, TimeoutError)):
            raise BackendError(f"lost the connection to the Dask scheduler at {self.address}")
        for worker, answer in sorted((answers or {}).items()):
            if isinstance(answer, ImportError):
                raise BackendError(
                    f"the Dask worker at {worker} cannot import the project ({answer}); {install} every worker"
                )
            if isinstance(answer, str) and answer != here:
                raise BackendError(
                    f"the Dask worker at {worker} has bandit-envs {answer}, not {here}; {install} every worker"
                )

    def _discard(self, clients: list[Any]) -> None:
        """Close clients left half-built (their constructor failed, or was abandoned), saying nothing.

        ``close`` does nothing for a client that never started (its status stays "newly-created" or
        "closed"), and would leave its event-loop thread running: one more "IO loop" thread for
        every failed connection of the process. So that thread is stopped too.
        """
        for client in clients:
            _stopping(self.timeout + STOP_GRACE)
            with contextlib.suppress(Exception):
                client.close(timeout=self.timeout)
            runner = getattr(client, "_loop_runner", None)  # distributed's LoopRunner; stopping it twice is harmless
            if runner is not None:
                with contextlib.suppress(Exception):
                    runner.stop(STOP_GRACE)  # joins the thread within that many seconds
        clients.clear()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Disconnect; the scheduler then forgets this client's unfinished tasks."""
        if self.client is not None:
            _stopping(2 * self.timeout)  # distributed bounds the close by the timeout
            try:
                self.client.close(timeout=self.timeout)
            except Exception:  # closing a broken connection must not hide the error being reported
                pass
            self.client = None
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)
        self._levels = {}

    def _workers_alive(self) -> bool:
        """Whether the cluster has workers; BackendError if the scheduler is gone or does not answer within ``timeout``.

        A scheduler that stops answering (a stopped process, a network cut that sends no reset)
        leaves the connection open: without the bound, the question would wait for ever.
        """
        try:
            return bool(self.client.nthreads(callback_timeout=self.timeout))
        except TimeoutError:  # before OSError, of which TimeoutError is one
            raise BackendError(
                f"the Dask scheduler at {self.address} has not answered for {self.timeout:g} s (stopped, overloaded, "
                "or cut off by the network?); check it, or raise --timeout"
            ) from None
        except Exception:  # any other failure here means the scheduler is gone
            raise BackendError(f"lost the connection to the Dask scheduler at {self.address}") from None

    def _check_workers(self) -> None:
        """BackendError once the cluster has had no workers for ``timeout`` seconds (call about once a second)."""
        now = time.monotonic()
        if self._workers_alive():
            self._no_workers_since = None
        elif self._no_workers_since is None:
            self._no_workers_since = now
        elif now - self._no_workers_since > self.timeout:
            raise BackendError(f"the Dask cluster at {self.address} has had no workers for {self.timeout:g} s")

    def _result(self, future: Any) -> Rows:
        """The rows of a finished task, waiting while they are gathered (or recomputed, if lost with a worker).

        A worker that dies holding a finished task's result makes the scheduler compute it again:
        with no worker left, that would wait forever, so the wait checks the workers every second.
        """
        while True:
            try:
                rows: Rows = future.result(timeout=1.0)
                return rows
            except TimeoutError:  # not the connection (an OSError too): the result is not there yet
                self._check_workers()

    def run(self, pending: Sequence[tuple[int, Task]], label: str = "banditlab") -> Iterator[tuple[int, Rows]]:
        """Yield ``(index, rows)`` of every pending task as it finishes on the cluster.

        Task ``i`` gets the Dask key ``{label}-{token}-{i:06d}`` (``label`` names the sweep on the
        dashboard; ``token`` is new for every call). The scheduler takes a key it already holds to
        be the task it holds, whatever is sent: without the token, two sweeps of the same label on one cluster at once
        (the same experiment and options, but a user agent's file edited in between, or two
        scripts' factories both named ``__main__:make``) would each get the other's rows.

        A task whose worker died (Dask retries it on another worker up to the scheduler's
        ``allowed-failures`` and then gives up) does not stop the others: the sweep goes on, and
        a :class:`BackendError` names the lost tasks at the end. A cluster left without workers
        for ``timeout`` seconds (also while a result is gathered), or a lost scheduler, stops at once.
        """
        from distributed import as_completed as dask_as_completed
        from distributed.scheduler import KilledWorker

        if self.client is None:
            raise RuntimeError("use `with DaskBackend(...) as backend:` before backend.run(...)")
        if not pending:
            return
        _sweeping()
        prefix = re.sub(r"[^A-Za-z0-9_.-]", "-", label)
        token = uuid.uuid4().hex[:8]
        keys = [f"{prefix}-{token}-{index:06d}" for index, _ in pending]
        tasks = [task for _, task in pending]
        # run_task is looked up now (not on the workers), so the function sent is this module's.
        futures = self.client.map(partial(run_checked, run_task), tasks, key=keys, pure=False)
        index_of = {f.key: index for f, (index, _) in zip(futures, pending, strict=True)}
        task_of = dict(pending)
        ac = dask_as_completed(futures, loop=self.client.loop)
        del futures  # as_completed holds them; each is released once its result is in
        lost: list[tuple[int, str]] = []
        idle_since = time.monotonic()
        self._no_workers_since = None
        while not ac.is_empty():
            batch = ac.next_batch(block=False)
            if not batch:
                time.sleep(0.05)
                if time.monotonic() - idle_since > 1.0:
                    idle_since = time.monotonic()
                    self._check_workers()
                continue
            idle_since = time.monotonic()
            for future in batch:
                index = index_of.pop(future.key)
                try:
                    # Gathered here, not in as_completed's background: a Ctrl-C or a lost scheduler
                    # then interrupts this call instead of leaving gathers to fail in the event loop.
                    rows = self._result(future)
                except KilledWorker:
                    task = task_of[index]
                    lost.append((index, f"setting {task.setting_index}, run {task.run}"))
                    continue
                except (CancelledError, OSError):
                    raise BackendError(f"lost the connection to the Dask scheduler at {self.address}") from None
                except ImportError as exc:
                    raise BackendError(
                        f"the Dask workers cannot import the project ({exc}); install bandit-envs, the same "
                        "version, in every worker's environment"
                    ) from None
                except RuntimeError as exc:  # the scheduler could not unpickle the tasks (see _probe)
                    if not isinstance(exc.__cause__, ImportError):
                        raise
                    raise BackendError(
                        f"the Dask scheduler at {self.address} cannot import the project ({exc.__cause__}), and it "
                        "unpickles the tasks; install bandit-envs, the same version, in the scheduler's environment"
                    ) from None
                finally:
                    future.release()
                yield index, rows
        if lost:
            users = _user_agents(pending)
            why = (
                f"killed, out of memory, or ended by a user agent ({', '.join(repr(u) for u in users)}: os._exit, a "
                "signal, a crash in compiled code)?"
                if users
                else "killed, or out of memory?"
            )
            raise BackendError(
                f"{len(lost)} task(s) were lost because the Dask workers running them died (first: task {lost[0][0]}, "
                f"{lost[0][1]}; {why} see the worker logs)"
            )


def make_backend(
    backend: str,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    timeout: float = 10.0,
    task_timeout: float | None = None,
) -> LocalBackend | DaskBackend:
    """Build a backend from the CLI's options; ValueError (one sentence) for a bad combination."""
    if task_timeout is not None:
        if (
            isinstance(task_timeout, bool)
            or not isinstance(task_timeout, (int, float))
            or not 0 < task_timeout <= MAX_TASK_TIMEOUT
        ):
            raise ValueError(
                f"--task-timeout must be a number of seconds > 0 and at most {MAX_TASK_TIMEOUT:g}, got "
                f"{task_timeout!r}."
            )
        if backend == "dask":
            raise ValueError("--task-timeout applies only to --backend local (Dask runs tasks in worker threads).")
        if not timeout_supported():
            raise ValueError("--task-timeout needs a POSIX interval timer (SIGALRM), which this platform lacks.")
    if backend == "local":
        if scheduler is not None:
            raise ValueError("--scheduler applies only to --backend dask.")
        return LocalBackend(check_jobs(jobs), task_timeout)
    if backend == "dask":
        if scheduler is None:
            raise ValueError("--backend dask needs --scheduler ADDRESS, e.g. --scheduler tcp://127.0.0.1:8786.")
        if not isinstance(scheduler, str):
            raise ValueError(
                f"--scheduler must be a Dask scheduler address (text) such as tcp://127.0.0.1:8786, got "
                f"{summarize(scheduler)}."
            )
        if not 0 < timeout <= MAX_TIMEOUT:
            raise ValueError(
                f"--timeout must be a positive number of seconds, at most {MAX_TIMEOUT:g}, got {summarize(timeout)}."
            )
        return DaskBackend(scheduler, timeout=timeout)
    raise ValueError(f"--backend must be local or dask, got {summarize(backend)}.")
