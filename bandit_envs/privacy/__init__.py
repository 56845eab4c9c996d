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
- :mod:`bandit_envs.privacy.l2_ball`: real vectors of a Euclidean ball,
  :func:`l2_ball_mechanism` (Duchi, Jordan & Wainwright's unbiased epsilon-LDP mechanism) and
  its output norm :func:`l2_ball_scale`.
- :mod:`bandit_envs.privacy.shuffle`: amplification by shuffling (Feldman, McMillan & Talwar's
  clones bound), :func:`shuffle_delta`, :func:`shuffle_epsilon`,
  :func:`local_epsilon_for_shuffle`, and :func:`group_privacy` (no randomness).
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

- :mod:`bandit_envs.privacy.lattice`: the lattice sampler the Laplace and Gaussian mechanisms,
  the counters and the private agents use by default (``sampler="lattice"``): value and noise
  rounded to one power-of-two grid, sensitivity widened by the rounding, every output a multiple
  of the grid whatever the input. Raw floating-point noise leaks through the low-order bits of
  the output (Mironov, "On significance of the least significant bits for differential
  privacy", CCS 2012); ``sampler="float"`` keeps it, faster and not safe against that attack.

Argument checks shared by these modules live in the private ``bandit_envs.privacy._checks``.
"""

from bandit_envs.privacy._checks import MAX_EPSILON as MAX_EPSILON
from bandit_envs.privacy.gaussian import GAUSSIAN_METHODS as GAUSSIAN_METHODS
from bandit_envs.privacy.gaussian import (
    gaussian_delta,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from bandit_envs.privacy.geodesy import EARTH_RADIUS_M, haversine_m
from bandit_envs.privacy.l2_ball import l2_ball_keep_probability, l2_ball_mechanism, l2_ball_scale
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
from bandit_envs.privacy.shuffle import group_privacy, local_epsilon_for_shuffle, shuffle_delta, shuffle_epsilon

__all__ = [
    "EARTH_RADIUS_M",
    "MAX_EPSILON",
    "bernoulli_mechanism",
    "gaussian_delta",
    "gaussian_mechanism",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "group_privacy",
    "haversine_m",
    "l2_ball_keep_probability",
    "l2_ball_mechanism",
    "l2_ball_scale",
    "laplace_mechanism",
    "local_epsilon_for_shuffle",
    "planar_laplace",
    "planar_laplace_latlon",
    "planar_laplace_radius_cdf",
    "planar_laplace_radius_quantile",
    "randomized_response",
    "rr_debias",
    "shuffle_delta",
    "shuffle_epsilon",
    "spherical_laplace_radius_cdf",
    "spherical_laplace_radius_quantile",
]
