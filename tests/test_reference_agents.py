"""The compiled agents of agents.elimination.policies take the same actions as agents.elimination.reference.

The references are plain-Python versions of GAP, DPSE and AAE written after the papers'
algorithms; given the same reward table, graph, parameters and seed they must make the same
decisions (and, for the private agents, draw the same Laplace noise, in the same order).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import PATH3

from agents.elimination.drivers import aae_passes_kept
from agents.elimination.kernels import DPSE_COUNTERS, DPSE_RELEASES, GAP_COUNTERS, GAP_MEAN, GAP_RELEASES
from agents.elimination.policies import AAE, DPSE, GAP, EliminationAgent
from agents.elimination.reference import (
    ReferenceRun,
    aae_radius,
    gap_elimination_slack,
    gap_epoch_length,
    get_ind_set,
    run_aae,
    run_dpse,
    run_gap,
)
from bandit_envs.graph import paper_means
from bandit_envs.privacy.streams import noise_generator


def random_graph(n_arms: int, p: float, seed: int) -> np.ndarray:
    upper = np.triu(np.random.default_rng(seed).random((n_arms, n_arms)) < p, k=1)
    return upper | upper.T


def graphs(n_arms: int) -> dict[str, np.ndarray]:
    return {
        "empty": np.zeros((n_arms, n_arms), dtype=bool),
        "complete": ~np.eye(n_arms, dtype=bool),
        "random": random_graph(n_arms, 0.4, n_arms),
    }


def bernoulli_table(n_arms: int, rounds: int, seed: int, gap: float = 0.1) -> np.ndarray:
    """Bernoulli rewards with the GAP paper's means (two optimal arms, then 0.05 steps)."""
    means = paper_means(n_arms, gap)
    return (np.random.default_rng(seed).random((rounds, n_arms)) < means).astype(float)


def uniform_table(n_arms: int, rounds: int, seed: int) -> np.ndarray:
    """Continuous rewards, so that sums and means are not exactly representable."""
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.2, 0.8, n_arms)
    return np.clip(means + rng.uniform(-0.2, 0.2, (rounds, n_arms)), 0.0, 1.0)


def compiled_actions(agent: EliminationAgent, table: np.ndarray, graph: np.ndarray) -> np.ndarray:
    result = agent.simulate(table, graph, np.zeros(table.shape[1]), record_actions=True)
    assert result.actions is not None
    return result.actions.astype(np.int64)


def assert_same(agent: EliminationAgent, reference: ReferenceRun, actions: np.ndarray) -> None:
    np.testing.assert_array_equal(actions, reference.actions)
    np.testing.assert_array_equal(np.flatnonzero(agent.active[0]), reference.active)


# Building blocks against hand-computed values -------------------------------------------


def test_get_ind_set_greedy_by_mean_lowest_index_on_ties():
    nbhd = [{0, 1}, {0, 1, 2}, {1, 2}]
    assert get_ind_set([0, 1, 2], [0.0, 0.0, 0.0], nbhd) == [0, 2]
    assert get_ind_set([0, 1, 2], [0.1, 0.9, 0.2], nbhd) == [1]
    assert get_ind_set([0, 1, 2], [0.5, 0.4, 0.6], nbhd) == [2, 0]
    assert get_ind_set([0, 2], [0.1, 0.9, 0.2], nbhd) == [2, 0]


def test_gap_formulas():
    # Lines 10-12 and 23 with |A| = 3, τ = 1, ε = 0.5, δ = 0.01 (see test_elimination_agents).
    assert gap_epoch_length(3, 1, 0.5, 0.01) == 997
    assert gap_elimination_slack(3, 1, 0.5, 0.01, 997) == pytest.approx(0.15340, abs=1e-5)


# GAP --------------------------------------------------------------------------------------

# Every case releases at least once and eliminates arms; δ = 0.5 gives several epochs.
GAP_CASES = [
    # (K, graph, epsilon, delta, round_robin, seed, table)
    (5, "random", 0.2, 0.5, "index", 0, "bernoulli"),
    (5, "random", 0.2, 0.5, "greedy", 1, "bernoulli"),
    (5, "empty", 1.0, 0.5, "index", 2, "uniform"),
    (5, "complete", 0.05, 0.5, "greedy", 3, "uniform"),
    (10, "random", 0.5, 0.5, "greedy", 4, "uniform"),
    (10, "random", 0.05, None, "index", 5, "bernoulli"),
    (10, "empty", 1.0, None, "greedy", 6, "bernoulli"),
]


