"""The seam between a user's agent and our code: what the agent does to what we hand it must not change the scores."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents import UCB, DPThompsonSampling, EpsilonGreedy, LinUCB
from agents.experiments import UsageError
from agents.experiments.cli import main
from agents.experiments.gap.task import step_actions
from agents.experiments.scorecard import Scale, score
from agents.experiments.scorecard.task import _lockstep
from agents.user_agents import GuardedAgent, UserAgent, accepts_n_envs, load_factory, play
from bandit_envs.budget.movielens import PrivacyBudgetMovieLensVectorEnv
from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv
from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv, MovieLensRecommendationVectorEnv
from bandit_envs.rewards import RewardModel


class Cycler:
    """Plays arms 0, 1, ... in turn (one env, or every copy of a vector env); ``edit`` edits what update gets."""

    def __init__(self, n_arms: int, n_envs: int | None = None, edit: bool = False) -> None:
        self.n_arms, self.n_envs, self.edit, self.t = n_arms, n_envs, edit, 0

    def act(self, obs: Any = None) -> Any:
        self.t += 1
        arm = self.t % self.n_arms
        return arm if self.n_envs is None else np.full(self.n_envs, arm)

    def update(self, action: Any, reward: Any, info: Any = None) -> None:
        if not self.edit:
            return
        if isinstance(reward, np.ndarray):
            reward -= 0.5  # centring the rewards in place, a common idiom
        for key in ("regret", "fixed_arm_regret"):
            if isinstance(info.get(key), np.ndarray):
                info[key] *= 0.0  # e.g. normalising every info array in place
        info.pop("regret", None)  # taking out what it has read

    def reset(self, seed: int | None = None) -> None:
        self.t = 0


def _guarded(agent: Any, env: Any) -> GuardedAgent:
    return GuardedAgent(agent, "cycler", env)


def test_play_scores_before_the_agent_edits_reward_and_info_single_env() -> None:
    clean = play(GraphBanditEnv(horizon=60), _guarded(Cycler(10), GraphBanditEnv()), 60, [30, 60], 3)
    edited = play(GraphBanditEnv(horizon=60), _guarded(Cycler(10, edit=True), GraphBanditEnv()), 60, [30, 60], 3)
    np.testing.assert_array_equal(edited[0], clean[0])
    np.testing.assert_array_equal(edited[1], clean[1])


def test_play_scores_before_the_agent_edits_reward_and_info_vector_env() -> None:
    def result(edit: bool) -> tuple[np.ndarray, np.ndarray]:
        env = GraphBanditVectorEnv(num_envs=3, horizon=60)
        return play(env, _guarded(Cycler(10, 3, edit), env), 60, [30, 60], 3)

    clean, edited = result(False), result(True)
    assert clean[0][-1].min() > 0.0
    np.testing.assert_array_equal(edited[0], clean[0])
    np.testing.assert_array_equal(edited[1], clean[1])


def test_scorecard_lockstep_scores_before_the_agent_edits_info() -> None:
    def result(edit: bool) -> np.ndarray:
        env = PrivacyBudgetMovieLensVectorEnv(num_envs=2, horizon=40)
        agent = _guarded(Cycler(int(env.n_actions), 2, edit), env)
        return _lockstep(env, agent, 40, np.array([20, 40]), [1, 2])

    clean, edited = result(False), result(True)
    assert np.abs(clean).sum() > 0.0
    np.testing.assert_array_equal(edited, clean)


class Precompute:
    """Chooses its next arm at the end of update, into the 0-d array (or array) that act returns."""

    def __init__(self, n_arms: int, seed: int, n_envs: int | None = None) -> None:
        self.n_arms, self.rng = n_arms, np.random.default_rng(seed)
        self.next = np.zeros((), dtype=np.int64) if n_envs is None else np.zeros(n_envs, dtype=np.int64)

    def act(self, obs: Any = None) -> Any:
        return self.next

    def update(self, action: Any, reward: Any, info: Any = None) -> None:
        self.next[...] = self.rng.integers(self.n_arms, size=self.next.shape)

    def reset(self, seed: int | None = None) -> None:
        pass


def test_recorded_actions_are_the_played_ones_when_the_agent_reuses_its_action_array() -> None:
    env = GraphBanditEnv(n_arms=5, horizon=30)
    played: list[int] = []
    step = env.step

    def spy(action: Any) -> Any:
        played.append(int(action))
        return step(action)

    env.step = spy  # type: ignore[method-assign]
    table = np.random.default_rng(0).random((30, 5))
    agent = UserAgent("precompute", lambda env, setting, seed: Precompute(5, seed)).build(env, {}, 0)
    recorded = step_actions(env, agent, table, 1)
    assert recorded.tolist() == played


def test_guarded_act_returns_the_checked_action_not_the_agents_object() -> None:
    single = GuardedAgent(Precompute(5, 0), "p", GraphBanditEnv(n_arms=5))
    action = single.act()
    assert type(action) is int
    venv = GraphBanditVectorEnv(num_envs=3, n_arms=5)
    inner = Precompute(5, 0, n_envs=3)
    batch = GuardedAgent(inner, "p", venv).act()
    assert isinstance(batch, np.ndarray) and not np.shares_memory(batch, inner.next)


def test_env_means_are_copied_so_later_edits_of_the_callers_array_change_nothing() -> None:
    means = np.linspace(0.1, 0.9, 5)
    kept = means.copy()
    envs = [
        cls(n_arms=5, means=means, reward="bernoulli", edge_probability=0.0, horizon=50)
        for cls in (GraphBanditEnv, GraphBanditVectorEnv)
    ]
    model = RewardModel("bernoulli", means)
    means[:] = 0.0  # e.g. reusing the array to build the next instance
    for env in envs:
        np.testing.assert_array_equal(env.reward_model.loc, kept)
    np.testing.assert_array_equal(model.loc, kept)
    env = envs[0]
    env.reset(seed=0)
    rewards = [env.step(4)[1] for _ in range(50)]
    assert sum(rewards) > 30  # arm 4's mean is 0.9, not the edited 0.0


@pytest.mark.parametrize("plays", [("private",), ("local",), ("contextual", "private"), ("private", "local")])
def test_a_plays_declaration_that_plays_no_problem_is_one_sentence(
    plays: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dp.py"
    path.write_text(f"from agents import UCB\n\n\nclass DP(UCB):\n    plays = {plays!r}\n")
    with pytest.raises(UsageError, match=r"plays no problem of the suite: 'private' and 'local' only qualify"):
        score(f"{path}:DP", scale=Scale("tiny", 1, 0.001), builtins=(), out=tmp_path / "card")
    assert not (tmp_path / "card").exists()
    assert main(["score", "--agent", f"{path}:DP", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "e.g. plays = ('context-free', 'private')" in err and err.count("\n") == 1


def test_a_factory_with_only_kwargs_gets_the_single_env_it_reads() -> None:
    def options(env: Any, setting: Any, seed: int, **options: Any) -> Cycler:
        return Cycler(int(env.action_space.n))  # a single env's Discrete space

    def batched(env: Any, setting: Any, seed: int, n_envs: int) -> Cycler:
        return Cycler(int(env.single_action_space.n), n_envs)

    assert not accepts_n_envs(options) and accepts_n_envs(batched)
    assert not UserAgent("options", options).batched()
    env = PrivacyBudgetMovieLensVectorEnv(num_envs=2, horizon=20)
    regret = _lockstep(env, UserAgent("batched", batched).build(env, {}, 0, n_envs=2), 20, np.array([20]), [1, 2])
    assert regret.shape == (1, 2)


def test_an_agent_file_edited_in_the_same_session_is_imported_again(tmp_path: Path) -> None:
    path = tmp_path / "edited agent.py"

    def write(arm: int, at: int) -> None:
        path.write_text(
            f"def make(env, setting, seed):\n    return {arm}\n\n\ndef other(env, setting, seed):\n    return {arm}\n"
        )
        os.utime(path, ns=(at, at))  # a later modification time, whatever the clock's resolution

    write(0, 10**18)
    assert load_factory(f"{path}:make")(None, {}, 0) == 0
    assert load_factory(f"{path}:other")(None, {}, 0) == 0
    write(5, 10**18 + 10**9)  # the user fixes the agent between two runs of a notebook
    assert load_factory(f"{path}:make")(None, {}, 0) == 5
    assert load_factory(f"{path}:other")(None, {}, 0) == 5
    assert load_factory(f"{path}:make") is load_factory(f"{path}:make")  # unchanged: not imported again


class MyLinUCB(LinUCB):
    """A user's linear agent given as a class (``--agent file.py:MyLinUCB``)."""

    name = "MyLinUCB"


