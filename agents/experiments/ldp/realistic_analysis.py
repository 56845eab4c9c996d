"""Summary and figure of ``ldp-linucb/realistic``: ratios to uniform random, regret/√t, per-user guarantees.

Claims are data (:mod:`agents.experiments.core.claims`): the goal (at ε = 1 per report, R(T) <=
15% of the uniformly random policy's on the authors' MovieLens construction) per private agent,
"smaller ε, more regret" per agent, LinUCB below uniform random, and whether regret/√t falls from
T/10 to T. Intervals are t-based 95% over runs (seeds), paired by run against uniform random.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.core.checks import fmt_ci, sqrt_t_change
from agents.experiments.core.claims import (
    Evidence,
    claims_section,
    run_notes,
)
from agents.experiments.core.figures import pyplot, save_figure
from agents.experiments.core.spec import Experiment
from agents.experiments.core.stats import mean_ci
from agents.experiments.ldp.realistic import DELTA

#: The goal: ratio of cumulative regret to uniform random's at ε = 1 per report.
GOAL_RATIO = 0.15
GOAL_EPSILON = 1.0

#: Display name, published regret rate and the guarantee each curve carries, by (agent, mechanism).
AGENTS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("LDP-LinUCB", "analytic-gaussian"): (
        "LDP-LinUCB (analytic σ)",
        "Õ(T^{3/4}/ε) (Zheng et al., NeurIPS 2020; the blog)",
        f"local (ε, δ = {DELTA:g}) per report; per user composed",
    ),
    ("LDP-OLS", "gaussian"): (
        "LDP-OLS (Gaussian)",
        "Õ(√T/ε) under context diversity (Han et al., NeurIPS 2021)",
        f"local (ε, δ = {DELTA:g}) per report; per user composed",
    ),
    ("LDP-OLS", "l2_ball"): (
        "LDP-OLS (L2 ball)",
        "Õ(√T/ε) under context diversity (Han et al., NeurIPS 2021)",
        "local ε per report (δ = 0); per user composed",
    ),
    ("Shuffle-LinUCB", "l2_ball-shuffled"): (
        "Shuffle-LinUCB",
        "Õ(T^{3/5}) (Chowdhury & Zhou, ICML 2022); √T-type under diversity",
        "central (ε, δ = 1e-6) per report in a batch of 1000; local ε0 per report; per user both",
    ),
    ("LinUCB", "none"): ("LinUCB", "Õ(d√T) (no privacy)", "none"),
    ("uniform random", "none"): ("uniform random", "linear in T", "none"),
}
PRIVATE = [v[0] for k, v in AGENTS.items() if k[0] not in ("LinUCB", "uniform random")]

Key = tuple[str, str, float]  # (dataset, agent display name, ε)


def agent_name(r: Mapping[str, Any]) -> str:
    """Display name of a row's agent (user agents: their own name)."""
    return AGENTS.get((str(r["agent"]), str(r["mechanism"])), (str(r["agent"]), "", ""))[0]


