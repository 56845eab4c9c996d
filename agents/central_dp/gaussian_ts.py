r"""Gaussian-prior Thompson samplers, central-DP through their own Gaussian draws: PrePullGaussianTS, DPTSUCB.

A Thompson sample θ_i ~ N(μ̂_i, σ²/n_i) of a Gaussian posterior is the Gaussian mechanism on
the arm's empirical mean μ̂_i: one reward r ∈ [0, 1] moves μ̂_i by at most 1/n_i, so one sample
is (1/(σ√n_i))-GDP for that reward (Gaussian differential privacy, Dong, Roth & Su, JRSS B 2022,
Thm. 2.7), and the arms played are post-processing of the samples. Both agents state their
guarantee in GDP, composed over the samples a reward can affect (adaptive composition,
Cor. 3.3 there: μ = sqrt(Σ μ_s²)), and convert it to (ε, δ) with
:func:`bandit_envs.privacy.accounting.gdp_epsilon`.

Unit of privacy (``privacy_unit``): one round's reward r_t ∈ [0, 1] (event level: neighbouring
reward sequences differ in one round's reward). Per user: a user whose data is k rounds' rewards
is covered by group privacy, k·μ-GDP (k rewards move one empirical mean by at most k/n_i):
``user_privacy_spent(k)``.

Noise: the Gaussian draws are the privacy noise, so they come from the copies' privacy-noise
streams (:mod:`agents.common.philox`, :func:`bandit_envs.privacy.streams.philox_noise_generator` of
the copy's seed): copy i of a batch seeded with s draws exactly as a single agent seeded with
s + i. Draws are Box–Muller pairs of two uniforms (:class:`ReferenceGaussians`); like
floating-point Laplace sampling (Mironov, CCS 2012) it is fine for research, not for production.
The draws are also bounded: ``1 - U1 >= 2**-53``, so ``|Z| <= sqrt(106 ln 2)``, about 8.57
(:data:`BOX_MULLER_BOUND`). A sample whose mean one reward moves by ``s`` of its standard
deviations (``s = 1/(σ√n_i)``, the sample's GDP μ) can then land where the neighbour's cannot,
with probability at most ``Φ(s - 8.57)`` under one of them and 0 under the other: an additive
δ per sample (:func:`sampler_tail`). Both agents refuse parameters that would let one reward move
a sample by more than one standard deviation (``s <= 1``, a tail below ``1.9e-14`` per sample),
and :attr:`~_GaussianAgent.privacy_spent` adds the tail of every sample the reward can enter to
the stated δ.

Private state: the exact sums and the streams are the curator's; publish the actions only.

The compiled steps are in :mod:`agents.central_dp.gaussian_kernels`; the ``Reference*`` classes below
are plain-Python versions that choose the same arms for the same seed
(``tests/test_dp_gaussian_ts.py``).

Status tags: [V-paper] checked in the paper's text; [R] reconstructed from our recollection of
the paper (its text could not be consulted when this was written), not checked; [P] our choice.
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np
from numba import types

from agents.base import (
    FLOATS_1D,
    FLOATS_2D,
    INT64_MAX,
    INTS_1D,
    INTS_2D,
    WORDS_2D,
    SingleEnvKernel,
    check_float,
    check_int,
    check_int_range,
)
from agents.central_dp import gaussian_kernels as kernels
from agents.central_dp.base import CopiedState, StreamPrivateAgent
from agents.central_dp.reference import first_argmax
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.privacy.accounting import gdp_epsilon, gdp_mu
from bandit_envs.privacy.streams import philox_noise_generator

__all__ = [
    "DPTSUCB",
    "PrePullGaussianTS",
    "ReferenceDPTSUCB",
    "ReferenceGaussians",
    "ReferencePrePullGaussianTS",
]

_I64, _F64 = types.int64, types.float64
#: The Gaussian agents' choices and updates, through their compiled entry points (no argument typing a call).
_PREPULL_CHOOSE = SingleEnvKernel(
    kernels.prepull_ts_choose, (INTS_2D, FLOATS_2D, _I64, _F64, WORDS_2D, INTS_1D, INTS_1D)
)
_SUMS_UPDATE = SingleEnvKernel(kernels.sums_update, (INTS_2D, FLOATS_2D, INTS_1D, FLOATS_1D))
_TS_UCB_CHOOSE = SingleEnvKernel(
    kernels.ts_ucb_choose, (INTS_2D, FLOATS_2D, INTS_2D, FLOATS_2D, _I64, _F64, WORDS_2D, INTS_1D, INTS_1D)
)
_TS_UCB_UPDATE = SingleEnvKernel(kernels.ts_ucb_update, (INTS_2D, FLOATS_2D, INTS_2D, FLOATS_2D, INTS_1D, FLOATS_1D))

#: δ at which :attr:`privacy_spent` states ε unless the agent is given another.
DEFAULT_DELTA = 1e-5

#: Rounds below which DP-TS-UCB's μ uses the exact harmonic number H_t (:func:`harmonic_number`);
#: from there on ln t + 0.5773.
EXACT_HARMONIC_ROUNDS = 10**6

#: H_1, H_2, ... (H_n at index n − 1) as far as :func:`harmonic_number` has been asked, one table per process.
_harmonic_table: list[FloatArray] = [np.zeros(0)]


def harmonic_number(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n added in this order (0.0 for n <= 0).

    Read from a table of the running sums (``np.cumsum`` of the terms: each entry is the one before
    plus 1/k, so H_n has the bits of the left-to-right sum of its n terms), computed once per
    process and grown to at least twice its size when a larger n is asked (8 MB for the n below
    :data:`EXACT_HARMONIC_ROUNDS`, the ones DP-TS-UCB asks for): a lookup, where summing the terms
    would cost n additions at every call of ``gdp_mu`` and ``privacy_spent``.
    """
    if n <= 0:
        return 0.0
    table = _harmonic_table[0]
    if n > table.size:
        size = max(n, min(2 * table.size, EXACT_HARMONIC_ROUNDS - 1))
        table = np.cumsum(1.0 / np.arange(1, size + 1, dtype=np.float64))
        _harmonic_table[0] = table
    return float(table[n - 1])