def test_a_linear_agent_class_is_built_with_the_envs_feature_dimension() -> None:
    env = MovieLensRecommendationEnv(rank=5, horizon=30)  # 20 arms, d = 5
    agent = UserAgent("MyLinUCB", MyLinUCB).build(env, {}, 0)
    assert agent.agent.n_features == 5
    regret, _ = play(env, agent, 30, [30], 1)
    assert regret.shape == (1,)
    venv = MovieLensRecommendationVectorEnv(num_envs=2, rank=5, horizon=30)
    batch = UserAgent("MyLinUCB", MyLinUCB).build(venv, {}, 0, n_envs=2)
    assert batch.agent.n_features == 5 and play(venv, batch, 30, [30], 1)[0].shape == (1, 2)


class MyDPTS(DPThompsonSampling):
    """A user's central-DP agent given as a class (a PrivateAgent)."""


class MyDPUCB(UCB):
    """A private agent of the user's own, declared so by ``plays``, with a default ε."""

    plays = ("context-free", "private")

    def __init__(self, n_arms: int, epsilon: float = 1.0, *, n_envs: int | None = None, seed: int | None = None):
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = epsilon


class MyGreedy(EpsilonGreedy):
    """Not private: its ``epsilon`` is an exploration rate."""


def test_a_private_agent_class_is_built_with_the_settings_epsilon() -> None:
    env = GraphBanditEnv(horizon=10)
    setting = {"problem": "bernoulli-easy@dp10", "epsilon": 10.0, "horizon": 10}
    for cls in (MyDPTS, MyDPUCB):
        assert UserAgent("dp", cls).build(env, setting, 0, guard=False).epsilon == 10.0
    assert UserAgent("dp", MyDPUCB).build(env, {"epsilon": float("inf")}, 0, guard=False).epsilon == 1.0
    greedy = UserAgent("greedy", MyGreedy).build(env, setting, 0, guard=False)
    assert greedy.epsilon == MyGreedy(10).epsilon != 10.0


