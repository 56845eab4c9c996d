r"""LDP-OLS: greedy linear bandit on locally privatized sufficient statistics (Han et al., NeurIPS 2021).

:class:`LDPOLS` is the OLS-based algorithm of Han, Liang, Wang and Zhang [1]_ (§4): each user
privatizes :math:`(x x^\top, y x)` of the arm it played and the server plays greedily,
:math:`\arg\max_a x_a^\top\hat\theta`, with the ridge estimate of the privatized sums, refitted
in batches. The machinery is :class:`agents.linear.stats_base.StatsAgent`.

Assumptions of the paper's analysis (§2, §4): linear rewards :math:`y = x^\top\theta^* +`
sub-Gaussian noise with :math:`\lVert x\rVert \le 1`, :math:`|y| \le 1` (here: clipped to
``l_x``, ``l_y``), contexts drawn i.i.d. over rounds and *diverse*: the covariance of the
feature of the arm that *any* greedy rule picks has its smallest eigenvalue bounded away from 0
(and a margin condition). Diversity is what lets the greedy rule explore for free; without it
greedy can lock onto a wrong arm. ``width > 0`` adds a LinUCB bonus [P].

Privacy guarantee. The unit of one report is one user's datum, the pair (x, y) it reports;
any two pairs with ``‖x‖ <= l_x`` and ``|y| <= l_y`` (after clipping) are neighbours. The report
is the vector v of the unit ball that encodes the pair (:mod:`agents.linear._stats_kernels`),
privatized by

* ``mechanism="gaussian"`` (default, as the paper): i.i.d. :math:`N(0, \sigma^2)` noise on the
  D = d(d+1)/2 + d coordinates, σ the analytic Gaussian scale of Balle & Wang (ICML 2018,
  Thm. 8; :func:`bandit_envs.privacy.gaussian_sigma_analytic`) for L2 sensitivity 2 (the
  diameter of the ball): (ε, δ)-LDP per report for every ε <= 15 (plus the normal sampler's
  tail event, below 1e-28 for δ <= 0.1: :mod:`bandit_envs.privacy.lattice`; the paper's code calibrates
  :math:`\sigma = 6\sqrt{2\ln(2.5/\delta)}/\varepsilon` with the classic formula instead);
* ``mechanism="l2_ball"``: Duchi et al.'s L2-ball mechanism at ε
  (:mod:`bandit_envs.privacy.l2_ball`): ε-LDP per report, δ = 0 [P].

Sampler (Gaussian): by default the lattice sampler (:mod:`bandit_envs.privacy.lattice`): each
coordinate of the report is ``snap(v_i) + snap(σ g_i)`` on the grid :attr:`LDPOLS.grid` (a power
of two about ``2**-20`` of σ/√D), so the report's output set does not depend on the pair;
rounding moves a report by at most √D·grid in L2, so σ is the analytic scale at the widened
sensitivity 2 + √D·grid: (ε, δ)-LDP per report as stated. The batch shortcut below draws a
closed batch's summed noise as one rounded draw of the sum's law (within n·grid/2 per
coordinate of the sum of n rounded draws). ``sampler="float"``: raw floating-point noise, not
safe against floating-point attacks (Mironov 2012). The L2-ball reports ``±B g/‖g‖`` need no
sampler: their output set (a sign times a direction drawn without the data) is the same for
every pair.

What the server object holds (``server``: V and u of the closed batches, the factor, θ) is
post-processing of the reports. The open batch's reports are not in it: they sit on the users'
side (``open_batch``, :class:`BatchClients`) until the batch closes, because with the Gaussian
mechanism the simulation adds a batch's noise in aggregate, when it closes (the sum of n reports'
i.i.d. noises has the law of one draw of n times the variance); in a deployment each user adds
its own noise before sending. The agent's unit (``privacy_unit``) is one
user: every report carrying its ``info["user_id"]`` (``MovieLensRecommendation-v0`` draws a user
each round, so a user reports many times; without ids the whole stream is one user). A user
with k reports loses their sequential composition: :meth:`privacy_per_user` gives the basic
bound (kε, kδ) and the tight one of ``dp_accounting``'s privacy loss distribution (the
Gaussian reports compose as one Gaussian with σ/√k; an ε-LDP report is dominated by randomized
response at ε, whose composition is the optimal one, Kairouz, Oh & Viswanath, ICML 2015), and
:attr:`privacy_spent` is the tight bound at ``delta``. Noise, from
:func:`~bandit_envs.privacy.streams.noise_generator` of ``seed``: ``"l2_ball"``, per report D
standard normals, then two uniforms; ``"gaussian"``, D standard normals per batch, at its close
(the shortcut above: the users' reports are simulated by their sum).

Status tags: [P] marks an engineering choice of this project; the defaults of ``gram_weight``,
``shift_scale``, ``batch_size`` and ``l_x`` were chosen on the synthetic default data of
``MovieLensRecommendation-v0`` only (see the class docstring).

References
----------
.. [1] Y. Han, Z. Liang, Y. Wang, J. Zhang, "Generalized Linear Bandits with Local Differential
   Privacy", NeurIPS 2021 (arXiv:2106.03365); code ``liangzp/LDP-Bandit``.
"""

