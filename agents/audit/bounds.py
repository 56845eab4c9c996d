r"""Confidence bounds of a privacy audit: Clopper–Pearson intervals, the privacy loss of one event, power.

An (ε, δ)-DP mechanism M satisfies, for neighbouring inputs D, D′ and every event E,
P(M(D) ∈ E) ≤ e^ε P(M(D′) ∈ E) + δ. Counting how often E occurs in n independent runs on each
input bounds both probabilities, and with them the *privacy loss of the event*

.. math:: L_E = \ln \frac{P(M(D) \in E) - \delta}{P(M(D') \in E)},

which is ≤ ε for every event when the claim holds. This is the statistic of Ding et al., "Detecting
violations of differential privacy" (CCS 2018: a hypothesis test per candidate event) and of Jagielski,
Ullman & Oprea, "Auditing differentially private machine learning: how private is private SGD?"
(NeurIPS 2020: ε_LB = ln((1 − δ − FPR)/FNR) with Clopper–Pearson bounds on both rates, the
same quantity for the event "the attack says D"); Nasr et al., "Adversary instantiation: lower
bounds for differentially private machine learning" (IEEE S&P 2021) and Lu et al., "A general
framework for auditing differentially private machine learning" (NeurIPS 2022) use the same
Clopper–Pearson construction.

Coverage. Each of P(E | D) and P(E | D′) gets a two-sided exact Clopper–Pearson interval at level
1 − α/2 (every tail α/4); by the union bound all four one-sided statements hold together with
probability ≥ 1 − α, so the interval of :func:`loss_interval` covers L_E with probability ≥ 1 − α,
and its lower end alone is a lower confidence bound at level ≥ 1 − α/2. With α = 0.05 the report's
95% interval is conservative and the lower bound holds at 97.5%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bandit_envs._types import FloatArray, IntArray

__all__ = [
    "ALPHA",
    "LossInterval",
    "ceiling",
    "clopper_pearson",
    "detectable_probability",
    "flag_probability",
    "loss_interval",
    "loss_lower",
    "runs_needed",
]

#: Error level of the audit's interval (a 95% interval).
ALPHA = 0.05


def clopper_pearson(k: npt.ArrayLike, n: int, tail: float) -> tuple[FloatArray, FloatArray]:
    """Exact Clopper–Pearson bounds (lower, upper) on a binomial proportion, ``tail`` in each tail.

    Lower bound: the ``tail`` quantile of Beta(k, n − k + 1), 0 at k = 0; upper bound: the
    1 − ``tail`` quantile of Beta(k + 1, n − k), 1 at k = n (Clopper & Pearson, Biometrika 1934).
    Each holds with probability ≥ 1 − ``tail`` whatever the true proportion.
    """
    kk = np.asarray(k, dtype=np.float64)
    from scipy import stats  # imported when used: scipy.stats takes a large part of a second to import

    lower = np.where(kk > 0, stats.beta.ppf(tail, np.maximum(kk, 1.0), n - kk + 1.0), 0.0)
    upper = np.where(kk < n, stats.beta.ppf(1.0 - tail, kk + 1.0, np.maximum(n - kk, 1.0)), 1.0)
    return np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)


def _log_ratio(top: FloatArray, bottom: FloatArray) -> FloatArray:
    """ln(top / bottom) with −inf where top ≤ 0 and +inf where bottom = 0 < top."""
    top = np.asarray(top, dtype=np.float64)
    bottom = np.asarray(bottom, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(top > 0, top, 1.0)) - np.log(np.where(bottom > 0, bottom, 1.0))
    out = np.where(bottom <= 0, np.inf, out)
    return np.where(top <= 0, -np.inf, out)


def loss_lower(
    k_first: npt.ArrayLike, n_first: int, k_second: npt.ArrayLike, n_second: int, delta: float, alpha: float = ALPHA
) -> FloatArray:
    """Lower confidence bound ln((p_lower(E|D) − δ) / p_upper(E|D′)) for events counted k times in n runs.

    Vectorised over events; −inf where the lower bound on P(E | D) does not exceed δ. Each
    probability's bound uses the tail α/4 (see the module docstring).
    """
    lo, _ = clopper_pearson(k_first, n_first, alpha / 4.0)
    _, hi = clopper_pearson(k_second, n_second, alpha / 4.0)
    return _log_ratio(lo - delta, hi)


@dataclass(frozen=True)
class LossInterval:
    """The privacy loss L_E of one event: point estimate and 1 − α interval (see :func:`loss_interval`)."""

    estimate: float
    low: float
    high: float
    p_first: float
    p_second: float


def loss_interval(
    k_first: int, n_first: int, k_second: int, n_second: int, delta: float, alpha: float = ALPHA
) -> LossInterval:
    """Estimate and 1 − α confidence interval of L_E = ln((P(E|D) − δ)/P(E|D′)) from the counts.

    [ln((lo₁ − δ)/hi₂), ln((hi₁ − δ)/lo₂)] with the two-sided Clopper–Pearson intervals [lo, hi]
    of both probabilities at level 1 − α/2, so the interval holds with probability ≥ 1 − α (its
    lower end alone with ≥ 1 − α/2). Infinite ends mean "unbounded" (e.g. an event never seen on D′).
    """
    lo1, hi1 = clopper_pearson(k_first, n_first, alpha / 4.0)
    lo2, hi2 = clopper_pearson(k_second, n_second, alpha / 4.0)
    p1, p2 = k_first / n_first, k_second / n_second
    estimate = float(_log_ratio(np.array(p1 - delta), np.array(p2)))
    low = float(_log_ratio(lo1 - delta, hi2))
    high = float(_log_ratio(hi1 - delta, lo2))
    return LossInterval(estimate, low, high, p1, p2)


def ceiling(n: int, delta: float = 0.0, alpha: float = ALPHA) -> float:
    """The largest lower bound any event can give with n runs per input: counts n on D and 0 on D′.

    ln(((α/4)^{1/n} − δ)/(1 − (α/4)^{1/n})), about ln(n / ln(4/α)) for δ = 0: with n runs an audit
    cannot show ε above this, whatever the mechanism does.
    """
    return float(loss_lower(n, n, 0, n, delta, alpha))


def runs_needed(epsilon: float, delta: float = 0.0, alpha: float = ALPHA) -> int | None:
    """Fewest runs per input whose :func:`ceiling` exceeds ``epsilon`` (None if none does, δ too large)."""
    if ceiling(1 << 40, delta, alpha) <= epsilon:
        return None
    low, high = 1, 2
    while ceiling(high, delta, alpha) <= epsilon:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if ceiling(mid, delta, alpha) > epsilon:
            high = mid
        else:
            low = mid
    return high


def _flag_thresholds(n: int, epsilon: float, delta: float, alpha: float) -> IntArray:
    """For each count K₂ = j on D′, the smallest count K₁ on D whose lower bound exceeds ``epsilon`` (n + 1: none)."""
    counts = np.arange(n + 1)
    lo, _ = clopper_pearson(counts, n, alpha / 4.0)
    _, hi = clopper_pearson(counts, n, alpha / 4.0)
    need = delta + math.exp(epsilon) * hi  # lo(K₁) must exceed this
    return np.searchsorted(lo, need, side="right").astype(np.int64)


def _flagged(p_first: float, p_second: float, n: int, thresholds: IntArray) -> float:
    from scipy import stats

    tail = np.where(thresholds <= n, stats.binom.sf(thresholds - 1, n, p_first), 0.0)
    return float(np.sum(stats.binom.pmf(np.arange(n + 1), n, p_second) * tail))


def flag_probability(
    p_first: float, p_second: float, n: int, epsilon: float, delta: float = 0.0, alpha: float = ALPHA
) -> float:
    """Probability that one event with these true probabilities gives a lower bound above ``epsilon``.

    Exact: the bound ln((lo(K₁) − δ)/hi(K₂)) increases in K₁ and decreases in K₂, so for each
    K₂ = j it exceeds ε exactly when K₁ reaches a threshold; the probability is
    Σ_j P(K₂ = j) P(K₁ ≥ threshold_j) with K_i ~ Binomial(n, p_i), n runs per input.
    """
    return _flagged(p_first, p_second, n, _flag_thresholds(n, epsilon, delta, alpha))


def detectable_probability(
    epsilon: float, alternative: float, n: int, delta: float = 0.0, alpha: float = ALPHA, power: float = 0.5
) -> float | None:
    """Smallest P(E | D) at which an event whose loss is ``alternative`` is flagged with probability ≥ ``power``.

    The alternative: P(E | D′) = (P(E | D) − δ) e^{−alternative}, i.e. the event violates an
    ``epsilon`` claim by exactly that much. Rarer events give too few counts in n runs. None when
    even P(E | D) = 1 is not enough (too few runs, or ``alternative`` too close to ``epsilon``).
    """
    thresholds = _flag_thresholds(n, epsilon, delta, alpha)

    def flagged(p: float) -> float:
        return _flagged(p, max(0.0, (p - delta) * math.exp(-alternative)), n, thresholds)

    if flagged(1.0) < power:
        return None
    low, high = math.log(max(delta, 0.1 / n, 1e-300)), 0.0  # log P(E | D): flagged at high, not at low
    if flagged(math.exp(low)) >= power:
        return math.exp(low)
    for _ in range(30):
        mid = 0.5 * (low + high)
        if flagged(math.exp(mid)) >= power:
            high = mid
        else:
            low = mid
    return math.exp(high)
