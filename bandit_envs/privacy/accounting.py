"""Per-user accounting of local-DP reports: composition over a user's reports, and who sent what.

A local mechanism's guarantee is stated per report. A user who sends ``k`` reports of the same
mechanism loses more, and this module says how much:

- :class:`ReportMechanism`: one report's mechanism as the accountant sees it (Laplace, Gaussian
  or randomized response, with its per-report (epsilon, delta) and noise multiplier), and its
  ``dp_accounting`` event.
- :func:`basic_composition`: ``(k epsilon, min(1, k delta))``, sequential composition
  ([DR14]_ Thm. 3.16).
- :func:`tight_composition`: the smallest epsilon at a given delta for ``k`` reports, from the
  privacy loss distribution (PLD) of Google's ``dp_accounting`` library ([DGKKM22]_): an upper
  bound, tight up to its pessimistic discretization (within about 1%).
- :func:`max_reports`: how many reports fit in a per-user budget (epsilon, delta);
  :func:`report_cap` reads a cap given as a count or as such a budget.
- :func:`user_privacy` and :class:`UserPrivacy`: the three side by side for the user with the
  most reports.
- :class:`ReportLedger`: the reports each user has sent (per copy of a batched agent), and a cap
  on them.

Unit and neighbouring relation: one user, i.e. all the reports that carry one user id; two
inputs are neighbours when that user's data (every value it reports) changes arbitrarily within
the mechanism's range and nobody else's does. A report's two output laws are then the
mechanism at two inputs at most one sensitivity apart, the pair the PLD accountant composes:
``LaplaceDpEvent`` / ``GaussianDpEvent`` with noise multiplier ``scale / sensitivity`` under
``ADD_OR_REMOVE_ONE`` (a shift by one sensitivity, both directions), and
``RandomizedResponseDpEvent`` on two buckets with noise parameter ``2 / (1 + e^eps)`` under
``REPLACE_ONE`` (the Bernoulli mechanism on values in [0, 1] is post-processing-dominated by
that pair). The composition is adaptive: it holds although later reports depend on the
server's answers to earlier ones. Nothing here draws randomness.

Sampler tail. numpy's noise samplers are bounded (:mod:`bandit_envs.privacy.lattice`), so a
report lands where a neighbour's cannot with a small probability ``delta_s`` per report
(:attr:`ReportMechanism.tail_delta`: :func:`~bandit_envs.privacy._checks.laplace_tail_delta`,
:func:`~bandit_envs.privacy._checks.gaussian_tail_delta`; 0 for randomized response, whose keep
probability is exact up to a relative ``1e-9``). Outside those events the report's laws are
the ideal mechanism's, so ``k`` reports are what the ideal ones compose to plus ``k delta_s``
in delta (a union bound over the reports). The composed bounds here include it: the basic one
adds ``k delta_s``, the tight one is evaluated at ``delta - k delta_s`` so that the pair it
returns holds as stated (or, when ``k delta_s`` is not below the requested delta, at that delta,
and returns ``delta + k delta_s``). At epsilon <= 1 and the Gaussian's usual sigma, ``k delta_s``
is below ``1e-15`` for ``k <= 10**6``; at epsilon = 15 with Laplace it is ``3.6e-10`` per report.

Implementation notes. ``dp_accounting`` 0.6's ``PLDAccountant`` composes a
``SelfComposedDpEvent`` of a ``RandomizedResponseDpEvent`` once whatever its count, so
randomized response is composed with ``PrivacyLossDistribution.self_compose`` directly. The
discretization interval is sized from a rough epsilon (see ``_interval``): coarser intervals
keep large compositions fast and still give an upper bound. A pure mechanism whose composed PLD
would still exceed about 1.7e7 points (10**5 Laplace reports of epsilon = 0.1 would take minutes
and gigabytes, 10**6 of epsilon = 0.01 tens of gigabytes) is composed instead by the exact curve
of k-fold randomized response, a binomial sum: the least private composition of k epsilon-DP
reports ([KOV15]_ Thm. 3.3), exact for randomized response and an upper bound for Laplace
(within about 25% of its PLD at epsilon = 1). Past epsilon = 1e5 the PLD cannot
be discretized; there the pure mechanisms report ``k epsilon`` and the Gaussian its exact curve
(the k-fold composition of N(0, sigma^2) is N(0, sigma^2 / k), [BW18]_ Thm. 8), which is the
pair the accountant would compose.

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [DGKKM22] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar and P. Manurangsi, "Connect the
   dots: tighter discrete approximations of privacy loss distributions", PETS 2022; the
   ``dp_accounting`` library (github.com/google/differential-privacy, python/dp_accounting).
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018.
.. [KOV15] P. Kairouz, S. Oh and P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015 (k-fold randomized response attains the optimal composition bound).
"""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from bandit_envs._types import BoolArray, IntArray
from bandit_envs.privacy._checks import check_epsilon, check_positive, gaussian_tail_delta, laplace_tail_delta
from bandit_envs.privacy.gaussian import _log_gaussian_delta
from bandit_envs.validation import check_choice, check_float, check_int, check_memory, summarize

if TYPE_CHECKING:
    import dp_accounting

__all__ = [
    "MECHANISM_KINDS",
    "NO_USER",
    "USER_ID_KEY",
    "ReportLedger",
    "ReportMechanism",
    "UserPrivacy",
    "basic_composition",
    "gdp_epsilon",
    "gdp_mu",
    "max_reports",
    "report_cap",
    "tight_composition",
    "user_ids",
    "user_key",
    "user_privacy",
]

MECHANISM_KINDS = ("laplace", "gaussian", "randomized_response")
"""Mechanisms the accountant composes."""

