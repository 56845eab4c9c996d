"""Duchi, Jordan and Wainwright's L2-ball mechanism: unbiased epsilon-LDP reports of bounded vectors.

:func:`l2_ball_mechanism` privatizes vectors of Euclidean norm at most ``radius`` ([DJW18]_,
§4.2.3, the mechanism for the L2 ball; the stochastic-gradient mechanism of Han, Liang, Wang
and Zhang [HLWZ21]_ uses it), and :func:`l2_ball_scale` is the norm B of its outputs.

Mechanism. For a vector ``v`` in R^D with ``||v|| <= r`` (longer vectors are first projected
onto the ball):

1. randomized rounding: ``w = s r v / ||v||`` with ``s = +1`` with probability
   ``1/2 + ||v|| / (2 r)`` and ``-1`` otherwise (``v = 0``: ``w = s r e_1`` with ``s = ±1``
   equally likely), so that ``E[w] = v``;
2. with probability ``pi = e^eps / (1 + e^eps)`` the output ``z`` is uniform on the half of the
   sphere of radius ``B`` that ``w`` points to, ``{z : ||z|| = B, <z, w> > 0}``, and otherwise
   uniform on the other half, where

   ``B = r (e^eps + 1) / (e^eps - 1) * sqrt(pi) D Gamma((D - 1) / 2 + 1) / (2 Gamma(D / 2 + 1))``

   makes the output unbiased: ``E[z] = v``.

Guarantee: epsilon-LDP (``delta = 0``) per report, for the neighbouring relation "any two
inputs in the ball of radius ``r``" (one user's vector replaced by any other). Whatever the input,
the output density on the sphere of radius ``B`` takes only the values ``2 pi / A`` and
``2 (1 - pi) / A`` (``A`` its area) or mixtures of them, whose ratio is at most
``pi / (1 - pi) = e^eps``. The output always has norm ``B``, about
``r coth(eps / 2) sqrt(pi D / 2)`` for large D: its variance per coordinate,
``(B^2 - ||v||^2) / D``, stays near ``(pi / 2) r^2 coth^2(eps / 2)`` whatever D is.

Noise: per report, D standard normals (a uniform direction, normalized) and then two uniforms
(the rounding sign, then the half-sphere), drawn in that order from the ``numpy.random.Generator``
passed as ``rng``. Picking the half-sphere by flipping the sign of a uniform direction is exact:
the uniform law on the sphere is symmetric. Floating-point sampling leaks through low-order bits
([M12]_): fine for research, not for production.

References
----------
.. [DJW18] J. C. Duchi, M. I. Jordan and M. J. Wainwright, "Minimax optimal procedures for
   locally private estimation", Journal of the American Statistical Association 113(521), 2018.
.. [HLWZ21] Y. Han, Z. Liang, Y. Wang and J. Zhang, "Generalized linear bandits with local
   differential privacy", NeurIPS 2021.
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from bandit_envs.privacy._checks import check_epsilon, check_positive, check_rng, finite_array
from bandit_envs.validation import check_int

__all__ = ["l2_ball_keep_probability", "l2_ball_mechanism", "l2_ball_scale"]


def l2_ball_keep_probability(epsilon: float) -> float:
    """``pi = e^eps / (1 + e^eps)``: the probability that the output lies on the input's half of the sphere."""
    eps = check_epsilon("epsilon", epsilon)
    return 1.0 / (1.0 + math.exp(-eps))


def l2_ball_scale(epsilon: float, dim: int, radius: float = 1.0) -> float:
    """Norm B of every output of :func:`l2_ball_mechanism` on ``dim``-vectors in the ball of ``radius``.

    ``B = r coth(eps / 2) sqrt(pi) D Gamma((D + 1) / 2) / (2 Gamma(D / 2 + 1))`` ([DJW18]_, §4.2.3),
    the norm for which the output is unbiased (``coth(eps / 2) = (e^eps + 1) / (e^eps - 1)``).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    dim : int
        Dimension D of the vectors, >= 1.
    radius : float, default 1.0
        Radius r of the ball, > 0.

    Returns
    -------
    float
        B.
    """
    eps = check_epsilon("epsilon", epsilon)
    d = check_int("dim", dim, minimum=1)
    r = check_positive("radius", radius)
    sphere = math.sqrt(math.pi) * d * math.exp(gammaln((d + 1) / 2.0) - gammaln(d / 2.0 + 1.0)) / 2.0
    return r * sphere / math.tanh(eps / 2.0)


def l2_ball_mechanism(
    x: ArrayLike, epsilon: float, rng: np.random.Generator, radius: float = 1.0
) -> NDArray[np.float64]:
    """Privatize each row of ``x`` (a vector of the L2 ball of ``radius``) by the L2-ball mechanism.

    Each row is one report: epsilon-LDP for "any two vectors of the ball" ([DJW18]_, §4.2.3; see
    the module docstring), unbiased (``E[output] = row``), of norm :func:`l2_ball_scale`. Rows
    longer than ``radius`` are first projected onto the ball (``row * radius / ||row||``), which
    is what keeps the guarantee: the expectation is then the projected row.

    Noise per row, in this order: ``rng.standard_normal(D)``, then ``rng.random(2)`` (rounding
    sign, half-sphere); rows are drawn one after the other.

    Parameters
    ----------
    x : array_like of float
        One vector (D,) or a stack (..., D) of vectors; finite.
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        Source of the noise.
    radius : float, default 1.0
        Radius r of the ball, > 0.

    Returns
    -------
    numpy.ndarray of float64
        The reports, same shape as ``x``.

    Raises
    ------
    ValueError
        If ``x`` is empty, has no axis or is not finite, or ``epsilon`` or ``radius`` is not
        finite and positive.
    TypeError
        If an argument has the wrong type.
    """
    values = finite_array("x", x)
    if values.ndim == 0 or values.shape[-1] == 0:
        raise ValueError(f"x must have a last axis of at least one coordinate, got shape {values.shape}.")
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    r = check_positive("radius", radius)
    dim = values.shape[-1]
    scale = l2_ball_scale(eps, dim, r)
    keep = l2_ball_keep_probability(eps)
    rows = values.reshape(-1, dim)
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        top = float(np.abs(row).max())
        norm = top * float(np.linalg.norm(row / top)) if top > 0.0 else 0.0  # no overflow for huge rows
        if norm > r:
            row, norm = (row / top) * (r * top / norm), r
        direction = row / norm if norm > 0.0 else np.eye(1, dim)[0]
        g = gen.standard_normal(dim)
        u_sign, u_half = gen.random(2)
        sign = 1.0 if u_sign < 0.5 + norm / (2.0 * r) else -1.0
        z = g * (scale / float(np.linalg.norm(g)))
        if (float(z @ direction) * sign > 0.0) != (u_half < keep):
            z = -z
        out[i] = z
    return out.reshape(values.shape)
