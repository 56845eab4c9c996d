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


def run_task(task: Task) -> list[dict[str, Any]]:
    """One task's rows, a pure function of the task (seeds included): the same on any process or machine."""
    return task.experiment.family.task(task.experiment, task.setting_index, task.run, task.base_seed)


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
