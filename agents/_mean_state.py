"""The packed per-arm mean state shared by ε-greedy, KL-UCB and MOSS (layout in :mod:`agents._index_kernels`).

:class:`MeanStateAgent` keeps one float64 row of 4K + 1 columns per copy and exposes ``sums``,
``means`` and ``counts`` as views of it, as :class:`agents.UCB` does. ``update`` checks types and
shapes in Python and leaves the action range and the reward values to the compiled
:func:`~agents._index_kernels.mean_update`, which reports the first bad copy (then nothing has
changed); ``act`` is one compiled call for all copies (the subclass's ``_choose``).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from agents._index_kernels import EXTRA_COLUMNS, mean_update
from agents.base import Agent

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class MeanStateAgent(Agent):
    """Shared state and update of the agents that learn per-arm means from the pulled arm only.

    Side observations in ``info`` are ignored (``info`` is checked like every agent's).
    Subclasses set ``_kind`` (what the ``aux`` columns hold), ``_param`` (the per-copy parameter
    column) and implement ``_choose``.
    """

    #: What :func:`~agents._index_kernels.mean_update` keeps in the ``aux`` columns.
    _kind: ClassVar[int]
    _state_bytes_per_arm = 40
    #: The per-copy parameter column (see :mod:`agents._index_kernels`), shape (B,).
    _param: FloatArray
    _state: FloatArray

    def _reset_state(self) -> None:
        k = self.n_arms
        self._state = np.zeros((self.batch, 4 * k + EXTRA_COLUMNS))
        self._state[:, 4 * k] = self._param
        self.t = 0

    @property
    def sums(self) -> FloatArray:
        """(B, K) reward sum per arm, a view of the agent's state."""
        return self._state[:, : self.n_arms]

    @property
    def means(self) -> FloatArray:
        """(B, K) mean reward per arm, a view of the agent's state."""
        return self._state[:, self.n_arms : 2 * self.n_arms]

    @property
    def counts(self) -> IntArray:
        """(B, K) number of pulls per arm, an int64 view of the agent's state."""
        # A view taken now: a stored view would part from a copied agent's state (pickle copies arrays).
        return self._state.view(np.int64)[:, 2 * self.n_arms : 3 * self.n_arms]

    @abstractmethod
    def _choose(self) -> IntArray:
        """The arm of round ``t + 1`` of every copy, shape (B,)."""
        ...

    def act(self, obs: Any = None) -> Any:
        """Choose the next arm of every copy (unplayed arms first, lowest index)."""
        if obs is not None:
            self._check_obs(obs)
        return self._out(self._choose())

    def _apply(self, actions: IntArray, rewards: FloatArray) -> int:
        """Add the rewards in one compiled call; the first copy refused (nothing changed then), or -1."""
        low, high = (-math.inf, math.inf) if self.reward_bounds is None else self.reward_bounds
        bad: int = mean_update(self._state, actions, rewards, self._kind, low, high)
        return bad

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add ``reward`` to the pulled arm's mean; side observations in ``info`` are ignored."""
        a, r = self._feedback(action, reward, info, check_values=False)
        bad = self._apply(a, r)
        if bad >= 0:
            if not 0 <= a[bad] < self.n_arms:
                raise self._action_range_error(int(a[bad]), bad)
            raise self._reward_error(float(r[bad]), bad)
        self.t += 1
