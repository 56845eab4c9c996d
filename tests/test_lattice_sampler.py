"""The lattice sampler of ``bandit_envs.privacy.lattice``: its noise law, its grid, and the float-attack it removes.

Finding: with floating-point noise the set of outputs ``x + N`` depends on ``x`` through the
low-order bits (Mironov, CCS 2012), so neighbouring inputs can be told apart with certainty.
The lattice sampler (the default) puts every output on one power-of-two grid whatever the input.
Statistical tolerances: chi-square p-values above ``ALPHA = 1e-3`` with fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lazy_module

from bandit_envs import privacy as P
from bandit_envs.privacy import lattice as L

stats = lazy_module("scipy.stats")  # imported when a test first uses it
ALPHA = 1e-3


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def chi_square_p(observed: np.ndarray, expected_p: np.ndarray) -> float:
    """p-value of the chi-square test of the counts ``observed`` against probabilities ``expected_p``."""
    expected = expected_p / expected_p.sum() * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_rounded_noise_follows_the_exact_lattice_pmf_cell_by_cell(kind: str) -> None:
    """On a coarse grid (g = scale / 4) every cell's frequency matches the exact pmf."""
    scale, n = 1.0, 400_000
    grid = 0.25
    gen = rng(1)
    draws = gen.laplace(0.0, scale, n) if kind == "laplace" else gen.normal(0.0, scale, n)
    z = np.rint(L.snap(draws, grid) / grid).astype(np.int64)
    cells = np.arange(-24, 25)
    law = L.laplace_lattice_pmf if kind == "laplace" else L.gaussian_lattice_pmf
    pmf = law(cells, scale, grid)
    counts = np.array([np.count_nonzero(z == c) for c in cells])
    tail_count = n - counts.sum()
    observed = np.append(counts, tail_count)
    expected = np.append(pmf, max(1.0 - pmf.sum(), 1e-300))
    assert observed.sum() == n
    assert chi_square_p(observed, expected) > ALPHA
    # The pmf sums to 1 over a wide range, and a wrong scale is rejected.
    wide = np.arange(-4000, 4001)
    assert math.isclose(
        float((L.laplace_lattice_pmf if kind == "laplace" else L.gaussian_lattice_pmf)(wide, scale, grid).sum()),
        1.0,
        abs_tol=1e-12,
    )
    wrong = (L.laplace_lattice_pmf if kind == "laplace" else L.gaussian_lattice_pmf)(cells, 1.1 * scale, grid)
    assert chi_square_p(observed, np.append(wrong, max(1.0 - wrong.sum(), 1e-300))) < ALPHA


def _binned_lattice_test(z: np.ndarray, cdf, grid: float) -> float:
    """Chi-square p-value of integers ``z`` in 30 bins of integers against ``Z = rint(N / g)``, N with ``cdf``."""
    edges = np.unique(np.quantile(z, np.linspace(0.0, 1.0, 31)[1:-1]).round().astype(np.int64))
    # bin j holds z in [edges[j-1], edges[j]); its exact probability is cdf((e_j - 1/2) g) - cdf((e_{j-1} - 1/2) g)
    bounds = np.concatenate(([-np.inf], (edges - 0.5) * grid, [np.inf]))
    probs = np.diff(cdf(bounds))
    observed = np.bincount(np.searchsorted(edges, z, side="right"), minlength=len(bounds) - 1)
    return chi_square_p(observed, probs)


def test_laplace_mechanism_default_noise_is_the_widened_lattice_laplace() -> None:
    eps, sens, n = 0.5, 2.0, 100_000
    x = np.linspace(-3.0, 3.0, n)
    grid = L.grid_step(sens / eps, n)
    y = P.laplace_mechanism(x, eps, rng(2), sensitivity=sens)
    z = (y - L.snap(x, grid)) / grid
    assert np.array_equal(z, np.rint(z))  # integer multiples of the grid, exactly
    scale = (sens + n * grid) / eps
    assert _binned_lattice_test(z, stats.laplace(scale=scale).cdf, grid) > ALPHA
    assert _binned_lattice_test(z, stats.laplace(scale=1.05 * scale).cdf, grid) < ALPHA


def test_gaussian_mechanism_default_noise_is_the_widened_lattice_gaussian() -> None:
    eps, dlt, n = 0.8, 1e-5, 100_000
    x = np.linspace(-1.0, 1.0, n)
    sigma0 = P.gaussian_sigma_analytic(eps, dlt, 1.0)
    grid = L.grid_step(sigma0, math.sqrt(n))
    y = P.gaussian_mechanism(x, eps, dlt, rng(3), l2_sensitivity=1.0)
    z = (y - L.snap(x, grid)) / grid
    assert np.array_equal(z, np.rint(z))
    sigma = P.gaussian_sigma_analytic(eps, dlt, 1.0 + math.sqrt(n) * grid)
    assert sigma > sigma0
    assert _binned_lattice_test(z, stats.norm(scale=sigma).cdf, grid) > ALPHA
    assert _binned_lattice_test(z, stats.norm(scale=1.05 * sigma).cdf, grid) < ALPHA


