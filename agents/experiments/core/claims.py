"""Paper claims as data: each claim is declared once, and its prose and its ✓/✗ check come from it.

A :class:`Claim` holds what the paper says (``text``, in the paper's sense) and a *check*: a small
frozen record naming who is compared with whom and in which direction (:class:`Compare`,
:class:`Trend`, :class:`Gap`, :class:`AtLeast`, ...). A family's analysis evaluates each check
on its results and returns a :class:`Verdict`; :func:`claims_section` writes the Markdown. The
prose of a summary is therefore generated from the same record the check reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: Marks written next to a verdict.
MARKS = {True: "✓", False: "✗", None: "–"}


@dataclass(frozen=True)
class Compare:
    """``a``'s final metric is below (``"<"``) or above (``">"``) ``b``'s; per setting, paired 95% CI."""

    a: str
    b: str
    direction: str  # "<" or ">"

    def describe(self) -> str:
        """Plain words for the check."""
        return f"{self.a} {'below' if self.direction == '<' else 'above'} {self.b}"


@dataclass(frozen=True)
class Trend:
    """``agent``'s final metric moves in ``direction`` (``"decreasing"``/``"increasing"``) along ``over``."""

    agent: str
    direction: str
    over: str = "varied"  # a setting parameter, or "varied": the parameter the experiment varies


@dataclass(frozen=True)
class Gap:
    """The difference ``a − b`` shrinks along the varied parameter (and stays positive)."""

    a: str
    b: str


@dataclass(frozen=True)
class AtLeast:
    """Every setting's statistic ``what`` is at least ``value`` (e.g. identical-sequence ratio ≥ 0.85)."""

    what: str
    value: float


@dataclass(frozen=True)
class Trends:
    """``what`` is higher with larger or smaller values of several parameters: ``{param: "larger"|"smaller"}``."""

    what: str
    directions: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Best:
    """The best value of parameter ``param`` for ``agent`` in ``scenario`` is ``value`` (the paper's)."""

    scenario: str
    agent: str
    param: str
    value: float


@dataclass(frozen=True)
class Peak:
    """The final metric first rises then falls along ``param`` (one interior peak), for every curve."""

    param: str


@dataclass(frozen=True)
class Shape:
    """A statement about the shape of curves over time, named by ``kind`` (family-specific)."""

    kind: str
    detail: tuple[tuple[str, Any], ...] = ()


Check = Compare | Trend | Gap | AtLeast | Trends | Best | Peak | Shape


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: what it says, where, and how we test it."""

    text: str
    check: Check
    where: str = ""


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: ``holds`` (True, False, or None when it cannot be decided) and the evidence."""

    holds: bool | None
    evidence: str


def sided(mean: float, half: float, direction: str) -> bool | None:
    """Where the 95% interval ``mean ± half`` of a difference lies: on the claimed side of 0 (True).

    ``direction`` is ``"<"`` (the claim says the difference is negative) or ``">"``. False when the
    interval lies wholly on the other side (the results contradict the claim), None when it
    contains 0 or cannot be computed (the interval is wider than the effect: undecided).
    """
    if math.isnan(mean) or math.isnan(half):
        return None
    below, above = mean + half < 0, mean - half > 0
    if direction == "<":
        return True if below else (False if above else None)
    return True if above else (False if below else None)


def settle(outcomes: Sequence[bool | None], below_full_scale: bool) -> bool | None:
    """One verdict from per-setting outcomes (:func:`sided`): every setting must hold.

    Any contradicted setting makes the claim fail. Settings whose interval contains 0 make it
    fail at full scale (the claim says *clearly*), but below full scale they leave it undecided
    (None): a shorter horizon or fewer runs cannot tell, and the full-scale run decides.
    """
    if not outcomes:
        return None
    if all(o is True for o in outcomes):
        return True
    if any(o is False for o in outcomes):
        return False
    return None if below_full_scale else False


def tally(outcomes: Sequence[bool | None]) -> str:
    """Words for per-setting outcomes beyond the ones that hold: how many contradict, how many cannot tell."""
    against = sum(o is False for o in outcomes)
    unsure = sum(o is None for o in outcomes)
    parts = []
    if against:
        parts.append(f"the opposite in {against}")
    if unsure:
        parts.append(f"an interval containing 0 in {unsure}")
    return f" ({'; '.join(parts)})" if parts else ""


def scale_note(horizon: int, runs: int, full_horizon: int, full_runs: int, command: str) -> str:
    """The note above the claims of a run smaller than full scale (empty at full scale).

    It says which verdicts such a run leaves open and the command that decides them.
    """
    if horizon >= full_horizon and runs >= full_runs:
        return ""
    return (
        f"This run is smaller than full scale (T = {horizon:,} against {full_horizon:,}, {runs} against "
        f"{full_runs} runs). A claim is marked – (undecided) where this scale has too little power to tell: a 95% "
        "interval wider than the effect, or a horizon too short for a claim about the curves' shape; ✗ means the "
        f"results contradict it. The full-scale run decides the undecided ones: `{command}`."
    )


def agents_named(check: Check) -> set[str]:
    """The agent names a check compares (a claim is checked only when all of them ran)."""
    return {str(getattr(check, k)) for k in ("a", "b", "agent") if getattr(check, k, None) is not None}


def claims_section(
    claims: Sequence[Claim], evaluate: Callable[[Claim], Verdict], *, note: str = "", title: str = "The paper's claims"
) -> list[str]:
    """Markdown lines: one bullet per claim, its words, our evidence and a ✓/✗/– mark."""
    if not claims:
        return []
    lines = [f"## {title}", ""]
    if note:
        lines += [note, ""]
    for claim in claims:
        verdict = evaluate(claim)
        where = f" ({claim.where})" if claim.where else ""
        lines.append(f"- {MARKS[verdict.holds]} *{claim.text}*{where} {verdict.evidence}")
    lines += ["", "✓ the claim holds here, ✗ it does not, – it cannot be decided from these results.", ""]
    return lines


def user_claims(user_agents: Sequence[str], builtin: Sequence[str], direction: str) -> tuple[Claim, ...]:
    """Each user agent against each built-in agent, as checks of the same form (no claim of the paper).

    ``direction`` is ``"<"`` where lower is better (regret), ``">"`` where higher is (payoff).
    """
    word = "below" if direction == "<" else "above"
    return tuple(
        Claim(f"{u} is {word} {b}", Compare(u, b, direction), "your agent") for u in user_agents for b in builtin
    )


def run_notes(overrides: dict[str, Any], user_agents: Sequence[str], how: str) -> list[str]:
    """Markdown lines naming the ``--set`` overrides and the user agents (``how`` they ran), if any."""
    lines: list[str] = []
    if overrides:
        shown = ", ".join(f"{k} = {v}" for k, v in overrides.items())
        lines += [f"Overridden setting parameters (`--set`): {shown}.", ""]
    if user_agents:
        lines += [f"User agents ({how}): {', '.join(user_agents)}.", ""]
    return lines
