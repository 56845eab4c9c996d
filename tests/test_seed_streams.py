"""Independent random streams: one seed never feeds both an env and an agent's (privacy) generator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import PATH3, lazy_module

import bandit_envs  # noqa: F401  (registers the envs)
from agents.elimination import kernels
from agents.experiments.api import configure
from agents.experiments.budget import task as budget_task_module
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.ldp import task as ldp_task_module
from bandit_envs.privacy.streams import noise_generator

stats = lazy_module("scipy.stats")


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


# Every private agent's noise: not a function of the env's draws for the same seed ----------------


def _private_agents() -> dict[str, Any]:
    """A maker ``seed -> agent`` for every private class exported by :mod:`agents`."""
    import agents
    from agents.stochastic.index import UCB

    makers: dict[str, Any] = {
        "GAP": lambda s: agents.GAP(3, 10_000, 0.5, PATH3, delta=0.01, seed=s),
        "GAPU": lambda s: agents.GAPU(3, 10_000, 0.5, PATH3, delta=0.01, seed=s),
        "DPSE": lambda s: agents.DPSE(3, 10_000, 0.5, seed=s),
        "LDPWrapper": lambda s: agents.LDPWrapper(UCB(3, seed=s), "laplace", epsilon=0.5, seed=s),
        "LDPLinUCB": lambda s: agents.LDPLinUCB(4, 1.0, seed=s),
        "LDPOLS": lambda s: agents.LDPOLS(4, 1.0, batch_size=2, seed=s),
        "ShuffleLinUCB": lambda s: agents.ShuffleLinUCB(4, 1.0, batch_size=2, seed=s),
        "AdaPUCB": lambda s: agents.AdaPUCB(3, 1.0, seed=s),
        "HybridDPUCB": lambda s: agents.HybridDPUCB(3, 1.0, seed=s),
        "TreeDPUCB": lambda s: agents.TreeDPUCB(3, 1_000, 1.0, seed=s),
        "DPThompsonSampling": lambda s: agents.DPThompsonSampling(3, 1.0, seed=s),
        "LDPThompsonSampling": lambda s: agents.LDPThompsonSampling(3, 1.0, seed=s),
        "PrePullGaussianTS": lambda s: agents.PrePullGaussianTS.for_budget(3, 1_000, 1.0, seed=s),
        "DPTSUCB": lambda s: agents.DPTSUCB.for_budget(3, 1_000, 1.0, seed=s),
    }
    private = {
        name
        for name in agents.__all__
        if isinstance(getattr(agents, name), type)
        and issubclass(getattr(agents, name), agents.PrivateAgent)
        and not getattr(getattr(agents, name), "__abstractmethods__", None)
    }
    assert private == set(makers), "a private agent without a case here"
    return makers


PRIVATE = _private_agents()


def first_noise_uniform(agent: Any) -> float:
    """The uniform behind the agent's next noise draw (its noise stream's next double), state untouched."""
    from agents.common import philox as _philox

    streams = getattr(agent, "_streams", None)
    if streams is not None:  # per-copy Philox noise streams
        return float(_philox.next_double(streams.copy(), 0))
    rng = np.random.Generator(type(agent.rng.bit_generator)())
    rng.bit_generator.state = agent.rng.bit_generator.state
    return float(rng.random())


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_private_agent_noise_is_not_a_function_of_the_envs_first_uniform(name):
    # The env (and a table built with default_rng(seed)) draws its first reward from this uniform.
    # The env's first uniforms (and a table built with default_rng(seed)): 8 per seed.
    env_uniforms, noise = [], []
    for seed in range(60):
        env = gym.make("GraphBandit-v0", graph=PATH3, means=[0.5, 0.75, 0.25], horizon=10)
        env.reset(seed=seed)
        env_uniforms.append(env.unwrapped.np_random.random(8))
        np.testing.assert_array_equal(env_uniforms[-1], np.random.default_rng(seed).random(8))
        noise.append(first_noise_uniform(PRIVATE[name](seed)))
    uniforms = np.array(env_uniforms)
    assert not np.any(np.isclose(np.array(noise)[:, None], uniforms, rtol=0, atol=1e-12))
    # Not monotone (in either direction) in any of them: the noise is not a function of one.
    for j in range(8):
        assert abs(stats.spearmanr(uniforms[:, j], noise).statistic) < 0.5


@pytest.mark.parametrize("cls", ["GAP", "GAPU"])
def test_gap_release_noise_is_independent_of_a_table_seeded_alike(cls):
    # The exercise's pattern: the table from default_rng(run), the agent seeded with run. The
    # noise of arm 0's first release must not be a monotone function of the table's first uniform.
    noises, uniforms = [], []
    for run in range(60):
        agent = PRIVATE[cls](run)
        rounds = int(agent._state[kernels.GAP_COUNTERS][0, kernels.GAP_EPOCH_END])
        uniforms.append(np.random.default_rng(run).random((rounds, 3))[0])
        table = np.tile([0.5, 0.75, 0.25], (rounds, 1))  # dyadic constant rewards: c/o is exact
        agent.simulate(table, PATH3, np.zeros(3))
        assert agent.privacy_spent == (0.5, 0.0)
        noises.append(agent._state[kernels.GAP_MEAN][0, 0] - 0.5)
    for j in range(3):  # nor of another entry of the first row (GAPU's draw of Ω_1 comes first)
        assert abs(stats.spearmanr(np.array(uniforms)[:, j], noises).statistic) < 0.5
