"""The Gaussian mechanism on real arrays ((epsilon, delta)-DP for a stated L2 sensitivity).

- :func:`gaussian_mechanism` adds i.i.d. ``N(0, sigma^2)`` noise to every entry.
- :func:`gaussian_sigma_classic`: ``sigma = D sqrt(2 ln(1.25 / delta)) / epsilon``,
  ``D`` the L2 sensitivity ([DR14]_ Thm. 3.22, App. A); proven only for epsilon in (0, 1), so
  larger epsilon is rejected.
- :func:`gaussian_sigma_analytic`: the smallest ``sigma`` that is (epsilon, delta)-DP, the
  analytic Gaussian mechanism of Balle & Wang [BW18]_ (Thm. 8, Alg. 1), valid for every
  epsilon > 0.
- :func:`gaussian_delta`: the exact privacy curve, i.e. the smallest delta for which a given
  ``sigma`` is (epsilon, delta)-DP ([BW18]_ Thm. 8).

Guarantee: (epsilon, delta)-DP per release of the whole array ``x``, for the neighbouring
relation "``x`` and ``x'`` differ by at most ``l2_sensitivity`` in L2 norm over the whole
array". In the local model, where ``x`` is one user's clipped report and ``l2_sensitivity``
bounds the L2 distance between any two users' reports, each report is (epsilon, delta)-LDP.
With clipping bounds ``[lower, upper]`` on each entry the sensitivity follows from them: one
clipped entry moves by at most ``upper - lower``, the default ``l2_sensitivity`` then, and a
smaller explicit one is refused (a user with ``d`` entries needs ``sqrt(d) * (upper - lower)``).

Noise: one ``rng.normal`` draw per entry from the ``numpy.random.Generator`` passed as ``rng``.
With the default ``sampler="lattice"`` (:mod:`bandit_envs.privacy.lattice`) the entries are
rounded to a power-of-two grid ``g`` (:func:`~bandit_envs.privacy.lattice.grid_step` of the
nominal ``sigma`` over ``sqrt(n)``), ``sigma`` is calibrated to the widened L2 sensitivity
``l2_sensitivity + sqrt(n) g``, the noise is rounded to the same grid, and every output is a
multiple of ``g`` whatever ``x`` is: (epsilon, delta + delta_s)-DP, ``delta_s`` the **sampler
tail event**: numpy's normal draw stays below about ``12.23 sigma``, so the output lands where
a neighbour's cannot with probability ``delta_s = Phi(D / sigma - 12.23)`` (``D`` the L2
sensitivity; at most ``1.5e-7`` for delta <= 0.9 and ``5.4e-15`` for delta <= 0.1 at the
largest allowed epsilon, 15; :mod:`bandit_envs.privacy.lattice`). Larger epsilon is refused. ``sampler="float"`` returns
``x + rng.normal(0, sigma)``, whose low-order bits depend on ``x`` [M12]_: faster, **not safe
against floating-point attacks**.

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018.
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr

from bandit_envs.privacy._checks import (
    check_delta,
    check_epsilon,
    check_positive,
    check_rng,
    clipped_sensitivity,
    finite_array,
)
from bandit_envs.privacy.lattice import check_sampler, grid_step, round_input, snap
from bandit_envs.validation import check_choice

__all__ = [
    "GAUSSIAN_METHODS",
    "gaussian_delta",
    "gaussian_mechanism",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
]

GAUSSIAN_METHODS = ("analytic", "classic")
"""Calibrations of ``sigma`` accepted by :func:`gaussian_mechanism`."""


def _log_gaussian_delta(sigma: float, epsilon: float, l2_sensitivity: float) -> float:
    """Return ``log delta(epsilon)`` of the Gaussian mechanism, stable in the tails."""
    ratio = l2_sensitivity / sigma
    log_phi_plus = float(log_ndtr(ratio / 2.0 - epsilon / ratio))
    log_phi_minus = float(log_ndtr(-ratio / 2.0 - epsilon / ratio))
    # delta = Phi_+ - e^eps Phi_- = Phi_+ (1 - exp(gap)); gap < 0 in exact arithmetic.
    gap = epsilon + log_phi_minus - log_phi_plus
    if gap >= 0.0:
        return -math.inf
    return log_phi_plus + math.log(-math.expm1(gap))


def gaussian_delta(sigma: float, epsilon: float, l2_sensitivity: float = 1.0) -> float:
    """Exact delta at which Gaussian noise of standard deviation ``sigma`` is (epsilon, delta)-DP.

    Returns ``Phi(D / (2 s) - eps s / D) - e^eps Phi(-D / (2 s) - eps s / D)`` with
    ``s = sigma`` and ``D = l2_sensitivity`` ([BW18]_, Thm. 8): the smallest delta for which
    adding N(0, sigma^2) noise to each coordinate of a query with L2 sensitivity ``D`` is
    (epsilon, delta)-DP. It decreases in ``sigma``. Computed in log space with
    ``scipy.special.log_ndtr`` so that tiny deltas do not cancel to 0.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    epsilon : float
        Privacy parameter, > 0 (any size).
    l2_sensitivity : float, default 1.0
        L2 sensitivity of the query, > 0.

    Returns
    -------
    float
        delta in [0, 1).

    Raises
    ------
    ValueError
        If an argument is not a finite positive number.
    TypeError
        If an argument is not a real number.
    """
    s = check_positive("sigma", sigma)
    eps = check_positive("epsilon", epsilon)  # a point of the curve: no release at this epsilon
    d2 = check_positive("l2_sensitivity", l2_sensitivity)
    return math.exp(_log_gaussian_delta(s, eps, d2))


def gaussian_sigma_classic(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Classic Gaussian noise scale ``l2_sensitivity * sqrt(2 ln(1.25 / delta)) / epsilon``.

    [DR14]_ Thm. 3.22 (proof in App. A, Thm. A.1). The guarantee is (epsilon, delta)-DP for
    queries of the given L2 sensitivity, and it is proven **only for epsilon in (0, 1)**, so
    larger epsilon is rejected; use :func:`gaussian_sigma_analytic` there. For epsilon < 1 the
    analytic scale is strictly smaller, so this one is valid but wasteful.

    Parameters, return value and errors are those of :func:`gaussian_sigma_analytic`, except that
    ``epsilon`` must be in (0, 1).
    """
    eps = check_epsilon("epsilon", epsilon)
    if eps >= 1.0:
        raise ValueError(
            f"epsilon must be in (0, 1) for the classic Gaussian mechanism (Dwork & Roth 2014, "
            f"Thm. 3.22), got {epsilon!r}; use gaussian_sigma_analytic for epsilon >= 1."
        )
    dlt = check_delta(delta)
    d2 = check_positive("l2_sensitivity", l2_sensitivity)
    return d2 * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def gaussian_sigma_analytic(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Smallest Gaussian noise scale that is (epsilon, delta)-DP: the analytic Gaussian mechanism.

    Balle & Wang [BW18]_ (Thm. 8, Alg. 1): the smallest ``sigma`` with
    ``Phi(D / (2 sigma) - eps sigma / D) - e^eps Phi(-D / (2 sigma) - eps sigma / D) <= delta``,
    ``D = l2_sensitivity``. The condition is necessary and sufficient, so
    this is exact for every epsilon > 0, unlike :func:`gaussian_sigma_classic`. The left-hand
    side (:func:`gaussian_delta`) is decreasing in ``sigma``; the root is found by Brent's
    method on ``log sigma`` with ``log delta`` evaluated via ``scipy.special.log_ndtr``, then
    rounded up by about 1e-12 relative so the condition holds despite the root-finding
    tolerance.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).
    l2_sensitivity : float, default 1.0
        L2 sensitivity of the query, > 0.

    Returns
    -------
    float
        The noise standard deviation.

    Raises
    ------
    ValueError
        If ``epsilon`` <= 0, ``delta`` not in (0, 1) or ``l2_sensitivity`` <= 0.
    TypeError
        If an argument is not a real number.
    """
    eps = check_positive("epsilon", epsilon)  # a calibration: gaussian_mechanism checks its epsilon
    dlt = check_delta(delta)
    d2 = check_positive("l2_sensitivity", l2_sensitivity)
    target = math.log(dlt)

    def excess(log_sigma: float) -> float:
        return _log_gaussian_delta(math.exp(log_sigma), eps, d2) - target

    # Bracket the root around the classic formula's value by doubling/halving sigma.
    start = math.log(d2 * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps)
    lo = hi = start
    for _ in range(2000):
        if excess(lo) > 0.0:
            break
        lo -= math.log(2.0)
    for _ in range(2000):
        if excess(hi) <= 0.0:
            break
        hi += math.log(2.0)
    xtol, rtol = 1e-14, 4.0 * np.finfo(float).eps
    from scipy.optimize import brentq  # imported when used: scipy.optimize is slow to import

    root = float(brentq(excess, lo, hi, xtol=xtol, rtol=rtol, maxiter=500))
    return math.exp(root + 2.0 * (xtol + rtol * abs(root)))


def gaussian_mechanism(
    x: ArrayLike,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    l2_sensitivity: float | None = None,
    method: str = "analytic",
    *,
    lower: float | None = None,
    upper: float | None = None,
    sampler: str = "lattice",
) -> NDArray[np.float64]:
    """Add i.i.d. N(0, sigma^2) noise to every entry of ``x``, sigma calibrated to (epsilon, delta).

    Privacy guarantee: (epsilon, delta)-DP for the neighbouring relation "``x`` and ``x'``
    differ by at most ``l2_sensitivity`` in L2 norm over the whole array". ``sigma`` comes from
    :func:`gaussian_sigma_analytic` (Balle & Wang [BW18]_, any epsilon in (0, 15]; the default) or
    :func:`gaussian_sigma_classic` ([DR14]_ Thm. 3.22, epsilon in (0, 1) only). One
    ``rng.normal`` draw per entry.

    Sampler: with ``sampler="lattice"`` (default) ``x`` is rounded to the grid
    ``g = grid_step(sigma_0, sqrt(n))`` (``sigma_0`` the calibration at ``l2_sensitivity``,
    ``n = x.size``), ``sigma`` is calibrated to the widened sensitivity
    ``l2_sensitivity + sqrt(n) g`` (rounding moves the L2 distance of two inputs by at most
    ``sqrt(n) g``), the noise ``N(0, sigma^2)`` is rounded to the grid, and the output is a
    multiple of ``g`` for every input (:mod:`bandit_envs.privacy.lattice`, after Canonne, Kamath
    & Steinke 2020): (epsilon, delta + delta_s)-DP, ``delta_s = Phi(l2_sensitivity / sigma -
    12.23)`` the probability that numpy's bounded normal draw lands where a neighbour's cannot
    (at most ``1.5e-7`` for delta <= 0.9 and ``5.4e-15`` for delta <= 0.1 at epsilon <= 15). ``sampler="float"``:
    ``x + N(0, sigma_0^2)``, the old behaviour, **not safe against floating-point attacks**
    ([M12]_).

    Clipping: when ``lower`` and ``upper`` are given, ``x`` is first clipped to
    ``[lower, upper]``. One clipped entry can then move by at most ``upper - lower``, so that
    width is the L2 sensitivity unless a larger one is passed (a user with ``d`` entries:
    ``sqrt(d) * (upper - lower)``); a smaller one is refused. With per-entry users (the local
    model) each report is then (epsilon, delta)-LDP, the unit being one entry. Without clipping
    the sensitivity defaults to 1 and the guarantee holds only if the caller ensures that bound.

    Parameters
    ----------
    x : array_like of float
        Exact values (finite).
    epsilon : float
        Privacy parameter, in (0, 15] (``MAX_EPSILON``; < 1 for ``method="classic"``).
    delta : float
        Privacy parameter, in (0, 1).
    rng : numpy.random.Generator
        Source of the noise.
    l2_sensitivity : float or None, default None
        L2 sensitivity of ``x``, > 0. None: ``upper - lower`` with clipping bounds, else 1.0.
        With bounds, an explicit value must be at least ``upper - lower``.
    method : {"analytic", "classic"}, default "analytic"
        Calibration of ``sigma``.
    lower, upper : float or None, default None
        Clipping bounds, both given (``lower < upper``) or both None.
    sampler : {"lattice", "float"}, default "lattice"
        ``"lattice"``: outputs on a power-of-two grid, safe against floating-point attacks;
        ``"float"``: raw floating-point noise, not safe against them.

    Returns
    -------
    numpy.ndarray of float64
        Noisy values, same shape as ``x``.

    Raises
    ------
    ValueError
        If a privacy parameter or the sensitivity is out of range, ``x`` is not finite,
        ``method`` is unknown, only one bound is given, ``lower >= upper``, or
        ``l2_sensitivity < upper - lower``, (no ``l2_sensitivity``) ``upper - lower`` is outside
        [1e-100, 1e100], the range of an explicit sensitivity, ``sampler`` is unknown, or
        (lattice) an entry is ``2**52`` grid steps or more.
    TypeError
        If an argument has the wrong type.
    """
    values = finite_array("x", x)
    check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    check_choice("method", method, GAUSSIAN_METHODS)
    d2, bounds = clipped_sensitivity("l2_sensitivity", l2_sensitivity, lower, upper)
    if bounds is not None:
        values = np.clip(values, *bounds)
    check_sampler(sampler)
    calibrate = gaussian_sigma_analytic if method == "analytic" else gaussian_sigma_classic
    sigma = calibrate(epsilon, delta, d2)
    if sampler == "float":
        return values + gen.normal(0.0, sigma, size=values.shape)
    spread = math.sqrt(max(values.size, 1))
    grid = grid_step(sigma, spread)
    base = round_input("x", values, grid)
    wide = calibrate(epsilon, delta, d2 + spread * grid)
    return base + snap(gen.normal(0.0, wide, size=values.shape), grid)
