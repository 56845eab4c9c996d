"""Spherical-earth helpers for the location mechanisms: the Earth radius and great-circle distance.

Deterministic functions of their inputs: no randomness, no privacy guarantee of their own. A
distance computed from reported (noisy) locations is post-processing of those reports.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bandit_envs.privacy._checks import finite_array, latitude_array

__all__ = ["EARTH_RADIUS_M", "haversine_m"]

EARTH_RADIUS_M = 6_371_008.8
"""Mean Earth radius in metres (IUGG), used by the lat/lon helpers."""


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
    phi1 = np.radians(latitude_array("lat1", lat1, poles=True))
    phi2 = np.radians(latitude_array("lat2", lat2, poles=True))
    lam1 = np.radians(finite_array("lon1", lon1, booleans=False))
    lam2 = np.radians(finite_array("lon2", lon2, booleans=False))
    h = np.sin((phi2 - phi1) / 2.0) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin((lam2 - lam1) / 2.0) ** 2
    return np.asarray(2.0 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0))), dtype=np.float64)
