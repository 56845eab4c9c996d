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

from agents.experiments.core.stats import mean_ci

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


#: Where the explanations of ✗ and – verdicts live, from the repository's root.
README = "docs/reproductions/README.md"
#: The same file seen from a committed summary, ``docs/reproductions/<experiment>/summary.md``.
README_FROM_SUMMARY = "../README.md"
#: Anchors of :data:`README` used when a claim names none: a user agent's claims, and the general
#: paragraph on verdicts a run's scale cannot decide.
YOUR_AGENTS = "your-agents"
UNDECIDED = "not-resolvable-at-this-scale"


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


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: ``holds`` (True, False, or None when it cannot be decided) and the evidence.

    A None verdict is *not resolvable at this scale* (the run has too few runs or too short a
    horizon, or the intervals overlap) unless ``applicable`` is False: then the claim's premise
    does not hold here (e.g. a distance that should shrink is not positive), whatever the scale.
    ``extra`` holds further lines under the claim, e.g. the verdict on settings this project
    added beyond the source's (:func:`added_line`).
    """

    holds: bool | None
    evidence: str
    applicable: bool = True
    extra: tuple[str, ...] = ()


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


def why_link(anchor: str) -> str:
    """The Markdown link of a ✗ or – to the paragraph ``anchor`` of :data:`README` that explains it.

    Its target is relative to a committed summary (``docs/reproductions/<experiment>/``); its
    text names the file from the repository's root, so it also reads right in any other folder.
    """
    return f"[why: {README}#{anchor}]({README_FROM_SUMMARY}#{anchor})"


def added_line(verdict: Verdict, what: str, anchor: str) -> str:
    """A sub-bullet with the verdict of a claim on settings this project added beyond the source's."""
    link = "" if verdict.holds is True else f" {why_link(anchor)}"
    return f"  - {MARKS[verdict.holds]} *Added by this project, not in the source* ({what}): {verdict.evidence}{link}"


def agents_named(check: Check) -> set[str]:
    """The agent names a check compares (a claim is checked only when all of them ran)."""
    return {str(getattr(check, k)) for k in ("a", "b", "agent") if getattr(check, k, None) is not None}


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
    evaluate: Callable[[Claim], Verdict],
    *,
    note: str = "",
    title: str = "The paper's claims",
    scale: str = "",
) -> list[str]:
    """Markdown lines: one bullet per claim, its words, our evidence and a ✓/✗/– mark.

    Every ✗ and – links to the paragraph of :data:`README` that explains it (:func:`why_link`);
    ``scale`` (:func:`scale_words`) says how large the run was, next to each – it leaves open.
    """
    if not claims:
        return []
    lines = [f"## {title}", ""]
    if note:
        lines += [note, ""]
    for claim in claims:
        lines.append(claim_line(claim, evaluate(claim), scale))
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


def run_notes(overrides: dict[str, Any], user_agents: Sequence[str], how: str) -> list[str]:
    """Markdown lines naming the ``--set`` overrides and the user agents (``how`` they ran), if any."""
    lines: list[str] = []
    if overrides:
        shown = ", ".join(f"{k} = {v}" for k, v in overrides.items())
        lines += [f"Overridden setting parameters (`--set`): {shown}.", ""]
    if user_agents:
        lines += [f"User agents ({how}): {', '.join(user_agents)}.", ""]
    return lines
