"""Summaries and figures of the privacy-budget experiments (budget paper §7.2)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.experiments.analysis import mean_ci
from agents.experiments.budget import ALPHA_GRIDS, PAPER_BEST_ALPHA
from agents.experiments.registry import Experiment


def _final(rows: Sequence[dict[str, Any]], horizon: int) -> dict[tuple[str, str, float], dict[int, float]]:
    """(scenario, agent, α) → {user: U(T)}."""
    out: dict[tuple[str, str, float], dict[int, float]] = defaultdict(dict)
    for r in rows:
        if int(r["t"]) == horizon:
            out[(str(r["scenario"]), str(r["agent"]), float(r["alpha"]))][int(r["user"])] = float(r["payoff"])
    return out


def _paired(a: dict[int, float], b: dict[int, float]) -> tuple[float, float]:
    users = sorted(set(a) & set(b))
    m, _, h = mean_ci([a[u] - b[u] for u in users])
    return m, h


def _header(exp: Experiment, rows: Sequence[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    by_scenario: dict[str, set[int]] = defaultdict(set)
    gammas: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        by_scenario[str(r["scenario"])].add(int(r["user"]))
        gammas[str(r["scenario"])][str(r["agent"])] = float(r["gamma"])
    data = meta.get("data") or {}
    lines = [
        f"# `{exp.id}`: {exp.title}",
        "",
        f"Source: {exp.source}. T = {exp.horizon:,} rounds per user; base seed {meta.get('seed', 0)}; "
        f"wall time {meta.get('seconds', math.nan):.1f} s on {meta.get('jobs', 1)} process(es).",
        "",
    ]
    for scenario, users in sorted(by_scenario.items()):
        lines.append(
            f"- {scenario}: data `{data.get(scenario, 'synthetic default')}`, {len(users)} users, γ: "
            + ", ".join(f"{a} {g:g}" for a, g in gammas[scenario].items())
            + "."
        )
    lines += [
        "",
        "Each user × configuration is one copy of the scenario's vector env; copies of a user share its noise "
        "seed (common random numbers). U(T) is a user's cumulative payoff μ = (γR − L)/(γ+1) + 1 over T rounds; "
        "the env documents its open choices (privacy-loss model, unit of ε, thresholds).",
        "",
    ]
    return lines


def _alpha_summary(rows: Sequence[dict[str, Any]], exp: Experiment, lines: list[str]) -> None:
    final = _final(rows, exp.horizon)
    for scenario, agent in sorted({(k[0], k[1]) for k in final}):
        grid = [a for a in ALPHA_GRIDS[(scenario, agent)] if (scenario, agent, a) in final]
        stats = [mean_ci(list(final[(scenario, agent, a)].values())) for a in grid]
        best = grid[int(np.argmax([s[0] for s in stats]))]
        paper = PAPER_BEST_ALPHA[(scenario, agent)]
        lines += [f"## {scenario}, {agent}", "", "| α | U(T) mean ± s.e. |", "|---|---|"]
        lines += [f"| {a:g}{' (ours best)' if a == best else ''}{' (paper best)' if a == paper else ''} | "
                  f"{m:,.1f} ± {se:,.1f} |" for a, (m, se, _) in zip(grid, stats, strict=True)]  # fmt: skip
        nearest = min(grid, key=lambda a: abs(a - paper))
        diff, half = _paired(final[(scenario, agent, best)], final[(scenario, agent, nearest)])
        peak_inside = grid.index(best) not in (0, len(grid) - 1)
        lines += [
            "",
            f"Our best α = {best:g}; paper's best α = {paper:g}"
            + ("" if nearest == paper else f" (not on the paper's own grid; nearest grid value {nearest:g})")
            + f". U(T) at our best minus at α = {nearest:g}: {diff:,.1f} ± {half:,.1f} (paired 95% CI over users). "
            f"Peak inside the grid (rise then fall): {'yes' if peak_inside else 'no'}.",
            "",
        ]


def _versus(
    rows: Sequence[dict[str, Any]], exp: Experiment, lines: list[str], pairs: Sequence[tuple[str, str]]
) -> None:
    final = _final(rows, exp.horizon)
    by_agent: dict[tuple[str, str], dict[int, float]] = {(k[0], k[1]): v for k, v in final.items()}
    regret: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if int(r["t"]) == exp.horizon:
            regret[(str(r["scenario"]), str(r["agent"]))].append(float(r["regret"]))
    for scenario in sorted({k[0] for k in by_agent}):
        agents = [a for a in exp.agents if (scenario, a) in by_agent]
        lines += [f"## {scenario}", "", "| agent | α | U(T) mean ± s.e. | U(T)/T | estimated regret (MC oracle) |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for a in agents:
            m, se, _ = mean_ci(list(by_agent[(scenario, a)].values()))
            alpha = PAPER_BEST_ALPHA.get((scenario, a))
            shown = "–" if alpha is None else f"{alpha:g}"
            lines.append(
                f"| {a} | {shown} | {m:,.1f} ± {se:,.1f} | {m / exp.horizon:.4f} | "
                f"{np.mean(regret[(scenario, a)]):,.1f} |"
            )
        lines += ["", "| paired difference (95% CI over users) | value | claim holds |", "|---|---|---|"]
        for a, b in pairs:
            if (scenario, a) in by_agent and (scenario, b) in by_agent:
                d, h = _paired(by_agent[(scenario, a)], by_agent[(scenario, b)])
                holds = "yes" if d - h > 0 else ("≥ 0 in point estimate" if d >= 0 else "no")
                lines.append(f"| {a} − {b} | {d:,.1f} ± {h:,.1f} | {holds} |")
        lines.append("")


def budget_summary(rows: Sequence[dict[str, Any]], exp: Experiment, meta: dict[str, Any]) -> str:
    """Markdown summary of a budget experiment with the paper's best α and orderings beside ours."""
    lines = _header(exp, rows, meta)
    lines += ["Paper's claims: " + " ".join(f"*{c}*" for c in exp.claims), ""]
    figure = exp.options.get("figure")
    if figure == "alpha":
        _alpha_summary(rows, exp, lines)
    elif figure == "baselines":
        _versus(rows, exp, lines, [("UCB", "FixHalf"), ("UCB", "Random"), ("SM-UCB", "FixHalf"), ("SM-UCB", "Random")])
    else:
        _versus(rows, exp, lines, [("SM-UCB", "UCB")])
    return "\n".join(lines)


