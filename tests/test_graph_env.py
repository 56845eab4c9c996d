"""Tests of ``GraphBandit-v0`` (bandit_envs/graph.py): checkers, info contract, reward laws,
reward-table replay, seeding, the native vector env against the single env, an RL smoke test
and argument validation."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
from conftest import lazy_module
from gymnasium.utils.env_checker import check_env as gym_check_env

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv, paper_means
from bandit_envs.rewards import FLAT, FLAT_SCALE, RewardModel

stats = lazy_module("scipy.stats")

ENV_ID = "GraphBandit-v0"
K = 10
INFO_KEYS = ("observed_mask", "observed_rewards", "regret", "expected_reward", "optimal_action")


def truncnorm_mean(loc: Any, sd: float = 0.1) -> np.ndarray:
    loc = np.asarray(loc, dtype=float)
    return np.asarray(stats.truncnorm.mean(-loc / sd, (1 - loc) / sd, loc=loc, scale=sd))


def run(env: gym.Env[Any, Any], actions: list[int]) -> list[tuple[float, bool, dict[str, Any]]]:
    out = []
    for a in actions:
        _, r, term, trunc, info = env.step(a)
        assert term is False
        out.append((r, trunc, info))
    return out


# ---------------------------------------------------------------------------------------------
# Checkers
# ---------------------------------------------------------------------------------------------

CHECK_CONFIGS = [
    pytest.param({}, id="default"),
    pytest.param({"reward": "bernoulli"}, id="bernoulli"),
    pytest.param({"graph": nx.cycle_graph(6), "means": np.linspace(0.2, 0.8, 6)}, id="nx-graph"),
    pytest.param({"graph": np.ones((4, 4), dtype=int) - np.eye(4, dtype=int)}, id="matrix-graph"),
]


@pytest.mark.parametrize("kwargs", CHECK_CONFIGS)
def test_gymnasium_check_env(kwargs: dict[str, Any]) -> None:
    env = gym.make(ENV_ID, horizon=50, **kwargs)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.integration  # stable-baselines3's env checker
@pytest.mark.parametrize("kwargs", CHECK_CONFIGS)
def test_sb3_check_env(kwargs: dict[str, Any]) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(gym.make(ENV_ID, horizon=50, **kwargs), warn=True)


def test_registered_with_native_vector_env() -> None:
    spec = gym.spec(ENV_ID)
    assert spec.entry_point == "bandit_envs.graph:GraphBanditEnv"
    venv = gym.make_vec(ENV_ID, num_envs=4, horizon=10)
    assert isinstance(venv.unwrapped, GraphBanditVectorEnv)
    assert not isinstance(venv, gym.vector.SyncVectorEnv)
    assert venv.num_envs == 4
    assert venv.single_action_space == gym.spaces.Discrete(K)


# ---------------------------------------------------------------------------------------------
# RL smoke test: stable-baselines3 PPO, no wrapper
# ---------------------------------------------------------------------------------------------


@pytest.mark.integration  # trains a stable-baselines3 model
def test_ppo_learns_better_than_random() -> None:
    torch = pytest.importorskip("torch")
    sb3 = pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    env = gym.make(ENV_ID, gap=0.4, horizon=256)
    model = sb3.PPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=0, device="cpu", verbose=0)
    model.learn(total_timesteps=4096)
    obs, info = env.reset(seed=123)
    action, _ = model.predict(obs, deterministic=True)
    means = info["expected_rewards"]
    assert means[int(action)] > means.mean()  # beats Random in expected reward
    assert int(action) in (0, 1)  # in fact finds an optimal arm (gap 0.4 is easy)
    _, _, _, _, step_info = env.step(action)
    assert step_info["expected_reward"] == pytest.approx(means[int(action)])


# ---------------------------------------------------------------------------------------------
# Instance, reward laws and info contract
# ---------------------------------------------------------------------------------------------


def test_default_instance_means() -> None:
    env = GraphBanditEnv()
    loc = np.array([0.9, 0.9] + [0.9 - 0.1 - 0.05 * j for j in range(K - 2)])
    np.testing.assert_allclose(paper_means(K, 0.1), loc)
    np.testing.assert_allclose(env.reward_model.loc, loc)
    assert env.n_arms == K and env.horizon == 100_000
    assert env.action_space == gym.spaces.Discrete(K)
    _, info = env.reset(seed=0)
    np.testing.assert_allclose(info["expected_rewards"], truncnorm_mean(loc), rtol=1e-12)
    assert info["expected_rewards"][0] == pytest.approx(0.87124, abs=1e-5)
    np.testing.assert_allclose(GraphBanditEnv(gap=0.3).reward_model.loc[2:4], [0.6, 0.55])


def test_reset_info_feedback_graph() -> None:
    env = gym.make(ENV_ID, horizon=10, edge_probability=0.5)
    obs, info = env.reset(seed=0)
    assert obs == 0 and env.observation_space.contains(obs)
    g = info["feedback_graph"]
    assert g.dtype == np.bool_ and g.shape == (K, K)
    assert np.array_equal(g, g.T) and not g.diagonal().any()
    assert g.any()  # p = 0.5 on 45 pairs
    assert set(info) >= {"feedback_graph", "expected_rewards"}
    g[0, 1] = not g[0, 1]  # the info holds a copy: the env's graph is unchanged
    assert not np.array_equal(g, env.reset()[1]["feedback_graph"])


def test_custom_graph_is_used() -> None:
    graph = nx.path_graph(5)
    env = gym.make(ENV_ID, graph=graph, means=[0.1, 0.3, 0.5, 0.7, 0.9], horizon=10)
    _, info = env.reset(seed=0)
    np.testing.assert_array_equal(info["feedback_graph"], nx.to_numpy_array(graph) != 0)
    _, _, _, _, step = env.step(2)
    np.testing.assert_array_equal(step["observed_mask"], [False, True, True, True, False])


def test_step_info_contract() -> None:
    env = gym.make(ENV_ID, horizon=200, edge_probability=0.3, gap=0.2)
    _, reset_info = env.reset(seed=5)
    adj, means = reset_info["feedback_graph"], reset_info["expected_rewards"]
    closed = adj | np.eye(K, dtype=bool)
    actions = np.random.default_rng(0).integers(0, K, size=200).tolist()
    for t, (a, (r, trunc, info)) in enumerate(zip(actions, run(env, actions), strict=True)):
        assert set(info) >= set(INFO_KEYS)
        assert isinstance(r, float) and 0.0 <= r <= 1.0
        assert trunc is (t == 199)
        mask, seen = info["observed_mask"], info["observed_rewards"]
        assert mask.dtype == np.bool_ and mask.shape == (K,)
        np.testing.assert_array_equal(mask, closed[a])
        assert seen.dtype == np.float64 and seen.shape == (K,)
        assert np.all(seen[~mask] == 0.0)
        assert seen[a] == r
        assert np.all((seen[mask] >= 0) & (seen[mask] <= 1))
        assert info["expected_reward"] == pytest.approx(means[a], abs=0.0)
        assert info["regret"] == pytest.approx(means.max() - means[a], abs=1e-15)
        assert info["regret"] >= 0.0
        assert info["optimal_action"] == int(np.argmax(means))


def test_regret_zero_on_optimal_arms() -> None:
    env = gym.make(ENV_ID, horizon=4)
    env.reset(seed=0)
    (_, _, i0), (_, _, i1), (_, _, i9) = run(env, [0, 1, 9])
    assert i0["regret"] == 0.0 and i1["regret"] == 0.0  # arms 0 and 1 tie at 0.9
    assert i9["regret"] == pytest.approx(truncnorm_mean(0.9) - truncnorm_mean(0.45), rel=1e-12)


def test_truncnorm_true_means() -> None:
    assert truncnorm_mean(0.9) == pytest.approx(0.8712400029, abs=1e-9)
    loc = [0.0, 0.05, 0.5, 0.9, 1.0]
    env = GraphBanditEnv(graph=np.zeros((5, 5), bool), means=loc, reward_std=0.2, horizon=1)
    np.testing.assert_allclose(env.expected_rewards, truncnorm_mean(loc, 0.2), rtol=1e-12)


def test_truncnorm_means_within_sixteen_units_of_scipy_and_right_for_wide_and_narrow_normals() -> None:
    """The closed form of :func:`bandit_envs.rewards._truncnorm_means` against scipy.stats (σ <= 1)
    and against the limits scipy.stats does not reach: a wide normal is flat on [0, 1] (mean
    0.5 - (1 - 2μ)/(24σ²) to first order), a narrow one has its mean at μ.

    Tolerance: 16 units in the last place (about 3.6e-15 relative). Both sides call numpy's or
    scipy's exp, expm1 and erf, whose last bits depend on the SIMD code numpy picks for the CPU:
    the largest difference was 4 units with AVX-512 and 5 without it."""
    loc = np.concatenate(([0.0, 1.0, 1e-12, 1.0 - 1e-12], np.linspace(0.0, 1.0, 41)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warning at any σ
        for sd in (1e-3, 0.05, 0.1, 0.2, 0.5, 1.0):
            got = RewardModel("truncnorm", loc, sd).expected
            want = truncnorm_mean(loc, sd)
            assert np.all(np.abs(got - want) <= 16 * np.spacing(want)), sd
        for sd in (1e5, 1e7):
            got = RewardModel("truncnorm", loc, sd).expected
            np.testing.assert_allclose(got, 0.5 - (1 - 2 * loc) / (24 * sd**2), rtol=0, atol=4e-16)
        assert np.all(RewardModel("truncnorm", loc, 1e300).expected == 0.5)
        np.testing.assert_allclose(RewardModel("truncnorm", loc, 1e-300).expected, loc, rtol=0, atol=1e-299)


def sample_all_arms(n: int, seed: int, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rewards of every arm on a complete graph (each step observes all K arms)."""
    k = len(kwargs["means"])
    env = gym.make(ENV_ID, graph=nx.complete_graph(k), horizon=n, **kwargs)
    _, info = env.reset(seed=seed)
    rows = np.array([info["observed_rewards"] for _, _, info in run(env, [0] * n)])
    return rows, info["expected_rewards"]


