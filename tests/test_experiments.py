"""Experiments: every id runs at tiny scale, the CLI validates its input, the runner is exact."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from rollouts import play_env

import bandit_envs  # noqa: F401
from agents import GAP
from agents.experiments import EXPERIMENTS, get_experiment
from agents.experiments.cli import main, run_experiment
from agents.experiments.core.backends import LocalBackend
from agents.experiments.core.results import to_frame
from agents.experiments.core.runner import tasks_for
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.stats import wilson
from agents.experiments.gap.analysis import privacy_figure, privacy_table
from agents.experiments.gap.task import make_agent, privacy_task, regret_task


@pytest.mark.parametrize("experiment_id", sorted(e for e in EXPERIMENTS if e.startswith("gap/")))
def test_every_gap_experiment_runs_and_writes_outputs(experiment_id, tmp_path, rendered_figures):
    folder, text = run_experiment(experiment_id, runs=2, horizon=3000, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    assert EXPERIMENTS[experiment_id].source in text
    if experiment_id.startswith("gap/privacy"):
        assert "| 0.05 | 0.1 | 0.05 |" in text and "| 94 |" in text  # the paper's Table 1 beside ours
    else:
        assert "GAP − DPSE" in text


def test_cli_list_run_and_report(tmp_path, capsys):
    assert main(["list"]) == 0
    assert "gap/privacy" in capsys.readouterr().out
    for eid in ("gap/regret-p", "gap/privacy"):
        out = tmp_path / eid.replace("/", "-")
        code = main(["run", eid, "--runs", "2", "--horizon", "2000", "--jobs", "1", "--out", str(out), "--no-progress"])
        assert code == 0
        first = capsys.readouterr().out
        assert "Wrote" in first
        (out / "summary.md").unlink()
        assert main(["report", eid, str(out)]) == 0
        assert capsys.readouterr().out.strip() == first.split("Wrote")[0].strip()
    assert main(["report", "gap/privacy", str(tmp_path / "nowhere")]) == 2
    assert "must contain results.csv" in capsys.readouterr().err


def _exit_status(argv: list[str]) -> object:
    """banditlab's exit status for ``argv``, whether main returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "gap/nope"], "experiment id must be one of"),
        (["run", "gap/privacy", "--runs", "0"], "--runs must be an integer >= 1"),
        (["run", "gap/privacy", "--jobs", "x"], "--jobs must be an integer >= 1"),
        (["run", "gap/privacy", "--jobs", "0"], "--jobs must be an integer >= 1, got '0'"),
        (["run", "gap/privacy", "--jobs", "-2"], "--jobs must be an integer >= 1, got '-2'"),
        (["run", "gap/privacy", "--jobs", "1.5"], "--jobs must be an integer >= 1, got '1.5'"),
        (["run", "gap/privacy", "--horizon", "5"], "--horizon must be an integer >= 10"),
        (["run", "gap/privacy", "--seed", "-3"], "--seed must be an integer >= 0"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_rejects_bad_input_with_one_sentence(argv, needle, capsys):
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err


#: Integers past what the runs handle: beyond any int64, the largest int64, one past 2**53.
TOO_LARGE = [10**20, 2**63 - 1, 2**53 + 1]


@pytest.mark.parametrize(
    ("command", "option", "value", "allowed"),
    [
        *(("run", "--horizon", v, "an integer >= 10 and <= 2**53 (9007199254740992)") for v in TOO_LARGE),
        ("run", "--runs", 2**53 + 1, "an integer >= 1 and <= 2**53 (9007199254740992)"),
        ("run", "--seed", 2**63, "an integer >= 0 and <= 2**63 - 1 (9223372036854775807)"),
        ("audit", "--seed", 2**63, "an integer >= 0 and <= 2**63 - 1 (9223372036854775807)"),
    ],
)
def test_the_cli_refuses_an_integer_option_past_its_range_as_it_parses(command, option, value, allowed, capsys):
    from agents.experiments.cli import build_parser

    target = "gap/regret-eps" if command == "run" else "GAP"
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, target, option, str(value)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"banditlab: error: argument {option}: {option} must be {allowed}, got '{value}'" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_horizon_beyond_any_int64_is_one_sentence_not_a_numpy_error(capsys, tmp_path):
    argv = ["run", "gap/regret-eps", "--quick", "--horizon", "99999999999999999999", "--out", str(tmp_path / "o")]
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("banditlab: error: ") and "--horizon must be an integer >= 10 and <= 2**53" in err, err
    assert "Traceback" not in err and "ufunc" not in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("keyword", "value", "needle"),
    [
        *(("horizon", v, f"--horizon must be an integer >= 10 and <= 2**53 (9007199254740992), got {v}.") for v in
          TOO_LARGE),
        ("horizon", 5, "--horizon must be an integer >= 10"),
        ("horizon", True, "--horizon must be an integer >= 10 and <= 2**53 (9007199254740992), got True."),
        ("runs", 0, "--runs must be an integer >= 1 and <= 2**53 (9007199254740992), got 0."),
        ("runs", True, "--runs must be an integer >= 1 and <= 2**53 (9007199254740992), got True."),
        ("runs", 1.5, "--runs must be an integer >= 1 and <= 2**53 (9007199254740992), got 1.5."),
        ("runs", "2", "--runs must be an integer >= 1 and <= 2**53 (9007199254740992), got '2'."),
        ("runs", 2**53 + 1, "--runs must be an integer >= 1 and <= 2**53"),
        ("seed", -1, "--seed must be an integer >= 0 and <= 2**63 - 1 (9223372036854775807), got -1."),
        ("seed", 1.5, "--seed must be an integer >= 0 and <= 2**63 - 1 (9223372036854775807), got 1.5."),
        ("seed", True, "--seed must be an integer >= 0 and <= 2**63 - 1 (9223372036854775807), got True."),
        ("seed", None, "--seed must be an integer >= 0 and <= 2**63 - 1 (9223372036854775807), got None."),
        ("seed", 2**63, "--seed must be an integer >= 0 and <= 2**63 - 1"),
        pytest.param("seed", 10**5000, "--seed must be an integer >= 0 and <= 2**63 - 1 (9223372036854775807), got "
                     "an integer of 16610 bits.", id="seed-5001-digits"),  # too long for Python to print
    ],
)  # fmt: skip
def test_the_api_refuses_a_count_or_seed_out_of_range_naming_it(keyword, value, needle):
    """Refused before any task is built, as on the command line; never numpy's words or an empty table."""
    from agents.experiments import UsageError
    from agents.experiments.api import configure

    with pytest.raises(UsageError) as refused:
        configure("gap/regret-eps", quick=True, **{keyword: value})
    assert needle in str(refused.value), str(refused.value)


