"""Every agent refuses feedback that does not fit it, with one sentence, and keeps its state.

Each test runs one kind of bad input through every agent (one env and, where it says so, N copies)
and lists the agents that accepted it, answered with something other than one short sentence
naming the argument, or changed their state while refusing it. Also: envs with another number
of arms (``Agent.check_env`` and the experiments' ``play``), absurd state sizes, and the compiled
fast paths (``simulate``, ``run``), which must refuse rewards as the step API does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from agent_tables import LINEAR, PATH3, SIDE, UNIT, D, K, Make, StubModel, by_default, context_free, linear, private
from conftest import classes_built_by, missing_agents

import bandit_envs  # noqa: F401  (registers the env ids)
from agents import (
    AAE,
    DPSE,
    DPTSUCB,
    GAP,
    GAPU,
    KLUCB,
    LDPOLS,
    MOSS,
    SMUCB,
    UCB,
    AlphaSample,
    DPThompsonSampling,
    EpsilonGreedy,
    Exp3,
    FixedArm,
    LDPLinUCB,
    LDPThompsonSampling,
    LDPWrapper,
    LinUCB,
    PrePullGaussianTS,
    Random,
    SB3Agent,
    ShuffleLinUCB,
    ThompsonSampling,
)
from agents.base import Agent
from agents.user_agents import UserAgentError, play
from bandit_envs.rewards import RewardModel
from bandit_envs.validation import summarize

N = 4  # copies in batch mode


#: GAP and GAPU inside LDPWrapper, which reveals only the pulled arm: declared with an edgeless graph.
WRAPPED_BASE = {
    "GAP": lambda n: GAP(K, 1000, 1.0, np.zeros((K, K), dtype=bool), n_envs=n, seed=0),
    "GAPU": lambda n: GAPU(K, 1000, 1.0, np.zeros((K, K), dtype=bool), n_envs=n, seed=0),
}


def _wrapped(name: str, make: Make) -> Make:
    bits = name in UNIT
    mechanism = "randomized_response" if bits else "laplace"
    inner = WRAPPED_BASE.get(name, make)
    # The users' noise seeds (1000 + i) stay apart from GAP's, GAPU's and DPSE's own noise seeds (0 + i).
    return lambda n: LDPWrapper(inner(n), mechanism, 1.0, seed=1000)


BASE = context_free(1000)
AGENTS: dict[str, Make] = {
    **BASE,
    **linear(),
    # LDPWrapper refuses agents that read the observation (SM-UCB reads φ_t from it).
    **{f"LDP-{name}": _wrapped(name, make) for name, make in BASE.items() if name != "SMUCB"},
    "SB3": lambda n: SB3Agent(StubModel(), n_envs=n),  # type: ignore[arg-type]
    **private(1000),
}
AGENTS.update(by_default(AGENTS))  # a new agent that needs no arguments beyond K
#: Agents whose observation is not a per-arm array (they check it themselves).
OWN_OBS = {"SMUCB", "SB3"} | LINEAR


def test_every_public_agent_has_a_feedback_entry() -> None:
    problem = missing_agents(classes_built_by(AGENTS), "AGENTS of tests/test_agent_inputs.py")
    assert problem is None, problem


def obs_for(name: str, n: int | None) -> Any:
    """A valid observation for ``act``."""
    lead = () if n is None else (n,)
    if name in LINEAR:
        return np.linspace(0.1, 0.9, K * D).reshape(K, D) * np.ones((*lead, 1, 1))
    if name == "SMUCB":
        return 0.5 if n is None else np.full(n, 0.5)
    if name == "SB3":
        return np.full((*lead, D), 0.5)
    return None


def good_info(n: int | None, k: int = K) -> dict[str, Any]:
    lead = () if n is None else (n,)
    return {
        "observed_mask": np.ones((*lead, k), dtype=bool),
        "observed_rewards": np.full((*lead, k), 0.5),
        "regret": 0.0 if n is None else np.zeros(n),
        "optimal_action": 0 if n is None else np.zeros(n, dtype=np.int64),
    }


def good_update(agent: Agent, action: Any, n: int | None) -> None:
    agent.update(action, 0.5 if n is None else np.full(n, 0.5), good_info(n))


def play_steps(agent: Agent, name: str, n: int | None, steps: int = 4) -> list[Any]:
    actions = []
    for _ in range(steps):
        a = agent.act(obs_for(name, n))
        good_update(agent, a, n)
        actions.append(np.asarray(a).tolist())
    return actions


def problems_with(
    name: str, n: int | None, call: Callable[[Agent, Any], None], words: tuple[str, ...], before_act: bool = False
) -> str | None:
    """Why ``call(agent, action)`` was not refused properly by agent ``name`` (None if it was).

    A proper refusal is a TypeError or ValueError whose message is one line, shorter than 300
    characters and names one of ``words``; afterwards the agent plays exactly as a twin that never
    saw the bad call.
    """
    agent, twin = AGENTS[name](n), AGENTS[name](n)
    a = agent.act(obs_for(name, n))
    twin.act(obs_for(name, n))
    try:
        call(agent, a)
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        if "\n" in msg or len(msg) >= 300 or not any(w in msg for w in words):
            return f"{name}: {type(exc).__name__}: {msg[:300]!r}"
    except Exception as exc:  # noqa: BLE001 - any other error is a finding
        return f"{name}: {type(exc).__name__}: {str(exc)[:200]!r}"
    else:
        hint = " (act(obs) should call self._check_obs(obs))" if "obs" in words else ""
        return f"{name}: accepted it{hint}"
    good_update(agent, a, n)
    good_update(twin, a, n)
    if play_steps(agent, name, n) != play_steps(twin, name, n):
        return f"{name}: state changed by the refused call"
    return None


def assert_all_refuse(names: Any, n: int | None, call: Callable[[Agent, Any], None], *words: str) -> None:
    found = [p for name in names if (p := problems_with(name, n, call, words)) is not None]
    assert not found, "\n".join(found)


# One env -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [1.7, 1.0, np.float64(1.0), np.float32(2.0), True, np.True_, "1", None, 1 + 0j, np.array([1]), [1]],
    ids=["1.7", "1.0", "np.float64", "np.float32", "True", "np.True_", "str", "None", "complex", "array1", "list1"],
)
def test_every_agent_refuses_an_action_that_is_not_an_integer(action):
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(action, 0.5, good_info(None)), "action")


@pytest.mark.parametrize("action", [K, K + 10, -1, 2**70])
def test_every_agent_refuses_an_action_outside_its_arms(action):
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(action, 0.5, good_info(None)), "action")


@pytest.mark.parametrize("action", [2**70, -(2**70)])
def test_an_action_beyond_int64_is_named_before_a_bad_info(action):
    """As the checked path does (it cannot make it an int64), also where a fast path leaves the range to a kernel."""
    bad_info = {**good_info(None), "observed_mask": np.ones(K + 3, dtype=bool)}
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(action, 0.5, bad_info), "action must")


def test_integer_actions_of_any_integer_type_are_accepted_but_integral_floats_are_not():
    for name, make in AGENTS.items():
        agent = make(None)
        for action in (1, np.int8(1), np.uint64(1), np.array(1, dtype=np.int32)):
            agent.act(obs_for(name, None))
            agent.update(action, 0.5, good_info(None))
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(float(a), 0.5, good_info(None)), "action")


@pytest.mark.parametrize("value", [2**1100, -(2**1100), 10**5000], ids=["2**1100", "-2**1100", "10**5000"])
def test_a_number_beyond_the_floats_is_quoted_as_given_not_as_inf(value):
    """A Python int that float() cannot hold was quoted as its conversion, inf."""
    shown = summarize(value)
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(a, value, good_info(None)), f"got {shown}")
    with pytest.raises(ValueError, match=rf"^obs \(the sensitivity φ_t\) must be a number in \[0, 1\], got {shown}\.$"):
        SMUCB(K).act(value)
    with pytest.raises(ValueError, match=rf"^override\[2\] \(the reward v\) must be .*, got {shown}\.$"):
        GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, np.zeros(K), override=(3, 1, value))


@pytest.mark.parametrize(
    "reward",
    [math.nan, math.inf, -math.inf, "0.5", None, True, 1 + 0j, np.array([0.5]), [0.5]],
    ids=["nan", "inf", "-inf", "str", "None", "True", "complex", "array1", "list1"],
)
def test_every_agent_refuses_a_reward_that_is_not_a_finite_number(reward):
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(a, reward, good_info(None)), "reward")


@pytest.mark.parametrize("reward", [1.5, -0.1, 1.0 + 1e-9])
def test_agents_that_need_unit_rewards_refuse_others(reward):
    names = [n for n in AGENTS if n in UNIT]
    assert_all_refuse(names, None, lambda agent, a: agent.update(a, reward, good_info(None)), "reward", "[0, 1]")


@pytest.mark.parametrize("key", ["observed_mask", "observed_rewards"])
@pytest.mark.parametrize("length", [K - 1, K + 1])
def test_every_agent_refuses_per_arm_info_of_another_length(key, length):
    def call(agent: Agent, a: Any) -> None:
        info = good_info(None)
        info[key] = good_info(None, length)[key]
        agent.update(a, 0.5, info)

    assert_all_refuse(AGENTS, None, call, key)


@pytest.mark.parametrize("best", [K, K + 4, np.int64(K), np.array(K + 1)], ids=["K", "K+4", "np.int64", "0-d array"])
def test_every_agent_refuses_an_optimal_action_beyond_its_arms(best):
    assert_all_refuse(
        AGENTS,
        None,
        lambda agent, a: agent.update(a, 0.5, {**good_info(None), "optimal_action": best}),
        "optimal_action",
    )


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_agents_that_read_side_observations_refuse_non_finite_observed_rewards(value):
    def call(agent: Agent, a: Any) -> None:
        info = good_info(None)
        info["observed_rewards"] = np.array([0.5, 0.5, value])
        agent.update(a, 0.5, info)

    assert_all_refuse([n for n in AGENTS if n in SIDE], None, call, "observed_rewards")


def test_agents_that_read_side_observations_refuse_a_mask_that_is_not_boolean():
    def call(agent: Agent, a: Any) -> None:
        agent.update(a, 0.5, {**good_info(None), "observed_mask": np.full(K, 0.5)})

    assert_all_refuse([n for n in AGENTS if n in SIDE], None, call, "observed_mask")


@pytest.mark.parametrize("info", [[1, 2], "info", 3.0], ids=["list", "str", "float"])
def test_every_agent_refuses_an_info_that_is_not_a_dict(info):
    assert_all_refuse(AGENTS, None, lambda agent, a: agent.update(a, 0.5, info), "info")


def test_every_agent_refuses_an_observation_with_another_number_of_arms():
    def call(agent: Agent, a: Any) -> None:
        agent.act(np.zeros((K + 2, D)))

    assert_all_refuse([n for n in AGENTS if n not in OWN_OBS], None, call, "obs")


# N copies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        np.array([0.0, 1.0, 2.0, 0.0]),
        np.array([True, False, True, False]),
        np.array(["0", "1", "2", "0"]),
        [0.0, 1.0, 2.0, 0.0],
        np.array([0, 1, 2]),
        np.zeros((N, 1), dtype=np.int64),
        1,
        np.array([1.5, 0, 0, 0], dtype=object),
        np.array([0, "1", 0, 0], dtype=object),
        np.array([0, 0, True, 0], dtype=object),
        np.array([0, 0, 0, None], dtype=object),
    ],
    ids=[
        "float-array",
        "bool-array",
        "str-array",
        "float-list",
        "short",
        "2d",
        "scalar",
        "object-float",
        "object-str",
        "object-bool",
        "object-None",
    ],
)
def test_batched_agents_refuse_actions_that_are_not_an_integer_array_of_shape_n(action):
    assert_all_refuse(AGENTS, N, lambda agent, a: agent.update(action, np.full(N, 0.5), good_info(N)), "action")


def test_batched_agents_accept_integer_arrays_of_any_integer_dtype_but_not_integral_floats():
    for name, make in AGENTS.items():
        for dtype in (np.int64, np.int32, np.uint8, object):  # an object array of integers too
            agent = make(N)
            a = np.asarray(agent.act(obs_for(name, N)))
            agent.update(a.astype(dtype), np.full(N, 0.5), good_info(N))
            a = np.asarray(agent.act(obs_for(name, N)))
            agent.update(a.tolist(), np.full(N, 0.5).tolist(), good_info(N))
    call = lambda agent, a: agent.update(np.asarray(a, dtype=np.float64), np.full(N, 0.5), good_info(N))  # noqa: E731
    assert_all_refuse(AGENTS, N, call, "action")


def test_batched_agents_name_the_copy_with_an_arm_out_of_range():
    def call(agent: Agent, a: Any) -> None:
        bad = np.array(a, dtype=np.int64)
        bad[2] = K
        agent.update(bad, np.full(N, 0.5), good_info(N))

    assert_all_refuse(AGENTS, N, call, "copy 2")


@pytest.mark.parametrize(
    "reward",
    [np.array([0.5, np.nan, 0.5, 0.5]), np.full(N - 1, 0.5), np.full((N, 1), 0.5), 0.5, np.array(["0.5"] * N)],
    ids=["nan", "short", "2d", "scalar", "str"],
)
def test_batched_agents_refuse_rewards_that_are_not_a_finite_array_of_shape_n(reward):
    assert_all_refuse(AGENTS, N, lambda agent, a: agent.update(a, reward, good_info(N)), "reward")


@pytest.mark.parametrize("shape", [(N, K + 1), (N, K - 1), (K,), (N + 1, K)])
@pytest.mark.parametrize("key", ["observed_mask", "observed_rewards"])
def test_batched_agents_refuse_per_arm_info_of_another_shape(shape, key):
    def call(agent: Agent, a: Any) -> None:
        info = good_info(N)
        info[key] = np.ones(shape, dtype=bool) if key == "observed_mask" else np.full(shape, 0.5)
        agent.update(a, np.full(N, 0.5), info)

    assert_all_refuse(AGENTS, N, call, key)


@pytest.mark.parametrize(
    "best",
    [
        np.array([0, 1, K, 0]),
        np.array([0, 0, 0, K]),  # the last copy
        np.array([0, 9, 1, 7, K, 2, 0, 5])[::2],  # strided: read where it is
        np.array([0, K, 0, 0], dtype=">i8"),  # int64 in the other byte order
        np.array([0, K, 0, 0], dtype=np.int32),
    ],
    ids=["int64", "last copy", "strided", "big-endian", "int32"],
)
def test_batched_agents_refuse_an_optimal_action_beyond_their_arms(best: np.ndarray) -> None:
    def call(agent: Agent, a: Any) -> None:
        agent.update(a, np.full(N, 0.5), {**good_info(N), "optimal_action": best})

    assert_all_refuse(AGENTS, N, call, "optimal_action")


_ARM = "action must be an integer arm index in [0, 2] (an int or numpy integer), got "
_ARMS = "action must be an integer array of shape (4,), one arm in [0, 2] per copy, got "
_RANGE = "action must be an arm index in [0, 2] (the agent has 3 arms)"
_REWARDS = "reward must be a real array of shape (4,), one reward per copy, got "
_BEST = (
    "info['optimal_action'] must be an arm index below the agent's 3 arms, got {}, "
    "so the env has more arms than the agent."
)
#: (copies, argument, value, error, message), where {bounds} stands for " in [0, 1] (why)" if the
#: agent has reward bounds: the exact sentences of agents.base's checks, whichever path an
#: agent's update takes to them (its checked path, or a compiled step's fallback).
EXACT_REFUSALS = [
    (None, "action", 1.0, TypeError, _ARM + "1.0 (float)."),
    (None, "action", True, TypeError, _ARM + "True (bool)."),
    (None, "action", np.array(1.0), TypeError, _ARM + "an array of shape () and dtype float64."),
    (None, "action", np.array([1]), TypeError, _ARM + "an array of shape (1,) and dtype int64."),
    (None, "action", K, ValueError, _RANGE + ", got 3."),
    (None, "action", np.array(K, dtype=np.uint8), ValueError, _RANGE + ", got 3."),
    (None, "action", np.int32(-1), ValueError, _RANGE + ", got -1."),
    (None, "action", 2**70, ValueError, _RANGE + f", got {2**70}."),
    (None, "action", np.uint64(2**63 + 5), ValueError, _RANGE + f", got {2**63 + 5}."),
    (None, "reward", math.nan, ValueError, "reward must be a finite number{bounds}, got nan."),
    (None, "reward", np.float32(math.inf), ValueError, "reward must be a finite number{bounds}, got inf."),
    (
        None,
        "reward",
        10**400,
        ValueError,
        "reward must be a finite number{bounds}, got 100000000000000000...0000000000000000000.",
    ),
    (
        None,
        "reward",
        -(10**5000),
        ValueError,
        "reward must be a finite number{bounds}, got a negative integer of about 5,001 digits.",
    ),
    (None, "action", 10**5000, ValueError, _RANGE + ", got an integer of about 5,001 digits."),
    (None, "reward", np.array(-math.inf), ValueError, "reward must be a finite number{bounds}, got -inf."),
    (
        None,
        "reward",
        np.array(True),
        TypeError,
        "reward must be a real number, got an array of shape () and dtype bool.",
    ),
    (None, "reward", "0.5", TypeError, "reward must be a real number, got '0.5' (str)."),
    (
        None,
        "reward",
        np.array([0.5]),
        TypeError,
        "reward must be a real number, got an array of shape (1,) and dtype float64.",
    ),
    (None, "info", {"optimal_action": np.array(K + 1)}, ValueError, _BEST.format(4)),
    (None, "info", {"optimal_action": 2**64}, ValueError, _BEST.format(2**64)),  # beyond int64
    (N, "info", {"optimal_action": [0, 2**64, 0, 0]}, ValueError, _BEST.format(2**64)),
    (N, "info", {"optimal_action": np.array([0, 2**70, None, 0], dtype=object)}, ValueError, _BEST.format(2**70)),
    (N, "action", [0, 1, 2**64, 0], ValueError, _RANGE + f" for copy 2, got {2**64}."),  # an object array to numpy
    (N, "action", [0, 1.5, 2, 0], TypeError, _ARMS + "a list of length 4 holding 1.5 (float) for copy 1."),
    (
        N,
        "reward",
        [0.5, None, 0.5, 0.5],
        TypeError,
        _REWARDS + "a list of length 4 holding None (NoneType) for copy 1.",
    ),
    (
        N,
        "reward",
        [0.5, 0.5, 10**400, 0.5],
        ValueError,
        "reward must be a finite number{bounds}, got 100000000000000000...0000000000000000000 for copy 2.",
    ),
    (
        None,
        "info",
        {"observed_mask": np.ones(K + 1, dtype=bool)},
        ValueError,
        "info['observed_mask'] must have shape (3,), one entry per arm (the agent has 3 arms), got shape (4,).",
    ),
    (None, "info", 3.0, TypeError, "info must be the env's step info (a dict) or None, got 3.0 (float)."),
    (N, "action", np.array([0.0, 1.0, 2.0, 0.0]), TypeError, _ARMS + "an array of shape (4,) and dtype float64."),
    (N, "action", 1, ValueError, _ARMS + "1 (int)."),
    (
        N,
        "action",
        np.array([0, 1.5, 2, 0], dtype=object),
        TypeError,
        _ARMS + "an object array holding 1.5 (float) for copy 1.",
    ),
    (N, "action", np.array([0, 1, 2**70, 0], dtype=object), ValueError, _RANGE + f" for copy 2, got {2**70}."),
    (N, "action", np.array([0, 1, 2]), ValueError, _ARMS + "an array of shape (3,) and dtype int64."),
    (N, "action", np.array([0, -1, 0, 0]), ValueError, _RANGE + " for copy 1, got -1."),
    (
        N,
        "action",
        np.array([0, 0, 2**63 + 1, 0], dtype=np.uint64),
        ValueError,
        _RANGE + f" for copy 2, got {2**63 + 1}.",
    ),
    (
        N,
        "reward",
        np.array([0.5, 0.5, math.nan, 0.5]),
        ValueError,
        "reward must be a finite number{bounds}, got nan for copy 2.",
    ),
    (N, "reward", [0.5, 0.5, 0.5, math.inf], ValueError, "reward must be a finite number{bounds}, got inf for copy 3."),
    (N, "reward", [0.5] * (N - 1), ValueError, _REWARDS + "a list of length 3."),
    (N, "reward", None, TypeError, _REWARDS + "None (NoneType)."),
    (N, "info", {"optimal_action": np.array([0, K + 4, 0, 0])}, ValueError, _BEST.format(7)),
    (
        N,
        "info",
        {"observed_rewards": np.full((N, K - 1), 0.5)},
        ValueError,
        "info['observed_rewards'] must have shape (4, 3), one entry per arm for each copy (the agent has 3 arms), got "
        "shape (4, 2).",
    ),
]


@pytest.mark.parametrize("name", ["Random", "UCB", "EpsilonGreedy", "KLUCB", "TS", "Exp3", "AAE", "HybridDPUCB"])
def test_refusals_are_these_exact_sentences_for_one_env_and_for_copies(name):
    found = []
    for n, argument, value, error, message in EXACT_REFUSALS:
        agent = AGENTS[name](n)
        a = agent.act(obs_for(name, n))
        args = [a, 0.5 if n is None else np.full(n, 0.5), good_info(n)]
        if argument == "info":
            args[2] = {**args[2], **value} if isinstance(value, dict) else value
        else:
            args[argument == "reward"] = value
        low, high = agent.reward_bounds or (0.0, 0.0)
        bounds = "" if agent.reward_bounds is None else f" in [{low:g}, {high:g}] ({agent._bounds_reason()})"
        expected = message.format(bounds=bounds)
        try:
            agent.update(*args)
        except (TypeError, ValueError) as exc:
            if type(exc) is not error or str(exc) != expected:
                found.append(f"{argument}={value!r} (n_envs={n}): {type(exc).__name__}: {exc}")
        else:
            found.append(f"{argument}={value!r} (n_envs={n}): accepted")
    assert not found, "\n".join(found)


def test_batched_agents_refuse_an_observation_with_another_number_of_arms():
    assert_all_refuse(
        [n for n in AGENTS if n not in OWN_OBS], N, lambda agent, a: agent.act(np.zeros((N, K + 2, D))), "obs"
    )


# Seeds -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [None, N], ids=["one", "copies"])
@pytest.mark.parametrize("seed", [np.int64(7), np.uint32(7), np.uint8(255)], ids=["int64", "uint32", "uint8-255"])
def test_every_agent_takes_a_numpy_integer_seed_as_the_int_it_equals_and_keeps_it_through_refusals(seed, n):
    """Copies seeded s + i must not wrap in the seed's dtype (a uint8 255 + 1 is 0); a refused seed changes nothing."""
    found = []
    for name, make in AGENTS.items():
        agent, twin = make(n), make(n)
        try:
            agent.reset(seed)
            twin.reset(int(seed))
            for bad in (-1, 1.5, True, np.float64(2.0), "3"):
                with pytest.raises((TypeError, ValueError), match=r"^seed must be an integer"):
                    agent.reset(bad)
            if type(agent.seed) is not int or agent.seed != int(seed):
                found.append(f"{name}: seed kept as {agent.seed!r}")
                continue
            if play_steps(agent, name, n) != play_steps(twin, name, n):
                found.append(f"{name}: plays otherwise than with seed {int(seed)}")
            agent.reset()  # the same seed again: the agent still works
            twin.reset()
            if play_steps(agent, name, n) != play_steps(twin, name, n):
                found.append(f"{name}: plays otherwise than with seed {int(seed)} after reset()")
        except Exception as exc:  # noqa: BLE001 - any error is a finding
            found.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]!r}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("n", [None, N], ids=["one", "copies"])
