"""Tests of the classic baselines: EpsilonGreedy, KLUCB, MOSS (agents/stochastic/greedy.py, optimistic.py) and
Exp3, Exp3SET, Exp3IX (agents.adversarial.exp3).

Known answers (indices and probabilities computed here from the papers' formulas), the compiled
agents against their plain-Python references, copy i of a batch against a single agent seeded
``seed + i`` on the native vector env, seeding and reset, and regret sanity checks on fixed seeds.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import PATH3, lazy_module
from rollouts import assert_int, assert_int64_per_copy, assert_plays_like_reference, play_env

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents import KLUCB, MOSS, UCB, EpsilonGreedy, Exp3, Exp3IX, Exp3SET, Random
from agents.adversarial.kernels import ExpWeightsReference
from agents.base import Agent
from agents.stochastic.index_kernels import (
    ANCHOR_BLOCKS,
    DECISION_COLUMNS,
    GreedyReference,
    KLUCBReference,
    MOSSReference,
    kl_bernoulli,
    kl_index,
    kl_index_reference,
    kl_search,
)
from bandit_envs.feedback_graphs import erdos_renyi

optimize = lazy_module("scipy.optimize")

EMPTY5 = np.zeros((5, 5), dtype=bool)


# KL-UCB ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 1e-6, 0.05, 0.3, 0.5, 0.77, 0.99, 1 - 1e-9])
@pytest.mark.parametrize("d", [1e-6, 1e-3, 0.05, 0.7, 3.0, 40.0])
def test_kl_index_is_the_root_of_the_kl_equation_to_its_tolerance(p, d):
    tol = 1e-9
    u = kl_index(p, d, tol)
    assert u == kl_index_reference(p, d, tol)  # the readable reference (bisection): the same grid point
    f = lambda q: kl_bernoulli(p, q) - d  # noqa: E731
    if f(1.0 - 1e-15) <= 0.0:  # the root is 1 within rounding
        assert u >= 1.0 - 1e-12
        return
    root = optimize.brentq(f, p, 1.0 - 1e-15, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    assert root - 1e-12 <= u <= root + tol + 1e-12


def test_kl_index_edge_cases():
    assert kl_index(0.4, 0.0, 1e-9) == 0.4  # no exploration: the mean
    assert kl_index(1.0, 0.5, 1e-9) == 1.0
    # p = 0: kl(0, q) = -ln(1 - q), so the root is 1 - exp(-d).
    u = kl_index(0.0, 0.3, 1e-12)
    assert 0.0 <= u - (1 - math.exp(-0.3)) <= 1e-12 + 1e-15  # the grid point right of the root


def test_klucb_indices_by_hand():
    agent = KLUCB(3)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.5), (2, 0.5), (0, 0.0)]:
        agent.update(arm, reward)
    # t = 5 rounds completed, c = 0: delta = ln 5; u_k solves N_k kl(mean_k, u) = ln 5.
    delta = math.log(5)
    expected = [
        optimize.brentq(lambda q: 2 * kl_bernoulli(0.5, q) - delta, 0.5, 1 - 1e-15, xtol=1e-15),
        1 - math.exp(-delta),  # mean 0 after one pull: -ln(1 - u) = ln 5
        optimize.brentq(lambda q: 2 * kl_bernoulli(0.5, q) - delta, 0.5, 1 - 1e-15, xtol=1e-15),
    ]
    np.testing.assert_allclose(agent.indices()[0], expected, atol=2e-9)
    assert expected[0] > expected[1]  # about 0.945 against 0.8
    assert agent.act() == 0  # arms 0 and 2 tie (same history): the lowest index


def test_klucb_ties_go_to_the_lowest_index():
    agent = KLUCB(4)
    for arm, reward in [(0, 0.0), (1, 1.0), (2, 0.0), (3, 1.0), (0, 1.0), (2, 1.0)]:
        agent.update(arm, reward)
    # Arms 1 and 3 have the same history (one reward 1): both indices are 1, the largest possible;
    # arms 0 and 2 (rewards 0 and 1) have equal indices below 1.
    assert agent.act() == 1


def bernoulli_rewards(means: list[float], horizon: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((horizon, len(means))) < np.array(means)).astype(np.float64)


def uniform_rewards(means: list[float], horizon: int, seed: int) -> np.ndarray:
    """Rewards in [0, 1] that are not 0/1: Beta draws with the given means."""
    rng = np.random.default_rng(seed)
    m = np.array(means)
    return rng.beta(4 * m, 4 * (1 - m), size=(horizon, len(means)))


@pytest.mark.parametrize("rewards", [bernoulli_rewards, uniform_rewards])
@pytest.mark.parametrize("c", [0.0, 3.0])
def test_klucb_equals_its_plain_python_reference(rewards, c):
    table = rewards([0.45, 0.5, 0.55, 0.5, 0.3, 0.52], 1500, seed=3)
    assert_plays_like_reference(KLUCB(6, c), KLUCBReference(6, c, 1e-9), table)


def _step_as_references(batch: KLUCB, refs: list[KLUCBReference], table: np.ndarray, t: int) -> np.ndarray:
    """Round t: the batch's actions equal the references' ones; each copy and its reference then get ``table[t]``."""
    a = batch.act()
    assert list(a) == [ref.act() for ref in refs], f"round {t}"
    batch.update(a, table[t, np.arange(len(refs)), a])
    for i, ref in enumerate(refs):
        ref.update(int(a[i]), float(table[t, i, a[i]]))
    return a


@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_klucb_copies_equal_the_reference_on_a_coarse_grid_with_arms_near_one(tol):
    # a coarse grid makes exact ties between indices common; means near 1 put u* close to 1
    copies, horizon = 6, 600
    rng = np.random.default_rng(11)
    means = np.array([0.9, 0.95, 0.93, 0.6, 0.94])
    table = (rng.random((horizon, copies, means.size)) < means).astype(np.float64)
    batch = KLUCB(means.size, tol=tol, n_envs=copies)
    refs = [KLUCBReference(means.size, 0.0, tol) for _ in range(copies)]
    for t in range(horizon):
        _step_as_references(batch, refs, table, t)


def test_klucb_copies_keep_decisions_and_move_anchors_without_logarithms_and_equal_the_reference():
    # Close Bernoulli arms, c = 0 and 3 per copy: most choices come from a kept decision by bounds and
    # most updates of the decided arm keep its anchor (bounds of kl at the new mean, no logarithm);
    # every copy still chooses as the reference, which computes every index.
    copies, horizon = 8, 1200
    means = np.array([0.45, 0.5, 0.55, 0.5, 0.3, 0.52])
    k = means.size
    rng = np.random.default_rng(5)
    table = (rng.random((horizon, copies, k)) < means).astype(np.float64)
    c = np.array([0.0, 3.0] * (copies // 2))
    batch = KLUCB(k, c, n_envs=copies)
    refs = [KLUCBReference(k, float(c[i]), 1e-9) for i in range(copies)]
    rows = np.arange(copies)
    assert batch._anchors.shape == (copies, ANCHOR_BLOCKS * k + DECISION_COLUMNS)
    kept = moved = 0
    for t in range(horizon):
        a = _step_as_references(batch, refs, table, t)
        anchors = batch._anchors
        kept += int(np.sum(anchors[:, ANCHOR_BLOCKS * k + 2] > 0.0))  # a decision whose threshold is still ahead
        moved += int(np.sum(anchors[rows, 6 * k + a] != batch.means[rows, a]))  # anchor evaluated at another mean
    assert kept > 0.5 * copies * horizon
    assert moved > 0.25 * copies * horizon


def test_kl_search_from_near_one_ends_near_the_index():
    # Newton's stopping rule must account for kl's curvature near 1: from a start just below 1
    # the last point evaluated is next to u*, not the start (the grid search from there is short)
    for p, d in ((0.5, 1.2424533248940002), (2 / 3, 1.4847824320845024), (0.0, 2.4849066497880004)):
        u, x_last, k_last, _ = kl_search(p, d, 1e-9, 1.0 - 1.8e-8)
        assert u == kl_index_reference(p, d, 1e-9)
        assert abs(x_last - u) < 1e-4 and k_last == pytest.approx(d, rel=1e-3)


def test_klucb_index_update_by_the_batch_equals_one_copy():
    table = bernoulli_rewards([0.4, 0.5, 0.6], 400, seed=1)
    batch = KLUCB(3, n_envs=2)
    single = KLUCB(3)
    for row in table:
        a = batch.act()
        s = single.act()
        assert a[0] == a[1] == s
        batch.update(a, row[a])
        single.update(s, float(row[s]))


# MOSS -------------------------------------------------------------------------------------------


def test_moss_index_by_hand():
    agent = MOSS(2, horizon=100)
    for arm, reward in [(0, 1.0), (1, 0.2), (0, 0.0)]:
        agent.update(arm, reward)
    # arm 0: N = 2, mean 0.5, bonus sqrt(ln(100 / (2 * 2)) / 2); arm 1: N = 1, mean 0.2, sqrt(ln 50).
    expected = [0.5 + math.sqrt(math.log(25) / 2), 0.2 + math.sqrt(math.log(50))]
    np.testing.assert_allclose(agent.indices()[0], expected, rtol=1e-15)
    assert agent.act() == 1
    for _ in range(60):  # N > T/K: the bonus is 0 and the index is the mean
        agent.update(0, 0.5)
    assert agent.indices()[0, 0] == pytest.approx(agent.means[0, 0], abs=0.0)


@pytest.mark.parametrize("rewards", [bernoulli_rewards, uniform_rewards])
def test_moss_equals_its_plain_python_reference(rewards):
    table = rewards([0.45, 0.5, 0.55, 0.5], 2000, seed=4)
    assert_plays_like_reference(MOSS(4, 2000), MOSSReference(4, 2000), table)


# EpsilonGreedy ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "param", "decaying"),
    [({"epsilon": 0.1}, 0.1, False), ({"epsilon": 0.0}, 0.0, False), ({"schedule": "decaying", "c": 0.2}, None, True)],
    ids=["eps=0.1", "greedy", "decaying"],
)
def test_epsilon_greedy_equals_its_plain_python_reference(kwargs, param, decaying):
    table = uniform_rewards([0.3, 0.5, 0.6, 0.55], 2000, seed=5)
    if param is None:
        param = kwargs["c"] * 4 / 0.1**2
    agent = EpsilonGreedy(4, seed=11, **kwargs)
    assert_plays_like_reference(agent, GreedyReference(4, param, decaying, np.random.default_rng(11)), table)


def test_greedy_plays_each_arm_once_then_the_best_mean():
    agent = EpsilonGreedy(3, epsilon=0.0, seed=0)
    for arm, reward in [(0, 0.2), (1, 0.9), (2, 0.5)]:
        assert agent.act() == arm
        agent.update(arm, reward)
    assert all(agent.act() == 1 for _ in range(50))


def test_epsilon_one_is_uniform():
    agent = EpsilonGreedy(4, epsilon=1.0, n_envs=4000, seed=0)
    for arm in range(4):
        agent.update(np.full(4000, arm), np.full(4000, float(arm)))  # arm 3 has the best mean
    counts = np.bincount(agent.act(), minlength=4)
    chi2 = ((counts - 1000) ** 2 / 1000).sum()
    assert chi2 < 16.3  # 0.999 quantile of chi^2 with 3 degrees of freedom


def test_decaying_epsilon_schedule():
    agent = EpsilonGreedy(5, schedule="decaying", c=0.5, d=0.25)
    c_k_over_d2 = 0.5 * 5 / 0.25**2  # 40
    assert agent.current_epsilon() == 1.0  # round 1
    for _ in range(79):
        agent.update(0, 0.5)
    assert agent.current_epsilon() == pytest.approx(c_k_over_d2 / 80)  # round t = 80: 0.5


def test_exploration_rate_of_constant_epsilon():
    n = 20_000
    agent = EpsilonGreedy(2, epsilon=0.3, n_envs=n, seed=2)
    agent.update(np.zeros(n, dtype=np.int64), np.ones(n))
    agent.update(np.ones(n, dtype=np.int64), np.zeros(n))
    worse = (agent.act() == 1).mean()  # explores (0.3) and then draws arm 1 (1/2)
    assert abs(worse - 0.15) < 4 * math.sqrt(0.15 * 0.85 / n)


# Exp3 and its graph variants ----------------------------------------------------------------------


def softmax(losses: list[float], eta: float) -> np.ndarray:
    w = np.exp(-eta * (np.array(losses) - min(losses)))
    return w / w.sum()


def test_exp3_probabilities_after_a_fixed_sequence():
    agent = Exp3(3, eta=0.5)
    np.testing.assert_allclose(agent.probabilities[0], [1 / 3] * 3)
    agent.update(0, 0.25)  # loss 0.75 / p_0 = 2.25
    losses = [2.25, 0.0, 0.0]
    np.testing.assert_allclose(agent.probabilities[0], softmax(losses, 0.5), rtol=1e-14)
    p = softmax(losses, 0.5)
    agent.update(2, 0.0)  # loss 1 / p_2
    losses[2] += 1 / p[2]
    np.testing.assert_allclose(agent.probabilities[0], softmax(losses, 0.5), rtol=1e-14)
    agent.update(1, 1.0)  # loss 0: nothing changes
    np.testing.assert_allclose(agent.probabilities[0], softmax(losses, 0.5), rtol=1e-14)
    np.testing.assert_allclose(agent.loss_estimates[0], losses, rtol=1e-14)


def test_exp3_learning_rates_and_exploration():
    assert Exp3(4, 1000).eta == pytest.approx(math.sqrt(2 * math.log(4) / (4 * 1000)))
    anytime = Exp3(4)
    assert anytime.eta == pytest.approx(math.sqrt(math.log(4) / 4))  # round 1
    anytime.update(0, 1.0)
    anytime.update(1, 1.0)
    assert anytime.eta == pytest.approx(math.sqrt(math.log(4) / (3 * 4)))  # round 3
    mixed = Exp3(4, eta=1.0, gamma=0.2)
    mixed.update(0, 0.0)
    losses = [4.0, 0.0, 0.0, 0.0]  # 1 / p_0 with p_0 = 1/4
    np.testing.assert_allclose(mixed.probabilities[0], 0.8 * softmax(losses, 1.0) + 0.05, rtol=1e-14)


def test_observation_probabilities_on_a_path():
    info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.array([0.2, 0.5, 0.9])}
    for agent in (Exp3SET(3, PATH3, 100), Exp3IX(3, PATH3)):
        np.testing.assert_allclose(agent.observation_probabilities()[0], [2 / 3, 1.0, 2 / 3])
        agent.update(1, 0.5, info)
        p = agent.probabilities[0]
        np.testing.assert_allclose(agent.observation_probabilities()[0], [p[0] + p[1], 1.0, p[1] + p[2]])


def test_exp3set_update_by_hand():
    agent = Exp3SET(3, PATH3, horizon=100)
    eta = math.sqrt(2 * math.log(3) / (2 * 100))  # alpha(path of 3) = 2
    assert agent.alpha == 2 and agent.eta == pytest.approx(eta)
    # Pull the middle arm: it observes all three; q = [2/3, 1, 2/3] under the uniform p.
    info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.array([0.2, 0.5, 0.9])}
    agent.update(1, 0.5, info)
    losses = [0.8 / (2 / 3), 0.5 / 1.0, 0.1 / (2 / 3)]
    np.testing.assert_allclose(agent.loss_estimates[0], losses, rtol=1e-14)
    np.testing.assert_allclose(agent.probabilities[0], softmax(losses, eta), rtol=1e-14)
    # Pull arm 0: observes arms 0 and 1 only, each divided by its observation probability.
    p = softmax(losses, eta)
    info = {"observed_mask": np.array([True, True, False]), "observed_rewards": np.array([1.0, 0.0, 0.0])}
    agent.update(0, 1.0, info)
    losses[1] += 1.0 / (p[0] + p[1] + p[2])
    np.testing.assert_allclose(agent.loss_estimates[0], losses, rtol=1e-14)


def test_exp3ix_update_by_hand():
    agent = Exp3IX(3, PATH3)
    eta1 = math.sqrt(math.log(3) / 3)
    gamma1 = eta1 / 2
    assert agent.eta == pytest.approx(eta1) and agent.gamma == pytest.approx(gamma1)
    info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.array([0.2, 0.5, 0.9])}
    agent.update(1, 0.5, info)
    q = np.array([2 / 3, 1.0, 2 / 3])
    losses = np.array([0.8, 0.5, 0.1]) / (q + gamma1)
    spent = float(np.sum((1 / 3) / (q + gamma1)))  # Q_1
    eta2 = math.sqrt(math.log(3) / (3 + spent))
    np.testing.assert_allclose(agent.loss_estimates[0], losses, rtol=1e-14)
    assert agent.eta == pytest.approx(eta2, rel=1e-14) and agent.gamma == pytest.approx(eta2 / 2, rel=1e-14)
    np.testing.assert_allclose(agent.probabilities[0], softmax(list(losses), eta2), rtol=1e-14)
    fixed = Exp3IX(3, PATH3, eta=0.3, gamma=0.1)
    fixed.update(1, 0.5, info)
    np.testing.assert_allclose(fixed.loss_estimates[0], np.array([0.8, 0.5, 0.1]) / (q + 0.1), rtol=1e-14)


def play_graph_reference(agent: Agent, reference: ExpWeightsReference, table: np.ndarray, closed: np.ndarray) -> None:
    for t, row in enumerate(table):
        action = agent.act()
        assert action == reference.act(), f"round {t}"
        mask = closed[action]
        info = {"observed_mask": mask.copy(), "observed_rewards": np.where(mask, row, 0.0)}
        agent.update(action, float(row[action]), info)
        reference.update(action, float(row[action]), {int(i): float(row[i]) for i in np.flatnonzero(mask)})


@pytest.mark.parametrize("horizon", [None, 1500])
def test_exp3_equals_its_plain_python_reference(horizon):
    table = uniform_rewards([0.3, 0.5, 0.6, 0.55], 1500, seed=6)
    agent = Exp3(4, horizon, seed=3)
    reference = ExpWeightsReference(4, "exp3", np.random.default_rng(3), agent.eta_at)
    assert_plays_like_reference(agent, reference, table)


def test_exp_weights_with_many_arms_equal_the_plain_python_reference():
    """Above EARLY_EXIT_ARMS the draw stops at the arm; the same arms as the reference's scan, one env and copies."""
    from agents.adversarial.kernels import EARLY_EXIT_ARMS

    k = EARLY_EXIT_ARMS + 12
    means = list(np.linspace(0.2, 0.8, k))
    table = uniform_rewards(means, 600, seed=2)
    agent = Exp3(k, eta=0.2, seed=3)
    assert_plays_like_reference(agent, ExpWeightsReference(k, "exp3", np.random.default_rng(3), lambda t: 0.2), table)
    graph = erdos_renyi(k, 0.1, 5)
    closed = graph | np.eye(k, dtype=bool)
    for make in (lambda n: Exp3SET(k, graph, 600, n_envs=n, seed=10), lambda n: Exp3IX(k, graph, n_envs=n, seed=10)):
        single = make(None)
        kind, eta = ("set", single.fixed_eta) if isinstance(single, Exp3SET) else ("ix", None)
        reference = ExpWeightsReference(k, kind, np.random.default_rng(10), eta, None if kind == "ix" else 0.0, closed)
        play_graph_reference(single, reference, table, closed)
        batch = make(3)  # copy 0 plays as the single agent
        twin = make(None)
        for row in table[:200]:
            arms, arm = batch.act(), twin.act()
            assert arms[0] == arm
            observed = np.tile(row, (3, 1))
            batch.update(
                arms, observed[np.arange(3), arms], {"observed_mask": closed[arms], "observed_rewards": observed}
            )
            twin.update(arm, float(row[arm]), {"observed_mask": closed[arm], "observed_rewards": row.copy()})
        np.testing.assert_array_equal(batch.probabilities[0], twin.probabilities[0])


