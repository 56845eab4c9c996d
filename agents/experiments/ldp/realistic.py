"""The ``ldp-linucb/realistic`` experiment: every LDP linear agent at realistic ε on three data constructions.

Settings: LDP-LinUCB (analytic σ, √ bonus; Zheng et al., NeurIPS 2020), LDP-OLS with the
Gaussian and with the L2-ball mechanism (Han, Liang, Wang, Zhang, NeurIPS 2021, §4) and
Shuffle-LinUCB (Chowdhury & Zhou, ICML 2022, Alg. 1; Garcelon et al., ALT 2022) at ε ∈ {0.5, 1,
2, 5, 10} per report, next to LinUCB and the uniformly random policy (once per data set and run).
:func:`prepare` crosses them with the data sets of ``--data`` (default: the synthetic MovieLens
and Gowalla data): a MovieLens data set gives two environments, the authors' construction and
the low-rank completion, a Gowalla data set one.

Hyper-parameters are the agents' defaults, chosen on the synthetic default data of
``MovieLensRecommendation-v0`` only (see the agents' docstrings); ``l_x = 0.4`` on MovieLens
(the largest feature norm of that synthetic data), the env's bound 1 on Gowalla. Nothing is tuned
on the evaluation data.

The task plays one run of one agent through its compiled ``run`` on blocks of the env's rounds
(exactly those ``reset(seed)`` then ``step`` would give), with the user id of every round for
the per-user accounting (on Gowalla a context is a (user, check-in) pair: reports are counted by
user id). The last row of a private agent's run carries what the busiest user's reports compose
to (local, and central for Shuffle-LinUCB).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agents.experiments.core.data import scenario_of
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment
from agents.experiments.ldp.task import N_CHECKPOINTS as N_CHECKPOINTS
from agents.experiments.ldp.task import (
    busiest_user_reports,
    checkpoints_of,
    regret_row,
    uniform_random_regret,
    user_agent_regret,
)
from agents.linear import LDPOLS, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.user_agents import UserAgent, first_setting
from bandit_envs.recommendation.gowalla import GowallaRecommendationEnv
from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv

#: ε per report of the private agents.
EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0)
#: δ of LDP-LinUCB and Gaussian LDP-OLS per report, and of every per-user tight bound.
DELTA = 0.1
#: Rank of the low-rank completion of MovieLens (the rank at which its λ = 0.1 was chosen).
LOWRANK_RANK = 10
#: Clipping bound ‖x‖ <= l_x of LDP-OLS and Shuffle-LinUCB per scenario (see the module docstring).
L_X: dict[str, float] = {"movielens": 0.4, "gowalla": 1.0}
BUILTIN_AGENTS: tuple[str, ...] = ("LDP-LinUCB", "LDP-OLS", "Shuffle-LinUCB", "LinUCB")
#: Columns of every row (NaN where they do not apply).
PRIVACY_COLUMNS = ("user_epsilon", "user_delta", "central_epsilon", "central_delta")

Env = MovieLensRecommendationEnv | GowallaRecommendationEnv
Agent = LDPLinUCB | LDPOLS | ShuffleLinUCB | LinUCB


def _setting(agent: str, mechanism: str, eps: float) -> dict[str, Any]:
    return {"agent": agent, "mechanism": mechanism, "epsilon": eps}


SETTINGS: tuple[dict[str, Any], ...] = (
    *(_setting("LDP-LinUCB", "analytic-gaussian", e) for e in EPSILONS),
    *(_setting("LDP-OLS", "gaussian", e) for e in EPSILONS),
    *(_setting("LDP-OLS", "l2_ball", e) for e in EPSILONS),
    *(_setting("Shuffle-LinUCB", "l2_ball-shuffled", e) for e in EPSILONS),
    _setting("LinUCB", "none", 0.0),
)


def datasets(data: Sequence[str] | None) -> list[dict[str, Any]]:
    """The environments of ``--data`` values: (scenario, env data, name, construction) per environment."""
    out: list[dict[str, Any]] = []
    for name in data or ("synthetic-movielens", "synthetic-gowalla"):
        scenario, env_data = scenario_of(name)
        constructions = ("authors", "lowrank") if scenario == "movielens" else ("checkins",)
        out += [
            {"scenario": scenario, "data": env_data, "data_name": name, "construction": c, "dataset": f"{name} ({c})"}
            for c in constructions
        ]
    return out


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent as run 0 of its first setting builds it, seeded 0 (:attr:`Family.probe`)."""
    setting = first_setting(exp.settings, user)
    label = {k: v for k, v in setting.items() if k != "data"}
    return user.build(make_env(setting, exp.horizon), label, 0, guard=False)


