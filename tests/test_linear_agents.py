"""Tests of agents.linear: LinUCB and LDP-LinUCB on a synthetic linear bandit (no env needed)."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from conftest import lazy_module
from rollouts import linear_problem

import bandit_envs  # noqa: F401  (registers the envs)
from agents import LDPLinUCB, LinUCB
from agents.linear import LinUCBServer, client_choose, client_report, ldp_linucb_sigma
from agents.linear._kernels import (
    PARAM_SIGMA,
    GeneratorHolder,
    cholesky_upper,
    server_receive,
    solve_theta,
    step_report,
    step_report_drawn,
)

dp_accounting = lazy_module("dp_accounting")  # imports scipy.stats


def play_steps(agent, features, rewards, expected) -> tuple[np.ndarray, float]:
    """Step API over a block; returns (actions (T,) or (T, B), total regret per copy)."""
    actions = []
    regret = 0.0
    batched = features.ndim == 4
    for t in range(features.shape[0]):
        a = agent.act(features[t])
        if batched:
            rows = np.arange(features.shape[1])
            agent.update(a, rewards[t, rows, a], {"regret": 0.0})
            regret = regret + expected[t].max(axis=1) - expected[t, rows, a]
        else:
            agent.update(a, rewards[t, a], {"regret": 0.0})
            regret += expected[t].max() - expected[t, a]
        actions.append(a)
    return np.array(actions), regret


def random_regret(expected: np.ndarray) -> float:
    return float((expected.max(axis=-1) - expected.mean(axis=-1)).sum())


# LinUCB ------------------------------------------------------------------------------------


def test_linucb_learns_a_linear_bandit():
    x, r, e = linear_problem(2000, 10, 5, seed=1)
    agent = LinUCB(5, alpha=0.5)
    _, regret = play_steps(agent, x, r, e)
    assert regret < 0.1 * random_regret(e)
    assert agent.t == 2000


def test_linucb_solution_equals_dense_solve():
    x, r, e = linear_problem(200, 6, 4, seed=2)
    agent = LinUCB(4, alpha=1.0, reg=0.7)
    gram, moment = 0.7 * np.eye(4), np.zeros(4)
    for t in range(200):
        a = agent.act(x[t])
        agent.update(a, r[t, a])
        gram += np.outer(x[t, a], x[t, a])
        moment += r[t, a] * x[t, a]
    np.testing.assert_allclose(agent.theta, np.linalg.solve(gram, moment), rtol=1e-10, atol=1e-12)
    u = agent.server.chol[0]
    np.testing.assert_allclose(u.T @ u, gram, rtol=1e-12, atol=1e-12)
    # The index the client computes is x·θ + α sqrt(xᵀV⁻¹x), evaluated densely here.
    index = x[0] @ agent.theta + np.sqrt(np.einsum("ki,ij,kj->k", x[0], np.linalg.inv(gram), x[0]))
    assert agent.act(x[0]) == int(np.argmax(index))


def test_cholesky_and_solve_kernels_match_numpy():
    rng = np.random.default_rng(3)
    m = rng.normal(size=(7, 7))
    a = m @ m.T
    u = np.empty((7, 7))
    assert cholesky_upper(a, 0.5, u, 1e-10)
    np.testing.assert_allclose(u, np.linalg.cholesky(a + 0.5 * np.eye(7)).T, rtol=1e-12, atol=1e-12)
    rhs = rng.normal(size=7)
    theta = np.empty(7)
    solve_theta(u, rhs, theta)
    np.testing.assert_allclose(theta, np.linalg.solve(a + 0.5 * np.eye(7), rhs), rtol=1e-10)
    assert not cholesky_upper(-a, 0.0, u, 1e-10)


def test_batched_linucb_equals_single_copies():
    x, r, e = linear_problem(300, 8, 3, seed=4)
    xs = np.stack([x, x[::-1], np.roll(x, 7, axis=0)], axis=1)  # (T, 3, K, d): a different problem per copy
    rs = np.stack([r, r[::-1], np.roll(r, 7, axis=0)], axis=1)
    es = np.stack([e, e[::-1], np.roll(e, 7, axis=0)], axis=1)
    batched = LinUCB(3, alpha=0.8, n_envs=3)
    actions, _ = play_steps(batched, xs, rs, es)
    for b in range(3):
        single = LinUCB(3, alpha=0.8)
        single_actions, _ = play_steps(single, xs[:, b], rs[:, b], es[:, b])
        np.testing.assert_array_equal(actions[:, b], single_actions)
        np.testing.assert_array_equal(batched.theta[b], single.theta)


def test_linucb_fast_path_equals_step_path():
    x, r, e = linear_problem(400, 10, 5, seed=5)
    step = LinUCB(5)
    actions, regret = play_steps(step, x, r, e)
    fast = LinUCB(5)
    res = fast.run(x, r, e, checkpoints=[100, 400], record_actions=True)
    np.testing.assert_array_equal(res.actions, actions)
    np.testing.assert_array_equal(fast.theta, step.theta)
    assert res.total_regret == pytest.approx(regret, rel=1e-12)
    assert res.checkpoint_regret[-1] == res.total_regret


def _play_checked_path(agent, features, rewards, users=None) -> list[int]:
    """The step API fed values that take the checked path: a list obs, 0-d array action and reward."""
    actions = []
    for t in range(features.shape[0]):
        a = agent.act(features[t].tolist())
        info = None if users is None else {"user_id": users[t]}
        agent.update(np.array(a), np.array(rewards[t, a]), info)
        actions.append(int(a))
    return actions


@pytest.mark.parametrize(
    "make",
    [
        lambda: LinUCB(4, alpha=0.7),
        lambda: LDPLinUCB(4, 3.0, horizon=300, seed=2),
        lambda: LDPLinUCB(4, 3.0, horizon=300, l_x=0.5, l_y=0.2, bonus="quadratic", seed=2),
    ],
)
def test_single_env_step_with_plain_scalars_equals_the_checked_path(make):
    x, r, _ = linear_problem(300, 7, 4, seed=21)
    users = np.random.default_rng(3).integers(0, 5, size=300)
    plain, checked = make(), make()
    actions = []
    for t in range(300):
        a = plain.act(x[t])  # C-contiguous float64 (K, d): used as it is
        assert isinstance(a, int)
        plain.update(a, r[t, a], {"user_id": users[t]})  # int action, np.float64 reward: one compiled call
        actions.append(a)
    assert _play_checked_path(checked, x, r, users) == actions
    np.testing.assert_array_equal(plain.theta, checked.theta)
    np.testing.assert_array_equal(plain.server.chol, checked.server.chol)
    assert plain.t == checked.t == 300
    if isinstance(plain, LDPLinUCB):
        assert plain.n_clipped_features == checked.n_clipped_features
        assert plain.n_clipped_rewards == checked.n_clipped_rewards
        assert plain.max_user_reports == checked.max_user_reports == np.bincount(users).max()
        capped = make()  # a cap nobody reaches: the per-round ledger path
        capped.max_reports_per_user = capped._reports.max_reports = 10**9
        assert _play_checked_path(capped, x, r, users) == actions
        assert capped.max_user_reports == plain.max_user_reports and capped.n_withheld == plain.n_withheld == 0
        assert capped.privacy_per_user().tight == plain.privacy_per_user().tight


def test_single_env_steps_with_plain_values_take_the_one_call_path(monkeypatch):
    x, r, _ = linear_problem(10, 5, 3, seed=24)
    agent = LDPLinUCB(3, 2.0, horizon=10, seed=1)
    kernels, calls = agent._kernels, []
    for name in ("choose_one", "report_drawn", "choose", "update"):
        inner = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *args, n=name, f=inner: calls.append(n) or f(*args))
    for t in range(10):
        a = agent.act(x[t])
        agent.update(a, r[t, a], {"user_id": 3})
    assert calls == ["choose_one", "report_drawn"] * 10


@pytest.mark.parametrize("sigma", [0.0, 0.7])
def test_report_kernel_drawing_its_own_normals_matches_the_numpy_draws(sigma):
    # step_report_drawn draws the m normals from the held generator inside the compiled call; it
    # must equal step_report given rng.standard_normal(m) and leave the generator where numpy does.
    x, r, _ = linear_problem(1, 6, 4, seed=31)
    agent = LDPLinUCB(4, 2.0, horizon=10, seed=3)
    params = agent._params.copy()
    params[PARAM_SIGMA] = sigma
    m = 4 * 5 // 2 + 4 if sigma > 0 else 0
    drawn_rng, numpy_rng = np.random.default_rng(8), np.random.default_rng(8)
    drawn_state, numpy_state = agent.server.buffer.copy(), agent.server.buffer.copy()
    code = step_report_drawn(GeneratorHolder(drawn_rng), x[0], 2, float(r[0, 2]), 1, params, drawn_state)
    noise = numpy_rng.standard_normal(m) if m else np.empty(0)
    assert code == step_report(x[0], 2, float(r[0, 2]), noise, 1, params, numpy_state)
    np.testing.assert_array_equal(drawn_state, numpy_state)
    assert drawn_rng.bit_generator.state == numpy_rng.bit_generator.state
    assert step_report_drawn(GeneratorHolder(drawn_rng), x[0], 2, 0.5, 2, params, drawn_state[:-1]) == -1
    assert drawn_rng.bit_generator.state == numpy_rng.bit_generator.state  # a buffer that does not fit: no draw


def test_step_kernels_are_compiled_entry_points_for_both_ranks():
    # Each step kernel is called through the entry point compiled for its declared argument types;
    # a signature that does not fit the kernel would leave the dispatcher (typing every call).
    from agents.linear.base import _StepKernels

    for rank in (2, 3):
        kernels = _StepKernels.load(rank)
        names = ("choose", "update", "choose_one", "report_drawn") if rank == 2 else ("choose", "update")
        for name in names:
            assert not hasattr(getattr(kernels, name), "py_func"), (rank, name)


def test_linear_agents_copied_mid_run_play_on_alike():
    x, r, _ = linear_problem(60, 5, 3, seed=22)
    agent = LDPLinUCB(3, 2.0, horizon=60, seed=1)
    for t in range(30):
        agent.update(agent.act(x[t]), r[t, 0])
    copies = [agent, pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)]
    played: list[list[int]] = [[], [], []]
    for t in range(30, 60):
        for ag, actions in zip(copies, played, strict=True):
            actions.append(ag.act(x[t]))
            ag.update(actions[-1], r[t, actions[-1]])
    assert played[0] == played[1] == played[2]
    np.testing.assert_array_equal(copies[0].theta, copies[1].theta)


def test_server_arrays_are_views_of_one_buffer_also_after_pickling():
    server = LinUCBServer(3, 2, 0.5)
    for srv in (server, pickle.loads(pickle.dumps(server)), copy.deepcopy(server)):
        for name in ("gram", "moment", "chol", "theta"):
            view = getattr(srv, name)
            assert np.shares_memory(view, srv.buffer) and view.flags.c_contiguous, name
        srv.theta[1, 2] = 7.0
        assert srv.buffer[-1] == 7.0  # θ is last, copy 1's last entry
        np.testing.assert_array_equal(srv.chol[0], np.sqrt(0.5) * np.eye(3))
        with pytest.raises(AttributeError):
            srv.gram = np.zeros((2, 3, 3))  # type: ignore[misc]


def test_a_server_of_another_shape_is_refused_in_one_sentence():
    x, r, _ = linear_problem(5, 4, 3, seed=24)
    for agent, server in ((LinUCB(3), LinUCBServer(4, 1, 1.0)), (LinUCB(3, n_envs=2), LinUCBServer(3, 1, 1.0))):
        agent.server = server
        with pytest.raises(ValueError, match="server must be a LinUCBServer of"):
            agent.act(x[0] if agent.n_envs is None else np.stack([x[0], x[0]]))
    agent = LinUCB(3)
    agent.act(x[0])
    agent.server.buffer = np.zeros(5)
    with pytest.raises(ValueError, match="server.buffer must hold"):
        agent.update(0, 0.5)


def test_a_replaced_server_gets_the_next_reports():
    x, r, _ = linear_problem(20, 5, 3, seed=23)
    agent = LinUCB(3)
    for t in range(10):
        agent.update(agent.act(x[t]), r[t, 0])
    old, fresh = agent.server, LinUCBServer(3, 1, 1.0)
    before = old.gram.copy()
    agent.server = fresh
    a = agent.act(x[10])
    assert a == LinUCB(3).act(x[10])  # chosen with the fresh server's θ = 0
    agent.update(a, r[10, a])
    assert fresh.t == 1 and old.t == 10
    np.testing.assert_array_equal(old.gram, before)
    assert fresh.gram.any()


# LDP-LinUCB constants -----------------------------------------------------------------------


def test_sigma_reproduces_the_authors_code():
    # Code: 4 sqrt(ln(1.25/δ)) / ε; at ε = 1, δ = 0.1: 4 sqrt(ln 12.5) = 6.35702.
    assert ldp_linucb_sigma(1.0, 0.1) == pytest.approx(4 * math.sqrt(math.log(12.5)), rel=1e-14)
    assert ldp_linucb_sigma(1.0, 0.1) == pytest.approx(6.357016, rel=1e-6)
    # Δ₂ = 4 (l_x = 1, l_y = √3) gives the README's √2-larger value.
    assert ldp_linucb_sigma(1.0, 0.1, 1.0, math.sqrt(3.0)) == pytest.approx(
        4 * math.sqrt(2 * math.log(12.5)), rel=1e-12
    )


def test_schedule_against_hand_computed_values():
    # d = 4, T = 1000, α = δ = 0.1, ε = 0.5: σ = 8 sqrt(ln 12.5) = 12.714033,
    # k = 4·2 + 2 ln(2000/0.1) = 27.806975; γ_t = σ sqrt(t) k; c_t = 2γ_t;
    # β_t = 2σ sqrt(4 ln 1000) + (sqrt(3γ_t) + σ sqrt(4t/γ_t)) · 4 ln 1000.
    # The paper's σ with the float sampler; the lattice sampler's σ is calibrated to the widened
    # sensitivity Δ₂ + sqrt(D) grid (D = 14 report entries), within 2**-20 relative of it.
    lattice = LDPLinUCB(4, 0.5, 0.1, 0.1, 1000)
    wide = lattice.sensitivity + math.sqrt(14) * lattice.grid
    assert lattice.sigma == pytest.approx(12.714033 * wide / lattice.sensitivity, rel=1e-7)
    assert 0.0 < lattice.grid <= 12.714033 / math.sqrt(14) * 2.0**-20
    agent = LDPLinUCB(4, 0.5, 0.1, 0.1, 1000, sampler="float")
    assert agent.sigma == pytest.approx(12.714033, rel=1e-7)
    for t, gamma, shift, beta in [(1, 353.53880, 707.07759, 1070.8929), (4, 707.07759, 1414.1552, 1459.1061)]:
        g, c, b = agent.schedule(t)
        assert (g, c, b) == pytest.approx((gamma, shift, beta), rel=1e-7)
    scaled = LDPLinUCB(4, 0.5, 0.1, 0.1, 1000, width_scale=0.5, shift_scale=0.25, sampler="float")
    assert scaled.schedule(4) == pytest.approx((707.07759, 0.25 * 1414.1552, 0.5 * 1459.1061), rel=1e-7)


@pytest.mark.parametrize(
    ("epsilon", "sigma", "shift", "beta"),
    [(1.0, 6.36, 1.9e5, 1.3e5), (8e5, 8e-6, 0.24, 145.0)],
)
def test_magnitude_table_of_algorithms_md(epsilon, sigma, shift, beta):
    agent = LDPLinUCB(20, epsilon, delta=0.1, alpha=0.1, horizon=100_000)
    _, c_t, b_t = agent.schedule(100_000)
    assert agent.sigma == pytest.approx(sigma, rel=0.01)
    assert c_t == pytest.approx(shift, rel=0.02)
    assert b_t == pytest.approx(beta, rel=0.01)


def test_privacy_per_report_says_what_holds():
    assert LDPLinUCB(5, 0.5).privacy_per_report == (0.5, 0.1)
    assert LDPLinUCB(5, 3.0, 0.01, sigma_method="analytic").privacy_per_report == (3.0, 0.01)
    eps, delta = LDPLinUCB(5, 8e5).privacy_per_report  # the authors' setting: classic σ ≈ 8e-6 ≪ Δ₂
    assert eps == 8e5 and delta > 0.99
    # analytic σ at ε = 8e5 is so small that numpy's bounded normal draw gives the reports away
    eps, delta = LDPLinUCB(5, 8e5, sigma_method="analytic").privacy_per_report
    assert eps == 8e5 and delta > 0.99
    # the mechanism carries the ideal delta and the sampler's tail apart, so composition counts the tail once
    for agent in (LDPLinUCB(5, 8e5), LDPLinUCB(5, 3.0, 0.01, sigma_method="analytic")):
        mech = agent.report_mechanism
        assert min(1.0, mech.delta + mech.tail_delta) == pytest.approx(agent.privacy_per_report[1], rel=1e-12)
    assert LDPLinUCB(5, 8e5).report_mechanism.tail_delta > 0.5
    assert "one user" in LDPLinUCB.privacy_unit and "user_id" in LDPLinUCB.privacy_unit


# Per-user accounting and the cap -----------------------------------------------------------


def movielens_rounds(horizon: int, seed: int):
    """(env, contexts, features per round, rewards per round) of MovieLensRecommendation-v0."""
    env = gym.make("MovieLensRecommendation-v0", horizon=horizon).unwrapped
    contexts = env.round_contexts(horizon, seed)
    return env, contexts, env.features_of(contexts), env.rewards[contexts]


def test_privacy_spent_composes_over_each_users_reports_on_movielens():
    horizon, seed = 1500, 3
    env = gym.make("MovieLensRecommendation-v0", horizon=horizon)
    agent = LDPLinUCB(20, 1.0, delta=1e-5, horizon=horizon, sigma_method="analytic", seed=0)
    assert agent.privacy_spent == (0.0, 0.0)
    obs, _ = env.reset(seed=seed)
    users = []
    for _ in range(horizon):
        a = agent.act(obs)
        obs, r, _, _, info = env.step(a)
        agent.update(a, r, info)
        users.append(info["user_id"])
    k = int(np.unique(users, return_counts=True)[1].max())
    assert 1 < k < horizon and agent.max_user_reports == k
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(agent.sigma / agent.sensitivity), k)
    )
    per_user = agent.privacy_per_user()
    assert per_user.tight[0] == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-2) and per_user.tight[1] == 1e-5
    assert per_user.tight[0] > 1.0  # more than one report's epsilon
    assert per_user.basic == pytest.approx((k * 1.0, k * 1e-5))
    assert agent.privacy_spent == per_user.tight
    # The fast path counts the same users when given them.
    _, contexts, feats, rewards = movielens_rounds(horizon, seed)
    fast = LDPLinUCB(20, 1.0, delta=1e-5, horizon=horizon, sigma_method="analytic", seed=0)
    fast.run(feats, rewards, users=contexts)
    assert fast.max_user_reports == k and fast.privacy_spent == agent.privacy_spent
    anonymous = LDPLinUCB(20, 1.0, delta=1e-5, horizon=horizon, sigma_method="analytic", seed=0)
    anonymous.run(feats[:50], rewards[:50])
    assert anonymous.max_user_reports == 50  # no user ids: the whole stream is one user


def test_cap_withholds_reports_from_the_server_after_the_limit():
    x, r, e = linear_problem(60, 4, 3, seed=20)
    users = np.random.default_rng(21).integers(0, 5, size=60)
    agent = LDPLinUCB(3, 1e12, horizon=60, max_reports_per_user=4, seed=0)  # σ ~ 1e-11: reports ~exact
    gram, sent = np.zeros((3, 3)), {}
    for t in range(60):
        a = agent.act(x[t])
        before = agent.t
        agent.update(a, r[t, a], {"user_id": int(users[t])})
        u = int(users[t])
        if sent.get(u, 0) < 4:
            sent[u] = sent.get(u, 0) + 1
            gram += np.outer(x[t, a], x[t, a])
            assert agent.t == before + 1
        else:
            assert agent.t == before  # nothing reached the server
    np.testing.assert_allclose(agent.server.gram[0], gram, atol=1e-8)
    assert agent.n_withheld == 60 - sum(sent.values()) > 0
    assert agent.max_user_reports == 4
    assert agent.privacy_per_user().reports == 4


def test_cap_in_batch_mode_adds_nothing_for_the_capped_copy():
    x, r, e = linear_problem(3, 4, 3, seed=22)
    agent = LDPLinUCB(3, 1e12, horizon=10, max_reports_per_user=1, n_envs=2, seed=0)
    xs = np.stack([x, x], axis=1)
    a = agent.act(xs[0])
    agent.update(a, r[0, a], {"user_id": np.array([7, 7])})
    gram = agent.server.gram.copy()
    a = agent.act(xs[1])
    agent.update(a, r[1, a], {"user_id": np.array([7, 8])})  # copy 0's user 7 is capped
    np.testing.assert_array_equal(agent.server.gram[0], gram[0])
    assert not np.allclose(agent.server.gram[1], gram[1])
    assert agent.t == 2
    np.testing.assert_array_equal(agent.n_withheld, [1, 0])
    a = agent.act(xs[2])
    agent.update(a, r[2, a], {"user_id": np.array([7, 8])})  # both capped: the round is skipped
    assert agent.t == 2
    np.testing.assert_array_equal(agent.n_withheld, [2, 1])
    np.testing.assert_array_equal(agent.max_user_reports, [1, 1])


def test_fast_path_refuses_a_block_that_would_exceed_the_cap():
    x, r, e = linear_problem(40, 4, 3, seed=23)
    agent = LDPLinUCB(3, 1.0, horizon=40, max_reports_per_user=10, seed=0)
    users = np.repeat(np.arange(4), 10)
    agent.run(x, r, users=users)  # exactly 10 each: allowed
    assert agent.max_user_reports == 10
    with pytest.raises(ValueError, match="^users"):
        agent.run(x[:1], r[:1], users=users[:1])
    with pytest.raises(ValueError, match="^users"):
        LDPLinUCB(3, 1.0, horizon=40, max_reports_per_user=10, seed=0).run(x[:11], r[:11])
    # The features and rewards are checked first (as every linear agent's run checks them), then the cap.
    bad = x[:11].copy()
    bad[3, 0, 0] = np.nan
    with pytest.raises(ValueError, match="^features must contain only finite numbers"):
        LDPLinUCB(3, 1.0, horizon=40, max_reports_per_user=10, seed=0).run(bad, r[:11])
    with pytest.raises(ValueError, match="^rewards must have shape"):
        LDPLinUCB(3, 1.0, horizon=40, max_reports_per_user=10, seed=0).run(x[:11], r[:11, :2])


def test_user_budget_sets_the_cap():
    agent = LDPLinUCB(3, 0.5, delta=1e-6, sigma_method="analytic", user_budget=(3.0, 1e-5))
    cap = agent.max_reports_per_user
    assert cap > 6  # tight composition fits more than the basic 3 / 0.5
    assert agent.report_mechanism.noise_multiplier == pytest.approx(agent.sigma / agent.report_sensitivity)
    assert agent.report_sensitivity == agent.sensitivity + math.sqrt(9) * agent.grid
    from bandit_envs.privacy.accounting import tight_composition

    assert tight_composition(agent.report_mechanism, cap, 1e-5)[0] <= 3.0
    assert tight_composition(agent.report_mechanism, cap + 1, 1e-5)[0] > 3.0


def test_noise_stream_is_not_the_envs_stream_for_the_same_seed():
    env = gym.make("MovieLensRecommendation-v0", horizon=10)
    env.reset(seed=5)
    agent = LDPLinUCB(20, 1.0, seed=5)
    assert not np.array_equal(agent.rng.random(8), env.unwrapped.np_random.random(8))
    a, b = LDPLinUCB(20, 1.0, seed=5).rng.standard_normal(20_000), np.random.default_rng(5).standard_normal(20_000)
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(20_000)


# LDP-LinUCB mechanism and protocol ---------------------------------------------------------


def test_report_noise_is_symmetric_gaussian_with_variance_sigma_squared():
    rng = np.random.default_rng(6)
    d, n, sigma = 4, 4000, 2.0
    grams, vecs = np.empty((n, d, d)), np.empty((n, d))
    for k in range(n):
        grams[k], vecs[k], _ = client_report(np.zeros(d), 0.0, sigma, rng)
    np.testing.assert_array_equal(grams, grams.transpose(0, 2, 1))
    iu, ju = np.triu_indices(d)
    upper = grams[:, iu, ju]  # 10 independent entries, diagonal included
    assert np.abs(upper.mean(axis=0)).max() < 5 * sigma / math.sqrt(n)
    np.testing.assert_allclose(upper.var(axis=0), sigma**2, rtol=0.1)
    assert abs(upper.var() / sigma**2 - 1) < 0.03  # pooled over 40 000 draws
    np.testing.assert_allclose(vecs.var(axis=0), sigma**2, rtol=0.1)
    corr = np.corrcoef(np.column_stack([upper, vecs]).T)
    assert np.abs(corr - np.eye(corr.shape[0])).max() < 0.08


def test_report_without_noise_is_the_clipped_pair():
    gram, vec, flags = client_report([3.0, 4.0], 2.5, 0.0, np.random.default_rng(0), l_x=1.0, l_y=1.0)
    np.testing.assert_allclose(gram, np.outer([0.6, 0.8], [0.6, 0.8]), rtol=1e-15)
    np.testing.assert_allclose(vec, [0.6, 0.8], rtol=1e-15)
    assert flags == 3


def test_report_is_clipped_by_default_and_refuses_infinite_bounds():
    rng = np.random.default_rng(0)
    for y in (50.0, -50.0):
        gram, vec, flags = client_report([3.0, 4.0], y, 0.0, rng)  # defaults l_x = l_y = 1
        np.testing.assert_allclose(gram, np.outer([0.6, 0.8], [0.6, 0.8]), rtol=1e-15)
        np.testing.assert_allclose(vec, np.sign(y) * np.array([0.6, 0.8]), rtol=1e-15)
        assert flags == 3
    for bound in ("l_x", "l_y"):
        with pytest.raises(ValueError, match=bound):
            client_report([3.0, 4.0], 2.5, 0.5, rng, **{bound: math.inf})


def test_client_choose_quadratic_vs_sqrt_bonus():
    # Ṽ = UᵀU = diag(1, 0.04); xᵀṼ⁻¹x = 1 for arm 0, 0.09/0.04 = 2.25 for arm 1; means 0.6 and 0.
    chol = np.diag([1.0, 0.2])
    x = np.array([[1.0, 0.0], [0.0, 0.3]])
    theta = np.array([0.6, 0.0])
    assert client_choose(x, theta, chol, 1.0) == 0  # 0.6 + 1 = 1.6 > sqrt(2.25) = 1.5
    assert client_choose(x, theta, chol, 1.0, bonus="quadratic") == 1  # 1.6 < 2.25
    # Clipping happens before scoring: (2, 0)·θ = 1.0 > (0, 1.5)·θ = 0.9, but clipped 0.5 < 0.6.
    big, theta2 = np.array([[2.0, 0.0], [0.0, 1.5]]), np.array([0.5, 0.6])
    assert client_choose(big, theta2, np.eye(2), 0.0) == 0
    assert client_choose(big, theta2, np.eye(2), 0.0, l_x=1.0) == 1


def test_huge_epsilon_behaves_like_linucb():
    x, r, e = linear_problem(3000, 10, 5, seed=7)
    ldp = LDPLinUCB(5, 8e5, horizon=3000, seed=0, bonus="quadratic")
    res = ldp.run(x, r, e)
    lin = LinUCB(5, alpha=0.5)
    lin_res = lin.run(x, r, e)
    assert res.total_regret < 0.1 * random_regret(e)
    assert res.total_regret < 3 * lin_res.total_regret + 20
    assert ldp.n_eig_floor == 0


def test_small_epsilon_explores_but_does_not_crash():
    x, r, e = linear_problem(500, 10, 5, seed=8)
    res = LDPLinUCB(5, 1.0, horizon=500, seed=1).run(x, r, e)
    assert 0.4 * random_regret(e) < res.total_regret < 1.6 * random_regret(e)


def test_indefinite_shifted_matrix_uses_the_eigenvalue_floor():
    x, r, e = linear_problem(300, 6, 5, seed=9)
    agent = LDPLinUCB(5, 1.0, horizon=300, shift_scale=0.0, seed=2)
    play_steps(agent, x, r, e)
    assert agent.n_eig_floor > 0
    assert np.isfinite(agent.theta).all()
    # Direct: V = diag(-1, 2) shifted by c = 0.5 has eigenvalues -0.5, 2.5 -> floor c/2 = 0.25.
    server = LinUCBServer(2, 1, 0.1)
    gram = np.diag([-1.0, 2.0])
    floored = server_receive(server.gram[0], server.moment[0], gram, np.ones(2), 0.5, server.chol[0], server.theta[0])
    assert floored
    u = server.chol[0]
    np.testing.assert_allclose(u.T @ u, np.diag([0.25, 2.5]), atol=1e-12)
    np.testing.assert_allclose(server.theta[0], [4.0, 0.4], rtol=1e-12)
    np.testing.assert_array_equal(server.gram[0], gram)  # V itself is unchanged


def test_clipping_is_counted_and_applied():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(50, 4, 3))
    x /= np.linalg.norm(x, axis=2, keepdims=True)
    x[:, 0] *= 2.0  # arm 0 always has norm 2
    r = np.full((50, 4), 0.5)
    r[:, 0] = 3.0
    agent = LDPLinUCB(3, 1e12, horizon=50, l_x=1.0, l_y=1.0, seed=0)  # σ ~ 1e-11: the report is ~exact
    gram, moment, n0 = np.zeros((3, 3)), np.zeros(3), 0
    for t in range(50):
        a = agent.act(x[t])
        agent.update(a, r[t, a])
        xc = x[t, a] / max(1.0, np.linalg.norm(x[t, a]))
        gram += np.outer(xc, xc)
        moment += min(r[t, a], 1.0) * xc
        n0 += a == 0
    assert n0 > 0
    assert agent.n_clipped_features == n0
    assert agent.n_clipped_rewards == n0
    np.testing.assert_allclose(agent.server.gram[0], gram, atol=1e-8)
    np.testing.assert_allclose(agent.server.moment[0], moment, atol=1e-8)


@pytest.mark.parametrize("epsilon", [8e5, 1.0])
def test_ldp_step_path_equals_fast_path(epsilon):
    x, r, e = linear_problem(400, 20, 6, seed=11)
    step = LDPLinUCB(6, epsilon, horizon=400, seed=3)
    actions, regret = play_steps(step, x, r, e)
    fast = LDPLinUCB(6, epsilon, horizon=400, seed=3)
    first = fast.run(x[:150], r[:150], e[:150], record_actions=True)
    second = fast.run(x[150:], r[150:], e[150:], checkpoints=[250], record_actions=True)
    np.testing.assert_array_equal(np.concatenate([first.actions, second.actions]), actions)
    np.testing.assert_array_equal(fast.theta, step.theta)
    np.testing.assert_array_equal(fast.server.chol, step.server.chol)
    assert first.total_regret + second.total_regret == pytest.approx(regret, rel=1e-12)
    assert fast.t == step.t == 400


def test_batched_ldp_step_path_equals_fast_path():
    x, r, e = linear_problem(200, 8, 4, seed=12)
    xs = np.stack([x, x[::-1]], axis=1)
    rs = np.stack([r, r[::-1]], axis=1)
    es = np.stack([e, e[::-1]], axis=1)
    step = LDPLinUCB(4, 8e5, horizon=200, n_envs=2, seed=4)
    actions, regret = play_steps(step, xs, rs, es)
    fast = LDPLinUCB(4, 8e5, horizon=200, n_envs=2, seed=4)
    res = fast.run(xs, rs, es, checkpoints=np.array([50, 200]), record_actions=True)
    np.testing.assert_array_equal(res.actions, actions)
    np.testing.assert_allclose(res.total_regret, regret, rtol=1e-12)
    np.testing.assert_array_equal(res.checkpoint_regret[1], res.total_regret)
    serial = LDPLinUCB(4, 8e5, horizon=200, n_envs=2, seed=4).run(xs, rs, es, record_actions=True, parallel=False)
    np.testing.assert_array_equal(serial.actions, actions)
    shared = LDPLinUCB(4, 8e5, horizon=200, n_envs=2, seed=4).run(x, r, e)  # one table shared by both copies
    assert shared.total_regret.shape == (2,)


def test_reset_continues_the_noise_and_a_seed_replays_the_run():
    x, r, e = linear_problem(100, 5, 3, seed=13)
    agent = LDPLinUCB(3, 2.0, horizon=100, seed=5)
    first = agent.run(x, r, record_actions=True).actions
    agent.reset()  # fresh noise: the same problem gives another run
    assert (agent.run(x, r, record_actions=True).actions != first).any()
    agent.reset(seed=5)
    np.testing.assert_array_equal(agent.run(x, r, record_actions=True).actions, first)
    agent.reset(seed=6)
    assert agent.t == 0 and agent.n_clipped_features == 0


# Errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0.0}, "delta"),
        ({"alpha": 0.0}, "alpha"),
        ({"horizon": 1}, "horizon"),
        ({"n_features": 0}, "n_features"),
        ({"sigma_method": "exact"}, "sigma_method"),
        ({"bonus": "linear"}, "bonus"),
        ({"l_x": 0.0}, "l_x"),
        ({"width_scale": -1.0}, "width_scale"),
        ({"n_envs": 0}, "n_envs"),
        ({"max_reports_per_user": 0}, "max_reports_per_user"),
        ({"max_reports_per_user": 3, "user_budget": (1.0, 0.1)}, "max_reports_per_user"),
        ({"user_budget": (0.01, 0.1)}, "user_budget"),
        ({"user_budget": (5.0, 0.0)}, "user_budget"),
    ],
)
def test_ldp_linucb_rejects_bad_arguments(kwargs, name):
    args = {"n_features": 3, "epsilon": 1.0} | kwargs
    with pytest.raises(ValueError, match=name):
        LDPLinUCB(**args)


def test_linucb_rejects_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match="reg"):
        LinUCB(3, reg=0.0)
    with pytest.raises(TypeError, match="n_features"):
        LinUCB(2.5)
    agent = LinUCB(3)
    with pytest.raises(RuntimeError, match="act"):
        agent.update(0, 1.0)
    with pytest.raises(ValueError, match="obs"):
        agent.act(np.ones((4, 2)))
    with pytest.raises(ValueError, match="obs"):
        agent.act(np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="obs must have shape"):
        agent.act(np.ones((0, 3)))
    with pytest.raises(ValueError, match="obs must contain only finite numbers"):
        agent.act(np.array([[1.0, 2.0, np.inf]]))
    agent.act(np.ones((4, 3)))
    with pytest.raises(ValueError, match="action"):
        agent.update(4, 1.0)
    with pytest.raises(ValueError, match="reward"):
        agent.update(0, math.inf)
    with pytest.raises(ValueError, match="features"):
        agent.run(np.ones((5, 4, 2)), np.ones((5, 4)))
    with pytest.raises(ValueError, match="rewards"):
        agent.run(np.ones((5, 4, 3)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="checkpoints"):
        agent.run(np.ones((5, 4, 3)), np.ones((5, 4)), checkpoints=[3, 2])


@pytest.mark.parametrize("n_envs", [None, 3])
def test_complex_features_are_refused_not_cast(n_envs: int | None) -> None:
    agent = LinUCB(2, n_envs=n_envs)
    features = np.full((3, 2) if n_envs is None else (n_envs, 3, 2), 0.5) + 0j
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would be a silent cast here
        with pytest.raises(TypeError, match="must be a float array of shape .* got complex numbers"):
            agent.act(features)


@pytest.mark.parametrize("n_envs", [None, 3])
def test_linucb_refuses_features_and_rewards_that_would_overflow_its_sums_and_keeps_working(n_envs):
    """x xᵀ or y x beyond the floats made V or u infinite: every later update then failed in numba's eigh."""
    x, r, e = linear_problem(40, 4, 3, seed=41)
    if n_envs is not None:
        x, r, e = (np.repeat(v[:, None], n_envs, axis=1) for v in (x, r, e))
    agent, twin = LinUCB(3, n_envs=n_envs), LinUCB(3, n_envs=n_envs)
    play_steps(agent, x[:10], r[:10], e[:10])
    play_steps(twin, x[:10], r[:10], e[:10])
    bounds = r"must contain only finite numbers in \[-1e\+100, 1e\+100\] \(LinUCB adds x xᵀ unclipped"
    for scale in (1e101, 1e160, 1e300):
        with pytest.raises(ValueError, match=rf"^obs {bounds}.*, got [-\d.e+]+ at (copy 0, )?arm 0, feature \d\.$"):
            agent.act(x[10] * scale)
        with pytest.raises(ValueError, match=rf"^features {bounds}.*, got [-\d.e+]+ at round 0, "):
            agent.run(x[10:20] * scale, r[10:20])
    a = agent.act(x[10])
    twin.act(x[10])
    huge = 1e300 if n_envs is None else np.array([0.5, 1e300, 0.5])
    with pytest.raises(ValueError, match=r"^reward must be a finite number in \[-1e\+100, 1e\+100\] .*, got 1e\+300"):
        agent.update(a, huge)
    bad = r[10:20].copy()
    bad[3] = -1e200
    with pytest.raises(ValueError, match=r"^rewards must be finite numbers in \[-1e\+100, 1e\+100\] .* at round 3, "):
        agent.run(x[10:20], bad)
    np.testing.assert_array_equal(agent.server.buffer, twin.server.buffer)
    reward = r[10, a] if n_envs is None else r[10, np.arange(n_envs), a]
    agent.update(a, reward)
    twin.update(a, reward)
    np.testing.assert_array_equal(
        play_steps(agent, x[11:30], r[11:30], e[11:30])[0], play_steps(twin, x[11:30], r[11:30], e[11:30])[0]
    )
    ours, theirs = (z.run(x[30:], r[30:], record_actions=True).actions for z in (agent, twin))
    np.testing.assert_array_equal(ours, theirs)
    # The bounds themselves are taken, by the step API and by the fast path, and the sums stay finite.
    edge = np.full(x[0].shape, 1e100)
    agent.update(agent.act(edge), 1e100 if n_envs is None else np.full(n_envs, -1e100))
    assert np.isfinite(agent.server.buffer).all()
    fast = LinUCB(3, n_envs=n_envs)
    fast.run(np.full(x[:5].shape, -1e100), np.full(r[:5].shape, 1e100))
    assert np.isfinite(fast.server.buffer).all()


