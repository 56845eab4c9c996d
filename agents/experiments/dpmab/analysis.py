"""Summaries and figures of ``dp-mab/epsilon`` and ``graph/side-observations``, claims checked with paired CIs.

Analysis is a pure function of the results table. Runs are paired by common random numbers
(run r of every agent and setting reads the same rewards), so every comparison — between two
agents in a setting, one agent in two settings, or a regret ratio — is the t-based 95% interval
of per-run differences (:func:`agents.experiments.core.stats.paired`). Claims are declared as
data in :mod:`agents.experiments.dpmab.settings` and decide themselves on this module's
:class:`~agents.experiments.core.checks.Evidence` table (:mod:`agents.experiments.core.checks`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from agents.experiments.core.claims import (
    Compare,
    Evidence,
    claims_section,
    run_notes,
    se_cell,
    user_claims,
    zero_se_note,
)
from agents.experiments.core.figures import regret_figure as _regret_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import final_regret

LABELS = {"epsilon": "ε", "edge_probability": "p"}


def fmt_setting(s: Mapping[str, Any]) -> str:
    """``ε=…`` / ``p=…, ε=…`` of a setting; ε = ∞ is the non-private column."""
    parts = []
    for key, label in LABELS.items():
        if key in s:
            v = float(s[key])
            parts.append(f"{label}=∞ (non-private)" if math.isinf(v) else f"{label}={v:g}")
    return ", ".join(parts)


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
    lines += run_notes(exp, "through the step API at every setting, same reward draws")
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
    # The claims are about regret at the full horizon (the private agents' exploration epochs and
    # noise bounds take many rounds to pay off): a shorter run that contradicts one says "not yet".
    evidence = Evidence.of_settings(results, exp, key, x_name=LABELS.get(key, key), decided_at=exp.full_horizon)
    compares = [c.check for c in (*exp.claims, *mine) if isinstance(c.check, Compare)]
    if compares:
        lines += ["", "## Paired differences at T (95% CI over runs)", ""]
        lines += ["| setting | " + " | ".join(f"{c.a} − {c.b}" for c in compares) + " |"]
        lines += ["|---|" + "---|" * len(compares)]
        tables = [c.table(evidence, marked=False) for c in compares]
        for i in cols:
            x = float(exp.settings[i][key])
            cells = [t.get(("", c.a, x), "–") for c, t in zip(compares, tables, strict=True)]
            if any(x != "–" for x in cells):
                lines.append(f"| {fmt_setting(exp.settings[i])} | " + " | ".join(cells) + " |")
        lines.append("")
    scale = exp.scale_words()
    lines += claims_section(exp.claims, evidence, note=exp.scale_note(), title="Claims", scale=scale)
    lines += claims_section(mine, evidence, title="Your agents against the built-in ones", scale=scale)
    return "\n".join(lines)


def figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Cumulative regret curves (mean ± s.e. band), one panel per setting."""
    _regret_figure(results, exp, path, title=fmt_setting)
