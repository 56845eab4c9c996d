"""Tests of agents.stochastic.index: Random, UCB, UCB-N and Thompson sampling (TS, TS-N)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import PATH3
from numba import types as nb_types
from rollouts import assert_int, assert_int64_per_copy, play_env

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.base import Agent, entry_point
from agents.stochastic import index
from agents.stochastic import thompson_kernels as ts_kernels
from agents.stochastic.index import _STATE, UCB, UCBN, Random, ThompsonSampling, _pulled_step


def feed(agent: Agent, expected: int, reward: float) -> None:
    """One act/update round of a single agent, checking the chosen arm."""
    action = agent.act()
    assert action == expected
    agent.update(action, reward)


# Known answers --------------------------------------------------------------------------


def test_ucb_plays_each_arm_first_then_uses_round_number():
    agent = UCB(3, alpha=1.0)
    feed(agent, 0, 1.0)
    feed(agent, 1, 0.0)
    feed(agent, 2, 0.64)
    # t=4: all N=1, indices 1.0/0.0/0.64 + sqrt(ln 4) -> arm 0.
    feed(agent, 0, 1.0)
    np.testing.assert_array_equal(agent.counts, [[2, 1, 1]])
    np.testing.assert_allclose(agent.means, [[1.0, 0.0, 0.64]])
    # t=5: arm0 1 + sqrt(ln5/2) = 1.8971 < arm2 0.64 + sqrt(ln5) = 1.9086 -> arm 2.
    # (With ln 4 instead of ln 5, arm 0 would win: 1.8326 > 1.8174.)
    assert agent.act() == 2


@pytest.mark.parametrize(("alpha", "expected"), [(1.0, 0), (3.0, 2)])
def test_ucb_alpha_trades_exploitation_for_exploration(alpha, expected):
    agent = UCB(3, alpha=alpha)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.5), (0, 1.0)]:
        feed(agent, arm, reward)
    # t=5, ln 5 = 1.6094: alpha=1 -> [1.897, 1.269, 1.769]; alpha=3 -> [3.691, 3.806, 4.306].
    assert agent.act() == expected


def test_ucb_ties_go_to_lowest_index():
    agent = UCB(3, alpha=1.0)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.5), (0, 0.0), (2, 0.5)]:
        feed(agent, arm, reward)
    # Arms 0 and 2 both have mean 0.5 over 2 pulls: equal indices -> arm 0.
    assert agent.act() == 0


def test_ucb_ties_are_exact_whatever_the_reward_order():
    agent = UCB(3)
    history = {0: [0.0, 1.0, 1.0], 1: [0.0, 0.0, 0.0], 2: [1.0, 1.0, 0.0]}
    for action, rewards in history.items():
        for reward in rewards:
            agent.update(action, reward)
    # Both arms 0 and 2 have mean 2/3 over 3 pulls (a running mean would differ in the last bit).
    assert agent.means[0, 0] == agent.means[0, 2]
    assert agent.act() == 0


def test_ucb_ignores_side_observations():
    agent = UCB(3)
    info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.ones(3)}
    agent.update(1, 0.5, info)
    np.testing.assert_array_equal(agent.counts, [[0, 1, 0]])


def test_ucbn_skips_arms_seen_as_side_observations():
    env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.2, 0.5, 0.8], horizon=10)
    env.reset(seed=0)
    agent = UCBN(3)
    assert agent.act() == 0
    _, reward, _, _, info = env.step(0)
    agent.update(0, reward, info)
    np.testing.assert_array_equal(agent.counts, [[1, 1, 0]])
    assert agent.act() == 2  # arm 1 was observed through arm 0


def test_ucbn_index_on_path_graph():
    table = np.array([[0.2, 0.5, 0.9], [0.0, 0.1, 0.3], [0.4, 0.7, 0.0]] + [[0.5] * 3] * 7)
    env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.2, 0.5, 0.8], horizon=10)
    env.reset(seed=0, options={"reward_table": table})
    agent = UCBN(3)

    def step(action: int) -> None:
        _, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)

    step(1)  # the middle arm reveals all three arms
    np.testing.assert_array_equal(agent.counts, [[1, 1, 1]])
    np.testing.assert_allclose(agent.means, [table[0]])
    # t=2: every bonus is sqrt(2 ln 2) = 1.177, so the best mean wins.
    assert agent.act() == 2
    step(2)  # reveals arms 1 and 2
    np.testing.assert_array_equal(agent.counts, [[1, 2, 2]])
    np.testing.assert_allclose(agent.means, [[0.2, 0.3, 0.6]])
    # t=3: arm0 0.2 + sqrt(2 ln3) = 1.6823, arm1 0.3 + sqrt(ln3) = 1.3481, arm2 1.6481.
    assert agent.act() == 0
    step(0)
    np.testing.assert_array_equal(agent.counts, [[2, 3, 2]])
    np.testing.assert_allclose(agent.means, [[0.3, 1.3 / 3, 0.6]])
    assert agent.t == 3


def test_ts_posterior_counts_with_bernoulli_rewards():
    agent = ThompsonSampling(3, seed=0)
    for action, reward in [(0, 1.0), (0, 0.0), (0, 1.0), (2, 0.0), (1, 1.0)]:
        agent.update(action, reward)
    np.testing.assert_array_equal(agent.successes, [[2, 1, 0]])
    np.testing.assert_array_equal(agent.failures, [[1, 0, 1]])


def test_ts_n_updates_every_revealed_arm():
    agent = ThompsonSampling(3, side_observations=True, seed=0)
    assert agent.name == "TS-N"
    agent.update(1, 1.0, {"observed_mask": [1, 1, 1], "observed_rewards": [0.0, 1.0, 1.0]})
    agent.update(0, 1.0, {"observed_mask": [1, 1, 0], "observed_rewards": [1.0, 0.0, 0.0]})
    np.testing.assert_array_equal(agent.successes, [[1, 1, 1]])
    np.testing.assert_array_equal(agent.failures, [[1, 1, 0]])


def test_ts_r_coin_has_the_reward_as_mean():
    agent = ThompsonSampling(2, n_envs=20_000, seed=1)
    agent.update(np.zeros(20_000, dtype=np.int64), np.full(20_000, 0.3))
    assert agent.successes[:, 0].sum() + agent.failures[:, 0].sum() == 20_000
    assert abs(agent.successes[:, 0].mean() - 0.3) < 4 * math.sqrt(0.21 / 20_000)
    assert not agent.successes[:, 1].any() and not agent.failures[:, 1].any()


def test_ts_breaks_ties_at_random():
    class AllOnes:
        """Generator stand-in whose posterior samples all tie."""

        def __init__(self) -> None:
            self.inner = np.random.default_rng(0)

        def beta(self, a: Any, b: Any) -> Any:
            return np.ones(np.shape(a))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    agent = ThompsonSampling(3, n_envs=300)
    agent.rng = AllOnes()  # type: ignore[assignment]
    counts = np.bincount(agent.act(), minlength=3)
    assert counts.min() > 60


def test_ts_prefers_the_better_arm():
    agent = ThompsonSampling(2, seed=0)
    for _ in range(50):
        agent.update(0, 1.0)
        agent.update(1, 0.0)
    assert all(agent.act() == 0 for _ in range(20))


# Batched path equals the step path ------------------------------------------------------


def run_single(make_agent, n: int, horizon: int, seed: int, tables=None, **env_kw) -> np.ndarray:
    actions = np.empty((horizon, n), dtype=np.int64)
    for i in range(n):
        env = gym.make("GraphBandit-v0", horizon=horizon, **env_kw)
        options = None if tables is None else {"reward_table": tables[i]}
        env.reset(seed=seed + i, options=options)
        actions[:, i] = play_env(make_agent(None, i), env, horizon, check=assert_int).actions
    return actions


def run_batched(make_agent, n: int, horizon: int, seed: int, tables=None, **env_kw):
    env = gym.make_vec("GraphBandit-v0", num_envs=n, horizon=horizon, **env_kw)
    options = None if tables is None else {"reward_table": tables}
    env.reset(seed=seed, options=options)
    played = play_env(make_agent(n, 0), env, horizon, check=assert_int64_per_copy(n))
    return np.array(played.actions), played.regret


DETERMINISTIC = {
    "UCB": lambda n, i: UCB(10, alpha=0.7, n_envs=n),
    "UCBN": lambda n, i: UCBN(10, n_envs=n),
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_batched_equals_step_by_step(name):
    make = DETERMINISTIC[name]
    env_kw = {"edge_probability": 0.3, "instance_seed": 3}
    single = run_single(make, 5, 300, seed=11, **env_kw)
    batched, _ = run_batched(make, 5, 300, seed=11, **env_kw)
    np.testing.assert_array_equal(batched, single)


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_batched_equals_step_by_step_on_reward_tables(name):
    make = DETERMINISTIC[name]
    tables = np.random.default_rng(5).random((4, 200, 10))
    single = run_single(make, 4, 200, seed=0, tables=tables)
    batched, _ = run_batched(make, 4, 200, seed=0, tables=tables)
    np.testing.assert_array_equal(batched, single)


class PlainUCB:
    """UCB in plain Python (math.log, math.sqrt, sum / count means), for comparing the compiled agents."""

    def __init__(self, n_arms: int, alpha: float) -> None:
        self.c = alpha * alpha
        self.sums = [0.0] * n_arms
        self.counts = [0] * n_arms
        self.t = 0

    def act(self) -> int:
        if 0 in self.counts:
            return self.counts.index(0)
        width = self.c * math.log(self.t + 1)
        index = [s / n + math.sqrt(width / n) for s, n in zip(self.sums, self.counts, strict=True)]
        return index.index(max(index))

    def update(self, action: int, reward: float) -> None:
        self.counts[action] += 1
        self.sums[action] += reward
        self.t += 1


@pytest.mark.parametrize("alpha", [0.2, math.sqrt(2), 3.0])
def test_single_env_ucb_step_matches_plain_python_for_every_scalar_type(alpha):
    agent, plain = UCB(6, alpha=alpha), PlainUCB(6, alpha)
    rng = np.random.default_rng(1)
    kinds = [float, np.float64, lambda r: int(3 * r), lambda r: np.int64(3 * r)]
    for t in range(3000):
        action = agent.act()
        assert action == plain.act()
        reward = kinds[t % 4](rng.normal(0.5, 1.0))
        agent.update(action if t % 2 else np.int64(action), reward)
        plain.update(action, float(reward))
    assert agent.t == plain.t == 3000
    np.testing.assert_array_equal(agent.counts[0], plain.counts)
    means = [s / n for s, n in zip(plain.sums, plain.counts, strict=True)]
    np.testing.assert_array_equal(agent.means[0], means)  # bit-equal


def test_single_env_ucbn_step_with_the_envs_info_equals_the_checked_path():
    env = gym.make("GraphBandit-v0", n_arms=8, edge_probability=0.3, instance_seed=2, horizon=2000)
    env.reset(seed=4)
    fast, checked = UCBN(8), UCBN(8)
    for _ in range(2000):
        action = fast.act()
        assert action == checked.act()
        _, reward, _, _, info = env.step(action)
        fast.update(action, reward, info)  # exact types: the one-call step
        as_lists = {key: np.asarray(value).tolist() for key, value in info.items()}
        checked.update(action, reward, as_lists)  # lists: the checked path
    np.testing.assert_array_equal(fast.counts, checked.counts)
    np.testing.assert_array_equal(fast.means, checked.means)
    assert fast.t == checked.t == 2000


def test_single_env_steps_with_the_envs_output_take_the_one_call_path(monkeypatch):
    calls = []

    def spy(name: str) -> Any:
        inner = getattr(index, name)
        monkeypatch.setattr(index, name, lambda *args: calls.append(name) or inner(*args))

    env = gym.make("GraphBandit-v0", n_arms=5, edge_probability=0.5, instance_seed=1, horizon=20)
    env.reset(seed=0)
    ucb, ucbn = UCB(5), UCBN(5)  # built first: they load the entry points the spies wrap
    spy("_pulled_step_call")
    spy("_observed_step_call")
    for _ in range(10):
        _, reward, _, _, info = env.step(ucbn.act())  # numba-made arrays: equal, not identical, dtypes
        ucbn.update(ucbn.act(), reward, info)
        ucb.update(ucb.act(), reward, info)
    assert calls.count("_pulled_step_call") == calls.count("_observed_step_call") == 10


def test_writing_the_state_or_t_is_seen_by_the_next_act():
    agent = UCB(3, alpha=1.0)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.64), (0, 1.0)]:
        agent.update(arm, reward)
    assert agent.act() == 2  # as in test_ucb_plays_each_arm_first_then_uses_round_number
    agent.t = 3  # ln 4 instead of ln 5: arm 0 wins
    assert agent.act() == 0
    agent.t = 4
    agent.means[0, 1] = 5.0
    assert agent.act() == 1
    agent.counts[0, 2] = 0
    assert agent.act() == 2
    agent.update(2, 0.5)
    np.testing.assert_array_equal(agent.counts, [[2, 1, 1]])


def test_a_refused_update_keeps_the_next_choice():
    agent = UCB(4)
    for arm in range(4):
        agent.update(arm, float(arm))
    before = agent.act()
    for action, reward in [(0, math.nan), (4, 0.5), (True, 0.5), (0, "1")]:
        with pytest.raises((TypeError, ValueError)):
            agent.update(action, reward)
    assert agent.act() == before and agent.t == 4


def test_batched_ucb_update_chooses_the_next_arms_in_the_same_call(monkeypatch):
    agent = UCB(4, alpha=np.array([0.5, 1.0, 2.0]), n_envs=3)  # built first: it loads the entry point the spy wraps
    choose_rows, update = index._choose_rows, index._pulled_update_call
    calls = []
    monkeypatch.setattr(index, "_pulled_update_call", lambda *args: calls.append(1) or update(*args))
    monkeypatch.setattr(index, "_choose_rows", lambda *args: pytest.fail("act chose afresh"))
    rng = np.random.default_rng(3)
    action = choose_rows(agent._state, agent.t)
    for _ in range(40):
        agent.update(action, rng.random(3))
        expected = choose_rows(agent._state, agent.t)
        action = agent.act()
        np.testing.assert_array_equal(action, expected)
    assert len(calls) == 40


def test_batched_ucb_act_gives_a_new_array_and_sees_written_state():
    agent = UCB(3, alpha=1.0, n_envs=2)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.64), (0, 1.0)]:
        agent.update(np.array([arm, arm]), np.array([reward, reward]))
    first = agent.act()
    second = agent.act()  # nothing learned in between: the same arms, in an array of its own
    np.testing.assert_array_equal(first, [2, 2])
    np.testing.assert_array_equal(second, first)
    assert second is not first
    agent.update(np.array([2, 2]), np.array([0.5, 0.5]))
    agent.t = 3  # as test_writing_the_state_or_t_is_seen_by_the_next_act, one round later
    np.testing.assert_array_equal(agent.act(), [0, 0])
    agent.update(np.array([0, 1]), np.array([0.0, 0.0]))
    agent.means[1, 2] = 5.0
    np.testing.assert_array_equal(agent.act()[1], 2)
    agent.update(np.array([1, 1]), np.array([1.0, 1.0]))
    agent.counts[0, 1] = 0
    np.testing.assert_array_equal(agent.act()[0], 1)


def test_a_refused_batched_update_keeps_the_next_choice():
    agent = UCB(4, n_envs=2)
    for arm in range(4):
        agent.update(np.array([arm, 3 - arm]), np.array([float(arm), 1.0]))
    agent.update(agent.act(), np.array([0.5, 0.25]))
    before = agent.act()
    agent.update(before, np.array([1.0, 0.0]))
    for action, reward in [(before, np.array([0.0, math.nan])), (np.array([0, 4]), np.array([0.5, 0.5]))]:
        with pytest.raises(ValueError, match="for copy 1"):
            agent.update(action, reward)
    fresh = UCB(4, n_envs=2)
    fresh._state[:] = agent._state
    fresh.t = agent.t
    np.testing.assert_array_equal(agent.act(), fresh.act())
    assert agent.t == 6


def test_batched_ts_steps_are_one_entry_point_call_each_and_equal_the_reference(monkeypatch):
    agent = ThompsonSampling(5, n_envs=3, seed=11)  # built first: it loads the entry points the spies wrap
    calls: list[str] = []
    for name in ("_TS_CHOOSE", "_TS_COIN_UPDATE"):
        kernel = getattr(index, name)
        inner = kernel.call
        monkeypatch.setattr(kernel, "call", lambda *args, inner=inner, name=name: calls.append(name) or inner(*args))
    refs = [ts_kernels.ThompsonReference(5, 11 + i) for i in range(3)]
    rng = np.random.default_rng(4)
    for _ in range(60):
        action = agent.act()
        assert action.tolist() == [ref.act() for ref in refs]
        rewards = rng.random(3)
        agent.update(action, rewards)
        for ref, arm, reward in zip(refs, action.tolist(), rewards.tolist(), strict=True):
            ref.update(arm, reward)
    assert calls == ["_TS_CHOOSE", "_TS_COIN_UPDATE"] * 60


def test_entry_point_falls_back_to_the_dispatcher():
    class NoCompile:
        def compile(self, signature: Any) -> Any:
            raise RuntimeError("no")

    kernel = NoCompile()
    assert entry_point(kernel, ()) is kernel
    assert entry_point(_pulled_step, (_STATE, nb_types.int64, nb_types.float64, nb_types.int64)) is not _pulled_step


def test_ts_batched_matches_step_by_step_in_distribution():
    n, horizon = 150, 100
    env_kw = {"means": [0.3, 0.5, 0.7], "reward": "bernoulli", "graph": PATH3}

    def make(n_envs, i):
        return ThompsonSampling(3, n_envs=n_envs, seed=100 + i)

    single = run_single(make, n, horizon, seed=0, **env_kw)
    batched, _ = run_batched(make, n, horizon, seed=10_000, **env_kw)
    best_single = (single == 2).mean(axis=0)
    best_batched = (batched == 2).mean(axis=0)
    se = math.sqrt(best_single.var() / n + best_batched.var() / n)
    assert abs(best_single.mean() - best_batched.mean()) < 4 * se
    assert best_batched.mean() > 0.5


def test_random_batched_is_uniform():
    actions = Random(4, n_envs=1000, seed=0).act()
    counts = np.bincount(actions, minlength=4)
    chi2 = ((counts - 250) ** 2 / 250).sum()
    assert chi2 < 16.3  # 0.999 quantile of chi^2 with 3 degrees of freedom


@pytest.mark.parametrize("k", [2, 3, 10, 1000, 2**31 + 11])
def test_random_one_env_draws_what_generator_integers_draws(k: int) -> None:
    """One env's compiled choice is ``rng.integers(K)``, draw for draw, with other draws of ``rng`` between."""
    agent, reference = Random(2, seed=5), np.random.default_rng(5)
    agent.n_arms = k  # the arm count alone matters to the draw (a Random of 2**31 arms is above the memory limit)
    arms, expected = [], []
    for t in range(400):
        arms.append(agent.act())
        expected.append(int(reference.integers(k)))
        if t % 7 == 0:  # a 64-bit draw between two 32-bit ones: numpy's half-word buffer must be shared
            assert agent.rng.random() == reference.random()
    assert arms == expected and all(type(a) is int for a in arms)
    batch = Random(k if k < 2**20 else 10, n_envs=3, seed=5)  # copy i: a single agent seeded 5 + i
    singles = [Random(batch.n_arms, seed=5 + i) for i in range(3)]
    for _ in range(50):
        assert batch.act().tolist() == [one.act() for one in singles]


