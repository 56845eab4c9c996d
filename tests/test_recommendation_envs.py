"""Tests of ``MovieLensRecommendation-v0`` and ``GowallaRecommendation-v0`` (bandit_envs/recommendation/):
checkers, offline defaults, real-data smoke tests, the authors' construction against a transcription of their
code, the low-rank completion, feature norms, the info contract, seeding, the vector env against the single env,
the fast path against the env's own rounds, known-answer tests of the Gowalla construction, argument validation."""

from __future__ import annotations

import gc
import math
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import GOWALLA_NYC, ML_RATINGS, assert_copies_replay_single_envs, make_offline
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector.utils import batch_space

import bandit_envs
from bandit_envs.datasets import CheckIns, Ratings, load_movielens
from bandit_envs.datasets.env_data import ratings_from
from bandit_envs.recommendation import (
    GowallaRecommendationEnv,
    GowallaRecommendationVectorEnv,
    MovieLensProblem,
    MovieLensRecommendationEnv,
    MovieLensRecommendationVectorEnv,
)
from bandit_envs.recommendation._envs import BLOCK
from bandit_envs.recommendation._problem import StreamStates

ML_ID = "MovieLensRecommendation-v0"
GW_ID = "GowallaRecommendation-v0"
IDS = [ML_ID, GW_ID]
SINGLE = {ML_ID: MovieLensRecommendationEnv, GW_ID: GowallaRecommendationEnv}
VECTOR = {ML_ID: MovieLensRecommendationVectorEnv, GW_ID: GowallaRecommendationVectorEnv}
STEP_KEYS = {ML_ID: {"user_id"}, GW_ID: {"user_id", "location_id", "candidate_ids"}}
CONTRACT = ("regret", "expected_reward", "optimal_action", "context")
#: Settings that exercise the non-default paths of each env.
VARIANTS = {
    ML_ID: [{}, {"completion": "lowrank", "rank": 5}, {"singular_values": "features", "reward_noise": 0.1}],
    GW_ID: [{}, {"distance_km": 1.0, "reward": "visited", "reward_noise": 0.1}],
}
CASES = [(env_id, kwargs) for env_id in IDS for kwargs in VARIANTS[env_id]]


def _ratings(rows: list[tuple[int, int, float]]) -> Ratings:
    user, item, rating = (np.array(col) for col in zip(*rows, strict=True))
    return Ratings(user, item, rating.astype(float), np.arange(len(rows)))


def _all_features(env: Any) -> np.ndarray:
    contexts = np.arange(env.problem.n_contexts)
    return np.concatenate([env.features_of(chunk) for chunk in np.array_split(contexts, 8)])


# ---------------------------------------------------------------------------------------------
# Checkers, registration, offline defaults
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_gymnasium_check_env(env_id: str, kwargs: dict[str, Any]) -> None:
    gym_check_env(gym.make(env_id, horizon=50, **kwargs).unwrapped, skip_render_check=True)


