r"""Local-DP Thompson sampling: Beta-Bernoulli TS on randomized-response reports.

Its report noise comes from per-copy Philox streams (:mod:`agents.central_dp.base`) and its
posterior samples from per-copy sampling streams (:mod:`agents.common.sampling`): copy i of a
batch seeded with s makes exactly the draws of a single agent seeded with s + i. Rewards must lie
in [0, 1]. Its plain-Python twin is :class:`agents.local_dp.reference.ReferenceLDPThompsonSampling`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import types
from scipy.special import expit

from agents.base import FLOATS_1D, FLOATS_2D, FLOATS_3D, INTS_1D, WORDS_2D, SingleEnvKernel
from agents.central_dp import kernels
from agents.central_dp.base import StreamPrivateAgent, check_epsilon
from agents.common import sampling
from agents.local_dp.accounting import PerUserReports
from agents.stochastic import thompson_kernels as ts_kernels
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.privacy.accounting import ReportLedger, ReportMechanism, user_ids

__all__ = ["LDPThompsonSampling"]

#: The choice and the update, through their compiled entry points (loaded by the constructor).
_BETA_CHOOSE = SingleEnvKernel(ts_kernels.beta_choose, (FLOATS_3D, WORDS_2D, INTS_1D))
_RR_UPDATE = SingleEnvKernel(
    kernels.rr_update, (FLOATS_2D, FLOATS_2D, FLOATS_3D, INTS_1D, FLOATS_1D, types.float64, types.float64, WORDS_2D)
)


class LDPThompsonSampling(PerUserReports, StreamPrivateAgent):
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
    [q, p] for every r, a ratio of at most e^ε (:attr:`privacy_per_report`); so one round's
    reward is also ε-DP centrally (the rest is post-processing). Unit: one user, i.e. every
    report that carries its id (``info["user_id"]``; an env without ids is one user, the whole
    stream), as for :class:`agents.LDPWrapper`: a user with k reports loses what k reports
    compose to, and :attr:`privacy_spent` is the tight bound for the user with the most reports
    since the last reset (:meth:`privacy_per_user`, :attr:`max_user_reports`; kε for pure
    ε-reports). :attr:`stream_privacy_spent` is (t·ε, 0), a user behind all t reports. A user
    who reports in several episodes composes them.

    Noise: per round, one uniform for the report (the mechanism's draw) from the copy's noise
    stream (:mod:`agents.common.philox`; in a deployment it is drawn on the user's side); the two gamma
    draws per arm of the Beta samples (Marsaglia & Tsang) come from the copy's sampling stream,
    with the kernels of :class:`agents.ThompsonSampling` (:mod:`agents.stochastic.thompson_kernels`).
    Sampler: the reports are bits, so their output set {0, 1} never depends on the reward; no
    float noise is released and there is no ``sampler`` argument.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        ε of each report.
    n_envs, seed
        Copies run in lock-step and copy 0's noise seed (copy i: seed + i), as for every
        :class:`~agents.central_dp.base.StreamPrivateAgent`.

    Attributes
    ----------
    successes, failures
        (B, K) reported ones and zeros per arm.
    """

    name = "LDP-TS"
    copy_axis_last = ("_sampling", "_shapes")  # the (4, B) sampling-stream states, the (4, K, B) gamma constants
    privacy_unit = (
        "one user: all randomized-response reports carrying its info['user_id'] (without ids, the whole stream), "
        "any rewards in [0, 1]"
    )
    _state_bytes_per_arm = 8 * (2 + ts_kernels.SHAPE_WORDS)

    def __init__(self, n_arms: int, epsilon: float, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        # The Bernoulli mechanism's P(report 1 | r) = expit(-eps) + tanh(eps / 2) * r, as it computes it.
        self._p_zero = float(expit(-self.epsilon))
        self._slope = math.tanh(self.epsilon / 2.0)
        self.report_mechanism = ReportMechanism.randomized_response(self.epsilon)
        self._ledger = ReportLedger(self.batch)
        self._sent = np.ones(self.batch, dtype=np.bool_)
        self._reset_state()
        _BETA_CHOOSE.load()
        _RR_UPDATE.load()

    def _reset_learning(self) -> None:
        self._ledger.reset()
        self._successes, self._failures, self._shapes = ts_kernels.new_posteriors(self.batch, self.n_arms)

    def _seed_streams(self) -> None:
        super()._seed_streams()
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
    def privacy_per_report(self) -> tuple[float, float]:
        """(ε, 0): one report's guarantee."""
        return self.epsilon, 0.0

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the round's report; it is charged to ``info["user_id"]`` (none: every user)."""
        # The user ids are read first (a bad one is refused before any state changes), from any
        # mapping the update's own checks take; anything else is refused by them, with their sentence.
        users = user_ids(info, self.batch) if info is None or isinstance(info, Mapping) else None
        super().update(action, reward, info)
        if users is None:  # every copy's report, no user named: the ledger's one addition
            self._ledger.record_anonymous()
        else:
            self._ledger.record(users, self._sent)

    @property
    def stream_privacy_spent(self) -> tuple[float, float]:
        """(t·ε, 0): what a user behind all t reports so far loses (sequential composition)."""
        return (self._t * self.epsilon, 0.0)

    def _choose(self, out: IntArray) -> None:
        _BETA_CHOOSE.call(self._shapes, self._sampling, out)

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        bad: int = _RR_UPDATE.call(
            self._successes, self._failures, self._shapes, actions, rewards, self._p_zero, self._slope, self._streams
        )
        if bad < 0:  # one report per copy (one env: an item's addition, not a ufunc call on the array)
            if self.n_envs is None:
                self._draws[0] += 1
            else:
                self._draws += 1
        return bad
