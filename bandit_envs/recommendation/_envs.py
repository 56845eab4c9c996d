"""The Gymnasium layer shared by both recommendation envs: the single env, its native vector env, the fast path.

Seeding. ``reset(seed)`` seeds the env's generator (``self.np_random``); each episode then derives
two generators from it (:func:`episode_generators`): one for the rounds' contexts, one for the
reward noise. :meth:`round_contexts` and :meth:`round_noise` rebuild those streams from a seed
without stepping, so a compiled agent loop can read ``rewards[contexts[t], a] + noise[t]`` and
``features_of(contexts[t])`` and see exactly the rounds of ``reset(seed=seed)`` then ``step``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bandit_envs.recommendation._problem import (
    FloatArray,
    IntArray,
    Problem,
    draw_contexts,
    draw_noise,
    episode_generators,
    outcome,
)
from bandit_envs.validation import check_float, check_int

#: Contexts and noise values drawn per refill (speed only: the streams do not depend on it).
BLOCK = 4096
#: Step-info entries that are 0 (not -1) for a vector copy restarting at this step.
_ZERO_WHEN_RESTARTING = ("regret", "expected_reward")


def _masked(keep: npt.NDArray[np.bool_], value: Any, fill: float) -> Any:
    """``value`` where ``keep`` (batch axis first, broadcast over the others), else ``fill``."""
    return np.where(keep.reshape(-1, *[1] * (np.ndim(value) - 1)), value, fill)


class _RecommendationCore:
    """Arguments, spaces and the fast path shared by the single and the vector env."""

    env_id: str = ""
    problem: Problem

    def _setup(self, build: Callable[[], Problem], reward_noise: Any, horizon: Any) -> None:
        """Check the run arguments, then build (or fetch from the cache) the instance."""
        self.reward_noise = check_float("reward_noise", reward_noise, low=0.0)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.problem = problem = build()
        self.n_arms = problem.n_arms
        self.dim = problem.dim
        #: Noiseless reward of every (context, arm): the fast path's reward table.
        self.rewards = problem.rewards

    def _check_render_mode(self, render_mode: str | None) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({self.env_id} has no rendering), got {render_mode!r}.")

    def _check_options(self, options: dict[str, Any] | None) -> None:
        if options:
            raise ValueError(f"options must be None or empty ({self.env_id} takes no reset options), got {options!r}.")

    def features_of(self, contexts: Any) -> FloatArray:
        """Features of contexts from :meth:`round_contexts`: (n_arms, d) for one, (n, n_arms, d) for n."""
        index = np.asarray(contexts)
        if not np.issubdtype(index.dtype, np.integer) or (
            index.size and (index.min() < 0 or index.max() >= self.problem.n_contexts)
        ):
            raise ValueError(f"contexts must be integers in [0, {self.problem.n_contexts - 1}], got {contexts!r}.")
        return self.problem.features_of(index)

    def _streams(self, n_rounds: Any, seed: Any) -> tuple[int, tuple[np.random.Generator, np.random.Generator]]:
        n = check_int("n_rounds", n_rounds, minimum=0)
        seed = check_int("seed", seed, minimum=0)
        return n, episode_generators(gym.utils.seeding.np_random(seed)[0])

    def _round_contexts(self, n_rounds: Any, seed: Any) -> IntArray:
        n, (contexts, _) = self._streams(n_rounds, seed)
        return draw_contexts(self.problem, contexts, n)

    def _round_noise(self, n_rounds: Any, seed: Any) -> FloatArray:
        n, (_, noise) = self._streams(n_rounds, seed)
        return draw_noise(noise, self.reward_noise, n)


class RecommendationEnv(_RecommendationCore, gym.Env[FloatArray, np.int64]):
    """A random context each round, arms with feature vectors (the scenario subclasses document the rest)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def _init_env(self, build: Callable[[], Problem], reward_noise: Any, horizon: Any) -> None:
        self._setup(build, reward_noise, horizon)
        self.action_space = spaces.Discrete(self.n_arms)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(self.n_arms, self.dim), dtype=np.float64)
        self._contexts: list[int] = []
        self._noise: list[float] = []
        self._t = self.horizon  # no episode before the first reset
        self._context = 0
        self._generators = episode_generators(np.random.default_rng(0))

    def round_contexts(self, n_rounds: int, seed: int) -> IntArray:
        """The contexts of the first ``n_rounds`` rounds after ``reset(seed=seed)``, without stepping.

        Round t's reward (action a) is ``rewards[c[t], a] + round_noise(n_rounds, seed)[t]`` and its
        observation, announced at reset (t = 0) or by step t - 1, is ``features_of(c[t])``.
        """
        return self._round_contexts(n_rounds, seed)

    def round_noise(self, n_rounds: int, seed: int) -> FloatArray:
        """The reward noise of the first ``n_rounds`` rounds after ``reset(seed=seed)`` (zeros if noiseless)."""
        return self._round_noise(n_rounds, seed)

    def _next_context(self) -> int:
        if not self._contexts:
            self._contexts = draw_contexts(self.problem, self._generators[0], BLOCK)[::-1].tolist()
        return self._contexts.pop()

    def _next_noise(self) -> float:
        if not self._noise:
            self._noise = draw_noise(self._generators[1], self.reward_noise, BLOCK)[::-1].tolist()
        return self._noise.pop()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Start an episode: draw the first round's context; its arms' features are the observation."""
        super().reset(seed=seed)
        self._check_options(options)
        self._generators = episode_generators(self.np_random)
        self._contexts, self._noise = [], []
        self._t = 0
        self._context = self._next_context()
        return self.problem.features_of(self._context), self.problem.static_info()

    def step(self, action: Any) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        """Recommend arm ``action`` to the current context; observe the next round's features."""
        if self._t >= self.horizon:
            raise RuntimeError(
                f"no episode is running (none started, or it ended after horizon={self.horizon} steps); call reset()."
            )
        try:
            a = int(action)
        except (TypeError, ValueError):
            a = -1
        # ``a != action`` refuses values int() would silently truncate or parse (1.5, "3").
        if not 0 <= a < self.n_arms or a != action:
            raise ValueError(f"action must be an integer in [0, {self.n_arms - 1}], got {action!r}.")
        c = self._context
        reward, expected, regret, optimal = outcome(self.problem, c, a, self._next_noise())
        info = {
            "regret": float(regret),
            "expected_reward": float(expected),
            "optimal_action": int(optimal),
            "context": c,
        }
        info.update((key, v.item() if np.ndim(v) == 0 else v) for key, v in self.problem.round_info(c).items())
        self._t += 1
        self._context = self._next_context()
        return self.problem.features_of(self._context), float(reward), False, self._t >= self.horizon, info