#: The largest GDP μ whose ε :func:`~bandit_envs.privacy.accounting.gdp_epsilon` computes.
MAX_MU = 1e6

#: The largest |Z| of the Box–Muller draws (:class:`ReferenceGaussians`): ``1 - U1 >= 2**-53``, so
#: ``|Z| <= sqrt(-2 ln 2**-53) = sqrt(106 ln 2)``, about 8.57.
BOX_MULLER_BOUND = math.sqrt(106.0 * math.log(2.0))


def sampler_tail(samples: float, shift: float) -> float:
    """The additive δ of ``samples`` bounded Gaussian samples, each moved by at most ``shift`` standard deviations.

    A sample of mean m lies in ``m ± BOX_MULLER_BOUND`` standard deviations; moved by ``shift``,
    it lands where the neighbour's sample cannot with probability at most
    ``Φ(shift − BOX_MULLER_BOUND)`` (0 under the neighbour), and the events of several samples
    add up: ``min(1, samples · Φ(shift − BOX_MULLER_BOUND))``. About ``1.9e-14`` per sample at
    ``shift = 1``.
    """
    if samples <= 0.0:
        return 0.0
    per_sample = 0.5 * math.erfc((BOX_MULLER_BOUND - shift) / math.sqrt(2.0))
    return min(1.0, samples * per_sample)


