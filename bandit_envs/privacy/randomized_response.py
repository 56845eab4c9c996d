"""Randomized response for bits and its extension to values in [0, 1] (epsilon-local DP).

- :func:`randomized_response`: Warner's randomized response [W65]_ in the form of [DR14]_
  section 3.2. Unit: one entry of the input, i.e. one user's bit; neighbouring inputs are
  "the bit is 0 versus 1". Guarantee: epsilon-LDP per reported bit (``delta = 0``); reporting
  ``k`` bits of the same user costs ``k * epsilon`` (sequential composition).
- :func:`bernoulli_mechanism`: draw ``b ~ Bernoulli(r)`` and apply randomized response to
  ``b`` (the "CTB" mechanism of Ren et al. [RZLS20]_). Unit: one entry of ``r`` in [0, 1], one
  user's value; neighbouring inputs are any two values in [0, 1]. Guarantee: epsilon-LDP per
  report (``delta = 0``).
- :func:`rr_debias`: the unbiased estimator ``(y - q) / (p - q)``, ``p = e^eps / (1 + e^eps)``,
  ``q = 1 - p``; post-processing, no privacy cost [DR14]_ (Prop. 2.1).

Noise: one uniform draw per entry from the ``numpy.random.Generator`` passed as ``rng``
(never the global ``np.random``); entries are perturbed independently.

References
----------
.. [W65] S. L. Warner, "Randomized response: a survey technique for eliminating evasive answer
   bias", Journal of the American Statistical Association 60(309), 1965.
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [RZLS20] W. Ren, X. Zhou, J. Liu and N. B. Shroff, "Multi-Armed Bandits with Local
   Differential Privacy", arXiv:2007.03121, 2020.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from bandit_envs.privacy._checks import bit_array, check_epsilon, check_rng
from bandit_envs.validation import check_unit_array

__all__ = ["bernoulli_mechanism", "randomized_response", "rr_debias"]


def randomized_response(bits: ArrayLike, epsilon: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report each bit truthfully with probability ``e^eps / (1 + e^eps)``, else flip it.

    Warner's randomized response [W65]_, in the form of [DR14]_ section 3.2.

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
    b = bit_array("bits", bits)
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    # expit(eps) = e^eps / (1 + e^eps) without overflow for large eps.
    keep = gen.random(b.shape) < expit(eps)
    return np.where(keep, b, 1 - b).astype(np.int64)


def rr_debias(reports: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """Unbiased estimate of the true bit (or mean) from randomized-response reports.

    Computes ``(y (e^eps + 1) - 1) / (e^eps - 1)``, i.e. ``(y - q) / (p - q)`` with
    ``p = e^eps / (1 + e^eps)`` and ``q = 1 - p``, Warner's estimator [W65]_. The estimator is linear,
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
    eps = check_epsilon("epsilon", epsilon)
    # p - q = tanh(eps / 2); this form stays finite for eps beyond exp's overflow point.
    return np.asarray((y - expit(-eps)) / math.tanh(eps / 2.0), dtype=np.float64)


def bernoulli_mechanism(r: ArrayLike, epsilon: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """Privatize values in [0, 1] as bits: 1 with probability ``(r e^eps + 1 - r) / (1 + e^eps)``.

    Equivalent to drawing ``b ~ Bernoulli(r)`` and applying :func:`randomized_response` to
    ``b`` (the "CTB" mechanism of Ren et al. [RZLS20]_, built on [W65]_). The mean of
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
    eps = check_epsilon("epsilon", epsilon)
    gen = check_rng(rng)
    p_one = expit(-eps) + math.tanh(eps / 2.0) * values
    return (gen.random(values.shape) < p_one).astype(np.int64)