from __future__ import annotations

import math

from agents.base import check_choice
from agents.linear._stats_kernels import MECH_GAUSSIAN
from agents.linear.stats_base import OpenBatch, StatsAgent
from bandit_envs.privacy import gaussian_sigma_analytic
from bandit_envs.privacy.accounting import ReportMechanism
from bandit_envs.privacy.lattice import check_sampler, report_grid

__all__ = ["LDPOLS", "OLS_MECHANISMS", "BatchClients"]

#: Local randomizers of :class:`LDPOLS`.
OLS_MECHANISMS = ("gaussian", "l2_ball")


class BatchClients(OpenBatch):
    r"""The users' side of LDP-OLS's simulation: the reports of the open batch, before the server receives them.

    ``gram`` (upper triangle) and ``moment`` sum the decoded reports of the open batch (``count``
    of them). With ``mechanism="gaussian"`` they are the users' clipped pairs *without* noise,
    the exact :math:`\sum x x^\top` and :math:`\sum y x` of the batch: the simulation adds the
    Gaussian noise of the whole batch in aggregate when it closes
    (:func:`agents.linear._stats_kernels.add_batch_noise`) and only then hands the noisy sum to
    the server. In a deployment each user adds its own noise before sending, and the sum of n
    reports' noises has the law added here, so the server sees what it would see. With
    ``mechanism="l2_ball"`` they are sums of privatized reports. Either way they belong to the
    users' side, not to the server, and are not releasable.
    """