def test_truncnorm_empirical_law() -> None:
    loc = paper_means(K, 0.1)
    rows, expected = sample_all_arms(20_000, 3, means=loc)
    assert rows.min() >= 0.0 and rows.max() <= 1.0
    a, b = -loc / 0.1, (1 - loc) / 0.1
    se = np.sqrt(stats.truncnorm.var(a, b, loc=loc, scale=0.1) / rows.shape[0])
    z = (rows.mean(axis=0) - expected) / se
    assert np.all(np.abs(z) < 4.5), z
    for k in (0, 5, 9):  # the whole law, not just the mean: inverse-CDF sampler is exact
        law = stats.truncnorm(a[k], b[k], loc=loc[k], scale=0.1)
        assert stats.kstest(rows[:, k], law.cdf).pvalue > 1e-4


@pytest.mark.parametrize("sd", [1e5, 1e7, 1e15, 1e16, 1e17, 1e100, 2**70])
def test_very_wide_truncated_normal_is_uniform_with_the_mean_the_info_reports(sd: float) -> None:
    """Above about 1e15 the inversion's quantile argument spans a handful of doubles (every reward
    0.9 or 0.8 from 1e17): a normal that wide truncated to [0, 1] is flat, its rewards uniform."""
    loc = np.array([0.0, 0.3, 0.9, 1.0])
    n = 20_000
    rows, expected = sample_all_arms(n, 3, means=loc, reward_std=sd)
    np.testing.assert_allclose(expected, 0.5, rtol=0, atol=5e-12)
    venv = GraphBanditVectorEnv(num_envs=8, graph=nx.complete_graph(4), means=loc, reward_std=sd, horizon=n)
    venv.reset(seed=3)
    copies = np.concatenate([venv.step(np.zeros(8, dtype=np.int64))[4]["observed_rewards"] for _ in range(n // 8)])
    for sample in (rows, copies):
        z = (sample.mean(axis=0) - expected) / np.sqrt(1 / 12 / sample.shape[0])
        assert np.all(np.abs(z) < 4.5), z
        for k in range(loc.size):
            assert stats.kstest(sample[:, k], stats.uniform.cdf).pvalue > 1e-4


def test_truncated_normal_rewards_move_by_a_few_1e_11_where_the_law_becomes_flat() -> None:
    u = np.random.default_rng(8).random((5_000, 1))
    for mu in (0.0, 0.3, 0.9, 1.0):
        below, at = (RewardModel("truncnorm", np.array([mu]), sd) for sd in (np.nextafter(FLAT_SCALE, 0), FLAT_SCALE))
        assert below.code == 0 and at.code == FLAT
        assert np.abs(below.from_uniforms(u) - at.from_uniforms(u)).max() < 5e-11
        assert abs(below.expected[0] - at.expected[0]) < 1e-15


def test_bernoulli_rewards() -> None:
    means = np.array([0.0, 0.1, 0.5, 0.85, 1.0])
    rows, expected = sample_all_arms(20_000, 4, means=means, reward="bernoulli")
    np.testing.assert_array_equal(expected, means)
    assert set(np.unique(rows)) <= {0.0, 1.0}
    se = np.sqrt(np.maximum(means * (1 - means), 1e-12) / rows.shape[0])
    assert np.all(np.abs(rows.mean(axis=0) - means) < 4.5 * se + 1e-12)
    np.testing.assert_array_equal(rows[:, 0], 0.0)
    np.testing.assert_array_equal(rows[:, 4], 1.0)


# ---------------------------------------------------------------------------------------------
# Reward-table replay
# ---------------------------------------------------------------------------------------------


def test_reward_table_replayed_exactly() -> None:
    horizon = 30
    table = np.random.default_rng(9).random((horizon, K))
    env = gym.make(ENV_ID, horizon=horizon)
    actions = np.random.default_rng(1).integers(0, K, size=horizon).tolist()
    for seed in (0, 1):  # the noise seed plays no part
        env.reset(seed=seed, options={"reward_table": table})
        for t, (a, (r, _, info)) in enumerate(zip(actions, run(env, actions), strict=True)):
            assert r == table[t, a]
            mask = info["observed_mask"]
            np.testing.assert_array_equal(info["observed_rewards"][mask], table[t][mask])
            assert np.all(info["observed_rewards"][~mask] == 0.0)
    env.reset(seed=0)  # a later reset without the option samples again
    assert run(env, [0])[0][0] != table[0, 0]


def test_reward_table_accepts_lists_and_ints() -> None:
    env = gym.make(ENV_ID, horizon=2, graph=np.zeros((2, 2), bool), means=[0.5, 0.5])
    env.reset(options={"reward_table": [[0, 1], [1, 0]]})
    assert [r for r, _, _ in run(env, [1, 1])] == [1.0, 0.0]


@pytest.mark.parametrize(
    "table",
    [
        pytest.param(np.full((9, K), 0.5), id="too-few-rows"),
        pytest.param(np.full((10, K + 1), 0.5), id="too-many-arms"),
        pytest.param(np.full(10 * K, 0.5), id="flat"),
        pytest.param(np.where(np.eye(10, K) > 0, np.nan, 0.5), id="nan"),
        pytest.param(np.where(np.eye(10, K) > 0, np.inf, 0.5), id="inf"),
        pytest.param(np.full((10, K), 1.5), id="above-1"),
        pytest.param(np.full((10, K), -0.1), id="below-0"),
    ],
)
def test_bad_reward_table_refused(table: np.ndarray) -> None:
    env = gym.make(ENV_ID, horizon=10)
    with pytest.raises(ValueError, match="reward_table"):
        env.reset(options={"reward_table": table})
    venv = gym.make_vec(ENV_ID, num_envs=2, horizon=10)
    with pytest.raises(ValueError, match="reward_table"):
        venv.reset(options={"reward_table": table})


def test_refused_reward_table_leaves_the_episode_running_as_it_was() -> None:
    bad = np.full((10, K), 1.5)
    env, twin = gym.make(ENV_ID, horizon=10), gym.make(ENV_ID, horizon=10)
    venv, vtwin = (gym.make_vec(ENV_ID, num_envs=2, horizon=10) for _ in range(2))
    for e in (env, twin, venv, vtwin):
        e.reset(seed=3)
    assert run(env, [0, 1]) and run(twin, [0, 1])
    with pytest.raises(ValueError, match="reward_table"):
        env.reset(seed=4, options={"reward_table": bad})
    with pytest.raises(ValueError, match="reward_table"):
        venv.reset(seed=4, options={"reward_table": bad})
    assert [r for r, _, _ in run(env, list(range(8)))] == [r for r, _, _ in run(twin, list(range(8)))]
    for a in range(K):
        np.testing.assert_array_equal(venv.step(np.array([a, a]))[1], vtwin.step(np.array([a, a]))[1])


def test_bad_reward_table_type_refused() -> None:
    env = gym.make(ENV_ID, horizon=2)
    with pytest.raises((TypeError, ValueError), match="reward_table"):
        env.reset(options={"reward_table": "abc"})


def test_unknown_reset_option_refused() -> None:
    env = gym.make(ENV_ID, horizon=10)
    with pytest.raises(ValueError, match="options.*rewards_table"):
        env.reset(options={"rewards_table": np.zeros((10, K))})
    venv = gym.make_vec(ENV_ID, num_envs=2, horizon=10)
    with pytest.raises(ValueError, match="options.*seed"):
        venv.reset(options={"seed": 1})


# ---------------------------------------------------------------------------------------------
# Seeding and instances
# ---------------------------------------------------------------------------------------------


def rewards_of(env: gym.Env[Any, Any], seed: int | None, n: int = 50) -> np.ndarray:
    env.reset(seed=seed)
    return np.array([info["observed_rewards"] for _, _, info in run(env, [0] * n)])


def test_same_seed_same_rewards_different_seed_different() -> None:
    env = gym.make(ENV_ID, horizon=1000, graph=nx.complete_graph(K))
    first = rewards_of(env, 7)
    np.testing.assert_array_equal(first, rewards_of(env, 7))
    np.testing.assert_array_equal(first, rewards_of(gym.make(ENV_ID, horizon=1000, graph=nx.complete_graph(K)), 7))
    assert not np.any(first == rewards_of(env, 8))


def test_reset_without_seed_continues_the_stream() -> None:
    env = gym.make(ENV_ID, horizon=20, graph=nx.complete_graph(K))
    a, b = rewards_of(env, 3, 20), rewards_of(env, None, 20)
    assert not np.any(a == b)
    env2 = gym.make(ENV_ID, horizon=20, graph=nx.complete_graph(K))
    rewards_of(env2, 3, 20)
    np.testing.assert_array_equal(rewards_of(env2, None, 20), b)


def test_instance_seed_fixes_graph_independently_of_noise_seed() -> None:
    def graph(instance_seed: int, seed: int) -> np.ndarray:
        env = gym.make(ENV_ID, horizon=5, edge_probability=0.5, instance_seed=instance_seed)
        return env.reset(seed=seed)[1]["feedback_graph"]

    np.testing.assert_array_equal(graph(0, 1), graph(0, 2))
    np.testing.assert_array_equal(graph(3, 1), graph(3, 99))
    distinct = {graph(s, 0).tobytes() for s in range(6)}
    assert len(distinct) >= 5
    assert not np.array_equal(graph(0, 0), graph(1, 0))


def test_noise_independent_of_instance() -> None:
    """Rewards are a function of the noise seed only (common random numbers across graphs)."""
    tables = []
    for instance_seed in (0, 1):
        env = gym.make(ENV_ID, horizon=30, instance_seed=instance_seed)
        env.reset(seed=11)
        tables.append([r for r, _, _ in run(env, [3] * 30)])
    assert tables[0] == tables[1]


def test_rewards_independent_of_reward_block_cuts() -> None:
    """Rewards do not depend on where reward blocks are cut: a long episode equals a replay."""
    horizon = 1100
    env = gym.make(ENV_ID, horizon=horizon, graph=nx.complete_graph(K))
    rows = rewards_of(env, 2, horizon)
    env.reset(options={"reward_table": rows})
    np.testing.assert_array_equal(np.array([i["observed_rewards"] for _, _, i in run(env, [0] * horizon)]), rows)
    # The env draws blocks of uniforms from np_random; one block of the same stream is equal.
    u = np.random.default_rng(2).random((horizon, K))
    np.testing.assert_array_equal(env.unwrapped.reward_model.from_uniforms(u), rows)


# ---------------------------------------------------------------------------------------------
# Vector env against the single env
# ---------------------------------------------------------------------------------------------


def assert_copy_matches(
    single: list[tuple[float, bool, dict[str, Any]]],
    vec: list[tuple[np.ndarray, np.ndarray, dict[str, Any]]],
    i: int,
) -> None:
    assert len(single) == len(vec)
    for (r, trunc, info), (vr, vtrunc, vinfo) in zip(single, vec, strict=True):
        assert vr[i] == r
        assert vtrunc[i] == trunc
        for key in INFO_KEYS:
            np.testing.assert_array_equal(vinfo[key][i], info[key], err_msg=key)


def vec_run(venv: gym.vector.VectorEnv, actions: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
    out = []
    for a in actions:
        _, r, term, trunc, info = venv.step(a)
        assert not term.any()
        out.append((r, trunc, info))
    return out


def test_vector_matches_single_with_autoreset() -> None:
    n, horizon, seed = 3, 6, 40
    kwargs = {"horizon": horizon, "edge_probability": 0.4}
    venv = gym.make_vec(ENV_ID, num_envs=n, **kwargs)
    obs, info = venv.reset(seed=seed)
    assert obs.shape == (n,) and np.all(obs == 0)
    assert info["feedback_graph"].shape == (n, K, K)
    actions = np.random.default_rng(0).integers(0, K, size=(2 * horizon + 2, n))
    out = vec_run(venv, actions)
    ep1, reset_step, ep2 = out[:horizon], out[horizon], out[horizon + 1 : 2 * horizon + 1]
    np.testing.assert_array_equal(reset_step[0], 0.0)  # NEXT_STEP autoreset: reward 0
    assert not reset_step[1].any()
    np.testing.assert_array_equal(reset_step[2]["regret"], 0.0)
    assert not reset_step[2]["observed_mask"].any()  # nothing observed on a reset step
    np.testing.assert_array_equal(reset_step[2]["observed_rewards"], 0.0)
    np.testing.assert_array_equal(out[-1][0], 0.0)  # second autoreset
    for i in range(n):
        env = gym.make(ENV_ID, **kwargs)
        _, single_info = env.reset(seed=seed + i)
        np.testing.assert_array_equal(info["feedback_graph"][i], single_info["feedback_graph"])
        np.testing.assert_array_equal(info["expected_rewards"][i], single_info["expected_rewards"])
        assert_copy_matches(run(env, actions[:horizon, i].tolist()), ep1, i)
        env.reset()  # episode 2: no seed, the generator runs on
        assert_copy_matches(run(env, actions[horizon + 1 : 2 * horizon + 1, i].tolist()), ep2, i)


def test_vector_matches_single_across_reward_blocks() -> None:
    n, horizon, seed = 2, 600, 5
    venv = gym.make_vec(ENV_ID, num_envs=n, horizon=horizon)
    venv.reset(seed=seed)
    actions = np.random.default_rng(1).integers(0, K, size=(horizon, n))
    out = vec_run(venv, actions)
    for i in range(n):
        env = gym.make(ENV_ID, horizon=horizon)
        env.reset(seed=seed + i)
        assert_copy_matches(run(env, actions[:, i].tolist()), out, i)


def test_vector_explicit_reset_without_seed_continues() -> None:
    n, horizon, seed = 2, 4, 8
    venv = gym.make_vec(ENV_ID, num_envs=n, horizon=horizon)
    venv.reset(seed=seed)
    actions = np.zeros((horizon, n), dtype=np.int64)
    vec_run(venv, actions[:2])  # stop mid-episode
    venv.reset()
    out = vec_run(venv, actions)
    for i in range(n):
        env = gym.make(ENV_ID, horizon=horizon)
        env.reset(seed=seed + i)
        run(env, [0, 0])
        env.reset()
        assert_copy_matches(run(env, [0] * horizon), out, i)


def test_vector_copies_independent_and_list_seeds() -> None:
    n, horizon = 4, 20
    venv = gym.make_vec(ENV_ID, num_envs=n, horizon=horizon, graph=nx.complete_graph(K))
    venv.reset(seed=0)
    seen = np.array([info["observed_rewards"] for _, _, info in vec_run(venv, np.zeros((20, n), int))])
    for i in range(n):
        for j in range(i):
            assert not np.any(seen[:, i] == seen[:, j])
    seeds = [13, 2, 2, 99]
    venv.reset(seed=seeds)
    actions = np.random.default_rng(2).integers(0, K, size=(horizon, n))
    out = vec_run(venv, actions)
    for i, s in enumerate(seeds):
        env = gym.make(ENV_ID, horizon=horizon, graph=nx.complete_graph(K))
        env.reset(seed=s)
        assert_copy_matches(run(env, actions[:, i].tolist()), out, i)
    np.testing.assert_array_equal(
        out[0][2]["observed_rewards"][1], out[0][2]["observed_rewards"][2]
    )  # equal seeds, equal draws
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=[1, 2])


def test_vector_same_seed_same_rewards() -> None:
    venv = gym.make_vec(ENV_ID, num_envs=3, horizon=10)
    actions = np.ones((10, 3), dtype=np.int64)
    venv.reset(seed=1)
    a = np.array([r for r, _, _ in vec_run(venv, actions)])
    venv.reset(seed=1)
    np.testing.assert_array_equal(a, [r for r, _, _ in vec_run(venv, actions)])
    venv.reset(seed=2)
    assert not np.array_equal(a, [r for r, _, _ in vec_run(venv, actions)])


def test_vector_replays_one_table_for_all_copies() -> None:
    n, horizon = 3, 5
    table = np.random.default_rng(3).random((horizon, K))
    venv = gym.make_vec(ENV_ID, num_envs=n, horizon=horizon)
    venv.reset(seed=0, options={"reward_table": table})
    actions = np.random.default_rng(4).integers(0, K, size=(2 * horizon + 1, n))
    out = vec_run(venv, actions)
    for t in range(horizon):
        for episode_offset in (0, horizon + 1):  # the table is kept across autoresets
            r, _, info = out[t + episode_offset]
            a = actions[t + episode_offset]
            np.testing.assert_array_equal(r, table[t, a])
            mask = info["observed_mask"]
            np.testing.assert_array_equal(info["observed_rewards"][mask], np.broadcast_to(table[t], (n, K))[mask])
            assert np.all(info["observed_rewards"][~mask] == 0.0)
    np.testing.assert_array_equal(out[horizon][0], 0.0)


def test_vector_replays_a_stack_of_tables() -> None:
    n, horizon = 3, 5
    tables = np.random.default_rng(5).random((n, horizon, K))
    venv = gym.make_vec(ENV_ID, num_envs=n, horizon=horizon)
    venv.reset(options={"reward_table": tables})
    actions = np.random.default_rng(6).integers(0, K, size=(horizon, n))
    out = vec_run(venv, actions)
    for i in range(n):
        env = gym.make(ENV_ID, horizon=horizon)
        env.reset(options={"reward_table": tables[i]})
        assert_copy_matches(run(env, actions[:, i].tolist()), out, i)
    with pytest.raises(ValueError, match="reward_table"):
        venv.reset(options={"reward_table": tables[:2]})


@pytest.mark.parametrize(
    "actions",
    [
        pytest.param(np.zeros(3, dtype=np.int64), id="too-few"),
        pytest.param(np.zeros(5, dtype=np.int64), id="too-many"),
        pytest.param(np.zeros((4, 1), dtype=np.int64), id="2d"),
        pytest.param(np.zeros(4), id="float"),
        pytest.param(np.array([0, 1, 10, 2]), id="too-large"),
        pytest.param(np.array([0, -1, 1, 2]), id="negative"),
        pytest.param(0, id="scalar"),
    ],
)
def test_vector_invalid_actions(actions: Any) -> None:
    venv = gym.make_vec(ENV_ID, num_envs=4, horizon=10)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        venv.step(actions)


# ---------------------------------------------------------------------------------------------
# Argument validation
# ---------------------------------------------------------------------------------------------

BAD_ARGS = [
    ("edge_probability", {"edge_probability": 1.5}),
    ("edge_probability", {"edge_probability": -0.1}),
    ("edge_probability", {"edge_probability": float("nan")}),
    ("edge_probability", {"edge_probability": "0.2"}),
    ("gap", {"gap": 0}),
    ("gap", {"gap": 0.95}),
    ("gap", {"gap": -0.1}),
    ("gap", {"gap": 0.6}),  # valid alone, but arm 9 would get 0.9 - 0.6 - 0.35 < 0
    ("horizon", {"horizon": 0}),
    ("horizon", {"horizon": -1}),
    ("horizon", {"horizon": 1.5}),
    ("horizon", {"horizon": True}),
    ("n_arms", {"n_arms": 1}),
    ("n_arms", {"n_arms": 0}),
    ("n_arms", {"n_arms": 2.0}),
    ("instance_seed", {"instance_seed": -1}),
    ("instance_seed", {"instance_seed": 0.5}),
    ("reward", {"reward": "gauss"}),
    ("reward_std", {"reward_std": 0}),
    ("reward_std", {"reward_std": -0.1}),
    ("reward_std", {"reward_std": float("inf")}),
    ("means", {"means": [0.5] * 9}),
    ("means", {"means": [0.5] * 11}),
    ("means", {"means": [1.1] + [0.5] * 9}),
    ("means", {"means": [-0.1] + [0.5] * 9}),
    ("means", {"means": [float("nan")] + [0.5] * 9}),
    ("means", {"graph": nx.path_graph(3), "means": [0.5] * 10}),
    ("graph", {"graph": nx.Graph([(0, 0), (0, 1)])}),
    ("graph", {"graph": nx.DiGraph([(0, 1), (1, 2)])}),
    ("graph", {"graph": np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])}),
    ("graph", {"graph": np.array([[0, 2], [2, 0]])}),
    ("graph", {"graph": np.array([[0, 0.5], [0.5, 0]])}),
    ("graph", {"graph": np.array([[1, 1], [1, 0]])}),
    ("graph", {"graph": np.zeros((2, 3))}),
    ("graph", {"graph": np.zeros(4)}),
    ("graph", {"graph": nx.relabel_nodes(nx.path_graph(3), {0: 1, 1: 2, 2: 3})}),
    ("graph", {"graph": nx.relabel_nodes(nx.path_graph(2), {0: "a", 1: "b"})}),
    ("graph", {"graph": nx.Graph()}),
    ("render_mode", {"render_mode": "video"}),
]


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_ARGS)])
def test_invalid_constructor_argument(name: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError), match=name):
        GraphBanditEnv(**kwargs)
    with pytest.raises((ValueError, TypeError), match=name):
        GraphBanditVectorEnv(num_envs=2, **kwargs)


