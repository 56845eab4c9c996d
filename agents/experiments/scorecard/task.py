"""The scorecard's task: one problem of the suite, every agent that can play it, every seed.

A task is one setting: a problem (:mod:`agents.experiments.scorecard.suite`) or an audit. It plays
each eligible built-in agent of :data:`~agents.experiments.scorecard.panel.PANEL` on its fast path
(one batched agent for all seeds, the elimination agents' compiled ``simulate``, the linear
agents' compiled ``run``) and each user agent through the step API (:func:`~agents.user_agents.play`),
on the same reward draws (common random numbers: seed ``r`` of every agent reads the env after
``reset(seed=table_seed(base, r))``, as in :mod:`agents.experiments.dpmab.task`). Every agent's
wall time over the task is recorded, for the speed line.

Local-DP problems give a non-private context-free agent only privatized rewards through
:class:`agents.LDPWrapper` (randomized response on the reward, ``rr_output="bits"``: ε-LDP per
report, one report per round; the noise comes from the wrapper's own generator, seeded with the
agent's seed + 1, so that copy i's users draw from seed s0 + 1 + i for a built-in's batch, a user's
batched agent and a user's agent built per seed alike; only a user's agent whose own privacy-noise
streams hold those seeds, which LDPWrapper refuses, gets its N copies' users seeded past them, at
its seed + N).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents import LDPWrapper
from agents.base import Agent
from agents.elimination.policies import EliminationAgent
from agents.experiments.core.checkpoints import evenly_spaced
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment
from agents.experiments.dpmab.task import reward_blocks
from agents.experiments.gap.task import step_actions
from agents.experiments.scorecard.panel import PANEL, Entry, eligible, wrapped
from agents.experiments.scorecard.suite import (
    ADVERSARIAL_GROWTH,
    ADVERSARIAL_PHASES,
    BY_NAME,
    SUITE_VERSION,
    Problem,
    scaled_horizon,
)
from agents.user_agents import GuardedAgent, UserAgent, check_fits, play
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.budget.movielens import PrivacyBudgetMovieLensEnv, PrivacyBudgetMovieLensVectorEnv
from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv
from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv, MovieLensRecommendationVectorEnv

N_CHECKPOINTS = 10
#: Columns of every row, problem or audit (a row leaves the other kind's columns empty).
COLUMNS: tuple[str, ...] = (
    "suite", "problem", "agent", "run", "t", "regret", "uniform", "horizon", "seconds", "steps",
    "epsilon", "verdict", "epsilon_lower", "audit_runs", "unit", "setting",
)  # fmt: skip


def _row(**values: Any) -> dict[str, Any]:
    return {c: values.get(c) for c in COLUMNS}


def run_seed(base_seed: int, run: int) -> int:
    """Agent seed of seed ``run``: ``s0 + run``, so a batch seeded ``s0`` gives copy i seed i's agent seed."""
    return (agent_seed(base_seed, 0) >> 2) + run


def horizon_of(exp: Experiment, problem: Problem) -> int:
    """The problem's horizon at the experiment's scale (``options["fraction"]`` of its full horizon)."""
    return scaled_horizon(problem, float(exp.options["fraction"]))


def user_plays(user: UserAgent) -> tuple[str, ...]:
    """The capabilities a user agent declares (``plays`` on its factory; default context-free)."""
    from agents.experiments.scorecard.panel import check_plays

    plays = getattr(user.factory(), "plays", ("context-free",))
    return check_plays(plays, f"agent {user.name}")


# ----------------------------------------------------------------------------- the adversary


def adversarial_means(horizon: int, n_arms: int, best: int) -> FloatArray:
    """The (horizon × K) Bernoulli means of the adversarial table with best arm ``best``.

    Phase j = 0, 1, ... lasts ⌈1.6^j⌉ rounds (:data:`~agents.experiments.scorecard.suite.ADVERSARIAL_GROWTH`);
    in even phases the best arm's mean is 0.95 and every other arm's 0.85, in odd phases 0.15 and
    0.05 (:data:`~agents.experiments.scorecard.suite.ADVERSARIAL_PHASES`).
    """
    means = np.empty((horizon, n_arms), dtype=np.float64)
    start, j = 0, 0
    while start < horizon:
        stop = min(horizon, start + math.ceil(ADVERSARIAL_GROWTH**j))
        top, rest = ADVERSARIAL_PHASES[j % 2]
        means[start:stop] = rest
        means[start:stop, best] = top
        start, j = stop, j + 1
    return means


