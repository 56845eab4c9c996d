"""The Gymnasium layer shared by both budget scenarios: one user-env and its native vector env.

A scenario module supplies its config type (the validated keywords) and its instance builder (its
world for a list of users, their oracles and sensitivity levels); these classes add the payoff and
the info contract on top of :mod:`bandit_envs.core` (checks, seeding, noise blocks, autoreset).
The single and the vector env call the same pure transition, :meth:`_BudgetCore._transition`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bandit_envs._draw_kernels import fill_doubles, skip_doubles
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.budget._core import BLOCK_ROWS, BudgetConfig, Oracle, SensitivityModel, World, payoff
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
from bandit_envs.rendering import Scene, budget_scene
from bandit_envs.validation import check_int, masked_array, summarize

#: Upper bound of the noise columns a step of either scenario consumes (MovieLens 4, Gowalla 5).
MAX_NOISE_COLUMNS = 6


def copy_bytes(n_budgets: int) -> int:
    """Memory of one copy of a budget vector env besides its buffered noise rows (at most 48 bytes a row).

    Its generator, its per-copy tables (3 per arm), its reset info (a dict of per-arm arrays,
    stacked), and its share of a step's arrays: about 3.5 KiB + 80·K bytes for K budgets.
    """
    return GENERATOR_BYTES + 2048 + 80 * n_budgets


@dataclass(frozen=True)
class Instance:
    """Everything an env needs about its users: the world, and per distinct user its oracle and phi_n."""

    world: World
    users: IntArray
    oracles: tuple[Oracle, ...]
    levels: FloatArray
    budgets: FloatArray
    sensitivity: SensitivityModel


class _BudgetCore(ABC):
    """Payoff tables and the pure transition shared by the single and the vector env.

    A scenario sets ``env_id``, ``config_type`` and ``build_instance`` (config, one user per copy
    and the name each was given by -> the instance and, per copy, the index of its user in it).
    """

    env_id: ClassVar[str] = ""
    config_type: ClassVar[type[BudgetConfig]] = BudgetConfig

    @staticmethod
    @abstractmethod
    def build_instance(config: Any, users: list[Any], names: list[str]) -> tuple[Instance, IntArray]:
        """The scenario's instance for ``users`` (one per copy) and each copy's index into it.

        ``names`` are the arguments the users were given by (``user``, or ``users[2]`` in a vector
        env given ``users``), for the sentence that refuses one.
        """

    def _setup(self, config: BudgetConfig, instance: Instance, who: IntArray) -> None:
        self.config = config
        self.gamma = config.gamma
        self.horizon = config.horizon
        self.instance = instance
        self.budgets = instance.budgets
        self.n_budgets = self.n_actions = int(instance.budgets.size)
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

    def _scene(self) -> Scene:
        """Arms labelled by budget; the step's ε, φ_t, L and R (:func:`~bandit_envs.rendering.budget_scene`)."""
        return budget_scene(self.env_id, self.horizon, self.budgets)

    def _spaces(self) -> tuple[spaces.Discrete, Any]:
        return spaces.Discrete(self.n_budgets), spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)

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


