"""Summaries and figures from an experiment's tidy results table (a list of row dicts).

Analysis is a pure function of the results (STYLE.md rule 7): the runner never formats.
Intervals: Wilson 95% intervals for proportions, t-based 95% intervals for means and for
paired differences (runs are paired by common random numbers).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from agents.experiments.registry import Experiment

Z95 = 1.959963984540054


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / den
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_ci(x: Sequence[float]) -> tuple[float, float, float]:
    """Mean, standard error and half-width of the t-based 95% interval."""
    a = np.asarray(x, dtype=float)
    if a.size < 2:
        return (float(a.mean()) if a.size else math.nan, math.nan, math.nan)
    se = float(a.std(ddof=1) / math.sqrt(a.size))
    return float(a.mean()), se, float(stats.t.ppf(0.975, a.size - 1) * se)


def _fmt_setting(s: dict[str, float]) -> str:
    return f"Δmin={s['gap']:g}, p={s['edge_probability']:g}, ε={s['epsilon']:g}"


def _header(exp: Experiment, meta: dict[str, Any]) -> list[str]:
    return [
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


# --------------------------------------------------------------------------------- privacy


def privacy_table(rows: Sequence[dict[str, Any]], exp: Experiment) -> list[dict[str, Any]]:
    """Per setting: identical-sequence ratio with its Wilson interval, next to the paper's."""
    by: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
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


def _verdict(row: dict[str, Any]) -> str:
    if row["lo"] > 0.85:
        return "holds"
    return "holds in point estimate" if row["ratio"] > 0.85 else "does not hold"


