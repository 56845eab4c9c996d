"""Tests of ``PrivacyBudgetMovieLens-v0`` and ``PrivacyBudgetGowalla-v0`` (bandit_envs/budget/): checkers,
offline defaults, real-data smoke tests, the info contract, the payoff, both privacy mechanisms, the Monte
Carlo oracle, seeding, the native vector env against the single env, known-answer tests of the server
side (similarity without the user's row, exact POI counts) and argument validation."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numba
import numpy as np
import pytest
from conftest import GOWALLA_NYC, ML_RATINGS, assert_copies_replay_single_envs, lazy_module, make_offline
from gymnasium.utils.env_checker import check_env as gym_check_env
from scipy.special import expit

import bandit_envs
from bandit_envs import _parallel
from bandit_envs.budget import (
    PrivacyBudgetGowallaEnv,
    PrivacyBudgetGowallaVectorEnv,
    PrivacyBudgetMovieLensEnv,
    PrivacyBudgetMovieLensVectorEnv,
    _geo,
    eligible_user_ids,
    gowalla_scenario,
    movielens_scenario,
    payoff,
)
from bandit_envs.budget._geo import GridStack, build_grid, count_reference
from bandit_envs.budget._movielens_world import MovieLensWorld
from bandit_envs.datasets import CheckIns, Ratings, synthetic_gowalla
from bandit_envs.privacy import randomized_response

stats = lazy_module("scipy.stats")


ML_ID = "PrivacyBudgetMovieLens-v0"
GW_ID = "PrivacyBudgetGowalla-v0"
IDS = [ML_ID, GW_ID]
SINGLE = {ML_ID: PrivacyBudgetMovieLensEnv, GW_ID: PrivacyBudgetGowallaEnv}
VECTOR = {ML_ID: PrivacyBudgetMovieLensVectorEnv, GW_ID: PrivacyBudgetGowallaVectorEnv}
FAST = {"oracle_samples": 2000}
STEP_KEYS = (
    "epsilon",
    "privacy_loss",
    "recommendation_reward",
    "sensitivity",
    "regret",
    "expected_reward",
    "optimal_action",
    "fixed_arm_regret",
)
RESET_KEYS = (
    "user",
    "sensitivity_level",
    "budgets",
    "expected_rewards",
    "expected_recommendation_rewards",
    "expected_loss_factors",
)


def rollout(env: gym.Env[Any, Any], actions: list[int], seed: int) -> list[tuple[Any, ...]]:
    obs, _ = env.reset(seed=seed)
    out = [(obs.copy(),)]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs.copy(), r, term, trunc, info))
    return out


# ---------------------------------------------------------------------------------------------
# Checkers, registration, offline defaults
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id: str) -> None:
    env = gym.make(env_id, horizon=50, **FAST)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.integration  # stable-baselines3's env checker
@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id: str) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(gym.make(env_id, horizon=50, **FAST), warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_registered_with_native_vector_env(env_id: str) -> None:
    assert env_id in bandit_envs.ENV_IDS
    venv = gym.make_vec(env_id, num_envs=3, horizon=10, **FAST)
    assert isinstance(venv.unwrapped, VECTOR[env_id])
    assert venv.num_envs == 3
    assert venv.single_action_space == gym.spaces.Discrete(10)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3, 1)


@pytest.mark.parametrize("env_id", IDS)
def test_make_without_arguments_works_offline(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env, obs, info = make_offline(env_id, monkeypatch)
    assert env.unwrapped.horizon == 20_000
    np.testing.assert_allclose(info["budgets"], np.arange(1, 11) / 10)
    assert env.observation_space.contains(obs)
    assert env.unwrapped.gamma == 1.0


# ---------------------------------------------------------------------------------------------
# Real data (../shared/data)
# ---------------------------------------------------------------------------------------------


@pytest.mark.integration  # reads the real MovieLens ratings
def test_movielens_real_data_smoke(shared_data: Callable[[str], Path]) -> None:
    path = shared_data(ML_RATINGS).parent
    scenario = movielens_scenario(str(path))
    assert scenario.n_items == 2264  # movies with >= 10 raters in the (20, 10)-core
    eligible = scenario.eligible(0.25, 0.6)
    assert eligible.size == 21
    env = PrivacyBudgetMovieLensEnv(data=str(path), user=int(eligible[0]), horizon=200)
    _, info = env.reset(seed=0)
    assert info["user"] == eligible[0]
    total = sum(env.step(a % 10)[1] for a in range(200))
    assert 0.5 * 200 <= total <= 1.5 * 200
    # A second user over the same data reuses the scenario (no second Gram matrix).
    assert movielens_scenario(str(path)) is scenario


@pytest.mark.integration  # reads the real Gowalla check-ins
def test_gowalla_real_data_smoke(shared_data: Callable[[str], Path]) -> None:
    path = shared_data(GOWALLA_NYC)
    scenario = gowalla_scenario(str(path))
    assert scenario.city_center is not None  # one shared frame for the NYC subset
    eligible = scenario.eligible(800)
    assert eligible.size == 11
    venv = PrivacyBudgetGowallaVectorEnv(num_envs=4, users=list(eligible[:2]) * 2, data=str(path), horizon=100)
    venv.reset(seed=0)
    for _ in range(100):
        _, reward, _, _, info = venv.step(np.full(4, 6))
        assert np.all(info["recommendation_reward"] >= 0.0) and np.all(info["recommendation_reward"] <= 1.0)
    rec = venv.expected_rewards_by_user
    # The paper's trade-off on real data: the best budget lies strictly inside the grid for γ = 1.
    assert np.all((rec.argmax(axis=1) > 0) & (rec.argmax(axis=1) < 9))


# ---------------------------------------------------------------------------------------------
# Info contract and payoff
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_info_contract(env_id: str) -> None:
    env = gym.make(env_id, horizon=30, gamma=0.5, **FAST)
    obs, info = env.reset(seed=3)
    assert set(RESET_KEYS) <= set(info)
    phi = float(obs[0])
    for t in range(30):
        action = t % 10
        obs, reward, terminated, truncated, info = env.step(action)
        assert set(STEP_KEYS) <= set(info)
        assert terminated is False and truncated is (t == 29)
        assert info["sensitivity"] == pytest.approx(phi)
        assert info["epsilon"] == pytest.approx((action + 1) / 10)
        assert reward == pytest.approx(payoff(info["recommendation_reward"], info["privacy_loss"], 0.5))
        assert info["regret"] >= 0.0 and info["fixed_arm_regret"] >= 0.0
        values = env.unwrapped.instance.oracles[0].payoffs(phi, 0.5)
        assert info["optimal_action"] == int(np.argmax(values))
        assert info["expected_reward"] == pytest.approx(values[action])
        assert info["regret"] == pytest.approx(values.max() - values[action])
        phi = float(obs[0])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_payoff_formula_hand_checked() -> None:
    assert payoff(1.0, 0.5, 1.0) == pytest.approx(1.25)  # (1 - 0.5)/2 + 1
    assert payoff(0.0, 0.8, 0.5) == pytest.approx(1.0 - 0.8 / 1.5)
    assert payoff(0.3, 0.2, 0.0) == pytest.approx(0.8)  # γ = 0: only the loss counts
    assert payoff(1.0, 0.0, 3.0) == pytest.approx(1.75)
    np.testing.assert_allclose(payoff(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 1.0), [0.5, 1.5])


def test_sensitivities_follow_the_paper() -> None:
    levels = [PrivacyBudgetMovieLensEnv(instance_seed=s, **FAST).instance.levels[0] for s in range(6)]
    assert all(0.3 <= v <= 0.8 for v in levels) and len(set(levels)) > 1
    env = PrivacyBudgetMovieLensEnv(sensitivity_level=0.6, horizon=4000, **FAST)
    env.reset(seed=0)
    phis = np.array([env.step(0)[4]["sensitivity"] for _ in range(4000)])
    assert abs(phis.mean() - 0.6) < 0.005 and abs(phis.std() - 0.05) < 0.004


# ---------------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------------


def test_movie_step_uses_randomized_response_bit_for_bit() -> None:
    n, eps = 2000, 0.7
    bits = np.random.default_rng(1).integers(0, 2, n)
    world = MovieLensWorld(np.arange(n), bits.astype(bool), np.arange(1, n + 1), "revealed", "recommended")
    noise = np.zeros((n, 3))
    noise[:, 0] = np.random.default_rng(5).random(n)
    _, _, _, extra = world.step(np.zeros(n, dtype=np.int64), np.arange(n), np.full(n, eps), noise)
    expected = randomized_response(bits, eps, np.random.default_rng(5))
    np.testing.assert_array_equal(extra["reported_bit"].astype(int), expected)


@pytest.mark.parametrize(("eps", "arm"), [(5.0, 1), (0.1, 0)])
def test_randomized_response_truth_rate(eps: float, arm: int) -> None:
    env = PrivacyBudgetMovieLensEnv(budgets=[0.1, 5.0], horizon=5000, **FAST)
    env.reset(seed=2)
    same = np.array([(lambda i: i["reported_bit"] == i["true_bit"])(env.step(arm)[4]) for _ in range(5000)])
    p = expit(eps)
    assert abs(same.mean() - p) < 4 * np.sqrt(p * (1 - p) / same.size)
    if eps == 5.0:
        assert same.mean() > 0.98


# (0.2, 0.4) alone already separates the unit from ε (scale unit/ε); the other scales run with -m slow.
@pytest.mark.parametrize(
    ("unit", "eps"),
    [pytest.param(1.0, 0.5, marks=pytest.mark.slow), pytest.param(1.0, 1.0, marks=pytest.mark.slow), (0.2, 0.4)],
)
def test_planar_laplace_displacement(unit: float, eps: float) -> None:
    env = PrivacyBudgetGowallaEnv(budgets=[eps, 2.0], epsilon_unit_km=unit, horizon=4000, **FAST)
    env.reset(seed=4)
    infos = [env.step(0)[4] for _ in range(4000)]
    d = np.array([i["displacement_km"] for i in infos])
    scale = unit / eps
    assert abs(d.mean() - 2 * scale) < 4 * np.sqrt(2) * scale / np.sqrt(d.size)  # Gamma(2, scale): sd √2·scale
    assert stats.kstest(d, stats.gamma(2, scale=scale).cdf).pvalue > 1e-3
    loss = np.array([i["privacy_loss"] for i in infos])
    phi = np.array([i["sensitivity"] for i in infos])
    np.testing.assert_allclose(loss, phi * np.exp(-d))  # L = φ / e^d, d in km


def test_recommendation_reward_matches_brute_force() -> None:
    checkins = synthetic_gowalla(seed=0)
    env = PrivacyBudgetGowallaEnv(data=checkins, horizon=300, **FAST)
    world = env.instance.world
    grid = world.grids
    pois = np.stack([grid.x, grid.y], axis=1)  # the shared city grid holds every POI
    env.reset(seed=9)
    # The env's noise rows: the reset's, then one per step (one block: horizon + 1 <= 512 rows).
    noise = gym.utils.seeding.np_random(9)[0].random((301, env.instance.world.n_noise + 1))
    state = env._state.copy()
    for t in range(300):
        truth = world.locations[state[0]]
        _, _, _, _, info = env.step(t % 10)
        d = info["displacement_km"]
        # The reported point, from the angle column of the env's own noise row.
        row = noise[t + 1]
        theta = 2 * np.pi * row[2]
        reported = truth + d * np.array([np.cos(theta), np.sin(theta)])
        in_s = np.hypot(*(pois - reported).T) <= 3.0
        in_c = np.hypot(*(pois - truth).T) <= 1.0
        expected = (in_s & in_c).sum() / in_s.sum() if in_s.any() else 0.0
        assert info["recommendation_reward"] == pytest.approx(expected)
        state = env._state.copy()


def two_cities() -> CheckIns:
    """The synthetic city at New York and a second one at London; user 0 also checks in 30 times in London."""
    ny, ldn = synthetic_gowalla(seed=0), synthetic_gowalla(seed=1, center=(51.5, -0.12))
    extra = np.arange(30)
    columns = {
        "user_id": (ny.user_id, ldn.user_id + 1000, np.zeros(30, dtype=np.int64)),
        "timestamp": (ny.timestamp, ldn.timestamp, ny.timestamp[:30]),
        "lat": (ny.lat, ldn.lat, ldn.lat[extra]),
        "lon": (ny.lon, ldn.lon, ldn.lon[extra]),
        "location_id": (ny.location_id, ldn.location_id + 10_000, ldn.location_id[extra] + 10_000),
    }
    return CheckIns(**{name: np.concatenate(parts) for name, parts in columns.items()})


def test_per_user_frames_on_data_spanning_cities() -> None:
    data = two_cities()
    scenario = gowalla_scenario(data)
    assert scenario.city_center is None  # POIs 5,500 km apart: one frame per user
    london = [int(u) for u in scenario.eligible(800) if u >= 1000]
    users = [0, london[0]]  # a heavy New York user (with 30 London check-ins) and a heavy London user
    venv = PrivacyBudgetGowallaVectorEnv(num_envs=2, users=users, data=data, horizon=200, **FAST)
    assert venv.instance.world.grids.geometry.shape[0] == 2
    geometry = [scenario.geometry(u, 3.0, 1.0, 50.0) for u in users]
    assert geometry[0].dropped == 30 and geometry[1].dropped == 0
    venv.reset(seed=3)
    for t in range(200):
        state = venv._state.copy()
        _, _, _, _, info = venv.step(np.array([t % 10, (t + 5) % 10]))
        rows = venv._noise.block[np.arange(2), venv._noise.pos - 1]
        for i, g in enumerate(geometry):
            # Brute force over every POI of the data, projected into the user's own frame.
            pois = scenario._project(np.arange(scenario.n_pois), *g.center)
            offset = 0 if i == 0 else geometry[0].locations.shape[0]
            truth = g.locations[state[i] - offset]
            theta = 2 * np.pi * rows[i, 2]
            reported = truth + info["displacement_km"][i] * np.array([np.cos(theta), np.sin(theta)])
            in_s = np.hypot(*(pois - reported).T) <= 3.0
            in_c = np.hypot(*(pois - truth).T) <= 1.0
            expected = (in_s & in_c).sum() / in_s.sum() if in_s.any() else 0.0
            assert info["recommendation_reward"][i] == pytest.approx(expected)


@pytest.mark.parametrize("parallel", [False, True])
def test_disk_counts_are_exact(parallel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if parallel:  # every call in parallel on two threads (the serial path is the default for 300 queries)
        if numba.get_num_threads() < 2:
            # numba took one thread (one CPU, or NUMBA_NUM_THREADS=1), fixed when it loaded: run this
            # test in a fresh process with two (they share the CPU, and the counts must stay exact).
            test = f"{Path(__file__).resolve()}::test_disk_counts_are_exact[True]"
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", test]
            child = subprocess.run(
                command, env={**os.environ, "NUMBA_NUM_THREADS": "2"}, capture_output=True, text=True, timeout=600
            )
            assert child.returncode == 0 and "1 passed" in child.stdout, child.stdout[-3000:] + child.stderr[-2000:]
            return
        monkeypatch.setattr(_geo, "PARALLEL_MIN_QUERIES", 1)
        monkeypatch.setattr(_geo, "free_cores", lambda limit: min(2, limit))  # as free_cores: never above limit
    else:
        monkeypatch.setattr(_geo, "_count_parallel", None)
    rng = np.random.default_rng(0)
    pts = np.concatenate([rng.normal(0, 2, (3000, 2)), rng.uniform(-8, 8, (1000, 2))])
    grids = [build_grid(pts, [-6, -6], [6, 6], (0.05, 0.2)), build_grid(pts * 0.5, [-5, -5], [5, 5], (0.3, 0.3))]
    stack = GridStack.of(grids)
    who = rng.integers(0, 2, 300)
    a = rng.uniform(-3, 3, (300, 2))
    b = a + rng.normal(0, 1.5, (300, 2))
    one, two = stack.count(who, b, 3.0), stack.count(who, a, 1.0, b, 3.0)
    sources = [(pts, 6.0), (pts * 0.5, 5.0)]
    for q in range(300):
        p, box = sources[who[q]]
        p = p[np.all(np.abs(p) <= box, axis=1)]
        da, db = np.hypot(*(p - a[q]).T), np.hypot(*(p - b[q]).T)
        assert one[q] == (db <= 3.0).sum()
        assert two[q] == ((da <= 1.0) & (db <= 3.0)).sum()
    np.testing.assert_array_equal(one, count_reference(stack, who, b, 3.0))
    np.testing.assert_array_equal(two, count_reference(stack, who, a, 1.0, b, 3.0))


def test_single_and_small_vector_steps_run_no_parallel_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step asks a few queries (~1 us each): a parallel region there costs far more than it saves."""

    def refused(*args: Any) -> None:
        raise AssertionError("a parallel kernel ran")

    data = synthetic_gowalla(seed=0)
    env = gym.make("PrivacyBudgetGowalla-v0", data=data, horizon=200)  # its oracle: large batches, in parallel
    venv = PrivacyBudgetGowallaVectorEnv(num_envs=40, users=[0] * 40, data=data, horizon=50)
    monkeypatch.setattr(_geo, "_count_parallel", refused)
    monkeypatch.setattr(_geo, "free_cores", lambda limit: 2)  # even with a free core
    env.reset(seed=0)
    for a in np.random.default_rng(0).integers(0, 10, 200).tolist():
        env.step(a)
    venv.reset(seed=0)
    for _ in range(50):
        venv.step(np.zeros(40, dtype=np.int64))


