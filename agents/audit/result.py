"""The record an audit returns, and how it is printed (one table line plus the details)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["INCONCLUSIVE", "NO_VIOLATION", "VIOLATION", "AuditResult", "Power", "table_header"]

#: The lower bound exceeds the claimed ε: the claim is false (at the audit's confidence).
VIOLATION = "violation"
#: The lower bound does not exceed the claim, and the audit could have seen a clear violation.
NO_VIOLATION = "no violation found"
#: The audit could not have seen a violation (see :class:`Power`).
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Power:
    """Whether the audit could have detected a violation of the claim.

    Attributes
    ----------
    has_power
        False when no event could have bounded ε above the claim with these runs, or the outputs
        never varied.
    ceiling
        The largest lower bound any event can give with the estimation runs (counts n and 0).
    alternative
        The violation the next figure is for: an event whose privacy loss is this ε (2× the claim).
    detectable
        Smallest P(E | D) of such an event that the audit flags with probability ≥ 1/2 (None: none).
    text
        The statement in words.
    """

    has_power: bool
    ceiling: float
    alternative: float
    detectable: float | None
    text: str


def _num(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.3f}"


@dataclass(frozen=True)
class AuditResult:
    """What :func:`agents.audit.audit` returns.

    Attributes
    ----------
    agent
        The audited agent's name.
    unit, unit_text
        The neighbouring relation audited (``"entry"``, ``"report"``, ...) and the agent's own words for its unit.
    epsilon, delta
        The claimed (ε, δ).
    epsilon_lower
        The empirical lower bound on ε: max(0, ``interval[0]``); the claim is false if it exceeds
        ``epsilon`` (holds with probability ≥ 97.5% for a mechanism that meets its claim).
    interval
        95% confidence interval of the best event's privacy loss ln((P(E|D) − δ)/P(E|D′)) (or of
        D′ over D, see ``direction``).
    estimate
        Point estimate of that loss.
    event, direction
        The best event, chosen on the selection runs, and the ratio bounded ("D over D′" or "D′ over D").
    p_first, p_second
        The event's frequency in the estimation runs on D and on D′.
    neighbours
        The neighbouring pair the event was found on.
    runs, selection_runs, estimation_runs
        Runs per input in all, per input and pair for choosing the event, and per input for the bound.
    power
        Whether the audit could have detected a violation (:class:`Power`).
    verdict
        :data:`VIOLATION`, :data:`NO_VIOLATION` or :data:`INCONCLUSIVE`.
    seed
        The audit's seed (the result is a function of it).
    note
        What else the report says (e.g. when the agent's first release happens).
    """

    agent: str
    unit: str
    unit_text: str
    epsilon: float
    delta: float
    epsilon_lower: float
    interval: tuple[float, float]
    estimate: float
    event: str
    direction: str
    p_first: float
    p_second: float
    neighbours: str
    runs: int
    selection_runs: int
    estimation_runs: int
    power: Power
    verdict: str
    seed: int
    note: str = ""

    def line(self) -> str:
        """The table row: agent, unit, claim, empirical bound with its interval, runs, verdict."""
        claim = f"{self.epsilon:.3g}" + (f", δ={self.delta:.2g}" if self.delta > 0 else "")
        bound = f"≥ {self.epsilon_lower:.3f} [{_num(self.interval[0])}, {_num(self.interval[1])}]"
        return f"{self.agent:<22} {self.unit:<7} {claim:<14} {bound:<30} {self.runs:>8}  {self.verdict}"

    def report(self) -> str:
        """The table header, :meth:`line` and the details (event, neighbours, power)."""
        first, second = ("D", "D′") if self.direction == "D over D′" else ("D′", "D")
        p_top, p_bottom = (self.p_first, self.p_second) if first == "D" else (self.p_second, self.p_first)
        top = f"(P(E|{first}) − δ)" if self.delta > 0 else f"P(E|{first})"
        loss = f"ln({top}/P(E|{second}))"
        lines = [
            table_header(),
            self.line(),
            f"  reading: {self.reading()}",
            f"  unit: {self.unit_text}",
            f"  neighbours: {self.neighbours}",
            f"  best event: {self.event}; P(E|{first}) = {p_top:.4g}, P(E|{second}) = {p_bottom:.4g} in "
            f"{self.estimation_runs} runs each (loss {loss} = {_num(self.estimate)}; chosen on "
            f"{self.selection_runs} other runs per input and pair)",
            f"  power: {self.power.text}",
        ]
        if self.note:
            lines.append(f"  note: {self.note}")
        lines.append(
            "  An audit gives a lower bound only: 'no violation found' does not prove the claim."
            if self.verdict != VIOLATION
            else f"  The claim ε = {self.epsilon:g} is false for this unit (lower bound {self.epsilon_lower:.3f})."
        )
        return "\n".join(lines)

    def reading(self) -> str:
        """The result in plain words: the point estimate, what the lower bound means, and what this run could see.

        Only the interval's lower end is evidence: an upper end above the claim says the runs were
        too few to pin the loss down, not that the claim is broken.
        """
        low, high = self.interval
        estimate = (
            f"the best event's privacy loss is estimated at {_num(self.estimate)} (95% CI [{_num(low)}, {_num(high)}])"
        )
        if self.verdict == VIOLATION:
            return f"{estimate}; even its lower end {self.epsilon_lower:.3f} exceeds the claim {self.epsilon:g}."
        could = (
            f"it would have flagged a loss of {self.power.alternative:g} (2× the claim) with probability ≥ 1/2 "
            f"for an event of probability ≥ {self.power.detectable:.3g} under D"
            if self.power.detectable is not None
            else "these runs could not have shown a loss above the claim for any event"
        )
        if self.epsilon_lower < 0.1 * self.epsilon:
            told = "its lower end is about 0, so this run could not tell a leak from chance"
        else:
            told = f"its lower end {self.epsilon_lower:.3f} is within the claim {self.epsilon:g}"
        above = "; an upper end above the claim is no evidence of a violation" if high > self.epsilon else ""
        return f"{estimate}; {told}{above}; {could}."


def table_header() -> str:
    """The column titles of :meth:`AuditResult.line`."""
    return f"{'agent':<22} {'unit':<7} {'claimed ε':<14} {'empirical ε (95% CI)':<30} {'runs':>8}  verdict"
