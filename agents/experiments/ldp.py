"""The LDP contextual-bandit experiments (Zheng et al., NeurIPS 2020; the blog in ``shared/seeds``).

One task is one run of one agent on ``MovieLensRecommendation-v0``: the env's fast path gives the
users of the run (exactly those ``reset(seed)`` then ``step`` would draw), and the agent's
compiled ``run`` consumes feature blocks of those users, so 10^6 rounds need no Python step loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.linear import LDPLinUCB, LinUCB

N_CHECKPOINTS = 100

#: The authors' published cumulative regret at T = 10^6 (blog, "LDP LinUCB" figure), by ε.
PUBLISHED_REGRET: dict[float, float] = {1e5: 6250.0, 2e5: 3800.0, 4e5: 1960.0, 8e5: 950.0}


def _agent(setting: dict[str, Any], horizon: int, seed: int) -> LinUCB | LDPLinUCB:
    if setting["agent"] == "LinUCB":
        return LinUCB(20, seed=seed)
    return LDPLinUCB(
        20, setting["epsilon"], delta=0.1, alpha=0.1, horizon=horizon, sigma_method=setting["sigma_method"],
        bonus=setting["bonus"], seed=seed,
    )  # fmt: skip


def run_ldp_run(setting: dict[str, Any], horizon: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Cumulative regret of one agent over ``horizon`` rounds at ``N_CHECKPOINTS`` rounds."""
    from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv

    env = MovieLensRecommendationEnv(data=setting.get("data"), horizon=horizon)
    seed = int(np.random.SeedSequence([base_seed, run]).generate_state(1, np.uint64)[0] >> 1)
    contexts = env.round_contexts(horizon, seed)
    noise = env.round_noise(horizon, seed)
    agent = _agent(setting, horizon, seed)
    block = max(1, horizon // N_CHECKPOINTS)
    rows: list[dict[str, Any]] = []
    total = 0.0
    label = {k: v for k, v in setting.items() if k not in ("data", "data_name")}
    if setting["agent"] == "LinUCB":
        # Reference line: the expected regret of the uniformly random policy on the same users.
        gaps = env.rewards.max(axis=1) - env.rewards.mean(axis=1)
        random_regret = np.cumsum(gaps[contexts])
        for t in range(block, horizon + 1, block):
            reg = float(random_regret[t - 1])
            rows.append({**label, "agent": "uniform random", "run": run, "t": t, "regret": reg,
                         "regret_over_sqrt_t": reg / np.sqrt(t)})  # fmt: skip
    for start in range(0, horizon, block):
        c = contexts[start : start + block]
        expected = env.rewards[c]
        result = agent.run(env.features_of(c), expected + noise[start : start + block, None], expected)
        total += float(result.total_regret)
        t = min(start + block, horizon)
        rows.append({**label, "run": run, "t": t, "regret": total, "regret_over_sqrt_t": total / np.sqrt(t)})
    return rows


def _authors(eps: float) -> dict[str, Any]:
    return {"agent": "LDP-LinUCB", "epsilon": eps, "sigma_method": "classic", "bonus": "quadratic", "grid": "authors"}


def _realistic(eps: float, bonus: str = "sqrt") -> dict[str, Any]:
    return {"agent": "LDP-LinUCB", "epsilon": eps, "sigma_method": "analytic", "bonus": bonus, "grid": "realistic"}


LINUCB: dict[str, Any] = {"agent": "LinUCB", "epsilon": 0.0, "sigma_method": "none", "bonus": "sqrt", "grid": "none"}

EPSILON_SETTINGS: tuple[dict[str, Any], ...] = (
    *(_authors(e) for e in (1e5, 2e5, 4e5, 8e5)),
    *(_realistic(e) for e in (0.5, 1.0, 2.0, 5.0, 10.0)),
    LINUCB,
)
SQRT_T_SETTINGS: tuple[dict[str, Any], ...] = (
    LINUCB,
    _authors(8e5),
    {**_authors(8e5), "bonus": "sqrt"},
    _realistic(1.0),
)


def resolve(experiment: Any, data: list[str] | None) -> Any:
    """Attach the MovieLens data set (``--data``: one value; default synthetic) to every setting."""
    from dataclasses import replace

    from agents.experiments.budget import scenario_of

    if data and len(data) > 1:
        raise ValueError(f"--data takes one MovieLens data set for {experiment.id}, got {len(data)}.")
    name = data[0] if data else "synthetic-movielens"
    scenario, env_data = scenario_of(name)
    if scenario != "movielens":
        raise ValueError(f"--data must be a MovieLens data set for {experiment.id}, got {name!r}.")
    from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv

    MovieLensRecommendationEnv(data=env_data, horizon=10)  # load and validate once, in this process
    settings = tuple({**s, "data": env_data, "data_name": name} for s in experiment.settings)
    return replace(experiment, settings=settings)
