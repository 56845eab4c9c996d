"""Differential-privacy mechanisms used by the privacy-aware environments and agents.

Every mechanism is a pure function of its inputs and a ``numpy.random.Generator`` passed in as
``rng`` (never the global ``np.random``), vectorized over numpy arrays: the noise for each entry
is drawn independently.

- Bits and bounded values: :func:`randomized_response`, :func:`rr_debias`,
  :func:`bernoulli_mechanism` (epsilon-LDP).
- Real vectors: :func:`laplace_mechanism` (epsilon-DP, L1 sensitivity) and
  :func:`gaussian_mechanism` ((epsilon, delta)-DP, L2 sensitivity), with the noise scales
  :func:`gaussian_sigma_classic`, :func:`gaussian_sigma_analytic` and the exact privacy curve
  :func:`gaussian_delta`.
- Locations: :func:`planar_laplace` and :func:`planar_laplace_latlon` (epsilon-geo-
  indistinguishability), with :func:`planar_laplace_radius_cdf`,
  :func:`planar_laplace_radius_quantile` and :func:`haversine_m`.

The formulas and their pitfalls are in ALGORITHMS.md, section 7. Floating-point Laplace and
Gaussian sampling leaks through the low-order bits of the output [M12]_; that is acceptable for a
research library, not for production (use a discrete or snapping mechanism there).

References
----------
.. [W65] S. L. Warner, "Randomized response: a survey technique for eliminating evasive answer
   bias", Journal of the American Statistical Association 60(309), 1965.
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018.
.. [ABCP13] M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis and C. Palamidessi,
   "Geo-indistinguishability: differential privacy for location-based systems", CCS 2013
   (arXiv:1212.1984).
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq
from scipy.special import expit, gammainc, lambertw, log_ndtr

from bandit_envs.validation import check_choice, check_float, check_unit_array

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
]

EARTH_RADIUS_M = 6_371_008.8
"""Mean Earth radius in metres (IUGG), used by the lat/lon helpers."""

GAUSSIAN_METHODS = ("analytic", "classic")
PLANAR_LAPLACE_METHODS = ("gamma", "lambertw")


def _check_epsilon(name: str, value: Any) -> float:
    return check_float(name, value, low=0.0, low_open=True)


def _check_delta(value: Any) -> float:
    return check_float("delta", value, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got {type(rng).__name__}."
        )
    return rng


def _finite_array(name: str, value: Any) -> NDArray[np.float64]:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers, got {type(value).__name__}.") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers, but it has NaN or inf.")
    return arr


def _bit_array(name: str, value: Any) -> NDArray[np.int64]:
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of bits (0 or 1), got dtype {arr.dtype}.")
    if not np.all((arr == 0) | (arr == 1)):
        bad = arr[(arr != 0) & (arr != 1)].flat[0].item()
        raise ValueError(f"{name} must contain only the bits 0 and 1, got the value {bad!r}.")
    return arr.astype(np.int64)


def _latitude_array(name: str, value: Any, *, poles: bool) -> NDArray[np.float64]:
    arr = _finite_array(name, value)
    if arr.size == 0:
        return arr
    lo, hi = float(arr.min()), float(arr.max())
    if poles and (lo < -90.0 or hi > 90.0):
        raise ValueError(f"{name} must contain latitudes in degrees within [-90, 90], got values in [{lo:g}, {hi:g}].")
    if not poles and (lo <= -90.0 or hi >= 90.0):
        raise ValueError(
            f"{name} must contain latitudes in degrees strictly between -90 and 90 (the local "
            f"east-north frame is undefined at the poles), got values in [{lo:g}, {hi:g}]."
        )
    return arr


def _longitude_array(name: str, value: Any) -> NDArray[np.float64]:
    arr = _finite_array(name, value)
    if arr.size and (arr.min() < -180.0 or arr.max() > 180.0):
        raise ValueError(
            f"{name} must contain longitudes in degrees within [-180, 180], "
            f"got values in [{arr.min():g}, {arr.max():g}]."
        )
    return arr


# --------------------------------------------------------------------------------------------
# Randomized response (bits and values in [0, 1])
# --------------------------------------------------------------------------------------------


def randomized_response(bits: ArrayLike, epsilon: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report each bit truthfully with probability ``e^eps / (1 + e^eps)``, else flip it.

    Warner's randomized response [W65]_, in the form of [DR14]_ section 3.2 (ALGORITHMS.md 7.1).

    Privacy guarantee: epsilon-local DP per bit. The privacy unit is one entry of ``bits`` (one
    user's bit); the neighbouring relation is "the bit is 0 versus 1", with no sensitivity
    parameter needed. For either report ``y``, ``P(y | 1) / P(y | 0)`` is ``e^eps`` or
    ``e^-eps``. The noise is one uniform draw per entry from ``rng``. Entries are perturbed
    independently, so reporting ``k`` bits of the same user costs ``k * epsilon``
    (sequential composition).

    Parameters
    ----------
    bits : array_like of {0, 1}
        True bits (bool, integer or float array holding only 0 and 1).
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        Source of the randomization.

    Returns
    -------
    numpy.ndarray of int64
        The reported bits, same shape as ``bits``.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite positive number or ``bits`` holds a value other than 0/1.
    TypeError
        If an argument has the wrong type.
    """
    b = _bit_array("bits", bits)
    eps = _check_epsilon("epsilon", epsilon)
    gen = _check_rng(rng)
    # expit(eps) = e^eps / (1 + e^eps) without overflow for large eps.
    keep = gen.random(b.shape) < expit(eps)
    return np.where(keep, b, 1 - b).astype(np.int64)