def test_agents_drawing_from_sampling_streams_are_built_with_numpy_integer_seeds(n):
    for make in (
        lambda s: ThompsonSampling(K, n_envs=n, seed=s),
        lambda s: ThompsonSampling(K, side_observations=True, n_envs=n, seed=s),
        lambda s: LDPThompsonSampling(K, 1.0, n_envs=n, seed=s),
        lambda s: DPThompsonSampling(K, 1.0, n_envs=n, seed=s),
    ):
        for seed in (np.int64(3), np.uint32(3)):
            agent, twin = make(seed), make(3)
            assert type(agent.seed) is int and agent.seed == 3
            assert play_steps(agent, "TS", n, steps=6) == play_steps(twin, "TS", n, steps=6)


# Pairing with an env -----------------------------------------------------------------------


def test_check_env_refuses_an_env_with_another_number_of_arms():
    env = gym.make("GraphBandit-v0", n_arms=K + 1, horizon=10)
    for name, make in AGENTS.items():
        if name in LINEAR or name == "SB3":
            continue
        with pytest.raises(
            ValueError, match=r"^env must have the agent's number of arms \(n_arms=3\), got an env with 4"
        ):
            make(None).check_env(env)
        make(None).check_env(gym.make("GraphBandit-v0", n_arms=K, horizon=10))


