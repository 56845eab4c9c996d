"""Bring your own agent: the Python API, --agent, --set, and exact agreement with the built-in agents."""

from __future__ import annotations

import math
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import agents
from agents.experiments import get_experiment, run
from agents.experiments.budget.paper import PAPER_BEST_ALPHA
from agents.experiments.cli import main
from agents.user_agents import UserAgentError


class PlainUCB:
    """UCB (budget paper eq. 8: mean + α√(ln t / n)) in plain Python, lowest index on ties."""

    def __init__(self, n_arms: int, alpha: float) -> None:
        self.n_arms, self.alpha = n_arms, alpha
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.counts = [0] * self.n_arms
        self.sums = [0.0] * self.n_arms
        self.t = 0

    def act(self, obs: Any = None) -> int:
        for k in range(self.n_arms):
            if self.counts[k] == 0:
                return k
        width = self.alpha**2 * math.log(self.t + 1)  # ln of the current round t (1-based)
        values = [self.sums[k] / self.counts[k] + math.sqrt(width / self.counts[k]) for k in range(self.n_arms)]
        return max(range(self.n_arms), key=lambda k: (values[k], -k))

    def update(self, action: int, reward: float, info: dict[str, Any] | None = None) -> None:
        self.t += 1
        self.counts[action] += 1
        self.sums[action] += float(reward)


def plain_ucb(env: Any, setting: dict[str, Any], seed: int) -> PlainUCB:
    return PlainUCB(env.action_space.n, PAPER_BEST_ALPHA[(setting["scenario"], "UCB")])


def batched_ucb(env: Any, setting: dict[str, Any], seed: int, n_envs: int) -> agents.UCB:
    return agents.UCB(env.single_action_space.n, alpha=PAPER_BEST_ALPHA[(setting["scenario"], "UCB")],
                      n_envs=n_envs, seed=seed)  # fmt: skip


def _final(df: pd.DataFrame, agent: str) -> pd.DataFrame:
    return df[df["agent"] == agent].drop(columns=["agent", "alpha"]).reset_index(drop=True)


def test_plain_python_ucb_gives_exactly_the_numbers_of_agents_ucb():
    """The built-in UCB runs batched through its compiled kernels; the test's UCB steps one env per user."""
    df = run("budget/baselines", agents=["UCB", plain_ucb, ("batched", batched_ucb)], quick=True, horizon=400)
    assert set(df["agent"]) == {"UCB", "plain_ucb", "batched"}
    builtin = _final(df, "UCB")
    assert len(builtin) > 0
    pd.testing.assert_frame_equal(_final(df, "plain_ucb"), builtin, check_exact=True)
    pd.testing.assert_frame_equal(_final(df, "batched"), builtin, check_exact=True)


def test_a_user_agent_on_the_gap_family_equals_the_same_agent_built_in(tmp_path):
    df = run("gap/regret-eps", agents=["GAP", agents.UCBN, ("again", agents.UCBN)], runs=2, horizon=1500)
    assert list(df.columns) == ["gap", "edge_probability", "epsilon", "setting", "run", "agent", "t", "regret"]
    a, b = df[df["agent"] == "UCB-N"], df[df["agent"] == "again"]  # the class's own name, or the one given
    np.testing.assert_array_equal(a["regret"].to_numpy(), b["regret"].to_numpy())
    gap_final = df[(df["agent"] == "GAP") & (df["t"] == 1500)]["regret"].mean()
    assert a[a["t"] == 1500]["regret"].mean() < gap_final  # UCB-N is not private: far less regret


def test_run_returns_a_tidy_frame_and_keeps_builtin_numbers():
    only = run("gap/regret-p", agents=["GAP"], runs=2, horizon=1000)
    both = run("gap/regret-p", agents=["GAP", agents.UCBN], runs=2, horizon=1000)
    pd.testing.assert_frame_equal(only, both[both["agent"] == "GAP"].reset_index(drop=True))
    assert len(only) == 3 * 2 * 100  # settings × runs × checkpoints


AGENT_FILE = textwrap.dedent(
    """
    import agents

    def make(env, setting, seed):
        return agents.UCBN(env.action_space.n, seed=seed)

    class NotAnAgent:
        def __init__(self, env, setting, seed):
            pass
    """
)


