"""Summaries and figures of the gap paper's experiments, with its claims checked next to our numbers.

Analysis is a pure function of the results table: the tasks never format. Intervals: Wilson 95%
intervals for proportions, t-based 95% intervals for means and for paired differences (runs are
paired by common random numbers). Claims are declared once, as data, in
:mod:`agents.experiments.gap.settings`; the prose and the ✓/✗ marks below come from them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.core.claims import (
    Compare,
    Evidence,
    agents_named,
    claims_section,
    run_notes,
    se_cell,
    user_claims,
    why_link,
    zero_se_note,
)
from agents.experiments.core.figures import pyplot, save_figure
from agents.experiments.core.figures import regret_figure as _regret_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import final_regret, wilson

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
    lines += run_notes(exp, "through the step API, same instances and reward draws")
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


def privacy_evidence(results: pd.DataFrame, exp: Experiment, agent: str) -> Evidence:
    """``agent``'s identical-sequence indicator per run, one curve per setting (x = its index)."""
    rows = results[results["agent"].astype(str) == agent]
    params = ("gap", "edge_probability", "epsilon")
    frame = pd.DataFrame(
        {
            "group": "",
            "agent": agent,
            "x": rows["setting"].astype(float),
            "unit": rows["run"],
            "t": 0,
            "value": rows["identical"].astype(float),
            "name": [fmt_setting(exp.settings[int(i)]) for i in rows["setting"]],
            **{k: [exp.settings[int(i)][k] for i in rows["setting"]] for k in params},
        }
    )
    return Evidence.of(frame, param_columns=params, labels=PARAM_LABELS, below_full_scale=exp.below_full_scale)


def _pooled(table: Sequence[dict[str, Any]], key: str, value: float) -> tuple[int, int]:
    sub = [r for r in table if r[key] == value]
    return sum(r["identical"] for r in sub), sum(r["n"] for r in sub)


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
    lines += claims_section(
        exp.claims,
        privacy_evidence(results, exp, exp.all_agents[0]),
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
    save_figure(fig, path, dpi=120)


# ---------------------------------------------------------------------------------- regret


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
    varied = exp.varied or "gap"
    evidence = Evidence.of_settings(results, exp, varied)
    if table_checks:
        lines += ["", "## Paired differences at T (95% CI over runs)", ""]
        tables = [c.table(evidence, marked=c in compares) for c in table_checks]
        heads = []
        for c, column in zip(table_checks, tables, strict=True):
            why = next((cl.why for cl in exp.claims if cl.check == c), "")
            link = c in compares and why and any(not v.endswith("✓") for v in column.values())
            heads.append(f"{c.a} − {c.b}{f' {why_link(why)}' if link else ''}")
        lines += ["| setting | " + " | ".join(heads) + " |", "|---|" + "---|" * len(table_checks)]
        for s in exp.settings:
            row = [t[("", c.a, float(s[varied]))] for c, t in zip(table_checks, tables, strict=True)]
            lines.append(f"| {fmt_setting(s)} | " + " | ".join(row) + " |")
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
    lines += claims_section(claims, evidence, note=exp.scale_note(), scale=scale)
    mine = user_claims([u.name for u in exp.user_agents], exp.agents, "<")
    lines += claims_section(mine, evidence, title="Your agents against the paper's", scale=scale)
    return "\n".join(lines)


def regret_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Cumulative regret curves (mean ± s.e. band), one panel per setting."""
    _regret_figure(results, exp, path, title=fmt_setting)
