"""What every benchmark script shares: a measured ratio with its reference, and careful timing.

Every script in ``benchmarks/`` exposes ``results(quick: bool = False) -> list[Ratio]`` (used by
``python benchmarks/run_all.py``, which prints every ratio and writes the speed table of
``docs/reproductions/README.md``) and a ``main()`` for running it alone. A ratio is always
measured against its reference in the same process and the same run, interleaved where it
matters, so a busy machine slows both alike.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Ratio:
    """One measured speed ratio: ``subject`` against ``reference``, both measured in this run.

    ``ratio`` is how many times faster the subject is (reference time / subject time), or the
    memory ratio when ``unit`` says so; ``goal`` is the smallest acceptable ratio (None: no goal,
    reported for information), and ``detail`` the raw figures in words.
    """

    name: str
    subject: str
    reference: str
    ratio: float
    goal: float | None
    detail: str

    @property
    def met(self) -> bool | None:
        """Whether the goal is met (None when there is no goal)."""
        return None if self.goal is None else self.ratio >= self.goal

    def line(self) -> str:
        """One printed line: name, ratio, goal and the raw figures."""
        goal = "" if self.goal is None else f" (goal >= {self.goal:g}x: {'met' if self.met else 'NOT MET'})"
        return f"{self.name}: {self.ratio:.3g}x{goal}  [{self.subject} vs {self.reference}: {self.detail}]"


def best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn`` (seconds), garbage collector off."""
    times = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return min(times)


def interleaved(
    subject: Callable[[], object],
    reference: Callable[[], object],
    repeats: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """Median times (subject, reference) of ``repeats`` alternating calls of each (seconds).

    ``clock`` is wall time by default; ``time.thread_time`` counts only this thread's CPU time,
    which on a shared machine leaves out the time other processes hold the core.
    """
    s_times, r_times = [], []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = clock()
            subject()
            s_times.append(clock() - start)
            start = clock()
            reference()
            r_times.append(clock() - start)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(s_times), statistics.median(r_times)


def print_results(results: list[Ratio]) -> None:
    """Print one line per ratio."""
    for result in results:
        print(result.line())