def test_cli_agent_from_a_file_and_a_module(tmp_path, capsys, rendered_figures):
    path = tmp_path / "mine.py"
    path.write_text(AGENT_FILE)
    out = tmp_path / "out"
    argv = ["run", "gap/regret-eps", "--runs", "2", "--horizon", "1000", "--jobs", "1", "--no-progress",
            "--agent", f"{path}:make", "--agent", "agents:Random", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    results = pd.read_csv(out / "results.csv")
    # Labelled by the agents' own names: make builds a UCBN (UCB-N), agents.Random declares Random.
    assert {"UCB-N", "Random", "GAP", "DPSE"} <= set(results["agent"])
    assert "UCB-N − GAP" in text and "Random − GAP" in text and "| AAE | UCB-N | Random |" in text
    assert (out / "figure.png").stat().st_size > 0
    assert "## Your agents against the paper's" in text and "*UCB-N is below GAP* (your agent)" in text


NAMED_AGENT = textwrap.dedent(
    """
    import agents

    class MyUCBN(agents.UCBN):
        name = "Mine"

    def make(env, setting, seed):
        return MyUCBN(env.action_space.n, seed=seed)
    """
)


@pytest.mark.parametrize(
    ("entries", "names"),
    [
        (["{path}:MyUCBN"], ["Mine"]),  # a class: its declared name, without building it
        (["{path}:make", "Custom={path}:make"], ["Mine", "Custom"]),  # a factory: its agent's name; NAME= wins
        (["a=b/mine.py:make"], ["Mine"]),  # a relative path holding "=" names no agent
    ],
)
def test_user_agents_are_labelled_by_their_own_name_or_the_name_given(entries, names, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "a=b"
    folder.mkdir()
    path = folder / "mine.py"
    path.write_text(NAMED_AGENT)
    out = tmp_path / "out"
    argv = ["run", "gap/regret-eps", "--runs", "1", "--horizon", "200", "--jobs", "1", "--no-progress",
            "--out", str(out)]  # fmt: skip
    for entry in entries:
        argv += ["--agent", entry.format(path=path)]
    assert main(argv) == 0
    capsys.readouterr()
    results = pd.read_csv(out / "results.csv")
    assert set(results["agent"]) == {*get_experiment("gap/regret-eps").agents, *names}
    summary = (out / "summary.md").read_text()
    for name in names:
        assert f"{name} − GAP" in summary and f"*{name} is below GAP* (your agent)" in summary
    assert "make" not in summary and "MyUCBN" not in summary


def test_a_factory_that_fails_when_built_for_its_name_is_one_sentence_before_any_run(tmp_path, capsys):
    """The agent built before the runs to read its name fails as in a run: one sentence, exit 2, nothing written."""
    path = tmp_path / "broken.py"
    path.write_text("def make(env, setting, seed):\n    raise KeyError('no such agent')\n")
    out = tmp_path / "out"
    argv = ["run", "dp-mab/epsilon", "--runs", "1", "--horizon", "200", "--no-progress", "--agent", f"{path}:make",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if not x.startswith("Compiling numba kernels")]
    assert lines == ["banditlab: error: agent 'make' could not be built (KeyError: 'no such agent')."], err
    assert not out.exists()


def test_budget_summary_shows_user_agents_in_the_table_and_claims(tmp_path):
    from agents.experiments.cli import run_experiment

    _, text = run_experiment("budget/smucb-vs-ucb", extra_agents=["agents:Random"], quick=True, horizon=80, jobs=1,
                             out=tmp_path, progress=False)  # fmt: skip
    # The name "Random" is a built-in agent of the family, so the user entry is qualified by its module.
    assert "| agents.Random | – |" in text and "agents.Random − UCB" in text
    assert "*agents.Random is above SM-UCB* (your agent)" in text


def test_cli_user_agent_in_privacy_pairs_and_ldp(tmp_path, capsys):
    assert main(["run", "gap/privacy", "--runs", "2", "--horizon", "600", "--jobs", "1", "--no-progress",
                 "--agent", "agents:UCBN", "--out", str(tmp_path / "p")]) == 0  # fmt: skip
    assert "User agents: identical arm sequences" in capsys.readouterr().out
    df = run("ldp-linucb/sqrt-t", agents=["LinUCB", agents.Random], runs=1, horizon=500)
    assert set(df["agent"]) == {"LinUCB", "uniform random", "Random"}


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """What a small gap/regret-eps run with ``argv`` prints on stderr (stripped); it must exit 2."""
    try:
        code = main(["run", "gap/regret-eps", "--runs", "1", "--horizon", "100", "--no-progress",
                     "--out", str(tmp_path), *argv])  # fmt: skip
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--agent", "nowhere_module:Thing"], "module 'nowhere_module' cannot be imported"),
        (["--agent", "agents:NoSuchAgent"], "has no callable named 'NoSuchAgent'"),
        (["--agent", "no-colon"], "is not a built-in agent of gap/regret-eps"),
        (["--agent", "mod:1bad"], "--agent must be module.path:Factory"),
        (["--set", "n_arms=20", "--set", "gap=0.2"], "n_arms = 20"),
        (["--agent", "missing.py:make"], "does not exist"),
        (["--set", "nonsense=1"], "--set key must be a setting parameter of gap/regret-eps"),
        (["--set", "gap=2"], "--set gap must be a number in (0, 0.9], got '2'"),
        (["--set", "gap=x"], "--set gap must be a number"),
        (["--set", "epsilon=0.3"], "--set epsilon is the parameter gap/regret-eps varies"),
        (["--set", "n_arms=1.5"], "--set n_arms must be an integer"),
        (["--set", "gap"], "--set must be key=value"),
        (["--set", "gap=0.1", "--set", "gap=0.2"], "--set gap is given twice"),
        (["--task-timeout", "0"], "--task-timeout must be a positive number of seconds, got '0'"),
        (["--task-timeout", "1e7"], "--task-timeout must be at most 1e+06 seconds, got '1e7'"),
        (
            ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:1", "--task-timeout", "5"],
            "--task-timeout applies only to --backend local",
        ),  # fmt: skip
    ],
)
def test_cli_rejects_bad_agents_and_overrides_with_one_sentence(argv, needle, capsys, tmp_path):
    err = _refused(argv, capsys, tmp_path)
    assert needle in err and "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_agent_that_does_not_build_an_agent_is_one_sentence(tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text(AGENT_FILE)
    for jobs in ("1", "2"):
        argv = ["run", "gap/regret-eps", "--runs", "2", "--horizon", "100", "--jobs", jobs, "--no-progress",
                "--agent", f"{path}:NotAnAgent", "--out", str(tmp_path / f"out{jobs}")]  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "must build an object with act, update and reset" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="must build an object with act, update and reset"):
        run("gap/regret-eps", agents=[f"{path}:NotAnAgent"], runs=1, horizon=100)
    with pytest.raises(ValueError, match="is not a built-in agent of gap/regret-eps"):
        run("gap/regret-eps", agents=["UCB"], runs=1, horizon=100)


