"""A compiled kernel is compiled once, whatever form the user's arrays take.

numba compiles a kernel anew for every combination of its array arguments' dtypes, layouts
(C-contiguous or strided) and writability. The arrays a user hands over (batched actions and
rewards, side observations, vector-env actions, reward tables) are therefore put in one form
before they reach a kernel (``bandit_envs._jit.kernel_array``, ``read_only_view``). Here each is
first given in the plain form (a C-contiguous, writable int64 or float64 array), then in other
valid forms (strided views, read-only arrays, other integer and float widths, the other byte
order, lists), and no kernel of ``agents`` or ``bandit_envs`` may gain a compiled version: a
new one would cost a user seconds of compilation for the same computation.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from agent_tables import PATH3, K, context_free
from numba.core.dispatcher import Dispatcher
from test_agent_inputs import obs_for
from test_batch_inputs import TABLE, N, side_info

import bandit_envs  # noqa: F401  (registers the env ids)
from bandit_envs._jit import kernel_array, read_only_view
from bandit_envs.graph import GraphBanditEnv


def _dispatchers() -> Iterator[tuple[str, Dispatcher]]:
    """Every numba dispatcher held by a module of the two packages (module-level names)."""
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("agents", "bandit_envs"):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, Dispatcher):
                yield f"{name}.{attr}", value


def _versions() -> dict[str, int]:
    return {name: len(d.overloads) for name, d in _dispatchers()}


def _new_versions(before: dict[str, int]) -> dict[str, int]:
    return {name: n - before.get(name, 0) for name, n in _versions().items() if n > before.get(name, 0)}


def _strided(a: np.ndarray) -> np.ndarray:
    """The same values as a strided (non-contiguous) view."""
    wide = np.empty((*a.shape, 2), dtype=a.dtype)
    wide[..., 0] = a
    return wide[..., 0]


def _read_only(a: np.ndarray) -> np.ndarray:
    b = a.copy()
    b.setflags(write=False)
    return b


#: Other valid forms of a batch (actions or rewards) than the plain one.
FORMS: dict[str, Callable[[np.ndarray], Any]] = {
    "strided view": _strided,
    "read-only": _read_only,
    "read-only strided": lambda a: _read_only(_strided(a)),
    "list": lambda a: a.tolist(),
}


def _plain_batch(name: str) -> tuple[Any, Any]:
    agent = TABLE[name](N)
    return agent, agent.act(obs_for(name, N))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_batched_update_compiles_nothing_more_for_other_forms_of_its_arrays(name: str) -> None:
    agent, a = _plain_batch(name)
    rewards = np.full(N, 0.5)
    agent.update(kernel_array(np.asarray(a), np.int64), rewards, side_info(N))  # the plain form, compiled here
    agent.act(obs_for(name, N))
    before = _versions()
    for form, make in FORMS.items():
        for action_form, reward_form in ((make, None), (None, make), (make, make)):
            agent, a = _plain_batch(name)
            arms = np.asarray(a, dtype=np.int64)
            info = side_info(N)
            if action_form is make:
                info = {key: make(value) if form != "list" else value for key, value in info.items()}
            agent.update(
                arms if action_form is None else action_form(arms),
                rewards if reward_form is None else reward_form(rewards),
                info,
            )
            agent.act(obs_for(name, N))
            added = _new_versions(before)
            assert not added, f"{name}: {form} actions/rewards compiled new versions of {added}"
    for width in (np.int32, np.uint8, np.dtype(">i8")):
        agent, a = _plain_batch(name)
        agent.update(np.asarray(a).astype(width), np.full(N, 0.5, dtype=np.float32), side_info(N))
        assert not _new_versions(before), f"{name}: {np.dtype(width)} actions compiled new versions"


@pytest.mark.parametrize("name", ["UCB", "TS", "Exp3", "KLUCB", "EpsilonGreedy", "GAP"])
def test_one_envs_general_path_takes_the_batches_plain_form(name: str) -> None:
    """One env's update given 0-d arrays goes through a batch of one: the form a batch's kernels take."""
    batch = TABLE[name](N)
    batch.update(np.asarray(batch.act(), dtype=np.int64), np.full(N, 0.5), side_info(N))
    one = TABLE[name](None)
    one.update(int(one.act()), 0.5, side_info(None))  # the one-env kernels, compiled here
    one.update(np.array(one.act()), np.array(0.25), side_info(None))  # 0-d arrays: the batch of one
    before = _versions()
    reward = np.array(0.75)
    reward.setflags(write=False)
    one.update(np.array(one.act(), dtype=np.int32), reward, side_info(None))
    one.update(np.array(one.act(), dtype=">i8"), np.float32(0.5), side_info(None))
    assert not _new_versions(before)


@pytest.mark.parametrize("env_id", ["GraphBandit-v0", "PrivacyBudgetMovieLens-v0", "MovieLensRecommendation-v0"])
def test_a_vector_env_step_compiles_nothing_more_for_other_forms_of_its_actions(env_id: str) -> None:
    if env_id != "GraphBandit-v0":
        pytest.importorskip("pandas")
    try:
        env = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    except (OSError, RuntimeError) as error:  # the real datasets: absent offline
        pytest.skip(f"{env_id} needs its dataset: {error}")
    env.reset(seed=0)
    plain = np.array([0, 1, 0], dtype=np.int64)
    env.step(plain)
    before = _versions()
    for actions in (
        plain.astype(np.int32),
        plain.astype(np.uint8),
        plain.astype(">i8"),
        _strided(plain),
        _read_only(plain),
        plain.tolist(),
    ):
        env.step(actions)
        assert not _new_versions(before), f"{env_id}: actions {actions!r} compiled new versions"
    env.close()


@pytest.mark.parametrize("name", ["GAP", "DPSE", "AAE", "AlphaSample"])
def test_simulate_compiles_one_table_run_for_read_only_and_writable_tables(name: str) -> None:
    env = GraphBanditEnv(graph=PATH3, horizon=200)
    table = env.reward_model.from_uniforms(np.random.default_rng(2).random((200, K)))
    make = context_free(200)[name]

    def run(t: Any) -> Any:
        return make(None).simulate(t, env.adjacency, env.gaps)

    first = run(table)
    before = _versions()
    for other in (_read_only(table), read_only_view(table), np.asfortranarray(table), table.astype(np.float32)):
        again = run(other)
        assert not _new_versions(before), f"{name}: a {other.dtype} table, flags {other.flags} compiled anew"
        if other.dtype == np.float64:
            np.testing.assert_array_equal(again.checkpoint_regret, first.checkpoint_regret)


def test_kernel_array_returns_plain_arrays_as_they_are_and_copies_the_others() -> None:
    plain = np.arange(4, dtype=np.int64)
    assert kernel_array(plain, np.int64) is plain
    for other in (_strided(plain), _read_only(plain), plain.astype(np.int32), plain.astype(">i8")):
        out = kernel_array(other, np.int64)
        assert out is not other and out.dtype == np.int64 and out.flags.carray and out.dtype.isnative
        np.testing.assert_array_equal(out, plain)
    view = read_only_view(plain)
    assert not view.flags.writeable and plain.flags.writeable and np.shares_memory(view, plain)
