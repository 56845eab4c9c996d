"""Tests of agents.local_dp.wrapper.LDPWrapper: the generic local-DP conversion of context-free agents."""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import lazy_module, thorough
from rollouts import play_env

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents import (
    DPSE,
    MOSS,
    SMUCB,
    UCB,
    UCBN,
    EpsilonGreedy,
    FixedArm,
    LDPLinUCB,
    LDPWrapper,
    LinUCB,
    ThompsonSampling,
)
from agents.base import Agent

dp_accounting = lazy_module("dp_accounting")  # imports scipy.stats

stats = lazy_module("scipy.stats")


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
    assert wrapper.privacy_per_report == (4.0, 1e-5)
    assert 0 < wrapper.scale < math.sqrt(2 * math.log(1.25 / 1e-5)) / 4.0


def test_rr_debias_is_unbiased_and_bits_keep_the_order():
    eps = 1.0
    p = math.exp(eps) / (1 + math.exp(eps))
    # 20,000 reports each: the 4-sd bounds fail a correct mechanism with probability < 1e-4 and catch
    # a bias of the debiased mean above 0.041 (bits: 0.014).
    debiased = feed_constant(LDPWrapper(Spy(), "randomized_response", eps, rr_output="debias", seed=3), 0.7, 20_000)
    sd = math.sqrt(math.exp(eps)) / (math.exp(eps) - 1) + 0.5
    assert abs(debiased.mean() - 0.7) < 4 * sd / math.sqrt(debiased.size)
    bits = feed_constant(LDPWrapper(Spy(), "randomized_response", eps, seed=4), 0.7, 20_000)
    assert set(np.unique(bits)) <= {0.0, 1.0}
    expected = (1 - p) + (2 * p - 1) * 0.7
    assert abs(bits.mean() - expected) < 4 * 0.5 / math.sqrt(bits.size)


