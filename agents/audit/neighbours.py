r"""Neighbouring reward tables for an audit, built to make a privacy violation as visible as possible.

A bandit agent's input is its T×K reward table (row t: every arm's reward at round t, of which the
agent reads the entries its feedback reveals). Two units of privacy are audited:

* ``"entry"`` (central DP, event level): D and D′ differ in one entry r_{t,k} (GAP, DPSE: the gap
  paper's Definition 3, Sajed & Sheffet's event-level DP);
* ``"report"`` (local DP, per report): D and D′ differ in round t's rewards, all arms at once, so
  whichever arm the agent plays at round t, exactly one report changes (LDPWrapper, LDP-LinUCB:
  each report is ε-LDP, Zheng et al. NeurIPS 2020).

``group`` G > 1 changes G such units (rounds 0..G−1): a mechanism calibrated for one unit is then
only Gε-DP (group privacy), so an audit of the claim ε on a group of G tests whether the audit can
see that.

Which pair to audit is free: DP must hold for every neighbouring pair, and a lower bound found on
any one pair is valid. The builders put the agent's decision at the boundary where one changed
reward moves it most:

* :func:`release_pairs`, for agents that release noisy means at the end of an epoch (GAP, GAPU,
  DPSE): arm 0's mean over the epoch is 0.9, the changed reward r_{0,0} (part of that mean) is 1
  on D and 0 on D′, and arm 1's mean sits ``center + x`` noise scales below arm 0's, where
  ``center`` is the mean difference at which the release's decision (which arm leads, or whether
  arm 1 is eliminated) flips. The decision then flips on x-scale noise, a tail event whose
  probability ratio on D and D′ approaches e^{Gε} as x grows (for Laplace noise);
* :func:`generic_pairs`, for any agent: 0/1 rewards with exact proportions per arm (arm 0 best,
  arm 1.. at ``gap`` below), the changed unit at round 0, where every agent that pulls the arms
  in turn first reads it;
* :func:`search_pairs`, for an agent without pairs of its own: the change moved across the
  horizon (early, middle and late rounds, every arm) on two reward patterns, so that an agent
  whose actions carry one raw reward of a round searched is caught wherever that round is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bandit_envs._types import BoolArray, FloatArray

__all__ = [
    "UNITS",
    "Neighbours",
    "bresenham",
    "generic_pairs",
    "laplace_scale",
    "release_pairs",
    "search_pairs",
    "search_rounds",
    "two_arm_graph",
]


#: The units an audit can test, with what one neighbouring change is.
UNITS: dict[str, str] = {
    "entry": "one reward entry r_{t,k} (central DP, event level)",
    "report": "one report: round t's reward, whichever arm is played (local DP)",
}

#: Default gaps between arm 0 and the others for :func:`generic_pairs`.
GENERIC_GAPS = (0.0, 0.1, 0.3)
#: Log-spaced middle rounds :func:`search_rounds` adds between round 3 and T/2.
SEARCH_MIDDLE = 3


def two_arm_graph() -> BoolArray:
    """The feedback graph of two arms joined by an edge (each pull reveals both rewards)."""
    return np.array([[False, True], [True, False]])


@dataclass(frozen=True)
class Neighbours:
    """Two neighbouring reward tables: D = ``table`` and D′ = D with the entries of ``changed`` replaced.

    Attributes
    ----------
    table
        (T, K) rewards of D.
    changed
        (t, k, value on D′) for every entry that differs.
    graph
        K×K feedback graph the tables are played on (no self loops).
    unit
        ``"entry"`` or ``"report"`` (see :data:`UNITS`).
    label
        How D was built, for the report.
    """

    table: FloatArray
    changed: tuple[tuple[int, int, float], ...]
    graph: BoolArray
    unit: str
    label: str

    @property
    def horizon(self) -> int:
        """T."""
        return int(self.table.shape[0])

    @property
    def n_arms(self) -> int:
        """K."""
        return int(self.table.shape[1])

    def tables(self) -> tuple[FloatArray, FloatArray]:
        """(D, D′) as new arrays."""
        first = self.table.copy()
        second = self.table.copy()
        for t, k, value in self.changed:
            second[t, k] = value
        return first, second

    def change(self) -> str:
        """The change, e.g. ``r_{0,0}: 1 → 0`` or ``round 0 (all arms): 1 → 0``."""
        rounds = sorted({t for t, _, _ in self.changed})
        parts = []
        for t in rounds:
            entries = [(k, v) for s, k, v in self.changed if s == t]
            if self.unit == "report" and len(entries) == self.n_arms:
                before = {float(self.table[t, k]) for k, _ in entries}
                after = {v for _, v in entries}
                parts.append(f"round {t}'s rewards (all arms): {_values(before)} → {_values(after)}")
            else:
                parts.extend(f"r_{{{t},{k}}}: {float(self.table[t, k]):g} → {v:g}" for k, v in entries)
        return "; ".join(parts)


def _values(values: set[float]) -> str:
    return f"{next(iter(values)):g}" if len(values) == 1 else "{" + ", ".join(f"{v:g}" for v in sorted(values)) + "}"


def bresenham(mean: float, rounds: int) -> FloatArray:
    """0/1 rewards whose running sum after t rounds is ⌈t·mean⌉: exact proportions, first reward 1 if mean > 0."""
    t = np.arange(rounds + 1, dtype=np.float64)
    sums = np.ceil(t * mean - 1e-12)
    return np.diff(sums).clip(0.0, 1.0)


def _complete_graph(n_arms: int) -> BoolArray:
    """Every arm reveals every other (no self loops); :func:`two_arm_graph` for two."""
    return two_arm_graph() if n_arms == 2 else np.ones((n_arms, n_arms), dtype=bool) & ~np.eye(n_arms, dtype=bool)


def _changed(
    unit: str, rounds: Sequence[int], arm: int, n_arms: int, value: float
) -> tuple[tuple[int, int, float], ...]:
    if unit == "report":
        return tuple((t, k, value) for t in rounds for k in range(n_arms))
    return tuple((t, arm, value) for t in rounds)


def generic_pairs(
    horizon: int,
    n_arms: int,
    unit: str,
    group: int = 1,
    gaps: Sequence[float] = GENERIC_GAPS,
    graph: BoolArray | None = None,
    low: float = 0.0,
    high: float = 1.0,
) -> list[Neighbours]:
    """Pairs for any agent: 0/1 tables (arm 0's mean 0.5 + gap/2, the others 0.5 − gap/2), one per gap.

    The changed unit is at rounds 0..G−1: ``high`` on D, ``low`` on D′ (arm 0's entry for
    ``"entry"``, every arm's for ``"report"``). Rewards are ``low`` + (``high`` − ``low``)·bit.
    """
    if graph is None:
        graph = _complete_graph(n_arms)
    rounds = list(range(group))
    pairs = []
    for gap in gaps:
        means = [0.5 + gap / 2.0] + [0.5 - gap / 2.0] * (n_arms - 1)
        bits = np.stack([bresenham(m, horizon) for m in means], axis=1)
        table = low + (high - low) * bits
        for t, k, _ in _changed(unit, rounds, 0, n_arms, low):
            table[t, k] = high
        label = f"{n_arms}-arm 0/1 table, arm 0's mean {means[0]:g}, the others {means[1]:g} (T = {horizon})"
        pairs.append(Neighbours(table, _changed(unit, rounds, 0, n_arms, low), graph, unit, label))
    return pairs


def release_pairs(
    horizon: int,
    reads: Sequence[int],
    scale: float,
    center: float,
    offsets: Sequence[float],
    *,
    group: int = 1,
    decision: str,
    top: float = 0.9,
) -> list[Neighbours]:
    r"""Pairs for a two-arm agent that releases each arm's mean over an epoch with Laplace(``scale``) noise.

    Arm 0's rewards are 1 at the first G rounds of ``reads`` (the rounds whose arm-0 rewards its
    first release averages) and a constant f elsewhere, with f such that the mean over ``reads`` is
    ``top``; D′ has 0 at those G entries. Arm 1's rewards are the constant top − center − x·scale,
    one pair per offset x in ``offsets``. So arm 0 leads arm 1 by ``center`` + x noise scales on D and
    by G/|reads| less on D′ (Gε scales when scale = 1/(ε|reads|)).

    Parameters
    ----------
    horizon
        T.
    reads
        Rounds at which arm 0's reward enters the first release (all of its observations there).
    scale
        The Laplace scale of one noisy mean, 1/(ε·|reads|).
    center
        Mean difference at which the release's decision flips (0 for "which arm leads").
    offsets
        Distances from ``center``, in noise scales.
    group
        G, the number of changed entries.
    decision
        What the release decides at ``center``, for the label (e.g. "which arm leads").
    top
        Arm 0's mean over ``reads``.
    """
    n_reads = len(reads)
    first_reads = [int(t) for t in reads[:group]]
    filler = (top * n_reads - group) / (n_reads - group)
    pairs = []
    for x in offsets:
        table = np.empty((horizon, 2))
        table[:, 0] = filler
        table[first_reads, 0] = 1.0
        second = min(1.0, max(0.0, top - center - x * scale))
        table[:, 1] = second
        label = (
            f"2 adjacent arms, arm 0's mean {top:g} over its {n_reads} rewards of the first release, arm 1 at "
            f"{second:.6g}: {x:g} noise scales from where {decision} flips (T = {horizon})"
        )
        changed = tuple((t, 0, 0.0) for t in first_reads)
        pairs.append(Neighbours(np.clip(table, 0.0, 1.0), changed, two_arm_graph(), "entry", label))
    return pairs


def laplace_scale(epsilon: float, observations: int) -> float:
    """Scale 1/(ε·n) of the Laplace noise on a mean of n rewards in [0, 1] (sensitivity 1/n)."""
    return 1.0 / (epsilon * observations) if observations > 0 else math.inf


def search_rounds(horizon: int, group: int = 1, releases: Sequence[int] = ()) -> list[int]:
    """First rounds of the changes :func:`search_pairs` tries: 0, 1, 2, log-spaced middle rounds, T/2 and the last.

    The last is T − 1 − G, so that the G changed rounds all come before the final round (a reward
    of round T − 1 can move no action). For each round r of ``releases`` (rounds after whose
    reward the agent releases something) the G rounds ending at r are tried too, the last rewards
    that release reads. Rounds the horizon cannot hold are left out.
    """
    last = horizon - 1 - group
    middle = np.geomspace(3, max(3, horizon // 2), SEARCH_MIDDLE + 2)[1:-1]
    rounds = {0, 1, 2, horizon // 2, last, *(int(round(float(t))) for t in middle)}
    rounds |= {max(0, int(r) - group + 1) for r in releases}
    return sorted(t for t in rounds if 0 <= t <= last)


def search_pairs(
    horizon: int,
    n_arms: int,
    unit: str,
    group: int = 1,
    graph: BoolArray | None = None,
    releases: Sequence[int] = (),
) -> list[Neighbours]:
    """Pairs that move the change across the horizon: every round of :func:`search_rounds`, every arm, two patterns.

    The patterns are the 0/1 table of :func:`generic_pairs` with all arms at mean 0.5 (1, 0, 1, 0, …)
    and its complement (0, 1, 0, 1, …). At rounds t..t+G−1 the changed unit is 1 on D and 0 on D′:
    arm k's entry for ``"entry"`` (one pair per arm), every arm's for ``"report"``.
    """
    if graph is None:
        graph = _complete_graph(n_arms)
    base = np.repeat(bresenham(0.5, horizon)[:, None], n_arms, axis=1)
    arms = range(n_arms) if unit == "entry" else range(1)
    pairs = []
    for pattern, table in (("1, 0, 1, 0, …", base), ("0, 1, 0, 1, …", 1.0 - base)):
        for start in search_rounds(horizon, group, releases):
            for arm in arms:
                changed = _changed(unit, range(start, start + group), arm, n_arms, 0.0)
                first = table.copy()
                for t, k, _ in changed:
                    first[t, k] = 1.0
                label = f"{n_arms}-arm 0/1 table, every arm {pattern} (T = {horizon}), change searched at round {start}"
                pairs.append(Neighbours(first, changed, graph, unit, label))
    return pairs
