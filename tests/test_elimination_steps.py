"""The elimination agents' one-env steps: the quick path of ``update`` learns and refuses exactly as the general one.

One env's ``update`` with a plain action, a plain reward and the env's own info dict takes a
quick path (``EliminationAgent._update_one``: the revealed rewards checked and laid out in one
compiled pass); any other info mapping takes the general path of numpy checks. Here the same
rounds go through both (a ``MappingProxyType`` of the same dict forces the general path), and the
two agents must choose the same arms, draw the same noise and end in the same state, and refuse
the same bad rounds with the same sentence. The kernels draw from the generators' C interfaces by
address; an agent whose ``rng`` is replaced draws from the new generator.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from agents import AAE, DPSE, GAP, GAPU, AlphaSample
from agents.elimination.policies import EliminationAgent
from bandit_envs.feedback_graphs import closed_neighbourhoods

K = 5
HORIZON = 4000
GRAPH = np.zeros((K, K), dtype=bool)
for _i in range(K - 1):
    GRAPH[_i, _i + 1] = GRAPH[_i + 1, _i] = True
CLOSED = closed_neighbourhoods(GRAPH)
MEANS = np.array([0.9, 0.5, 0.45, 0.4, 0.2])

MAKERS: dict[str, Callable[[], EliminationAgent]] = {
    # epsilon and delta large enough that epochs end (and noise is drawn) within HORIZON rounds
    "GAP": lambda: GAP(K, HORIZON, 8.0, GRAPH, delta=0.5, seed=3),
    "GAP-float": lambda: GAP(K, HORIZON, 8.0, GRAPH, delta=0.5, seed=3, sampler="float"),
    "GAPU": lambda: GAPU(K, HORIZON, 8.0, GRAPH, delta=0.5, seed=3),
    "DPSE": lambda: DPSE(K, HORIZON, 8.0, beta=0.5, seed=3),
    "AAE": lambda: AAE(K, HORIZON, delta=0.5, seed=3),
    "AAE-side": lambda: AAE(K, HORIZON, delta=0.5, side_observations=True, seed=3),
    "AlphaSample": lambda: AlphaSample(K, HORIZON, seed=3),
}


def rounds(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Bernoulli rewards (T, K) and, per pulled arm, the revealed arms (its closed neighbourhood)."""
    rewards = (np.random.default_rng(seed).random((HORIZON, K)) < MEANS).astype(float)
    return rewards, CLOSED


def play(agent: EliminationAgent, general: bool, n_rounds: int) -> list[int]:
    rewards, closed = rounds(0)
    actions = []
    for t in range(n_rounds):
        a = agent.act()
        info: dict[str, Any] = {"observed_mask": closed[a].copy(), "observed_rewards": rewards[t].copy()}
        agent.update(a, float(rewards[t, a]), MappingProxyType(info) if general else info)  # type: ignore[arg-type]
        actions.append(int(a))
    return actions


