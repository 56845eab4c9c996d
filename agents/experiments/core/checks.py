"""The checks a claim can name, each deciding itself on an :class:`Evidence` table with one rule.

A family's analysis builds one tidy table of its results (:meth:`Evidence.of`): a row per
(group, agent, x, unit, t) with the metric, where ``x`` is the position along the varied
parameter (ε, p, Δmin, α), ``group`` a scenario or data set, and ``unit`` a run or a user. Runs
of different agents and settings are paired by common random numbers, so every comparison is
the t-based 95% interval of per-unit differences (:func:`~agents.experiments.core.stats.paired`),
read by :func:`~agents.experiments.core.verdict.sided` and made one verdict by
:func:`~agents.experiments.core.verdict.settle`: an interval containing 0 is undecided (–)
below full scale and failed at full scale. A check about another statistic has a class (and a
name) of its own: :class:`GridTrend` (point means, for one run per setting), :class:`RatioGoal`,
:class:`Best` and :class:`Peak` (on the source's grid), :class:`AtLeast` and :class:`Trends`
(Wilson intervals of proportions), :class:`Slowing`, :class:`FlatSqrtT` and
:class:`SqrtTFalling` (the shape of the curves over time).

A new family declares its claims with these classes and builds an :class:`Evidence`; it writes
no verdict code.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from agents.experiments.core.stats import Z95, mean_ci, paired, wilson
from agents.experiments.core.verdict import Verdict, settle, sided, tally

if TYPE_CHECKING:
    import pandas as pd

Key = tuple[str, str, float]  # (group, agent, x)
Runs = dict[int, float]


class Scaled(Protocol):
    """What :meth:`Evidence.of_settings` reads of an experiment (:class:`~agents.experiments.core.spec.Experiment`)."""

    @property
    def settings(self) -> Sequence[Mapping[str, Any]]: ...  # noqa: D102

    @property
    def horizon(self) -> int: ...  # noqa: D102

    @property
    def below_full_scale(self) -> bool: ...  # noqa: D102


@dataclass(frozen=True)
class Evidence:
    """What a check reads: each curve's values per unit and time, and the scale of the run.

    ``curves`` maps (group, agent, x) to {t: {unit: value}}; ``added`` holds the keys of settings
    this project added beyond the source's (their verdict is a line of its own under the claim);
    ``added_words`` name them; ``params`` holds the setting parameters of each key and ``labels``
    their display names (:class:`Trends`); ``names`` a display name of a key where its agent's
    name is not enough. ``decided_at``: the horizon the claims are about; a contradiction at a
    shorter horizon is then undecided (the claim says "by T").
    """

    curves: Mapping[Key, Mapping[int, Runs]]
    below_full_scale: bool = False
    x_name: str = "setting"
    unit: str = "runs"
    fmt: str = ",.0f"
    horizon: int = 0
    decided_at: int = 0
    added: frozenset[Key] = frozenset()
    params: Mapping[Key, Mapping[str, Any]] = field(default_factory=dict)
    names: Mapping[Key, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    added_words: str = "the settings this project added"

    @classmethod
    def of(cls, frame: pd.DataFrame, **options: Any) -> Evidence:
        """From a tidy table with columns ``group``, ``agent``, ``x``, ``unit``, ``t``, ``value``.

        Optional columns: ``added`` (bool), ``name`` (display name) and any setting parameters
        named in ``options["param_columns"]``.
        """
        columns = tuple(options.pop("param_columns", ()))
        curves: dict[Key, dict[int, Runs]] = defaultdict(lambda: defaultdict(dict))
        cols = [frame[c] for c in ("group", "agent", "x", "t", "unit", "value")]
        for g, a, x, t, u, v in zip(*cols, strict=True):
            curves[(str(g), str(a), float(x))][int(t)][int(u)] = float(v)
        keys = list(zip(frame["group"].astype(str), frame["agent"].astype(str), frame["x"].astype(float), strict=True))
        added = (
            frozenset(k for k, a in zip(keys, frame["added"], strict=True) if a) if "added" in frame else frozenset()
        )
        names = dict(zip(keys, frame["name"].astype(str), strict=True)) if "name" in frame else {}
        params = {
            k: dict(zip(columns, vs, strict=True)) for k, *vs in zip(keys, *(frame[c] for c in columns), strict=True)
        }
        return cls(curves=dict(curves), added=added, names=names, params=params, **options)

    @classmethod
    def of_settings(cls, results: pd.DataFrame, exp: Scaled, key: str, **options: Any) -> Evidence:
        """From a table with ``setting``, ``agent``, ``run``, ``t`` and ``regret`` columns, at T.

        x is each setting's value of parameter ``key``; one group; the run's scale from ``exp``.
        """
        import pandas as pd

        last = results[results["t"] == exp.horizon]
        xs = [float(s[key]) for s in exp.settings]
        frame = pd.DataFrame(
            {
                "group": "",
                "agent": last["agent"],
                "x": [xs[int(i)] for i in last["setting"]],
                "unit": last["run"],
                "t": last["t"],
                "value": last["regret"],
            }
        )
        options = {"below_full_scale": exp.below_full_scale, "horizon": exp.horizon, "x_name": key, **options}
        return cls.of(frame, **options)

    def part(self, added: bool) -> Evidence:
        """The settings the source ran (``added`` False) or those this project added (True)."""
        return replace(self, curves={k: c for k, c in self.curves.items() if (k in self.added) == added})

    def final(self, key: Key) -> Runs:
        """{unit: value} at the curve's last time."""
        c = self.curves[key]
        return dict(c[max(c)])

    def mean(self, key: Key) -> float:
        """The mean over units of the curve's final values."""
        return mean_ci(list(self.final(key).values()))[0]

    def keys(self, agent: str | None = None) -> list[Key]:
        """The curves (of ``agent``), by group and then x."""
        return sorted(k for k in self.curves if agent is None or k[1] == agent)

    def series(self, agent: str) -> dict[str, list[Key]]:
        """Group → the curves of ``agent`` in it, by x."""
        out: dict[str, list[Key]] = defaultdict(list)
        for k in self.keys(agent):
            out[k[0]].append(k)
        return dict(out)

    def at(self, key: Key) -> str:
        """`` (ε=0.1)``: where a value was measured, for evidence."""
        return f" ({self.x_name}={key[2]:g})"

    def num(self, v: float) -> str:
        """A number of the metric, in the evidence's format."""
        return f"{v:{self.fmt}}"

    def name(self, key: Key) -> str:
        """The display name of a curve (its agent's when none is given)."""
        return self.names.get(key, key[1])


