"""The Laplace mechanism on real arrays (epsilon-DP for a stated L1 sensitivity).

:func:`laplace_mechanism` is the Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

Guarantee: epsilon-DP (``delta = 0``) per release of the whole array ``x``, for the
neighbouring relation "``x`` and ``x'`` differ by at most ``sensitivity`` in L1 norm over the
whole array" (``sensitivity`` is the L1 sensitivity of the query that produced ``x``). In the
local model, where ``x`` is one user's datum clipped to ``[lower, upper]``, passing
``sensitivity = upper - lower`` (``d * (upper - lower)`` for ``d`` values of one user) makes
each report epsilon-LDP for that user. Clipping alone does not set the sensitivity.

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

from bandit_envs.privacy._checks import check_epsilon, check_rng, finite_array
from bandit_envs.validation import check_float

__all__ = ["laplace_mechanism"]


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

    The Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

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
    values = finite_array("x", x)
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
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
