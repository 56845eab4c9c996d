"""Summaries and figures of the privacy-budget experiments (budget paper §7.2), claims checked as data."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.budget.paper import ALPHA_GRIDS, PAPER_BEST_ALPHA
from agents.experiments.core.claims import (
    Compare,
    Evidence,
    agents_named,
    claims_section,
    run_notes,
    user_claims,
)
from agents.experiments.core.figures import pyplot, save_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import mean_ci, paired

Final = dict[tuple[str, str, float], dict[int, float]]


def _final(rows: Sequence[Mapping[str, Any]], horizon: int) -> Final:
    """(scenario, agent, α) → {user: U(T)}."""
    out: Final = defaultdict(dict)
    for r in rows:
        if int(r["t"]) == horizon:
            out[(str(r["scenario"]), str(r["agent"]), float(r["alpha"]))][int(r["user"])] = float(r["payoff"])
    return out


def _by_agent(final: Final) -> dict[tuple[str, str], dict[int, float]]:
    """(scenario, agent) → {user: U(T)} for agents run at one α (comparisons)."""
    return {(k[0], k[1]): v for k, v in final.items()}


def _grid(final: Final, scenario: str, agent: str) -> list[float]:
    return [a for a in ALPHA_GRIDS.get((scenario, agent), ()) if (scenario, agent, a) in final]


def _header(exp: Experiment, rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
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
        "seed (common random numbers), and agents are seeded from an independent stream, never with an env's "
        "seed. U(T) is a user's cumulative payoff μ = (γR − L)/(γ+1) + 1 over T rounds; "
        "the env documents its open choices (privacy-loss model, unit of ε, thresholds).",
        "",
    ]
    lines += run_notes(exp, "through the step API, same users and reward draws, UCB's γ")
    return lines


def _alpha_tables(final: Final, exp: Experiment, lines: list[str]) -> None:
    for scenario, agent in sorted({(k[0], k[1]) for k in final}):
        grid = _grid(final, scenario, agent)
        if not grid:
            continue
        stats = [mean_ci(list(final[(scenario, agent, a)].values())) for a in grid]
        best = grid[int(np.argmax([s[0] for s in stats]))]
        paper = PAPER_BEST_ALPHA[(scenario, agent)]
        lines += [f"## {scenario}, {agent}", "", "| α | U(T) mean ± s.e. |", "|---|---|"]
        lines += [
            f"| {a:g}{' (ours best)' if a == best else ''}{' (paper best)' if a == paper else ''} | "
            f"{m:,.1f} ± {se:,.1f} |"
            for a, (m, se, _) in zip(grid, stats, strict=True)
        ]
        lines.append("")
    users = [(k[0], k[1]) for k in final if k[1] in {u.name for u in exp.user_agents}]
    if users:
        lines += ["## User agents", "", "| scenario | agent | U(T) mean ± s.e. |", "|---|---|---|"]
        for scenario, agent in sorted(users):
            m, se, _ = mean_ci(list(_by_agent(final)[(scenario, agent)].values()))
            lines.append(f"| {scenario} | {agent} | {m:,.1f} ± {se:,.1f} |")
        lines.append("")


def evidence(rows: Sequence[Mapping[str, Any]], exp: Experiment) -> Evidence:
    """The claims' table: U(T) per user; x = α in an α sweep (the paper's grid only), else one x per agent."""
    sweep = exp.options.get("figure") == "alpha"
    last = [r for r in rows if int(r["t"]) == exp.horizon]
    if sweep:
        last = [r for r in last if float(r["alpha"]) in ALPHA_GRIDS.get((str(r["scenario"]), str(r["agent"])), ())]
    frame = pd.DataFrame(
        {
            "group": [str(r["scenario"]) for r in last],
            "agent": [str(r["agent"]) for r in last],
            "x": [float(r["alpha"]) if sweep else 0.0 for r in last],
            "unit": [int(r["user"]) for r in last],
            "t": exp.horizon,
            "value": [float(r["payoff"]) for r in last],
        },
        columns=["group", "agent", "x", "unit", "t", "value"],
    )
    options = {"below_full_scale": exp.below_full_scale, "horizon": exp.horizon}
    return Evidence.of(frame, x_name="α", unit="users", fmt=",.1f", **options)


def _versus(rows: Sequence[Mapping[str, Any]], final: Final, exp: Experiment, lines: list[str]) -> None:
    by_agent = _by_agent(final)
    regret: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if int(r["t"]) == exp.horizon:
            regret[(str(r["scenario"]), str(r["agent"]))].append(float(r["regret"]))
    pairs = [(c.check.a, c.check.b) for c in exp.claims if isinstance(c.check, Compare)]
    pairs += [(u.name, b) for u in exp.user_agents for b in exp.agents]
    for scenario in sorted({k[0] for k in by_agent}):
        agents = [a for a in exp.all_agents if (scenario, a) in by_agent]
        lines += [
            f"## {scenario}",
            "",
            "| agent | α | U(T) mean ± s.e. | U(T)/T | estimated regret (MC oracle) |",
            "|---|---|---|---|---|",
        ]
        for a in agents:
            m, se, _ = mean_ci(list(by_agent[(scenario, a)].values()))
            alpha = PAPER_BEST_ALPHA.get((scenario, a))
            shown = "–" if alpha is None else f"{alpha:g}"
            lines.append(
                f"| {a} | {shown} | {m:,.1f} ± {se:,.1f} | {m / exp.horizon:.4f} | "
                f"{np.mean(regret[(scenario, a)]):,.1f} |"
            )
        lines += ["", "| paired difference (95% CI over users) | value | above |", "|---|---|---|"]
        for a, b in pairs:
            if (scenario, a) in by_agent and (scenario, b) in by_agent:
                d, h = paired(by_agent[(scenario, a)], by_agent[(scenario, b)])
                holds = "yes" if d - h > 0 else ("≥ 0 in point estimate" if d >= 0 else "no")
                lines.append(f"| {a} − {b} | {d:,.1f} ± {h:,.1f} | {holds} |")
        lines.append("")


def budget_summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown summary of a budget experiment with the paper's best α and orderings beside ours."""
    rows = results.to_dict("records")
    final = _final(rows, exp.horizon)
    lines = _header(exp, rows, meta)
    if exp.options.get("figure") == "alpha":
        _alpha_tables(final, exp, lines)
    else:
        _versus(rows, final, exp, lines)
    claims = [c for c in exp.claims if agents_named(c.check) <= set(exp.all_agents)]
    users = sorted({len(v) for v in final.values()})  # the paired intervals are over users
    shown = "–".join(str(n) for n in dict.fromkeys((users[0], users[-1]))) if users else "0"
    scale = f"{shown} users per scenario, T = {exp.horizon:,}"
    ev = evidence(rows, exp)
    lines += claims_section(claims, ev, note=exp.scale_note(), scale=scale)
    if exp.options.get("figure") != "alpha":  # in the α sweep the built-in agents have many α: see the tables
        mine = user_claims([u.name for u in exp.user_agents], exp.agents, ">")
        lines += claims_section(mine, ev, title="Your agents against the paper's", scale=scale)
    return "\n".join(lines)


