"""Independent random streams: one seed never feeds both an env and an agent's (privacy) generator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
import pytest
from conftest import PATH3, lazy_module, public_agent_classes

import bandit_envs  # noqa: F401  (registers the envs)
from agents.elimination import kernels
from agents.experiments.api import configure
from agents.experiments.budget import task as budget_task_module
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.ldp import task as ldp_task_module
from bandit_envs.privacy._checks import laplace_tail_delta
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
    private = {c.__name__ for c in public_agent_classes() if issubclass(c, agents.PrivateAgent)}
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
        assert agent.privacy_spent == (0.5, laplace_tail_delta(0.5))
        noises.append(agent._state[kernels.GAP_MEAN][0, 0] - 0.5)
    for j in range(3):  # nor of another entry of the first row (GAPU's draw of Ω_1 comes first)
        assert abs(stats.spearmanr(np.array(uniforms)[:, j], noises).statistic) < 0.5


# Every batched agent: copy i of a batch seeded s plays as a single agent seeded s + i ------------
#
# The convention of docs/design.md ("Agents", Seeds): copy i of ``Agent(..., n_envs=N, seed=s)``
# makes exactly the draws of ``Agent(..., seed=s + i)`` (its policy randomness and its privacy
# noise, each from its own stream), whatever the other copies do. Checked here for every agent
# class that :mod:`agents` exports, on the same rewards: the same arms every round and, where the
# agent exposes what its noise produced (elimination agents' released means, the reports an
# LDP wrapper hands on, a linear server's sums of reports), the same values.

K3 = 3
CLOSED3 = PATH3 | np.eye(K3, dtype=bool)
SEED = 11
#: Rounds: enough for GAP's and GAPU's first release (L_1 ≈ 1,000 rounds per arm of Ω_1 = {0, 2}).
ROUNDS = 2_500


def _sb3_agent(n: int | None, s: int) -> Any:
    sb3 = pytest.importorskip("stable_baselines3")
    model = sb3.PPO("MlpPolicy", gym.make("GraphBandit-v0", n_arms=3), n_steps=64, batch_size=64, seed=0, device="cpu")
    return _agents().SB3Agent(model, deterministic=False, n_envs=n, seed=s)


def _agents() -> Any:
    import agents

    return agents


def _batchable() -> dict[str, Any]:
    """A maker ``(n_envs, seed) -> agent`` for every agent class exported by :mod:`agents`."""
    a = _agents()
    t = ROUNDS
    makers: dict[str, Any] = {
        "Random": lambda n, s: a.Random(3, n_envs=n, seed=s),
        "UCB": lambda n, s: a.UCB(3, n_envs=n, seed=s),
        "UCBN": lambda n, s: a.UCBN(3, n_envs=n, seed=s),
        "KLUCB": lambda n, s: a.KLUCB(3, n_envs=n, seed=s),
        "MOSS": lambda n, s: a.MOSS(3, t, n_envs=n, seed=s),
        "ThompsonSampling": lambda n, s: a.ThompsonSampling(3, n_envs=n, seed=s),
        "EpsilonGreedy": lambda n, s: a.EpsilonGreedy(3, 0.3, n_envs=n, seed=s),
        "Exp3": lambda n, s: a.Exp3(3, t, n_envs=n, seed=s),
        "Exp3IX": lambda n, s: a.Exp3IX(3, PATH3, n_envs=n, seed=s),
        "Exp3SET": lambda n, s: a.Exp3SET(3, PATH3, t, n_envs=n, seed=s),
        "SMUCB": lambda n, s: a.SMUCB(3, n_envs=n, seed=s),  # its obs: the sensitivity of the datum (0.5)
        "FixedArm": lambda n, s: a.FixedArm(3, 1, n_envs=n, seed=s),
        "GAP": lambda n, s: a.GAP(3, t, 0.5, PATH3, delta=0.01, n_envs=n, seed=s),
        "GAPU": lambda n, s: a.GAPU(3, t, 0.5, PATH3, delta=0.01, n_envs=n, seed=s),
        "DPSE": lambda n, s: a.DPSE(3, t, 0.5, schedule_scale=0.02, n_envs=n, seed=s),
        "AAE": lambda n, s: a.AAE(3, t, n_envs=n, seed=s),
        "AlphaSample": lambda n, s: a.AlphaSample(3, t, n_envs=n, seed=s),
        "AdaPUCB": lambda n, s: a.AdaPUCB(3, 1.0, n_envs=n, seed=s),
        "HybridDPUCB": lambda n, s: a.HybridDPUCB(3, 1.0, n_envs=n, seed=s),
        "TreeDPUCB": lambda n, s: a.TreeDPUCB(3, t, 1.0, n_envs=n, seed=s),
        "DPThompsonSampling": lambda n, s: a.DPThompsonSampling(3, 1.0, n_envs=n, seed=s),
        "LDPThompsonSampling": lambda n, s: a.LDPThompsonSampling(3, 1.0, n_envs=n, seed=s),
        "PrePullGaussianTS": lambda n, s: a.PrePullGaussianTS.for_budget(3, t, 1.0, n_envs=n, seed=s),
        "DPTSUCB": lambda n, s: a.DPTSUCB.for_budget(3, t, 1.0, n_envs=n, seed=s),
        "LDPWrapper": lambda n, s: a.LDPWrapper(a.EpsilonGreedy(3, 0.3, n_envs=n, seed=s), epsilon=1.0, seed=s),
        "LDPWrapper-gaussian": lambda n, s: a.LDPWrapper(
            a.UCB(3, n_envs=n, seed=s), "gaussian", epsilon=0.5, delta=0.01, seed=s
        ),
        "LDPWrapper-rr": lambda n, s: a.LDPWrapper(
            a.ThompsonSampling(3, n_envs=n, seed=s), "randomized_response", seed=s
        ),  # fmt: skip
        "LinUCB": lambda n, s: a.LinUCB(4, n_envs=n, seed=s),
        "LDPLinUCB": lambda n, s: a.LDPLinUCB(4, 1.0, horizon=t, n_envs=n, seed=s),
        "LDPOLS": lambda n, s: a.LDPOLS(4, 1.0, batch_size=7, n_envs=n, seed=s),
        "LDPOLS-l2_ball": lambda n, s: a.LDPOLS(4, 1.0, mechanism="l2_ball", batch_size=7, n_envs=n, seed=s),
        "ShuffleLinUCB": lambda n, s: a.ShuffleLinUCB(4, 1.0, batch_size=7, n_envs=n, seed=s),
        "SB3Agent": _sb3_agent,
    }
    exported = {c.__name__ for c in public_agent_classes()}
    assert exported == {name.split("-")[0] for name in makers}, "an exported agent without a case here"
    return makers


BATCHABLE = _batchable()


def _next_uniform(rng: np.random.Generator) -> float:
    """The next ``random()`` of ``rng``, its state untouched."""
    twin = np.random.Generator(type(rng.bit_generator)())
    twin.bit_generator.state = rng.bit_generator.state
    return float(twin.random())


def _released(agent: Any) -> list[npt.NDArray[Any]]:
    """What the agent's noise produced, each with the copies along the first axis (empty if not exposed)."""
    a = _agents()
    if isinstance(agent, a.EliminationAgent):  # noisy means released, epoch counters, Ω; what the noise consumed
        generators = getattr(agent, "_copy_rngs", None) or [agent.rng] * agent.batch
        return [np.asarray(x) for x in agent._state] + [np.array([_next_uniform(g) for g in generators])]
    if isinstance(agent, a.LDPWrapper):  # what the wrapped agent received: the users' reports
        inner = agent.agent
        return [np.asarray(inner.sums if hasattr(inner, "sums") else inner.successes, dtype=np.float64)]
    if isinstance(agent, a.PrivateAgent) and hasattr(agent, "server"):  # a private linear agent: the sums of reports
        return [np.asarray(agent.server.gram), np.asarray(agent.server.moment)]
    return []


