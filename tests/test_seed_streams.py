"""Independent random streams: one seed never feeds both an env and an agent's (privacy) generator."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401  (registers the envs)
from agents.experiments.api import configure
from agents.experiments.budget import task as budget_task_module
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.ldp import task as ldp_task_module
from bandit_envs.privacy.streams import noise_generator


def test_noise_generator_is_not_the_seeds_default_stream():
    for seed in (0, 1, 12345):
        env = gym.make("MovieLensRecommendation-v0", horizon=5)
        env.reset(seed=seed)
        noise = noise_generator(seed).random(8)
        assert not np.array_equal(noise, env.unwrapped.np_random.random(8))
        assert not np.array_equal(noise, np.random.default_rng(seed).random(8))
        np.testing.assert_array_equal(noise, noise_generator(seed).random(8))  # reproducible
    with pytest.raises(ValueError, match="^seed"):
        noise_generator(-1)


def test_ldp_experiment_seeds_the_agent_apart_from_the_env(monkeypatch):
    exp = configure("ldp-linucb/epsilon", runs=1, horizon=200, seed=0)
    seen = []
    original = ldp_task_module.make_agent

    def spy(setting, horizon, seed):
        seen.append(seed)
        return original(setting, horizon, seed)

    monkeypatch.setattr(ldp_task_module, "make_agent", spy)
    ldp_task_module.ldp_task(exp, 0, 0, 0)
    assert seen == [agent_seed(0, 0)] and seen[0] != table_seed(0, 0)


def test_budget_experiment_seeds_the_agents_apart_from_every_env_copy(monkeypatch):
    exp = configure("budget/baselines", quick=True, horizon=100, seed=0)
    index = next(i for i, s in enumerate(exp.settings) if s["agent"] == "Random")
    seen = []
    original = budget_task_module.make_budget_agent

    def spy(name, n_envs, alpha, seed):
        seen.append(seed)
        return original(name, n_envs, alpha, seed)

    monkeypatch.setattr(budget_task_module, "make_budget_agent", spy)
    budget_task_module.budget_task(exp, index, 0, 0)
    copy_seeds = {budget_task_module.copy_seed(0, u) for u in range(len(exp.settings[index]["users"]))}
    assert len(seen) == 1 and seen[0] not in copy_seeds
    agent_draws = np.random.default_rng(seen[0]).random(8)
    for s in copy_seeds:
        assert not np.array_equal(agent_draws, np.random.default_rng(s).random(8))