@pytest.mark.parametrize(
    ("runnable", "cores", "expected"), [("1/90", 2, 2), ("2/90", 2, 1), ("9/90", 2, 1), ("2/90", 8, 4)]
)
def test_free_cores_leaves_out_the_other_runnable_tasks(
    runnable: str, cores: int, expected: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"3.10 2.00 1.50 {runnable} 4242\n")
    monkeypatch.setattr(_parallel, "_LOADAVG", str(loadavg))
    monkeypatch.setattr(_parallel, "_cores", lambda: cores)
    assert _parallel.free_cores(4) == expected
    monkeypatch.setattr(_parallel, "_LOADAVG", str(tmp_path / "missing"))
    assert 1 <= _parallel.free_cores(4) <= 4


def test_similarity_leaves_out_the_users_own_row() -> None:
    # Movies 0..2. With user 1's row, movie 0's nearest neighbour is movie 1 (cosine 0.77 vs
    # 0.51); without it movie 1 has no rater left, so the neighbour is movie 2.
    table = [(1, 0, 5.0), (1, 1, 5.0), (2, 0, 1.0), (2, 2, 5.0), (3, 0, 4.0), (3, 2, 4.0)]
    users, items, ratings = (np.array(c) for c in zip(*table, strict=True))
    data = Ratings(users, items + 10, ratings.astype(float), np.arange(len(table)))
    scenario = movielens_scenario(data, min_movie_raters=1, min_user_ratings=1)
    assert scenario.nearest(1)[0] == 2
    dense = np.zeros((3, 3))
    dense[users - 1, items] = ratings
    for user in (1, 2, 3):
        others = np.delete(dense, user - 1, axis=0)
        norms = np.linalg.norm(others, axis=0)
        outer = np.outer(norms, norms)
        sim = np.divide(others.T @ others, outer, out=np.zeros((3, 3)), where=outer > 0)
        np.fill_diagonal(sim, -np.inf)
        np.testing.assert_array_equal(scenario.nearest(user), sim.argmax(axis=1))