class RecommendationVectorEnv(_RecommendationCore, VectorEnv):
    """``num_envs`` independent copies stepped by one numpy call (the scenario subclasses document the rest)."""

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def _init_env(self, num_envs: Any, build: Callable[[], Problem], reward_noise: Any, horizon: Any) -> None:
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        self._setup(build, reward_noise, horizon)
        n = self.num_envs
        self.single_action_space = spaces.Discrete(self.n_arms)
        self.single_observation_space = spaces.Box(-1.0, 1.0, shape=(self.n_arms, self.dim), dtype=np.float64)
        self.action_space = batch_space(self.single_action_space, n)
        self.observation_space = batch_space(self.single_observation_space, n)
        self._parents = [np.random.default_rng() for _ in range(n)]
        self._generators = [episode_generators(p) for p in self._parents]
        self._ctx_block = np.zeros((n, BLOCK), dtype=np.int64)
        self._noise_block = np.zeros((n, BLOCK))
        self._ctx_pos = np.full(n, BLOCK)
        self._noise_pos = np.full(n, BLOCK)
        self._t = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._context = np.zeros(n, dtype=np.int64)
        self._arange = np.arange(n)

    def round_contexts(self, n_rounds: int, seed: int) -> IntArray:
        """(num_envs, n_rounds): row i is the single env's ``round_contexts(n_rounds, seed + i)``."""
        seed = check_int("seed", seed, minimum=0)
        return np.stack([self._round_contexts(n_rounds, seed + i) for i in range(self.num_envs)])

    def round_noise(self, n_rounds: int, seed: int) -> FloatArray:
        """(num_envs, n_rounds): row i is the single env's ``round_noise(n_rounds, seed + i)``."""
        seed = check_int("seed", seed, minimum=0)
        return np.stack([self._round_noise(n_rounds, seed + i) for i in range(self.num_envs)])

    def _new_episode(self, i: int) -> None:
        self._generators[i] = episode_generators(self._parents[i])
        self._ctx_pos[i] = self._noise_pos[i] = BLOCK
        self._t[i] = 0

    def _next_contexts(self) -> IntArray:
        if self._ctx_pos.max() >= BLOCK:
            for i in np.flatnonzero(self._ctx_pos >= BLOCK):
                self._ctx_block[i] = draw_contexts(self.problem, self._generators[i][0], BLOCK)
                self._ctx_pos[i] = 0
        out = self._ctx_block[self._arange, self._ctx_pos]
        self._ctx_pos += 1
        return out

    def _next_noise(self, playing: npt.NDArray[np.bool_]) -> FloatArray:
        """The next noise value of every playing copy (0 for copies restarting this step)."""
        if self.reward_noise == 0.0:
            return np.zeros(self.num_envs)
        if self._noise_pos.max() >= BLOCK:
            for i in np.flatnonzero(playing & (self._noise_pos >= BLOCK)):
                self._noise_block[i] = draw_noise(self._generators[i][1], self.reward_noise, BLOCK)
                self._noise_pos[i] = 0
        out = np.where(playing, self._noise_block[self._arange, np.minimum(self._noise_pos, BLOCK - 1)], 0.0)
        self._noise_pos += playing
        return out

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Reset every copy; ``seed=s`` seeds copy i with ``s + i`` (or ``seed[i]`` for a list)."""
        n = self.num_envs
        self._check_options(options)
        if seed is not None:
            if isinstance(seed, int | np.integer):
                seeds: list[int | None] = [int(seed) + i for i in range(n)]
            else:
                seeds = list(seed)
                if len(seeds) != n:
                    raise ValueError(f"seed must be an int or a list of num_envs={n} seeds, got {len(seeds)} seeds.")
            self._parents = [gym.utils.seeding.np_random(s)[0] for s in seeds]
        for i in range(n):
            self._new_episode(i)
        self._done[:] = False
        self._context = self._next_contexts()
        static = self.problem.static_info()
        info = {key: np.array([value] * n) for key, value in static.items()}
        return self.problem.features_of(self._context), info

    def step(
        self, actions: Any
    ) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step every copy (copies truncated at the previous step are reset instead: NEXT_STEP autoreset)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} array of shape {a.shape}."
            )
        if a.size and (a.min() < 0 or a.max() >= self.n_arms):
            raise ValueError(f"actions must lie in [0, {self.n_arms - 1}], got values in [{a.min()}, {a.max()}].")
        playing = ~self._done
        restarting = not playing.all()
        for i in np.flatnonzero(self._done):
            self._new_episode(int(i))
        c = self._context
        reward, expected, regret, optimal = outcome(self.problem, c, a, self._next_noise(playing))
        info = {"regret": regret, "expected_reward": expected, "optimal_action": optimal, "context": c}
        info.update(self.problem.round_info(c))
        if restarting:  # the restarting copies played no round: reward, regret 0; indices and ids -1
            reward = np.where(playing, reward, 0.0)
            info = {key: _masked(playing, v, 0.0 if key in _ZERO_WHEN_RESTARTING else -1) for key, v in info.items()}
        self._t += playing
        truncated = self._t >= self.horizon
        self._done = truncated.copy()
        self._context = self._next_contexts()
        obs = self.problem.features_of(self._context)
        return obs, reward, np.zeros(self.num_envs, dtype=bool), truncated, info