def adversarial_table(problem: Problem, horizon: int, seed: int) -> FloatArray:
    """The seed's (horizon × K) reward table of the adversarial problem.

    A stochastically constrained adversarial table (Zimmert & Seldin, "Tsallis-INF: An Optimal
    Algorithm for Stochastic and Adversarial Bandits", JMLR 22(28), 2021, Section 8): every arm's
    Bernoulli mean jumps together between a high and a low level in phases of geometrically growing
    length, while one arm stays best by the same gap (:func:`adversarial_means`). An agent that
    estimates each arm by the mean of its own pulls compares arms whose samples come from
    different phases, and keeps following the arm that was lucky in its timing; an agent with
    importance-weighted cumulative estimates (Exp3) is unbiased whatever the timing. The best arm
    is drawn per seed, then the rewards, both from ``default_rng(seed)``; the table is fixed before
    any agent plays (an oblivious adversary).
    """
    k = int(problem.keywords["n_arms"])
    rng = np.random.default_rng(seed)
    best = int(rng.integers(k))
    return (rng.random((horizon, k)) < adversarial_means(horizon, k, best)).astype(np.float64)


def adversarial_env(problem: Problem, horizon: int, seed: int, num_envs: int | None = None) -> Any:
    """The env a user agent sees on the adversarial problem's seed: the table's means averaged over rounds.

    So ``env.expected_rewards`` names the seed's best arm (drawn first from ``default_rng(seed)``,
    as :func:`adversarial_table` draws it), as it does on the stochastic problems. With
    ``num_envs``, the vector env of that many copies of it (for a factory asking for ``n_envs``).
    """
    k = int(problem.keywords["n_arms"])
    best = int(np.random.default_rng(seed).integers(k))
    means = adversarial_means(horizon, k, best).mean(axis=0)
    keywords = {**problem.keywords, "means": list(means), "horizon": horizon, "instance_seed": 0}
    return GraphBanditEnv(**keywords) if num_envs is None else GraphBanditVectorEnv(num_envs=num_envs, **keywords)


def table_regret(table: FloatArray, actions: IntArray, checkpoints: IntArray) -> FloatArray:
    """Regret at the checkpoints against the best fixed arm in hindsight of the whole table."""
    best = int(np.argmax(table.sum(axis=0)))
    got = table[np.arange(table.shape[0]), actions]
    regret = np.cumsum(table[:, best] - got)
    return regret[checkpoints - 1]


def table_uniform(table: FloatArray) -> float:
    """Expected regret of uniform random play on ``table`` against its best fixed arm."""
    return float(table.sum(axis=0).max() - table.mean(axis=1).sum())


# ----------------------------------------------------------------------------- playing


def _wrap(agent: Any, problem: Problem, seed: int, after: int = 1) -> Any:
    """``agent`` behind LDPWrapper (randomized response, ε of the problem) on a local problem.

    The wrapper's users draw from seed ``seed + after`` (copy i from ``seed + after + i``): ``after``
    is the number of seeds the agent itself takes from ``seed`` on (its copies), so that the users'
    noise never shares a stream with the agent (LDPWrapper refuses it when it would).
    """
    return LDPWrapper(agent, "randomized_response", epsilon=problem.epsilon or 1.0, seed=seed + after)


def _steps(env: Any, agent: Any, table: FloatArray, seed: int) -> IntArray:
    """Step ``agent`` on the single ``env`` replaying ``table``; the arms it played."""
    check_fits(env, agent)
    return step_actions(env, agent, table, seed)


