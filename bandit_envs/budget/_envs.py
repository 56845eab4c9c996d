"""The Gymnasium layer shared by both budget scenarios: one user-env and its native vector env.

A scenario module supplies an :class:`Instance` (its world for a list of users, their oracles and
sensitivity levels); these classes add seeding, noise blocks, the horizon, the payoff, the info
contract and (for the vector env) autoreset. Both call the world's pure transition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bandit_envs.budget._core import BLOCK_ROWS, FloatArray, IntArray, Oracle, SensitivityModel, World, payoff
from bandit_envs.validation import check_float, check_int


@dataclass(frozen=True)
class Instance:
    """Everything an env needs about its users: the world, and per distinct user its oracle and phi_n."""

    world: World
    users: IntArray
    oracles: tuple[Oracle, ...]
    levels: FloatArray
    budgets: FloatArray
    sensitivity: SensitivityModel


class _BudgetCore:
    """Payoff tables and argument checks shared by the single and the vector env."""

    env_id: str = ""

    def _setup(self, instance: Instance, who: IntArray, gamma: Any, horizon: Any) -> None:
        self.gamma = check_float("gamma", gamma, low=0.0)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.instance = instance
        self.budgets = instance.budgets
        self.n_budgets = int(instance.budgets.size)
        rec = np.stack([o.recommendation for o in instance.oracles])
        loss = np.stack([o.loss_factor for o in instance.oracles])
        mean_phi = np.array([instance.sensitivity.mean(float(v)) for v in instance.levels])
        #: Expected payoff of each arm per distinct user, averaged over phi_t (a context-free view).
        self.expected_rewards_by_user = payoff(rec, mean_phi[:, None] * loss, self.gamma)
        fixed_gaps = self.expected_rewards_by_user.max(axis=1, keepdims=True) - self.expected_rewards_by_user
        # Given phi, arm a's expected payoff is intercept[a] - phi * slope[a] (see Oracle).
        self._intercept = payoff(rec, 0.0, self.gamma)[who]
        self._slope = (loss / (self.gamma + 1.0))[who]
        self._fixed_gaps = fixed_gaps[who]
        self._who = who
        self._level = instance.levels[who]
        self._width = instance.world.n_noise + 1

    def _check_render_mode(self, render_mode: str | None) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({self.env_id} has no rendering), got {render_mode!r}.")

    def _transition(
        self, state: IntArray, actions: IntArray, phi: FloatArray, rows: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray, dict[str, Any]]:
        """One step of every copy: (next state, payoff, next phi, info)."""
        world = self.instance.world
        eps = self.budgets[actions]
        state, rec, loss_factor, extra = world.step(self._who, state, eps, rows[:, : world.n_noise])
        loss = phi * loss_factor
        reward = payoff(rec, loss, self.gamma)
        values = self._intercept - phi[:, None] * self._slope
        best = values.argmax(axis=1)
        rows_idx = np.arange(actions.shape[0])
        expected = values[rows_idx, actions]
        info = {
            "epsilon": eps,
            "privacy_loss": loss,
            "recommendation_reward": rec,
            "sensitivity": phi,
            "regret": values[rows_idx, best] - expected,
            "expected_reward": expected,
            "optimal_action": best,
            "fixed_arm_regret": self._fixed_gaps[rows_idx, actions],
            **extra,
        }
        next_phi = self.instance.sensitivity.draw(self._level, rows[:, -1])
        return state, reward, next_phi, info

    def _start(self, rows: FloatArray) -> tuple[IntArray, FloatArray]:
        world = self.instance.world
        state = world.start(self._who, rows[:, : world.n_noise])
        return state, self.instance.sensitivity.draw(self._level, rows[:, -1])

    def _reset_info(self, copy: int) -> dict[str, Any]:
        user = int(self._who[copy])
        oracle = self.instance.oracles[user]
        return {
            "user": int(self.instance.users[user]),
            "sensitivity_level": float(self.instance.levels[user]),
            "budgets": self.budgets.copy(),
            "expected_rewards": self.expected_rewards_by_user[user].copy(),
            "expected_recommendation_rewards": oracle.recommendation.copy(),
            "expected_loss_factors": oracle.loss_factor.copy(),
        }


class BudgetEnv(_BudgetCore, gym.Env[FloatArray, np.int64]):
    """One user choosing a privacy budget each round (the scenario subclasses document the rest)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def _init_env(self, instance: Instance, gamma: Any, horizon: Any) -> None:
        self._setup(instance, np.zeros(1, dtype=np.int64), gamma, horizon)
        self.action_space = spaces.Discrete(self.n_budgets)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)
        self._block: FloatArray = np.empty((0, self._width))
        self._pos = 0
        self._consumed = 0
        self._t = 0
        self._state = np.zeros(1, dtype=np.int64)
        self._phi = np.zeros(1)

    def _next_row(self) -> FloatArray:
        if self._pos >= self._block.shape[0]:
            # An episode consumes exactly horizon + 1 rows, so a reset never discards drawn rows.
            n = min(BLOCK_ROWS, self.horizon + 1 - self._consumed)
            self._block = self.np_random.random((n, self._width))
            self._pos = 0
        row = self._block[self._pos : self._pos + 1]
        self._pos += 1
        self._consumed += 1
        return row

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Start an episode: draw the first datum and its sensitivity (the observation)."""
        super().reset(seed=seed)
        if options:
            raise ValueError(f"options must be None or empty ({self.env_id} takes no reset options), got {options!r}.")
        self._block = np.empty((0, self._width))
        self._pos = self._consumed = self._t = 0
        self._state, self._phi = self._start(self._next_row())
        return self._phi.copy(), self._reset_info(0)

    def step(self, action: Any) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        """Send the current datum with budget ``budgets[action]``; observe the next datum's sensitivity."""
        if self._t >= self.horizon:
            raise RuntimeError(f"the episode ended after horizon={self.horizon} steps; call reset().")
        try:
            a = int(action)
        except (TypeError, ValueError):
            a = -1
        # ``a != action`` refuses values int() would silently truncate or parse (1.5, "3").
        if not 0 <= a < self.n_budgets or a != action:
            raise ValueError(f"action must be an integer in [0, {self.n_budgets - 1}], got {action!r}.")
        self._state, reward, next_phi, info = self._transition(self._state, np.array([a]), self._phi, self._next_row())
        self._phi = next_phi
        self._t += 1
        scalar_info = {key: value[0].item() for key, value in info.items()}
        return next_phi.copy(), float(reward[0]), False, self._t >= self.horizon, scalar_info


