"""LDP-LinUCB: LinUCB under local differential privacy (Zheng et al., NeurIPS 2020).

:class:`LDPLinUCB` runs the protocol of :mod:`agents.linear.protocol` with clipped and
Gaussian-perturbed reports and the growing shift and width of the paper (constants of the
authors' code). :func:`ldp_linucb_sensitivity` and :func:`ldp_linucb_sigma` give the L2
sensitivity of one report and the noise scale.

Privacy guarantee. Each report is one Gaussian mechanism with L2 sensitivity
Δ₂ = ``ldp_linucb_sensitivity(l_x, l_y)`` and noise scale σ = ``ldp_linucb_sigma(...)`` on the
clipped pair (x_t, y_t), so it is (ε, δ)-LDP per report (any two pairs with ``‖x‖ <= l_x``,
``|y| <= l_y`` are neighbours), and all the server computes is post-processing. The unit of
:class:`LDPLinUCB`'s guarantee is one user: all the reports carrying its ``info["user_id"]``
(in ``MovieLensRecommendation-v0`` a user is drawn every round and reports many times; without
ids the whole stream is one user). A user with k reports is what k Gaussian reports compose to
(:meth:`LDPLinUCB.privacy_per_user`, through ``dp_accounting``); a per-user cap bounds k. With
``sigma_method="classic"`` (Dwork & Roth 2014, Thm. 3.22) the per-report guarantee is proven
only for ε < 1; for larger ε, :attr:`LDPLinUCB.privacy_per_report` gives the exact δ' at which
σ is (ε, δ')-DP (Balle & Wang, ICML 2018, Thm. 8). ``sigma_method="analytic"`` is (ε, δ)-DP
for every ε, up to the normal sampler's tail event, which :attr:`LDPLinUCB.privacy_per_report`
adds to δ (negligible at ε <= 15, about 1 at ε = 8e5). Noise: ``d(d+1)/2 + d`` standard normals per
report from the agent's generator,
:func:`bandit_envs.privacy.streams.noise_generator` of ``seed`` (a stream independent of
``numpy.random.default_rng(seed)`` and of an env reset with the same seed).

Status tags: [P] marks an engineering choice of this project, [V-code] a constant checked
against the authors' code ``MIFA-Lab/LDPbandit2020`` ``src/linucb.py``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from agents.base import check_choice, check_float, check_int
from agents.linear._kernels import SCHEDULE_LDP, round_schedule
from agents.linear.private_base import LocalDPLinearAgent
from agents.linear.protocol import BONUSES, LAST_ROUND
from bandit_envs._types import IntArray
from bandit_envs.privacy import gaussian_delta, gaussian_sigma_analytic
from bandit_envs.privacy._checks import POSITIVE_RANGE, gaussian_tail_delta
from bandit_envs.privacy.accounting import ReportLedger, ReportMechanism, report_cap, user_ids
from bandit_envs.privacy.lattice import check_sampler, report_grid
from bandit_envs.validation import summarize

__all__ = ["SIGMA_METHODS", "LDPLinUCB", "ldp_linucb_sensitivity", "ldp_linucb_sigma"]


#: Calibrations of σ: Dwork & Roth's classic formula (the authors' code) or Balle & Wang's analytic one.
SIGMA_METHODS = ("classic", "analytic")


def _finite_positive(compute: Callable[[], float], refusal: Callable[[float], str]) -> float:
    """``compute()`` if it is finite and positive, else one ``ValueError`` with the sentence ``refusal(value)``.

    An overflow or a division by zero in ``compute`` counts as an infinite value.
    """
    try:
        value = compute()
    except (OverflowError, ZeroDivisionError):
        value = math.inf
    if not 0.0 < value < math.inf:
        raise ValueError(refusal(value))
    return value


def ldp_linucb_sensitivity(l_x: float = 1.0, l_y: float = 1.0) -> float:
    """L2 sensitivity Δ₂ = 2·sqrt(l_x⁴ + l_x² l_y²) of one user's report (upper triangle of x xᵀ, y x).

    The upper triangle (diagonal included) of x xᵀ has Frobenius norm <= ‖x‖² <= l_x² and
    ‖y x‖ <= l_x l_y, so two users' reports differ by at most 2 l_x² and 2 l_x l_y in these two
    blocks, and by at most 2·sqrt(l_x⁴ + l_x² l_y²) jointly in L2 norm. At l_x = l_y = 1 this is
    2·sqrt(2), the sensitivity for which the σ of the authors' code (``MIFA-Lab/LDPbandit2020``
    ``src/linucb.py``) is the classic Gaussian mechanism.
    """
    lx = check_float("l_x", l_x, low=0.0, low_open=True)
    ly = check_float("l_y", l_y, low=0.0, low_open=True)
    return _finite_positive(
        lambda: 2.0 * math.sqrt(lx**4 + lx**2 * ly**2),
        lambda value: (
            f"l_x and l_y must give a finite, positive sensitivity 2·sqrt(l_x⁴ + l_x² l_y²), got l_x={lx:g} and "
            f"l_y={ly:g} (sensitivity {value:g})."
        ),
    )


def ldp_linucb_sigma(
    epsilon: float, delta: float, l_x: float = 1.0, l_y: float = 1.0, method: str = "classic"
) -> float:
    """Noise scale σ of LDP-LinUCB's Gaussian mechanism on the report (Δ₂ from :func:`ldp_linucb_sensitivity`).

    ``"classic"``: σ = sqrt(2 ln(1.25/δ))·Δ₂/ε (Dwork & Roth 2014, Thm. 3.22), computed for every
    ε (= 4·sqrt(ln(1.25/δ))/ε at l_x = l_y = 1, the authors' code [V-code]); the (ε, δ) guarantee
    is proven only for ε < 1. ``"analytic"``: the smallest σ that is (ε, δ)-DP for Δ₂ (Balle & Wang,
    ICML 2018, Thm. 8; :func:`bandit_envs.privacy.gaussian_sigma_analytic`), any ε.
    """
    eps = check_float("epsilon", epsilon, low=0.0, low_open=True)  # a scale, any ε (see LDPLinUCB)
    dlt = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    check_choice("sigma_method", method, SIGMA_METHODS)
    sens = ldp_linucb_sensitivity(l_x, l_y)
    return _finite_positive(
        lambda: (
            gaussian_sigma_analytic(eps, dlt, sens)
            if method == "analytic"
            else math.sqrt(2.0 * math.log(1.25 / dlt)) * sens / eps
        ),
        lambda sigma: (
            f"epsilon and delta must give a finite, positive noise scale σ, got epsilon={eps:g}, delta={dlt:g} "
            f"(σ = {sigma:g} with sensitivity {sens:g})."
        ),
    )


class LDPLinUCB(LocalDPLinearAgent):
    r"""LDP-LinUCB: LinUCB under local differential privacy (Zheng et al. [1]_, authors' code [V-code]).

    Protocol of round t (1-based), as in the authors' code (:mod:`agents.linear.protocol`). The
    server broadcasts θ and the factor of :math:`\tilde V = V + c_{t-1} I` (c = ``initial_shift``
    = 0.1 before the first report, as in the code). The **client** (the user;
    :func:`client_choose`) clips its candidates to :math:`\lVert x\rVert \le l_x`, plays
    :math:`a_t = \arg\max_a x_a^\top\theta + \beta_t \sqrt{x_a^\top\tilde V^{-1}x_a}` (``bonus="sqrt"``,
    the OFUL / Shariff-Sheffet form the paper follows [P]; ``bonus="quadratic"`` drops the square
    root as the authors' code does), observes y, clips it to [-l_y, l_y] and sends
    :math:`(x x^\top + B_t,\ y x + \xi_t)` (:func:`client_report`): :math:`B_t` symmetric with its
    upper triangle, diagonal included, i.i.d. :math:`N(0, \sigma^2)` and mirrored,
    :math:`\xi_t \sim N(0, \sigma^2 I_d)`. The **server** (:class:`LinUCBServer`) adds the report
    to (V, u), computes :math:`c_t` and :math:`\theta = (V + c_t I)^{-1} u`. The server never sees
    x, y or the action: the action is computed and kept on the client side (the authors' code
    returns it to the server, unused; under LDP that would leak x). This class simulates both
    sides; ``update(action, ...)`` hands the action to the client part only.

    Constants (all logs natural, d = ``n_features``, T = ``horizon``, α = ``alpha``) [V-code]:

    * :math:`\sigma = \sqrt{2\ln(1.25/\delta)}\,\Delta_2/\varepsilon`,
      :math:`\Delta_2 = 2\sqrt{l_x^4 + l_x^2 l_y^2}` (``sigma_method="classic"``; equals the
      code's :math:`4\sqrt{\ln(1.25/\delta)}/\varepsilon` at :math:`l_x = l_y = 1`; the value
      stated in the README and a comment of that repository is √2 larger), or the analytic
      Gaussian σ for Δ₂;
    * :math:`\gamma_t = \sigma\sqrt t\,(4\sqrt d + 2\ln(2T/\alpha))`;
    * :math:`c_t = 2\gamma_t` × ``shift_scale``;
    * :math:`\beta_t = 2\sigma\sqrt{d\ln T} + (\sqrt{3\gamma_t} + \sigma\sqrt{dt/\gamma_t})\,d\ln T`
      × ``width_scale``.

    With these constants at practical ε the algorithm explores almost uniformly (d = 20,
    T = 1e5, α = δ = 0.1, ε = 1: σ = 6.36, c_T ≈ 1.9e5, β_T ≈ 1.3e5), which is why the authors
    ran ε = 8e5 (σ ≈ 8e-6, c_T ≈ 0.24, β_T ≈ 145). ``width_scale`` and ``shift_scale`` [P] trade
    the theory constants for practice; privacy depends only on σ.

    Indefinite Ṽ: the shifted matrix is indefinite with probability <= α (more often with a
    small ``shift_scale``). When its Cholesky factorization fails (a pivot <= 1e-10 × the largest
    diagonal entry), its eigenvalues are raised to max(c_t/2, 1e-10·max|λ|, 1e-12) — c_t/2 = γ_t
    is the smallest eigenvalue the analysis guarantees on its high-probability event — and the
    floored matrix is factorized instead [P]; ``n_eig_floor`` counts these rounds. V itself is
    not changed.

    Privacy. Each report is one Gaussian mechanism with L2 sensitivity Δ₂ on the clipped pair
    (x_t, y_t) (any two pairs with ‖x‖ <= l_x, |y| <= l_y are neighbours), so it is (ε, δ)-LDP:
    :attr:`privacy_per_report`; everything the server computes is post-processing. Clipping is
    what makes Δ₂ a bound: ``n_clipped_features`` and ``n_clipped_rewards`` count the reports
    whose x or y was clipped. With ``"classic"`` the guarantee is proven only for ε < 1; for
    larger ε, :attr:`privacy_per_report` returns the exact δ' at which this σ is (ε, δ')-DP
    (Balle & Wang, Thm. 8) when it exceeds δ. To that δ it adds δ_s = Φ(Δ₂/σ − 12.23)
    (:func:`bandit_envs.privacy._checks.gaussian_tail_delta`), the probability that numpy's
    normal draw, bounded near 12.23σ, puts a report where a neighbour's cannot be: below
    1e-28 at ε <= 15 with δ <= 0.1, about 1 at the authors' ε = 8e5. Unlike the other
    mechanisms and agents of the package, LDP-LinUCB therefore takes any ε > 0, not only ε <= 15
    (``MAX_EPSILON``): what it returns as its (ε, δ) holds whatever ε, so the authors' non-private
    settings (ε = 1e5 to 8e5, σ ≈ 8e-6 ≪ Δ₂) can be reproduced and are reported with δ ≈ 1, no
    guarantee.

    Unit of the agent's guarantee (``privacy_unit``): one user, i.e. every report that carries
    its ``info["user_id"]``. ``MovieLensRecommendation-v0`` draws a user every round, so over
    10⁵ rounds each of its users sends hundreds of reports and the per-report (ε, δ) is not what
    a user loses. :meth:`privacy_per_user` composes the reports of the user with the most so far:
    the basic bound (kε, kδ) and the tight one of ``dp_accounting``'s privacy loss distribution
    (the k reports are one Gaussian mechanism with σ/√k), and :attr:`privacy_spent` is that
    tight bound at the requested δ. An env without user ids is one user (the whole stream; a
    report without an id is charged to every user); :meth:`run` takes the users as ``users``.
    ``max_reports_per_user`` or ``user_budget`` caps the reports of each user: a capped user is
    still served (the client still chooses its arm) but sends no report, and the server adds
    nothing for it. If no copy's user may report the round is skipped on the server (its round
    counter does not advance); if only some may, the capped copies add a zero report while the
    round counter, shared by the copies, advances. Batch copies are separate populations; the
    guarantee is the worst over copies. Noise comes from :func:`~bandit_envs.privacy.streams.noise_generator`
    of ``seed``. Sampler: the reports use the lattice sampler by default
    (:mod:`bandit_envs.privacy.lattice`): each of the D = d(d+1)/2 + d noised entries is
    ``snap(exact) + snap(σ g)`` on the grid :attr:`grid` (a power of two about ``2**-20`` of
    σ/√D), every report entry a multiple of it whatever x and y are; rounding moves a report by
    at most √D·grid in L2, so σ is calibrated to the widened sensitivity Δ₂ + √D·grid (σ is
    linear in the sensitivity) and the report is (ε, δ)-LDP as stated. ``sampler="float"``:
    raw floating-point Gaussian noise, faster, **not safe against floating-point attacks**
    (Mironov 2012).

    Parameters
    ----------
    n_features
        Dimension d (>= 1).
    epsilon
        Privacy parameter ε (> 0). The code's class default is 100, its script uses 8e5.
    delta
        Privacy parameter δ in (0, 1). Default 0.1 [V-code].
    alpha
        Failure probability α of the confidence bounds in (0, 1). Default 0.1 [V-code].
    horizon
        T in the constants (>= 2). Default 1e5 [V-code].
    sigma_method
        ``"classic"`` (default, the code) or ``"analytic"``.
    l_x, l_y
        Bounds ‖x‖ <= l_x and |y| <= l_y enforced by clipping (default 1, the code's assumptions).
    bonus
        ``"sqrt"`` (default) or ``"quadratic"`` (the authors' code).
    width_scale, shift_scale
        Multipliers (>= 0) of β_t and c_t. Default 1.
    initial_shift
        c used before the first report (> 0). Default 0.1 [V-code].
    max_reports_per_user
        Cap: a user sends at most this many reports (>= 1). None (default): no cap. Exclusive
        with ``user_budget``.
    user_budget
        Cap as a per-user budget (ε_u, δ_u), δ_u in (0, 1): the most reports whose tight
        composition stays within it. None (default): no cap.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the privacy noise (through :func:`~bandit_envs.privacy.streams.noise_generator`).
    sampler
        ``"lattice"`` (default) or ``"float"`` (raw noise, not safe against floating-point
        attacks); see above.

    Private state
    -------------
    The class simulates the server and the users; these attributes are the users' side or
    un-noised diagnostics, outside the guarantee, and must not be published with the model:
    ``rng`` and ``seed`` (whoever holds them can subtract the noise from every report), and
    ``_holder``, through which the single-env report draws from ``rng`` in compiled code (never pickled);
    ``_last_obs``, the candidate features of the current user between :meth:`act` and
    :meth:`update` (cleared by ``update``); ``n_clipped_features`` / ``n_clipped_rewards`` (counted
    before privatization); the ledger behind ``max_user_reports`` and ``n_withheld`` (who reported
    how often, with the latest reports counted in ``_pending_anonymous`` / ``_pending_named`` until
    the ledger is next read). What the server holds (``server``: V, u, θ and the factor, ``theta``) is
    post-processing of the noisy reports and may be released.

    References
    ----------
    .. [1] K. Zheng, T. Cai, W. Huang, Z. Li, L. Wang, "Locally Differentially Private
       (Contextual) Bandits Learning", NeurIPS 2020 (arXiv:2006.00701); code
       ``MIFA-Lab/LDPbandit2020`` ``src/linucb.py``.
    """

    name = "LDP-LinUCB"

    def __init__(
        self,
        n_features: int,
        epsilon: float,
        delta: float = 0.1,
        alpha: float = 0.1,
        horizon: int = 100_000,
        *,
        sigma_method: str = "classic",
        l_x: float = 1.0,
        l_y: float = 1.0,
        bonus: str = "sqrt",
        width_scale: float = 1.0,
        shift_scale: float = 1.0,
        initial_shift: float = 0.1,
        max_reports_per_user: int | None = None,
        user_budget: tuple[float, float] | None = None,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_features, n_envs=n_envs, seed=seed)
        self._check_epsilon_delta(epsilon, delta, capped=False)  # privacy_per_report says what holds at any ε
        self.sampler = check_sampler(sampler)
        self.alpha = check_float("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        self.horizon = check_int("horizon", horizon, minimum=2)
        self.sigma_method = check_choice("sigma_method", sigma_method, SIGMA_METHODS)
        self.bonus = check_choice("bonus", bonus, BONUSES)
        self.l_x = check_float("l_x", l_x, low=0.0, low_open=True)
        self.l_y = check_float("l_y", l_y, low=0.0, low_open=True)
        self.width_scale = check_float("width_scale", width_scale, low=0.0)
        self.shift_scale = check_float("shift_scale", shift_scale, low=0.0)
        self.initial_shift = check_float("initial_shift", initial_shift, low=0.0, low_open=True)
        self.sensitivity = ldp_linucb_sensitivity(self.l_x, self.l_y)
        self.sigma = ldp_linucb_sigma(self.epsilon, self.delta, self.l_x, self.l_y, self.sigma_method)
        wide = self.sensitivity
        if self.sampler == "lattice":
            entries = math.sqrt(self.n_features * (self.n_features + 1) // 2 + self.n_features)
            self._grid = report_grid(self.sigma / entries, max(self.l_x * self.l_x, self.l_x * self.l_y))
            wide = self.sensitivity + entries * self._grid
            self.sigma = self.sigma * (wide / self.sensitivity)  # σ is linear in the sensitivity
        #: The L2 sensitivity the reports' σ is calibrated to: Δ₂, widened by √D·grid for the lattice.
        self.report_sensitivity = wide
        self._check_scales(wide)
        exact = max(self.delta, gaussian_delta(self.sigma, self.epsilon, wide))
        self._delta_spent = min(1.0, exact + gaussian_tail_delta(wide / self.sigma))
        d = float(self.n_features)
        t_max, k1 = self._log_term()
        self._sched = np.array(
            [SCHEDULE_LDP, self.sigma, d, math.log(t_max), k1, self.width_scale, self.shift_scale], dtype=np.float64
        )
        self._check_schedule()
        self._sigma, self._l_x, self._l_y = self.sigma, self.l_x, self.l_y
        self._quadratic = self.bonus == "quadratic"
        self._initial_shift = self.initial_shift
        #: One report's mechanism: the ideal δ (``exact``) and, as its ``tail_delta``, the sampler's δ_s.
        self.report_mechanism = ReportMechanism.gaussian(self.sigma, wide, self.epsilon, min(1.0, exact))
        self.max_reports_per_user = report_cap(self.report_mechanism, max_reports_per_user, user_budget)
        self.user_budget = user_budget
        self._reports = ReportLedger(self.batch, self.max_reports_per_user)
        self._reset_state()

    def _check_scales(self, wide: float) -> None:
        """Refuse ε, δ, l_x, l_y whose sensitivity ``wide``, ε or σ leave :data:`POSITIVE_RANGE` (named as given).

        Beyond it the privacy calibration (:func:`~bandit_envs.privacy.gaussian_delta`) over- or underflows.
        """
        low, high = POSITIVE_RANGE
        bounds = f"in [{low:g}, {high:g}] (beyond, the noise calibration over- or underflows)"
        if not low <= wide <= high:
            raise ValueError(
                f"l_x and l_y must give a report sensitivity 2·sqrt(l_x⁴ + l_x² l_y²) {bounds}, got l_x={self.l_x:g} "
                f"and l_y={self.l_y:g} (sensitivity {wide:g})."
            )
        if not low <= self.epsilon <= high:
            raise ValueError(f"epsilon must be a number {bounds}, got {self.epsilon:g}.")
        if not low <= self.sigma <= high:
            raise ValueError(
                f"epsilon and delta must give a noise scale σ {bounds}, got epsilon={self.epsilon:g} and "
                f"delta={self.delta:g} (σ = {self.sigma:g} with l_x={self.l_x:g}, l_y={self.l_y:g} and "
                f"sampler={self.sampler!r})."
            )

    def _log_term(self) -> tuple[float, float]:
        """(T, k1 = 4 sqrt(d) + 2 ln(2T/α)) of the schedule; a ``ValueError`` naming alpha or horizon if not finite."""
        try:
            t_max = float(self.horizon)
        except OverflowError:  # an int beyond the range of a float
            t_max = math.inf
        if not math.isfinite(t_max):
            raise ValueError(
                f"horizon must be at most {sys.float_info.max:g} (a float), got {summarize(self.horizon)}."
            )
        k1 = 4.0 * math.sqrt(self.n_features) + 2.0 * math.log(2.0 * t_max / self.alpha)
        if not math.isfinite(k1):  # 2T/α overflows
            top = sys.float_info.max
            if 2.0 * t_max / top < 1.0:
                raise ValueError(
                    f"alpha must be at least 2·horizon/{top:g} = {2.0 * t_max / top:g} (below, ln(2·horizon/alpha) "
                    f"overflows), got alpha={self.alpha:g} with horizon={summarize(self.horizon)}."
                )
            raise ValueError(
                f"horizon must be at most alpha·{top:g}/2 = {self.alpha * top / 2.0:g} (beyond, ln(2·horizon/alpha) "
                f"overflows), got horizon={summarize(self.horizon)} with alpha={self.alpha:g}."
            )
        return t_max, k1

    def _check_schedule(self) -> None:
        """Refuse a ``shift_scale`` or ``width_scale`` whose c_t or β_t is not finite at some round (t < 2**63).

        γ_t, c_t and β_t increase with t: they are checked at the last round the kernels count.
        """
        gamma, shift, beta = round_schedule(LAST_ROUND, self._sched)
        if math.isfinite(shift) and math.isfinite(beta):
            return
        top = sys.float_info.max
        if not math.isfinite(shift):
            name, value, limit = "shift_scale", self.shift_scale, top / (2.0 * gamma)
            what = "shift c_t = shift_scale·2γ_t"
        else:
            unscaled = self._sched.copy()
            unscaled[5] = 1.0
            name, value, limit = "width_scale", self.width_scale, top / round_schedule(LAST_ROUND, unscaled)[2]
            what = "width β_t"
        raise ValueError(
            f"{name} must keep the {what} finite at every round t < 2**63, so be at most {limit:g} with "
            f"epsilon={self.epsilon:g}, delta={self.delta:g}, alpha={self.alpha:g} and "
            f"horizon={summarize(self.horizon)}, got {value:g}."
        )

    @property
    def grid(self) -> float:
        """The grid every report entry is a multiple of (lattice sampler), 0.0 for the float sampler."""
        return self._grid

    def _reset_state(self) -> None:
        super()._reset_state()
        self._reports.reset()
        self._reset_reports()

    @property
    def privacy_per_report(self) -> tuple[float, float]:
        """(ε, δ) of one report: δ, or the exact δ' > δ of this σ, plus the sampler's tail δ_s (see the class)."""
        return self.epsilon, self._delta_spent

    @property
    def n_withheld(self) -> int | IntArray:
        """Rounds whose report the per-user cap withheld (per copy)."""
        return self._per_copy(self._ledger.withheld)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Client report of the arm played in the last ``act``, then server update; capped users send nothing.

        The round's user is ``info["user_id"]`` (none: the whole stream is one user).
        """
        x = self._last_obs
        if x is None:
            raise RuntimeError("update() needs the features of the last act(obs); call act(obs) first.")
        r = None if self.max_reports_per_user is not None else self._plain_feedback(x, action, reward)
        if r is None:
            a, rewards = self._feedback(action, reward, info, n_arms=x.shape[-2])  # refused alike when capped
        elif info is not None:
            self._check_info(info, x.shape[-2])
        users = user_ids(info, self.batch)
        if self.max_reports_per_user is None:  # every user may report: count the reports in bulk
            if r is not None:  # one env, plain scalars: one compiled call
                self._report_one(x, action, r)
            else:
                self._report(x, a, rewards, self._send_all)
            self._count_round(users)
            return
        send = self._ledger.allowed(users)
        if send.any():
            self._report(x, a, rewards, send)
        else:  # no copy may report: the server skips the round
            self._last_obs = None
        self._ledger.record(users, send)

    def _check_block(self, block: list[dict[Hashable, int]] | None, n_steps: int) -> None:
        """Refuse a :meth:`run` block in which some user would exceed ``max_reports_per_user``.

        The compiled loop sends every report; play such rounds with ``act``/``update``, which withhold them.
        """
        cap = self.max_reports_per_user
        if cap is not None and (self._ledger.worst_after(block, n_steps) > cap).any():
            raise ValueError(
                f"users must not send more than max_reports_per_user = {cap} reports within a run() block: the "
                "compiled loop sends every report; play such rounds with act/update, which withhold them."
            )

    def __repr__(self) -> str:
        return (
            f"LDPLinUCB(n_features={self.n_features}, epsilon={self.epsilon}, delta={self.delta}, "
            f"alpha={self.alpha}, horizon={self.horizon}, sigma_method={self.sigma_method!r}, "
            f"bonus={self.bonus!r}, n_envs={self.n_envs})"
        )
