"""Tests of bandit_envs.privacy.counters: tree depths, p-sums, releases, noise laws and the Laplace-sum bound.

Known answers are computed by hand or by brute force over the tree's nodes; releases are checked
against a twin generator that makes the same draws. Statistical tests use fixed seeds and level
ALPHA = 1e-3, each paired with a wrong scale that the same test must reject.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lazy_module

from bandit_envs.privacy.counters import BinaryTreeCounter, HybridCounter, laplace_sum_bound, tree_depth

stats = lazy_module("scipy.stats")

ALPHA = 1e-3


def node_of(t: int) -> tuple[int, int]:
    """The tree node (first item, last item) whose p-sum item t closes: its lowest set bit's span."""
    span = t & -t
    return t - span + 1, t


# Tree depth and p-sums ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_items", "depth"), [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (1000, 10), (1024, 11)]
)
def test_tree_depth_is_floor_log2_plus_one(n_items, depth):
    assert tree_depth(n_items) == depth
    if n_items:
        assert depth == math.floor(math.log2(n_items)) + 1


@pytest.mark.parametrize("horizon", [*range(1, 70), 127, 128, 129, 1000])
def test_no_item_enters_more_p_sums_than_the_depth_and_some_item_enters_that_many(horizon):
    # Brute force: item j enters the p-sum released at t if j lies in t's node.
    entered = [0] * (horizon + 1)
    for t in range(1, horizon + 1):
        first, last = node_of(t)
        for j in range(first, last + 1):
            entered[j] += 1
    assert max(entered) == tree_depth(horizon)  # a ceil(log2 H) depth is one short at powers of 2


def test_binary_counter_releases_one_p_sum_per_item_and_popcount_terms():
    counter = BinaryTreeCounter(8, 1.0, np.random.default_rng(0), sampler="float")
    terms = []
    for _ in range(8):
        counter.add(0.5)
        terms.append(len(counter.noise_scales()))
    assert counter.n_draws == 8  # one tree node per item: 8 nodes for 8 items, not 2*8 - 1
    assert terms == [1, 1, 2, 1, 2, 2, 3, 1]
    assert counter.depth == 4 and counter.scale == 4.0
    assert set(counter.noise_scales()) == {4.0}


def test_binary_counter_releases_are_running_sums_plus_the_p_sums_draws():
    eps, items = 0.5, [0.1, 0.7, 0.3, 1.0, 0.0, 0.6, 0.2]
    counter = BinaryTreeCounter(7, eps, np.random.default_rng(3), sampler="float")
    twin = np.random.default_rng(3)
    scale = tree_depth(7) / eps
    draws = [float(twin.laplace(0.0, scale)) for _ in items]  # draw t belongs to t's node
    for t in range(1, len(items) + 1):
        release = counter.add(items[t - 1])
        # The release covers items 1..t with the nodes of t's binary digits, each with its draw.
        expected, covered, rest = 0.0, 0, t
        for j in reversed(range(t.bit_length())):
            if rest >> j & 1:
                last = covered + (1 << j)
                expected += sum(items[covered:last]) + draws[last - 1]
                covered = last
        assert covered == t
        assert release == pytest.approx(expected, abs=1e-12)


def test_binary_counter_refuses_items_past_its_horizon_and_outside_its_bounds():
    counter = BinaryTreeCounter(2, 1.0, np.random.default_rng(0))
    counter.add(1.0)
    counter.add(0.0)
    with pytest.raises(ValueError, match="at most horizon=2 items"):
        counter.add(0.5)
    for bad in (1.5, -0.1, math.nan):
        with pytest.raises(ValueError, match=r"x must be a finite number in \[0, 1\]"):
            BinaryTreeCounter(4, 1.0, np.random.default_rng(0)).add(bad)


# Hybrid counter -------------------------------------------------------------------------------


