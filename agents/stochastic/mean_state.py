"""The packed per-arm mean state shared by ε-greedy, KL-UCB and MOSS (layout in :mod:`agents.stochastic.index_kernels`).

:class:`MeanStateAgent` keeps one float64 row of 4K + 1 columns per copy and exposes ``sums``,
``means`` and ``counts`` as views of it, as :class:`agents.UCB` does. ``update`` checks types and
shapes in Python and leaves the action range and the reward values to the compiled
:func:`~agents.stochastic.index_kernels.mean_update`, which reports the first bad copy (then nothing has
changed); ``act`` is one compiled call for all copies (the subclass's ``_choose``).

With one env, ``update`` with plain scalars (:meth:`agents.base.Agent._plain_value`) and
``act`` are each one call of a one-env kernel's compiled entry point
(:class:`agents.base.SingleEnvKernel`; the subclass's ``_step_one`` and ``_choose_one``), and
the update's call also chooses the next arm, which ``act`` then returns, as :class:`agents.UCB`
does (reading ``sums``, ``means``, ``counts`` or setting ``t`` forgets it; ε-greedy's choice
takes uniforms its generator drew ahead, used only when ``act`` returns the arm): below a
microsecond per act + update
(``benchmarks/bench_step_api.py``). Anything else takes the checked path, which gives the errors.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import (
    FLOATS_1D,
    INT64_MAX,
    INTS_1D,
    SUMMED_REWARD_BOUNDS,
    SUMMED_REWARD_REASON,
    Agent,
    SingleEnvKernel,
    check_int_range,
)
from agents.common.kernels import kernel_error
from agents.stochastic.index_kernels import EXTRA_COLUMNS, mean_step, mean_update

FloatArray = npt.NDArray[np.float64]
_NP_INT64, _NP_FLOAT64 = np.int64, np.float64
IntArray = npt.NDArray[np.int64]
_NO_ARMS: IntArray = np.zeros(0, dtype=np.int64)

#: The packed state as the one-env kernels take it.
STATE_TYPE = types.Array(types.float64, 2, "C")
_MEAN_STEP = SingleEnvKernel(
    mean_step, (STATE_TYPE, types.int64, types.float64, types.int64, types.float64, types.float64)
)
#: The batched update, through its compiled entry point: numba's type dispatch alone took 1 us a
#: round, a fifth of a round of 100 copies.
_MEAN_UPDATE = SingleEnvKernel(mean_update, (STATE_TYPE, INTS_1D, FLOATS_1D, types.int64, types.float64, types.float64))


class PackedMeanViews:
    """``sums``, ``means``, ``counts`` and ``t`` of a packed per-arm state (UCB, UCB-N, ε-greedy, KL-UCB, MOSS).

    The state's first 3K columns are the sums, the means and the counts (int64 values in the same
    8 bytes) of each arm. Reading a view or setting ``t`` forgets the arm chosen by the last
    one-env ``update`` (``_next``): the caller may write to the view, so ``act`` chooses afresh.
    """

    n_arms: int
    _state: FloatArray
    _next: int
    #: N copies: the arms ``act`` returns, chosen by the last ``update`` (UCB); None when not known.
    _next_rows: IntArray | None = None
    _t: int

    @property
    def t(self) -> int:
        """Rounds completed (updates received).

        Setting it takes an integer in [0, 2**63 - 2] (the compiled kernels take round t + 1 as an
        int64) and refuses anything else in one sentence, the agent unchanged: a negative or
        fractional t would make the index's ln t meaningless, a string would fail inside the kernels.
        """
        return self._t

    @t.setter
    def t(self, value: int) -> None:
        self._t = check_int_range("t", value, 0, INT64_MAX - 1, "the compiled kernels take round t + 1 as an int64")
        self._forget_choice()

    def _forget_choice(self) -> None:
        """Drop the arm(s) the last update chose (see :meth:`agents.base.Agent._forget_choice`)."""
        self._next = -1
        self._next_rows = None

    def _hand_out_view(self) -> None:
        """A view of the state is handed out, which the caller may write to: the next arm is chosen afresh."""
        self._forget_choice()

    @property
    def sums(self) -> FloatArray:
        """(B, K) reward (observation) sum per arm, a view of the agent's state."""
        self._hand_out_view()
        return self._state[:, : self.n_arms]

    @property
    def means(self) -> FloatArray:
        """(B, K) mean reward (observation) per arm, a view of the agent's state."""
        self._hand_out_view()
        return self._state[:, self.n_arms : 2 * self.n_arms]

    @property
    def counts(self) -> IntArray:
        """(B, K) number of pulls (observations) per arm, an int64 view of the agent's state."""
        self._hand_out_view()
        # A view taken now: a stored view would part from a copied agent's state (pickle copies arrays).
        return self._state.view(np.int64)[:, 2 * self.n_arms : 3 * self.n_arms]


