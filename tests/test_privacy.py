"""Tests for bandit_envs.privacy: output laws, privacy ratios, numerics and argument checks.

Statistical tests use fixed seeds and significance level ALPHA = 1e-3; each goodness-of-fit test
is paired with a check that the same test rejects a wrong parameter, so it can fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import lazy_module, thorough
from scipy import special

from bandit_envs import privacy as P

integrate = lazy_module("scipy.integrate")
stats = lazy_module("scipy.stats")

ALPHA = 1e-3


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def max_privacy_loss_lower_bound(
    events_a: np.ndarray, events_b: np.ndarray, delta: float = 0.0, alpha: float = ALPHA
) -> float:
    """Largest lower confidence bound on ln((P_a(S) - delta) / P_b(S)) over events and directions.

    ``events_a`` / ``events_b`` are boolean arrays (n_events, n_samples) saying which samples of
    the mechanism run on the two neighbouring inputs fall in each event. P_a(S) is bounded below
    and P_b(S) above by exact Clopper-Pearson intervals, Bonferroni-corrected over all events and
    both directions, so for a mechanism that is (eps, delta)-DP the result exceeds eps with
    probability at most ``alpha``.
    """
    n_tests = 2 * events_a.shape[0]
    level = alpha / (2 * n_tests)

    def bounds(events: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = events.shape[1]
        k = events.sum(axis=1)
        lower = np.where(k > 0, stats.beta.ppf(level, np.maximum(k, 1), n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - level, k + 1, np.maximum(n - k, 1)), 1.0)
        return lower, upper

    lo_a, hi_a = bounds(events_a)
    lo_b, hi_b = bounds(events_b)
    with np.errstate(divide="ignore"):
        ratios = np.concatenate([(lo_a - delta) / hi_b, (lo_b - delta) / hi_a])
    return float(np.log(np.max(ratios)))


def two_sided_p(cdf_value: float) -> float:
    return 2.0 * min(cdf_value, 1.0 - cdf_value)


# --------------------------------------------------------------------------------------------
# Randomized response and the Bernoulli mechanism
# --------------------------------------------------------------------------------------------


def test_randomized_response_flip_frequency_is_binomial() -> None:
    eps, n = 1.0, 100_000
    bits = np.tile([0, 1], n // 2)
    reports = P.randomized_response(bits, eps, rng(1))
    assert reports.shape == bits.shape and reports.dtype == np.int64
    flips = int(np.sum(reports != bits))
    q = 1.0 / (1.0 + math.e**eps)
    assert stats.binomtest(flips, n, q).pvalue > ALPHA
    q_wrong = 1.0 / (1.0 + math.e ** (1.1 * eps))
    assert stats.binomtest(flips, n, q_wrong).pvalue < ALPHA
    # Flips are symmetric: the same rate for true 0s and 1s.
    flips0 = int(np.sum(reports[bits == 0] == 1))
    assert stats.binomtest(flips0, n // 2, q).pvalue > ALPHA


@pytest.mark.usefixtures("uncapped_epsilon")
def test_randomized_response_accepts_bool_and_scalars_and_large_epsilon() -> None:
    out = P.randomized_response(np.array([True, False]), 2.0, rng())
    assert out.dtype == np.int64 and out.shape == (2,)
    assert P.randomized_response(1, 0.5, rng()).shape == ()
    bits = rng(3).integers(0, 2, size=1000)
    np.testing.assert_array_equal(P.randomized_response(bits, 1000.0, rng()), bits)


def test_bernoulli_mechanism_output_frequency() -> None:
    eps, n = 0.8, 100_000
    for r in (0.0, 0.3, 1.0):
        ones = int(P.bernoulli_mechanism(np.full(n, r), eps, rng(2)).sum())
        prob = (r * math.exp(eps) + 1 - r) / (1 + math.exp(eps))
        assert stats.binomtest(ones, n, prob).pvalue > ALPHA
        assert stats.binomtest(ones, n, prob + 0.01).pvalue < ALPHA


def test_rr_debias_is_unbiased() -> None:
    eps, n, mu = 0.5, 200_000, 0.3
    bits = (rng(4).random(n) < mu).astype(int)
    estimates = P.rr_debias(P.randomized_response(bits, eps, rng(5)), eps)
    p1 = mu * math.exp(eps) / (1 + math.exp(eps)) + (1 - mu) / (1 + math.exp(eps))
    se = math.sqrt(p1 * (1 - p1)) / math.tanh(eps / 2) / math.sqrt(n)
    assert abs(estimates.mean() - bits.mean()) < 4 * se
    # Added variance e^eps / (e^eps - 1)^2 per report (Warner 1965; docs/algorithms.md, randomized response).
    noise_var = np.var(estimates - bits)
    assert noise_var == pytest.approx(math.exp(eps) / (math.exp(eps) - 1) ** 2, rel=0.02)


@pytest.mark.usefixtures("uncapped_epsilon")
def test_rr_debias_formula_and_bernoulli_mechanism_inverse() -> None:
    eps = 1.3
    y = np.array([0.0, 0.25, 1.0])
    expected = (y * (math.exp(eps) + 1) - 1) / (math.exp(eps) - 1)
    np.testing.assert_allclose(P.rr_debias(y, eps), expected, rtol=1e-12)
    r = np.linspace(0, 1, 5)
    mean_report = (r * math.exp(eps) + 1 - r) / (1 + math.exp(eps))
    np.testing.assert_allclose(P.rr_debias(mean_report, eps), r, atol=1e-12)
    ones = P.bernoulli_mechanism(np.full(200_000, 0.7), eps, rng(6))
    assert P.rr_debias(ones.mean(), eps) == pytest.approx(0.7, abs=0.01)
    np.testing.assert_allclose(P.rr_debias([0.0, 1.0], 1000.0), [0.0, 1.0])


@pytest.mark.parametrize("mechanism", ["rr", "bernoulli"])
def test_randomized_response_empirical_privacy(mechanism: str) -> None:
    eps, n = 1.0, 100_000

    def run(bit: int, epsilon: float, seed: int) -> np.ndarray:
        if mechanism == "rr":
            return P.randomized_response(np.full(n, bit), epsilon, rng(seed))
        return P.bernoulli_mechanism(np.full(n, float(bit)), epsilon, rng(seed))

    def events(y: np.ndarray) -> np.ndarray:
        return np.stack([y == 0, y == 1])

    loss = max_privacy_loss_lower_bound(events(run(0, eps, 7)), events(run(1, eps, 8)))
    assert loss <= eps
    # The same check flags a mechanism that spends more than it claims.
    broken = max_privacy_loss_lower_bound(events(run(0, 1.5, 7)), events(run(1, 1.5, 8)))
    assert broken > eps


# --------------------------------------------------------------------------------------------
# Laplace mechanism
# --------------------------------------------------------------------------------------------


def test_laplace_noise_matches_scipy_laplace() -> None:
    eps, sens, n = 0.5, 2.0, 50_000
    x = np.linspace(-3, 3, n)
    noise = P.laplace_mechanism(x, eps, rng(10), sensitivity=sens) - x
    scale = sens / eps
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=1.1 * scale).cdf).pvalue < ALPHA
    assert stats.kstest(noise, stats.laplace(scale=sens).cdf).pvalue < ALPHA


def test_laplace_clipping_is_applied_before_noise() -> None:
    x = np.array([-5.0, 0.5, 7.0])
    clipped = P.laplace_mechanism(x, 1.0, rng(11), sensitivity=1.0, lower=0.0, upper=1.0)
    reference = P.laplace_mechanism([0.0, 0.5, 1.0], 1.0, rng(11), sensitivity=1.0)
    np.testing.assert_array_equal(clipped, reference)


def test_laplace_is_deterministic_given_seed_and_keeps_shape() -> None:
    x = np.zeros((3, 4))
    a = P.laplace_mechanism(x, 1.0, rng(12))
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, P.laplace_mechanism(x, 1.0, rng(12)))
    assert P.laplace_mechanism(2.0, 1.0, rng(12)).shape == ()


def test_laplace_empirical_privacy() -> None:
    eps, sens, n = 1.0, 1.0, 200_000
    edges = np.array([-np.inf, -4, -3, -2, -1, 0, 0.5, 1, 2, 3, 4, 5, np.inf])

    def events(y: np.ndarray) -> np.ndarray:
        idx = np.digitize(y, edges[1:-1])
        return np.stack([idx == b for b in range(len(edges) - 1)])

    def run(x: float, scale_factor: float, seed: int) -> np.ndarray:
        return P.laplace_mechanism(np.full(n, x), eps, rng(seed), sensitivity=sens * scale_factor)

    loss = max_privacy_loss_lower_bound(events(run(0.0, 1.0, 13)), events(run(sens, 1.0, 14)))
    assert loss <= eps
    broken = max_privacy_loss_lower_bound(events(run(0.0, 0.5, 13)), events(run(sens, 0.5, 14)))
    assert broken > eps


def test_laplace_clipping_bounds_set_the_sensitivity_at_the_claimed_epsilon() -> None:
    # A range of width 2: the two ends are neighbours, 2 apart after clipping.
    eps, n, lo, hi = 1.0, 200_000, -1.0, 1.0
    edges = np.array([-np.inf, -3, -2, -1, -0.5, 0, 0.5, 1, 2, 3, np.inf])

    def events(y: np.ndarray) -> np.ndarray:
        idx = np.digitize(y, edges[1:-1])
        return np.stack([idx == b for b in range(len(edges) - 1)])

    def run(x: float, seed: int) -> np.ndarray:
        return P.laplace_mechanism(np.full(n, x), eps, rng(seed), lower=lo, upper=hi)

    loss = max_privacy_loss_lower_bound(events(run(lo - 5.0, 15)), events(run(hi + 5.0, 16)))
    assert loss <= eps

    # The same check flags noise scaled for sensitivity 1 on this range (2 epsilon spent).
    def broken(x: float, seed: int) -> np.ndarray:
        return P.laplace_mechanism(np.clip(np.full(n, x), lo, hi), eps, rng(seed), sensitivity=1.0)

    assert max_privacy_loss_lower_bound(events(broken(lo, 15)), events(broken(hi, 16))) > eps


def test_laplace_sensitivity_below_the_clipping_width_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^sensitivity must be at least upper - lower = 2\b"):
        P.laplace_mechanism(0.0, 1.0, rng(), sensitivity=1.0, lower=-1.0, upper=1.0)
    # A larger sensitivity (a user with several entries) is accepted and used.
    x = np.zeros(50_000)
    noise = P.laplace_mechanism(x, 1.0, rng(17), sensitivity=6.0, lower=-1.0, upper=1.0)
    assert stats.kstest(noise, stats.laplace(scale=6.0).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=2.0).cdf).pvalue < ALPHA
    # The width itself is the default.
    derived = P.laplace_mechanism(x, 1.0, rng(17), lower=-1.0, upper=1.0)
    np.testing.assert_array_equal(derived, P.laplace_mechanism(x, 1.0, rng(17), sensitivity=2.0))


# --------------------------------------------------------------------------------------------
# Gaussian mechanism
# --------------------------------------------------------------------------------------------


def test_gaussian_sigma_classic_known_value() -> None:
    assert P.gaussian_sigma_classic(0.5, 1e-5, 1.0) == pytest.approx(9.689610525210778, rel=1e-12)
    assert P.gaussian_sigma_classic(0.5, 1e-5, 3.0) == pytest.approx(3 * 9.689610525210778)


@pytest.mark.parametrize("epsilon", [1.0, 1.5, 10.0])
def test_gaussian_sigma_classic_rejects_epsilon_at_least_one(epsilon: float) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        P.gaussian_sigma_classic(epsilon, 1e-5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        P.gaussian_mechanism(0.0, epsilon, 1e-5, rng(), method="classic")


# sigma from the reference implementation of Balle & Wang's Algorithm 1
# (github.com/BorjaBalle/analytic-gaussian-mechanism, tol=1e-12 on delta).
BALLE_WANG_REFERENCE = [
    (0.5, 1e-5, 7.031826674729583),
    (1.0, 1e-5, 3.730631634944469),
    (0.1, 1e-3, 17.404396203615647),
    (1.0, 0.3, 0.6902305800145805),
]


@pytest.mark.parametrize(("epsilon", "delta", "sigma"), BALLE_WANG_REFERENCE)
def test_gaussian_sigma_analytic_matches_reference(epsilon: float, delta: float, sigma: float) -> None:
    assert P.gaussian_sigma_analytic(epsilon, delta, 1.0) == pytest.approx(sigma, rel=1e-8)
    assert P.gaussian_sigma_analytic(epsilon, delta, 2.5) == pytest.approx(2.5 * sigma, rel=1e-8)


def balle_wang_delta(sigma: float, epsilon: float, sens: float = 1.0) -> float:
    """Theorem 8 of Balle & Wang, written out plainly (fine for moderate epsilon)."""
    a = sens / (2 * sigma) - epsilon * sigma / sens
    b = -sens / (2 * sigma) - epsilon * sigma / sens
    return float(stats.norm.cdf(a) - math.exp(epsilon) * stats.norm.cdf(b))


def hockey_stick_delta(sigma: float, epsilon: float, sens: float = 1.0) -> float:
    """sup_S P(N(0, s^2) in S) - e^eps P(N(sens, s^2) in S), by numerical integration."""
    # The optimal S is {y : p(y) > e^eps q(y)} = {y < sens / 2 - eps s^2 / sens}.
    t = sens / 2 - epsilon * sigma**2 / sens

    def integrand(y: float) -> float:
        return float(stats.norm.pdf(y, 0, sigma) - math.exp(epsilon) * stats.norm.pdf(y, sens, sigma))

    value, _ = integrate.quad(integrand, -np.inf, t, epsabs=1e-14, epsrel=1e-10)
    return value


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [(0.1, 1e-3), (0.5, 1e-5), (1.0, 1e-5), (2.0, 1e-6), (5.0, 1e-8), (1.0, 0.3)],
)
def test_gaussian_sigma_analytic_satisfies_condition_with_equality(epsilon: float, delta: float) -> None:
    sigma = P.gaussian_sigma_analytic(epsilon, delta, 1.0)
    assert P.gaussian_delta(sigma, epsilon) <= delta
    assert P.gaussian_delta(sigma, epsilon) == pytest.approx(delta, rel=1e-9)
    assert balle_wang_delta(sigma, epsilon) == pytest.approx(delta, rel=1e-6)
    assert hockey_stick_delta(sigma, epsilon) == pytest.approx(delta, rel=1e-5)
    # Smallest such sigma: slightly less noise violates the condition.
    assert P.gaussian_delta(sigma * (1 - 1e-6), epsilon) > delta


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 0.9, 0.999])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_gaussian_sigma_analytic_below_classic(epsilon: float, delta: float) -> None:
    assert P.gaussian_sigma_analytic(epsilon, delta, 1.0) < P.gaussian_sigma_classic(epsilon, delta)


def test_gaussian_sigma_analytic_extreme_parameters_and_monotonicity() -> None:
    for epsilon, delta in [(50.0, 1e-12), (800.0, 1e-300), (1e-4, 1e-5), (0.01, 0.999)]:
        sigma = P.gaussian_sigma_analytic(epsilon, delta)
        assert math.isfinite(sigma) and sigma > 0
        assert P.gaussian_delta(sigma, epsilon) == pytest.approx(delta, rel=1e-9)
    sigmas = [P.gaussian_sigma_analytic(e, 1e-6) for e in (0.1, 0.5, 1, 2, 4, 8)]
    assert np.all(np.diff(sigmas) < 0)
    sigmas = [P.gaussian_sigma_analytic(1.0, d) for d in (1e-9, 1e-6, 1e-3, 0.1)]
    assert np.all(np.diff(sigmas) < 0)


@pytest.mark.parametrize("method", ["analytic", "classic"])
def test_gaussian_noise_std_matches_sigma(method: str) -> None:
    eps, delta, sens, n = 0.5, 1e-5, 2.0, 50_000
    sigma = (
        P.gaussian_sigma_analytic(eps, delta, sens)
        if method == "analytic"
        else P.gaussian_sigma_classic(eps, delta, sens)
    )
    noise = P.gaussian_mechanism(np.zeros(n), eps, delta, rng(20), sens, method=method)
    # sum(z^2) / sigma^2 ~ chi2(n) for zero-mean noise.
    stat = float(np.sum(noise**2))
    assert two_sided_p(stats.chi2.cdf(stat / sigma**2, n)) > ALPHA
    assert two_sided_p(stats.chi2.cdf(stat / (1.03 * sigma) ** 2, n)) < ALPHA
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > ALPHA


def test_gaussian_empirical_privacy() -> None:
    eps, delta, n = 1.0, 1e-3, 200_000
    sigma = P.gaussian_sigma_analytic(eps, delta)
    thresholds = sigma * np.array([-3, -2, -1, 0, 1, 2, 3]) + 0.5

    def events(y: np.ndarray) -> np.ndarray:
        return np.stack([y < t for t in thresholds] + [y > t for t in thresholds])

    def run(x: float, noise_factor: float, seed: int) -> np.ndarray:
        return P.gaussian_mechanism(np.full(n, x), eps, delta, rng(seed), 1.0 / noise_factor)

    loss = max_privacy_loss_lower_bound(events(run(0.0, 1, 21)), events(run(1.0, 1, 22)), delta)
    assert loss <= eps
    broken = max_privacy_loss_lower_bound(events(run(0.0, 3, 21)), events(run(1.0, 3, 22)), delta)
    assert broken > eps


def test_gaussian_clipping_bounds_set_the_sensitivity_at_the_claimed_epsilon() -> None:
    eps, delta, n, lo, hi = 1.0, 1e-3, 200_000, 0.0, 3.0
    sigma = P.gaussian_sigma_analytic(eps, delta, hi - lo)
    thresholds = sigma * np.array([-3, -2, -1, 0, 1, 2, 3]) + (lo + hi) / 2

    def events(y: np.ndarray) -> np.ndarray:
        return np.stack([y < t for t in thresholds] + [y > t for t in thresholds])

    def run(x: float, seed: int) -> np.ndarray:
        return P.gaussian_mechanism(np.full(n, x), eps, delta, rng(seed), lower=lo, upper=hi)

    loss = max_privacy_loss_lower_bound(events(run(-10.0, 23)), events(run(10.0, 24)), delta)
    assert loss <= eps

    # The same check flags noise scaled for sensitivity 1 on this range of width 3.
    def broken(x: float, seed: int) -> np.ndarray:
        return P.gaussian_mechanism(np.clip(np.full(n, x), lo, hi), eps, delta, rng(seed), 1.0)

    assert max_privacy_loss_lower_bound(events(broken(lo, 23)), events(broken(hi, 24)), delta) > eps
    with pytest.raises(ValueError, match=r"^l2_sensitivity must be at least upper - lower = 3\b"):
        P.gaussian_mechanism(0.0, eps, delta, rng(), 1.0, lower=lo, upper=hi)


# --------------------------------------------------------------------------------------------
# Planar Laplace
# --------------------------------------------------------------------------------------------


def test_planar_laplace_radius_cdf_formula() -> None:
    eps = 0.02
    r = np.array([0.0, 1.0, 50.0, 100.0, 1000.0, np.inf])
    expected = 1 - (1 + eps * r[:-1]) * np.exp(-eps * r[:-1])
    np.testing.assert_allclose(P.planar_laplace_radius_cdf(r, eps)[:-1], expected, rtol=1e-12)
    assert P.planar_laplace_radius_cdf(np.inf, eps) == 1.0


@pytest.mark.parametrize("method", ["gamma", "lambertw"])
def test_planar_laplace_radius_and_angle_laws(method: str) -> None:
    eps, n = 0.01, 50_000
    xy = np.tile([[250.0, -40.0]], (n, 1))
    out = P.planar_laplace(xy, eps, rng(30), method=method)
    assert out.shape == xy.shape
    d = out - xy
    radii = np.hypot(d[:, 0], d[:, 1])
    angles = np.mod(np.arctan2(d[:, 1], d[:, 0]), 2 * np.pi)
    assert stats.kstest(radii, lambda r: P.planar_laplace_radius_cdf(r, eps)).pvalue > ALPHA
    assert stats.kstest(radii, lambda r: P.planar_laplace_radius_cdf(r, 1.1 * eps)).pvalue < ALPHA
    assert stats.kstest(angles, stats.uniform(0, 2 * np.pi).cdf).pvalue > ALPHA
    assert radii.mean() == pytest.approx(2 / eps, rel=0.02)
    # Each Cartesian component has variance 3 / eps^2.
    np.testing.assert_allclose(d.var(axis=0), 3 / eps**2, rtol=0.03)


def test_planar_laplace_samplers_agree() -> None:
    eps, n = 0.5, 20_000
    xy = np.zeros((n, 2))
    r_gamma = np.hypot(*P.planar_laplace(xy, eps, rng(31), method="gamma").T)
    r_lambert = np.hypot(*P.planar_laplace(xy, eps, rng(32), method="lambertw").T)
    assert stats.ks_2samp(r_gamma, r_lambert).pvalue > ALPHA


def test_planar_laplace_uses_each_points_own_coordinates() -> None:
    # Pitfall from public code: building both output coordinates from x0's first coordinate.
    eps, n = 0.05, 20_000
    xy = np.array([[1000.0, -5000.0], [-3000.0, 7000.0]])
    out = P.planar_laplace(np.broadcast_to(xy, (n, 2, 2)), eps, rng(33))
    assert out.shape == (n, 2, 2)
    se = math.sqrt(3 / eps**2 / n)
    np.testing.assert_allclose(out.mean(axis=0), xy, atol=5 * se)
    np.testing.assert_array_equal(out, P.planar_laplace(np.broadcast_to(xy, (n, 2, 2)), eps, rng(33)))


def test_planar_laplace_empirical_geo_indistinguishability() -> None:
    eps, dist, n = 0.01, 100.0, 200_000  # privacy level eps * dist = 1 between the two points
    x0, x1 = np.zeros(2), np.array([dist, 0.0])
    grid = np.array([-300.0, -200.0, -100.0, 0.0, 100.0, 200.0, 300.0, 400.0])

    def events(z: np.ndarray) -> np.ndarray:
        half_planes = [z[:, 0] < t for t in grid] + [z[:, 0] > t for t in grid]
        cells = [
            (np.abs(z[:, 0] - cx) < 50) & (np.abs(z[:, 1] - cy) < 50)
            for cx in (-200.0, -100.0, 50.0, 200.0, 300.0)
            for cy in (-100.0, 0.0, 100.0)
        ]
        return np.stack(half_planes + cells)

    def run(x: np.ndarray, epsilon: float, seed: int) -> np.ndarray:
        return P.planar_laplace(np.tile(x, (n, 1)), epsilon, rng(seed))

    loss = max_privacy_loss_lower_bound(events(run(x0, eps, 34)), events(run(x1, eps, 35)))
    assert loss <= eps * dist
    broken = max_privacy_loss_lower_bound(events(run(x0, 2 * eps, 34)), events(run(x1, 2 * eps, 35)))
    assert broken > eps * dist


def test_planar_laplace_radius_quantile_lambertw_edge_cases() -> None:
    eps = 0.25
    # The float -1/e lies just outside the domain of W_{-1}; p == 0 must still give r == 0.
    np.testing.assert_array_equal(P.planar_laplace_radius_quantile([0.0, 1e-17], eps), [0.0, 0.0])
    p = np.array([1e-6, 0.01, 0.3, 0.5, 0.9, 0.999999])
    radii = P.planar_laplace_radius_quantile(p, eps)
    np.testing.assert_allclose(P.planar_laplace_radius_cdf(radii, eps), p, rtol=1e-9)
    np.testing.assert_allclose(radii, special.gammaincinv(2.0, p) / eps, rtol=1e-8)
    # The principal branch W_0 would give a non-positive radius that does not invert the CDF.
    principal = -(special.lambertw((p - 1) / np.e, k=0).real + 1) / eps
    assert np.all(principal <= 0)
    assert not np.allclose(P.planar_laplace_radius_cdf(np.abs(principal), eps), p, rtol=1e-3)


def test_planar_laplace_lambertw_radius_bound_and_tail_are_as_documented() -> None:
    eps = 0.25
    largest_uniform = np.nextafter(1.0, 0.0)  # 1 - 2**-53: Generator.random never returns more
    bound = P.planar_laplace_radius_quantile(largest_uniform, eps)
    assert bound == pytest.approx(40.46 / eps, rel=1e-3)
    for eps_d, documented in ((15.0, 2.3e-10), (25.0, 3.2e-6)):  # the module docstring's figures
        tail = 1.0 - P.planar_laplace_radius_cdf(bound - eps_d / eps, eps)
        assert tail == pytest.approx(documented, rel=0.02)


def test_planar_laplace_lambertw_sampler_handles_p_zero() -> None:
    class ZeroFirst(np.random.Generator):
        """A Generator whose uniform draws are all 0.0, the value that makes W_{-1} NaN."""

        def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
            return np.zeros(size)

    zero_rng = ZeroFirst(np.random.PCG64(0))
    out = P.planar_laplace(np.array([[3.0, 4.0]]), 1.0, zero_rng, method="lambertw")
    np.testing.assert_array_equal(out, [[3.0, 4.0]])


def bearing_rad(lat0: float, lon0: float, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Initial great-circle bearing from (lat0, lon0) to each point, clockwise from north, in [0, 2 pi)."""
    p1, p2, dl = math.radians(lat0), np.radians(lat), np.radians(lon - lon0)
    y = np.sin(dl) * np.cos(p2)
    x = math.cos(p1) * np.sin(p2) - math.sin(p1) * np.cos(p2) * np.cos(dl)
    return np.mod(np.arctan2(y, x), 2 * np.pi)


