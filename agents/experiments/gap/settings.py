"""The gap paper's experiments as data: Table 1 (privacy pairs) and Figures 1–3 (regret), with their claims.

Every claim of the paper that an experiment tests is declared here once, as a
:class:`~agents.experiments.core.claims.Claim`; the summaries' prose and ✓/✗ marks are generated
from these records by :mod:`agents.experiments.gap.analysis`.
"""

from __future__ import annotations

import functools
import itertools

from agents.experiments.core.claims import AtLeast, Claim, Compare, Gap, Trend, Trends
from agents.experiments.core.graph_instances import check_instances
from agents.experiments.core.spec import Experiment, Family, Param
from agents.experiments.gap import analysis
from agents.experiments.gap.task import BUILTIN_AGENTS, privacy_task, probe_user, regret_task

#: Gap paper, Table 1: percentage of identical arm sequences, keyed by (Δmin, p, ε).
TABLE1: dict[tuple[float, float, float], int] = {
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

PRIVACY_SETTINGS: tuple[dict[str, float], ...] = tuple(
    {"gap": g, "edge_probability": p, "epsilon": e}
    for g, p, e in itertools.product((0.05, 0.1, 0.2), (0.1, 0.2, 0.3), (0.05, 0.1, 0.2))
)

PRIVACY_CLAIMS: tuple[Claim, ...] = (
    Claim("All ratios are above 85%", AtLeast("identical-sequence ratio", 0.85), "§5.1, Table 1", why="gap-privacy-85"),
    Claim(
        "Ratios are higher with larger Δmin, smaller p and smaller ε",
        Trends(
            "identical-sequence ratio", (("gap", "larger"), ("edge_probability", "smaller"), ("epsilon", "smaller"))
        ),
        "§5.1",
        why="gap-privacy-trends",
    ),
)

REGRET_AGENTS: tuple[str, ...] = ("GAP", "GAPU", "AlphaSample", "DPSE", "AAE")

REGRET_CLAIMS: tuple[Claim, ...] = (
    Claim("GAP's regret is always clearly below DPSE's", Compare("GAP", "DPSE", "<"), "§5.2", why="gap-regret-dpse"),
    Claim("GAP's regret is always clearly below AAE's", Compare("GAP", "AAE", "<"), "§5.2", why="gap-regret-aae"),
    Claim(
        "GAPU's regret is above GAP's in almost all settings",
        Compare("GAPU", "GAP", ">"),
        "§5.2",
        why="gap-regret-gapu",
    ),
    Claim(
        "GAP's regret is above AlphaSample's, but close",
        Compare("GAP", "AlphaSample", ">"),
        "§5.2",
        why="gap-regret-alphasample",
    ),
    Claim(
        "GAP's regret shrinks as the varied parameter grows", Trend("GAP", "decreasing"), "§5.2", why="gap-regret-trend"
    ),
    Claim(
        "GAP's distance to AlphaSample shrinks as the varied parameter grows",
        Gap("GAP", "AlphaSample"),
        "§5.2",
        why="gap-regret-distance",
    ),
)

#: Setting parameters a user may override with ``--set`` (``n_arms`` is the instance's K).
SCHEMA: dict[str, Param] = {
    "gap": Param("gap", float, "Δmin, the gap between the best arms and the third (paper §5)", 0.0, 0.9, low_open=True),
    "edge_probability": Param("edge_probability", float, "p of the Erdős–Rényi feedback graph", 0.0, 1.0),
    "epsilon": Param("epsilon", float, "ε of the private agents", 0.0, None, low_open=True),
    "n_arms": Param("n_arms", int, "number of arms K", 2, None, target="experiment"),
}


#: What both gap families share: the schema, the agents the tasks build, the user-agent probe and
#: the check of the graph instances.
_gap_family = functools.partial(
    Family,
    schema=SCHEMA,
    builtin_agents=BUILTIN_AGENTS,
    probe=probe_user,
    validate=check_instances,
    split_first_task=True,  # a task is one run of every agent of the experiment
)
PRIVACY = _gap_family(
    name="gap.privacy",
    task=privacy_task,
    summary=analysis.privacy_summary,
    figure=analysis.privacy_figure,
    columns=("setting", "run", "agent", "entry_observed", "identical", "first_difference"),
    keys=("setting", "run", "agent"),
    checkpoints=1,
)
REGRET = _gap_family(
    name="gap.regret",
    task=regret_task,
    summary=analysis.regret_summary,
    figure=analysis.regret_figure,
    columns=("setting", "run", "agent", "t", "regret"),
    keys=("setting", "run", "agent", "t"),
)


def _privacy(eid: str, title: str, source: str, noise: str) -> Experiment:
    return Experiment(
        id=eid,
        title=title,
        source=source,
        family=PRIVACY,
        settings=PRIVACY_SETTINGS,
        agents=("GAP",),
        paper=dict(TABLE1),
        claims=PRIVACY_CLAIMS,
        options={"noise": noise},
    )


def _regret(eid: str, fig: str, varied: str, values: tuple[float, ...], fixed: dict[str, float]) -> Experiment:
    """The regret figure ``fig`` of the paper: ``varied`` takes ``values``, the other parameters ``fixed``."""
    return Experiment(
        id=eid,
        title=f"Cumulative regret, {analysis.PARAM_LABELS[varied]} varied",
        source=f"gap paper §5.2, {fig}",
        family=REGRET,
        settings=tuple({**fixed, varied: v} for v in values),
        agents=REGRET_AGENTS,
        varied=varied,
        claims=REGRET_CLAIMS,
    )


EXPERIMENTS: tuple[Experiment, ...] = (
    _privacy(
        "gap/privacy",
        "Ratio of identical arm sequences on neighbouring reward tables",
        "gap paper §5.1, Table 1",
        "common",
    ),
    _privacy(
        "gap/privacy-fresh",
        "Ratio of identical arm sequences, second run with fresh privacy noise",
        "gap paper §5.1, Table 1 (literal protocol)",
        "fresh",
    ),
    _regret("gap/regret-gap", "Figure 1", "gap", (0.05, 0.1, 0.2), {"epsilon": 0.05, "edge_probability": 0.2}),
    _regret("gap/regret-p", "Figure 2", "edge_probability", (0.1, 0.2, 0.3), {"gap": 0.1, "epsilon": 0.1}),
    _regret("gap/regret-eps", "Figure 3", "epsilon", (0.05, 0.1, 0.2), {"gap": 0.2, "edge_probability": 0.1}),
)
