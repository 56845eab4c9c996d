"""``banditlab score``: a user agent is scored as the built-in it wraps, ranks follow the means, non_private is checked.

Companion of tests/test_score.py, at the same test-only scale (3 seeds, 1% of each horizon).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agents.experiments import score
from agents.experiments.cli import main
from agents.experiments.scorecard import Scale, card
from agents.experiments.scorecard.analysis import leaders, scores

TINY = Scale("test", 3, 0.01)

AGENTS = textwrap.dedent(
    '''
    from agents import UCB, DPThompsonSampling, LinUCB
    from agents.base import Agent


    def batched_ucb(env, setting, seed, n_envs):
        # n_envs has no default: the card must pass it on every problem it plays.
        return UCB(env.single_action_space.n, n_envs=n_envs, seed=seed)


    def batched_linucb(env, setting, seed, n_envs):
        return LinUCB(env.single_observation_space.shape[-1], n_envs=n_envs, seed=seed)


    batched_linucb.plays = ("contextual",)


    def dpts(env, setting, seed):
        return DPThompsonSampling(env.action_space.n, setting["epsilon"], seed=seed)


    dpts.plays = ("context-free", "private")


    class Everywhere(Agent):
        """Uniform random play, declared private and local (only its privacy-cost lines matter here)."""

        plays = ("context-free", "contextual", "private", "local")

        def _reset_state(self):
            pass

        def act(self, obs=None):
            if self.n_envs is None:
                return int(self.rng.integers(self.n_arms))
            return self.rng.integers(self.n_arms, size=self.n_envs)

        def update(self, action, reward, info=None):
            pass


    def listed(env, setting, seed):
        return dpts(env, setting, seed)


    listed.plays = ("context-free", "private")
    listed.non_private = ["TS"]


    def budgeted(env, setting, seed):
        return dpts(env, setting, seed)


    budgeted.plays = ("context-free", "private")
    budgeted.non_private = "SM-UCB"
    '''
)


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "sweep_agents.py"
    path.write_text(AGENTS)
    return path


def _means(df: pd.DataFrame, agent: str) -> dict[str, float]:
    g = df[df["agent"] == agent]
    return dict(zip(g["problem"], g["raw_mean"], strict=True))


@pytest.mark.parametrize(("factory", "builtin"), [("batched_ucb", "UCB"), ("batched_linucb", "LinUCB")])
def test_a_batched_factory_is_scored_as_the_builtin_on_every_problem(
    factory: str, builtin: str, agent_file: Path, tmp_path: Path
) -> None:
    """A factory naming ``n_envs`` gets it on every problem (it was called without it on adversarial and movielens).

    Its numbers are the built-in's on the same seeds, the local-DP problems included (its users'
    noise was seeded past its copies, so it read other privatized rewards than the built-in).
    """
    df = score(f"Mine={agent_file}:{factory}", scale=TINY, builtins=(builtin,), out=tmp_path / factory)
    mine, theirs = _means(df, "Mine"), _means(df, builtin)
    assert set(mine) <= set(theirs)  # (UCB also plays the budget problem)
    expected = {"adversarial", "bernoulli-easy@ldp1"} if builtin == "UCB" else {"movielens"}
    assert expected <= set(mine)
    for problem, value in mine.items():
        assert value == pytest.approx(theirs[problem], abs=1e-9), problem


def _results(rows: list[tuple[str, float]], problem: str = "bernoulli-easy") -> pd.DataFrame:
    """A results table: per (agent, score) three seeds whose scores average to ``score`` (regret over uniform 100)."""
    out = []
    for agent, value in rows:
        for run, shift in enumerate((-0.01, 0.0, 0.01)):
            regret = 100.0 * (1.0 - (value + shift))
            out.append({"problem": problem, "agent": agent, "run": run, "t": 10, "horizon": 10, "regret": regret,
                        "uniform": 100.0, "seconds": 1.0, "steps": 30})  # fmt: skip
    return pd.DataFrame(out)


@pytest.mark.parametrize(
    "rows",
    [
        # Below uniform play both clip to 0; KLUCB loses far less.
        [("TS", 0.9), ("UCB", -0.4), ("KLUCB", -0.02), ("MOSS", -0.3)],
        # Beyond the best fixed arm (the adversarial table) both clip to 1; KLUCB gains more.
        [("UCB", 1.02), ("KLUCB", 1.2), ("TS", 0.5)],
    ],
)
def test_ranks_follow_the_unclipped_means_where_the_clip_ties_them(rows: list[tuple[str, float]]) -> None:
    table = scores(_results(rows))
    ranked = [a for a, _ in sorted(rows, key=lambda r: -r[1])]
    assert list(table["agent"]) == ranked
    assert [r["agent"] for r in leaders(table, "bernoulli-easy")] == ranked[:3]
    # The order does not depend on the order the results arrived in.
    again = scores(_results(rows[::-1]))
    assert list(again["agent"]) == ranked
    assert np.all(np.diff(table["raw_mean"].to_numpy()) <= 0)


@pytest.mark.parametrize(
    ("factory", "start"),
    [
        ("listed", "agent listed's non_private must name a built-in agent (Random, UCB,"),
        ("budgeted", "agent budgeted's non_private must name a built-in agent that plays the non-private problems"),
    ],
)
def test_a_bad_non_private_is_one_sentence_before_anything_runs(
    factory: str, start: str, agent_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A list was an internal error (TypeError: unhashable type); a budget agent was taken and no cost line shown."""
    out = tmp_path / "card"
    assert main(["score", "--agent", f"{agent_file}:{factory}", "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"banditlab: error: {start}"), err
    assert err.count("\n") == 1
    assert not out.exists()


def test_a_private_builtin_card_plays_its_non_private_version() -> None:
    """``builtins=()`` left DPTS's non-private version TS out, so its privacy-cost table was empty."""
    assert "TS" in card("DPTS", TINY, builtins=()).agents
    assert "AlphaSample" in card("GAP", TINY, builtins=()).agents
    assert "LinUCB" in card("LDPLinUCB", TINY, builtins=()).agents


@pytest.mark.slow
def test_a_private_user_agent_card_has_its_privacy_cost_lines(agent_file: Path, tmp_path: Path) -> None:
    """Without ``non_private``: UCB's score on the context-free base problems, LinUCB's on movielens.

    An agent that also declared ``contextual`` was divided by LinUCB's score everywhere, which has
    none on the Bernoulli problems, so its card had no privacy-cost line there.
    """
    out = tmp_path / "card"
    score(f"Mine={agent_file}:Everywhere", scale=TINY, builtins=(), out=out)
    text = (out / "summary.md").read_text()
    for eps in ("0.1", "1", "10"):
        line = next(x for x in text.splitlines() if x.startswith(f"| Mine | bernoulli-easy@dp{eps} | {eps} | "))
        assert "(UCB) |" in line, line
    line = next(x for x in text.splitlines() if x.startswith("| Mine | movielens@ldp1 | 1 | "))
    assert "(LinUCB) |" in line, line


def test_the_leaderboard_page_names_the_seed_it_was_scored_with(tmp_path: Path) -> None:
    """A page scored with --seed 5 told readers to run the command without it, which gives other numbers."""
    from agents.experiments.scorecard.cli import write_page

    out = tmp_path / "board"
    table = score(None, scale=TINY, builtins=(), out=out, seed=5)
    page = tmp_path / "docs" / "leaderboard.md"
    write_page(out, page, table, quick=True)
    assert "banditlab score --leaderboard --quick --seed 5 --jobs 2\n" in page.read_text()
    out0 = tmp_path / "board0"
    write_page(out0, page, score(None, scale=TINY, builtins=(), out=out0), quick=False)
    assert "banditlab score --leaderboard --jobs 2\n" in page.read_text()  # the default seed is not named


@pytest.mark.parametrize("given", ["my_agent.py", "UCB", "Mine="])
def test_an_agent_option_without_a_factory_names_the_option(
    given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--agent my_agent.py`` was taken for a built-in name: the sentence named neither --agent nor FILE.py:Factory."""
    out = tmp_path / "card"
    assert main(["score", "--agent", given, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "banditlab: error: --agent takes your agent as [NAME=]FILE.py:Factory or [NAME=]module:Factory (a built-in "
        f"one goes without --agent, e.g. banditlab score UCB), got {given!r}.\n"
    )
    assert not out.exists()
