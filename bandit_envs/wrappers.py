"""Wrappers for reinforcement-learning agents: arm statistics as observations, shuffled arms, SB3 vector envs.

A bandit's observation says nothing about the past (``GraphBandit-v0`` always shows 0), so a
memoryless RL policy can only learn one fixed answer per instance. :class:`ArmStatistics` makes the
history part of the observation (per-arm counts and empirical means), :class:`ShuffleArms` draws a
fresh labelling of the arms each episode so that the answer cannot be memorized: together they turn
"find the best arm" into a task an RL agent can learn across episodes, i.e. learn to explore
(``docs/rl.md``).

:class:`SB3VecEnv` adapts a Gymnasium vector env (our native ones autoreset in ``NEXT_STEP`` mode)
to stable-baselines3's ``VecEnv`` API. It subclasses SB3's ``VecEnv``, so it is built on first
access (``from bandit_envs.wrappers import SB3VecEnv``): importing this module needs neither
stable-baselines3 nor torch.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from bandit_envs._types import FloatArray
from bandit_envs.core import check_action, check_seed
from bandit_envs.validation import check_float, summarize

__all__ = ["ArmStatistics", "ShuffleArms", "SB3VecEnv", "split_vector_info", "update_statistics", "statistics_features"]


# ------------------------------------------------------------------------------ statistics


def update_statistics(
    counts: FloatArray, sums: FloatArray, actions: Any, rewards: Any, info: dict[str, Any] | None = None
) -> None:
    """Add one step of B copies to (B, K) ``counts`` and ``sums``, in place.

    With ``info["observed_mask"]`` and ``info["observed_rewards"]`` (graph feedback) every observed
    arm counts, side observations included; otherwise only the pulled arm with its reward.
    """
    b = counts.shape[0]
    if info is not None and "observed_mask" in info and "observed_rewards" in info:
        mask = np.asarray(info["observed_mask"], dtype=bool).reshape(counts.shape)
        counts += mask
        sums += np.where(mask, np.asarray(info["observed_rewards"], dtype=np.float64).reshape(counts.shape), 0.0)
    else:
        rows = np.arange(b)
        a = np.asarray(actions, dtype=np.int64).reshape(b)
        counts[rows, a] += 1.0
        sums[rows, a] += np.asarray(rewards, dtype=np.float64).reshape(b)


def statistics_features(
    counts: FloatArray, sums: FloatArray, t: Any, reward_range: tuple[float, float]
) -> npt.NDArray[np.float32]:
    """(B, 2K) features: observation frequencies counts / t, then the means scaled to [0, 1].

    ``t`` (scalar or (B,)) is the number of steps taken; before the first step every frequency is
    0. The mean of an arm never observed is 0 (its frequency 0 tells it apart from a bad arm).
    """
    steps = np.broadcast_to(np.asarray(t, dtype=np.float64).reshape(-1, 1), (counts.shape[0], 1))
    freq = np.divide(counts, steps, out=np.zeros_like(counts), where=steps > 0)
    low, high = reward_range
    means = np.divide(sums, counts, out=np.full_like(sums, low), where=counts > 0)
    scaled = np.clip((means - low) / (high - low), 0.0, 1.0)
    return np.concatenate([np.minimum(freq, 1.0), scaled], axis=1).astype(np.float32)


def _check_reward_range(reward_range: Any) -> tuple[float, float]:
    try:
        low, high = reward_range
    except (TypeError, ValueError):
        raise TypeError(f"reward_range must be a pair (low, high), got {summarize(reward_range)}.") from None
    low, high = check_float("reward_range[0]", low), check_float("reward_range[1]", high)
    if not low < high:
        raise ValueError(f"reward_range must satisfy low < high, got {summarize(reward_range)}.")
    if not math.isfinite(high - low):  # the means are scaled by it: (mean - low) / inf would be NaN at the top
        raise ValueError(
            f"reward_range must have a finite width high - low (at most {sys.float_info.max:g}), got "
            f"({low:g}, {high:g}), whose width overflows."
        )
    return low, high


def _discrete_arms(env: gym.Env[Any, Any], wrapper: str) -> int:
    space = env.action_space
    if not isinstance(space, spaces.Discrete) or int(space.start) != 0:
        raise TypeError(f"{wrapper} needs an env whose action space is Discrete(K) starting at 0, got {space!r}.")
    return int(space.n)


class ArmStatistics(gym.Wrapper[npt.NDArray[np.float32], Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Observe the history: per-arm observation frequencies and empirical means (and optionally the env's observation).

    After t steps of an episode the observation is the float32 vector

    ``[n_1/t, …, n_K/t, m̄_1, …, m̄_K (, flattened env observation)]``

    where n_k counts the rewards of arm k observed so far (side observations from
    ``info["observed_mask"]``/``info["observed_rewards"]`` included when the env reports them, as
    ``GraphBandit-v0`` does; otherwise only the pulls of arm k) and m̄_k is their mean scaled by
    ``reward_range`` to [0, 1] (clipped; 0 while n_k = 0). Statistics restart at every ``reset``.
    Rewards, ``terminated``/``truncated`` and ``info`` pass through unchanged, so a bandit agent
    can run on the wrapped env beside an RL agent (same loop, same info).

    Parameters
    ----------
    env
        An env with a ``Discrete(K)`` action space (``GraphBandit-v0``, the privacy-budget envs).
    reward_range
        (low, high) of the rewards, for scaling the means: (0, 1) for ``GraphBandit-v0``;
        (1 − 1/(γ+1), 1 + γ/(γ+1)) for the privacy-budget envs (payoff, eq. 15), e.g. (0.5, 1.5)
        at γ = 1. Finite, low < high, with a finite width high - low.
    keep_observation
        Append the env's own observation, flattened (``gymnasium.spaces.flatten``), e.g. the
        sensitivity φ_t of the budget envs, on which the best budget depends.
    """

    def __init__(
        self, env: gym.Env[Any, Any], reward_range: tuple[float, float] = (0.0, 1.0), keep_observation: bool = False
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, reward_range=reward_range, keep_observation=keep_observation)
        gym.Wrapper.__init__(self, env)
        self.n_arms = _discrete_arms(env, "ArmStatistics")
        self.reward_range = _check_reward_range(reward_range)
        if not isinstance(keep_observation, bool):
            raise TypeError(f"keep_observation must be True or False, got {summarize(keep_observation)}.")
        self.keep_observation = keep_observation
        low, high = np.zeros(2 * self.n_arms), np.ones(2 * self.n_arms)
        if keep_observation:
            flat = spaces.flatten_space(env.observation_space)
            if not isinstance(flat, spaces.Box):
                raise TypeError(f"keep_observation needs an observation space that flattens to a Box, got {flat!r}.")
            low, high = np.concatenate([low, flat.low]), np.concatenate([high, flat.high])
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.counts: FloatArray = np.zeros((1, self.n_arms))
        self.sums: FloatArray = np.zeros((1, self.n_arms))
        self.t = 0

    def _observe(self, obs: Any) -> npt.NDArray[np.float32]:
        features = statistics_features(self.counts, self.sums, self.t, self.reward_range)[0]
        if self.keep_observation:
            own = spaces.flatten(self.env.observation_space, obs)
            features = np.concatenate([features, np.asarray(own, dtype=np.float32)])
        return features

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Reset the env and forget the statistics."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.counts[:] = 0.0
        self.sums[:] = 0.0
        self.t = 0
        return self._observe(obs), info

    def step(self, action: Any) -> tuple[npt.NDArray[np.float32], Any, bool, bool, dict[str, Any]]:
        """Step the env and add what it revealed to the statistics."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        update_statistics(self.counts, self.sums, action, reward, info)
        self.t += 1
        return self._observe(obs), reward, terminated, truncated, info


class ShuffleArms(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Relabel the arms with a fresh uniformly random permutation at every ``reset``.

    Arm ``i`` of the wrapper is arm ``permutation[i]`` of the env. A policy trained on a fixed
    instance can simply memorize its best arm; with shuffled labels it has to find the best arm in
    each episode, which is what a bandit algorithm does. Per-arm info entries are relabelled so
    that they keep their meaning: ``observed_mask``, ``observed_rewards``, ``expected_rewards``,
    ``budgets``, ``expected_recommendation_rewards``, ``expected_loss_factors`` (permuted),
    ``optimal_action`` (mapped to the wrapper's label) and ``feedback_graph`` (rows and columns
    permuted). ``regret`` and ``expected_reward`` are label-free. The env's observation is passed
    on unchanged: use envs whose observation does not index arms (``GraphBandit-v0``, the budget
    envs).

    The permutations come from the wrapper's own generator, seeded by ``reset(seed=s)`` (with a
    stream independent of the env's), so the env's reward draws do not depend on the wrapper.
    """

    #: Info entries indexed by arm (permuted along their last axis).
    PER_ARM: tuple[str, ...] = (
        "observed_mask",
        "observed_rewards",
        "expected_rewards",
        "budgets",
        "expected_recommendation_rewards",
        "expected_loss_factors",
    )

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.n_arms = _discrete_arms(env, "ShuffleArms")
        self._rng = np.random.default_rng()
        self.permutation = np.arange(self.n_arms)
        self._inverse = np.arange(self.n_arms)

    def _relabel(self, info: dict[str, Any]) -> dict[str, Any]:
        out = dict(info)
        for key in self.PER_ARM:
            if key in out:
                out[key] = np.asarray(out[key])[..., self.permutation]
        if "optimal_action" in out:
            out["optimal_action"] = type(out["optimal_action"])(self._inverse[out["optimal_action"]])
        if "feedback_graph" in out:
            out["feedback_graph"] = np.asarray(out["feedback_graph"])[np.ix_(self.permutation, self.permutation)]
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env and draw a new labelling of the arms."""
        seed = check_seed(seed)  # before the wrapper's generator takes it
        if seed is not None:
            self._rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5A1F]))
        self.permutation = self._rng.permutation(self.n_arms)
        self._inverse = np.argsort(self.permutation)
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._relabel(info)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Pull the env's arm ``permutation[action]``; ``action`` is checked as the env checks it."""
        try:
            a = check_action(action, self.n_arms)
        except ValueError:
            raise ValueError(
                f"action must be an integer in [0, {self.n_arms - 1}] (an int or numpy integer), "
                f"got {summarize(action)} ({type(action).__name__})."
            ) from None
        obs, reward, terminated, truncated, info = self.env.step(np.int64(self.permutation[a]))
        return obs, reward, terminated, truncated, self._relabel(info)