def _settled(ok: Sequence[bool | None], ev: Evidence, claim: str, unit: str) -> Verdict:
    """:func:`settle` of the per-``unit`` outcomes ``ok``, said as ``claim`` in k/n ``unit`` (and :func:`tally`)."""
    return Verdict(
        settle(ok, ev.below_full_scale), f"{claim} in {sum(o is True for o in ok)}/{len(ok)} {unit}{tally(ok)}."
    )


def _in_groups(parts: Mapping[str, str]) -> str:
    """``a; b`` or ``g1: a; g2: b``: evidence per group (no group name when there is one unnamed group)."""
    return "; ".join(f"{g}: {p}" if g else p for g, p in parts.items())


def _steps(ev: Evidence, keys: Sequence[Key], want: str) -> list[bool | None]:
    """Per step between consecutive curves, :func:`sided` of the paired difference later − earlier."""
    return [sided(*paired(ev.final(k1), ev.final(k0)), want) for k0, k1 in itertools.pairwise(keys)]


@dataclass(frozen=True)
class Compare:
    """``a``'s final metric is below (``"<"``) or above (``">"``) ``b``'s; per setting, paired 95% CI."""

    a: str
    b: str
    direction: str  # "<" or ">"

    def describe(self) -> str:
        """Plain words for the check."""
        return f"{self.a} {'below' if self.direction == '<' else 'above'} {self.b}"

    def cells(self, ev: Evidence) -> list[tuple[Key, Key]]:
        """The (a, b) curves at each group and x where both ran."""
        return [(k, (k[0], self.b, k[2])) for k in ev.keys(self.a) if (k[0], self.b, k[2]) in ev.curves]

    def table(self, ev: Evidence, marked: bool = True) -> dict[Key, str]:
        """Table cells ``m ± h ✓`` of a − b, per curve of a where b ran (the mark only if ``marked``).

        The mark is :meth:`evaluate`'s rule for one setting: ✓ on the claimed side of 0, ✗ on the
        other (and, at full scale, when the interval contains 0), – containing 0 below full scale.
        """
        out = {}
        for ka, kb in self.cells(ev):
            m, h = paired(ev.final(ka), ev.final(kb))
            o = sided(m, h, self.direction)
            mark = "–" if o is None and ev.below_full_scale else ("✓" if o else "✗")
            out[ka] = f"{ev.num(m)} ± {ev.num(h)}" + (f" {mark}" if marked else "")
        return out

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per setting, the paired 95% interval of a − b on the claimed side of 0."""
        cells = self.cells(ev)
        if not cells:
            return Verdict(None, "not run.", applicable=False)
        diffs = [paired(ev.final(ka), ev.final(kb)) for ka, kb in cells]
        ok = [sided(m, h, self.direction) for m, h in diffs]
        xs = {ka[2] for ka, _ in cells}
        parts: dict[str, list[str]] = defaultdict(list)
        for (ka, _), (m, h) in zip(cells, diffs, strict=True):
            parts[ka[0]].append(f"{ev.num(m)} ± {ev.num(h)}" + (ev.at(ka) if len(xs) > 1 else ""))
        shown = _in_groups({g: f"{self.a} − {self.b} = {', '.join(p)}" for g, p in parts.items()})
        return _settled(
            ok, ev, f"{shown}: {self.describe()} with a paired 95% interval over {ev.unit} excluding 0", "settings"
        )


@dataclass(frozen=True)
class Trend:
    """``agent``'s final metric moves in ``direction`` (``"decreasing"``/``"increasing"``) along x.

    Each step between consecutive settings must go the claimed way with a paired 95% interval
    over runs excluding 0 (in every group).
    """

    agent: str
    direction: str

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per step, :func:`sided` of the paired difference; :func:`settle` of all steps."""
        want = "<" if self.direction == "decreasing" else ">"
        series = {g: ks for g, ks in ev.series(self.agent).items() if len(ks) > 1}
        if not series:
            return Verdict(None, f"{self.agent} was not run at two settings.", applicable=False)
        ok = [o for ks in series.values() for o in _steps(ev, ks, want)]
        parts = {
            g: f"{self.agent} = " + ", ".join(ev.num(ev.mean(k)) + ev.at(k) for k in ks) for g, ks in series.items()
        }
        return _settled(
            ok, ev, f"{_in_groups(parts)}: each step {self.direction} with a paired 95% interval excluding 0", "steps"
        )


