"""The one-env step of the index agents (KL-UCB, MOSS, ε-greedy, Exp3, Thompson sampling).

With one env, ``update`` with plain scalars and ``act`` are each one call of a compiled one-env
kernel (KL-UCB and MOSS: ``update`` also chooses the next arm). These tests check that the
path is taken, that it makes the same choices as the general checked path (the same agent with
``n_envs=1``), and that reading or writing the state, copying the agent and refused feedback
behave as on the checked path.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from agents import KLUCB, MOSS, EpsilonGreedy, Exp3, ThompsonSampling
from agents.base import Agent

AGENTS: dict[str, Callable[[int | None], Agent]] = {
    "KLUCB": lambda n: KLUCB(6, n_envs=n),
    "KLUCB-c3": lambda n: KLUCB(6, 3.0, tol=1e-6, n_envs=n),
    "MOSS": lambda n: MOSS(6, 500, n_envs=n),
    "EpsilonGreedy": lambda n: EpsilonGreedy(6, 0.2, n_envs=n, seed=4),
    "EpsilonGreedy-decaying": lambda n: EpsilonGreedy(6, schedule="decaying", d=0.3, n_envs=n, seed=5),
    "Exp3": lambda n: Exp3(6, 2000, n_envs=n, seed=6),
    "Exp3-anytime": lambda n: Exp3(6, gamma=0.1, n_envs=n, seed=7),
    "TS": lambda n: ThompsonSampling(6, n_envs=n, seed=8),
}

#: Scalar types an env or a user passes: every one must give the same choices.
KINDS: list[Callable[[float], Any]] = [float, np.float64, lambda r: int(r > 0.5), lambda r: np.int64(r > 0.5)]


def state_of(agent: Agent) -> list[np.ndarray]:
    """The agent's learning state arrays (copies).

    Thompson sampling's one-env update also chooses the next arm, drawing ahead; until ``act``
    returns that arm, its stream's state as of before the choice is kept apart.
    """
    if getattr(agent, "_next", -1) >= 0 and hasattr(agent, "_stream_mark"):
        agent = copy.deepcopy(agent)
        agent._forget_choice()  # type: ignore[attr-defined]
    names = ("_state", "_anchors", "_successes", "_failures", "_shapes", "_streams")
    return [np.array(getattr(agent, name)) for name in names if hasattr(agent, name)]


def play(single: Agent, batch1: Agent, rounds: int, seed: int = 0) -> None:
    """Both agents on the same rewards; their actions must agree every round."""
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.1, 0.9, size=single.n_arms)
    for t in range(rounds):
        action = single.act()
        assert type(action) is int
        assert action == int(batch1.act()[0]), t
        reward = KINDS[t % 4](float(rng.random() < means[action]) if t % 3 else float(rng.random()))
        single.update(action if t % 2 else np.int64(action), reward)
        batch1.update(np.array([action]), np.array([float(reward)]))


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_single_env_step_equals_the_batch_of_one(name):
    make = AGENTS[name]
    single, batch1 = make(None), make(1)
    play(single, batch1, 2000)
    for a, b in zip(state_of(single), state_of(batch1), strict=True):
        np.testing.assert_array_equal(a, b)
    single.reset()
    batch1.reset()
    play(single, batch1, 300, seed=1)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_single_env_step_takes_the_one_call_path(name, monkeypatch):
    single = AGENTS[name](None)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the checked path was taken")

    monkeypatch.setattr(type(single), "_feedback", refused)
    rng = np.random.default_rng(2)
    for t in range(50):
        action = single.act()
        single.update(action, KINDS[t % 4](rng.random()), {"optimal_action": 0} if t % 5 == 0 else None)
    assert single.t == 50 if hasattr(single, "t") else True


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_copy_made_between_update_and_act_plays_on_identically(name):
    agent = AGENTS[name](None)
    play(agent, AGENTS[name](1), 40)
    agent.update(agent.act(), 1.0)
    for twin in (copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))):
        original = copy.deepcopy(agent)
        for t in range(200):
            a, b = original.act(), twin.act()
            assert a == b, t
            original.update(a, float(t % 3 == 0))
            twin.update(b, float(t % 3 == 0))


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_refused_single_env_feedback_changes_nothing(name):
    agent = AGENTS[name](None)
    for t in range(20):
        agent.update(agent.act(), float(t % 2))
    reference = copy.deepcopy(agent)
    before = state_of(agent)
    bad = [(0, math.nan), (0, math.inf), (6, 0.5), (-1, 0.5), (True, 0.5), (1.0, 0.5), (0, "1"), (0, None)]
    if agent.reward_bounds == (0.0, 1.0):
        bad += [(0, 1.5), (0, -0.1), (0, 2)]
    elif agent.reward_bounds is not None:  # the summing agents' [-1e289, 1e289]
        bad += [(0, 1e308), (0, -1e300), (0, 10**290)]
    for action, reward in bad:
        with pytest.raises((TypeError, ValueError)):
            agent.update(action, reward)
    for a, b in zip(state_of(agent), before, strict=True):
        np.testing.assert_array_equal(a, b)
    for t in range(100):
        a = agent.act()
        assert a == reference.act(), t
        agent.update(a, float(t % 2))
        reference.update(a, float(t % 2))


@pytest.mark.parametrize("make", [lambda n: KLUCB(3, n_envs=n), lambda n: MOSS(3, 100, n_envs=n)])
def test_writing_the_state_or_t_is_seen_by_the_next_act(make):
    agent, checked = make(None), make(1)

    def fresh_choice() -> int:
        """The arm the batched path chooses from the single agent's current state."""
        checked._state[:] = agent._state
        if hasattr(agent, "_anchors"):
            checked._anchors[:] = agent._anchors
        checked.t = agent.t
        return int(checked.act()[0])

    for arm, reward in [(0, 0.2), (1, 0.3), (2, 0.1), (1, 0.3), (0, 0.2)]:
        agent.update(arm, reward)
    chosen = agent.act()
    assert chosen == fresh_choice()
    other = (chosen + 1) % 3
    agent.counts[0, other] = 0
    assert agent.act() == fresh_choice()
    agent.update(agent.act(), 0.3)
    agent.means[0, other] = 0.99
    agent.sums[0, other] = 0.99 * agent.counts[0, other]
    assert agent.act() == fresh_choice()
    agent.update(agent.act(), 0.3)
    agent.t = 1000
    assert agent.act() == fresh_choice()