def budget_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """α sweep: U(T) against α (user agents as horizontal lines); otherwise mean cumulative payoff curves."""
    plt = pyplot()
    rows = results.to_dict("records")
    final = _final(rows, exp.horizon)
    scenarios = sorted({str(r["scenario"]) for r in rows})
    fig, axes = plt.subplots(1, len(scenarios), figsize=(5.5 * len(scenarios), 4), squeeze=False)
    for ax, scenario in zip(axes[0], scenarios, strict=True):
        if exp.options.get("figure") == "alpha":
            for agent in exp.agents:
                grid = _grid(final, scenario, agent)
                stats = [mean_ci(list(final[(scenario, agent, a)].values())) for a in grid]
                ax.errorbar(grid, [s[0] for s in stats], yerr=[s[1] for s in stats], marker="o", ms=3, label=agent)
                ax.axvline(PAPER_BEST_ALPHA[(scenario, agent)], ls=":", color=ax.lines[-1].get_color())
            for u in exp.user_agents:
                values = _by_agent(final).get((scenario, u.name))
                if values:
                    ax.axhline(float(np.mean(list(values.values()))), ls="--", label=u.name, color="k")
            ax.set_xscale("log")
            ax.set_xlabel("α (dotted: paper's best)")
            ax.set_ylabel("U(T), mean over users")
        else:
            curves: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
            for r in rows:
                if r["scenario"] == scenario:
                    curves[str(r["agent"])][int(r["t"])].append(float(r["payoff"]))
            for agent in exp.all_agents:
                ts = np.array(sorted(curves[agent]))
                if ts.size:
                    ax.plot(ts, np.array([np.mean(curves[agent][t]) for t in ts]), label=agent)
            ax.set_xlabel("round t")
            ax.set_ylabel("cumulative payoff, mean over users")
        ax.set_title(scenario)
        ax.legend(fontsize=8)
    fig.suptitle(f"{exp.id} ({exp.source})", fontsize=10)
    save_figure(fig, path)