# ------------------------------------------------------------------------ SB3 vector envs


def split_vector_info(info: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """A Gymnasium vector info dict (batch axis first, ``_key`` masks) as one dict per copy.

    A nested dict (such as ``final_info``) is split once, when its first copy needs it, and each
    copy takes its part: linear in ``num_envs``, where splitting it again for every copy was quadratic.
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in info.items():
        if key.startswith("_") and key[1:] in info:
            continue
        mask = info.get(f"_{key}")
        parts: list[dict[str, Any]] | None = None
        for i in range(num_envs):
            if mask is not None and not mask[i]:
                continue
            if isinstance(value, dict):
                if parts is None:
                    parts = split_vector_info(value, num_envs)
                out[i][key] = parts[i]
            elif isinstance(value, np.ndarray | list | tuple) and len(value) == num_envs:
                out[i][key] = value[i]
            else:
                out[i][key] = value
    return out


def _indices(indices: int | Iterable[int] | None, num_envs: int) -> list[int]:
    """SB3's ``indices``: None (every copy), one copy's index or an iterable of them, each in [0, num_envs)."""
    if indices is None:
        return list(range(num_envs))
    items: list[Any] = [indices] if isinstance(indices, int | np.integer) else list(indices)
    for i in items:  # a bool or numpy time span is not an index, nor is a float
        if isinstance(i, bool | np.bool_ | np.timedelta64) or not isinstance(i, int | np.integer):
            raise TypeError(f"indices must be copy indices (ints), got {summarize(i)} ({type(i).__name__}).")
        if not 0 <= i < num_envs:
            raise ValueError(f"indices must be copy indices in [0, {num_envs - 1}], got {summarize(i)}.")
    return [int(i) for i in items]


def _same_options(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two copies' reset options are equal, arrays compared by value (``!=`` on them is ambiguous)."""
    if a is b:
        return True
    if a.keys() != b.keys():
        return False
    for key, value in a.items():
        other = b[key]
        if value is other:
            continue
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            both = isinstance(value, np.ndarray) and isinstance(other, np.ndarray)
            if not both or not np.array_equal(value, other):
                return False
            continue
        try:
            if not bool(value == other):
                return False
        except (TypeError, ValueError):  # a value whose == is not a truth value
            return False
    return True


class _SB3VecEnvMethods:
    """The body of :class:`SB3VecEnv` (combined with SB3's ``VecEnv`` base on first access)."""

    num_envs: int
    reset_infos: list[dict[str, Any]]
    _seeds: list[int | None]
    _options: list[dict[str, Any]]

    def __init__(self, vector_env: VectorEnv[Any, Any, Any]) -> None:
        if not isinstance(vector_env, VectorEnv):
            raise TypeError(
                f"vector_env must be a gymnasium.vector.VectorEnv (e.g. gym.make_vec(id, num_envs=N)), "
                f"got {type(vector_env).__name__}."
            )
        mode = vector_env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(
                f"vector_env must autoreset in NEXT_STEP or SAME_STEP mode (SB3 never resets a finished copy "
                f"itself), got {mode!r}."
            )
        self.vector_env = vector_env
        self.autoreset_mode = AutoresetMode(mode)
        self._actions: npt.NDArray[Any] | None = None
        from stable_baselines3.common.vec_env import VecEnv

        VecEnv.__init__(
            self,  # type: ignore[arg-type]
            vector_env.num_envs,
            vector_env.single_observation_space,
            vector_env.single_action_space,
        )

    def reset(self) -> Any:
        """Reset every copy with the seeds (``seed``) and options (``set_options``) given since the last reset."""
        # Our native vector envs take one seed per copy (gymnasium's signature says int | None).
        seeds: Any = None if all(s is None for s in self._seeds) else list(self._seeds)
        if not all(_same_options(o, self._options[0]) for o in self._options):
            raise ValueError(
                "options must be the same for every copy: a native vector env takes one options dict, "
                f"got options with keys {summarize([sorted(o, key=str) for o in self._options])}."
            )
        obs, info = self.vector_env.reset(seed=seeds, options=self._options[0] or None)
        self.reset_infos = split_vector_info(info, self.num_envs)
        self._seeds = [None] * self.num_envs
        self._options = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: npt.NDArray[Any]) -> None:
        """Remember the actions of the next :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], list[dict[str, Any]]]:
        """Step every copy; finished copies are reset in the same call, as SB3 expects.

        ``NEXT_STEP`` autoreset: the copies of our native vector envs share one horizon and start
        together, so they finish together; the adapter then makes the vector env's reset step at
        once (its actions are ignored, its reward is not an interaction). Copies finishing at
        different steps cannot be reset alone in this mode and raise ``RuntimeError``. ``SAME_STEP``:
        a finished copy's info becomes its ``final_info`` (plus ``terminal_observation`` from
        ``final_obs``) and the info of its reset goes to ``reset_infos``, as ``DummyVecEnv`` does.
        """
        if self._actions is None:
            raise RuntimeError("step_wait() needs actions: call step_async(actions) first.")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.vector_env.step(actions)
        dones = np.logical_or(terminated, truncated)
        infos = split_vector_info(info, self.num_envs)
        if dones.any() and self.autoreset_mode == AutoresetMode.SAME_STEP:
            # The finished copies were reset within the step: their info is the reset info, the
            # step's own info and observation are in final_info and final_obs.
            finals = split_vector_info(info.get("final_info", {}), self.num_envs)
            for i in np.flatnonzero(dones).tolist():
                self.reset_infos[i] = {k: v for k, v in infos[i].items() if k not in ("final_obs", "final_info")}
                infos[i] = {**finals[i], "terminal_observation": info["final_obs"][i]}
        elif dones.any():
            if not dones.all():
                raise RuntimeError(
                    f"copies {np.flatnonzero(dones).tolist()} of {self.num_envs} finished while others did not; "
                    "in NEXT_STEP autoreset mode a copy cannot be reset alone. Use copies with one horizon "
                    "(our native vector envs) or a vector env with autoreset_mode=SAME_STEP."
                )
            for i in range(self.num_envs):
                infos[i]["terminal_observation"] = obs[i]
            obs = self.vector_env.step(actions)[0]
        for i in range(self.num_envs):
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def close(self) -> None:
        """Close the vector env."""
        self.vector_env.close()

    def get_attr(self, attr_name: str, indices: int | Iterable[int] | None = None) -> list[Any]:
        """The vector env's attribute ``attr_name``, once per requested copy (the copies share it)."""
        value = getattr(self.vector_env, attr_name)
        return [value for _ in _indices(indices, self.num_envs)]

    def set_attr(self, attr_name: str, value: Any, indices: int | Iterable[int] | None = None) -> None:
        """Set the vector env's attribute (all copies: they share it)."""
        if sorted(_indices(indices, self.num_envs)) != list(range(self.num_envs)):
            raise ValueError(f"set_attr sets an attribute of all {self.num_envs} copies at once, got {indices=}.")
        setattr(self.vector_env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: int | Iterable[int] | None = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call the vector env's method once; its result is returned for each requested copy."""
        result = getattr(self.vector_env, method_name)(*method_args, **method_kwargs)
        return [result for _ in _indices(indices, self.num_envs)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]], indices: Any = None) -> list[bool]:
        """Always False: the copies of a native vector env are not ``gymnasium.Wrapper`` objects."""
        return [False for _ in _indices(indices, self.num_envs)]