# ---------------------------------------------------------------------------------------------
# Monte Carlo oracle against the env
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("env_id", "arm"), [(ML_ID, 2), (ML_ID, 9), (GW_ID, 4)])
def test_oracle_agrees_with_env_steps(env_id: str, arm: int) -> None:
    copies, steps, burn = 200, 300, 60
    venv = VECTOR[env_id](num_envs=copies, horizon=steps, oracle_samples=20_000)
    oracle = venv.instance.oracles[0]
    venv.reset(seed=11)
    rec = np.zeros((steps, copies))
    loss = np.zeros((steps, copies))
    for t in range(steps):
        info = venv.step(np.full(copies, arm))[4]
        rec[t] = info["recommendation_reward"]
        loss[t] = info["privacy_loss"] / info["sensitivity"]
    for values, estimate, se in (
        (rec, oracle.recommendation[arm], oracle.recommendation_se[arm]),
        (loss, oracle.loss_factor[arm], oracle.loss_factor_se[arm]),
    ):
        per_copy = values[burn:].mean(axis=0)  # copies are independent; rounds within one are not
        se_env = per_copy.std(ddof=1) / np.sqrt(copies)
        assert abs(per_copy.mean() - estimate) < 4 * np.hypot(se_env, se)


# ---------------------------------------------------------------------------------------------
# Seeding and the vector env
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_seeded_determinism(env_id: str) -> None:
    actions = [int(a) for a in np.random.default_rng(0).integers(0, 10, 60)]
    a = rollout(SINGLE[env_id](horizon=60, **FAST), actions, seed=5)
    b = rollout(SINGLE[env_id](horizon=60, **FAST), actions, seed=5)
    c = rollout(SINGLE[env_id](horizon=60, **FAST), actions, seed=6)
    assert all(np.array_equal(x[0], y[0]) for x, y in zip(a, b, strict=True))
    assert [x[1] for x in a[1:]] == [y[1] for y in b[1:]]
    assert [x[4] for x in a[1:]] == [y[4] for y in b[1:]]
    assert [x[1] for x in a[1:]] != [y[1] for y in c[1:]]


