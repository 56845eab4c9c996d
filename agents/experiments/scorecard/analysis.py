"""The scorecard's analysis: scores with 95% intervals, leaders, audits, privacy cost, speed; two figures.

Pure functions of the results table (``results.csv``). A seed's score on a problem is
``1 − R_T/U_T`` (:mod:`agents.experiments.scorecard.suite`); the card shows the mean over seeds with
the t-based 95% interval (:func:`agents.experiments.core.stats.mean_ci`), clipped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.core.figures import pyplot, save_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import mean_ci
from agents.experiments.scorecard.panel import PANEL, SPEED_REFERENCE
from agents.experiments.scorecard.suite import BY_NAME, PROBLEMS, SUITE_VERSION

#: Non-private scores below this give no privacy-cost ratio (n/a).
MIN_BASE = 0.05
#: Columns of :func:`scores`.
SCORE_COLUMNS = ("suite", "problem", "agent", "score", "ci_low", "ci_high", "raw_mean", "seeds", "horizon")


def _clip(x: float) -> float:
    return x if math.isnan(x) else min(1.0, max(0.0, x))


def scores(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (problem, agent) played: the mean score over seeds, its 95% interval (clipped to [0, 1])."""
    played = results[results["problem"] != "audit"] if "problem" in results else results.iloc[0:0]
    rows = []
    if len(played):
        final = played[played["t"] == played["horizon"]]
        for (problem, agent), g in final.groupby(["problem", "agent"], sort=False):
            per_seed = 1.0 - g["regret"].to_numpy(float) / g["uniform"].to_numpy(float)
            mean, _, half = mean_ci(per_seed.tolist())
            rows.append(
                {
                    "suite": SUITE_VERSION,
                    "problem": problem,
                    "agent": agent,
                    "score": _clip(mean),
                    "ci_low": _clip(mean - half),
                    "ci_high": _clip(mean + half),
                    "raw_mean": mean,
                    "seeds": len(per_seed),
                    "horizon": int(g["horizon"].iloc[0]),
                }
            )
    frame = pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
    if len(frame):
        order = {p.name: i for i, p in enumerate(PROBLEMS)}
        frame = _ranked(frame.assign(_order=frame["problem"].map(order)), first=["_order"]).drop(columns="_order")
    return frame.reset_index(drop=True)


def _ranked(frame: pd.DataFrame, first: list[str] | None = None) -> pd.DataFrame:
    """``frame`` best first: by the unclipped mean (``raw_mean``), then the agent's name, after the ``first`` columns.

    The clipped scores of agents beyond uniform play's regret (or beyond the best fixed arm) tie at
    0 (or 1); their unclipped means still order them, and the name breaks exact ties, so the order
    is the same whatever order the results arrived in.
    """
    keys = [*(first or []), "raw_mean", "score", "agent"]
    ascending = [*([True] * len(first or [])), False, False, True]
    return frame.sort_values(keys, ascending=ascending, kind="mergesort", na_position="last")


def speeds(results: pd.DataFrame) -> dict[str, float]:
    """Agent-steps per second of each agent over the problems it played (one timing per problem)."""
    played = results[results["problem"] != "audit"]
    timing = played.drop_duplicates(["problem", "agent"])[["agent", "seconds", "steps"]]
    out: dict[str, float] = {}
    for agent, g in timing.groupby("agent"):
        seconds = float(g["seconds"].sum())
        out[str(agent)] = float(g["steps"].sum()) / seconds if seconds > 0 else math.inf
    return out


