"""The privacy-budget paper's task (§7.2): one scenario × agent batch over its users and α values.

A budget task is one batch: every (user, configuration) pair of one scenario and one agent runs
as one copy of the scenario's native vector env, and the batched agent gets one α per copy, so
"users × settings" is a single numpy loop of T steps. Copies of the same user share the env's
noise seed (common random numbers across α values and agents). A user agent plays the same
copies: on the vector env with one batched agent if its factory accepts ``n_envs``, otherwise
one agent per copy on the single env with the same seed (the same reward draws), copy i's agent
seeded as copy i of the batched agent would be (the agent seed + i), so either factory gives the
same results.

Seeds: the env copies (their data choice, coins and privacy noise) are seeded with
:func:`copy_seed` and the agents with ``agent_seed(base, run)``, an independent ``SeedSequence``
stream, so no agent draws from the bit stream of a copy's env (with the base seed 0, copy 0's
env seed is 0, which an agent seeded with the base seed would share).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.budget.smucb import SMUCB, FixedArm
from agents.experiments.core.checkpoints import evenly_spaced
from agents.experiments.core.seeds import agent_seed
from agents.experiments.core.spec import Experiment
from agents.stochastic.index import UCB, Random
from agents.user_agents import UserAgent, first_setting, play
from bandit_envs.budget.gowalla import PrivacyBudgetGowallaEnv, PrivacyBudgetGowallaVectorEnv
from bandit_envs.budget.movielens import PrivacyBudgetMovieLensEnv, PrivacyBudgetMovieLensVectorEnv

N_CHECKPOINTS = 50
#: Number of budgets ε ∈ {0.1, …, 1} (the arms).
N_BUDGETS = 10
BUILTIN_AGENTS: tuple[str, ...] = ("UCB", "SM-UCB", "FixHalf", "Random")


def vector_env(scenario: str, data: Any, users: list[int], gamma: float, horizon: int) -> Any:
    """The scenario's native vector env, one copy per entry of ``users``."""
    cls = PrivacyBudgetMovieLensVectorEnv if scenario == "movielens" else PrivacyBudgetGowallaVectorEnv
    return cls(num_envs=len(users), users=users, data=data, gamma=gamma, horizon=horizon)


def single_env(scenario: str, data: Any, user: int, gamma: float, horizon: int) -> Any:
    """The scenario's single env for one user."""
    cls = PrivacyBudgetMovieLensEnv if scenario == "movielens" else PrivacyBudgetGowallaEnv
    return cls(user=user, data=data, gamma=gamma, horizon=horizon)


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent for the first user of its first setting, seeded 0 (:attr:`Family.probe`)."""
    s = first_setting(exp.settings, user)
    if user.batched():
        env = vector_env(s["scenario"], s["data"], s["users"][:1], float(s["gamma"]), exp.horizon)
        return user.build(env, s, 0, n_envs=1, guard=False)
    return user.build(single_env(s["scenario"], s["data"], s["users"][0], float(s["gamma"]), exp.horizon), s, 0,
                      guard=False)  # fmt: skip


def make_budget_agent(name: str, n_envs: int, alpha: Any, seed: int) -> Agent:
    """The batched agent of one budget task (α per copy for the UCB family)."""
    if name == "UCB":
        return UCB(N_BUDGETS, alpha=alpha, n_envs=n_envs, seed=seed)
    if name == "SM-UCB":
        return SMUCB(N_BUDGETS, alpha=alpha, n_envs=n_envs, seed=seed)
    if name == "FixHalf":
        return FixedArm.fix_half(N_BUDGETS, n_envs=n_envs, seed=seed)
    if name == "Random":
        return Random(N_BUDGETS, n_envs=n_envs, seed=seed)
    raise ValueError(f"agent must be one of {', '.join(BUILTIN_AGENTS)}, got {name!r}.")


def copy_seed(seed: int, user_index: int) -> int:
    """The env seed of a user's copies (the same for every α and agent: common random numbers)."""
    return seed * 100_003 + user_index


def budget_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Run one (scenario, agent, α list) batch over its users; rows of cumulative payoff and regret.

    The setting holds ``scenario``, ``data``, ``agent``, ``alphas`` (one or more), ``gamma`` and
    ``users``. Every user × α pair is a copy; copy seeds depend on the user only.
    """
    setting = exp.settings[setting_index]
    horizon, seed = exp.horizon, base_seed
    scenario, agent_name = setting["scenario"], setting["agent"]
    users: list[int] = setting["users"]
    alphas: list[float] = list(setting["alphas"])
    gamma = float(setting["gamma"])
    copies = [(u_i, a) for a in alphas for u_i in range(len(users))]
    checkpoints = evenly_spaced(horizon, N_CHECKPOINTS)
    seeds = [copy_seed(seed, u_i) for u_i, _ in copies]
    policy_seed = agent_seed(base_seed, run)
    user = next((u for u in exp.user_agents if u.name == agent_name), None)
    if user is None:
        env = vector_env(scenario, setting["data"], [users[u_i] for u_i, _ in copies], gamma, horizon)
        agent = make_budget_agent(agent_name, len(copies), np.array([a for _, a in copies]), policy_seed)
        regret, payoff = _lockstep(env, agent, horizon, checkpoints, seeds)
    elif user.batched():
        env = vector_env(scenario, setting["data"], [users[u_i] for u_i, _ in copies], gamma, horizon)
        agent = user.build(env, setting, policy_seed, n_envs=len(copies))
        regret, payoff = play(env, agent, horizon, checkpoints, seeds)
        env.close()
    else:
        columns = []  # copy i's agent seeded policy_seed + i: copy i of the batched agent (docs/design.md, Seeds)
        for i, ((u_i, _), s) in enumerate(zip(copies, seeds, strict=True)):
            env = single_env(scenario, setting["data"], users[u_i], gamma, horizon)
            columns.append(play(env, user.build(env, setting, policy_seed + i), horizon, checkpoints, s))
        regret = np.stack([c[0] for c in columns], axis=1)
        payoff = np.stack([c[1] for c in columns], axis=1)
    rows: list[dict[str, Any]] = []
    for j, t in enumerate(checkpoints.tolist()):
        for i, (u_i, a) in enumerate(copies):
            rows.append(
                {
                    "scenario": scenario,
                    "agent": agent_name,
                    "alpha": a,
                    "gamma": gamma,
                    "user": users[u_i],
                    "t": t,
                    "payoff": float(payoff[j, i]),
                    "regret": float(regret[j, i]),
                }
            )
    return rows


def _lockstep(
    env: Any, agent: Agent, horizon: int, checkpoints: np.ndarray, seeds: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The built-in batched agent on the vector env: cumulative regret and payoff at the checkpoints."""
    obs, _ = env.reset(seed=seeds)
    marks = set(checkpoints.tolist())
    payoff = np.zeros(env.num_envs)
    regret = np.zeros(env.num_envs)
    out_regret, out_payoff = [], []
    for t in range(1, horizon + 1):
        actions = agent.act(obs)
        obs, reward, _, _, info = env.step(actions)
        agent.update(actions, reward, info)
        payoff += reward
        regret += info["regret"]
        if t in marks:
            out_regret.append(regret.copy())
            out_payoff.append(payoff.copy())
    env.close()
    return np.array(out_regret), np.array(out_payoff)
