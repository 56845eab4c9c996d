"""A stable-baselines3 model as an agent: ``SB3Agent`` acts through ``act``/``update``/``reset``.

The adapter lets a trained (or still training) SB3 model run in the same loop, runner and
experiments as the bandit agents (``banditlab run rl/graph`` puts PPO and DQN beside UCB-N and
GAP). It imports torch and stable-baselines3 only inside the calls that need them (the model it is
given already did), so importing :mod:`agents` stays light.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from agents.base import Agent, _space, check_int, describe, quote
from agents.common.streams import CopyStreams, copy_uniforms
from bandit_envs._types import IntArray
from bandit_envs.validation import not_numbers

if TYPE_CHECKING:
    from stable_baselines3.common.base_class import BaseAlgorithm


#: Observation spaces whose observations are one array each, which the agent checks and passes to the model.
_OBS_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def _obs_bounds(space: Any) -> tuple[str, npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]:
    """(dtype kinds allowed, low, high, the space's own low, high) of an observation space of :data:`_OBS_SPACES`.

    ``low`` and ``high`` (arrays of the observation's shape, or 0-d) are the inclusive bounds an
    observation is compared with: a Box's own bounds with the infinite ones replaced by the largest
    finite floats (so that NaN and infinities fail the comparison), a Discrete space's
    [start, start + n - 1], a MultiDiscrete space's [start, start + nvec - 1], a MultiBinary
    space's [0, 1].
    """
    big = np.finfo(np.float64).max
    if isinstance(space, spaces.Box):
        low, high = np.asarray(space.low, dtype=np.float64), np.asarray(space.high, dtype=np.float64)
        return "iuf", np.clip(low, -big, big), np.clip(high, -big, big), low, high
    if isinstance(space, spaces.Discrete):
        start = np.asarray(int(space.start))
        return "iu", start, start + int(space.n) - 1, start, start + int(space.n) - 1
    if isinstance(space, spaces.MultiDiscrete):
        start = np.asarray(getattr(space, "start", 0), dtype=np.int64) + np.zeros(space.nvec.shape, dtype=np.int64)
        return "iu", start, start + space.nvec - 1, start, start + space.nvec - 1
    zeros = np.zeros(space.shape, dtype=np.int64)
    return "biu", zeros, zeros + 1, zeros, zeros + 1


class SB3Agent(CopyStreams, Agent):
    """Act with a stable-baselines3 model (PPO, A2C, DQN, …) through the agent interface.

    ``act(obs)`` feeds ``obs`` to the model, so ``obs`` must be what the model was trained on:
    run the agent on the same (wrapped) env, e.g. ``ArmStatistics(env)`` for a model trained
    through :class:`bandit_envs.wrappers.ArmStatistics`. Bandit agents ignore observations and
    the wrappers pass ``info`` through unchanged, so bandit and RL agents can share that env.

    Acting. ``deterministic=True`` (default) plays ``model.predict(obs, deterministic=True)``:
    the greedy action. ``deterministic=False`` plays the policy as it acts in training, with
    draws from the agent's own generator (``seed``; copy i of a batch from its own, docs/design.md,
    "Agents", Seeds), not SB3's global ones: actor-critic models
    (PPO, A2C) sample their action distribution; DQN is ε-greedy with ``model.exploration_rate``.
    A policy that learned to explore by randomizing (PPO on :class:`ArmStatistics`, see
    ``docs/rl.md``) explores only when stochastic.

    Observations. ``act`` refuses, in one sentence and before the model sees it, an ``obs`` that
    is not an observation of the model's observation space: not an array of numbers of the
    space's kind (a string, a masked array, a list holding a bool, a float or a bool for a
    Discrete space), of another shape, or with a value outside the space (NaN, an infinity, a
    number beyond a Box's bounds, a Discrete index out of range). Torch would otherwise fail deep
    inside the policy, or truncate a float to an index and act on it.

    Learning. ``update`` does nothing by default: the model is trained elsewhere, with
    ``model.learn(env)``, and the agent uses its weights as they are (so a model can be evaluated
    between calls to ``learn``). ``learn_online=True`` keeps training an off-policy model (DQN)
    from the agent's own interaction, as ``model.learn`` would: each transition (obs, action,
    reward, next obs) goes to ``model.replay_buffer`` when the next ``act`` shows the next
    observation (so ``update`` must follow each ``act`` once); ``model._on_step()`` runs after
    each (target network, ε schedule) and ``model.train`` every ``model.train_freq`` steps past
    ``model.learning_starts``. With ``total_timesteps`` the model's schedules (learning rate, ε)
    run over that many agent steps as in ``learn(total_timesteps)``; without it they stay where
    they are. On-policy models (PPO, A2C) collect their own rollouts: train them with
    ``model.learn`` (for a native vector env through :class:`bandit_envs.wrappers.SB3VecEnv`).

    Normalised observations. A model trained under stable-baselines3's ``VecNormalize`` with
    ``norm_obs=True`` learned on normalised observations, and ``model.predict`` does not normalise:
    ``act`` does, with that ``VecNormalize``'s statistics (``normalize_obs``: its running mean and
    variance, then its ``clip_obs``), after checking ``obs`` against the model's observation space
    as the raw env gives it. By default it is the model's own (``model.get_vec_normalize_env()``,
    set while the model trains on a ``VecNormalize``); a model loaded from a file has none, so pass
    the one saved beside it (``VecNormalize.load(path, venv)``) as ``vec_normalize``. The statistics
    are only read, never updated, whatever the ``VecNormalize``'s ``training`` flag. With
    ``learn_online`` the replay buffer receives the raw observations, as ``model.learn`` stores
    them under a ``VecNormalize`` (its ``train`` normalises the samples).

    ``reset()`` starts a new episode: it reseeds the generator and drops the transition waiting
    for its next observation (the last one of an episode is not stored, as its next observation
    is never shown). It keeps the model's weights, which is what an RL agent learns.

    Parameters
    ----------
    model
        A stable-baselines3 model with a ``Discrete(K)`` action space (K ≥ 2) and a Box, Discrete,
        MultiDiscrete or MultiBinary observation space (not a Dict or Tuple space).
    deterministic
        Greedy actions (True) or the training-time policy (False: an actor-critic policy or
        DQN); see above.
    learn_online
        Keep training an off-policy model from the agent's updates; see above.
    total_timesteps
        With ``learn_online``: agent steps over which the model's schedules run (≥ 1).
    name
        Name in tables and figures (default: the model's class name, e.g. ``"PPO"``).
    vec_normalize
        A stable-baselines3 ``VecNormalize`` whose observation statistics ``act`` applies (see
        "Normalised observations"); default: the model's own, if it was trained under one.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step (``act`` takes a batch
        of N observations). With ``learn_online`` it must equal the model's number of envs.
    seed
        Seed of the agent's generator (stochastic acting); copy i of a batch draws as a single agent
        seeded ``seed + i`` (:mod:`agents.common.streams`).
    """

    name = "SB3"
    reads_obs = True  # the model's input

    def __init__(
        self,
        model: BaseAlgorithm,
        deterministic: bool = True,
        *,
        learn_online: bool = False,
        total_timesteps: int | None = None,
        name: str | None = None,
        vec_normalize: Any = None,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        action_space = getattr(model, "action_space", None)
        if not callable(getattr(model, "predict", None)) or not isinstance(action_space, spaces.Discrete):
            raise TypeError(
                "model must be a stable-baselines3 model with a Discrete action space (e.g. PPO, A2C, DQN), "
                f"got {type(model).__name__} with action space {action_space!r}."
            )
        if int(action_space.start) != 0 or int(action_space.n) < 2:
            raise ValueError(
                f"model's action space must be Discrete(K) with K >= 2 arms starting at 0, got {action_space!r}."
            )
        obs_space = getattr(model, "observation_space", None)
        if not isinstance(obs_space, _OBS_SPACES):
            raise TypeError(
                "model's observation space must be a Box, Discrete, MultiDiscrete or MultiBinary space (one array "
                f"per observation), got {obs_space!r}."
            )
        super().__init__(int(action_space.n), n_envs=n_envs, seed=seed)
        for flag, value in (("deterministic", deterministic), ("learn_online", learn_online)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{flag} must be True or False, got {describe(value)}.")
        deterministic, learn_online = bool(deterministic), bool(learn_online)  # numpy's np.True_ as True
        self.model = model
        self.deterministic = deterministic
        self.learn_online = learn_online
        if total_timesteps is not None:
            total_timesteps = check_int("total_timesteps", total_timesteps, minimum=1)
        self.total_timesteps = total_timesteps
        if name is not None:
            if not isinstance(name, str) or not name:
                raise TypeError(f"name must be a non-empty string, got {describe(name)}.")
            self.name = name
        else:
            self.name = type(model).__name__
        self._obs_space = obs_space
        self._obs_shape: tuple[int, ...] = tuple(obs_space.shape or ())
        bounds = _obs_bounds(obs_space)
        self._obs_kinds, self._obs_low, self._obs_high, self._obs_space_low, self._obs_space_high = bounds
        if not deterministic:
            policy = getattr(model, "policy", None)
            if not callable(getattr(policy, "get_distribution", None)) and not hasattr(model, "exploration_rate"):
                raise ValueError(
                    f"deterministic=False needs an actor-critic policy (PPO, A2C) or DQN, got {type(model).__name__}."
                )
        self.vec_normalize = self._normalizer(vec_normalize)
        if learn_online:
            self._check_online()
        self._reset_state()

    def _normalizer(self, given: Any) -> Any:
        """The ``VecNormalize`` whose observation statistics ``act`` applies, or None (see the class docstring)."""
        if given is None:
            own = getattr(self.model, "get_vec_normalize_env", None)
            given = own() if callable(own) else None
            if given is None or not getattr(given, "norm_obs", False):
                return None
        from stable_baselines3.common.vec_env import VecNormalize

        if not isinstance(given, VecNormalize):
            raise TypeError(
                "vec_normalize must be a stable-baselines3 VecNormalize (e.g. VecNormalize.load(path, venv)), "
                f"got {describe(given)}."
            )
        space = given.observation_space
        if not isinstance(space, _OBS_SPACES) or tuple(space.shape or ()) != self._obs_shape:
            raise ValueError(
                f"vec_normalize must normalise the model's observations of shape {self._obs_shape}, "
                f"got a VecNormalize of observation space {space!r}."
            )
        return given

    def check_env(self, env: Any) -> None:
        """Check that ``env`` fits the agent: the model's number of arms and observation shape, and the copies.

        Raises
        ------
        ValueError
            One sentence naming what differs.
        """
        super().check_env(env)
        space = _space(env, "observation_space")
        shape = tuple(getattr(space, "shape", None) or ())
        if shape != self._obs_shape:
            raise ValueError(
                f"env must have the model's observation shape {self._obs_shape}, got observations of shape {shape}."
            )
        if isinstance(self._obs_space, spaces.Discrete) and space != self._obs_space:
            raise ValueError(f"env must have the model's observation space {self._obs_space}, got {space!r}.")

    def _check_online(self) -> None:
        model: Any = self.model
        buffer = getattr(model, "replay_buffer", None)
        if buffer is None or not callable(getattr(model, "train", None)):
            raise ValueError(
                f"learn_online needs an off-policy model with a replay buffer (e.g. DQN), got {type(model).__name__}; "
                "train on-policy models (PPO, A2C) with model.learn(env)."
            )
        if buffer.n_envs != self.batch:
            raise ValueError(
                f"learn_online needs n_envs to match the model's number of envs ({buffer.n_envs}), "
                f"got n_envs={self.n_envs}."
            )
        if model.train_freq.unit.value != "step":
            raise ValueError(f"learn_online needs a train_freq counted in steps, got {model.train_freq!r}.")
        if getattr(model, "_logger", None) is None:
            from stable_baselines3.common.logger import Logger

            model.set_logger(Logger(folder=None, output_formats=[]))

    def _reset_state(self) -> None:
        self._seed_copies()
        self._last_obs: npt.NDArray[Any] | None = None
        self._pending: tuple[npt.NDArray[Any], IntArray, npt.NDArray[np.float64]] | None = None
        self._online_steps = 0

    def _as_batch(self, obs: Any) -> npt.NDArray[Any]:
        """``obs`` as an array with the batch axis, checked against the model's observation space.

        Refused before the model sees it: what is not an array of numbers of the space's kind (a
        string, a masked array, a list holding a bool, a float for a Discrete space), another shape,
        and values outside the space (NaN, infinities, a Box's bounds, a Discrete space's range),
        on which torch would fail deep inside the policy or which it would truncate silently.
        """
        space = self._obs_space
        if type(obs) is np.ndarray:
            x = obs
        else:
            odd = None if "b" in self._obs_kinds else not_numbers(obs)
            if odd is not None or isinstance(obs, np.ma.MaskedArray | str | bytes):
                raise TypeError(f"{self._obs_wanted()}, got {odd or describe(obs)}.")
            try:
                x = np.asarray(obs)
            except (TypeError, ValueError):
                raise TypeError(f"{self._obs_wanted()}, got {describe(obs)}.") from None
        if x.dtype.kind not in self._obs_kinds:
            what = self._obs_wanted()
            if x.dtype.kind == "O" and isinstance(obs, numbers.Integral) and not isinstance(obs, bool):
                lo, hi = self._obs_space_low.min(), self._obs_space_high.max()
                raise ValueError(f"{what} (in [{lo:g}, {hi:g}]), got {describe(obs, typed=False)}.")  # beyond int64
            allowed = {"iuf": "real numbers", "iu": "integers", "biu": "booleans or integers 0 and 1"}[self._obs_kinds]
            raise TypeError(f"{what} ({allowed}), got {describe(obs)}.")
        if self.n_envs is None and x.shape == self._obs_shape:
            x = x[None]
        elif x.shape != (self.batch, *self._obs_shape):
            expected = self._obs_shape if self.n_envs is None else (self.batch, *self._obs_shape)
            raise ValueError(
                f"obs must have shape {expected} (the model's observation space {space}"
                f"{'' if self.n_envs is None else ' with a batch axis'}), got shape {x.shape}."
            )
        low, high = self._obs_low, self._obs_high
        ok = (x >= low) & (x <= high)  # NaN fails, and so do infinities (the bounds are finite)
        if not ok.all():
            index = tuple(int(i) for i in np.argwhere(~ok)[0])
            entry = index[1:]
            lo, hi = self._obs_space_low[entry], self._obs_space_high[entry]
            where = f" at entry {entry}" if entry else ""
            copy = "" if self.n_envs is None else f" for copy {index[0]}"
            allowed = f"a finite number in [{lo:g}, {hi:g}]" if "f" in self._obs_kinds else f"in [{lo:g}, {hi:g}]"
            raise ValueError(
                f"obs must lie in the model's observation space {space} ({allowed}{where}), "
                f"got {quote(x[index].item())}{copy}."
            )
        return x

    def _obs_wanted(self) -> str:
        """The start of a refusal of ``obs``: what it must be."""
        copies = "" if self.n_envs is None else " with a batch axis"
        return f"obs must be an observation of the model's observation space {self._obs_space}{copies}"

    def _choose(self, x: npt.NDArray[Any]) -> IntArray:
        model: Any = self.model
        if self.deterministic:
            actions, _ = model.predict(x, deterministic=True)
            return np.asarray(actions, dtype=np.int64).reshape(self.batch)
        policy: Any = getattr(model, "policy", None)  # DQN-like models are recognised by exploration_rate alone
        rngs = self._copy_rngs  # copy i's generator: a single agent's seeded seed + i
        if self.n_envs is None:
            u = self.rng.random(1)
        else:  # each copy's Generator.random(), drawn in one compiled call
            u = np.empty(self.batch)
            copy_uniforms(self._bitgens, u)
        if callable(getattr(policy, "get_distribution", None)):
            import torch

            policy.set_training_mode(False)
            with torch.no_grad():
                dist = policy.get_distribution(policy.obs_to_tensor(x)[0])
                probs = dist.distribution.probs.cpu().numpy().astype(np.float64)
            # Inverse CDF with the agent's uniform: one draw per copy, whatever the policy.
            actions = (np.cumsum(probs, axis=1) < u[:, None] * probs.sum(axis=1, keepdims=True)).sum(axis=1)
            return np.minimum(actions, self.n_arms - 1).astype(np.int64)
        if hasattr(model, "exploration_rate"):
            greedy, _ = model.predict(x, deterministic=True)
            if self.n_envs is None:
                arms = self.rng.integers(self.n_arms, size=1)
            else:
                arms = np.array([g.integers(self.n_arms) for g in rngs], dtype=np.int64)
            greedy = np.asarray(greedy, dtype=np.int64).reshape(self.batch)
            return np.where(u < model.exploration_rate, arms, greedy)
        raise ValueError(
            f"deterministic=False needs an actor-critic policy (PPO, A2C) or DQN, got {type(model).__name__}."
        )

    def act(self, obs: Any = None) -> Any:
        """The model's action for ``obs`` (an int), or one per copy for a batch of N observations."""
        if obs is None:
            raise ValueError("obs must be the env's observation (the model's input), got None.")
        x = self._as_batch(obs)
        if self._pending is not None:
            self._store(x)
        self._last_obs = x  # raw: the replay buffer stores what the env gave (see the class docstring)
        if self.vec_normalize is not None:
            x = np.asarray(self.vec_normalize.normalize_obs(x), dtype=np.float32)
        return self._out(self._choose(x))

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Check the feedback; with ``learn_online``, also remember the step until its next observation."""
        a, r = self._feedback(action, reward, info)
        if not self.learn_online:
            return
        if self._last_obs is None:
            raise RuntimeError(
                "update() must follow act(), once per act(): the transition starts at the observation act() saw."
            )
        self._pending = (self._last_obs, a, r)
        self._last_obs = None  # a second update() before the next act() would overwrite this transition

    def _store(self, next_obs: npt.NDArray[Any]) -> None:
        """Add the pending transition to the replay buffer and train as ``model.learn`` would."""
        assert self._pending is not None
        obs, actions, rewards = self._pending
        self._pending = None
        model: Any = self.model
        b = self.batch
        model.replay_buffer.add(obs, next_obs, actions, rewards, np.zeros(b), [{} for _ in range(b)])
        model.num_timesteps += b
        self._online_steps += 1
        if self.total_timesteps is not None:
            model._update_current_progress_remaining(model.num_timesteps, self.total_timesteps)
        model._on_step()
        if model.num_timesteps > model.learning_starts and self._online_steps % model.train_freq.frequency == 0:
            steps = model.gradient_steps if model.gradient_steps >= 0 else model.train_freq.frequency * b
            if steps > 0:
                model.train(gradient_steps=steps, batch_size=model.batch_size)