class BudgetEnv(_BudgetCore, BanditEnv[FloatArray]):
    """One user choosing a privacy budget each round (the scenario subclasses document the rest).

    ``data`` and ``user`` may be given by position; every other keyword is a field of the
    scenario's ``config_type``. An episode consumes ``horizon + 1`` noise rows (the reset's and one
    per step).

    ``render_mode``: None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, action, payoff, regret so far, the step's ε, sensitivity φ_t, loss L and
    recommendation reward R, and per budget its pulls and empirical mean payoff),
    ``"rgb_array"`` (a 360 × 640 × 3 uint8 picture: those figures, a bar per budget and the regret
    curve) or ``"human"`` (the text frame printed at every reset and step). See
    :mod:`bandit_envs.rendering`.
    """

    def __init__(self, data: Any = None, user: Any = None, *, render_mode: str | None = None, **keywords: Any) -> None:
        check_render_mode(self.env_id, render_mode)
        config = self.config_type.from_keywords(type(self).__name__, {"data": data, "user": user, **keywords})
        instance, who = type(self).build_instance(config, [config.user], ["user"])
        self.user = int(instance.users[0])
        self._setup(config, instance, who)
        self.action_space, self.observation_space = self._spaces()
        self._noise = NoiseBlock(self._draw, BLOCK_ROWS)
        self._rows: Iterator[FloatArray] = iter(())
        self._t = self.horizon  # no episode before the first reset
        self._state = np.zeros(1, dtype=np.int64)
        self._phi = np.zeros(1)
        self._init_rendering(render_mode)

    def _draw(self, rows: int) -> FloatArray:
        return self.np_random.random((rows, self._width))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Start an episode: draw the first datum and its sensitivity (the observation)."""
        check_options(self.env_id, options)
        self._start_episode(seed)
        self._rows = self._noise.restart(self.horizon + 1)
        self._state, self._phi = self._start(next(self._rows)[None])
        return self._phi.copy(), self._reset_info(0)

    def step(self, action: Any) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        """Send the current datum with budget ``budgets[action]``; observe the next datum's sensitivity."""
        a = self._check_step(action)
        self._state, reward, next_phi, info = self._transition(
            self._state, np.array([a]), self._phi, next(self._rows)[None]
        )
        self._phi = next_phi
        scalar_info = {key: value[0].item() for key, value in info.items()}
        if self._renderer is not None:
            self._renderer.record(a, float(reward[0]), scalar_info)
        return next_phi.copy(), float(reward[0]), False, self._end_step(), scalar_info


