"""Private agents across episodes and copies: fresh noise after reset(), no seed in repr."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import agents
from agents import LDPWrapper, PrivateAgent

K = 3
PATH3 = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
SEED = 987_654_321
MEANS = np.arange(1, K + 1) / K

#: Every private agent, built with seed=SEED.
PRIVATE: dict[str, Callable[[], PrivateAgent]] = {
    "LDPWrapper": lambda: LDPWrapper(agents.UCB(K), "laplace", 1.0, seed=SEED),
    "LDPThompsonSampling": lambda: agents.LDPThompsonSampling(K, 1.0, seed=SEED),
    "HybridDPUCB": lambda: agents.HybridDPUCB(K, 1.0, seed=SEED),
    "TreeDPUCB": lambda: agents.TreeDPUCB(K, 500, 1.0, seed=SEED),
    "AdaPUCB": lambda: agents.AdaPUCB(K, 1.0, seed=SEED),
    "DPThompsonSampling": lambda: agents.DPThompsonSampling(K, 1.0, seed=SEED),
    "PrePullGaussianTS": lambda: agents.PrePullGaussianTS(K, 2, 2.0, seed=SEED),
    "DPTSUCB": lambda: agents.DPTSUCB(K, 500, 0.5, seed=SEED),
    "LDPLinUCB": lambda: agents.LDPLinUCB(3, 1.0, seed=SEED),
    "LDPOLS": lambda: agents.LDPOLS(3, 1.0, batch_size=2, seed=SEED),
    "ShuffleLinUCB": lambda: agents.ShuffleLinUCB(3, 1.0, batch_size=2, seed=SEED),
    "GAP": lambda: agents.GAP(K, 2000, 0.5, PATH3, delta=0.5, seed=SEED),
    "GAPU": lambda: agents.GAPU(K, 2000, 0.5, PATH3, delta=0.5, seed=SEED),
    "DPSE": lambda: agents.DPSE(K, 2000, 1.0, seed=SEED),
}


class Recorder(agents.UCB):
    """UCB that keeps every reward it is given (the privatized reports of a wrapper)."""

    def _reset_state(self) -> None:
        super()._reset_state()
        self.seen: list[Any] = []

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        self.seen.append(np.copy(reward))
        super().update(action, reward, info)


def reports(wrapper: LDPWrapper, rewards: np.ndarray) -> np.ndarray:
    for r in rewards:
        wrapper.update(0, float(r))
    assert isinstance(wrapper.agent, Recorder)
    return np.array(wrapper.agent.seen)


def test_wrapper_reports_of_two_episodes_do_not_reveal_the_first_episode() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.random(400), rng.random(400)  # y: the second episode's rewards, known to an attacker
    wrapper = LDPWrapper(Recorder(2), "laplace", 1.0, seed=7)
    first = reports(wrapper, x)
    assert wrapper.privacy_spent == pytest.approx((400.0, 0.0))
    wrapper.reset()
    assert wrapper.privacy_spent == (0.0, 0.0)  # counts since the reset only
    second = reports(wrapper, y)
    # With the noise replayed, first - second + y is x up to the lattice grid; with fresh noise its
    # error is the difference of two Laplace(1) draws (mean absolute value 1.5).
    error = np.abs(first - second + y - x)
    assert error.mean() > 0.5
    # The two episodes' noise is independent: uncorrelated, not equal.
    assert abs(np.corrcoef(first - x, second - y)[0, 1]) < 0.2


def test_wrapper_reset_with_a_seed_replays_its_noise() -> None:
    x = np.random.default_rng(2).random(50)
    wrapper = LDPWrapper(Recorder(2), "laplace", 1.0, seed=7)
    first = reports(wrapper, x)
    wrapper.reset(seed=7)
    np.testing.assert_array_equal(reports(wrapper, x), first)


def test_batched_wrapper_reset_continues_every_copy_noise() -> None:
    x = np.random.default_rng(3).random((200, 2))
    wrapper = LDPWrapper(Recorder(2, n_envs=2), "laplace", 1.0, seed=7)

    def run() -> np.ndarray:
        out = []
        for r in x:
            wrapper.update(np.zeros(2, dtype=np.int64), r)
            out.append(wrapper.agent.means[:, 0].copy())
        return np.array(out)

    first = run()
    wrapper.reset()
    assert (np.abs(run() - first) > 1e-3).mean() > 0.9


@pytest.mark.parametrize("name", ["HybridDPUCB", "TreeDPUCB"])
def test_counter_releases_of_two_episodes_differ_by_more_than_the_exact_sums(name: str) -> None:
    rng = np.random.default_rng(4)
    x, y = rng.random(300), rng.random(300)
    agent = PRIVATE[name]()
    for r in x:
        agent.update(0, float(r))
    first = agent.released_sums
    agent.reset()
    for r in y:
        agent.update(0, float(r))
    second = agent.released_sums
    assert first is not None and second is not None
    # Replayed noise cancels: first - second would be x.sum() - y.sum() up to the grid.
    assert abs((first[0, 0] - second[0, 0]) - (x.sum() - y.sum())) > 1e-3


def play(agent: PrivateAgent, rounds: int = 300) -> list[int]:
    """Actions on a fixed reward sequence (features for the linear agents); arm a's mean is (a + 1)/(2K).

    The elimination agents play their whole horizon, so that noisy eliminations happen.
    """
    if isinstance(agent, agents.elimination.EliminationAgent):
        rounds = agent.horizon
    rng = np.random.default_rng(5)
    out = []
    for _ in range(rounds):
        if isinstance(agent, agents.linear.LinearAgent):
            obs = rng.normal(size=(K, 3)) / 2.0
            a = agent.act(obs)
        else:
            a = agent.act()
        seen = {"observed_mask": PATH3[a] | (np.arange(K) == a), "observed_rewards": rng.random(K) * MEANS}
        info = seen if isinstance(agent, agents.GAP) else None
        agent.update(a, float(rng.random() * (a + 1) / K), info)
        out.append(int(a))
    return out


#: Agents whose actions on :func:`play` depend on the noise (GAP's and DPSE's epochs outlast it).
NOISY_ACTIONS = sorted(set(PRIVATE) - {"GAP", "DPSE"})


@pytest.mark.parametrize("name", NOISY_ACTIONS)
def test_reset_draws_fresh_noise_and_reset_with_the_seed_replays(name: str) -> None:
    agent = PRIVATE[name]()
    first = play(agent)
    assert play(PRIVATE[name]()) == first  # the same seed gives the same actions
    agent.reset()
    assert agent.privacy_spent == (0.0, 0.0)
    assert play(agent) != first
    agent.reset(seed=SEED)
    assert play(agent) == first


@pytest.mark.parametrize("name", ["GAP", "DPSE"])
def test_elimination_reset_continues_the_noise_generator(name: str) -> None:
    """The horizon of :func:`play` ends before most releases: the episode's noise is drawn here."""
    agent = PRIVATE[name]()
    play(agent)
    first = agent.rng.laplace(size=200)  # the draws of the first episode's releases
    agent.reset()
    assert agent.privacy_spent == (0.0, 0.0) and agent.active.all()
    assert abs(np.corrcoef(agent.rng.laplace(size=200), first)[0, 1]) < 0.3
    agent.reset(seed=SEED)
    np.testing.assert_array_equal(agent.rng.laplace(size=200), PRIVATE[name]().rng.laplace(size=200))


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_a_copy_makes_the_same_draws_as_the_original(name: str) -> None:
    """Documented: a deepcopy or pickle holds the same future noise (and pickling keeps working)."""
    agent = PRIVATE[name]()
    play(agent, 40)
    twins = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    expected = play(agent)
    for twin in twins:
        assert play(twin) == expected


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_repr_does_not_show_the_noise_seed(name: str) -> None:
    text = repr(PRIVATE[name]())
    assert str(SEED) not in text


def test_unseeded_stream_agents_keep_the_drawn_seed_private() -> None:
    agent = agents.HybridDPUCB(K, 1.0)
    assert not hasattr(agent, "copy_seeds")
    assert str(agent._copy_seeds[0]) not in repr(agent)
