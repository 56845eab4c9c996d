"""Tests of agents.elimination.policies: GAP, GAPU, DPSE, AAE and AlphaSample.

Known answers are computed by hand from the GAP paper's Algorithm 1 (Lu, Wang, Qiu, Zhang,
Journal of Software 2022; line numbers below refer to it), active arm elimination (Even-Dar,
Mannor, Mansour, JMLR 2006), AlphaSample (Cohen, Hazan, Koren, ICML 2016) and DP-SE (Sajed &
Sheffet, ICML 2019). Where no public property exposes a quantity (noisy means, observation
counts), the tests read the agent's state tuple through the names of the state layout in
:mod:`agents.elimination.kernels` (e.g. ``agent._state[GAP_COUNTERS][0, GAP_EPOCH]``).

Rounds are counted from 0 (the paper's s_1 = 1 is our round 0).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
from conftest import PATH3, lazy_module

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.elimination import kernels
from agents.elimination.kernels import (
    AAE_COUNTS,
    ACTIVE,
    ALPHA_COUNTERS,
    ALPHA_EPOCH,
    ALPHA_SWEEPS_PER_EPOCH,
    ALPHA_UNSEEN,
    DPSE_COUNTERS,
    DPSE_RELEASES,
    DPSE_SUMS,
    GAP_COUNTERS,
    GAP_EPOCH,
    GAP_MEAN,
    GAP_OBSERVATIONS,
    GAP_RELEASES,
    GAP_ROUND,
    GAP_SUMS,
)
from agents.elimination.policies import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from bandit_envs.core import generator_addresses
from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv
from bandit_envs.privacy._checks import laplace_tail_delta
from bandit_envs.privacy.streams import noise_generator

stats = lazy_module("scipy.stats")

CYCLE4 = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=bool)
PATH5 = np.eye(5, k=1, dtype=bool) | np.eye(5, k=-1, dtype=bool)  # 0 - 1 - 2 - 3 - 4
COMPLETE4 = ~np.eye(4, dtype=bool)


def closed(graph: np.ndarray) -> np.ndarray:
    """Closed neighbourhoods N(a) as rows."""
    return graph | np.eye(graph.shape[0], dtype=bool)


def constant_table(row: list[float], rounds: int) -> np.ndarray:
    """A reward table whose column k is the constant row[k] (deterministic rewards)."""
    return np.tile(np.asarray(row, dtype=float), (rounds, 1))


def step_table(agent: EliminationAgent, table: np.ndarray, graph: np.ndarray) -> np.ndarray:
    """Run the step API over a table, revealing N(a) like the env does; returns the actions."""
    nbhd = closed(graph)
    actions = np.empty(table.shape[0], dtype=np.int64)
    for t, row in enumerate(table):
        a = agent.act()
        agent.update(a, row[a], {"observed_mask": nbhd[a], "observed_rewards": row * nbhd[a]})
        actions[t] = a
    return actions


def play(env: gym.Env, agent: EliminationAgent, horizon: int) -> tuple[np.ndarray, float]:
    """Act/update loop on a (reset) single env; returns the actions and the summed regret."""
    actions = np.empty(horizon, dtype=np.int64)
    regret = 0.0
    for t in range(horizon):
        a = agent.act()
        assert isinstance(a, int)
        _, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)
        actions[t] = a
        regret += info["regret"]
    return actions, regret


def gap_l(n_active: int, tau: int, epsilon: float, delta: float) -> int:
    """L_τ of Algorithm 1, lines 10-12."""
    l1 = 2 ** (5 + 2 * tau) * math.log(8 * n_active * tau**2 / delta)
    l2 = 2 ** (3 + tau) / epsilon * math.log(4 * n_active * tau**2 / delta)
    return math.ceil(max(l1, l2))


def gap_width(n_active: int, tau: int, epsilon: float, delta: float, length: int) -> float:
    """The elimination slack of Algorithm 1, line 23."""
    return math.sqrt(2 * math.log(8 * n_active * tau**2 / delta) / length) + 2 * math.log(
        4 * n_active * tau**2 / delta
    ) / (epsilon * length)


def generator_after(seed: int, draws: Callable[[np.random.Generator], Any]) -> dict[str, Any]:
    """Bit-generator state of the noise generator of ``seed`` after ``draws`` consumed from it."""
    rng = noise_generator(seed)
    draws(rng)
    return rng.bit_generator.state


# GAP: known answers (Algorithm 1) -------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "delta", "expected"),
    [
        # L_{1,1} = 2^7 ln(8·3·1/0.01) = 128 ln 2400 = 128 × 7.78322 = 996.25
        # L_{1,2} = 2^4/0.5 ln(4·3·1/0.01) = 32 ln 1200 = 32 × 7.09008 = 226.88  -> L_1 = 997
        (0.5, 0.01, 997),
        # L_{1,1} = 128 ln 24000 = 128 × 10.08581 = 1290.98
        # L_{1,2} = 2^4/0.05 ln 12000 = 320 × 9.39266 = 3005.65               -> L_1 = 3006
        (0.05, 1e-3, 3006),
    ],
)
def test_gap_epoch_1_length(epsilon, delta, expected):
    agent = GAP(3, 10_000, epsilon, PATH3, delta=delta)
    assert gap_l(3, 1, epsilon, delta) == expected
    np.testing.assert_array_equal(agent.epoch_length, [expected])


def test_gap_default_delta_is_one_over_horizon():
    # δ = 1/T = 1e-3 with T = 1000 gives the second case above.
    assert GAP(3, 1000, 0.05, PATH3).epoch_length[0] == 3006


def test_gap_epoch_1_is_round_robin_over_greedy_independent_set():
    agent = GAP(3, 10_000, 0.5, PATH3, delta=0.01, seed=0)
    # μ̄_0 = 0 for every arm: GetIndSet's argmax ties go to arm 0, which removes N(0) = {0, 1};
    # then arm 2 -> Ω_1 = {0, 2}.
    assert agent.independent_set == [[0, 2]]
    assert agent.active.all()
    table = constant_table([0.5, 0.75, 0.25], 2 * 997)
    actions = agent.simulate(table, PATH3, np.zeros(3), record_actions=True).actions
    # Line 14, argmin of the pull counts with ties to the lowest index: 0, 2, 0, 2, ... for
    # L_1|Ω_1| = 997 × 2 = 1994 rounds, i.e. each arm of Ω_1 exactly L_1 times.
    np.testing.assert_array_equal(actions, np.tile([0, 2], 997))


def test_gap_observes_the_middle_arm_every_round_of_epoch_1():
    agent = GAP(3, 10_000, 0.5, PATH3, delta=0.01, seed=0)
    table = constant_table([0.5, 0.75, 0.25], 101)
    step_table(agent, table, PATH3)
    o, c = agent._state[GAP_OBSERVATIONS], agent._state[GAP_SUMS]
    # 101 rounds of 0, 2, 0, ...: arm 0 pulled 51 times, arm 2 50 times; arm 1 ∈ N(0) ∩ N(2)
    # is observed every round (lines 16-18).
    np.testing.assert_array_equal(o, [[51, 101, 50]])
    np.testing.assert_allclose(c, [[51 * 0.5, 101 * 0.75, 50 * 0.25]])
    assert agent._state[GAP_COUNTERS][0, GAP_ROUND] == 101 and agent.privacy_spent == (0.0, 0.0)


def test_gap_noisy_means_drive_the_next_independent_set():
    epsilon, delta = 0.5, 0.01
    agent = GAP(3, 10_000, epsilon, PATH3, delta=delta, seed=1)
    table = constant_table([0.5, 0.6, 0.5], 2 * 997 + 50)
    step_table(agent, table[: 2 * 997], PATH3)
    # Line 23 slack at τ=1: √(2 ln 2400/997) + 2 ln 1200/(0.5·997) = 0.12495 + 0.02845 = 0.15340.
    # Arm 1 leads by 0.1 < 0.1534 (the noise scale is 1/(εL) = 0.002), so A_2 = {0, 1, 2}.
    assert gap_width(3, 1, epsilon, delta, 997) == pytest.approx(0.15340, abs=1e-5)
    np.testing.assert_array_equal(agent.active, [[True, True, True]])
    assert agent.privacy_spent == (epsilon, laplace_tail_delta(epsilon))
    # μ̄_1 ≈ (0.5, 0.6, 0.5): GetIndSet takes arm 1 first and N(1) = {0, 1, 2} -> Ω_2 = {1}.
    assert agent.independent_set == [[1]]
    # L_2 with |A_2| = 3: max(2^9 ln(8·3·4/0.01), 2^5/0.5 ln(4·3·4/0.01))
    #   = max(512 ln 9600, 64 ln 4800) = max(4694.79, 542.49) -> 4695.
    assert gap_l(3, 2, epsilon, delta) == 4695
    np.testing.assert_array_equal(agent.epoch_length, [4695])
    actions = step_table(agent, table[2 * 997 :], PATH3)
    np.testing.assert_array_equal(actions, np.ones(50))
    # Fresh per-epoch sums (lines 3-5): epoch 2 counts start at 0; arm 1 reveals 0 and 2.
    np.testing.assert_array_equal(agent._state[GAP_OBSERVATIONS], [[50, 50, 50]])


def test_gap_epoch_2_length_uses_the_surviving_arms():
    epsilon, delta = 0.5, 0.01
    agent = GAP(3, 10_000, epsilon, PATH3, delta=delta, seed=1)
    agent.simulate(constant_table([0.5, 0.75, 0.25], 2 * 997), PATH3, np.zeros(3))
    # Arm 1 leads by 0.25 > 0.1534 (+ noise of scale 0.002): arms 0 and 2 are eliminated.
    np.testing.assert_array_equal(agent.active, [[False, True, False]])
    assert agent.independent_set == [[1]]
    # L_2 with |A_2| = 1: max(512 ln(8·1·4/0.01), 64 ln(4·1·4/0.01)) = max(512 ln 3200,
    # 64 ln 1600) = max(4132.30, 472.16) -> 4133.
    assert gap_l(1, 2, epsilon, delta) == 4133
    np.testing.assert_array_equal(agent.epoch_length, [4133])
    # Eliminated arms are still revealed by arm 1 but no longer recorded (line 16: ∩ A_τ).
    agent.simulate(constant_table([0.5, 0.75, 0.25], 2 * 997 + 10), PATH3, np.zeros(3))
    np.testing.assert_array_equal(agent._state[GAP_OBSERVATIONS], [[0, 10, 0]])


@pytest.mark.usefixtures("uncapped_epsilon")
def test_gap_line_23_eliminates_exactly_the_arms_below_the_threshold():
    # ε = 1e9 makes the Laplace noise (scale 1/(εL) ≈ 1e-12) negligible; rewards are constant.
    epsilon, delta = 1e9, 0.01
    agent = GAP(5, 100_000, epsilon, PATH5, delta=delta, seed=0)
    # Ω_1 on the path 0-1-2-3-4 with ties to the lowest index: 0 (removes 1), 2 (removes 3), 4.
    assert agent.independent_set == [[0, 2, 4]]
    # L_1 = ⌈128 ln(8·5/0.01)⌉ = ⌈128 ln 4000⌉ = ⌈1061.64⌉ = 1062 (the ε term is ~1e-7).
    assert agent.epoch_length[0] == 1062 == gap_l(5, 1, epsilon, delta)
    # Slack √(2 ln 4000/1062) + 2 ln 2000/(1e9·1062) = 0.124979 (+1.4e-11).
    w = gap_width(5, 1, epsilon, delta, 1062)
    assert w == pytest.approx(0.124979, abs=1e-6)
    best = 0.8
    row = [best - w - 0.01, best - w + 0.01, best, best - 0.5, best - 0.01]
    agent.simulate(constant_table(row, 3 * 1062), PATH5, np.zeros(5))
    # Arms 0 (0.01 below max − w) and 3 go; arms 1 (0.01 above) and 4 stay.
    np.testing.assert_array_equal(agent.active, [[False, True, True, False, True]])
    # Ω_2 = GetIndSet({1, 2, 4}): arm 2 (0.8) first removes 1, then arm 4 -> {2, 4};
    # L_2 = ⌈512 ln(8·3·4/0.01)⌉ = ⌈512 ln 9600⌉ = 4695.
    assert agent.independent_set == [[2, 4]]
    np.testing.assert_array_equal(agent.epoch_length, [4695])


def test_greedy_independent_set_takes_the_largest_mean_first():
    out = np.zeros(3, dtype=np.int64)
    active = np.ones(3, dtype=bool)
    nbhd = closed(PATH3)
    m = kernels.greedy_independent_set(active, np.array([0.1, 0.9, 0.2]), nbhd, out, True)
    assert out[:m].tolist() == [1]
    # Arm 2 first (removes 1 and 2), then arm 0: in GetIndSet's order, or sorted by index.
    m = kernels.greedy_independent_set(active, np.array([0.5, 0.4, 0.6]), nbhd, out, False)
    assert out[:m].tolist() == [2, 0]
    m = kernels.greedy_independent_set(active, np.array([0.5, 0.4, 0.6]), nbhd, out, True)
    assert out[:m].tolist() == [0, 2]
    # Only the active subgraph counts: with arm 1 inactive, arms 0 and 2 are both taken.
    active[1] = False
    m = kernels.greedy_independent_set(active, np.array([0.1, 0.9, 0.2]), nbhd, out, True)
    assert out[:m].tolist() == [0, 2]


@pytest.mark.parametrize(("round_robin", "order"), [("index", [0, 2]), ("greedy", [2, 0])])
def test_gap_round_robin_order_of_the_next_epoch(round_robin, order):
    agent = GAP(3, 10_000, 0.5, PATH3, delta=0.01, round_robin=round_robin, seed=1)
    table = constant_table([0.5, 0.4, 0.6], 2 * 997 + 6)
    actions = agent.simulate(table, PATH3, np.zeros(3), record_actions=True).actions
    np.testing.assert_array_equal(actions[: 2 * 997], np.tile([0, 2], 997))  # μ̄_0 ties: 0 first
    # Slack 0.1534: arm 1 (0.2 behind arm 2) goes, arm 0 (0.1 behind) stays: A_2 = {0, 2}.
    # GetIndSet adds arm 2, then arm 0; line 14's ties then go to the lowest index ("index")
    # or to the arm GetIndSet added first ("greedy").
    np.testing.assert_array_equal(agent.active, [[True, False, True]])
    assert agent.independent_set == [order]
    np.testing.assert_array_equal(actions[2 * 997 :], order * 3)


@pytest.mark.parametrize("sampler", ["lattice", "float"])
@pytest.mark.parametrize("cls", [GAP, GAPU])
def test_gap_release_adds_laplace_draws_from_the_agent_generator(cls, sampler):
    epsilon, seed = 0.5, 3
    agent = cls(3, 10_000, epsilon, PATH3, delta=0.01, seed=seed, sampler=sampler)
    fresh = noise_generator(seed).bit_generator.state
    # GAP's GetIndSet is deterministic; GAPU's planning draws Ω_1 from the same generator.
    assert (agent.rng.bit_generator.state == fresh) == (cls is GAP)
    reference = np.random.default_rng()
    reference.bit_generator.state = agent.rng.bit_generator.state
    length = agent.epoch_length[0]
    table = constant_table([0.5, 0.75, 0.25], length * len(agent.independent_set[0]))
    agent.simulate(table, PATH3, np.zeros(3))
    # Line 21: μ̄ = c/o + η_a with one independent η_a ~ Laplace(0, 1/(εL_1)) per active arm,
    # drawn in arm order. Dyadic rewards make c/o exact.
    if sampler == "float":
        noise = reference.laplace(0.0, 1.0 / (epsilon * length), 3)
        np.testing.assert_allclose(agent._state[GAP_MEAN][0] - table[0], noise, rtol=0, atol=1e-15)
        return
    # Lattice: (snap(c) + snap(Laplace((1 + g) o/(εL_1))))/o, o the arm's observations in the
    # epoch (Ω_1's pulls reveal closed neighbourhoods); c = o r is on the grid.
    grid = agent.grid
    assert grid > 0.0 and math.frexp(grid)[0] == 0.5
    omega = agent.independent_set[0]
    o = np.array([sum(length for a in omega if k == a or PATH3[a, k]) for k in range(3)], dtype=float)
    noise = np.array([reference.laplace(0.0, (1.0 + grid) * o[k] / (epsilon * length)) for k in range(3)])
    expected = table[0] + np.rint(noise / grid) * grid / o
    np.testing.assert_allclose(agent._state[GAP_MEAN][0], expected, rtol=0, atol=1e-15)
    sums = agent._state[GAP_MEAN][0] * o
    np.testing.assert_array_equal(sums / grid, np.rint(sums / grid))  # released sums on the grid


@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_gap_laplace_noise_scale_ks(sampler):
    epsilon, n = 0.5, 400
    scale = 1.0 / (epsilon * 997)
    agent = GAP(3, 10_000, epsilon, PATH3, delta=0.01, n_envs=n, seed=11, sampler=sampler)
    table = constant_table([0.5, 0.75, 0.25], 2 * 997)
    for i in range(n):
        agent.simulate(table, PATH3, np.zeros(3), copy=i)
    noise = (agent._state[GAP_MEAN] - table[0]).ravel()
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 0.01
    assert stats.kstest(noise, stats.laplace(scale=2 * scale).cdf).pvalue < 1e-6
    assert stats.kstest(noise, stats.laplace(scale=scale / 2).cdf).pvalue < 1e-6
    if sampler == "lattice":  # the lattice's widened scale is within 2**-20 of the float one
        return
    # Copy i drew from its own generator, a single agent's seeded 11 + i (docs/design.md, "Agents", Seeds).
    expected = np.concatenate([noise_generator(11 + i).laplace(0.0, scale, 3) for i in range(n)])
    np.testing.assert_allclose(noise, expected, rtol=0, atol=1e-15)


def test_gap_truncated_last_epoch_releases_nothing():
    table = constant_table([0.5, 0.75, 0.25], 2 * 997)
    agent = GAP(3, 2 * 997 - 1, 0.5, PATH3, delta=0.01, seed=0)
    before = agent.rng.bit_generator.state
    agent.simulate(table[:-1], PATH3, np.zeros(3))
    # 1993 of the 1994 rounds of epoch 1: nothing is released, nothing eliminated, no noise.
    assert agent.privacy_spent == (0.0, 0.0)
    assert agent.active.all() and agent.independent_set == [[0, 2]]
    assert agent.epoch_length[0] == 997 and agent._state[GAP_COUNTERS][0, GAP_EPOCH] == 1  # still τ = 1
    np.testing.assert_array_equal(agent._state[GAP_MEAN], 0.0)
    assert agent.rng.bit_generator.state == before
    # Through the env (horizon ends inside the epoch): the same.
    env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.5, 0.75, 0.25], horizon=2 * 997 - 1)
    env.reset(seed=0, options={"reward_table": table[:-1]})
    stepped = GAP(3, 2 * 997 - 1, 0.5, PATH3, delta=0.01, seed=0)
    play(env, stepped, 2 * 997 - 1)
    assert stepped.privacy_spent == (0.0, 0.0) and stepped.active.all()
    # The epoch's last round releases.
    agent.simulate(table, PATH3, np.zeros(3))
    assert agent.privacy_spent == (0.5, laplace_tail_delta(0.5)) and agent._state[GAP_COUNTERS][0, GAP_EPOCH] == 2


# GAPU: uniform maximal independent sets -------------------------------------------------


@pytest.mark.parametrize(
    ("graph", "sets"),
    [(PATH3, [(0, 2), (1,)]), (CYCLE4, [(0, 2), (1, 3)])],
    ids=["path3", "cycle4"],
)
def test_gapu_draws_each_maximal_independent_set_half_the_time(graph, sets):
    n = 4000
    agent = GAPU(graph.shape[0], 1000, 0.5, graph, n_envs=n, seed=2)
    drawn = [tuple(s) for s in agent.independent_set]
    assert set(drawn) == set(sets)
    assert stats.binomtest(drawn.count(sets[0]), n, 0.5).pvalue > 1e-3


def test_gapu_batched_draws_match_single_agents_statistically():
    # Batched copy i takes Ω_1 from its own stream (seed 5 + i), singles seeded 2000.. from
    # theirs: both must give the path's two maximal independent sets with the same frequency.
    n = 1000
    batched = GAPU(3, 1000, 0.5, PATH3, n_envs=n, seed=5).independent_set
    singles = [GAPU(3, 1000, 0.5, PATH3, seed=s).independent_set[0] for s in range(2000, 2000 + n)]
    table = [
        [sum(s == [1] for s in batched), sum(s != [1] for s in batched)],
        [sum(s == [1] for s in singles), sum(s != [1] for s in singles)],
    ]
    assert stats.fisher_exact(table).pvalue > 1e-3


def test_gapu_sets_are_maximal_independent_in_the_active_subgraph_and_uniform():
    rng = np.random.default_rng(0)
    bitgen = generator_addresses([rng])[0]  # the kernel draws from rng's C interface
    out = np.zeros(8, dtype=np.int64)
    for trial in range(30):
        upper = np.triu(rng.random((8, 8)) < 0.4, k=1)
        graph = upper | upper.T
        nbhd = closed(graph)
        active = rng.random(8) < 0.7
        active[trial % 8] = True
        sub = nx.complement(nx.from_numpy_array(graph[np.ix_(active, active)].astype(int)))
        labels = np.flatnonzero(active)
        maximal = {tuple(sorted(labels[c].tolist())) for c in nx.find_cliques(sub)}
        counts = dict.fromkeys(maximal, 0)
        draws = 200 if trial else 6000
        for _ in range(draws):
            m = kernels.uniform_maximal_independent_set(active, nbhd, out, bitgen)
            omega = tuple(out[:m].tolist())
            assert omega in maximal  # independent, maximal, only active arms
            counts[omega] += 1
        if trial == 0:  # uniform over the maximal independent sets: chi-square test
            assert stats.chisquare(list(counts.values())).pvalue > 1e-3


def test_gapu_refuses_more_than_20_arms():
    with pytest.raises(ValueError, match="n_arms must be <= 20"):
        GAPU(21, 100, 0.5, np.zeros((21, 21), dtype=bool))


# DP-SE ----------------------------------------------------------------------------------


def test_dpse_epoch_repetitions():
    # R_1 = ⌈max(32 ln(8K/β)/Δ_1², 8 ln(4K/β)/(εΔ_1))⌉ with K=10, β=1e-5, ε=1, Δ_1 = 1/2:
    #   32 ln(8e6)/(1/4) = 128 × 15.89495 = 2034.55;  8 ln(4e6)/(1/2) = 16 × 15.20181 = 243.23.
    # ⌈2034.55⌉ = 2035 (T = 1e5, β = 1/T). The public re-implementations'
    # ⌊·⌋ + 1 differs from ⌈·⌉ only when the max is an exact integer, so both give 2035.
    r1 = 32 * math.log(8 * 10 / 1e-5) / 0.25
    assert r1 == pytest.approx(2034.55, abs=0.01)
    assert math.ceil(r1) == math.floor(r1) + 1 == 2035
    agent = DPSE(10, 100_000, 1.0, beta=1e-5, seed=0)
    np.testing.assert_array_equal(agent.epoch_repetitions, [2035])
    assert DPSE(10, 100_000, 1.0).epoch_repetitions[0] == 2035  # default β = 1/T
    # Equal rewards: nobody is eliminated (slack 2(h_1 + c_1) = 2(0.0625 + 0.0075) ≫ noise
    # 1/(εR_1) = 5e-4), so |S| = 10 in epoch 2 and 3, matching the table's 8848 and 37053:
    #   e=2: 32 ln(8·10·4/β)/(1/16) = 8848.00 (the max), e=3: 32 ln(8·10·9/β)/(1/64) = 37052.78.
    agent.simulate(constant_table([0.5] * 10, 10 * 2035), np.zeros((10, 10)), np.zeros(10))
    assert agent.active.all()
    np.testing.assert_array_equal(agent.epoch_repetitions, [8848])
    agent.simulate(constant_table([0.5] * 10, 10 * (2035 + 8848)), np.zeros((10, 10)), np.zeros(10))
    np.testing.assert_array_equal(agent.epoch_repetitions, [37053])


@pytest.mark.usefixtures("uncapped_epsilon")
def test_dpse_round_robin_and_release_threshold():
    # ε = 1e9: negligible noise. R_1 = ⌈0.01 × 32 ln(8·3/0.01)/(1/4)⌉ = ⌈0.01 × 996.25⌉ = 10.
    agent = DPSE(3, 1000, 1e9, beta=0.01, schedule_scale=0.01, width_scale=0.1, seed=0)
    assert agent.epoch_repetitions[0] == 10
    table = constant_table([0.9, 0.8, 0.7], 30 + 20)
    actions = agent.simulate(table[:30], np.zeros((3, 3)), np.zeros(3), record_actions=True).actions
    np.testing.assert_array_equal(actions, np.tile([0, 1, 2], 10))
    # Slack 2w(h + c): h = √(ln(8·3/0.01)/(2·10)) = √(7.78322/20) = 0.62383, c ≈ 7e-10,
    # 2 × 0.1 × 0.62383 = 0.12477: arm 2 (0.2 behind) goes, arm 1 (0.1 behind) stays.
    np.testing.assert_array_equal(agent.active, [[True, True, False]])
    # R_2 with |S| = 2, Δ_2 = 1/4: ⌈0.01 × 32 ln(8·2·4/0.01) × 16⌉ = ⌈0.01 × 4487.20⌉ = 45.
    assert agent.epoch_repetitions[0] == 45
    actions = agent.simulate(table, np.zeros((3, 3)), np.zeros(3), record_actions=True).actions
    np.testing.assert_array_equal(actions[30:], np.tile([0, 1], 10))


def test_dpse_release_noise_scale():
    # K=2 equal constant rewards; each arm's noisy mean is 0.5 + Lap(b), b = 1/(εR), one
    # independent draw per arm. One arm is eliminated iff |η_0 − η_1| > slack; for the
    # difference D of two Laplace(b), P(|D| > x) = (1 + x/(2b)) e^{-x/b} = 1.5/e = 0.5518 at
    # x = b. A common draw for all arms (a known pitfall of public DP-SE code) would never eliminate;
    # scale 2b would give 1.25 e^{-1/2} = 0.758.
    n, epsilon, beta, s = 4000, 1.0, 0.01, 0.01
    probe = DPSE(2, 1000, epsilon, beta=beta, schedule_scale=s)
    reps = int(probe.epoch_repetitions[0])  # ⌈0.01 × 32 ln(1600) × 4⌉ = ⌈9.44⌉ = 10
    b = 1.0 / (epsilon * reps)
    h = math.sqrt(math.log(8 * 2 / beta) / (2 * reps))
    slack = h + math.log(4 * 2 / beta) / (epsilon * reps)
    agent = DPSE(2, 1000, epsilon, beta=beta, schedule_scale=s, width_scale=b / (2 * slack), n_envs=n, seed=4)
    table = constant_table([0.5, 0.5], 2 * reps)
    for i in range(n):
        agent.simulate(table, np.zeros((2, 2)), np.zeros(2), copy=i)
    eliminated = int((~agent.active).any(axis=1).sum())
    assert stats.binomtest(eliminated, n, 1.5 / math.e).pvalue > 1e-3
    # Each copy consumed exactly K = 2 Laplace draws of its own generator (copy i: seed 4 + i).
    for i in (0, 1, n - 1):
        assert agent._copy_rngs[i].bit_generator.state == generator_after(4 + i, lambda r: r.laplace(size=2))


def test_dpse_learns_only_from_the_pulled_arm():
    agent = DPSE(3, 1000, 1.0, seed=0)
    agent.update(0, 0.25, {"observed_mask": np.ones(3, bool), "observed_rewards": [0.25, 1, 1]})
    np.testing.assert_array_equal(agent._state[DPSE_SUMS], [[0.25, 0.0, 0.0]])
    # A whole run with and without the env's side observations is the same run.
    env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.9, 0.5, 0.4], horizon=3000)
    env.reset(seed=3)
    with_info = DPSE(3, 3000, 1.0, schedule_scale=0.02, seed=1)
    without = DPSE(3, 3000, 1.0, schedule_scale=0.02, seed=1)
    for _ in range(3000):
        a = with_info.act()
        assert without.act() == a
        _, reward, _, _, info = env.step(a)
        with_info.update(a, reward, info)
        without.update(a, reward)
    assert with_info._state[DPSE_COUNTERS][0, DPSE_RELEASES] >= 2  # several releases happened
    np.testing.assert_array_equal(with_info.active, without.active)


# AAE ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("radius", "pass_"),
    [
        # Even-Dar: rad(n) = √(ln(c K n²/δ)/n), c=4, K=3, δ=0.1. Arm 1 (0 vs the best 1) goes
        # when 0 + rad < 1 − rad, i.e. 2 rad < 1:
        #   n=50: √(ln(300000)/50) = √(12.6115/50) = 0.50223 -> 2 rad = 1.0045 (kept)
        #   n=51: √(ln(312120)/51) = √(12.6511/51) = 0.49806 -> 2 rad = 0.9961 (eliminated)
        ("evendar", 51),
        # Hoeffding: rad(n) = √(ln(4 K n²/δ)/(2n)):
        #   n=21: √(10.8765/42) = 0.50889 (kept);  n=22: √(10.9696/44) = 0.49931 (eliminated)
        ("hoeffding", 22),
    ],
)
def test_aae_eliminates_after_the_predicted_pass(radius, pass_):
    agent = AAE(3, 10_000, delta=0.1, radius=radius)
    table = constant_table([1.0, 0.0, 0.5], 3 * pass_ + 4)
    actions = agent.simulate(table[: 3 * pass_ - 1], np.zeros((3, 3)), np.zeros(3), record_actions=True).actions
    np.testing.assert_array_equal(actions, np.tile([0, 1, 2], pass_)[:-1])  # index order
    # The last pass is one round short: no elimination on a truncated pass.
    assert agent.active.all()
    agent.simulate(table[: 3 * pass_], np.zeros((3, 3)), np.zeros(3))
    np.testing.assert_array_equal(agent.active, [[True, False, True]])
    # Arm 2 (0.5 behind) needs 2 rad < 0.5 and stays; the next pass is over {0, 2}.
    actions = agent.simulate(table, np.zeros((3, 3)), np.zeros(3), record_actions=True).actions
    np.testing.assert_array_equal(actions[3 * pass_ :], [0, 2, 0, 2])


def test_aae_side_observations_count_every_revealed_arm():
    for side, counts in [(False, [1, 1, 1]), (True, [2, 3, 2])]:
        agent = AAE(3, 100, side_observations=side)
        # One pass 0, 1, 2 on the path: with side observations N(0) = {0,1}, N(1) = {0,1,2},
        # N(2) = {1,2} give counts 2, 3, 2.
        actions = step_table(agent, constant_table([0.5, 0.5, 0.5], 3), PATH3)
        np.testing.assert_array_equal(actions, [0, 1, 2])
        np.testing.assert_array_equal(agent._state[AAE_COUNTS], [counts])


# AlphaSample ----------------------------------------------------------------------------


def test_alphasample_sweep_counts():
    # δ = 1/(2KT) = 1/8000, ε_1 = 1/2, coeff = 0.1:
    #   m_1 = ⌈0.1 × 2 ln 8000/(1/4)⌉ = ⌈0.8 × 8.98720⌉ = ⌈7.19⌉ = 8,
    #   m_2 = ⌈0.2 × 8.98720 × 16⌉ = ⌈28.76⌉ = 29,  m_3 = ⌈0.2 × 8.98720 × 64⌉ = ⌈115.04⌉ = 116.
    agent = AlphaSample(4, 1000, coeff=0.1, seed=0)
    assert agent.delta == 1 / 8000
    assert agent._state[ALPHA_COUNTERS][0, ALPHA_SWEEPS_PER_EPOCH] == 8
    assert AlphaSample(4, 1000, coeff=1e-9)._state[ALPHA_COUNTERS][0, ALPHA_SWEEPS_PER_EPOCH] == 1  # max(1, ⌈·⌉)
    # Complete graph: every pull reveals every arm, so every sweep is one pull and epochs end
    # after rounds 8, 8 + 29 = 37 and 37 + 116 = 153. Thresholds max − 2ε_r with max 0.9:
    # epoch 1: 0.9 − 1 (nobody), epoch 2: 0.4 (arm 3 at 0.2), epoch 3: 0.65 (arm 1 at 0.5).
    table = constant_table([0.9, 0.5, 0.85, 0.2], 160)
    expected = {
        7: [1, 1, 1, 1],
        8: [1, 1, 1, 1],
        36: [1, 1, 1, 1],
        37: [1, 1, 1, 0],
        152: [1, 1, 1, 0],
        153: [1, 0, 1, 0],
        160: [1, 0, 1, 0],
    }
    epochs = {8: 1, 36: 1, 37: 2, 152: 2, 153: 3}
    for t in range(1, 161):
        agent.simulate(table[:t], COMPLETE4, np.zeros(4))
        np.testing.assert_array_equal(agent._state[ALPHA_UNSEEN], agent._state[ACTIVE])  # sweep closed
        if t in expected:
            np.testing.assert_array_equal(agent.active[0], np.array(expected[t], dtype=bool))
        if t in epochs:
            assert agent._state[ALPHA_COUNTERS][0, ALPHA_EPOCH] == epochs[t]
    assert agent._state[ALPHA_COUNTERS][0, ALPHA_SWEEPS_PER_EPOCH] == math.ceil(0.1 * 2 * math.log(8000) / 0.0625**2)


def test_alphasample_every_sweep_observes_every_active_arm():
    rng = np.random.default_rng(1)
    upper = np.triu(rng.random((12, 12)) < 0.3, k=1)
    graph = upper | upper.T
    nbhd = closed(graph)
    complement = nx.complement(nx.from_numpy_array(graph.astype(int)))
    alpha = max(len(c) for c in nx.find_cliques(complement))  # independence number
    env = gym.make("GraphBandit-v0", graph=graph, gap=0.1, horizon=3000)
    env.reset(seed=0)
    agent = AlphaSample(12, 3000, coeff=0.002, seed=3)
    sweep, seen, pulls, sweeps = agent.active[0], np.zeros(12, bool), [], 0
    for _ in range(3000):
        a = agent.act()
        # AlphaSample picks an active arm not yet observed in this sweep ...
        assert sweep[a] and not seen[a]
        _, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)
        seen |= nbhd[a]
        pulls.append(a)
        if (seen | ~sweep).all():  # ... until every active arm was observed
            # On a fixed undirected graph the pulls are independent, so at most α of them.
            assert len(pulls) <= alpha and not graph[np.ix_(pulls, pulls)].any()
            sweep, seen, pulls, sweeps = agent.active[0], np.zeros(12, bool), [], sweeps + 1
            np.testing.assert_array_equal(agent._state[ALPHA_UNSEEN][0], sweep)  # the agent agrees
    assert sweeps > 1000 and agent._state[ALPHA_COUNTERS][0, ALPHA_EPOCH] >= 3 and not agent.active.all()


def test_alphasample_first_pick_is_uniform():
    agent = AlphaSample(5, 100, n_envs=5000, seed=0)
    counts = np.bincount(agent.act(), minlength=5)
    assert stats.chisquare(counts).pvalue > 1e-3
    # Copy i draws as a single agent seeded seed + i (docs/design.md, "Agents", Seeds).
    firsts = [AlphaSample(5, 100, seed=i).act() for i in range(8)]
    assert AlphaSample(5, 100, n_envs=8, seed=0).act().tolist() == firsts and len(set(firsts)) > 1


# Step path = compiled simulator ---------------------------------------------------------

HORIZON = 20_000
ENV_KW: dict[str, Any] = {"n_arms": 6, "edge_probability": 0.3, "gap": 0.2, "instance_seed": 1}

AGENTS: dict[str, Callable[[np.ndarray], EliminationAgent]] = {
    # δ = 0.5 and ε = 0.2 so that several GAP epochs complete and the noise decides ties
    # between the two optimal arms 0 and 1.
    "GAP": lambda g: GAP(6, HORIZON, 0.2, g, delta=0.5, seed=5),
    "GAPU": lambda g: GAPU(6, HORIZON, 0.2, g, delta=0.5, seed=5),
    "DPSE": lambda g: DPSE(6, HORIZON, 0.2, schedule_scale=0.05, seed=5),
    "AAE": lambda g: AAE(6, HORIZON, seed=5),
    "AAE-side": lambda g: AAE(6, HORIZON, side_observations=True, seed=5),
    "AlphaSample": lambda g: AlphaSample(6, HORIZON, coeff=0.01, seed=5),
}


def releases(agent: EliminationAgent) -> int:
    """Completed epochs (DP releases, or AlphaSample epochs) of copy 0."""
    if isinstance(agent, GAP):
        return int(agent._state[GAP_COUNTERS][0, GAP_RELEASES])
    if isinstance(agent, DPSE):
        return int(agent._state[DPSE_COUNTERS][0, DPSE_RELEASES])
    if isinstance(agent, AlphaSample):
        return int(agent._state[ALPHA_COUNTERS][0, ALPHA_EPOCH])
    return 0


@pytest.mark.parametrize("name", list(AGENTS))
def test_step_path_equals_simulate(name):
    env = gym.make("GraphBandit-v0", horizon=HORIZON, **ENV_KW)
    unwrapped = env.unwrapped
    env.reset(seed=11)
    # The env draws its rewards from np_random in blocks; one draw of the whole table from a
    # copy of the generator gives the same rows.
    table = unwrapped.reward_model.sample(copy.deepcopy(unwrapped.np_random), HORIZON)
    stepped = AGENTS[name](unwrapped.adjacency)
    actions, regret = play(env, stepped, HORIZON)
    compiled = AGENTS[name](unwrapped.adjacency)
    result = compiled.simulate(table, unwrapped.adjacency, unwrapped.gaps, record_actions=True)
    np.testing.assert_array_equal(actions, result.actions)
    assert regret == result.total_regret
    np.testing.assert_array_equal(stepped.active, compiled.active)
    assert not stepped.active.all()  # some arm was eliminated
    assert releases(stepped) == releases(compiled)
    if not isinstance(stepped, AAE):
        assert releases(stepped) >= 2
    # The same with the table replayed through reset(options={"reward_table": ...}).
    env.reset(seed=999, options={"reward_table": table})
    replayed = AGENTS[name](unwrapped.adjacency)
    np.testing.assert_array_equal(play(env, replayed, HORIZON)[0], result.actions)


@pytest.mark.parametrize("name", list(AGENTS))
def test_uniforms_with_law_equal_explicit_rewards(name):
    env = gym.make("GraphBandit-v0", horizon=HORIZON, **ENV_KW)
    unwrapped = env.unwrapped
    u = np.random.default_rng(7).random((HORIZON, 6))
    law = unwrapped.reward_model
    lazy = AGENTS[name](unwrapped.adjacency).simulate(
        u, unwrapped.adjacency, unwrapped.gaps, law=law, record_actions=True
    )
    explicit = AGENTS[name](unwrapped.adjacency).simulate(
        law.from_uniforms(u), unwrapped.adjacency, unwrapped.gaps, record_actions=True
    )
    np.testing.assert_array_equal(lazy.actions, explicit.actions)
    assert lazy.total_regret == explicit.total_regret


@pytest.mark.parametrize("bad_round", [0, 255, 256, 1_000, 2_999])
def test_truncnorm_uniforms_name_the_bad_entry_where_it_is_read(bad_round):
    # Uniforms of truncated-normal arms are read in batches of rounds; the error still names the
    # first entry read that is outside [0, 1], wherever it falls in a batch.
    env = GraphBanditEnv(n_arms=5, edge_probability=0.5, gap=0.1, horizon=3_000, instance_seed=1)
    u = np.random.default_rng(3).random((3_000, 5))
    u[bad_round] = 1.5
    agent = GAP(5, 3_000, 1.0, env.adjacency, seed=4)
    with pytest.raises(ValueError, match=rf"at round {bad_round}, arm \d\.$"):
        agent.simulate(u, env.adjacency, env.gaps, law=env.reward_model)
    assert agent.simulate(u[:bad_round], env.adjacency, env.gaps, law=env.reward_model).total_regret >= 0.0


@pytest.mark.parametrize("changed", [(0, 0), (255, 3), (256, 1), (1_234, 4)])
def test_override_on_uniforms_equals_the_changed_reward_table(changed):
    env = GraphBanditEnv(n_arms=5, edge_probability=0.5, gap=0.1, horizon=3_000, instance_seed=2)
    u = np.random.default_rng(5).random((3_000, 5))
    rewards = env.reward_model.from_uniforms(u)
    rewards[changed] = 0.0
    kwargs: dict[str, Any] = {"record_actions": True}
    lazy = GAP(5, 3_000, 0.5, env.adjacency, seed=6).simulate(
        u, env.adjacency, env.gaps, law=env.reward_model, override=(*changed, 0.0), **kwargs
    )
    explicit = GAP(5, 3_000, 0.5, env.adjacency, seed=6).simulate(rewards, env.adjacency, env.gaps, **kwargs)
    np.testing.assert_array_equal(lazy.actions, explicit.actions)
    assert lazy.total_regret == explicit.total_regret


@pytest.mark.parametrize("changed", [(0, 0), (99, 3), (1_234, 4), (2_999, 1)])
def test_override_on_rewards_equals_the_changed_table(changed):
    # On a table of rewards the overridden round is read apart from the rounds around it; a
    # checkpoint right after it (and rounds 0 and T - 1) must see the same regret and state.
    env = GraphBanditEnv(n_arms=5, edge_probability=0.5, gap=0.1, horizon=3_000, instance_seed=2)
    rewards = env.reward_model.from_uniforms(np.random.default_rng(5).random((3_000, 5)))
    edited = rewards.copy()
    edited[changed] = 0.0
    checkpoints = np.unique([1, changed[0], changed[0] + 1, 1_500, 3_000])
    checkpoints = checkpoints[(checkpoints >= 1) & (checkpoints <= 3_000)]
    agents = [GAP(5, 3_000, 0.5, env.adjacency, seed=6) for _ in range(2)]
    kwargs: dict[str, Any] = {"record_actions": True, "checkpoints": checkpoints}
    overridden = agents[0].simulate(rewards, env.adjacency, env.gaps, override=(*changed, 0.0), **kwargs)
    explicit = agents[1].simulate(edited, env.adjacency, env.gaps, **kwargs)
    np.testing.assert_array_equal(overridden.actions, explicit.actions)
    np.testing.assert_array_equal(overridden.checkpoint_regret, explicit.checkpoint_regret)
    for x, y in zip(agents[0]._state, agents[1]._state, strict=True):
        np.testing.assert_array_equal(x, y)


def test_override_round_on_rewards_names_another_bad_entry_of_its_row():
    # The overridden entry may be out of range (it is replaced); another entry of its round is not.
    env = GraphBanditEnv(n_arms=3, edge_probability=1.0, gap=0.1, horizon=500, instance_seed=2)
    rewards = env.reward_model.from_uniforms(np.random.default_rng(5).random((500, 3)))
    rewards[200] = [7.0, 0.5, -1.0]  # every arm reveals every arm: round 200 reads all three
    agent = GAP(3, 500, 0.5, env.adjacency, seed=6)
    with pytest.raises(ValueError, match=r"at round 200, arm 2\.$"):
        agent.simulate(rewards, env.adjacency, env.gaps, override=(200, 0, 0.0))
    assert int(agent._state[GAP_COUNTERS][0, GAP_ROUND]) == 0  # restored


def test_simulate_continues_from_the_step_path_state():
    graph = PATH5
    table = np.random.default_rng(0).random((6000, 5))
    gaps = np.array([0.3, 0.2, 0.0, 0.1, 0.4])
    whole = GAP(5, 6000, 0.5, graph, delta=0.5, seed=2)
    full = whole.simulate(table, graph, gaps, record_actions=True, checkpoints=np.array([2500]))
    split = GAP(5, 6000, 0.5, graph, delta=0.5, seed=2)
    first = step_table(split, table[:2500], graph)
    rest = split.simulate(table, graph, gaps, record_actions=True)
    np.testing.assert_array_equal(first, full.actions[:2500])
    np.testing.assert_array_equal(rest.actions[2500:], full.actions[2500:])
    assert rest.total_regret == pytest.approx(full.total_regret - full.checkpoint_regret[0])


def test_reset_continues_the_noise_and_a_seed_replays_the_run():
    table = np.random.default_rng(0).random((5000, 5))
    agent = GAPU(5, 5000, 0.5, PATH5, delta=0.5, seed=4)
    first = agent.simulate(table, PATH5, np.zeros(5), record_actions=True).actions
    agent.reset()  # fresh noise: the same table gives another run
    assert (agent.simulate(table, PATH5, np.zeros(5), record_actions=True).actions != first).any()
    agent.reset(seed=4)
    again = agent.simulate(table, PATH5, np.zeros(5), record_actions=True).actions
    np.testing.assert_array_equal(again, first)
    agent.reset(seed=5)
    assert agent.seed == 5 and agent.privacy_spent == (0.0, 0.0) and agent.active.all()


# Batched step path ----------------------------------------------------------------------


def run_vector(agent: EliminationAgent, n: int, horizon: int, seed: int, **env_kw: Any) -> np.ndarray:
    env = GraphBanditVectorEnv(num_envs=n, horizon=horizon, **env_kw)
    env.reset(seed=seed)
    actions = np.empty((horizon, n), dtype=np.int64)
    for t in range(horizon):
        a = agent.act()
        assert a.shape == (n,)
        _, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)
        actions[t] = a
    return actions


def run_singles(
    make: Callable[[], EliminationAgent], n: int, horizon: int, seed: int, **env_kw: Any
) -> tuple[np.ndarray, list[EliminationAgent]]:
    actions = np.empty((horizon, n), dtype=np.int64)
    agents = []
    for i in range(n):
        env = GraphBanditEnv(horizon=horizon, **env_kw)
        env.reset(seed=seed + i)  # vector copy i is seeded seed + i
        agent = make()
        actions[:, i] = play(env, agent, horizon)[0]
        agents.append(agent)
    return actions, agents


@pytest.mark.parametrize("side", [False, True])
def test_batched_aae_equals_single_agents(side):
    # AAE uses no randomness, so N copies in lock-step on the vector env must match N single
    # agents on the single envs with the copies' seeds, action for action.
    n, horizon = 4, 3000
    kw: dict[str, Any] = {"radius": "hoeffding", "side_observations": side}
    batched = AAE(6, horizon, **kw, n_envs=n)
    got = run_vector(batched, n, horizon, 20, **ENV_KW)
    want, singles = run_singles(lambda: AAE(6, horizon, **kw), n, horizon, 20, **ENV_KW)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(batched.active, np.vstack([s.active for s in singles]))
    assert not batched.active.all()


def test_batched_gap_copy_i_draws_the_noise_of_a_single_agent_seeded_seed_plus_i():
    # Copy i of a batch seeded 8 draws from noise_generator(8 + i), the single agent seeded
    # 8 + i's (docs/design.md, "Agents", Seeds). Epoch 1 is the same for every copy (μ̄_0 = 0
    # gives Ω_1 = {0, 2}, L_1 = 997), so all copies release in the same round; vector copy i sees
    # the rewards of single env seed 30 + i. Compared: the actions, the released means and the
    # copies' generators after the release.
    n, horizon, epsilon = 3, 2 * 997, 0.5
    kw: dict[str, Any] = {"graph": PATH3, "means": [0.6, 0.5, 0.4]}
    batched = GAP(3, horizon, epsilon, PATH3, delta=0.01, n_envs=n, seed=8, sampler="float")
    got = run_vector(batched, n, horizon, 30, **kw)
    want = np.empty((horizon, n), dtype=np.int64)
    singles = []
    for i in range(n):
        env = GraphBanditEnv(horizon=horizon, **kw)
        env.reset(seed=30 + i)
        singles.append(GAP(3, horizon, epsilon, PATH3, delta=0.01, seed=8 + i, sampler="float"))
        want[:, i] = play(env, singles[-1], horizon)[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(batched._state[GAP_MEAN], np.vstack([s._state[GAP_MEAN][0] for s in singles]))
    for i in range(n):  # copy i drew its three values, and only them, from noise_generator(8 + i)
        assert batched.independent_set[i] == singles[i].independent_set[0]
        assert batched._copy_rngs[i].bit_generator.state == generator_after(8 + i, lambda r: r.laplace(size=3))
    assert batched.privacy_spent == (epsilon, laplace_tail_delta(epsilon))


def test_batched_dpse_copy_i_draws_as_a_single_agent_seeded_seed_plus_i():
    # DPSE is deterministic within an epoch; the first release draws |S| = 3 values per copy
    # from the copy's own generator, noise_generator(9 + i) for copy i.
    n, horizon = 3, 3 * 20
    kw: dict[str, Any] = {"graph": PATH3, "means": [0.6, 0.5, 0.4]}
    batched = DPSE(3, horizon, 1.0, beta=0.01, schedule_scale=0.02, n_envs=n, seed=9)
    assert batched.epoch_repetitions[0] == 20  # ⌈0.02 × 996.25⌉
    got = run_vector(batched, n, horizon, 40, **kw)
    want, _ = run_singles(lambda: DPSE(3, horizon, 1.0, beta=0.01, schedule_scale=0.02, seed=9), n, horizon, 40, **kw)
    np.testing.assert_array_equal(got[:, 0], want[:, 0])  # copy 0: the single agent seeded 9
    for i in range(n):
        assert batched._copy_rngs[i].bit_generator.state == generator_after(9 + i, lambda r: r.laplace(size=3))


def test_batched_simulate_of_copy_i_equals_the_single_agent_seeded_seed_plus_i():
    # simulate(copy=i) plays copy i with its own generator, as a single agent seeded seed + i.
    table = np.random.default_rng(3).random((6_000, 3))
    for make in (
        lambda n, s: GAPU(3, 6_000, 0.5, PATH3, delta=0.01, n_envs=n, seed=s),
        lambda n, s: DPSE(3, 6_000, 0.5, schedule_scale=0.05, n_envs=n, seed=s),
        lambda n, s: AlphaSample(3, 6_000, n_envs=n, seed=s),
    ):
        batched = make(3, 4)
        for i in (2, 0, 1):  # in any order: the copies' streams are independent
            got = batched.simulate(table, PATH3, np.zeros(3), record_actions=True, copy=i)
            want = make(None, 4 + i).simulate(table, PATH3, np.zeros(3), record_actions=True)
            np.testing.assert_array_equal(got.actions, want.actions)
            assert got.total_regret == want.total_regret


# Privacy bookkeeping --------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: GAP(3, 20_000, 0.5, PATH3, delta=0.01, seed=0),
        lambda: GAPU(3, 20_000, 0.5, PATH3, delta=0.01, seed=0),
        lambda: DPSE(3, 20_000, 0.5, beta=0.01, schedule_scale=0.2, seed=0),
    ],
    ids=["GAP", "GAPU", "DPSE"],
)
def test_privacy_spent_is_epsilon_after_the_first_release(make):
    agent = make()
    assert agent.privacy_spent == (0.0, 0.0)
    assert "r_{t,k}" in agent.privacy_unit
    table = np.random.default_rng(0).random((20_000, 3))
    t = 0
    while agent.privacy_spent == (0.0, 0.0):
        t += 1
        agent.simulate(table[:t], PATH3, np.zeros(3))
    # Parallel composition: each reward enters one release, so later releases cost nothing.
    assert agent.privacy_spent == (0.5, laplace_tail_delta(0.5))  # δ: the Laplace draws' tail
    agent.simulate(table, PATH3, np.zeros(3))
    assert releases(agent) >= 2 and agent.privacy_spent == (0.5, laplace_tail_delta(0.5))


def test_privacy_unit_names_the_reward_table_entry():
    assert GAP.privacy_unit and "r_{t,k}" in GAP.privacy_unit
    assert GAPU.privacy_unit == GAP.privacy_unit
    assert "r_{t,k}" in DPSE.privacy_unit


# Invalid arguments ----------------------------------------------------------------------

G = PATH3
INVALID: list[tuple[str, Callable[[], Any]]] = [
    ("epsilon", lambda: GAP(3, 100, 0.0, G)),
    ("epsilon", lambda: GAP(3, 100, -1.0, G)),
    ("epsilon", lambda: GAP(3, 100, math.nan, G)),
    ("epsilon", lambda: GAPU(3, 100, 0.0, G)),
    ("epsilon", lambda: DPSE(3, 100, 0.0)),
    ("epsilon", lambda: DPSE(3, 100, -1.0)),
    ("epsilon", lambda: DPSE(3, 100, math.nan)),
    ("delta", lambda: GAP(3, 100, 0.5, G, delta=0.0)),
    ("delta", lambda: GAP(3, 100, 0.5, G, delta=1.0)),
    ("delta", lambda: AAE(3, 100, delta=0.0)),
    ("delta", lambda: AAE(3, 100, delta=1.0)),
    ("delta", lambda: AlphaSample(3, 100, delta=0.0)),
    ("delta", lambda: AlphaSample(3, 100, delta=1.0)),
    ("beta", lambda: DPSE(3, 100, 1.0, beta=0.0)),
    ("beta", lambda: DPSE(3, 100, 1.0, beta=1.0)),
    ("horizon", lambda: GAP(3, 0, 0.5, G)),
    ("horizon", lambda: DPSE(3, 0, 0.5)),
    ("horizon", lambda: AAE(3, 0)),
    ("horizon", lambda: AlphaSample(3, 0)),
    ("n_arms", lambda: GAP(1, 100, 0.5, np.zeros((1, 1), bool))),
    ("n_arms", lambda: GAPU(1, 100, 0.5, np.zeros((1, 1), bool))),
    ("n_arms", lambda: DPSE(1, 100, 0.5)),
    ("n_arms", lambda: AAE(1, 100)),
    ("n_arms", lambda: AlphaSample(1, 100)),
    ("feedback_graph", lambda: GAP(3, 100, 0.5, None)),
    ("feedback_graph", lambda: GAPU(3, 100, 0.5, None)),
    ("feedback_graph must have n_arms=3 nodes", lambda: GAP(3, 100, 0.5, CYCLE4)),
    ("feedback_graph must have no self loops", lambda: GAP(3, 100, 0.5, np.eye(3, dtype=bool))),
    ("feedback_graph must be undirected", lambda: GAP(3, 100, 0.5, np.triu(~np.eye(3, dtype=bool)))),
    ("feedback_graph must be a boolean or 0/1", lambda: GAPU(3, 100, 0.5, 2 * (1 - np.eye(3)))),
    ("radius", lambda: AAE(3, 100, radius="foo")),
    ("round_robin", lambda: GAP(3, 100, 0.5, G, round_robin="foo")),
    ("c", lambda: AAE(3, 100, c=0.0)),
    ("schedule_scale", lambda: DPSE(3, 100, 1.0, schedule_scale=0.0)),
    ("width_scale", lambda: DPSE(3, 100, 1.0, width_scale=0.0)),
    ("coeff", lambda: AlphaSample(3, 100, coeff=0.0)),
    ("epsilon1", lambda: AlphaSample(3, 100, epsilon1=0.0)),
    ("seed", lambda: GAP(3, 100, 0.5, G, seed=-1)),
    ("seed", lambda: DPSE(3, 100, 0.5, seed=-1)),
    ("seed", lambda: AAE(3, 100, seed=-1)),
    ("seed", lambda: AlphaSample(3, 100, seed=-1)),
    ("seed", lambda: AAE(3, 100).reset(seed=-1)),
    ("n_envs", lambda: AAE(3, 100, n_envs=0)),
]


@pytest.mark.parametrize(("name", "make"), INVALID, ids=[f"{i}-{n}" for i, (n, _) in enumerate(INVALID)])
def test_invalid_argument_raises_naming_it(name, make):
    with pytest.raises(ValueError, match=f"^{re.escape(name)}"):
        make()


def test_feedback_graph_errors_name_the_argument_and_its_first_offending_entry() -> None:
    with pytest.raises(ValueError) as error:
        GAP(3, 100, 0.5, np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]]))
    assert str(error.value) == (
        "feedback_graph must be a boolean or 0/1 adjacency matrix, got feedback_graph[1, 2] = 2."
    )
    with pytest.raises(ValueError, match=r"^feedback_graph must be undirected .* got feedback_graph\[0, 1\] = True "):
        DPSE(3, 100, 0.5).simulate(np.zeros((10, 3)), np.triu(~np.eye(3, dtype=bool)), np.zeros(3))


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("horizon", lambda: AAE(3, 10.5)),
        ("n_arms", lambda: DPSE(3.0, 100, 1.0)),
        ("side_observations", lambda: AAE(3, 100, side_observations="yes")),
        ("epsilon", lambda: GAP(3, 100, "0.5", G)),
    ],
)
def test_wrong_type_raises_naming_it(name, make):
    with pytest.raises(TypeError, match=name):
        make()


def full_info(row: list[float]) -> dict[str, Any]:
    return {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.asarray(row)}


@pytest.mark.parametrize(
    "make",
    [lambda: GAP(3, 100, 0.5, G), lambda: DPSE(3, 100, 0.5), lambda: AAE(3, 100), lambda: AlphaSample(3, 100)],
    ids=["GAP", "DPSE", "AAE", "AlphaSample"],
)
@pytest.mark.parametrize(
    ("action", "reward", "match"),
    [
        (0, 1.5, r"reward must be a finite number in \[0, 1\]"),
        (0, -0.1, r"reward must be a finite number in \[0, 1\]"),
        (0, math.nan, r"reward must be a finite number in \[0, 1\]"),
        (3, 0.5, r"action must be an arm index in \[0, 2\]"),
        (-1, 0.5, r"action must be an arm index in \[0, 2\]"),
    ],
)
def test_bad_update_raises(make, action, reward, match):
    agent = make()
    info = full_info([reward if k == action else 0.5 for k in range(3)])
    with pytest.raises(ValueError, match=match):
        agent.update(action, reward, info)


def test_side_observed_reward_outside_unit_interval_raises():
    match = r"info\['observed_rewards'\] must be finite numbers in \[0, 1\] where"
    with pytest.raises(ValueError, match=match):
        GAP(3, 100, 0.5, G).update(1, 0.5, full_info([0.5, 0.5, 2.0]))
    with pytest.raises(ValueError, match=match):
        AlphaSample(3, 100).update(1, 0.5, full_info([0.5, 0.5, math.nan]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: GAP(3, 100, 0.5, G),
        lambda: GAPU(3, 100, 0.5, G),
        lambda: AlphaSample(3, 100),
        lambda: AAE(3, 100, side_observations=True),
    ],
    ids=["GAP", "GAPU", "AlphaSample", "AAE-side"],
)
def test_update_without_side_observations_raises(make):
    with pytest.raises(ValueError, match="info must contain 'observed_mask'"):
        make().update(0, 0.5)
    with pytest.raises(ValueError, match="info must contain 'observed_rewards'"):
        make().update(0, 0.5, {"observed_mask": np.ones(3, dtype=bool)})


# Revealed neighbourhoods must be the declared graph's (GAP's privacy needs L_τ observations) --------


class DropNeighbour(gym.Wrapper):
    """A GraphBandit env whose info stops revealing ``arm`` as a neighbour after its first reveal."""

    def __init__(self, env: gym.Env, arm: int) -> None:
        super().__init__(env)
        self.arm, self.revealed = arm, 0

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if info["observed_mask"][self.arm] and action != self.arm:
            self.revealed += 1
            if self.revealed > 1:
                info = {**info, "observed_mask": info["observed_mask"].copy()}
                info["observed_mask"][self.arm] = False
        return obs, reward, terminated, truncated, info


def play_until_error(agent: EliminationAgent, env: Any, rounds: int) -> None:
    env.reset(seed=0)
    for _ in range(rounds):
        a = agent.act()
        _, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)


@pytest.mark.parametrize("cls", [GAP, GAPU])
def test_gap_refuses_a_neighbour_revealed_fewer_times_than_the_graph_declares(cls):
    # Declared: the complete graph, so Ω_1 is one arm and every pull must reveal all three. The
    # env reveals arm 1 once only: arm 1's mean would average one reward with noise sized for L_1.
    complete = ~np.eye(3, dtype=bool)
    env = DropNeighbour(gym.make("GraphBandit-v0", graph=complete, means=[0.5, 0.5, 0.5], horizon=50), arm=1)
    agent = cls(3, 10_000, 1.0, complete, delta=0.01, seed=0)
    if agent.independent_set[0] == [1]:  # GAPU drew Ω_1 = {1}: arm 1 is pulled, not a side observation
        agent = cls(3, 10_000, 1.0, complete, delta=0.01, seed=2)
    assert agent.independent_set[0] != [1]
    pulled = agent.independent_set[0][0]
    message = (
        rf"^info\['observed_mask'\] must reveal every arm of the pulled arm's closed neighbourhood in {agent.name}'s "
        rf"feedback_graph \(.*\), got arm 1 not revealed in round 1: pulling arm {pulled}, the graph declares "
        r"\[0, 1, 2\], the env revealed \[0, 2\]\.$"
    )
    with pytest.raises(ValueError, match=message):
        play_until_error(agent, env, 50)
    # The refused round taught nothing: one round played, one observation of each arm.
    assert agent._state[GAP_COUNTERS][0, GAP_ROUND] == 1
    np.testing.assert_array_equal(agent._state[GAP_OBSERVATIONS][0], [1, 1, 1])


def test_gap_refuses_an_env_with_another_graph():
    # An env built on the path 0 - 1 - 2 for an agent that declares the complete graph, and back.
    path_env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.5, 0.75, 0.25], horizon=50)
    complete = ~np.eye(3, dtype=bool)
    with pytest.raises(ValueError, match=r"got arm 2 not revealed in round 0: pulling arm 0, the graph declares"):
        play_until_error(GAP(3, 10_000, 1.0, complete, delta=0.01, seed=0), path_env, 50)
    # More arms than declared only adds observations: taken.
    complete_env = gym.make("GraphBandit-v0", graph=complete, means=[0.5, 0.75, 0.25], horizon=50)
    play_until_error(GAP(3, 10_000, 1.0, PATH3, delta=0.01, seed=0), complete_env, 50)
    # An env with another random instance than the agent's graph.
    env = gym.make("GraphBandit-v0", n_arms=8, edge_probability=0.3, instance_seed=1, horizon=200)
    other = gym.make("GraphBandit-v0", n_arms=8, edge_probability=0.3, instance_seed=2, horizon=200)
    assert not np.array_equal(env.unwrapped.adjacency, other.unwrapped.adjacency)
    with pytest.raises(ValueError, match=r"^info\['observed_mask'\] must reveal every arm of the pulled arm's"):
        play_until_error(GAP(8, 10_000, 1.0, other.unwrapped.adjacency, seed=0), env, 200)
    play_until_error(GAP(8, 10_000, 1.0, env.unwrapped.adjacency, seed=0), env, 200)  # its own graph: fine


def test_batched_gap_refuses_a_copy_whose_env_has_another_graph():
    complete = ~np.eye(3, dtype=bool)
    env = GraphBanditVectorEnv(num_envs=4, graph=PATH3, means=[0.5, 0.75, 0.25], horizon=50)
    agent = GAP(3, 10_000, 1.0, complete, delta=0.01, n_envs=4, seed=0)
    with pytest.raises(ValueError, match=r"got arm 2 not revealed in round 0 of copy 0: pulling arm 0"):
        play_until_error(agent, env, 50)
    assert (agent._state[GAP_COUNTERS][:, GAP_ROUND] == 0).all()


def test_gap_next_epoch_cannot_follow_a_neighbour_revealed_once():
    # Declared complete graph, Ω_1 = {0}: every pull of arm 0 should reveal arm 1. Arm 1 is
    # revealed at round 0 only, with r_{0,1} = 0 or 1 (neighbouring tables). Taken, arm 1's
    # release would average that one reward with noise sized for L_1 ≈ 1,000 and the next
    # epoch's choice would be arm 1 exactly when r_{0,1} = 1 (every copy, before the check).
    complete, n = ~np.eye(3, dtype=bool), 200
    outcomes = []
    for r01 in (0.0, 1.0):
        agent = GAP(3, 10**6, 1.0, complete, delta=0.01, n_envs=n, seed=0)
        try:
            for t in range(int(agent._state[GAP_COUNTERS][0, kernels.GAP_EPOCH_END])):
                a = agent.act()
                mask, rewards = np.ones((n, 3), dtype=bool), np.full((n, 3), 0.5)
                rewards[:, 1] = r01 if t == 0 else 0.5
                mask[a != 1, 1] = t == 0  # arm 1 as a side observation: round 0 only
                agent.update(a, rewards[np.arange(n), a], {"observed_mask": mask, "observed_rewards": rewards})
            outcomes.append(agent.act() == 1)
        except ValueError as refused:
            assert "got arm 1 not revealed in round 1 of copy 0" in str(refused)
            outcomes.append(None)
    if outcomes[0] is not None and outcomes[1] is not None:
        follows = int(np.sum(outcomes[1] & ~outcomes[0]))
        pytest.fail(f"taken: the next epoch chose arm 1 iff r_01 = 1 in {follows} of {n} copies")
    assert outcomes == [None, None]  # refused on both tables: nothing released from one reward


@pytest.mark.parametrize("n_envs", [None, 2])
def test_gap_releases_nothing_when_fed_other_arms_than_it_chose(n_envs):
    # Ω_1 = {0, 2} on the path 0 - 1 - 2 (L_1 = 997). A caller that pulls arm 2 once and arm 0
    # otherwise leaves arm 2 with one observation: its release would average one reward with
    # noise sized for 997. The last round of the epoch is refused; nothing is released.
    env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.5, 0.75, 0.25], horizon=2 * 997)
    env.reset(seed=0)
    agent = GAP(3, 10_000, 0.5, PATH3, delta=0.01, n_envs=n_envs, seed=0)
    assert agent.independent_set[0] == [0, 2] and agent.epoch_length[0] == 997
    lead = () if n_envs is None else (n_envs,)
    for t in range(2 * 997 - 1):
        arm = 2 if t == 0 else 0
        _, reward, _, _, info = env.step(arm)
        if n_envs is not None:
            info = {key: np.stack([info[key]] * n_envs) for key in ("observed_mask", "observed_rewards")}
        agent.update(np.full(lead, arm) if lead else arm, np.full(lead, reward) if lead else reward, info)
    _, reward, _, _, info = env.step(0)
    if n_envs is not None:
        info = {key: np.stack([info[key]] * n_envs) for key in ("observed_mask", "observed_rewards")}
    where = "" if n_envs is None else " of copy 0"
    message = (
        rf"^action must be the arm GAP chose \(act\), .*, got an epoch ending in round 1993{where} with arm 2 "
        r"observed 1 times, fewer than L_τ = 997; nothing is released\.$"
    )
    with pytest.raises(ValueError, match=message):
        agent.update(np.zeros(lead, dtype=int) if lead else 0, np.full(lead, reward) if lead else reward, info)
    assert agent.privacy_spent == (0.0, 0.0) and agent._state[GAP_COUNTERS][0, GAP_ROUND] == 2 * 997 - 1


def test_a_graph_checked_by_one_agent_is_checked_again_when_it_differs():
    # The last graph checked is kept for the next agent given an equal one; any other graph, the
    # same array changed in place, or the same graph for another number of arms, is checked anew.
    graph = CYCLE4.copy()
    first = GAP(4, 10_000, 1.0, graph, seed=0)
    second = GAP(4, 10_000, 1.0, graph.copy(), seed=0)
    np.testing.assert_array_equal(second.neighbourhoods, closed(CYCLE4))
    second.neighbourhoods[0, 2] = True  # each agent has its own array
    np.testing.assert_array_equal(first.neighbourhoods, closed(CYCLE4))
    np.testing.assert_array_equal(GAP(4, 10_000, 1.0, CYCLE4, seed=0).neighbourhoods, closed(CYCLE4))
    graph[0, 1] = False  # now not symmetric
    with pytest.raises(ValueError, match="symmetric"):
        GAP(4, 10_000, 1.0, graph, seed=0)
    with pytest.raises(ValueError, match="n_arms=5 nodes, got 4"):
        GAP(5, 10_000, 1.0, CYCLE4, seed=0)
    table = constant_table([0.5, 0.6, 0.7, 0.8], 50)
    AAE(4, 50, side_observations=True).simulate(table, CYCLE4, np.zeros(4))
    with pytest.raises(ValueError, match="symmetric"):
        AAE(4, 50, side_observations=True).simulate(table, graph, np.zeros(4))


# Inputs a continuing or unusual simulate call must refuse ---------------------------------------

LONG_DOUBLE_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def _graph_env(seed: int = 1) -> GraphBanditEnv:
    return GraphBanditEnv(n_arms=5, edge_probability=0.5, gap=0.1, horizon=3_000, instance_seed=seed)


def test_simulate_refuses_a_masked_graph_even_after_an_equal_graph_was_checked() -> None:
    """The checked-graph caches compare plain arrays only: a masked array's masked entries are not edges."""
    env = _graph_env()
    table = env.reward_model.from_uniforms(np.random.default_rng(1).random((200, 5)))
    GAP(5, 3_000, 1.0, env.adjacency, seed=4).simulate(table, env.adjacency, env.gaps)  # fills both caches
    masked = np.ma.array(env.adjacency, mask=env.adjacency)
    for agent in (GAP(5, 3_000, 1.0, env.adjacency, seed=4), DPSE(5, 3_000, 1.0, seed=4)):
        with pytest.raises(TypeError, match=r"^feedback_graph must be .*masked array"):
            agent.simulate(table, masked, env.gaps)