class BudgetVectorEnv(_BudgetCore, BanditVectorEnv):
    """``num_envs`` copies stepped by one numpy call; copy i may be a different user.

    Memory: a copy takes about 3.5 KiB + 80·K bytes for K budgets (:func:`copy_bytes`), plus its
    buffered noise rows (512 rows of 8·(n_noise + 1) bytes while all copies' rows fit in 64 MiB,
    fewer beyond): at K = 10, about 20 KiB per copy up to 3,000-4,000 copies and 5 KiB per copy at
    100,000. ``num_envs`` whose copies would exceed :func:`bandit_envs.validation.memory_limit` is
    refused before anything is built. A reset without a seed in the middle of an episode first draws,
    in each copy, the rows its single env would hold unread, so the copies follow their single envs
    whatever the size of their buffers. ``render_mode`` as the single env's, for at most
    :data:`~bandit_envs.rendering.MAX_RENDERED_COPIES` copies: ``render()`` returns the tuple of
    the copies' frames.
    """

    def __init__(
        self,
        num_envs: int = 1,
        users: Any = None,
        data: Any = None,
        user: Any = None,
        *,
        render_mode: str | None = None,
        **keywords: Any,
    ) -> None:
        check_render_mode(self.env_id, render_mode, num_envs)
        config = self.config_type.from_keywords(type(self).__name__, {"data": data, "user": user, **keywords})
        k = int(config.budget_grid.size)
        n = check_num_envs(self.env_id, num_envs, copy_bytes(k), [(BLOCK_ROWS, 8 * MAX_NOISE_COLUMNS)])
        per_copy = copy_users(users, user, n)
        names = ["user"] * n if users is None else [f"users[{i}]" for i in range(n)]
        instance, who = type(self).build_instance(config, per_copy, names)
        self.users = instance.users[who]
        self._setup(config, instance, who)
        self._init_copies(n, *self._spaces())
        self._noise = NoiseBlocks(n, BLOCK_ROWS, (self._width,))
        self._state = np.zeros(n, dtype=np.int64)
        self._phi = np.zeros(n)
        self._init_rendering(render_mode)

    def _draw(self, copy: int, rows: int) -> FloatArray:
        return self._rngs[copy].random((rows, self._width))

    def _refill(self, copies: IntArray, counts: IntArray, block: FloatArray) -> None:
        """:meth:`_draw` of every copy in ``copies`` into its buffer, in one compiled pass."""
        fill_doubles(self._bitgens, copies, counts, block)

    def _restart(self, which: BoolArray) -> None:
        self._noise.restart(which, self.horizon + 1)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        """Reset every copy; ``seed=s`` seeds copy i with ``s + i`` (or ``seed[i]`` for a list)."""
        check_options(self.env_id, options)
        if self._reset_once and self._keeps_streams(seed):
            self._discard_block_rests()
        self._seed(seed)
        self._restart_all()
        self._state, self._phi = self._start(self._noise.next(self._draw, refill=self._refill))
        infos = [self._reset_info(i) for i in range(self.num_envs)]
        info = {key: np.array([d[key] for d in infos]) for key in infos[0]}
        return self._phi[:, None].copy(), info

    def _discard_block_rests(self) -> None:
        """Draw and drop, in each copy, the rows its single env holds unread when reset in mid-episode.

        The single env draws its rows :data:`~bandit_envs.budget._core.BLOCK_ROWS` at a time
        (fewer at the episode's end) and a reset drops the unread ones; a copy's buffer holds fewer
        rows when many copies share the noise budget (:class:`~bandit_envs.core.NoiseBlocks`), so
        before a reset without a seed each copy draws the rows its single env would have drawn
        beyond its own. The next episode then continues the stream where the single env's does,
        whatever ``num_envs``.
        """
        noise, rows = self._noise, self.horizon + 1
        drawn = rows - noise.left
        consumed = drawn - (noise.len - noise.pos)
        single = np.minimum(rows, -(-consumed // BLOCK_ROWS) * BLOCK_ROWS)
        if (single > drawn).any():
            skip_doubles(self._bitgens, np.maximum(single - drawn, 0) * self._width)

    def _play(self, actions: IntArray, restarting: BoolArray) -> tuple[Any, FloatArray, dict[str, Any]]:
        rows = self._noise.next(self._draw, refill=self._refill)
        state, reward, phi, info = self._transition(self._state, actions, self._phi, rows)
        if np.count_nonzero(restarting):
            # NEXT_STEP autoreset: the row is the restarting copies' reset row; they play nothing.
            start_state, start_phi = self._start(rows)
            state = np.where(restarting, start_state, state)
            phi = np.where(restarting, start_phi, phi)
            reward = np.where(restarting, 0.0, reward)
            for key in ("privacy_loss", "recommendation_reward", "regret", "expected_reward", "fixed_arm_regret"):
                info[key] = np.where(restarting, 0.0, info[key])
        self._state, self._phi = state, phi
        return phi[:, None].copy(), reward, info


def copy_users(users: Any, user: Any, num_envs: int) -> list[Any]:
    """One user per copy: ``users`` (a list, tuple or 1-D array of ``num_envs`` ids) or ``user`` repeated."""
    if users is None:
        return [user] * num_envs
    if isinstance(users, np.ma.MaskedArray):  # its masked entries would be read as ids
        raise TypeError(f"users must be a list of user ids (one per copy), got {masked_array(users)}.")
    # An ordered collection: copy i is users[i] (a set has no order, a 2-D array no single id per entry).
    if isinstance(users, str | bytes) or not (
        isinstance(users, Sequence) or (isinstance(users, np.ndarray) and users.ndim == 1)
    ):
        raise TypeError(
            f"users must be a list of user ids (one per copy), got {summarize(users)} ({type(users).__name__})."
        )
    listed = [u.item() if isinstance(u, np.generic) else u for u in users]
    if len(listed) != num_envs:
        raise ValueError(
            f"users must list one user id per copy (num_envs={num_envs}), got {len(listed)} ids; "
            "repeat ids (e.g. numpy.repeat) for several copies of a user."
        )
    if user is not None:
        raise ValueError(f"give either user or users, not both (got user={summarize(user)}).")
    for i, u in enumerate(listed):  # named as given: the scenario's own check would say "user"
        if u is not None:
            check_int(f"users[{i}]", u)
    return listed
