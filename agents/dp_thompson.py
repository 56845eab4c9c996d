r"""Private Thompson sampling: DPThompsonSampling (central DP, per-epoch releases) and LDPThompsonSampling (local DP).

Both use per-copy noise streams (:mod:`agents._dp_base`) for their privacy noise and per-copy
sampling streams (:mod:`agents._sampling`) for their posterior samples: copy i of a batch seeded
with s makes exactly the draws of a single agent seeded with s + i. Rewards must lie in [0, 1].

Hu & Hegde's DP-TS and Lazy-DP-TS ("Near-optimal Thompson sampling-based algorithms for
differentially private stochastic bandits", UAI 2022) are not implemented: only their abstract
and a third-party summary could be read, not the algorithm itself.
"""

from __future__ import annotations

import math

from scipy.special import expit

from agents import _dp_kernels as kernels
from agents import _sampling as sampling
from agents import _thompson_kernels as ts_kernels
from agents._dp_base import FloatArray, IntArray, StreamPrivateAgent, check_epsilon
from agents.dp_ucb import EpochAgent

__all__ = ["DPThompsonSampling", "LDPThompsonSampling"]


class DPThompsonSampling(EpochAgent):
    r"""Thompson sampling on per-epoch Laplace releases (central ε-DP) [P].

    Each arm's rewards fill epochs of 1, 1, 2, 4, ... rewards (the epochs of
    :class:`agents.AdaPUCB`); at the end of an epoch of L rewards the arm's mean is released as
    μ̃_a = (epoch mean) + Laplace(1/(εL)) and n_a = L. Every round, arms without a release are
    played first (lowest index); then, per arm, θ_a ~ N(μ̃_a, 1/(4n_a) + 2/(εn_a)²) (the
    variance bound 1/4 of a [0, 1] reward plus the Laplace noise's variance 2/(εn_a)²), and the
    argmax is played. This is the library's own form, without a claimed regret bound; Hu &
    Hegde's DP-TS / Lazy-DP-TS (UAI 2022) were not implemented (their algorithm could not be
    checked).

    Privacy: ε-DP at the event level (neighbouring reward sequences differ in one round's
    reward): each reward enters one release (sensitivity 1/L, Laplace(1/(εL)) noise), releases
    of one arm use disjoint epochs and arms disjoint rewards (parallel composition), epoch
    boundaries depend only on pull counts, and the Gaussian samples are post-processing of the
    releases.

    Noise: one Laplace draw per closed epoch from the copy's noise stream; the K normal draws
    per round (once every arm has a release) come from the copy's sampling stream
    (:func:`agents._sampling.normal`, a ziggurat). Sampler: the released means use the lattice
    sampler by default (the epoch's sum released as ``snap(sum) + snap(Laplace((1 + grid)/ε))``
    on the grid ``sum_grid(1/ε, 1)``, divided by L; exactly ε-DP), or raw float noise with
    ``sampler="float"`` (not safe against floating-point attacks).

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        Privacy budget ε.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of copy 0's noise stream (copy i: seed + i).
    sampler
        ``"lattice"`` (default) or ``"float"`` (raw noise, not safe against floating-point
        attacks), see :mod:`bandit_envs.privacy.lattice`.
    """

    name = "DP-TS"

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        self._set_sampler(sampler, self.epsilon)
        self._reset_state()

    def _reset_learning(self) -> None:
        super()._reset_learning()
        self._sampling = sampling.new_streams(self._copy_seeds)

    def _choose(self, out: IntArray) -> None:
        kernels.gaussian_ts_choose(self._counts, self._n_mean, self._mean, self.epsilon, self._sampling, out)


class LDPThompsonSampling(StreamPrivateAgent):
    r"""Beta-Bernoulli Thompson sampling on randomized-response bits (ε-LDP per report) [R/P].

    The user of round t privatizes its reward r_t ∈ [0, 1] with the Bernoulli mechanism
    (:func:`bandit_envs.privacy.randomized_response.bernoulli_mechanism`): the r-coin
    b ~ Bernoulli(r_t) of Agrawal & Goyal (COLT 2012), then randomized response on b, i.e. the
    report is 1 with probability q + (p − q) r_t, p = e^ε/(1 + e^ε), q = 1 − p. The agent sees
    only the report and counts it as a success (S_a += 1) or failure (F_a += 1) of the pulled
    arm; each round it draws θ_a ~ Beta(S_a + 1, F_a + 1) per arm and plays the argmax (ties to
    the lowest arm). The reports' means q + (p − q) μ_a keep the arms' order, with gaps shrunk
    by p − q = tanh(ε/2).

    Privacy: every report is ε-LDP (δ = 0) for its round's reward: P(report | r) lies in
    [q, p] for every r, a ratio of at most e^ε. So the agent is also ε-DP centrally at the event
    level (one round's reward changes one report; the rest is post-processing),
    :attr:`privacy_spent`. A user who sends k reports (e.g. one user behind all rounds of a
    stream) loses kε by sequential composition: :attr:`stream_privacy_spent` is that bound for a
    user behind every report so far, (t·ε, 0) after t rounds.

    Noise: per round, one uniform for the report (the mechanism's draw) from the copy's noise
    stream (:mod:`agents._philox`; in a deployment it is drawn on the user's side); the two gamma
    draws per arm of the Beta samples (Marsaglia & Tsang) come from the copy's sampling stream,
    with the kernels of :class:`agents.ThompsonSampling` (:mod:`agents._thompson_kernels`).
    Sampler: the reports are bits, so their output set {0, 1} never depends on the reward; no
    float noise is released and there is no ``sampler`` argument.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        ε of each report.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of copy 0's stream (copy i: seed + i).

    Attributes
    ----------
    successes, failures
        (B, K) reported ones and zeros per arm.
    """

    name = "LDP-TS"
    privacy_unit = "one round's reward r_t, sent as one randomized-response report (each report ε-LDP)"
    _state_bytes_per_arm = 8 * (2 + ts_kernels.SHAPE_WORDS)

    def __init__(self, n_arms: int, epsilon: float, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        # The Bernoulli mechanism's P(report 1 | r) = expit(-eps) + tanh(eps / 2) * r, as it computes it.
        self._p_zero = float(expit(-self.epsilon))
        self._slope = math.tanh(self.epsilon / 2.0)
        self._reset_state()

    def _reset_learning(self) -> None:
        self._successes, self._failures, self._shapes = ts_kernels.new_posteriors(self.batch, self.n_arms)
        self._sampling = sampling.new_streams(self._copy_seeds)

    @property
    def successes(self) -> FloatArray:
        """(B, K) reports equal to 1 per arm."""
        return self._successes.copy()

    @property
    def failures(self) -> FloatArray:
        """(B, K) reports equal to 0 per arm."""
        return self._failures.copy()

    @property
    def stream_privacy_spent(self) -> tuple[float, float]:
        """(t·ε, 0): what a user behind all t reports so far loses (sequential composition)."""
        return (self._t * self.epsilon, 0.0)

    def _choose(self, out: IntArray) -> None:
        ts_kernels.beta_choose(self._shapes, self._sampling, out)

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        bad: int = kernels.rr_update(
            self._successes, self._failures, self._shapes, actions, rewards, self._p_zero, self._slope, self._streams
        )
        if bad < 0:
            self._draws += 1
        return bad
