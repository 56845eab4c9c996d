"""Tasks of ``dp-mab/epsilon`` and ``graph/side-observations``: a block of runs as copies of batched agents.

A task plays one setting and the runs ``r0 .. r0 + B − 1`` (B = the family's ``runs_per_task``,
fewer at the end). Common random numbers: run ``r`` of every agent and setting reads the rewards
``GraphBanditEnv`` draws after ``reset(seed=table_seed(base, r))`` (the uniforms of
``np.random.default_rng(table_seed(base, r))``, row by row, mapped by the env's reward law), and
the instance (graph) is the setting's, with ``instance_seed = 0`` (Erdős–Rényi graphs for
different p are then nested).

Built-in agents do not step the env: the task draws each copy's uniforms for a block of
:data:`ROUNDS_PER_DRAW` rounds at once and maps them to rewards in one numpy call, which gives
exactly the rewards the env would (tests check it against ``GraphBanditVectorEnv``). Per round a
batched agent then costs one ``act`` and one ``update`` for all copies. Elimination agents
(``DPSE``, ``GAP``) run their compiled single-agent ``simulate`` on each run's table instead.

Agent seeds: run ``r``'s agent seed is ``s0 + r`` (s0 from :func:`~agents.experiments.core.seeds.agent_seed`
of the base seed), so the batched agent of a block seeded ``s0 + r0`` gives copy i the seed of
run ``r0 + i`` (copy i of a batch seeded s plays as a single agent seeded s + i) — for the
agents with per-copy streams (the central-DP agents, Exp3SET/Exp3IX) and the deterministic ones
(UCB, UCB-N, KL-UCB). ``ThompsonSampling`` draws every copy's samples from one generator, so its
run r depends on the block it is played in (the same for a given ``runs_per_task``).

A user agent plays every setting, one run at a time through the step API
(:func:`~agents.user_agents.play`): it is built for the setting's env with run
``r``'s agent seed and steps it from ``reset(seed=table_seed(base, r))``, so it reads the same
rewards as the built-in agents, and its rows have the same checkpoints and columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents import (
    DPSE,
    DPTSUCB,
    GAP,
    KLUCB,
    UCB,
    UCBN,
    AdaPUCB,
    DPThompsonSampling,
    Exp3IX,
    Exp3SET,
    HybridDPUCB,
    PrePullGaussianTS,
    ThompsonSampling,
    TreeDPUCB,
)
from agents.base import Agent
from agents.elimination.policies import EliminationAgent
from agents.experiments.core.checkpoints import evenly_spaced
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment
from agents.user_agents import UserAgent, play
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.graph import GraphBanditEnv

N_CHECKPOINTS = 100
#: Rounds of rewards drawn at once for all copies of a block (8·K·B bytes per round).
ROUNDS_PER_DRAW = 1024

Builder = Callable[[GraphBanditEnv, dict[str, Any], int | None, int], Agent]

#: How each built-in agent is made: (env, setting, n_envs, seed) → agent. ε from the setting.
BUILDERS: dict[str, Builder] = {
    "UCB": lambda env, s, n, seed: UCB(env.n_arms, n_envs=n, seed=seed),
    "KLUCB": lambda env, s, n, seed: KLUCB(env.n_arms, n_envs=n, seed=seed),
    "TS": lambda env, s, n, seed: ThompsonSampling(env.n_arms, n_envs=n, seed=seed),
    "HybridDPUCB": lambda env, s, n, seed: HybridDPUCB(env.n_arms, s["epsilon"], n_envs=n, seed=seed),
    "HybridDPUCB-paper": lambda env, s, n, seed: HybridDPUCB(
        env.n_arms, s["epsilon"], bound="paper", n_envs=n, seed=seed
    ),
    "PrePullGTS": lambda env, s, n, seed: PrePullGaussianTS.for_budget(
        env.n_arms, env.horizon, s["epsilon"], n_envs=n, seed=seed
    ),
    "DPTSUCB": lambda env, s, n, seed: DPTSUCB.for_budget(env.n_arms, env.horizon, s["epsilon"], n_envs=n, seed=seed),
    "TreeDPUCB": lambda env, s, n, seed: TreeDPUCB(env.n_arms, env.horizon, s["epsilon"], n_envs=n, seed=seed),
    "AdaPUCB": lambda env, s, n, seed: AdaPUCB(env.n_arms, s["epsilon"], n_envs=n, seed=seed),
    "AdaPUCB-cum": lambda env, s, n, seed: AdaPUCB(env.n_arms, s["epsilon"], variant="cumulative", n_envs=n, seed=seed),
    "DPTS": lambda env, s, n, seed: DPThompsonSampling(env.n_arms, s["epsilon"], n_envs=n, seed=seed),
    "DPSE": lambda env, s, n, seed: DPSE(env.n_arms, env.horizon, s["epsilon"], n_envs=n, seed=seed),
    "UCBN": lambda env, s, n, seed: UCBN(env.n_arms, n_envs=n, seed=seed),
    "TS-N": lambda env, s, n, seed: ThompsonSampling(env.n_arms, side_observations=True, n_envs=n, seed=seed),
    "Exp3SET": lambda env, s, n, seed: Exp3SET(env.n_arms, env.adjacency, env.horizon, n_envs=n, seed=seed),
    "Exp3IX": lambda env, s, n, seed: Exp3IX(env.n_arms, env.adjacency, n_envs=n, seed=seed),
    "GAP": lambda env, s, n, seed: GAP(env.n_arms, env.horizon, s["epsilon"], env.adjacency, n_envs=n, seed=seed),
}

#: Every agent name the tasks can build.
BUILTIN_AGENTS: tuple[str, ...] = tuple(BUILDERS)


def make_agent(name: str, env: GraphBanditEnv, setting: dict[str, Any], seed: int, n_envs: int | None = None) -> Agent:
    """Build agent ``name`` for ``env`` (ε from ``setting``), ``n_envs`` copies seeded ``seed + i``."""
    if name not in BUILDERS:
        raise ValueError(f"agent must be one of {', '.join(BUILTIN_AGENTS)}, got {name!r}.")
    return BUILDERS[name](env, setting, n_envs, seed)


def run_seed(base_seed: int, run: int) -> int:
    """Agent seed of run ``run``: ``s0 + run`` (a block seeded ``s0 + r0`` gives copy i run ``r0 + i``'s seed)."""
    return (agent_seed(base_seed, 0) >> 2) + run


def instance(exp: Experiment, setting: dict[str, Any]) -> GraphBanditEnv:
    """The setting's env (graph fixed by ``instance_seed = 0``; ``exp.options`` give means and reward law)."""
    return GraphBanditEnv(
        n_arms=exp.n_arms,
        edge_probability=setting.get("edge_probability", 0.0),
        gap=exp.options.get("gap", 0.1),
        means=exp.options.get("means"),
        reward=exp.options.get("reward", "truncnorm"),
        horizon=exp.horizon,
        instance_seed=0,
    )


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent as run 0 of the first setting builds it, seeded 0 (:attr:`Family.probe`)."""
    setting = exp.settings[0]
    return user.build(instance(exp, setting), {k: v for k, v in setting.items() if k != "agents"}, 0, guard=False)


def plays(exp: Experiment, setting: dict[str, Any]) -> tuple[str, ...]:
    """The agents a setting plays: the ones its ``agents`` entry names (all of the experiment's if absent)."""
    names = setting.get("agents")
    return tuple(a for a in exp.agents if names is None or a in names.split(","))


def reward_blocks(env: GraphBanditEnv, seeds: list[int]) -> Any:
    """(rounds, B, K) reward blocks of every copy, consecutive, :data:`ROUNDS_PER_DRAW` rounds at a time.

    Copy i's rewards are the env's after ``reset(seed=seeds[i])``: its generator's uniforms row
    by row, mapped by the reward law's inverse CDF.
    """
    rngs = [np.random.default_rng(s) for s in seeds]
    k = env.n_arms
    for start in range(0, env.horizon, ROUNDS_PER_DRAW):
        rows = min(ROUNDS_PER_DRAW, env.horizon - start)
        u = np.stack([g.random((rows, k)) for g in rngs], axis=1)
        yield env.reward_model.from_uniforms(u.reshape(-1, k)).reshape(rows, len(seeds), k)


def play_batches(agents: list[Agent], env: GraphBanditEnv, seeds: list[int], checkpoints: IntArray) -> list[FloatArray]:
    """Per agent, (B, checkpoints) cumulative pseudo-regret of batched agents on the copies' reward streams.

    The agents are independent: each block of rewards is drawn once and every agent plays its
    rounds in turn (the same results as one agent after the other, one draw instead of one per
    agent).
    """
    b = len(seeds)
    copies = np.arange(b)
    gaps, closed = env.gaps, env.neighbourhoods
    side = bool(env.adjacency.any())
    totals = [np.zeros(b) for _ in agents]
    outs = [np.empty((b, checkpoints.size)) for _ in agents]
    marks = np.zeros(env.horizon + 1, dtype=np.int64) - 1
    marks[checkpoints] = np.arange(checkpoints.size)
    t0 = 0
    for block in reward_blocks(env, seeds):
        for agent, total, out in zip(agents, totals, outs, strict=True):
            for t, rows in enumerate(block, start=t0 + 1):
                actions = agent.act()
                reward = rows[copies, actions]
                info = None
                if side:
                    mask = closed[actions]
                    info = {"observed_mask": mask, "observed_rewards": np.where(mask, rows, 0.0)}
                agent.update(actions, reward, info)
                total += gaps[actions]
                if marks[t] >= 0:
                    out[:, marks[t]] = total
        t0 += block.shape[0]
    return outs


def simulate_run(
    name: str,
    env: GraphBanditEnv,
    setting: dict[str, Any],
    seed: int,
    env_seed: int,
    checkpoints: IntArray,
) -> FloatArray:
    """Checkpoint regret of one run of an elimination agent: its compiled ``simulate`` on the run's uniforms."""
    agent = make_agent(name, env, setting, seed)
    if not isinstance(agent, EliminationAgent):
        raise TypeError(f"{name} has no compiled simulate; play it with play_batches.")
    uniforms = np.random.default_rng(env_seed).random((env.horizon, env.n_arms))
    result = agent.simulate(uniforms, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints)
    return np.asarray(result.checkpoint_regret, dtype=np.float64)


def regret_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Cumulative regret at ``N_CHECKPOINTS`` rounds of a setting's agents, runs ``run .. run + B − 1``.

    A user agent plays every setting (see the module docstring).
    """
    setting = exp.settings[setting_index]
    env = instance(exp, setting)
    runs = list(range(run, min(run + exp.family.runs_per_task, exp.runs)))
    seeds = [table_seed(base_seed, r) for r in runs]
    checkpoints = evenly_spaced(exp.horizon, N_CHECKPOINTS)
    shown = {k: v for k, v in setting.items() if k != "agents"}
    rows: list[dict[str, Any]] = []
    names = plays(exp, setting)
    regrets: dict[str, FloatArray] = {}
    batched: list[tuple[str, Agent]] = []
    for name in names:
        agent = make_agent(name, env, setting, run_seed(base_seed, run), n_envs=len(runs))
        if isinstance(agent, EliminationAgent):
            regrets[name] = np.stack([simulate_run(name, env, setting, run_seed(base_seed, r), s, checkpoints)
                                      for r, s in zip(runs, seeds, strict=True)])  # fmt: skip
        else:
            batched.append((name, agent))
    played = play_batches([a for _, a in batched], env, seeds, checkpoints)
    regrets.update({name: out for (name, _), out in zip(batched, played, strict=True)})
    for user in exp.user_agents:
        regrets[user.name] = np.stack([play(env, user.build(env, shown, run_seed(base_seed, r)), exp.horizon,
                                            checkpoints, s)[0] for r, s in zip(runs, seeds, strict=True)])  # fmt: skip
    for name in (*names, *(u.name for u in exp.user_agents)):
        regret = regrets[name]
        for i, r in enumerate(runs):
            for t, reg in zip(checkpoints.tolist(), regret[i].tolist(), strict=True):
                rows.append({**shown, "setting": setting_index, "run": r, "agent": name, "t": t, "regret": reg})
    return rows