def test_rr_on_a_scaled_range_debiases_to_the_reward():
    # A debiased report has sd 1.21 here: over 20,000 reports the bound 0.04 is 4.7 sd (false failure
    # < 3e-6), far below the bias of a debiasing that forgets the range (0.25 or more).
    out = feed_constant(
        LDPWrapper(Spy(), "randomized_response", 2.0, reward_range=(-1.0, 1.0), rr_output="debias", seed=5),
        -0.5,
        20_000,
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
    # Without side observations in the env's info (or without info), the same pulled-arm-only view.
    wrapper.update(0, 0.4, {"regret": 0.1})
    wrapper.update(0, 0.4)
    for got in spy.infos[1:]:
        assert set(got) == {"observed_mask", "observed_rewards"}
        np.testing.assert_array_equal(got["observed_mask"], [True, False, False])


def test_a_side_observation_agent_runs_wrapped_on_an_env_without_side_observations():
    from agents import UCBN

    wrapper = LDPWrapper(UCBN(3), "laplace", 1.0, seed=6)
    for t in range(6):
        a = wrapper.act()
        wrapper.update(a, 0.5, None if t % 2 else {"regret": 0.0})
    assert wrapper.agent.counts.sum() == 6  # one (privatized) observation per round, the pulled arm's


@pytest.mark.usefixtures("uncapped_epsilon")
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


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian", "randomized_response"])
@pytest.mark.parametrize("n_envs", [None, 7])
def test_compiled_noise_aware_choice_is_the_numpy_choice(mechanism: str, n_envs: int | None) -> None:
    rng = np.random.default_rng(51)
    alpha = 1.3 if n_envs is None else rng.uniform(0.5, 2.0, size=n_envs)
    ucb = UCB(5, alpha=alpha, n_envs=n_envs)
    wrapper = LDPWrapper(ucb, mechanism, 0.9, 0.1 if mechanism == "gaussian" else None, seed=3)
    forced = 0
    for _ in range(300):
        counts = rng.integers(0, 40, size=ucb.counts.shape)
        counts[rng.random(counts.shape) < 0.05] = 0
        ucb.counts[:] = counts
        ucb.means[:] = rng.normal(0.5, 0.5, size=counts.shape)
        ucb.t = int(rng.integers(0, 3000))
        expected = wrapper._noise_aware_reference()
        forced += int(np.any(counts <= 4.0 * math.log(ucb.t + 2)))
        got = wrapper.act()
        np.testing.assert_array_equal(np.atleast_1d(got), expected)
    assert forced > 30  # the Laplace forcing (and never-pulled arms) were met


#: The mechanisms and samplers whose usual reports have a path of their own (one compiled call for N
#: copies, Python floats for one env), each checked bit for bit against the general numpy path.
REPORT_CASES = [
    ("laplace", {}),
    ("laplace", {"sampler": "float"}),
    ("gaussian", {"delta": 1e-5}),
    ("gaussian", {"delta": 1e-5, "sampler": "float"}),
    ("randomized_response", {}),
]


@pytest.mark.parametrize(("mechanism", "kwargs"), REPORT_CASES)
def test_compiled_batch_reports_are_the_numpy_reports(mechanism: str, kwargs: dict[str, Any]) -> None:
    """N copies' usual round (one compiled call) gives the numpy path's reports, info and counts, bit for bit."""
    rng = np.random.default_rng(31)
    fast, slow = (
        LDPWrapper(Spy(4, n_envs=6), mechanism, 0.8, reward_range=(-0.5, 1.5), seed=40, **kwargs) for _ in range(2)
    )
    assert fast._compiled_reports
    slow._compiled_reports = False  # the numpy code, the kernel's reference
    # the bounds, beyond them, and rewards halfway between two grid points (the lattice's ties)
    edges = np.array([-3.0, -0.5, 1.5, 7.0, *(fast.grid * np.array([2.5, 3.5, -1.5]))])
    for _ in range(300):
        actions = rng.integers(0, 4, size=6)
        rewards = np.where(rng.random(6) < 0.3, rng.choice(edges, size=6), rng.uniform(-1.0, 2.0, size=6))
        for wrapper in (fast, slow):
            wrapper.update(actions, rewards)
    assert isinstance(fast.agent, Spy) and isinstance(slow.agent, Spy)
    bits = [np.array(w.agent.rewards).view(np.uint64) for w in (fast, slow)]
    np.testing.assert_array_equal(*bits)
    for key in ("observed_mask", "observed_rewards"):
        got, want = (np.array([info[key] for info in w.agent.infos]) for w in (fast, slow))
        np.testing.assert_array_equal(
            got.view(np.uint8 if key == "observed_mask" else np.uint64),
            want.view(got.dtype if key == "observed_mask" else np.uint64),
        )
    np.testing.assert_array_equal(fast.n_clipped, slow.n_clipped)
    assert 0 < fast.n_clipped.sum() < 6 * 300
    assert fast.privacy_spent == slow.privacy_spent
    # -0.0 at a bound of 0 is kept, as numpy.clip keeps it
    zero = [LDPWrapper(Spy(2, n_envs=2), mechanism, 0.8, seed=4, **kwargs) for _ in range(2)]
    zero[1]._compiled_reports = False
    for wrapper in zero:
        wrapper.update(np.array([0, 1]), np.array([-0.0, 0.0]))
    assert np.signbit(zero[0].agent.rewards[0]).tolist() == np.signbit(zero[1].agent.rewards[0]).tolist()


@pytest.mark.parametrize(("mechanism", "kwargs"), REPORT_CASES)
def test_one_env_plain_reports_are_the_numpy_reports(mechanism: str, kwargs: dict[str, Any]) -> None:
    """One env's usual round (Python floats) gives the numpy path's reports, info, counts and draws, bit for bit."""
    rng = np.random.default_rng(32)
    fast, slow = (LDPWrapper(Spy(4), mechanism, 0.8, reward_range=(-0.5, 1.5), seed=41, **kwargs) for _ in range(2))
    assert fast._plain_one_env
    slow._plain_one_env = False  # the numpy code, the reference of _report_one
    # the bounds, beyond them, -0.0 and rewards halfway between two grid points (the lattice's ties)
    edges = [-3.0, -0.5, 1.5, 7.0, -0.0, *(fast.grid * np.array([2.5, 3.5, -1.5, -0.25]))]
    side = {"observed_mask": np.ones(4, dtype=bool), "observed_rewards": np.full(4, 0.25), "regret": 0.1}
    for t in range(400):
        action = int(rng.integers(0, 4)) if t % 2 else rng.integers(0, 4)  # an int and a numpy int
        reward = float(rng.choice(edges)) if rng.random() < 0.3 else float(rng.uniform(-1.0, 2.0))
        info = side if t % 3 == 0 else None
        given = np.float64(reward) if t % 5 == 0 else int(rng.integers(-2, 4)) if t % 7 == 0 else reward  # int too
        for wrapper in (fast, slow):
            wrapper.update(action, given, info)
    assert isinstance(fast.agent, Spy) and isinstance(slow.agent, Spy)
    assert all(type(r) is float for r in fast.agent.rewards)
    np.testing.assert_array_equal(*(np.array(w.agent.rewards).view(np.uint64) for w in (fast, slow)))
    for key in ("observed_mask", "observed_rewards"):
        got, want = (np.array([info[key] for info in w.agent.infos]) for w in (fast, slow))
        assert got.shape == want.shape == (400, 4) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert 0 < fast.n_clipped == slow.n_clipped < 400
    assert fast.privacy_spent == slow.privacy_spent and fast.max_user_reports == slow.max_user_reports == 400
    assert fast.rng.bit_generator.state == slow.rng.bit_generator.state
    # what the fast round does not take goes the general way: a bad arm, a NaN, a user id, debiased bits
    with pytest.raises(ValueError, match="action"):
        fast.update(4, 0.5)
    with pytest.raises(ValueError, match="reward"):
        fast.update(0, math.nan)
    assert not LDPWrapper(Spy(4), "randomized_response", 0.8, rr_output="debias")._plain_one_env


@pytest.mark.parametrize(
    ("mechanism", "kwargs"),
    [
        ("laplace", {}),
        ("gaussian", {"delta": 1e-5}),
        ("randomized_response", {}),
        ("randomized_response", {"rr_output": "debias"}),
    ],
)
def test_a_reward_range_whose_width_overflows_is_refused(mechanism: str, kwargs: dict[str, Any]) -> None:
    """Each bound finite, hi - lo not: (r - lo) / (hi - lo) would be inf / inf, a NaN report or a refused one."""
    with pytest.raises(ValueError, match=r"reward_range must have a finite width hi - lo .* got \(-1e\+308, 1e\+308\)"):
        LDPWrapper(UCBN(2), mechanism, 0.5, reward_range=(-1e308, 1e308), **kwargs)
    LDPWrapper(UCBN(2), "randomized_response", 0.5, reward_range=(-8e307, 8e307))  # the widest finite one is taken


def test_snap_one_is_the_lattice_snap_of_one_float() -> None:
    """The one-env round's rounding to the grid gives numpy's bits: ties to even, the sign of a zero kept."""
    from agents.local_dp.wrapper import _snap_one
    from bandit_envs.privacy.lattice import snap

    g = 2.0**-20
    rng = np.random.default_rng(3)
    edges = [-0.0, 0.0, 0.5 * g, -0.5 * g, -0.25 * g, 1.5 * g, -1.5 * g, 2.5 * g, -2.5 * g, 1e300, -1e300, 5e-324]
    xs = np.concatenate([edges, rng.laplace(0, 1e-5, 2000), (rng.integers(-(10**6), 10**6, 2000) + 0.5) * g])
    got = np.array([_snap_one(float(x), g) for x in xs])
    np.testing.assert_array_equal(got.view(np.uint64), snap(xs, g).view(np.uint64))


@pytest.mark.parametrize("name", ["UCB", "KLUCB", "MOSS", "EpsilonGreedy", "Exp3", "TS", "Random", "FixedArm"])
def test_agents_given_no_info_by_the_wrapper_read_none(name: str) -> None:
    """The reports go without an info to the agents that declare reading none: it would change nothing.

    Checked by feeding each the same rounds with and without side observations that say otherwise
    (every arm observed, at other values): their arms and state must not differ.
    """
    from agents import KLUCB, Exp3, FixedArm, Random

    make = {
        "UCB": lambda: UCB(4, n_envs=3, seed=1),
        "KLUCB": lambda: KLUCB(4, n_envs=3, seed=1),
        "MOSS": lambda: MOSS(4, 500, n_envs=3, seed=1),
        "EpsilonGreedy": lambda: EpsilonGreedy(4, n_envs=3, seed=1),
        "Exp3": lambda: Exp3(4, 500, n_envs=3, seed=1),
        "TS": lambda: ThompsonSampling(4, n_envs=3, seed=1),
        "Random": lambda: Random(4, n_envs=3, seed=1),
        "FixedArm": lambda: FixedArm(4, 2, n_envs=3),
    }[name]
    assert not make().reads_side_observations
    assert UCBN(4, n_envs=3).reads_side_observations
    assert ThompsonSampling(4, side_observations=True, n_envs=3).reads_side_observations
    plain, told = make(), make()
    rng = np.random.default_rng(5)
    for _ in range(60):
        a, b = plain.act(), told.act()
        np.testing.assert_array_equal(a, b)
        r = rng.random(3)
        plain.update(a, r, None)
        told.update(b, r, {"observed_mask": np.ones((3, 4), dtype=bool), "observed_rewards": rng.random((3, 4))})
    assert plain.__dict__.keys() == told.__dict__.keys()
    for key, value in plain.__dict__.items():
        if isinstance(value, np.ndarray) and key != "_bitgens":  # generators' addresses differ
            np.testing.assert_array_equal(value, told.__dict__[key], err_msg=key)


def test_a_subclass_with_its_own_update_reads_side_observations_unless_it_says_not() -> None:
    """``reads_side_observations = False`` holds for the update it was declared with, not for a new one."""
    from agents import KLUCB

    class Logged(UCB):  # a new act only: still UCB's update
        def act(self, obs: Any = None) -> Any:
            return super().act(obs)

    class Reading(UCB):  # a new update, which may read the side observations
        def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
            super().update(action, reward, None)

    class Declared(Reading):
        reads_side_observations = False

    class ReadingTS(ThompsonSampling):
        def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
            super().update(action, reward, info)

    assert not Logged(3).reads_side_observations and not KLUCB(3).reads_side_observations
    assert Reading(3).reads_side_observations and not Declared(3).reads_side_observations
    assert ReadingTS(3).reads_side_observations and not ThompsonSampling(3).reads_side_observations
    assert Spy().reads_side_observations  # the default of Agent: it may read them


@pytest.mark.parametrize("n_envs", [None, 3])
@pytest.mark.parametrize("reads", [True, False])
def test_the_wrapper_gives_an_info_only_to_agents_that_read_side_observations(n_envs: int | None, reads: bool) -> None:
    """A user's agent that declares reading none gets no info; one that does not declare gets the pulled arm's."""

    class Declared(Spy):
        reads_side_observations = reads

    wrapper = LDPWrapper(Declared(3, n_envs=n_envs), "laplace", 1.0, seed=2)
    side = {
        "observed_mask": np.ones((wrapper.batch, 3), dtype=bool),
        "observed_rewards": np.full((wrapper.batch, 3), 0.5),
    }
    for info in (None, side if n_envs else {k: v[0] for k, v in side.items()}):
        wrapper.update(wrapper.act(), 0.5 if n_envs is None else np.full(3, 0.5), info)
    assert isinstance(wrapper.agent, Spy)
    for given, reward in zip(wrapper.agent.infos, wrapper.agent.rewards, strict=True):
        if not reads:
            assert given is None
            continue
        mask = np.atleast_2d(given["observed_mask"])
        assert mask.sum() == wrapper.batch and mask[:, 0].all()  # the pulled arm (0) only
        np.testing.assert_array_equal(np.atleast_2d(given["observed_rewards"])[:, 0], np.atleast_1d(reward))


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
        # DPSE's noise is noise_generator(0): the users' noise needs another seed (test_privacy_seams.py).
        LDPWrapper(DPSE(5, horizon=300, epsilon=1.0, seed=0), "randomized_response", 1.0, seed=1),
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


def test_reset_restarts_the_wrapped_agent_and_continues_the_noise():
    def episode(wrapper: LDPWrapper) -> tuple[list[int], np.ndarray]:
        actions = []
        for _ in range(30):
            a = wrapper.act()
            wrapper.update(a, 0.5)
            actions.append(a)
        return actions, wrapper.agent.means.copy()

    wrapper = LDPWrapper(UCB(3), "laplace", 1.0, seed=13)
    first, means = episode(wrapper)
    wrapper.reset()
    assert wrapper.agent.t == 0 and not wrapper.agent.counts.any()
    assert not np.array_equal(episode(wrapper)[1], means)  # fresh noise
    wrapper.reset(seed=13)  # an explicit seed replays its noise
    again, again_means = episode(wrapper)
    assert first == again
    np.testing.assert_array_equal(again_means, means)


def test_privacy_accounting():
    assert LDPWrapper(Spy(), "laplace", 0.7).privacy_per_report == (0.7, 0.0)
    assert LDPWrapper(Spy(), "randomized_response", 0.7).privacy_per_report == (0.7, 0.0)
    assert LDPWrapper(Spy(), "gaussian", 0.7, 0.01).privacy_per_report == (0.7, 0.01)
    assert "one user" in LDPWrapper.privacy_unit and "user_id" in LDPWrapper.privacy_unit
    assert LDPWrapper(UCB(2), "laplace", 1.0).name == "LDP-UCB"


def test_privacy_spent_composes_over_the_reports_of_one_user():
    wrapper = LDPWrapper(Spy(), "laplace", 0.7, seed=0)
    assert wrapper.privacy_spent == (0.0, 0.0)  # nothing sent yet
    feed_constant(wrapper, 0.5, 5)  # no user id: the whole stream is one user
    assert wrapper.max_user_reports == 5
    assert wrapper.privacy_spent == pytest.approx((3.5, 0.0))
    per_user = wrapper.privacy_per_user(1e-6)
    assert per_user.reports == 5 and per_user.per_report == (0.7, 0.0)
    assert per_user.basic == pytest.approx((3.5, 0.0)) and per_user.tight[1] == 1e-6
    gaussian = LDPWrapper(Spy(), "gaussian", 0.7, 0.01, seed=0)
    feed_constant(gaussian, 0.5, 9)
    eps, delta = gaussian.privacy_spent
    assert delta == 0.01 and 0.7 < eps < 9 * 0.7
    assert gaussian.privacy_per_user().basic == pytest.approx((6.3, 0.09))
    wrapper.reset()
    assert wrapper.privacy_spent == (0.0, 0.0) and wrapper.max_user_reports == 0


def test_per_user_accounting_on_movielens_matches_dp_accounting():
    """MovieLens draws a user every round: count the reports per info["user_id"] and compose them."""
    env = gym.make("MovieLensRecommendation-v0", horizon=3000)
    wrapper = LDPWrapper(UCB(20), "laplace", 0.5, reward_range=(-1.0, 1.0), seed=0)
    obs, _ = env.reset(seed=3)
    seen = [info["user_id"] for info in play_env(wrapper, env, 3000, obs).infos]
    k = int(np.unique(seen, return_counts=True)[1].max())
    assert 1 < k < 3000 and wrapper.max_user_reports == k
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1 / 0.5), k))
    per_user = wrapper.privacy_per_user(1e-6)
    assert per_user.tight[0] == pytest.approx(accountant.get_epsilon(1e-6), rel=1e-2)
    assert per_user.basic == pytest.approx((0.5 * k, 0.0))
    assert wrapper.privacy_spent == pytest.approx((0.5 * k, 0.0))  # delta = 0: pure composition


