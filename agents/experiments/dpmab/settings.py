"""``dp-mab/epsilon`` and ``graph/side-observations`` as data: settings, agents, scale and claims.

The claims are expectations from the papers behind the agents (central DP costs regret that
shrinks as ε grows; adaptive epochs beat continual-release counters; side observations lower
regret; privacy costs regret), declared once as :class:`~agents.experiments.core.claims.Claim`
records; each check decides itself (:mod:`agents.experiments.core.checks`) with paired 95% intervals.
"""

from __future__ import annotations

import math
from typing import Any

from agents.experiments.core.claims import Claim, Compare, RatioBound, Trend
from agents.experiments.core.spec import Experiment, Family, Param
from agents.experiments.dpmab import analysis
from agents.experiments.dpmab.task import BUILTIN_AGENTS, probe_user, regret_task

#: The Bernoulli means of ``dp-mab/epsilon``: one best arm, gaps 0.1 to 0.5.
MEANS: tuple[float, ...] = (0.8, 0.7, 0.7, 0.6, 0.6, 0.5, 0.5, 0.4, 0.4, 0.3)
EPSILONS: tuple[float, ...] = (0.1, 0.5, 1.0, 5.0)
NON_PRIVATE: tuple[str, ...] = ("UCB", "KLUCB", "TS")
PRIVATE: tuple[str, ...] = (
    "HybridDPUCB",
    "HybridDPUCB-paper",
    "TreeDPUCB",
    "AdaPUCB",
    "AdaPUCB-cum",
    "DPTS",
    "DPSE",
    "PrePullGTS",
    "DPTSUCB",
)
#: Each private agent's non-private version (DPSE's is UCB: both are index-free of ε at ε = ∞).
VERSION: dict[str, str] = {
    "HybridDPUCB": "UCB",
    "HybridDPUCB-paper": "UCB",
    "TreeDPUCB": "UCB",
    "AdaPUCB": "UCB",
    "AdaPUCB-cum": "UCB",
    "DPTS": "TS",
    "DPSE": "UCB",
    "PrePullGTS": "TS",
    "DPTSUCB": "TS",
}
#: "Approaches its non-private version" at ε = 5: regret at most this times the version's.
RATIO_BOUND = 2.0


def _ratio(a: str) -> Claim:
    b = VERSION[a]
    return Claim(
        f"At ε = 5, {a}'s regret is at most {RATIO_BOUND:g}× {b}'s",
        RatioBound(a, b, at=5.0, bound=RATIO_BOUND),
        "approaches its non-private version",
        why="dp-mab-ratio",
    )


EPSILON_CLAIMS: tuple[Claim, ...] = (
    *(
        Claim(f"{a}'s regret falls as ε grows", Trend(a, "decreasing"), "central DP", why="dp-mab-trend")
        for a in PRIVATE
    ),
    *(
        Claim(
            f"{a}'s regret is below {b}'s at every ε",
            Compare(a, b, "<"),
            "adaptive epochs vs counters",
            why="dp-mab-compare",
        )
        for a in ("AdaPUCB", "DPSE")
        for b in ("HybridDPUCB", "TreeDPUCB")
    ),
    *(_ratio(a) for a in PRIVATE),
)

SIDE_AGENTS: tuple[str, ...] = ("UCB", "UCBN", "TS-N", "Exp3SET", "Exp3IX", "GAP")
SIDE_CLAIMS: tuple[Claim, ...] = (
    *(
        Claim(
            f"{shown}'s regret is below UCB's at every p",
            Compare(a, "UCB", "<"),
            "value of side observations",
            why="side-compare",
        )
        for a, shown in (("UCBN", "UCB-N"), ("TS-N", "TS-N"))
    ),
    *(
        Claim(f"{a}'s regret falls as p grows", Trend(a, "decreasing"), "more side observations", why="side-trend")
        for a in ("UCBN", "TS-N", "Exp3SET", "Exp3IX", "GAP")
    ),
    Claim(
        "GAP's regret is above UCB-N's at every p",
        Compare("GAP", "UCBN", ">"),
        "the price of privacy",
        why="side-compare",
    ),
)

SCHEMA: dict[str, Param] = {"n_arms": Param("n_arms", int, "number of arms K", 2, None, target="experiment")}
EPS_SCHEMA: dict[str, Param] = {}
SIDE_SCHEMA: dict[str, Param] = {"epsilon": Param("epsilon", float, "ε of GAP", 0.0, None, low_open=True)}