def test_hybrid_counter_noise_terms_by_item_count():
    eps = 2.0  # logarithmic scale 2/eps = 1; binary part of segment k: k / (eps/2) = k
    counter = HybridCounter(eps, np.random.default_rng(0), sampler="float")
    expected = {
        1: [1.0],
        2: [1.0, 1.0],
        3: [1.0, 1.0, 1.0],  # k = 1: one level, p-sum scale 1
        4: [1.0] * 3,
        5: [1.0] * 3 + [2.0],  # k = 2: position 1
        6: [1.0] * 3 + [2.0],  # position 2 = 0b10
        7: [1.0] * 3 + [2.0, 2.0],  # position 3 = 0b11
        8: [1.0] * 4,
        11: [1.0] * 4 + [3.0, 3.0],  # k = 3, position 3
        16: [1.0] * 5,
    }
    for n in range(1, 17):
        counter.add(0.5)
        assert counter.n_draws == n
        if n in expected:
            assert counter.noise_scales() == expected[n], n


def test_hybrid_counter_epochs_and_releases_against_a_twin_generator():
    eps, items = 1.0, [0.2, 0.9, 0.4, 0.0, 1.0, 0.3, 0.8, 0.5, 0.6]
    counter = HybridCounter(eps, np.random.default_rng(11), sampler="float")
    twin = np.random.default_rng(11)
    beta = 0.0
    last_power = 0
    binary_draws: dict[int, float] = {}
    for n, x in enumerate(items, start=1):
        release = counter.add(x)
        if n & (n - 1) == 0:  # an epoch of the logarithmic part closes at every power of 2
            beta += sum(items[last_power:n]) + float(twin.laplace(0.0, 2.0 / eps))
            last_power = n
            binary_draws = {}
            assert release == pytest.approx(beta, abs=1e-12)
        else:
            k = n.bit_length() - 1
            position = n - (1 << k)
            binary_draws[position] = float(twin.laplace(0.0, k / (eps / 2.0)))
            # the binary counter over the items since 2^k, as in the binary counter's test
            part, covered = 0.0, 0
            for j in reversed(range(position.bit_length())):
                if position >> j & 1:
                    last = covered + (1 << j)
                    part += sum(items[last_power + covered : last_power + last]) + binary_draws[last]
                    covered = last
            assert release == pytest.approx(beta + part, abs=1e-12), n


# Noise laws -------------------------------------------------------------------------------------


def test_a_binary_counter_release_has_laplace_noise_of_the_claimed_scale():
    eps, horizon = 0.8, 8
    noise = np.array([BinaryTreeCounter(horizon, eps, np.random.default_rng(s)).add(0.25) - 0.25 for s in range(3000)])
    scale = tree_depth(horizon) / eps
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    one_level_short = (tree_depth(horizon) - 1) / eps  # the scale of a ceil(log2 H)-level tree at H = 8
    assert stats.kstest(noise, stats.laplace(scale=one_level_short).cdf).pvalue < ALPHA


def test_a_hybrid_release_has_the_law_of_its_noise_terms():
    eps, n = 1.0, 7  # 3 terms of scale 2 and 2 of scale 4
    gens = [np.random.default_rng(s) for s in range(3000)]
    noise = []
    for gen in gens:
        counter = HybridCounter(eps, gen)
        for _ in range(n):
            counter.add(1.0)
        noise.append(counter.value - n)
    reference = np.random.default_rng(99)
    expected = reference.laplace(0, 2.0, (3, 4000)).sum(axis=0) + reference.laplace(0, 4.0, (2, 4000)).sum(axis=0)
    assert stats.ks_2samp(noise, expected).pvalue > ALPHA
    assert stats.ks_2samp(noise, 1.3 * expected).pvalue < ALPHA


# Laplace-sum bound ------------------------------------------------------------------------------


