"""Budget experiments: quick runs on the synthetic default and on real data, --data validation."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GOWALLA_NYC

from agents.experiments.budget.paper import ALPHA_GRIDS
from agents.experiments.cli import main, run_experiment
from agents.experiments.core.data import scenario_of


@pytest.mark.parametrize("experiment_id", ["budget/alpha", "budget/baselines", "budget/smucb-vs-ucb"])
def test_budget_experiments_run_on_the_synthetic_default(experiment_id, tmp_path, rendered_figures):
    folder, text = run_experiment(experiment_id, horizon=300, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    assert "movielens" in text and "gowalla" in text
    if experiment_id == "budget/alpha":
        assert "best α on MovieLens is 0.3" in text and "Our best α" in text
    else:
        assert "SM-UCB − " in text


@pytest.mark.integration  # an experiment end to end on the real datasets
def test_budget_experiment_runs_on_real_data(tmp_path, shared_data):
    ml_small, gowalla_nyc = shared_data("ml-latest-small"), shared_data(GOWALLA_NYC)
    folder, text = run_experiment(
        "budget/smucb-vs-ucb", horizon=200, jobs=1, out=tmp_path, progress=False,
        data=[str(ml_small), str(gowalla_nyc)],
    )  # fmt: skip
    assert str(ml_small) in text and str(gowalla_nyc) in text
    assert "20 users" in text and "10 users" in text


def test_scenario_of_known_names_and_paths(tmp_path):
    assert scenario_of("synthetic-movielens") == ("movielens", None)
    assert scenario_of("movielens-latest-small") == ("movielens", "ml-latest-small")
    assert scenario_of("gowalla")[0] == "gowalla"
    gz = tmp_path / "checkins.txt.gz"
    gz.write_bytes(b"")
    assert scenario_of(str(gz)) == ("gowalla", str(gz))
    with pytest.raises(ValueError, match="--data must be"):
        scenario_of("netflix")


def test_alpha_grids_are_the_papers():
    assert len(ALPHA_GRIDS[("movielens", "UCB")]) == 26 and ALPHA_GRIDS[("movielens", "UCB")][-1] == 2.0
    assert ALPHA_GRIDS[("gowalla", "SM-UCB")][-5:] == (0.3, 0.35, 0.4, 0.45, 0.5)
    assert 0.3 in ALPHA_GRIDS[("movielens", "SM-UCB")]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "budget/alpha", "--data", "netflix"], "--data must be"),
        (["run", "gap/privacy", "--data", "gowalla"], "--data applies only to the budget"),
    ],
)
def test_cli_data_errors_are_one_sentence(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_a_per_copy_user_agent_plays_as_the_batched_one(tmp_path):
    """A factory without ``n_envs`` (one agent per copy) gives the results of one with it, and the built-in's.

    Copy i's agent is seeded as copy i of the batched agent; before, every copy's agent got the
    same seed, so their policy randomness was shared across copies and the results differed.
    """
    import agents as A
    from agents.experiments import run

    def batched(env, setting, seed, n_envs):
        return A.EpsilonGreedy(10, 0.2, n_envs=n_envs, seed=seed)

    def single(env, setting, seed):
        return A.EpsilonGreedy(10, 0.2, seed=seed)

    frame = run(
        "budget/baselines", agents=[("batched", batched), ("single", single)], runs=1, horizon=300, progress=False
    )
    key = ["scenario", "alpha", "gamma", "user", "t"]
    one = frame[frame.agent == "batched"].set_index(key).sort_index()
    other = frame[frame.agent == "single"].set_index(key).sort_index()
    assert len(one) == len(other) > 0
    # same draws, possibly summed in another order by the two paths: equal to a relative 1e-12
    np.testing.assert_allclose(one[["payoff", "regret"]].to_numpy(), other[["payoff", "regret"]].to_numpy(), rtol=1e-12)
