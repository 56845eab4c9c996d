"""Wall time of the papers' experiments at full scale, against a plain reference loop.

Usage: ``python benchmarks/bench_experiments.py [--jobs 2] [--quick] [--only gap|budget]``.

Targets: full ``gap/privacy`` (27 settings × 100 pairs × 10^5 rounds) in ≤ 60 s and the three
gap regret figures (3 × 3 settings × 100 runs × 5 agents × 10^5 rounds) in ≤ 120 s together
(docs/reproductions/README.md, Speed); each budget experiment at full scale on real data (``../shared/data``, else the
synthetic default) in ≤ 60 s, on a 2-core machine. The reference is the plain
Gymnasium loop (``agent.act``/``env.step``/``agent.update``) timed on one run in the same
process and scaled to the experiment's number of agent-runs (agent-users for budget).

``results(quick)`` returns each experiment's speed-up over that reference; a time target is
stated as the speed-up it needs against the reference measured in the same run (met exactly when
the wall time is within the target). ``--quick`` runs ``gap/privacy`` and ``gap/regret-gap`` with
10 runs per setting and ``budget/alpha`` at its quick scale, without goals.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
from _common import Ratio, print_results

import bandit_envs  # noqa: F401
from agents.experiments.cli import run_experiment
from agents.experiments.gap.task import make_agent
from agents.experiments.registry import get_experiment

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
ML_DIR = SHARED / "ml-latest-small"
GOWALLA_NYC = SHARED / "gowalla-snap-nyc" / "loc-gowalla_totalCheckins.nyc.txt.gz"
GAP_EXPERIMENTS = ("gap/privacy", "gap/privacy-fresh", "gap/regret-gap", "gap/regret-p", "gap/regret-eps")
BUDGET_EXPERIMENTS = ("budget/alpha", "budget/baselines", "budget/smucb-vs-ucb")
WARM_UP = 200  # untimed rounds before a reference loop is timed
PRIVACY_TARGET, REGRET_TARGET, BUDGET_TARGET = 60.0, 120.0, 60.0  # seconds at full scale, 2 cores


def reference_seconds_per_run(horizon: int, name: str = "GAP") -> float:
    """One run of the plain step loop through gym.make, on the paper's instance."""
    setting = {"gap": 0.1, "edge_probability": 0.2, "epsilon": 0.1}
    env = gym.make("GraphBandit-v0", horizon=horizon, gap=setting["gap"], edge_probability=setting["edge_probability"])
    agent = make_agent(name, env.unwrapped, setting, seed=0)
    env.reset(seed=0)
    for _ in range(WARM_UP):  # compile act's and update's kernels outside the timing
        a = agent.act()
        _, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    agent = make_agent(name, env.unwrapped, setting, seed=0)
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(horizon):
        a = agent.act()
        _, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    return time.perf_counter() - start


def budget_reference_seconds_per_user(horizon: int) -> float:
    """One user of the plain step loop: UCB on PrivacyBudgetMovieLens-v0 through gym.make."""
    from agents import UCB

    env = gym.make("PrivacyBudgetMovieLens-v0", data=str(ML_DIR) if ML_DIR.is_dir() else None, horizon=horizon)
    agent = UCB(10, alpha=0.3)
    obs, _ = env.reset(seed=0)
    for _ in range(WARM_UP):  # compile the kernels outside the timing
        a = agent.act(obs)
        obs, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    agent = UCB(10, alpha=0.3)
    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(horizon):
        a = agent.act(obs)
        obs, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    return time.perf_counter() - start


def timed_run(eid: str, tmp: str, **options: Any) -> tuple[float, Path]:
    """Wall time of one experiment run into a fresh folder under ``tmp``, and that folder."""
    start = time.perf_counter()
    folder, _ = run_experiment(eid, out=Path(tmp) / eid.replace("/", "-"), progress=False, **options)
    return time.perf_counter() - start, folder


