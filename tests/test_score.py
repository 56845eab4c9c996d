"""``banditlab score``: the scorecard's normalisation, user agents, bad inputs and resume.

Tests run the suite at a test-only scale (3 seeds, 1% of each horizon) with only UCB among the
built-ins, so each run takes seconds.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
from conftest import drawing_figures

from agents.experiments import UsageError, UserAgentError, score
from agents.experiments.cli import main
from agents.experiments.core.outputs import OutputError
from agents.experiments.scorecard import PROBLEMS, SUITE_VERSION, Scale
from agents.experiments.scorecard.panel import eligible

TINY = Scale("test", 3, 0.01)

AGENTS = textwrap.dedent(
    '''
    import os
    import numpy as np
    from agents.base import Agent


    class Uniform(Agent):
        """Uniform random play on every problem (the card's 0)."""

        plays = ("context-free", "contextual", "budget")

        def _reset_state(self):
            pass

        def act(self, obs=None):
            if self.n_envs is None:
                return int(self.rng.integers(self.n_arms))
            return self.rng.integers(self.n_arms, size=self.n_envs)

        def update(self, action, reward, info=None):
            pass


    class PrivateUniform(Uniform):
        plays = ("context-free", "contextual", "private", "local")


    def _best(env):
        if hasattr(env, "expected_rewards_by_user"):  # budget: the best fixed budget of its one user
            return int(np.argmax(env.expected_rewards_by_user[0]))
        if hasattr(env, "theta"):  # contextual: decided per round from the features
            return None
        if hasattr(env, "expected_rewards"):
            return int(np.argmax(env.expected_rewards))
        return 0  # e.g. the audit's env: any fixed arm


    class _Oracle(Agent):
        def __init__(self, env, seed):
            super().__init__(env.action_space.n, seed=seed)
            self.best = _best(env)
            self.theta = getattr(env, "theta", None)

        def _reset_state(self):
            pass

        def act(self, obs=None):
            if self.best is None:
                return int(np.argmax(np.asarray(obs) @ self.theta))
            return self.best

        def update(self, action, reward, info=None):
            pass


    def oracle(env, setting, seed):
        """The best arm from the start (the card's 1)."""
        return _Oracle(env, seed)


    oracle.plays = ("context-free", "contextual", "budget")


    def private_oracle(env, setting, seed):
        return _Oracle(env, seed)


    private_oracle.plays = ("context-free", "contextual", "private", "local")


    class Named(Uniform):
        name = "Coin"


    def named(env, setting, seed):
        return Named(env.action_space.n, seed=seed)


    def flaky(env, setting, seed):
        """Fails on the adversarial problem while the flag file exists."""
        if setting["problem"] == "adversarial" and os.path.exists(os.environ["SCORE_FLAG"]):
            raise RuntimeError("flag set")
        return Uniform(env.action_space.n, seed=seed)
    '''
)


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_agents.py"
    path.write_text(AGENTS)
    return path


@pytest.fixture(scope="module")
def oracle_card(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    """The scorecard of ``oracle`` (its results and folder), scored once for the tests that read it."""
    folder = tmp_path_factory.mktemp("oracle")
    path = folder / "my_agents.py"
    path.write_text(AGENTS)
    out = folder / "card"
    with drawing_figures():  # test_card_through_the_file_form checks its figures
        return score(f"{path}:oracle", scale=TINY, builtins=(), out=out), out


def _scores(df: pd.DataFrame, agent: str) -> dict[str, float]:
    return dict(zip(df.loc[df["agent"] == agent, "problem"], df.loc[df["agent"] == agent, "raw_mean"], strict=True))


PLAYS = {
    "Uniform": ("context-free", "contextual", "budget"),
    "oracle": ("context-free", "contextual", "budget"),
    "PrivateUniform": ("context-free", "contextual", "private", "local"),
    "private_oracle": ("context-free", "contextual", "private", "local"),
}


def test_the_two_declarations_cover_every_problem() -> None:
    for pair in (("Uniform", "PrivateUniform"), ("oracle", "private_oracle")):
        covered = {p.name for p in PROBLEMS for name in pair if eligible(PLAYS[name], p)}
        assert covered == {p.name for p in PROBLEMS}


@pytest.mark.parametrize(
    "factory",
    [
        "Uniform",
        "oracle",
        # The private ones also run three audits each (about 30 s in all).
        pytest.param("PrivateUniform", marks=pytest.mark.slow),
        pytest.param("private_oracle", marks=pytest.mark.slow),
    ],
)
def test_uniform_scores_near_zero_and_oracle_near_one(
    factory: str, agent_file: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if factory == "oracle":
        df, _ = request.getfixturevalue("oracle_card")
    else:
        df = score(f"{agent_file}:{factory}", scale=TINY, builtins=(), out=tmp_path / factory)
    values = _scores(df, factory)
    assert set(values) == {p.name for p in PROBLEMS if eligible(PLAYS[factory], p)}
    for problem, value in values.items():
        if "oracle" in factory:
            assert value > 0.9, (problem, value)
        else:
            assert abs(value) < 0.2, (problem, value)


def test_card_through_the_file_form(oracle_card: tuple[pd.DataFrame, Path]) -> None:
    df, out = oracle_card
    assert set(df["suite"]) == {SUITE_VERSION}
    for name in ("summary.md", "figure.png", "regret.png", "results.csv", "meta.json"):
        assert (out / name).is_file(), name
    text = (out / "summary.md").read_text()
    assert SUITE_VERSION in text and "steps/s relative to UCB" in text
    # A context-free agent without "private" gets n/a on the central-DP problems, never a number.
    central = next(p for p in PROBLEMS if p.kind == "central")
    assert not eligible(("context-free", "contextual", "budget"), central)
    assert f"| {central.name} |" in text and "| n/a |" in text.replace(f"| {central.name} | ", "| ")
    assert central.name not in set(df.loc[df["agent"] == "oracle", "problem"])
    assert SUITE_VERSION in (out / "meta.json").read_text()


def test_a_user_agent_is_labelled_by_its_own_name(agent_file: Path, tmp_path: Path) -> None:
    """As in ``banditlab run``: the agent's ``name``, not the factory's; ``NAME=`` keeps NAME."""
    df = score(f"{agent_file}:named", scale=TINY, builtins=(), out=tmp_path / "own")
    assert "Coin" in set(df["agent"]) and "named" not in set(df["agent"])  # (UCB: the speed reference)
    assert "# Scorecard: Coin" in (tmp_path / "own" / "summary.md").read_text()
    df = score(f"Mine={agent_file}:named", scale=TINY, builtins=(), out=tmp_path / "given")
    assert "Mine" in set(df["agent"]) and "Coin" not in set(df["agent"])


def test_a_user_agents_default_folder_is_named_after_it_and_the_cli_prints_that_card(
    agent_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --out a user agent's card goes to results/score-LABEL, not the leaderboard's folder."""
    import agents.experiments.scorecard as scorecard

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(scorecard, "QUICK", TINY)  # --quick at the test scale
    monkeypatch.setattr(scorecard, "PANEL", {"UCB": scorecard.PANEL["UCB"]})
    assert main(["score", "--agent", f"{agent_file}:named", "--quick"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "results" / "score-Coin" / "summary.md").is_file()
    assert not (tmp_path / "results" / "score-leaderboard").exists()
    assert "# Scorecard: Coin" in out and "Wrote results/score-Coin/summary.md" in out
    df = score(f"Mine={agent_file}:named", scale=TINY, builtins=())
    assert df.attrs["out"] == str(Path("results") / "score-Mine")
    assert scorecard.default_folder("a/b:c\\d") == Path("results") / "score-a-b-c-d"  # a declared name


def test_unknown_agent_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "NoSuchAgent"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("banditlab: error: agent 'NoSuchAgent' is not a built-in agent") and err.count("\n") == 1
    with pytest.raises(UsageError, match="not a built-in agent"):
        score("NoSuchAgent", scale=TINY)


@pytest.mark.parametrize(
    ("argv", "start"),
    [
        (["score", "UCB", "--jobs", "0"], "banditlab: error: argument --jobs: --jobs must be an integer >= 1"),
        (["score"], "banditlab: error: banditlab score needs one agent"),
        (["score", "UCB", "--leaderboard"], "banditlab: error: --leaderboard scores the built-in agents only"),
        (["score", "--agent", "nowhere.py:F"], "banditlab: error: --agent "),
    ],
)
def test_bad_inputs_are_one_sentence(argv: list[str], start: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit with status 2
        status = int(exc.code or 0)
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(start), err
    assert err.count("\n") == 1


def test_score_help_shows_a_single_percent_sign(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "with a 95% interval" in text and "%%" not in text


@pytest.mark.parametrize("seed", [-1, 1.5, True, 2**63])
def test_a_seed_out_of_range_is_one_sentence_before_anything_runs(seed: object, tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match=r"^--seed must be an integer >= 0 and <= 2\*\*63 - 1 \(9223372036854775807\), got "
    ):
        score("UCB", scale=TINY, builtins=(), seed=seed, out=tmp_path / "card")  # type: ignore[arg-type]
    assert not (tmp_path / "card").exists()


def test_bad_plays_declaration_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.py"
    path.write_text("from agents import UCB\n\nclass Bad(UCB):\n    plays = ('everything',)\n")
    assert main(["score", "--agent", f"{path}:Bad", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "plays must name capabilities among context-free" in err and err.count("\n") == 1


def test_resume_after_a_failing_agent(
    agent_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    flag = tmp_path / "flag"
    flag.write_text("")
    monkeypatch.setenv("SCORE_FLAG", str(flag))
    out = tmp_path / "resume"
    agent = f"{agent_file}:flaky"
    with pytest.raises(UserAgentError, match="flag set.*running the same command again resumes"):
        score(agent, scale=TINY, builtins=(), out=out)
    saved = len(list((out / "parts").iterdir()))
    assert saved > 0
    flag.unlink()
    capsys.readouterr()
    df = score(agent, scale=TINY, builtins=(), out=out)
    assert "Resuming from" in capsys.readouterr().err
    assert "adversarial" in set(df.loc[df["agent"] == "flaky", "problem"])
    assert not (out / "parts").exists()


def test_leaderboard_page_names_its_scale_and_command(tmp_path: Path) -> None:
    from agents.experiments.scorecard.cli import write_page

    out = tmp_path / "board"
    table = score(None, scale=TINY, builtins=("TS",), out=out)
    assert set(table["agent"]) == {"UCB", "TS"}
    page = tmp_path / "docs" / "leaderboard.md"
    write_page(out, page, table, quick=True)
    text = page.read_text()
    assert "**Scale: quick**" in text and "not the full scale" in text
    assert "banditlab score --leaderboard --quick --jobs 2" in text
    assert "| bernoulli-easy | TS " in text or "| bernoulli-easy | UCB " in text
    # The card's two figures copied beside the page (test_card_through_the_file_form checks a card's drawn figures).
    assert (tmp_path / "docs" / "leaderboard" / "figure.png").is_file()
    assert (tmp_path / "docs" / "leaderboard" / "regret.png").is_file()

    # Its own page is replaced; one edited since, or a figure edited since, is not.
    write_page(out, page, table, quick=False)
    assert "**Scale: full**" in page.read_text()
    for edited in (page, tmp_path / "docs" / "leaderboard" / "regret.png"):
        before = edited.read_bytes()
        edited.write_bytes(before + b"\n")
        with pytest.raises(OutputError, match="or has been edited since, so it is not replaced"):
            write_page(out, page, table, quick=True)
        assert edited.read_bytes() == before + b"\n"
        edited.write_bytes(before)
    write_page(out, page, table, quick=True)


def test_leaderboard_never_replaces_a_page_or_figure_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "docs" / "leaderboard.md"  # the default --page, relative to the working folder
    mine.parent.mkdir()
    mine.write_text("my own notes\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "figure.png").write_bytes(b"my figure")
    (tmp_path / "linked.md").symlink_to(mine)
    cases = [
        ([], "--page docs/leaderboard.md was not written by banditlab score --leaderboard"),
        (["--page", "notes"], "--page must be a Markdown file whose name ends in .md, got 'notes'."),
        (["--page", "figs.md"], "figs/figure.png was not written by banditlab score --leaderboard"),
        (["--page", "linked.md"], "linked.md is a link, so banditlab does not write its leaderboard there"),
    ]
    for extra, start in cases:
        # Refused before any agent is scored: nothing is written, not even the output folder.
        assert main(["score", "--leaderboard", "--quick", "--out", str(tmp_path / "out"), *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"banditlab: error: {start}"), err
        assert err.count("\n") == 1
        assert not (tmp_path / "out").exists()
    assert mine.read_text() == "my own notes\n"
    assert (tmp_path / "figs" / "figure.png").read_bytes() == b"my figure"
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == []


@pytest.mark.slow
def test_dask_backend_gives_the_local_scores(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    local = score("UCB", scale=TINY, builtins=("TS", "Exp3"), out=tmp_path / "local")
    cluster = {"threads_per_worker": 1, "processes": True, "host": "127.0.0.1", "dashboard_address": None}
    with distributed.LocalCluster(n_workers=2, **cluster) as c:
        remote = score(
            "UCB", scale=TINY, builtins=("TS", "Exp3"), out=tmp_path / "dask", backend="dask",
            scheduler=c.scheduler_address,
        )  # fmt: skip
    cols = ["problem", "agent", "raw_mean"]
    pd.testing.assert_frame_equal(local[cols], remote[cols])


def test_a_private_builtin_card_has_audits_at_each_epsilon_and_privacy_costs(tmp_path: Path) -> None:
    out = tmp_path / "ada"
    score("AdaPUCB", scale=TINY, builtins=(), out=out)
    text = (out / "summary.md").read_text()
    for eps in ("0.1", "1", "10"):
        assert f"| AdaPUCB | {eps} | entry |" in text
        assert f"| AdaPUCB | bernoulli-easy@dp{eps} | {eps} |" in text
    assert "(UCB)" in text  # the non-private version named beside each cost


@pytest.mark.parametrize(
    ("keywords", "start"),
    [
        ({"scale": "quick"}, "scale must be a Scale"),
        ({"out": 5}, "out must be a folder path"),
        ({"command": 5}, "command must be a sequence of strings"),
        ({"timeout": 0}, "timeout must be a number of seconds > 0"),
        ({"timeout": float("nan")}, "timeout must be a number of seconds > 0"),
        ({"fresh": "yes"}, "fresh must be True or False"),
    ],
)
def test_score_api_refuses_options_of_the_wrong_kind_with_one_sentence(keywords, start, tmp_path) -> None:
    """These were an AttributeError, a TypeError naming no argument, or accepted."""
    keywords.setdefault("out", tmp_path / "card")
    with pytest.raises(UsageError, match=f"^{start}"):
        score("UCB", scale=keywords.pop("scale", TINY), builtins=(), **keywords)
    assert not (tmp_path / "card").exists()