DRAWN_AHEAD: dict[str, Callable[[int | None], Agent]] = {
    "EpsilonGreedy": lambda n: EpsilonGreedy(4, 0.5, n_envs=n, seed=9),
    "EpsilonGreedy-decaying": lambda n: EpsilonGreedy(4, schedule="decaying", d=0.5, n_envs=n, seed=9),
    "Exp3": lambda n: Exp3(4, 300, n_envs=n, seed=9),
    "Exp3-anytime": lambda n: Exp3(4, gamma=0.2, n_envs=n, seed=9),
    "TS": lambda n: ThompsonSampling(4, n_envs=n, seed=9),
}


@pytest.mark.parametrize("name", sorted(DRAWN_AHEAD))
def test_a_choice_made_by_update_draws_as_the_batch_of_one_whatever_comes_before_act(name):
    """ε-greedy's, Exp3's and TS's one-env update chooses the next arm (with uniforms not used yet, or
    drawing ahead): reading the state, setting t, a second update or act, a copy or a reset in
    between must not skip or reuse any draw."""
    single, batch1 = DRAWN_AHEAD[name](None), DRAWN_AHEAD[name](1)
    view = {"Exp3": "probabilities", "TS": "successes"}.get(name.split("-")[0], "means")
    rng = np.random.default_rng(3)
    action = 0
    for t in range(600):
        between = t % 6
        if between == 1:
            assert np.array_equal(getattr(single, view), getattr(batch1, view))
        elif between == 2:
            if hasattr(single, "t"):
                single.t, batch1.t = single.t, batch1.t
            single.update(action, 0.5)  # a second update of the last round, no act in between
            batch1.update(np.array([action]), np.array([0.5]))
        elif between == 3:
            assert single.act() == int(batch1.act()[0]), t  # an act not followed by an update draws anew
        elif between == 4:
            single = pickle.loads(pickle.dumps(single))
            batch1 = copy.deepcopy(batch1)
        elif between == 5 and t % 120 == 5:
            single.reset()
            batch1.reset()
        elif between == 5:  # an update the one-env step leaves to the checked path (a 0-d array action)
            single.update(np.array(action), 0.5)
            batch1.update(np.array([action]), np.array([0.5]))
        action = single.act()
        assert action == int(batch1.act()[0]), t
        reward = float(rng.random() < 0.2 + 0.2 * action)
        single.update(action, reward)
        batch1.update(np.array([action]), np.array([reward]))