@pytest.mark.parametrize(("a", "b"), [(0.0, 1.0), (0.3, 0.7), (1.0 / 3.0, 0.1)])
def test_default_outputs_of_neighbouring_inputs_lie_on_the_same_grid(a: float, b: float) -> None:
    """The output set does not depend on the input: every output is a multiple of the same g."""
    eps, n = 1.0, 20_000
    grid = L.grid_step(1.0 / eps, 1)
    for x in (a, b):
        for seed in range(3):
            y = np.array([P.laplace_mechanism(x, eps, rng(100 * seed + i), lower=0.0, upper=1.0) for i in range(200)])
            assert np.array_equal(y / grid, np.rint(y / grid))
        g = np.array([P.gaussian_mechanism(x, eps, 1e-6, rng(i), lower=0.0, upper=1.0) for i in range(200)])
        gauss_grid = L.grid_step(P.gaussian_sigma_analytic(eps, 1e-6, 1.0), 1.0)
        assert np.array_equal(g / gauss_grid, np.rint(g / gauss_grid))
    # The float sampler's outputs are not on any such grid.
    y = P.laplace_mechanism(np.full(n, a), eps, rng(9), lower=0.0, upper=1.0, sampler="float")
    assert not np.array_equal(y / grid, np.rint(y / grid))


def _reachable(value: float, scale: float) -> bool:
    """Whether ``value`` is an output of numpy's ``Generator.laplace(0.0, scale)`` (its inverse, 53-bit uniforms)."""
    u_star = math.exp(value / scale) / 2.0 if value < 0 else 1.0 - math.exp(-value / scale) / 2.0
    k0 = int(u_star * 2.0**53)
    for k in range(k0 - 4, k0 + 5):
        u = k * 2.0**-53
        if 0.0 < u < 1.0:
            v = (0.0 - scale * math.log(2.0 - u - u)) if u >= 0.5 else (0.0 + scale * math.log(u + u))
            if v == value:
                return True
    return False


def _unreachable_rate(outputs: np.ndarray, scale: float) -> float:
    return float(np.mean([not _reachable(float(v), scale) for v in outputs]))


def test_finding_5_float_noise_tells_neighbouring_inputs_apart_and_the_default_does_not() -> None:
    """Mironov's attack on laplace_mechanism: is ``y - 0`` a value numpy's Laplace sampler can produce?

    With float noise, every output of x = 0 passes and most outputs of its neighbour x' = 1 fail:
    the event "fails" has probability 0 under x and about 0.8 under x', an unbounded privacy loss.
    With the default lattice sampler the test answers the same for both inputs.
    """
    eps, n = 1.0, 2000
    scale = 1.0 / eps
    float_0 = P.laplace_mechanism(np.zeros(n), eps, rng(5), lower=0.0, upper=1.0, sampler="float")
    float_1 = P.laplace_mechanism(np.ones(n), eps, rng(6), lower=0.0, upper=1.0, sampler="float")
    assert _unreachable_rate(float_0, scale) == 0.0
    assert _unreachable_rate(float_1, scale) > 0.5
    # Default (lattice): the attacker inverts the widened sampler; both inputs look alike.
    wide = (1.0 + L.grid_step(scale, 1)) / eps
    safe_0 = np.array([P.laplace_mechanism(0.0, eps, rng(10_000 + i), lower=0.0, upper=1.0) for i in range(n)])
    safe_1 = np.array([P.laplace_mechanism(1.0, eps, rng(20_000 + i), lower=0.0, upper=1.0) for i in range(n)])
    for s in (scale, wide):
        assert abs(_unreachable_rate(safe_0, s) - _unreachable_rate(safe_1, s)) < 0.05


def test_float_sampler_is_the_old_raw_noise() -> None:
    x = np.linspace(0.0, 1.0, 7)
    np.testing.assert_array_equal(
        P.laplace_mechanism(x, 0.7, rng(7), lower=0.0, upper=1.0, sampler="float"),
        x + rng(7).laplace(0.0, 1.0 / 0.7, 7),
    )
    sigma = P.gaussian_sigma_analytic(0.7, 1e-5, 1.0)
    np.testing.assert_array_equal(
        P.gaussian_mechanism(x, 0.7, 1e-5, rng(8), lower=0.0, upper=1.0, sampler="float"),
        x + rng(8).normal(0.0, sigma, 7),
    )


def test_grid_step_is_a_power_of_two_below_the_scale() -> None:
    for scale, spread in [(1.0, 1.0), (3.7, 10.0), (1e-3, 1.0), (250.0, math.sqrt(5.0))]:
        g = L.grid_step(scale, spread)
        mantissa, _ = math.frexp(g)
        assert mantissa == 0.5
        assert scale / spread / 2.0 ** (L.GRID_BITS + 1) < g <= scale / spread / 2.0**L.GRID_BITS


