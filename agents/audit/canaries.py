"""Mechanisms with a known privacy level, some deliberately broken, to check that an audit can tell.

An audit that never rejects anything proves nothing. These are its controls:

* :class:`LaplaceCount`: a counting query answered with Laplace noise. With ``noise_epsilon`` =
  ``epsilon`` it is exactly ε-DP (Dwork & Roth 2014, Thm. 3.6: sensitivity 1, Laplace(1/ε)); with
  a larger ``noise_epsilon`` it adds too little noise and is only ``noise_epsilon``-DP while
  claiming ``epsilon``.
* :class:`OverclaimedGAP`: :class:`agents.GAP` whose Laplace noise is drawn for ``factor``·ε while
  it claims ε, the bug of a noise scale computed with the wrong ε or sensitivity. Its releases
  are ``factor``·ε-DP per entry, not ε-DP.
* :class:`NonPrivateUCB`: :class:`agents.UCB`, which adds no noise at all, claiming ε-DP. Its arm
  sequence is a deterministic function of the rewards, so one changed reward can change it with
  probability 1: it is not ε-DP for any ε.

They are test fixtures for :mod:`agents.audit` (and ``banditlab audit OverclaimedGAP``), not
agents to use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import PrivateAgent, check_float
from agents.elimination.policies import GAP
from agents.stochastic.index import SQRT2, UCB
from bandit_envs._types import FloatArray
from bandit_envs.privacy._checks import check_epsilon

__all__ = ["LaplaceCount", "NonPrivateUCB", "OverclaimedGAP"]


class LaplaceCount:
    """A count answered with Laplace(1/``noise_epsilon``) noise, claiming ``epsilon``-DP.

    Neighbouring databases differ in one record, so the count changes by at most 1 (sensitivity
    1). Correct when ``noise_epsilon`` = ``epsilon`` (the default); ``noise_epsilon`` > ``epsilon``
    is a mis-calibrated mechanism that is only ``noise_epsilon``-DP.

    Parameters
    ----------
    epsilon
        The claimed ε > 0.
    noise_epsilon
        The ε the noise is drawn for (> 0); None: ``epsilon``.
    """

    privacy_unit = "one record (the count changes by at most 1)"

    def __init__(self, epsilon: float, noise_epsilon: float | None = None) -> None:
        self.epsilon = check_epsilon("epsilon", epsilon)
        noise = self.epsilon if noise_epsilon is None else noise_epsilon
        self.noise_epsilon = check_float("noise_epsilon", noise, low=0.0, low_open=True)

    def sample(self, count: float, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` independent answers for a database whose true count is ``count``."""
        return count + rng.laplace(0.0, 1.0 / self.noise_epsilon, size=n)


class OverclaimedGAP(GAP):
    """GAP with its Laplace noise (and elimination width) computed for ``factor``·ε while claiming ε (broken).

    Everything else is :class:`agents.GAP`: epoch 1's length L_1 is planned for the claimed ε;
    from then on the agent computes with ``factor``·ε (later epochs' lengths, the elimination
    width) and every release adds Laplace(1/(factor·ε·L_τ)), ``factor`` times too little noise, so
    the releases are ``factor``·ε-DP per entry. ``epsilon`` and ``privacy_spent`` report the claim.

    Parameters
    ----------
    factor
        How much too little noise (> 1 for a broken agent; 1 is GAP). Default 3.
    Others
        As :class:`agents.GAP`.
    """

    name = "OverclaimedGAP"

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        feedback_graph: Any,
        delta: float | None = None,
        factor: float = 3.0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.factor = check_float("factor", factor, low=0.0, low_open=True)
        super().__init__(n_arms, horizon, epsilon, feedback_graph, delta, n_envs=n_envs, seed=seed)

    def _reset_state(self) -> None:
        super()._reset_state()  # plans epoch 1 with the claimed ε
        self._params = (self.epsilon * self.factor, *self._params[1:])  # every release: factor·ε


class NonPrivateUCB(UCB, PrivateAgent):
    """:class:`agents.UCB` (no noise at all) claiming ε-DP per reward entry (broken).

    Parameters
    ----------
    n_arms, alpha
        As :class:`agents.UCB`.
    epsilon
        The (false) claim ε > 0.
    """

    name = "NonPrivateUCB"
    privacy_unit = "one reward entry r_{t,k} (claimed; the agent adds no noise)"

    def __init__(
        self,
        n_arms: int,
        epsilon: float = 1.0,
        alpha: float = SQRT2,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, alpha, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon("epsilon", epsilon)

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """The claim (ε, 0), false."""
        return (self.epsilon, 0.0)
