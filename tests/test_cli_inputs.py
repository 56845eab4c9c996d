"""Odd inputs at the command line and the Python API: one sentence naming the input, never a traceback.

An unknown experiment id names the closest one; a leading ``~`` in a path is the home folder (as
pandas and matplotlib, which write the files, take it); ``report`` writes the summary the run
wrote (its user agents and ``--set`` parameters); the API refuses arguments of the wrong kind
(``quick="no"``, ``agents=42``, ``overrides="x"``...) with :class:`UsageError` before any work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.experiments import UsageError, get_experiment, run, run_experiment, score
from agents.experiments.cli import main
from agents.experiments.core.results import ResultsError, read_results
from agents.user_agents import user_agent

EID = "gap/regret-eps"
TINY = ["--runs", "2", "--horizon", "20", "--jobs", "1", "--no-progress"]
AGENT = (
    "from agents.stochastic.greedy import EpsilonGreedy\n\n\n"
    "def Factory(env, setting, seed):\n"
    "    return EpsilonGreedy(env.action_space.n, seed=seed)\n"
)


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("banditlab: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------------ experiment ids


@pytest.mark.parametrize(
    ("given", "meant"),
    [("GAP/PRIVACY", "gap/privacy"), ("gap/regret-esp", "gap/regret-eps"), (" budget/alpha ", "budget/alpha")],
)
def test_an_unknown_experiment_id_names_the_closest_one(given, meant, capsys):
    assert main(["run", given, "--quick"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"got {given!r}; did you mean {meant!r}?" in line
    with pytest.raises(ValueError, match=f"did you mean {meant!r}"):
        get_experiment(given)


def test_an_id_close_to_none_is_refused_without_a_guess(capsys):
    assert main(["report", "nothing-like-it", "."]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.endswith("got 'nothing-like-it'.") and "did you mean" not in line


# ------------------------------------------------------------------------------ ~ in paths


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder of its own, and a current folder elsewhere (where a literal ``~`` folder would appear)."""
    home = tmp_path / "home"
    cwd = tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    return home