def test_set_overrides_a_setting_parameter():
    df = run("gap/regret-eps", agents=["GAP"], runs=1, horizon=500, overrides={"gap": 0.3, "n_arms": 6})
    assert set(df["gap"]) == {0.3}
    df = run("budget/smucb-vs-ucb", agents=["UCB"], quick=True, horizon=60, overrides={"gamma": "0.5"})
    assert set(df["gamma"]) == {0.5}


def test_meta_records_provenance(tmp_path):
    import json

    from agents.experiments.cli import run_experiment

    folder, _ = run_experiment("gap/regret-eps", agents=None, extra_agents=["agents:UCBN"], runs=1, horizon=300,
                               jobs=1, out=tmp_path, progress=False, overrides={"gap": "0.25"})  # fmt: skip
    meta = json.loads((folder / "meta.json").read_text())
    for key in ("version", "git_commit", "command", "python", "numpy", "numba", "jobs", "seconds"):
        assert key in meta
    assert meta["agents"][-1] == "UCB-N" and meta["user_agents"] == {"UCB-N": "agents:UCBN"}
    assert meta["overrides"] == {"gap": 0.25}


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        (lambda d: None, "must contain results.csv"),
        (lambda d: (d / "results.csv").write_text(""), "is empty"),
        (lambda d: (d / "results.csv").write_text("a,b\n"), "has a header but no rows"),
        (lambda d: (d / "results.csv").write_text("a,b\n1,2\n"), "must have the columns"),
        (lambda d: (d / "results.csv").write_bytes(b"\xff\xfe\x00garbage\n\x00"), "results.csv"),
        (lambda d: ((d / "results.csv").write_text("setting,run,agent,t,regret\n0,0,GAP,10,1.0\n"),
                    (d / "meta.json").write_text("{not json")), "is not valid JSON"),
        (lambda d: ((d / "results.csv").write_text("setting,run,agent,t,regret\n0,0,GAP,10,1.0\n"),
                    (d / "meta.json").write_text('{"runs": -1}')), "runs must be a non-negative integer"),
        (lambda d: ((d / "results.csv").write_text("setting,run,agent,t,regret\n0,0,GAP,10,1.0\n"),
                    (d / "meta.json").write_text('[1, 2]')), "must hold a JSON object"),
        (lambda d: ((d / "results.csv").write_text("setting,run,agent,t,regret\n0,0,GAP,10,1.0\n"),
                    (d / "meta.json").write_text('{"experiment": "gap/privacy"}')), "holds results of 'gap/privacy'"),
    ],
)  # fmt: skip
def test_report_refuses_bad_input_with_one_sentence(setup, needle, tmp_path, capsys):
    setup(tmp_path)
    assert main(["report", "gap/regret-eps", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_overrides_reach_the_settings_prepared_for_user_agents():
    from agents.experiments.api import configure

    exp = configure("ldp-linucb/sqrt-t", agents=["LDP-LinUCB", agents.Random], overrides={"epsilon": "2"})
    assert {s["epsilon"] for s in exp.settings} == {2.0}
    assert [s["agent"] for s in exp.settings].count("Random") == 2  # one per grid (authors', realistic)
    exp = configure("budget/baselines", agents=["UCB", agents.Random], overrides={"gamma": "0.25"})
    assert {s["gamma"] for s in exp.settings} == {0.25}


@pytest.mark.parametrize("kind", ["folder", "FIFO"])
def test_agent_file_that_is_a_folder_or_fifo_is_named_as_such(kind, capsys, tmp_path):
    path = tmp_path / "dir.py"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)  # importing it would block for ever
    code = main(["run", "gap/regret-eps", "--runs", "1", "--horizon", "100", "--no-progress",
                 "--out", str(tmp_path / "out"), "--agent", f"{path}:make"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    what = "is a folder, not a file" if kind == "folder" else "is a FIFO (named pipe), not a regular file"
    assert f"{path} {what}" in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1


BIG = "9" * 100_000


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--set", "gap=" + BIG], "--set gap must be a number in (0, 0.9], got '9999"),
        (["--set", BIG + "=1"], "--set key must be a setting parameter of gap/regret-eps"),
        (["--set", BIG], "--set must be key=value"),
        (["--set", "gap=" + BIG, "--set", "gap=" + BIG], "--set gap is given twice"),
        (["--agent", BIG + ".py:make"], "characters) cannot be read (OSError)"),
        (["--agent", "x=" + BIG + ".py:make"], "characters) cannot be read (OSError)"),
        (["--agent", BIG + ":make"], "cannot be imported (no such module)"),
        (["--agent", "mod:" + BIG], "--agent must be module.path:Factory"),
        (["--agent", BIG], "is not a built-in agent of gap/regret-eps"),
        (["--jobs", BIG], "--jobs must be an integer >= 1"),
        (["--set", BIG + "=1", "--set", BIG + "=2"], "is given twice"),
        (["--backend", BIG], "invalid choice"),
        ([BIG], "unrecognized arguments"),
    ],
    ids=["set-value", "set-key", "set-form", "set-twice", "agent-file", "named-agent-file", "agent-module"]
    + ["agent-factory", "agent-name", "jobs", "set-key-twice", "argparse-choice", "argparse-extra"],
)
def test_cli_quotes_a_huge_argument_by_a_short_prefix_and_its_length(argv, needle, capsys, tmp_path):
    err = _refused(argv, capsys, tmp_path)
    assert needle in err and "Traceback" not in err, err[:400]
    assert len(err.splitlines()) == 1 and len(err) < 400, f"{len(err)} characters: {err[:400]}"
    assert "... (100" in err or "...' (100" in err, err[:400]  # the prefix, then the length of what was given


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", BIG], "experiment id must be one of"),
        (["report", "gap/regret-eps", BIG], "cannot be read (OSError)"),
        (["audit", BIG], "agent must be one of"),
    ],
    ids=["experiment-id", "report-folder", "audit-agent"],
)
def test_cli_quotes_a_huge_positional_argument_by_a_short_prefix(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and ("... (1000" in err or "...' (1000" in err), err[:800]
    assert len(err) < 700, err[:800]


class Failing:
    """An agent that fails as ``how`` says in round 4: raises in update, calls sys.exit, or acts out of range."""

    def __init__(self, n_arms: int, how: str, n_envs: int | None = None) -> None:
        self.n_arms, self.how, self.n_envs, self.t = n_arms, how, n_envs, 0

    def reset(self, seed: int | None = None) -> None:
        self.t = 0

    def act(self, obs: Any = None) -> Any:
        self.t += 1
        if self.t == 4 and self.how == "exit":
            raise SystemExit("giving up")
        if self.n_envs is not None:
            return np.full(self.n_envs + (self.t == 4 and self.how == "invalid"), self.t % self.n_arms)
        return self.t % self.n_arms

    def update(self, action: Any, reward: Any, info: Any = None) -> None:
        if self.t == 4 and self.how == "update":
            raise RuntimeError("cannot learn")


def failing_in_update(env: Any, setting: dict[str, Any], seed: int) -> Failing:
    return Failing(env.action_space.n, "update")


def exiting(env: Any, setting: dict[str, Any], seed: int) -> Failing:
    return Failing(env.action_space.n, "exit")


def invalid_batch(env: Any, setting: dict[str, Any], seed: int, n_envs: int) -> Failing:
    return Failing(env.single_action_space.n, "invalid", n_envs)


@pytest.mark.parametrize(
    ("eid", "factory", "needle", "frame"),
    [
        ("gap/privacy", failing_in_update, "failed in update (RuntimeError: cannot learn)", "in update"),
        ("ldp-linucb/sqrt-t", exiting, "failed in act (it called sys.exit('giving up'))", "in act"),
        ("budget/baselines", invalid_batch, "returned an invalid action (actions must be", None),
    ],
)
def test_run_reports_a_failing_user_agent_of_any_family_as_one_sentence(eid, factory, needle, frame):
    """The step API of each family (pairs of tables, contexts, batches on a vector env): agent, setting, run, round."""
    with pytest.raises(UserAgentError) as exc:
        run(eid, agents=[("mine", factory)], runs=1, horizon=50)
    sentence = str(exc.value)
    assert sentence.startswith(f"agent 'mine' {needle}"), sentence
    assert " in setting 0" in sentence and ", run 0, round 4 of 50 (counted from 1)" in sentence, sentence
    assert "\n" not in sentence
    shown = [x.strip() for x in exc.value.frames.splitlines() if x.strip().startswith("File ")]
    assert shown == ([f'File "{__file__}", line {_line_of(frame)}, {frame}'] if frame else []), exc.value.frames


def _line_of(frame: str | None) -> int:
    """The line of this file where Failing fails ``in act`` or ``in update``."""
    needle = {"in act": 'raise SystemExit("giving up")', "in update": 'raise RuntimeError("cannot learn")'}[frame or ""]
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, x in enumerate(lines, 1) if needle in x and "needle" not in x)