NOT_ADJACENCIES = [
    pytest.param(np.array([[0, 2], [2, 0]]), "a boolean or 0/1 adjacency matrix, got graph[0, 1] = 2.", id="two"),
    pytest.param(np.array([[0, 0.5], [0.5, 0]]), "0/1 adjacency matrix, got graph[0, 1] = 0.5.", id="half"),
    pytest.param(np.array([[0, np.nan], [np.nan, 0]]), "0/1 adjacency matrix, got graph[0, 1] = nan.", id="nan"),
    pytest.param(np.array([["0", "1"], ["1", "0"]]), "0/1 adjacency matrix, got graph[0, 0] = '0'.", id="strings"),
    pytest.param(np.array([[0, 1j], [1j, 0]]), "0/1 adjacency matrix, got graph[0, 0] = 0j.", id="complex"),
    pytest.param(np.array([[0, None], [None, 0]]), "0/1 adjacency matrix, got graph[0, 1] = None.", id="None"),
    pytest.param(np.eye(3, dtype=int)[::-1], "got 1 on the diagonal, the first graph[1, 1] = 1.", id="loop"),
    pytest.param(np.triu(np.ones((3, 3)), 1), "got graph[0, 1] = 1.0 but graph[1, 0] = 0.0.", id="asymmetric"),
]


