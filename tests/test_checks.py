"""Every check decides itself in ``agents/experiments/core/checks.py``, with one rule for intervals.

A family builds an :class:`Evidence` table and formats its own tables; it writes no verdict code.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import agents.experiments
from agents.experiments import EXPERIMENTS, get_experiment
from agents.experiments.core import checks
from agents.experiments.core.checks import (
    Compare,
    Evidence,
    Gap,
    GridTrend,
    Peak,
    RatioBound,
    Trend,
)
from agents.experiments.core.claims import Claim, evaluate
from agents.experiments.gap.analysis import regret_summary

PACKAGE = Path(agents.experiments.__file__).parent


def _evidence(values: dict[tuple[str, str, float], list[float]], **options) -> Evidence:
    """An evidence table with one final value per (group, agent, x) and run."""
    rows = [
        {"group": g, "agent": a, "x": x, "unit": run, "t": 100, "value": v}
        for (g, a, x), vs in values.items()
        for run, v in enumerate(vs)
    ]
    return Evidence.of(pd.DataFrame(rows), horizon=100, **options)


def test_no_family_writes_verdict_code():
    # Only the core builds a Verdict or turns intervals into marks; a family builds tables.
    for path in PACKAGE.glob("*/*.py"):
        if path.parent.name == "core":
            continue
        names = {n.id for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Name)}
        assert not names & {"Verdict", "sided", "settle", "tally"}, path


def test_every_declared_check_is_a_core_class_that_evaluates_itself():
    seen = set()
    for exp in EXPERIMENTS.values():
        for claim in exp.claims:
            kind = type(claim.check)
            assert kind.__module__ == checks.__name__ and callable(kind.evaluate), (exp.id, kind)
            seen.add(kind.__name__)
    assert {"Compare", "Trend", "GridTrend", "Gap", "RatioBound", "RatioGoal", "Best", "Peak"} <= seen


def _gap_results(step_noise: float) -> tuple[pd.DataFrame, object]:
    """Final regrets of gap/regret-eps at full scale: GAP's means fall 1000 → 900 → 100, the first step noisy."""
    exp = get_experiment("gap/regret-eps")
    rng = np.random.default_rng(0)
    noise = rng.normal(0, step_noise, exp.runs)
    noise -= noise.mean()  # the means stay exactly 1000, 900, 100: monotone
    gap = {0: 1000 + 0 * noise, 1: 900 + noise, 2: 100 + 0 * noise}
    rows = [
        {"setting": i, "agent": a, "run": r, "t": exp.horizon, "regret": gap[i][r] if a == "GAP" else 5000.0 + r}
        for i in range(len(exp.settings))
        for a in exp.agents
        for r in range(exp.runs)
    ]
    return pd.DataFrame(rows), exp


def test_gap_trend_needs_every_step_clear_of_its_paired_interval():
    # Monotone means are not enough: the step 1000 → 900 is within its paired 95% interval.
    results, exp = _gap_results(step_noise=1000.0)
    line = next(x for x in regret_summary(results, exp, {}).splitlines() if "GAP's regret shrinks" in x)
    assert line.startswith("- ✗") and "in 1/2 steps (an interval containing 0 in 1)" in line
    small = exp.scaled(quick=True)  # the same numbers read as a run below full scale: undecided
    rows = results.assign(t=small.horizon)
    line = next(x for x in regret_summary(rows, small, {}).splitlines() if "GAP's regret shrinks" in x)
    assert line.startswith("- –") and "not resolvable at this scale" in line
    results, exp = _gap_results(step_noise=10.0)
    line = next(x for x in regret_summary(results, exp, {}).splitlines() if "GAP's regret shrinks" in x)
    assert line.startswith("- ✓") and "in 2/2 steps." in line


def test_trend_is_decided_per_group_and_direction():
    up = {("a", "X", x): [x + 0.01 * r for r in range(5)] for x in (1.0, 2.0, 3.0)}
    down = {("b", "X", x): [10 - x + 0.01 * r for r in range(5)] for x in (1.0, 2.0)}
    assert Trend("X", "increasing").evaluate(_evidence(up)).holds is True
    both = Trend("X", "increasing").evaluate(_evidence({**up, **down}))
    assert both.holds is False and "a: X = " in both.evidence and "b: X = " in both.evidence
    assert Trend("Y", "increasing").evaluate(_evidence(up)).applicable is False