def test_batched_exp3_calls_compiled_entry_points_and_takes_strided_feedback():
    # N copies' act and update call the batched kernels' compiled entry points (no argument typing);
    # the update's entry point takes actions and rewards of any strides and read-only rewards.
    from agents.adversarial import exp3 as exp3_module

    agent, twin = Exp3(4, 500, n_envs=6, seed=2), Exp3(4, 500, n_envs=6, seed=2)
    for kernel in (exp3_module._SAMPLE, exp3_module._EXP3_UPDATE):
        assert kernel.call is not kernel.kernel
    table = np.random.default_rng(4).random((200, 6, 4))
    for t in range(200):
        a, b = agent.act(), twin.act()
        np.testing.assert_array_equal(a, b)
        wide = np.stack([a, a], axis=1)  # (6, 2) int64: column 0 has a stride of 16 bytes
        rewards = np.stack([table[t, np.arange(6), a]] * 3, axis=1)[:, 1]
        rewards.flags.writeable = False
        agent.update(wide[:, 0], rewards)
        twin.update(np.ascontiguousarray(a), np.ascontiguousarray(rewards))
    np.testing.assert_array_equal(agent.loss_estimates, twin.loss_estimates)
    with pytest.raises(ValueError, match="for copy 2"):
        agent.update(np.array([0, 1, 4, 0, 1, 2])[::1], np.zeros(6))