@pytest.mark.parametrize(("graph", "message"), NOT_ADJACENCIES)
def test_graph_that_is_not_an_adjacency_is_refused_quoting_its_first_offending_entry(graph: Any, message: str) -> None:
    for env_class in (GraphBanditEnv, lambda **k: GraphBanditVectorEnv(num_envs=2, **k)):
        with pytest.raises(ValueError) as error:
            env_class(graph=graph)
        assert str(error.value).startswith("graph must ") and str(error.value).endswith(message), str(error.value)


def test_graph_of_python_zeros_and_ones_is_an_adjacency() -> None:
    objects = np.array([[0, 1, False], [1, 0, True], [0.0, True, 0]], dtype=object)
    np.testing.assert_array_equal(GraphBanditEnv(graph=objects).adjacency, objects.astype(bool))


def test_invalid_argument_through_gym_make() -> None:
    with pytest.raises(ValueError, match=r"edge_probability.*1\.5"):
        gym.make(ENV_ID, edge_probability=1.5)
    with pytest.raises(ValueError, match="gap"):
        gym.make_vec(ENV_ID, num_envs=2, gap=0.95)
    with pytest.raises((ValueError, TypeError), match="num_envs"):
        GraphBanditVectorEnv(num_envs=0)


def test_graph_overrides_n_arms_and_edge_probability() -> None:
    """Documented: ``graph`` overrides ``n_arms``/``edge_probability`` (still checked, then unused)."""
    env = GraphBanditEnv(graph=nx.path_graph(4), n_arms=10, edge_probability=0.5)
    assert env.n_arms == 4 and env.action_space.n == 4
    assert env.reward_model.loc.shape == (4,)
    env = GraphBanditEnv(means=[0.2, 0.4, 0.6], n_arms=3, gap=0.5)  # means override gap
    np.testing.assert_array_equal(env.reward_model.loc, [0.2, 0.4, 0.6])
    with pytest.raises(ValueError, match="edge_probability"):  # out of range: refused, not dropped
        GraphBanditEnv(graph=nx.path_graph(4), edge_probability=1.5)
    with pytest.raises(ValueError, match="gap"):
        GraphBanditEnv(means=[0.2, 0.4, 0.6], gap=5.0)