class LDPOLS(StatsAgent):
    r"""LDP-OLS: greedy play on locally private (x xᵀ, y x) reports, batched ridge refits (Han et al. [1]_).

    Round t: the client plays :math:`\arg\max_a \tilde x_a^\top\theta` (:math:`\tilde x_a` the
    candidate clipped to norm ``l_x``; ties to the lowest index; ``width > 0`` adds
    :math:`\beta\sqrt{\tilde x^\top(V + c I)^{-1}\tilde x}`), observes y and sends the privatized
    report of its clipped pair (module docstring). Every ``batch_size`` reports the server adds
    the batch to (V, u) and refits :math:`\theta = (V + c_t I)^{-1}u`,
    :math:`c_t = \lambda + s\,\nu\sqrt t` (:class:`~agents.linear.stats_base.StatsAgent`).

    Departures from the paper [P]: (i) the paper's batches are a grid whose first refit comes
    after :math:`5d^2(\sqrt d + \ln T)^2` rounds (about 5·10⁵ at d = 20, T = 10⁶) and each refit
    uses the last batch only; here the batches have a fixed size and all reports are kept;
    (ii) the paper's shift is :math:`2\sigma\sqrt t(4\sqrt d + 2\ln(2T/\alpha))` (as
    LDP-LinUCB's); here :math:`c_t` scales the noise's spectral norm :math:`\nu\sqrt t` by
    ``shift_scale``; (iii) σ is the analytic Gaussian scale; (iv) ``gram_weight`` gives the Gram
    block a share of the unit ball (the paper perturbs both blocks alike).

    Defaults [P] chosen on the synthetic default data of ``MovieLensRecommendation-v0`` (T = 10⁵
    and 10⁶, ε in {1, 10}; no real data): greedy (``width = 0``); ``gram_weight = 0.1`` (the
    Gram matrix is so noisy at these ε that the ball is better spent on y x); ``shift_scale =
    16`` (at T = 10⁶, ε = 1: 1 → 16% of the uniformly random policy's regret, 4 → 6.7%, 16 → 5.9%;
    larger values change little); ``batch_size = 100`` (refits every 100 rounds: no visible
    change in regret against every round, fewer factorizations). On that data ``l_x = 0.4`` (the
    largest feature norm there) is better than the default 1, which assumes only ``‖x‖ <= 1``.

    Parameters
    ----------
    n_features
        Dimension d (>= 1).
    epsilon
        ε of one report (> 0).
    delta
        δ of one report (Gaussian) and of the per-user tight bound, in (0, 1). Default 0.1 (as
        LDP-LinUCB's experiments).
    mechanism
        ``"gaussian"`` (default) or ``"l2_ball"``.
    l_x, l_y
        Clipping bounds ``‖x‖ <= l_x``, ``|y| <= l_y`` (default 1).
    gram_weight
        Share w_g in (0, 1) of the unit ball given to the Gram block (w_m = sqrt(1 - w_g²) to
        y x). Default 0.1 [P].
    reg
        λ in the shift (> 0). Default 1.
    shift_scale
        s in the shift (>= 0). Default 16 [P].
    width
        β of the optional bonus (>= 0; 0: greedy, the paper). Default 0.
    batch_size
        Reports per refit, in [1, 2⁵³] (the compiled kernels hold it as a float64). Default 100 [P].
    n_envs, seed
        As :class:`~agents.linear.ldp_linucb.LDPLinUCB` (``None`` or the number of copies run in
        lock-step; the seed of the privacy noise).
    sampler
        ``"lattice"`` (default) or ``"float"`` (raw noise, not safe against floating-point
        attacks) for the Gaussian mechanism; ignored by ``"l2_ball"``.

    Attributes
    ----------
    sigma
        σ of the Gaussian mechanism (``"gaussian"``) on the unit-ball encoding, else 0.
    scale
        Norm B of the L2-ball mechanism's outputs (``"l2_ball"``), else 0.
    noise_level
        ν, the typical spectral norm of one report's decoded Gram noise.

    Private state
    -------------
    ``rng`` and ``seed`` (whoever holds them can subtract the noise), ``_last_obs`` (the current
    user's candidates between ``act`` and ``update``), ``open_batch`` (:class:`BatchClients`:
    the open batch's sums, with the Gaussian mechanism the users' exact data until the batch
    closes), the clip counters (counted before privatization) and the ledger of reports per user
    are the users' side or diagnostics, not releasable. The server's arrays (``server``: V and u
    of the closed batches, factor, θ) are post-processing of the reports.

    References
    ----------
    .. [1] Y. Han, Z. Liang, Y. Wang, J. Zhang, "Generalized Linear Bandits with Local
       Differential Privacy", NeurIPS 2021 (arXiv:2106.03365).
    """

    name = "LDP-OLS"
    _open_batch_type = BatchClients

    def __init__(
        self,
        n_features: int,
        epsilon: float,
        delta: float = 0.1,
        *,
        mechanism: str = "gaussian",
        l_x: float = 1.0,
        l_y: float = 1.0,
        gram_weight: float = 0.1,
        reg: float = 1.0,
        shift_scale: float = 16.0,
        width: float = 0.0,
        batch_size: int = 100,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(
            n_features,
            l_x=l_x,
            l_y=l_y,
            gram_weight=gram_weight,
            reg=reg,
            shift_scale=shift_scale,
            width=width,
            batch_size=batch_size,
            n_envs=n_envs,
            seed=seed,
        )
        self._check_epsilon_delta(epsilon, delta)
        self.mechanism = check_choice("mechanism", mechanism, OLS_MECHANISMS)
        self.sampler = check_sampler(sampler)
        self.sigma = self.scale = 0.0
        try:
            if self.mechanism == "gaussian":
                self.sigma = gaussian_sigma_analytic(self.epsilon, self.delta, 2.0)
                wide, grid = 2.0, 0.0
                if self.sampler == "lattice":
                    entries = math.sqrt(self.n_features * (self.n_features + 1) // 2 + self.n_features)
                    grid = report_grid(self.sigma / entries, 1.0)  # the encoding's entries are at most 1
                    wide = 2.0 + entries * grid
                    self.sigma = gaussian_sigma_analytic(self.epsilon, self.delta, wide)
                #: The L2 sensitivity σ is calibrated to: 2, widened by √D·grid for the lattice.
                self.report_sensitivity = wide
                self.report_mechanism = ReportMechanism.gaussian(self.sigma, wide, self.epsilon, self.delta)
                self._setup(MECH_GAUSSIAN, self.sigma, 0.0, 0.0, self.sigma, grid)
            else:
                self._setup_l2_ball(self.epsilon)
        except ValueError as exc:
            raise ValueError(
                f"epsilon and delta must give a finite, positive noise scale, got epsilon={self.epsilon:g}, "
                f"delta={self.delta:g} ({exc})"
            ) from None
        self._reset_state()

    @property
    def privacy_per_report(self) -> tuple[float, float]:
        """(ε, δ) of one report: (ε, δ) for the Gaussian, (ε, 0) for the L2-ball mechanism."""
        return self.epsilon, self.delta if self.mechanism == "gaussian" else 0.0

    def __repr__(self) -> str:
        return (
            f"LDPOLS(n_features={self.n_features}, epsilon={self.epsilon}, delta={self.delta}, "
            f"mechanism={self.mechanism!r}, l_x={self.l_x}, l_y={self.l_y}, gram_weight={self.gram_weight}, "
            f"shift_scale={self.shift_scale}, width={self.width}, batch_size={self.batch_size}, "
            f"n_envs={self.n_envs})"
        )