def test_grid_trend_reads_point_means_and_leaves_close_reversals_open_below_full_scale():
    one_run = {("g", "X", 1.0): [10.0], ("g", "X", 2.0): [5.0], ("g", "X", 3.0): [1.0]}
    assert GridTrend("X", "decreasing").evaluate(_evidence(one_run)).holds is True
    close = {("g", "X", 1.0): [10.0, 12.0, 8.0], ("g", "X", 2.0): [10.5, 6.0, 14.0]}
    assert GridTrend("X", "decreasing").evaluate(_evidence(close)).holds is False
    assert GridTrend("X", "decreasing").evaluate(_evidence(close, below_full_scale=True)).holds is None


def test_ratio_bound_is_a_paired_interval_of_the_excess():
    values = {("", "A", 5.0): [3.0, 3.1, 2.9, 3.0], ("", "B", math.inf): [2.0, 2.1, 1.9, 2.0]}
    ok = RatioBound("A", "B", at=5.0, bound=2.0).evaluate(_evidence(values, x_name="ε"))
    assert ok.holds is True and "A / B = 3 / 2 = 1.50 at ε = 5" in ok.evidence
    assert RatioBound("A", "B", at=5.0, bound=1.2).evaluate(_evidence(values)).holds is False
    assert RatioBound("A", "B", at=1.0, bound=2.0).evaluate(_evidence(values)).applicable is False


def test_a_contradiction_short_of_the_horizon_the_claims_are_about_is_undecided():
    values = {("", "A", 1.0): [5.0, 5.1, 4.9], ("", "B", 1.0): [1.0, 1.1, 0.9]}
    claim = Claim("A below B", Compare("A", "B", "<"))
    assert evaluate(claim, _evidence(values)).holds is False
    short = evaluate(claim, _evidence(values, decided_at=1000))
    assert short.holds is None and "Contradicted at T = 100; the claim is about T = 1,000." in short.evidence


def test_added_settings_get_a_line_of_their_own():
    rows = [
        {"group": "g", "agent": "X", "x": x, "unit": 0, "t": 1, "value": v, "added": x > 2}
        for x, v in ((1.0, 3.0), (2.0, 2.0), (3.0, 5.0), (4.0, 6.0))
    ]
    ev = Evidence.of(pd.DataFrame(rows), added_words="its extra ε")
    verdict = evaluate(Claim("X falls", GridTrend("X", "decreasing"), why="w"), ev)
    assert verdict.holds is True and "Ours on g: 3, 2:" in verdict.evidence
    assert len(verdict.extra) == 1 and "✗ *Added by this project" in verdict.extra[0]
    assert "(its extra ε): Ours on g: 5, 6: not monotone." in verdict.extra[0] and "#w-added" in verdict.extra[0]


@pytest.mark.parametrize(("means", "expected"), [((1, 3, 2), True), ((3, 2, 1), False)])
def test_peak_wants_the_highest_mean_inside_the_grid(means, expected):
    values = {("s", "A", float(x)): [m, m + 0.1] for x, m in enumerate(means)}
    assert Peak("alpha").evaluate(_evidence(values)).holds is expected


def test_gap_needs_a_positive_distance_then_each_step_shrinking():
    base = {("", "B", x): [1.0, 1.2, 0.8] for x in (1.0, 2.0)}
    shrinking = {**base, ("", "A", 1.0): [11.0, 11.1, 10.9], ("", "A", 2.0): [6.0, 6.3, 5.8]}
    assert Gap("A", "B").evaluate(_evidence(shrinking)).holds is True
    crossing = {**base, ("", "A", 1.0): [11.0, 11.1, 10.9], ("", "A", 2.0): [0.0, 0.1, 0.2]}
    verdict = Gap("A", "B").evaluate(_evidence(crossing))
    assert verdict.applicable is False and "not above B in 1 of 2 settings" in verdict.evidence