def test_a_users_reports_through_the_wrapper_lose_what_privacy_spent_says():
    """Empirical check (Clopper-Pearson): k reports of one user whose rewards are all 0 or all 1.

    The bits the server receives reject the per-report epsilon as the user's loss, and stay
    within the composed guarantee the wrapper reports.
    """
    # n = 50,000 users in the fast tier: a correct wrapper (true loss 3.0) gives a loss bound of
    # 2.4-2.9, far above eps and below k * eps (false failure < 1e-3 by the Bonferroni level); a wrapper
    # spending 20% more per report than it says (eps 0.6) is caught in 300 of 300 simulated runs, 10%
    # more in 12%. The thorough profile (CI) uses 200,000 users, which also catch the 10% overspend.
    eps, k, n = 0.5, 6, 200_000 if thorough() else 50_000
    sums = []
    for reward, seed in ((0.0, 60), (1.0, 61)):
        spy = Spy(2, n_envs=n)
        wrapper = LDPWrapper(spy, "randomized_response", eps, seed=seed)
        for _ in range(k):
            wrapper.update(wrapper.act(), np.full(n, reward))
        sums.append(np.sum(spy.rewards, axis=0))
    spent, _ = wrapper.privacy_spent
    assert spent == pytest.approx(k * eps) and wrapper.privacy_per_report == (eps, 0.0)
    levels = np.arange(1, k + 1)
    events = [np.stack([x >= s for s in levels] + [x < s for s in levels]) for x in sums]
    level = 1e-3 / (2 * 2 * events[0].shape[0])
    counts = [e.sum(axis=1) for e in events]
    lower = [np.where(c > 0, stats.beta.ppf(level, np.maximum(c, 1), n - c + 1), 0.0) for c in counts]
    upper = [np.where(c < n, stats.beta.ppf(1 - level, c + 1, np.maximum(n - c, 1)), 1.0) for c in counts]
    with np.errstate(divide="ignore"):
        loss = float(np.max(np.log(np.concatenate([lower[0] / upper[1], lower[1] / upper[0]]))))
    assert loss > eps  # one report's epsilon understates what this user loses
    assert loss <= spent