def _cell(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "n/a"
    return f"{row['score']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def leaders(table: pd.DataFrame, problem: str, n: int = 3) -> list[dict[str, Any]]:
    """The ``n`` built-in agents with the highest mean score on ``problem`` (Random, uniform play, left out).

    Ranked by the unclipped mean (:func:`_ranked`), so agents the clip to [0, 1] ties keep their order.
    """
    g = table[(table["problem"] == problem) & table["agent"].isin([a for a in PANEL if a != "Random"])]
    return [dict(r) for _, r in _ranked(g).head(n).iterrows()]


def _row(table: pd.DataFrame, problem: str, agent: str) -> dict[str, Any] | None:
    g = table[(table["problem"] == problem) & (table["agent"] == agent)]
    return None if g.empty else dict(g.iloc[0])


def non_private_of(exp: Experiment, agent: str, base: str | None = None) -> str:
    """The agent whose non-private score on ``base`` is the privacy cost's denominator (docs/score.md).

    A built-in's non-private version; a user agent's declared ``non_private``, else UCB on a
    context-free base problem and LinUCB on a contextual one (movielens).
    """
    if agent in PANEL:
        return PANEL[agent].non_private or agent
    declared = exp.options.get("non_private", {}).get(agent)
    if declared:
        return str(declared)
    return "LinUCB" if base is not None and BY_NAME[base].kind.startswith("contextual") else "UCB"


def summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """summary.md: the card (agent beside the built-in leaders), audits, privacy cost, speed, the suite."""
    table = scores(results)
    agent = exp.options.get("agent")
    scale = exp.options.get("scale", "?")
    lines = [
        f"# Scorecard{f': {agent}' if agent else ': the built-in agents'}",
        "",
        f"Suite **{SUITE_VERSION}**, scale **{scale}**: {exp.runs} seeds per problem, each problem at "
        f"{float(exp.options['fraction']):g} × its full horizon (the horizon column). Score = 1 − R_T/U_T per seed "
        "(0 = uniform random play, 1 = the best arm from the start), mean over seeds with its t-based 95% interval, "
        "clipped to [0, 1]; n/a = the agent does not declare what the problem needs (docs/score.md).",
        "",
    ]
    if scale != "full":
        lines += ["This is not the full scale: the same command without --quick runs it.", ""]
    head = "| problem | horizon |" + (f" {agent} |" if agent else "") + " leaders (built-in, best first) |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for p in PROBLEMS:
        g = table[table["problem"] == p.name]
        if g.empty and not agent:
            continue
        horizon = str(int(g["horizon"].iloc[0])) if len(g) else "—"
        top = "; ".join(f"{r['agent']} {_cell(r)}" for r in leaders(table, p.name)) or "—"
        mine = f" {_cell(_row(table, p.name, agent))} |" if agent else ""
        lines.append(f"| {p.name} | {horizon} |{mine} {top} |")
    lines.append("")
    audits = results[results["problem"] == "audit"] if "problem" in results else results.iloc[0:0]
    private = [p for p in PROBLEMS if p.epsilon is not None and p.base is not None]
    shown_agents = [agent] if agent else sorted({str(a) for a in audits["agent"]}) if len(audits) else []
    if len(audits) or any(_row(table, p.name, a) for p in private for a in shown_agents):
        lines += ["## Privacy", ""]
        if len(audits):
            lines += [
                "Audit (agents/audit, `banditlab audit`): the empirical 95% lower bound on ε against the claimed ε, "
                f"{int(audits['audit_runs'].iloc[0])} runs per input.",
                "",
                "| agent | claimed ε | unit | lower bound | verdict |",
                "|---|---|---|---|---|",
            ]
            for _, r in audits.iterrows():
                lines.append(
                    f"| {r['agent']} | {r['epsilon']:g} | {r['unit']} | {r['epsilon_lower']:.3f} | {r['verdict']} |"
                )
            lines.append("")
        lines += [
            "Privacy cost: score at ε over the non-private score on the same base problem (the agent's own where it "
            f"plays it, else its non-private version's); n/a where the non-private score is below {MIN_BASE:g}.",
            "",
            "| agent | problem | ε | score at ε | non-private (agent) | cost |",
            "|---|---|---|---|---|---|",
        ]
        for a in shown_agents:
            for p in private:
                r = _row(table, p.name, a)
                if r is None or p.base is None:
                    continue
                ref = a if _row(table, p.base, a) is not None else non_private_of(exp, a, p.base)
                base = _row(table, p.base, ref)
                if base is None:
                    continue
                # Below MIN_BASE the ratio of two near-zero scores says nothing.
                cost = f"{r['score'] / base['score']:.2f}" if base["score"] >= MIN_BASE else "n/a"
                lines.append(
                    f"| {a} | {p.name} | {p.epsilon:g} | {r['score']:.2f} | {base['score']:.2f} ({ref}) | {cost} |"
                )
        lines.append("")
    speed = speeds(results) if "seconds" in results else {}
    ref = speed.get(SPEED_REFERENCE)
    if speed and ref:
        lines += [
            "## Speed",
            "",
            f"Agent-steps per second over the problems each agent played, relative to batched {SPEED_REFERENCE} "
            "measured in the same run (built-ins on their fast paths, user agents through the step API, env "
            "included).",
            "",
            "| agent | steps/s relative to UCB |",
            "|---|---|",
        ]
        shown = [agent] if agent else sorted(speed, key=lambda a: -speed[a])
        for a in shown:
            if a in speed:
                lines.append(f"| {a} | {speed[a] / ref:.3g} |")
        lines.append("")
    lines += [
        "## Run",
        "",
        f"{meta.get('seconds', float('nan')):.0f} s on {meta.get('jobs', '?')} job(s); suite {SUITE_VERSION}. "
        "Regret curves: regret.png.",
        "",
    ]
    return "\n".join(lines)


def radar(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Radar-style figure: one spoke per problem, the agent's score and the best built-in's.

    Without an agent (the leaderboard): the best built-in's and the three built-ins with the largest
    total score over the suite.
    """
    plt = pyplot()
    table = scores(results)
    agent = exp.options.get("agent")
    names = [p.name for p in PROBLEMS if (table["problem"] == p.name).any()]
    angles = np.linspace(0, 2 * np.pi, max(len(names), 1), endpoint=False)
    fig = plt.figure(figsize=(9, 9))
    ax = fig.add_subplot(111, projection="polar")
    series: list[tuple[str, list[float]]] = []
    best = [leaders(table, n, 1)[0]["score"] if leaders(table, n, 1) else 0.0 for n in names]
    series.append(("best built-in", best))
    if agent:
        series.append((agent, [(_row(table, n, agent) or {"score": 0.0})["score"] for n in names]))
    else:
        # The three with the largest total score over the suite (n/a counts as 0, so breadth counts).
        overall = table[table["agent"] != "Random"].groupby("agent")["score"].sum().sort_values(ascending=False)
        for a in list(overall.index[:3]):
            series.append((str(a), [(_row(table, n, str(a)) or {"score": 0.0})["score"] for n in names]))
    for label, values in series:
        closed = [*values, values[0]] if values else []
        ax.plot([*angles, angles[0]] if len(angles) else [], closed, label=label)
        ax.fill([*angles, angles[0]] if len(angles) else [], closed, alpha=0.1)
    ax.set_xticks(angles)
    ax.set_xticklabels(names, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_title(f"Scorecard ({SUITE_VERSION}); n/a drawn as 0", fontsize=10)
    ax.legend(loc="lower left", bbox_to_anchor=(-0.1, -0.12), fontsize=8)
    save_figure(fig, path, dpi=90)


def regret_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Per-problem panels: mean regret over seeds / uniform play's, against t/T, the agent and the top three."""
    plt = pyplot()
    table = scores(results)
    agent = exp.options.get("agent")
    played = results[results["problem"] != "audit"]
    names = [p.name for p in PROBLEMS if (played["problem"] == p.name).any()]
    cols = 6
    rows = max(1, math.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        shown = [r["agent"] for r in leaders(table, name)]
        if agent and agent not in shown and (played["problem"].eq(name) & played["agent"].eq(agent)).any():
            shown.append(agent)
        g = played[played["problem"] == name]
        for a in shown:
            ga = g[g["agent"] == a]
            curve = (ga["regret"] / ga["uniform"]).groupby(ga["t"]).mean()
            ax.plot(curve.index / float(ga["horizon"].iloc[0]), curve.to_numpy(), label=a,
                    lw=2.2 if a == agent else 1.2)  # fmt: skip
        ax.set_title(BY_NAME[name].name, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=5)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    # Fixed margins (in inches) rather than tight_layout, which took 1-1.5 s of a quick card's
    # report measuring the tick labels of 30 panels of the same size.
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=0.85 / width, right=1 - 0.15 / width, bottom=0.6 / height, top=1 - 0.3 / height,
                        wspace=0.22, hspace=0.4)  # fmt: skip
    fig.supxlabel("t / T", y=0.1 / height)
    fig.supylabel("regret / uniform play's regret at T", x=0.1 / width)
    save_figure(fig, path, dpi=80, tight=False)