@pytest.mark.parametrize(
    "make",
    [
        lambda n: Random(5, n_envs=n, seed=7),
        lambda n: ThompsonSampling(5, n_envs=n, seed=7),
        lambda n: ThompsonSampling(5, side_observations=True, n_envs=n, seed=7),
    ],
)
@pytest.mark.parametrize("n_envs", [None, 3])
def test_seeded_determinism_and_reset(make, n_envs):
    def run(agent: Agent) -> list[Any]:
        out = []
        env = gym.make_vec("GraphBandit-v0", num_envs=n_envs or 1, n_arms=5, horizon=60)
        env.reset(seed=1)
        for _ in range(60):
            action = agent.act()
            batch = np.atleast_1d(action).astype(np.int64)
            _, reward, _, _, info = env.step(batch)
            if n_envs is None:
                reward = reward[0]
                info = {k: v[0] for k, v in info.items()}
            agent.update(action, reward, info)
            out.append(np.copy(action))
        return out

    first = make(n_envs)
    actions = run(first)
    np.testing.assert_array_equal(actions, run(make(n_envs)))
    first.reset()
    np.testing.assert_array_equal(actions, run(first))
    first.reset(seed=8)
    other = run(first)
    first.reset(seed=8)
    np.testing.assert_array_equal(other, run(first))