@pytest.mark.usefixtures("uncapped_epsilon")
def test_cap_stops_each_users_reports_at_the_limit():
    spy = Spy()
    wrapper = LDPWrapper(spy, "laplace", 1e9, max_reports_per_user=2, seed=0)  # tiny noise: values show
    users = [5, 5, 7, 5, 7, 7, 5, 8]
    for i, u in enumerate(users):
        wrapper.update(0, 0.1 * i, {"user_id": u})
    np.testing.assert_allclose(spy.rewards, [0.0, 0.1, 0.2, 0.4, 0.7], atol=1e-6)  # the first two of each user
    assert wrapper.n_withheld == 3 and wrapper.max_user_reports == 2
    assert wrapper.privacy_spent == pytest.approx((2e9, 1.0))  # delta 1: the sampler's tail at epsilon 1e9
    anonymous = LDPWrapper(Spy(), "laplace", 1.0, max_reports_per_user=4, seed=0)
    assert len(feed_constant(anonymous, 0.5, 10)) == 4  # without user ids the stream is one user


@pytest.mark.parametrize(
    ("mechanism", "args", "budget"),
    [
        ("laplace", (0.5,), (3.0, 1e-6)),
        ("randomized_response", (1.0,), (4.0, 0.0)),
        ("gaussian", (0.5, 1e-6), (3.0, 1e-5)),
    ],
)
def test_user_budget_sets_the_cap_to_the_last_report_within_it(mechanism, args, budget):
    wrapper = LDPWrapper(Spy(), mechanism, *args, user_budget=budget, seed=0)
    cap = wrapper.max_reports_per_user
    assert cap >= 2
    received = feed_constant(wrapper, 0.5, cap + 5, {"user_id": 1})
    assert len(received) == cap and wrapper.n_withheld == 5
    eps, delta = wrapper.privacy_per_user(budget[1]).tight
    assert eps <= budget[0] and delta == budget[1]
    wrapper.reset()
    feed_constant(wrapper, 0.5, cap + 1, {"user_id": 2})
    over = wrapper.privacy_per_user(budget[1])  # (cap + 1 reports if the cap were ignored)
    assert over.reports == cap