def make_env(setting: dict[str, Any], horizon: int) -> Env:
    """The setting's environment: MovieLens (authors' construction or low-rank completion) or Gowalla."""
    if setting["scenario"] == "gowalla":
        return GowallaRecommendationEnv(data=setting["data"], horizon=horizon)
    if setting["construction"] == "lowrank":
        return MovieLensRecommendationEnv(
            data=setting["data"], completion="lowrank", rank=LOWRANK_RANK, horizon=horizon
        )
    return MovieLensRecommendationEnv(data=setting["data"], horizon=horizon)


def prepare(experiment: Experiment, data: Sequence[str] | None, seed: int) -> Experiment:
    """Cross the agent settings (and one per user agent and ε) with the environments of ``--data``."""
    sets = datasets(data)
    for ds in sets:  # load and validate once, in this process
        make_env(ds, 10)
    user_settings = [_setting(u.name, "none", e) for u in experiment.user_agents for e in EPSILONS]
    settings = tuple({**s, **ds} for ds in sets for s in (*experiment.settings, *user_settings))
    return replace(experiment, settings=settings)


def make_agent(setting: dict[str, Any], dim: int, horizon: int, seed: int) -> Agent:
    """The setting's agent at its ε with the defaults chosen on the synthetic MovieLens data."""
    agent, eps, l_x = setting["agent"], float(setting["epsilon"]), L_X[setting["scenario"]]
    if agent == "LinUCB":
        return LinUCB(dim, seed=seed)
    if agent == "LDP-LinUCB":
        return LDPLinUCB(
            dim, eps, delta=DELTA, alpha=0.1, horizon=horizon, sigma_method="analytic", bonus="sqrt", seed=seed
        )
    if agent == "LDP-OLS":
        return LDPOLS(dim, eps, delta=DELTA, mechanism=setting["mechanism"], l_x=l_x, seed=seed)
    if agent == "Shuffle-LinUCB":
        return ShuffleLinUCB(dim, eps, user_delta=DELTA, l_x=l_x, seed=seed)
    raise ValueError(f"agent must be one of {', '.join(BUILTIN_AGENTS)}, got {agent!r}.")


def busiest_by_user(users: np.ndarray, checkpoints: list[int]) -> dict[int, int]:
    """At each checkpoint t, the most rounds any one user id has had among the first t (its reports)."""
    _, dense = np.unique(users, return_inverse=True)
    return busiest_user_reports(dense, checkpoints)


def privacy_of(agent: Agent) -> dict[str, float]:
    """Per-user guarantee of the busiest user so far: local tight (ε, δ = 0.1), central for Shuffle-LinUCB."""
    out = dict.fromkeys(PRIVACY_COLUMNS, float("nan"))
    if isinstance(agent, LinUCB):
        return out
    out["user_epsilon"], out["user_delta"] = agent.privacy_per_user(DELTA).tight
    if isinstance(agent, ShuffleLinUCB):
        out["central_epsilon"], out["central_delta"] = agent.privacy_per_user_central()
    return out


def realistic_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """Cumulative regret of one agent at the checkpoints (LinUCB's run adds the uniformly random policy)."""
    setting = exp.settings[setting_index]
    horizon = exp.horizon
    env = make_env(setting, horizon)
    seed, policy_seed = table_seed(base_seed, run), agent_seed(base_seed, run)
    label = {k: v for k, v in setting.items() if k not in ("data",)}
    contexts = env.round_contexts(horizon, seed)
    users = np.asarray(env.problem.user_ids)[contexts]
    checkpoints = checkpoints_of(horizon)
    busiest = busiest_by_user(users, checkpoints)
    nan_privacy = dict.fromkeys(PRIVACY_COLUMNS, float("nan"))
    rows: list[dict[str, Any]] = []

    def add(extra: dict[str, Any], t: int, reg: float, privacy: dict[str, float]) -> None:
        rows.append(regret_row(label, extra, run, t, reg, busiest[t], setting_index, privacy))

    user_regret = user_agent_regret(exp, setting, env, label, checkpoints, seed, policy_seed)
    if user_regret is not None:
        for t, reg in user_regret:
            add({}, t, reg, nan_privacy)
        return rows
    noise = env.round_noise(horizon, seed)
    dim = int(env.problem.dim)
    agent = make_agent(setting, dim, horizon, policy_seed)
    if setting["agent"] == "LinUCB":
        random_regret = uniform_random_regret(env, contexts)
        for t in checkpoints:
            add({"agent": "uniform random", "mechanism": "none"}, t, float(random_regret[t - 1]), nan_privacy)
    total, start = 0.0, 0
    for t in checkpoints:
        c = contexts[start:t]
        expected = env.rewards[c]
        feats = env.features_of(c)
        observed = expected + noise[start:t, None]
        if isinstance(agent, LinUCB):
            result = agent.run(feats, observed, expected)
        else:
            result = agent.run(feats, observed, expected, users=users[start:t])
        total += float(result.total_regret)
        add({}, t, total, privacy_of(agent) if t == horizon else nan_privacy)
        start = t
    return rows
