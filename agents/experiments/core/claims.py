"""Paper claims as data: each claim is declared once, and its prose and its ✓/✗ check come from it.

A :class:`Claim` holds what the paper says (``text``, in the paper's sense) and a *check*: a small
frozen record naming who is compared with whom and in which direction (:class:`Compare`,
:class:`Trend`, :class:`Gap`, :class:`AtLeast`, ... in :mod:`agents.experiments.core.checks`). Each check
evaluates itself on an :class:`~agents.experiments.core.checks.Evidence` table, with the one rule of
:mod:`agents.experiments.core.verdict`; a family only builds that table and its own tables of
numbers, and :func:`claims_section` writes the Markdown. The prose of a summary is therefore
generated from the same record the check reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agents.experiments.core.checks import (
    AtLeast,
    Best,
    Check,
    Compare,
    Evidence,
    FlatSqrtT,
    Gap,
    GridTrend,
    Peak,
    RatioBound,
    RatioGoal,
    Slowing,
    SqrtTFalling,
    Trend,
    Trends,
)
from agents.experiments.core.stats import mean_ci
from agents.experiments.core.verdict import (
    MARKS,
    README,
    README_FROM_SUMMARY,
    UNDECIDED,
    YOUR_AGENTS,
    Verdict,
    added_line,
    settle,
    sided,
    tally,
    why_link,
)
from agents.user_agents import UserAgent

__all__ = [
    "MARKS",
    "README",
    "README_FROM_SUMMARY",
    "UNDECIDED",
    "YOUR_AGENTS",
    "AtLeast",
    "Best",
    "Check",
    "Claim",
    "Compare",
    "Evidence",
    "FlatSqrtT",
    "Gap",
    "GridTrend",
    "Peak",
    "RatioBound",
    "RatioGoal",
    "Slowing",
    "SqrtTFalling",
    "Trend",
    "Trends",
    "Verdict",
    "added_line",
    "agents_named",
    "claim_line",
    "claims_section",
    "committed_summary",
    "evaluate",
    "run_notes",
    "scale_note",
    "scale_words",
    "se_cell",
    "settle",
    "sided",
    "tally",
    "user_claims",
    "why_link",
    "zero_se_note",
]


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: what it says, where, and how we test it.

    ``why`` is the anchor of the paragraph of :data:`README` that explains a ✗ or – verdict of
    this claim (a test checks that it exists there); ``added`` marks a claim (or a line of one)
    about settings this project added beyond the source's, reported apart from the source's.
    """

    text: str
    check: Check
    where: str = ""
    why: str = ""
    added: bool = False


def committed_summary(experiment_id: str) -> str:
    """The path, from the repository's root, of the committed full-scale summary of ``experiment_id``."""
    return f"docs/reproductions/{experiment_id.replace('/', '-')}/summary.md"


def scale_note(
    horizon: int, runs: int, full_horizon: int, full_runs: int, command: str, experiment_id: str = ""
) -> str:
    """The note above the claims of a run smaller than full scale (empty at full scale).

    It says which verdicts such a run leaves open, the command that decides them and, given
    ``experiment_id``, where the committed full-scale verdicts are.
    """
    if horizon >= full_horizon and runs >= full_runs:
        return ""
    where = (
        f" The full-scale verdicts are in the repository's `{committed_summary(experiment_id)}` (explained in "
        f"`{README}`)."
        if experiment_id
        else ""
    )
    return (
        f"This run is smaller than full scale (T = {horizon:,} against {full_horizon:,}, {runs} against "
        f"{full_runs} runs). A claim is marked – (not resolvable at this scale) where this scale has too little power "
        "to tell: a 95% interval wider than the effect, or a horizon too short for a claim about the curves' shape; ✗ "
        f"means the results contradict it. The full-scale run decides the undecided ones: `{command}`.{where}"
    )


def scale_words(horizon: int, runs: int, unit: str = "runs per setting") -> str:
    """How large a run is, for a – verdict: ``3 runs per setting, T = 20,000``."""
    return f"{runs} {unit}, T = {horizon:,}"


def agents_named(check: Check) -> set[str]:
    """The agent names a check compares (a claim is checked only when all of them ran)."""
    return {str(getattr(check, k)) for k in ("a", "b", "agent") if getattr(check, k, None) is not None}


def evaluate(claim: Claim, ev: Evidence) -> Verdict:
    """The verdict of ``claim`` on the evidence: the check decides on the source's settings.

    When ``ev`` holds settings added beyond the source's, the check decides on them apart, on a
    line of its own under the claim (linked to ``<claim.why>-added``), if it applies to them.
    ``ev.decided_at``: a contradiction at a shorter horizon is undecided, with the evidence shown.
    """
    verdict = claim.check.evaluate(ev.part(added=False) if ev.added else ev)
    if ev.added:
        extra = claim.check.evaluate(ev.part(added=True))
        if extra.applicable:
            verdict = replace(verdict, extra=(added_line(extra, ev.added_words, claim.why + "-added"),))
    if verdict.holds is False and ev.horizon < ev.decided_at:
        return Verdict(None, f"{verdict.evidence} Contradicted at T = {ev.horizon:,}; the claim is about T = "
                       f"{ev.decided_at:,}.")  # fmt: skip
    return verdict