@pytest.mark.usefixtures("uncapped_epsilon")
def test_cap_in_batch_mode_withholds_per_copy_and_keeps_the_others_learning():
    ucb = UCB(3, n_envs=2)
    wrapper = LDPWrapper(ucb, "laplace", 1e9, max_reports_per_user=2, seed=0)
    for step in range(2):
        wrapper.update(np.array([step, step]), np.array([0.5, 0.5]), {"user_id": np.array([1, step])})
    # Copy 0's user 1 has sent 2 reports; copy 1's users 0 and 1 one each.
    counts, sums = ucb.counts.copy(), ucb.sums.copy()
    wrapper.update(np.array([2, 2]), np.array([0.9, 0.9]), {"user_id": np.array([1, 1])})
    np.testing.assert_array_equal(ucb.counts[0], counts[0])  # withheld: copy 0 learned nothing
    np.testing.assert_array_equal(ucb.sums[0], sums[0])
    assert ucb.counts[1, 2] == 1 and ucb.sums[1, 2] == pytest.approx(0.9, abs=1e-6)
    np.testing.assert_array_equal(wrapper.n_withheld, [1, 0])
    np.testing.assert_array_equal(wrapper.max_user_reports, [2, 2])
    assert ucb.t == 3  # the shared round counter advances
    spy = Spy(3, n_envs=2)
    capped = LDPWrapper(spy, "laplace", 1.0, max_reports_per_user=1, seed=0)
    for _ in range(3):
        capped.update(np.zeros(2, dtype=int), np.full(2, 0.5), {"user_id": np.array([4, 4])})
    assert len(spy.rewards) == 1  # no copy may report: the wrapped agent is not updated