def test_check_env_refuses_another_number_of_copies():
    vec = gym.make_vec("GraphBandit-v0", num_envs=N + 1, n_arms=K, horizon=10)
    with pytest.raises(ValueError, match="num_envs=4 .* got a vector env with num_envs=5"):
        UCB(K, n_envs=N).check_env(vec)
    with pytest.raises(ValueError, match="must be a single env"):
        UCB(K).check_env(vec)
    with pytest.raises(ValueError, match="must be a vector env"):
        UCB(K, n_envs=N).check_env(gym.make("GraphBandit-v0", n_arms=K, horizon=10))
    UCB(K, n_envs=N + 1).check_env(vec)


def test_check_env_of_linear_agents_compares_the_feature_matrices():
    env = gym.make("MovieLensRecommendation-v0", horizon=7)
    n_arms, d = env.observation_space.shape
    LinUCB(d).check_env(env)
    with pytest.raises(ValueError, match=f"n_features={d + 1}"):
        LinUCB(d + 1).check_env(env)
    with pytest.raises(ValueError, match=f"of shape \\({K}, {d}\\).*got observations of shape \\(\\)"):
        LDPLinUCB(d, 1.0).check_env(gym.make("GraphBandit-v0", n_arms=K, horizon=7))
    assert n_arms == env.action_space.n