def gap_ratios(jobs: int, quick: bool = False) -> list[Ratio]:
    """Speed-ups of the gap experiments over the plain GAP loop (full scale, or 10 runs per setting)."""
    horizon = 100_000
    runs = 10 if quick else None
    experiments = ("gap/privacy", "gap/regret-gap") if quick else GAP_EXPERIMENTS
    ref_steps = 20_000 if quick else horizon
    ref = reference_seconds_per_run(ref_steps) * horizon / ref_steps
    timing = f"reference: one GAP run of the plain loop, {ref:.2f} s at T=1e5" + (
        f" (timed over {ref_steps:,} rounds)" if ref_steps != horizon else ""
    )
    print(f"bench_experiments: {timing}")
    out = []
    regret_wall, regret_runs, regret_parts = 0.0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for eid in experiments:
            exp = get_experiment(eid).scaled(runs=runs)
            wall, _ = timed_run(eid, tmp, runs=runs, jobs=jobs)
            agent_runs = len(exp.settings) * exp.runs * (2 if eid.startswith("gap/privacy") else len(exp.agents))
            scale = f"{len(exp.settings)} settings x {exp.runs} runs, {agent_runs} agent-runs of T=1e5"
            if eid.startswith("gap/regret"):
                regret_wall += wall
                regret_runs += agent_runs
                regret_parts.append(f"{eid} {wall:.1f} s")
                continue
            goal = None if quick or eid != "gap/privacy" else ref * agent_runs / PRIVACY_TARGET
            target = "" if goal is None else f", target <= {PRIVACY_TARGET:g} s"
            out.append(
                Ratio(
                    f"{eid} experiment",
                    f"banditlab run {eid} ({jobs} jobs)",
                    "plain act/env.step/update loop, scaled",
                    ref * agent_runs / wall,
                    goal,
                    f"{wall:.1f} s wall vs {ref * agent_runs:,.0f} s{target}; {scale}; {timing}",
                )
            )
    if regret_parts:
        goal = None if quick else ref * regret_runs / REGRET_TARGET
        target = "" if goal is None else f", target <= {REGRET_TARGET:g} s together"
        out.append(
            Ratio(
                "gap regret figures" if not quick else "gap/regret-gap experiment",
                f"banditlab run ({jobs} jobs): " + ", ".join(regret_parts),
                "plain act/env.step/update loop, scaled",
                ref * regret_runs / regret_wall,
                goal,
                f"{regret_wall:.1f} s wall vs {ref * regret_runs:,.0f} s{target}; {regret_runs} agent-runs of T=1e5; "
                f"{timing}",
            )
        )
    return out


def budget_ratios(jobs: int, quick: bool = False) -> list[Ratio]:
    """Speed-ups of the budget experiments over the plain UCB loop per user (full scale, or quick scale)."""
    real = ML_DIR.is_dir() and GOWALLA_NYC.is_file()
    data = [str(ML_DIR), str(GOWALLA_NYC)] if real else None
    words = "real data" if real else f"synthetic defaults ({ML_DIR} or {GOWALLA_NYC} not found)"
    experiments = ("budget/alpha",) if quick else BUDGET_EXPERIMENTS
    horizon = get_experiment("budget/alpha").scaled(quick=quick).horizon
    ref = budget_reference_seconds_per_user(horizon)
    timing = f"reference: UCB on PrivacyBudgetMovieLens-v0 (gym.make), {ref:.2f} s per user at T={horizon}"
    print(f"bench_experiments: budget on {words}; {timing}")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for eid in experiments:
            wall, folder = timed_run(eid, tmp, jobs=jobs, data=data, quick=quick)
            with open(folder / "results.csv") as fh:
                rows = csv.DictReader(fh)
                copies = len({tuple(row[k] for k in ("scenario", "agent", "alpha", "user")) for row in rows})
            goal = None if quick else ref * copies / BUDGET_TARGET
            target = "" if goal is None else f", target <= {BUDGET_TARGET:g} s"
            out.append(
                Ratio(
                    f"{eid} experiment",
                    f"banditlab run {eid} ({jobs} jobs)",
                    "plain act/env.step/update loop per user, scaled",
                    ref * copies / wall,
                    goal,
                    f"{wall:.1f} s wall vs {ref * copies:,.0f} s{target}; {copies} user-runs of T={horizon}, {words}; "
                    f"{timing}",
                )
            )
    return out


def results(quick: bool = False, jobs: int = 2, only: str | None = None) -> list[Ratio]:
    """Every experiment's speed-up over the plain loop; ``only`` is "gap" or "budget"."""
    out = []
    if only != "gap":
        out += budget_ratios(jobs, quick)
    if only != "budget":
        out += gap_ratios(jobs, quick)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="gap: 10 runs per setting; budget: quick scale")
    parser.add_argument("--only", choices=("gap", "budget"))
    args = parser.parse_args()
    print_results(results(args.quick, args.jobs, args.only))


if __name__ == "__main__":
    main()
