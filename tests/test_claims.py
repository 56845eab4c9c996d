"""Verdicts below full scale: an interval wider than the effect is undecided (–), not failed (✗)."""

from __future__ import annotations

import math
import re

import pytest

from agents.experiments import get_experiment
from agents.experiments.cli import run_experiment
from agents.experiments.core.claims import scale_note, settle, sided, tally


@pytest.mark.parametrize(
    ("mean", "half", "direction", "expected"),
    [
        (-5.0, 2.0, "<", True),
        (5.0, 2.0, "<", False),
        (-1.0, 2.0, "<", None),
        (5.0, 2.0, ">", True),
        (-5.0, 2.0, ">", False),
        (1.0, 2.0, ">", None),
        (1.0, math.nan, ">", None),
    ],
)
def test_sided_is_three_way(mean, half, direction, expected):
    assert sided(mean, half, direction) is expected


def test_settle_leaves_wide_intervals_open_only_below_full_scale():
    assert settle([True, True], below_full_scale=True) is True
    assert settle([True, None], below_full_scale=True) is None
    assert settle([True, None], below_full_scale=False) is False
    assert settle([None, False], below_full_scale=True) is False
    assert settle([], below_full_scale=True) is None
    assert tally([True, False, None, None]) == " (the opposite in 1; an interval containing 0 in 2)"


def test_scale_note_names_the_full_scale_command():
    assert scale_note(100_000, 100, 100_000, 100, "banditlab run x/y") == ""
    note = scale_note(20_000, 10, 100_000, 100, "banditlab run x/y")
    assert "20,000 against 100,000" in note and "`banditlab run x/y`" in note


def test_scaled_copies_keep_the_full_scale():
    exp = get_experiment("gap/regret-eps")
    quick = exp.scaled(quick=True)
    assert not exp.below_full_scale and quick.below_full_scale
    assert (quick.full_horizon, quick.full_runs) == (exp.horizon, exp.runs)
    assert quick.full_command == "banditlab run gap/regret-eps"


def test_a_small_run_marks_undecided_claims_and_says_how_to_decide_them(tmp_path):
    _, text = run_experiment("gap/regret-gap", runs=4, horizon=2000, jobs=1, out=tmp_path, progress=False)
    claims = text[text.index("## The paper's claims") :]
    assert "`banditlab run gap/regret-gap`" in claims
    marks = re.findall(r"^- (✓|✗|–) ", claims, flags=re.MULTILINE)
    assert len(marks) == 6
    # Every ✗ left is backed by a setting whose interval excludes 0 on the wrong side (or a decided trend).
    for line in claims.splitlines():
        if line.startswith("- ✗") and "interval excluding 0" in line:
            assert "the opposite in" in line
        if line.startswith("- –") and "interval excluding 0" in line:
            assert "an interval containing 0" in line and "the opposite in" not in line
