"""LDP contextual-bandit experiments: quick runs, the fast path equals the env loop, --data checks."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401
from agents import LDPLinUCB
from agents.experiments.api import configure
from agents.experiments.cli import main, run_experiment
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.ldp.task import ldp_task


@pytest.mark.parametrize("experiment_id", ["ldp-linucb/epsilon", "ldp-linucb/sqrt-t"])
def test_ldp_experiments_run_quick(experiment_id, tmp_path):
    folder, text = run_experiment(experiment_id, horizon=2000, runs=1, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    assert "LinUCB" in text and "uniform random" in text
    if experiment_id == "ldp-linucb/epsilon":
        assert "| 6,250 |" in text  # the published number beside ours


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
    regret = 0.0
    users = []
    for _ in range(horizon):
        a = agent.act(obs)
        obs, r, _, _, info = env.step(a)
        agent.update(a, r, info)
        regret += info["regret"]
        users.append(info["user_id"])
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