def test_check_env_of_sb3_agents_compares_the_observations():
    with pytest.raises(ValueError, match="observation shape"):
        SB3Agent(StubModel()).check_env(gym.make("GraphBandit-v0", n_arms=K, horizon=7))  # type: ignore[arg-type]


class PlainAgent:
    """A user agent that is not an agents.Agent, with an ``n_arms`` attribute."""

    def __init__(self, n_arms: int) -> None:
        self.n_arms = n_arms

    def act(self, obs: Any = None) -> int:
        return 0

    def update(self, action: Any, reward: Any, info: Any = None) -> None:
        pass

    def reset(self, seed: int | None = None) -> None:
        pass


@pytest.mark.parametrize(
    "agent",
    [UCB(K - 1), Random(K - 1), FixedArm(K - 1, 0), PlainAgent(K - 1)],
    ids=["UCB", "Random", "FixedArm", "plain"],
)
def test_play_refuses_an_agent_with_fewer_arms_than_the_env(agent):
    env = gym.make("GraphBandit-v0", n_arms=K, horizon=10)
    with pytest.raises(UserAgentError, match="arms") as exc:
        play(env, agent, 10, [10], 0)
    assert "\n" not in str(exc.value)


# State size --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: UCB(10, n_envs=10**10),
        lambda: UCB(10**12),
        lambda: ThompsonSampling(10, n_envs=10**10),
        lambda: Random(10, n_envs=10**12),
        lambda: FixedArm(10, 0, n_envs=10**12),
        lambda: GAP(10**6, 100, 1.0, None),
        lambda: DPSE(10, 100, 1.0, n_envs=10**10),
        lambda: LinUCB(10**6),
        lambda: LDPLinUCB(20, 1.0, n_envs=10**8),
        lambda: EpsilonGreedy(10, n_envs=10**10),
        lambda: KLUCB(10**12),
        lambda: MOSS(10, 100, n_envs=10**10),
        lambda: Exp3(10, n_envs=10**10),
    ],
    ids=[
        "UCB-copies",
        "UCB-arms",
        "TS",
        "Random",
        "FixedArm",
        "GAP-arms",
        "DPSE",
        "LinUCB",
        "LDPLinUCB",
        "EpsilonGreedy",
        "KLUCB",
        "MOSS",
        "Exp3",
    ],
)
def test_absurd_state_sizes_are_refused_before_allocating(make):
    with pytest.raises(
        ValueError, match=r"\(agent state\) would need about [\d.e+]+ [TGM]iB, more than the limit"
    ) as exc:
        make()
    assert "BANDIT_ENVS_MEMORY_LIMIT" in str(exc.value) and "\n" not in str(exc.value)