@pytest.mark.parametrize("method", ["gamma", "lambertw"])
def test_planar_laplace_latlon_distance_and_direction_laws(method: str) -> None:
    eps_km, n = math.log(4) / 0.2, 20_000  # ln 4 privacy within 200 m
    eps_m = eps_km / 1000
    for lat0, lon0 in [(48.8566, 2.3522), (-33.9, 151.2), (60.0, -179.999), (89.9999, 10.0), (-90.0, 0.0)]:
        lat, lon = P.planar_laplace_latlon(np.full(n, lat0), lon0, eps_km, rng(40), method=method)
        assert lat.shape == lon.shape == (n,)
        assert np.all((lon >= -180) & (lon < 180)) and np.all(np.abs(lat) <= 90)
        dist = P.haversine_m(lat0, lon0, lat, lon)
        se = math.sqrt(2) / eps_m / math.sqrt(n)
        assert abs(dist.mean() - 2 / eps_m) < 4 * se
        assert stats.kstest(dist, lambda r: P.spherical_laplace_radius_cdf(r, eps_m)).pvalue > ALPHA
        wrong = stats.kstest(dist, lambda r: P.spherical_laplace_radius_cdf(r, 1.1 * eps_m))
        assert wrong.pvalue < ALPHA
        if abs(lat0) < 89.0:  # the bearing from a pole is not defined by lat/lon
            bearings = bearing_rad(lat0, lon0, lat, lon)
            assert stats.kstest(bearings, stats.uniform(0, 2 * np.pi).cdf).pvalue > ALPHA