@pytest.mark.parametrize("env_id", IDS)
def test_vector_copy_equals_single_env_across_autoresets(env_id: str) -> None:
    n, horizon, steps = 3, 7, 23
    venv = VECTOR[env_id](num_envs=n, horizon=horizon, **FAST)
    actions = np.random.default_rng(1).integers(0, 10, (steps, n))
    assert_copies_replay_single_envs(venv, lambda: SINGLE[env_id](horizon=horizon, **FAST), actions, seed=40)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_with_a_user_per_copy(env_id: str) -> None:
    scenario = movielens_scenario() if env_id == ML_ID else gowalla_scenario()
    pool = scenario.eligible(0.25, 0.6) if env_id == ML_ID else scenario.eligible(800)  # the default thresholds
    users = [int(pool[0]), int(pool[1]), int(pool[0]), int(pool[2])]
    venv = VECTOR[env_id](num_envs=4, users=users, horizon=20, **FAST)
    np.testing.assert_array_equal(venv.users, users)
    assert venv.instance.users.size == 3  # distinct users share their tables and oracles
    obs_v, info_v = venv.reset(seed=7)
    np.testing.assert_array_equal(info_v["user"], users)
    actions = np.random.default_rng(2).integers(0, 10, (20, 4))
    trace = [venv.step(a) for a in actions]
    for i, user in enumerate(users):
        env = SINGLE[env_id](user=user, horizon=20, **FAST)
        obs, info = env.reset(seed=7 + i)
        assert info["sensitivity_level"] == info_v["sensitivity_level"][i]
        np.testing.assert_array_equal(obs, obs_v[i])
        for t in range(20):
            obs, reward, _, _, _ = env.step(int(actions[t, i]))
            assert reward == trace[t][1][i]
            np.testing.assert_array_equal(obs, trace[t][0][i])