# Fast paths --------------------------------------------------------------------------------

ELIMINATION = ["GAP", "GAPU", "DPSE", "AAE", "AAE-side", "AlphaSample"]


def rule_of(message: str) -> str:
    """The rule of a value error: what follows "must be a finite number" / "must be finite numbers"."""
    return message.split(" in [", 1)[1].split(", got", 1)[0]


@pytest.mark.parametrize("value", [math.nan, 1.5, -0.25, math.inf])
@pytest.mark.parametrize("name", ELIMINATION)
def test_simulate_refuses_rewards_as_the_step_api_does(name, value):
    table = np.full((50, K), 0.5)
    table[7, 1] = value
    with pytest.raises(ValueError, match=r"^table must be finite numbers in \[0, 1\]") as exc:
        AGENTS[name](None).simulate(table, PATH3, np.zeros(K))
    assert exc.match(r"at round 7, arm 1\.$")
    with pytest.raises(ValueError) as step:
        AGENTS[name](None).update(1, value, good_info(None))
    assert rule_of(str(exc.value)) == rule_of(str(step.value))


@pytest.mark.parametrize("name", ELIMINATION)
def test_simulate_reads_negative_zero_as_the_zero_it_is(name):
    # -0.0 is in [0, 1] (0.0 <= -0.0), as the step API reads it. GAP's loop over a table of
    # rewards looks at an entry's bits, where -0.0's sign bit reads as above 1.0: its exact
    # search must then find nothing and play on.
    table = np.random.default_rng(2).random((400, K))
    table[::7] = 0.0
    negative = table.copy()
    negative[::7] = -0.0
    kwargs: dict[str, Any] = {"checkpoints": np.arange(10, 401, 10), "record_actions": True}
    gaps = np.array([0.0, 0.1, 0.2])
    plain = AGENTS[name](None).simulate(table, PATH3, gaps, **kwargs)
    signed = AGENTS[name](None).simulate(negative, PATH3, gaps, **kwargs)
    np.testing.assert_array_equal(plain.actions, signed.actions)
    np.testing.assert_array_equal(plain.checkpoint_regret, signed.checkpoint_regret)