def _vector_steps(venv: GraphBanditVectorEnv, agent: Any, table: FloatArray, seed: int) -> IntArray:
    """Step a batched ``agent`` on a one-copy ``venv`` replaying ``table``; the arms it played (as :func:`_steps`)."""
    check_fits(venv, agent)
    obs, _ = venv.reset(seed=[seed], options={"reward_table": table[None]})
    actions = np.empty(table.shape[0], dtype=np.int64)
    for t in range(table.shape[0]):
        action = agent.act(obs)
        obs, reward, _, _, info = venv.step(action)
        actions[t] = int(np.asarray(action).reshape(-1)[0])  # before the agent's update, which may edit it in place
        agent.update(action, reward, info)
    return actions


def _lockstep(env: Any, agent: Any, horizon: int, checkpoints: IntArray, seeds: Any) -> FloatArray:
    """Cumulative ``fixed_arm_regret`` at the checkpoints of an agent stepping a budget env: (C,) or (C, B)."""
    check_fits(env, agent)
    obs, _ = env.reset(seed=seeds)
    mask = np.zeros(horizon + 1, dtype=bool)
    mask[checkpoints] = True
    total: Any = 0.0
    out = []
    for t in range(1, horizon + 1):
        actions = agent.act(obs)
        obs, reward, _, _, info = env.step(actions)
        total = total + info["fixed_arm_regret"]  # before the agent's update, which may edit info in place
        agent.update(actions, reward, info)
        if mask[t]:
            out.append(np.copy(total))
    return np.asarray(out, dtype=np.float64)


class _Play:
    """What one task needs to play a problem's agents: env, seeds, checkpoints, normalisers."""

    def __init__(self, exp: Experiment, problem: Problem, base_seed: int) -> None:
        self.exp, self.problem, self.base = exp, problem, base_seed
        self.horizon = horizon_of(exp, problem)
        self.runs = list(range(exp.runs))
        self.seeds = [table_seed(base_seed, r) for r in self.runs]
        self.checkpoints = evenly_spaced(self.horizon, N_CHECKPOINTS)
        self.setting = {"problem": problem.name, "epsilon": problem.epsilon, "horizon": self.horizon}


def graph_env(problem: Problem, horizon: int) -> GraphBanditEnv:
    """The env of a context-free problem (``GraphBandit-v0`` with the problem's keywords), graph seed 0."""
    return GraphBanditEnv(**problem.keywords, horizon=horizon, instance_seed=0)


def play_graph(ctx: _Play, names: list[str], users: list[UserAgent]) -> dict[str, tuple[FloatArray, FloatArray, float]]:
    """Regret (B, C), uniform's regret (B,) and seconds of each agent on a GraphBandit-v0 problem."""
    problem, h, cps = ctx.problem, ctx.horizon, ctx.checkpoints
    env = graph_env(problem, h)
    k, g, b = env.n_arms, env.adjacency, len(ctx.runs)
    adversarial = problem.kind == "adversarial"
    tables = [adversarial_table(problem, h, s) for s in ctx.seeds] if adversarial else []
    if adversarial:
        uniform = np.array([table_uniform(t) for t in tables])
    else:
        uniform = np.full(b, h * float(np.mean(env.gaps)))
    out: dict[str, tuple[FloatArray, FloatArray, float]] = {}
    s0 = run_seed(ctx.base, 0)
    for name in names:
        entry: Entry = PANEL[name]
        start = time.perf_counter()
        if entry.path == "simulate" and not (wrapped(entry.plays, problem)):
            rows = []
            for r, seed in zip(ctx.runs, ctx.seeds, strict=True):
                agent = entry.build(problem, k, g, h, None, run_seed(ctx.base, r))
                assert isinstance(agent, EliminationAgent)
                if adversarial:
                    res = agent.simulate(tables[r], g, np.zeros(k), record_actions=True)
                    rows.append(table_regret(tables[r], np.asarray(res.actions, dtype=np.int64), cps))
                else:
                    uniforms = np.random.default_rng(seed).random((h, k))
                    res = agent.simulate(uniforms, g, env.gaps, law=env.reward_model, checkpoints=cps)
                    rows.append(np.asarray(res.checkpoint_regret, dtype=np.float64))
            regret = np.stack(rows)
        else:
            agent = entry.build(problem, k, g, h, b, s0)
            if wrapped(entry.plays, problem):
                agent = _wrap(agent, problem, s0)
            if adversarial:
                stack = np.stack(tables)
                actions = _reward_batch(agent, env, (stack.transpose(1, 0, 2),), cps, record=True)
                regret = np.stack([table_regret(tables[i], actions[i], cps) for i in range(b)])
            else:
                regret = _reward_batch(agent, env, reward_blocks(env, ctx.seeds), cps)
        out[name] = (regret, uniform, time.perf_counter() - start)
    for user in users:
        start = time.perf_counter()
        out[user.name] = (_user_graph(ctx, user, env, tables), uniform, time.perf_counter() - start)
    return out


