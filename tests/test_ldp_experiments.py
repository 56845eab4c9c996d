"""LDP contextual-bandit experiments: quick runs, the fast path equals the env loop, --data checks."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from rollouts import play_env

import bandit_envs  # noqa: F401
from agents import LDPLinUCB
from agents.experiments.api import configure
from agents.experiments.cli import main, run_experiment
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.ldp.task import ldp_task


@pytest.mark.parametrize("experiment_id", ["ldp-linucb/epsilon", "ldp-linucb/sqrt-t"])
def test_ldp_experiments_run_quick(experiment_id, tmp_path, rendered_figures):
    folder, text = run_experiment(experiment_id, horizon=2000, runs=1, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    assert "LinUCB" in text and "uniform random" in text
    if experiment_id == "ldp-linucb/epsilon":
        # The authors' numbers beside ours: the one printed in text, the figure readings marked as such.
        assert "| ≈ 6,250 (read off the blog's figure) |" in text
        assert "962.4 (authors' repository, text)" in text


def test_fast_path_run_equals_the_gym_step_loop():
    """The experiment's regret equals LDP-LinUCB played step by step on MovieLensRecommendation-v0."""
    horizon = 600
    exp = configure("ldp-linucb/epsilon", runs=1, horizon=horizon, seed=4)
    setting = exp.settings[3]
    rows = ldp_task(exp, 3, 0, 4)
    env_seed, policy_seed = table_seed(4, 0), agent_seed(4, 0)
    env = gym.make("MovieLensRecommendation-v0", horizon=horizon)
    agent = LDPLinUCB(20, setting["epsilon"], delta=0.1, alpha=0.1, horizon=horizon, sigma_method="classic",
                      bonus="quadratic", seed=policy_seed)  # fmt: skip
    obs, _ = env.reset(seed=env_seed)
    played = play_env(agent, env, horizon, obs)
    regret, users = played.regret, [info["user_id"] for info in played.infos]
    assert rows[-1]["t"] == horizon
    assert rows[-1]["regret"] == pytest.approx(regret, rel=1e-9, abs=1e-9)
    # Every row carries the busiest user's reports so far, the count the step loop's agent keeps.
    assert rows[-1]["max_user_reports"] == agent.max_user_reports == np.unique(users, return_counts=True)[1].max()
    assert all(r["max_user_reports"] <= rows[-1]["max_user_reports"] for r in rows)


def test_summary_states_the_per_user_guarantee(tmp_path):
    _, text = run_experiment("ldp-linucb/epsilon", horizon=2000, runs=1, jobs=1, out=tmp_path, progress=False)
    assert "busiest user's reports k" in text and "per user" in text
    row = next(line for line in text.splitlines() if line.startswith("| LDP-LinUCB ε=1 (analytic"))
    k = int(row.split("|")[6].replace(",", ""))
    assert k > 1
    from agents.experiments.ldp.analysis import per_user_guarantee

    assert per_user_guarantee(1.0, "analytic", k) in row
    eps = float(row.split("ε = ")[1].split(" ")[0])
    assert 1.0 < eps < k  # more than one report's ε, less than basic composition


