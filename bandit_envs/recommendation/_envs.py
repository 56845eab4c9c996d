"""The Gymnasium layer shared by both recommendation envs: the single env, its native vector env, the fast path.

Both envs build on :mod:`bandit_envs.core` (checks, seeding, blocks, autoreset) and play a round
with the same pure function, :func:`~bandit_envs.recommendation._problem.outcome`.

Seeding. ``reset(seed)`` seeds the env's generator (``self.np_random``); each episode then derives
two generators from it (:func:`episode_generators`): one for the rounds' contexts, one for the
reward noise. :meth:`round_contexts` and :meth:`round_noise` rebuild those streams from a seed
without stepping, so a compiled agent loop can read ``rewards[contexts[t], a] + noise[t]`` and
``features_of(contexts[t])`` and see exactly the rounds of ``reset(seed=seed)`` then ``step``.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bandit_envs import core
from bandit_envs._jit import kernel_array
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.core import (
    GENERATOR_BYTES,
    BanditEnv,
    BanditVectorEnv,
    NoiseBlock,
    NoiseBlocks,
    check_num_envs,
    check_options,
    check_render_mode,
)
from bandit_envs.recommendation import _pcg64
from bandit_envs.recommendation._problem import (
    Problem,
    StreamStates,
    draw_contexts,
    draw_noise,
    episode_generators,
    outcome,
)
from bandit_envs.rendering import Scene, recommendation_scene
from bandit_envs.validation import check_float, check_int, check_memory, not_numbers, summarize

#: Contexts and noise values drawn per refill (speed only: the streams do not depend on it).
BLOCK = 4096
#: Fewest contexts (and noise values) a vector env copy buffers, unless the budget is lowered.
COPY_ROWS = 512
#: A context or noise stream has no end: an episode may consume any number of its values.
_ENDLESS = sys.maxsize
#: Step-info entries that are 0 (not -1) for a vector copy restarting at this step.
_ZERO_WHEN_RESTARTING = ("regret", "expected_reward")
#: Largest ``reward_noise`` (standard deviation of the Gaussian reward noise). The noiseless rewards
#: lie in [-1, 1]; numpy's normal draws stay below 12.23 standard deviations, so up to this bound
#: every reward, and the sum of the squared rewards of any episode (< 2**63 rounds), is finite
#: (near 1e307 the rewards themselves reach inf).
MAX_REWARD_NOISE = 1e100


def copy_bytes(n_arms: int, dim: int) -> int:
    """Memory of one copy of a recommendation vector env besides its buffered contexts and noise.

    Its own generator (the episode's two streams are 96 bytes of :class:`StreamStates`), its share
    of a step's arrays (the observation: one feature row per arm, the per-arm info entries, and
    their temporaries) and of the reset info: about 2.5 KiB + 16·n_arms·d + 32·n_arms bytes. The
    batched observation space keeps its bounds as broadcast views (:func:`_batched_box`), not per copy.
    """
    return GENERATOR_BYTES + 1024 + 16 * n_arms * dim + 32 * n_arms


def buffer_budget(num_envs: int) -> int:
    """Bytes of each of the two buffers (contexts, noise) of a vector env of ``num_envs`` copies.

    A step reads one row per copy; a buffer of k rows spreads a refill's fixed cost over k steps.
    Up to 1 MiB in all (4096 rows a copy at 32 copies), at least :data:`COPY_ROWS` rows a copy
    (4 KiB each for the contexts and the noise), within half of
    :data:`bandit_envs.core.NOISE_BUFFER_BYTES` (so at most 64 MiB for both: fewer rows beyond
    8192 copies). The copies whose buffers ran out are refilled together, by one compiled pass
    over their streams' states (:mod:`bandit_envs.recommendation._pcg64`), so few rows a copy
    cost little; through numpy's generators (where numba's ziggurat tables are missing) a refill
    costs about 15 µs a copy for both streams.
    """
    return min(core.NOISE_BUFFER_BYTES // 2, max(2**20, num_envs * COPY_ROWS * 8))


def _batched_box(single: spaces.Box, n: int) -> spaces.Box:
    """The Box of ``batch_space(single, n)`` (shape (n, ...), the bounds repeated) with read-only broadcast bounds.

    Gymnasium's ``Box`` stores ``low``, ``high``, ``bounded_below`` and ``bounded_above`` in full
    (18 bytes per entry at float64: 7.2 KiB per copy at 20 arms and d = 20), and
    ``batch_space`` builds them by repeating the single space's. The batched bounds are the single
    space's for every copy, so a Box of one copy, given the batched shape and views of the single
    space's bounds, is the same space (``contains``, ``sample``, ``==``) without per-copy arrays.
    """
    box = spaces.Box(single.low[np.newaxis], single.high[np.newaxis], dtype=single.dtype,
                     seed=copy.deepcopy(single.np_random))  # fmt: skip
    box._shape = (n, *single.shape)
    for name in ("low", "high", "bounded_below", "bounded_above"):
        setattr(box, name, np.broadcast_to(getattr(single, name), box._shape))
    return box


def _masked(keep: BoolArray, value: Any, fill: float) -> Any:
    """``value`` where ``keep`` (batch axis first, broadcast over the others), else ``fill``."""
    return np.where(keep.reshape(-1, *[1] * (np.ndim(value) - 1)), value, fill)


class _RecommendationCore:
    """Arguments, spaces and the fast path shared by the single and the vector env."""

    env_id: ClassVar[str] = ""
    problem: Problem

    def _setup(self, build: Callable[[], Problem], reward_noise: Any, horizon: Any) -> None:
        """Check the run arguments, then build (or fetch from the cache) the instance."""
        self.reward_noise = check_float("reward_noise", reward_noise, low=0.0, high=MAX_REWARD_NOISE)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.problem = problem = build()
        self.n_arms = self.n_actions = problem.n_arms
        self.dim = problem.dim
        #: Noiseless reward of every (context, arm): the fast path's reward table.
        self.rewards = problem.rewards

    def _scene(self) -> Scene:
        """Frames show the round's user and the recommended item (:func:`~bandit_envs.rendering.recommendation_scene`).

        Arms are the data's movies when the instance lists them (reset info ``item_ids``), else
        candidate slots (Gowalla: the chosen candidate's POI comes with the step info).
        """
        item_ids = self.problem.static_info().get("item_ids")
        return recommendation_scene(self.env_id, self.horizon, self.n_arms, item_ids)

    def _spaces(self) -> tuple[spaces.Discrete, Any]:
        box = spaces.Box(-1.0, 1.0, shape=(self.n_arms, self.dim), dtype=np.float64)
        return spaces.Discrete(self.n_arms), box

    def features_of(self, contexts: Any) -> FloatArray:
        """Features of contexts from :meth:`round_contexts`: (n_arms, d) for one, (n, n_arms, d) for n."""
        allowed = f"contexts must be integers in [0, {self.problem.n_contexts - 1}]"
        odd = not_numbers(contexts)  # a masked array (np.asarray reads its masked entries), a list holding a bool
        if odd is not None:
            raise ValueError(f"{allowed}, got {odd}.")
        index = np.asarray(contexts)
        if index.dtype.kind not in "iu":  # not np.issubdtype(..., np.integer): True for timedelta64
            raise ValueError(f"{allowed}, got {summarize(contexts)} ({index.dtype}).")
        bad = (index < 0) | (index >= self.problem.n_contexts)
        if bad.any():
            at = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), index.shape))
            raise ValueError(f"{allowed}, got {index[at]} at index {at if len(at) != 1 else at[0]}.")
        return self.problem.features_of(index)

    def _check_rounds(self, n_rounds: Any, copies: int = 1) -> int:
        """``n_rounds`` checked: an integer >= 0 whose streams (for ``copies`` copies) fit in memory."""
        n = check_int("n_rounds", n_rounds, minimum=0)
        # The uniforms, the contexts and their temporaries; a vector env also stacks the copies' rows.
        per_round = (8 * self.problem.n_uniforms + 64) * (2 if copies > 1 else 1)
        what = f"n_rounds={n}" + (f" for {copies} copies" if copies > 1 else "")
        check_memory(f"{what} (about {per_round} bytes a round)", float(n) * copies * per_round, "ask for fewer rounds")
        return n

    def _streams(self, n_rounds: Any, seed: Any) -> tuple[int, tuple[np.random.Generator, np.random.Generator]]:
        n = self._check_rounds(n_rounds)
        seed = check_int("seed", seed, minimum=0)
        return n, episode_generators(gym.utils.seeding.np_random(seed)[0])

    def _round_contexts(self, n_rounds: Any, seed: Any) -> IntArray:
        n, (contexts, _) = self._streams(n_rounds, seed)
        return draw_contexts(self.problem, contexts, n)

    def _round_noise(self, n_rounds: Any, seed: Any) -> FloatArray:
        n, (_, noise) = self._streams(n_rounds, seed)
        return draw_noise(noise, self.reward_noise, n)


class RecommendationEnv(_RecommendationCore, BanditEnv[FloatArray]):
    """A random context each round, arms with feature vectors (the scenario subclasses document the rest).

    ``render_mode``: None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, action, reward, regret so far, the round's user and the recommended item, and per
    arm its pulls and empirical mean reward), ``"rgb_array"`` (a 360 × 640 × 3 uint8 picture: those
    figures, a bar per arm and the regret curve) or ``"human"`` (the text frame printed at every
    reset and step). See :mod:`bandit_envs.rendering`.
    """

    def _init_env(
        self, build: Callable[[], Problem], reward_noise: Any, horizon: Any, render_mode: str | None = None
    ) -> None:
        check_render_mode(self.env_id, render_mode)
        self._setup(build, reward_noise, horizon)
        self.action_space, self.observation_space = self._spaces()
        # Blocks as lists: the step reads Python ints and floats (faster than numpy scalars).
        self._contexts = NoiseBlock(self._draw_contexts, BLOCK)
        self._noise = NoiseBlock(self._draw_noise, BLOCK)
        self._context_stream: Iterator[int] = iter(())
        self._noise_stream: Iterator[float] = iter(())
        self._t = self.horizon  # no episode before the first reset
        self._context = 0
        self._generators = episode_generators(np.random.default_rng(0))
        self._init_rendering(render_mode)

    def round_contexts(self, n_rounds: int, seed: int) -> IntArray:
        """The contexts of the first ``n_rounds`` rounds after ``reset(seed=seed)``, without stepping.

        Round t's reward (action a) is ``rewards[c[t], a] + round_noise(n_rounds, seed)[t]`` and its
        observation, announced at reset (t = 0) or by step t - 1, is ``features_of(c[t])``.
        """
        return self._round_contexts(n_rounds, seed)

    def round_noise(self, n_rounds: int, seed: int) -> FloatArray:
        """The reward noise of the first ``n_rounds`` rounds after ``reset(seed=seed)`` (zeros if noiseless)."""
        return self._round_noise(n_rounds, seed)

    def _draw_contexts(self, size: int) -> list[int]:
        return draw_contexts(self.problem, self._generators[0], size).tolist()

    def _draw_noise(self, size: int) -> list[float]:
        return draw_noise(self._generators[1], self.reward_noise, size).tolist()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Start an episode: draw the first round's context; its arms' features are the observation."""
        check_options(self.env_id, options)
        self._start_episode(seed)
        self._generators = episode_generators(self.np_random)
        self._context_stream = self._contexts.restart(_ENDLESS)
        self._noise_stream = self._noise.restart(_ENDLESS)
        self._context = next(self._context_stream)
        return self.problem.features_of(self._context), self.problem.static_info()

    def step(self, action: Any) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        """Recommend arm ``action`` to the current context; observe the next round's features."""
        a = self._check_step(action)
        c = self._context
        reward, expected, regret, optimal = outcome(self.problem, c, a, next(self._noise_stream))
        info = {
            "regret": float(regret),
            "expected_reward": float(expected),
            "optimal_action": int(optimal),
            "context": c,
        }
        info.update((key, v.item() if np.ndim(v) == 0 else v) for key, v in self.problem.round_info(c).items())
        truncated = self._end_step()
        if self._renderer is not None:
            self._renderer.record(a, float(reward), info)
        self._context = next(self._context_stream)
        return self.problem.features_of(self._context), float(reward), False, truncated, info


