"""The privacy-budget paper's experiments (§7.2): α sweeps, baselines, SM-UCB against UCB.

A budget task is one batch: every (user, configuration) pair of one scenario and one agent runs
as one copy of the scenario's native vector env, and the batched agent gets one α per copy, so
"users × settings" is a single numpy loop of T steps. Copies of the same user share the env's
noise seed (common random numbers across α values and agents).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.budget_agents import SMUCB, FixedArm
from agents.index import UCB, Random

N_CHECKPOINTS = 50

#: The paper's α grids (§7.2.1); "0.3, 0.4, …, 2" read as steps of 0.1.
ALPHA_GRIDS: dict[tuple[str, str], tuple[float, ...]] = {
    ("movielens", "UCB"): (0.01, 0.02, 0.04, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3)
    + tuple(round(0.4 + 0.1 * i, 2) for i in range(17)),
    ("gowalla", "UCB"): (0.01, 0.02, 0.04, 0.06, 0.08, 0.1) + tuple(round(0.2 + 0.1 * i, 2) for i in range(19)),
    ("movielens", "SM-UCB"): (0.01,) + tuple(round(0.05 * i, 2) for i in range(1, 17)) + (1.0, 1.2),
    ("gowalla", "SM-UCB"): tuple(round(0.02 * i, 2) for i in range(1, 16)) + (0.35, 0.4, 0.45, 0.5),
}

#: The paper's best α (§7.2.1) and γ (§7.1.3 (4)) per scenario and agent.
PAPER_BEST_ALPHA: dict[tuple[str, str], float] = {
    ("movielens", "UCB"): 0.3,
    ("gowalla", "UCB"): 0.05,
    ("movielens", "SM-UCB"): 0.3,
    ("gowalla", "SM-UCB"): 0.1,
}
PAPER_GAMMA: dict[tuple[str, str], float] = {
    ("movielens", "UCB"): 1.0,
    ("movielens", "SM-UCB"): 1.0,
    ("gowalla", "UCB"): 1.0,
    ("gowalla", "SM-UCB"): 0.5,
}
#: Users per scenario (§7.1.1: 20 MovieLens test users, 10 Gowalla users).
N_USERS: dict[str, int] = {"movielens": 20, "gowalla": 10}

MOVIELENS_NAMES = ("movielens-latest-small", "ml-latest-small", "ml-100k", "ml-1m", "ml-10m")


def scenario_of(data: str) -> tuple[str, Any]:
    """Map a ``--data`` value to (scenario, the env's ``data`` argument).

    ``synthetic-movielens`` / ``synthetic-gowalla`` are the built-in synthetic defaults; MovieLens
    names download through :mod:`bandit_envs.datasets`; a path ending in ``.gz`` or ``.txt`` (SNAP
    check-ins) is Gowalla, any other path (a ratings file or its folder) MovieLens.
    """
    if data == "synthetic-movielens":
        return "movielens", None
    if data == "synthetic-gowalla":
        return "gowalla", None
    if data in MOVIELENS_NAMES:
        return "movielens", "ml-latest-small" if data == "movielens-latest-small" else data
    if data == "gowalla":
        return "gowalla", "gowalla"
    path = Path(data)
    if not path.exists():
        raise ValueError(
            "--data must be synthetic-movielens, synthetic-gowalla, gowalla, one of "
            f"{list(MOVIELENS_NAMES)} or an existing path, got {data!r}."
        )
    if path.name.endswith((".gz", ".txt")):
        return "gowalla", str(path)
    return "movielens", str(path)


def _vector_env(scenario: str, data: Any, users: list[int], gamma: float, horizon: int) -> Any:
    from bandit_envs.budget.gowalla import PrivacyBudgetGowallaVectorEnv
    from bandit_envs.budget.movielens import PrivacyBudgetMovieLensVectorEnv

    cls = PrivacyBudgetMovieLensVectorEnv if scenario == "movielens" else PrivacyBudgetGowallaVectorEnv
    return cls(num_envs=len(users), users=users, data=data, gamma=gamma, horizon=horizon)


def eligible_users(scenario: str, data: Any, n: int, seed: int) -> list[int]:
    """``n`` eligible users of the data (all of them if fewer qualify), drawn with ``seed``."""
    from bandit_envs.budget import eligible_user_ids

    ids = np.asarray(eligible_user_ids(scenario, data))
    if ids.size > n:
        ids = np.sort(np.random.default_rng(seed).choice(ids, size=n, replace=False))
    return [int(u) for u in ids]


def make_budget_agent(name: str, n_envs: int, alpha: Any, seed: int) -> Agent:
    """The batched agent of one budget task (α per copy for the UCB family)."""
    if name == "UCB":
        return UCB(10, alpha=alpha, n_envs=n_envs, seed=seed)
    if name == "SM-UCB":
        return SMUCB(10, alpha=alpha, n_envs=n_envs, seed=seed)
    if name == "FixHalf":
        return FixedArm.fix_half(10, n_envs=n_envs, seed=seed)
    if name == "Random":
        return Random(10, n_envs=n_envs, seed=seed)
    raise ValueError(f"agent must be one of UCB, SM-UCB, FixHalf, Random, got {name!r}.")


def run_budget_batch(setting: dict[str, Any], horizon: int, seed: int) -> list[dict[str, Any]]:
    """Run one (scenario, agent, α list) batch over its users; rows of cumulative payoff.

    ``setting`` holds ``scenario``, ``data``, ``agent``, ``alphas`` (one or more) and
    ``users``. Every user × α pair is a copy; copy seeds depend on the user only.
    """
    scenario, agent_name = setting["scenario"], setting["agent"]
    users: list[int] = setting["users"]
    alphas: list[float] = list(setting["alphas"])
    gamma = float(setting["gamma"])
    copies = [(u_i, a) for a in alphas for u_i in range(len(users))]
    env = _vector_env(scenario, setting["data"], [users[u_i] for u_i, _ in copies], gamma, horizon)
    n = len(copies)
    alpha_arr = np.array([a for _, a in copies])
    agent = make_budget_agent(agent_name, n, alpha_arr, seed)
    obs, _ = env.reset(seed=[seed * 100_003 + u_i for u_i, _ in copies])
    checkpoints = set(np.linspace(horizon / N_CHECKPOINTS, horizon, N_CHECKPOINTS).astype(int).tolist())
    payoff = np.zeros(n)
    regret = np.zeros(n)
    rows: list[dict[str, Any]] = []
    for t in range(1, horizon + 1):
        actions = agent.act(obs)
        obs, reward, _, _, info = env.step(actions)
        agent.update(actions, reward, info)
        payoff += reward
        regret += info["regret"]
        if t in checkpoints:
            for i, (u_i, a) in enumerate(copies):
                rows.append({
                    "scenario": scenario, "agent": agent_name, "alpha": a, "gamma": gamma, "user": users[u_i],
                    "t": t, "payoff": float(payoff[i]), "regret": float(regret[i]),
                })  # fmt: skip
    env.close()
    return rows


def resolve(experiment: Any, data: list[str] | None, seed: int) -> Any:
    """Expand a budget experiment into concrete batches for the chosen data sets.

    Each setting of the declared experiment names an agent and its α values (a grid or the
    paper's best); each ``--data`` value selects a scenario and its users.
    """
    from dataclasses import replace

    chosen = data or ["synthetic-movielens", "synthetic-gowalla"]
    settings: list[dict[str, Any]] = []
    for spec in chosen:
        scenario, env_data = scenario_of(spec)
        users = eligible_users(scenario, env_data, N_USERS[scenario], seed)
        for template in experiment.settings:
            agent = template["agent"]
            if template.get("alphas") == "grid":
                alphas = ALPHA_GRIDS[(scenario, agent)]
            elif agent in ("UCB", "SM-UCB"):
                alphas = (PAPER_BEST_ALPHA[(scenario, agent)],)
            else:
                alphas = (0.0,)
            # The α sweep gives each agent the paper's best γ for it (§7.1.3 (4)); comparisons between
            # agents use one γ per scenario (UCB's), since payoffs under different γ are not comparable.
            gamma = PAPER_GAMMA[(scenario, agent if template.get("alphas") == "grid" else "UCB")]
            settings.append({"scenario": scenario, "data": env_data, "data_name": spec, "agent": agent,
                             "alphas": alphas, "users": users, "gamma": gamma})  # fmt: skip
    return replace(experiment, settings=tuple(settings), runs=1)
