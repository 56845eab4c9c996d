"""Tests of agents.ldp.LDPWrapper: the generic local-DP conversion of context-free agents."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents import DPSE, SMUCB, UCB, UCBN, FixedArm, LDPLinUCB, LDPWrapper, LinUCB, ThompsonSampling
from agents.base import Agent


class Spy(Agent):
    """Plays arm 0 and records every reward and info it is given."""

    def __init__(self, n_arms: int = 3, *, n_envs: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs)
        self._reset_state()

    def _reset_state(self) -> None:
        self.rewards: list[Any] = []
        self.infos: list[Any] = []

    def act(self, obs: Any = None) -> Any:
        return self._out(np.zeros(self.batch, dtype=np.int64))

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        self.rewards.append(reward)
        self.infos.append(info)


def feed_constant(wrapper: LDPWrapper, reward: float, n: int, info: dict[str, Any] | None = None) -> np.ndarray:
    for _ in range(n):
        wrapper.update(wrapper.act(), reward, info)
    assert isinstance(wrapper.agent, Spy)
    return np.array(wrapper.agent.rewards, dtype=np.float64)


# What the wrapped agent receives ---------------------------------------------------------


def test_laplace_rewards_are_unbiased_with_variance_two_b_squared():
    spy = Spy()
    seen = feed_constant(LDPWrapper(spy, "laplace", epsilon=0.5, seed=0), 0.3, 40_000)
    b = 1.0 / 0.5  # range / ε
    assert abs(seen.mean() - 0.3) < 4 * math.sqrt(2) * b / math.sqrt(seen.size)
    assert seen.var() == pytest.approx(2 * b**2, rel=0.05)
    assert not np.any(seen == 0.3)  # never the raw reward
    assert all(isinstance(r, float) for r in spy.rewards)


def test_gaussian_rewards_have_the_classic_sigma():
    spy = Spy()
    seen = feed_constant(LDPWrapper(spy, "gaussian", 0.5, 0.1, reward_range=(-1.0, 1.0), seed=1), 0.2, 20_000)
    sigma = 2.0 * math.sqrt(2 * math.log(1.25 / 0.1)) / 0.5
    assert abs(seen.mean() - 0.2) < 4 * sigma / math.sqrt(seen.size)
    assert seen.std() == pytest.approx(sigma, rel=0.03)


def test_analytic_gaussian_allows_large_epsilon():
    wrapper = LDPWrapper(Spy(), "gaussian", 4.0, 1e-5, sigma_method="analytic", seed=2)
    assert wrapper.privacy_spent == (4.0, 1e-5)
    assert 0 < wrapper.scale < math.sqrt(2 * math.log(1.25 / 1e-5)) / 4.0


def test_rr_debias_is_unbiased_and_bits_keep_the_order():
    eps = 1.0
    p = math.exp(eps) / (1 + math.exp(eps))
    debiased = feed_constant(LDPWrapper(Spy(), "randomized_response", eps, rr_output="debias", seed=3), 0.7, 40_000)
    sd = math.sqrt(math.exp(eps)) / (math.exp(eps) - 1) + 0.5
    assert abs(debiased.mean() - 0.7) < 4 * sd / math.sqrt(debiased.size)
    bits = feed_constant(LDPWrapper(Spy(), "randomized_response", eps, seed=4), 0.7, 40_000)
    assert set(np.unique(bits)) <= {0.0, 1.0}
    expected = (1 - p) + (2 * p - 1) * 0.7
    assert abs(bits.mean() - expected) < 4 * 0.5 / math.sqrt(bits.size)


def test_rr_on_a_scaled_range_debiases_to_the_reward():
    out = feed_constant(
        LDPWrapper(Spy(), "randomized_response", 2.0, reward_range=(-1.0, 1.0), rr_output="debias", seed=5),
        -0.5,
        40_000,
    )
    assert abs(out.mean() + 0.5) < 0.04


def test_side_observations_and_other_info_are_stripped():
    spy = Spy(3)
    wrapper = LDPWrapper(spy, "laplace", 1.0, seed=6)
    info = {
        "observed_mask": np.array([True, True, True]),
        "observed_rewards": np.array([0.4, 0.9, 0.1]),
        "regret": 0.5,
        "recommendation_reward": 0.4,
    }
    wrapper.update(wrapper.act(), 0.4, info)
    got = spy.infos[0]
    assert set(got) == {"observed_mask", "observed_rewards"}
    np.testing.assert_array_equal(got["observed_mask"], [True, False, False])
    assert got["observed_rewards"][0] == spy.rewards[0] != 0.4
    np.testing.assert_array_equal(got["observed_rewards"][1:], 0.0)
    wrapper.update(0, 0.4, {"regret": 0.1})
    assert spy.infos[1] == {}
    wrapper.update(0, 0.4)
    assert spy.infos[2] is None


def test_rewards_are_clipped_and_counted():
    spy = Spy()
    wrapper = LDPWrapper(spy, "laplace", 1e9, seed=7)  # tiny noise: the clipped value shows
    for r in (1.5, -0.2, 0.5):
        wrapper.update(0, r)
    np.testing.assert_allclose(spy.rewards, [1.0, 0.0, 0.5], atol=1e-6)
    assert wrapper.n_clipped == 2


def test_batched_wrapper_privatizes_each_copy():
    spy = Spy(3, n_envs=4)
    wrapper = LDPWrapper(spy, "laplace", 1.0, seed=8)
    actions = wrapper.act()
    assert actions.shape == (4,)
    info = {"observed_mask": np.ones((4, 3), dtype=bool), "observed_rewards": np.full((4, 3), 0.5)}
    wrapper.update(actions, np.array([0.1, 0.2, 2.0, 0.4]), info)
    got = spy.rewards[0]
    assert got.shape == (4,) and len(set(got.tolist())) == 4
    np.testing.assert_array_equal(spy.infos[0]["observed_mask"].sum(axis=1), 1)
    np.testing.assert_array_equal(wrapper.n_clipped, [0, 0, 1, 0])


# Noise-aware UCB ---------------------------------------------------------------------------


def test_noise_aware_ucb_index_known_answer():
    ucb = UCB(2, alpha=math.sqrt(2))
    wrapper = LDPWrapper(ucb, "laplace", 1.0, seed=9)
    assert wrapper.noise_aware
    assert wrapper.act() == 0  # forced: N_0 = 0 <= 4 ln 2
    ucb.counts[:] = [[40, 50]]
    ucb.means[:] = [[0.9, 0.1]]
    ucb.t = 99  # round t = 100: 4 ln 101 = 18.5 < counts, no forcing
    w = math.sqrt(2) + math.sqrt(32)  # LDP-UCB-L, range 1, ε = 1
    index = np.array([0.9, 0.1]) + w * np.sqrt(math.log(100) / np.array([40, 50]))
    assert wrapper.act() == int(np.argmax(index)) == 0
    ucb.means[:] = [[0.1, 0.5]]  # 0.1 + 7.07·0.339 = 2.50 < 0.5 + 7.07·0.303 = 2.65
    assert wrapper.act() == 1
    # The noise term changes the choice: round 11 (4 ln 12 = 9.94 < 10, no forcing), N = (10, 50):
    # noise-aware 0 + 7.07·0.490 = 3.46 > 1 + 7.07·0.219 = 2.55; plain UCB 0.69 < 1.31.
    ucb.counts[:] = [[10, 50]]
    ucb.means[:] = [[0.0, 1.0]]
    ucb.t = 10
    assert wrapper.act() == 0
    assert ucb.act() == 1
    ucb.t = 99
    ucb.counts[:] = [[10, 50]]  # 10 <= 4 ln 101 = 18.5: arm 0 forced although its index is lower
    ucb.means[:] = [[-5.0, 0.2]]
    assert wrapper.act() == 0


def test_noise_aware_widths():
    ucb = UCB(3, alpha=1.0)
    assert LDPWrapper(ucb, "laplace", 2.0, reward_range=(0, 2)).width() == pytest.approx(2 + math.sqrt(32))
    g = LDPWrapper(UCB(3, alpha=1.0), "gaussian", 0.5, 0.1)
    assert g.width() == pytest.approx(1 + math.sqrt(8) * g.scale)
    rr = LDPWrapper(UCB(3, alpha=1.0), "randomized_response", 1.0, rr_output="debias")
    assert rr.width() == pytest.approx(1 / math.tanh(0.5))
    assert LDPWrapper(UCB(3, alpha=1.0), "randomized_response", 1.0).width() == pytest.approx(1.0)


def test_ldp_ucb_learns_a_two_arm_bandit_with_a_large_gap():
    rng = np.random.default_rng(10)
    means = np.array([0.9, 0.1])
    wrapper = LDPWrapper(UCB(2), "laplace", 1.0, seed=11)
    pulls = np.zeros(2, dtype=int)
    n = 20_000
    for _ in range(n):
        a = wrapper.act()
        wrapper.update(a, float(rng.random() < means[a]))
        pulls[a] += 1
    assert pulls[0] > 0.9 * n
    assert wrapper.agent.t == n


def test_noise_aware_batched_ucb_with_per_copy_alpha():
    wrapper = LDPWrapper(UCB(2, alpha=np.array([1.0, 2.0]), n_envs=2), "gaussian", 0.9, 0.1, seed=12)
    for _ in range(50):
        a = wrapper.act()
        wrapper.update(a, np.where(a == 0, 1.0, 0.0))
    assert wrapper.width().shape == (2,)
    assert wrapper.agent.counts.sum() == 100


# Other agents ------------------------------------------------------------------------------


def test_wraps_graph_agents_on_the_graph_env():
    env = gym.make("GraphBandit-v0", n_arms=5, horizon=300)
    agents = [
        LDPWrapper(UCBN(5), "laplace", 1.0, seed=0),
        LDPWrapper(ThompsonSampling(5, side_observations=True, seed=0), "randomized_response", 1.0, seed=0),
        LDPWrapper(DPSE(5, horizon=300, epsilon=1.0, seed=0), "randomized_response", 1.0, seed=0),
        LDPWrapper(SMUCB(5), "laplace", 1.0, seed=0),
        LDPWrapper(FixedArm(5, 2), "laplace", 1.0, seed=0),
    ]
    for agent in agents:
        obs, info = env.reset(seed=1)
        for _ in range(300):
            a = agent.act(0.5 if isinstance(agent.agent, SMUCB) else obs)
            obs, reward, _, _, info = env.step(a)
            agent.update(a, reward, info)
    assert agents[0].agent.counts.sum() == 300  # UCB-N observed only its own pulls
    assert agents[1].agent.successes.sum() + agents[1].agent.failures.sum() == 300


def test_reset_restarts_the_wrapped_agent_and_the_noise():
    wrapper = LDPWrapper(UCB(3), "laplace", 1.0, seed=13)
    first = []
    for _ in range(30):
        a = wrapper.act()
        wrapper.update(a, 0.5)
        first.append(a)
    wrapper.reset()
    assert wrapper.agent.t == 0
    again = []
    for _ in range(30):
        a = wrapper.act()
        wrapper.update(a, 0.5)
        again.append(a)
    assert first == again


def test_privacy_accounting():
    assert LDPWrapper(Spy(), "laplace", 0.7).privacy_spent == (0.7, 0.0)
    assert LDPWrapper(Spy(), "randomized_response", 0.7).privacy_spent == (0.7, 0.0)
    assert LDPWrapper(Spy(), "gaussian", 0.7, 0.01).privacy_spent == (0.7, 0.01)
    assert "reward" in LDPWrapper.privacy_unit
    assert LDPWrapper(UCB(2), "laplace", 1.0).name == "LDP-UCB"


# Errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        (("laplace", 0.0), {}, "epsilon"),
        (("laplace", -1.0), {}, "epsilon"),
        (("laplace", math.inf), {}, "epsilon"),
        (("exponential", 1.0), {}, "mechanism"),
        (("gaussian", 0.5), {}, "delta"),
        (("gaussian", 0.5, 1.5), {}, "delta"),
        (("gaussian", 2.0, 0.1), {}, "epsilon"),
        (("laplace", 1.0, 0.1), {}, "delta"),
        (("laplace", 1.0), {"reward_range": (1.0, 0.0)}, "reward_range"),
        (("laplace", 1.0), {"reward_range": (0.0, math.nan)}, "reward_range"),
        (("laplace", 1.0), {"reward_range": 1.0}, "reward_range"),
        (("gaussian", 0.5, 0.1), {"sigma_method": "tight"}, "sigma_method"),
        (("randomized_response", 1.0), {"rr_output": "raw"}, "rr_output"),
    ],
)
def test_wrapper_rejects_bad_arguments(args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        LDPWrapper(UCB(2), *args, **kwargs)


def test_wrapper_rejects_incompatible_agents():
    with pytest.raises(ValueError, match="mechanism"):
        LDPWrapper(ThompsonSampling(3), "laplace", 1.0)
    with pytest.raises(ValueError, match="rr_output"):
        LDPWrapper(DPSE(3, horizon=10, epsilon=1.0), "randomized_response", 1.0, rr_output="debias")
    with pytest.raises(ValueError, match="noise_aware"):
        LDPWrapper(SMUCB(3), "laplace", 1.0, noise_aware=True)
    with pytest.raises(TypeError, match="agent"):
        LDPWrapper(LinUCB(3), "laplace", 1.0)
    with pytest.raises(TypeError, match="agent"):
        LDPWrapper(LDPLinUCB(3, 1.0), "laplace", 1.0)
    with pytest.raises(TypeError, match="agent"):
        LDPWrapper("UCB", "laplace", 1.0)  # type: ignore[arg-type]
    wrapper = LDPWrapper(UCB(2), "laplace", 1.0)
    with pytest.raises(ValueError, match="reward"):
        wrapper.update(0, math.nan)
    with pytest.raises(ValueError, match="action"):
        wrapper.update(5, 0.5)


def test_wraps_budget_agents_on_the_budget_env():
    """The wrapper privatizes the payoff (range [0.5, 1.5] at γ = 1) of the budget agents."""
    env = gym.make("PrivacyBudgetMovieLens-v0", horizon=300)
    for agent in (
        LDPWrapper(UCB(10, alpha=0.3), "laplace", 1.0, reward_range=(0.5, 1.5), seed=0),
        LDPWrapper(SMUCB(10), "gaussian", 0.5, delta=1e-5, reward_range=(0.5, 1.5), seed=0),
        LDPWrapper(FixedArm.fix_half(10), "laplace", 1.0, reward_range=(0.5, 1.5), seed=0),
    ):
        obs, _ = env.reset(seed=1)
        for _ in range(300):
            a = agent.act(obs)
            obs, r, _, _, info = env.step(a)
            agent.update(a, r, info)
        assert agent.privacy_spent[0] > 0