def test_bad_sampler_and_huge_input_are_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError, match="sampler"):
        P.laplace_mechanism([0.0], 1.0, rng(0), sampler="snapping")
    with pytest.raises(ValueError, match="sampler"):
        P.gaussian_mechanism([0.0], 1.0, 1e-5, rng(0), sampler="exact")
    with pytest.raises(ValueError, match="too large for the lattice"):
        P.laplace_mechanism([1e30], 1.0, rng(0))


# The private agents: every released value on the grid, for neighbouring reward sequences ----------


def _on_grid(values: np.ndarray, grid: float) -> bool:
    v = np.asarray(values, dtype=np.float64) / grid
    return bool(np.array_equal(v, np.rint(v)))


def _feed(agent, rewards: np.ndarray) -> None:
    for r in rewards:
        agent.update(agent.act(), r)


@pytest.mark.parametrize("name", ["HybridDPUCB", "TreeDPUCB"])
def test_counter_agents_release_sums_on_the_grid_for_neighbouring_rewards(name: str) -> None:
    from agents.central_dp.ucb import HybridDPUCB, TreeDPUCB

    def make(sampler: str):
        if name == "HybridDPUCB":
            return HybridDPUCB(3, 0.7, n_envs=4, seed=3, sampler=sampler)
        return TreeDPUCB(3, 200, 0.7, n_envs=4, seed=3, sampler=sampler)

    base = np.random.default_rng(0).random((150, 4)) / 3.0  # not on any grid
    neighbour = base.copy()
    neighbour[40] = 1.0 - neighbour[40]  # one round's reward changes in every copy
    for rewards in (base, neighbour):
        agent = make("lattice")
        _feed(agent, rewards)
        assert agent.grid > 0.0 and _on_grid(agent.released_sums, agent.grid)
        raw = make("float")
        _feed(raw, rewards)
        assert raw.grid == 0.0 and not _on_grid(raw.released_sums, agent.grid)


def test_epoch_and_elimination_agents_release_lattice_sums() -> None:
    from agents.central_dp.ucb import AdaPUCB
    from agents.elimination.policies import DPSE

    rewards = np.random.default_rng(1).random((300, 2)) / 3.0
    agent = AdaPUCB(3, 0.9, variant="cumulative", n_envs=2, seed=0)
    _feed(agent, rewards)
    assert _on_grid(agent._noisy_sum, agent.grid)  # the released running sums
    forgetful = AdaPUCB(3, 0.9, n_envs=2, seed=0)
    _feed(forgetful, rewards)
    sums = forgetful.released_means * forgetful.release_sizes  # lattice sum / size, times size
    assert np.allclose(sums / forgetful.grid, np.rint(sums / forgetful.grid), rtol=0, atol=1e-6)
    # DPSE's released means: (snap(sum) + snap(noise)) / R_e, as the reference computes them.
    from agents.elimination.reference import run_dpse

    table = np.random.default_rng(2).random((4000, 3)) / 3.0
    lattice, raw = run_dpse(table, 5.0, 0.01, seed=0), run_dpse(table, 5.0, 0.01, seed=0, sampler="float")
    assert lattice.releases == raw.releases > 0
    grid = DPSE(3, 4000, 5.0, 0.01).grid
    gaps = np.array([lattice.released_means[a] - raw.released_means[a] for a in lattice.released_means])
    assert grid > 0.0 and 0.0 < np.abs(gaps).max() < 1e-4  # the same draws, rounded and widened


def test_ldp_reports_are_on_the_grid_for_neighbouring_rewards() -> None:
    from agents import UCB, LDPLinUCB, LDPWrapper
    from agents.linear.protocol import client_report

    for mechanism, extra in (("laplace", {}), ("gaussian", {"delta": 1e-5})):
        wrapper = LDPWrapper(UCB(3, n_envs=500), mechanism, 0.5, seed=1, **extra)
        raw = LDPWrapper(UCB(3, n_envs=500), mechanism, 0.5, seed=1, sampler="float", **extra)
        for r in (0.0, 1.0, 1.0 / 3.0):
            assert _on_grid(wrapper._privatize(np.full(500, r)), wrapper.grid)
            assert not _on_grid(raw._privatize(np.full(500, r)), wrapper.grid)
    agent = LDPLinUCB(3, 1.0, horizon=100)
    rng = np.random.default_rng(3)
    for x, y in ((np.array([0.2, -0.3, 0.1]), 0.7), (np.array([0.5, 0.5, -0.5]), -0.2)):
        gram, vec, _ = client_report(x, y, agent.sigma, rng, l_x=1.0, l_y=1.0, grid=agent.grid)
        assert _on_grid(gram, agent.grid) and _on_grid(vec, agent.grid)
        gram, vec, _ = client_report(x, y, agent.sigma, rng, l_x=1.0, l_y=1.0)
        assert not _on_grid(vec, agent.grid)
