"""Summaries and figures of ``dp-mab/epsilon`` and ``graph/side-observations``, claims checked with paired CIs.

Analysis is a pure function of the results table. Runs are paired by common random numbers
(run r of every agent and setting reads the same rewards), so every comparison — between two
agents in a setting, one agent in two settings, or a regret ratio — is the t-based 95% interval
of per-run differences (:func:`agents.experiments.core.stats.paired`). Claims are declared as
data in :mod:`agents.experiments.dpmab.settings`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from agents.experiments.core.claims import (
    Claim,
    Compare,
    Shape,
    Trend,
    Verdict,
    claims_section,
    run_notes,
    se_cell,
    settle,
    sided,
    tally,
    user_claims,
    zero_se_note,
)
from agents.experiments.core.figures import regret_figure as _regret_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import final_regret, mean_ci, paired

LABELS = {"epsilon": "ε", "edge_probability": "p"}
Final = Mapping[tuple[int, str], dict[int, float]]


def fmt_setting(s: Mapping[str, Any]) -> str:
    """``ε=…`` / ``p=…, ε=…`` of a setting; ε = ∞ is the non-private column."""
    parts = []
    for key, label in LABELS.items():
        if key in s:
            v = float(s[key])
            parts.append(f"{label}=∞ (non-private)" if math.isinf(v) else f"{label}={v:g}")
    return ", ".join(parts)


def _settings_of(exp: Experiment, final: Final, agent: str) -> list[int]:
    """Indices of the settings ``agent`` played (private settings for a private agent), by the varied value."""
    idx = [i for i in range(len(exp.settings)) if final.get((i, agent))]
    key = exp.varied or "epsilon"
    return sorted(idx, key=lambda i: float(exp.settings[i][key]))


def _where(exp: Experiment, agent: str, final: Final, value: float) -> int | None:
    key = exp.varied or "epsilon"
    for i in _settings_of(exp, final, agent):
        if float(exp.settings[i][key]) == value:
            return i
    return None


def verdict(claim: Claim, exp: Experiment, final: Final) -> Verdict:
    """Evaluate a claim on the final regrets; a contradiction below the full horizon leaves it undecided.

    The claims are about regret at the full horizon (the private agents' exploration epochs and
    noise bounds take many rounds to pay off), so a shorter run that contradicts one says "not
    yet", not "false": its verdict is – with the evidence shown.
    """
    out = _verdict(claim, exp, final)
    if out.holds is False and exp.horizon < exp.full_horizon:
        return Verdict(None, f"{out.evidence} Contradicted at T = {exp.horizon:,}; the claim is about T = "
                       f"{exp.full_horizon:,}.")  # fmt: skip
    return out


def _verdict(claim: Claim, exp: Experiment, final: Final) -> Verdict:
    check = claim.check
    small = exp.below_full_scale
    if isinstance(check, Compare):
        idx = [i for i in _settings_of(exp, final, check.a) if final.get((i, check.b))]
        diffs = [paired(final[(i, check.a)], final[(i, check.b)]) for i in idx]
        ok = [sided(m, h, check.direction) for m, h in diffs]
        shown = ", ".join(f"{m:,.0f} ± {h:,.0f}" for m, h in diffs)
        return Verdict(
            settle(ok, small),
            f"{check.a} − {check.b} = {shown}: {check.describe()} with a 95% interval excluding 0 in "
            f"{sum(o is True for o in ok)}/{len(ok)} settings{tally(ok)}.",
        )
    if isinstance(check, Trend):
        idx = _settings_of(exp, final, check.agent)
        key = exp.varied or "epsilon"
        want = "<" if check.direction == "decreasing" else ">"
        steps = [paired(final[(j, check.agent)], final[(i, check.agent)]) for i, j in zip(idx, idx[1:], strict=False)]
        ok = [sided(m, h, want) for m, h in steps]
        means = ", ".join(
            f"{mean_ci(list(final[(i, check.agent)].values()))[0]:,.0f} ({LABELS.get(key, key)}="
            f"{float(exp.settings[i][key]):g})"
            for i in idx
        )
        return Verdict(
            settle(ok, small),
            f"{check.agent} = {means}: each step {check.direction} with a paired 95% interval excluding 0 in "
            f"{sum(o is True for o in ok)}/{len(ok)} steps{tally(ok)}.",
        )
    if isinstance(check, Shape) and check.kind == "ratio":
        d = dict(check.detail)
        a, b, value, bound = str(d["a"]), str(d["b"]), float(d["at"]), float(d["bound"])
        i, j = _where(exp, a, final, value), _where(exp, b, final, float(d.get("b_at", math.inf)))
        if i is None or j is None:
            return Verdict(None, "not run at this setting.", applicable=False)
        ra, rb = final[(i, a)], final[(j, b)]
        runs = sorted(set(ra) & set(rb))
        excess = {r: ra[r] - bound * rb[r] for r in runs}
        m, h = paired(excess, dict.fromkeys(runs, 0.0))
        ma, mb = mean_ci(list(ra.values()))[0], mean_ci(list(rb.values()))[0]
        outcome = sided(m, h, "<")
        return Verdict(
            settle([outcome], small),
            f"{a} / {b} = {ma:,.0f} / {mb:,.0f} = {ma / mb if mb else math.inf:.2f} at ε = {value:g}; "
            f"{a} − {bound:g}·{b} = {m:,.0f} ± {h:,.0f} (paired 95% CI).",
        )
    raise TypeError(f"a claim of {exp.id} must be Compare, Trend or a ratio Shape, got {type(check).__name__}.")


def summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown: final regret (mean ± s.e.) per agent and setting, paired differences, the claims tested."""
    final = final_regret(results, exp.horizon)
    lines = [
        f"# `{exp.id}`: {exp.title}",
        "",
        f"Source: {exp.source}. Scale: T = {exp.horizon:,}, {exp.runs} runs per setting, K = {exp.n_arms}, "
        f"base seed {meta.get('seed', 0)}. Wall time {meta.get('seconds', math.nan):.1f} s on "
        f"{meta.get('jobs', 1)} process(es).",
        "",
        str(exp.options.get("note", "")),
        "",
    ]
    users = [u.name for u in exp.user_agents]
    lines += run_notes(exp.overrides, users, "through the step API at every setting, same reward draws")
    key = exp.varied or "epsilon"
    cols = sorted(range(len(exp.settings)), key=lambda i: float(exp.settings[i][key]))
    lines += [
        f"## Cumulative regret at T = {exp.horizon:,} (mean ± standard error over runs)",
        "",
        "| agent | " + " | ".join(fmt_setting(exp.settings[i]) for i in cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    zero: list[str] = []
    for a in exp.all_agents:
        cells = []
        for i in cols:
            if final.get((i, a)):
                cell, exact = se_cell(list(final[(i, a)].values()))
                cells.append(cell)
                zero += [a] if exact else []
            else:
                cells.append("–")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += zero_se_note(zero)
    # Each user agent against each built-in agent: the same paired differences, no claim of a paper.
    mine = user_claims(users, exp.agents, "<")
    compares = [c.check for c in (*exp.claims, *mine) if isinstance(c.check, Compare)]
    if compares:
        lines += ["", "## Paired differences at T (95% CI over runs)", ""]
        lines += ["| setting | " + " | ".join(f"{c.a} − {c.b}" for c in compares) + " |"]
        lines += ["|---|" + "---|" * len(compares)]
        for i in cols:
            cells = []
            for c in compares:
                if final.get((i, c.a)) and final.get((i, c.b)):
                    m, h = paired(final[(i, c.a)], final[(i, c.b)])
                    cells.append(f"{m:,.0f} ± {h:,.0f}")
                else:
                    cells.append("–")
            if any(x != "–" for x in cells):
                lines.append(f"| {fmt_setting(exp.settings[i])} | " + " | ".join(cells) + " |")
        lines.append("")
    scale = exp.scale_words()
    lines += claims_section(
        exp.claims, lambda c: verdict(c, exp, final), note=exp.scale_note(), title="Claims", scale=scale
    )
    lines += claims_section(
        mine, lambda c: verdict(c, exp, final), title="Your agents against the built-in ones", scale=scale
    )
    return "\n".join(lines)


def figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Cumulative regret curves (mean ± s.e. band), one panel per setting."""
    _regret_figure(results, exp, path, title=fmt_setting)