@pytest.mark.integration  # an experiment end to end on the real MovieLens ratings
def test_ldp_experiment_on_real_movielens(tmp_path, shared_data):
    ml_small = shared_data("ml-latest-small")
    _, text = run_experiment("ldp-linucb/sqrt-t", horizon=1000, runs=1, jobs=1, out=tmp_path, progress=False,
                             data=[str(ml_small)])  # fmt: skip
    assert str(ml_small) in text


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "ldp-linucb/epsilon", "--data", "synthetic-gowalla"], "--data must be a MovieLens data set"),
        (["run", "ldp-linucb/epsilon", "--data", "a", "--data", "b"], "--data takes one MovieLens data set"),
    ],
)
def test_ldp_cli_data_errors(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


# ldp-linucb/realistic ---------------------------------------------------------------------------


def test_realistic_fast_path_equals_the_gym_step_loop_on_gowalla():
    """LDP-OLS's regret, busiest user (by user id) and per-user ε equal the step loop on GowallaRecommendation-v0."""
    from agents import LDPOLS
    from agents.experiments.ldp.realistic import realistic_task

    horizon = 500
    exp = configure("ldp-linucb/realistic", runs=1, horizon=horizon, seed=2, data=["synthetic-gowalla"])
    index = next(i for i, s in enumerate(exp.settings) if s["agent"] == "LDP-OLS" and s["mechanism"] == "l2_ball")
    setting = exp.settings[index]
    rows = realistic_task(exp, index, 0, 2)
    env = gym.make("GowallaRecommendation-v0", horizon=horizon)
    agent = LDPOLS(20, setting["epsilon"], delta=0.1, mechanism="l2_ball", l_x=1.0, seed=agent_seed(2, 0))
    obs, _ = env.reset(seed=table_seed(2, 0))
    played = play_env(agent, env, horizon, obs)
    regret, users = played.regret, [info["user_id"] for info in played.infos]
    last = rows[-1]
    assert last["t"] == horizon
    assert last["regret"] == pytest.approx(regret, rel=1e-9, abs=1e-9)
    # Reports are counted by user id (several contexts share a user), as the agent's ledger does.
    assert last["max_user_reports"] == agent.max_user_reports == np.unique(users, return_counts=True)[1].max()
    assert (last["user_epsilon"], last["user_delta"]) == pytest.approx(agent.privacy_per_user(0.1).tight)
    assert np.isnan(last["central_epsilon"])


def test_realistic_prepare_crosses_agents_with_constructions():
    exp = configure("ldp-linucb/realistic", runs=1, horizon=100)
    datasets = {s["dataset"] for s in exp.settings}
    assert datasets == {
        "synthetic-movielens (authors)",
        "synthetic-movielens (lowrank)",
        "synthetic-gowalla (checkins)",
    }
    for ds in datasets:
        mine = [s for s in exp.settings if s["dataset"] == ds]
        assert len(mine) == 4 * 5 + 1  # four private agents at five ε, LinUCB once (uniform random rides on it)
        assert sum(s["agent"] == "LinUCB" for s in mine) == 1


def _fake_results(ratio: float, runs: int, horizon: int) -> pd.DataFrame:
    """Results where every private agent's R(T) is ``ratio`` times uniform random's, regret ∝ t^0.4."""
    from agents.experiments.ldp.realistic_analysis import AGENTS

    rows = []
    for (agent, mechanism), _ in AGENTS.items():
        for eps in (0.0,) if mechanism == "none" else (0.5, 1.0, 2.0):
            scale = 1.0 if agent == "uniform random" else (ratio / eps if eps else 0.5)
            for run in range(runs):
                for t in (horizon // 10, horizon // 2, horizon):
                    reg = (1000.0 + run) * scale * (t / horizon) ** 0.4
                    privacy = {"user_epsilon": 3.0 * eps or math.nan, "user_delta": 0.1}
                    rows.append({"dataset": "ml (authors)", "agent": agent, "mechanism": mechanism, "epsilon": eps,
                                 "run": run, "t": t, "regret": reg, "max_user_reports": 7, **privacy,
                                 "central_epsilon": math.nan, "central_delta": math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def test_realistic_summary_decides_the_claims_at_full_scale():
    """Known answer: R(T) = 0.1 × uniform random at ε = 1, falling regret/√t, smaller ε more regret → ✓."""
    from agents.experiments.ldp.realistic_analysis import realistic_summary

    exp = configure("ldp-linucb/realistic")
    assert not exp.below_full_scale
    text = realistic_summary(_fake_results(0.1, 3, 10**6), exp, {"seconds": 1.0, "jobs": 2})
    claims = [line for line in text.splitlines() if line.startswith("- ")]
    assert claims and all(line.startswith("- ✓") for line in claims), "\n".join(claims)
    assert "15% of the uniformly random policy's" in text and "synthetic default data" in text
    assert "T^{3/4}" in text and "central" in text
    row = next(line for line in text.splitlines() if line.startswith("| LDP-OLS (Gaussian) | 1 |"))
    assert "| 0.100 [0.100, 0.100] |" in row  # the ratio to uniform random, with its interval over seeds
    assert "| 0.79 [0.79, 0.79] |" in row  # (R/√t at T) / (at T/10) = 10^-0.1 for R ∝ t^0.4


def test_realistic_summary_goal_missed_and_undecided_below_full_scale():
    from agents.experiments.ldp.realistic_analysis import realistic_summary

    text = realistic_summary(_fake_results(0.3, 3, 10**6), configure("ldp-linucb/realistic"), {})
    goal = [line for line in text.splitlines() if "*Goal:" in line]
    assert len(goal) == 4 and all(line.startswith("- ✗") for line in goal)
    small = configure("ldp-linucb/realistic", horizon=1000, runs=1)
    text = realistic_summary(_fake_results(0.1, 1, 1000), small, {})
    assert "smaller than full scale" in text
    assert all(line.startswith("- –") for line in text.splitlines() if "*Goal:" in line)


@pytest.mark.slow
def test_realistic_runs_tiny_on_synthetic_movielens(tmp_path, rendered_figures):
    folder, text = run_experiment("ldp-linucb/realistic", horizon=300, runs=1, jobs=1, out=tmp_path, progress=False,
                                  data=["synthetic-movielens"])  # fmt: skip
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    assert "## synthetic-movielens (authors)" in text and "## synthetic-movielens (lowrank)" in text
    assert "Shuffle-LinUCB" in text and "uniform random" in text
