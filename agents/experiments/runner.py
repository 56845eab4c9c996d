"""Run an experiment's settings × runs, with common random numbers (local processes or Dask: ``backends``).

Common random numbers (STYLE.md rule 8): run ``r`` of every setting and every agent uses the
same feedback-graph seed (``instance_seed = r``; Erdős–Rényi graphs for different p are then
nested), the same table of uniforms (mapped to each setting's rewards by the inverse CDF of
:mod:`bandit_envs.rewards`) and the same agent seed. The table of run ``r`` equals the rewards
``GraphBandit-v0`` draws after ``reset(seed=table_seed(base, r))``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.elimination import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from agents.experiments.registry import Experiment
from bandit_envs.graph import GraphBanditEnv

N_CHECKPOINTS = 100


def table_seed(base_seed: int, run: int) -> int:
    """Integer seed of run ``run``'s reward noise (also valid for ``env.reset(seed=...)``)."""
    return int(np.random.SeedSequence([base_seed, run]).generate_state(1, np.uint64)[0] >> 1)


def agent_seed(base_seed: int, run: int, stream: int = 1) -> int:
    """Seed of every agent's generator in run ``run`` (policy randomness and privacy noise).

    ``stream`` selects an independent seed for the same run (2 picks the changed table entry of
    a privacy pair, 3 is the fresh noise of its second run).
    """
    return int(np.random.SeedSequence([base_seed, run, stream]).generate_state(1, np.uint64)[0] >> 1)


def make_agent(name: str, env: GraphBanditEnv, setting: dict[str, float], seed: int) -> EliminationAgent:
    """Build one of the gap paper's agents for ``env`` with the paper's parameters (δ = 1/T)."""
    k, horizon, eps = env.n_arms, env.horizon, setting.get("epsilon", 0.1)
    if name == "GAP":
        return GAP(k, horizon, eps, env.adjacency, seed=seed)
    if name == "GAPU":
        return GAPU(k, horizon, eps, env.adjacency, seed=seed)
    if name == "DPSE":
        return DPSE(k, horizon, eps, seed=seed)
    if name == "AAE":
        return AAE(k, horizon, seed=seed)
    if name == "AlphaSample":
        return AlphaSample(k, horizon, seed=seed)
    raise ValueError(f"agent must be one of GAP, GAPU, DPSE, AAE, AlphaSample, got {name!r}.")


@dataclass(frozen=True)
class Task:
    """One (setting, run) unit of work: all agents on one instance and one reward table."""

    experiment: Experiment
    setting_index: int
    run: int
    base_seed: int


def _instance(task: Task) -> tuple[GraphBanditEnv, dict[str, float], np.ndarray]:
    exp = task.experiment
    setting = exp.settings[task.setting_index]
    env = GraphBanditEnv(
        n_arms=exp.n_arms,
        edge_probability=setting["edge_probability"],
        gap=setting["gap"],
        horizon=exp.horizon,
        instance_seed=task.run,
    )
    return env, setting, _uniforms(task.base_seed, task.run, exp.horizon, exp.n_arms)


@functools.lru_cache(maxsize=4)
def _uniforms(base_seed: int, run: int, horizon: int, n_arms: int) -> np.ndarray:
    """Run ``run``'s table of uniforms, shared by every setting of the run (read-only).

    Tasks are ordered run by run, so a worker draws each table once for all its settings.
    """
    table = np.random.default_rng(table_seed(base_seed, run)).random((horizon, n_arms))
    table.setflags(write=False)
    return table


def run_regret_task(task: Task) -> list[dict[str, Any]]:
    """Cumulative regret of every agent at ``N_CHECKPOINTS`` rounds."""
    env, setting, uniforms = _instance(task)
    exp = task.experiment
    checkpoints = np.unique(np.linspace(exp.horizon / N_CHECKPOINTS, exp.horizon, N_CHECKPOINTS).astype(np.int64))
    rows: list[dict[str, Any]] = []
    for name in exp.agents:
        agent = make_agent(name, env, setting, agent_seed(task.base_seed, task.run))
        res = agent.simulate(uniforms, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints)
        for t, reg in zip(checkpoints.tolist(), res.checkpoint_regret.tolist(), strict=True):
            rows.append(
                {**setting, "setting": task.setting_index, "run": task.run, "agent": name, "t": t, "regret": reg}
            )
    return rows


