"""Planar Laplace noise on locations (epsilon-geo-indistinguishability).

Andrés et al. [ABCP13]_ (Def. 3.1, section 4.1): each point ``x0`` is reported as
``x0 + (r cos theta, r sin theta)`` with ``theta ~ U[0, 2 pi)`` and ``r ~ Gamma(2, 1 / eps)``,
i.e. with density ``(eps^2 / (2 pi)) e^{-eps d(x0, z)}``. :func:`planar_laplace` works on planar
coordinates in metres; :func:`planar_laplace_radius_cdf` and :func:`planar_laplace_radius_quantile`
are the radius law and its inverse (lower Lambert W branch, [ABCP13]_ section 4.1).
:func:`planar_laplace_latlon` is the same mechanism on the sphere, for latitude/longitude: density
proportional to ``e^{-eps d(x0, z)}`` over the sphere, ``d`` the great-circle distance, drawn as a
great-circle step of length ``r`` in a uniform direction (the azimuthal equidistant projection
about ``x0``), with the radius law :func:`spherical_laplace_radius_cdf`.

Guarantee: epsilon-geo-indistinguishability per reported point. Unit: one user's location
(one row of ``xy``, one ``(lat, lon)`` pair); any two locations ``x, x'`` are neighbours at
distance ``d(x, x')``, and for every output set ``S``, ``P(S | x) <= e^{eps d(x, x')} P(S | x')``.
So ``eps`` is per unit of distance (per metre, or per kilometre in the lat/lon function): within
a radius ``d`` the user enjoys ``(eps d)``-privacy; there is no delta and no sensitivity. ``d`` is
the Euclidean distance in the plane and the great-circle distance on the sphere of radius
:data:`~bandit_envs.privacy.geodesy.EARTH_RADIUS_M` for lat/lon, where the bound holds at every
latitude, the poles included. Snapping the output to a grid is post-processing and safe;
resampling until the output falls inside a region is not.

Noise: one radius (``rng.gamma(2, 1 / eps)``, or the inverse CDF of a ``rng.random`` draw with
``method="lambertw"``) and one angle (``rng.uniform(0, 2 pi)``) per point, from the
``numpy.random.Generator`` passed as ``rng``; on the sphere the radius is drawn from its own law
(see :func:`planar_laplace_latlon`). Floating-point sampling leaks through the low-order bits of
the output [M12]_: acceptable for a research library, not for production. The radius draws
are also bounded: below ``40.46 / eps`` with ``method="lambertw"`` (its uniform is at least
``2**-53`` from 1) and below about ``119.7 / eps`` with numpy's gamma sampler (its normal is below
12.23, :data:`~bandit_envs.privacy._checks.GAUSSIAN_SAMPLER_BOUND`). So the outputs of two points
more than twice the bound apart cannot meet, and for closer points ``x, x'`` a report of ``x``
can land where no report of ``x'`` can: the guarantee holds up to that tail event, as for the
bounded Laplace sampler (:mod:`bandit_envs.privacy.lattice`). With ``"lambertw"`` its probability
is at most the radius law's tail beyond ``40.46 / eps - d(x, x')``,
``(1 + t) e**-t`` with ``t = 40.46 - eps d(x, x')``: about ``2.3e-10`` at ``eps d = 15``,
``3.2e-6`` at ``eps d = 25``. Unlike the Laplace mechanisms there is no cap on ``eps d``; keep
``eps d`` at the distances that matter well below 40.

References
----------
.. [ABCP13] M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis and C. Palamidessi,
   "Geo-indistinguishability: differential privacy for location-based systems", CCS 2013
   (arXiv:1212.1984).
.. [CABP13] K. Chatzikokolakis, M. E. Andrés, N. E. Bordenabe and C. Palamidessi, "Broadening
   the scope of differential privacy using metrics", PETS 2013.
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammainc, lambertw

from bandit_envs.privacy._checks import check_positive, check_rng, finite_array, latitude_array, longitude_array
from bandit_envs.privacy.geodesy import EARTH_RADIUS_M
from bandit_envs.validation import check_choice, check_unit_array, real_array

__all__ = [
    "PLANAR_LAPLACE_METHODS",
    "planar_laplace",
    "planar_laplace_latlon",
    "planar_laplace_radius_cdf",
    "planar_laplace_radius_quantile",
    "spherical_laplace_radius_cdf",
    "spherical_laplace_radius_quantile",
]

PLANAR_LAPLACE_METHODS = ("gamma", "lambertw")
"""Radius samplers accepted by :func:`planar_laplace` and :func:`planar_laplace_latlon`."""

#: Bisection steps of :func:`spherical_laplace_radius_quantile` (halves [0, pi] below float spacing).
_BISECTION_STEPS = 64


def _radius_args(r: ArrayLike, epsilon_per_m: float) -> tuple[NDArray[np.float64], float]:
    """``r`` as float64 radii >= 0 (strings, complex numbers and booleans refused) and the checked epsilon."""
    eps = check_positive("epsilon_per_m", epsilon_per_m)
    radii = real_array("r", r, "an array of radii >= 0", booleans=False)
    if not np.all(radii >= 0.0):
        raise ValueError("r must contain only radii >= 0 (no NaN), got a negative or NaN entry.")
    return radii, eps


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
        If ``epsilon_per_m`` is not finite and positive or ``r`` has negative or NaN entries (or
        one beyond the range of a float).
    TypeError
        If an argument has the wrong type: ``r`` holding strings, complex numbers or booleans
        (never parsed or cast).
    """
    radii, eps = _radius_args(r, epsilon_per_m)
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
        If an argument has the wrong type: ``p`` holding strings, complex numbers or booleans
        (never parsed or cast).
    """
    eps = check_positive("epsilon_per_m", epsilon_per_m)
    probs = check_unit_array("p", p, booleans=False)
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
    points = finite_array("xy", xy, booleans=False)
    if points.ndim == 0 or points.shape[-1] != 2:
        raise ValueError(f"xy must have shape (..., 2), got shape {points.shape}.")
    eps = check_positive("epsilon_per_m", epsilon_per_m)
    gen = check_rng(rng)
    check_choice("method", method, PLANAR_LAPLACE_METHODS)
    radii, angles = _polar_noise(points.shape[:-1], eps, gen, method)
    return points + np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=-1)


def _sphere_cdf(u: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    """CDF of the angle ``u`` in [0, pi] with density proportional to ``sin(u) e^{-a u}``."""
    u = np.minimum(u, math.pi)
    tail = np.exp(-a * u) * (np.cos(u) + a * np.sin(u))
    return np.asarray(np.clip((1.0 - tail) / (1.0 + math.exp(-a * math.pi)), 0.0, 1.0), dtype=np.float64)


def spherical_laplace_radius_cdf(r: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """CDF of the great-circle displacement of :func:`planar_laplace_latlon`, in metres.

    On a sphere of radius ``R`` (:data:`~bandit_envs.privacy.geodesy.EARTH_RADIUS_M`), the
    output density ``C e^{-eps d(x0, z)}`` over the surface puts density proportional to
    ``sin(r / R) e^{-eps r}`` on the distance ``r`` in ``[0, pi R]`` (the circle at distance
    ``r`` has length ``2 pi R sin(r / R)``). With ``u = r / R`` and ``a = eps R`` the CDF is
    ``(1 - e^{-a u} (cos u + a sin u)) / (1 + e^{-a pi})``, and 1 beyond the antipode. For
    ``r`` much smaller than ``R`` it is :func:`planar_laplace_radius_cdf` (``sin(r/R) ~ r/R``).

    Parameters, return value and errors are those of :func:`planar_laplace_radius_cdf`, with ``r``
    the great-circle distances in metres and the probabilities ``P(D <= r)``.
    """
    radii, eps = _radius_args(r, epsilon_per_m)
    return _sphere_cdf(radii / EARTH_RADIUS_M, eps * EARTH_RADIUS_M)


def spherical_laplace_radius_quantile(p: ArrayLike, epsilon_per_m: float) -> NDArray[np.float64]:
    """Inverse of :func:`spherical_laplace_radius_cdf`, by bisection on ``[0, pi R]``.

    The CDF has no closed-form inverse; 64 halvings of ``[0, pi]`` in ``u = r / R`` bring the
    bracket below float spacing, so the result is exact to rounding. Vectorized over ``p``.

    Parameters, return value and errors are those of :func:`planar_laplace_radius_quantile`, with
    ``p`` in [0, 1] (1 included) and the result the great-circle distances in metres, in
    ``[0, pi R]``.
    """
    eps = check_positive("epsilon_per_m", epsilon_per_m)
    probs = check_unit_array("p", p, booleans=False)
    a = eps * EARTH_RADIUS_M
    lo = np.zeros(probs.shape)
    hi = np.full(probs.shape, math.pi)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        below = _sphere_cdf(mid, a) < probs
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.asarray(0.5 * (lo + hi) * EARTH_RADIUS_M, dtype=np.float64)


def _sphere_radii(
    shape: tuple[int, ...], epsilon_per_m: float, rng: np.random.Generator, method: str
) -> NDArray[np.float64]:
    """Great-circle radii (metres) with density proportional to ``sin(r / R) e^{-eps r}`` on [0, pi R].

    ``eps R >= 1``: the planar radius of ``method`` (density ``eps^2 r e^{-eps r}``) accepted with
    probability ``sin(r / R) / (r / R)`` if ``r <= pi R``, else drawn again (acceptance rate
    ``a^2 (1 + e^{-a pi}) / (1 + a^2) >= 1/2``, ``a = eps R``). The acceptance depends on the
    radius only, never on the location, so this is a sampler of the radius law, not the
    location-dependent resampling that breaks geo-indistinguishability. ``eps R < 1`` (a mean
    displacement beyond the Earth's diameter): the inverse CDF of one uniform, for both methods.
    """
    a = epsilon_per_m * EARTH_RADIUS_M
    if a < 1.0:
        return spherical_laplace_radius_quantile(rng.random(shape), epsilon_per_m)
    radii = np.empty(shape)
    todo = np.ones(shape, dtype=bool)
    while todo.any():
        n = int(todo.sum())
        if method == "gamma":
            proposal = rng.gamma(2.0, 1.0 / epsilon_per_m, size=n)
        else:
            proposal = planar_laplace_radius_quantile(rng.random(n), epsilon_per_m)
        u = proposal / EARTH_RADIUS_M
        with np.errstate(invalid="ignore", divide="ignore"):
            keep = (u <= math.pi) & (rng.random(n) * u <= np.sin(u))
        keep |= u == 0.0
        slots = np.flatnonzero(todo)[keep]
        radii.flat[slots] = proposal[keep]
        todo.flat[slots] = False
    return radii


def _destination(
    lat_deg: NDArray[np.float64], lon_deg: NDArray[np.float64], radii: NDArray[np.float64], angles: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The point at great-circle distance ``radii`` (m) from each point, direction ``angles``.

    ``angles`` is measured from east towards north (east = 0, north = pi/2) in the tangent plane
    of each point, spanned by the unit vectors east = (-sin lon, cos lon, 0) and
    north = (-sin lat cos lon, -sin lat sin lon, cos lat); these are orthonormal at every point,
    the poles included (there they are two fixed directions, and a uniform angle stays uniform).
    The step is along the great circle: ``z = cos(u) x + sin(u) (cos(angle) east + sin(angle)
    north)`` with ``u = r / R``, the spherical destination-point formula in vector form.
    """
    phi, lam = np.radians(lat_deg), np.radians(lon_deg)
    u = radii / EARTH_RADIUS_M
    cp, sp, cl, sl = np.cos(phi), np.sin(phi), np.cos(lam), np.sin(lam)
    ce, sn = np.cos(angles) * np.sin(u), np.sin(angles) * np.sin(u)
    cu = np.cos(u)
    zx = cu * cp * cl - ce * sl - sn * sp * cl
    zy = cu * cp * sl + ce * cl - sn * sp * sl
    zz = cu * sp + sn * cp
    new_lat = np.degrees(np.arctan2(zz, np.hypot(zx, zy)))
    new_lon = np.degrees(np.arctan2(zy, zx))
    return np.asarray(new_lat, dtype=np.float64), np.asarray((new_lon + 180.0) % 360.0 - 180.0, dtype=np.float64)


def planar_laplace_latlon(
    lat: ArrayLike,
    lon: ArrayLike,
    epsilon_per_km: float,
    rng: np.random.Generator,
    method: str = "gamma",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Perturb latitude/longitude points with Laplace noise in great-circle distance.

    The geo-indistinguishable Laplace mechanism of [ABCP13]_ carried to the sphere of radius
    ``R = EARTH_RADIUS_M``: the report ``z`` of a true point ``x0`` has density
    ``C(eps) e^{-eps d(x0, z)}`` with respect to area, ``d`` the great-circle distance,
    ``eps = epsilon_per_km / 1000`` per metre. It is drawn in the azimuthal equidistant
    projection about ``x0``: a direction ``theta ~ U[0, 2 pi)`` and a great-circle step of
    length ``r`` with density proportional to ``sin(r / R) e^{-eps r}`` on ``[0, pi R]``
    (:func:`spherical_laplace_radius_cdf`; for ``r`` much smaller than ``R`` it is the planar
    ``Gamma(2, 1/eps)`` law), then mapped back by the destination-point formula, so
    ``d(x0, z) = r`` exactly. ``lon'`` is wrapped to [-180, 180).

    Privacy guarantee: epsilon-geo-indistinguishability ([ABCP13]_ Def. 3.1) per point in
    great-circle distance, at every latitude (poles included) and every distance. The unit is
    one user's location; for any two locations ``x, x'`` and any set ``S`` of outputs,
    ``P(S | x) <= e^{eps d(x, x')} P(S | x')`` with ``eps`` per kilometre and ``d`` in
    kilometres on the sphere. Proof: the sphere is homogeneous, so ``C(eps)`` does not depend on
    ``x0``; the density ratio at any ``z`` is ``e^{eps (d(x', z) - d(x, z))} <= e^{eps d(x, x')}``
    by the triangle inequality (the metric form of the mechanism, [CABP13]_). On the Earth
    (an ellipsoid) ``d`` is the spherical distance, within 0.5% of the geodesic one. The noise
    is one direction and one radius per point from ``rng`` (see ``method``).

    Parameters
    ----------
    lat, lon : array_like of float
        Latitudes in [-90, 90] and longitudes in [-180, 180], in degrees; broadcast against each
        other.
    epsilon_per_km : float
        Privacy parameter in 1/kilometre, > 0 (e.g. ``ln(4) / 0.2`` gives ``ln 4``-privacy
        within 200 m; mean displacement about ``2 / eps`` km).
    rng : numpy.random.Generator
        Source of the noise.
    method : {"gamma", "lambertw"}, default "gamma"
        Proposal of the radius sampler: the planar radius of :func:`planar_laplace` with that
        method, accepted with probability ``sin(r / R) / (r / R)`` (and ``r <= pi R``), else
        drawn again; the acceptance depends on the radius only. Both give the same law. When
        ``eps R < 1`` (mean displacement beyond the Earth's diameter) both draw the radius as
        :func:`spherical_laplace_radius_quantile` of one uniform instead.

    Returns
    -------
    tuple of numpy.ndarray of float64
        Perturbed ``(lat, lon)`` in degrees, each of the broadcast shape.

    Raises
    ------
    ValueError
        If ``epsilon_per_km`` is not finite and positive, a latitude is outside [-90, 90], a
        longitude outside [-180, 180], the shapes do not broadcast, or ``method`` is unknown.
    TypeError
        If an argument has the wrong type.
    """
    lat_deg = latitude_array("lat", lat, poles=True)
    lon_deg = longitude_array("lon", lon)
    try:
        lat_deg, lon_deg = np.broadcast_arrays(lat_deg, lon_deg)
    except ValueError:
        raise ValueError(
            f"lat and lon must have broadcastable shapes, got {lat_deg.shape} and {lon_deg.shape}."
        ) from None
    eps_km = check_positive("epsilon_per_km", epsilon_per_km)
    gen = check_rng(rng)
    check_choice("method", method, PLANAR_LAPLACE_METHODS)
    radii = _sphere_radii(lat_deg.shape, eps_km / 1000.0, gen, method)
    angles = gen.uniform(0.0, 2.0 * math.pi, size=lat_deg.shape)
    return _destination(lat_deg, lon_deg, radii, np.asarray(angles, dtype=np.float64))
