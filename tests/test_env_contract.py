"""The contract every registered environment keeps, tested for each id of ``bandit_envs.ENV_IDS``.

A newly registered id is picked up without editing this file; its cheap settings go into its row of
``ENV_PROFILES`` in ``conftest.py`` (a registered id without a row fails, saying so). Checked for each id: Gymnasium's
``check_env``; the native vector env's spaces, shapes and NEXT_STEP autoreset (Gymnasium has no
vector env checker); determinism; vector copy i equals the single env reset with seed s + i (across
an autoreset); the step-info contract; invalid actions, seeds, options and constructor keywords.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import ENV_PROFILES, EnvProfile, registered_env_ids
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

IDS = registered_env_ids()
#: Keys every step info holds (single env: scalars; vector env: with a batch axis).
STEP_INFO_CONTRACT = ("regret", "expected_reward", "optimal_action")
NUM_ENVS = 3
SEED = 123


def test_every_registered_id_has_a_profile_row() -> None:
    missing = [i for i in IDS if i not in ENV_PROFILES]
    assert not missing, (
        f"registered ids {missing} have no row in ENV_PROFILES of tests/conftest.py; add one (cheap, easy and "
        "vector keywords, memory per copy), as docs/contributing.md says"
    )
    stale = sorted(set(ENV_PROFILES) - set(IDS))
    assert not stale, f"ENV_PROFILES of tests/conftest.py has rows for ids that are not registered: {stale}"
    assert all(isinstance(ENV_PROFILES[i], EnvProfile) and callable(ENV_PROFILES[i].easy) for i in IDS)


Kwargs = Callable[[str], dict[str, Any]]


def make(env_id: str, env_kwargs: Kwargs, **extra: Any) -> Any:
    """The unwrapped single env of ``env_id`` with the suite's cheap settings."""
    return gym.make(env_id, **{**env_kwargs(env_id), **extra}).unwrapped


def make_vec(env_id: str, env_kwargs: Kwargs, num_envs: int = NUM_ENVS, **extra: Any) -> Any:
    """The native vector env of ``env_id`` with the suite's cheap settings."""
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **{**env_kwargs(env_id), **extra}
    )


def actions_for(env_id: str, n_actions: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(zlib.crc32(env_id.encode())).integers(0, n_actions, size=shape)


def assert_same(a: Any, b: Any, where: str) -> None:
    """Exact equality of observations, rewards or info values (arrays or scalars)."""
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)