@dataclass(frozen=True)
class GridTrend:
    """``agent``'s mean final metric is monotone (``direction``) along each grid it ran: point means.

    For grids with one run per setting (no interval over runs), e.g. the authors' ε grid of the
    LDP experiments: a reversed step fails, but below full scale a reversed step within the
    unpaired 95% interval of the two means leaves the claim undecided.
    """

    agent: str
    direction: str

    def _one(self, ev: Evidence, group: str, keys: Sequence[Key]) -> Verdict:
        stats = [mean_ci(list(ev.final(k).values())) for k in keys]
        means = [s[0] for s in stats]
        right = [(m1 < m0) == (self.direction == "decreasing") and m1 != m0 for m0, m1 in itertools.pairwise(means)]
        holds: bool | None = all(right)
        word = f": {self.direction} at every step." if holds else ": not monotone."
        steps = zip(right, itertools.pairwise(stats), strict=True)
        within = all(r or not abs(m1 - m0) > Z95 * math.hypot(s0, s1) for r, ((m0, s0, _), (m1, s1, _)) in steps)
        if not holds and ev.below_full_scale and within:
            holds, word = None, ": not monotone, but no reversed step is outside its 95% interval."
        return Verdict(holds, f"Ours on {group}: " + ", ".join(ev.num(m) for m in means) + word)

    def evaluate(self, ev: Evidence) -> Verdict:
        """Each grid (group) of ``agent`` with two settings or more; every grid must hold."""
        series = {g: ks for g, ks in ev.series(self.agent).items() if len(ks) > 1}
        if not series:
            return Verdict(None, f"no grid of {self.agent} was run.", applicable=False)
        return _all_of([self._one(ev, g, ks) for g, ks in series.items()])