def claim_line(claim: Claim, verdict: Verdict, scale: str = "") -> str:
    """One bullet: the claim's mark, words and evidence; a ✗ or – links to its explanation.

    A – that the scale leaves open says "not resolvable at this scale" and the ``scale``
    (:func:`scale_words`); a – whose premise does not hold says "not applicable".
    """
    where = f" ({claim.where})" if claim.where else ""
    added = " *(a claim of this project, on settings it added)*" if claim.added else ""
    head = f"- {MARKS[verdict.holds]} *{claim.text}*{where}{added}"
    if verdict.holds is None:
        if verdict.applicable:
            size = f" ({scale}; 95% intervals as in the evidence)" if scale else ""
            head += f" **not resolvable at this scale**{size}:"
        else:
            head += " **not applicable here**:"
    line = f"{head} {verdict.evidence}"
    if verdict.holds is not True:
        line += f" {why_link(claim.why or (UNDECIDED if verdict.holds is None else YOUR_AGENTS))}"
    return "\n".join([line, *verdict.extra])


def claims_section(
    claims: Sequence[Claim],
    evidence: Evidence,
    *,
    note: str = "",
    title: str = "The paper's claims",
    scale: str = "",
) -> list[str]:
    """Markdown lines: one bullet per claim, its words, our evidence and a ✓/✗/– mark.

    Each claim's check decides itself on ``evidence`` (:func:`evaluate`).
    Every ✗ and – links to the paragraph of :data:`README` that explains it (:func:`why_link`);
    ``scale`` (:func:`scale_words`) says how large the run was, next to each – it leaves open.
    """
    if not claims:
        return []
    lines = [f"## {title}", ""]
    if note:
        lines += [note, ""]
    for claim in claims:
        lines.append(claim_line(claim, evaluate(claim, evidence), scale))
    lines += [
        "",
        "✓ the claim holds here, ✗ it does not, – it cannot be decided from these results (not resolvable at this "
        "scale, or not applicable); each ✗ and – links to the paragraph of "
        f"`{README}` that explains it.",
        "",
    ]
    return lines


def zero_se_note(agents: Sequence[str]) -> list[str]:
    """The footnote of a table where ``agents`` have a standard error of exactly 0 (every run the same regret).

    Says why it can be exactly zero (:data:`ZERO_SE_REASONS`); empty when ``agents`` is empty.
    """
    if not agents:
        return []
    reasons = [f"{a}: {ZERO_SE_REASONS.get(a, ZERO_SE_DEFAULT)}" for a in dict.fromkeys(agents)]
    return [
        "",
        "¹ ± 0: the standard error is exactly 0, not rounded: every run of the agent in that setting ended with the "
        "same regret (regret is measured with the true means, so it depends only on how often each arm was pulled). "
        f"{' '.join(reasons)} {why_link('zero-standard-error')}",
    ]


#: Why an agent's final regret can be the same in every run (a standard error of exactly 0).
ZERO_SE_REASONS: dict[str, str] = {
    "DPSE": "its elimination schedule is deterministic (epochs of fixed length, each active arm pulled the same "
    "number of times per epoch); where the same arms leave at the same epoch ends in every run, every run pulls "
    "each arm equally often.",
    "GAP": "its epoch lengths are deterministic; where every run has the same independent sets (one graph shared "
    "by all runs) and eliminates the same arms at the same epoch ends, every run pulls each arm equally often.",
    "HybridDPUCB": "its index's noise bound B_i(t)/n_i changes in steps at pull counts that are powers of two (the "
    "hybrid counter's k = ⌊log₂ n_i⌋); where that bound dominates the index, the pulls follow those steps in the "
    "same pattern in every run.",
}
ZERO_SE_DEFAULT = "its choices did not depend on the reward draws that differ between runs."


def se_cell(values: Sequence[float], fmt: str = ",.0f") -> tuple[str, bool]:
    """``mean ± s.e.`` of per-run values and whether every run has the same value (then written ``± 0¹``).

    The footnote ¹ is :func:`zero_se_note`'s; a standard error that only rounds to 0 is written as is.
    """
    mean, se, _ = mean_ci(values)
    if len(values) > 1 and all(v == values[0] for v in values):
        return f"{mean:{fmt}} ± 0¹", True
    return f"{mean:{fmt}} ± {se:{fmt}}", False


def user_claims(user_agents: Sequence[str], builtin: Sequence[str], direction: str) -> tuple[Claim, ...]:
    """Each user agent against each built-in agent, as checks of the same form (no claim of the paper).

    ``direction`` is ``"<"`` where lower is better (regret), ``">"`` where higher is (payoff).
    """
    word = "below" if direction == "<" else "above"
    return tuple(
        Claim(f"{u} is {word} {b}", Compare(u, b, direction), "your agent") for u in user_agents for b in builtin
    )


class _Configured(Protocol):
    """What :func:`run_notes` reads of a configured :class:`~agents.experiments.core.spec.Experiment`."""

    @property
    def overrides(self) -> Mapping[str, Any]: ...

    @property
    def user_agents(self) -> Sequence[UserAgent]: ...


def run_notes(exp: _Configured, how: str) -> list[str]:
    """Markdown lines naming the experiment's ``--set`` overrides and its user agents (``how`` they ran), if any."""
    lines: list[str] = []
    if exp.overrides:
        shown = ", ".join(f"{k} = {v}" for k, v in exp.overrides.items())
        lines += [f"Overridden setting parameters (`--set`): {shown}.", ""]
    if exp.user_agents:
        lines += [f"User agents ({how}): {', '.join(u.name for u in exp.user_agents)}.", ""]
    return lines