def test_task_timeout_stops_a_long_task_with_one_sentence_naming_it():
    """A task (here built-in agents only, far longer than the limit) still running after task_timeout is stopped."""
    with pytest.raises(UserAgentError) as exc:
        run("gap/regret-eps", runs=1, horizon=2_000_000, task_timeout=0.01)
    assert str(exc.value) == (
        "the task of setting 0 (gap=0.2, edge_probability=0.1, epsilon=0.05), run 0 was still running after "
        "--task-timeout 0.01 s and was stopped"
    )
    assert exc.value.frames == ""


def compiling_for_a_second(env: Any, setting: dict[str, Any], seed: int) -> agents.Random:
    """A factory that spends a second "compiling": inside numba's compile event, as numba broadcasts it."""
    import time

    from numba.core import event

    event.start_event("numba:compile")
    time.sleep(1.0)
    event.end_event("numba:compile")
    return agents.Random(env.action_space.n, seed=seed)


def test_task_timeout_does_not_count_the_time_numba_spends_compiling():
    df = run("gap/regret-eps", agents=[("mine", compiling_for_a_second)], runs=1, horizon=50, task_timeout=0.5)
    assert set(df["agent"]) == {"mine"}


def test_a_task_timeout_never_fires_inside_numbas_own_python_code():
    """An exception raised half-way through numba's dispatcher or cache loader can break a kernel for good.

    The timer's handler defers the timeout while a frame of numba (or llvmlite) is on the stack,
    and raises it once that code has returned.
    """
    import time

    from agents.experiments.core.runner import deadline, interruptible
    from agents.user_agents import TaskTimeout

    inside: dict[str, Any] = {"__name__": "numba.core.dispatcher"}
    exec("import sys, time\ndef busy(seconds):\n    time.sleep(seconds)\n    return sys._getframe()\n", inside)
    assert not interruptible(inside["busy"](0))
    assert interruptible(sys._getframe())
    returned = []
    with pytest.raises(TaskTimeout):
        with deadline(0.2):
            inside["busy"](0.6)  # the timer fires in here: deferred, not raised
            returned.append(True)
            time.sleep(5)  # raised here, in our code
    assert returned == [True]