def test_the_api_refuses_zero_runs_instead_of_returning_an_empty_table():
    from agents.experiments import UsageError, run

    with pytest.raises(UsageError, match=r"--runs must be an integer >= 1 and <= 2\*\*53 .*got 0\."):
        run("gap/regret-eps", quick=True, runs=0, horizon=100)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("synthetic-movielens", "data must be a list of data sets (names or paths), got the string "
         "'synthetic-movielens'; give ['synthetic-movielens'] for one."),
        (3, "data must be a list of data sets (names or paths), got 3."),
        ([3], "data must hold names or paths (text), got 3 at position 0."),
    ],
)  # fmt: skip
def test_the_api_refuses_data_that_is_not_a_list_of_names_or_paths(data, needle):
    from agents.experiments import UsageError
    from agents.experiments.api import configure

    with pytest.raises(UsageError) as refused:
        configure("budget/baselines", quick=True, data=data)
    assert str(refused.value) == needle


def test_checkpoints_refuse_a_horizon_float64_cannot_count_exactly():
    from agents.experiments.core.checkpoints import evenly_spaced

    assert evenly_spaced(2**53, 4).tolist() == [2**51, 2**52, 3 * 2**51, 2**53]
    with pytest.raises(
        ValueError, match=r"^horizon must be an integer >= 1 and <= 2\*\*53 .*got 9223372036854775807\.$"
    ):
        evenly_spaced(2**63 - 1, 100)


def test_unknown_experiment_id_is_one_clear_sentence():
    with pytest.raises(ValueError, match="experiment id must be one of"):
        get_experiment("gap/figure-9")


def test_runner_regret_equals_the_step_loop_on_the_gym_env():
    """Run r of the runner is GraphBandit-v0 reset with seed table_seed(base, r), played step by step."""
    exp = get_experiment("gap/regret-eps").scaled(runs=1, horizon=4000)
    rows = regret_task(exp, 2, 0, 5)
    setting = exp.settings[2]
    env = gym.make(
        "GraphBandit-v0",
        horizon=exp.horizon,
        gap=setting["gap"],
        edge_probability=setting["edge_probability"],
        instance_seed=0,
    )
    for name in exp.agents:
        agent = make_agent(name, env.unwrapped, setting, agent_seed(5, 0))
        env.reset(seed=table_seed(5, 0))
        regret = play_env(agent, env, exp.horizon).regret
        final = [x["regret"] for x in rows if x["agent"] == name and x["t"] == exp.horizon]
        assert final == [pytest.approx(regret, rel=1e-12, abs=1e-9)], name


