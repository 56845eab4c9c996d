"""Summaries and figures of the gap paper's experiments, with its claims checked next to our numbers.

Analysis is a pure function of the results table: the tasks never format. Intervals: Wilson 95%
intervals for proportions, t-based 95% intervals for means and for paired differences (runs are
paired by common random numbers). Claims are declared once, as data, in
:mod:`agents.experiments.gap.settings`; the prose and the ✓/✗ marks below come from them.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.core.claims import (
    AtLeast,
    Claim,
    Compare,
    Gap,
    Trend,
    Trends,
    Verdict,
    agents_named,
    claims_section,
    run_notes,
    se_cell,
    settle,
    sided,
    tally,
    user_claims,
    why_link,
    zero_se_note,
)
from agents.experiments.core.figures import pyplot
from agents.experiments.core.figures import regret_figure as _regret_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import Z95, final_regret, mean_ci, paired, wilson

PARAM_LABELS = {"gap": "Δmin", "edge_probability": "p", "epsilon": "ε"}


def fmt_setting(s: Mapping[str, Any]) -> str:
    """``Δmin=…, p=…, ε=…`` of a setting."""
    return f"Δmin={s['gap']:g}, p={s['edge_probability']:g}, ε={s['epsilon']:g}"


def _header(exp: Experiment, meta: Mapping[str, Any]) -> list[str]:
    lines = [
        f"# `{exp.id}`: {exp.title}",
        "",
        f"Source: {exp.source}. Scale: T = {exp.horizon:,}, {exp.runs} runs per setting, K = {exp.n_arms}, "
        f"base seed {meta.get('seed', 0)}. "
        f"Wall time {meta.get('seconds', math.nan):.1f} s on {meta.get('jobs', 1)} process(es).",
        "",
        "Our choices: a fresh Erdős–Rényi graph per run (`instance_seed` = run index, shared by all agents "
        "and settings); common random numbers (run r of every agent and setting reads the same table of "
        "uniforms, mapped to rewards by the truncated normal's inverse CDF); δ = 1/T; regret uses the true "
        "means of the truncated normals (0.9 → 0.8712), not the location parameters.",
        "",
    ]
    how = "through the step API, same instances and reward draws"
    lines += run_notes(exp.overrides, [u.name for u in exp.user_agents], how)
    return lines


# --------------------------------------------------------------------------------- privacy


def privacy_table(results: pd.DataFrame, exp: Experiment, agent: str | None = None) -> list[dict[str, Any]]:
    """Per setting: identical-sequence ratio of ``agent`` (default: the first) with its Wilson interval."""
    agent = agent or exp.all_agents[0]
    by: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results.to_dict("records"):
        if str(r["agent"]) == agent:
            by[int(r["setting"])].append(r)
    out = []
    for i, s in enumerate(exp.settings):
        rs = by.get(i, [])
        n = len(rs)
        same = sum(bool(r["identical"]) for r in rs)
        lo, hi = wilson(same, n)
        paper = exp.paper.get((s["gap"], s["edge_probability"], s["epsilon"]))
        out.append(
            {
                **s,
                "n": n,
                "identical": same,
                "ratio": same / n if n else math.nan,
                "lo": lo,
                "hi": hi,
                "observed": sum(bool(r["entry_observed"]) for r in rs) / n if n else math.nan,
                "paper": paper,
                "paper_in_ci": paper is not None and lo <= paper / 100 <= hi,
            }
        )
    return out


def _pooled(table: Sequence[dict[str, Any]], key: str, value: float) -> tuple[int, int]:
    sub = [r for r in table if r[key] == value]
    return sum(r["identical"] for r in sub), sum(r["n"] for r in sub)


def privacy_verdict(claim: Claim, table: Sequence[dict[str, Any]], below_full_scale: bool = False) -> Verdict:
    """Evaluate a privacy claim (:class:`AtLeast` or :class:`Trends`) on a privacy table.

    Below full scale a ratio whose Wilson interval still reaches the claimed value leaves the
    claim undecided rather than failed.
    """
    check = claim.check
    if isinstance(check, AtLeast):
        lowest = min(table, key=lambda r: r["ratio"])
        where = (
            f"Lowest ratio here: {100 * lowest['ratio']:.0f}% ({fmt_setting(lowest)}, 95% CI "
            f"[{100 * lowest['lo']:.0f}, {100 * lowest['hi']:.0f}])"
        )
        if lowest["lo"] > check.value:
            return Verdict(True, f"{where}: holds.")
        if lowest["ratio"] > check.value:
            return Verdict(None, f"{where}: holds in point estimate only.")
        if below_full_scale and lowest["hi"] >= check.value:
            reach = f"{100 * check.value:.0f}%"
            return Verdict(None, f"{where}: below in point estimate, but the interval reaches {reach}.")
        return Verdict(False, f"{where}: does not hold.")
    if isinstance(check, Trends):
        parts: list[str] = []
        outcomes: list[bool | None] = []
        for key, direction in check.directions:
            values = sorted({r[key] for r in table})
            lo_v, hi_v = values[0], values[-1]
            (s_lo, n_lo), (s_hi, n_hi) = _pooled(table, key, lo_v), _pooled(table, key, hi_v)
            ci_lo, ci_hi = wilson(s_lo, n_lo), wilson(s_hi, n_hi)
            small, large = (ci_lo, ci_hi) if direction == "larger" else (ci_hi, ci_lo)
            if small[1] < large[0]:
                outcomes.append(True)
                word = "supported"
            elif large[1] < small[0]:
                outcomes.append(False)
                word = "reversed"
            else:
                outcomes.append(None)
                word = "not decided (intervals overlap)"
            parts.append(
                f"{PARAM_LABELS.get(key, key)} {lo_v:g} → {hi_v:g}: "
                f"{100 * s_lo / max(n_lo, 1):.1f}% → {100 * s_hi / max(n_hi, 1):.1f}%, {word}"
            )
        holds = False if False in outcomes else (True if all(outcomes) else None)
        return Verdict(holds, "; ".join(parts) + " (extreme values pooled over the other parameters, Wilson 95% CIs).")
    raise TypeError(f"a privacy claim must be AtLeast or Trends, got {type(check).__name__}.")


def privacy_summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown: Table 1 ours vs the paper's, marginal trends, verdicts on the paper's claims."""
    table = privacy_table(results, exp)
    lines = _header(exp, meta)
    noise = (
        "with the same privacy-noise seed (common noise)"
        if exp.options.get("noise", "common") == "common"
        else 'with a fresh privacy-noise seed (the paper only says "run GAP again")'
    )
    lines += [
        "Protocol (paper §5.1): draw a T×K table, run GAP and record a_1..a_T, set one uniformly random "
        f"entry (t, k) to 0, run GAP again {noise}, count identical sequences. "
        '"Identical sequence" is an empirical proxy, not a DP proof (GAP is ε-DP by Theorem 1; '
        "a DP algorithm may still change its output on neighbouring data, with bounded likelihood ratio).",
        "",
        "| Δmin | p | ε | ours % | 95% CI | paper % | paper in CI | entry observed % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['gap']:g} | {r['edge_probability']:g} | {r['epsilon']:g} | {100 * r['ratio']:.0f} | "
            f"[{100 * r['lo']:.0f}, {100 * r['hi']:.0f}] | {r['paper'] if r['paper'] is not None else '–'} | "
            f"{'yes' if r['paper_in_ci'] else 'no'} | {100 * r['observed']:.0f} |"
        )
    n_in = sum(r["paper_in_ci"] for r in table)
    lines += ["", f"The paper's value lies inside our 95% interval in {n_in} of {len(table)} settings.", ""]
    lines += [
        "## Marginal trends (pooled over the other two parameters)",
        "",
        "| parameter | value | ours % | 95% CI | paper mean % |",
        "|---|---|---|---|---|",
    ]
    for key, label in PARAM_LABELS.items():
        for v in sorted({r[key] for r in table}):
            same, n = _pooled(table, key, v)
            lo, hi = wilson(same, n)
            paper = [r["paper"] for r in table if r[key] == v and r["paper"] is not None]
            lines.append(
                f"| {label} | {v:g} | {100 * same / max(n, 1):.1f} | [{100 * lo:.1f}, {100 * hi:.1f}] | "
                f"{np.mean(paper) if paper else math.nan:.1f} |"
            )
    lines.append("")
    small = exp.below_full_scale
    lines += claims_section(
        exp.claims,
        lambda c: privacy_verdict(c, table, small),
        note=exp.scale_note(),
        scale=exp.scale_words("pairs per setting"),
    )
    if exp.user_agents:
        lines += [
            "## User agents: identical arm sequences (%)",
            "",
            "| setting | " + " | ".join(exp.all_agents) + " |",
            "|---|" + "---|" * len(exp.all_agents),
        ]
        tables = {a: privacy_table(results, exp, a) for a in exp.all_agents}
        for i, s in enumerate(exp.settings):
            cells = [
                f"{100 * tables[a][i]['ratio']:.0f} [{100 * tables[a][i]['lo']:.0f}, {100 * tables[a][i]['hi']:.0f}]"
                for a in exp.all_agents
            ]
            lines.append(f"| {fmt_setting(s)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def privacy_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Ours (with Wilson intervals) against the paper's Table 1, one point per setting and agent."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 4))
    table: list[dict[str, Any]] = []
    for j, agent in enumerate(exp.all_agents):
        table = privacy_table(results, exp, agent)
        xs = np.arange(len(table)) + 0.12 * j
        ours = np.array([100 * r["ratio"] for r in table])
        # Wilson bounds can sit a rounding error beyond the ratio (e.g. 100% identical): clip at 0.
        err = np.clip(
            np.array([[100 * (r["ratio"] - r["lo"]) for r in table], [100 * (r["hi"] - r["ratio"]) for r in table]]),
            0,
            None,
        )
        label = "ours (95% Wilson CI)" if not exp.user_agents else f"{agent} (95% Wilson CI)"
        ax.errorbar(xs, ours, yerr=err, fmt="o", label=label)
    x = np.arange(len(table))
    ax.plot(x, [r["paper"] if r["paper"] is not None else np.nan for r in table], "rx", ms=8, label="paper, Table 1")
    ax.set_xticks(
        x, [f"{r['gap']:g}/{r['edge_probability']:g}/{r['epsilon']:g}" for r in table], rotation=70, fontsize=7
    )
    ax.set_xlabel("Δmin / p / ε")
    ax.set_ylabel("identical arm sequences (%)")
    ax.set_title(f"{exp.id}: T={exp.horizon:,}, {exp.runs} pairs per setting")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------- regret


