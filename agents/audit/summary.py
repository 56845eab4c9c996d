"""The audit of every private agent of the library at full N, as a table, a figure and a summary.

:data:`ALL_AUDITS` lists what ``banditlab audit all --out DIR`` runs: every private agent at its
claim for one unit (ε = 1), the central-DP agents once more with three changed entries against
the one-entry claim (the audit's power check: an ε-DP agent is only 3ε-DP there), and the two
broken controls of :mod:`agents.audit.canaries`. :func:`summary_text` and :func:`write_figure`
turn the :class:`~agents.audit.result.AuditResult` records into ``summary.md`` and ``figure.png``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.audit.result import VIOLATION, AuditResult

__all__ = ["ALL_AUDITS", "Planned", "summary_text", "write_figure"]


@dataclass(frozen=True)
class Planned:
    """One audit of the full run: the agent, its ε, the changed units, and the least runs per input."""

    agent: str
    epsilon: float = 1.0
    group: int = 1
    horizon: int | None = None
    runs: int = 0  # at least this many runs per input (0: the command's --runs)
    role: str = "claim"  # "claim", "group" (power check) or "control"


#: Every audit of ``banditlab audit all``.
ALL_AUDITS: tuple[Planned, ...] = (
    Planned("GAP"),
    Planned("GAPU"),
    Planned("DPSE"),
    Planned("HybridDPUCB"),
    Planned("TreeDPUCB"),
    Planned("TreeDPUCB-parallel"),
    Planned("AdaPUCB"),
    Planned("AdaPUCB-cumulative"),
    Planned("DPThompsonSampling"),
    Planned("PrePullGaussianTS"),
    Planned("DPTSUCB"),
    Planned("LDPWrapper", horizon=200),
    Planned("LDPLinUCB"),
    Planned("LDPThompsonSampling"),
    Planned("GAP", 0.5, 3, role="group"),
    Planned("HybridDPUCB", 1.0, 3, runs=20_000, role="group"),
    Planned("TreeDPUCB", 2.0, 3, runs=20_000, role="group"),
    Planned("TreeDPUCB-parallel", 1.0, 3, runs=20_000, role="group"),
    Planned("AdaPUCB", 1.0, 3, role="group"),
    Planned("AdaPUCB-cumulative", 2.0, 3, runs=20_000, role="group"),
    Planned("DPThompsonSampling", 3.0, 3, runs=40_000, role="group"),
    Planned("OverclaimedGAP", 0.5, role="control"),
    Planned("NonPrivateUCB", 1.0, role="control"),
)

_ROLE_TEXT = {
    "claim": "claim for one unit",
    "group": "3 units changed, one-unit claim (power check: a violation is expected)",
    "control": "broken control (a violation is expected)",
}


def _num(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.3f}"


def _power(result: AuditResult) -> str:
    power = result.power
    if not power.has_power:
        return "none"
    most = f"max showable {power.ceiling:.2f}"
    if power.detectable is None:
        return f"weak; {most}"
    return f"2× violation flagged if P(E) ≥ {power.detectable:.3g}; {most}"


def summary_text(results: Sequence[tuple[Planned, AuditResult]], command: str, seconds: float) -> str:
    """``summary.md``: the table (agent, unit, claimed ε, lower bound [95% CI], runs, verdict, power) and notes."""
    lines = [
        "# Privacy audit of every private agent",
        "",
        f"Written by `{command}` ({seconds:.0f} s on one core). Each row: the agent run many times with fresh "
        "privacy noise on two neighbouring reward tables for its unit; the best event over its arm sequences (and, for "
        "the counter agents HybridDPUCB and TreeDPUCB, over their releases: the note names the view), chosen "
        "on half the runs, bounded on the other half (agents/audit, docs/audit.md).",
        "",
        "| agent | unit | changed units | claimed ε | empirical ε ≥ (95% CI of the event's loss) | runs per input "
        "| verdict | power |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for plan, result in results:
        low, high = result.interval
        bound = f"{result.epsilon_lower:.3f} [{_num(low)}, {_num(high)}]"  # the interval as computed (may be < 0)
        claim = f"{result.epsilon:g}" + (f", δ = {result.delta:.3g}" if result.delta > 0 else "")
        verdict = f"**{result.verdict}**" if result.verdict == VIOLATION else result.verdict
        lines.append(
            f"| {result.agent} | {result.unit} | {plan.group} | {claim} | {bound} | {result.runs:,} | {verdict} | "
            f"{_power(result)} |"
        )
    lines += [
        "",
        "## What this shows",
        "",
        "* **A lower bound only.** The bound is max(0, the interval's lower end); the interval is that of the best "
        "event's privacy loss, which can be negative (an event no more likely on D than on D′). Every bound is a "
        "97.5%-confidence lower bound on the ε the agent spends on the "
        "pair and event shown; `no violation found` does not prove a claim (the agent may leak more on other pairs "
        "or events, or by less than the runs resolve). A `violation` proves the claim false for that unit.",
        "* **Power.** The power column gives the smallest probability P(E | D) an event must have for a violation by "
        "2× the claim to be flagged with probability ≥ 1/2, and the most any event can show with these runs. The "
        "power checks (3 changed units against the one-unit claim) and the broken controls must be rejected; a "
        "power check that is not shows where the audit cannot see the agent's leakage through arm sequences.",
        "* **Claims.** The claim audited is what the agent states: `privacy_spent` (central DP, one reward entry), "
        "`privacy_per_report` (LDPWrapper, LDPLinUCB) or ε per report (LDPThompsonSampling). TreeDPUCB with its "
        'default `per_arm_budget="split"` claims ε/K = 0.5 per entry at ε = 1 (each reward enters one of the K = 2 '
        "arms' trees), and that is what is audited; `TreeDPUCB-parallel` claims ε per tree. PrePullGaussianTS and "
        "DPTSUCB are sized with `for_budget` for (ε, δ = 10⁻⁵) over the audited horizon (a μ-GDP guarantee "
        "converted to (ε, δ)), and claim that. They have no group-3 power check: with three changed entries "
        "their arm sequences showed lower bounds of only 0.12 and 0.09 (4,000 runs), so such a row could not show "
        "the audit's power.",
        "* **Local DP.** The audit observes arm sequences, which are post-processing of all reports: the bound for "
        "LDPWrapper, LDPLinUCB and LDPThompsonSampling is far below the per-report ε, correctly for the arm sequence, "
        "but it cannot test the report mechanism itself (a report's privacy would need the report as the output).",
        "* **Counters.** HybridDPUCB and TreeDPUCB are audited through their releases (the noisy sums their "
        "counters publish, of which the arms are post-processing), with events on the releases' privacy loss "
        "ln(p(output|D)/p(output|D′)): their arm sequences alone cannot show the loss of three changed entries "
        "(each entry is spread over several p-sums, and a decision reads only some of them). Their group-3 rows "
        "are power checks like the others and must be violations.",
        "* **Seeds.** The event is chosen on cautious selection frequencies (each at the pessimistic end of its "
        "two-σ range), so a rare arm sequence seen a handful of times does not win on noise: every power check and "
        "control above is a violation for each of the seeds 0–9 (`tests/test_audit.py`, marked slow).",
        "* **Your agent.** `banditlab audit NAME --agent module:Factory` (not in this table) searches where the "
        "change is: rounds 0, 1, 2, three log-spaced middle rounds, T/2 and T − 2, each arm, on two 0/1 reward "
        "patterns (35 pairs at T = 1000), and the rounds of the agent's releases if it declares them "
        "(`release_rounds`), choosing the pair on the selection runs and bounding it on fresh ones. It "
        "flags an agent whose actions carry one raw reward of a searched round (arm 0's second reward deciding an "
        "action, or every action following the previous round's reward). Its power line covers the rounds searched "
        "only: a leak at another round, of several rewards only jointly, or only on other reward tables can pass.",
        "",
        "## Details",
        "",
    ]
    for plan, result in results:
        lines += [
            f"**{result.agent}**, {plan.group} changed unit{'s' if plan.group > 1 else ''} "
            f"({_ROLE_TEXT[plan.role]}): {result.neighbours}. Best event: {result.event} ({result.direction}; "
            f"P = {result.p_first:.4g} on D, {result.p_second:.4g} on D′). Power: {result.power.text}"
            + (f" Note: {result.note}." if result.note else ""),
            "",
        ]
    return "\n".join(lines)


def write_figure(results: Sequence[tuple[Planned, AuditResult]], path: Path, pyplot: Callable[[], object]) -> None:
    """Claimed ε (and group × claim for the power checks) against the empirical lower bound with its interval."""
    plt = pyplot()
    n = len(results)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * n + 1.4))  # type: ignore[attr-defined]
    for i, (_, result) in enumerate(results):
        y = n - 1 - i
        high = result.interval[1]
        shown = min(high, 8.0) if math.isfinite(high) else 8.0
        ax.plot([result.epsilon_lower, shown], [y, y], color="tab:blue", lw=1.5)
        ax.plot(result.epsilon_lower, y, "o", color="tab:red" if result.verdict == VIOLATION else "tab:blue")
        ax.plot(result.epsilon, y, "|", color="black", ms=12, mew=2)
    labels = [f"{r.agent}" + (f" (G = {p.group})" if p.group > 1 else "") for p, r in results]
    ax.set_yticks(range(n), labels[::-1], fontsize=8)
    ax.set_xlabel("ε: claim (bar), lower bound (dot, red: violation), 95% interval (to 8)")
    ax.set_xlim(0.0, 8.0)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)  # type: ignore[attr-defined]
