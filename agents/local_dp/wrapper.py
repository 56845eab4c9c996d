r"""Generic local-DP conversion of a context-free bandit agent (Zheng et al. 2020, "Algorithm 1").

:class:`LDPWrapper` sits between the env and any context-free agent: ``act`` is the wrapped
agent's (or, for UCB, a noise-aware index), and ``update`` clips the user's reward to
``reward_range``, privatizes it on the user side and hands the wrapped agent *only* the
privatized value. docs/algorithms.md describes the protocol and the mechanisms.
"""

from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from numba import types
from scipy.special import expit

from agents.base import (
    FLOATS_1D,
    FLOATS_2D,
    INTS_1D,
    Agent,
    PrivateAgent,
    SingleEnvKernel,
    check_choice,
    check_float,
    check_int,
    describe,
)
from agents.common.kernels import ucb_choose
from agents.common.streams import copy_laplace, copy_normals, copy_uniforms
from agents.linear import LinearAgent
from agents.local_dp.accounting import PerUserReports
from agents.local_dp.wrapper_kernels import MECHANISM_CODES, batch_reports, noise_aware_choose
from agents.stochastic.index import UCB
from bandit_envs._jit import kernel_array
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.core import generator_addresses
from bandit_envs.privacy import bernoulli_mechanism, gaussian_sigma_analytic, gaussian_sigma_classic, rr_debias
from bandit_envs.privacy._checks import (
    GAUSSIAN_SAMPLER_BOUND,
    LAPLACE_SAMPLER_BOUND,
    POSITIVE_RANGE,
    check_epsilon,
)
from bandit_envs.privacy.accounting import (
    USER_ID_KEY,
    ReportLedger,
    ReportMechanism,
    report_cap,
    user_ids,
)
from bandit_envs.privacy.lattice import check_sampler, round_input, snap, sum_grid
from bandit_envs.privacy.streams import NOISE_SPAWN_KEY, noise_generator
from bandit_envs.validation import summarize

__all__ = ["LDPWrapper"]


MECHANISMS = ("laplace", "gaussian", "randomized_response")
SIGMA_METHODS = ("classic", "analytic")
RR_OUTPUTS = ("bits", "debias")

#: info keys that carry side observations; rewritten to "only the pulled arm was observed".
_SIDE_KEYS = ("observed_mask", "observed_rewards")
#: No ``alpha`` seen yet (:meth:`LDPWrapper._squared_widths`).
_NOT_YET = object()

_I64, _F64 = types.int64, types.float64
#: The batched round's kernels, through their compiled entry points (loaded by the constructor).
_BATCH_REPORTS = SingleEnvKernel(
    batch_reports,
    (
        INTS_1D, FLOATS_1D, _F64, _F64, _I64, _F64, _F64, _F64, _F64, types.Array(types.uint64, 1, "C"), INTS_1D,
        FLOATS_1D, types.Array(types.boolean, 2, "C"), FLOATS_2D,
    ),
)  # fmt: skip
_NOISE_AWARE_CHOOSE = SingleEnvKernel(noise_aware_choose, (FLOATS_2D, _I64, FLOATS_1D, _F64, _F64, INTS_1D))
#: The (0, 0) mask and values ``batch_reports`` gets for an agent given no info (it writes nothing into them).
_NO_MASK, _NO_VALUES = np.zeros((0, 0), dtype=np.bool_), np.zeros((0, 0))


def _snap_one(x: float, grid: float) -> float:
    """:func:`~bandit_envs.privacy.lattice.snap` of one float: ``grid * rint(x / grid)``, ties to even, sign kept.

    Python's ``round`` rounds half to even, as ``numpy.rint`` does, and is exact (a float of 2**52 or
    more is already an integer); a zero takes the sign of ``x``, as ``rint`` gives -0.0 for ``x`` in (-0.5, 0].
    """
    q = float(round(x / grid))
    return (q if q else math.copysign(0.0, x)) * grid


