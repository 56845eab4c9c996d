"""The gap paper's tasks: regret curves and privacy pairs on ``GraphBandit-v0`` with common random numbers.

Run ``r`` of every setting and every agent uses the same feedback-graph seed
(``instance_seed = r``; Erdős–Rényi graphs for different p are then nested), the same table of
uniforms (mapped to each setting's rewards by the inverse CDF of :mod:`bandit_envs.rewards`)
and the same agent seed. The table of run ``r`` equals the rewards ``GraphBandit-v0`` draws
after ``reset(seed=table_seed(base, r))``, so a user agent stepping the env sees exactly the
rewards the built-in agents' compiled ``simulate`` reads.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from agents.common.tables import UniformTable
from agents.elimination.policies import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from agents.experiments.core.checkpoints import evenly_spaced
from agents.experiments.core.graph_instances import graph_instance
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment
from agents.user_agents import UserAgent, play
from bandit_envs._types import IntArray
from bandit_envs.graph import GraphBanditEnv

N_CHECKPOINTS = 100

#: The gap paper's agents (§5), built with its parameters (δ = 1/T), run by their compiled ``simulate``.
BUILTIN_AGENTS: tuple[str, ...] = ("GAP", "GAPU", "DPSE", "AAE", "AlphaSample")


def make_agent(name: str, env: GraphBanditEnv, setting: dict[str, Any], seed: int) -> EliminationAgent:
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
    raise ValueError(f"agent must be one of {', '.join(BUILTIN_AGENTS)}, got {name!r}.")


def instance(exp: Experiment, setting_index: int, run: int) -> GraphBanditEnv:
    """Run ``run``'s instance of setting ``setting_index`` (:func:`graph_instance`)."""
    return graph_instance(exp.n_arms, exp.settings[setting_index], exp.horizon, run)


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent as run 0 of the first setting builds it, seeded 0 (:attr:`Family.probe`)."""
    return user.build(instance(exp, 0, 0), exp.settings[0], 0, guard=False)


#: Largest table of uniforms a task keeps in memory (and shares between its settings and agents);
#: a longer horizon streams its table in blocks (:class:`agents.common.tables.UniformTable`).
IN_MEMORY_TABLE_BYTES = 64 * 2**20


@functools.lru_cache(maxsize=4)
def uniforms(base_seed: int, run: int, horizon: int, n_arms: int) -> np.ndarray | UniformTable:
    """Run ``run``'s table of uniforms, shared by every setting of the run (read-only).

    Tasks are ordered run by run, so a worker draws each table once for all its settings. A table
    above :data:`IN_MEMORY_TABLE_BYTES` is a :class:`~agents.common.tables.UniformTable` instead: the
    same uniforms, drawn in blocks as each run reaches them, so memory stays flat in T.
    """
    table = UniformTable(table_seed(base_seed, run), horizon, n_arms)
    if 8 * horizon * n_arms > IN_MEMORY_TABLE_BYTES:
        return table
    array = table.array()
    array.setflags(write=False)
    return array


def checkpoints_of(horizon: int) -> np.ndarray:
    """The ``N_CHECKPOINTS`` rounds at which cumulative regret is recorded."""
    return evenly_spaced(horizon, N_CHECKPOINTS)


def regret_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Cumulative regret of every agent at ``N_CHECKPOINTS`` rounds (built-in agents first, then the user's)."""
    env = instance(exp, setting_index, run)
    setting = exp.settings[setting_index]
    table = uniforms(base_seed, run, exp.horizon, exp.n_arms)
    checkpoints = checkpoints_of(exp.horizon)
    seed = agent_seed(base_seed, run)
    rows: list[dict[str, Any]] = []

    def add(name: str, regret: Any) -> None:
        for t, reg in zip(checkpoints.tolist(), regret.tolist(), strict=True):
            rows.append({**setting, "setting": setting_index, "run": run, "agent": name, "t": t, "regret": reg})

    for name in exp.agents:
        agent = make_agent(name, env, setting, seed)
        add(
            name,
            agent.simulate(
                table, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints
            ).checkpoint_regret,
        )
    for user in exp.user_agents:
        env = instance(exp, setting_index, run)
        agent = user.build(env, setting, seed)
        regret, _ = play(env, agent, exp.horizon, checkpoints, table_seed(base_seed, run))
        add(user.name, regret)
    return rows