# ---------------------------------------------------------------------------------------------
# Argument validation: every invalid argument names itself
# ---------------------------------------------------------------------------------------------

COMMON_BAD = [
    ({"n_budgets": 1}, ValueError, "n_budgets"),
    ({"n_budgets": 2.5}, TypeError, "n_budgets"),
    ({"budgets": [0.0, 0.5]}, ValueError, "budgets"),
    ({"budgets": [-0.1, 0.5]}, ValueError, "budgets"),
    ({"budgets": [0.1, 6.0]}, ValueError, "budgets"),
    ({"budgets": [0.5, 0.5]}, ValueError, "budgets"),
    ({"budgets": [0.5]}, ValueError, "budgets"),
    ({"budgets": [[0.1, 0.2]]}, ValueError, "budgets"),
    ({"budgets": ["a", "b"]}, TypeError, "budgets"),
    ({"budgets": [0.1, np.nan]}, ValueError, "budgets"),
    ({"gamma": -0.5}, ValueError, "gamma"),
    ({"gamma": "1"}, TypeError, "gamma"),
    ({"sensitivity_range": (0.8, 0.3)}, ValueError, "sensitivity_range"),
    ({"sensitivity_range": (-0.1, 0.5)}, ValueError, "sensitivity_range"),
    ({"sensitivity_range": (0.3, 1.2)}, ValueError, "sensitivity_range"),
    ({"sensitivity_range": 0.5}, ValueError, "sensitivity_range"),
    ({"sensitivity_std": -0.01}, ValueError, "sensitivity_std"),
    ({"sensitivity_level": 1.5}, ValueError, "sensitivity_level"),
    ({"horizon": 0}, ValueError, "horizon"),
    ({"instance_seed": -1}, ValueError, "instance_seed"),
    ({"oracle_samples": 10}, ValueError, "oracle_samples"),
    ({"oracle_seed": -3}, ValueError, "oracle_seed"),
    ({"user": 10**9}, ValueError, "user"),
    ({"user": "7"}, TypeError, "user"),
    ({"data": "no-such-dataset"}, ValueError, "data"),
    ({"data": 12}, TypeError, "data"),
    ({"render_mode": "video"}, ValueError, "render_mode"),
]
ML_BAD = [
    ({"loss": "huge"}, ValueError, "loss"),
    ({"next_item": "best"}, ValueError, "next_item"),
    ({"similarity": "pearson"}, ValueError, "similarity"),
    ({"min_movie_raters": 0}, ValueError, "min_movie_raters"),
    ({"min_user_ratings": 0}, ValueError, "min_user_ratings"),
    ({"min_watched_fraction": 0.7, "max_watched_fraction": 0.6}, ValueError, "min_watched_fraction"),
    ({"max_watched_fraction": 1.5}, ValueError, "max_watched_fraction"),
    ({"min_watched_fraction": 0.99}, ValueError, "min_watched_fraction"),
    ({"min_movie_raters": 10**6}, ValueError, "min_movie_raters"),
]
GW_BAD = [
    ({"epsilon_unit_km": 0.0}, ValueError, "epsilon_unit_km"),
    ({"recommend_radius_km": -3.0}, ValueError, "recommend_radius_km"),
    ({"valid_radius_km": 0.0}, ValueError, "valid_radius_km"),
    ({"loss_scale_km": float("inf")}, ValueError, "loss_scale_km"),
    ({"home_radius_km": -1.0}, ValueError, "home_radius_km"),
    ({"recommend_radius_km": 1e155}, ValueError, "recommend_radius_km must be a finite number in .0, 20037.5."),
    ({"valid_radius_km": 3e4}, ValueError, "valid_radius_km must be a finite number in .0, 20037.5."),
    ({"home_radius_km": 1e300}, ValueError, "home_radius_km must be a finite number in .0, 20037.5."),
    ({"min_user_checkins": 0}, ValueError, "min_user_checkins"),
    ({"min_user_checkins": 10**7}, ValueError, "min_user_checkins"),
]
BAD = [pytest.param(ML_ID, *case, id=f"ml-{case[2]}-{k}") for k, case in enumerate(COMMON_BAD + ML_BAD)] + [
    pytest.param(GW_ID, *case, id=f"gw-{case[2]}-{k}") for k, case in enumerate(COMMON_BAD + GW_BAD)
]