def rollout(env: Any, actions: np.ndarray, seed: int) -> list[tuple[Any, ...]]:
    """Steps of a single env over several episodes: reset with ``seed``, then resets without seed."""
    trace: list[tuple[Any, ...]] = [env.reset(seed=seed)]
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(int(a))
        trace.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            trace.append(env.reset())
    return trace


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id: str, env_kwargs: Kwargs) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # check_env warns about, e.g., unbounded observation spaces
        check_env(make(env_id, env_kwargs), skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_spaces_shapes_and_next_step_autoreset(env_id: str, env_kwargs: Kwargs) -> None:
    venv = make_vec(env_id, env_kwargs)
    single = make(env_id, env_kwargs)
    horizon = single.horizon
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert venv.num_envs == NUM_ENVS
    assert venv.single_action_space == single.action_space
    assert venv.single_observation_space == single.observation_space
    assert isinstance(venv.single_action_space, gym.spaces.Discrete)
    obs, info = venv.reset(seed=SEED)
    assert obs in venv.observation_space
    assert all(np.shape(v)[0] == NUM_ENVS for v in info.values())
    actions = actions_for(env_id, int(venv.single_action_space.n), (2 * horizon + 2, NUM_ENVS))
    truncations = []
    for t, a in enumerate(actions):
        obs, reward, terminated, truncated, info = venv.step(a)
        assert obs in venv.observation_space, f"step {t}"
        assert np.shape(reward) == (NUM_ENVS,) and np.asarray(reward).dtype.kind == "f"
        assert terminated.shape == truncated.shape == (NUM_ENVS,)
        assert terminated.dtype == truncated.dtype == np.bool_ and not terminated.any()
        assert all(np.shape(v)[0] == NUM_ENVS for v in info.values())
        truncations.append(truncated.copy())
    # Truncation at step horizon, a reset step, then horizon more steps: rows horizon-1 and 2*horizon.
    expected = np.zeros((len(actions), NUM_ENVS), dtype=bool)
    expected[[horizon - 1, 2 * horizon]] = True
    np.testing.assert_array_equal(np.array(truncations), expected)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory(env_id: str, env_kwargs: Kwargs) -> None:
    env_a, env_b = make(env_id, env_kwargs), make(env_id, env_kwargs)
    actions = actions_for(env_id, int(env_a.action_space.n), (3 * env_a.horizon,))
    trace_a, trace_b = rollout(env_a, actions, SEED), rollout(env_b, actions, SEED)
    assert len(trace_a) == len(trace_b)
    for t, (x, y) in enumerate(zip(trace_a, trace_b, strict=True)):
        for k, (u, v) in enumerate(zip(x[:-1], y[:-1], strict=True)):
            assert_same(u, v, f"step {t} item {k}")
        assert x[-1].keys() == y[-1].keys()
        for key in x[-1]:
            assert_same(x[-1][key], y[-1][key], f"step {t} info {key}")
    # ... and another seed gives another trajectory (of observations or rewards).
    other = rollout(make(env_id, env_kwargs), actions, SEED + 1)
    assert any(
        not np.array_equal(np.asarray(x[0]), np.asarray(y[0])) or (len(x) == 5 and x[1] != y[1])
        for x, y in zip(trace_a, other, strict=True)
    )


@pytest.mark.parametrize("seed", [SEED, [7, 3, 11]], ids=["int", "list"])
@pytest.mark.parametrize("env_id", IDS)
def test_vector_copy_i_is_the_single_env_with_seed_s_plus_i(env_id: str, seed: Any, env_kwargs: Kwargs) -> None:
    venv = make_vec(env_id, env_kwargs)
    horizon = venv.unwrapped.horizon
    steps = 2 * horizon + 3  # through one NEXT_STEP autoreset of every copy
    actions = actions_for(env_id, int(venv.single_action_space.n), (steps, NUM_ENVS))
    v_obs, v_info = venv.reset(seed=seed)
    trace = [venv.step(a) for a in actions]
    seeds = [seed + i for i in range(NUM_ENVS)] if isinstance(seed, int) else seed
    for i, s in enumerate(seeds):
        env = make(env_id, env_kwargs)
        obs, info = env.reset(seed=s)
        assert_same(v_obs[i], obs, f"copy {i} reset")
        assert {k for k in v_info} == set(info)
        for key in info:
            assert_same(v_info[key][i], info[key], f"copy {i} reset info {key}")
        restart = False
        for t, (a, (v_obs_t, v_rew, _, v_trunc, v_step_info)) in enumerate(zip(actions, trace, strict=True)):
            if restart:  # the vector env's reset step: the single env resets, its generator running on
                obs, _ = env.reset()
                assert v_rew[i] == 0.0
                assert_same(v_obs_t[i], obs, f"copy {i} autoreset at step {t}")
                restart = False
                continue
            obs, reward, _, truncated, info = env.step(int(a[i]))
            assert_same(v_obs_t[i], obs, f"copy {i} step {t} obs")
            assert v_rew[i] == reward, f"copy {i} step {t} reward"
            assert bool(v_trunc[i]) == truncated
            assert set(info) <= set(v_step_info)
            for key in info:
                assert_same(v_step_info[key][i], info[key], f"copy {i} step {t} info {key}")
            restart = truncated


@pytest.mark.parametrize("env_id", IDS)
def test_step_info_contract(env_id: str, env_kwargs: Kwargs) -> None:
    env = make(env_id, env_kwargs)
    n = int(env.action_space.n)
    env.reset(seed=SEED)
    keys = None
    for a in actions_for(env_id, n, (env.horizon,)):
        _, reward, _, _, info = env.step(int(a))
        assert set(STEP_INFO_CONTRACT) <= set(info), f"missing {set(STEP_INFO_CONTRACT) - set(info)}"
        assert keys is None or set(info) == keys, "every step info holds the same keys"
        keys = set(info)
        assert isinstance(info["regret"], float) and info["regret"] >= 0.0
        assert isinstance(info["expected_reward"], float) and np.isfinite(info["expected_reward"])
        assert isinstance(info["optimal_action"], int) and 0 <= info["optimal_action"] < n
        assert isinstance(reward, float) and np.isfinite(reward)
    venv = make_vec(env_id, env_kwargs)
    venv.reset(seed=SEED)
    _, _, _, _, v_info = venv.step(actions_for(env_id, n, (NUM_ENVS,)))
    assert keys is not None and keys <= set(v_info)
    for key in STEP_INFO_CONTRACT:
        assert np.shape(v_info[key]) == (NUM_ENVS,)
    assert np.all(v_info["regret"] >= 0.0)


BAD_ACTIONS = [
    pytest.param(lambda n: n, id="too-large"),
    pytest.param(lambda n: -1, id="negative"),
    pytest.param(lambda n: 1.7, id="float"),
    pytest.param(lambda n: 1.0, id="integral-float"),
    pytest.param(lambda n: np.float64(1.0), id="numpy-float"),
    pytest.param(lambda n: "1", id="str"),
    pytest.param(lambda n: None, id="none"),
    pytest.param(lambda n: np.array([0, 1]), id="array"),
]


@pytest.mark.parametrize("bad", BAD_ACTIONS)
@pytest.mark.parametrize("env_id", IDS)
def test_invalid_action_is_refused_in_one_sentence(env_id: str, bad: Any, env_kwargs: Kwargs) -> None:
    env = make(env_id, env_kwargs)
    env.reset(seed=SEED)
    n = int(env.action_space.n)
    action = bad(n)
    with pytest.raises(ValueError, match=r"^action must be an integer .*\[0, \d+\].*got ") as err:
        env.step(action)
    assert str(err.value).count(". ") == 0  # one sentence


BAD_VECTOR_ACTIONS = [
    pytest.param(lambda n: np.zeros(NUM_ENVS + 1, dtype=np.int64), id="too-many"),
    pytest.param(lambda n: np.zeros((NUM_ENVS, 1), dtype=np.int64), id="2d"),
    pytest.param(lambda n: np.array([0.0, 1.7, 1.0]), id="float"),
    pytest.param(lambda n: np.array([0, n, 1]), id="too-large"),
    pytest.param(lambda n: np.array([0, -1, 1]), id="negative"),
    pytest.param(lambda n: 0, id="scalar"),
]


@pytest.mark.parametrize("bad", BAD_VECTOR_ACTIONS)
@pytest.mark.parametrize("env_id", IDS)
def test_invalid_vector_actions_are_refused(env_id: str, bad: Any, env_kwargs: Kwargs) -> None:
    venv = make_vec(env_id, env_kwargs)
    venv.reset(seed=SEED)
    with pytest.raises(ValueError, match=r"^actions must be an integer array of shape \(3,\) with values in \[0, "):
        venv.step(bad(int(venv.single_action_space.n)))


@pytest.mark.parametrize("env_id", IDS)
def test_stepping_outside_an_episode_and_unknown_options(env_id: str, env_kwargs: Kwargs) -> None:
    env = make(env_id, env_kwargs)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(gym.error.ResetNeeded, match=r"^no episode is running .*call reset\(\)\.$"):
        env.step(0)  # the vector env's and gym.make's wrapper's exception too
    vec = make_vec(env_id, env_kwargs)  # the vector env refuses it too (it played a round before reset)
    with pytest.raises(gym.error.ResetNeeded, match=r"vector env was called before reset\(\); call reset\(\) first"):
        vec.step(np.zeros(vec.num_envs, dtype=np.int64))
    with pytest.raises(ValueError, match="options"):
        env.reset(seed=SEED, options={"no_such_option": 1})
    with pytest.raises(ValueError, match="options"):
        make_vec(env_id, env_kwargs).reset(seed=SEED, options={"no_such_option": 1})
    with pytest.raises(ValueError, match="seed"):
        make_vec(env_id, env_kwargs).reset(seed=[1, 2])


BAD_OPTIONS = [
    pytest.param(["reward_table"], id="list-of-keys"),
    pytest.param([1], id="list"),
    pytest.param("reward_table", id="str"),
    pytest.param("", id="empty-str"),
    pytest.param(5, id="int"),
    pytest.param(np.zeros(3), id="array"),
]


@pytest.mark.parametrize("options", BAD_OPTIONS)
@pytest.mark.parametrize("env_id", IDS)
def test_options_that_are_not_a_dict_are_refused_and_change_nothing(
    env_id: str, options: Any, env_kwargs: Kwargs
) -> None:
    env, twin = make(env_id, env_kwargs), make(env_id, env_kwargs)
    venv, vtwin = make_vec(env_id, env_kwargs), make_vec(env_id, env_kwargs)
    for e in (env, twin, venv, vtwin):
        e.reset(seed=SEED)
    n = int(env.action_space.n)
    for reset in (env.reset, venv.reset):
        with pytest.raises(TypeError, match=rf"^options must be None or a dict \({env_id} takes .*\), got ") as err:
            reset(seed=SEED + 1, options=options)
        assert str(err.value).count(". ") == 0 and len(str(err.value)) < 300  # one short sentence
    for a in actions_for(env_id, n, (3,)):  # the refused reset neither reseeded nor restarted
        x, y = env.step(int(a)), twin.step(int(a))
        assert_same(x[0], y[0], "obs")
        assert x[1] == y[1], "reward"
    for a in actions_for(env_id, n, (3, NUM_ENVS)):
        x, y = venv.step(a), vtwin.step(a)
        assert_same(x[0], y[0], "vector obs")
        assert_same(x[1], y[1], "vector reward")


BAD_SEEDS = [
    pytest.param(1.5, TypeError, id="float"),
    pytest.param(2.0, TypeError, id="integral-float"),
    pytest.param("1", TypeError, id="str"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param(np.bool_(True), TypeError, id="numpy-bool"),
    pytest.param(-1, ValueError, id="negative"),
]


@pytest.mark.parametrize(("seed", "error"), BAD_SEEDS)
@pytest.mark.parametrize("env_id", IDS)
def test_seed_that_is_not_an_integer_is_refused_in_one_sentence(
    env_id: str, seed: Any, error: type, env_kwargs: Kwargs
) -> None:
    env = make(env_id, env_kwargs)
    venv = make_vec(env_id, env_kwargs)
    for reset in (env.reset, venv.reset):
        with pytest.raises(error, match=r"^seed must be None.* integer >= 0.*, got ") as err:
            reset(seed=seed)
        assert str(err.value).count(". ") == 0  # one sentence
    with pytest.raises(error, match=r"^seed\[1\] must be None or an integer >= 0.*, got "):
        venv.reset(seed=[0, seed, 2])


@pytest.mark.parametrize("env_id", IDS)
def test_numpy_integer_seeds_seed_as_the_int_of_the_same_value(env_id: str, env_kwargs: Kwargs) -> None:
    env = make(env_id, env_kwargs)
    actions = actions_for(env_id, int(env.action_space.n), (env.horizon,))
    for t, (x, y) in enumerate(zip(rollout(env, actions, SEED), rollout(env, actions, np.int64(SEED)), strict=True)):  # type: ignore[arg-type]
        assert_same(x[0], y[0], f"single env step {t} obs")
        assert len(x) == 2 or x[1] == y[1], f"single env step {t} reward"
    venv = make_vec(env_id, env_kwargs)
    seeds = [SEED + i for i in range(NUM_ENVS)]
    traces = []
    for seed in (SEED, np.int64(SEED), np.array(seeds), [np.int64(s) for s in seeds], tuple(seeds)):
        obs, _ = venv.reset(seed=seed)
        steps = [venv.step(a) for a in actions_for(env_id, int(env.action_space.n), (5, NUM_ENVS))]
        traces.append([obs, *(step[0] for step in steps), *(step[1] for step in steps)])
    for trace in traces[1:]:
        for t, (x, y) in enumerate(zip(traces[0], trace, strict=True)):
            assert_same(x, y, f"vector env item {t}")


BAD_KEYWORDS = [
    pytest.param({"horizon": 0}, ValueError, "horizon", id="horizon-zero"),
    pytest.param({"horizon": 1.5}, TypeError, "horizon", id="horizon-float"),
    pytest.param({"instance_seed": -1}, ValueError, "instance_seed", id="instance_seed"),
    pytest.param({"render_mode": "video"}, ValueError, "render_mode", id="render_mode"),
    pytest.param({"no_such_keyword": 1}, TypeError, "no_such_keyword", id="unknown"),
]


@pytest.mark.parametrize(("kwargs", "error", "name"), BAD_KEYWORDS)
@pytest.mark.parametrize("env_id", IDS)
def test_invalid_constructor_keyword_names_itself(
    env_id: str, kwargs: dict[str, Any], error: type, name: str, env_kwargs: Kwargs
) -> None:
    with pytest.raises(error, match=name), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make(env_id, env_kwargs, **kwargs)
    with pytest.raises(error, match=name), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_vec(env_id, env_kwargs, **kwargs)
    with pytest.raises((ValueError, TypeError), match="num_envs"):
        make_vec(env_id, env_kwargs, num_envs=0)
