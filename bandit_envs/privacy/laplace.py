"""The Laplace mechanism on real arrays (epsilon-DP for a stated L1 sensitivity).

:func:`laplace_mechanism` is the Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

Guarantee: epsilon-DP (``delta = 0``) per release of the whole array ``x``, for the
neighbouring relation "``x`` and ``x'`` differ by at most ``sensitivity`` in L1 norm over the
whole array" (``sensitivity`` is the L1 sensitivity of the query that produced ``x``). With
clipping bounds ``[lower, upper]`` the sensitivity follows from them: one clipped entry moves by
at most ``upper - lower``, which is the default sensitivity then, and a smaller explicit one is
refused. So in the local model, where each entry of ``x`` is one user's value, each report is
epsilon-LDP for that user (unit: one entry, any two values in the range); a user who
contributes ``d`` entries needs ``sensitivity = d * (upper - lower)``.

Noise: ``rng.laplace(0, sensitivity / epsilon)``, one independent draw per entry from the
``numpy.random.Generator`` passed as ``rng``. Floating-point Laplace sampling leaks through the
low-order bits of the output [M12]_: acceptable for a research library, not for production (use
a discrete or snapping mechanism there).

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bandit_envs.privacy._checks import check_epsilon, check_rng, clipped_sensitivity, finite_array

__all__ = ["laplace_mechanism"]


def laplace_mechanism(
    x: ArrayLike,
    epsilon: float,
    rng: np.random.Generator,
    sensitivity: float | None = None,
    *,
    lower: float | None = None,
    upper: float | None = None,
) -> NDArray[np.float64]:
    """Add i.i.d. Laplace noise of scale ``sensitivity / epsilon`` to every entry of ``x``.

    The Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

    Privacy guarantee: epsilon-DP for the neighbouring relation "``x`` and ``x'`` differ by at
    most ``sensitivity`` in L1 norm over the whole array", i.e. ``sensitivity`` is the L1
    sensitivity of the query that produced ``x``. The noise is ``rng.laplace(0,
    sensitivity / epsilon)``, one draw per entry.

    Clipping: when ``lower`` and ``upper`` are given, ``x`` is first clipped to
    ``[lower, upper]`` and the noise is added to the clipped value. One clipped entry can then
    move by at most ``upper - lower``, so that width is the sensitivity unless a larger one is
    passed (a user with ``d`` entries: ``d * (upper - lower)``); a smaller one is refused, since
    it would spend more than epsilon. With per-entry users (the local model) each report is then
    epsilon-LDP, the unit being one entry. Without clipping the sensitivity defaults to 1 and
    the guarantee holds only if the caller ensures that bound.

    Parameters
    ----------
    x : array_like of float
        Exact values (finite).
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        Source of the noise.
    sensitivity : float or None, default None
        L1 sensitivity of ``x``, > 0. None: ``upper - lower`` with clipping bounds, else 1.0.
        With bounds, an explicit value must be at least ``upper - lower``.
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
        one bound is given, ``lower >= upper``, or ``sensitivity < upper - lower``.
    TypeError
        If an argument has the wrong type.
    """
    values = finite_array("x", x)
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    delta_1, bounds = clipped_sensitivity("sensitivity", sensitivity, lower, upper)
    if bounds is not None:
        values = np.clip(values, *bounds)
    return values + gen.laplace(0.0, delta_1 / eps, size=values.shape)