@pytest.mark.parametrize("action", [10, -1, 1.5, "3", None, np.int64(K)])
def test_invalid_action(action: Any) -> None:
    env = gym.make(ENV_ID, horizon=5)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)


@pytest.mark.parametrize("action", [np.int64(3), np.array(3), 3, np.int32(9), 0])
def test_valid_action_types(action: Any) -> None:
    env = gym.make(ENV_ID, horizon=5)
    env.reset(seed=0)
    assert env.step(action)[4]["observed_mask"][int(action)]


def test_step_past_horizon_raises() -> None:
    env = gym.make(ENV_ID, horizon=3)
    env.reset(seed=0)
    assert [trunc for _, trunc, _ in run(env, [0, 1, 2])] == [False, False, True]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    run(env, [0])


_IMPORTS = """
import sys
import gymnasium as gym
import bandit_envs
from agents import GAP

env = gym.make("GraphBandit-v0", horizon=100, gap=0.1, edge_probability=0.2)
obs, info = env.reset(seed=1)
agent = GAP(n_arms=10, horizon=100, epsilon=0.1, feedback_graph=info["feedback_graph"], seed=0)
env.step(agent.act(obs))
print(sorted(name for name in ("networkx", "scipy.stats", "scipy.optimize") if name in sys.modules))
"""


def test_a_graph_bandit_and_gap_import_neither_networkx_nor_scipy_stats() -> None:
    """The README's first steps import only what they use: networkx and scipy.stats take tenths of a second."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _IMPORTS], capture_output=True, text=True, cwd=root, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "[]"


def test_vector_env_copied_after_a_step_steps_as_the_original() -> None:
    """The compiled step kept after the first step is not copied nor pickled: the copies make their own."""
    import copy
    import pickle

    env = GraphBanditVectorEnv(num_envs=4, n_arms=5, edge_probability=0.3, horizon=100)
    env.reset(seed=3)
    actions = np.array([0, 1, 2, 3])
    env.step(actions)
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(5):
        want = env.step(actions)
        for other in copies:
            got = other.step(actions)
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(got[4]["observed_rewards"], want[4]["observed_rewards"])