def _curves(rows: Sequence[Mapping[str, Any]]) -> dict[Key, dict[int, dict[int, float]]]:
    """(dataset, agent, ε) → t → run → cumulative regret."""
    out: dict[Key, dict[int, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        out[(str(r["dataset"]), agent_name(r), float(r["epsilon"]))][int(r["t"])][int(r["run"])] = float(r["regret"])
    return out


def _ratios(curves: Mapping[Key, Mapping[int, Mapping[int, float]]], key: Key) -> list[float]:
    """Per run, R(T) of ``key`` over uniform random's R(T) on the same dataset and run."""
    mine = curves[key]
    rand = curves.get((key[0], "uniform random", 0.0))
    if not rand:
        return []
    t = max(mine)
    return [v / rand[t][run] for run, v in mine[t].items() if rand[t].get(run, 0.0) > 0]


def _known(value: Any) -> bool:
    """Whether a privacy cell holds a number (not missing, not NaN)."""
    return value is not None and value == value


def _guarantee(r: Mapping[str, Any] | None) -> tuple[str, str]:
    """(local per user, central per user) cells from a run's last row (worst over runs by the caller)."""
    if r is None or not _known(r.get("user_epsilon")):
        return "–", "–"
    local = f"ε = {float(r['user_epsilon']):.3g} at δ = {float(r['user_delta']):g}"
    ce = r.get("central_epsilon")
    central = "–" if not _known(ce) else f"ε = {float(r['central_epsilon']):.3g}, δ = {float(r['central_delta']):.2g}"
    return local, central


def realistic_summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown: the goal, per dataset a table of ratios to uniform random with guarantees; the claims."""
    rows = results.to_dict("records")
    curves = _curves(rows)
    horizon = max(max(c) for c in curves.values())
    runs = max(len(v) for c in curves.values() for v in c.values())
    lines = [
        f"# `{exp.id}`: {exp.title}",
        "",
        f"**Goal**: at ε = {GOAL_EPSILON:g} per report, cumulative regret <= {GOAL_RATIO:.0%} of the uniformly "
        "random policy's on the authors' MovieLens construction.",
        "",
        f"T = {horizon:,}, {runs} run(s) (seeds) per setting; wall time {meta.get('seconds', math.nan):.1f} s on "
        f"{meta.get('jobs', 1)} process(es). Environments: `MovieLensRecommendation-v0` with the authors' "
        "construction (first 20 movies, rank-20 SVD, unrated −1) and with the low-rank completion (ALS, rank 10), "
        "and `GowallaRecommendation-v0` (a context is a (user, check-in) pair). Regret is against the noiseless "
        "best arm of each round; LinUCB and uniform random (its expected regret) run once per data set and run.",
        "",
        "**Hyper-parameters** are the agents' defaults, chosen on the synthetic default data of "
        "`MovieLensRecommendation-v0` only, never on the evaluation data: LDP-LinUCB δ = α = 0.1, analytic σ, "
        "√ bonus; LDP-OLS and Shuffle-LinUCB greedy, gram weight 0.1, shift scale 16, batches of 100 (LDP-OLS) "
        "and 1000 shuffled reports (Shuffle-LinUCB, central δ = 1e-6), l_x = 0.4 on MovieLens and 1 (the env's "
        "bound) on Gowalla.",
        "",
        "**Per user**: every round draws a user, so a user reports many times. k is the reports of the busiest "
        "user by T, counted by user id (on Gowalla several contexts share a user), worst over runs; "
        f"'per user, local' is what k reports compose to (tight, dp-accounting's privacy loss distribution, at "
        f"δ = {DELTA:g}); 'per user, central' (Shuffle-LinUCB) is group privacy per shuffled batch composed over "
        "batches, against the server only.",
        "",
    ]
    lines += run_notes(exp, "through the step API at each ε")
    last = defaultdict(list)
    for r in rows:
        if int(r["t"]) == horizon:
            last[(str(r["dataset"]), agent_name(r), float(r["epsilon"]))].append(r)
    for ds in dict.fromkeys(k[0] for k in curves):
        lines += [
            f"## {ds}",
            "",
            "| agent | ε per report | R(T) mean ± 95% | R(T) / uniform random [95% CI] | (R/√t at T) / (at T/10) "
            "| published rate | guarantee | k | per user, local | per user, central |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for key in (k for k in curves if k[0] == ds):
            c = curves[key]
            finals = list(c[max(c)].values())
            m, _, h = mean_ci(finals)
            info = next((v for v in AGENTS.values() if v[0] == key[1]), (key[1], "–", "user agent"))
            ends = last.get(key, [])
            known = [r for r in ends if _known(r.get("user_epsilon"))]
            worst = max(known, key=lambda r: float(r["user_epsilon"]), default=None)
            k_reports = max((int(r["max_user_reports"]) for r in ends), default=0)
            local, central = _guarantee(worst)
            eps = "–" if key[2] == 0.0 else f"{key[2]:g}"
            ratio = "–" if key[1] == "uniform random" else fmt_ci(_ratios(curves, key))
            lines.append(
                f"| {key[1]} | {eps} | {m:,.0f}" + ("" if math.isnan(h) else f" ± {h:,.0f}") + f" | {ratio} | "
                f"{fmt_ci(sqrt_t_change(c), '.2f')} | {info[1]} | {info[2]} | {k_reports:,} | {local} | {central} |"
            )
        lines.append("")
    frame = pd.DataFrame(
        {
            "group": results["dataset"].astype(str),
            "agent": [agent_name(r) for r in rows],
            "x": results["epsilon"].astype(float),
            "unit": results["run"],
            "t": results["t"],
            "value": results["regret"],
        }
    )
    evidence = Evidence.of(frame, below_full_scale=exp.below_full_scale, x_name="ε", horizon=horizon)
    lines += claims_section(
        exp.claims,
        evidence,
        note=exp.scale_note(),
        scale=exp.scale_words("run(s) (seeds) per setting"),
    )
    return "\n".join(lines)


def realistic_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Regret/√t against t per dataset (mean over runs), private agents at ε = 1 with LinUCB and uniform random.

    Dotted lines: the slopes of the published rates on this scale (T^{3/4}: t^{1/4}; T^{3/5}: t^{1/10};
    √T: flat), anchored at the curves' median first value.
    """
    plt = pyplot()
    curves = _curves(results.to_dict("records"))
    sets = list(dict.fromkeys(k[0] for k in curves))
    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 4.2), squeeze=False)
    for ax, ds in zip(axes[0], sets, strict=True):
        for key, c in curves.items():
            if key[0] != ds or key[2] not in (0.0, GOAL_EPSILON):
                continue
            ts = np.array(sorted(c))
            m = np.array([np.mean(list(c[t].values())) for t in ts])
            ax.plot(ts, m / np.sqrt(ts), label=key[1] + ("" if key[2] == 0.0 else f" ε={key[2]:g}"))
        anchors = [np.mean(list(c[min(c)].values())) / math.sqrt(min(c)) for k, c in curves.items() if k[0] == ds]
        ts = np.array(sorted(next(c for k, c in curves.items() if k[0] == ds)))
        for power, rate in ((0.25, "T^{3/4}"), (0.1, "T^{3/5}"), (0.0, "√T")):
            ax.plot(ts, float(np.median(anchors)) * (ts / ts[0]) ** power, "k", ls=":", lw=0.8, alpha=0.6)
            ax.annotate(f"rate {rate}", (ts[-1], float(np.median(anchors)) * (ts[-1] / ts[0]) ** power), fontsize=6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative regret / √t")
        ax.set_title(ds, fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(f"{exp.id}: ε = {GOAL_EPSILON:g} per report", fontsize=9)
    save_figure(fig, path)