def privacy_summary(rows: Sequence[dict[str, Any]], exp: Experiment, meta: dict[str, Any]) -> str:
    """Markdown: Table 1 ours vs the paper's, marginal trends, verdicts on the paper's claims."""
    table = privacy_table(rows, exp)
    lines = _header(exp, meta)
    noise = (
        "with the same privacy-noise seed (common noise, EXPERIMENTS.md's protocol)"
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
    for key, label in (("gap", "Δmin"), ("edge_probability", "p"), ("epsilon", "ε")):
        for v in sorted({r[key] for r in table}):
            sub = [r for r in table if r[key] == v]
            same, n = sum(r["identical"] for r in sub), sum(r["n"] for r in sub)
            lo, hi = wilson(same, n)
            paper = [r["paper"] for r in sub if r["paper"] is not None]
            lines.append(
                f"| {label} | {v:g} | {100 * same / max(n, 1):.1f} | [{100 * lo:.1f}, {100 * hi:.1f}] | "
                f"{np.mean(paper) if paper else math.nan:.1f} |"
            )
    lowest = min(table, key=lambda r: r["ratio"])
    lines += [
        "",
        "## The paper's claims",
        "",
        f"- *{exp.claims[0]}* Lowest ratio here: {100 * lowest['ratio']:.0f}% "
        f"({_fmt_setting(lowest)}, 95% CI [{100 * lowest['lo']:.0f}, {100 * lowest['hi']:.0f}]): "
        f"{_verdict(lowest)}.",
        f"- *{exp.claims[1]}* See the marginal table: a trend is supported only where the intervals "
        "of the extreme values do not overlap.",
        "",
    ]
    return "\n".join(lines)


def privacy_figure(rows: Sequence[dict[str, Any]], exp: Experiment, path: Path) -> None:
    """Ours (with Wilson intervals) against the paper's Table 1, one point per setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = privacy_table(rows, exp)
    x = np.arange(len(table))
    ours = np.array([100 * r["ratio"] for r in table])
    # Wilson bounds can sit a rounding error beyond the ratio (e.g. 100% identical): clip at 0.
    err = np.clip(
        np.array([[100 * (r["ratio"] - r["lo"]) for r in table], [100 * (r["hi"] - r["ratio"]) for r in table]]),
        0,
        None,
    )
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.errorbar(x, ours, yerr=err, fmt="o", label="ours (95% Wilson CI)")
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


def _final(rows: Sequence[dict[str, Any]], horizon: int) -> dict[tuple[int, str], dict[int, float]]:
    out: dict[tuple[int, str], dict[int, float]] = defaultdict(dict)
    for r in rows:
        if int(r["t"]) == horizon:
            out[(int(r["setting"]), str(r["agent"]))][int(r["run"])] = float(r["regret"])
    return out


def _paired(a: dict[int, float], b: dict[int, float]) -> tuple[float, float]:
    runs = sorted(set(a) & set(b))
    m, _, h = mean_ci([a[r] - b[r] for r in runs])
    return m, h


def regret_summary(rows: Sequence[dict[str, Any]], exp: Experiment, meta: dict[str, Any]) -> str:
    """Markdown: final regret (mean ± s.e.) per agent and setting; the paper's claims tested."""
    final = _final(rows, exp.horizon)
    lines = _header(exp, meta)
    varied = exp.varied or "gap"
    lines += [
        f"## Cumulative regret at T = {exp.horizon:,} (mean ± standard error over runs)",
        "",
        "| setting | " + " | ".join(exp.agents) + " |",
        "|---|" + "---|" * len(exp.agents),
    ]
    for i, s in enumerate(exp.settings):
        cells = []
        for a in exp.agents:
            m, se, _ = mean_ci(list(final[(i, a)].values()))
            cells.append(f"{m:,.0f} ± {se:,.0f}")
        lines.append(f"| {_fmt_setting(s)} | " + " | ".join(cells) + " |")
    lines += ["", "## The paper's claims, tested by paired differences (95% CI over runs)", ""]
    checks = (("GAP", "DPSE", "<"), ("GAP", "AAE", "<"), ("GAPU", "GAP", ">"), ("GAP", "AlphaSample", ">"))
    lines += ["| setting | " + " | ".join(f"{a} − {b}" for a, b, _ in checks) + " |", "|---|" + "---|" * len(checks)]
    verdicts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for i, s in enumerate(exp.settings):
        cells = []
        for a, b, sign in checks:
            m, h = _paired(final[(i, a)], final[(i, b)])
            ok = (m + h < 0) if sign == "<" else (m - h > 0)
            verdicts[(a, b)].append(ok)
            cells.append(f"{m:,.0f} ± {h:,.0f} {'✓' if ok else '✗'}")
        lines.append(f"| {_fmt_setting(s)} | " + " | ".join(cells) + " |")

    def count(a: str, b: str) -> str:
        v = verdicts[(a, b)]
        return f"{sum(v)}/{len(v)} settings"

    lines += [
        "",
        "✓ = the difference has the sign the paper claims and its 95% interval excludes 0.",
        "",
        f"- *GAP clearly below DPSE*: {count('GAP', 'DPSE')}; *below AAE*: {count('GAP', 'AAE')}.",
        f"- *GAPU above GAP*: {count('GAPU', 'GAP')}.",
        f"- *GAP above AlphaSample*: {count('GAP', 'AlphaSample')}.",
    ]
    gap_means = [mean_ci(list(final[(i, "GAP")].values()))[0] for i in range(len(exp.settings))]
    dist = [_paired(final[(i, "GAP")], final[(i, "AlphaSample")])[0] for i in range(len(exp.settings))]
    vals = [s[varied] for s in exp.settings]
    if all(d > 0 for d in dist):
        distance = " → " + ("holds" if all(np.diff(dist) < 0) else "does not hold monotonically")
    else:
        below = sum(d <= 0 for d in dist)
        distance = f" → not applicable: GAP is not above AlphaSample in {below} of {len(dist)} settings"
    lines += [
        f"- *GAP's regret shrinks as {varied} grows*: GAP = "
        + ", ".join(f"{g:,.0f} ({varied}={v:g})" for g, v in zip(gap_means, vals, strict=True))
        + f" → {'holds' if all(np.diff(gap_means) < 0) else 'does not hold monotonically'}.",
        "- *Distance GAP − AlphaSample shrinks*: " + ", ".join(f"{d:,.0f}" for d in dist) + distance + ".",
        "",
    ]
    return "\n".join(lines)


def regret_figure(rows: Sequence[dict[str, Any]], exp: Experiment, path: Path) -> None:
    """Cumulative regret curves (mean ± s.e. band), one panel per setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves: dict[tuple[int, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        curves[(int(r["setting"]), str(r["agent"]))][int(r["t"])].append(float(r["regret"]))
    n = len(exp.settings)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.8), sharey=False, squeeze=False)
    for i, s in enumerate(exp.settings):
        ax = axes[0, i]
        for a in exp.agents:
            pts = curves[(i, a)]
            ts = np.array(sorted(pts))
            m = np.array([np.mean(pts[t]) for t in ts])
            se = np.array([np.std(pts[t], ddof=1) / math.sqrt(len(pts[t])) if len(pts[t]) > 1 else 0.0 for t in ts])
            ax.plot(ts, m, label=a)
            ax.fill_between(ts, m - se, m + se, alpha=0.25)
        ax.set_title(_fmt_setting(s), fontsize=9)
        ax.set_xlabel("round t")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        if i == 0:
            ax.set_ylabel("cumulative regret")
            ax.legend(fontsize=8)
    fig.suptitle(f"{exp.id} ({exp.source}); {exp.runs} runs, mean ± s.e.", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


SUMMARIES = {"privacy": (privacy_summary, privacy_figure), "regret": (regret_summary, regret_figure)}
