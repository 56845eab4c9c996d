"""Costs that must scale as the algorithm says, checked by counting work rather than timing it.

Each test counts what a step does (the passes of a compiled kernel's plain-Python body, the calls
it makes) on an input where the old, worse-scaling way of doing it would do visibly more, and
checks that the result is unchanged.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
import pytest

from agents import DPTSUCB, Exp3SET
from agents.adversarial import kernels
from agents.central_dp import gaussian_ts
from bandit_envs import wrappers
from bandit_envs.privacy import accounting


def test_exp3set_update_computes_q_of_the_observed_arms_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round that reveals |N[a]| arms computes |N[a]| observation probabilities, not K (K passes of K entries)."""
    k = 40
    path = np.eye(k, k=1, dtype=bool) | np.eye(k, k=-1, dtype=bool)
    agent = Exp3SET(k, path, horizon=1000, seed=0)
    closed = agent._closed
    start, arms = agent._neighbours
    rng = np.random.default_rng(1)
    rewards = rng.random(k)
    pulled = 17
    mask = closed[pulled][None].copy()  # what the env reveals: the pulled arm's closed neighbourhood
    observed = np.where(mask, rewards[None], 0.0)
    feedback = (np.array([pulled]), rewards[[pulled]], mask, observed, start, arms, agent.fixed_eta)

    expected = agent._state.copy()
    assert kernels.exp3set_update(expected, *feedback) == -1

    asked: list[tuple[int, int]] = []  # (arm, neighbours read)
    compiled = kernels.observation_probability

    def counted(state: Any, b: int, k_arms: int, start: Any, arms: Any, i: int) -> float:
        asked.append((i, int(start[i + 1] - start[i])))
        return float(compiled(state, b, k_arms, start, arms, i))

    # the kernel's own body and its row's, run as Python, call the module's observation_probability: count those calls
    monkeypatch.setattr(kernels, "observation_probability", counted)
    monkeypatch.setattr(kernels, "exp3set_row", kernels.exp3set_row.py_func)
    state = agent._state.copy()
    assert kernels.exp3set_update.py_func(state, *feedback) == -1

    # three sums of the arms' neighbour lists (three entries each on a path), not K passes of K flags
    assert sorted(asked) == [(pulled - 1, 3), (pulled, 3), (pulled + 1, 3)]
    np.testing.assert_array_equal(state, expected)


def test_user_ids_of_a_numeric_array_take_no_call_per_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step's numeric ``info["user_id"]`` is keyed in one pass: the same keys as user_key, no call per copy."""
    ints = np.random.default_rng(0).integers(0, 50, 1000)
    floats = np.where(np.arange(1000) % 7 == 0, np.nan, ints.astype(np.float64))
    flags = ints % 2 == 0
    cases = [ints, ints.astype(np.uint32), floats, flags]
    expected = [[accounting.user_key(v) for v in ids] for ids in cases]

    calls = 0
    plain = accounting.user_key

    def counted(value: Any) -> Any:
        nonlocal calls
        calls += 1
        return plain(value)

    monkeypatch.setattr(accounting, "user_key", counted)
    for ids, keys in zip(cases, expected, strict=True):
        got = accounting.user_ids({accounting.USER_ID_KEY: ids}, ids.size)
        assert got == keys
        assert [type(k) for k in got] == [type(k) for k in keys]
    assert calls == 0


