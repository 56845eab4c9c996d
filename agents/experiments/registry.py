"""The source papers' experiments, declared as data and looked up by id (DESIGN.md, "Experiments").

An experiment is a list of settings (parameter dicts), the agents compared, a horizon and a
number of runs. The runner (:mod:`agents.experiments.runner`) only interprets these records;
the analysis (:mod:`agents.experiments.analysis`) turns the results table into a summary and
figures with the paper's numbers beside ours.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

#: Gap paper, Table 1: percentage of identical arm sequences, keyed by (Δmin, p, ε).
GAP_TABLE1: dict[tuple[float, float, float], int] = {
    (0.05, 0.1, 0.05): 94,
    (0.05, 0.1, 0.1): 91,
    (0.05, 0.1, 0.2): 89,
    (0.05, 0.2, 0.05): 93,
    (0.05, 0.2, 0.1): 90,
    (0.05, 0.2, 0.2): 88,
    (0.05, 0.3, 0.05): 91,
    (0.05, 0.3, 0.1): 89,
    (0.05, 0.3, 0.2): 86,
    (0.1, 0.1, 0.05): 97,
    (0.1, 0.1, 0.1): 95,
    (0.1, 0.1, 0.2): 90,
    (0.1, 0.2, 0.05): 94,
    (0.1, 0.2, 0.1): 91,
    (0.1, 0.2, 0.2): 88,
    (0.1, 0.3, 0.05): 93,
    (0.1, 0.3, 0.1): 92,
    (0.1, 0.3, 0.2): 89,
    (0.2, 0.1, 0.05): 98,
    (0.2, 0.1, 0.1): 96,
    (0.2, 0.1, 0.2): 92,
    (0.2, 0.2, 0.05): 94,
    (0.2, 0.2, 0.1): 91,
    (0.2, 0.2, 0.2): 91,
    (0.2, 0.3, 0.05): 92,
    (0.2, 0.3, 0.1): 90,
    (0.2, 0.3, 0.2): 90,
}

GAP_PRIVACY_SETTINGS: tuple[dict[str, float], ...] = tuple(
    {"gap": g, "edge_probability": p, "epsilon": e}
    for g, p, e in itertools.product((0.05, 0.1, 0.2), (0.1, 0.2, 0.3), (0.05, 0.1, 0.2))
)

GAP_PRIVACY_CLAIMS: tuple[str, ...] = (
    "All ratios are above 85%.",
    "Ratios are higher with larger Δmin, smaller p and smaller ε.",
)

GAP_REGRET_AGENTS: tuple[str, ...] = ("GAP", "GAPU", "AlphaSample", "DPSE", "AAE")

GAP_REGRET_CLAIMS: tuple[str, ...] = (
    "GAP's regret is always clearly below DPSE and AAE.",
    "GAPU is above GAP in almost all settings.",
    "GAP is above AlphaSample but close.",
    "GAP's regret and its distance to AlphaSample shrink as the varied parameter grows.",
)


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a source paper.

    Attributes
    ----------
    id
        ``paper/name``, e.g. ``gap/privacy``.
    kind
        ``"privacy"`` (identical-sequence pairs) or ``"regret"`` (cumulative regret curves).
    settings
        Parameter dicts (keys ``gap``, ``edge_probability``, ``epsilon``); ``varied`` names the
        parameter a figure varies.
    """

    id: str
    title: str
    source: str
    kind: str
    settings: tuple[dict[str, Any], ...]
    agents: tuple[str, ...]
    horizon: int = 100_000
    runs: int = 100
    n_arms: int = 10
    varied: str | None = None
    claims: tuple[str, ...] = ()
    paper: dict[Any, Any] = field(default_factory=dict)
    quick_horizon: int = 20_000
    quick_runs: int = 10
    options: dict[str, Any] = field(default_factory=dict)

    def scaled(self, *, quick: bool = False, runs: int | None = None, horizon: int | None = None) -> Experiment:
        """A copy at quick scale and/or with another number of runs or horizon."""
        out = replace(self, horizon=self.quick_horizon, runs=self.quick_runs) if quick else self
        if runs is not None:
            out = replace(out, runs=runs)
        if horizon is not None:
            out = replace(out, horizon=horizon)
        return out


def _regret(
    eid: str, title: str, fig: str, varied: str, values: tuple[float, ...], fixed: dict[str, float]
) -> Experiment:
    settings = tuple({**fixed, varied: v} for v in values)
    return Experiment(
        id=eid,
        title=title,
        source=f"gap paper §5.2, {fig}",
        kind="regret",
        settings=settings,
        agents=GAP_REGRET_AGENTS,
        varied=varied,
        claims=GAP_REGRET_CLAIMS,
    )


