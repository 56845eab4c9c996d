"""How many of this process's cores are free now, for sizing a parallel kernel's threads.

A parallel kernel that asks for more threads than there are idle cores makes every thread wait
for the others at the end of each parallel region while the operating system shares the busy
cores out: on a 2-core machine with one other CPU-bound process, a parallel step of the budget
envs cost up to 38 times the CPU of a serial one. :func:`free_cores` counts the cores this
process may run on (its CPU affinity) minus the tasks other than this one that are runnable at
this moment (the fourth field of Linux's ``/proc/loadavg``, "runnable/total", which counts the
calling thread itself; elsewhere the one-minute load average, which counts this process's own
recent load too).
"""

from __future__ import annotations

import math
import os

__all__ = ["free_cores"]

_LOADAVG = "/proc/loadavg"


def _cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _busy_elsewhere() -> int:
    """Runnable tasks now other than the calling thread (the load average's where /proc is missing)."""
    try:
        with open(_LOADAVG, encoding="ascii") as f:
            runnable = int(f.read().split()[3].split("/")[0])
        return max(0, runnable - 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return max(0, math.ceil(os.getloadavg()[0] - 1.0))
    except (AttributeError, OSError):
        return 0


def free_cores(limit: int) -> int:
    """The cores free for a parallel call now: this process's cores minus the other runnable tasks, in [1, limit]."""
    return max(1, min(limit, _cores() - _busy_elsewhere()))