def run_privacy_task(task: Task) -> list[dict[str, Any]]:
    """Gap paper §5.1: run GAP on a table and on the table with one random entry set to 0.

    ``experiment.options["noise"]``: ``"common"`` runs both with the same agent seed (the
    protocol of EXPERIMENTS.md); if the changed entry r_{t,k} is then outside the closed
    neighbourhood of the arm the first run pulled at round t, the second run never reads it
    and is identical by construction, so it is not re-run (an exact shortcut). ``"fresh"``
    gives the second run its own seed (the paper only says "run GAP again").
    """
    env, setting, uniforms = _instance(task)
    exp = task.experiment
    pick = np.random.default_rng(agent_seed(task.base_seed, task.run, 2))
    t_changed = int(pick.integers(exp.horizon))
    k_changed = int(pick.integers(exp.n_arms))
    seed = agent_seed(task.base_seed, task.run)
    name = exp.agents[0]
    first = make_agent(name, env, setting, seed).simulate(
        uniforms, env.adjacency, env.gaps, law=env.reward_model, record_actions=True
    )
    assert first.actions is not None
    observed = bool(env.neighbourhoods[first.actions[t_changed], k_changed])
    fresh = exp.options.get("noise", "common") == "fresh"
    divergence = -1
    if observed or fresh:
        seed2 = agent_seed(task.base_seed, task.run, 3) if fresh else seed
        second = make_agent(name, env, setting, seed2).simulate(
            uniforms,
            env.adjacency,
            env.gaps,
            law=env.reward_model,
            record_actions=True,
            override=(t_changed, k_changed, 0.0),
        )
        assert second.actions is not None
        diff = np.flatnonzero(first.actions != second.actions)
        divergence = int(diff[0]) if diff.size else -1
    return [
        {
            **setting,
            "setting": task.setting_index,
            "run": task.run,
            "agent": name,
            "t_changed": t_changed,
            "k_changed": k_changed,
            "entry_observed": observed,
            "identical": divergence < 0,
            "first_difference": divergence,
        }
    ]


def run_budget_task(task: Task) -> list[dict[str, Any]]:
    """One batch of a privacy-budget experiment (see :mod:`agents.experiments.budget`)."""
    from agents.experiments.budget import run_budget_batch

    return run_budget_batch(task.experiment.settings[task.setting_index], task.experiment.horizon, task.base_seed)


def run_ldp_task(task: Task) -> list[dict[str, Any]]:
    """One run of one agent of an LDP contextual-bandit experiment (:mod:`agents.experiments.ldp`)."""
    from agents.experiments.ldp import run_ldp_run

    setting = task.experiment.settings[task.setting_index]
    rows = run_ldp_run(setting, task.experiment.horizon, task.run, task.base_seed)
    return [{**r, "setting": task.setting_index} for r in rows]


def run_rl_task(task: Task) -> list[dict[str, Any]]:
    """One run of the RL comparison (:mod:`agents.experiments.rl`)."""
    from agents.experiments.rl import run_rl_task as run

    return run(task)


RUNNERS: dict[str, Callable[[Task], list[dict[str, Any]]]] = {
    "regret": run_regret_task,
    "privacy": run_privacy_task,
    "budget": run_budget_task,
    "ldp": run_ldp_task,
    "rl": run_rl_task,
}


def run_task(task: Task) -> list[dict[str, Any]]:
    """One task's rows, a pure function of the task (seeds included): the same on any process or machine."""
    return RUNNERS[task.experiment.kind](task)


_run = run_task


def tasks_for(experiment: Experiment, base_seed: int = 0) -> list[Task]:
    """Every (setting, run) task of an experiment, runs outermost so partial output is balanced."""
    return [Task(experiment, s, r, base_seed) for r in range(experiment.runs) for s in range(len(experiment.settings))]


def run_tasks(tasks: Sequence[Task], jobs: int = 1) -> Iterator[list[dict[str, Any]]]:
    """Yield each task's rows as it finishes (in submission order), on ``jobs`` processes."""
    if jobs <= 1:
        for task in tasks:
            yield _run(task)
        return
    chunk = max(1, len(tasks) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_run, tasks, chunksize=chunk)


def default_jobs() -> int:
    """Number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