def _all_of(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict of several that must all hold (any ✗ fails, any – leaves it open)."""
    marks = [v.holds for v in verdicts]
    holds = False if False in marks else (None if None in marks else True)
    return Verdict(holds, " ".join(v.evidence for v in verdicts))


@dataclass(frozen=True)
class Gap:
    """The difference ``a − b`` shrinks along x (and stays positive): each step paired over runs."""

    a: str
    b: str

    def evaluate(self, ev: Evidence) -> Verdict:
        """Not applicable unless a − b > 0 everywhere (point estimates); then each step as :class:`Trend`."""
        diff: dict[str, list[Runs]] = defaultdict(list)
        for ka, kb in Compare(self.a, self.b, "<").cells(ev):
            rb = ev.final(kb)
            diff[ka[0]].append({u: v - rb[u] for u, v in ev.final(ka).items() if u in rb})
        dist = [mean_ci(list(d.values()))[0] for ds in diff.values() for d in ds]
        shown = ", ".join(ev.num(d) for d in dist)
        if not dist or not all(d > 0 for d in dist):
            below = sum(d <= 0 for d in dist)
            return Verdict(
                None,
                f"{self.a} − {self.b} = {shown}: {self.a} is not above {self.b} in {below} of {len(dist)} settings, "
                "so there is no distance to shrink.",
                applicable=False,
            )
        ok = [sided(*paired(d1, d0), "<") for ds in diff.values() for d0, d1 in itertools.pairwise(ds)]
        claim = f"{self.a} − {self.b} = {shown}: each step shrinking with a paired 95% interval excluding 0"
        return _settled(ok, ev, claim, "steps")


@dataclass(frozen=True)
class RatioBound:
    """``a`` at x = ``at`` is at most ``bound`` × ``b`` at x = ``b_at``: the paired interval of a − bound·b."""

    a: str
    b: str
    at: float
    bound: float
    b_at: float = math.inf

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per group where both ran, a − bound·b below 0 (95% interval over the paired units)."""
        pairs = [(k, (k[0], self.b, self.b_at)) for k in ev.keys(self.a) if k[2] == self.at]
        pairs = [(ka, kb) for ka, kb in pairs if kb in ev.curves]
        if not pairs:
            return Verdict(None, "not run at this setting.", applicable=False)
        outcomes, parts = [], {}
        for ka, kb in pairs:
            ra, rb = ev.final(ka), ev.final(kb)
            m, _, h = mean_ci([ra[u] - self.bound * rb[u] for u in sorted(set(ra) & set(rb))])
            ma, mb = ev.mean(ka), ev.mean(kb)
            outcomes.append(sided(m, h, "<"))
            parts[ka[0]] = (
                f"{self.a} / {self.b} = {ev.num(ma)} / {ev.num(mb)} = {ma / mb if mb else math.inf:.2f} at "
                f"{ev.x_name} = {self.at:g}; {self.a} − {self.bound:g}·{self.b} = {ev.num(m)} ± {ev.num(h)} "
                "(paired 95% CI)"
            )
        return Verdict(settle(outcomes, ev.below_full_scale), _in_groups(parts) + ".")


def fmt_ci(values: Sequence[float], digits: str = ".3f") -> str:
    """``mean [low, high]`` of per-run values with the t-based 95% interval (``–`` without values)."""
    m, _, h = mean_ci(values)
    if math.isnan(m):
        return "–"
    return f"{m:{digits}}" + ("" if math.isnan(h) else f" [{m - h:{digits}}, {m + h:{digits}}]")


@dataclass(frozen=True)
class RatioGoal:
    """``a``'s final metric over ``b``'s, per run, is at most ``bound`` at x = ``at`` (95% interval over runs).

    Only in the groups whose name contains ``groups`` (all groups when empty).
    """

    a: str
    b: str
    at: float
    bound: float
    b_at: float = 0.0
    groups: str = ""

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per group, the mean of the per-run ratios a/b with its 95% interval, below ``bound``."""
        keys = [k for k in ev.keys(self.a) if k[2] == self.at and self.groups in k[0]]
        if not keys:
            return Verdict(None, f"not run at {ev.x_name} = {self.at:g}.", applicable=False)
        outcomes, parts = [], []
        for key in keys:
            kb = (key[0], self.b, self.b_at)
            rb = ev.final(kb) if kb in ev.curves else {}
            ratios = [v / rb[u] for u, v in ev.final(key).items() if rb.get(u, 0.0) > 0]
            m, _, h = mean_ci(ratios)
            outcomes.append(sided(m - self.bound, h, "<") if ratios else None)
            parts.append(f"{key[0]}: R(T) / {self.b}'s = {fmt_ci(ratios, '.3f')}")
        return Verdict(settle(outcomes, ev.below_full_scale), "; ".join(parts) + ".")


def sqrt_t_change(c: Mapping[int, Runs]) -> list[float]:
    """Per run, regret/√t at T over regret/√t at the checkpoint nearest T/10."""
    ts = sorted(c)
    t_end = ts[-1]
    early = min(ts, key=lambda s: abs(s - t_end / 10))
    return [
        (v / math.sqrt(t_end)) / (c[early][run] / math.sqrt(early))
        for run, v in c[t_end].items()
        if c[early].get(run, 0.0) > 0
    ]


@dataclass(frozen=True)
class SqrtTFalling:
    """``agent``'s regret/√t falls from T/10 to T on every curve: the per-run ratio's 95% interval below 1."""

    agent: str

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per curve of ``agent``, the per-run (regret/√t at T) / (at T/10) below 1 (95% interval over runs)."""
        outcomes, parts = [], []
        for key in ev.keys(self.agent):
            change = sqrt_t_change(ev.curves[key])
            m, _, h = mean_ci(change)
            outcomes.append(sided(m - 1.0, h, "<") if change else None)
            parts.append(f"{key[0]}{ev.at(key)}: {fmt_ci(change, '.2f')}")
        if not parts:
            return Verdict(None, "not run.", applicable=False)
        return Verdict(settle(outcomes, ev.below_full_scale), "(regret/√t at T) / (at T/10): " + "; ".join(parts) + ".")


#: Evidence ending of a shape claim below full scale: the claim is about curves up to the paper's horizon.
_SHORT = ": at T = {:,} the curves have not reached the paper's horizon, so their shape cannot decide this."


def _near(c: Mapping[int, Runs], t: float) -> float:
    return float(np.mean(list(c[min(c, key=lambda s: abs(s - t))].values())))


@dataclass(frozen=True)
class Slowing:
    """Every curve of ``agent`` grows more slowly in the second half of the horizon than in the first.

    A statement about the curves up to the paper's horizon: below full scale a curve that does
    not slow down leaves the claim undecided.
    """

    agent: str

    def evaluate(self, ev: Evidence) -> Verdict:
        """Whether R(T) − R(T/2) < R(T/2) on the mean curve, for every curve of ``agent``."""
        keys = ev.keys(self.agent)
        if not keys:
            return Verdict(None, "no such setting was run.", applicable=False)
        h = ev.horizon
        half = {k: _near(ev.curves[k], h / 2) for k in keys}
        slowing = [k for k in keys if _near(ev.curves[k], max(ev.curves[k])) - half[k] < half[k]]
        evidence = f"The second half adds less regret than the first for {len(slowing)} of {len(keys)} settings"
        if len(slowing) < len(keys):
            evidence += " (not for " + ", ".join(ev.name(k) for k in keys if k not in slowing) + ")"
            if ev.below_full_scale:
                return Verdict(None, evidence + _SHORT.format(h))
        return Verdict(len(slowing) == len(keys), evidence + ".")


@dataclass(frozen=True)
class FlatSqrtT:
    """Every curve of ``agent`` has regret/√t at T within ±25% of its value at T/10 (√T growth).

    Other agents' curves are shown for comparison, not judged; below full scale a curve that is
    not flat leaves the claim undecided.
    """

    agent: str

    @staticmethod
    def _flat(ev: Evidence, keys: Sequence[Key]) -> tuple[list[bool], list[str]]:
        flat, parts = [], []
        for key in keys:
            c = ev.curves[key]
            ts = sorted(c)
            early = ts[len(ts) // 10]
            ratio = (_near(c, ts[-1]) / math.sqrt(ts[-1])) / (_near(c, early) / math.sqrt(early))
            flat.append(bool(0.75 <= ratio <= 1.25))
            parts.append(
                f"{ev.name(key)}: regret/√t at T over regret/√t at t = {early:,}: {ratio:.2f} "
                f"({'flat within ±25%' if flat[-1] else 'not flat'})"
            )
        return flat, parts

    def evaluate(self, ev: Evidence) -> Verdict:
        """The ±25% band on every curve of ``agent``; the other curves' ratios as context."""
        keys = ev.keys(self.agent)
        if not keys:
            return Verdict(None, "no such setting was run.", applicable=False)
        flat, parts = self._flat(ev, keys)
        if ev.below_full_scale and not all(flat):
            verdict = Verdict(None, "; ".join(parts) + _SHORT.format(ev.horizon))
        else:
            verdict = Verdict(all(flat), "; ".join(parts) + ".")
        others = [k for k in ev.keys() if k[1] != self.agent]
        if others:
            shown = "; ".join(self._flat(ev, others)[1])
            verdict = replace(
                verdict, evidence=f"{verdict.evidence} For comparison (not part of the verdict): {shown}."
            )
        return verdict


@dataclass(frozen=True)
class Best:
    """The best value of x for ``agent`` in group ``scenario`` is ``value`` (the paper's), on its grid."""

    scenario: str
    agent: str
    param: str
    value: float

    def evaluate(self, ev: Evidence) -> Verdict:
        """Our best x against the grid value nearest the paper's: a paired 95% interval of their difference."""
        grid = [k for k in ev.keys(self.agent) if k[0] == self.scenario]
        if not grid:
            return Verdict(None, f"not run on {self.scenario}.", applicable=False)
        best = grid[int(np.argmax([ev.mean(k) for k in grid]))]
        nearest = min(grid, key=lambda k: abs(k[2] - self.value))
        diff, half = paired(ev.final(best), ev.final(nearest))
        note = (
            ""
            if nearest[2] == self.value
            else f" (the paper's {self.value:g} is not on the grid; the grid value nearest it is {nearest[2]:g})"
        )
        name = ev.x_name
        if best == nearest:  # the difference of a value with itself: exactly 0, nothing to estimate
            evidence = f"Our best {name} = {best[2]:g}{note}, the grid value nearest the paper's"
        else:
            evidence = (
                f"Our best {name} = {best[2]:g}{note}; U(T) at our best minus at {name} = {nearest[2]:g}: "
                f"{ev.num(diff)} ± {ev.num(half)} (paired 95% CI over {ev.unit})"
            )
        if best[2] == self.value:
            return Verdict(True, evidence + ".")
        if best == nearest:
            return Verdict(None, evidence + f"; {self.value:g} itself is not on the grid, so it cannot be told apart.",
                           applicable=False)  # fmt: skip
        if math.isnan(half) or diff - half <= 0:
            return Verdict(None, evidence + ": the difference is not significant.")
        return Verdict(False, evidence + ".")


@dataclass(frozen=True)
class Peak:
    """The final metric first rises then falls along x (one interior peak), for every curve.

    Below full scale a peak at an edge of the grid within its paired 95% interval of the best
    interior value leaves that curve undecided.
    """

    param: str

    @staticmethod
    def _inside(ev: Evidence, grid: Sequence[Key]) -> bool | None:
        means = [ev.mean(k) for k in grid]
        if int(np.argmax(means)) not in (0, len(grid) - 1):
            return True
        if not ev.below_full_scale or len(grid) < 3:
            return False
        edge, inner = grid[int(np.argmax(means))], grid[1 + int(np.argmax(means[1:-1]))]
        diff, half = paired(ev.final(edge), ev.final(inner))
        return None if math.isnan(half) or diff - half <= 0 else False

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per (group, agent) curve, where its highest mean lies."""
        curves: dict[tuple[str, str], list[Key]] = defaultdict(list)
        for k in ev.keys():
            curves[(k[0], k[1])].append(k)
        inside = [self._inside(ev, grid) for grid in curves.values()]
        words = {True: "yes", False: "no", None: "at an edge, within the CI"}
        parts = [f"{g}/{a}: {words[ok]}" for (g, a), ok in zip(curves, inside, strict=True)]
        return Verdict(settle(inside, ev.below_full_scale), "Peak inside the grid: " + ", ".join(parts) + ".")


@dataclass(frozen=True)
class AtLeast:
    """Every setting's proportion ``what`` (a 0/1 value per run) is at least ``value``: Wilson 95% intervals.

    Below full scale a proportion whose interval still reaches ``value`` leaves the claim undecided.
    """

    what: str
    value: float

    def evaluate(self, ev: Evidence) -> Verdict:
        """The lowest proportion over the settings, against ``value``."""
        counts = [(k, *_successes(ev, [k])) for k in ev.keys()]
        key, s, n = min(counts, key=lambda c: c[1] / c[2] if c[2] else math.nan)
        lo, hi = wilson(s, n)
        ratio = s / n if n else math.nan
        where = f"Lowest ratio here: {100 * ratio:.0f}% ({ev.name(key)}, 95% CI [{100 * lo:.0f}, {100 * hi:.0f}])"
        if lo > self.value:
            return Verdict(True, f"{where}: holds.")
        if ratio > self.value:
            return Verdict(None, f"{where}: holds in point estimate only.")
        if ev.below_full_scale and hi >= self.value:
            return Verdict(None, f"{where}: below in point estimate, but the interval reaches {100 * self.value:.0f}%.")
        return Verdict(False, f"{where}: does not hold.")


def _successes(ev: Evidence, keys: Iterable[Key]) -> tuple[int, int]:
    """Runs with value 1 and all runs, pooled over the curves ``keys``."""
    values = [v for k in keys for v in ev.final(k).values()]
    return int(sum(bool(v) for v in values)), len(values)


@dataclass(frozen=True)
class Trends:
    """Proportion ``what`` is higher with larger or smaller parameter values: ``((param, "larger"|"smaller"), ...)``.

    Each parameter's extreme values are pooled over the other parameters; Wilson 95% intervals.
    """

    what: str
    directions: tuple[tuple[str, str], ...]

    def _one(self, ev: Evidence, key: str, direction: str) -> tuple[bool | None, str]:
        values = sorted({p[key] for p in ev.params.values()})
        lo_v, hi_v = values[0], values[-1]
        (s_lo, n_lo), (s_hi, n_hi) = (
            _successes(ev, [k for k in ev.keys() if ev.params[k][key] == v]) for v in (lo_v, hi_v)
        )
        ci_lo, ci_hi = wilson(s_lo, n_lo), wilson(s_hi, n_hi)
        small, large = (ci_lo, ci_hi) if direction == "larger" else (ci_hi, ci_lo)
        outcome, word = (
            (True, "supported")
            if small[1] < large[0]
            else ((False, "reversed") if large[1] < small[0] else (None, "not decided (intervals overlap)"))
        )
        label = ev.labels.get(key, key)
        shown = f"{100 * s_lo / max(n_lo, 1):.1f}% → {100 * s_hi / max(n_hi, 1):.1f}%"
        return outcome, f"{label} {lo_v:g} → {hi_v:g}: {shown}, {word}"

    def evaluate(self, ev: Evidence) -> Verdict:
        """Per parameter, the pooled proportions at its smallest and largest value."""
        results = [self._one(ev, key, direction) for key, direction in self.directions]
        outcomes = [o for o, _ in results]
        holds = False if False in outcomes else (True if all(outcomes) else None)
        text = "; ".join(p for _, p in results)
        return Verdict(holds, text + " (extreme values pooled over the other parameters, Wilson 95% CIs).")


Check = (
    Compare
    | Trend
    | GridTrend
    | Gap
    | RatioBound
    | RatioGoal
    | SqrtTFalling
    | Slowing
    | FlatSqrtT
    | Best
    | Peak
    | AtLeast
    | Trends
)