def test_reset_clears_state():
    agent = UCBN(3, n_envs=2)
    mask = np.ones((2, 3), dtype=bool)
    agent.update([0, 1], [1.0, 1.0], {"observed_mask": mask, "observed_rewards": np.ones((2, 3))})
    agent.reset()
    assert agent.t == 0 and not agent.counts.any() and not agent.means.any()
    np.testing.assert_array_equal(agent.act(), [0, 0])


# Invalid arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: UCB(1), ValueError, "n_arms"),
        (lambda: UCBN(2.5), TypeError, "n_arms"),
        (lambda: Random(True), TypeError, "n_arms"),
        (lambda: UCB(3, alpha=0.0), ValueError, "alpha"),
        (lambda: UCB(3, alpha=-1.0), ValueError, "alpha"),
        (lambda: UCB(3, alpha=float("nan")), ValueError, "alpha"),
        (lambda: UCB(3, alpha=float("inf")), ValueError, "alpha"),
        (lambda: UCB(3, alpha="1"), TypeError, "alpha"),
        (lambda: UCBN(3, n_envs=0), ValueError, "n_envs"),
        (lambda: Random(3, seed=-1), ValueError, "seed"),
        (lambda: ThompsonSampling(3, seed=1.5), TypeError, "seed"),
        (lambda: ThompsonSampling(3, side_observations=1), TypeError, "side_observations"),
        (lambda: UCB(3).reset(seed=-2), ValueError, "seed"),
    ],
)
def test_invalid_arguments_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    ("agent", "args", "match"),
    [
        (UCB(3), (3, 0.5, None), "action must be an arm index in \\[0, 2\\].*got 3"),
        (UCB(3), (-1, 0.5, None), "action"),
        (UCB(3), (0, float("nan"), None), "reward must be a finite number"),
        (UCB(3, n_envs=2), ([0, 5], [0.5, 0.5], None), "action .* for copy 1"),
        (UCBN(3), (0, 0.5, None), "observed_mask"),
        (UCBN(3), (0, 0.5, {"observed_mask": np.ones(3, bool)}), "observed_rewards"),
        (
            UCBN(3),
            (0, 0.5, {"observed_mask": np.ones(3, bool), "observed_rewards": [0.5, np.inf, 0.5]}),
            "observed_rewards",
        ),
        (ThompsonSampling(3), (0, 1.5, None), "reward must be a finite number in \\[0, 1\\]"),
        (ThompsonSampling(3), (0, -0.1, None), "reward"),
        (ThompsonSampling(3), (0, float("nan"), None), "reward"),
        (ThompsonSampling(3), (4, 0.5, None), "action"),
        (ThompsonSampling(3, side_observations=True), (0, 0.5, None), "observed_mask"),
        (
            ThompsonSampling(3, side_observations=True),
            (0, 0.5, {"observed_mask": np.ones(3, bool), "observed_rewards": [0.5, 2.0, 0.5]}),
            "observed_rewards",
        ),
    ],
)
def test_invalid_updates_raise_and_leave_state_alone(agent, args, match):
    with pytest.raises(ValueError, match=match):
        agent.update(*args)
    for attr in ("counts", "means", "successes", "failures"):
        if hasattr(agent, attr):
            assert not getattr(agent, attr).any()