def _reward_batch(agent: Any, env: GraphBanditEnv, blocks: Any, cps: IntArray, record: bool = False) -> Any:
    """A batched agent on (rounds, B, K) reward blocks: (B, C) pseudo-regret at ``cps``, or (B, T) arms if ``record``.

    Every round the agent gets the closed neighbourhood of its arm as ``observed_mask`` (only the
    arm itself on an edgeless graph), as the env's step info does.
    """
    closed, gaps = env.neighbourhoods, env.gaps
    out: list[Any] = []
    total: Any = None
    marks = np.zeros(env.horizon + 1, dtype=bool)
    marks[cps] = True
    t = 0
    for block in blocks:
        copies = np.arange(block.shape[1])
        if total is None:
            total = np.zeros(block.shape[1])
        for rows in block:
            t += 1
            actions = agent.act()
            mask = closed[actions]
            agent.update(
                actions, rows[copies, actions], {"observed_mask": mask, "observed_rewards": np.where(mask, rows, 0)}
            )
            if record:
                out.append(np.asarray(actions, dtype=np.int64))
            else:
                total = total + gaps[actions]
                if marks[t]:
                    out.append(total)
    return np.stack(out, axis=1)


class _AsAgent(Agent):
    """Any object with ``act``/``update`` as an :class:`agents.base.Agent`, so that LDPWrapper can wrap it.

    The wrapper hands it only the privatized reward and a stripped info; its own ``reset`` is not called.
    """

    def __init__(self, inner: Any, n_arms: int, n_envs: int | None) -> None:
        self.inner = inner
        super().__init__(n_arms, n_envs=n_envs)

    def _reset_state(self) -> None:
        pass

    def act(self, obs: Any = None) -> Any:
        """The wrapped object's action."""
        return self.inner.act(obs)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """The wrapped object's update, with the privatized reward."""
        self.inner.update(action, reward, info)


def _user_agent(user: UserAgent, env: Any, ctx: _Play, seed: int, n_envs: int | None = None) -> Any:
    """The user's agent for ``env`` (behind LDPWrapper on a local problem when it is not natively local)."""
    agent = user.build(env, ctx.setting, seed, n_envs) if n_envs else user.build(env, ctx.setting, seed)
    if wrapped(user_plays(user), ctx.problem):
        inner = agent.agent if isinstance(agent, GuardedAgent) else agent
        if not isinstance(inner, Agent):
            inner = _AsAgent(inner, int(getattr(env, "single_action_space", env.action_space).n), n_envs)
        try:  # the users' noise of the built-ins' copy i (seed + 1 + i): the same reports, batched or not
            private = _wrap(inner, ctx.problem, seed)
        except ValueError:  # the agent's own noise streams hold those seeds (LDPWrapper refuses): past its copies
            private = _wrap(inner, ctx.problem, seed, n_envs or 1)
        agent = GuardedAgent(private, user.name, env)
    return agent