@pytest.mark.parametrize(("env_id", "kwargs", "error", "name"), BAD)
def test_invalid_argument_raises_naming_it(env_id: str, kwargs: dict[str, Any], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        SINGLE[env_id](**{**FAST, **kwargs})


@pytest.mark.parametrize("env_id", IDS)
def test_ineligible_user_is_refused_with_the_reason(env_id: str) -> None:
    scenario = movielens_scenario() if env_id == ML_ID else gowalla_scenario()
    counts = scenario.counts
    low = int(scenario.user_ids[np.argmin(counts)])
    with pytest.raises(ValueError, match=f"user={low}"):
        SINGLE[env_id](user=low, **FAST)


@pytest.mark.parametrize("env_id", IDS)
def test_a_users_entry_that_is_not_an_integer_is_named_as_given(env_id: str) -> None:
    for bad in (True, 1.5, "7"):
        with pytest.raises(TypeError, match=rf"^users\[1\] must be an integer, got {re.escape(repr(bad))} "):
            VECTOR[env_id](num_envs=2, users=[None, bad], **FAST)


@pytest.mark.parametrize("env_id", IDS)
def test_a_users_entry_not_in_the_data_or_ineligible_is_named_as_given(env_id: str) -> None:
    scenario = movielens_scenario() if env_id == ML_ID else gowalla_scenario()
    low = int(scenario.user_ids[np.argmin(scenario.counts)])
    for bad in (-1, low):  # not in the data; in it, but not eligible
        with pytest.raises(ValueError, match=rf"^users\[1\]={bad} "):
            VECTOR[env_id](num_envs=2, users=[None, bad], **FAST)
        with pytest.raises(ValueError, match=rf"^user={bad} "):  # the same user given as user: named so
            VECTOR[env_id](num_envs=2, user=bad, **FAST)


@pytest.mark.parametrize("env_id", IDS)
def test_invalid_vector_and_step_arguments(env_id: str) -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VECTOR[env_id](num_envs=0, **FAST)
    with pytest.raises(ValueError, match="users"):
        VECTOR[env_id](num_envs=3, users=[1, 2], **FAST)
    with pytest.raises(TypeError, match="users"):
        VECTOR[env_id](num_envs=1, users=5, **FAST)
    with pytest.raises(ValueError, match="user or users"):
        VECTOR[env_id](num_envs=1, users=[None], user=1, **FAST)
    venv = VECTOR[env_id](num_envs=2, horizon=5, **FAST)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.array([0, 10]))
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=[1])
    env = SINGLE[env_id](horizon=5, **FAST)
    env.reset(seed=0)
    for bad in (10, -1, 1.5, "3"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"reward_table": 1})