# Noise streams -----------------------------------------------------------------------------


def test_noise_stream_is_independent_of_other_generators_with_the_same_seed():
    seed, n = 21, 20_000
    spy = Spy()
    wrapper = LDPWrapper(spy, "laplace", 1.0, seed=seed)
    noise = feed_constant(wrapper, 0.5, n) - 0.5
    same_seed = np.random.default_rng(seed).laplace(0.0, 1.0, n)
    assert not np.allclose(noise, same_seed)
    assert abs(np.corrcoef(noise, same_seed)[0, 1]) < 4 / math.sqrt(n)
    assert stats.kstest(noise, stats.laplace(scale=1.0).cdf).pvalue > 1e-3
    # An env and the wrapper seeded alike draw different uniforms.
    env = gym.make("MovieLensRecommendation-v0", horizon=10)
    env.reset(seed=seed)
    fresh = LDPWrapper(UCB(2, seed=seed), "laplace", 1.0, seed=seed)
    env_draws = env.unwrapped.np_random.random(8)
    assert not np.array_equal(fresh.rng.random(8), env_draws)
    assert not np.array_equal(LDPWrapper(UCB(2), "laplace", 1.0, seed=seed).rng.random(8), fresh.agent.rng.random(8))
    # Reproducible: the same seed gives the same noise.
    again = feed_constant(LDPWrapper(Spy(), "laplace", 1.0, seed=seed), 0.5, n) - 0.5
    np.testing.assert_array_equal(noise, again)


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
        (("laplace", 1.0), {"max_reports_per_user": 0}, "max_reports_per_user"),
        (("laplace", 1.0), {"max_reports_per_user": 2, "user_budget": (1.0, 0.0)}, "max_reports_per_user"),
        (("laplace", 1.0), {"user_budget": (0.5, 0.0)}, "user_budget"),
        (("laplace", 1.0), {"user_budget": (2.0, 1.0)}, r"user_budget\[1\]"),
        (("laplace", 1.0), {"user_budget": 2.0}, "user_budget"),
        (("gaussian", 0.5, 0.1), {"user_budget": (5.0, 0.0)}, "user_budget"),
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
        LDPWrapper(UCBN(3), "laplace", 1.0, noise_aware=True)
    with pytest.raises(TypeError, match="observation"):
        LDPWrapper(SMUCB(3), "laplace", 1.0)  # it reads φ_t from the observation
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