def _user_graph(ctx: _Play, user: UserAgent, env: GraphBanditEnv, tables: list[FloatArray]) -> FloatArray:
    problem, h, cps = ctx.problem, ctx.horizon, ctx.checkpoints
    if tables:
        # Each seed has its own env (its best arm's means); a factory asking for n_envs gets a one-copy vector env.
        rows = []
        for r, s in zip(ctx.runs, ctx.seeds, strict=True):
            if user.batched():
                venv = adversarial_env(problem, h, s, num_envs=1)
                agent = _user_agent(user, venv, ctx, run_seed(ctx.base, r), n_envs=1)
                actions = _vector_steps(venv, agent, tables[r], s)
                venv.close()
            else:
                seed_env = adversarial_env(problem, h, s)
                actions = _steps(seed_env, _user_agent(user, seed_env, ctx, run_seed(ctx.base, r)), tables[r], s)
            rows.append(table_regret(tables[r], actions, cps))
        return np.stack(rows)
    if user.batched():
        venv = GraphBanditVectorEnv(num_envs=len(ctx.runs), **problem.keywords, horizon=h, instance_seed=0)
        agent = _user_agent(user, venv, ctx, run_seed(ctx.base, 0), n_envs=len(ctx.runs))
        regret, _ = play(venv, agent, h, cps, ctx.seeds)
        venv.close()
        return np.asarray(regret, dtype=np.float64).T
    rows = [
        np.asarray(play(env, _user_agent(user, env, ctx, run_seed(ctx.base, r)), h, cps, s)[0], dtype=np.float64)
        for r, s in zip(ctx.runs, ctx.seeds, strict=True)
    ]
    return np.stack(rows)


def play_contextual(
    ctx: _Play, names: list[str], users: list[UserAgent]
) -> dict[str, tuple[FloatArray, FloatArray, float]]:
    """The MovieLens problems: built-in linear agents on their compiled ``run``, user agents through steps."""
    problem, h, cps = ctx.problem, ctx.horizon, ctx.checkpoints
    env = MovieLensRecommendationEnv(horizon=h, **problem.keywords)
    gaps = env.rewards.max(axis=1) - env.rewards.mean(axis=1)
    contexts = [env.round_contexts(h, s) for s in ctx.seeds]
    uniform = np.array([float(gaps[c].sum()) for c in contexts])
    out: dict[str, tuple[FloatArray, FloatArray, float]] = {}
    for name in names:
        entry = PANEL[name]
        start = time.perf_counter()
        rows = []
        for r, s in zip(ctx.runs, ctx.seeds, strict=True):
            agent = entry.build(
                problem,
                int(env.action_space.n),  # type: ignore[attr-defined]
                None,
                h,
                None,
                run_seed(ctx.base, r),
            )
            c = contexts[r]
            expected = env.rewards[c]
            rewards = expected + env.round_noise(h, s)[:, None]
            kwargs = {"users": c} if problem.kind == "contextual-local" else {}
            res = agent.run(env.features_of(c), rewards, expected, checkpoints=cps, **kwargs)
            rows.append(np.asarray(res.checkpoint_regret, dtype=np.float64))
        out[name] = (np.stack(rows), uniform, time.perf_counter() - start)
    for user in users:
        start = time.perf_counter()
        if user.batched():  # one agent for every seed on the vector env (copy i replays the single env's seed i)
            venv = MovieLensRecommendationVectorEnv(num_envs=len(ctx.runs), horizon=h, **problem.keywords)
            agent = _user_agent(user, venv, ctx, run_seed(ctx.base, 0), n_envs=len(ctx.runs))
            regret = np.asarray(play(venv, agent, h, cps, ctx.seeds)[0], dtype=np.float64).T
            venv.close()
        else:
            regret = np.stack(
                [
                    np.asarray(play(env, _user_agent(user, env, ctx, run_seed(ctx.base, r)), h, cps, s)[0], float)
                    for r, s in zip(ctx.runs, ctx.seeds, strict=True)
                ]
            )
        out[user.name] = (regret, uniform, time.perf_counter() - start)
    return out