def test_dataset_names_and_tables() -> None:
    with pytest.raises(ValueError, match="ml-latest-small"):
        PrivacyBudgetMovieLensEnv(data="ml-25m", **FAST)
    with pytest.raises(ValueError, match="gowalla-nyc"):
        PrivacyBudgetGowallaEnv(data="foursquare", **FAST)
    with pytest.raises(TypeError, match="data"):
        PrivacyBudgetGowallaEnv(data=Ratings(np.array([1]), np.array([1]), np.array([4.0]), np.array([0])))
    empty = CheckIns(*(np.array([], dtype=t) for t in (int, int, float, float, int)))
    with pytest.raises(ValueError, match="data"):
        PrivacyBudgetGowallaEnv(data=empty, **FAST)


def test_eligible_user_ids_match_the_envs() -> None:
    ml = eligible_user_ids("movielens")
    assert ml.size == 11 and np.all(np.diff(ml) > 0)
    assert PrivacyBudgetMovieLensEnv(**FAST).user in ml
    assert eligible_user_ids("movielens", min_watched_fraction=0.1).size > ml.size
    gw = eligible_user_ids("gowalla")
    np.testing.assert_array_equal(gw, [0, 40, 75, 126, 176])  # the synthetic city's heavy users
    assert eligible_user_ids("gowalla", min_user_checkins=1).size == 200
    with pytest.raises(ValueError, match="scenario"):
        eligible_user_ids("foursquare")
    with pytest.raises(ValueError, match="min_user_checkins"):
        eligible_user_ids("movielens", min_user_checkins=3)