def make_table(kind: str, n_arms: int, rounds: int, seed: int) -> np.ndarray:
    return (bernoulli_table if kind == "bernoulli" else uniform_table)(n_arms, rounds, seed)


@pytest.mark.parametrize(("k", "graph_name", "epsilon", "delta", "order", "seed", "kind"), GAP_CASES)
def test_gap_equals_reference(k, graph_name, epsilon, delta, order, seed, kind):
    horizon = 20_000
    graph = graphs(k)[graph_name]
    table = make_table(kind, k, horizon, seed)
    agent = GAP(k, horizon, epsilon, graph, delta=delta, round_robin=order, seed=seed)
    actions = compiled_actions(agent, table, graph)
    rng = noise_generator(seed)  # the agent's noise stream
    reference = run_gap(table, graph, epsilon, delta, round_robin=order, seed=rng)
    assert_same(agent, reference, actions)
    assert reference.releases == agent._state[GAP_COUNTERS][0, GAP_RELEASES] >= 1
    # The same noise, drawn in the same order: equal released means and generator states.
    for arm, mean in reference.released_means.items():
        assert agent._state[GAP_MEAN][0, arm] == mean
    assert rng.bit_generator.state == agent.rng.bit_generator.state


def test_gap_reference_stops_inside_an_epoch_without_release():
    table = np.tile([0.5, 0.75, 0.25], (2 * 997 - 1, 1))
    rng = np.random.default_rng(0)
    reference = run_gap(table, PATH3, 0.5, 0.01, seed=rng)
    assert reference.actions == [0, 2] * 996 + [0]
    assert reference.releases == 0 and reference.active == [0, 1, 2]
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state
    full = run_gap(np.vstack([table, table[:1]]), PATH3, 0.5, 0.01, seed=0)
    assert full.releases == 1 and full.active == [1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gap_neighbouring_tables_equal_reference(seed):
    # A privacy pair: the same run on a table with one entry set to 0.
    k, horizon, epsilon = 6, 12_000, 0.1
    graph = random_graph(k, 0.5, seed)
    table = bernoulli_table(k, horizon, 10 + seed)
    changed = table.copy()
    pick = np.random.default_rng(seed)
    t, arm = int(pick.integers(horizon)), int(pick.integers(k))
    changed[t, arm] = 0.0
    for tab, override in ((table, None), (changed, (t, arm, 0.0))):
        agent = GAP(k, horizon, epsilon, graph, delta=0.5, seed=seed)
        result = agent.simulate(table, graph, np.zeros(k), record_actions=True, override=override)
        reference = run_gap(tab, graph, epsilon, 0.5, seed=seed)
        assert_same(agent, reference, result.actions)


# DPSE -------------------------------------------------------------------------------------

# Every case releases at least once; all but the first and third eliminate arms.
DPSE_CASES = [
    # (K, epsilon, beta, schedule_scale, width_scale, seed, table)
    (5, 0.2, None, 0.05, 1.0, 0, "bernoulli"),
    (5, 1.0, 0.01, 0.02, 0.5, 1, "uniform"),
    (10, 0.05, None, 0.1, 1.0, 2, "uniform"),
    (10, 0.5, None, 1.0, 1.0, 3, "bernoulli"),
    (3, 1e9, 0.01, 0.01, 0.1, 4, "bernoulli"),
]


@pytest.mark.usefixtures("uncapped_epsilon")  # the last case: ε = 1e9, the noiseless limit
@pytest.mark.parametrize(("k", "epsilon", "beta", "scale", "width", "seed", "kind"), DPSE_CASES)
def test_dpse_equals_reference(k, epsilon, beta, scale, width, seed, kind):
    horizon = 20_000
    table = make_table(kind, k, horizon, seed)
    agent = DPSE(k, horizon, epsilon, beta=beta, schedule_scale=scale, width_scale=width, seed=seed)
    actions = compiled_actions(agent, table, graphs(k)["random"])  # the graph must not matter
    rng = noise_generator(seed)  # the agent's noise stream
    reference = run_dpse(table, epsilon, beta, schedule_scale=scale, width_scale=width, seed=rng)
    assert_same(agent, reference, actions)
    assert reference.releases == agent._state[DPSE_COUNTERS][0, DPSE_RELEASES] >= 1
    assert rng.bit_generator.state == agent.rng.bit_generator.state


# AAE --------------------------------------------------------------------------------------

AAE_CASES: list[tuple[int, str, dict[str, Any], str]] = [
    (5, "empty", {}, "bernoulli"),
    (5, "random", {"side_observations": True}, "bernoulli"),
    (5, "complete", {"side_observations": True, "radius": "hoeffding"}, "uniform"),
    (10, "random", {"radius": "hoeffding", "delta": 0.1}, "uniform"),
    (10, "random", {"side_observations": True, "c": 1.0}, "bernoulli"),
]


@pytest.mark.parametrize(("k", "graph_name", "kwargs", "kind"), AAE_CASES)
def test_aae_equals_reference(k, graph_name, kwargs, kind):
    horizon = 20_000
    graph = graphs(k)[graph_name]
    table = make_table(kind, k, horizon - 3, k)  # ends inside a pass
    agent = AAE(k, horizon, **kwargs)
    actions = compiled_actions(agent, table, graph)
    reference = run_aae(table, graph, horizon=horizon, **kwargs)
    assert_same(agent, reference, actions)
    assert len(reference.active) < k  # something was eliminated


@pytest.mark.parametrize("side", [False, True])
@pytest.mark.parametrize("radius", ["evendar", "hoeffding"])
def test_aae_equals_reference_when_the_rewards_turn(side, radius):
    # Long stretches of equal means let the compiled run skip many pass-end checks at once
    # (agents.elimination.drivers.aae_passes_kept); then one arm's rewards turn to 1 and another's
    # to 0, so the means move as fast as they can (1/n an update) and the skipped passes must
    # still stop before the first pass that eliminates, as the reference checks every pass.
    k, horizon = 4, 30_000
    rng = np.random.default_rng(11)
    table = np.clip(0.5 + 0.05 * rng.standard_normal((horizon, k)), 0.0, 1.0)
    table[horizon // 2 :, 1] = 1.0
    table[2 * horizon // 3 :, 3] = 0.0
    graph = graphs(k)["random"]
    kwargs: dict[str, Any] = {"side_observations": side, "radius": radius, "delta": 0.1}
    agent = AAE(k, horizon, **kwargs)
    actions = compiled_actions(agent, table, graph)
    reference = run_aae(table, graph, horizon=horizon, **kwargs)
    assert_same(agent, reference, actions)
    assert len(reference.active) < k  # something was eliminated, after the turn
    assert reference.actions[horizon // 2 - 1] != reference.actions[horizon // 2]  # several arms still active


@pytest.mark.parametrize("radius", ["evendar", "hoeffding"])
@pytest.mark.parametrize("count", [20, 300, 5_000, 60_000])
@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.7, 0.95, 0.999])
def test_aae_passes_kept_never_skips_an_eliminating_pass_end(radius, count, fraction):
    # The bound against the worst case: three active arms observed `count` times, the spread of
    # their means `fraction` of twice the radius; then the highest arm gets reward 1 and the
    # lowest 0 in every pass, which widens the spread as fast as rewards in [0, 1] can. No pass
    # end among those the bound lets the run skip may eliminate by the exact rule.
    k_arms, delta = 10, 0.1
    hoeffding = radius == "hoeffding"
    rad = aae_radius(count, k_arms, delta, 4.0, radius)
    low, mid = 0.5 - fraction * rad, 0.5
    high = low + fraction * 2.0 * rad
    order = np.array([1, 4, 7] + [0] * 7, dtype=np.int64)
    counts, sums = np.zeros(k_arms), np.zeros(k_arms)
    counts[[1, 4, 7]] = count
    sums[[1, 4, 7]] = np.array([low, mid, high]) * count
    more = aae_passes_kept(order, 3, counts, sums, (delta, 4.0, hoeffding), k_arms, 1)
    assert more >= 0
    if fraction <= 0.7 and count >= 300:
        assert more >= 1  # the bound lets far-from-threshold runs skip pass ends
    for m in range(1, more + 1):
        n = count + m
        means = [low * count / n, mid, (high * count + m) / n]
        rad_m = aae_radius(n, k_arms, delta, 4.0, radius)
        best_lower = max(mu - rad_m for mu in means)
        assert not any(mu + rad_m < best_lower for mu in means), (m, more)