ODD_AGENTS = textwrap.dedent(
    '''
    import sys
    import numpy as np


    class Odd:
        """Fails in act at round 3 as HOW says; its name and attributes may fail to be read."""

        def __init__(self, how):
            self.how, self.t = how, 0

        def __getattr__(self, attr):  # a proxy that fails for every attribute it does not have
            raise RuntimeError(f"no {attr} here")

        @property
        def name(self):
            raise RuntimeError("no name either")

        def reset(self, seed=None):
            self.t = 0

        def act(self, obs=None):
            self.t += 1
            if self.t == 3:
                if self.how == "exit0":
                    sys.exit(0)
                if self.how == "base":
                    raise BaseException("weird")
                if self.how == "unprintable":
                    class Unprintable(Exception):
                        def __str__(self):
                            raise ValueError("no text")
                    raise Unprintable()
            return self.t % 2

        def update(self, action, reward, info=None):
            pass


    def exit0(env, setting, seed):
        return Odd("exit0")


    def base(env, setting, seed):
        return Odd("base")


    def unprintable(env, setting, seed):
        return Odd("unprintable")
    '''
)


@pytest.mark.parametrize(
    ("factory", "cause"),
    [
        ("exit0", "(it called sys.exit(0))"),
        ("base", "(BaseException: weird)"),
        ("unprintable", "(Unprintable: <its message could not be read>)"),
    ],
)
def test_any_failure_of_a_users_code_is_one_sentence_in_run_and_audit(factory, cause, tmp_path, capsys):
    """sys.exit(0) in act read as success in audit (exit 0, no output); a BaseException, a failing
    __getattr__ or name property, or an exception whose text fails gave tracebacks."""
    from agents.audit import audit
    from agents.user_agents import load_factory

    path = tmp_path / "odd.py"
    path.write_text(ODD_AGENTS)
    ref = f"{path}:{factory}"
    with pytest.raises(UserAgentError) as exc:
        run("gap/regret-gap", agents=[("odd", ref)], runs=1, horizon=50)
    assert str(exc.value).startswith(f"agent 'odd' failed in act {cause}"), str(exc.value)
    with pytest.raises(UserAgentError) as exc:
        audit(load_factory(ref), runs=200, horizon=20)
    assert cause in str(exc.value) and "\n" not in str(exc.value), str(exc.value)
    argv = ["audit", "--agent", ref, "--runs", "200", "--horizon", "20"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("banditlab: error: agent") and cause in err and "Traceback" not in err, err


def test_a_module_that_exits_at_import_is_one_sentence(tmp_path, capsys):
    path = tmp_path / "leaving.py"
    path.write_text("import sys\nsys.exit('bye at import')\n")
    for argv in (["audit", "--agent", f"{path}:f", "--runs", "200"], ["run", "gap/regret-gap", "--agent", f"{path}:f"]):
        assert main([*argv, "--out", str(tmp_path / argv[0])] if argv[0] == "run" else argv) == 2
        err = capsys.readouterr().err
        assert "importing" in err and "it called sys.exit('bye at import')" in err and "Traceback" not in err, err


def test_jobs_may_be_a_numpy_integer_as_runs_and_horizon_may() -> None:
    df = run("gap/regret-gap", runs=np.int64(1), horizon=np.int32(300), jobs=np.int64(1))
    assert set(df["run"]) == {0}