def test_a_continuing_simulate_refuses_a_short_table_and_past_checkpoints() -> None:
    env = _graph_env()
    table = env.reward_model.from_uniforms(np.random.default_rng(2).random((3_000, 5)))
    agent = GAP(5, 3_000, 1.0, env.adjacency, seed=4)
    agent.simulate(table[:1_000], env.adjacency, env.gaps)
    twin = copy.deepcopy(agent)
    with pytest.raises(
        ValueError, match=r"^table must have a row for each of the 1,000 rounds copy 0 has played .* 100 rows\.$"
    ):
        agent.simulate(table[:100], env.adjacency, env.gaps)
    with pytest.raises(ValueError, match=r"^checkpoints must be round counts after the 1,000 rounds .*got 10\.$"):
        agent.simulate(table, env.adjacency, env.gaps, checkpoints=np.array([10, 2_000]))
    went_on = agent.simulate(table, env.adjacency, env.gaps, checkpoints=np.array([1_001, 3_000]))
    want = twin.simulate(table, env.adjacency, env.gaps, checkpoints=np.array([1_001, 3_000]))
    np.testing.assert_array_equal(went_on.checkpoint_regret, want.checkpoint_regret)
    assert agent.simulate(table, env.adjacency, env.gaps, checkpoints=[]).total_regret == 0.0  # nothing left