class BudgetVectorEnv(_BudgetCore, VectorEnv):
    """``num_envs`` copies stepped by one numpy call; copy i may be a different user."""

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def _init_env(self, num_envs: int, instance: Instance, who: IntArray, gamma: Any, horizon: Any) -> None:
        self.num_envs = num_envs
        self._setup(instance, who, gamma, horizon)
        self.single_action_space = spaces.Discrete(self.n_budgets)
        self.single_observation_space = spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        n = num_envs
        self._rngs = [np.random.default_rng() for _ in range(n)]
        self._block = np.empty((n, BLOCK_ROWS, self._width))
        self._pos = np.zeros(n, dtype=np.int64)
        self._len = np.zeros(n, dtype=np.int64)
        self._consumed = np.zeros(n, dtype=np.int64)
        self._t = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._state = np.zeros(n, dtype=np.int64)
        self._phi = np.zeros(n)
        self._arange = np.arange(n)

    def _rows(self) -> FloatArray:
        for i in np.flatnonzero(self._pos >= self._len):
            rows = int(min(BLOCK_ROWS, self.horizon + 1 - self._consumed[i]))
            self._block[i, :rows] = self._rngs[i].random((rows, self._width))
            self._len[i] = rows
            self._pos[i] = 0
        rows_now = self._block[self._arange, self._pos]
        self._pos += 1
        self._consumed += 1
        return rows_now

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Reset every copy; ``seed=s`` seeds copy i with ``s + i`` (or ``seed[i]`` for a list)."""
        n = self.num_envs
        if options:
            raise ValueError(f"options must be None or empty ({self.env_id} takes no reset options), got {options!r}.")
        if seed is not None:
            if isinstance(seed, int | np.integer):
                seeds: list[int | None] = [int(seed) + i for i in range(n)]
            else:
                seeds = list(seed)
                if len(seeds) != n:
                    raise ValueError(f"seed must be an int or a list of num_envs={n} seeds, got {len(seeds)} seeds.")
            self._rngs = [gym.utils.seeding.np_random(s)[0] for s in seeds]
        self._pos[:] = 0
        self._len[:] = 0
        self._consumed[:] = 0
        self._t[:] = 0
        self._done[:] = False
        self._state, self._phi = self._start(self._rows())
        infos = [self._reset_info(i) for i in range(n)]
        info = {key: np.array([d[key] for d in infos]) for key in infos[0]}
        return self._phi[:, None].copy(), info

    def step(
        self, actions: Any
    ) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step every copy (copies truncated at the previous step are reset instead: NEXT_STEP autoreset)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} array of shape {a.shape}."
            )
        if a.size and (a.min() < 0 or a.max() >= self.n_budgets):
            raise ValueError(f"actions must lie in [0, {self.n_budgets - 1}], got values in [{a.min()}, {a.max()}].")
        was_done = self._done
        if was_done.any():
            self._consumed[was_done] = 0
            self._t[was_done] = 0
        rows = self._rows()
        state, reward, phi, info = self._transition(self._state, a, self._phi, rows)
        if was_done.any():
            start_state, start_phi = self._start(rows)
            state = np.where(was_done, start_state, state)
            phi = np.where(was_done, start_phi, phi)
            reward = np.where(was_done, 0.0, reward)
            for key in ("privacy_loss", "recommendation_reward", "regret", "expected_reward", "fixed_arm_regret"):
                info[key] = np.where(was_done, 0.0, info[key])
        self._state, self._phi = state, phi
        self._t += ~was_done
        truncated = self._t >= self.horizon
        self._done = truncated.copy()
        return phi[:, None].copy(), reward, np.zeros(self.num_envs, dtype=bool), truncated, info


def copy_users(users: Any, user: Any, num_envs: int) -> list[Any]:
    """One user per copy: ``users`` (checked to have ``num_envs`` entries) or ``user`` repeated."""
    if users is None:
        return [user] * num_envs
    if isinstance(users, str | bytes) or not hasattr(users, "__len__"):
        raise TypeError(f"users must be a list of user ids (one per copy), got {type(users).__name__}.")
    listed = [u.item() if isinstance(u, np.generic) else u for u in users]
    if len(listed) != num_envs:
        raise ValueError(
            f"users must list one user id per copy (num_envs={num_envs}), got {len(listed)} ids; "
            "repeat ids (e.g. numpy.repeat) for several copies of a user."
        )
    if user is not None:
        raise ValueError(f"give either user or users, not both (got user={user!r}).")
    return listed