def test_exp3set_and_exp3ix_equal_their_plain_python_reference():
    graph = erdos_renyi(6, 0.4, seed=2)
    closed = graph | np.eye(6, dtype=bool)
    table = uniform_rewards([0.3, 0.5, 0.6, 0.55, 0.4, 0.2], 1500, seed=7)
    agent = Exp3SET(6, graph, 1500, seed=4)
    play_graph_reference(
        agent, ExpWeightsReference(6, "set", np.random.default_rng(4), agent.eta, 0.0, closed), table, closed
    )
    ix = Exp3IX(6, graph, seed=5)
    play_graph_reference(ix, ExpWeightsReference(6, "ix", np.random.default_rng(5), None, None, closed), table, closed)
    fixed = Exp3IX(6, graph, eta=0.05, seed=6)
    reference = ExpWeightsReference(6, "ix", np.random.default_rng(6), 0.05, 0.025, closed)
    play_graph_reference(fixed, reference, table, closed)


def test_exp3set_on_the_empty_graph_is_exp3():
    env = gym.make("GraphBandit-v0", graph=EMPTY5, horizon=800)
    actions = []
    for agent in (Exp3SET(5, EMPTY5, 800, seed=9), Exp3(5, 800, seed=9)):
        env.reset(seed=1)
        played = []
        for _ in range(800):
            a = agent.act()
            _, reward, _, _, info = env.step(a)
            agent.update(a, reward, info)
            played.append(a)
        actions.append(played)
    assert actions[0] == actions[1]


