"""Argument checks shared by the mechanisms of :mod:`bandit_envs.privacy`.

Each check returns the validated value (as a float or a float64/int64 array) or raises one
``ValueError`` / ``TypeError`` naming the argument, what was given and what is allowed. They
draw no randomness and have no privacy meaning of their own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bandit_envs.validation import check_float, real_array, summarize

__all__ = [
    "GAUSSIAN_SAMPLER_BOUND",
    "LAPLACE_SAMPLER_BOUND",
    "MAX_EPSILON",
    "bit_array",
    "check_delta",
    "check_epsilon",
    "check_rng",
    "clipped_sensitivity",
    "gaussian_tail_delta",
    "laplace_tail_delta",
    "finite_array",
    "latitude_array",
    "longitude_array",
]


#: Range of the positive parameters (epsilon, sensitivities, sigma): beyond it the noise scale
#: (sensitivity / epsilon, 1 / sigma, ...) over- or underflows in double precision.
POSITIVE_RANGE = (1e-100, 1e100)
#: Smallest delta: below it ln(1.25 / delta) overflows.
MIN_DELTA = 1e-300

#: Largest |N| / b of numpy's Laplace sampler ``Generator.laplace(0, b)``: it takes
#: ``b log(2 U)`` or ``-b log(2 - 2 U)`` of a uniform ``U`` on the multiples of ``2**-53``, so
#: ``|N| <= 52 ln 2 b``, about ``36.04 b`` (reached at ``U = 2**-53`` and ``1 - 2**-53``).
LAPLACE_SAMPLER_BOUND = 52.0 * math.log(2.0)
#: Largest |N| / sigma of numpy's normal sampler ``Generator.normal`` (its ziggurat's tail returns
#: ``r + x`` with ``r = 3.6542`` only when ``2 y > x**2``, ``y = -log1p(-U) <= 53 ln 2``), so
#: ``|N| < 3.6542 + sqrt(106 ln 2)``, about ``12.23 sigma``.
GAUSSIAN_SAMPLER_BOUND = 3.6541528853610088 + math.sqrt(106.0 * math.log(2.0))
#: Largest epsilon a mechanism or agent of this package accepts. numpy's noise samplers are
#: bounded (above) and randomized response keeps a bit with the float64 probability
#: ``expit(epsilon)``, so the stated guarantees fail for large epsilon: with Laplace noise of scale
#: ``b`` and a neighbour shifted by ``epsilon b`` the draw lands where the neighbour's cannot
#: with probability up to :func:`laplace_tail_delta` ``= e**(epsilon - 36.04) / 2`` (1 from
#: epsilon = 36.7 on; 0.99 measured at epsilon = 40), the Gaussian's counterpart
#: (:func:`gaussian_tail_delta`) reaches about 0.05 at epsilon = 100 and delta = 1e-5, and
#: ``expit(37) == 1.0``, so randomized response would be deterministic. At epsilon <= 15 the
#: Laplace tail event has probability at most ``3.6e-10`` per draw, the Gaussian's at most
#: ``1.5e-7`` for delta <= 0.9 (``5.4e-15`` for delta <= 0.1) and randomized response's flip
#: probability ``e**-15 / (1 + e**-15)``, about ``3.06e-7``, is held within a relative ``1e-9``.
MAX_EPSILON = 15.0


def laplace_tail_delta(epsilon: float) -> float:
    """``e**(epsilon - LAPLACE_SAMPLER_BOUND) / 2``: the additive delta of one bounded Laplace draw.

    With ``x`` and ``x'`` at L1 distance ``epsilon b`` (the sensitivity of a scale-``b``
    release at that epsilon), the event "``x + N`` is below every value ``x' + N`` can take"
    has probability ``(e**(epsilon - B) - e**-B) / 2 <= e**(epsilon - B) / 2`` under ``x`` and 0
    under ``x'`` (``B`` = :data:`LAPLACE_SAMPLER_BOUND`); a shift spread over several entries
    gives less. About ``3.6e-10`` at :data:`MAX_EPSILON`; at most 1 (reached near epsilon = 36.7,
    where the bound stops being informative).
    """
    return min(1.0, 0.5 * math.exp(min(epsilon - LAPLACE_SAMPLER_BOUND, 1.0)))


def gaussian_tail_delta(shift: float) -> float:
    """``Phi(shift - GAUSSIAN_SAMPLER_BOUND)``: the additive delta of bounded Gaussian noise, ``shift`` in sigmas.

    With neighbouring inputs at L2 distance ``shift * sigma``, the event "some entry of the output
    lies where the neighbour's cannot" has probability at most ``Phi(shift - B)`` plus a term of
    order ``Phi(-B)`` per entry, about ``1e-34`` (``B`` = :data:`GAUSSIAN_SAMPLER_BOUND`: the
    shift is largest when it falls on one entry). Computed with ``erfc``, exact in the far tail.
    """
    return 0.5 * math.erfc((GAUSSIAN_SAMPLER_BOUND - shift) / math.sqrt(2.0))


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a number in :data:`POSITIVE_RANGE` (a scale parameter).

    Raises
    ------
    ValueError
        If ``value`` is not finite or outside ``POSITIVE_RANGE`` (one sentence saying why).
    TypeError
        If ``value`` is not a real number.
    """
    v = check_float(name, value, low=0.0, low_open=True)
    low, high = POSITIVE_RANGE
    if not low <= v <= high:
        raise ValueError(
            f"{name} must be in [{low:g}, {high:g}] (beyond, the noise scale over- or underflows), got {v!r}."
        )
    return v


