"""Planar Laplace noise on locations (epsilon-geo-indistinguishability).

Andrés et al. [ABCP13]_ (Def. 3.1, section 4.1): each point ``x0`` is reported as
``x0 + (r cos theta, r sin theta)`` with ``theta ~ U[0, 2 pi)`` and ``r ~ Gamma(2, 1 / eps)``,
i.e. with density ``(eps^2 / (2 pi)) e^{-eps d(x0, z)}``. :func:`planar_laplace` works on planar
coordinates in metres, :func:`planar_laplace_latlon` on latitude/longitude through a local
east-north frame; :func:`planar_laplace_radius_cdf` and :func:`planar_laplace_radius_quantile`
are the radius law and its inverse (lower Lambert W branch, [ABCP13]_ section 4.1).

Guarantee: epsilon-geo-indistinguishability per reported point. Unit: one user's location
(one row of ``xy``, one ``(lat, lon)`` pair); any two locations ``x, x'`` are neighbours at
distance ``d(x, x')``, and for every output set ``S``, ``P(S | x) <= e^{eps d(x, x')} P(S | x')``.
So ``eps`` is per unit of distance (per metre, or per kilometre in the lat/lon function): within
a radius ``d`` the user enjoys ``(eps d)``-privacy; there is no delta and no sensitivity. For
lat/lon the guarantee holds up to the error of the flat-earth frame (displacements much smaller
than ~100 km, away from the poles). Snapping the output to a grid is post-processing and safe;
resampling until the output falls inside a region is not.

Noise: one radius (``rng.gamma(2, 1 / eps)``, or the inverse CDF of a ``rng.random`` draw with
``method="lambertw"``) and one angle (``rng.uniform(0, 2 pi)``) per point, from the
``numpy.random.Generator`` passed as ``rng``. Floating-point sampling leaks through the low-order
bits of the output [M12]_: acceptable for a research library, not for production.

References
----------
.. [ABCP13] M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis and C. Palamidessi,
   "Geo-indistinguishability: differential privacy for location-based systems", CCS 2013
   (arXiv:1212.1984).
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammainc, lambertw

from bandit_envs.privacy._checks import check_epsilon, check_rng, finite_array, latitude_array, longitude_array
from bandit_envs.privacy.geodesy import EARTH_RADIUS_M
from bandit_envs.validation import check_choice, check_unit_array

__all__ = [
    "PLANAR_LAPLACE_METHODS",
    "planar_laplace",
    "planar_laplace_latlon",
    "planar_laplace_radius_cdf",
    "planar_laplace_radius_quantile",
]

PLANAR_LAPLACE_METHODS = ("gamma", "lambertw")
"""Radius samplers accepted by :func:`planar_laplace` and :func:`planar_laplace_latlon`."""


def planar_laplace_radius_cdf(r: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """CDF of the planar-Laplace displacement radius, ``1 - (1 + eps r) e^{-eps r}``.

    The radius of planar Laplace noise has density ``eps^2 r e^{-eps r}``, the Gamma law with
    shape 2 and scale ``1 / eps`` ([ABCP13]_ section 4.1); this is its CDF,
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
    eps = check_epsilon("epsilon_per_m", epsilon_per_m)
    try:
        radii = np.asarray(r, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"r must be an array of radii, got {type(r).__name__}.") from None
    if not np.all(radii >= 0.0):
        raise ValueError("r must contain only radii >= 0 (no NaN), got a negative or NaN entry.")
    return np.asarray(gammainc(2.0, eps * radii), dtype=np.float64)


def planar_laplace_radius_quantile(p: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """Inverse of :func:`planar_laplace_radius_cdf` via the lower branch of Lambert W.

    ``r = -(1/eps) (W_{-1}((p - 1) / e) + 1)`` ([ABCP13]_ section 4.1). The
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
    eps = check_epsilon("epsilon_per_m", epsilon_per_m)
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

    Andrés et al. [ABCP13]_ (Def. 3.1, section 4.1). Each point ``x0``
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
    points = finite_array("xy", xy)
    if points.ndim == 0 or points.shape[-1] != 2:
        raise ValueError(f"xy must have shape (..., 2), got shape {points.shape}.")
    eps = check_epsilon("epsilon_per_m", epsilon_per_m)
    gen = check_rng(rng)
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
    each point: ``dnorth = r sin theta``, ``deast = r cos theta``,
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
    lat_deg = latitude_array("lat", lat, poles=False)
    lon_deg = longitude_array("lon", lon)
    try:
        lat_deg, lon_deg = np.broadcast_arrays(lat_deg, lon_deg)
    except ValueError:
        raise ValueError(
            f"lat and lon must have broadcastable shapes, got {lat_deg.shape} and {lon_deg.shape}."
        ) from None
    eps_km = check_epsilon("epsilon_per_km", epsilon_per_km)
    gen = check_rng(rng)
    check_choice("method", method, PLANAR_LAPLACE_METHODS)
    radii, angles = _polar_noise(lat_deg.shape, eps_km / 1000.0, gen, method)
    d_north = radii * np.sin(angles)
    d_east = radii * np.cos(angles)
    new_lat = lat_deg + np.degrees(d_north / EARTH_RADIUS_M)
    new_lon = lon_deg + np.degrees(d_east / (EARTH_RADIUS_M * np.cos(np.radians(lat_deg))))
    return np.clip(new_lat, -90.0, 90.0), (new_lon + 180.0) % 360.0 - 180.0