@pytest.mark.skipif(not LONG_DOUBLE_WIDER, reason="long double is float64 on this platform: nothing rounds")
def test_long_doubles_that_round_onto_a_bound_are_refused() -> None:
    env = _graph_env()
    table = env.reward_model.from_uniforms(np.random.default_rng(3).random((300, 5))).astype(np.longdouble)
    above = np.longdouble(1) + np.longdouble(2) ** -62  # 1.0 as a float64
    table[120, 2] = above
    with pytest.raises(ValueError, match=r"at round 120, arm 2, a long double that rounds to"):
        GAP(5, 3_000, 1.0, env.adjacency, seed=4).simulate(table, env.adjacency, env.gaps)
    agent = GAP(5, 3_000, 1.0, env.adjacency, seed=4)
    a = agent.act()
    with pytest.raises(ValueError, match=r"^reward must be a finite number in \[0, 1\].*got np\.longdouble\("):
        agent.update(a, above, {"observed_mask": np.ones(5, dtype=bool), "observed_rewards": np.full(5, 0.5)})
    mask = np.ones(5, dtype=bool)
    seen = np.full(5, 0.5, dtype=np.longdouble)
    seen[3] = above
    with pytest.raises(ValueError, match=r"^info\['observed_rewards'\] must be .*got np\.longdouble\(.* at arm 3\.$"):
        agent.update(a, 0.5, {"observed_mask": mask, "observed_rewards": seen})
    agent.update(a, np.longdouble(1), {"observed_mask": mask, "observed_rewards": seen.clip(0, 1)})  # in bounds