def budget_figure(rows: Sequence[dict[str, Any]], exp: Experiment, path: Path) -> None:
    """α sweep: U(T) against α; otherwise mean cumulative payoff curves, one panel per scenario."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = sorted({str(r["scenario"]) for r in rows})
    fig, axes = plt.subplots(1, len(scenarios), figsize=(5.5 * len(scenarios), 4), squeeze=False)
    for ax, scenario in zip(axes[0], scenarios, strict=True):
        if exp.options.get("figure") == "alpha":
            final = _final(rows, exp.horizon)
            for agent in exp.agents:
                grid = [a for a in ALPHA_GRIDS[(scenario, agent)] if (scenario, agent, a) in final]
                stats = [mean_ci(list(final[(scenario, agent, a)].values())) for a in grid]
                ax.errorbar(grid, [s[0] for s in stats], yerr=[s[1] for s in stats], marker="o", ms=3, label=agent)
                ax.axvline(PAPER_BEST_ALPHA[(scenario, agent)], ls=":", color=ax.lines[-1].get_color())
            ax.set_xscale("log")
            ax.set_xlabel("α (dotted: paper's best)")
            ax.set_ylabel("U(T), mean over users")
        else:
            curves: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
            for r in rows:
                if r["scenario"] == scenario:
                    curves[str(r["agent"])][int(r["t"])].append(float(r["payoff"]))
            for agent in exp.agents:
                ts = np.array(sorted(curves[agent]))
                if ts.size:
                    m = np.array([np.mean(curves[agent][t]) for t in ts])
                    ax.plot(ts, m, label=agent)
            ax.set_xlabel("round t")
            ax.set_ylabel("cumulative payoff, mean over users")
        ax.set_title(scenario)
        ax.legend(fontsize=8)
    fig.suptitle(f"{exp.id} ({exp.source})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
