"""Tasks: one (setting, run) of an experiment, a pure function of its seeds; run them on processes.

The runner only interprets an experiment's records: ``run_task`` calls the experiment's
family task function (:class:`~agents.experiments.core.spec.Family`), which runs every agent of
that setting and run with common random numbers (:mod:`agents.experiments.core.seeds`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from agents.experiments.core.spec import Experiment
from agents.experiments.core.user_agents import UserAgentError


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
    """A setting that cannot run, refused by this project's own checks inside its task; one sentence."""


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
            f"{exp.id} cannot run its setting {params or task.setting_index} at horizon {exp.horizon}: {reason}"
        ) from None


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
