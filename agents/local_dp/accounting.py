"""Per-user accounting of the context-free local-DP agents (:class:`LDPWrapper`, :class:`LDPThompsonSampling`).

Each round's user sends one report; a user's loss is the composition of its reports. The agent
keeps a :class:`~bandit_envs.privacy.accounting.ReportLedger` of reports per user (key
``info["user_id"]``; a report without an id counts for every user, so without ids the whole
stream is one user) and states, for the user with the most reports since the last reset, the
tight composition of its reports (:func:`~bandit_envs.privacy.accounting.user_privacy`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bandit_envs.privacy.accounting import ReportLedger, ReportMechanism, UserPrivacy, user_privacy

__all__ = ["PerUserReports"]


class PerUserReports:
    """Mixin: ``privacy_per_user``, ``privacy_spent`` and ``max_user_reports`` from the agent's ledger.

    The agent sets ``report_mechanism`` (one report's mechanism) and ``_ledger`` (reset with the
    agent), records every report it sends in the ledger, and has ``n_envs``.
    """

    report_mechanism: ReportMechanism
    _ledger: ReportLedger
    n_envs: int | None

    def privacy_per_user(self, delta: float | None = None) -> UserPrivacy:
        """What holds for every user since the last reset: the composition over the reports of the user with the most.

        Parameters
        ----------
        delta
            δ of the tight bound; None: the per-report δ (0 for Laplace and randomized response,
            where the tight bound is then kε).

        Returns
        -------
        UserPrivacy
            ``reports`` (that user's count, worst over copies), ``per_report``, ``basic``
            (kε, k(δ + δ_s)), ``tight`` (ε', δ) from ``dp_accounting``'s privacy loss distribution
            and ``tail_delta`` (k·δ_s, the noise sampler's tail, included in both:
            :mod:`bandit_envs.privacy.accounting`).
        """
        return user_privacy(self.report_mechanism, int(self._ledger.worst.max()), delta)

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) per user since the last reset: the tight bound of :meth:`privacy_per_user` at the per-report δ.

        A user who also reported in earlier episodes loses what all its reports compose to.
        """
        return self.privacy_per_user().tight

    @property
    def max_user_reports(self) -> int | npt.NDArray[np.int64]:
        """Reports since the last reset of the user with the most (per copy; reports without an id count for all)."""
        worst = self._ledger.worst
        return int(worst[0]) if self.n_envs is None else worst