COLUMNS = ("setting", "run", "agent", "t", "regret")


def _family(name: str, schema: dict[str, Param]) -> Family:
    """A family of batched built-in agents on reward tables (user agents step the env): same task, analysis, columns."""
    return Family(
        name=name,
        task=regret_task,
        summary=analysis.summary,
        figure=analysis.figure,
        schema=schema,
        builtin_agents=BUILTIN_AGENTS,
        probe=probe_user,
        columns=COLUMNS,
        keys=("setting", "run", "agent", "t"),
        runs_per_task=100,
    )


EPSILON_FAMILY = _family("dp-mab.epsilon", EPS_SCHEMA)
SIDE_FAMILY = _family("graph.side-observations", SIDE_SCHEMA)

#: Scale of both experiments: full and ``--quick``.
_SCALE: dict[str, Any] = {"horizon": 100_000, "runs": 100, "n_arms": 10, "quick_horizon": 5_000, "quick_runs": 8}

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        id="dp-mab/epsilon",
        title="Central-DP agents against their non-private versions, ε varied",
        source=(
            "central-DP bandit agents (HybridDPUCB, TreeDPUCB, AdaP-UCB, DP-TS, DPSE, PrePull-GTS, DP-TS-UCB) "
            "on a Bernoulli instance"
        ),
        family=EPSILON_FAMILY,
        # The non-private setting first: its task is the longest (ThompsonSampling's Beta draws), and
        # tasks start in setting order, so two processes finish together (see the family's docs).
        settings=(
            {"epsilon": math.inf, "agents": ",".join(NON_PRIVATE)},
            *({"epsilon": e, "agents": ",".join(PRIVATE)} for e in EPSILONS),
        ),
        agents=NON_PRIVATE + PRIVATE,
        varied="epsilon",
        claims=EPSILON_CLAIMS,
        **_SCALE,
        options={
            "means": MEANS,
            "reward": "bernoulli",
            "note": (
                "Instance: K = 10 Bernoulli arms with means " + ", ".join(f"{m:g}" for m in MEANS) + " (no "
                "feedback graph). Non-private agents do not depend on ε and run once (the ε = ∞ column). "
                "Common random numbers: run r of every agent and setting reads the same rewards; the agents "
                "are batched (a task plays a block of runs as copies). AdaPUCB-cum is AdaP-UCB's cumulative "
                "variant; DPTS is DPThompsonSampling; HybridDPUCB-paper is HybridDPUCB with bound='paper' (the "
                "paper's noise width; same privacy). PrePullGTS (PrePullGaussianTS) and DPTSUCB are Gaussian-DP: "
                "each is sized by for_budget so that its T rounds are (ε, δ = 1e-5)-DP (approximate DP, not the "
                "pure ε of the others). 'Approaches its non-private version' is tested as "
                f"regret ≤ {RATIO_BOUND:g}× the version's (UCB, or TS for DPTS), by the paired 95% interval "
                f"of regret − {RATIO_BOUND:g}·version's regret."
            ),
        },
    ),
    Experiment(
        id="graph/side-observations",
        title="The value of side observations, private and not, p varied",
        source="GraphBanditEnv (gap paper's §5 instance, Δmin = 0.1) with UCB-N, TS-N, Exp3-SET, Exp3-IX and GAP",
        family=SIDE_FAMILY,
        settings=tuple({"edge_probability": p, "epsilon": 1.0} for p in (0.1, 0.2, 0.3)),
        agents=SIDE_AGENTS,
        varied="edge_probability",
        claims=SIDE_CLAIMS,
        **_SCALE,
        options={
            "gap": 0.1,
            "reward": "truncnorm",
            "note": (
                "Instance: the gap paper's (two best arms at 0.9, then 0.9 − Δmin − 0.05(k − 2), truncated "
                "normal rewards, σ = 0.1, Δmin = 0.1); one Erdős–Rényi graph per setting (instance_seed = 0, "
                "nested across p: every edge at p = 0.1 is an edge at 0.2 and 0.3), shared by all runs, because "
                "Exp3-SET and Exp3-IX take one graph for all copies of a batch; the trends in p are therefore "
                "about this one nested family of graphs, not an average over random graphs. "
                "GAP is private (ε = 1, δ = 1/T); UCB ignores side observations. Common "
                "random numbers across agents and settings."
            ),
        },
    ),
)
