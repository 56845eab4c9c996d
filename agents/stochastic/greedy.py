"""ε-greedy: exploit the best mean so far, explore a uniform arm with probability ε.

Batched like :class:`agents.UCB` (packed state, one compiled call per ``act`` and ``update`` for
all copies: :mod:`agents.stochastic.index_kernels`); each copy draws from its own generator
(:mod:`agents.common.streams`), so copy i of a batch plays as a single agent seeded ``seed + i``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import SingleEnvKernel, check_choice, describe
from agents.common.streams import GENERATOR_BYTES, CopyStreams, UniformsAhead
from agents.stochastic.index import per_copy_float
from agents.stochastic.index_kernels import GREEDY_USED_BITS, KIND_GREEDY, greedy_choose, greedy_pick_one, greedy_step
from agents.stochastic.mean_state import STATE_TYPE, MeanStateAgent

IntArray = npt.NDArray[np.int64]

#: ε of the constant schedule when none is given.
DEFAULT_EPSILON = 0.1
#: c and d of the decaying schedule when none are given (see :class:`EpsilonGreedy`).
DEFAULT_C, DEFAULT_D = 6.0, 0.1

_USED_MASK = (1 << GREEDY_USED_BITS) - 1

_F64, _I64, _BOOL = types.float64, types.int64, types.boolean
_GREEDY_PICK_ONE = SingleEnvKernel(greedy_pick_one, (STATE_TYPE, _I64, _BOOL, _F64, _F64))
_GREEDY_STEP = SingleEnvKernel(greedy_step, (STATE_TYPE, _I64, _F64, _I64, _BOOL, _F64, _F64))
#: N copies' choice, through its compiled entry point (as mean_state's _MEAN_UPDATE).
_GREEDY_CHOOSE = SingleEnvKernel(greedy_choose, (STATE_TYPE, _I64, _BOOL, types.Array(types.uint64, 1, "C")))


class EpsilonGreedy(UniformsAhead, CopyStreams, MeanStateAgent):
    r"""ε-greedy, with a constant ε or the decaying ε_n of Auer, Cesa-Bianchi & Fischer [1]_.

    Each arm is played once first (lowest index first, no random draw). After that, round t
    (1-based) draws u ~ U[0, 1) from the copy's generator: if u < ε_t it plays a uniformly random
    arm (a second draw), else the arm with the largest mean reward so far (ties to the lowest
    index). Rewards are any numbers in [-1e289, 1e289] (their sums stay finite:
    :data:`agents.base.SUMMED_REWARD_BOUNDS`); only the pulled arm's reward is used. With one env,
    ``update`` also chooses the next arm (one compiled call, as :class:`agents.UCB`'s), from
    uniforms that the agent draws from ``rng`` a block at a time and uses in
    order (:class:`agents.common.streams.UniformsAhead`): the same numbers, so the same choices,
    as drawing them one by one, but ``rng`` itself runs up to a block ahead of the draws used.
    ``sums``, ``counts``, ``means`` (views of the packed state) and ``t`` are as in :class:`agents.UCB`.

    Schedules (``schedule``):

    * ``"constant"``: ε_t = ``epsilon`` (default 0.1). ``epsilon=0`` is the greedy player: it
      trusts its first draws and can stay on a worse arm for ever.
    * ``"decaying"``: the ε_n-GREEDY policy of [1]_, §3:
      :math:`\varepsilon_t = \min\{1, cK/(d^2 t)\}` with t the round number (the paper's n).
      Theorem 3 of [1]_ bounds the probability of a suboptimal choice at round t by about
      c/(d² t) when 0 < d ≤ the smallest gap between the best mean and another mean, and c is
      large enough (the paper takes c > 5). Defaults [P]: c = 6 and d = 0.1 (the default gap of
      ``GraphBandit-v0``); with them the first cK/d² = 600 K rounds are uniform exploration.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        ε in [0, 1] of the constant schedule (default 0.1); in batch mode also an array of
        ``n_envs`` values, one per copy. Not used by the decaying schedule (giving it there is
        refused).
    schedule
        ``"constant"`` (default) or ``"decaying"``.
    c, d
        c > 0 and d in (0, 1) of the decaying schedule (defaults 6 and 0.1); arrays of ``n_envs``
        values are accepted in batch mode. They are checked whatever the schedule.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the generators: copy i of a batch uses ``seed + i`` (:mod:`agents.common.streams`).

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, P. Fischer, "Finite-time Analysis of the Multiarmed Bandit
       Problem", Machine Learning 47, 235-256, 2002.
    """

    name = "eps-greedy"
    _kind = KIND_GREEDY
    _state_bytes_per_copy = 64 + GENERATOR_BYTES

    def __init__(
        self,
        n_arms: int,
        epsilon: float | npt.ArrayLike | None = None,
        *,
        schedule: str = "constant",
        c: float | npt.ArrayLike = DEFAULT_C,
        d: float | npt.ArrayLike = DEFAULT_D,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.schedule = check_choice("schedule", schedule, ("constant", "decaying"))
        self.decaying = self.schedule == "decaying"
        # c and d are checked whatever the schedule: a bad value is a mistake even where it is unused.
        self.c = per_copy_float("c", c, self.n_envs, low=0.0, low_open=True)
        self.d = per_copy_float("d", d, self.n_envs, low=0.0, low_open=True, high=1.0, high_open=True)
        if self.decaying:
            if epsilon is not None:
                raise ValueError(
                    "epsilon is the constant schedule's ε: with schedule='decaying' give c and d instead, "
                    f"got epsilon={describe(epsilon, typed=False)}."
                )
            self.epsilon: float | npt.NDArray[np.float64] | None = None
            with np.errstate(over="ignore", divide="ignore"):  # c K / d² past the floats: ε = 1 every round
                param = np.asarray(self.c) * self.n_arms / np.square(np.asarray(self.d))
            self.name = "eps_n-greedy"
        else:
            value = DEFAULT_EPSILON if epsilon is None else epsilon
            self.epsilon = per_copy_float("epsilon", value, self.n_envs, low=0.0, high=1.0)
            param = np.asarray(self.epsilon)
        self._param = np.broadcast_to(param, (self.batch,)).astype(np.float64)
        self._seed_copies()
        self._reset_state()

    def _load_single_env_kernels(self) -> None:
        _GREEDY_PICK_ONE.load()
        _GREEDY_STEP.load()

    def _load_batched_kernels(self) -> None:
        super()._load_batched_kernels()
        _GREEDY_CHOOSE.load()

    def _reset_state(self) -> None:
        super()._reset_state()
        self._clear_uniforms()
        self._pending = 0

    def _choose(self) -> IntArray:
        out: IntArray = _GREEDY_CHOOSE.call(self._state, self._t, self.decaying, self._bitgens)
        return out

    def _choose_one(self) -> int:
        uniforms, position = self._uniforms, self._position
        if position + 2 > len(uniforms):
            uniforms, position = self._draw_uniforms()
        code: int = _GREEDY_PICK_ONE.call(
            self._state, self._t, self.decaying, uniforms[position], uniforms[position + 1]
        )
        self._position = position + (code & _USED_MASK)
        return code >> GREEDY_USED_BITS

    def _step_one(self, action: int, reward: float) -> int:
        """One env: the update and the choice of the next round in one compiled call (its uniforms not yet used).

        The arm is returned by the next ``act``, which then counts its uniforms as used; reading
        the state's views or setting ``t`` forgets the arm, and ``act`` chooses afresh from the
        same uniforms.
        """
        uniforms, position = self._uniforms, self._position
        if position + 2 > len(uniforms):
            uniforms, position = self._draw_uniforms()
        code: int = _GREEDY_STEP.call(
            self._state, action, reward, self._t + 1, self.decaying, uniforms[position], uniforms[position + 1]
        )
        if code < 0:
            return -1
        self._pending = code & _USED_MASK
        return code >> GREEDY_USED_BITS

    def act(self, obs: Any = None) -> Any:
        """Choose the next arm of every copy (unplayed arms first, lowest index)."""
        if self.n_envs is not None:
            return super().act(obs)
        if obs is not None:
            self._check_obs(obs)
        chosen = self._next
        if chosen < 0:
            return self._choose_one()
        self._position += self._pending  # the uniforms of the arm the last update chose are used now
        self._next = -1
        return chosen

    def current_epsilon(self) -> float | npt.NDArray[np.float64]:
        """ε of the next round (round ``t + 1``): a number, or one per copy in batch mode."""
        eps = np.minimum(1.0, self._param / (self.t + 1)) if self.decaying else self._param
        return float(eps[0]) if self.n_envs is None else eps.copy()

    def __repr__(self) -> str:
        if self.decaying:
            detail = f"schedule='decaying', c={self.c}, d={self.d}"
        else:
            detail = f"epsilon={self.epsilon}"
        return f"EpsilonGreedy(n_arms={self.n_arms}, {detail}, n_envs={self.n_envs}, seed={self.seed})"
