"""Every env and agent copied (``pickle``, ``copy.deepcopy``) at any point plays on as the original.

Covered: every registered ``bandit_envs`` id (single and vector env, the contract suite's cheap
keywords) before ``reset``, right after it and mid-episode; every agent class of ``agents.__all__``
(one env and N copies, the builders of ``tests/test_agent_inputs.py``) before its first action,
after it, between an ``act`` and its ``update``, and mid-episode. Original and copies then get the
same inputs, and their outputs must be equal exactly (same process, same compiled kernels).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import assert_same, classes_built_by, env_test_kwargs, missing_agents
from test_agent_inputs import AGENTS, N, good_info, obs_for

import bandit_envs  # noqa: F401  (registers the env ids)
from agents.base import Agent

ENV_IDS = [i for i in gym.registry if str(gym.registry[i].entry_point).startswith("bandit_envs.")]
COPIES: dict[str, Callable[[Any], Any]] = {"pickle": lambda x: pickle.loads(pickle.dumps(x)), "deepcopy": copy.deepcopy}
STEPS = 6  # steps of an env episode (the contract suite's horizon is 7)


# Envs ----------------------------------------------------------------------------------------


def make_env(env_id: str, vector: bool) -> Any:
    if vector:
        return gym.make_vec(env_id, num_envs=3, **env_test_kwargs(env_id))
    return gym.make(env_id, **env_test_kwargs(env_id))


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_env_copied_at_any_point_plays_on_as_the_original(env_id: str, vector: bool) -> None:
    space = copy.deepcopy(make_env(env_id, vector).action_space)
    space.seed(123)
    actions = [space.sample() for _ in range(STEPS)]
    for point, played in (("before reset", None), ("after reset", 0), ("mid-episode", STEPS // 2)):
        for how, copy_of in COPIES.items():
            env = make_env(env_id, vector)
            if played is not None:
                env.reset(seed=1)
                for a in actions[:played]:
                    env.step(a)
            twin = copy_of(env)
            outputs = []
            for e in (env, twin):
                out = [e.reset(seed=1)] if played is None else []
                out += [e.step(a) for a in actions[played or 0 :]]
                outputs.append(out)
            assert_same(outputs[0], outputs[1], f"{env_id} ({'vector' if vector else 'single'}) {how} {point}")


# Agents --------------------------------------------------------------------------------------


def test_every_agent_class_has_a_builder() -> None:
    problem = missing_agents(classes_built_by(AGENTS), "AGENTS of tests/test_agent_inputs.py")
    assert problem is None, problem


REWARDS = np.random.default_rng(0).random((40, N))


def feedback(name: str, n: int | None, t: int) -> tuple[Any, dict[str, Any]]:
    """Round ``t``'s reward (in [0, 1]) and info: the same for original and copies."""
    reward = REWARDS[t, 0] if n is None else REWARDS[t, :n].copy()
    info = good_info(n)
    info["observed_rewards"] = np.broadcast_to(np.asarray(reward)[..., None], info["observed_rewards"].shape).copy()
    return reward, info


def play(agent: Agent, name: str, n: int | None, rounds: range) -> list[Any]:
    actions = []
    for t in rounds:
        a = agent.act(obs_for(name, n))
        agent.update(a, *feedback(name, n, t))
        actions.append(np.asarray(a).tolist())
    return actions


@pytest.mark.parametrize("n", [None, N], ids=["one-env", "batch"])
@pytest.mark.parametrize("name", AGENTS)
def test_every_agent_copied_at_any_point_plays_on_as_the_original(name: str, n: int | None) -> None:
    for point, played in (("before its first action", 0), ("after it", 1), ("mid-episode", 5)):
        for how, copy_of in COPIES.items():
            agent = AGENTS[name](n)
            play(agent, name, n, range(played))
            twin = copy_of(agent)
            rest = range(played, played + 8)
            assert play(twin, name, n, rest) == play(agent, name, n, rest), f"{name} {how} {point}"
    for how, copy_of in COPIES.items():  # between an act and its update
        agent = AGENTS[name](n)
        play(agent, name, n, range(2))
        a = agent.act(obs_for(name, n))
        twin = copy_of(agent)
        outputs = []
        for x in (agent, twin):
            x.update(a, *feedback(name, n, 2))
            outputs.append(play(x, name, n, range(3, 11)))
        assert outputs[0] == outputs[1], f"{name} {how} between act and update"
