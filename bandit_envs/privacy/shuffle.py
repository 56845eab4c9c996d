"""Privacy amplification by shuffling: the central (epsilon, delta) of n shuffled epsilon0-LDP reports.

In the shuffle model each of n users applies an epsilon0-LDP local randomizer to its datum and
a trusted shuffler hands the analyzer the n reports in a uniformly random order. Feldman,
McMillan and Talwar [FMT21]_ ("hiding among the clones", Thm. 3.2) show that, for neighbouring
datasets that differ in one user's datum, the shuffled reports are a post-processing of one
draw from

* ``P = (A + Z, C - A + 1 - Z)`` or ``Q = (A + 1 - Z, C - A + Z)``,

where ``C ~ Bin(n - 1, e^-eps0)`` counts the other users who act as "clones" of the changed
one, ``A ~ Bin(C, 1/2)`` and ``Z ~ Bern(e^eps0 / (e^eps0 + 1))``. So the shuffled output is
(epsilon, delta)-DP whenever P and Q are (epsilon, delta)-indistinguishable, and
:func:`shuffle_delta` computes that delta exactly: for each ``c`` the likelihood ratio
``P / Q`` is increasing in the first coordinate, so the hockey-stick divergence
``sum max(0, P - e^eps Q)`` is a difference of binomial tail sums at one cut-off (the
computation of [FMT21]_'s numerical bound, §4.3 and its code, here summed over every ``c``
instead of in steps); the swap of the two coordinates maps P to Q, so the divergence is the
same in both directions. :func:`shuffle_epsilon` inverts it, and :func:`local_epsilon_for_shuffle`
gives the largest epsilon0 whose n shuffled reports are (epsilon, delta)-DP.

Guarantee: (epsilon, delta)-DP of the shuffled batch of n reports, for the neighbouring
relation "one of the n inputs replaced by any other", when every report is epsilon0-LDP
(pure: ``delta0 = 0``; the theorem allows each randomizer to be chosen adaptively from the
earlier reports). A user who sends m reports in one batch changes m inputs: group privacy
(:func:`group_privacy`) then gives ``(m eps, delta (e^{m eps} - 1) / (e^eps - 1))``. Nothing
here draws randomness. ``dp_accounting`` (0.6) has no amplification-by-shuffling accountant,
hence this module.

References
----------
.. [FMT21] V. Feldman, A. McMillan and K. Talwar, "Hiding among the clones: a simple and nearly
   optimal analysis of privacy amplification by shuffling", FOCS 2021 (arXiv:2012.12803).
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bandit_envs.privacy._checks import check_epsilon
from bandit_envs.validation import check_float, check_int

__all__ = [
    "MAX_EPSILON",
    "MAX_REPORTS",
    "group_privacy",
    "local_epsilon_for_shuffle",
    "shuffle_delta",
    "shuffle_epsilon",
]

#: Largest epsilon (central or local) accepted: e^epsilon must be a finite float.
MAX_EPSILON = 700.0
#: Largest number of shuffled reports: the bound evaluates a binomial law over them (memory).
MAX_REPORTS = 10**7

#: Binomial weights of C below this are dropped; their total mass is added to delta (an upper bound).
_TINY = 1e-300


def _check_delta(delta: float) -> float:
    return check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_eps(name: str, value: float, *, zero: bool = False) -> float:
    """Epsilon in [0, 700] (``zero``: a central epsilon that may be 0) or as :func:`check_epsilon`, in (0, 15]."""
    eps = check_float(name, value, low=0.0) if zero else check_epsilon(name, value)
    if eps > MAX_EPSILON:
        raise ValueError(f"{name} must be at most {MAX_EPSILON:g} (e^{name} must be finite), got {eps!r}.")
    return eps


def _check_n(n: int) -> int:
    size = check_int("n", n, minimum=1)
    if size > MAX_REPORTS:
        raise ValueError(f"n must be at most {MAX_REPORTS:,} (the bound sums a binomial law over it), got {size:,}.")
    return size


@functools.lru_cache(maxsize=4096)
def _shuffle_delta(epsilon: float, local_epsilon: float, n: int) -> float:
    if epsilon >= local_epsilon:
        return 0.0  # P / Q <= e^eps0 everywhere: the shuffled output is eps0-DP with delta = 0
    from scipy import stats  # imported when used: scipy.stats takes a large part of a second to import

    keep = 1.0 / (1.0 + math.exp(-local_epsilon))  # alpha = e^eps0 / (1 + e^eps0)
    c = np.arange(n, dtype=np.int64)
    weights = stats.binom.pmf(c, n - 1, math.exp(-local_epsilon))
    kept = weights > _TINY
    dropped = max(0.0, 1.0 - float(weights[kept].sum()))
    c, weights = c[kept], weights[kept]
    ratio = math.exp(epsilon)
    # With b = Bin(c, 1/2) and x the first coordinate (0..c+1): P(x) = alpha b(x-1) + (1-alpha) b(x) and
    # Q(x) = (1-alpha) b(x-1) + alpha b(x); b(x-1) / b(x) = x / (c + 1 - x), so P(x) > e^eps Q(x) iff
    # x / (c + 1 - x) > k, i.e. x > k (c + 1) / (1 + k).
    k = (ratio * keep - (1.0 - keep)) / (keep - ratio * (1.0 - keep))
    cut = np.floor(k * (c + 1) / (1.0 + k)).astype(np.int64)  # the sum runs over x > cut
    tail_shifted = stats.binom.sf(cut - 1, c, 0.5)  # sum over x > cut of b(x - 1) = P(Bin >= cut)
    tail = stats.binom.sf(cut, c, 0.5)  # sum over x > cut of b(x)
    p_mass = keep * tail_shifted + (1.0 - keep) * tail
    q_mass = (1.0 - keep) * tail_shifted + keep * tail
    delta = float(np.sum(weights * np.maximum(p_mass - ratio * q_mass, 0.0)))
    return min(1.0, delta + dropped)


def shuffle_delta(epsilon: float, local_epsilon: float, n: int) -> float:
    """Delta at which n shuffled ``local_epsilon``-LDP reports are (``epsilon``, delta)-DP ([FMT21]_, Thm. 3.2).

    The hockey-stick divergence of the clones pair (P, Q) of the module docstring at
    ``e^epsilon``, summed exactly over every value of C (weights below 1e-300 are dropped and
    their mass added, which keeps it an upper bound). At ``n = 1`` (no clones) it is randomized
    response's ``(e^eps0 - e^eps) / (e^eps0 + 1)``; from ``epsilon = eps0`` on it is 0.

    Parameters
    ----------
    epsilon : float
        Central epsilon, in [0, 700].
    local_epsilon : float
        epsilon0 of each report, in (0, 15] (:func:`check_epsilon`'s bound).
    n : int
        Reports shuffled together, 1 to :data:`MAX_REPORTS`.

    Returns
    -------
    float
        delta in [0, 1].
    """
    eps = _check_eps("epsilon", epsilon, zero=True)
    eps0 = _check_eps("local_epsilon", local_epsilon)
    return _shuffle_delta(eps, eps0, _check_n(n))


def shuffle_epsilon(local_epsilon: float, n: int, delta: float) -> float:
    """Smallest epsilon at which n shuffled ``local_epsilon``-LDP reports are (epsilon, ``delta``)-DP.

    The root of :func:`shuffle_delta` ``= delta`` in [0, eps0] (Brent's method, then rounded up
    by 1e-9 so that the guarantee holds despite the tolerance). Never above ``local_epsilon``.

    Parameters
    ----------
    local_epsilon : float
        epsilon0 of each report, in (0, 15] (:func:`check_epsilon`'s bound).
    n : int
        Reports shuffled together, >= 1.
    delta : float
        Central delta in (0, 1).

    Returns
    -------
    float
        epsilon in [0, eps0].
    """
    eps0 = _check_eps("local_epsilon", local_epsilon)
    size = _check_n(n)
    dlt = _check_delta(delta)
    if _shuffle_delta(0.0, eps0, size) <= dlt:
        return 0.0
    from scipy.optimize import brentq  # imported when used: scipy.optimize is slow to import

    root = float(brentq(lambda e: _shuffle_delta(e, eps0, size) - dlt, 0.0, eps0, xtol=1e-12, rtol=1e-12))
    while _shuffle_delta(root, eps0, size) > dlt:  # pragma: no cover - the tolerance is far below this step
        root += 1e-9
    return min(eps0, root + 1e-9)


def local_epsilon_for_shuffle(epsilon: float, n: int, delta: float) -> float:
    """Largest epsilon0 (to about 1e-8 relative) whose n shuffled epsilon0-LDP reports are (``epsilon``, ``delta``)-DP.

    The root in epsilon0 of ``shuffle_delta(epsilon, eps0, n) = delta`` ([FMT21]_), found by
    Brent's method between ``epsilon`` (where delta is 0) and the first doubling past the root,
    then lowered until :func:`shuffle_delta` is at most ``delta`` there: the returned epsilon0 is
    checked, whatever the tolerance. At least ``epsilon``. Cached by arguments.

    Parameters
    ----------
    epsilon : float
        Target central epsilon, in (0, 15] (:func:`check_epsilon`'s bound).
    n : int
        Reports shuffled together, >= 1.
    delta : float
        Central delta in (0, 1).

    Returns
    -------
    float
        epsilon0 >= ``epsilon``.
    """
    return _local_epsilon(_check_eps("epsilon", epsilon), _check_n(n), _check_delta(delta))


@functools.lru_cache(maxsize=256)
def _local_epsilon(eps: float, size: int, dlt: float) -> float:
    def excess(eps0: float) -> float:
        return _shuffle_delta(eps, eps0, size) - dlt

    lo, hi = eps, 2.0 * eps + 1.0
    while excess(hi) <= 0.0:
        lo, hi = hi, 2.0 * hi
        if hi > MAX_EPSILON:  # e^eps0 would overflow: any eps0 up to here is fine
            return lo if excess(MAX_EPSILON) > 0.0 else MAX_EPSILON
    from scipy.optimize import brentq  # imported when used: scipy.optimize is slow to import

    root = float(brentq(excess, lo, hi, xtol=1e-12, rtol=1e-8))
    step = 1e-9 * root
    while root > eps and excess(root) > 0.0:
        root = max(eps, root - step)
    return root


def group_privacy(epsilon: float, delta: float, group: int) -> tuple[float, float]:
    """(epsilon, delta)-DP for one changed input, as a guarantee for ``group`` changed inputs.

    ``(m eps, delta (1 + e^eps + ... + e^{(m-1) eps}))`` = ``(m eps, delta (e^{m eps} - 1) / (e^eps - 1))``
    by chaining m neighbouring steps ([DR14]_ §2.3, with the sum kept instead of ``m e^{(m-1) eps}``);
    delta is capped at 1. ``group = 0`` gives ``(0, 0)``.

    Parameters
    ----------
    epsilon : float
        Guarantee for one changed input, epsilon in [0, 700].
    delta : float
        Its delta in [0, 1].
    group : int
        Inputs changed, 0 to 10^9.

    Returns
    -------
    tuple of float
        ``(epsilon, delta)`` for the group.
    """
    eps = _check_eps("epsilon", epsilon, zero=True)
    dlt = check_float("delta", delta, low=0.0, high=1.0)
    m = check_int("group", group, minimum=0)
    if m > 10**9:
        raise ValueError(f"group must be at most 10^9, got {m:,}.")
    if m == 0 or dlt == 0.0:
        return m * eps, 0.0
    if eps == 0.0:
        return 0.0, min(1.0, m * dlt)
    try:
        factor = math.expm1(m * eps) / math.expm1(eps)
    except OverflowError:
        factor = math.inf
    return m * eps, min(1.0, dlt * factor)