class MeanStateAgent(PackedMeanViews, Agent):
    """Shared state and update of the agents that learn per-arm means from the pulled arm only.

    Side observations in ``info`` are ignored (``info`` is checked like every agent's).
    Subclasses set ``_kind`` (what the ``aux`` columns hold), ``_param`` (the per-copy parameter
    column) and implement ``_choose``.
    """

    reward_bounds = SUMMED_REWARD_BOUNDS
    reward_bounds_reason = SUMMED_REWARD_REASON
    #: What :func:`~agents.stochastic.index_kernels.mean_update` keeps in the ``aux`` columns.
    _kind: ClassVar[int]
    _state_bytes_per_arm = 40
    reads_side_observations = False  # the pulled arm's reward only
    #: The per-copy parameter column (see :mod:`agents.stochastic.index_kernels`), shape (B,).
    _param: FloatArray
    _state: FloatArray

    #: One env: the arm ``act`` returns, chosen by the last ``update`` (agents whose choice draws
    #: nothing: their one-env step also chooses); a negative value when not known.
    _next: int = -1
    _t: int

    #: Whether the agent keeps values derived from the means and counts (MOSS's index, KL-UCB's
    #: anchors), which a write through the views would leave stale (:meth:`_written_arms`).
    _derives_from_means: ClassVar[bool] = False
    #: The means and counts as they were when a view was last handed out, or None.
    _handed_out: FloatArray | None = None

    def _hand_out_view(self) -> None:
        super()._hand_out_view()
        if self._derives_from_means and self._handed_out is None:
            self._handed_out = self._state[:, self.n_arms : 3 * self.n_arms].copy()

    def _written_arms(self) -> tuple[IntArray, IntArray]:
        """(copies, arms) whose mean or count changed since a view was handed out (none when none was); forgets it.

        The agents that derive values from the means and counts call it before each kernel and
        make those values afresh for these arms: reading a view writes nothing and keeps them.
        """
        before, self._handed_out = self._handed_out, None
        if before is None:
            return _NO_ARMS, _NO_ARMS
        k = self.n_arms
        now = self._state[:, k : 3 * k]
        means_now, means_before = now[:, :k], before[:, :k]
        changed = (means_now != means_before) & ~(np.isnan(means_now) & np.isnan(means_before))
        changed |= now.view(np.int64)[:, k:] != before.view(np.int64)[:, k:]  # the counts, as int64
        copies, arms = np.nonzero(changed)
        return copies, arms

    def _load_single_env_kernels(self) -> None:
        """Load the compiled entry points of the one-env kernels (constructor, one env only)."""
        _MEAN_STEP.load()

    def _load_batched_kernels(self) -> None:
        """Load the compiled entry points of the batched kernels (constructor, N copies)."""
        _MEAN_UPDATE.load()

    def _reset_state(self) -> None:
        if self.n_envs is None:
            self._load_single_env_kernels()
        else:
            self._load_batched_kernels()
        k = self.n_arms
        self._state = np.zeros((self.batch, 4 * k + EXTRA_COLUMNS))
        self._state[:, 4 * k] = self._param
        self._handed_out = None
        self.t = 0

    @abstractmethod
    def _choose(self) -> IntArray:
        """The arm of round ``t + 1`` of every copy, shape (B,)."""
        ...

    @abstractmethod
    def _choose_one(self) -> int:
        """One env: the arm of round ``t + 1`` (one call of a one-env kernel)."""
        ...

    def act(self, obs: Any = None) -> Any:
        """Choose the next arm of every copy (unplayed arms first, lowest index)."""
        if obs is not None:
            self._check_obs(obs)
        if self.n_envs is None:
            chosen = self._next
            return chosen if chosen >= 0 else self._choose_one()
        rows = self._next_rows
        if rows is not None:  # chosen by the last update (MOSS), returned once: the caller owns it
            self._next_rows = None
            return rows
        return self._choose()

    def _apply(self, actions: IntArray, rewards: FloatArray) -> int:
        """Add the rewards in one compiled call; the first copy refused (nothing changed then), or -1.

        An agent whose choice draws nothing may choose the next arms of N copies in the same call
        and keep them in ``_next_rows`` (after ``update`` cleared it), which ``act`` returns.
        """
        low, high = (-math.inf, math.inf) if self.reward_bounds is None else self.reward_bounds
        bad: int = _MEAN_UPDATE.call(self._state, actions, rewards, self._kind, low, high)
        return bad

    def _step_one(self, action: int, reward: float) -> int:
        """One env, checked scalars: :meth:`_apply` in one compiled call.

        Returns -1 if the kernel refused the feedback (nothing changed), else the arm of the next
        round when the step chose it too (agents whose choice draws nothing), else -2.
        """
        refused = _MEAN_STEP.call(self._state, action, reward, self._kind, self._plain_low, self._plain_high)
        return -1 if refused >= 0 else -2

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add ``reward`` to the pulled arm's mean; side observations in ``info`` are ignored."""
        tr, ta = type(reward), type(action)
        value = (
            None  # N copies: the batch below
            if self.n_envs is not None
            else reward
            if (tr is float or tr is _NP_FLOAT64) and (ta is int or ta is _NP_INT64)
            else self._plain_value(action, reward)  # an int reward, say: a float if it fits
        )
        if value is not None and (info is None or self._plain_value(action, value) is not None):
            # one env, plain scalars: one compiled call, which refuses (changing nothing) an action
            # outside [0, K) or a reward outside the bounds; the checked path then says which. With an
            # info, the range is checked first, so that a bad action is named before a bad info.
            if info is not None:
                self._check_info(info)
            t = self._t + 1
            try:
                chosen = self._step_one(action, value)
            except OverflowError:  # an int action beyond int64: not an arm
                chosen = -1
            if chosen != -1:
                self._t = t
                self._next = chosen
                return
        a, r = self._feedback(action, reward, info, check_values=False)
        self._next_rows = None
        bad = self._apply(a, r)  # may keep the next arms in _next_rows
        if bad >= 0:
            raise kernel_error(self, a, r, bad)
        self._t += 1  # what the setter of t does, without its check (an int below 2**63 - 1 plus one)
        self._next = -1