# Batch mode: copy i plays as a single agent seeded seed + i ------------------------------------------

Make = Callable[[int | None, int], Agent]
GRAPH_SEED = 3
GRAPH10 = erdos_renyi(10, 0.3, seed=GRAPH_SEED)

BATCHABLE: dict[str, Make] = {
    "EpsilonGreedy": lambda n, s: EpsilonGreedy(10, 0.2, n_envs=n, seed=s),
    "EpsilonGreedy-decaying": lambda n, s: EpsilonGreedy(10, schedule="decaying", c=0.05, n_envs=n, seed=s),
    "KLUCB": lambda n, s: KLUCB(10, 1.0, n_envs=n, seed=s),
    "MOSS": lambda n, s: MOSS(10, 300, n_envs=n, seed=s),
    "Exp3": lambda n, s: Exp3(10, n_envs=n, seed=s),
    "Exp3SET": lambda n, s: Exp3SET(10, GRAPH10, 300, n_envs=n, seed=s),
    "Exp3IX": lambda n, s: Exp3IX(10, GRAPH10, n_envs=n, seed=s),
}
ENV_KW = {"graph": GRAPH10, "means": list(np.linspace(0.2, 0.8, 10)), "reward": "bernoulli"}


@pytest.mark.parametrize("name", sorted(BATCHABLE))
def test_batch_copy_i_equals_a_single_agent_seeded_seed_plus_i(name):
    make, n, horizon, seed = BATCHABLE[name], 4, 300, 20
    vec = gym.make_vec("GraphBandit-v0", num_envs=n, horizon=horizon, **ENV_KW)
    vec.reset(seed=100)
    batched = np.array(play_env(make(n, seed), vec, horizon, check=assert_int64_per_copy(n)).actions)
    for i in range(n):
        env = gym.make("GraphBandit-v0", horizon=horizon, **ENV_KW)
        env.reset(seed=100 + i)
        single = play_env(make(None, seed + i), env, horizon, check=assert_int).actions
        np.testing.assert_array_equal(single, batched[:, i], err_msg=f"copy {i}")