def ts_n_round(rng: np.random.Generator, closed: np.ndarray, action: int) -> dict[str, Any]:
    """The env's info for pulling ``action``: its closed neighbourhood revealed, with rewards in [0, 1]."""
    return {"observed_mask": closed[action].copy(), "observed_rewards": rng.random(closed.shape[0])}


def test_ts_n_with_the_envs_info_takes_one_call_and_tosses_the_coins_of_the_checked_path():
    closed = np.eye(6, dtype=bool) | np.diag(np.ones(5, dtype=bool), 1) | np.diag(np.ones(5, dtype=bool), -1)
    single, batch1 = (ThompsonSampling(6, side_observations=True, n_envs=n, seed=9) for n in (None, 1))
    rng = np.random.default_rng(3)
    for t in range(2000):
        action = single.act()
        assert action == int(batch1.act()[0]), t
        info = ts_n_round(rng, closed, action)
        single.update(action, float(info["observed_rewards"][action]), info)
        batch1.update(
            np.array([action]),
            info["observed_rewards"][action : action + 1],
            {key: value[None] for key, value in info.items()},
        )
    for a, b in zip(state_of(single), state_of(batch1), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "change",
    ["NaN revealed", "revealed above 1", "revealed below 0", "short mask", "int mask", "optimal action beyond K"],
)
def test_ts_n_refuses_or_learns_a_round_as_the_checked_path_does(change: str):
    closed = np.eye(6, dtype=bool) | np.diag(np.ones(5, dtype=bool), 1)
    quick, general = (ThompsonSampling(6, side_observations=True, seed=9) for _ in range(2))
    rng = np.random.default_rng(4)
    for _ in range(30):
        action = quick.act()
        assert general.act() == action
        info = ts_n_round(rng, closed, action)
        quick.update(action, 0.5, info)
        general.update(action, 0.5, MappingProxyType(info))  # not a dict: the checked path
    info = ts_n_round(rng, closed, 2)
    if change == "NaN revealed":
        info["observed_rewards"][2] = math.nan
    elif change == "revealed above 1":
        info["observed_rewards"][3] = 1.5
    elif change == "revealed below 0":
        info["observed_rewards"][2] = -0.5
    elif change == "short mask":
        info["observed_mask"] = info["observed_mask"][:-1]
    elif change == "int mask":  # accepted by both: integers 0 and 1
        info["observed_mask"] = info["observed_mask"].astype(np.int64)
    else:
        info["optimal_action"] = 6
    outcomes = []
    for agent, given in ((quick, info), (general, MappingProxyType(info))):
        before = state_of(agent)
        try:
            agent.update(2, 0.5, given)
            outcomes.append("learnt")
        except (TypeError, ValueError) as error:
            for a, b in zip(state_of(agent), before, strict=True):
                np.testing.assert_array_equal(a, b)
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] == "learnt") == (change == "int mask")
    for a, b in zip(state_of(quick), state_of(general), strict=True):
        np.testing.assert_array_equal(a, b)