def step_actions(env: Any, agent: Any, table: np.ndarray, seed: int | None = None) -> IntArray:
    """The arm sequence of ``agent`` replaying the reward ``table`` on the single ``env`` through the step API.

    ``env`` is reset with ``seed`` (None: not reseeded) and the table as its ``reward_table`` option.
    """
    obs, _ = env.reset(seed=seed, options={"reward_table": table})
    actions = np.empty(table.shape[0], dtype=np.int64)
    for t in range(table.shape[0]):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        actions[t] = int(action)  # before the agent's update, which might edit an action array in place
        agent.update(action, reward, info)
    return actions


def _builtin_pair(
    name: str,
    env: GraphBanditEnv,
    setting: dict[str, Any],
    table: np.ndarray | UniformTable,
    changed: tuple[int, int],
    seed: int,
    seed2: int,
) -> tuple[bool, int]:
    """One privacy pair of a built-in agent: (the first run observed the changed entry, first differing round or -1).

    With common noise (``seed2 == seed``) both runs are the same up to round ``t`` of the
    changed entry, so the first run is played to round t, its state kept, and the second run
    resumes from that state with the entry changed: exactly the result of two full runs, for
    about half the cost of the second one.
    """
    t, k = changed
    first = make_agent(name, env, setting, seed)
    kwargs: dict[str, Any] = {"law": env.reward_model, "record_actions": True}
    resume_from = t if seed2 == seed and isinstance(table, np.ndarray) else 0
    if resume_from and isinstance(table, np.ndarray):
        first.simulate(table[:resume_from], env.adjacency, env.gaps, **kwargs)
    second = first.fork() if seed2 == seed else make_agent(name, env, setting, seed2)
    actions = first.simulate(table, env.adjacency, env.gaps, **kwargs).actions
    assert actions is not None
    observed = bool(env.neighbourhoods[actions[t], k])
    if not observed and seed2 == seed:
        # The second run never reads the changed entry: identical by construction.
        return observed, -1
    other = second.simulate(table, env.adjacency, env.gaps, override=(t, k, 0.0), **kwargs).actions
    assert other is not None
    diff = np.flatnonzero(actions[resume_from:] != other[resume_from:])
    return observed, int(diff[0]) + resume_from if diff.size else -1


def privacy_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Gap paper §5.1: run an agent on a table and on the table with one random entry set to 0.

    ``experiment.options["noise"]``: ``"common"`` runs both with the same agent seed; if the
    changed entry r_{t,k} is then outside the closed neighbourhood of the arm the first run
    pulled at round t, the second run never reads it and is identical by construction, so a
    built-in agent is not re-run (an exact shortcut; user agents always are). ``"fresh"`` gives
    the second run its own seed (the paper only says "run GAP again").
    """
    env = instance(exp, setting_index, run)
    setting = exp.settings[setting_index]
    table = uniforms(base_seed, run, exp.horizon, exp.n_arms)
    pick = np.random.default_rng(agent_seed(base_seed, run, 2))
    t_changed = int(pick.integers(exp.horizon))
    k_changed = int(pick.integers(exp.n_arms))
    seed = agent_seed(base_seed, run)
    fresh = exp.options.get("noise", "common") == "fresh"
    seed2 = agent_seed(base_seed, run, 3) if fresh else seed
    rows: list[dict[str, Any]] = []

    def add(name: str, observed: bool, divergence: int) -> None:
        rows.append(
            {
                **setting,
                "setting": setting_index,
                "run": run,
                "agent": name,
                "t_changed": t_changed,
                "k_changed": k_changed,
                "entry_observed": observed,
                "identical": divergence < 0,
                "first_difference": divergence,
            }
        )

    for name in exp.agents:
        observed, divergence = _builtin_pair(name, env, setting, table, (t_changed, k_changed), seed, seed2)
        add(name, observed, divergence)
    if exp.user_agents:
        rewards = env.reward_model.from_uniforms(table.array() if isinstance(table, UniformTable) else table)
        changed = rewards.copy()
        changed[t_changed, k_changed] = 0.0
        for user in exp.user_agents:
            a1 = step_actions(env, user.build(env, setting, seed), rewards)
            a2 = step_actions(env, user.build(env, setting, seed2), changed)
            diff = np.flatnonzero(a1 != a2)
            add(user.name, bool(env.neighbourhoods[a1[t_changed], k_changed]), int(diff[0]) if diff.size else -1)
    return rows