class RecommendationVectorEnv(_RecommendationCore, BanditVectorEnv):
    """``num_envs`` independent copies stepped by one numpy call (the scenario subclasses document the rest).

    Memory: a copy takes about 2.5 KiB + 16·n_arms·d + 32·n_arms bytes (:func:`copy_bytes`; 9 KiB
    at the default 20 arms and d = 20), plus its buffered contexts and noise (8 bytes apiece: 4096
    of each while all copies' buffers fit in 1 MiB each, fewer beyond, at least 512 each up to 8192
    copies, 64 MiB in all beyond: :func:`buffer_budget`). ``num_envs`` whose copies would exceed
    :func:`bandit_envs.validation.memory_limit` is refused. ``render_mode`` as the single env's, for at
    most :data:`~bandit_envs.rendering.MAX_RENDERED_COPIES` copies: ``render()`` returns the tuple of
    the copies' frames.
    """

    def _init_env(
        self,
        num_envs: Any,
        build: Callable[[], Problem],
        reward_noise: Any,
        horizon: Any,
        render_mode: str | None = None,
    ) -> None:
        check_render_mode(self.env_id, render_mode, num_envs)
        num_envs = check_int("num_envs", num_envs, minimum=1)  # a Python int: numpy integers overflow below
        self._setup(build, reward_noise, horizon)
        half = buffer_budget(num_envs)  # for each of the contexts and the noise
        per_copy = copy_bytes(self.n_arms, self.dim)
        n = check_num_envs(self.env_id, num_envs, per_copy, [(BLOCK, 8), (BLOCK, 8)], budget=half)
        action_space, observation_space = self._spaces()
        self._init_copies(n, action_space, observation_space, _batched_box(observation_space, n))
        # The episode's context and noise streams of every copy: states in arrays, not Generators.
        self._context_states, self._noise_states = StreamStates(n), StreamStates(n)
        self._restart_streams(self._all)
        self._contexts = NoiseBlocks(n, BLOCK, dtype=np.int64, budget=half)
        self._noise = NoiseBlocks(n, BLOCK, budget=half)
        self._context = np.zeros(n, dtype=np.int64)
        self._init_rendering(render_mode)

    def round_contexts(self, n_rounds: int, seed: int) -> IntArray:
        """(num_envs, n_rounds): row i is the single env's ``round_contexts(n_rounds, seed + i)``."""
        self._check_rounds(n_rounds, self.num_envs)
        seed = check_int("seed", seed, minimum=0)
        return np.stack([self._round_contexts(n_rounds, seed + i) for i in range(self.num_envs)])

    def round_noise(self, n_rounds: int, seed: int) -> FloatArray:
        """(num_envs, n_rounds): row i is the single env's ``round_noise(n_rounds, seed + i)``."""
        self._check_rounds(n_rounds, self.num_envs)
        seed = check_int("seed", seed, minimum=0)
        return np.stack([self._round_noise(n_rounds, seed + i) for i in range(self.num_envs)])

    def _restart(self, which: BoolArray) -> None:
        self._restart_streams(which)
        self._contexts.restart(which, _ENDLESS)
        self._noise.restart(which, _ENDLESS)

    def _restart_streams(self, which: BoolArray) -> None:
        """Seed the episode streams of the copies ``which`` from their generators (:func:`episode_seeds`).

        In two compiled calls for all of them (:func:`~bandit_envs.recommendation._pcg64.fill_episode_seeds`,
        :func:`~bandit_envs.recommendation._pcg64.seed_streams`): through numpy, seeding a copy's
        streams cost about 50 us, which every copy paid at the end of each episode.
        """
        copies = np.flatnonzero(which)
        seeds = np.empty((copies.size, 2), dtype=np.uint64)
        _pcg64.fill_episode_seeds(self._bitgens, copies, seeds)
        # The columns as C arrays (bandit_envs._jit.kernel_array): one compiled version, whatever the count.
        _pcg64.seed_streams(self._context_states.words, copies, kernel_array(seeds[:, 0], np.uint64))
        _pcg64.seed_streams(self._noise_states.words, copies, kernel_array(seeds[:, 1], np.uint64))

    def _draw_contexts(self, copy: int, size: int) -> IntArray:
        return self._context_states.draw(copy, lambda rng: draw_contexts(self.problem, rng, size))

    def _draw_noise(self, copy: int, size: int) -> FloatArray:
        return self._noise_states.draw(copy, lambda rng: draw_noise(rng, self.reward_noise, size))

    def _refill_contexts(self, copies: IntArray, counts: IntArray, block: IntArray) -> None:
        """:meth:`_draw_contexts` of every copy in ``copies`` into its buffer: one compiled pass, one map."""
        uniforms = np.empty((int(counts.sum()), self.problem.n_uniforms))
        _pcg64.fill_uniforms(self._context_states.words, copies, counts, uniforms)
        starts = np.cumsum(counts) - counts
        block[np.repeat(copies, counts), np.arange(uniforms.shape[0]) - np.repeat(starts, counts)] = (
            self.problem.contexts(uniforms)
        )

    def _refill_noise(self, copies: IntArray, counts: IntArray, block: FloatArray) -> None:
        """:meth:`_draw_noise` of every copy in ``copies`` into its buffer, in one compiled pass."""
        _pcg64.fill_normals(self._noise_states.words, copies, counts, self.reward_noise, block)

    def _next_contexts(self) -> IntArray:
        """The next context of every copy (the compiled refill where numba's ziggurat tables were found)."""
        return self._contexts.next(self._draw_contexts, refill=self._refill_contexts if _pcg64.AVAILABLE else None)

    def _next_noise(self, playing: BoolArray) -> FloatArray:
        """The next noise value of every playing copy (0 for copies restarting this step)."""
        if self.reward_noise == 0.0:
            return np.zeros(self.num_envs)
        refill = self._refill_noise if _pcg64.AVAILABLE else None
        return np.where(playing, self._noise.next(self._draw_noise, active=playing, refill=refill), 0.0)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Reset every copy; ``seed=s`` seeds copy i with ``s + i`` (or ``seed[i]`` for a list)."""
        check_options(self.env_id, options)
        self._seed(seed)
        self._restart_all()
        self._context = self._next_contexts()
        static = self.problem.static_info()
        info = {key: np.array([value] * self.num_envs) for key, value in static.items()}
        return self.problem.features_of(self._context), info

    def _play(self, actions: IntArray, restarting: BoolArray) -> tuple[Any, FloatArray, dict[str, Any]]:
        playing = ~restarting
        c = self._context
        reward, expected, regret, optimal = outcome(self.problem, c, actions, self._next_noise(playing))
        info = {"regret": regret, "expected_reward": expected, "optimal_action": optimal, "context": c}
        info.update(self.problem.round_info(c))
        if np.count_nonzero(restarting):  # the restarting copies played no round: reward, regret 0; indices and ids -1
            reward = np.where(playing, reward, 0.0)
            info = {key: _masked(playing, v, 0.0 if key in _ZERO_WHEN_RESTARTING else -1) for key, v in info.items()}
        self._context = self._next_contexts()
        return self.problem.features_of(self._context), reward, info