EXPERIMENTS: dict[str, Experiment] = {
    e.id: e
    for e in (
        Experiment(
            id="gap/privacy",
            title="Ratio of identical arm sequences on neighbouring reward tables",
            source="gap paper §5.1, Table 1",
            kind="privacy",
            settings=GAP_PRIVACY_SETTINGS,
            agents=("GAP",),
            paper=dict(GAP_TABLE1),
            claims=GAP_PRIVACY_CLAIMS,
            options={"noise": "common"},
        ),
        Experiment(
            id="gap/privacy-fresh",
            title="Ratio of identical arm sequences, second run with fresh privacy noise",
            source="gap paper §5.1, Table 1 (literal protocol)",
            kind="privacy",
            settings=GAP_PRIVACY_SETTINGS,
            agents=("GAP",),
            paper=dict(GAP_TABLE1),
            claims=GAP_PRIVACY_CLAIMS,
            options={"noise": "fresh"},
        ),
        _regret(
            "gap/regret-gap",
            "Cumulative regret, Δmin varied",
            "Figure 1",
            "gap",
            (0.05, 0.1, 0.2),
            {"epsilon": 0.05, "edge_probability": 0.2},
        ),
        _regret(
            "gap/regret-p",
            "Cumulative regret, p varied",
            "Figure 2",
            "edge_probability",
            (0.1, 0.2, 0.3),
            {"gap": 0.1, "epsilon": 0.1},
        ),
        _regret(
            "gap/regret-eps",
            "Cumulative regret, ε varied",
            "Figure 3",
            "epsilon",
            (0.05, 0.1, 0.2),
            {"gap": 0.2, "edge_probability": 0.1},
        ),
    )
}


BUDGET_CLAIMS: dict[str, tuple[str, ...]] = {
    "alpha": (
        "UCB: best α = 0.3 on MovieLens, 0.05 on Gowalla; SM-UCB: 0.3 on MovieLens, 0.1 on Gowalla.",
        "U(T) first rises then falls with α (one peak).",
    ),
    "baselines": ("UCB and SM-UCB are clearly above FixHalf (ε = 0.5 always) and Random on both datasets.",),
    "smucb-vs-ucb": ("SM-UCB ≥ UCB on both datasets, with a small gap on MovieLens.",),
}


def _budget(eid: str, title: str, fig: str, figure: str, agents: tuple[str, ...], grid: bool) -> Experiment:
    settings = tuple({"agent": a, "alphas": "grid" if grid else "best"} for a in agents)
    return Experiment(
        id=eid, title=title, source=f"budget paper §7.2, {fig}", kind="budget", settings=settings, agents=agents,
        horizon=20_000, runs=1, quick_horizon=2_000, quick_runs=1, claims=BUDGET_CLAIMS[figure],
        options={"figure": figure},
    )  # fmt: skip


EXPERIMENTS.update(
    {
        e.id: e
        for e in (
            _budget("budget/alpha", "Mean cumulative payoff U(T) over users against α", "Figures 2 and 4", "alpha",
                    ("UCB", "SM-UCB"), grid=True),
            _budget("budget/baselines", "UCB and SM-UCB against FixHalf and Random", "Figures 5 and 6", "baselines",
                    ("UCB", "SM-UCB", "FixHalf", "Random"), grid=False),
            _budget("budget/smucb-vs-ucb", "SM-UCB against UCB", "Figure 7", "smucb-vs-ucb", ("UCB", "SM-UCB"),
                    grid=False),
        )
    }
)  # fmt: skip


def _ldp_experiments() -> tuple[Experiment, ...]:
    from agents.experiments.ldp import EPSILON_SETTINGS, SQRT_T_SETTINGS

    common: dict[str, Any] = {"kind": "ldp", "horizon": 1_000_000, "runs": 3, "quick_horizon": 20_000, "quick_runs": 1}
    return (
        Experiment(
            id="ldp-linucb/epsilon", title="LDP-LinUCB cumulative regret for several ε",
            source="LDP bandit blog (Zheng et al., NeurIPS 2020 code), MovieLens figure", settings=EPSILON_SETTINGS,
            agents=("LDP-LinUCB", "LinUCB", "uniform random"), options={"figure": "epsilon"},
            claims=("Regret grows more slowly over time.", "Smaller ε, more regret (≈ 6250 / 3800 / 1960 / 950 at "
                    "ε = 1e5 / 2e5 / 4e5 / 8e5, T = 10^6)."), **common,
        ),
        Experiment(
            id="ldp-linucb/sqrt-t", title="Regret / √t of LDP-LinUCB against LinUCB",
            source="LDP bandit blog (Zheng et al., NeurIPS 2020 code)", settings=SQRT_T_SETTINGS,
            agents=("LinUCB", "LDP-LinUCB", "uniform random"), options={"figure": "sqrt-t"},
            claims=("LDP-LinUCB's regret grows like √T (a flat regret/√t curve), though the bound is T^{3/4}/ε.",),
            **common,
        ),
    )  # fmt: skip


EXPERIMENTS.update({e.id: e for e in _ldp_experiments()})


def get_experiment(experiment_id: str) -> Experiment:
    """Look an experiment up by id, with one clear sentence if it does not exist."""
    try:
        return EXPERIMENTS[experiment_id]
    except KeyError:
        raise ValueError(f"experiment id must be one of {sorted(EXPERIMENTS)}, got {experiment_id!r}.") from None


def _rl_experiments() -> tuple[Experiment, ...]:
    from agents.experiments.rl import rl_graph_experiment

    return (rl_graph_experiment(),)


EXPERIMENTS.update({e.id: e for e in _rl_experiments()})