def test_out_and_report_folder_with_a_tilde_are_in_the_home_folder(home, capsys):
    assert main(["run", EID, *TINY, "--out", "~/res"]) == 0, capsys.readouterr().err
    first = capsys.readouterr().out
    assert (home / "res" / "results.csv").is_file() and (home / "res" / "summary.md").is_file()
    assert not (Path.cwd() / "~").exists()
    (home / "res" / "summary.md").unlink()
    assert main(["report", EID, "~/res"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == first.split("Wrote")[0].strip()
    assert not (Path.cwd() / "~").exists()


def test_the_api_out_with_a_tilde_is_in_the_home_folder(home):
    folder, _ = run_experiment(EID, agents=["GAP"], runs=1, horizon=10, progress=False, out="~/api")
    assert folder == home / "api" and (home / "api" / "meta.json").is_file()
    assert not (Path.cwd() / "~").exists()


def test_an_agent_file_with_a_tilde_is_in_the_home_folder(home):
    (home / "mine.py").write_text(AGENT)
    loaded = user_agent("~/mine.py:Factory", ())
    assert loaded.ref == f"{home / 'mine.py'}:Factory" and loaded.name == "Factory"


def test_an_empty_report_folder_is_refused_as_an_empty_out_is(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", EID, ""])
    assert exc.value.code == 2
    assert "FOLDER must name a folder, got ''" in _one_error_line(capsys.readouterr().err)


# ------------------------------------------------------------------------------ report as the run wrote it


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("agent")
    (folder / "mine.py").write_text(AGENT)
    return folder / "mine.py"


def _run_then_report(argv: list[str], out: Path, capsys) -> tuple[str, str]:
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    first = capsys.readouterr().out.split("Wrote")[0].strip()
    (out / "summary.md").unlink()
    assert main(["report", EID, str(out)]) == 0, capsys.readouterr().err
    return first, capsys.readouterr().out.strip()


def test_report_keeps_the_user_agents_and_set_parameters_of_the_run(mine, tmp_path, capsys):
    argv = ["run", EID, *TINY, "--agent", f"Mine={mine}:Factory", "--set", "n_arms=5"]
    first, again = _run_then_report(argv, tmp_path / "out", capsys)
    assert "K = 5" in first and "| Mine |" in first and "Mine − GAP" in first
    assert again == first


def test_report_keeps_the_built_in_agents_the_api_chose(tmp_path, capsys):
    out = tmp_path / "out"
    _, first = run_experiment(EID, agents=["GAP", "DPSE"], runs=2, horizon=20, progress=False, out=out)
    (out / "summary.md").unlink()
    assert main(["report", EID, str(out)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == first.strip()


def test_report_refuses_overrides_in_meta_it_cannot_apply(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", EID, *TINY, "--set", "n_arms=5", "--out", str(out)]) == 0
    capsys.readouterr()
    meta = json.loads((out / "meta.json").read_text())
    meta["overrides"] = {"n_arms": "many"}
    (out / "meta.json").write_text(json.dumps(meta))
    assert main(["report", EID, str(out)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "meta.json: its overrides cannot be applied" in line and "--set n_arms must be an integer" in line


# ------------------------------------------------------------------------------ results files


@pytest.mark.parametrize("encoding", ["utf-16", "latin-1"])
def test_a_results_file_not_in_utf8_says_so(encoding, tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("setting,run,agent,t,regret\n0,0,Müller,10,1.5\n", encoding=encoding)
    with pytest.raises(ResultsError, match=r"is not UTF-8 text \(byte \d+ is not UTF-8\).*save it as UTF-8"):
        read_results(path)


# ------------------------------------------------------------------------------ the Python API


def _factory(env, setting, seed):
    from agents.stochastic.greedy import EpsilonGreedy

    return EpsilonGreedy(env.action_space.n, seed=seed)


SMALL = {"runs": 1, "horizon": 10}


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: run(EID, agents=["GAP"], quick="no", **SMALL), "quick must be True or False, got 'no'"),
        (lambda: run(EID, agents=["GAP"], quick=None, **SMALL), "quick must be True or False, got None"),
        (lambda: run(EID, agents=["GAP"], progress="yes", **SMALL), "progress must be True or False, got 'yes'"),
        (lambda: run(EID, agents=42, **SMALL), "agents must be a list of agents"),
        (lambda: run(EID, agents={"Mine": _factory}, **SMALL), "got the mapping"),
        (lambda: run(EID, agents=["GAP"], overrides="n_arms=5", **SMALL), "overrides must be a mapping"),
        (lambda: run(EID, agents=["GAP"], overrides=[("n_arms", 5)], **SMALL), "overrides must be a mapping"),
        (lambda: run_experiment(EID, extra_agents=5, **SMALL), "factory) pairs), got 5."),
        (lambda: run_experiment(EID, extra_agents="GAPU", **SMALL), "extra_agents must be a list of agents"),
        (lambda: run_experiment(EID, out="a\0b", **SMALL), "out must be a folder path"),
        (lambda: run_experiment(EID, out="", **SMALL), "out must be a folder path"),
        (lambda: run_experiment(EID, backend="dask", scheduler=8786, **SMALL), "--scheduler must be a Dask scheduler"),
        (lambda: run_experiment(EID, quick="yes", **SMALL), "quick must be True or False"),
        (lambda: score("UCB", quick="yes", builtins=["UCB"]), "quick must be True or False"),
        (lambda: score("UCB", quick=True, builtins=5), "builtins must be a list of built-in agent names"),
        (lambda: score("UCB", quick=True, builtins="UCB"), "builtins must be a list of built-in agent names"),
        (lambda: score("UCB", quick=True, builtins=[["UCB"]]), "builtins must name built-in agents"),
    ],
)
def test_the_api_refuses_arguments_of_the_wrong_kind_in_one_sentence(call, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, but if it were, it lands here
    with pytest.raises(UsageError) as exc:
        call()
    text = str(exc.value)
    assert needle in text and "\n" not in text
    assert list(tmp_path.iterdir()) == []


def test_a_results_table_too_large_for_the_memory_limit_is_refused_before_it_is_read(tmp_path, monkeypatch, capsys):
    """`report` on a results.csv it could not hold in memory: one sentence and status 2, not an out-of-memory end."""
    out = tmp_path / "out"
    assert main(["run", EID, *TINY, "--out", str(out)]) == 0
    capsys.readouterr()
    size = (out / "results.csv").stat().st_size
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", str(2 * size))  # the table's parse needs more than twice its size
    with pytest.raises(ResultsError, match=r"results\.csv \(.*\) read as a table would need about .* than the limit"):
        read_results(out / "results.csv")
    assert main(["report", EID, str(out)]) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert "read as a table would need about" in err and "$BANDIT_ENVS_MEMORY_LIMIT" in err
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", str(100 * size))
    assert len(read_results(out / "results.csv")) > 0
