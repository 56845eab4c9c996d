"""Array-likes that numpy would misread as numbers are refused in one sentence; the valid forms still work.

Bools inside lists (``[True, 0.5]``, which numpy casts to 1.0 and 0.5), masked arrays (whose
masked entries numpy reads as numbers) and time spans (``timedelta64``, which numpy counts as an
integer) as batched rewards and actions, vector-env actions, per-copy parameters and gaps; and a
UCB ``alpha`` whose square (times ln t) over- or underflows.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from agent_tables import PATH3, K, Make, by_default, context_free, linear, private
from test_agent_inputs import obs_for

import agents
import bandit_envs  # noqa: F401  (registers the env ids)
from agents.base import Agent
from agents.stochastic.index import _LOG_ROUNDS, ALPHA_MAX, ALPHA_MIN
from bandit_envs.core import check_action, check_actions
from bandit_envs.validation import check_unit_array, not_numbers, real_array

N = 2

TABLE: dict[str, Make] = {**context_free(1000), **private(1000), **linear()}
TABLE.update(by_default(TABLE))
TABLE["LDPWrapper"] = lambda n: agents.LDPWrapper(agents.UCB(K, n_envs=n), "laplace", 1.0, seed=0)
TABLE.pop("SB3Agent", None)  # needs a trained model: its feedback goes through the same Agent._feedback

ENV_IDS = [
    "GraphBandit-v0",
    "PrivacyBudgetMovieLens-v0",
    "PrivacyBudgetGowalla-v0",
    "MovieLensRecommendation-v0",
    "GowallaRecommendation-v0",
]


def side_info(n: int | None) -> dict[str, Any]:
    lead = () if n is None else (n,)
    return {"observed_mask": np.ones((*lead, K), dtype=bool), "observed_rewards": np.full((*lead, K), 0.5)}


def started(name: str, n: int | None = N) -> tuple[Agent, Any]:
    agent = TABLE[name](n)
    return agent, agent.act(obs_for(name, n))


BAD_REWARDS = {
    "list holding True": ([True, 0.5], "holding (np.)?True_? \\(bool\\)"),
    "list holding np.True_": ([0.5, np.True_], "holding (np.)?True_? \\(bool\\)"),
    "tuple holding True": ((0.5, True), "holding (np.)?True_? \\(bool\\)"),
    "masked array": (np.ma.array([0.5, 7.0], mask=[0, 1]), "masked array"),
    "masked array, nothing masked": (np.ma.array([0.5, 0.25]), "masked array"),
    "object array holding True": (np.array([True, 0.5], dtype=object), "reward"),
    "timedelta64 array": (np.array([0, 1], dtype="m8[s]"), "reward"),
}


# Batched agents: rewards and actions ------------------------------------------------------


@pytest.mark.parametrize("case", list(BAD_REWARDS))
@pytest.mark.parametrize("name", sorted(TABLE))
def test_batched_agents_refuse_rewards_numpy_would_misread(name: str, case: str) -> None:
    agent, a = started(name)
    value, detail = BAD_REWARDS[case]
    with pytest.raises(TypeError, match=f"^reward must be .*{detail}"):
        agent.update(a, value, side_info(N))


@pytest.mark.parametrize(
    "value",
    [[True, 0], (0, np.True_), np.ma.array([0, 2], mask=[0, 1]), np.array([0, 1], dtype="m8[s]")],
    ids=["list holding True", "tuple holding np.True_", "masked", "timedelta64"],
)
@pytest.mark.parametrize("name", sorted(TABLE))
def test_batched_agents_refuse_actions_numpy_would_misread(name: str, value: Any) -> None:
    agent, _ = started(name)
    with pytest.raises(TypeError, match="^action must be an integer array of shape \\(2,\\)"):
        agent.update(value, np.full(N, 0.5), side_info(N))


def test_batched_ucb_refusal_stores_nothing() -> None:
    """[True, 0.5] used to store 1.0, and the masked 7.0 used to be stored."""
    agent = agents.UCB(3, n_envs=2)
    a = agent.act()
    for bad in ([True, 0.5], np.ma.array([0.5, 7.0], mask=[0, 1])):
        with pytest.raises(TypeError, match="reward"):
            agent.update(a, bad, {})
    assert agent.t == 0 and not agent.sums.any() and not agent.counts.any()


@pytest.mark.parametrize(
    "value",
    [np.timedelta64(1, "s"), np.ma.array(1, mask=True), np.ma.array(1), np.array(1, dtype="m8[s]")],
    ids=["timedelta64", "masked 0-d", "masked 0-d, nothing masked", "0-d timedelta64"],
)
def test_single_env_agents_refuse_actions_numpy_would_misread(value: Any) -> None:
    for name in ("UCB", "TS", "Exp3", "GAP"):
        agent, _ = started(name, None)
        with pytest.raises(TypeError, match="^action must be an integer arm index"):
            agent.update(value, 0.5, None)


@pytest.mark.parametrize(
    "value",
    [np.timedelta64(1, "s"), np.ma.array(0.5, mask=True), np.array(1, dtype="m8[s]")],
    ids=["timedelta64", "masked 0-d", "0-d timedelta64"],
)
def test_single_env_agents_refuse_rewards_numpy_would_misread(value: Any) -> None:
    for name in ("UCB", "TS", "Exp3", "GAP"):
        agent, a = started(name, None)
        with pytest.raises(TypeError, match="^reward must be a real number"):
            agent.update(a, value, None)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("observed_rewards", [[True, 0.5, 0.5], [0.5, 0.5, 0.5]]),
        ("observed_rewards", np.ma.array(np.full((N, K), 0.5), mask=False)),
        ("observed_mask", np.ma.array(np.ones((N, K), dtype=bool), mask=False)),
    ],
    ids=["rewards list holding True", "rewards masked", "mask masked"],
)
@pytest.mark.parametrize("name", ["UCBN", "TS-N", "AAE-side", "Exp3SET"])
def test_side_observations_numpy_would_misread_are_refused(name: str, key: str, value: Any) -> None:
    agent, a = started(name)
    info = side_info(N)
    info[key] = value
    with pytest.raises(TypeError, match=f"^info\\['{key}'\\] must be"):
        agent.update(a, np.full(N, 0.5), info)


def test_side_observations_as_lists_still_work() -> None:
    agent, a = started("UCBN")
    mask = [[True, False, 1], [0, 1, 0]]  # booleans, or integers 0 and 1: as before
    agent.update(a, [0.5, 0.25], {"observed_mask": mask, "observed_rewards": [[1, 0, 0.5]] * 2})
    assert agent.counts.sum() == 3


@pytest.mark.parametrize("name", sorted(TABLE))
def test_batched_agents_take_valid_forms_as_before(name: str) -> None:
    """Lists of floats and of ints, int arrays of any width, numpy integers in a list."""
    for action_form in (list, lambda a: np.asarray(a, dtype=np.int32), lambda a: [np.int64(x) for x in a]):
        for reward in ([0.5, 0.25], [1, 0], np.array([1, 0]), np.array([0.5, 0.25], dtype=np.float32)):
            agent, a = started(name)
            agent.update(action_form(np.asarray(a).tolist()), reward, side_info(N))


@pytest.mark.parametrize("name", ["UCB", "TS", "Exp3", "GAP", "KLUCB"])
def test_single_env_agents_take_valid_forms_as_before(name: str) -> None:
    for action_form in (int, np.int64, np.int32, np.array):
        for reward in (0.5, 1, np.int64(0), np.float32(0.5), np.array(0.5)):
            agent, a = started(name, None)
            agent.update(action_form(a), reward, side_info(None) if name == "GAP" else None)


def test_batched_ucb_stores_valid_list_and_int_rewards_exactly() -> None:
    agent = agents.UCB(3, n_envs=2)
    a = agent.act()
    agent.update(list(a), [1, 0.25], {})
    np.testing.assert_array_equal(agent.sums[np.arange(2), a], [1.0, 0.25])


# Vector envs ------------------------------------------------------------------------------


def vector_env(env_id: str) -> Any:
    env = gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ([True, 0], "holding (np.)?True_? \\(bool\\)"),
        ((0, np.True_), "holding (np.)?True_? \\(bool\\)"),
        (np.ma.array([0, 7], mask=[0, 1]), "masked array"),
        (np.ma.array([0, 1]), "masked array"),
        (np.array([0, 1], dtype="m8[s]"), "timedelta64\\[s\\] array"),
        (np.array([1, 0], dtype="M8[D]"), "datetime64\\[D\\] array"),
    ],
    ids=["list holding True", "tuple holding np.True_", "masked", "masked, nothing masked", "m8", "M8"],
)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_env_step_refuses_actions_numpy_would_misread(env_id: str, value: Any, detail: str) -> None:
    env = vector_env(env_id)
    with pytest.raises(ValueError, match=f"^actions must be an integer array of shape \\(2,\\) .*{detail}"):
        env.step(value)
    env.step(np.zeros(N, dtype=np.int64))  # nothing was played: the episode goes on


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_env_step_takes_valid_actions_as_before(env_id: str) -> None:
    env = vector_env(env_id)
    for actions in ([0, 1], (1, 0), [np.int64(1), np.int32(0)], np.array([1, 1], dtype=np.int32), np.array([0, 1])):
        _, reward, *_ = env.step(actions)
        assert reward.shape == (N,)


@pytest.mark.parametrize(
    "value",
    [np.timedelta64(1, "s"), np.array(1, dtype="m8[s]"), np.ma.array(1, mask=True), np.ma.array(1)],
    ids=["timedelta64", "0-d m8", "0-d masked", "0-d masked, nothing masked"],
)
def test_single_env_step_refuses_actions_numpy_would_misread(value: Any) -> None:
    env = gym.make("GraphBandit-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="^action must be an integer"):
        env.step(value)
    with pytest.raises(ValueError, match="^action must be an integer"):
        check_action(value, 3)


def test_single_env_step_takes_valid_actions_as_before() -> None:
    env = gym.make("GraphBandit-v0")
    env.reset(seed=0)
    for action in (1, np.int64(1), np.uint8(2), np.int32(0), np.array(1), np.array(2, dtype=np.uint16)):
        env.step(action)
        assert check_action(action, 3) == int(action) and type(check_action(action, 3)) is int


def test_check_actions_returns_arrays_as_before() -> None:
    arr = np.array([0, 2])
    assert check_actions(arr, 2, 3) is arr
    np.testing.assert_array_equal(check_actions([np.int64(2), 1], 2, 3), [2, 1])


# Per-copy parameters and gaps -------------------------------------------------------------

PER_COPY = {
    "UCB alpha": (lambda v: agents.UCB(3, alpha=v, n_envs=2), "alpha"),
    "SMUCB alpha": (lambda v: agents.SMUCB(3, alpha=v, n_envs=2), "alpha"),
    "KLUCB c": (lambda v: agents.KLUCB(3, c=v, n_envs=2), "c"),
    "EpsilonGreedy epsilon": (lambda v: agents.EpsilonGreedy(3, epsilon=v, n_envs=2), "epsilon"),
    "EpsilonGreedy d": (lambda v: agents.EpsilonGreedy(3, schedule="decaying", d=v, n_envs=2), "d"),
}


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ([True, 0.5], "holding (np.)?True_? \\(bool\\)"),
        ((0.5, np.True_), "holding (np.)?True_? \\(bool\\)"),
        (np.ma.array([0.5, 0.2], mask=[0, 1]), "masked array"),
        ([[0.5], [0.5, 0.2]], "list\\.$"),
        (np.array([True, False]), "booleans"),
    ],
    ids=["list holding True", "tuple holding np.True_", "masked", "ragged", "bool array"],
)
@pytest.mark.parametrize("which", list(PER_COPY))
def test_per_copy_parameters_refuse_what_numpy_would_misread(which: str, value: Any, detail: str) -> None:
    make, name = PER_COPY[which]
    with pytest.raises(TypeError, match=f"^{name} must be a number or an array of n_envs=2 numbers, got .*{detail}"):
        make(value)


@pytest.mark.parametrize("which", list(PER_COPY))
def test_per_copy_parameters_take_valid_forms_as_before(which: str) -> None:
    make, name = PER_COPY[which]
    for value in (0.5, [0.5, 0.25], (0.5, 0.25), np.array([0.5, 0.25], dtype=np.float32)):
        given = np.array(value, dtype=np.float64)
        stored = getattr(make(value), name)
        np.testing.assert_array_equal(stored, np.broadcast_to(given, np.shape(stored)))
    mine = np.array([0.5, 0.25])
    stored = getattr(make(mine), name)
    assert stored is not mine and stored.dtype == np.float64  # a copy: the caller's array may change
    np.testing.assert_array_equal(agents.UCB(3, alpha=[1, 2], n_envs=2).alpha, [1.0, 2.0])


def test_per_copy_parameter_array_without_copies_names_it() -> None:
    with pytest.raises(ValueError, match="^alpha must be a single number when n_envs is None, got a list of length 2"):
        agents.UCB(3, alpha=[1.0, 2.0])
    with pytest.raises(ValueError, match="^alpha must be a single number when n_envs is None, got .*holding"):
        agents.UCB(3, alpha=[True, 2.0])


def test_masked_scalar_parameter_is_refused_in_one_line() -> None:
    with pytest.raises(
        TypeError, match=r"^alpha must be a real number, got a masked array of shape \(\) \(MaskedArray\)\.$"
    ):
        agents.UCB(3, alpha=np.ma.array(1.0, mask=True))


@pytest.mark.parametrize(
    ("gaps", "detail"),
    [
        ([True, 0, 0], "holding (np.)?True_? \\(bool\\)"),
        (np.ma.array([0.1, -5.0, 0.0], mask=[0, 1, 0]), "masked array"),
    ],
    ids=["list holding True", "masked"],
)
@pytest.mark.parametrize("name", ["GAP", "AAE", "DPSE", "AlphaSample"])
def test_simulate_refuses_gaps_numpy_would_misread(name: str, gaps: Any, detail: str) -> None:
    agent = TABLE[name](None)
    with pytest.raises(ValueError, match=f"^gaps must be a real array of shape \\(3,\\).*{detail}"):
        agent.simulate(np.full((100, K), 0.5), PATH3, gaps)


@pytest.mark.parametrize("name", ["GAP", "AAE"])
def test_simulate_takes_gaps_as_before(name: str) -> None:
    results = [
        TABLE[name](None).simulate(np.full((100, K), 0.5), PATH3, gaps)
        for gaps in ([0.1, 0.0, 0.2], np.array([0.1, 0.0, 0.2]), (0.1, 0, 0.2))
    ]
    assert len({r.total_regret for r in results}) == 1


# UCB's alpha: its square times ln t must be a finite float above 0 ------------------------


@pytest.mark.parametrize("alpha", [1e200, 1e154, 2.1e153, 1e-170, 1e-162])
@pytest.mark.parametrize("cls", [agents.UCB, agents.SMUCB])
def test_ucb_refuses_alpha_whose_square_over_or_underflows(cls: type[agents.UCB], alpha: float) -> None:
    with pytest.raises(ValueError, match=r"^alpha must be a number in \[1e-161, 2e\+153\] \(.*\), got "):
        cls(3, alpha=alpha)
    with pytest.raises(ValueError, match=r"^alpha\[1\] must be a number in \[1e-161, 2e\+153\]"):
        cls(3, alpha=[1.0, alpha], n_envs=2)


def test_alpha_bounds_keep_the_index_finite() -> None:
    assert math.isfinite(ALPHA_MAX**2 * _LOG_ROUNDS) and ALPHA_MAX**2 * _LOG_ROUNDS <= sys.float_info.max
    assert ALPHA_MIN**2 > 0.0


@pytest.mark.parametrize("alpha", [ALPHA_MAX, ALPHA_MIN, 1e-100, 1e100])
def test_ucb_at_its_alpha_bounds_still_explores(alpha: float) -> None:
    """The largest alpha plays the least-pulled arm (round robin), not arm 0 for ever; the smallest is greedy."""
    agent = agents.UCB(3, alpha=alpha)
    for _ in range(30):
        a = agent.act()
        agent.update(a, [0.9, 0.5, 0.1][a], None)
    counts = agent.counts[0].tolist()
    assert counts == ([10, 10, 10] if alpha > 1 else [28, 1, 1])


# The shared helpers -----------------------------------------------------------------------


def test_real_array_refuses_masked_arrays() -> None:
    with pytest.raises(TypeError, match="^means must be an array of numbers in \\[0, 1\\], got a masked array"):
        check_unit_array("means", np.ma.array([0.5, 0.2], mask=[0, 1]), booleans=False)
    with pytest.raises(TypeError, match="^x must be an array of real numbers, got a masked array"):
        real_array("x", np.ma.array([0.5]))
    np.testing.assert_array_equal(real_array("x", [0.5, 1]), [0.5, 1.0])


def test_not_numbers() -> None:
    assert not_numbers([0.5, 1]) is None and not_numbers(np.array([True])) is None and not_numbers(0.5) is None
    assert not_numbers([[0.5], [np.array([True])]]) == "a list holding array([ True]) (ndarray)"
    assert "masked array of shape (1,)" in str(not_numbers(np.ma.array([1.0])))


@pytest.mark.parametrize("c", [1e101, 1e308, [0.0, 1e308]])
def test_klucb_refuses_a_c_whose_log_log_term_overflows(c):
    # c ln ln t = inf made every index 1: arm 0 was played for ever
    with pytest.raises(ValueError, match=r"^c(\[1\])? must be a finite number in \[0, 1e\+100\]"):
        agents.KLUCB(3, c=c, n_envs=None if np.ndim(c) == 0 else 2)