def play_budget(
    ctx: _Play, names: list[str], users: list[UserAgent]
) -> dict[str, tuple[FloatArray, FloatArray, float]]:
    """The budget problem: every agent on the vector env (one copy per seed), summing ``fixed_arm_regret``."""
    problem, h, cps = ctx.problem, ctx.horizon, ctx.checkpoints
    b = len(ctx.runs)

    def venv() -> PrivacyBudgetMovieLensVectorEnv:
        return PrivacyBudgetMovieLensVectorEnv(num_envs=b, horizon=h, **problem.keywords)

    probe = venv()
    _, info = probe.reset(seed=ctx.seeds)
    mu = np.asarray(info["expected_rewards"], dtype=np.float64)
    uniform = h * (mu.max(axis=1) - mu.mean(axis=1))
    probe.close()
    out: dict[str, tuple[FloatArray, FloatArray, float]] = {}
    s0 = run_seed(ctx.base, 0)
    for name in names:
        start = time.perf_counter()
        env = venv()
        agent = PANEL[name].build(
            problem,
            int(env.single_action_space.n),  # type: ignore[attr-defined]
            None,
            h,
            b,
            s0,
        )
        regret = _lockstep(env, agent, h, cps, ctx.seeds).T
        env.close()
        out[name] = (regret, uniform, time.perf_counter() - start)
    for user in users:
        start = time.perf_counter()
        if user.batched():
            env = venv()
            regret = _lockstep(env, _user_agent(user, env, ctx, s0, n_envs=b), h, cps, ctx.seeds).T
            env.close()
        else:
            rows = []
            for r, s in zip(ctx.runs, ctx.seeds, strict=True):
                single = PrivacyBudgetMovieLensEnv(horizon=h, **problem.keywords)
                rows.append(_lockstep(single, _user_agent(user, single, ctx, run_seed(ctx.base, r)), h, cps, s))
            regret = np.stack(rows)
        out[user.name] = (regret, uniform, time.perf_counter() - start)
    return out


PLAYERS: dict[str, Callable[[_Play, list[str], list[UserAgent]], dict[str, tuple[FloatArray, FloatArray, float]]]] = {
    "contextual": play_contextual,
    "contextual-local": play_contextual,
    "budget": play_budget,
}


def audit_rows(exp: Experiment, setting: dict[str, Any], setting_index: int, base_seed: int) -> list[dict[str, Any]]:
    """One row: the audit of an agent's claim at ε (:func:`agents.audit.audit`), its verdict and lower bound."""
    from agents.audit import audit

    name, eps = setting["agent"], float(setting["epsilon"])
    user = next((u for u in exp.user_agents if u.name == name), None)
    runs = int(exp.options["audit_runs"])
    if user is not None:
        result = audit(name, factory=user.ref, epsilon=eps, runs=runs, seed=base_seed)
    else:
        result = audit(setting["audit"], epsilon=eps, runs=runs, seed=base_seed)
    return [
        _row(
            suite=SUITE_VERSION,
            problem="audit",
            agent=name,
            epsilon=eps,
            verdict=result.verdict,
            epsilon_lower=float(result.epsilon_lower),
            audit_runs=runs,
            unit=result.unit,
            setting=setting_index,
        )
    ]


def score_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Rows of one problem (every agent, seed and checkpoint) or of one audit; see the module docstring."""
    setting = exp.settings[setting_index]
    if setting["problem"] == "audit":
        return audit_rows(exp, setting, setting_index, base_seed)
    problem = BY_NAME[setting["problem"]]
    ctx = _Play(exp, problem, base_seed)
    names = [a for a in exp.agents if a in PANEL and eligible(PANEL[a].plays, problem)]
    if problem.kind == "local":  # behind LDPWrapper: the representative built-ins and the scored agent
        names = [a for a in names if PANEL[a].ldp or not wrapped(PANEL[a].plays, problem) or a == exp.options["agent"]]
    users = [u for u in exp.user_agents if eligible(user_plays(u), problem)]
    player = PLAYERS.get(problem.kind, play_graph)
    played = player(ctx, names, users)
    rows: list[dict[str, Any]] = []
    steps = ctx.horizon * len(ctx.runs)
    for name, (regret, uniform, seconds) in played.items():
        for i, r in enumerate(ctx.runs):
            for j, t in enumerate(ctx.checkpoints.tolist()):
                rows.append(
                    _row(
                        suite=SUITE_VERSION,
                        problem=problem.name,
                        agent=name,
                        run=r,
                        t=t,
                        regret=float(regret[i, j]),
                        uniform=float(uniform[i]),
                        horizon=ctx.horizon,
                        seconds=seconds,
                        steps=steps,
                        epsilon=problem.epsilon,
                        setting=setting_index,
                    )
                )
    return rows