@pytest.mark.parametrize("name", ELIMINATION)
def test_simulate_checks_the_entries_it_reads_and_a_refusal_leaves_the_agent_as_it_was(name):
    rng = np.random.default_rng(1)
    table = rng.random((400, K))
    bad = table.copy()
    bad[150, :] = math.nan  # read by every agent
    agent, twin = AGENTS[name](None), AGENTS[name](None)
    agent.rng, twin.rng = np.random.default_rng(5), np.random.default_rng(5)
    agent.simulate(table[:100], PATH3, np.zeros(K))
    twin.simulate(table[:100], PATH3, np.zeros(K))
    with pytest.raises(ValueError, match=r"at round 150, arm \d\.$"):
        agent.simulate(bad, PATH3, np.zeros(K))
    first = agent.simulate(table, PATH3, np.zeros(K), record_actions=True).actions
    second = twin.simulate(table, PATH3, np.zeros(K), record_actions=True).actions
    np.testing.assert_array_equal(first, second)
    assert agent.rng.random() == twin.rng.random()


@pytest.mark.parametrize("value", [math.nan, 1.5, -0.25])
def test_simulate_refuses_uniforms_outside_the_unit_interval(value):
    table = np.full((50, K), 0.5)
    table[3, 2] = value
    law = RewardModel("truncnorm", np.array([0.9, 0.5, 0.2]))
    with pytest.raises(ValueError, match=r"^table must be finite numbers in \[0, 1\] \(uniforms"):
        GAP(K, 50, 1.0, PATH3).simulate(table, PATH3, np.zeros(K), law=law)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"override": (3, 1, 2.0)}, ValueError, r"override\[2\] \(the reward v\) must be a finite number in \[0, 1\]"),
        ({"override": (3, 1, math.nan)}, ValueError, r"override\[2\]"),
        ({"override": (50, 1, 0.0)}, ValueError, "override must name an entry"),
        ({"override": (3, K, 0.0)}, ValueError, "override must name an entry"),
        ({"override": (3.0, 1, 0.0)}, TypeError, r"override\[0\]"),
        ({"copy": 1}, ValueError, r"copy must be a copy index in \[0, 0\]"),
        ({"copy": -1}, ValueError, "copy"),
        ({"checkpoints": np.array([20, 10])}, ValueError, "checkpoints must be strictly increasing"),
        ({"checkpoints": np.array([10, 60])}, ValueError, r"checkpoints must be .* in \[1, 50\]"),
        ({"checkpoints": np.array([10.0])}, TypeError, "checkpoints"),
        ({"law": "truncnorm"}, TypeError, "law"),
        ({"law": RewardModel("bernoulli", np.array([0.5, 0.5]))}, ValueError, "law"),
    ],
)
def test_simulate_refuses_its_other_arguments_in_one_sentence(kwargs, error, match):
    with pytest.raises(error, match=match) as exc:
        GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, np.zeros(K), **kwargs)
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize("gaps", [np.zeros(K + 1), np.array([0.0, np.nan, 0.1]), "0"], ids=["long", "nan", "str"])
def test_simulate_refuses_bad_gaps(gaps):
    with pytest.raises((TypeError, ValueError), match="gaps"):
        GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, gaps)