@pytest.mark.parametrize("eps_km", [3e-4, 1e-4])
def test_planar_laplace_latlon_radius_follows_the_spherical_law_at_global_scale(eps_km: float) -> None:
    # Mean displacements of thousands of km: the planar Gamma(2) law would overshoot the antipode.
    n = 20_000
    lat, lon = P.planar_laplace_latlon(np.full(n, 10.0), 20.0, eps_km, rng(42))
    dist = P.haversine_m(10.0, 20.0, lat, lon)
    eps_m = eps_km / 1000
    assert stats.kstest(dist, lambda r: P.spherical_laplace_radius_cdf(r, eps_m)).pvalue > ALPHA
    assert stats.kstest(dist, lambda r: P.planar_laplace_radius_cdf(r, eps_m)).pvalue < ALPHA
    p = np.array([0.0, 1e-6, 0.3, 0.9, 1.0])
    radii = P.spherical_laplace_radius_quantile(p, eps_m)
    np.testing.assert_allclose(P.spherical_laplace_radius_cdf(radii, eps_m), p, atol=1e-12)
    assert radii[-1] == pytest.approx(math.pi * P.EARTH_RADIUS_M)


def test_spherical_radius_law_is_the_planar_one_at_small_scale() -> None:
    eps_m = 1e-3
    r = np.array([10.0, 500.0, 2000.0, 10_000.0])
    np.testing.assert_allclose(
        P.spherical_laplace_radius_cdf(r, eps_m), P.planar_laplace_radius_cdf(r, eps_m), rtol=1e-6
    )