@pytest.mark.parametrize("name", list(MAKERS))
def test_the_quick_path_plays_and_draws_as_the_general_path(name: str) -> None:
    quick, general = MAKERS[name](), MAKERS[name]()
    assert play(quick, False, HORIZON) == play(general, True, HORIZON)
    for mine, theirs in zip(quick._state, general._state, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert quick.rng.bit_generator.state == general.rng.bit_generator.state
    if isinstance(quick, GAP | DPSE):  # epochs ended, so noise was drawn on both paths
        assert quick.privacy_spent[0] > 0.0


def refusal(agent: EliminationAgent, action: Any, reward: Any, info: dict[str, Any], general: bool) -> str:
    before = [array.copy() for array in agent._state]
    with pytest.raises((TypeError, ValueError)) as caught:
        agent.update(action, reward, MappingProxyType(info) if general else info)  # type: ignore[arg-type]
    for array, copied in zip(agent._state, before, strict=True):
        np.testing.assert_array_equal(array, copied)  # nothing learnt from a refused round
    return str(caught.value)


def bad_rounds() -> dict[str, tuple[int, Any, dict[str, Any]]]:
    mask = CLOSED[1].copy()
    seen = np.full(K, 0.5)
    nan_seen, high_seen, low_seen = seen.copy(), seen.copy(), seen.copy()
    nan_seen[2], high_seen[0], low_seen[2] = np.nan, 1.5, -0.25
    short = mask.copy()
    short[1] = False  # the pulled arm not revealed
    return {
        "NaN revealed": (1, 0.5, {"observed_mask": mask, "observed_rewards": nan_seen}),
        "revealed above 1": (1, 0.5, {"observed_mask": mask, "observed_rewards": high_seen}),
        "revealed below 0": (1, 0.5, {"observed_mask": mask, "observed_rewards": low_seen}),
        "pulled arm hidden": (1, 0.5, {"observed_mask": short, "observed_rewards": seen}),
        "reward above 1": (1, 1.5, {"observed_mask": mask, "observed_rewards": seen}),
        "reward NaN": (1, float("nan"), {"observed_mask": mask, "observed_rewards": seen}),
        "arm out of range": (K, 0.5, {"observed_mask": mask, "observed_rewards": seen}),
        "mask of another K": (1, 0.5, {"observed_mask": mask[:-1], "observed_rewards": seen}),
        "optimal action beyond K": (1, 0.5, {"observed_mask": mask, "observed_rewards": seen, "optimal_action": K}),
        "no mask": (1, 0.5, {"observed_rewards": seen}),
    }


@pytest.mark.parametrize("case", list(bad_rounds()))
@pytest.mark.parametrize("name", ["GAP", "DPSE", "AAE-side", "AlphaSample"])
def test_the_quick_path_refuses_what_the_general_path_refuses_with_its_sentence(name: str, case: str) -> None:
    action, reward, info = bad_rounds()[case]
    quick, general = MAKERS[name](), MAKERS[name]()
    for agent in (quick, general):
        agent.act()
    uses_mask = quick.side_observations
    if not uses_mask and case in (
        "NaN revealed",
        "revealed above 1",
        "revealed below 0",
        "pulled arm hidden",
        "no mask",
    ):
        # an agent without side observations reads only the pulled arm's reward: both paths learn
        quick.update(action, reward, info)
        general.update(action, reward, MappingProxyType(info))  # type: ignore[arg-type]
        for mine, theirs in zip(quick._state, general._state, strict=True):
            np.testing.assert_array_equal(mine, theirs)
        return
    if case == "pulled arm hidden" and name != "GAP":  # only GAP requires the pulled arm's neighbourhood
        quick.update(action, reward, info)
        general.update(action, reward, MappingProxyType(info))  # type: ignore[arg-type]
        for mine, theirs in zip(quick._state, general._state, strict=True):
            np.testing.assert_array_equal(mine, theirs)
        return
    assert refusal(quick, action, reward, info, False) == refusal(general, action, reward, info, True)


@pytest.mark.parametrize("mask_kind", ["int 0/1", "float32 rewards", "strided"])
def test_other_info_arrays_take_the_general_path_and_learn_the_same(mask_kind: str) -> None:
    rewards, closed = rounds(1)
    quick, general = MAKERS["GAP"](), MAKERS["GAP"]()
    for t in range(300):
        a = quick.act()
        assert general.act() == a
        mask, seen = closed[a].copy(), rewards[t].copy()
        odd: dict[str, Any] = {"observed_mask": mask, "observed_rewards": seen}
        if mask_kind == "int 0/1":
            odd["observed_mask"] = mask.astype(np.int64)
        elif mask_kind == "float32 rewards":
            odd["observed_rewards"] = seen.astype(np.float32)
        else:
            odd["observed_rewards"] = np.repeat(seen, 2)[::2]
        quick.update(a, float(rewards[t, a]), odd)
        general.update(a, float(rewards[t, a]), MappingProxyType({"observed_mask": mask, "observed_rewards": seen}))  # type: ignore[arg-type]
    for mine, theirs in zip(quick._state, general._state, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_an_agent_whose_rng_is_replaced_draws_from_the_new_generator() -> None:
    agent = AlphaSample(K, HORIZON, seed=0)  # AlphaSample draws at every act
    play(agent, False, 3)  # the compiled kernels have drawn from the first generator's address
    old, new = agent.rng, np.random.default_rng(7)
    old_state, new_state = old.bit_generator.state, new.bit_generator.state
    agent.rng = new
    play(agent, False, 50)
    assert old.bit_generator.state == old_state
    assert new.bit_generator.state != new_state


@pytest.mark.parametrize(
    "make",
    [
        lambda n: DPSE(K, HORIZON, 8.0, beta=0.5, n_envs=n, seed=3),
        lambda n: AAE(K, HORIZON, delta=0.5, n_envs=n, seed=3),
    ],
    ids=["DPSE", "AAE"],
)
def test_an_update_without_info_plays_as_a_batch_of_one(make: Callable[[int | None], EliminationAgent]) -> None:
    """Agents that learn from the pulled arm alone take ``update(a, r)`` on the quick path too."""
    single, batch = make(None), make(1)  # copy 0 of a batch seeded 3 draws as a single agent seeded 3
    rewards, _ = rounds(2)
    for t in range(HORIZON):
        a = single.act()
        assert int(batch.act()[0]) == a, t
        single.update(a, float(rewards[t, a]))
        batch.update(np.array([a]), np.array([rewards[t, a]]))
    for mine, theirs in zip(single._state, batch._state, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert single.rng.bit_generator.state == batch._copy_rngs[0].bit_generator.state


def test_gap_without_info_is_refused_as_before() -> None:
    agent = MAKERS["GAP"]()
    with pytest.raises(ValueError, match="info must contain 'observed_mask'"):
        agent.update(agent.act(), 0.5)