def test_simulate_checks_gaps_the_caller_changed_in_place_after_a_checked_call():
    # The last checked gaps are kept for the next call with the same bytes: an array changed
    # in place, or a subclass with the same data, is checked again.
    gaps = np.array([0.0, 0.1, 0.2])
    GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, gaps)
    gaps[1] = -0.1
    with pytest.raises(ValueError, match="gaps must be non-negative"):
        GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, gaps)
    gaps[1] = np.nan
    with pytest.raises(ValueError, match="gaps"):
        GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, gaps)
    gaps[1] = 0.1
    result = GAP(K, 50, 1.0, PATH3).simulate(np.full((50, K), 0.5), PATH3, gaps, checkpoints=np.array([50]))
    assert (
        result.checkpoint_regret[0]
        == GAP(K, 50, 1.0, PATH3)
        .simulate(np.full((50, K), 0.5), PATH3, gaps.copy(), checkpoints=np.array([50]))
        .checkpoint_regret[0]
    )


@pytest.mark.parametrize("name", ["LinUCB", "LDPLinUCB"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_linear_run_refuses_rewards_as_the_step_api_does(name, value):
    features = np.full((6, K, D), 0.3)
    rewards = np.full((6, K), 0.5)
    rewards[2, 1] = value
    with pytest.raises(ValueError, match=r"^rewards must be finite numbers.*, got .* at round 2, arm 1\.$") as run:
        AGENTS[name](None).run(features, rewards)
    agent = AGENTS[name](None)
    agent.act(features[0])
    with pytest.raises(ValueError, match=r"^reward must be a finite number") as step:
        agent.update(1, value)
    # The same rule (LinUCB's says its bounds, the private agents' any finite number).
    assert (
        str(run.value).split("numbers", 1)[1].split(", got")[0]
        == str(step.value).split("number", 1)[1].split(", got")[0]
    )


# Extreme parameters ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: GAP(K, 60, 1e-300, PATH3), r"epsilon must be in \[1e-100"),
        (lambda: GAP(K, 60, 1.0, PATH3, delta=5e-324), "first epoch of GAP"),
        (lambda: GAPU(K, 60, 1e-300, PATH3), r"epsilon must be in \[1e-100"),
        (lambda: DPSE(K, 60, 5e-324), r"epsilon must be in \[1e-100"),
        (lambda: DPSE(K, 60, 1.0, schedule_scale=1e300), "first epoch of DPSE"),
        (lambda: AlphaSample(K, 60, epsilon1=1e-300), "first epoch of AlphaSample"),
        (lambda: AlphaSample(K, 60, coeff=1e300), "first epoch of AlphaSample"),
        (lambda: AlphaSample(K, 60, delta=5e-324), "first epoch of AlphaSample"),
        (lambda: LDPLinUCB(D, 1.0, l_x=1e300), "l_x and l_y"),
        (lambda: LDPLinUCB(D, 1.0, l_x=5e-324), "l_x and l_y"),
        (lambda: LDPLinUCB(D, 5e-324), "epsilon and delta"),
        (lambda: LDPLinUCB(D, 1.0, delta=5e-324), "epsilon and delta"),
        (lambda: LDPWrapper(UCB(K), "laplace", 5e-324), r"epsilon must be in \[1e-100"),
        (lambda: LDPWrapper(UCB(K), "laplace", 1.0, reward_range=(-8e307, 8e307)), "epsilon and reward_range"),
        (lambda: LDPWrapper(UCB(K), "laplace", 1.0, reward_range=(-1e308, 1e308)), "reward_range must have a finite"),
        (
            lambda: LDPWrapper(UCB(K), "gaussian", 5e-324, 0.1, sigma_method="analytic"),
            r"epsilon (and reward_range|must be in \[1e-100)",
        ),
        (lambda: LDPWrapper(UCB(K), "randomized_response", 5e-324, rr_output="debias"), r"epsilon must be in \[1e-100"),
    ],
)
def test_parameters_whose_schedule_or_noise_is_not_finite_are_refused(make, match):
    with pytest.raises(ValueError, match=match) as exc:
        make()
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