def test_dataset_names_resolve_through_the_loaders(monkeypatch: pytest.MonkeyPatch) -> None:
    from bandit_envs.datasets import env_data as _data

    asked: list[tuple[str, Any]] = []
    marker = Ratings(np.array([1]), np.array([1]), np.array([4.0]), np.array([0]))
    monkeypatch.setattr(
        _data, "load_movielens", lambda name, path=None, data_home=None: asked.append((name, path)) or marker
    )
    _data._named_ratings.cache_clear()
    try:
        assert _data.ratings_from("movielens-latest-small") is marker
        assert _data.ratings_from("ml-100k") is marker
    finally:
        _data._named_ratings.cache_clear()
    assert asked == [("ml-latest-small", None), ("ml-100k", None)]


def test_kept_tables_are_read_again_when_their_file_changes(tmp_path: Path, shared_data: Callable[[str], Path]) -> None:
    from bandit_envs.datasets import DatasetError
    from bandit_envs.datasets import env_data as _data

    def rewrite(path: Path, data: bytes, stamp: int) -> None:
        path.write_bytes(data)
        os.utime(path, ns=(stamp * 10**9, stamp * 10**9))

    checkins = tmp_path / "checkins.txt"  # not the official name: schema check only
    row = b"0\t2010-10-12T00:21:28Z\t40.7\t-74.0\t5\n"
    rewrite(checkins, row, 1_000_000_000)
    assert len(_data.checkins_from(checkins)) == 1
    assert _data.checkins_from(checkins) is _data.checkins_from(checkins)  # kept while unchanged
    rewrite(checkins, row * 3, 1_000_000_001)
    assert len(_data.checkins_from(checkins)) == 3  # the edited file, not the kept table
    rewrite(checkins, row.replace(b"40.7", b"97.5"), 1_000_000_002)
    with pytest.raises(DatasetError, match="lat outside"):
        _data.checkins_from(checkins)  # broken after it was loaded: verified again, not served from memory

    ratings = tmp_path / "ratings.csv"
    original = shared_data("ml-latest-small/ratings.csv").read_bytes()
    rewrite(ratings, original, 1_000_000_000)
    assert len(_data.ratings_from(tmp_path)) == len(_data.ratings_from(ratings)) == 100_836
    altered = original.replace(b"1,1,4.0,964982703", b"1,1,5.0,964982703", 1)
    assert altered != original
    rewrite(ratings, altered, 1_000_000_001)
    for data in (ratings, tmp_path):  # the file, or the folder holding it
        with pytest.raises(DatasetError, match="has sha256"):
            _data.ratings_from(data)