class ObsSpy(Spy):
    """A Spy that keeps every observation ``act`` is given."""

    def _reset_state(self) -> None:
        super()._reset_state()
        self.observations: list[Any] = []

    def act(self, obs: Any = None) -> Any:
        self.observations.append(obs)
        return super().act(obs)


def test_wrapped_agent_never_gets_the_env_observation():
    wrapper = LDPWrapper(ObsSpy(3), "laplace", 1.0, seed=0)
    for _ in range(5):
        wrapper.update(wrapper.act(np.array([0.3])), 0.5)  # e.g. a budget env's φ_t, or reward statistics
    assert isinstance(wrapper.agent, ObsSpy) and wrapper.agent.observations == [None] * 5


def test_wraps_budget_agents_on_the_budget_env():
    """The wrapper privatizes the payoff (range [0.5, 1.5] at γ = 1) of the budget agents."""
    env = gym.make("PrivacyBudgetMovieLens-v0", horizon=300)
    for agent in (
        LDPWrapper(UCB(10, alpha=0.3), "laplace", 1.0, reward_range=(0.5, 1.5), seed=0),
        LDPWrapper(UCB(10, alpha=0.3), "gaussian", 0.5, delta=1e-5, reward_range=(0.5, 1.5), seed=0),
        LDPWrapper(FixedArm.fix_half(10), "laplace", 1.0, reward_range=(0.5, 1.5), seed=0),
    ):
        obs, _ = env.reset(seed=1)
        for _ in range(300):
            a = agent.act(obs)
            obs, r, _, _, info = env.step(a)
            agent.update(a, r, info)
        assert agent.privacy_spent[0] > 0