def test_planar_laplace_latlon_steps_along_great_circles() -> None:
    from bandit_envs.privacy.planar_laplace import _destination

    quarter = math.pi / 2 * P.EARTH_RADIUS_M
    one = np.ones(1)
    lat, lon = _destination(0 * one, 0 * one, quarter * one, (math.pi / 2) * one)  # north
    assert lat[0] == pytest.approx(90.0)
    lat, lon = _destination(0 * one, 0 * one, quarter * one, 0 * one)  # east
    assert (lat[0], lon[0]) == pytest.approx((0.0, 90.0))
    lat, lon = _destination(50 * one, 170 * one, 2 * quarter * one, 1.0 * one)  # to the antipode
    assert (lat[0], lon[0]) == pytest.approx((-50.0, -10.0))
    start = np.array([89.99, -30.0, 0.0, 90.0])
    lon0 = np.array([10.0, 179.9, -179.9, 0.0])
    radii = np.array([5_000.0, 123.0, 1e6, 2e6])
    lat, lon = _destination(start, lon0, radii, np.array([0.3, 2.0, 4.0, 5.5]))
    np.testing.assert_allclose(P.haversine_m(start, lon0, lat, lon), radii, rtol=1e-9)


def aeqd_km(lat0: float, lon0: float, lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Azimuthal equidistant coordinates (km) about (lat0, lon0): east and north components."""
    rho = P.haversine_m(lat0, lon0, lat, lon) / 1000
    b = bearing_rad(lat0, lon0, lat, lon)
    return rho * np.sin(b), rho * np.cos(b)


@pytest.mark.parametrize(
    ("x", "x_prime"),
    [((89.99, 0.0), (89.98, 0.0)), ((0.0, 0.0), (0.01, 0.0))],
    ids=["near the pole", "at the equator"],
)
def test_planar_laplace_latlon_empirical_geo_indistinguishability(
    x: tuple[float, float], x_prime: tuple[float, float]
) -> None:
    # 1.11 km apart: the privacy level eps * d is 1.11 at eps = 1 per km, anywhere on the sphere.
    # n = 100,000 per point in the fast tier (400,000 under the thorough profile, CI): the bound
    # exceeds eps * d for a correct mechanism with probability at most ALPHA; at 100,000 a mechanism
    # spending 1.5 times the claimed epsilon gives bounds of 1.34 or more (20 of 20 seed pairs, both
    # points), twice the claimed epsilon 1.77 or more.
    eps, n = 1.0, 400_000 if thorough() else 100_000
    dist = float(P.haversine_m(*x, *x_prime)) / 1000
    edges = np.arange(-8.0, 8.25, 0.5) / eps

    def events(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        east, north = aeqd_km(*x, lat, lon)
        cell_e, cell_n = np.digitize(east, edges), np.digitize(north, edges)
        cells = cell_e * (len(edges) + 1) + cell_n
        counts = np.bincount(cells, minlength=(len(edges) + 1) ** 2)
        return np.stack([cells == c for c in np.flatnonzero(counts > 50)])

    def run(point: tuple[float, float], epsilon: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
        return P.planar_laplace_latlon(np.full(n, point[0]), point[1], epsilon, rng(seed))

    def loss(epsilon: float) -> float:
        a, b = run(x, epsilon, 43), run(x_prime, epsilon, 44)
        both = events(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]))
        return max_privacy_loss_lower_bound(both[:, :n], both[:, n:])

    assert loss(eps) <= eps * dist
    # The same check flags a mechanism that spends twice the claimed epsilon.
    assert loss(2 * eps) > eps * dist


def test_planar_laplace_latlon_broadcasts_and_methods() -> None:
    lat, lon = P.planar_laplace_latlon([10.0, 20.0, 30.0], 5.0, 2.0, rng(41), method="lambertw")
    assert lat.shape == lon.shape == (3,)
    assert np.all(P.haversine_m([10.0, 20.0, 30.0], 5.0, lat, lon) < 20_000)


def test_haversine_known_values() -> None:
    quarter = math.pi / 2 * P.EARTH_RADIUS_M
    assert P.haversine_m(0.0, 0.0, 0.0, 90.0) == pytest.approx(quarter, rel=1e-12)
    assert P.haversine_m(0.0, 0.0, 90.0, 0.0) == pytest.approx(quarter, rel=1e-12)
    assert P.haversine_m(10.0, 20.0, 11.0, 20.0) == pytest.approx(P.EARTH_RADIUS_M * math.pi / 180)
    assert P.haversine_m(45.0, 179.5, 45.0, -179.5) == pytest.approx(P.haversine_m(45.0, -0.5, 45.0, 0.5), rel=1e-12)
    assert P.haversine_m(51.5, -0.1, 51.5, -0.1) == 0.0
    d = P.haversine_m([0.0, 60.0], [0.0, 0.0], [0.0, 60.0], [1.0, 1.0])
    assert d.shape == (2,) and d[1] == pytest.approx(d[0] / 2, rel=1e-4)


# --------------------------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------------------------

G = rng()

INVALID: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("eps zero", lambda: P.randomized_response([0, 1], 0.0, G), ValueError, "epsilon"),
    ("eps negative", lambda: P.randomized_response([0, 1], -1.0, G), ValueError, "epsilon"),
    ("eps nan", lambda: P.randomized_response([0, 1], math.nan, G), ValueError, "epsilon"),
    ("eps inf", lambda: P.randomized_response([0, 1], math.inf, G), ValueError, "epsilon"),
    ("eps str", lambda: P.randomized_response([0, 1], "1", G), TypeError, "epsilon"),
    ("eps bool", lambda: P.randomized_response([0, 1], True, G), TypeError, "epsilon"),
    ("bits 2", lambda: P.randomized_response([0, 2], 1.0, G), ValueError, "bits"),
    ("bits 0.5", lambda: P.randomized_response([0.5], 1.0, G), ValueError, "bits"),
    ("bits nan", lambda: P.randomized_response([math.nan], 1.0, G), ValueError, "bits"),
    ("bits str", lambda: P.randomized_response(["a"], 1.0, G), TypeError, "bits"),
    ("rng seed", lambda: P.randomized_response([0, 1], 1.0, 0), TypeError, "rng"),
    (
        "rng legacy",
        lambda: P.laplace_mechanism(0.0, 1.0, np.random.RandomState(0)),
        TypeError,
        "rng",
    ),
    ("debias eps", lambda: P.rr_debias([0, 1], 0.0), ValueError, "epsilon"),
    ("debias reports", lambda: P.rr_debias([0, 2], 1.0), ValueError, "reports"),
    ("r above", lambda: P.bernoulli_mechanism([1.1], 1.0, G), ValueError, "r"),
    ("r below", lambda: P.bernoulli_mechanism([-0.1], 1.0, G), ValueError, "r"),
    ("r nan", lambda: P.bernoulli_mechanism([math.nan], 1.0, G), ValueError, "r"),
    ("bern eps", lambda: P.bernoulli_mechanism([0.5], -2.0, G), ValueError, "epsilon"),
    ("lap eps", lambda: P.laplace_mechanism(0.0, 0.0, G), ValueError, "epsilon"),
    (
        "lap sens 0",
        lambda: P.laplace_mechanism(0.0, 1.0, G, sensitivity=0.0),
        ValueError,
        "sensitivity",
    ),
    (
        "lap sens -1",
        lambda: P.laplace_mechanism(0.0, 1.0, G, sensitivity=-1.0),
        ValueError,
        "sensitivity",
    ),
    ("lap x nan", lambda: P.laplace_mechanism([math.nan], 1.0, G), ValueError, "x"),
    ("lap x str", lambda: P.laplace_mechanism(["a"], 1.0, G), TypeError, "x"),
    ("lap one bound", lambda: P.laplace_mechanism(0.0, 1.0, G, lower=0.0), ValueError, "lower"),
    (
        "lap bounds order",
        lambda: P.laplace_mechanism(0.0, 1.0, G, lower=1.0, upper=0.0),
        ValueError,
        "upper",
    ),
    (
        "lap bound nan",
        lambda: P.laplace_mechanism(0.0, 1.0, G, lower=math.nan, upper=1.0),
        ValueError,
        "lower",
    ),
    ("delta 0", lambda: P.gaussian_sigma_analytic(1.0, 0.0), ValueError, "delta"),
    ("delta 1", lambda: P.gaussian_sigma_analytic(1.0, 1.0), ValueError, "delta"),
    ("delta 1.5", lambda: P.gaussian_sigma_classic(0.5, 1.5), ValueError, "delta"),
    ("delta neg", lambda: P.gaussian_mechanism(0.0, 1.0, -1e-5, G), ValueError, "delta"),
    ("gauss eps", lambda: P.gaussian_sigma_analytic(0.0, 1e-5), ValueError, "epsilon"),
    ("classic eps", lambda: P.gaussian_sigma_classic(-0.5, 1e-5), ValueError, "epsilon"),
    ("l2 sens", lambda: P.gaussian_sigma_analytic(1.0, 1e-5, 0.0), ValueError, "l2_sensitivity"),
    (
        "l2 sens classic",
        lambda: P.gaussian_sigma_classic(0.5, 1e-5, -1.0),
        ValueError,
        "l2_sensitivity",
    ),
    (
        "gauss method",
        lambda: P.gaussian_mechanism(0.0, 1.0, 1e-5, G, method="rdp"),
        ValueError,
        "method",
    ),
    ("gauss x", lambda: P.gaussian_mechanism([math.inf], 1.0, 1e-5, G), ValueError, "x"),
    ("delta sigma", lambda: P.gaussian_delta(0.0, 1.0), ValueError, "sigma"),
    ("planar eps", lambda: P.planar_laplace([0.0, 0.0], 0.0, G), ValueError, "epsilon_per_m"),
    ("planar shape", lambda: P.planar_laplace([0.0, 0.0, 0.0], 1.0, G), ValueError, "xy"),
    ("planar scalar", lambda: P.planar_laplace(0.0, 1.0, G), ValueError, "xy"),
    (
        "planar method",
        lambda: P.planar_laplace([0.0, 0.0], 1.0, G, method="exp"),
        ValueError,
        "method",
    ),
    (
        "latlon eps",
        lambda: P.planar_laplace_latlon(0.0, 0.0, math.nan, G),
        ValueError,
        "epsilon_per_km",
    ),
    ("latlon lat", lambda: P.planar_laplace_latlon(91.0, 0.0, 1.0, G), ValueError, "lat"),
    ("latlon lat neg", lambda: P.planar_laplace_latlon(-90.5, 0.0, 1.0, G), ValueError, "lat"),
    ("sphere cdf r", lambda: P.spherical_laplace_radius_cdf(-1.0, 1.0), ValueError, "r"),
    ("sphere quantile p", lambda: P.spherical_laplace_radius_quantile(1.5, 1.0), ValueError, "p"),
    ("sphere quantile eps", lambda: P.spherical_laplace_radius_quantile(0.5, 0.0), ValueError, "epsilon_per_m"),
    ("latlon lon", lambda: P.planar_laplace_latlon(0.0, 181.0, 1.0, G), ValueError, "lon"),
    (
        "latlon shapes",
        lambda: P.planar_laplace_latlon([0.0, 1.0], [0.0, 1.0, 2.0], 1.0, G),
        ValueError,
        "lat",
    ),
    (
        "latlon method",
        lambda: P.planar_laplace_latlon(0.0, 0.0, 1.0, G, method="x"),
        ValueError,
        "method",
    ),
    ("cdf eps", lambda: P.planar_laplace_radius_cdf(1.0, -1.0), ValueError, "epsilon_per_m"),
    ("cdf r", lambda: P.planar_laplace_radius_cdf(-1.0, 1.0), ValueError, "r"),
    ("quantile p", lambda: P.planar_laplace_radius_quantile(1.0, 1.0), ValueError, "p"),
    ("quantile p neg", lambda: P.planar_laplace_radius_quantile(-0.1, 1.0), ValueError, "p"),
    ("haversine lat1", lambda: P.haversine_m(100.0, 0.0, 0.0, 0.0), ValueError, "lat1"),
    ("haversine lat2", lambda: P.haversine_m(0.0, 0.0, -100.0, 0.0), ValueError, "lat2"),
    ("haversine lon2", lambda: P.haversine_m(0.0, 0.0, 0.0, math.nan), ValueError, "lon2"),
]


@pytest.mark.parametrize(("call", "error", "name"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_arguments_raise_naming_the_argument(
    call: Callable[[], Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=rf"^{name}\b"):
        call()


def test_complex_values_are_refused_not_cast() -> None:
    with pytest.raises(TypeError, match="^x must be an array of real numbers, got complex numbers"):
        P.gaussian_mechanism(np.array([0.5 + 0j, 0.25]), 1.0, 1e-5, np.random.default_rng(0), 1.0)


def test_privacy_arguments_quote_a_huge_value_by_a_short_prefix() -> None:
    from bandit_envs.privacy.accounting import ReportMechanism, report_cap
    from bandit_envs.privacy.counters import BinaryTreeCounter

    big = "9" * 100_000
    calls = [
        lambda: BinaryTreeCounter(10, 1.0, np.random.default_rng(0), bounds=big),
        lambda: report_cap(ReportMechanism.laplace(1.0), None, big),
        lambda: report_cap(ReportMechanism.laplace(1.0), 2, big),
    ]
    for call in calls:
        with pytest.raises((TypeError, ValueError)) as error:
            call()
        msg = str(error.value)
        assert len(msg) < 300 and "(100000 characters)" in msg, f"{len(msg)} characters: {msg[:300]}"
