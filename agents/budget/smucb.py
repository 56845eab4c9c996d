r"""Agents of the privacy-budget paper: SM-UCB (sensitivity-aware UCB) and FixedArm (FixHalf).

The paper [1]_ lets a user choose the local-DP budget of each datum from the grid
:math:`E = \{e_i = i/K,\ i = 1, \dots, K\}` (K = 10: ε ∈ {0.1, …, 1.0}) with a bandit policy.
Here arm ``k`` (0-based) is :math:`e_{k+1} = (k + 1)/K`. Plain UCB (§5.1, eq. (8)) is
:class:`agents.stochastic.index.UCB`; Random is :class:`agents.stochastic.index.Random`.

References
----------
.. [1] 隐私预算选择 (privacy-budget selection for local-DP recommender systems),
   Bao, Xu, Zhu, Wang, Sci Sin Inform 52 (2022): §5.1 UCB (eq. (8), Algorithm 1),
   §5.2 SM-UCB (eqs. (9)-(11), Algorithm 2), §7.1.3 parameters, §7.2 experiments.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import Agent, _as_array, as_float, check_float, check_int, check_state_size, describe, given
from agents.common.kernels import ucb_choose
from agents.stochastic.index import UCB, row_error
from bandit_envs._jit import kernel_array, njit
from bandit_envs._types import FloatArray

#: Slack subtracted before the ceiling in ⌈(1 - φ)K⌉, so that φ = 1 - j/K gives j although
#: (1 - 0.7) * 10 is 3.0000000000000004 in binary floating point.
_CEIL_SLACK = 1e-9


@njit
def _sensitivity_shift(means: FloatArray, phi: FloatArray, beta: float, out: FloatArray) -> int:  # pragma: no cover
    """Write ``means + beta * w(phi)`` per row into ``out``; return the first bad row (-1 if none).

    ``w`` is eq. (10) of the budget paper, w_i = 1 - |⌈(1 - φ)K⌉ - i| / K for the 1-based arm
    i = k + 1. Nothing is written when some ``phi[b]`` is outside [0, 1] or NaN.
    """
    n_rows, n_arms = means.shape
    for b in range(n_rows):
        if not (0.0 <= phi[b] <= 1.0):
            return b
    for b in range(n_rows):
        peak = math.ceil((1.0 - phi[b]) * n_arms - _CEIL_SLACK)
        for k in range(n_arms):
            out[b, k] = means[b, k] + beta * (1.0 - abs(peak - (k + 1)) / n_arms)
    return -1


def _sensitivities(obs: Any, n_envs: int | None) -> FloatArray:
    """``obs`` as a float array of one sensitivity per copy (range checked by the kernel)."""
    n_rows = 1 if n_envs is None else n_envs
    shapes = "a float or shape (1,)" if n_envs is None else f"shape ({n_envs},) or ({n_envs}, 1)"
    expected = f"obs must be the sensitivity φ_t in [0, 1] of the datum about to be sent ({shapes}), got"
    if isinstance(obs, numbers.Real) and not isinstance(obs, bool | np.bool_ | np.timedelta64):
        phi = np.array([as_float(obs)])
    else:
        arr = _as_array(obs)
        if arr is None or arr.dtype.kind not in "iuf":
            raise TypeError(f"{expected} {describe(obs)}.")
        phi = arr.astype(np.float64)
    if phi.size != n_rows or phi.ndim > 2 or (phi.ndim == 2 and phi.shape[1] != 1):
        raise ValueError(f"{expected} shape {phi.shape}.")
    return phi.reshape(n_rows)


def sensitivity_weights(phi: Any, n_arms: int) -> FloatArray:
    r"""Sensitivity weights :math:`w_i = 1 - |\lceil (1 - \varphi)K \rceil - i| / K` (eq. (10)).

    Parameters
    ----------
    phi
        Sensitivity φ in [0, 1], a float or a 1-d array of them.
    n_arms
        Number of arms K (>= 2).

    Returns
    -------
    numpy.ndarray
        Shape (K,) for a float ``phi``, else (len(phi), K); column k is the 1-based arm k + 1.

    Examples
    --------
    >>> sensitivity_weights(0.45, 10)  # ⌈0.55 * 10⌉ = 6: the peak is arm 6 (index 5)
    array([0.5, 0.6, 0.7, 0.8, 0.9, 1. , 0.9, 0.8, 0.7, 0.6])
    """
    k = check_int("n_arms", n_arms, minimum=2)
    arr = _as_array(phi)
    if arr is None or arr.dtype.kind not in "iuf":
        raise TypeError(f"phi must be a number in [0, 1] or a 1-d array of them, got {describe(phi)}.")
    values = arr.astype(np.float64)
    if values.ndim > 1:
        raise ValueError(f"phi must be a number in [0, 1] or a 1-d array of them, got shape {values.shape}.")
    rows = values.reshape(-1)
    check_state_size(16.0 * rows.size * k, f"{rows.size} sensitivities with n_arms={k}")
    out = np.empty((rows.size, k))
    bad = _sensitivity_shift(np.zeros((rows.size, k)), rows, 1.0, out)
    if bad >= 0:
        where = f"phi[{bad}]" if values.ndim else "phi"
        raise ValueError(f"{where} must be a sensitivity in [0, 1], got {float(rows[bad])!r}.")
    return out if values.ndim else out[0]


class SMUCB(UCB):
    r"""SM-UCB: UCB plus a bonus for the budgets that suit the sensitivity of the current datum.

    Budget paper [1]_ §5.2, eq. (9) and Algorithm 2 [V]. Before each round the user gives the
    sensitivity :math:`\varphi_t \in [0, 1]` of the datum about to be sent (the observation
    passed to ``act``); after playing every arm once (lowest index first, Algorithm 2 lines
    1-7, whatever φ_t) round t (1-based) plays

    .. math:: I_t = \arg\max_i \bar X_i + \alpha \sqrt{\ln t / N_i} + \beta w_i(\varphi_t),
              \qquad w_i = 1 - \frac{|\lceil (1 - \varphi_t) K \rceil - i|}{K}   \quad (10)

    for the 1-based arm i (budget :math:`e_i = i/K`), with ties to the lowest index. The weight
    peaks at :math:`i = \lceil (1 - \varphi_t)K \rceil` and falls by 1/K per step away from it, so
    more sensitive data favour smaller budgets. Choices of ours [P]:

    * φ_t = 1 gives :math:`\lceil 0 \rceil = 0`, a peak just below arm 1; we keep eq. (10) as
      written (:math:`w_i = 1 - i/K`). Clamping the peak to arm 1 would add 1/K to every
      weight and so choose the same arms.
    * The ceiling is taken of :math:`(1 - \varphi_t)K - 10^{-9}`, so that grid values
      φ = 1 - j/K peak at arm j despite rounding (``(1 - 0.7) * 10`` is 3.0000000000000004).
    * The bonus is added to the mean before the exploration term (same value up to rounding);
      with ``beta = 0`` the means are unchanged and SM-UCB chooses exactly as :class:`UCB`.

    The payoff the user learns from uses the sensitivity-weighted loss :math:`L = \varphi_t
    f_{loss}(\cdot)` (eq. (11)); that is the env's business, the agent only sees the reward.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2); the paper's grid is K = 10.
    alpha
        Exploration coefficient (> 0). Default 0.3, the paper's best for SM-UCB on MovieLens
        (§7.2.1, Fig. 4a) [V]; its best on Gowalla is 0.1 (Fig. 4b).
    beta
        Weight of the sensitivity bonus (>= 0). Default 0.01, the paper's best on both data
        sets (§7.1.3 (3)) [V].
    n_envs, seed
        As :class:`UCB`'s (SM-UCB itself is deterministic: the seed changes nothing).

    Attributes
    ----------
    sums, counts, means, t
        As :class:`UCB`'s (the per-arm statistics and the rounds completed).

    References
    ----------
    .. [1] Budget paper, Bao, Xu, Zhu, Wang, Sci Sin Inform 52 (2022), §5.2.
    """

    name = "SM-UCB"
    reads_obs = True  # φ_t

    def __init__(
        self,
        n_arms: int,
        alpha: float | npt.ArrayLike = 0.3,
        beta: float = 0.01,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, alpha, n_envs=n_envs, seed=seed)
        self.beta = check_float("beta", beta, low=0.0)

    def _reset_state(self) -> None:
        super()._reset_state()
        self._shifted: FloatArray = np.zeros((self.batch, self.n_arms))

    def act(self, obs: Any = None) -> Any:
        """Choose the arm with the largest index for the sensitivity ``obs`` (unplayed arms first).

        ``obs`` is φ_t in [0, 1]: a float or shape (1,) for one env, shape (N,) or (N, 1) with
        ``n_envs=N``.
        """
        phi = _sensitivities(obs, self.n_envs)
        means = kernel_array(self.means, np.float64)  # a view of the state: a C copy, as the kernel is compiled for
        bad = _sensitivity_shift(means, phi, self.beta, self._shifted)
        if bad >= 0:
            value = given(obs, phi[0]) if self.n_envs is None else float(phi[bad])  # a huge int as given, not inf
            raise row_error(bad, self.n_envs, "obs (the sensitivity φ_t)", value, "a number in [0, 1]")
        width = self._width_coef * math.log(self.t + 1)
        return self._out(ucb_choose(self._shifted, kernel_array(self.counts, np.int64), width))

    def __repr__(self) -> str:
        return (
            f"SMUCB(n_arms={self.n_arms}, alpha={self.alpha}, beta={self.beta}, n_envs={self.n_envs}, seed={self.seed})"
        )


class FixedArm(Agent):
    """Play the same arm every round, ignoring all feedback.

    The budget paper's FixHalf baseline [1]_ (§7.2.2: "用户始终将隐私预算设置为 0.5", the user
    always sets the budget to 0.5) is ``FixedArm`` at the index of ε = 0.5 in the grid
    {1/K, …, 1}, i.e. arm K/2 - 1 (4 for K = 10): :meth:`fix_half`.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    arm
        The arm played, 0-based, in [0, K - 1].
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (unused: the policy is deterministic).

    References
    ----------
    .. [1] Budget paper, Bao, Xu, Zhu, Wang, Sci Sin Inform 52 (2022), §7.2.2.
    """

    name = "FixedArm"
    reads_side_observations = False

    def __init__(self, n_arms: int, arm: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.arm = check_int("arm", arm)
        if not 0 <= self.arm < self.n_arms:
            got = describe(self.arm, typed=False)
            raise ValueError(f"arm must be an arm index in [0, {self.n_arms - 1}] (0-based), got {got}.")
        self._reset_state()

    @classmethod
    def fix_half(cls, n_arms: int = 10, *, n_envs: int | None = None, seed: int | None = None) -> FixedArm:
        """FixHalf: always the budget ε = 0.5 = (K/2)/K, arm K/2 - 1 (needs an even ``n_arms``)."""
        k = check_int("n_arms", n_arms, minimum=2)
        if k % 2:
            raise ValueError(f"n_arms must be even so that ε = 0.5 is in the grid {{1/K, …, 1}}, got {n_arms!r}.")
        agent = cls(k, k // 2 - 1, n_envs=n_envs, seed=seed)
        agent.name = "FixHalf"
        return agent

    def _reset_state(self) -> None:
        """FixedArm keeps no learning state."""

    def act(self, obs: Any = None) -> Any:
        """Return ``arm`` (one per copy)."""
        self._check_obs(obs)
        if self.n_envs is None:
            return self.arm
        return np.full(self.n_envs, self.arm, dtype=np.int64)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Check the feedback (it must fit the agent), then ignore it."""
        self._check_feedback(action, reward, info)

    def __repr__(self) -> str:
        return f"FixedArm(n_arms={self.n_arms}, arm={self.arm}, n_envs={self.n_envs}, seed={self.seed})"