@pytest.mark.parametrize("name", sorted(BATCHABLE))
def test_seeded_reset_pickle_and_copies_replay_the_same_actions(name):
    def run(agent: Agent, rounds: int = 80) -> list[Any]:
        env = gym.make_vec("GraphBandit-v0", num_envs=3, horizon=rounds, **ENV_KW)
        env.reset(seed=1)
        out = []
        for _ in range(rounds):
            a = agent.act()
            _, reward, _, _, info = env.step(a)
            agent.update(a, reward, info)
            out.append(a.tolist())
        return out

    agent = BATCHABLE[name](3, 5)
    first = run(agent)
    agent.reset()
    assert run(agent) == first
    agent.reset(seed=8)
    other = run(agent)
    assert run(BATCHABLE[name](3, 8)) == other
    agent.reset(seed=8)
    run(agent, 40)
    twins = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    rest = run(agent, 40)
    for twin in twins:
        assert run(twin, 40) == rest


# Input checks of the constructors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: EpsilonGreedy(3, epsilon=1.5), ValueError, r"epsilon must be a finite number in \[0, 1\]"),
        (lambda: EpsilonGreedy(3, epsilon=-0.1), ValueError, r"epsilon must be a finite number in \[0, 1\]"),
        (lambda: EpsilonGreedy(3, epsilon="0.1"), TypeError, "epsilon"),
        (lambda: EpsilonGreedy(3, 0.1, schedule="decaying"), ValueError, "epsilon is the constant schedule"),
        (lambda: EpsilonGreedy(3, schedule="linear"), ValueError, "schedule must be one of"),
        (lambda: EpsilonGreedy(3, schedule="decaying", d=1.0), ValueError, r"d must be a finite number in \(0, 1\)"),
        (lambda: EpsilonGreedy(3, schedule="decaying", c=0.0), ValueError, "c must be"),
        # c and d are checked with the constant schedule too (where they are not used)
        (lambda: EpsilonGreedy(3, c=-1.0), ValueError, r"c must be a finite number in \(0, inf\)"),
        (lambda: EpsilonGreedy(3, 0.2, c=math.nan), ValueError, "c must be"),
        (lambda: EpsilonGreedy(3, c="6"), TypeError, "c must be a real number"),
        (lambda: EpsilonGreedy(3, d=1.5), ValueError, r"d must be a finite number in \(0, 1\)"),
        (lambda: EpsilonGreedy(3, d=0.0), ValueError, r"d must be a finite number in \(0, 1\)"),  # the whole range
        (lambda: EpsilonGreedy(3, d=[0.1, 2.0], n_envs=2), ValueError, r"d\[1\] must be"),
        (lambda: EpsilonGreedy(3, epsilon=[0.1, 0.2], n_envs=3), ValueError, "epsilon must be a number or an array"),
        (lambda: KLUCB(3, c=-1.0), ValueError, "c must be"),
        (lambda: KLUCB(3, tol=0.0), ValueError, "tol must be"),
        (lambda: MOSS(3, 0), ValueError, "horizon"),
        (lambda: MOSS(3, 10.5), TypeError, "horizon"),
        (lambda: Exp3(3, eta=0.0), ValueError, "eta"),
        (lambda: Exp3(3, gamma=1.0), ValueError, "gamma"),
        (lambda: Exp3SET(3, PATH3), ValueError, "needs horizon"),
        (lambda: Exp3SET(3, PATH3, 100, alpha=4), ValueError, "alpha must be an independence number"),
        (lambda: Exp3SET(3, PATH3, 100, alpha=0), ValueError, r"alpha must be an independence number in \[1, 3\]"),
        (lambda: Exp3SET(4, PATH3, 100), ValueError, "^feedback_graph must have n_arms=4 nodes"),
        (lambda: Exp3SET(3, PATH3.astype(str), 100), ValueError, r"^feedback_graph .* got feedback_graph\[0, 0\] = "),
        (lambda: Exp3IX(3, None), ValueError, "feedback_graph is required"),
        (lambda: Exp3IX(3, PATH3, gamma=0.1), ValueError, "give eta too"),
    ],
)
def test_invalid_arguments_are_refused_in_one_sentence(make, error, match):
    with pytest.raises(error, match=match) as exc:
        make()
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


