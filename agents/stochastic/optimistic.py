"""Optimistic index agents beyond UCB1: KL-UCB (Bernoulli KL) and MOSS (horizon-aware).

Both play each arm once (lowest index first), then the arm with the largest optimistic index,
ties to the lowest index, learning from the pulled arm only. Batched like :class:`agents.UCB`:
one packed float64 row per copy and one compiled call per ``act`` and ``update`` for all copies
(:mod:`agents.stochastic.index_kernels`, which also holds a plain-Python reference of each). Both are
deterministic: ``seed`` only seeds ``rng``, which they do not use.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import FLOATS_1D, INT64_MAX, INTS_1D, SingleEnvKernel, check_float, check_int_range
from agents.stochastic.index import per_copy_float
from agents.stochastic.index_kernels import (
    ANCHOR_BLOCKS,
    DECISION_COLUMNS,
    KIND_KLUCB,
    KIND_MOSS,
    kl_index,
    klucb_choose,
    klucb_choose_one,
    klucb_delta,
    klucb_log_terms,
    klucb_step,
    klucb_update,
    moss_choose,
    moss_choose_one,
    moss_step,
    moss_update,
)
from agents.stochastic.mean_state import STATE_TYPE, MeanStateAgent
from bandit_envs._types import FloatArray, IntArray

#: Default accuracy of the KL-UCB index (see :class:`KLUCB`).
DEFAULT_TOL = 1e-9

_KLUCB_STEP = SingleEnvKernel(
    klucb_step, (STATE_TYPE, STATE_TYPE, types.int64, types.float64, types.int64, types.float64)
)
_MOSS_STEP = SingleEnvKernel(moss_step, (STATE_TYPE, types.int64, types.float64))
_KLUCB_CHOOSE_ONE = SingleEnvKernel(klucb_choose_one, (STATE_TYPE, STATE_TYPE, types.int64, types.float64))
_MOSS_CHOOSE_ONE = SingleEnvKernel(moss_choose_one, (STATE_TYPE,))
#: N copies' kernels, through their compiled entry points (as mean_state's _MEAN_UPDATE).
_KLUCB_UPDATE = SingleEnvKernel(klucb_update, (STATE_TYPE, STATE_TYPE, INTS_1D, FLOATS_1D, types.int64, types.float64))
_KLUCB_CHOOSE = SingleEnvKernel(klucb_choose, (STATE_TYPE, STATE_TYPE, types.int64, types.float64))
_MOSS_CHOOSE = SingleEnvKernel(moss_choose, (STATE_TYPE,))
_MOSS_UPDATE = SingleEnvKernel(moss_update, (STATE_TYPE, INTS_1D, FLOATS_1D, types.float64, types.float64, INTS_1D))


class KLUCB(MeanStateAgent):
    r"""KL-UCB with the Bernoulli Kullback-Leibler divergence (Garivier & Cappé [1]_).

    After one pull of each arm, the agent plays at round t + 1 (t rounds completed, the paper's
    t) the arm with the largest index

    .. math:: u_k(t) = \max\{q \in [\hat\mu_k, 1] : N_k(t)\, \mathrm{kl}(\hat\mu_k, q)
              \le \ln t + c \ln\ln t\},

    :math:`\mathrm{kl}(p, q) = p\ln\frac{p}{q} + (1-p)\ln\frac{1-p}{1-q}`, ties to the lowest index:
    [1]_, §2, Algorithm 1 with the Bernoulli divergence (optimal for Bernoulli rewards, and valid
    for any rewards in [0, 1], which the agent requires). Theorem 1 of [1]_ is proved with c = 3;
    the paper's simulations use c = 0, the default here. A right-hand side below 0 (c > 0 and t
    < e) is taken as 0, which makes the index the mean.
    ``sums``, ``counts``, ``means`` (views of the packed state) and ``t`` are as in :class:`agents.UCB`.

    The index is computed to ``tol`` on the grid tol·ℤ: the computed index is the first grid
    point right of the exact u (capped at 1), so it lies in (u, u + tol] (default tol = 1e-9;
    :func:`agents.stochastic.index_kernels.kl_index`). It depends on the mean, N_k kl-threshold and tol
    only, so the batched kernel may compute only the indices that can still win, from bounds it
    keeps per arm, and still choose the argmax of all the computed indices
    (:func:`~agents.stochastic.index_kernels.klucb_choose`).

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    c
        Coefficient c in [0, 1e100] of ln ln t (default 0); in batch mode also an array of ``n_envs``
        values.
    tol
        Accuracy of the index, in [1e-12, 0.01] (default 1e-9).
    n_envs, seed
        As :class:`agents.UCB` (KL-UCB itself is deterministic: ``seed`` only seeds ``rng``).

    References
    ----------
    .. [1] A. Garivier, O. Cappé, "The KL-UCB Algorithm for Bounded Stochastic Bandits and
       Beyond", COLT 2011, JMLR W&CP 19, 359-376. arXiv:1102.2490.
    """

    name = "KL-UCB"
    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "the Bernoulli KL divergence of {name} needs means in [0, 1]"
    _kind = KIND_KLUCB
    _derives_from_means = True
    _state_bytes_per_arm = 96
    _state_bytes_per_copy = 64 + 8 * DECISION_COLUMNS

    def __init__(
        self,
        n_arms: int,
        c: float | npt.ArrayLike = 0.0,
        *,
        tol: float = DEFAULT_TOL,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        # c <= 1e100: c ln ln t stays finite (c = 1e308 made every index 1, and arm 0 was played for ever)
        self.c = per_copy_float("c", c, self.n_envs, low=0.0, high=1e100)
        self.tol = check_float("tol", tol, low=1e-12, high=0.01)
        self._param = np.broadcast_to(np.asarray(self.c, dtype=np.float64), (self.batch,)).astype(np.float64)
        self._reset_state()

    def _reset_state(self) -> None:
        # No anchor yet (a cleared anchor with p = 0; klucb_update sets them): bounds [0, 1].
        self._anchors = np.zeros((self.batch, ANCHOR_BLOCKS * self.n_arms + DECISION_COLUMNS))
        self._anchors[:, 3 * self.n_arms : 4 * self.n_arms] = np.inf
        self._anchors[:, -1] = -1.0  # no decision by bounds yet
        super()._reset_state()

    def _check_written(self) -> None:
        """Clear the anchors of the arms whose mean or count was written through a view (:meth:`_written_arms`).

        An anchor bounds its arm's index for the mean and count it was set at (or moved to by
        :func:`~agents.stochastic.index_kernels.klucb_update`), and a kept decision holds only
        while the other arms keep theirs and every arm has been pulled
        (:func:`~agents.stochastic.index_kernels.klucb_choose`): a written arm's anchor is cleared
        (bounds [mean, 1], which always hold; 1/N from its count), as
        :func:`~agents.stochastic.index_kernels.set_anchor` clears one, and its copy's decision
        dropped. Called before each kernel.
        """
        copies, arms = self._written_arms()
        if not copies.size:
            return
        k, anchors = self.n_arms, self._anchors
        means = self._state[copies, k + arms]
        counts = self._state.view(np.int64)[copies, 2 * k + arms]
        for block in range(ANCHOR_BLOCKS):
            anchors[copies, block * k + arms] = 0.0
        anchors[copies, arms] = means  # x = p
        anchors[copies, 3 * k + arms] = np.inf  # 1/slope
        anchors[copies, 5 * k + arms] = np.divide(1.0, counts, out=np.zeros(counts.shape), where=counts > 0)
        anchors[copies, 6 * k + arms] = means
        anchors[copies, -1] = -1.0  # no decision by bounds

    def _load_single_env_kernels(self) -> None:
        super()._load_single_env_kernels()
        _KLUCB_STEP.load()
        _KLUCB_CHOOSE_ONE.load()

    def _load_batched_kernels(self) -> None:
        super()._load_batched_kernels()
        _KLUCB_UPDATE.load()
        _KLUCB_CHOOSE.load()

    def _apply(self, actions: IntArray, rewards: FloatArray) -> int:
        self._check_written()
        bad: int = _KLUCB_UPDATE.call(self._state, self._anchors, actions, rewards, self._t + 1, self.tol)
        return bad

    def _step_one(self, action: int, reward: float) -> int:
        if self._handed_out is not None:
            self._check_written()
        chosen: int = _KLUCB_STEP.call(self._state, self._anchors, action, reward, self._t + 1, self.tol)
        return chosen

    def _choose(self) -> IntArray:
        self._check_written()
        out: IntArray = _KLUCB_CHOOSE.call(self._state, self._anchors, self._t, self.tol)
        return out

    def _choose_one(self) -> int:
        self._check_written()
        arm: int = _KLUCB_CHOOSE_ONE.call(self._state, self._anchors, self._t, self.tol)
        return arm

    def indices(self) -> FloatArray:
        """(B, K) KL-UCB index of every arm for round ``t + 1`` (inf for an arm never pulled)."""
        log_t, loglog_t = klucb_log_terms(self.t)
        out = np.full((self.batch, self.n_arms), np.inf)
        for b in range(self.batch):
            delta = klucb_delta(log_t, loglog_t, float(self._param[b]))
            for k in range(self.n_arms):
                n = int(self.counts[b, k])
                if n:
                    out[b, k] = kl_index(float(self.means[b, k]), delta / n, self.tol)
        return out

    def __repr__(self) -> str:
        return f"KLUCB(n_arms={self.n_arms}, c={self.c}, tol={self.tol:g}, n_envs={self.n_envs}, seed={self.seed})"


class MOSS(MeanStateAgent):
    r"""MOSS, the minimax optimal strategy in the stochastic case (Audibert & Bubeck [1]_).

    After one pull of each arm, the agent plays the arm with the largest index

    .. math:: B_k = \hat\mu_k + \sqrt{\frac{\max(\ln(T / (K N_k)), 0)}{N_k}},

    with T the horizon and N_k the pulls of arm k, ties to the lowest index. The bonus vanishes
    once an arm has more than T/K pulls; an arm's index changes only when it is pulled, so the
    agent keeps it per arm. For rewards in [0, 1] the paper bounds the regret of MOSS by a
    constant times sqrt(TK), without the sqrt(ln T) factor of UCB1. Rewards here are any numbers
    in [-1e289, 1e289] (as for :class:`agents.UCB`), the bonus being scaled for [0, 1].
    ``sums``, ``counts``, ``means`` (views of the packed state) and ``t`` are as in :class:`agents.UCB`.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    horizon
        The number of rounds T the index is tuned for, in [1, 2^63 - 1] (the pulls are counted in int64).
    n_envs, seed
        As :class:`agents.UCB` (MOSS itself is deterministic: ``seed`` only seeds ``rng``).

    References
    ----------
    .. [1] J.-Y. Audibert, S. Bubeck, "Minimax Policies for Adversarial and Stochastic Bandits",
       COLT 2009, 217-226.
    """

    name = "MOSS"
    _kind = KIND_MOSS
    _derives_from_means = True

    def __init__(self, n_arms: int, horizon: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        # T/K is kept as a float: a horizon past int64 (1e400) overflowed in that division; the pull counts
        # are int64, so no run reaches it
        self.horizon = check_int_range("horizon", horizon, 1, INT64_MAX, "MOSS counts pulls in int64")
        self._param = np.full(self.batch, self.horizon / self.n_arms)
        self._reset_state()

    def _load_single_env_kernels(self) -> None:
        super()._load_single_env_kernels()
        _MOSS_CHOOSE_ONE.load()
        _MOSS_STEP.load()

    def _load_batched_kernels(self) -> None:
        super()._load_batched_kernels()
        _MOSS_CHOOSE.load()
        _MOSS_UPDATE.load()

    def _check_written(self) -> None:
        """Recompute the index of the arms whose mean or count was written through a view (:meth:`_written_arms`).

        The same arithmetic as :func:`~agents.stochastic.index_kernels.mean_add` (0 for an arm
        never pulled, whose index is not read). Called before each kernel.
        """
        copies, arms = self._written_arms()
        if not copies.size:  # the usual case: zip(..., strict=True) over two empty arrays alone took 3.5 us
            return
        k = self.n_arms
        counts = self._state.view(np.int64)
        for b, arm in zip(copies.tolist(), arms.tolist(), strict=True):
            n = int(counts[b, 2 * k + arm])
            mean = float(self._state[b, k + arm])
            width = math.log(float(self._state[b, 4 * k]) / n) if n > 0 else 0.0
            self._state[b, 3 * k + arm] = mean + math.sqrt(max(width, 0.0) / n) if n > 0 else 0.0

    def _apply(self, actions: IntArray, rewards: FloatArray) -> int:
        self._check_written()
        n = self.n_envs
        if n is None:  # one env's checked path
            return super()._apply(actions, rewards)
        out = np.empty(n, dtype=np.int64)  # allocated here: cheaper than an array returned by compiled code
        low, high = (-math.inf, math.inf) if self.reward_bounds is None else self.reward_bounds  # as mean_update's
        bad: int = _MOSS_UPDATE.call(self._state, actions, rewards, low, high, out)
        if bad == -1:
            self._next_rows = out  # the next round's arms, chosen in the same call
        return bad

    def _step_one(self, action: int, reward: float) -> int:
        if self._handed_out is not None:
            self._check_written()
        chosen: int = _MOSS_STEP.call(self._state, action, reward)
        return chosen

    def _choose(self) -> IntArray:
        self._check_written()
        out: IntArray = _MOSS_CHOOSE.call(self._state)
        return out

    def _choose_one(self) -> int:
        self._check_written()
        arm: int = _MOSS_CHOOSE_ONE.call(self._state)
        return arm

    def indices(self) -> FloatArray:
        """(B, K) MOSS index of every arm (inf for an arm never pulled)."""
        self._check_written()
        aux = self._state[:, 3 * self.n_arms : 4 * self.n_arms]
        return np.where(self.counts > 0, aux, np.inf)

    def __repr__(self) -> str:
        return f"MOSS(n_arms={self.n_arms}, horizon={self.horizon}, n_envs={self.n_envs}, seed={self.seed})"