@pytest.mark.parametrize("env_id", ["MovieLensRecommendation-v0", "GowallaRecommendation-v0"])
@pytest.mark.parametrize("vector", [False, True])
def test_the_recommendation_envs_return_a_new_observation_every_step(env_id: str, vector: bool) -> None:
    """The linear agents keep the last observation for ``update`` without copying it (``act``'s docstring):
    the envs of this package must not write the next round's features into the array they returned."""
    env = (
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", horizon=5)
        if vector
        else gym.make(env_id, horizon=5)
    )
    seen = [env.reset(seed=0)[0]]
    kept = [seen[0].copy()]
    for _ in range(4):
        seen.append(env.step(env.action_space.sample())[0])
        kept.append(seen[-1].copy())
    for obs, copy_ in zip(seen, kept, strict=True):
        np.testing.assert_array_equal(obs, copy_)
    env.close()


def test_a_converted_observation_is_kept_as_a_copy() -> None:
    """A float32 observation is converted for ``act``: writing into it afterwards changes nothing reported."""
    x32 = (np.eye(4, 3) * 0.5).astype(np.float32)
    untouched = x32.copy()
    written, clean = LinUCB(3, 0.5), LinUCB(3, 0.5)
    arm = written.act(x32)
    x32[:] = 0.25
    written.update(arm, 1.0)
    clean.update(clean.act(untouched), 1.0)
    assert written.theta.tolist() == clean.theta.tolist() != [0.0, 0.0, 0.0]