# Regret sanity (fixed seeds) -------------------------------------------------------------------------


def batched_regret(agent: Agent, horizon: int, seed: int, **env_kw: Any) -> np.ndarray:
    """Per-copy total regret of a batched agent on GraphBandit-v0 (copies seeded seed + i)."""
    assert agent.n_envs is not None
    env = gym.make_vec("GraphBandit-v0", num_envs=agent.n_envs, horizon=horizon, **env_kw)
    env.reset(seed=seed)
    regret = np.zeros(agent.n_envs)
    for _ in range(horizon):
        a = agent.act()
        _, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)
        regret += info["regret"]
    return regret


BERNOULLI = {"graph": EMPTY5, "means": [0.3, 0.4, 0.5, 0.6, 0.7], "reward": "bernoulli"}


def test_klucb_has_less_regret_than_ucb_on_bernoulli_arms():
    # 40 runs of 3000 rounds; measured on these seeds: KL-UCB 48.6, UCB(alpha = sqrt 2) 146.0 (se of the
    # difference 3.4), so the margin of 4 standard errors holds with room.
    kl = batched_regret(KLUCB(5, n_envs=40), 3000, seed=0, **BERNOULLI)
    ucb = batched_regret(UCB(5, n_envs=40), 3000, seed=0, **BERNOULLI)
    se = math.sqrt(kl.var() / 40 + ucb.var() / 40)
    assert kl.mean() < ucb.mean() - 4 * se