class LDPWrapper(PerUserReports, PrivateAgent):
    r"""Make a context-free agent locally differentially private in its rewards.

    Protocol of each round (Zheng et al. [1]_ "Algorithm 1"; docs/algorithms.md, [R] for the
    constant): the server-side agent picks the arm; the user clips its reward r to
    ``reward_range`` = [lo, hi] (range R = hi - lo), privatizes it and sends only the result; the
    agent learns from that value as if it were the reward. Mechanisms (docs/algorithms.md, privacy mechanisms):

    * ``"laplace"``: r + Lap(R/ε), ε-LDP (7.2). Unbiased, variance 2(R/ε)².
    * ``"gaussian"``: r + N(0, σ²), (ε, δ)-LDP (7.3); ``sigma_method="classic"``:
      σ = R·sqrt(2 ln(1.25/δ))/ε, proven for ε < 1 only (larger ε is refused);
      ``"analytic"``: the Balle-Wang σ for L2 sensitivity R, any ε.
    * ``"randomized_response"``: the Bernoulli mechanism on (r - lo)/R ∈ [0, 1]: draw
      b ~ Bernoulli((r - lo)/R), report b flipped with probability 1/(1 + e^ε) (7.1; for rewards
      in {lo, hi} this is exactly randomized response on the reward bit), ε-LDP.
      ``rr_output="bits"`` (default) feeds the bit itself, in {0, 1}: its mean
      q + (p - q)(μ - lo)/R is increasing in μ, so arm order is kept with gaps shrunk by
      tanh(ε/2) (the §9 route for Thompson sampling, and the only mechanism whose outputs stay in
      [0, 1] for agents that require that). ``"debias"`` feeds lo + R·rr_debias(b), an unbiased
      estimate of r outside [lo, hi].

    The wrapped agent never sees the raw reward: ``act`` calls it without the env's observation
    (``act(None)``; an observation such as ``ArmStatistics``' can hold reward statistics, so
    agents that read observations, ``reads_obs``, are refused); ``update`` passes it the privatized value and an
    ``info`` stripped of everything else (the env's info may carry the reward's ingredients, e.g.
    ``recommendation_reward``, or ``regret``). Side observations of a feedback graph are
    **stripped** [P]: each side observation is another user's value and would need its own
    report (a budget split of ε over |N(a)| values); instead, the agent gets
    ``observed_mask``/``observed_rewards`` saying "only the pulled arm was observed, with the
    privatized reward" (whether or not the env's info had side observations, or was None), so
    side-observation agents (UCB-N, TS-N, GAP, DPSE, ...) run on any env, learning from their
    own pulls only. An agent that declares ``reads_side_observations = False`` (UCB, KL-UCB, MOSS,
    ε-greedy, Exp3, Random, FixedArm, TS without side observations; :class:`agents.base.Agent`) gets no info. A
    wrapped GAP or GAPU must declare an edgeless ``feedback_graph`` (its
    ``update`` refuses a round that reveals fewer arms than its graph declares).

    Noise-aware index (``noise_aware``, only for a plain :class:`agents.UCB`, whose state the
    wrapper reads, and whose update then leaves the choice to the wrapper; ``agents/stochastic/index.py``
    is not changed). After each arm's first pull, round t plays

    .. math:: \arg\max_i \bar X_i + w \sqrt{\ln t / N_i},

    with ``alpha`` the UCB's coefficient and

    * Laplace: w = αR + sqrt(32)·R/ε, and arms with N_i <= 4 ln(t + 1) are forced first (lowest
      index): LDP-UCB-L of Ren et al. [2]_ (repository ``WenboRen/Multi-armed-Bandits-with-
      Local-Differential-Privacy``, ``DPclass.py`` ``pull_CTL`` [V-code]: α = √2, R = 1); that
      code starts counts at a pseudo-count 1 with mean 0, here counts start at 0 [P];
    * Gaussian: w = αR + sqrt(8)·σ [P]: the sub-Gaussian deviation of the noise mean at
      confidence t⁻⁴, the level of UCB1's sqrt(2 ln t / N);
    * randomized response: w = αR/tanh(ε/2) with ``"debias"`` (Hoeffding on the debiased range
      R/tanh(ε/2)) [P]; w = α with ``"bits"``, i.e. UCB on the bits (Ren's LDP-UCB-B) — the same
      arms as the wrapped UCB itself.

    The counts, means and round counter are the wrapped UCB's, so its ``update`` does the learning.

    Parameters
    ----------
    agent
        A context-free agent (UCB, FixedArm, ThompsonSampling, UCBN, DPSE, GAP, AAE, ...), one
        that does not read the observation (``reads_obs`` False: not SMUCB, SB3Agent or a linear agent).
        Its batch size (``n_envs``) is the wrapper's. An agent with ``reward_bounds`` must accept
        every report the mechanism can send, or it is refused: those that require rewards in [0, 1]
        (Thompson sampling, KL-UCB, the Exp3 family, elimination and central-DP agents) need
        ``"randomized_response"`` with ``"bits"``.
    mechanism
        ``"laplace"`` (default), ``"gaussian"`` or ``"randomized_response"``.
    epsilon
        Privacy parameter ε (> 0) of each report. Default 1.0.
    delta
        δ in (0, 1) for ``"gaussian"`` (required there); must be None otherwise.
    reward_range
        (lo, hi), finite, lo < hi and hi - lo finite: the reward bounds enforced by clipping. Default (0, 1).
    sigma_method
        ``"classic"`` (default) or ``"analytic"``; Gaussian only.
    rr_output
        ``"bits"`` (default) or ``"debias"``; randomized response only.
    noise_aware
        Use the noise-aware index above. ``None`` (default): yes iff ``agent`` is a plain UCB.
    max_reports_per_user
        Cap: a user sends at most this many reports (>= 1); later rounds of that user send
        nothing. None (default): no cap. Exclusive with ``user_budget``.
    user_budget
        Cap as a per-user budget (ε_u, δ_u), δ_u in [0, 1) (> 0 for ``"gaussian"``): the most
        reports whose tight composition (:func:`bandit_envs.privacy.accounting.max_reports`)
        stays within it. None (default): no cap.
    sampler
        ``"lattice"`` (default) or ``"float"``, for ``"laplace"`` and ``"gaussian"``: with the
        lattice sampler (:mod:`bandit_envs.privacy.lattice`) the clipped reward and the noise
        are both rounded to the grid :attr:`grid` = ``sum_grid(b, max(|lo|, |hi|, R))`` with
        ``b = R/ε`` (Laplace) or σ (Gaussian), a power of two about ``2**-20`` of the noise
        scale (never below ``2**-24`` of the rewards' magnitude), so every
        report is a multiple of the grid whatever the reward; the sensitivity is widened to
        ``R + grid`` for the rounding (Laplace scale ``(R + grid)/ε``, Gaussian σ calibrated at
        ``R + grid``): ε-LDP ((ε, δ)-LDP) as stated, up to the noise sampler's tail event
        (probability at most ``e**(ε - 36.04) / 2`` per Laplace report;
        :mod:`bandit_envs.privacy.lattice`). ``"float"``: the raw ``r + noise``,
        faster, **not safe against floating-point attacks** (Mironov 2012). Randomized-response
        reports are bits (or a fixed affine map of bits): their output set never depends on the
        reward.
    seed
        Seed of the privacy noise: the wrapper's generator is
        :func:`bandit_envs.privacy.streams.noise_generator` of it, a stream independent of
        ``numpy.random.default_rng(seed)``, so the same integer given to the env or to the
        wrapped agent does not reproduce the noise (the wrapped agent keeps its own generator
        for its policy). A wrapped private agent that draws its own noise from
        ``noise_generator`` (GAP, GAPU, DPSE, another LDPWrapper, or an agent these wrap) with the
        same seed, or one a copy of the batch uses, would hold the users' noise on the server side: such a ``seed``
        is refused (at construction and by ``reset(seed=s)``), so give the two different seeds
        (batches: ranges that do not overlap). Copy i of a batch draws from ``noise_generator(seed + i)``
        (docs/design.md, "Agents", Seeds). :meth:`reset` continues the noise generator (fresh
        noise for every episode); ``reset(seed=s)`` restarts it from ``s``, so reusing a seed
        on other data reuses its noise (:meth:`agents.base.PrivateAgent.reset`).

    Attributes
    ----------
    agent
        The wrapped agent.
    report_mechanism
        One report's mechanism for the accountant (:class:`~bandit_envs.privacy.accounting.ReportMechanism`).
    max_reports_per_user
        The cap in reports (from ``max_reports_per_user`` or ``user_budget``), or None.
    n_clipped
        Reports whose reward was clipped to ``reward_range`` (int, or (N,) per copy).
    n_withheld
        Rounds whose report the cap withheld (int, or (N,) per copy).

    Privacy
    -------
    Unit: one user, i.e. every reward report that carries the user's id (``info["user_id"]``,
    e.g. from ``MovieLensRecommendation-v0``, where a user is drawn every round and so reports
    many times); any two reward sequences of that user in ``reward_range`` are neighbours. An
    env without user ids is one user: the whole stream (a report without an id is charged to
    every user). Each report is ε-LDP (Laplace, randomized response) or (ε, δ)-LDP (Gaussian):
    :attr:`privacy_per_report`. A user with k reports loses what k reports compose to:
    :meth:`privacy_per_user` gives, for the user with the most reports so far, k, the basic
    bound (kε, kδ) and the tight bound of ``dp_accounting``'s privacy loss distribution, and
    :attr:`privacy_spent` is that tight bound. The cap bounds k. The ledger counts the reports
    since the last :meth:`reset`: a user who reports in several episodes loses what all its
    reports compose to. In batch mode each copy is its
    own population, and the guarantee is the worst over copies.

    Cap in batch mode: when only some copies' users are capped, the wrapped agent is updated for
    all copies, the capped ones with a report of ``lo`` (independent of their user's data, so
    the guarantee does not depend on what follows), and then the capped copies' rows of the
    agent's per-copy arrays (those with the batch axis first, the convention of
    :mod:`agents.base`) are put back, and an arm the update chose for the next ``act`` (UCB's) is
    dropped, so ``act`` chooses from the rows put back. Counters shared by all copies (UCB's
    round t) still advance. When no copy may report, the wrapped agent's ``update`` is not called.

    Private state
    -------------
    The wrapper simulates both sides; these attributes are the users' side or un-noised
    diagnostics, outside the guarantee, and must not be published with the model:
    ``rng`` and ``seed`` (whoever holds them can subtract the noise from every report; neither
    is in the ``repr``, and a :func:`copy.deepcopy` or pickle of the wrapper holds the same future
    noise: never run a copy and the original on different data and release both);
    ``n_clipped`` (how many users' rewards were clipped, counted before privatization); the
    ledger behind ``max_user_reports`` and ``n_withheld`` (who reported how often: the guarantee
    covers report values, not participation). Raw rewards are never stored; the wrapped agent
    holds only privatized values and what it computes from them.

    References
    ----------
    .. [1] K. Zheng, T. Cai, W. Huang, Z. Li, L. Wang, "Locally Differentially Private
       (Contextual) Bandits Learning", NeurIPS 2020 (arXiv:2006.00701).
    .. [2] W. Ren, X. Zhou, J. Liu, N. B. Shroff, "Multi-Armed Bandits with Local Differential
       Privacy", arXiv:2007.03121, 2020.
    """

    privacy_unit = (
        "one user: all reward reports carrying its info['user_id'] (without ids, the whole stream), "
        "any values in reward_range"
    )

    def __init__(
        self,
        agent: Agent,
        mechanism: str = "laplace",
        epsilon: float = 1.0,
        delta: float | None = None,
        reward_range: tuple[float, float] = (0.0, 1.0),
        *,
        sigma_method: str = "classic",
        rr_output: str = "bits",
        noise_aware: bool | None = None,
        max_reports_per_user: int | None = None,
        user_budget: tuple[float, float] | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"agent must be an agents.Agent, got {type(agent).__name__}.")
        if isinstance(agent, LinearAgent):
            raise TypeError(
                f"agent must be a context-free agent, got {type(agent).__name__}: its contexts would stay "
                "unprotected; use agents.LDPLinUCB for linear contextual bandits."
            )
        if agent.reads_obs:
            raise TypeError(
                f"agent must not read the env's observation, got {type(agent).__name__}, which does: an "
                "observation can carry raw rewards (e.g. ArmStatistics), so its arms would not be private."
            )
        super().__init__(agent.n_arms, n_envs=agent.n_envs, seed=seed)
        self.agent = agent
        self.mechanism = check_choice("mechanism", mechanism, MECHANISMS)
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.lo, self.hi = _check_range(reward_range)
        self.sigma_method = check_choice("sigma_method", sigma_method, SIGMA_METHODS)
        self.rr_output = check_choice("rr_output", rr_output, RR_OUTPUTS)
        width = self.hi - self.lo
        self.delta = 0.0
        self.scale = 0.0  # Laplace b or Gaussian σ
        if mechanism == "gaussian":
            if delta is None:
                raise ValueError("delta must be given (a number in (0, 1)) for the Gaussian mechanism, got None.")
            self.delta = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
            if sigma_method == "classic" and self.epsilon >= 1.0:
                raise ValueError(
                    f"epsilon must be < 1 for the classic Gaussian mechanism (Dwork & Roth Thm. 3.22), got "
                    f"{epsilon!r}; use sigma_method='analytic' for epsilon >= 1."
                )
            _check_gaussian_width(reward_range, width)
            sigma_fn = gaussian_sigma_classic if sigma_method == "classic" else gaussian_sigma_analytic
            try:
                self.scale = sigma_fn(self.epsilon, self.delta, width)
            except (OverflowError, ZeroDivisionError):
                self.scale = math.inf
            self._check_sigma(width)
        else:
            if delta is not None:
                raise ValueError(
                    f"delta must be None for the {mechanism} mechanism (it is pure ε-LDP), got {describe(delta)}."
                )
            if mechanism == "laplace":
                self.scale = width / self.epsilon
        _check_report_scale(mechanism, rr_output, self.scale, self.epsilon, self.lo, self.hi)
        self.sampler = check_sampler(sampler)
        #: The grid of the lattice sampler (0.0: float sampler, or randomized response).
        self.grid = 0.0
        self._sensitivity = width
        if self.sampler == "lattice" and mechanism != "randomized_response":
            self.grid = sum_grid(self.scale, max(abs(self.lo), abs(self.hi), width))
            self._sensitivity = width + self.grid  # rounding r to the grid moves it by at most grid / 2
            if mechanism == "laplace":
                self.scale = self._sensitivity / self.epsilon
            else:
                self._check_sigma(self._sensitivity)
                sigma_fn = gaussian_sigma_classic if sigma_method == "classic" else gaussian_sigma_analytic
                self.scale = sigma_fn(self.epsilon, self.delta, self._sensitivity)
                self._check_sigma(self._sensitivity)
            round_input("reward_range", np.array([self.lo, self.hi]), self.grid)
            _check_report_scale(mechanism, rr_output, self.scale, self.epsilon, self.lo, self.hi)  # the widened scale
        self._check_reward_bounds(agent)
        plain_ucb = type(agent) is UCB
        if noise_aware is None:
            noise_aware = plain_ucb
        if not isinstance(noise_aware, bool | np.bool_):
            raise TypeError(f"noise_aware must be True, False or None, got {describe(noise_aware)}.")
        if noise_aware and not plain_ucb:
            raise ValueError(f"noise_aware=True needs the wrapped agent to be agents.UCB, got {type(agent).__name__}.")
        self.noise_aware = bool(noise_aware)
        if self.noise_aware:
            self._check_width()
        self.name = f"LDP-{agent.name}"
        if mechanism == "laplace":
            self.report_mechanism = ReportMechanism.laplace(self.epsilon)
        elif mechanism == "gaussian":
            self.report_mechanism = ReportMechanism.gaussian(self.scale, self._sensitivity, self.epsilon, self.delta)
        else:
            self.report_mechanism = ReportMechanism.randomized_response(self.epsilon)
        self.max_reports_per_user = report_cap(self.report_mechanism, max_reports_per_user, user_budget)
        self.user_budget = user_budget
        self._ledger = ReportLedger(self.batch, self.max_reports_per_user)
        #: N copies whose users all report (no cap) with a report the kernel makes (not debiased
        #: bits): ``update``'s usual round is one compiled call (:mod:`agents.local_dp.wrapper_kernels`).
        self._compiled_reports = (
            self.n_envs is not None
            and self.max_reports_per_user is None
            and not (mechanism == "randomized_response" and self.rr_output == "debias")
        )
        #: Randomized response's P(report 1) = p_zero + slope · (r − lo)/R (bernoulli_mechanism's).
        self._p_zero, self._slope = float(expit(-self.epsilon)), math.tanh(self.epsilon / 2.0)
        #: The ``alpha`` whose w² ``_widths_squared`` holds (:meth:`_squared_widths`).
        self._widths_of: Any = _NOT_YET
        self._widths_squared = np.zeros(self.batch)
        #: One env's noise-aware arm, written by the kernel and returned as an int (batches: a new array each act).
        self._one_arm = np.zeros(1, dtype=np.int64)
        if self._compiled_reports:
            _BATCH_REPORTS.load()
        #: One env whose user always reports (no cap), not debiased bits: ``update``'s usual round is
        #: plain Python floats (:meth:`_report_one`), the same draws and arithmetic.
        self._plain_one_env = (
            self.n_envs is None
            and self.max_reports_per_user is None
            and not (mechanism == "randomized_response" and self.rr_output == "debias")
        )
        #: Whether the compiled reports go to the wrapped agent with the pulled-arm-only info (else with none).
        # An agent whose update reads no side observations (Agent.reads_side_observations) gets no info
        # rather than one that says only the pulled arm was observed: the same learning, without two
        # (N, K) arrays a round.
        self._info_for_agent = bool(agent.reads_side_observations)
        if self.noise_aware:
            _NOISE_AWARE_CHOOSE.load()
            # The wrapper chooses the arms: the UCB's update need not choose them too (its next act would).
            assert isinstance(agent, UCB)
            agent._choose_in_update = False
        self._check_noise_apart(self.seed)
        self._reset_state()

    def reset(self, seed: int | None = None) -> None:
        """As :meth:`agents.base.PrivateAgent.reset`; a ``seed`` whose noise the wrapped agent holds is refused."""
        if seed is not None:
            self._check_noise_apart(check_int("seed", seed, minimum=0))
        super().reset(seed)

    def _check_noise_apart(self, seed: int | None) -> None:
        """Refuse a ``seed`` whose users' noise streams are one of the wrapped agent's own generators' streams.

        The users of copy i draw from ``noise_generator(seed + i)``; a private agent built on
        that function (GAP, GAPU, DPSE, another LDPWrapper) with an overlapping seed holds the same
        stream on the server side, from which the users' noise can be replayed: with randomized
        response the server then reads a 0/1 reward exactly in a share tanh(ε/2) of the rounds.
        The streams are compared by their seed sequences, so a generator that has already drawn
        is caught too. None (fresh entropy) never collides.
        """
        if seed is None:
            return
        theirs = _noise_seeds(self.agent)
        hit = next((s for s in sorted(theirs) if seed <= s < seed + self.batch), None)
        if hit is None:
            return
        which = "" if self.n_envs is None else f" (copy {hit - seed} of seeds {seed}..{seed + self.batch - 1})"
        raise ValueError(
            f"seed must give the users' noise a stream of its own, got seed={seed}, whose users' stream "
            f"noise_generator({hit}){which} is also a generator of the wrapped {type(self.agent).__name__} (seed "
            f"{summarize(getattr(self.agent, 'seed', None))}), so the server side would hold the users' noise; use "
            f"seeds that do not overlap the agent's."
        )

    def _check_reward_bounds(self, agent: Agent) -> None:
        """Refuse an agent whose ``reward_bounds`` the privatized reports can leave (it would fail at such a report).

        The reports lie in {0, 1} (randomized response, bits), in two fixed values (debiased), or
        anywhere within the noise sampler's bound around ``reward_range`` (Laplace, Gaussian). The
        sentence advises a larger ``epsilon`` or a narrower ``reward_range`` where that can make
        noisy reports fit (``reward_range`` strictly inside the bounds, or bounds that guard sums on
        both sides of [0, 1], as UCB's), else randomized response with bits.
        """
        bounds = agent.reward_bounds
        if bounds is None:
            return
        low, high = self._report_range()
        if bounds[0] <= low and high <= bounds[1]:
            return
        room = bounds[0] < self.lo and self.hi < bounds[1]  # a large enough epsilon makes the noisy reports fit
        wide = bounds[0] < 0.0 and 1.0 < bounds[1]  # bounds that guard sums (UCB's), not a [0, 1] reward model
        if self.mechanism != "randomized_response" and (room or wide):
            # a larger epsilon (narrower noise) or a narrower range makes the reports fit
            raise ValueError(
                f"epsilon and reward_range must keep the {self.mechanism} reports within the rewards "
                f"{type(agent).__name__} accepts, [{bounds[0]:g}, {bounds[1]:g}], got epsilon={self.epsilon:g} and "
                f"reward_range=({self.lo:g}, {self.hi:g}), whose reports reach [{low:g}, {high:g}]; raise epsilon "
                f"or narrow reward_range."
            )
        fits = bounds[0] <= 0.0 and 1.0 <= bounds[1]
        advice = (
            "mechanism must be 'randomized_response' with rr_output='bits'" if fits else "agent must accept the reports"
        )
        given = f"mechanism={self.mechanism!r}"
        if self.mechanism == "randomized_response":
            given += f" with rr_output={self.rr_output!r}"
        raise ValueError(
            f"{advice} for {type(agent).__name__}, which needs rewards in [{bounds[0]:g}, {bounds[1]:g}], got "
            f"{given}, whose reports reach [{low:g}, {high:g}]."
        )

    def _report_range(self) -> tuple[float, float]:
        """The smallest and largest report the mechanism can send."""
        span = self.hi - self.lo
        if self.mechanism == "randomized_response":
            if self.rr_output == "bits":
                return 0.0, 1.0
            ends = self.lo + span * rr_debias(np.array([0.0, 1.0]), self.epsilon)
            return float(ends[0]), float(ends[1])
        bound = LAPLACE_SAMPLER_BOUND if self.mechanism == "laplace" else GAUSSIAN_SAMPLER_BOUND
        spread = bound * self.scale + self.grid
        return self.lo - spread, self.hi + spread

    def _reset_state(self) -> None:
        self.agent.reset()
        self._clipped = np.zeros(self.batch, dtype=np.int64)
        self._ledger.reset()
        if self._noise_due():  # construction or reset(seed=s); reset() continues the noise
            self.rng = noise_generator(self.seed)
            if self.n_envs is None:
                self._copy_rngs: tuple[np.random.Generator, ...] = (self.rng,)
            else:  # copy i: the noise of a single wrapper seeded seed + i (docs/design.md, "Agents", Seeds)
                seeds = [None if self.seed is None else self.seed + i for i in range(self.n_envs)]
                self._copy_rngs = tuple(noise_generator(s) for s in seeds)
            self._bitgens = generator_addresses(self._copy_rngs)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_bitgens", None)  # addresses of this process's objects
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_one_arm", np.zeros(1, dtype=np.int64))  # a wrapper pickled before it had one
        if self.n_envs is None:  # one env: the stream is rng's (a copy made its own object of it)
            self._copy_rngs = (self.rng,)
        self._bitgens = generator_addresses(self._copy_rngs)

    def _check_sigma(self, sensitivity: float) -> None:
        """Gaussian: refuse ε, δ and ``reward_range`` whose σ or ``sensitivity`` leaves :data:`POSITIVE_RANGE`.

        Beyond it the noise calibration over- or underflows (the accountant refuses such a σ).
        """
        low, high = POSITIVE_RANGE
        if low <= self.scale <= high and low <= sensitivity <= high:
            return
        raise ValueError(
            f"epsilon and delta must give a noise scale σ in [{low:g}, {high:g}] (beyond, the noise calibration "
            f"over- or underflows), got epsilon={self.epsilon:g} and delta={self.delta:g} (σ = {self.scale:g} for "
            f"the sensitivity {sensitivity:g} of reward_range=({self.lo:g}, {self.hi:g}) with "
            f"sigma_method={self.sigma_method!r})."
        )

    def _check_width(self) -> None:
        """Refuse parameters whose noise-aware index w² ln t is not finite at some round (t < 2**63).

        At t = 1 the index multiplies w² by ln 1 = 0: an infinite w² would make it NaN, and later
        every arm's index infinite (the first arm always played).
        """
        w = self.width()
        with np.errstate(over="ignore"):
            if np.all(np.isfinite(np.square(w) * math.log(2.0**63))):
                return
        alpha = summarize(getattr(self.agent, "alpha", None))
        raise ValueError(
            f"epsilon, reward_range and alpha must give a noise-aware UCB width w with w² ln t finite for t < 2**63, "
            f"got epsilon={self.epsilon:g}, reward_range=({self.lo:g}, {self.hi:g}) and alpha={alpha} "
            f"({self.mechanism}: w = {float(np.max(w)):g}); use a larger epsilon or noise_aware=False."
        )

    def _copy_noise(self, mechanism: str, send: BoolArray | None = None) -> FloatArray:
        """Batch mode: one draw per reporting copy from its own noise generator (:mod:`agents.common.streams`).

        A Laplace or Gaussian draw, or a uniform (randomized response), through the generators'
        C interface: numpy's algorithms on the same bit generators, the draws a single wrapper
        makes. A copy whose user is capped (``send`` False) draws nothing, as a single wrapper
        draws nothing for a withheld report; its entry is 0. None: every copy reports.
        """
        out = np.zeros(self.batch)
        rows = None if send is None or send.all() else np.flatnonzero(send)  # None: every copy
        bitgens = self._bitgens if rows is None else self._bitgens[rows]
        drawn = out if rows is None else np.empty(rows.size)
        if mechanism == "laplace":
            copy_laplace(bitgens, self.scale, drawn)
        elif mechanism == "gaussian":
            copy_normals(bitgens, self.scale, drawn)
        else:
            copy_uniforms(bitgens, drawn)
        if rows is not None:
            out[rows] = drawn
        return out

    @property
    def privacy_per_report(self) -> tuple[float, float]:
        """(ε, δ) of one report, the ideal mechanism's (δ = 0 for Laplace and randomized response).

        The noise sampler's tail event adds ``report_mechanism.tail_delta`` to δ per report (about
        3e-16 for Laplace at ε = 1; 0 for randomized response; :mod:`bandit_envs.privacy.accounting`),
        which :meth:`privacy_per_user` and :attr:`privacy_spent` include.
        """
        return self.epsilon, self.delta

    @property
    def n_withheld(self) -> int | npt.NDArray[np.int64]:
        """Rounds whose report the per-user cap withheld (per copy)."""
        withheld = self._ledger.withheld
        return int(withheld[0]) if self.n_envs is None else withheld

    @property
    def n_clipped(self) -> int | npt.NDArray[np.int64]:
        """Reports whose reward was clipped to ``reward_range`` (per copy)."""
        return int(self._clipped[0]) if self.n_envs is None else self._clipped.copy()

    def width(self) -> FloatArray:
        """Per copy, the coefficient w of the noise-aware index mean + w sqrt(ln t / N) (UCB only)."""
        if not isinstance(self.agent, UCB):
            raise TypeError(f"width() needs the wrapped agent to be agents.UCB, got {type(self.agent).__name__}.")
        alpha = np.broadcast_to(np.asarray(self.agent.alpha, dtype=np.float64), (self.batch,))
        span = self.hi - self.lo
        if self.mechanism == "laplace":
            return alpha * span + math.sqrt(32.0) * self.scale
        if self.mechanism == "gaussian":
            return alpha * span + math.sqrt(8.0) * self.scale
        if self.rr_output == "debias":
            return alpha * span / math.tanh(self.epsilon / 2.0)
        return np.array(alpha, dtype=np.float64)

    def act(self, obs: Any = None) -> Any:
        """The wrapped agent's arm, or the noise-aware UCB index (see the class docstring)."""
        self._check_obs(obs)
        if not self.noise_aware:  # never the env's observation: it can carry raw rewards
            return self.agent.act(None)
        ucb = self.agent
        assert isinstance(ucb, UCB)
        t = ucb.t + 1
        forced_up_to = 4.0 * math.log(t + 1) if self.mechanism == "laplace" else -1.0
        out = self._one_arm if self.n_envs is None else np.empty(self.batch, dtype=np.int64)
        _NOISE_AWARE_CHOOSE.call(ucb._state, self.n_arms, self._squared_widths(), math.log(t), forced_up_to, out)
        return self._out(out)

    def _squared_widths(self) -> FloatArray:
        """w² per copy (:meth:`width`), kept while the wrapped UCB's ``alpha`` is the same object."""
        alpha = getattr(self.agent, "alpha", None)
        if alpha is not self._widths_of:
            self._widths_of = alpha
            self._widths_squared = np.ascontiguousarray(np.square(self.width()), dtype=np.float64).reshape(self.batch)
        return self._widths_squared

    def _noise_aware_reference(self) -> IntArray:
        """:meth:`act`'s noise-aware choice in numpy, the reference of its kernel (:func:`noise_aware_choose`)."""
        ucb = self.agent
        assert isinstance(ucb, UCB)
        t = ucb.t + 1
        means, counts = kernel_array(ucb.means, np.float64), kernel_array(ucb.counts, np.int64)  # views: C copies
        actions: IntArray = ucb_choose(means, counts, np.square(self.width()) * math.log(t))
        if self.mechanism == "laplace":
            forced = ucb.counts <= 4.0 * math.log(t + 1)
            rows = forced.any(axis=1)
            actions[rows] = np.argmax(forced[rows], axis=1)
        return actions

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Clip, privatize (user side) and pass only the privatized reward to the wrapped agent.

        The round's user is ``info["user_id"]`` (none: the whole stream is one user); a user
        over the cap sends nothing (see the class docstring).
        """
        if self._plain_one_env and (info is None or (type(info) is dict and USER_ID_KEY not in info)):
            value = self._scalar_feedback(action, reward)  # a finite float, or None
            if value is not None:  # the usual one-env round, which Agent._feedback would take as it is
                if info is not None:
                    self._check_info(info)
                self._report_one(action, value)
                return
        a, r = self._feedback(action, reward, info)
        if self._compiled_reports and (not info or USER_ID_KEY not in info):
            # N copies, every user reporting (no cap, no user ids): batch_reports does what the
            # code below does, in one call (the same draws and arithmetic; the code below is its
            # reference, tests/test_ldp_wrapper.py).
            n = self.batch
            reports = np.empty(n)
            if self._info_for_agent:  # else none: the agent reads no side observations
                mask, values = np.zeros((n, self.n_arms), dtype=np.bool_), np.zeros((n, self.n_arms))
            else:
                mask, values = _NO_MASK, _NO_VALUES
            _BATCH_REPORTS.call(
                a, r, self.lo, self.hi, MECHANISM_CODES[self.mechanism], self.scale, self.grid, self._p_zero,
                self._slope, self._bitgens, self._clipped, reports, mask, values,
            )  # fmt: skip
            info_out = {"observed_mask": mask, "observed_rewards": values} if self._info_for_agent else None
            self.agent.update(action, reports, info_out)
            self._ledger.record_anonymous()
            return
        users = user_ids(info, self.batch)
        send = self._ledger.allowed(users)
        if not send.any():
            self._ledger.record(users, send)
            return
        clipped = np.clip(r, self.lo, self.hi)
        self._clipped += (clipped != r) & send
        # A withheld report is replaced by lo, which says nothing about its user.
        noisy = self._privatize(np.where(send, clipped, self.lo), send)
        out = float(noisy[0]) if self.n_envs is None else noisy
        if send.all():
            self.agent.update(action, out, self._strip(info, a, noisy))
        else:
            saved = _per_copy_state(self.agent, self.batch)
            self.agent.update(action, out, self._strip(info, a, noisy))
            _restore_rows(self.agent, saved, ~send)
            self.agent._forget_choice()  # an arm the update chose from the rows just put back
        self._ledger.record(users, send)

    def _report_one(self, action: int, reward: float) -> None:
        """:meth:`update` of one env with checked scalars, no user id and no cap, in Python floats.

        The reference is the general path below it (``np.clip``, :meth:`_privatize`, :meth:`_strip`,
        the ledger): the same draws from ``self.rng`` (one scalar draw is the draw of a size-1
        array), the same float operations, the same info for the wrapped agent, and one anonymous
        report counted (tests/test_ldp_wrapper.py compares the two).
        """
        lo, hi = self.lo, self.hi
        clipped = reward if lo <= reward <= hi else (lo if reward < lo else hi)  # np.clip's value (-0.0 kept)
        if clipped != reward:
            self._clipped[0] += 1
        mechanism, grid = self.mechanism, self.grid
        if mechanism == "laplace" or mechanism == "gaussian":
            noise = self.rng.laplace(0.0, self.scale) if mechanism == "laplace" else self.rng.normal(0.0, self.scale)
            noisy = clipped + noise if grid == 0.0 else _snap_one(clipped, grid) + _snap_one(noise, grid)
        else:  # randomized response's bit (rr_output="bits"), as _privatize draws it
            unit = min(max((clipped - lo) / (hi - lo), 0.0), 1.0)
            noisy = 1.0 if self.rng.random() < self._p_zero + self._slope * unit else 0.0
        info_out = None
        if self._info_for_agent:
            mask, values = np.zeros(self.n_arms, dtype=np.bool_), np.zeros(self.n_arms)
            mask[action], values[action] = True, noisy
            info_out = {"observed_mask": mask, "observed_rewards": values}
        self.agent.update(action, float(noisy), info_out)
        self._ledger.record_anonymous()

    def _privatize(self, r: FloatArray, send: BoolArray | None = None) -> FloatArray:
        """User side: the report of each clipped reward (batch mode: noise drawn only where ``send``; None: all)."""
        if self.mechanism in ("laplace", "gaussian"):
            if self.n_envs is None:
                draw = self.rng.laplace if self.mechanism == "laplace" else self.rng.normal
                noise = draw(0.0, self.scale, size=r.shape)
            else:
                noise = self._copy_noise(self.mechanism, send)
            if self.grid > 0.0:  # the lattice sampler: report and noise on the grid
                return snap(r, self.grid) + snap(noise, self.grid)
            return r + noise
        span = self.hi - self.lo
        unit = np.clip((r - self.lo) / span, 0.0, 1.0)
        if self.n_envs is None:
            report = bernoulli_mechanism(unit, self.epsilon, self.rng).astype(np.float64)
        else:  # bernoulli_mechanism's bits, with copy b's uniform from copy b's generator
            p_one = expit(-self.epsilon) + math.tanh(self.epsilon / 2.0) * unit
            report = (self._copy_noise(self.mechanism, send) < p_one).astype(np.float64)
        if self.rr_output == "bits":
            return report
        return self.lo + span * rr_debias(report, self.epsilon)

    def _strip(self, info: dict[str, Any] | None, a: npt.NDArray[np.int64], noisy: FloatArray) -> dict[str, Any] | None:
        """The info the wrapped agent sees: a pulled-arm-only observation of ``noisy``, whatever the env gave.

        The same with or without the env's side observations (they are never passed on), so an
        agent that reads its rewards from ``observed_rewards`` (UCB-N, TS-N) learns from the
        privatized pulled arm alone, as any other wrapped agent does.
        """
        if not self._info_for_agent:  # an agent that reads no side observations: nothing to say
            return None
        mask = np.zeros((self.batch, self.n_arms), dtype=bool)
        values = np.zeros((self.batch, self.n_arms))
        rows = np.arange(self.batch)
        mask[rows, a] = True
        values[rows, a] = noisy
        if self.n_envs is None:
            return {"observed_mask": mask[0], "observed_rewards": values[0]}
        return {"observed_mask": mask, "observed_rewards": values}

    def __repr__(self) -> str:
        delta = f", delta={self.delta}" if self.mechanism == "gaussian" else ""
        return (
            f"LDPWrapper({self.agent!r}, mechanism={self.mechanism!r}, epsilon={self.epsilon}{delta}, "
            f"reward_range=({self.lo}, {self.hi}))"
        )


def _check_report_scale(mechanism: str, rr_output: str, scale: float, epsilon: float, lo: float, hi: float) -> None:
    """Refuse parameters whose privatized reports, or the difference of two, would not be finite numbers.

    A report is at most ``max(|lo|, |hi|)`` plus the noise, which numpy's samplers bound by
    :data:`~bandit_envs.privacy._checks.LAPLACE_SAMPLER_BOUND` (Laplace) or
    :data:`~bandit_envs.privacy._checks.GAUSSIAN_SAMPLER_BOUND` (Gaussian) times ``scale``; a
    debiased randomized-response report by ``max(|lo|, |hi|) + (hi - lo) / tanh(ε/2)``.
    """
    width = hi - lo
    if mechanism == "randomized_response":
        if rr_output == "bits":
            return
        spread = width / math.tanh(epsilon / 2.0) if math.tanh(epsilon / 2.0) > 0.0 else math.inf
    else:
        spread = (LAPLACE_SAMPLER_BOUND if mechanism == "laplace" else GAUSSIAN_SAMPLER_BOUND) * scale
    largest = max(abs(lo), abs(hi)) + spread
    if not math.isfinite(2.0 * largest):
        raise ValueError(
            f"epsilon and reward_range must give finite reports, got epsilon={epsilon:g} and reward_range=({lo:g}, "
            f"{hi:g}), whose {mechanism} reports reach about {largest:g} (at most {sys.float_info.max / 2:g}, so that "
            "their differences are finite)."
        )


def _noise_seeds(agent: Any, seen: set[int] | None = None) -> set[int]:
    """The seeds s of ``agent``'s generators that are ``noise_generator(s)``'s stream (attributes, tuples, lists).

    A generator is that stream when its bit generator is numpy's default (PCG64) on the seed
    sequence ``SeedSequence(s, spawn_key=(NOISE_SPAWN_KEY,))``, whatever it has drawn since. The
    agents ``agent`` holds (a wrapped agent of a wrapper) are searched too: their generators are
    on the server side as well.
    """
    default = type(np.random.default_rng(0).bit_generator)
    out: set[int] = set()
    seen = set() if seen is None else seen
    seen.add(id(agent))
    for value in vars(agent).values():
        items = value if isinstance(value, tuple | list) else (value,)
        for item in items:
            if isinstance(item, Agent) and hasattr(item, "__dict__") and id(item) not in seen:
                out |= _noise_seeds(item, seen)
                continue
            if not isinstance(item, np.random.Generator) or type(item.bit_generator) is not default:
                continue
            seq = getattr(item.bit_generator, "seed_seq", None)
            if (
                isinstance(seq, np.random.SeedSequence)
                and isinstance(seq.entropy, int)
                and tuple(seq.spawn_key) == (NOISE_SPAWN_KEY,)
                and seq.pool_size == np.random.SeedSequence(0).pool_size
            ):
                out.add(seq.entropy)
    return out


def _check_range(value: Any) -> tuple[float, float]:
    """``reward_range`` as (lo, hi) finite floats with lo < hi and a finite width hi - lo (the range R)."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"reward_range must be a pair (lo, hi) with lo < hi, got {summarize(value)}.") from None
    lo_f = check_float("reward_range[0]", lo)
    hi_f = check_float("reward_range[1]", hi)
    if not lo_f < hi_f:
        raise ValueError(f"reward_range must be a pair (lo, hi) with lo < hi, got {summarize(value)}.")
    if not math.isfinite(hi_f - lo_f):  # every mechanism scales by R: (r - lo) / R would be inf / inf
        raise ValueError(
            f"reward_range must have a finite width hi - lo (at most {sys.float_info.max:g}), got "
            f"({lo_f:g}, {hi_f:g}), whose width overflows."
        )
    return lo_f, hi_f