USER_ID_KEY = "user_id"
"""The ``info`` key that names the user of a round (``MovieLensRecommendation-v0`` sets it)."""

#: Past this epsilon the PLD is not discretized (see the module docstring).
_PLD_MAX_EPSILON = 1e5
#: Largest composed PLD (points of its discretized loss) built for a pure mechanism; past it the
#: exact curve of k-fold randomized response is used (see the module docstring).
_PLD_MAX_POINTS = 2**24

#: Bytes of :class:`ReportLedger` state per copy before any report: an empty dict (64), its list
#: slot (8) and three int64 counters (24).
_LEDGER_COPY_BYTES = 96


@dataclass(frozen=True)
class ReportMechanism:
    """One report's mechanism, as the accountant sees it.

    Build it with :meth:`laplace`, :meth:`gaussian` or :meth:`randomized_response`.

    Attributes
    ----------
    kind
        One of :data:`MECHANISM_KINDS`.
    epsilon, delta
        The guarantee of one report (delta = 0 for Laplace and randomized response; for the
        Gaussian the delta that actually holds at this epsilon).
    noise_multiplier
        Noise scale over sensitivity: Laplace ``b / Delta_1`` (= 1 / epsilon), Gaussian
        ``sigma / Delta_2``; 0 (unused) for randomized response.
    tail_delta
        Probability per report of the sampler's tail event (module docstring), not included in
        ``delta``: :func:`~bandit_envs.privacy._checks.laplace_tail_delta` of epsilon,
        :func:`~bandit_envs.privacy._checks.gaussian_tail_delta` of ``1 / noise_multiplier``,
        0 for randomized response.
    """

    kind: str
    epsilon: float
    delta: float = 0.0
    noise_multiplier: float = 0.0
    tail_delta: float = 0.0

    def __post_init__(self) -> None:
        """Check the fields (however the mechanism was built) and store the numbers as floats.

        Refused, with one sentence naming the field: a ``kind`` not in :data:`MECHANISM_KINDS`;
        an ``epsilon`` that is not a number in (0, 15] (Laplace, randomized response: what
        :meth:`laplace` and :meth:`randomized_response` accept) or in [1e-100, 1e100] (Gaussian);
        a ``delta`` other than 0 for the pure mechanisms or outside (0, 1] for the Gaussian; a
        ``noise_multiplier`` other than ``1 / epsilon`` (Laplace), not finite and > 0 (Gaussian)
        or other than 0 (randomized response); a ``tail_delta`` outside [0, 1]. A ``TypeError``
        for a value that is not a real number (bools and strings included).
        """
        kind = check_choice("kind", self.kind, MECHANISM_KINDS)
        if kind == "gaussian":
            eps = check_positive("epsilon", self.epsilon)
            dlt = check_float("delta", self.delta, low=0.0, high=1.0)
            if dlt == 0.0:
                raise ValueError(
                    "delta must be > 0 for the gaussian mechanism (its privacy loss is unbounded: Gaussian noise is "
                    "never (epsilon, 0)-DP), got 0.0."
                )
            multiplier = check_float("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True)
        else:
            eps = check_epsilon("epsilon", self.epsilon)
            dlt = check_float("delta", self.delta)
            if dlt != 0.0:
                raise ValueError(f"delta must be 0 for the {kind} mechanism (it is pure epsilon-DP), got {dlt!r}.")
            multiplier = check_float("noise_multiplier", self.noise_multiplier, low=0.0)
            expected = 1.0 / eps if kind == "laplace" else 0.0
            if not math.isclose(multiplier, expected, rel_tol=1e-9):
                raise ValueError(
                    f"noise_multiplier must be {expected!r} for the {kind} mechanism at epsilon={eps!r} "
                    f"({'1 / epsilon' if kind == 'laplace' else 'unused'}), got {multiplier!r}; "
                    f"build it with ReportMechanism.{kind}(epsilon)."
                )
        tail = check_float("tail_delta", self.tail_delta, low=0.0, high=1.0)
        for name, value in (("epsilon", eps), ("delta", dlt), ("noise_multiplier", multiplier), ("tail_delta", tail)):
            object.__setattr__(self, name, value)  # frozen: the checked floats replace ints and numpy scalars

    @classmethod
    def laplace(cls, epsilon: float) -> ReportMechanism:
        """Laplace noise of scale ``sensitivity / epsilon``: epsilon-DP per report."""
        eps = check_epsilon("epsilon", epsilon)
        return cls("laplace", eps, 0.0, 1.0 / eps, laplace_tail_delta(eps))

    @classmethod
    def gaussian(cls, sigma: float, l2_sensitivity: float, epsilon: float, delta: float) -> ReportMechanism:
        """Gaussian noise ``N(0, sigma^2)`` on a report of L2 sensitivity ``l2_sensitivity``.

        ``(epsilon, delta)`` is the per-report guarantee of the ideal mechanism (the delta that
        holds at this epsilon, any epsilon > 0: LDP-LinUCB states the delta of its sigma at the
        authors' epsilon up to 8e5), without the sampler's tail, which ``tail_delta`` carries
        (``gaussian_tail_delta(l2_sensitivity / sigma)``); composition uses
        ``sigma / l2_sensitivity``. A ``delta`` below the exact delta of this sigma at this
        epsilon (:func:`bandit_envs.privacy.gaussian_delta`, [BW18] Thm. 8) is refused: the
        guarantee it states would not hold.
        """
        s = check_positive("sigma", sigma)
        d2 = check_positive("l2_sensitivity", l2_sensitivity)
        eps = check_positive("epsilon", epsilon)
        dlt = check_float("delta", delta, low=0.0, high=1.0)
        exact = math.exp(_log_gaussian_delta(s, eps, d2))
        if dlt < exact * (1.0 - 1e-9):  # a relative margin for the rounding of the callers' own calibration
            raise ValueError(
                f"delta must be at least {exact:.6g}, the exact delta of Gaussian noise sigma = {s:g} on L2 "
                f"sensitivity {d2:g} at epsilon = {eps:g} (a smaller delta does not hold), got {dlt:g}."
            )
        return cls("gaussian", eps, dlt, s / d2, gaussian_tail_delta(d2 / s))

    @classmethod
    def randomized_response(cls, epsilon: float) -> ReportMechanism:
        """Randomized response on a bit (or the Bernoulli mechanism): epsilon-DP per report."""
        return cls("randomized_response", check_epsilon("epsilon", epsilon), 0.0, 0.0)

    def dp_event(self, count: int = 1) -> dp_accounting.DpEvent:
        """The ``dp_accounting`` event of ``count`` reports (a ``SelfComposedDpEvent``)."""
        import dp_accounting  # imported on first use: about a second of start-up

        n = check_int("count", count, minimum=1)
        event: dp_accounting.DpEvent
        if self.kind == "laplace":
            event = dp_accounting.LaplaceDpEvent(self.noise_multiplier)
        elif self.kind == "gaussian":
            event = dp_accounting.GaussianDpEvent(self.noise_multiplier)
        else:
            event = dp_accounting.RandomizedResponseDpEvent(_rr_noise_parameter(self.epsilon), 2)
        return dp_accounting.SelfComposedDpEvent(event, n)


@dataclass(frozen=True)
class UserPrivacy:
    """What holds for every user: the guarantee of the user with the most reports.

    Attributes
    ----------
    reports
        Reports sent by that user (0 if nobody reported).
    per_report
        (epsilon, delta) of one report, the ideal mechanism's (its sampler's tail adds
        ``tail_delta / reports`` per report).
    basic
        ``(k epsilon, min(1, k delta + tail_delta))`` by sequential composition.
    tight
        ``(epsilon', delta)`` by the PLD accountant at the requested delta, the tail included
        (:func:`tight_composition`; ``(0, 0)`` for no report).
    tail_delta
        ``k delta_s``: the probability that one of the user's reports hit its sampler's tail
        event (module docstring).
    """

    reports: int
    per_report: tuple[float, float]
    basic: tuple[float, float]
    tight: tuple[float, float]
    tail_delta: float = 0.0


def _check_mechanism(mechanism: Any) -> ReportMechanism:
    """Return ``mechanism`` if it is a :class:`ReportMechanism`, else raise one ``TypeError`` sentence."""
    if not isinstance(mechanism, ReportMechanism):
        raise TypeError(
            f"mechanism must be a ReportMechanism (e.g. ReportMechanism.laplace(epsilon)), got "
            f"{summarize(mechanism)} ({type(mechanism).__name__})."
        )
    return mechanism


def _rr_noise_parameter(epsilon: float) -> float:
    """``p`` of ``dp_accounting``'s randomized response: keep w.p. 1 - p/2 = e^eps / (1 + e^eps)."""
    return 2.0 / (1.0 + math.exp(epsilon)) if epsilon < 700.0 else 0.0


def basic_composition(mechanism: ReportMechanism, reports: int) -> tuple[float, float]:
    """``(k epsilon, min(1, k (delta + delta_s)))`` for ``k = reports`` reports ([DR14]_ Thm. 3.16).

    ``delta_s`` is the sampler's tail (:attr:`ReportMechanism.tail_delta`).

    Parameters
    ----------
    mechanism : ReportMechanism
        The mechanism of each report.
    reports : int
        Number of reports of one user, >= 0.

    Returns
    -------
    tuple of float
        ``(epsilon, delta)``.

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`ReportMechanism` or ``reports`` not an integer.
    ValueError
        If ``reports`` < 0.
    """
    _check_mechanism(mechanism)
    k = check_int("reports", reports, minimum=0)
    return k * mechanism.epsilon, min(1.0, k * (mechanism.delta + mechanism.tail_delta))


def _estimate(mechanism: ReportMechanism, reports: int, delta: float) -> float:
    """A rough epsilon of ``reports`` reports at ``delta``, to size the PLD's discretization.

    Pure mechanisms: the smaller of ``k eps`` and the advanced composition bound
    ``k eps^2 / 2 + eps sqrt(2 k ln(1/delta))`` ([DR14]_ Thm. 3.20, up to its constant); the
    Gaussian: ``mu^2 / 2 + mu sqrt(2 ln(1/delta))`` with ``mu = sqrt(k) / noise_multiplier``.
    """
    log_term = math.sqrt(2.0 * math.log(1.0 / delta))
    if mechanism.kind != "gaussian":
        eps, k = mechanism.epsilon, reports
        return min(k * eps, k * eps * eps / 2.0 + eps * math.sqrt(k) * log_term)
    mu = math.sqrt(reports) / mechanism.noise_multiplier
    return mu * mu / 2.0 + mu * log_term


def _interval(mechanism: ReportMechanism, reports: int, estimate: float) -> float:
    """The PLD's discretization interval: a rounding error of well under 1% of epsilon, in bounded time.

    A pessimistic PLD overstates each of the ``k`` self-composed losses by at most one interval,
    so pure mechanisms get ``5e-3 * estimate / k``, kept in [1e-5, 1e-3] (the lower end bounds the
    time: 10^4 reports of epsilon = 0.01 take seconds and come out about 1% loose). The Gaussian
    is a single PLD (``sigma / sqrt(k)``) and gets ``1e-4 * estimate``, at least 1e-5.
    """
    if mechanism.kind == "gaussian":
        return max(1e-5, 1e-4 * estimate)
    return min(1e-3, max(1e-5, 5e-3 * estimate / reports))


def _gaussian_epsilon(sigma_over_sensitivity: float, delta: float) -> float:
    """Smallest epsilon >= 0 at which N(0, s^2) for sensitivity 1 is (epsilon, delta)-DP ([BW18]_ Thm. 8)."""
    s, target = sigma_over_sensitivity, math.log(delta)

    def excess(log1p_eps: float) -> float:
        return _log_gaussian_delta(s, math.expm1(log1p_eps), 1.0) - target

    if excess(1e-300) <= 0.0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    from scipy.optimize import brentq  # imported when used: scipy.optimize is slow to import

    return math.expm1(float(brentq(excess, 1e-300, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)))


def _pld_points(mechanism: ReportMechanism, reports: int, interval: float) -> float:
    """About how many points the PLD of ``reports`` pure reports has: a quarter of k times one report's.

    One report's privacy loss spans [-epsilon, epsilon], ``2 epsilon / interval + 1`` points;
    ``dp_accounting`` sizes the k-fold composition by a Chernoff bound, measured at 0.16 to 0.25
    times k of them (0.6's Laplace and randomized response), and allocates its FFT at that size.
    """
    return 0.25 * reports * (2.0 * mechanism.epsilon / interval + 1.0)


def _rr_composition_epsilon(epsilon: float, reports: int, delta: float) -> float:
    """Smallest epsilon' (to 1e-9 relative, rounded up) with ``reports`` epsilon-DP reports (epsilon', delta)-DP.

    The hockey-stick divergence of k-fold randomized response at ``e**epsilon'``: with
    ``T ~ Bin(k, e^eps / (1 + e^eps))`` the truthful answers and ``L = eps (2T - k)`` the privacy
    loss, ``delta(epsilon') = E[(1 - e^(epsilon' - L))_+]``. k-fold randomized response is the
    least private composition of k epsilon-DP mechanisms, adaptive ones included ([KOV15]_
    Thm. 3.3), so this is exact for randomized response and an upper bound for Laplace reports.
    The sum runs over the counts within ``40 sd + 2000`` of the mean (log space, exact); the
    binomial mass outside is added whole, which keeps delta an upper bound. Linear in that window,
    whatever k is; a window of more than :data:`_PLD_MAX_POINTS` counts (k beyond about 10**11)
    gives the basic ``k epsilon``.
    """
    from scipy import special, stats  # imported when used: scipy.stats takes a large part of a second to import

    p = float(special.expit(epsilon))
    sd = math.sqrt(reports * p * (1.0 - p))
    width = math.ceil(40.0 * sd) + 2000
    if 2 * width > _PLD_MAX_POINTS:
        return reports * epsilon
    mean = reports * p
    lo = max(0, math.floor(mean) - width)
    hi = min(reports, math.ceil(mean) + width)
    counts = np.arange(lo, hi + 1, dtype=np.float64)
    log_pmf = stats.binom.logpmf(counts, reports, p)
    loss = epsilon * (2.0 * counts - reports)
    below = float(stats.binom.cdf(lo - 1, reports, p)) if lo > 0 else 0.0  # counts under the window
    above = float(stats.binom.sf(hi, reports, p))  # counts over it

    def curve(eps_prime: float) -> float:
        keep = loss > eps_prime
        terms = log_pmf[keep] + np.log(-np.expm1(eps_prime - loss[keep]))
        inside = float(np.exp(special.logsumexp(terms))) if terms.size else 0.0
        # below the window every loss is smaller than inside it: its mass counts only if some exceeds eps'
        under = below if lo > 0 and epsilon * (2.0 * (lo - 1) - reports) > eps_prime else 0.0
        return inside + under + above

    low, high = 0.0, reports * epsilon
    if curve(low) <= delta:
        return 0.0
    if curve(high) > delta:  # only the neglected mass can be above delta here
        return high
    for _ in range(200):
        if high - low <= 1e-9 * high:
            break
        mid = 0.5 * (low + high)
        if curve(mid) <= delta:
            high = mid
        else:
            low = mid
    return high


@functools.lru_cache(maxsize=4096)
def _pld_epsilon(mechanism: ReportMechanism, reports: int, delta: float) -> float:
    """Epsilon of ``reports`` reports at ``delta`` from the PLD (cached by count).

    A pure mechanism whose PLD would exceed :data:`_PLD_MAX_POINTS` points (many reports at a
    fine discretization: tens of gigabytes at 10**6 Laplace reports of epsilon = 0.01) gets the
    exact curve of k-fold randomized response instead (:func:`_rr_composition_epsilon`), in
    bounded time and memory.
    """
    estimate = _estimate(mechanism, reports, delta)
    pure_limit = mechanism.kind == "randomized_response" and _rr_noise_parameter(mechanism.epsilon) == 0.0
    if estimate > _PLD_MAX_EPSILON or pure_limit:
        if mechanism.kind == "gaussian":
            return _gaussian_epsilon(mechanism.noise_multiplier / math.sqrt(reports), delta)
        return reports * mechanism.epsilon
    interval = _interval(mechanism, reports, estimate)
    if mechanism.kind != "gaussian" and _pld_points(mechanism, reports, interval) > _PLD_MAX_POINTS:
        return _rr_composition_epsilon(mechanism.epsilon, reports, delta)
    import dp_accounting  # imported on first use: about a second of start-up
    from dp_accounting.pld import privacy_loss_distribution

    relation = dp_accounting.NeighboringRelation
    if mechanism.kind == "randomized_response":
        pld = privacy_loss_distribution.from_randomized_response(
            _rr_noise_parameter(mechanism.epsilon),
            2,
            value_discretization_interval=interval,
            neighboring_relation=relation.REPLACE_ONE,
        ).self_compose(reports)
        return float(pld.get_epsilon_for_delta(delta))
    accountant = dp_accounting.pld.PLDAccountant(relation.ADD_OR_REMOVE_ONE, value_discretization_interval=interval)
    accountant.compose(mechanism.dp_event(reports))
    return float(accountant.get_epsilon(delta))


def tight_composition(mechanism: ReportMechanism, reports: int, delta: float) -> tuple[float, float]:
    """The smallest epsilon at which ``reports`` reports of one user are (epsilon, ``delta``)-DP.

    From the privacy loss distribution of ``dp_accounting`` ([DGKKM22]_; see the module
    docstring for the neighbouring relation), and never above the basic bound where that one
    applies (``k delta_report <= delta``). The sampler's tail (``k delta_s``, module docstring)
    is part of the returned delta: the ideal reports are composed at ``delta - k delta_s``, and
    the pair returned is ``(epsilon', delta)``; when ``k delta_s`` is not below ``delta`` they
    are composed at ``delta`` and the pair is ``(epsilon', delta + k delta_s)``. So at
    ``delta = 0`` a pure mechanism gives ``(k epsilon, k delta_s)``. Cached by count, so
    repeated calls are cheap.

    Parameters
    ----------
    mechanism : ReportMechanism
        The mechanism of each report.
    reports : int
        Number of reports of one user, >= 0.
    delta : float
        Target delta in [0, 1); > 0 for the Gaussian.

    Returns
    -------
    tuple of float
        ``(epsilon', delta)`` (``delta + k delta_s`` when the tail is not below ``delta``), or
        ``(0.0, 0.0)`` for no report.

    Raises
    ------
    ValueError
        If ``reports`` < 0, ``delta`` is outside [0, 1), or ``delta = 0`` for the Gaussian.
    TypeError
        If an argument has the wrong type (``mechanism`` not a :class:`ReportMechanism`).
    """
    _check_mechanism(mechanism)
    k = check_int("reports", reports, minimum=0)
    dlt = check_float("delta", delta, low=0.0, high=1.0, high_open=True)
    if k == 0:
        return 0.0, 0.0
    if dlt == 0.0 and mechanism.kind == "gaussian":
        raise ValueError("delta must be > 0 for the Gaussian mechanism (its privacy loss is unbounded), got 0.")
    tail = k * mechanism.tail_delta
    ideal, total = (dlt - tail, dlt) if dlt > tail else (dlt, min(1.0, dlt + tail))
    basic_eps = k * mechanism.epsilon
    if ideal == 0.0:  # pure reports at delta 0: exactly k epsilon
        return basic_eps, total
    eps = _pld_epsilon(mechanism, k, ideal)
    if k * mechanism.delta <= ideal:
        eps = min(eps, basic_eps)
    return max(eps, 0.0), total


def max_reports(mechanism: ReportMechanism, epsilon: float, delta: float) -> int:
    """The largest number of reports of one user whose tight composition stays within (epsilon, delta).

    Parameters
    ----------
    mechanism : ReportMechanism
        The mechanism of each report.
    epsilon : float
        Per-user budget epsilon, > 0.
    delta : float
        Per-user budget delta in [0, 1); > 0 for the Gaussian.

    Returns
    -------
    int
        ``k >= 0`` whose :func:`tight_composition` at ``delta`` is within (epsilon, delta), the
        sampler's tail included (so a budget with ``delta = 0`` allows no Laplace or Gaussian
        report), and ``k + 1`` reports over budget.

    Raises
    ------
    ValueError
        If ``epsilon`` <= 0, ``delta`` is outside [0, 1), or ``delta = 0`` for the Gaussian.
    TypeError
        If an argument has the wrong type (``mechanism`` not a :class:`ReportMechanism`).
    """
    _check_mechanism(mechanism)
    budget = check_positive("epsilon", epsilon)  # a per-user total: each report is checked on its own
    dlt = check_float("delta", delta, low=0.0, high=1.0, high_open=True)

    def fits(k: int) -> bool:
        eps, total = tight_composition(mechanism, k, dlt)
        return eps <= budget and total <= dlt

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def report_cap(
    mechanism: ReportMechanism, max_reports_per_user: int | None, user_budget: tuple[float, float] | None
) -> int | None:
    """A per-user cap in reports, given as a count or as a budget (epsilon_u, delta_u); at most one of them.

    Parameters
    ----------
    mechanism : ReportMechanism
        The mechanism of each report.
    max_reports_per_user : int or None
        Reports allowed per user, >= 1.
    user_budget : tuple of float or None
        ``(epsilon_u, delta_u)``, ``delta_u`` in [0, 1) (> 0 for the Gaussian): the cap is
        :func:`max_reports` of it.

    Returns
    -------
    int or None
        The cap, or None when neither is given.

    Raises
    ------
    ValueError
        If both are given, the count is < 1, the budget is malformed, or it allows no report.
    TypeError
        If a value has the wrong type (``mechanism`` not a :class:`ReportMechanism`).
    """
    _check_mechanism(mechanism)
    if max_reports_per_user is not None and user_budget is not None:
        raise ValueError(
            f"max_reports_per_user and user_budget are two ways to set one cap; give one, got "
            f"{summarize(max_reports_per_user)} and {summarize(user_budget)}."
        )
    if max_reports_per_user is not None:
        return check_int("max_reports_per_user", max_reports_per_user, minimum=1)
    if user_budget is None:
        return None
    try:
        eps_u, delta_u = user_budget
    except (TypeError, ValueError):
        raise ValueError(f"user_budget must be a pair (epsilon, delta), got {summarize(user_budget)}.") from None
    eps_u = check_float("user_budget[0]", eps_u, low=0.0, low_open=True)
    delta_u = check_float("user_budget[1]", delta_u, low=0.0, high=1.0, high_open=True)
    if mechanism.kind == "gaussian" and delta_u == 0.0:
        raise ValueError(f"user_budget must have delta > 0 for the Gaussian mechanism, got {summarize(user_budget)}.")
    cap = max_reports(mechanism, eps_u, delta_u)
    if cap == 0:
        tail = (
            f" plus the noise sampler's tail delta {mechanism.tail_delta:.2g} (no report of a bounded sampler "
            f"is exactly epsilon-DP, bandit_envs.privacy.lattice)"
            if mechanism.tail_delta > 0.0
            else ""
        )
        raise ValueError(
            f"user_budget must allow at least one report, which costs (epsilon, delta) = "
            f"({mechanism.epsilon:g}, {mechanism.delta:g}){tail}; got {summarize(user_budget)}."
        )
    return cap


def user_privacy(mechanism: ReportMechanism, reports: int, delta: float | None = None) -> UserPrivacy:
    """Per-report, basic and tight guarantees of a user who sent ``reports`` reports.

    Parameters
    ----------
    mechanism : ReportMechanism
        The mechanism of each report.
    reports : int
        Reports of the user (the most any user sent, for a guarantee that holds for all).
    delta : float or None, default None
        The delta of the tight bound; None: the per-report delta (0 for the pure mechanisms,
        whose tight bound at delta = 0 is ``k epsilon``).

    Returns
    -------
    UserPrivacy

    Raises
    ------
    ValueError, TypeError
        As :func:`tight_composition` (``mechanism`` not a :class:`ReportMechanism`, ``reports`` not
        an integer >= 0, ``delta`` outside [0, 1)).
    """
    _check_mechanism(mechanism)
    dlt = mechanism.delta if delta is None else delta
    k = check_int("reports", reports, minimum=0)
    return UserPrivacy(
        reports=k,
        per_report=(mechanism.epsilon, mechanism.delta),
        basic=basic_composition(mechanism, k),
        tight=tight_composition(mechanism, k, dlt),
        tail_delta=min(1.0, k * mechanism.tail_delta),
    )


class _NoUser:
    """The key of a report whose user id is missing (None, NaN, ``pd.NA``): it is charged to every user."""

    _instance: _NoUser | None = None

    def __new__(cls) -> _NoUser:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_USER"

    def __reduce__(self) -> str:
        return "NO_USER"


#: The user key of a report without a usable id (see :func:`user_key`).
NO_USER = _NoUser()


def user_key(value: Any) -> Hashable:
    """The ledger's key for one user id: one key per user, whatever the id's type or container.

    numpy scalars become Python ones (``np.int64(7)`` is user ``7``, as ``7`` and ``7.0`` are). A
    missing id (None, a NaN, ``pd.NA``, ``NaT``: anything not equal to itself or whose comparison
    has no truth value) is :data:`NO_USER`, a report without an id, charged to every user: a NaN
    is never equal to another, so keying on it would make each such report a new user.

    Raises
    ------
    ValueError
        If the id cannot be a key (it is not hashable, e.g. a list).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return NO_USER
    try:
        missing = bool(value != value)
    except (TypeError, ValueError):  # pd.NA: comparisons with it have no truth value
        missing = True
    if missing:
        return NO_USER
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"a user id must be hashable (a number or a string), got {summarize(value)}.") from None
    return value


def _id_array(users: Any) -> npt.NDArray[Any]:
    """``users`` as an array that keeps each id's type: a list of ints and strings stays one (not all strings)."""
    if isinstance(users, np.ndarray):
        return users
    ids = np.asarray(users)
    return ids if ids.dtype.kind in "iufb" else np.asarray(users, dtype=object)


def user_ids(info: Mapping[str, Any] | None, batch: int) -> list[Hashable] | None:
    """The user of each copy from a step's ``info`` (key :data:`USER_ID_KEY`), or None if it has none.

    Parameters
    ----------
    info : mapping or None
        The env's step info (a vector env's carries one id per copy).
    batch : int
        Number of copies.

    Returns
    -------
    list or None
        ``batch`` keys of :func:`user_key` (:data:`NO_USER` for a missing id), or None when
        ``info`` names no user.

    Raises
    ------
    ValueError
        If ``info[USER_ID_KEY]`` does not hold one id per copy, or an id cannot be a key.
    """
    if not info or USER_ID_KEY not in info:
        return None
    raw = info[USER_ID_KEY]
    if isinstance(raw, np.ma.MaskedArray):  # its masked entries would be read as ids
        raise ValueError(
            f"info[{USER_ID_KEY!r}] must hold one user id per copy ({batch}), not a masked array; give a missing id "
            "as None or NaN."
        )
    ids = _id_array(raw)
    if ids.size != batch:
        wanted = "one user id (a single id)" if batch == 1 else f"one user id per copy ({batch})"
        raise ValueError(f"info[{USER_ID_KEY!r}] must hold {wanted}, got shape {ids.shape}.")
    flat = ids.reshape(batch)
    # Numeric ids: the keys user_key gives, in one pass (tolist makes the same Python ints, bools
    # and floats; a NaN is a missing id) instead of one call per copy.
    if flat.dtype.kind in "iub":
        keys: list[Hashable] = flat.tolist()
        return keys
    if flat.dtype.kind == "f":
        return [NO_USER if v != v else v for v in flat.tolist()]
    try:
        return [user_key(v) for v in flat]
    except ValueError:  # an id that cannot be a key: say which copy's, under the info key
        b = next(b for b, v in enumerate(flat) if not _hashable(v))
        where = f" for copy {b}" if batch > 1 else ""
        raise ValueError(
            f"info[{USER_ID_KEY!r}] must hold hashable user ids (numbers or strings), got {summarize(flat[b])}{where}."
        ) from None


def _hashable(value: Any) -> bool:
    """Whether ``value`` can be a key (:func:`user_key` refuses it otherwise)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


class ReportLedger:
    """How many reports each user has sent, per copy, and an optional cap on them.

    Each copy of a batched agent is its own population: user ``u`` of copy ``b`` is not user
    ``u`` of copy ``c``. A report without a user id (an env that names no user, or a missing id:
    :data:`NO_USER`) is charged to every user of its copy, so without ids the whole stream counts
    as one user. Ids are keyed by :func:`user_key`. The cap
    ``max_reports`` stops a user's reports once it has sent that many: the agent does not get
    them (callers ask :meth:`allowed` first and :meth:`record` what was sent).

    Parameters
    ----------
    batch : int
        Number of copies (1 for one env).
    max_reports : int or None, default None
        Reports allowed per user, >= 1; None for no cap.

    Raises
    ------
    ValueError
        If ``batch`` is < 1 or its per-copy state (about 100 bytes a copy, before any report)
        would exceed :func:`~bandit_envs.validation.memory_limit`, or ``max_reports`` is < 1.
    TypeError
        If ``batch`` or ``max_reports`` is not an integer.
    """

    def __init__(self, batch: int, max_reports: int | None = None) -> None:
        self.batch = check_int("batch", batch, minimum=1)
        check_memory(
            f"batch={summarize(self.batch)} (copies of about {_LEDGER_COPY_BYTES} B of ledger state each)",
            float(min(self.batch, 2**900)) * _LEDGER_COPY_BYTES,  # capped: float() of a huge int overflows
            "use fewer copies",
        )
        self.max_reports = None if max_reports is None else check_int("max_reports", max_reports, minimum=1)
        self.reset()

    def reset(self) -> None:
        """Forget every report (a new population)."""
        self._counts: list[dict[Hashable, int]] = [{} for _ in range(self.batch)]
        #: Rounds of :meth:`record_anonymous` not yet added to every copy's anonymous count.
        self._anonymous_rounds = 0
        self._anonymous = np.zeros(self.batch, dtype=np.int64)
        self._max_named: IntArray = np.zeros(self.batch, dtype=np.int64)
        self._withheld: IntArray = np.zeros(self.batch, dtype=np.int64)

    @property
    def _anonymous(self) -> IntArray:
        """Reports without a user id per copy (:meth:`record_anonymous`'s rounds added when read)."""
        rounds = self._anonymous_rounds
        if rounds:
            self._anonymous_rounds = 0
            self._anonymous_counts += rounds
        return self._anonymous_counts

    @_anonymous.setter
    def _anonymous(self, counts: IntArray) -> None:
        self._anonymous_counts = counts

    def allowed(self, users: list[Hashable] | None) -> BoolArray:
        """Per copy, whether its user (None: an anonymous report) may send one more report."""
        cap = self.max_reports
        if cap is None:
            return np.ones(self.batch, dtype=np.bool_)
        if users is None:
            return np.asarray(self._anonymous + self._max_named < cap)
        # Each copy's user's count from its dict (-1 for a report without id, which counts as the
        # copy's busiest user); the comparison is one array operation for all copies.
        own = np.array(
            [-1 if u is NO_USER else counts.get(u, 0) for counts, u in zip(self._counts, users, strict=True)],
            dtype=np.int64,
        )
        most = np.where(own < 0, self._max_named, own)
        return np.asarray(self._anonymous + most < cap)

    def record_anonymous(self) -> None:
        """:meth:`record` of a round in which every copy sent a report without a user id (no cap withheld one).

        Counted as a number of such rounds, added to the per-copy counts when they are next read (an
        addition to an array a round cost about 1 us, most of a small batch's round of a local-DP agent).
        """
        self._anonymous_rounds += 1

    def record(self, users: list[Hashable] | None, sent: BoolArray) -> None:
        """Count one report for each copy where ``sent``; the others were withheld by the cap."""
        sent = np.asarray(sent, dtype=np.bool_).reshape(self.batch)
        self._withheld += ~sent
        if users is None:
            self._anonymous += sent
            return
        # Each copy's count in its dict; the per-copy arrays are read and written once for all copies.
        named: list[int] = []
        reached: list[int] = []
        anonymous: list[int] = []
        all_counts = self._counts
        for b in np.flatnonzero(sent).tolist():
            user = users[b]
            if user is NO_USER:
                anonymous.append(b)
                continue
            counts = all_counts[b]
            n = counts.get(user, 0) + 1
            counts[user] = n
            named.append(b)
            reached.append(n)
        if anonymous:
            self._anonymous[anonymous] += 1  # each copy once: one report each
        if named:
            rows = np.array(named, dtype=np.int64)
            self._max_named[rows] = np.maximum(self._max_named[rows], reached)

    def block_counts(self, users: npt.ArrayLike | None, n_rounds: int) -> list[dict[Hashable, int]] | None:
        """Reports per user and copy of a block of ``n_rounds`` rounds, one report each (not recorded).

        ``users`` is (T,) (the same users in every copy), (T, B), or None (anonymous rounds). The
        keys are :func:`user_key`'s; a block's missing ids count under :data:`NO_USER`.
        """
        if users is None:
            return None
        ids = _id_array(users)
        if ids.ndim == 1:
            ids = np.broadcast_to(ids[:, None], (ids.shape[0], self.batch))
        if ids.shape != (n_rounds, self.batch):
            raise ValueError(
                f"users must have shape ({n_rounds},) or ({n_rounds}, {self.batch}), got {np.shape(users)}."
            )
        out = []
        for b in range(self.batch):
            column = ids[:, b]
            pairs: Iterable[tuple[Any, int]]
            if column.dtype.kind in "iufb":  # numbers: np.unique (one NaN group, made NO_USER by user_key)
                values, counts = np.unique(column, return_counts=True)
                pairs = zip(values, counts.tolist(), strict=True)
            else:  # any other ids, each kept as it is (np.unique would sort, and mixed types do not sort)
                pairs = collections.Counter(column.tolist()).items()
            block: dict[Hashable, int] = {}
            for v, c in pairs:
                key = user_key(v)
                block[key] = block.get(key, 0) + int(c)
            out.append(block)
        return out

    def worst_after(self, block: list[dict[Hashable, int]] | None, n_rounds: int) -> IntArray:
        """Per copy, the most reports of one user after a block from :meth:`block_counts`."""
        if block is None:
            return self._anonymous + n_rounds + self._max_named
        out = self._anonymous.copy()
        for b, counts in enumerate(block):
            old = self._counts[b]
            named = [old.get(u, 0) + c for u, c in counts.items() if u is not NO_USER]
            out[b] += counts.get(NO_USER, 0) + max([*named, int(self._max_named[b])])
        return out

    def record_block(self, block: list[dict[Hashable, int]] | None, n_rounds: int) -> None:
        """Count a block from :meth:`block_counts`, every round's report sent."""
        if block is None:
            self._anonymous += n_rounds
            return
        for b, counts in enumerate(block):
            old = self._counts[b]
            for u, c in counts.items():
                if u is NO_USER:
                    self._anonymous[b] += c
                    continue
                old[u] = old.get(u, 0) + c
                self._max_named[b] = max(self._max_named[b], old[u])

    @property
    def worst(self) -> IntArray:
        """Per copy, the most reports any one user has sent (anonymous ones charged to all)."""
        return self._anonymous + self._max_named

    @property
    def withheld(self) -> IntArray:
        """Per copy, reports not sent because the user's cap was reached."""
        return self._withheld.copy()

    @property
    def n_users(self) -> IntArray:
        """Per copy, users with at least one report (1 for anonymous reports only)."""
        named = np.array([len(c) for c in self._counts], dtype=np.int64)
        return np.where((named == 0) & (self._anonymous > 0), 1, named)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon at which a mu-GDP mechanism is (epsilon, ``delta``)-DP, from ``dp_accounting``.

    mu-Gaussian differential privacy (Dong, Roth & Su, "Gaussian differential privacy", JRSS B
    84(1), 2022, Def. 2.6) says that telling two neighbouring inputs apart is no easier than
    telling N(0, 1) from N(mu, 1): exactly the Gaussian mechanism of noise multiplier 1/mu
    (Corollary 2.13 there: (epsilon, delta(epsilon))-DP for every epsilon >= 0, with
    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)). This is that
    mechanism's ``GaussianDpEvent`` composed once by ``dp_accounting``'s PLD accountant
    ([DGKKM22]_; an upper bound within its discretization, about 1e-4 relative), and the exact
    curve ([BW18]_ Thm. 8) where the PLD cannot be discretized. A mu-GDP guarantee is also
    (mu²/2)-zCDP (Bun & Steinke, TCC 2016, Prop. 1.6, for the Gaussian), so zCDP statements of
    rho convert by mu = sqrt(2 rho). No randomness.

    Parameters
    ----------
    mu : float
        The GDP parameter, >= 0 (0: perfectly private, epsilon 0).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        epsilon >= 0.

    Raises
    ------
    ValueError
        If ``mu`` is not in [0, 1e6], or ``delta`` is outside (0, 1).
    TypeError
        If ``mu`` or ``delta`` is not a real number (checked before the cache, so a list is
        refused in one sentence, not as an unhashable key).
    """
    m = check_float("mu", mu, low=0.0, high=1e6)
    dlt = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    return _gdp_epsilon(m, dlt)


@functools.lru_cache(maxsize=1024)
def _gdp_epsilon(m: float, dlt: float) -> float:
    """:func:`gdp_epsilon` of checked floats (cached)."""
    if m == 0.0:
        return 0.0
    # Only the noise multiplier 1/mu is composed; the per-report claim (1, 1) is unused and holds
    # for any mechanism (the exact delta at epsilon 1 underflows to 0 for a tiny mu).
    mechanism = ReportMechanism.gaussian(1.0 / m, 1.0, 1.0, 1.0)
    return max(_pld_epsilon(mechanism, 1, dlt), 0.0)


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu at which mu-GDP implies (``epsilon``, ``delta``)-DP (the inverse of :func:`gdp_epsilon`).

    Solves delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2) =
    ``delta`` for mu (Dong, Roth & Su 2022, Corollary 2.13; delta grows with mu), with the exact
    Gaussian curve of ``bandit_envs.privacy.gaussian`` at noise multiplier 1/mu. Used to size a
    GDP mechanism for an (epsilon, delta) budget. No randomness.

    Raises
    ------
    ValueError
        If ``epsilon`` is not in (0, 1e4] or ``delta`` is outside (0, 1).
    """
    from scipy.optimize import brentq  # imported when used: scipy.optimize is slow to import

    eps = check_float("epsilon", epsilon, low=0.0, high=1e4, low_open=True)
    dlt = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    target = math.log(dlt)

    def excess(log_mu: float) -> float:
        return _log_gaussian_delta(math.exp(-log_mu), eps, 1.0) - target

    lo, hi = -30.0, 1.0
    while excess(hi) < 0.0:
        hi += 1.0
    return math.exp(float(brentq(excess, lo, hi, xtol=1e-14)))
