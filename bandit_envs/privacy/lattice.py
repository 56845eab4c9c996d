"""Lattice sampling: Laplace and Gaussian noise whose output set does not depend on the input.

Floating-point Laplace or Gaussian noise added to a float value leaks the value through the
low-order bits of the output: the set of doubles ``x + noise`` can reach depends on ``x``, so two
neighbouring inputs can have (nearly) disjoint output sets, whatever epsilon promises
(Mironov [M12]_, Sec. 3). The **lattice sampler** used by default by
:func:`bandit_envs.privacy.laplace_mechanism`, :func:`bandit_envs.privacy.gaussian_mechanism` and
every private agent of :mod:`agents` removes that dependence by working on the grid
``g Z`` of one power of two ``g``, the approach of the discrete mechanisms of Canonne, Kamath and
Steinke [CKS20]_ (Sec. 1, 5):

1. the exact value is rounded to the grid, ``x_g = g * rint(x / g)`` (exact: ``g`` is a power of
   two);
2. the noise is rounded to the grid, ``g * rint(N / g)`` with ``N`` the usual continuous draw
   (``Laplace(0, b)`` or ``N(0, sigma^2)``, from the same generator and the same number of
   uniforms as the float sampler);
3. the release is ``x_g + g * rint(N / g)``, a multiple of ``g`` computed without rounding error
   (both terms are integers times ``g`` below ``2**53 g``).

So every output is a multiple of ``g``, for every input: the output set is ``g Z`` (the test is
``tests/test_privacy.py``). ``g`` depends only on public parameters: :func:`grid_step` is the
largest power of two at most ``scale * 2**-GRID_BITS / spread`` (``spread`` the number of entries
for L1, its square root for L2), so the grid is about a million times finer than the noise.

Accounting (exact, for the distribution the sampler is designed to have). Because ``x_g / g`` is
an integer, ``x_g + g * rint(N / g) = g * rint((x_g + N) / g)`` (ties aside, which have
probability zero): the release is a post-processing of the continuous mechanism applied to
``x_g``. Rounding moves each entry by at most ``g / 2``, so two neighbouring inputs at L1
distance ``D`` have rounded values at L1 distance at most ``D + n g`` (``n`` entries; L2: at most
``D + sqrt(n) g``). The lattice sampler therefore calibrates the noise to the **widened
sensitivity** ``D + n g`` (L1, Laplace: ``b = (D + n g) / epsilon``) or ``D + sqrt(n) g`` (L2,
Gaussian: ``sigma`` of the analytic or classic calibration at that sensitivity), and the release
is then epsilon-DP (Laplace) or (epsilon, delta)-DP (Gaussian) for exactly the stated epsilon and
delta. The noise integer ``Z = rint(N / g)`` has the pmf of :func:`laplace_lattice_pmf` or
:func:`gaussian_lattice_pmf` (the continuous law integrated over ``[(z - 1/2) g, (z + 1/2) g)``).
No clamp is applied.

What the floating-point implementation adds. ``N`` itself is a double computed from a 53-bit
uniform, so ``Z``'s pmf differs from the exact one by the probability of the few doubles that
round across a cell boundary (or by one of the 53-bit uniforms a cell holds): an absolute
error of about ``2**-52`` per cell. Near the centre a cell has probability about ``2**-20``, a
relative error of about ``2**-32``; it grows like the inverse of the density, to about 20% at
``|N| = 20 b`` for the Laplace sampler (tail probability ``e**-20``, about ``2e-9``) and a few
per cent at ``6 sigma`` for the Gaussian one (tail probability about ``2e-9``). So the
implementation's privacy loss stays within about ``2**-30`` of the design's except on events of
about that probability (an estimate, not a proof). And ``N`` is bounded: ``|N| <= 52 ln 2 b``,
about ``36.04 b``, for the Laplace sampler (its uniform's smallest value is ``2**-53``;
``LAPLACE_SAMPLER_BOUND`` in ``bandit_envs.privacy._checks``) and ``|N| < 12.23 sigma`` for the
Gaussian one (its ziggurat's tail; ``GAUSSIAN_SAMPLER_BOUND``). So the outputs lie in
``x_g + g [-Z_max, Z_max]``, which neighbouring inputs shift, and the output lands where the
neighbour's cannot with positive probability. For Laplace noise of scale ``b`` and a neighbour
at L1 distance ``epsilon b`` that **sampler tail event** has probability at most
``delta_s = e**(epsilon - 36.04) / 2`` per release (:func:`~bandit_envs.privacy._checks.laplace_tail_delta`;
about ``3.0e-16`` at epsilon = 1, ``3.6e-10`` at epsilon = 15, 1 from epsilon = 36.7 on; 0.99 measured at 40), under
one input and 0 under the other: the release is (epsilon, delta_s)-DP, not pure epsilon-DP. For
the Gaussian it is ``delta_s = Phi(D / sigma - 12.23)`` (``D`` the L2 sensitivity, the shift in
one entry; spread over entries it is smaller), added to delta: at epsilon = 15 at most
``1.5e-7`` for delta <= 0.9 and ``5.4e-15`` for delta <= 0.1; at epsilon = 100, delta = 1e-5 it
would be ``0.05``. Every entry point therefore refuses epsilon above ``MAX_EPSILON = 15``
(``bandit_envs.privacy._checks``), except LDP-LinUCB, whose stated delta per report includes
this delta_s (:attr:`agents.linear.LDPLinUCB.privacy_per_report`). A unit whose data enter ``k``
releases adds ``k delta_s``: the local agents' per-user accounting includes it
(:mod:`bandit_envs.privacy.accounting`), and so does the central agents' ``privacy_spent``: a
unit that enters ``m`` releases, each at some epsilon' <= epsilon, is stated with
``delta = m delta_s(epsilon')`` at most (about ``3e-16 m`` at epsilon' = 1).
These are small-probability, small-ratio effects of the sampler's tail at allowed epsilon; the lattice removes the
disjoint-support attack of [M12]_ (an empirical epsilon of 7 to 9 on the float sampler). The
exact rejection samplers of [CKS20]_ (Alg. 1-3) would remove them too, at many uniforms per draw;
they are not used here.

The float sampler (``sampler="float"``) remains for speed and for reproducing old results: it
returns ``x + N`` and is **not** safe against floating-point attacks.

References
----------
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
.. [CKS20] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from bandit_envs.validation import check_choice

__all__ = [
    "GRID_BITS",
    "SAMPLERS",
    "check_sampler",
    "gaussian_lattice_pmf",
    "grid_step",
    "laplace_lattice_pmf",
    "round_input",
    "snap",
    "report_grid",
    "sum_grid",
]

SAMPLERS = ("lattice", "float")
"""Noise samplers: ``"lattice"`` (default, output set ``g Z`` for every input) and ``"float"``
(raw ``x + N``, faster, not safe against floating-point attacks)."""

GRID_BITS = 20
"""The grid is at least ``2**GRID_BITS`` times finer than the noise scale (per entry)."""


def check_sampler(sampler: str) -> str:
    """Return ``sampler`` if it is one of :data:`SAMPLERS`, else raise one ``ValueError`` sentence."""
    return check_choice("sampler", sampler, SAMPLERS)


def grid_step(scale: float, spread: float = 1.0) -> float:
    """The grid ``g``: the largest power of two at most ``scale * 2**-GRID_BITS / spread``.

    Parameters
    ----------
    scale : float
        The noise scale (Laplace ``b``, Gaussian ``sigma``) before widening, > 0.
    spread : float, default 1.0
        How many grid steps the rounding adds to the sensitivity per grid step: the number of
        entries ``n`` (L1) or ``sqrt(n)`` (L2).

    Returns
    -------
    float
        A power of two.
    """
    _, exponent = math.frexp(scale / spread)  # scale / spread = m 2**exponent, m in [1/2, 1)
    return math.ldexp(1.0, exponent - 1 - GRID_BITS)


def sum_grid(scale: float, magnitude: float) -> float:
    """The grid of released running sums: ``max(grid_step(scale), grid_step(magnitude) / 16)``.

    The private agents and counters release sums whose size grows with the stream (rewards in
    [0, 1]: up to the number of rounds). With ``magnitude`` the size of one item (the width of
    its bounds), the grid is never finer than about ``2**-24`` of it, so sums of up to about
    ``2**28`` items stay exact multiples of the grid (``2**52`` steps); for a large epsilon the
    grid is then coarser than ``2**-20`` of the noise scale, which costs utility only (the
    accounting widens the sensitivity by the grid whatever its size).
    """
    return max(grid_step(scale), grid_step(magnitude) / 16.0)


def report_grid(scale: float, magnitude: float) -> float:
    """The grid of one report's entries: ``max(grid_step(scale), grid_step(magnitude) * 2**-30)``.

    ``scale`` is the per-entry noise scale over the spread (``sigma / sqrt(n)``), ``magnitude`` a
    bound on an entry's exact value: the floor keeps every exact entry below ``2**51`` grid steps,
    so the rounded report is exact even for a tiny noise scale (a huge epsilon).
    """
    return max(grid_step(scale), grid_step(magnitude) * 2.0**-30)


def snap(x: ArrayLike, grid: float) -> NDArray[np.float64]:
    """``grid * rint(x / grid)``: ``x`` rounded to the nearest multiple of the power of two ``grid``.

    Exact in double precision (division and multiplication by a power of two only change the
    exponent), ties to even.
    """
    return np.rint(np.asarray(x, dtype=np.float64) / grid) * grid


def round_input(name: str, values: NDArray[np.float64], grid: float) -> NDArray[np.float64]:
    """``values`` rounded to ``grid``; one ``ValueError`` if an entry is ``2**52`` grid steps or more.

    Beyond that the sum of the rounded value and the rounded noise (at most about ``2**26``
    steps) may not be exact on the grid.
    """
    limit = math.ldexp(grid, 52) if grid < math.ldexp(1.0, 970) else math.inf
    top = float(np.max(np.abs(values))) if values.size else 0.0
    if top >= limit:
        raise ValueError(
            f"{name} has an entry of magnitude {top:g}, too large for the lattice sampler's grid {grid:g} "
            f"(at most {limit:g}); rescale it or use sampler='float'."
        )
    return snap(values, grid)


def laplace_lattice_pmf(z: ArrayLike, scale: float, grid: float) -> NDArray[np.float64]:
    """Exact pmf of ``Z = rint(N / grid)``, ``N ~ Laplace(0, scale)``: ``P(N in [(z - 1/2) g, (z + 1/2) g))``.

    By symmetry, ``1 - exp(-g / (2 b))`` at 0 and ``(exp(-(|z| - 1/2) g / b) - exp(-(|z| + 1/2) g / b)) / 2``
    elsewhere.
    """
    m = np.abs(np.asarray(z, dtype=np.float64))
    lo = np.maximum(m - 0.5, 0.0) * grid / scale
    hi = (m + 0.5) * grid / scale
    centre = -np.expm1(-0.5 * grid / scale)
    return np.asarray(np.where(m == 0, centre, 0.5 * (np.exp(-lo) - np.exp(-hi))), dtype=np.float64)


def gaussian_lattice_pmf(z: ArrayLike, sigma: float, grid: float) -> NDArray[np.float64]:
    """Exact pmf of ``Z = rint(N / grid)``, ``N ~ N(0, sigma^2)``: ``P(N in [(z - 1/2) g, (z + 1/2) g))``.

    By symmetry, ``Phi(h) - Phi(-h)`` at 0 (``h = g / (2 sigma)``) and
    ``Phi(-(|z| - 1/2) g / sigma) - Phi(-(|z| + 1/2) g / sigma)`` elsewhere.
    """
    m = np.abs(np.asarray(z, dtype=np.float64))
    lo = np.maximum(m - 0.5, 0.0) * grid / sigma
    hi = (m + 0.5) * grid / sigma
    h = 0.5 * grid / sigma
    return np.asarray(np.where(m == 0, ndtr(h) - ndtr(-h), ndtr(-lo) - ndtr(-hi)), dtype=np.float64)