@pytest.mark.usefixtures("uncapped_epsilon")  # ε = 1e6: noise of 1e-9, the noiseless limit
def test_privacy_pair_mechanism_detects_a_decisive_change():
    """Two tied arms on an edge, ε huge (noise ≈ 1e-9): arm 1 leads epoch 1 by one entry; zeroing
    that entry hands the lead to arm 0, so Ω_2 and the arm sequence change right after epoch 1."""
    adj = np.array([[0, 1], [1, 0]], dtype=bool)
    horizon = 6000
    table = np.full((horizon, 2), 0.5)
    table[10, 1] = 0.8
    gaps = np.zeros(2)
    runs = []
    for override in (None, (10, 1, 0.0)):
        agent = GAP(2, horizon, 1e6, adj, delta=0.01, seed=0)
        first_epoch = int(agent.epoch_length[0]) * len(agent.independent_set[0])
        runs.append(agent.simulate(table, adj, gaps, override=override, record_actions=True).actions)
    a, b = runs
    assert np.array_equal(a[:first_epoch], b[:first_epoch])
    assert a[first_epoch] == 1 and b[first_epoch] == 0


@pytest.mark.parametrize("experiment_id", ["gap/privacy", "gap/privacy-fresh"])
def test_privacy_pairs_rows(experiment_id):
    exp = get_experiment(experiment_id).scaled(runs=1, horizon=3000)
    rows = [privacy_task(exp, 4, r, 0)[0] for r in range(8)]
    for r in rows:
        if experiment_id == "gap/privacy" and not r["entry_observed"]:
            assert r["identical"] and r["first_difference"] == -1  # never read: identical
        if not r["identical"] and experiment_id == "gap/privacy":
            assert r["first_difference"] > r["t_changed"]
    assert privacy_table(to_frame(rows), exp)[4]["n"] == 8


def test_parallel_jobs_give_the_same_rows_as_one_process():
    exp = get_experiment("gap/regret-gap").scaled(runs=2, horizon=2000)
    tasks = tasks_for(exp, 3)
    pending = list(enumerate(tasks))
    one = dict(LocalBackend(1).run(pending))
    two = dict(LocalBackend(2).run(pending))
    assert [one[i] for i in range(len(tasks))] == [two[i] for i in range(len(tasks))]


def test_wilson_interval_known_values():
    lo, hi = wilson(90, 100)
    assert lo == pytest.approx(0.8256, abs=1e-4) and hi == pytest.approx(0.9448, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert np.isclose(sum(wilson(50, 100)), 1.0)


def _wilson_closed_form(k: int, n: int) -> tuple[float, float]:
    """Wilson (1927) score interval without continuity correction, as the textbook formula reads."""
    z = 1.959963984540054
    p, den = k / n, 1 + z**2 / n
    centre, half = (p + z**2 / (2 * n)) / den, z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def test_wilson_is_the_score_interval_without_continuity_correction_and_exact_at_the_ends():
    for n in (1, 2, 3, 7, 10, 30, 99, 100, 250, 1000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            lo, hi = wilson(k, n)
            ref_lo, ref_hi = _wilson_closed_form(k, n)
            assert abs(lo - ref_lo) <= 1e-12 and abs(hi - ref_hi) <= 1e-12, (k, n, lo, hi, ref_lo, ref_hi)
            assert type(lo) is float and type(hi) is float
        assert wilson(0, n)[0] == 0.0 and wilson(n, n)[1] == 1.0  # an observed 0% or 100% lies in its interval


def test_privacy_figure_with_all_pairs_identical(tmp_path, rendered_figures):
    """A 100% ratio puts the Wilson bound a rounding error past it; the figure must still draw."""
    exp = get_experiment("gap/privacy").scaled(runs=3, horizon=100)
    rows = [{**s, "setting": i, "run": r, "agent": "GAP", "identical": True, "entry_observed": False}
            for i, s in enumerate(exp.settings) for r in range(3)]  # fmt: skip
    privacy_figure(to_frame(rows), exp, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0


def test_rl_experiment_without_stable_baselines3_is_one_sentence(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "stable_baselines3" else real(name, *a)
    )
    assert main(["run", "rl/graph", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "needs stable-baselines3 and torch" in err and "Traceback" not in err


@pytest.mark.parametrize("experiment_id", ["gap/regret-eps", "gap/privacy", "budget/baselines", "ldp-linucb/epsilon"])
def test_the_shortest_horizon_the_cli_accepts_runs(experiment_id: str) -> None:
    """A horizon shorter than the number of checkpoints records each round once, never a round 0."""
    from agents.experiments import run
    from agents.experiments.core.checkpoints import evenly_spaced

    assert evenly_spaced(10, 50).tolist() == list(range(1, 11))
    assert evenly_spaced(10**5, 100).tolist() == np.linspace(1000, 10**5, 100).astype(int).tolist()
    frame = run(experiment_id, quick=True, runs=1, horizon=10)
    assert len(frame) > 0


def test_run_help_says_which_experiments_take_data(capsys):
    from agents.experiments.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "budget and ldp-linucb experiments" in text and "ldp-linucb/realistic" in text