@functools.cache
def _sb3_vec_env_class() -> type:
    from stable_baselines3.common.vec_env import VecEnv

    doc = """A Gymnasium vector env as a stable-baselines3 ``VecEnv``.

    ``SB3VecEnv(gym.make_vec("GraphBandit-v0", num_envs=8, horizon=50))`` can be passed to
    ``PPO``/``A2C``/``DQN`` directly: SB3 would otherwise wrap the vector env in a ``DummyVecEnv``
    of one env, which fails. The API is SB3's: ``reset()`` returns observations only (seeds from
    ``seed(s)`` apply to the next reset, copy i getting s + i, as ``DummyVecEnv``);
    ``step_wait()`` returns (obs, rewards (float32), dones, list of info dicts) where a finished
    copy's info holds ``terminal_observation`` and every info ``TimeLimit.truncated``, and the
    returned observation already starts the next episode. ``get_attr``/``set_attr``/
    ``env_method`` reach the vector env itself (its attributes are shared by the copies).

    Stepping equals the vector env's own ``step`` except that, in ``NEXT_STEP`` autoreset mode, the
    vector env's reset step after the copies finish is made inside the finishing call (see
    :meth:`step_wait`). ``SAME_STEP`` vector envs (``final_obs`` in info) are supported as well.
    """
    return type("SB3VecEnv", (_SB3VecEnvMethods, VecEnv), {"__module__": __name__, "__doc__": doc})


if TYPE_CHECKING:
    from stable_baselines3.common.vec_env import VecEnv

    class SB3VecEnv(_SB3VecEnvMethods, VecEnv):
        """Built at run time by ``_sb3_vec_env_class`` (this declaration is for type checkers)."""


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":
        return _sb3_vec_env_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
