"""The privacy-budget paper's experiments as data (§7.2): α sweeps, baselines, SM-UCB against UCB.

Each declared setting names an agent and its α values (the paper's grid or its best α);
:func:`prepare` expands them, for each ``--data`` scenario, into concrete batches with the
scenario's users and γ. The paper's claims are declared once here, as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agents.experiments.budget import analysis
from agents.experiments.budget.paper import ALPHA_GRIDS, N_USERS, PAPER_BEST_ALPHA, PAPER_GAMMA
from agents.experiments.budget.task import BUILTIN_AGENTS, budget_task, probe_user
from agents.experiments.core.claims import Best, Claim, Compare, Peak
from agents.experiments.core.data import scenario_of
from agents.experiments.core.spec import Experiment, Family, Param
from bandit_envs.budget import eligible_user_ids

ALPHA_CLAIMS: tuple[Claim, ...] = (
    *(
        Claim(
            f"{agent}'s best α on {'MovieLens' if s == 'movielens' else 'Gowalla'} is {v:g}",
            Best(s, agent, "alpha", v),
            "§7.2.1, Figures 2 and 4",
            why="budget-alpha",
        )
        for (s, agent), v in PAPER_BEST_ALPHA.items()
    ),
    Claim("U(T) first rises then falls with α (one peak)", Peak("alpha"), "§7.2.1", why="budget-alpha"),
)
BASELINE_CLAIMS: tuple[Claim, ...] = tuple(
    Claim(
        f"{a} is clearly above {b} on both datasets",
        Compare(a, b, ">"),
        "§7.2.2, Figures 5 and 6",
        why="budget-baselines",
    )
    for a in ("UCB", "SM-UCB")
    for b in ("FixHalf", "Random")
)
SMUCB_CLAIMS: tuple[Claim, ...] = (
    Claim(
        "SM-UCB ≥ UCB on both datasets, with a small gap on MovieLens",
        Compare("SM-UCB", "UCB", ">"),
        "§7.2.3, Figure 7",
        why="budget-smucb-vs-ucb",
    ),
)

SCHEMA: dict[str, Param] = {
    "gamma": Param(
        "gamma", float, "γ, the weight of accuracy against privacy loss in the payoff", 0.0, None, low_open=True
    ),
}


def eligible_users(scenario: str, data: Any, n: int, seed: int) -> list[int]:
    """``n`` eligible users of the data (all of them if fewer qualify), drawn with ``seed``."""
    ids = np.asarray(eligible_user_ids(scenario, data))
    if ids.size > n:
        ids = np.sort(np.random.default_rng(seed).choice(ids, size=n, replace=False))
    return [int(u) for u in ids]


def prepare(experiment: Experiment, data: Sequence[str] | None, seed: int) -> Experiment:
    """Expand a budget experiment into concrete batches for the chosen data sets (and user agents).

    Each setting of the declared experiment names an agent and its α values (a grid or the
    paper's best); each ``--data`` value selects a scenario and its users. A user agent gets one
    batch per scenario, with UCB's γ (comparisons use one γ per scenario).
    """
    chosen = list(data or ["synthetic-movielens", "synthetic-gowalla"])
    settings: list[dict[str, Any]] = []
    for spec in chosen:
        scenario, env_data = scenario_of(spec)
        users = eligible_users(scenario, env_data, N_USERS[scenario], seed)
        templates = [*experiment.settings, *({"agent": u.name, "alphas": "user"} for u in experiment.user_agents)]
        for template in templates:
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
            settings.append(
                {
                    "scenario": scenario,
                    "data": env_data,
                    "data_name": spec,
                    "agent": agent,
                    "alphas": alphas,
                    "users": users,
                    "gamma": gamma,
                }
            )
    return replace(experiment, settings=tuple(settings), runs=1)


FAMILY = Family(
    name="budget",
    task=budget_task,
    summary=analysis.budget_summary,
    figure=analysis.budget_figure,
    schema=SCHEMA,
    builtin_agents=BUILTIN_AGENTS,
    prepare=prepare,
    probe=probe_user,
    takes_data=True,
    columns=("scenario", "agent", "alpha", "gamma", "user", "t", "payoff", "regret"),
    keys=("scenario", "agent", "alpha", "gamma", "user", "t"),
)


def _budget(
    eid: str, title: str, fig: str, figure: str, agents: tuple[str, ...], grid: bool, claims: tuple[Claim, ...]
) -> Experiment:
    settings = tuple({"agent": a, "alphas": "grid" if grid else "best"} for a in agents)
    return Experiment(
        id=eid,
        title=title,
        source=f"budget paper §7.2, {fig}",
        family=FAMILY,
        settings=settings,
        agents=agents,
        horizon=20_000,
        runs=1,
        quick_horizon=2_000,
        quick_runs=1,
        claims=claims,
        options={"figure": figure},
    )


EXPERIMENTS: tuple[Experiment, ...] = (
    _budget(
        "budget/alpha",
        "Mean cumulative payoff U(T) over users against α",
        "Figures 2 and 4",
        "alpha",
        ("UCB", "SM-UCB"),
        True,
        ALPHA_CLAIMS,
    ),
    _budget(
        "budget/baselines",
        "UCB and SM-UCB against FixHalf and Random",
        "Figures 5 and 6",
        "baselines",
        ("UCB", "SM-UCB", "FixHalf", "Random"),
        False,
        BASELINE_CLAIMS,
    ),
    _budget(
        "budget/smucb-vs-ucb", "SM-UCB against UCB", "Figure 7", "smucb-vs-ucb", ("UCB", "SM-UCB"), False, SMUCB_CLAIMS
    ),
)