def _mark(outcome: bool | None, below_full_scale: bool) -> str:
    """Table mark of one paired difference: ✓ holds, ✗ fails (at full scale also when undecided), – undecided."""
    if outcome is None and below_full_scale:
        return "–"
    return "✓" if outcome else "✗"


def _trend_steps(exp: Experiment, final: Mapping[tuple[int, str], dict[int, float]], check: Trend) -> list[bool | None]:
    """Per step between consecutive settings, whether the mean moved the claimed way.

    True when it did, False when it moved the other way with a 95% interval excluding 0, None
    when it moved the other way within the interval.
    """
    stats_ = [mean_ci(list(final[(i, check.agent)].values())) for i in range(len(exp.settings))]
    out: list[bool | None] = []
    for (m0, se0, _), (m1, se1, _) in itertools.pairwise(stats_):
        step, half = m1 - m0, Z95 * math.hypot(se0, se1)
        right = step < 0 if check.direction == "decreasing" else step > 0
        out.append(True if right else (None if math.isnan(half) or abs(step) <= half else False))
    return out


def regret_verdict(claim: Claim, exp: Experiment, final: Mapping[tuple[int, str], dict[int, float]]) -> Verdict:
    """Evaluate a regret claim (:class:`Compare`, :class:`Trend` or :class:`Gap`) on the final regrets."""
    check = claim.check
    n = len(exp.settings)
    varied = exp.varied or "gap"
    if isinstance(check, Compare):
        ok = [sided(*paired(final[(i, check.a)], final[(i, check.b)]), check.direction) for i in range(n)]
        return Verdict(
            settle(ok, exp.below_full_scale),
            f"{check.describe()} with a 95% interval excluding 0 in {sum(o is True for o in ok)}/{n} settings"
            f"{tally(ok)}.",
        )
    if isinstance(check, Trend):
        means = [mean_ci(list(final[(i, check.agent)].values()))[0] for i in range(n)]
        steps = _trend_steps(exp, final, check) if exp.below_full_scale else []
        right = [m1 < m0 if check.direction == "decreasing" else m1 > m0 for m0, m1 in itertools.pairwise(means)]
        holds: bool | None = all(right)
        word = "holds" if holds else "does not hold monotonically"
        if not holds and steps and False not in steps:
            holds, word = None, "not monotone, but every reversed step lies within its 95% interval"
        vals = [s[varied] for s in exp.settings]
        return Verdict(
            holds,
            f"{check.agent} = "
            + ", ".join(f"{g:,.0f} ({varied}={v:g})" for g, v in zip(means, vals, strict=True))
            + f": {word}.",
        )
    if isinstance(check, Gap):
        dist = [paired(final[(i, check.a)], final[(i, check.b)])[0] for i in range(n)]
        shown = ", ".join(f"{d:,.0f}" for d in dist)
        if not all(d > 0 for d in dist):
            below = sum(d <= 0 for d in dist)
            return Verdict(
                None,
                f"{check.a} − {check.b} = {shown}: {check.a} is not above {check.b} in {below} of {n} settings, so "
                "there is no distance to shrink.",
                applicable=False,
            )
        holds = bool(np.all(np.diff(dist) < 0))
        return Verdict(
            holds, f"{check.a} − {check.b} = {shown}: {'holds' if holds else 'does not shrink monotonically'}."
        )
    raise TypeError(f"a regret claim must be Compare, Trend or Gap, got {type(check).__name__}.")