# Sanity and end to end ------------------------------------------------------------------


def test_ucbn_beats_ucb_on_a_dense_graph():
    env_kw = {"edge_probability": 0.8, "instance_seed": 1}
    _, ucb = run_batched(lambda n, i: UCB(10, n_envs=n), 20, 2000, seed=0, **env_kw)
    _, ucbn = run_batched(lambda n, i: UCBN(10, n_envs=n), 20, 2000, seed=0, **env_kw)
    assert ucbn.mean() < 0.5 * ucb.mean()


@pytest.mark.parametrize(
    "make",
    [
        lambda: UCB(10, seed=0),
        lambda: UCBN(10, seed=0),
        lambda: ThompsonSampling(10, seed=0),
        lambda: ThompsonSampling(10, side_observations=True, seed=0),
    ],
    ids=["UCB", "UCBN", "TS", "TS-N"],
)
def test_end_to_end_on_graph_bandit(make):
    def play(agent: Agent) -> tuple[int, float]:
        env = gym.make("GraphBandit-v0", horizon=2000)
        env.reset(seed=0)
        steps, regret, truncated = 0, 0.0, False
        while not truncated:
            action = agent.act()
            _, reward, _, truncated, info = env.step(action)
            agent.update(action, reward, info)
            steps += 1
            regret += info["regret"]
        return steps, regret

    steps, regret = play(make())
    assert steps == 2000
    _, random_regret = play(Random(10, seed=0))
    assert regret < 0.5 * random_regret


def test_names_and_repr():
    names = [c.name for c in (Random, UCB, UCBN, ThompsonSampling)]
    assert names == ["Random", "UCB", "UCB-N", "TS"]
    assert "alpha=2.0" in repr(UCB(3, alpha=2.0))
    assert "side_observations=True" in repr(ThompsonSampling(3, side_observations=True))