def _check_delta(value: object) -> float:
    return check_float("delta", value, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_pre_pulls(value: object) -> int:
    return check_int_range("pre_pulls", value, 0, INT64_MAX, "the compiled kernels count pulls in int64")


class _GaussianAgent(StreamPrivateAgent):
    """Shared state (pulls and exact reward sums per arm) and the GDP-to-(ε, δ) statement."""

    delta: float
    _counts: IntArray
    _sums: FloatArray

    def _reset_learning(self) -> None:
        self._counts = np.zeros((self.batch, self.n_arms), dtype=np.int64)
        self._sums = np.zeros((self.batch, self.n_arms))

    counts: CopiedState[IntArray] = CopiedState("_counts", "(B, K) pulls per arm.")

    @property
    @abstractmethod
    def gdp_mu(self) -> float:
        """μ of the μ-GDP guarantee of the arms played so far (the worst copy)."""

    @abstractmethod
    def _samples_per_reward(self) -> tuple[float, float]:
        """(n, s): at most n samples so far that one reward entered, each moved by at most s standard deviations."""

    def _spent(self, k: int) -> tuple[float, float]:
        """(ε, δ) for k rewards: k·μ-GDP at ``delta``, plus the samplers' tail for the samples they moved."""
        mu = k * self.gdp_mu
        if not mu > 0.0:
            return 0.0, 0.0
        samples, shift = self._samples_per_reward()
        return gdp_epsilon(mu, self.delta), min(1.0, self.delta + sampler_tail(k * samples, k * shift))

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ): :attr:`gdp_mu` at the agent's ``delta`` (:func:`bandit_envs.privacy.accounting.gdp_epsilon`).

        The stated δ is ``delta`` plus the tail of the bounded draws (:func:`sampler_tail`) of
        every sample one reward entered so far: about ``1.9e-14`` per sample at most.
        """
        return self._spent(1)

    def user_privacy_spent(self, rounds: int) -> tuple[float, float]:
        """(ε, δ) so far for a user whose data is ``rounds`` rounds' rewards: k·μ-GDP (group privacy), at ``delta``.

        k changed rewards move any empirical mean by at most k/n_i, so every sample's GDP
        parameter, and hence the composed μ, grows by the factor k; δ adds the draws' tail for
        k times the samples, each moved by k times as much (:func:`sampler_tail`), which reaches 1
        once k moves a sample by more than the draws' bound.
        """
        return self._spent(check_int("rounds", rounds, minimum=0))

    @property
    def n_draws(self) -> int | IntArray:
        """Gaussian draws so far (PrePullGaussianTS: sampling rounds, K draws each; DPTSUCB: draws)."""
        return int(self._draws[0]) if self.n_envs is None else self._draws.copy()


class PrePullGaussianTS(_GaussianAgent):
    r"""Gaussian-prior Thompson sampling, b pre-pulls, variance inflated by c (Ou, Avella Medina, Cummings 2024) [R].

    "Thompson Sampling Itself is Differentially Private" (arXiv:2407.14879): Gaussian-prior
    Thompson sampling in the form of Agrawal & Goyal (2013, their Algorithm 2): with k_i the
    pulls and S_i the reward sum of arm i, μ̂_i = S_i/(k_i + 1), each round draws

    .. math:: \theta_i \sim \mathcal N\!\left(\hat\mu_i,\ \frac{c}{k_i + 1}\right)

    and plays argmax_i θ_i. The paper's modification, as we recall it (its modified algorithm,
    §4): first pull every arm b times (here: the lowest arm with fewer than max(b, 1) pulls,
    so arm 0 b times, then arm 1, ...; with b = 0 every arm once, as Thompson sampling needs a
    first reward to be private about), and inflate the sampling variance by c ≥ 1. b = 0,
    c = 1 is the unmodified algorithm. Which exact per-round GDP constant the paper states, and
    whether it counts the pre-pulls in k_i, we could not check; the guarantee below is our own
    derivation for this implementation.

    Privacy (μ-GDP, event level; module docstring): during a sampling round every arm has
    k_i ≥ m = max(b, 1) pulls, and a changed reward of arm a moves only μ̂_a, by at most
    1/(k_a + 1), under noise of standard deviation sqrt(c/(k_a + 1)): the round's K samples are
    (1/sqrt(c(k_a + 1)))-GDP ≤ (1/sqrt(c(m + 1)))-GDP. Over R sampling rounds (adaptive
    composition) the arms are

    .. math:: \mu = \sqrt{R / (c(m + 1))}\text{-GDP},

    R ≤ T − K·m when the agent plays its own choices for T rounds (:meth:`gdp_mu_for_horizon`).
    ε at δ: :attr:`privacy_spent`. Pre-pull rounds draw nothing and depend on no reward.
    Example: T = 10⁴, K = 10, b = 100, c = 100 gives μ = sqrt(9000/10100) = 0.944, i.e. ε = 4.10
    at δ = 10⁻⁵.

    Noise: K Gaussian draws per sampling round (arms in order), from the copy's noise stream.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    pre_pulls
        b in [0, 2⁶³ − 1], pulls of every arm before sampling starts. Default 0.
    variance
        c > 0 (the paper: c ≥ 1), the variance inflation, with c·(max(b, 1) + 1) >= 1 (module
        docstring: the bounded draws). Default 1.
    delta
        δ in (0, 1) at which :attr:`privacy_spent` states ε. Default 1e-5.
    n_envs, seed
        Copies run in lock-step and copy 0's noise seed (copy i: seed + i), as for every
        :class:`~agents.central_dp.base.StreamPrivateAgent`.

    References
    ----------
    .. [1] T. Ou, M. Avella Medina, R. Cummings, "Thompson Sampling Itself is Differentially
       Private", arXiv:2407.14879, 2024.
    .. [2] S. Agrawal, N. Goyal, "Further optimal regret bounds for Thompson sampling",
       AISTATS 2013.
    """

    name = "PrePull-GTS"
    _state_bytes_per_arm = 16

    def __init__(
        self,
        n_arms: int,
        pre_pulls: int = 0,
        variance: float = 1.0,
        delta: float = DEFAULT_DELTA,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.pre_pulls = _check_pre_pulls(pre_pulls)
        self.variance = check_float("variance", variance, low=0.0, high=1e100, low_open=True)
        if self.variance * (max(self.pre_pulls, 1) + 1) < 1.0:
            raise ValueError(
                "variance and pre_pulls must give variance * (max(pre_pulls, 1) + 1) >= 1, so that one reward "
                "moves a sample by at most one standard deviation (the bounded draws' tail, module docstring), "
                f"got variance={self.variance:g}, pre_pulls={self.pre_pulls}."
            )
        self.delta = _check_delta(delta)
        #: No horizon, no total: inf until :meth:`for_budget` sets its budget's ε (privacy_spent is exact).
        self.epsilon = math.inf
        self._reset_state()
        _PREPULL_CHOOSE.load()
        _SUMS_UPDATE.load()

    @classmethod
    def for_budget(
        cls,
        n_arms: int,
        horizon: int,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        pre_pulls: int = 0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> PrePullGaussianTS:
        """The agent whose first ``horizon`` rounds of its own choices are (ε, δ + tail)-DP: c = max(1, R/(μ² (m + 1))).

        The tail is the bounded draws' (:func:`sampler_tail`, at most R times ``1.9e-14``).

        μ = :func:`~bandit_envs.privacy.accounting.gdp_mu` (ε, δ), m = max(b, 1), R = max(T − K m, 1).
        """
        k = check_int("n_arms", n_arms, minimum=2)
        t = check_int("horizon", horizon, minimum=1)
        m = max(_check_pre_pulls(pre_pulls), 1)
        mu = gdp_mu(epsilon, delta)
        variance = max(1.0, max(t - k * m, 1) / (mu * mu * (m + 1)))
        agent = cls(n_arms, pre_pulls, variance, delta, n_envs=n_envs, seed=seed)
        agent.epsilon = gdp_epsilon(agent.gdp_mu_for_horizon(t), agent.delta)
        return agent

    @property
    def per_round_mu(self) -> float:
        """1/sqrt(c (m + 1)), m = max(b, 1): the GDP parameter of one sampling round."""
        return 1.0 / math.sqrt(self.variance * (max(self.pre_pulls, 1) + 1))

    @property
    def gdp_mu(self) -> float:
        """sqrt(R) × :attr:`per_round_mu`, R the sampling rounds so far (the worst copy)."""
        return math.sqrt(float(self._draws.max())) * self.per_round_mu

    def _samples_per_reward(self) -> tuple[float, float]:
        """One sample per sampling round (the reward's arm's), each moved by at most :attr:`per_round_mu`."""
        return float(self._draws.max()), self.per_round_mu

    def gdp_mu_for_horizon(self, horizon: int) -> float:
        """μ after ``horizon`` rounds of the agent's own choices: sqrt(max(T − K m, 0)) × :attr:`per_round_mu`."""
        t = check_int("horizon", horizon, minimum=0)
        return math.sqrt(max(t - self.n_arms * max(self.pre_pulls, 1), 0)) * self.per_round_mu

    def _choose(self, out: IntArray) -> None:
        _PREPULL_CHOOSE.call(self._counts, self._sums, self.pre_pulls, self.variance, self._streams, self._draws, out)

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        bad: int = _SUMS_UPDATE.call(self._counts, self._sums, actions, rewards)
        return bad

    def __repr__(self) -> str:
        return (
            f"PrePullGaussianTS(n_arms={self.n_arms}, pre_pulls={self.pre_pulls}, variance={self.variance}, "
            f"delta={self.delta}, n_envs={self.n_envs})"
        )


