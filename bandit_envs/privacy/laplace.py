"""The Laplace mechanism on real arrays (epsilon-DP for a stated L1 sensitivity).

:func:`laplace_mechanism` is the Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

Guarantee: epsilon-DP per release of the whole array ``x`` up to the sampler tail event below
(so (epsilon, delta_s)-DP, ``delta_s = e**(epsilon - 36.04) / 2``), for the
neighbouring relation "``x`` and ``x'`` differ by at most ``sensitivity`` in L1 norm over the
whole array" (``sensitivity`` is the L1 sensitivity of the query that produced ``x``). With
clipping bounds ``[lower, upper]`` the sensitivity follows from them: one clipped entry moves by
at most ``upper - lower``, which is the default sensitivity then, and a smaller explicit one is
refused. So in the local model, where each entry of ``x`` is one user's value, each report is
epsilon-LDP for that user (unit: one entry, any two values in the range); a user who
contributes ``d`` entries needs ``sensitivity = d * (upper - lower)``.

Noise: one ``rng.laplace`` draw per entry from the ``numpy.random.Generator`` passed as
``rng``. With the default ``sampler="lattice"`` (:mod:`bandit_envs.privacy.lattice`) the entries
are rounded to a power-of-two grid ``g`` (:func:`~bandit_envs.privacy.lattice.grid_step` of
``sensitivity / epsilon`` over ``n`` entries), the noise ``Laplace(0, (sensitivity + n g) /
epsilon)`` is rounded to the same grid, and every output is a multiple of ``g`` whatever ``x`` is:
epsilon-DP for the stated sensitivity, the rounding's ``n g`` being paid for by the widened
scale, except on the **sampler tail event**: numpy's Laplace draw never exceeds
``52 ln 2 b``, about ``36.04 b``, so with a neighbour at L1 distance ``epsilon b`` the output
lands below everything the neighbour can produce with probability at most
``delta_s = e**(epsilon - 36.04) / 2`` per release (0 under the neighbour), an additive delta
(:mod:`bandit_envs.privacy.lattice`). epsilon is therefore limited to ``(0, 15]``, where
``delta_s <= 3.6e-10``; larger epsilon is refused. ``sampler="float"`` returns
``x + rng.laplace(0, sensitivity / epsilon)``, whose output set depends on ``x`` through the
low-order bits [M12]_: faster, **not safe against floating-point attacks**.

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
from bandit_envs.privacy.lattice import check_sampler, grid_step, round_input, snap

__all__ = ["laplace_mechanism"]


def laplace_mechanism(
    x: ArrayLike,
    epsilon: float,
    rng: np.random.Generator,
    sensitivity: float | None = None,
    *,
    lower: float | None = None,
    upper: float | None = None,
    sampler: str = "lattice",
) -> NDArray[np.float64]:
    """Add i.i.d. Laplace noise of scale ``sensitivity / epsilon`` to every entry of ``x``.

    The Laplace mechanism of [DR14]_ (Def. 3.3, Thm. 3.6).

    Privacy guarantee: epsilon-DP for the neighbouring relation "``x`` and ``x'`` differ by at
    most ``sensitivity`` in L1 norm over the whole array", i.e. ``sensitivity`` is the L1
    sensitivity of the query that produced ``x``. One ``rng.laplace`` draw per entry.

    Sampler: with ``sampler="lattice"`` (default) ``x`` is rounded to the grid
    ``g = grid_step(sensitivity / epsilon, n)`` (``n = x.size``, a power of two about ``2**-20``
    of the per-entry noise scale), the noise ``Laplace(0, b)`` with the widened scale
    ``b = (sensitivity + n g) / epsilon`` is rounded to the grid too, and the output, their sum,
    is a multiple of ``g`` for every input (:mod:`bandit_envs.privacy.lattice`, after Canonne,
    Kamath & Steinke 2020). Rounding moves the L1 distance of two inputs by at most ``n g``,
    which the widened scale pays for: epsilon-DP for the stated epsilon and sensitivity, up to
    the additive ``delta_s = e**(epsilon - 36.04) / 2`` of numpy's bounded Laplace draw (at most
    ``3.6e-10`` at the largest allowed epsilon, 15; see :mod:`bandit_envs.privacy.lattice`). ``sampler="float"``:
    ``x + Laplace(0, sensitivity / epsilon)``, the old behaviour, **not safe against
    floating-point attacks** (the output's low-order bits depend on ``x``, [M12]_).

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
        Privacy parameter, in (0, 15] (``MAX_EPSILON``).
    rng : numpy.random.Generator
        Source of the noise.
    sensitivity : float or None, default None
        L1 sensitivity of ``x``, > 0. None: ``upper - lower`` with clipping bounds, else 1.0.
        With bounds, an explicit value must be at least ``upper - lower``.
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
        If ``epsilon`` is not in (0, 15] or ``sensitivity`` is not finite and positive, ``x`` is not finite, only
        one bound is given, ``lower >= upper``, ``sensitivity < upper - lower``, (no
        ``sensitivity``) ``upper - lower`` is outside [1e-100, 1e100], the range of an explicit
        sensitivity, ``sampler`` is unknown, or (lattice) an entry is ``2**52`` grid steps or more.
    TypeError
        If an argument has the wrong type.
    """
    values = finite_array("x", x)
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    check_sampler(sampler)
    delta_1, bounds = clipped_sensitivity("sensitivity", sensitivity, lower, upper)
    if bounds is not None:
        values = np.clip(values, *bounds)
    if sampler == "float":
        return values + gen.laplace(0.0, delta_1 / eps, size=values.shape)
    n = max(values.size, 1)
    grid = grid_step(delta_1 / eps, n)
    base = round_input("x", values, grid)
    return base + snap(gen.laplace(0.0, (delta_1 + n * grid) / eps, size=values.shape), grid)