@pytest.mark.integration  # stable-baselines3's env checker
@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_sb3_check_env(env_id: str, kwargs: dict[str, Any]) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        # SB3 recommends flat observations; a contextual bandit's is (n_arms, d) by design.
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        sb3_checker.check_env(gym.make(env_id, horizon=50, **kwargs), warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_registered_with_native_vector_env(env_id: str) -> None:
    assert env_id in bandit_envs.ENV_IDS
    venv = gym.make_vec(env_id, num_envs=32, vectorization_mode="vector_entry_point", horizon=10)
    assert isinstance(venv.unwrapped, VECTOR[env_id])
    assert venv.single_action_space == gym.spaces.Discrete(20)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (32, 20, 20) and venv.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = venv.step(np.zeros(32, dtype=np.int64))
    assert obs.shape == (32, 20, 20) and reward.shape == terminated.shape == truncated.shape == (32,)
    assert all(info[key].shape == (32,) for key in CONTRACT)


@pytest.mark.parametrize("env_id", IDS)
def test_make_without_arguments_works_offline(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env, obs, info = make_offline(env_id, monkeypatch)
    assert env.unwrapped.horizon == 1_000_000
    assert env.observation_space == gym.spaces.Box(-1.0, 1.0, (20, 20), np.float64)
    assert env.observation_space.contains(obs)
    assert info["n_clipped"] == 0
    if env_id == ML_ID:
        np.testing.assert_array_equal(info["item_ids"], np.arange(1, 21))


# ---------------------------------------------------------------------------------------------
# Real data (../shared/data)
# ---------------------------------------------------------------------------------------------


@pytest.mark.integration  # reads the real MovieLens ratings
def test_movielens_real_data_smoke(shared_data: Callable[[str], Path]) -> None:
    path = shared_data(ML_RATINGS).parent
    env = MovieLensRecommendationEnv(data=str(path), horizon=300)
    ratings = load_movielens("ml-latest-small", path=path)
    first = np.unique(ratings.item_id)[:20]
    np.testing.assert_array_equal(env.problem.item_ids, first)
    assert env.problem.n_contexts == np.unique(ratings.user_id[np.isin(ratings.item_id, first)]).size == 381
    # The default construction is the data itself: x^T θ* is the normalized rating, -1 where unrated.
    y = env.problem.normalized_ratings
    np.testing.assert_allclose(env.features @ env.theta, np.where(np.isnan(y), -1.0, y), atol=1e-12)
    env.reset(seed=0)
    regrets = [env.step(t % 20)[4]["regret"] for t in range(300)]
    assert min(regrets) >= 0.0
    popular = MovieLensRecommendationEnv(data=str(path), n_movies=50, movie_selection="popular", rank=8,
                                         completion="lowrank")  # fmt: skip
    ids, counts = np.unique(ratings.item_id, return_counts=True)
    assert counts[np.isin(ids, popular.problem.item_ids)].min() >= np.sort(counts)[-50]
    assert np.all(np.abs(popular.rewards) <= 1.0)


@pytest.mark.integration  # reads the real Gowalla check-ins
def test_gowalla_real_data_smoke(shared_data: Callable[[str], Path]) -> None:
    path = shared_data(GOWALLA_NYC)
    env = GowallaRecommendationEnv(data=str(path), horizon=300)
    problem = env.problem
    assert problem.n_contexts == 76_538  # distinct (user, POI) pairs of the 1,452 users with >= 20 check-ins
    assert np.unique(problem.context_user).size == 1452
    assert 0.5 < np.mean(problem.best > 0) < 0.7  # a visited POI among the 20 nearest in ~59% of contexts
    assert np.median(problem.distances_km[:, -1]) < 0.5  # NYC is dense: the 20th nearest POI is ~110 m away
    env.reset(seed=0)
    for t in range(300):
        obs, reward, _, _, info = env.step(t % 20)
        assert 0.0 <= reward <= 1.0 and info["regret"] >= 0.0
        assert info["location_id"] not in info["candidate_ids"]
    assert env.observation_space.contains(obs)


# ---------------------------------------------------------------------------------------------
# The MovieLens construction
# ---------------------------------------------------------------------------------------------

# Users 1-6 rate movies 1-6; user 7 rates only movie 6, which is not among the first 5: dropped.
SMALL = _ratings([
    (1, 1, 5), (1, 2, 3), (1, 4, 1), (2, 1, 4), (2, 3, 2), (2, 5, 5), (3, 2, 4), (3, 3, 4), (3, 6, 2),
    (4, 4, 5), (4, 5, 3), (5, 1, 1), (5, 5, 2), (5, 6, 4), (6, 3, 3), (6, 2, 5), (7, 6, 5),
])  # fmt: skip


def authors_reference(ratings: Ratings, num_movies: int, rank_k: int) -> tuple[np.ndarray, ...]:
    """A transcription of ``MovieLensEnv.__init__`` of the authors' ``src/dataset.py`` (numpy version)."""
    matrix = np.zeros((ratings.user_id.max(), ratings.item_id.max()))
    matrix[ratings.user_id - 1, ratings.item_id - 1] = ratings.rating
    matrix = matrix[:, :num_movies]
    matrix = matrix[np.nonzero(np.sum(matrix, axis=1) > 0.0)[0], :]
    matrix = 0.4 * (matrix - 2.5)
    u, s, vh = np.linalg.svd(matrix, full_matrices=False)
    u_hat = u[:, :rank_k] * np.sqrt(s[:rank_k])
    v_hat = np.transpose(np.transpose(vh[:rank_k, :]) * np.sqrt(s[:rank_k]))
    approx = np.matmul(u_hat, v_hat)
    feature = np.expand_dims(u[:, :rank_k], axis=1) * np.expand_dims(np.transpose(vh[:rank_k, :]), axis=0)
    return matrix, approx, feature, s[:rank_k]


@pytest.mark.parametrize("rank", [5, 3])
def test_authors_construction_matches_their_code(rank: int) -> None:
    matrix, approx, feature, s = authors_reference(SMALL, 5, rank)
    env = MovieLensRecommendationEnv(data=SMALL, n_movies=5, rank=rank)
    np.testing.assert_array_equal(env.problem.user_ids, [1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(env.features, feature, atol=1e-12)
    np.testing.assert_allclose(env.theta, s, atol=1e-12)
    np.testing.assert_allclose(env.rewards, np.clip(approx, -1, 1), atol=1e-12)
    assert env.n_clipped == np.count_nonzero(np.abs(approx) > 1 + 1e-9)
    if rank == 5:  # full rank: the rewards are the data, unrated = 0 stars = -1
        np.testing.assert_allclose(env.rewards, matrix, atol=1e-12)
        assert env.rewards[0, 2] == pytest.approx(-1.0) and env.rewards[0, 0] == pytest.approx(1.0)
        assert env.n_clipped == 0


@pytest.mark.parametrize("data", [None, SMALL])
def test_feature_sums_reproduce_the_normalized_ratings_at_full_rank(data: Any) -> None:
    env = MovieLensRecommendationEnv(data=data, n_movies=5, rank=5, singular_values="features")
    y = env.problem.normalized_ratings
    target = np.where(np.isnan(y), -1.0, y)
    # θ* = c·1: each feature vector sums to its completed rating divided by the norm scale c.
    np.testing.assert_allclose(env.theta, np.full(5, env.theta[0]))
    np.testing.assert_allclose(env.features.sum(axis=2) * env.theta[0], target, atol=1e-12)
    np.testing.assert_allclose(env.rewards, target, atol=1e-12)
    assert np.max(np.linalg.norm(env.features, axis=2)) == pytest.approx(1.0)


def test_lowrank_completion_does_not_pull_missing_ratings_to_the_worst() -> None:
    env = MovieLensRecommendationEnv(n_movies=50, movie_selection="popular", rank=6, completion="lowrank")
    y = env.problem.normalized_ratings
    missing = np.isnan(y)
    observed_mean = y[~missing].mean()
    assert missing.mean() > 0.5  # most entries are completed
    assert abs(env.rewards[missing].mean() - observed_mean) < 0.1
    assert env.rewards[missing].min() > -0.95
    # The fit follows the observed entries much better than their mean does.
    fit = np.sqrt(np.mean((env.rewards[~missing] - y[~missing]) ** 2))
    assert fit < 0.9 * np.std(y[~missing])
    assert np.linalg.matrix_rank(env.rewards, tol=1e-8) <= 6
    np.testing.assert_allclose(env.features @ env.theta, env.rewards, atol=1e-10)
    authors = MovieLensRecommendationEnv(n_movies=50, movie_selection="popular", rank=50)
    np.testing.assert_allclose(authors.rewards[missing], -1.0, atol=1e-12)


def test_instances_are_deterministic_and_shared() -> None:
    kwargs = {"n_movies": 30, "rank": 4, "completion": "lowrank"}
    env = MovieLensRecommendationEnv(instance_seed=0, **kwargs)
    assert env.problem is MovieLensRecommendationVectorEnv(num_envs=2, instance_seed=7, **kwargs).problem
    assert GowallaRecommendationEnv(rank=6).problem is GowallaRecommendationVectorEnv(rank=6, instance_seed=3).problem
    # Built again from scratch (no cache), the instance is the same: nothing in it is random.
    items = env.problem.item_ids
    for _ in range(2):
        rebuilt = MovieLensProblem(ratings_from(None), items, 4, "lowrank", "theta", 0.1)
        np.testing.assert_array_equal(rebuilt.rewards, env.rewards)
        np.testing.assert_array_equal(rebuilt.features, env.features)


def test_popular_selection_picks_the_most_rated_movies() -> None:
    env = MovieLensRecommendationEnv(data=SMALL, n_movies=2, rank=2, movie_selection="popular")
    # Movies 1, 2, 3, 5, 6 have 3 ratings each (ties: smaller ids), movie 4 has 2.
    np.testing.assert_array_equal(env.problem.item_ids, [1, 2])


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_feature_norms_at_most_one(env_id: str, kwargs: dict[str, Any]) -> None:
    env = SINGLE[env_id](**kwargs)
    norms = np.linalg.norm(_all_features(env), axis=2)
    assert norms.max() <= 1.0
    assert np.all(np.abs(env.rewards) <= 1.0)


# ---------------------------------------------------------------------------------------------
# The Gowalla construction (known answers on a hand-made table)
# ---------------------------------------------------------------------------------------------

# POIs 10, 11, 12, 13 on the parallel 40°N, 0.01° of longitude apart; user 3 has too few check-ins.
_VISITS = [(0, 10, 3), (0, 11, 1), (1, 10, 1), (1, 12, 2), (2, 13, 1), (2, 11, 1), (3, 10, 1)]
_ROWS = [(u, p) for u, p, count in _VISITS for _ in range(count)]
TINY = CheckIns(
    user_id=np.array([u for u, _ in _ROWS]),
    timestamp=np.arange(len(_ROWS)),
    lat=np.full(len(_ROWS), 40.0),
    lon=np.array([-74.0 + 0.01 * (p - 10) for _, p in _ROWS]),
    location_id=np.array([p for _, p in _ROWS]),
)


def test_gowalla_construction_known_answers() -> None:
    env = GowallaRecommendationEnv(data=TINY, n_arms=2, rank=1, min_user_checkins=2)
    problem = env.problem
    np.testing.assert_array_equal(problem.location_ids, [10, 11, 12, 13])
    # Contexts: the distinct (user, POI) pairs, user-major.
    pairs = [(int(problem.user_ids[c]), int(problem.location_ids[problem.context_poi[c]])) for c in range(6)]
    assert pairs == [(0, 10), (0, 11), (1, 10), (1, 12), (2, 11), (2, 13)]
    # Candidates: the two nearest other POIs (at 0.01° and 0.02° of longitude, or 0.01° on both sides).
    ids = problem.location_ids[problem.candidates]
    np.testing.assert_array_equal(ids[0], [11, 12])
    assert sorted(ids[1].tolist()) == [10, 12] and sorted(ids[4].tolist()) == [10, 12]
    step_km = 2 * 6371.0088 * math.asin(math.cos(math.radians(40.0)) * math.sin(math.radians(0.005)))
    np.testing.assert_allclose(problem.distances_km[0], [step_km, 2 * step_km], rtol=1e-6)
    # Rewards: log(1 + c) / log(1 + the user's largest c); user 0 visited 11 once (max 3), not 12.
    np.testing.assert_allclose(problem.rewards[0], [math.log(2) / math.log(4), 0.0])
    assert problem.optimal[0] == 0 and problem.best[0] == pytest.approx(0.5)
    # Context draws: a uniform user, then a uniform check-in (user 0: three at 10, one at 11).
    uniforms = np.array([[0.1, 0.0], [0.1, 0.74], [0.1, 0.76], [0.5, 0.2], [0.5, 0.5], [0.9, 0.4], [0.9, 0.6]])
    np.testing.assert_array_equal(problem.contexts(uniforms), [0, 0, 1, 2, 3, 4, 5])
    visited = GowallaRecommendationEnv(data=TINY, n_arms=2, rank=1, min_user_checkins=2, reward="visited")
    np.testing.assert_array_equal(visited.rewards[0], [1.0, 0.0])


def test_gowalla_features_are_factor_products() -> None:
    env = GowallaRecommendationEnv(distance_km=0.5)
    p = env.problem
    c = 123
    x = env.features_of(c)
    product = p.user_factors[p.context_user[c]] * p.poi_factors[p.candidates[c]]
    np.testing.assert_allclose(x[:, :-1] * math.sqrt(2), product)
    np.testing.assert_allclose(x[:, -1] * math.sqrt(2), np.exp(-p.distances_km[c] / 0.5))
    assert x.shape == (20, 21) and env.observation_space.shape == (20, 21)


# ---------------------------------------------------------------------------------------------
# Info contract, seeding, vector env, fast path
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_info_contract(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, horizon=40, **kwargs)
    u = env.unwrapped
    obs, _ = env.reset(seed=3)
    for t in range(40):
        action = (7 * t) % 20
        shown = obs
        obs, reward, terminated, truncated, info = env.step(action)
        assert set(CONTRACT) | STEP_KEYS[env_id] <= set(info)
        assert terminated is False and truncated is (t == 39)
        c = info["context"]
        np.testing.assert_array_equal(shown, u.features_of(c))
        values = u.rewards[c]
        assert info["optimal_action"] == int(np.argmax(values))
        assert info["expected_reward"] == values[action]
        assert info["regret"] == values.max() - values[action] >= 0.0
        if u.reward_noise == 0.0:
            assert reward == info["expected_reward"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("env_id", IDS)
def test_regret_is_zero_for_the_optimal_action_and_the_gap_otherwise(env_id: str) -> None:
    env = SINGLE[env_id](horizon=400)
    problem = env.problem
    contexts = env.round_contexts(400, 2)
    env.reset(seed=2)
    for t, c in enumerate(contexts):
        action = int(problem.optimal[c]) if t % 2 else int(np.argmin(problem.rewards[c]))
        _, reward, _, _, info = env.step(action)
        assert reward == info["expected_reward"] == problem.rewards[c, action]
        assert info["regret"] == problem.best[c] - problem.rewards[c, action]
        assert info["regret"] == 0.0 if t % 2 else info["regret"] >= 0.0


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_seeded_determinism(env_id: str, kwargs: dict[str, Any]) -> None:
    def run(seed: int) -> tuple[list[Any], list[float]]:
        env = SINGLE[env_id](horizon=60, **kwargs)
        obs, _ = env.reset(seed=seed)
        observations, rewards = [obs], []
        for t in range(60):
            obs, reward, _, _, _ = env.step(t % 20)
            observations.append(obs)
            rewards.append(reward)
        return observations, rewards

    (obs_a, rew_a), (obs_b, rew_b), (_, rew_c) = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(obs_a, obs_b, strict=True))
    assert rew_a == rew_b and rew_a != rew_c


def test_noise_is_gaussian_with_the_given_std_and_leaves_users_unchanged() -> None:
    quiet = MovieLensRecommendationEnv(horizon=3000)
    noisy = MovieLensRecommendationEnv(horizon=3000, reward_noise=0.2)
    np.testing.assert_array_equal(quiet.round_users(3000, 9), noisy.round_users(3000, 9))
    noisy.reset(seed=9)
    residual = []
    for t in range(3000):
        _, reward, _, _, info = noisy.step(t % 20)
        residual.append(reward - info["expected_reward"])
    assert np.mean(residual) == pytest.approx(0.0, abs=0.02)
    assert np.std(residual) == pytest.approx(0.2, rel=0.06)
    np.testing.assert_allclose(residual, noisy.round_noise(3000, 9), atol=1e-12)


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_vector_copy_equals_single_env_across_autoresets(env_id: str, kwargs: dict[str, Any]) -> None:
    n, horizon, steps = 3, 7, 23
    venv = VECTOR[env_id](num_envs=n, horizon=horizon, **kwargs)
    actions = np.random.default_rng(1).integers(0, 20, (steps, n))
    restart = {"regret": 0.0, "context": -1}
    assert_copies_replay_single_envs(venv, lambda: SINGLE[env_id](horizon=horizon, **kwargs), actions, 40, restart)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_copies_are_independent_and_accept_seed_lists(env_id: str) -> None:
    venv = VECTOR[env_id](num_envs=2, horizon=50, reward_noise=0.1)
    venv.reset(seed=[8, 8])
    same = [venv.step(np.array([3, 3]))[1] for _ in range(20)]
    assert all(r[0] == r[1] for r in same)
    venv.reset(seed=8)
    rewards = np.array([venv.step(np.array([3, 3]))[1] for _ in range(20)])
    assert not np.array_equal(rewards[:, 0], rewards[:, 1])
    np.testing.assert_array_equal(rewards[:, 0], np.array(same)[:, 0])


def test_stream_states_draw_as_generators_of_their_own() -> None:
    states = StreamStates(3)
    seeds = [5, 2**61 + 7, 0]
    for i, seed in enumerate(seeds):
        states.seed(i, seed)
    own = [np.random.default_rng(seed) for seed in seeds]
    for k, i in enumerate([0, 2, 0, 1, 1, 2, 0]):  # interleaved draws of varied lengths and kinds
        if k % 2:
            got, want = states.draw(i, lambda rng, k=k: rng.random((k + 1, 3))), own[i].random((k + 1, 3))
        else:
            got, want = states.draw(i, lambda rng, k=k: rng.standard_normal(k + 2)), own[i].standard_normal(k + 2)
        np.testing.assert_array_equal(got, want)
    for i in range(3):  # the next draw of every stream continues where its generator is
        assert states.draw(i, lambda rng: rng.integers(0, 2**62)) == own[i].integers(0, 2**62)


@pytest.mark.parametrize("env_id", IDS)
def test_batched_observation_space_is_batch_space_without_per_copy_bounds(env_id: str) -> None:
    n = 1000
    venv = VECTOR[env_id](num_envs=n, horizon=5)
    box, reference = venv.observation_space, batch_space(venv.single_observation_space, n)
    assert isinstance(box, gym.spaces.Box) and box == reference and reference == box
    assert box.shape == reference.shape and box.dtype == reference.dtype
    obs, _ = venv.reset(seed=0)
    assert box.contains(obs) and reference.contains(box.sample())
    assert not box.contains(obs + 2.0)
    for name in ("low", "high", "bounded_below", "bounded_above"):
        bound = getattr(box, name)
        np.testing.assert_array_equal(bound, getattr(reference, name))
        assert bound.base is not None and bound.base.nbytes < bound.nbytes // n + 64, name


def _traced_bytes(env_id: str, n: int) -> int:
    """Bytes tracemalloc sees held by a vector env of ``n`` copies after a reset and 3 steps, with the last outputs."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", reward_noise=0.1)
    venv.reset(seed=0)
    for actions in np.random.default_rng(2).integers(0, 20, (3, n)):
        out = venv.step(actions)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    del out, venv
    return held


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_memory_per_copy_is_small_at_large_num_envs(env_id: str) -> None:
    """A copy holds at most 24 KiB at N = 250 and 500 (all bytes over N, and N = 500 minus N = 250, per copy).

    The benchmark's goal is 16 KiB (benchmarks/bench_recommendation_env.py); about 12.5 KiB are
    measured at 20 arms and d = 20: the observation (3.2 KiB), the buffered contexts and noise
    (8 KiB) and the copy's generator.
    """
    gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point").reset(seed=0)  # data cached
    tracemalloc.start()
    try:
        small, large = _traced_bytes(env_id, 250), _traced_bytes(env_id, 500)
    finally:
        tracemalloc.stop()
    bound = 24 * 1024  # what is shared by the copies counts more per copy at these N than at larger ones
    assert small / 250 <= bound and large / 500 <= bound, f"{small / 250:.0f}, {large / 500:.0f} bytes per copy"
    assert (large - small) / 250 <= bound, f"{(large - small) / 250:.0f} bytes per added copy"


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_fast_path_reproduces_the_env_rounds(env_id: str, kwargs: dict[str, Any]) -> None:
    steps = BLOCK + 500  # crosses a block refill of the env's streams
    env = SINGLE[env_id](horizon=steps, **kwargs)
    contexts, noise = env.round_contexts(steps, 11), env.round_noise(steps, 11)
    actions = np.random.default_rng(2).integers(0, 20, steps)
    obs, _ = env.reset(seed=11)
    seen, rewards = [], []
    for t in range(steps):
        np.testing.assert_array_equal(obs, env.features_of(contexts[t]))
        obs, reward, _, _, info = env.step(int(actions[t]))
        seen.append(info["context"])
        rewards.append(reward)
    np.testing.assert_array_equal(seen, contexts)
    np.testing.assert_array_equal(rewards, env.rewards[contexts, actions] + noise)
    np.testing.assert_array_equal(env.round_contexts(100, 11), contexts[:100])  # a prefix of the same stream
    venv = VECTOR[env_id](num_envs=3, **kwargs)
    table = venv.round_contexts(200, 11)
    assert table.shape == (3, 200)
    np.testing.assert_array_equal(table[0], contexts[:200])
    np.testing.assert_array_equal(table[2], env.round_contexts(200, 13))
    np.testing.assert_array_equal(venv.round_noise(200, 11)[1], env.round_noise(200, 12))


def test_round_users_are_uniform_over_users() -> None:
    env = MovieLensRecommendationEnv()
    users = env.round_users(200_000, 0)
    counts = np.bincount(users, minlength=env.problem.n_contexts)
    expected = users.size / env.problem.n_contexts
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < env.problem.n_contexts + 5 * math.sqrt(2 * env.problem.n_contexts)


# ---------------------------------------------------------------------------------------------
# Argument validation
# ---------------------------------------------------------------------------------------------

COMMON_BAD = [
    ({"reward_noise": -0.1}, ValueError, "reward_noise"),
    ({"reward_noise": float("nan")}, ValueError, "reward_noise"),
    ({"reward_noise": "0.1"}, TypeError, "reward_noise"),
    ({"horizon": 0}, ValueError, "horizon"),
    ({"horizon": 1.5}, TypeError, "horizon"),
    ({"instance_seed": -1}, ValueError, "instance_seed"),
    ({"rank": 0}, ValueError, "rank"),
    ({"data": "no-such-dataset"}, ValueError, "data"),
    ({"data": 12}, TypeError, "data"),
    ({"render_mode": "video"}, ValueError, "render_mode"),
]
ML_BAD = [
    ({"n_movies": 1}, ValueError, "n_movies"),
    ({"n_movies": 2.5}, TypeError, "n_movies"),
    ({"n_movies": 10**6}, ValueError, "n_movies"),
    ({"movie_selection": "random"}, ValueError, "movie_selection"),
    ({"rank": 21}, ValueError, "rank"),
    ({"completion": "lowrank"}, ValueError, "rank"),  # rank 20 = n_movies: nothing to complete
    ({"completion": "lowrank", "rank": 25}, ValueError, "rank"),
    ({"completion": "svd"}, ValueError, "completion"),
    ({"singular_values": "both"}, ValueError, "singular_values"),
    ({"regularization": 0.0}, ValueError, "regularization"),
    ({"data": _ratings([(1, 1, 4.0), (1, 2, 3.0), (1, 3, 5.0)]), "n_movies": 3, "rank": 2}, ValueError, "rank"),
]
GW_BAD = [
    ({"n_arms": 1}, ValueError, "n_arms"),
    ({"n_arms": 10**6}, ValueError, "n_arms"),
    ({"rank": 10**4}, ValueError, "rank"),
    ({"min_user_checkins": 0}, ValueError, "min_user_checkins"),
    ({"min_user_checkins": 10**6}, ValueError, "min_user_checkins"),
    ({"reward": "count"}, ValueError, "reward"),
    ({"distance_km": 0.0}, ValueError, "distance_km"),
    ({"distance_km": "1"}, TypeError, "distance_km"),
]
BAD = [(ML_ID, *case) for case in COMMON_BAD + ML_BAD] + [(GW_ID, *case) for case in COMMON_BAD + GW_BAD]


@pytest.mark.parametrize(("env_id", "kwargs", "error", "name"), BAD)
def test_invalid_argument_raises_naming_it(env_id: str, kwargs: dict[str, Any], error: type, name: str) -> None:
    for cls in (SINGLE[env_id], VECTOR[env_id]):
        with pytest.raises(error, match=name):
            cls(**kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_invalid_step_reset_and_fast_path_arguments(env_id: str) -> None:
    env = SINGLE[env_id](horizon=5)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    for action in (-1, 20, 1.5, "3", None):
        with pytest.raises(ValueError, match="action"):
            env.step(action)
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"reward_table": 1})
    with pytest.raises(ValueError, match="n_rounds"):
        env.round_contexts(-1, 0)
    with pytest.raises(ValueError, match="seed"):
        env.round_noise(10, -1)
    with pytest.raises(ValueError, match="contexts"):
        env.features_of(env.problem.n_contexts)
    with pytest.raises(ValueError, match="contexts"):
        env.features_of(np.array([0.5]))
    for odd in (np.array([0, 1], dtype="m8[s]"), np.ma.array([0, 10**9], mask=[0, 1]), [True, 0]):
        with pytest.raises(ValueError, match="contexts must be integers"):  # time spans, masked, booleans
            env.features_of(odd)
    with pytest.raises(ValueError, match="num_envs"):
        VECTOR[env_id](num_envs=0)
    venv = VECTOR[env_id](num_envs=2, horizon=5)
    venv.reset(seed=0)
    for actions in (np.array([0]), np.array([0.0, 1.0]), np.array([0, 20]), np.array([-1, 0])):
        with pytest.raises(ValueError, match="actions"):
            venv.step(actions)
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=[1, 2, 3])


def test_product_features_drop_the_directions_the_completed_matrix_does_not_determine() -> None:
    """A rank-3 matrix asked for rank 5: the two extra directions get zero features and θ*, the rewards are exact.

    A change at the level of rounding then moves the features by about as much, not by a rotation of a near-null space.
    """
    from bandit_envs.recommendation._completion import SINGULAR_TOLERANCE, product_features

    rng = np.random.default_rng(3)
    completed = rng.uniform(-1, 1, (40, 3)) @ rng.uniform(-1, 1, (3, 12)) / 3
    for singular_values in ("theta", "features"):
        features, theta = product_features(completed, 5, singular_values)
        assert features.shape == (40, 12, 5)
        assert np.all(features[..., 3:] == 0.0) and (singular_values == "features" or np.all(theta[3:] == 0.0))
        assert np.abs(features @ theta - completed).max() < 1e-12
        nudged = completed + rng.uniform(-1e-15, 1e-15, completed.shape)
        again, _ = product_features(nudged, 5, singular_values)
        assert np.abs(again - features).max() < 1e-9
    weak = np.diag([1.0, 0.5, 0.5 * SINGULAR_TOLERANCE])  # a direction just under the tolerance is dropped
    features, theta = product_features(weak, 3, "theta")
    assert theta[2] == 0.0 and np.all(features[..., 2] == 0.0) and theta[1] == 0.5


def test_compiled_streams_draw_what_numpy_s_generators_draw() -> None:
    """The vector envs' compiled refill: numpy's PCG64 doubles and ziggurat normals, to the bit, tails included."""
    from bandit_envs import _ziggurat
    from bandit_envs.recommendation import _pcg64

    assert _pcg64.AVAILABLE  # numba ships numpy's ziggurat tables: the envs use the compiled path
    seeds = [5, 2**61 + 7, 0, 12345]
    states = StreamStates(len(seeds))
    for i, seed in enumerate(seeds):
        states.seed(i, seed)
    own = [np.random.default_rng(seed) for seed in seeds]
    copies, counts = np.array([0, 1, 3]), np.array([7, 0, 2])
    uniforms = np.empty((9, 3))
    _pcg64.fill_uniforms(states.words, copies, counts, uniforms)
    np.testing.assert_array_equal(uniforms, np.concatenate([own[0].random((7, 3)), own[3].random((2, 3))]))
    # 2 * 10^5 normals a stream: about 0.7% leave the layers' rectangles (wedges), a few dozen the base layer's tail
    block = np.zeros((4, 200_000))
    _pcg64.fill_normals(states.words, np.array([2, 0]), np.array([200_000, 150_000]), 0.25, block)
    np.testing.assert_array_equal(block[2], 0.25 * own[2].standard_normal(200_000))
    np.testing.assert_array_equal(block[0, :150_000], 0.25 * own[0].standard_normal(150_000))
    assert (np.abs(block[2]) > 0.25 * _ziggurat.R).sum() > 10  # the tail was drawn
    assert (block[1] == 0.0).all() and (block[3] == 0.0).all() and (block[0, 150_000:] == 0.0).all()
    for i in range(4):  # every stream continues where its generator is
        assert states.draw(i, lambda rng: rng.integers(0, 2**62)) == own[i].integers(0, 2**62)


def test_compiled_episode_seeding_is_numpy_s() -> None:
    """The copies' episode seeds from their generators, and default_rng(seed)'s PCG64 state, in compiled code."""
    from bandit_envs.core import generator_addresses
    from bandit_envs.recommendation import _pcg64
    from bandit_envs.recommendation._problem import episode_seeds

    # one or two 32-bit words of entropy, the largest seed an episode draws, and 0
    seeds = np.array([0, 1, 5, 2**32 - 1, 2**32, 2**61 + 7, 2**62 - 1, 12345678901234], dtype=np.uint64)
    expected, states = StreamStates(len(seeds)), StreamStates(len(seeds))
    for i, seed in enumerate(seeds.tolist()):
        expected.seed(i, seed)
    _pcg64.seed_streams(states.words, np.arange(len(seeds)), seeds)
    np.testing.assert_array_equal(states.words, expected.words)
    rngs, twins = [np.random.default_rng(s) for s in range(6)], [np.random.default_rng(s) for s in range(6)]
    drawn = np.empty((3, 2), dtype=np.uint64)
    _pcg64.fill_episode_seeds(generator_addresses(rngs), np.array([1, 4, 5]), drawn)
    np.testing.assert_array_equal(drawn, [episode_seeds(twins[c]) for c in (1, 4, 5)])
    for rng, twin in zip(rngs, twins, strict=True):
        assert rng.random() == twin.random()


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_draws_the_same_without_the_compiled_streams(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where numba's ziggurat tables are missing, the copies draw through numpy's generators: same rounds."""
    from bandit_envs.recommendation import _pcg64

    def play() -> list[Any]:
        venv = VECTOR[env_id](num_envs=3, horizon=9, reward_noise=0.3)
        venv.reset(seed=4)
        return [venv.step(np.array([t % 20, 1, 2]))[:2] for t in range(30)]

    compiled = play()
    monkeypatch.setattr(_pcg64, "AVAILABLE", False)
    for (obs, reward), (obs_numpy, reward_numpy) in zip(compiled, play(), strict=True):
        np.testing.assert_array_equal(obs, obs_numpy)
        np.testing.assert_array_equal(reward, reward_numpy)
