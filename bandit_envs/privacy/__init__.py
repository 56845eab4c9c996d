"""Differential-privacy mechanisms used by the privacy-aware environments and agents.

Every mechanism is a pure function of its inputs and a ``numpy.random.Generator`` passed in as
``rng`` (never the global ``np.random``), vectorized over numpy arrays: the noise for each entry
is drawn independently. One mechanism family per module; each module's docstring states its
guarantee (the privacy unit, epsilon and delta, per report) and where its noise comes from:

- :mod:`bandit_envs.privacy.randomized_response`: bits and bounded values,
  :func:`randomized_response`, :func:`rr_debias`, :func:`bernoulli_mechanism` (epsilon-LDP per
  report).
- :mod:`bandit_envs.privacy.laplace`: real vectors, :func:`laplace_mechanism` (epsilon-DP, L1
  sensitivity).
- :mod:`bandit_envs.privacy.gaussian`: real vectors, :func:`gaussian_mechanism`
  ((epsilon, delta)-DP, L2 sensitivity), with the noise scales :func:`gaussian_sigma_classic`,
  :func:`gaussian_sigma_analytic` and the exact privacy curve :func:`gaussian_delta`.
- :mod:`bandit_envs.privacy.planar_laplace`: locations, :func:`planar_laplace` and
  :func:`planar_laplace_latlon` (epsilon-geo-indistinguishability per point, in Euclidean and
  in great-circle distance), with :func:`planar_laplace_radius_cdf`,
  :func:`planar_laplace_radius_quantile` and their spherical counterparts
  :func:`spherical_laplace_radius_cdf`, :func:`spherical_laplace_radius_quantile`.
- :mod:`bandit_envs.privacy.counters`: continual release of running sums,
  :class:`~bandit_envs.privacy.counters.BinaryTreeCounter` and
  :class:`~bandit_envs.privacy.counters.HybridCounter` (epsilon-DP per stream, unit one item),
  with :func:`~bandit_envs.privacy.counters.laplace_sum_bound` for their noise (import them
  from that module).
- :mod:`bandit_envs.privacy.geodesy`: :data:`EARTH_RADIUS_M` and :func:`haversine_m`
  (no randomness).
- :mod:`bandit_envs.privacy.accounting`: what a user who sends several reports loses:
  :class:`~bandit_envs.privacy.accounting.ReportMechanism`, basic and tight (``dp_accounting``
  privacy loss distribution) composition, per-user budgets and the
  :class:`~bandit_envs.privacy.accounting.ReportLedger` of reports per user (no randomness).

Argument checks shared by these modules live in the private ``bandit_envs.privacy._checks``.
Floating-point Laplace and Gaussian sampling leaks through the low-order bits of the output
(Mironov, "On significance of the least significant bits for differential privacy", CCS 2012);
that is acceptable for a research library, not for production (use a discrete or snapping
mechanism there).
"""

from bandit_envs.privacy.gaussian import GAUSSIAN_METHODS as GAUSSIAN_METHODS
from bandit_envs.privacy.gaussian import (
    gaussian_delta,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from bandit_envs.privacy.geodesy import EARTH_RADIUS_M, haversine_m
from bandit_envs.privacy.laplace import laplace_mechanism
from bandit_envs.privacy.planar_laplace import PLANAR_LAPLACE_METHODS as PLANAR_LAPLACE_METHODS
from bandit_envs.privacy.planar_laplace import (
    planar_laplace,
    planar_laplace_latlon,
    planar_laplace_radius_cdf,
    planar_laplace_radius_quantile,
    spherical_laplace_radius_cdf,
    spherical_laplace_radius_quantile,
)
from bandit_envs.privacy.randomized_response import bernoulli_mechanism, randomized_response, rr_debias

__all__ = [
    "EARTH_RADIUS_M",
    "bernoulli_mechanism",
    "gaussian_delta",
    "gaussian_mechanism",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "haversine_m",
    "laplace_mechanism",
    "planar_laplace",
    "planar_laplace_latlon",
    "planar_laplace_radius_cdf",
    "planar_laplace_radius_quantile",
    "randomized_response",
    "rr_debias",
    "spherical_laplace_radius_cdf",
    "spherical_laplace_radius_quantile",
]
