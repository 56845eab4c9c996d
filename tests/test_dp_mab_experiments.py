"""dp-mab/epsilon and graph/side-observations: tiny runs end to end, and common random numbers.

A task plays a block of runs as copies of batched agents on reward tables; these tests check
that the table gives exactly the rewards of ``GraphBanditVectorEnv`` / ``GraphBandit-v0`` and
that copy i of a block equals a single agent seeded as run i, stepping the gym env.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from rollouts import play_env

import bandit_envs  # noqa: F401
from agents.experiments import get_experiment
from agents.experiments.cli import run_experiment
from agents.experiments.core.seeds import table_seed
from agents.experiments.dpmab.settings import NON_PRIVATE, PRIVATE
from agents.experiments.dpmab.task import (
    instance,
    make_agent,
    play_batches,
    regret_task,
    reward_blocks,
    run_seed,
)
from bandit_envs.graph import GraphBanditVectorEnv


@pytest.mark.parametrize("experiment_id", ["dp-mab/epsilon", "graph/side-observations"])
def test_runs_at_tiny_scale_and_writes_summary_and_rows(experiment_id, tmp_path, rendered_figures):
    folder, text = run_experiment(experiment_id, runs=3, horizon=400, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    exp = get_experiment(experiment_id)
    assert exp.title in text and "## Claims" in text and "Paired differences" in text
    import pandas as pd

    frame = pd.read_csv(folder / "results.csv")
    assert set(frame["run"]) == {0, 1, 2}
    last = frame[frame["t"] == 400]
    # Every agent appears in the settings it plays, once per run.
    assert set(last["agent"]) == set(exp.agents)
    assert (last.groupby(["setting", "agent"]).size() == 3).all()
    assert (frame["regret"] >= 0).all()
    for agent in exp.agents:
        assert f"| {agent} |" in text


def test_non_private_agents_run_once_in_their_own_setting():
    exp = get_experiment("dp-mab/epsilon").scaled(runs=2, horizon=200)
    rows = regret_task(exp, 0, 0, 0)
    assert {r["agent"] for r in rows} == set(NON_PRIVATE)
    assert all(np.isinf(r["epsilon"]) for r in rows)
    rows = regret_task(exp, 1, 0, 0)
    assert {r["agent"] for r in rows} == set(PRIVATE)


@pytest.mark.parametrize("experiment_id", ["dp-mab/epsilon", "graph/side-observations"])
def test_reward_table_equals_the_vector_env(experiment_id):
    """The table a task reads is what GraphBanditVectorEnv draws after reset(seed=[...]) per copy."""
    exp = get_experiment(experiment_id).scaled(horizon=1500)
    env = instance(exp, exp.settings[0])
    seeds = [table_seed(7, r) for r in range(3)]
    table = np.concatenate(list(reward_blocks(env, seeds)))
    venv = GraphBanditVectorEnv(
        num_envs=3,
        graph=env.adjacency,
        means=exp.options.get("means"),
        gap=exp.options.get("gap", 0.1),
        reward=exp.options["reward"],
        horizon=exp.horizon,
    )
    venv.reset(seed=seeds)
    actions = np.array([0, 4, 9])
    for t in range(exp.horizon):
        _, reward, _, _, info = venv.step(actions)
        np.testing.assert_array_equal(reward, table[t, np.arange(3), actions])
        mask = info["observed_mask"]
        np.testing.assert_array_equal(info["observed_rewards"][mask], table[t][mask])


@pytest.mark.parametrize(
    ("experiment_id", "setting", "names"),
    [
        ("dp-mab/epsilon", 3, ("HybridDPUCB", "TreeDPUCB", "AdaPUCB", "AdaPUCB-cum", "DPTS", "DPSE")),
        ("dp-mab/epsilon", 3, ("HybridDPUCB-paper", "PrePullGTS", "DPTSUCB")),
        ("dp-mab/epsilon", 0, ("UCB", "KLUCB")),
        ("graph/side-observations", 1, ("UCBN", "Exp3SET", "Exp3IX", "GAP")),
    ],
)
def test_copy_i_of_a_block_equals_a_single_agent_on_the_gym_env(experiment_id, setting, names):
    """Common random numbers: run r of the block task is GraphBandit-v0 reset with table_seed(base, r),
    played step by step by a single agent seeded run_seed(base, r)."""
    exp = get_experiment(experiment_id).scaled(runs=3, horizon=600)
    base, first = 3, 1  # the block of runs 1..2 (a block need not start at 0)
    family = dataclasses.replace(exp.family, runs_per_task=2)
    exp = dataclasses.replace(exp, family=family, agents=names)
    s = exp.settings[setting]
    rows = regret_task(exp, setting, first, base)
    env0 = instance(exp, s)
    kwargs = {"graph": env0.adjacency, "means": exp.options.get("means"), "gap": exp.options.get("gap", 0.1)}
    for name in names:
        for r in (1, 2):
            env = gym.make("GraphBandit-v0", reward=exp.options["reward"], horizon=exp.horizon, **kwargs)
            agent = make_agent(name, env.unwrapped, s, run_seed(base, r))
            env.reset(seed=table_seed(base, r))
            regret = play_env(agent, env, exp.horizon).regret
            final = [x["regret"] for x in rows if x["agent"] == name and x["run"] == r and x["t"] == exp.horizon]
            assert final == [pytest.approx(regret, rel=1e-12, abs=1e-9)], (name, r)


def test_block_checkpoints_are_cumulative_and_end_at_the_horizon():
    exp = get_experiment("dp-mab/epsilon").scaled(horizon=300)
    s = exp.settings[1]
    env = instance(exp, s)
    checkpoints = np.array([100, 200, 300])
    (out,) = play_batches([make_agent("AdaPUCB", env, s, 5, n_envs=4)], env, [1, 2, 3, 4], checkpoints)
    assert out.shape == (4, 3)
    assert (np.diff(out, axis=1) >= 0).all()
    assert (out[:, -1] <= 300 * env.gaps.max()).all()


@pytest.mark.parametrize(("experiment_id", "builtin"), [("dp-mab/epsilon", "UCB"), ("graph/side-observations", "UCB")])
def test_a_user_agent_plays_every_setting_next_to_the_built_in_agents(experiment_id, builtin, tmp_path, capsys):
    """``--agent file.py:make`` steps the env on the same rewards: a user's single UCB equals the built-in one."""
    from agents.experiments.cli import main

    path = tmp_path / "mine.py"
    path.write_text("import agents\n\n\ndef make(env, setting, seed):\n    return agents.UCB(env.n_arms, seed=seed)\n")
    out = tmp_path / "out"
    argv = ["run", experiment_id, "--runs", "3", "--horizon", "300", "--jobs", "1", "--no-progress",
            "--agent", f"{path}:make", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    results = pd.read_csv(out / "results.csv")
    exp = get_experiment(experiment_id)
    name = "mine.UCB"  # the agent's own name, UCB, is a built-in agent's: qualified by the file's stem
    mine = results[results["agent"] == name]
    assert set(mine["setting"]) == set(range(len(exp.settings)))  # every setting, every run, every checkpoint
    assert (mine.groupby("setting").size() == 3 * 100).all()
    assert results.notna().all().all()  # the user's rows fill the same columns as the built-in agents'
    ours = results[results["agent"] == builtin]
    paired = ours.merge(mine, on=["setting", "run", "t"], suffixes=("", "_mine"))
    assert len(paired) == len(ours) > 0
    np.testing.assert_array_equal(paired["regret_mine"].to_numpy(), paired["regret"].to_numpy())
    assert "User agents (" in text and f"| {name} |" in text and f"{name} − {builtin}" in text
    assert f"*{name} is below {builtin}* (your agent)" in text


def test_report_rebuilds_the_summary(tmp_path, capsys):
    from agents.experiments.cli import main

    out = tmp_path / "run"
    args = ["run", "graph/side-observations", "--runs", "2", "--horizon", "300", "--jobs", "1", "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    first = capsys.readouterr().out
    (out / "summary.md").unlink()
    assert main(["report", "graph/side-observations", str(out)]) == 0
    assert capsys.readouterr().out.strip() == first.split("Wrote")[0].strip()


@pytest.mark.parametrize(("horizon", "mark"), [(100_000, "✗"), (1_000, "–")])
def test_a_contradiction_below_the_full_horizon_is_undecided(horizon, mark):
    """UCB-N clearly above UCB in every run: ✗ at the full horizon, – (not yet) at a shorter one."""
    from agents.experiments.core.claims import Claim, Compare
    from agents.experiments.core.results import to_frame
    from agents.experiments.dpmab.analysis import summary

    exp = get_experiment("graph/side-observations").scaled(runs=5, horizon=horizon)
    exp = dataclasses.replace(exp, claims=(Claim("UCB-N below UCB", Compare("UCBN", "UCB", "<")),))
    rows = [
        {**s, "setting": i, "run": r, "agent": a, "t": horizon, "regret": float(base + r)}
        for i, s in enumerate(exp.settings)
        for r in range(5)
        for a, base in (("UCB", 100), ("UCBN", 200))
    ]
    text = summary(to_frame(rows), exp, {})
    assert f"- {mark} *UCB-N below UCB*" in text