@pytest.mark.parametrize(
    "make",
    [
        lambda n: KLUCB(5, n_envs=n),
        lambda n: MOSS(5, 3000, n_envs=n),
        lambda n: EpsilonGreedy(5, 0.05, n_envs=n, seed=0),
        lambda n: EpsilonGreedy(5, schedule="decaying", c=0.1, n_envs=n, seed=0),
        lambda n: Exp3(5, 3000, n_envs=n, seed=0),
        lambda n: Exp3SET(5, EMPTY5, 3000, n_envs=n, seed=0),
        lambda n: Exp3IX(5, EMPTY5, n_envs=n, seed=0),
    ],
    ids=["KLUCB", "MOSS", "eps-greedy", "eps_n-greedy", "Exp3", "Exp3SET", "Exp3IX"],
)
def test_every_baseline_learns_much_faster_than_random(make):
    # Random's expected regret is 0.2 * 3000 = 600; every learner is far below half of it.
    regret = batched_regret(make(20), 3000, seed=1, **BERNOULLI)
    random = batched_regret(Random(5, n_envs=20, seed=0), 3000, seed=1, **BERNOULLI)
    assert regret.mean() < 0.5 * random.mean()


def test_graph_agents_gain_from_side_observations():
    # On a dense graph every pull shows most arms: Exp3-SET and Exp3-IX beat Exp3 clearly.
    graph = erdos_renyi(10, 0.8, seed=1)
    env_kw = {"graph": graph, "means": list(np.linspace(0.3, 0.7, 10)), "reward": "bernoulli"}
    exp3 = batched_regret(Exp3(10, 2000, n_envs=20, seed=0), 2000, seed=2, **env_kw)
    for agent in (Exp3SET(10, graph, 2000, n_envs=20, seed=0), Exp3IX(10, graph, n_envs=20, seed=0)):
        regret = batched_regret(agent, 2000, seed=2, **env_kw)
        se = math.sqrt(regret.var() / 20 + exp3.var() / 20)
        assert regret.mean() < exp3.mean() - 4 * se, type(agent).__name__