def _check_gaussian_width(value: Any, width: float) -> None:
    """Refuse a ``reward_range`` whose width, the Gaussian mechanism's L2 sensitivity, leaves :data:`POSITIVE_RANGE`."""
    low, high = POSITIVE_RANGE
    if not low <= width <= high:
        raise ValueError(
            f"reward_range must have a width hi - lo in [{low:g}, {high:g}] for the Gaussian mechanism (it is the "
            f"L2 sensitivity; beyond, the noise calibration over- or underflows), got {summarize(value)} "
            f"(width {width:g})."
        )


class _Saved(NamedTuple):
    """A copy of one per-copy array of the wrapped agent, and where it lives."""

    name: str  #: the attribute
    item: int | None  #: the item of a tuple or list attribute, or None
    axis_last: bool  #: copy b is column b (``copy_axis_last``), not row b
    before: npt.NDArray[Any]


def _per_copy_state(agent: Agent, batch: int) -> list[_Saved]:
    """Copies of the agent's per-copy arrays (attributes or items of tuple/list attributes, batch axis first).

    The arrays the agent names in ``copy_axis_last`` (e.g. Thompson sampling's stream states, a
    column per copy) are saved with ``axis_last`` set.
    """
    last = type(agent).copy_axis_last
    out: list[_Saved] = []
    for name, value in vars(agent).items():
        items = list(enumerate(value)) if isinstance(value, tuple | list) else [(None, value)]
        for index, item in items:
            if isinstance(item, np.ndarray) and item.ndim >= 1 and item.flags.writeable:
                axis_last = index is None and name in last
                if item.shape[-1 if axis_last else 0] == batch:
                    out.append(_Saved(name, index, axis_last, item.copy()))
    return out


def _restore_rows(agent: Agent, saved: list[_Saved], rows: npt.NDArray[np.bool_]) -> None:
    """Put back the ``rows`` (copies) of the arrays saved by :func:`_per_copy_state` (columns where ``axis_last``)."""
    for name, item, axis_last, before in saved:
        current = getattr(agent, name, None)
        if item is not None:
            current = current[item] if isinstance(current, tuple | list) and item < len(current) else None
        if isinstance(current, np.ndarray) and current.shape == before.shape and current.flags.writeable:
            if axis_last:
                current[..., rows] = before[..., rows]
            else:
                current[rows] = before[rows]