def _play(agent: Any, copies: list[int], rounds: int, linear: bool) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """(rounds, len(copies)) arms of ``agent`` (one env if it has no n_envs) on the rewards of ``copies``."""
    rng = np.random.default_rng(2024)
    features = rng.uniform(-0.5, 0.5, (rounds, 3, K3, 4))  # the same rewards for every call: 3 copies' worth
    uniforms = rng.random((rounds, 3, K3))
    rewards = (uniforms < np.array([0.3, 0.5, 0.7])).astype(np.float64)
    single = agent.n_envs is None
    arms = np.empty((rounds, len(copies)), dtype=np.int64)
    for t in range(rounds):
        if linear:
            obs: Any = features[t, copies]
        elif isinstance(agent, _agents().SB3Agent):  # GraphBandit-v0's observation
            obs = np.zeros(len(copies), dtype=np.int64)
        elif isinstance(agent, _agents().SMUCB):  # the sensitivity of the datum about to be sent
            obs = uniforms[t, copies, 0]
        else:
            obs = None
        action = agent.act(obs[0] if single and obs is not None else obs)
        acts = np.atleast_1d(np.asarray(action))
        arms[t] = acts
        rows = rewards[t, copies]
        reward = rows[np.arange(len(copies)), acts]
        if linear:
            reward = reward + 0.1 * (uniforms[t, copies, 0] - 0.5)
            info = None
        else:
            mask = CLOSED3[acts]
            info = {"observed_mask": mask, "observed_rewards": np.where(mask, rows, 0.0)}
        if single:
            info = None if info is None else {k: v[0] for k, v in info.items()}
            agent.update(int(acts[0]), float(reward[0]), info)
        else:
            agent.update(acts, reward, info)
    return arms, _released(agent)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.integration)  # builds a stable-baselines3 PPO model (torch)
        if name == "SB3Agent"
        else name
        for name in sorted(BATCHABLE)
    ],
)
def test_copy_i_of_a_batch_seeded_s_draws_as_a_single_agent_seeded_s_plus_i(name):
    make = BATCHABLE[name]
    linear = name.startswith(("LinUCB", "LDPLinUCB", "LDPOLS", "ShuffleLinUCB"))
    rounds = 200 if name == "SB3Agent" else ROUNDS
    batch = make(3, SEED)
    arms, released = _play(batch, [0, 1, 2], rounds, linear)
    for i in range(3):
        single = make(None, SEED + i)
        single_arms, single_released = _play(single, [i], rounds, linear)
        differ = np.flatnonzero(single_arms[:, 0] != arms[:, i])
        assert differ.size == 0, (
            f"{name}: copy {i} of a batch seeded {SEED} chose arm {arms[differ[0], i]} in round {differ[0]}, "
            f"a single agent seeded {SEED + i} arm {single_arms[differ[0], 0]}; copy i of a batch must make the "
            f"draws of a single agent seeded seed + i (docs/design.md, 'Agents', Seeds)."
        )
        for j, (ours, theirs) in enumerate(zip(released, single_released, strict=True)):
            np.testing.assert_allclose(
                ours[i], theirs[0], rtol=1e-12, atol=0.0,
                err_msg=f"{name}: copy {i}'s released value {j} differs from the single agent seeded {SEED + i}'s",
            )  # fmt: skip
    if name.startswith(("GAP", "DPSE")):  # the releases happened: the noise was compared
        assert batch.privacy_spent[0] > 0.0