def test_editing_the_vector_envs_public_gaps_changes_no_regret() -> None:
    def regrets(edit: bool) -> tuple[np.ndarray, np.ndarray]:
        venv = GraphBanditVectorEnv(
            num_envs=2, n_arms=5, horizon=20, means=[0.9, 0.5, 0.5, 0.5, 0.5], reward="bernoulli"
        )
        if edit:  # a factory normalising what it read, in place
            venv.gaps /= venv.gaps.max()
            venv.expected_rewards -= 1.0
        venv.reset(seed=0)
        info = venv.step(np.array([1, 2]))[4]
        return info["regret"], info["expected_reward"]

    clean, edited = regrets(False), regrets(True)
    np.testing.assert_allclose(clean[0], [0.4, 0.4])
    np.testing.assert_array_equal(edited[0], clean[0])
    np.testing.assert_array_equal(edited[1], clean[1])


def test_rl_task_scores_before_the_agent_edits_info() -> None:
    """The rl family adds each round's regret before the user agent's update, which may edit ``info`` in place."""
    from dataclasses import replace

    from agents.experiments.registry import get_experiment
    from agents.experiments.rl.task import rl_task

    def make(edit: bool) -> Any:
        return lambda env, setting, seed: Cycler(int(env.action_space.n), edit=edit)

    def regrets(edit: bool) -> list[float]:
        exp = get_experiment("rl/graph").scaled(quick=True, horizon=60)
        exp = replace(exp, agents=("UCB-N",), user_agents=(UserAgent("cycler", make(edit)),))
        return [r["regret"] for r in rl_task(exp, 0, 0, 3) if r["agent"] == "cycler"]

    clean = regrets(False)
    assert clean and clean[-1] > 0.0
    assert regrets(True) == clean
