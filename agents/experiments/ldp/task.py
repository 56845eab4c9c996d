"""The LDP contextual-bandit task: one run of one agent on ``MovieLensRecommendation-v0``.

The env's fast path gives the users of the run (exactly those ``reset(seed)`` then ``step``
would draw), and a built-in agent's compiled ``run`` consumes feature blocks of those users, so
10^6 rounds need no Python step loop. A user agent steps the env itself from ``reset(seed)``:
the same users and reward noise.

Seeds: the env (users and reward noise) is seeded with ``table_seed(base, run)`` and every agent
with ``agent_seed(base, run)``, two independent ``SeedSequence`` streams, so the privacy noise is
not the env's bit stream. Every row carries ``max_user_reports``, the reports of the busiest user
by round t (a user is drawn every round), from which the summary composes the per-user guarantee.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment
from agents.linear import LDPLinUCB, LinUCB
from agents.user_agents import UserAgent, first_setting, play
from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv

N_CHECKPOINTS = 100
BUILTIN_AGENTS: tuple[str, ...] = ("LDP-LinUCB", "LinUCB")
#: The env's feature dimension d (rank-20 SVD of the authors' construction).
DIMENSION = 20


def make_agent(setting: dict[str, Any], horizon: int, seed: int) -> LinUCB | LDPLinUCB:
    """LinUCB, or LDP-LinUCB with δ = 0.1, α = 0.1 and the setting's ε, σ method and bonus."""
    if setting["agent"] == "LinUCB":
        return LinUCB(DIMENSION, seed=seed)
    if setting["agent"] != "LDP-LinUCB":
        raise ValueError(f"agent must be one of {', '.join(BUILTIN_AGENTS)}, got {setting['agent']!r}.")
    return LDPLinUCB(
        DIMENSION,
        setting["epsilon"],
        delta=0.1,
        alpha=0.1,
        horizon=horizon,
        sigma_method=setting["sigma_method"],
        bonus=setting["bonus"],
        seed=seed,
    )


def checkpoints_of(horizon: int) -> list[int]:
    """The rounds at which regret is recorded: the ends of ``N_CHECKPOINTS`` equal blocks."""
    block = max(1, horizon // N_CHECKPOINTS)
    return [min(start + block, horizon) for start in range(0, horizon, block)]


def busiest_user_reports(contexts: np.ndarray, checkpoints: list[int]) -> dict[int, int]:
    """At each checkpoint t, the most rounds any one user has had among the first t (its reports)."""
    counts = np.zeros(int(contexts.max()) + 1 if contexts.size else 1, dtype=np.int64)
    out, start = {}, 0
    for t in checkpoints:
        np.add.at(counts, contexts[start:t], 1)
        out[t], start = int(counts.max()), t
    return out


def regret_row(
    label: Mapping[str, Any],
    extra: Mapping[str, Any],
    run: int,
    t: int,
    regret: float,
    max_user_reports: int,
    setting_index: int,
    privacy: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """One row of the results, its columns in the order of the CSV.

    The setting's label (``extra`` overriding it), the regret at t, the busiest user's reports,
    then any per-user guarantee columns, then the setting's index.
    """
    return {
        **label,
        **extra,
        "run": run,
        "t": t,
        "regret": regret,
        "regret_over_sqrt_t": regret / np.sqrt(t),
        "max_user_reports": max_user_reports,
        **(privacy or {}),
        "setting": setting_index,
    }


def uniform_random_regret(env: Any, contexts: np.ndarray) -> np.ndarray:
    """Expected cumulative regret of the uniformly random policy on the rounds' users ``contexts`` (reference line)."""
    gaps = env.rewards.max(axis=1) - env.rewards.mean(axis=1)
    return np.cumsum(gaps[contexts])


def user_agent_regret(
    exp: Experiment,
    setting: dict[str, Any],
    env: Any,
    label: dict[str, Any],
    checkpoints: list[int],
    seed: int,
    policy_seed: int,
) -> list[tuple[int, float]] | None:
    """(t, regret) at each checkpoint of the user agent the setting names; None for a built-in agent.

    The user agent steps ``env`` itself from ``reset(seed)``: the same users and reward noise as the
    built-in agents' fast path.
    """
    user = next((u for u in exp.user_agents if u.name == setting["agent"]), None)
    if user is None:
        return None
    regret, _ = play(env, user.build(env, label, policy_seed), exp.horizon, checkpoints, seed)
    return [(t, float(reg)) for t, reg in zip(checkpoints, regret.tolist(), strict=True)]


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent as run 0 of its first setting builds it, seeded 0 (:attr:`Family.probe`)."""
    setting = first_setting(exp.settings, user)
    env = MovieLensRecommendationEnv(data=setting.get("data"), horizon=exp.horizon)
    return user.build(env, {k: v for k, v in setting.items() if k not in ("data", "data_name")}, 0, guard=False)


def ldp_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Cumulative regret of one agent over the horizon at the checkpoints (LinUCB's run adds uniform random)."""
    setting = exp.settings[setting_index]
    horizon = exp.horizon
    env = MovieLensRecommendationEnv(data=setting.get("data"), horizon=horizon)
    seed = table_seed(base_seed, run)
    policy_seed = agent_seed(base_seed, run)
    label = {k: v for k, v in setting.items() if k not in ("data", "data_name")}
    rows: list[dict[str, Any]] = []
    contexts = env.round_contexts(horizon, seed)
    busiest = busiest_user_reports(contexts, checkpoints_of(horizon))

    def add(extra: dict[str, Any], t: int, reg: float) -> None:
        rows.append(regret_row(label, extra, run, t, reg, busiest[t], setting_index))

    user_regret = user_agent_regret(exp, setting, env, label, checkpoints_of(horizon), seed, policy_seed)
    if user_regret is not None:
        for t, reg in user_regret:
            add({}, t, reg)
        return rows
    noise = env.round_noise(horizon, seed)
    agent = make_agent(setting, horizon, policy_seed)
    block = max(1, horizon // N_CHECKPOINTS)
    total = 0.0
    if setting["agent"] == "LinUCB":
        random_regret = uniform_random_regret(env, contexts)
        for t in range(block, horizon + 1, block):
            add({"agent": "uniform random"}, t, float(random_regret[t - 1]))
    for start in range(0, horizon, block):
        c = contexts[start : start + block]
        expected = env.rewards[c]
        if isinstance(agent, LDPLinUCB):
            result = agent.run(env.features_of(c), expected + noise[start : start + block, None], expected, users=c)
        else:
            result = agent.run(env.features_of(c), expected + noise[start : start + block, None], expected)
        total += float(result.total_regret)
        add({}, min(start + block, horizon), total)
    return rows
