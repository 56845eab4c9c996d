"""The agent interface (docs/design.md, "Agents"): ``act`` / ``update`` / ``reset``, batch-capable.

An agent built with ``n_envs=None`` plays one env: ``act`` returns an ``int`` and ``update``
takes a scalar reward and the env's step ``info``. Built with ``n_envs=N`` it plays N
independent copies in lock-step on a vector env: ``act`` returns an int array of shape (N,)
and ``update`` takes arrays with a leading batch axis (the vector env's info). All randomness,
including privacy noise, comes from a ``numpy.random.Generator`` built from ``seed``.

Episodes: an agent learns within one episode of its env. When a vector env autoresets a copy
(Gymnasium's NEXT_STEP mode: the step after ``truncated`` returns reward 0 and observes
nothing), call ``agent.reset()`` rather than ``update`` for that step. The copies of a batched
agent share the agent's generator and draw from it in copy order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import numpy.typing as npt

from bandit_envs.validation import check_int


class Agent(ABC):
    """Base class of every agent.

    Parameters
    ----------
    n_arms
        Number of arms K (≥ 2).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (policy randomness and privacy noise).
    """

    #: Short name used in tables and figures.
    name: str = "Agent"

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.n_envs = None if n_envs is None else check_int("n_envs", n_envs, minimum=1)
        if seed is not None:
            check_int("seed", seed, minimum=0)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    @property
    def batch(self) -> int:
        """Number of copies the agent holds state for (1 when ``n_envs`` is None)."""
        return 1 if self.n_envs is None else self.n_envs

    def reset(self, seed: int | None = None) -> None:
        """Forget everything learned; reseed the generator if ``seed`` is given."""
        if seed is not None:
            check_int("seed", seed, minimum=0)
            self.seed = seed
        self.rng = np.random.default_rng(self.seed if seed is None else seed)
        self._reset_state()

    @abstractmethod
    def _reset_state(self) -> None:
        """Set the learning state to its initial value."""

    @abstractmethod
    def act(self, obs: Any = None) -> Any:
        """Choose the next arm (int), or one arm per copy (int array of shape (N,))."""

    @abstractmethod
    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the last step: its action(s), reward(s) and the env's info."""

    # Helpers for subclasses -------------------------------------------------------------

    def _out(self, actions: npt.NDArray[np.int64]) -> Any:
        return int(actions[0]) if self.n_envs is None else actions

    def _batched(
        self, action: Any, reward: Any, info: dict[str, Any] | None, key: str | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], Any]:
        """Return (actions (B,), rewards (B,), info[key] with a batch axis or None)."""
        a = np.asarray(action, dtype=np.int64).reshape(self.batch)
        r = np.asarray(reward, dtype=np.float64).reshape(self.batch)
        extra = None
        if key is not None:
            if info is None or key not in info:
                raise ValueError(
                    f"info must contain {key!r} (side observations from the env), "
                    f"got {None if info is None else sorted(info)!r}."
                )
            extra = np.asarray(info[key]).reshape(self.batch, self.n_arms)
        return a, r, extra

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_arms={self.n_arms}, n_envs={self.n_envs}, seed={self.seed})"


class PrivateAgent(Agent):
    """An agent with a differential-privacy guarantee.

    Subclasses document the privacy unit (what one neighbouring change is), ε (and δ), and
    where their noise comes from, and report the budget used so far in ``privacy_spent``.
    """

    #: Plain-language neighbouring relation, e.g. "one entry r_{t,k} of the reward table".
    privacy_unit: str = ""

    @property
    @abstractmethod
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) spent so far under ``privacy_unit``."""