#: (agent name, parameter, builder of the agent with that parameter, its largest value): integer
#: parameters that compiled kernels receive, as an int64 or as a float64 (exact up to 2**53).
INTEGER_CAPS = [
    ("PrePullGaussianTS", "pre_pulls", lambda v, n: PrePullGaussianTS(K, v, n_envs=n, seed=0), 2**63 - 1),
    (
        "PrePullGaussianTS",
        "pre_pulls",
        lambda v, n: PrePullGaussianTS.for_budget(K, 100, 1.0, pre_pulls=v, n_envs=n, seed=0),
        2**63 - 1,
    ),
    ("DPTSUCB", "budget", lambda v, n: DPTSUCB(K, 100, variance=1e100, budget=v, n_envs=n, seed=0), 2**63 - 1),
    ("LDPOLS", "batch_size", lambda v, n: LDPOLS(D, 1.0, batch_size=v, n_envs=n, seed=0), 2**53),
    ("ShuffleLinUCB", "batch_size", lambda v, n: ShuffleLinUCB(D, 1.0, batch_size=v, n_envs=n, seed=0), 10**6),
]


@pytest.mark.parametrize("n", [None, N], ids=["one", "copies"])
@pytest.mark.parametrize(("name", "key", "make", "cap"), INTEGER_CAPS, ids=[f"{c[0]}-{c[1]}" for c in INTEGER_CAPS])
def test_integer_parameters_that_reach_compiled_code_are_capped_in_one_sentence(name, key, make, cap, n):
    """Beyond the cap numba raised a TypingError or an OverflowError, or a kernel gave a wrong sentence."""
    agent = make(cap, n)
    play_steps(agent, name, n)
    if name in LINEAR:
        agent.run(np.full((5, *np.shape(obs_for(name, None))), 0.3), np.full((5, K), 0.5))
    for value in (cap + 1, 2**63, 2**70):
        with pytest.raises(ValueError, match=rf"^{key} must be an integer in \[\d, {cap:,}\] \(.+\), got {value}\.$"):
            make(value, n)


@pytest.mark.parametrize("value", [math.nan, 1.5, -0.25])
@pytest.mark.parametrize("run", ["gap", "dpse", "aae"])
def test_reference_runs_refuse_rewards_as_the_compiled_agents_do(run, value):
    from agents.elimination import reference

    table = np.full((40, K), 0.5)
    table[5, 2] = value
    calls = {
        "gap": lambda: reference.run_gap(table, PATH3, 1.0, seed=0),
        "dpse": lambda: reference.run_dpse(table, 1.0, seed=0),
        "aae": lambda: reference.run_aae(table),
    }
    with pytest.raises(ValueError, match=r"^table must be finite numbers in \[0, 1\] .* at round 5, arm 2\.$"):
        calls[run]()


# Huge arguments -----------------------------------------------------------------------------

BIG = "9" * 100_000


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: LDPWrapper(UCB(K), "laplace", 1.0, delta=BIG), "delta must be None"),
        (lambda: LDPWrapper(UCB(K), "laplace", 1.0, noise_aware=BIG), "noise_aware"),
        (lambda: LDPWrapper(UCB(K), "laplace", 1.0, reward_range=BIG), "reward_range"),
        (lambda: AAE(K, 100, side_observations=BIG), "side_observations"),
        (lambda: ThompsonSampling(K, side_observations=BIG), "side_observations"),
        (lambda: SB3Agent(StubModel(), deterministic=BIG), "deterministic"),  # type: ignore[arg-type]
        (lambda: EpsilonGreedy(K, epsilon=BIG), "epsilon"),
        (lambda: EpsilonGreedy(K, schedule=BIG), "schedule"),
    ],
    ids=["ldp-delta", "ldp-noise_aware", "ldp-reward_range", "aae-side", "ts-side", "sb3-flag", "eps", "schedule"],
)
def test_constructors_quote_a_huge_argument_by_a_short_prefix(make: Callable[[], Any], words: str) -> None:
    with pytest.raises((TypeError, ValueError), match=words) as error:
        make()
    msg = str(error.value)
    assert "\n" not in msg and len(msg) < 300, f"{len(msg)} characters: {msg[:300]}"
    assert "..." in msg, msg