def regret_summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown: final regret (mean ± s.e.) per agent and setting; the paper's claims tested."""
    final = final_regret(results, exp.horizon)
    lines = _header(exp, meta)
    agents = exp.all_agents
    lines += [
        f"## Cumulative regret at T = {exp.horizon:,} (mean ± standard error over runs)",
        "",
        "| setting | " + " | ".join(agents) + " |",
        "|---|" + "---|" * len(agents),
    ]
    zero: list[str] = []
    for i, s in enumerate(exp.settings):
        cells = []
        for a in agents:
            cell, exact = se_cell(list(final[(i, a)].values()))
            cells.append(cell)
            zero += [a] if exact else []
        lines.append(f"| {fmt_setting(s)} | " + " | ".join(cells) + " |")
    lines += zero_se_note(zero)
    compares = [c.check for c in exp.claims if isinstance(c.check, Compare)]
    compares = [c for c in compares if c.a in agents and c.b in agents]
    # Each user agent against each built-in agent: the same paired test, no claim of the paper.
    users = [Compare(u.name, b, "<") for u in exp.user_agents for b in exp.agents]
    table_checks = compares + users
    if table_checks:
        lines += ["", "## Paired differences at T (95% CI over runs)", ""]
        rows, heads = [], []
        for c in table_checks:
            marks = [
                _mark(sided(*paired(final[(i, c.a)], final[(i, c.b)]), c.direction), exp.below_full_scale)
                for i in range(len(exp.settings))
            ]
            why = next((cl.why for cl in exp.claims if cl.check == c), "")
            link = f" {why_link(why)}" if c in compares and why and any(m != "✓" for m in marks) else ""
            heads.append(f"{c.a} − {c.b}{link}")
        lines += ["| setting | " + " | ".join(heads) + " |", "|---|" + "---|" * len(table_checks)]
        for i, s in enumerate(exp.settings):
            cells = []
            for c in table_checks:
                m, h = paired(final[(i, c.a)], final[(i, c.b)])
                mark = _mark(sided(m, h, c.direction), exp.below_full_scale) if c in compares else ""
                cells.append(f"{m:,.0f} ± {h:,.0f} {mark}".rstrip())
            rows.append(f"| {fmt_setting(s)} | " + " | ".join(cells) + " |")
        lines += rows
        lines += [
            "",
            "✓ = the difference has the sign the paper claims and its 95% interval excludes 0; a column with a ✗ or "
            "– links to its explanation"
            + ("; – = its interval contains 0 (undecided at this scale)" if exp.below_full_scale else "")
            + ("; user agents' columns are negative where they beat the built-in agent." if users else "."),
            "",
        ]
    claims = [c for c in exp.claims if agents_named(c.check) <= set(agents)]
    scale = exp.scale_words()
    lines += claims_section(claims, lambda c: regret_verdict(c, exp, final), note=exp.scale_note(), scale=scale)
    mine = user_claims([u.name for u in exp.user_agents], exp.agents, "<")
    lines += claims_section(
        mine, lambda c: regret_verdict(c, exp, final), title="Your agents against the paper's", scale=scale
    )
    return "\n".join(lines)


def regret_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Cumulative regret curves (mean ± s.e. band), one panel per setting."""
    _regret_figure(results, exp, path, title=fmt_setting)
