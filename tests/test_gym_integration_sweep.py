"""The native vector envs under Gymnasium's standard seeding API, as ``SyncVectorEnv`` behaves.

* ``reset(seed=[s, None, ...])``: a copy whose seed is None keeps its generator running, as the
  single env reset with ``seed=None`` (and a ``SyncVectorEnv`` copy) does; it was given fresh OS
  entropy instead, so that copy's future no longer followed from the seeds.
* ``np_random_seed`` / ``np_random``: the copies' seeds and generators, per copy; they were an
  unrelated generator of the ``VectorEnv`` base and its random seed.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs

HORIZON = 5000


def _single_rollout(env: Any, actions: list[int]) -> list[Any]:
    out = []
    for a in actions:
        obs, reward, _, _, _ = env.step(a)
        out += [np.asarray(obs), float(reward)]
    return out


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
@pytest.mark.parametrize("played", [0, 3])
def test_seed_list_with_none_keeps_that_copys_stream(env_id: str, played: int) -> None:
    actions = [1, 0, 1, 1, 0]
    vec: Any = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", horizon=HORIZON)
    vec.reset(seed=0)
    for _ in range(played):
        vec.step(np.ones(2, dtype=np.int64))
    obs, _ = vec.reset(seed=[7, None])
    copy0: list[Any] = [np.asarray(obs[0])]
    copy1: list[Any] = [np.asarray(obs[1])]
    for a in actions:
        step_obs, reward, _, _, _ = vec.step(np.full(2, a))
        copy0 += [np.asarray(step_obs[0]), float(reward[0])]
        copy1 += [np.asarray(step_obs[1]), float(reward[1])]

    seeded = gym.make(env_id, horizon=HORIZON)
    first, _ = seeded.reset(seed=7)
    assert _same(copy0, [np.asarray(first), *_single_rollout(seeded, actions)])

    kept = gym.make(env_id, horizon=HORIZON)  # copy 1: seeded 0 + 1, `played` steps, then reset(seed=None)
    kept.reset(seed=1)
    for _ in range(played):
        kept.step(1)
    first, _ = kept.reset()
    assert _same(copy1, [np.asarray(first), *_single_rollout(kept, actions)])


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
def test_seed_list_with_none_matches_sync_vector_env(env_id: str) -> None:
    actions = [0, 1, 1, 0]
    runs = []
    for mode in ("vector_entry_point", "sync"):
        vec: Any = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode, horizon=HORIZON)
        vec.reset(seed=10)
        vec.step(np.zeros(3, dtype=np.int64))
        vec.reset(seed=[None, 4, None])
        runs.append(_all_copies(vec, actions))
        vec.close()
    assert all(_same(a, b) for a, b in zip(*runs, strict=True))


def _all_copies(vec: Any, actions: list[int]) -> list[list[Any]]:
    out: list[list[Any]] = [[] for _ in range(vec.num_envs)]
    for a in actions:
        obs, reward, _, _, _ = vec.step(np.full(vec.num_envs, a))
        for c in range(vec.num_envs):
            out[c] += [np.asarray(obs[c]), float(reward[c])]
    return out


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
def test_np_random_seed_reports_each_copys_seed(env_id: str) -> None:
    vec: Any = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", horizon=10)
    sync: Any = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync", horizon=10)
    assert vec.np_random_seed == (-1, -1, -1)  # never seeded: unknown, Gymnasium's convention
    for seed in (42, [5, None, 9], None):
        vec.reset(seed=seed)
        sync.reset(seed=seed)
        assert vec.np_random_seed == sync.np_random_seed
    assert vec.np_random_seed == (5, 43, 9)
    generators = vec.np_random
    assert isinstance(generators, tuple) and len(generators) == 3
    assert all(isinstance(g, np.random.Generator) for g in generators)
    vec.reset(seed=[5, None, 9])
    assert vec.np_random[1] is generators[1]  # copy 1 keeps its generator; 0 and 2 get new ones
    assert vec.np_random[0] is not generators[0] and vec.np_random[2] is not generators[2]
    sync.close()


def test_sb3_vec_env_compares_per_copy_options_holding_arrays_by_value() -> None:
    """Equal per-copy options with arrays are one options dict; different ones get the adapter's sentence."""
    from bandit_envs import wrappers

    table = np.random.default_rng(0).random((2, 30, 10))
    vec = wrappers.SB3VecEnv(gym.make_vec("GraphBandit-v0", num_envs=2, horizon=30))
    vec.set_options([{"reward_table": table.copy()}, {"reward_table": table.copy()}])
    vec.reset()
    _, rewards, _, _ = vec.step(np.array([3, 4]))
    np.testing.assert_allclose(rewards, [table[0, 0, 3], table[1, 0, 4]], rtol=1e-6)  # SB3 rewards are float32
    other = table.copy()
    other[1, 0, 0] = 0.5
    vec.set_options([{"reward_table": table}, {"reward_table": other}])
    with pytest.raises(ValueError, match="options must be the same for every copy"):
        vec.reset()


def test_graph_vector_env_reset_step_has_expected_reward_zero() -> None:
    """The autoreset step plays nothing: reward, regret and expected reward are 0, as in the other envs."""
    venv = gym.make_vec("GraphBandit-v0", num_envs=2, horizon=2)
    venv.reset(seed=0)
    for _ in range(2):
        venv.step(np.array([1, 2]))
    _, reward, _, _, info = venv.step(np.array([1, 2]))  # every copy restarts
    assert (reward == 0.0).all() and (info["regret"] == 0.0).all()
    assert (info["expected_reward"] == 0.0).all()