@pytest.mark.parametrize("name", ["LDPLinUCB", "LDPOLS", "LDPOLS-l2_ball", "ShuffleLinUCB"])
def test_copy_i_of_a_batched_linear_run_draws_as_a_single_agent_seeded_s_plus_i(name):
    # The compiled fast path draws each copy's report noise from the copy's own generator, in
    # the single agent's order, also across blocks (two runs: 137 rounds, then 163).
    rng = np.random.default_rng(5)
    features = rng.uniform(-0.5, 0.5, (300, 3, K3, 4))
    rewards = rng.random((300, 3, K3))
    make = BATCHABLE[name]
    batch = make(3, SEED)
    got = [batch.run(features[a:b], rewards[a:b], record_actions=True) for a, b in ((0, 137), (137, 300))]
    arms = np.concatenate([r.actions for r in got])
    for i in range(3):
        single = make(None, SEED + i)
        blocks = [single.run(features[a:b, i], rewards[a:b, i], record_actions=True) for a, b in ((0, 137), (137, 300))]
        want = np.concatenate([r.actions for r in blocks])
        assert np.array_equal(arms[:, i], want), f"{name}: copy {i}'s run is not the single agent's (seed {SEED + i})"
        np.testing.assert_allclose(batch.server.gram[i], single.server.gram[0], rtol=1e-12, atol=1e-15)


def test_per_copy_draws_through_the_generators_addresses_are_numpys():
    # agents.common.streams draws Laplace, uniform and normal values from each copy's generator
    # through its C interface; numpy's algorithms exactly, ziggurat wedges and tail included
    # (100,000 normals per copy reach the tail beyond r about 30 times).
    from agents.common import streams
    from bandit_envs.core import generator_addresses

    n = 100_000
    for draw, reference in (
        (lambda bitgens, out: streams.copy_normals(bitgens, 0.7, out), lambda g: g.normal(0.0, 0.7, n)),
        (lambda bitgens, out: streams.copy_laplace(bitgens, 0.7, out), lambda g: g.laplace(0.0, 0.7, n)),
        (streams.copy_uniforms, lambda g: g.random(n)),
    ):
        rngs = [noise_generator(s) for s in range(4)]
        bitgens = generator_addresses(rngs)
        got = np.empty((n, 4))
        for t in range(n):
            draw(bitgens, got[t])
        want = np.stack([reference(noise_generator(s)) for s in range(4)], axis=1)
        np.testing.assert_array_equal(got, want)
        assert rngs[0].bit_generator.state == (lambda g: (reference(g), g.bit_generator.state)[1])(noise_generator(0))


@pytest.mark.parametrize("seed", [0, 1])
def test_copy_integers_draw_what_each_copys_generator_integers_draws(seed):
    """Random's batched draws: copy b's ``Generator.integers(n)``, for small and for wide ranges."""
    from agents.common.streams import copy_integers
    from bandit_envs.core import generator_addresses

    source = np.random.default_rng(200 + seed)
    wide = source.integers(2, 2**32 - 1, 300)
    bounds = np.concatenate([source.integers(2, 50, 300), wide, [2, 2**31 + 1, 2**32 - 1]])
    ours = tuple(np.random.default_rng(seed + i) for i in range(3))
    numpy = tuple(np.random.default_rng(seed + i) for i in range(3))
    ours[1].random()  # a double drawn first: copy 1's 32-bit draws start on a fresh 64-bit word
    numpy[1].random()
    bitgens = generator_addresses(ours)
    out = np.empty(3, dtype=np.int64)
    for n in bounds:
        copy_integers(bitgens, int(n), out)
        assert out.tolist() == [int(g.integers(n)) for g in numpy], n
    assert [g.bit_generator.state for g in ours] == [g.bit_generator.state for g in numpy]