def test_laplace_sum_bound_known_answers():
    assert laplace_sum_bound([], 0.1) == 0.0
    # One term: nu = max(b, b sqrt(L)) = b sqrt(L) (L > 1), bound = sqrt(8) b L with L = ln(2/gamma).
    assert laplace_sum_bound([3.0], 0.1) == pytest.approx(3.0 * math.sqrt(8.0) * math.log(20.0))
    # Many small terms: nu = sqrt(sum b^2).
    scales = [1.0] * 100
    assert laplace_sum_bound(scales, 0.1) == pytest.approx(10.0 * math.sqrt(8.0 * math.log(20.0)))


@pytest.mark.parametrize("scales", [[1.0], [2.0, 2.0, 2.0, 4.0, 4.0], [0.5] * 40])
def test_laplace_sum_bound_holds_with_the_stated_probability(scales):
    gamma, n = 0.05, 20000
    gen = np.random.default_rng(5)
    total = sum(gen.laplace(0.0, b, n) for b in scales)
    exceed = np.mean(np.abs(total) > laplace_sum_bound(scales, gamma))
    # P(exceed) <= gamma; the bound is loose, so the frequency is far below it (binomial sd 0.0015).
    assert exceed <= gamma


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: laplace_sum_bound([1.0], 0.0), "gamma"),
        (lambda: laplace_sum_bound([1.0], 1.0), "gamma"),
        (lambda: laplace_sum_bound([0.0], 0.1), r"scales\[0\]"),
        (lambda: BinaryTreeCounter(0, 1.0, np.random.default_rng(0)), "horizon"),
        (lambda: BinaryTreeCounter(4, 0.0, np.random.default_rng(0)), "epsilon"),
        (lambda: BinaryTreeCounter(4, 1.0, 0), "rng"),
        (lambda: HybridCounter(1.0, np.random.default_rng(0), bounds=(1.0, 0.0)), "bounds"),
        (lambda: HybridCounter(5e-324, np.random.default_rng(0)), "epsilon"),
        (lambda: tree_depth(-1), "n_items"),
    ],
)
def test_bad_arguments_are_refused_in_one_sentence(call, match):
    with pytest.raises((ValueError, TypeError), match=match) as exc:
        call()
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


def test_bounds_set_the_sensitivity():
    # Lattice (default): the width w widened by the grid g for the rounding; float: w itself.
    counter = BinaryTreeCounter(4, 1.0, np.random.default_rng(0), bounds=(-1.0, 1.0))
    assert 0.0 < counter.grid <= 2.0 * 2.0**-20 and counter.scale == 3 * (2.0 + counter.grid)
    assert BinaryTreeCounter(4, 1.0, np.random.default_rng(0), bounds=(-1.0, 1.0), sampler="float").scale == 3 * 2.0
    assert HybridCounter(1.0, np.random.default_rng(0), bounds=(0.0, 5.0), sampler="float").log_scale == 10.0
    hybrid = HybridCounter(1.0, np.random.default_rng(0), bounds=(0.0, 5.0))
    assert hybrid.log_scale == 2.0 * (5.0 + hybrid.grid)
    hybrid.add(5.0)
    with pytest.raises(ValueError, match=r"\[0, 5\]"):
        hybrid.add(5.5)


def test_lattice_counters_release_multiples_of_their_grid():
    items = np.random.default_rng(4).random(60) / 3.0
    for make in (
        lambda s: BinaryTreeCounter(60, 0.8, np.random.default_rng(5), sampler=s),
        lambda s: HybridCounter(0.8, np.random.default_rng(5), sampler=s),
    ):
        lattice, raw = make("lattice"), make("float")
        values = np.array([lattice.add(float(x)) for x in items])
        floats = np.array([raw.add(float(x)) for x in items])
        assert np.array_equal(values / lattice.grid, np.rint(values / lattice.grid))
        assert not np.array_equal(floats / lattice.grid, np.rint(floats / lattice.grid))
        assert np.abs(values - floats).max() < 1e-4  # the same draws, rounded, scale widened by ~1e-6