class _CountedArray(np.ndarray):
    """An int64 array that counts the element reads and writes made through indexing."""

    touches = 0

    def __getitem__(self, key: Any) -> Any:
        _CountedArray.touches += 1
        return super().__getitem__(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _CountedArray.touches += 1
        super().__setitem__(key, value)


def test_report_ledger_step_indexes_its_per_copy_arrays_once_not_per_copy() -> None:
    """``allowed`` and ``record`` for N copies index the per-copy count arrays a bounded number of times."""
    n = 2000
    rng = np.random.default_rng(3)
    ledger = accounting.ReportLedger(n, max_reports=3)
    for name in ("_anonymous", "_max_named"):
        setattr(ledger, name, getattr(ledger, name).view(_CountedArray))
    expected: list[dict[Any, int]] = [{} for _ in range(n)]
    anonymous = np.zeros(n, dtype=np.int64)
    most = 0
    for _ in range(5):
        ids = rng.integers(0, 4, n).astype(np.float64)
        ids[rng.random(n) < 0.1] = np.nan  # reports without an id
        users = accounting.user_ids({accounting.USER_ID_KEY: ids}, n)
        assert users is not None
        _CountedArray.touches = 0
        send = ledger.allowed(users)
        ledger.record(users, send)
        most = max(most, _CountedArray.touches)
        for b in np.flatnonzero(send):  # the counts the ledger must hold, kept here one copy at a time
            if users[b] is accounting.NO_USER:
                anonymous[b] += 1
            else:
                expected[b][users[b]] = expected[b].get(users[b], 0) + 1
    assert most <= 4  # the old per-copy loop indexed them about 2·N times a step
    busiest = np.array([max(c.values(), default=0) for c in expected])
    np.testing.assert_array_equal(ledger.worst, anonymous + busiest)
    assert ledger._counts == expected


def test_dptsucb_mu_after_t_rounds_takes_no_pass_over_the_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """μ after t rounds needs H_t: read from a table, not t additions at every ``gdp_mu`` / ``privacy_spent``."""
    agent = DPTSUCB(5, 1000, seed=0)
    rounds = [1, 2, 1000, 123_457, 999_999]

    def harmonic(t: int) -> float:  # the terms added left to right
        total = 0.0
        for n in range(1, t + 1):
            total += 1.0 / n
        return total

    expected = [math.sqrt(agent.budget * harmonic(t) / agent.variance) for t in rounds]

    longest = 0

    def counted(*args: int) -> range:
        nonlocal longest
        r = builtins.range(*args)
        longest = max(longest, len(r))
        return r

    monkeypatch.setattr(gaussian_ts, "range", counted, raising=False)  # the module's own loops
    for _ in range(3):  # asked again (a monitor reading privacy_spent every round): no pass either
        assert [agent.gdp_mu_for_horizon(t) for t in rounds] == expected  # the same bits
    assert longest <= 100
    assert gaussian_ts.harmonic_number(0) == 0.0


def test_split_vector_info_splits_a_nested_dict_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A nested info dict (SAME_STEP's ``final_info``) is split once for N copies, not once per copy."""
    n = 50
    finished = np.arange(n) % 3 == 0
    inner = {"regret": np.arange(n, dtype=np.float64), "_regret": finished, "optimal_action": 7}
    info = {"reward": np.arange(n) * 0.5, "final_info": inner, "_final_info": finished}
    expected = [
        {"reward": i * 0.5, **({"final_info": {"regret": float(i), "optimal_action": 7}} if finished[i] else {})}
        for i in range(n)
    ]

    calls = 0
    plain = wrappers.split_vector_info

    def counted(info: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
        nonlocal calls
        calls += 1
        return plain(info, num_envs)

    monkeypatch.setattr(wrappers, "split_vector_info", counted)  # the recursive calls go through the module
    assert counted(info, n) == expected
    assert calls == 2  # the outer dict and final_info (split again for each finished copy, it made 1 + 17)


@pytest.mark.parametrize("env_id", ["PrivacyBudgetMovieLens-v0", "PrivacyBudgetGowalla-v0"])
def test_budget_vector_env_refills_its_copies_noise_in_one_call_per_step(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many copies leave each a buffer of one row: a refill is one compiled call, not a Python call per copy.

    At about 10^6 copies the shared noise budget leaves one row per copy, so every step refilled
    every copy through its generator's ``random`` (5 us per copy-step against 0.29).
    """
    import warnings

    import gymnasium as gym

    import bandit_envs  # noqa: F401 - registers the ids
    from bandit_envs import core
    from bandit_envs.budget import _envs

    monkeypatch.setattr(core, "NOISE_BUFFER_BYTES", 1)  # one row per copy, as 10^6 copies get
    n, kwargs = 50, {"oracle_samples": 1000, "horizon": 30}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs).unwrapped
        single = gym.make(env_id, **kwargs).unwrapped
    assert venv._noise.block_rows == 1
    calls = {"draw": 0, "refill": 0}
    draw, refill = _envs.BudgetVectorEnv._draw, _envs.fill_doubles

    def counted_draw(self: Any, copy: int, rows: int) -> Any:
        calls["draw"] += 1
        return draw(self, copy, rows)

    def counted_refill(*args: Any) -> None:
        calls["refill"] += 1
        refill(*args)

    monkeypatch.setattr(_envs.BudgetVectorEnv, "_draw", counted_draw)
    monkeypatch.setattr(_envs, "fill_doubles", counted_refill)
    venv.reset(seed=[3] * n)
    single.reset(seed=3)
    actions = np.random.default_rng(0).integers(0, single.n_actions, size=40)
    for t, a in enumerate(actions):
        if t == kwargs["horizon"]:  # the copies' autoreset step
            single.reset()
            venv.step(np.zeros(n, dtype=np.int64))
            continue
        _, reward, _, _, _ = single.step(int(a))
        _, rewards, _, _, _ = venv.step(np.full(n, a))
        assert (rewards == reward).all(), t  # every copy, seeded alike, plays its single env's stream
    assert calls == {"draw": 0, "refill": 41}  # the reset's row and one refill per step


@pytest.mark.parametrize("env_id", ["MovieLensRecommendation-v0", "GowallaRecommendation-v0"])
def test_recommendation_vector_env_refills_its_copies_streams_in_one_call_per_step(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Few rows a copy (many copies share the buffers' budget): one compiled refill a step, no Python call per copy.

    At 10^5 copies a copy's buffers held 41 rows, and each refill of a copy's contexts and noise
    loaded its stream's state into a shared generator (about 15 us): 1.95 us per copy-step
    against 0.45 at 1,000 copies.
    """
    import gymnasium as gym
    from conftest import assert_copies_replay_single_envs

    import bandit_envs  # noqa: F401 - registers the ids
    from bandit_envs.recommendation import _envs, _pcg64

    monkeypatch.setattr(_envs, "buffer_budget", lambda num_envs: 2 * num_envs * 8)  # two rows a copy
    n, horizon, steps = 40, 5, 13
    make = {"horizon": horizon, "reward_noise": 0.2}
    vector = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **make).unwrapped
    assert vector._noise.block_rows == vector._contexts.block_rows == 2
    calls = {"python": 0, "compiled": 0}
    for name in ("_draw_contexts", "_draw_noise"):
        original = getattr(_envs.RecommendationVectorEnv, name)

        def counted(self: Any, copy: int, size: int, original: Any = original) -> Any:
            calls["python"] += 1
            return original(self, copy, size)

        monkeypatch.setattr(_envs.RecommendationVectorEnv, name, counted)
    for name in ("fill_uniforms", "fill_normals"):
        original = getattr(_pcg64, name)

        def counted_fill(*args: Any, original: Any = original) -> None:
            calls["compiled"] += 1
            original(*args)

        monkeypatch.setattr(_pcg64, name, counted_fill)
    actions = np.random.default_rng(2).integers(0, 20, (steps, n))
    single = type(gym.make(env_id).unwrapped)
    assert_copies_replay_single_envs(vector, lambda: single(**make), actions, 11, {"regret": 0.0, "context": -1})
    assert calls["python"] == 0
    # contexts: the reset's and every second step's refill; noise: every second playing step
    assert 0 < calls["compiled"] <= 2 * (steps + 1)
