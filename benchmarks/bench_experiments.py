"""Wall time of the papers' experiments at full scale, against a plain reference loop.

Usage: ``python benchmarks/bench_experiments.py [--jobs 2] [--quick] [--only gap|budget]``.

Targets: full ``gap/privacy`` (27 settings × 100 pairs × 10^5 rounds) in ≤ 60 s and the three
gap regret figures (3 × 3 settings × 100 runs × 5 agents × 10^5 rounds) in ≤ 120 s together
(docs/reproductions/README.md, Speed); each budget experiment at full scale on real data (``../shared/data``, else the
synthetic default) in ≤ 60 s, on a 2-core machine. The reference is the plain
Gymnasium loop (``agent.act``/``env.step``/``agent.update``) timed on one run in the same
process and scaled to the experiment's number of agent-runs (agent-users for budget).
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import bandit_envs  # noqa: F401
from agents.experiments.cli import run_experiment
from agents.experiments.gap.task import make_agent
from agents.experiments.registry import get_experiment


def reference_seconds_per_run(horizon: int, name: str = "GAP") -> float:
    """One run of the plain step loop through gym.make, on the paper's instance."""
    setting = {"gap": 0.1, "edge_probability": 0.2, "epsilon": 0.1}
    env = gym.make("GraphBandit-v0", horizon=horizon, gap=setting["gap"], edge_probability=setting["edge_probability"])
    agent = make_agent(name, env.unwrapped, setting, seed=0)
    env.reset(seed=0)
    agent.act()  # compile outside the timing
    agent = make_agent(name, env.unwrapped, setting, seed=0)
    start = time.perf_counter()
    for _ in range(horizon):
        a = agent.act()
        _, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    return time.perf_counter() - start


SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def budget_reference_seconds_per_user(horizon: int) -> float:
    """One user of the plain step loop: UCB on PrivacyBudgetMovieLens-v0 through gym.make."""
    from agents import UCB

    ml = SHARED / "ml-latest-small"
    env = gym.make("PrivacyBudgetMovieLens-v0", data=str(ml) if ml.is_dir() else None, horizon=horizon)
    agent = UCB(10, alpha=0.3)
    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(horizon):
        a = agent.act(obs)
        obs, r, _, _, info = env.step(a)
        agent.update(a, r, info)
    return time.perf_counter() - start


def budget(args: argparse.Namespace) -> None:
    ml, gw = SHARED / "ml-latest-small", SHARED / "gowalla-snap-nyc" / "loc-gowalla_totalCheckins.nyc.txt.gz"
    data = [str(ml), str(gw)] if ml.is_dir() and gw.is_file() else None
    ref = budget_reference_seconds_per_user(20_000)
    print(f"reference step loop (UCB on PrivacyBudgetMovieLens-v0, T=2e4, gym.make): {ref:.2f} s per user")
    with tempfile.TemporaryDirectory() as tmp:
        for eid in ("budget/alpha", "budget/baselines", "budget/smucb-vs-ucb"):
            start = time.perf_counter()
            folder, _ = run_experiment(eid, jobs=args.jobs, out=Path(tmp) / eid.replace("/", "-"), progress=False,
                                       data=data)  # fmt: skip
            wall = time.perf_counter() - start
            with open(folder / "results.csv") as fh:
                copies = len(
                    {tuple(row[k] for k in ("scenario", "agent", "alpha", "user")) for row in csv.DictReader(fh)}
                )
            print(
                f"{eid:22s} {wall:6.1f} s wall ({args.jobs} jobs, data: {'real' if data else 'synthetic'};"
                f" target <= 60 s); {copies} user-runs, reference loop would take {ref * copies:6.0f} s:"
                f" speed-up {ref * copies / wall:4.0f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="gap: 10 runs per setting instead of 100")
    parser.add_argument("--only", choices=("gap", "budget"))
    args = parser.parse_args()
    if args.only != "gap":
        budget(args)
    if args.only == "budget":
        return
    runs = 10 if args.quick else None
    ref = reference_seconds_per_run(100_000)
    print(f"reference step loop (GAP, T=1e5, gym.make): {ref:.2f} s per run")
    total_regret = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for eid in ("gap/privacy", "gap/privacy-fresh", "gap/regret-gap", "gap/regret-p", "gap/regret-eps"):
            exp = get_experiment(eid).scaled(runs=runs)
            start = time.perf_counter()
            run_experiment(eid, runs=runs, jobs=args.jobs, out=Path(tmp) / eid.replace("/", "-"), progress=False)
            wall = time.perf_counter() - start
            agent_runs = len(exp.settings) * exp.runs * (2 if eid.startswith("gap/privacy") else len(exp.agents))
            print(
                f"{eid:18s} {wall:7.1f} s wall ({args.jobs} jobs); reference loop would take "
                f"{ref * agent_runs:9.0f} s for {agent_runs} agent-runs: speed-up {ref * agent_runs / wall:6.0f}x"
            )
            if eid.startswith("gap/regret"):
                total_regret += wall
    print(f"three regret figures together: {total_regret:.1f} s (target <= 120 s at full scale)")


if __name__ == "__main__":
    main()