def check_epsilon(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a privacy parameter epsilon in ``(0, MAX_EPSILON]``.

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : Any
        The value to check.

    Returns
    -------
    float
        The validated value.

    Raises
    ------
    ValueError
        If ``value`` is not finite, below ``POSITIVE_RANGE[0]`` or above :data:`MAX_EPSILON`
        (one sentence saying why).
    TypeError
        If ``value`` is not a real number.
    """
    try:
        v = check_float(name, value, low=0.0, low_open=True)
    except ValueError:  # not finite or not positive: the message states the whole range
        raise ValueError(f"{name} must be a finite number in (0, {MAX_EPSILON:g}], got {summarize(value)}.") from None
    if v > MAX_EPSILON:
        raise ValueError(
            f"{name} must be in (0, {MAX_EPSILON:g}], got {v!r}: above it numpy's bounded noise samplers "
            "and float64 randomized response no longer give the stated privacy guarantee."
        )
    return check_positive(name, v)


def check_delta(value: Any) -> float:
    """Return ``value`` as a float if it lies in the open interval (0, 1) (a privacy parameter delta).

    Raises
    ------
    ValueError
        If ``value`` is not in (0, 1).
    TypeError
        If ``value`` is not a real number.
    """
    v = check_float("delta", value, low=0.0, high=1.0, low_open=True, high_open=True)
    if v < MIN_DELTA:
        raise ValueError(f"delta must be in [{MIN_DELTA:g}, 1) (below, ln(1/delta) overflows), got {v!r}.")
    return v


def check_rng(rng: Any) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator``.

    Raises
    ------
    TypeError
        If ``rng`` is anything else (e.g. a seed, ``None`` or the legacy ``RandomState``).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got {type(rng).__name__}."
        )
    return rng


def finite_array(name: str, value: Any, *, booleans: bool = True) -> NDArray[np.float64]:
    """Return ``value`` as a float64 array whose entries are all finite.

    ``booleans=False`` refuses booleans (for values such as coordinates, of which a boolean is
    never one), as :func:`~bandit_envs.validation.real_array` does.

    Raises
    ------
    ValueError
        If an entry is NaN or infinite.
    TypeError
        If ``value`` cannot be converted to a float array (strings, complex numbers, and
        booleans where ``booleans`` is False, are refused, never cast).
    """
    arr = real_array(name, value, booleans=booleans)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers, but it has NaN or inf.")
    return arr


def bit_array(name: str, value: Any) -> NDArray[np.int64]:
    """Return ``value`` as an int64 array if it holds only the bits 0 and 1.

    Raises
    ------
    ValueError
        If an entry is not 0 or 1.
    TypeError
        If ``value`` is not a bool, integer or float array.
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of bits (0 or 1), got dtype {arr.dtype}.")
    if not np.all((arr == 0) | (arr == 1)):
        bad = arr[(arr != 0) & (arr != 1)].flat[0].item()
        raise ValueError(f"{name} must contain only the bits 0 and 1, got the value {bad!r}.")
    return arr.astype(np.int64)


def latitude_array(name: str, value: Any, *, poles: bool) -> NDArray[np.float64]:
    """Return ``value`` as a finite float64 array of latitudes in degrees.

    With ``poles=True`` latitudes must lie in [-90, 90]; with ``poles=False`` strictly between
    -90 and 90 (the local east-north frame is undefined at the poles).

    Raises
    ------
    ValueError
        If a latitude is out of range or not finite.
    TypeError
        If ``value`` cannot be converted to a float array (booleans are refused).
    """
    arr = finite_array(name, value, booleans=False)
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


def longitude_array(name: str, value: Any) -> NDArray[np.float64]:
    """Return ``value`` as a finite float64 array of longitudes in degrees within [-180, 180].

    Raises
    ------
    ValueError
        If a longitude is out of range or not finite.
    TypeError
        If ``value`` cannot be converted to a float array (booleans are refused).
    """
    arr = finite_array(name, value, booleans=False)
    if arr.size and (arr.min() < -180.0 or arr.max() > 180.0):
        raise ValueError(
            f"{name} must contain longitudes in degrees within [-180, 180], "
            f"got values in [{arr.min():g}, {arr.max():g}]."
        )
    return arr


def clipped_sensitivity(
    name: str, sensitivity: Any, lower: Any, upper: Any
) -> tuple[float, tuple[float, float] | None]:
    """The sensitivity of a mechanism that clips each entry to ``[lower, upper]``, and the bounds.

    Without bounds (both None) the sensitivity is ``sensitivity``, or 1.0 when it is None: the
    caller vouches for it. With bounds, one clipped entry can move by at most
    ``width = upper - lower``, so the sensitivity is ``width`` when ``sensitivity`` is None, and
    an explicit ``sensitivity`` must be at least ``width`` (a larger value covers users who
    contribute several entries); a smaller one would understate the privacy loss.

    Parameters
    ----------
    name : str
        Name of the sensitivity argument, used in error messages.
    sensitivity : Any
        The sensitivity given by the caller, or None.
    lower, upper : Any
        Clipping bounds, both given (``lower < upper``) or both None.

    Returns
    -------
    tuple
        ``(sensitivity, (lower, upper))``, or ``(sensitivity, None)`` without clipping.

    Raises
    ------
    ValueError
        If a value is not finite, the sensitivity is not in :data:`POSITIVE_RANGE`, only one bound
        is given, ``lower >= upper``, the sensitivity is smaller than ``upper - lower``, or (no
        explicit sensitivity) the width ``upper - lower`` is outside :data:`POSITIVE_RANGE`, the
        range of an explicit sensitivity (the message names ``lower`` and ``upper``).
    TypeError
        If a value is not a real number.
    """
    given = None if sensitivity is None else check_positive(name, sensitivity)
    if (lower is None) != (upper is None):
        raise ValueError(
            f"lower and upper must be given together or both be None, got lower={lower!r}, upper={upper!r}."
        )
    if lower is None or upper is None:
        return (1.0 if given is None else given), None
    lo = check_float("lower", lower)
    hi = check_float("upper", upper)
    if lo >= hi:
        raise ValueError(f"upper must be greater than lower, got lower={lower!r}, upper={upper!r}.")
    width = hi - lo
    if given is None:  # the width is the sensitivity: it gets an explicit one's range, named by the bounds
        low, high = POSITIVE_RANGE
        if not low <= width <= high:
            raise ValueError(
                f"lower and upper must be between {low:g} and {high:g} apart when {name} is not given (the width "
                f"upper - lower is then the {name}; beyond, the noise scale over- or underflows), got "
                f"lower={lower!r}, upper={upper!r} (width {width:g})."
            )
        return width, (lo, hi)
    if given < width:
        raise ValueError(
            f"{name} must be at least upper - lower = {width:g} when clipping to [lower, upper] (one clipped "
            f"value can move that far), got {sensitivity!r}; omit it to use the width."
        )
    return given, (lo, hi)
