"""Per-user accounting shared by the local-DP linear agents (LDP-LinUCB, LDP-OLS, Shuffle-LinUCB).

Each of these agents sends one privatized report per round, so a user's loss is the composition
of its reports (the papers state the guarantee per report: Zheng et al., NeurIPS 2020, §4; Han
et al., NeurIPS 2021, §4; Chowdhury & Zhou, ICML 2022, §3). :class:`LocalDPLinearAgent` keeps the
ledger of reports per user (:class:`~bandit_envs.privacy.accounting.ReportLedger`), counts the
step API's reports in bulk until the ledger is next read, composes the busiest user's reports
(:meth:`LocalDPLinearAgent.privacy_per_user`) and exposes the clip counters. The noise of every
agent of the family comes from :func:`~bandit_envs.privacy.streams.noise_generator` of ``seed``,
built here at construction and by ``reset(seed=s)``; ``reset()`` continues it (fresh noise).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import typed

from agents.base import PrivateAgent, check_float
from agents.linear.base import LinearAgent, LinearRunResult
from bandit_envs._types import IntArray
from bandit_envs.privacy._checks import check_epsilon
from bandit_envs.privacy.accounting import ReportLedger, ReportMechanism, UserPrivacy, user_privacy
from bandit_envs.privacy.streams import noise_generator

__all__ = ["LocalDPLinearAgent"]


class LocalDPLinearAgent(LinearAgent, PrivateAgent):
    """A linear agent whose users send one locally private report per round, accounted per user.

    Subclasses set ``report_mechanism`` (the guarantee of one report) and ``_reports`` (the
    ledger) and call :meth:`_reset_reports` from their ``_reset_state``.
    """

    #: One user's reports are the unit; a subclass whose reports reach the server another way (shuffled)
    #: states its own.
    privacy_unit = (
        "one user: all the (x_t, y_t) reports carrying its info['user_id'] (without ids, the whole stream), "
        "features of the arm it plays and its reward (local DP)"
    )
    report_mechanism: ReportMechanism
    #: δ of the per-user tight bound (and of the mechanism, where it has one).
    delta: float
    _reports: ReportLedger

    def _check_epsilon_delta(self, epsilon: float, delta: float, capped: bool = True) -> None:
        """Check and keep ε in (0, ``MAX_EPSILON``] (any ε > 0 if not ``capped``) and δ in (0, 1) of one report."""
        if capped:
            self.epsilon = check_epsilon("epsilon", epsilon)
        else:
            self.epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
        self.delta = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)

    def _reset_reports(self) -> None:
        """Forget the reports counted since the ledger was last read; build the noise generators when due.

        They are built from ``seed`` at construction and by ``reset(seed=s)``; ``reset()`` continues
        them (:meth:`agents.base.PrivateAgent.reset`).
        """
        # Reports every user may send are counted here and added to the ledger before anything
        # reads it (one ledger call per look instead of one per round).
        self._pending_anonymous = 0
        self._pending_named: list[dict[Hashable, int]] = [{} for _ in range(self.batch)]
        self._pending_users = False
        if self._noise_due():  # construction or reset(seed=s); reset() continues the noise
            self.rng = noise_generator(self.seed)
            # Copy i of a batch seeded s: the noise generator of a single agent seeded s + i
            # (docs/design.md, "Agents", Seeds); one env: rng itself.
            if self.n_envs is None:
                self._copy_rngs: tuple[np.random.Generator, ...] = (self.rng,)
            else:
                seeds = [None if self.seed is None else self.seed + i for i in range(self.n_envs)]
                self._copy_rngs = tuple(noise_generator(s) for s in seeds)
            self._held_rng: tuple[Any, Any] | None = None

    def _rng_held(self) -> Any:
        """A numba typed list of each copy's noise generator (``[rng]`` for one env), for the compiled kernels.

        The list holds the generators themselves (draws through it are theirs). Built again when
        ``rng`` (one env) or the copies' generators are other objects (a reset, a copy of the
        agent): a copy's list would hold copies of the generators, so it is never pickled.
        """
        key: Any = self.rng if self.n_envs is None else self._copy_rngs
        held = self._held_rng
        if held is None or held[0] is not key:
            held = self._held_rng = (key, typed.List([self.rng] if self.n_envs is None else list(self._copy_rngs)))
        return held[1]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_held_rng"] = None
        return state

    @property
    def _ledger(self) -> ReportLedger:
        """The ledger of reports per user, with the reports counted since the last look added."""
        ledger = self._reports
        if self._pending_anonymous:
            ledger.record_block(None, self._pending_anonymous)
            self._pending_anonymous = 0
        if self._pending_users:
            ledger.record_block(self._pending_named, 0)
            self._pending_named = [{} for _ in range(self.batch)]
            self._pending_users = False
        return ledger

    def _count_round(self, users: list[Hashable] | None) -> None:
        """Count one report per copy for the round's users (None: anonymous)."""
        if users is None:
            self._pending_anonymous += 1
            return
        for counts, user in zip(self._pending_named, users, strict=True):
            counts[user] = counts.get(user, 0) + 1
        self._pending_users = True

    def run(
        self,
        features: npt.ArrayLike,
        rewards: npt.ArrayLike,
        expected_rewards: npt.ArrayLike | None = None,
        *,
        users: npt.ArrayLike | None = None,
        checkpoints: npt.ArrayLike | None = None,
        record_actions: bool = False,
        parallel: bool | None = None,
    ) -> LinearRunResult:
        """The compiled fast path of :meth:`LinearAgent.run`, with the round's users for the accounting.

        ``users`` holds the user of each round, (T,) for every copy or (T, N) per copy (any labels
        that are one-to-one with the users, e.g. the env's contexts); None: the block's rounds
        have no user id and count against every user. Every round of the block sends its report
        (the block's reports are added to the ledger after the loop). The arguments are checked
        before anything runs (the features and rewards, then ``users``, then the subclass's
        :meth:`_check_block`); the other arguments and the result are those of
        :meth:`LinearAgent.run`.
        """
        block = self._run_inputs(features, rewards, expected_rewards, checkpoints, record_actions, parallel)
        counts = self._ledger.block_counts(users, block.n_steps)
        self._check_block(counts, block.n_steps)
        self._play_block(block, users)
        self._ledger.record_block(counts, block.n_steps)
        return self._run_result(block)

    def _check_block(self, block: list[dict[Hashable, int]] | None, n_steps: int) -> None:
        """Hook: refuse a :meth:`run` block (its users' report counts) before it runs; nothing by default."""

    def privacy_per_user(self, delta: float | None = None) -> UserPrivacy:
        """What holds for every user so far: the composition over the reports of the user with the most.

        Parameters
        ----------
        delta
            δ of the tight bound in (0, 1); None: the agent's ``delta``.

        Returns
        -------
        UserPrivacy
            ``reports`` (that user's count, worst over copies), ``per_report`` (the local
            guarantee of one report), ``basic`` (kε, min(1, k(δ + δ_s))), ``tight`` (ε', δ) from
            ``dp_accounting``'s privacy loss distribution and ``tail_delta`` (k·δ_s, the noise
            sampler's tail, included in both: :mod:`bandit_envs.privacy.accounting`).
        """
        dlt = self.delta if delta is None else delta
        return user_privacy(self.report_mechanism, int(self._ledger.worst.max()), dlt)

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) spent so far per user: the tight bound of :meth:`privacy_per_user` at the agent's δ."""
        return self.privacy_per_user().tight

    @property
    def max_user_reports(self) -> int | IntArray:
        """Reports sent by the user with the most (per copy; reports without a user id count for all)."""
        return self._per_copy(self._ledger.worst)

    @property
    def n_clipped_features(self) -> int | IntArray:
        """Reports whose feature vector was clipped to norm l_x (per copy)."""
        return self._per_copy(self._clips[:, 0])

    @property
    def n_clipped_rewards(self) -> int | IntArray:
        """Reports whose reward was clipped to [-l_y, l_y] (per copy)."""
        return self._per_copy(self._clips[:, 1])