def rr_debias(reports: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """Unbiased estimate of the true bit (or mean) from randomized-response reports.

    Computes ``(y (e^eps + 1) - 1) / (e^eps - 1)``, i.e. ``(y - q) / (p - q)`` with
    ``p = e^eps / (1 + e^eps)`` and ``q = 1 - p`` (ALGORITHMS.md 7.1). The estimator is linear,
    so it also debiases averages of reports, and it debiases the output of
    :func:`bernoulli_mechanism` into an unbiased estimate of ``r``. The variance it adds per
    report is ``e^eps / (e^eps - 1)^2``.

    Privacy guarantee: post-processing of the reports; it uses no data and no randomness and
    costs no privacy [DR14]_ (Prop. 2.1).

    Parameters
    ----------
    reports : array_like of float in [0, 1]
        Reported bits from :func:`randomized_response` / :func:`bernoulli_mechanism`, or
        averages of such reports.
    epsilon : float
        The epsilon the reports were generated with, > 0.

    Returns
    -------
    numpy.ndarray of float64
        Estimates, same shape as ``reports``; single estimates lie outside [0, 1].

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite positive number or ``reports`` is outside [0, 1].
    TypeError
        If an argument has the wrong type.
    """
    y = check_unit_array("reports", reports)
    eps = _check_epsilon("epsilon", epsilon)
    # p - q = tanh(eps / 2); this form stays finite for eps beyond exp's overflow point.
    return np.asarray((y - expit(-eps)) / math.tanh(eps / 2.0), dtype=np.float64)


def bernoulli_mechanism(r: ArrayLike, epsilon: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """Privatize values in [0, 1] as bits: 1 with probability ``(r e^eps + 1 - r) / (1 + e^eps)``.

    Equivalent to drawing ``b ~ Bernoulli(r)`` and applying :func:`randomized_response` to
    ``b`` (ALGORITHMS.md 7.1, the "CTB" mechanism of Ren et al., built on [W65]_). The mean of
    the output is ``q + (p - q) r``, increasing in ``r``, and :func:`rr_debias` turns it back
    into an unbiased estimate of ``r``.

    Privacy guarantee: epsilon-local DP per entry. The privacy unit is one entry of ``r`` (one
    user's value); neighbouring inputs are any two values ``r, r'`` in [0, 1]. Since
    ``P(1 | r)`` lies in ``[q, p]`` for all ``r``, both output probabilities change by a factor
    of at most ``p / q = e^eps``. The noise is one uniform draw per entry from ``rng``.

    Parameters
    ----------
    r : array_like of float in [0, 1]
        Values to privatize (e.g. rewards).
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        Source of the randomization.

    Returns
    -------
    numpy.ndarray of int64
        Bits, same shape as ``r``.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite positive number or ``r`` is outside [0, 1].
    TypeError
        If an argument has the wrong type.
    """
    values = check_unit_array("r", r)
    eps = _check_epsilon("epsilon", epsilon)
    gen = _check_rng(rng)
    p_one = expit(-eps) + math.tanh(eps / 2.0) * values
    return (gen.random(values.shape) < p_one).astype(np.int64)


# --------------------------------------------------------------------------------------------
# Laplace and Gaussian mechanisms
# --------------------------------------------------------------------------------------------


def laplace_mechanism(
    x: ArrayLike,
    epsilon: float,
    rng: np.random.Generator,
    sensitivity: float = 1.0,
    *,
    lower: float | None = None,
    upper: float | None = None,
) -> NDArray[np.float64]:
    """Add i.i.d. Laplace noise of scale ``sensitivity / epsilon`` to every entry of ``x``.

    The Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6); ALGORITHMS.md 7.2.

    Privacy guarantee: epsilon-DP for the neighbouring relation "``x`` and ``x'`` differ by at
    most ``sensitivity`` in L1 norm over the whole array", i.e. ``sensitivity`` is the L1
    sensitivity of the query that produced ``x``. The noise is ``rng.laplace(0,
    sensitivity / epsilon)``, one draw per entry.

    Clipping: when ``lower`` and ``upper`` are given, ``x`` is first clipped to
    ``[lower, upper]`` and the noise is added to the clipped value. Clipping does not set the
    sensitivity: in the local model, where ``x`` is one user's scalar datum, pass
    ``sensitivity=upper - lower`` (for ``d`` such values of one user, ``d * (upper - lower)``)
    to obtain epsilon-LDP. Without clipping, the guarantee only holds if the caller ensures
    the sensitivity bound.

    Parameters
    ----------
    x : array_like of float
        Exact values (finite).
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        Source of the noise.
    sensitivity : float, default 1.0
        L1 sensitivity of ``x``, > 0.
    lower, upper : float or None, default None
        Clipping bounds, both given (``lower < upper``) or both None.

    Returns
    -------
    numpy.ndarray of float64
        Noisy values, same shape as ``x``.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not finite and positive, ``x`` is not finite, only
        one bound is given, or ``lower >= upper``.
    TypeError
        If an argument has the wrong type.
    """
    values = _finite_array("x", x)
    eps = _check_epsilon("epsilon", epsilon)
    gen = _check_rng(rng)
    delta_1 = check_float("sensitivity", sensitivity, low=0.0, low_open=True)
    if (lower is None) != (upper is None):
        raise ValueError(
            f"lower and upper must be given together or both be None, got lower={lower!r}, upper={upper!r}."
        )
    if lower is not None and upper is not None:
        lo = check_float("lower", lower)
        hi = check_float("upper", upper)
        if lo >= hi:
            raise ValueError(f"upper must be greater than lower, got lower={lower!r}, upper={upper!r}.")
        values = np.clip(values, lo, hi)
    return values + gen.laplace(0.0, delta_1 / eps, size=values.shape)


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
    s = check_float("sigma", sigma, low=0.0, low_open=True)
    eps = _check_epsilon("epsilon", epsilon)
    d2 = check_float("l2_sensitivity", l2_sensitivity, low=0.0, low_open=True)
    return math.exp(_log_gaussian_delta(s, eps, d2))


def gaussian_sigma_classic(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Classic Gaussian noise scale ``l2_sensitivity * sqrt(2 ln(1.25 / delta)) / epsilon``.

    [DR14]_ Thm. 3.22 (proof in App. A, Thm. A.1). The guarantee is (epsilon, delta)-DP for
    queries of the given L2 sensitivity, and it is proven **only for epsilon in (0, 1)**, so
    larger epsilon is rejected; use :func:`gaussian_sigma_analytic` there. For epsilon < 1 the
    analytic scale is strictly smaller, so this one is valid but wasteful.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, in (0, 1).
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
        If ``epsilon`` is not in (0, 1), ``delta`` not in (0, 1), or ``l2_sensitivity`` <= 0.
    TypeError
        If an argument is not a real number.
    """
    eps = _check_epsilon("epsilon", epsilon)
    if eps >= 1.0:
        raise ValueError(
            f"epsilon must be in (0, 1) for the classic Gaussian mechanism (Dwork & Roth 2014, "
            f"Thm. 3.22), got {epsilon!r}; use gaussian_sigma_analytic for epsilon >= 1."
        )
    dlt = _check_delta(delta)
    d2 = check_float("l2_sensitivity", l2_sensitivity, low=0.0, low_open=True)
    return d2 * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def gaussian_sigma_analytic(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Smallest Gaussian noise scale that is (epsilon, delta)-DP: the analytic Gaussian mechanism.

    Balle & Wang [BW18]_ (Thm. 8, Alg. 1): the smallest ``sigma`` with
    ``Phi(D / (2 sigma) - eps sigma / D) - e^eps Phi(-D / (2 sigma) - eps sigma / D) <= delta``,
    ``D = l2_sensitivity`` (ALGORITHMS.md 7.3). The condition is necessary and sufficient, so
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
    eps = _check_epsilon("epsilon", epsilon)
    dlt = _check_delta(delta)
    d2 = check_float("l2_sensitivity", l2_sensitivity, low=0.0, low_open=True)
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
    root = float(brentq(excess, lo, hi, xtol=xtol, rtol=rtol, maxiter=500))
    return math.exp(root + 2.0 * (xtol + rtol * abs(root)))


def gaussian_mechanism(
    x: ArrayLike,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    l2_sensitivity: float = 1.0,
    method: str = "analytic",
) -> NDArray[np.float64]:
    """Add i.i.d. N(0, sigma^2) noise to every entry of ``x``, sigma calibrated to (epsilon, delta).

    Privacy guarantee: (epsilon, delta)-DP for the neighbouring relation "``x`` and ``x'``
    differ by at most ``l2_sensitivity`` in L2 norm over the whole array". ``sigma`` comes from
    :func:`gaussian_sigma_analytic` (Balle & Wang [BW18]_, any epsilon > 0; the default) or
    :func:`gaussian_sigma_classic` ([DR14]_ Thm. 3.22, epsilon in (0, 1) only). The noise is
    ``rng.normal(0, sigma)``, one draw per entry.

    Parameters
    ----------
    x : array_like of float
        Exact values (finite).
    epsilon : float
        Privacy parameter, > 0 (< 1 for ``method="classic"``).
    delta : float
        Privacy parameter, in (0, 1).
    rng : numpy.random.Generator
        Source of the noise.
    l2_sensitivity : float, default 1.0
        L2 sensitivity of ``x``, > 0.
    method : {"analytic", "classic"}, default "analytic"
        Calibration of ``sigma``.

    Returns
    -------
    numpy.ndarray of float64
        Noisy values, same shape as ``x``.

    Raises
    ------
    ValueError
        If a privacy parameter or the sensitivity is out of range, ``x`` is not finite, or
        ``method`` is unknown.
    TypeError
        If an argument has the wrong type.
    """
    values = _finite_array("x", x)
    gen = _check_rng(rng)
    check_choice("method", method, GAUSSIAN_METHODS)
    calibrate = gaussian_sigma_analytic if method == "analytic" else gaussian_sigma_classic
    sigma = calibrate(epsilon, delta, l2_sensitivity)
    return values + gen.normal(0.0, sigma, size=values.shape)


# --------------------------------------------------------------------------------------------
# Planar Laplace (geo-indistinguishability)
# --------------------------------------------------------------------------------------------


def planar_laplace_radius_cdf(r: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """CDF of the planar-Laplace displacement radius, ``1 - (1 + eps r) e^{-eps r}``.

    The radius of planar Laplace noise has density ``eps^2 r e^{-eps r}``, the Gamma law with
    shape 2 and scale ``1 / eps`` ([ABCP13]_ section 4.1; ALGORITHMS.md 7.4); this is its CDF,
    evaluated as the regularized incomplete gamma function ``P(2, eps r)`` so it stays accurate
    for small ``eps r``. Its mean is ``2 / eps``.

    Parameters
    ----------
    r : array_like of float
        Radii in metres, >= 0 (``inf`` allowed). Any other length unit works if
        ``epsilon_per_m`` is per that unit.
    epsilon_per_m : float
        Geo-indistinguishability parameter in 1/metre, > 0.

    Returns
    -------
    numpy.ndarray of float64
        Probabilities ``P(R <= r)``, same shape as ``r``.

    Raises
    ------
    ValueError
        If ``epsilon_per_m`` is not finite and positive or ``r`` has negative or NaN entries.
    TypeError
        If an argument has the wrong type.
    """
    eps = _check_epsilon("epsilon_per_m", epsilon_per_m)
    try:
        radii = np.asarray(r, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"r must be an array of radii, got {type(r).__name__}.") from None
    if not np.all(radii >= 0.0):
        raise ValueError("r must contain only radii >= 0 (no NaN), got a negative or NaN entry.")
    return np.asarray(gammainc(2.0, eps * radii), dtype=np.float64)


def planar_laplace_radius_quantile(p: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """Inverse of :func:`planar_laplace_radius_cdf` via the lower branch of Lambert W.

    ``r = -(1/eps) (W_{-1}((p - 1) / e) + 1)`` ([ABCP13]_ section 4.1; ALGORITHMS.md 7.4). The
    lower branch ``W_{-1}`` is required: the principal branch ``W_0`` gives a radius in
    ``(-1/eps, 0]``. Edge case: ``scipy.special.lambertw(-1/e, k=-1)`` returns NaN because the
    float ``-1/e`` lies just outside the domain; this happens whenever ``1 - p`` rounds to 1
    (``p == 0`` or ``p`` below about 1.1e-16). Such ``p``, and any other non-finite result, give
    ``r = 0``; the true radius there is below ``1.5e-8 / eps``. Near the branch point
    ``W_{-1}`` loses relative accuracy (the absolute error in ``r`` is of order
    ``sqrt(2 p) / eps`` for ``p`` below about 1e-8), which is immaterial for sampling.

    Parameters
    ----------
    p : array_like of float in [0, 1)
        Probabilities.
    epsilon_per_m : float
        Geo-indistinguishability parameter in 1/metre, > 0.

    Returns
    -------
    numpy.ndarray of float64
        Radii in metres (in the unit ``epsilon_per_m`` is per), same shape as ``p``.

    Raises
    ------
    ValueError
        If ``epsilon_per_m`` is not finite and positive or ``p`` is outside [0, 1).
    TypeError
        If an argument has the wrong type.
    """
    eps = _check_epsilon("epsilon_per_m", epsilon_per_m)
    probs = check_unit_array("p", p)
    if np.any(probs == 1.0):
        raise ValueError("p must contain probabilities in [0, 1), got 1 (the radius would be inf).")
    w = lambertw((probs - 1.0) / math.e, k=-1).real
    radii = -(w + 1.0) / eps
    return np.where((probs == 0.0) | ~np.isfinite(radii), 0.0, radii)


def _polar_noise(
    shape: tuple[int, ...], epsilon_per_m: float, rng: np.random.Generator, method: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Draw planar-Laplace radii (metres) and angles (radians, uniform on [0, 2 pi))."""
    if method == "gamma":
        radii = rng.gamma(2.0, 1.0 / epsilon_per_m, size=shape)
    else:
        radii = planar_laplace_radius_quantile(rng.random(shape), epsilon_per_m)
    angles = rng.uniform(0.0, 2.0 * math.pi, size=shape)
    return np.asarray(radii, dtype=np.float64), np.asarray(angles, dtype=np.float64)


def planar_laplace(
    xy: ArrayLike, epsilon_per_m: float, rng: np.random.Generator, method: str = "gamma"
) -> NDArray[np.float64]:
    """Perturb planar points with planar Laplace noise (geo-indistinguishability).

    Andrés et al. [ABCP13]_ (Def. 3.1, section 4.1); ALGORITHMS.md 7.4. Each point ``x0``
    is reported as ``x0 + (r cos theta, r sin theta)`` with ``theta ~ U[0, 2 pi)`` and radius
    ``r ~ Gamma(2, 1 / eps)``, i.e. density ``(eps^2 / (2 pi)) e^{-eps d(x0, z)}``.

    Privacy guarantee: epsilon-geo-indistinguishability per point. The privacy unit is one row
    of ``xy`` (one user's location); for any two locations ``x, x'`` and any output set ``S``,
    ``P(S | x) <= e^{eps d(x, x')} P(S | x')``, ``d`` the Euclidean distance. So ``eps`` is
    per metre: within a radius ``d`` the user enjoys ``(eps d)``-privacy. There is no
    sensitivity: the distance plays that role. The noise comes from ``rng``: one radius and one
    angle per point. Snapping the output to a grid afterwards is post-processing and safe;
    resampling until the output falls inside a region is not.

    Parameters
    ----------
    xy : array_like of float, shape (..., 2)
        Planar coordinates in metres (any other unit works if ``epsilon_per_m`` is per that
        unit).
    epsilon_per_m : float
        Privacy parameter in 1/metre, > 0. From a per-km value: ``epsilon_per_km / 1000``.
    rng : numpy.random.Generator
        Source of the noise.
    method : {"gamma", "lambertw"}, default "gamma"
        Radius sampler: ``rng.gamma(2, 1/eps)`` or the paper's inverse CDF with the lower
        Lambert W branch (:func:`planar_laplace_radius_quantile` of a uniform draw). Same law.

    Returns
    -------
    numpy.ndarray of float64, shape (..., 2)
        Perturbed coordinates in metres.

    Raises
    ------
    ValueError
        If ``epsilon_per_m`` is not finite and positive, ``xy`` is not finite or its last axis
        is not of length 2, or ``method`` is unknown.
    TypeError
        If an argument has the wrong type.
    """
    points = _finite_array("xy", xy)
    if points.ndim == 0 or points.shape[-1] != 2:
        raise ValueError(f"xy must have shape (..., 2), got shape {points.shape}.")
    eps = _check_epsilon("epsilon_per_m", epsilon_per_m)
    gen = _check_rng(rng)
    check_choice("method", method, PLANAR_LAPLACE_METHODS)
    radii, angles = _polar_noise(points.shape[:-1], eps, gen, method)
    return points + np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=-1)


def planar_laplace_latlon(
    lat: ArrayLike,
    lon: ArrayLike,
    epsilon_per_km: float,
    rng: np.random.Generator,
    method: str = "gamma",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Perturb latitude/longitude points with planar Laplace noise in a local metric frame.

    Draws the planar Laplace displacement of :func:`planar_laplace` with
    ``epsilon_per_m = epsilon_per_km / 1000`` and applies it in the local east-north frame of
    each point (ALGORITHMS.md 7.4): ``dnorth = r sin theta``, ``deast = r cos theta``,
    ``lat' = lat + dnorth / R * 180 / pi``, ``lon' = lon + deast / (R cos lat) * 180 / pi`` with
    ``R = EARTH_RADIUS_M``. ``lat'`` is then clipped to [-90, 90] and ``lon'`` wrapped to
    [-180, 180); both are post-processing.

    Privacy guarantee: epsilon-geo-indistinguishability ([ABCP13]_) per point, with ``eps`` per
    kilometre of ground distance, up to the error of the local flat-earth approximation: the
    frame is an isometry only for displacements much smaller than ~100 km and away from the
    poles (use a geodesic solver otherwise). The privacy unit is one user's location; the noise
    is one radius and one angle per point from ``rng``.

    Parameters
    ----------
    lat, lon : array_like of float
        Latitudes strictly between -90 and 90 and longitudes in [-180, 180], in degrees;
        broadcast against each other.
    epsilon_per_km : float
        Privacy parameter in 1/kilometre, > 0 (e.g. ``ln(4) / 0.2`` gives ``ln 4``-privacy
        within 200 m; mean displacement ``2 / eps`` km).
    rng : numpy.random.Generator
        Source of the noise.
    method : {"gamma", "lambertw"}, default "gamma"
        Radius sampler, as in :func:`planar_laplace`.

    Returns
    -------
    tuple of numpy.ndarray of float64
        Perturbed ``(lat, lon)`` in degrees, each of the broadcast shape.

    Raises
    ------
    ValueError
        If ``epsilon_per_km`` is not finite and positive, a latitude is outside (-90, 90), a
        longitude outside [-180, 180], the shapes do not broadcast, or ``method`` is unknown.
    TypeError
        If an argument has the wrong type.
    """
    lat_deg = _latitude_array("lat", lat, poles=False)
    lon_deg = _longitude_array("lon", lon)
    try:
        lat_deg, lon_deg = np.broadcast_arrays(lat_deg, lon_deg)
    except ValueError:
        raise ValueError(
            f"lat and lon must have broadcastable shapes, got {lat_deg.shape} and {lon_deg.shape}."
        ) from None
    eps_km = _check_epsilon("epsilon_per_km", epsilon_per_km)
    gen = _check_rng(rng)
    check_choice("method", method, PLANAR_LAPLACE_METHODS)
    radii, angles = _polar_noise(lat_deg.shape, eps_km / 1000.0, gen, method)
    d_north = radii * np.sin(angles)
    d_east = radii * np.cos(angles)
    new_lat = lat_deg + np.degrees(d_north / EARTH_RADIUS_M)
    new_lon = lon_deg + np.degrees(d_east / (EARTH_RADIUS_M * np.cos(np.radians(lat_deg))))
    return np.clip(new_lat, -90.0, 90.0), (new_lon + 180.0) % 360.0 - 180.0


def haversine_m(lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike) -> NDArray[np.float64]:
    """Great-circle distance in metres between points given in degrees (haversine formula).

    Uses a sphere of radius ``EARTH_RADIUS_M``; arguments broadcast against each other.

    Parameters
    ----------
    lat1, lon1, lat2, lon2 : array_like of float
        Latitudes in [-90, 90] and finite longitudes, in degrees.

    Returns
    -------
    numpy.ndarray of float64
        Distances in metres, of the broadcast shape.

    Raises
    ------
    ValueError
        If a latitude is outside [-90, 90] or a coordinate is not finite.
    TypeError
        If an argument has the wrong type.
    """
    phi1 = np.radians(_latitude_array("lat1", lat1, poles=True))
    phi2 = np.radians(_latitude_array("lat2", lat2, poles=True))
    lam1 = np.radians(_finite_array("lon1", lon1))
    lam2 = np.radians(_finite_array("lon2", lon2))
    h = np.sin((phi2 - phi1) / 2.0) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin((lam2 - lam1) / 2.0) ** 2
    return np.asarray(2.0 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0))), dtype=np.float64)
