"""LinUCB / OFUL-style optimistic linear bandit with a constant exploration width.

:class:`LinUCB` is the protocol of :mod:`agents.linear.protocol` without noise, clipping or a
growing shift; the step API and the fast path come from :class:`agents.linear.base.LinearAgent`.
It makes no privacy claim: each report is the exact pair (x xᵀ, y x). Status tag: [P] marks an
engineering choice of this project, not a constant of the papers.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import check_float
from agents.linear._kernels import SCHEDULE_CONSTANT
from agents.linear.base import LinearAgent

__all__ = ["FEATURE_BOUND", "LinUCB"]

#: The largest |entry| of LinUCB's features and |reward|: every product x_i x_j and y x_i is at
#: most 1e200, so the sums of up to 2⁶³ rounds stay below 1e219, far from overflowing [P].
FEATURE_BOUND = 1e100


class LinUCB(LinearAgent):
    r"""LinUCB / OFUL-style optimistic linear bandit with a constant width.

    Round t plays :math:`\arg\max_a x_a^\top\hat\theta + \alpha\sqrt{x_a^\top V^{-1} x_a}` (ties to
    the lowest index) with :math:`V = \lambda I + \sum_s x_s x_s^\top` and
    :math:`\hat\theta = V^{-1}\sum_s y_s x_s` (ridge regression), solved through the Cholesky
    factor of V. The width β = ``alpha`` is a constant [P]: OFUL's
    :math:`\beta_t = R\sqrt{d \ln((1 + t/\lambda)/\delta)} + \sqrt\lambda S` [2]_ grows like
    :math:`\sqrt{\ln t}`, and in practice a tuned constant (Li et al.'s α [1]_) is standard.
    It is LDP-LinUCB without noise, clipping or growing shift (one protocol: :class:`LinUCBServer`).

    Features and rewards are used as they are (no clipping), so their sizes are bounded instead:
    ``act`` and ``run`` refuse features with an entry outside [-1e100, 1e100], and ``update`` and
    ``run`` rewards outside [-1e100, 1e100], a bound of this project [P]. Within these bounds the
    sums V and u stay finite for any number of rounds below 2⁶³ (a round adds at most 1e200 to each
    of their entries); beyond them x xᵀ and y x can overflow, and V and u would stay infinite.

    Parameters
    ----------
    n_features
        Dimension d of the feature vectors (>= 1).
    alpha
        Exploration width β (>= 0; 0 is greedy ridge regression). Default 1.0 [P].
    reg
        Ridge parameter λ (> 0).
    n_envs, seed
        As :class:`~agents.base.Agent` (LinUCB itself is deterministic).

    Attributes
    ----------
    server
        The :class:`LinUCBServer`: Σ x xᵀ (λI enters as its constant shift), Σ y x, θ, Cholesky factor.

    References
    ----------
    .. [1] L. Li, W. Chu, J. Langford, R. E. Schapire, "A contextual-bandit approach to personalized
       news article recommendation", WWW 2010.
    .. [2] Y. Abbasi-Yadkori, D. Pál, Cs. Szepesvári, "Improved algorithms for linear stochastic
       bandits", NeurIPS 2011.
    """

    name = "LinUCB"
    feature_bound = FEATURE_BOUND
    feature_bound_reason = "{name} adds x xᵀ unclipped to its sums, which must stay finite"
    reward_bounds = (-FEATURE_BOUND, FEATURE_BOUND)
    reward_bounds_reason = "{name} adds y x unclipped to its sums, which must stay finite"

    def __init__(
        self,
        n_features: int,
        alpha: float = 1.0,
        reg: float = 1.0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_features, n_envs=n_envs, seed=seed)
        self.alpha = check_float("alpha", alpha, low=0.0)
        self.reg = check_float("reg", reg, low=0.0, low_open=True)
        self._sched = np.array([SCHEDULE_CONSTANT, self.alpha, self.reg, 0.0, 0.0, 0.0, 0.0])
        self._sigma = 0.0
        self._l_x = self._l_y = math.inf
        self._quadratic = False
        self._initial_shift = self.reg
        self._reset_state()

    def __repr__(self) -> str:
        return (
            f"LinUCB(n_features={self.n_features}, alpha={self.alpha}, reg={self.reg}, "
            f"n_envs={self.n_envs}, seed={self.seed})"
        )