def test_names_and_repr():
    assert [a.name for a in (KLUCB(3), MOSS(3, 10), Exp3(3), Exp3SET(3, PATH3, 10), Exp3IX(3, PATH3))] == [
        "KL-UCB",
        "MOSS",
        "Exp3",
        "Exp3-SET",
        "Exp3-IX",
    ]
    assert EpsilonGreedy(3).name == "eps-greedy"
    assert EpsilonGreedy(3, schedule="decaying").name == "eps_n-greedy"
    assert "schedule='decaying'" in repr(EpsilonGreedy(3, schedule="decaying"))
    assert "horizon=10" in repr(MOSS(3, 10))


@pytest.mark.parametrize(
    ("make", "shifts"),
    [(lambda: Exp3(6, 800, n_envs=40, seed=1), 1), (lambda: Exp3(6, eta=0.3, n_envs=40, seed=2), 4)],
)
def test_exp3_kept_weights_give_the_bits_of_a_full_recompute(make, shifts):
    """Exp3's update recomputes the pulled arm's weight only (η and the shift kept): p as from scratch.

    The shift stays within SHIFT_SLACK / η below min L̂ (every weight at most 1, the largest at
    least e^-16), and is renewed when min L̂ moves past that.
    """
    from agents.adversarial.kernels import SHIFT_SLACK, recompute_rows

    agent = make()
    rng = np.random.default_rng(0)
    rows = np.arange(40)
    lows = set()
    for t in range(800):
        actions = agent.act()
        rewards = (rng.random((40, 6)) < np.linspace(0.2, 0.7, 6)).astype(float)
        rewards[:, ::2] = rng.random((40, 3))
        agent.update(actions, rewards[rows, actions])
        state = agent._state
        low, weights = state[:, 15], state[:, 16:]
        drift = state[:, :6].min(axis=1) - low
        assert np.all(drift >= 0) and np.all(state[:, 12] * drift <= SHIFT_SLACK * (1 + 1e-12))
        assert np.all(weights <= 1.0) and np.all(weights.max(axis=1) >= math.exp(-SHIFT_SLACK))
        lows.add(float(low[0]))
        if t % 50 == 49:
            fresh = state.copy()
            recompute_rows(fresh, agent.eta_at(agent.t + 1), agent.gamma)
            np.testing.assert_array_equal(agent.probabilities, fresh[:, 6:12])
            np.testing.assert_array_equal(state, fresh)
    assert len(lows) >= shifts  # η = 0.3: renewed as min L̂ grew past 16 / 0.3


@pytest.mark.parametrize(
    "make",
    [
        lambda graph: Exp3SET(8, graph, 600, n_envs=30, seed=1),
        lambda graph: Exp3IX(8, graph, eta=0.2, n_envs=30, seed=2),
        lambda graph: Exp3IX(8, graph, eta=0.2, gamma=0.0, n_envs=30, seed=3),
    ],
)
def test_graph_agents_kept_weights_give_the_bits_of_a_full_recompute(make):
    """A fixed η: only the revealed arms' weights are recomputed (η and the shift kept), p as from scratch."""
    from agents.adversarial.kernels import recompute_rows

    graph = erdos_renyi(8, 0.3, 4)
    agent = make(graph)
    closed = agent.neighbourhoods
    rng = np.random.default_rng(0)
    rows = np.arange(30)
    for t in range(600):
        actions = agent.act()
        rewards = (rng.random((30, 8)) < np.linspace(0.2, 0.7, 8)).astype(float)
        rewards[:, ::2] = rng.random((30, 4))
        mask = closed[actions]
        agent.update(actions, rewards[rows, actions], {"observed_mask": mask, "observed_rewards": rewards})
        if t % 50 == 49:
            fresh = agent._state.copy()
            recompute_rows(fresh, agent.fixed_eta, 0.0)
            np.testing.assert_array_equal(agent.probabilities, fresh[:, 8:16])
            np.testing.assert_array_equal(agent._state, fresh)


def test_exp3_sees_written_loss_estimates():
    agent = Exp3(3, eta=0.5)
    for arm in (0, 1, 2, 0):
        agent.update(arm, 0.3)
    agent.loss_estimates[0] = [5.0, 1.0, 3.0]
    agent.update(1, 1.0 - 1e-9)  # a tiny loss: L̂_1 moves by about 1e-9 / p_1
    losses = list(agent.loss_estimates[0])
    np.testing.assert_allclose(agent.probabilities[0], softmax(losses, 0.5), rtol=1e-14)