class DPTSUCB(_GaussianAgent):
    r"""DP-TS-UCB: Gaussian TS with at most φ fresh samples per posterior, then their maximum (Hu et al. 2025) [R/P].

    "Connecting Thompson Sampling and UCB: Towards More Efficient Trade-offs Between Privacy and
    Regret" (Hu, Huang, Zhang, Lécuyer, Hegde, ICML 2025, arXiv:2505.02383). What we implement,
    reconstructed from the paper's stated results (Õ(T^{0.25(1−α)})-GDP, regret
    O(K ln^{α+1}(T)/Δ), α ∈ [0, 1]) and our recollection of its algorithm, not from its text:

    * arm i's posterior after n_i pulls with reward sum S_i is N(S_i/n_i, σ²/n_i) (σ² =
      ``variance``, default 1) [R];
    * a posterior gives at most φ fresh samples, φ = ⌈T^{(1−α)/2}⌉ [R: the budget that makes
      the GDP rate T^{0.25(1−α)}]. While it has budget left, the arm's value in a round is a
      fresh sample (Thompson sampling); once it is spent, the arm's value is the largest of its
      φ samples, reused without drawing (a UCB: by anti-concentration the maximum of φ
      Gaussian samples sits about σ sqrt(2 ln φ / n_i) above the mean) [R];
    * a pull of arm i gives it a new posterior (sample budget and maximum reset); unpulled
      arms are played first (lowest index). The arm played is the argmax of the values.

    Which epoch structure, variance scaling in α and constants the paper's Algorithm 1 uses,
    we could not check; treat α here as the knob of the sample budget only. With φ small
    (α near 1), a maximum that came out low for the best arm stays until that arm is pulled
    again, which may not happen: regret can then grow linearly in a fraction of runs (K = 5,
    means 0.9 … 0.5, T = 10⁴, σ² = 1, 30 runs: α = 0.5 gives 54 ± 3, α = 1 gives 1367 ± 246 with
    runs near 4000; ``budget=14`` gives 65 ± 3). Linear regret at α = 1 contradicts the paper's
    stated O(K ln^{α+1}(T)/Δ) for every α ∈ [0, 1], so this reconstruction departs from the
    paper's algorithm there. ``dp-mab/epsilon`` shows the default α = 0.5.

    Privacy (μ-GDP, event level; module docstring; our derivation for this implementation): a
    reward of arm a that arrives at its s-th pull enters the posteriors of counts n = s, s + 1,
    …; each gives at most φ samples, each (1/(σ sqrt n))-GDP for that reward; reused maxima
    are post-processing. So

    .. math:: \mu^2 \le \frac{1}{\sigma^2}\min\Big(\varphi H_t,\ D\Big),\qquad H_t = \sum_{n=1}^{t} \frac1n,

    D the Gaussian draws so far; after T rounds μ ≤ sqrt(φ H_T)/σ = Õ(T^{0.25(1−α)})
    (:meth:`gdp_mu_for_horizon`). Example: T = 10⁴, α = 0.5 (φ = 10), σ = 1: μ = 9.89, ε = 90.3 at
    δ = 10⁻⁵; α = 1 (φ = 1): μ = 3.13, ε = 17.6.

    Noise: one Gaussian draw per arm with budget left per round (arms in order), from the copy's
    noise stream.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    horizon
        T (>= 1), which sets φ.
    alpha
        α in [0, 1]. Default 0.5.
    variance
        σ² >= 1 of the posteriors (module docstring: the bounded draws). Default 1.
    delta
        δ in (0, 1) at which :attr:`privacy_spent` states ε. Default 1e-5.
    budget
        φ in [1, 2⁶³ − 1] instead of ⌈T^{(1−α)/2}⌉ (then α is not used) [P]: e.g. φ ≥ log₂ T makes
        the maximum of a posterior's samples fall below its mean with probability at most
        2^{−φ} ≤ 1/T, which avoids the failure above at a GDP cost of sqrt(φ). φ, T and σ² must
        keep μ = sqrt(φ H_T)/σ at most 1e6 (no ε is computed beyond), else they are refused.
    n_envs, seed
        Copies run in lock-step and copy 0's noise seed (copy i: seed + i), as for every
        :class:`~agents.central_dp.base.StreamPrivateAgent`.

    Attributes
    ----------
    budget
        φ, the samples per posterior.

    References
    ----------
    .. [1] B. Hu, Z. Huang, T. H. Zhang, M. Lécuyer, N. Hegde, "Connecting Thompson Sampling and
       UCB: Towards More Efficient Trade-offs Between Privacy and Regret", ICML 2025
       (arXiv:2505.02383).
    """

    name = "DP-TS-UCB"
    _state_bytes_per_arm = 32

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        alpha: float = 0.5,
        variance: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: int | None = None,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.alpha = check_float("alpha", alpha, low=0.0, high=1.0)
        # σ² >= 1: one reward moves a sample (n >= 1 pulls) by at most one standard deviation (module docstring)
        self.variance = check_float("variance", variance, low=1.0, high=1e100)
        self.delta = _check_delta(delta)
        self.budget = self._phi(self.horizon, self.alpha, budget)
        mu = self.gdp_mu_for_horizon(self.horizon)
        if not mu <= MAX_MU:
            raise ValueError(
                f"horizon, budget and variance must give a GDP mu = sqrt(budget·H_T/variance) of at most "
                f"{MAX_MU:g} over the horizon (the largest that epsilon is computed for), got mu={mu:g} with "
                f"horizon={self.horizon}, budget={self.budget}, variance={self.variance:g}."
            )
        self._reset_state()
        _TS_UCB_CHOOSE.load()
        _TS_UCB_UPDATE.load()
        #: ε at ``delta`` of the whole horizon (:meth:`gdp_mu_for_horizon`).
        self.epsilon = gdp_epsilon(mu, self.delta)

    def _reset_learning(self) -> None:
        super()._reset_learning()
        self._used = np.zeros((self.batch, self.n_arms), dtype=np.int64)
        self._top = np.full((self.batch, self.n_arms), -np.inf)

    @classmethod
    def for_budget(
        cls,
        n_arms: int,
        horizon: int,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        alpha: float = 0.5,
        budget: int | None = None,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> DPTSUCB:
        """The agent whose first ``horizon`` rounds are (ε, δ + tail)-DP: σ² = max(1, φ H_T / μ²), μ = gdp_mu(ε, δ).

        The tail is the bounded draws' (:func:`sampler_tail`, at most φ T times ``1.9e-14``).
        """
        t = check_int("horizon", horizon, minimum=1)
        phi = cls._phi(t, check_float("alpha", alpha, low=0.0, high=1.0), budget)
        mu = gdp_mu(epsilon, delta)
        variance = max(1.0, cls._gdp_mu(phi, 1.0, t, math.inf) ** 2 / (mu * mu))
        return cls(n_arms, horizon, alpha, variance, delta, budget, n_envs=n_envs, seed=seed)

    @staticmethod
    def _phi(horizon: int, alpha: float, budget: object) -> int:
        """φ: ``budget`` checked, or ⌈T^{(1−α)/2}⌉ when it is None."""
        if budget is None:
            return max(1, math.ceil(horizon ** ((1.0 - alpha) / 2.0)))
        return check_int_range("budget", budget, 1, INT64_MAX, "the compiled kernels count samples in int64")

    @staticmethod
    def _gdp_mu(budget: int, variance: float, rounds: int, draws: float) -> float:
        """sqrt(min(φ H_t, D)/σ²) for φ = ``budget``, σ² = ``variance``, t = ``rounds``, D = ``draws``."""
        harmonic = harmonic_number(rounds) if rounds < EXACT_HARMONIC_ROUNDS else math.log(rounds) + 0.5773
        return math.sqrt(min(budget * harmonic, draws) / variance)

    def _mu(self, rounds: int, draws: float) -> float:
        return self._gdp_mu(self.budget, self.variance, rounds, draws)

    @property
    def gdp_mu(self) -> float:
        """sqrt(min(φ H_t, D)/σ²) after t rounds with D Gaussian draws (the worst copy)."""
        return self._mu(self._t, float(self._draws.max()))

    def _samples_per_reward(self) -> tuple[float, float]:
        """At most φ samples per posterior after the reward, min(φ t, D), each moved by at most 1/σ."""
        return float(min(self.budget * self._t, int(self._draws.max()))), 1.0 / math.sqrt(self.variance)

    def gdp_mu_for_horizon(self, horizon: int) -> float:
        """sqrt(φ H_T)/σ, the bound after T rounds."""
        t = check_int("horizon", horizon, minimum=0)
        return self._mu(t, math.inf)

    def _choose(self, out: IntArray) -> None:
        _TS_UCB_CHOOSE.call(
            self._counts, self._sums, self._used, self._top, self.budget, self.variance, self._streams, self._draws, out
        )

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        bad: int = _TS_UCB_UPDATE.call(self._counts, self._sums, self._used, self._top, actions, rewards)
        return bad

    def __repr__(self) -> str:
        return (
            f"DPTSUCB(n_arms={self.n_arms}, horizon={self.horizon}, alpha={self.alpha}, variance={self.variance}, "
            f"delta={self.delta}, budget={self.budget}, n_envs={self.n_envs})"
        )


# ------------------------------------------------------------------- plain-Python references


class ReferenceGaussians:
    """A round's N(0, 1) draws as the kernels make them: Box–Muller pairs, the unused half dropped at :meth:`new_round`.

    A pair is ``r cos(2π U2)``, ``r sin(2π U2)`` with ``r = sqrt(-2 ln(1 - U1))`` and U1, U2
    two ``rng.random()`` values (U1 first).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.spare: float | None = None

    def new_round(self) -> None:
        """Drop the unused half of the last pair."""
        self.spare = None

    def draw(self) -> float:
        """The next N(0, 1) value of this round."""
        if self.spare is not None:
            value, self.spare = self.spare, None
            return value
        u1 = self.rng.random()
        u2 = self.rng.random()
        r = math.sqrt(-2.0 * math.log(1.0 - u1))
        angle = 2.0 * math.pi * u2
        self.spare = r * math.sin(angle)
        return r * math.cos(angle)


class ReferencePrePullGaussianTS:
    """:class:`PrePullGaussianTS` for one copy, in plain Python (``act() -> int``, ``update(arm, reward)``)."""

    def __init__(self, n_arms: int, pre_pulls: int = 0, variance: float = 1.0, *, seed: int) -> None:
        self.normals = ReferenceGaussians(philox_noise_generator(seed))
        self.counts, self.sums = [0] * n_arms, [0.0] * n_arms
        self.first, self.variance = max(pre_pulls, 1), variance

    def act(self) -> int:
        """The arm of the next round."""
        for k, n in enumerate(self.counts):
            if n < self.first:
                return k
        self.normals.new_round()
        theta = []
        for n, s in zip(self.counts, self.sums, strict=True):
            theta.append(s / (n + 1.0) + math.sqrt(self.variance / (n + 1.0)) * self.normals.draw())
        return first_argmax(theta)

    def update(self, arm: int, reward: float) -> None:
        """Add the reward to the arm's sum."""
        self.counts[arm] += 1
        self.sums[arm] += reward


class ReferenceDPTSUCB:
    """:class:`DPTSUCB` for one copy, in plain Python (``act() -> int``, ``update(arm, reward)``)."""

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        alpha: float = 0.5,
        variance: float = 1.0,
        budget: int | None = None,
        *,
        seed: int,
    ) -> None:
        self.normals = ReferenceGaussians(philox_noise_generator(seed))
        self.budget = max(1, math.ceil(horizon ** ((1.0 - alpha) / 2.0))) if budget is None else budget
        self.variance = variance
        self.counts, self.sums = [0] * n_arms, [0.0] * n_arms
        self.samples: list[list[float]] = [[] for _ in range(n_arms)]  # this posterior's samples

    def act(self) -> int:
        """The arm of the next round."""
        for k, n in enumerate(self.counts):
            if n == 0:
                return k
        self.normals.new_round()
        values = []
        for k, (n, s) in enumerate(zip(self.counts, self.sums, strict=True)):
            if len(self.samples[k]) < self.budget:
                x = s / n + math.sqrt(self.variance / n) * self.normals.draw()
                self.samples[k].append(x)
                values.append(x)
            else:
                values.append(max(self.samples[k]))
        return first_argmax(values)

    def update(self, arm: int, reward: float) -> None:
        """Add the reward; the arm's posterior is new (no samples yet)."""
        self.counts[arm] += 1
        self.sums[arm] += reward
        self.samples[arm] = []