def test_a_capped_copys_next_arm_comes_from_its_rows_as_put_back() -> None:
    """Batched UCB chooses the next arms in its update; a capped copy's choice must not be the one made from the
    report of lo that the update saw before its rows were put back."""
    ucb = UCB(3, n_envs=2)
    wrapper = LDPWrapper(ucb, "laplace", 10.0, max_reports_per_user=3, noise_aware=False, seed=0)
    rewards = np.array([0.9, 0.1, 0.5])
    for step in range(40):
        a = wrapper.act()
        fresh = copy.deepcopy(ucb)
        fresh.t = fresh.t  # setting t drops the arms the last update chose: the choice from the state as it is
        np.testing.assert_array_equal(a, fresh.act(), err_msg=f"round {step}")
        wrapper.update(a, rewards[a], {"user_id": np.array([0, step])})  # copy 0's user is capped from round 3
    assert wrapper.n_withheld[0] == 37


@pytest.mark.parametrize(
    ("make", "mechanism"),
    [
        (lambda n: ThompsonSampling(3, n_envs=n, seed=3), "randomized_response"),
        (lambda n: EpsilonGreedy(3, n_envs=n, seed=3), "laplace"),
        (lambda n: EpsilonGreedy(3, n_envs=n, seed=3), "randomized_response"),
        (lambda n: MOSS(3, 1000, n_envs=n, seed=3), "gaussian"),
    ],
    ids=["ts-rr", "greedy-laplace", "greedy-rr", "moss-gaussian"],
)
def test_a_capped_copy_plays_as_the_single_wrapper_while_other_copies_report(make, mechanism) -> None:
    """Copy 0's user is capped on even rounds while copy 1's new users report: copy 0 is still the single wrapper.

    A capped copy draws no noise (the single wrapper draws none for a withheld report), and its
    wrapped agent's state is put back, columns of copy-axis-last arrays included (Thompson
    sampling's streams and gamma constants); before, its noise stream ran ahead.
    """
    horizon = 200
    rewards = np.random.default_rng(0).random((horizon, 3))
    rounds = np.arange(horizon)
    users = np.stack([np.where(rounds % 2 == 0, 0, rounds + 10**6), rounds + 2 * 10**6], axis=1)
    epsilon = 0.5 if mechanism == "gaussian" else 1.0
    extra = {"delta": 1e-5} if mechanism == "gaussian" else {}
    batch = LDPWrapper(make(2), mechanism, epsilon, max_reports_per_user=1, seed=3, **extra)
    single = LDPWrapper(make(None), mechanism, epsilon, max_reports_per_user=1, seed=3, **extra)
    for t in range(horizon):
        a, b = single.act(), batch.act()
        assert b[0] == a, f"round {t}: copy 0 played {b[0]}, the single wrapper {a}"
        single.update(a, rewards[t, a], {"user_id": users[t, 0]})
        batch.update(b, rewards[t, b], {"user_id": users[t]})
    assert batch.n_withheld[0] == single.n_withheld == horizon // 2 - 1


def test_ldp_linucb_capped_copy_draws_no_report_noise() -> None:
    """LDP-LinUCB under a cap: a capped copy draws no normals, so its noise stream stays the single agent's.

    (Its actions may part from the single agent's: the round counter the copies share advances
    for it, as docs/design.md says.) Before, every copy drew its normals whether it reported or not.
    """
    d, n_arms, horizon = 3, 4, 60
    rng = np.random.default_rng(1)
    features = rng.random((horizon, n_arms, d)) * 0.5
    rewards = rng.random((horizon, n_arms))
    rounds = np.arange(horizon)
    users = np.stack([np.where(rounds % 2 == 0, 0, rounds + 10**6), rounds + 2 * 10**6], axis=1)
    batch = LDPLinUCB(d, 1.0, horizon=horizon, max_reports_per_user=1, n_envs=2, seed=3)
    single = LDPLinUCB(d, 1.0, horizon=horizon, max_reports_per_user=1, seed=3)
    for t in range(horizon):
        a = single.act(features[t])
        single.update(a, rewards[t, a], {"user_id": users[t, 0]})
        b = batch.act(np.stack([features[t], features[t]]))
        batch.update(b, rewards[t, b], {"user_id": users[t]})
    assert batch._copy_rngs[0].bit_generator.state == single.rng.bit_generator.state
    assert single.n_withheld == horizon // 2 - 1
