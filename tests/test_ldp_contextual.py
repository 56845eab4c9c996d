"""Tests of LDP-OLS and Shuffle-LinUCB (agents.linear), the L2-ball mechanism and amplification by shuffling.

Also what every local-DP agent's server object holds after one report: no raw client data.

Statistical tests use fixed seeds and state their error rate under the claim they test; a
failure means the code does not do what its docstring says.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from conftest import lazy_module
from rollouts import linear_problem

import bandit_envs  # noqa: F401  (registers the envs)
from agents import LDPOLS, UCB, LDPLinUCB, LDPThompsonSampling, LDPWrapper, LinUCB, ShuffleLinUCB
from agents.linear._stats_kernels import add_batch_noise, choose_greedy, refit
from agents.linear.ldp_ols import BatchClients
from agents.linear.shuffle_linucb import Shuffler
from bandit_envs.privacy import (
    gaussian_delta,
    gaussian_sigma_analytic,
    group_privacy,
    l2_ball_keep_probability,
    l2_ball_mechanism,
    l2_ball_scale,
    local_epsilon_for_shuffle,
    shuffle_delta,
    shuffle_epsilon,
)
from bandit_envs.privacy.accounting import ReportMechanism, tight_composition

stats = lazy_module("scipy.stats")


AGENTS = {
    "LDPOLS-gaussian": lambda **kw: LDPOLS(4, 2.0, **kw),
    "LDPOLS-l2_ball": lambda **kw: LDPOLS(4, 2.0, mechanism="l2_ball", **kw),
    "ShuffleLinUCB": lambda **kw: ShuffleLinUCB(4, 1.0, **kw),
}


# The L2-ball mechanism -------------------------------------------------------------------------


def test_l2_ball_scale_known_answers() -> None:
    # D = 1: B = r coth(eps / 2); D = 2: B = r coth(eps / 2) * pi / 2 (Gamma(3/2) / Gamma(2) = sqrt(pi) / 2).
    assert l2_ball_scale(1.0, 1, 2.0) == pytest.approx(2.0 / math.tanh(0.5), rel=1e-12)
    assert l2_ball_scale(0.5, 2) == pytest.approx(math.pi / 2 / math.tanh(0.25), rel=1e-12)
    # Large D: B ~ r coth(eps / 2) sqrt(pi D / 2).
    assert l2_ball_scale(3.0, 10_000) == pytest.approx(math.sqrt(math.pi * 10_000 / 2) / math.tanh(1.5), rel=1e-3)
    assert l2_ball_keep_probability(math.log(3.0)) == pytest.approx(0.75)


def test_l2_ball_mechanism_is_unbiased_with_the_stated_norm() -> None:
    rng = np.random.default_rng(11)
    v = np.array([0.3, -0.4, 0.1, 0.0, 0.5])  # norm 0.7 < 1
    n = 40_000
    z = l2_ball_mechanism(np.tile(v, (n, 1)), 1.0, rng)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), l2_ball_scale(1.0, 5), rtol=1e-12)
    # Each coordinate's mean is within 4.5 standard errors of v (all 5 together: false alarm < 1e-4).
    se = z.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(z.mean(axis=0) - v) < 4.5 * se)
    # A row outside the ball is projected first: the mean is the projected row.
    far = l2_ball_mechanism(np.tile([3.0, 4.0], (n, 1)), 2.0, np.random.default_rng(1))
    assert np.all(np.abs(far.mean(axis=0) - [0.6, 0.8]) < 4.5 * far.std(axis=0) / math.sqrt(n))


def test_l2_ball_mechanism_likelihood_ratio_is_e_epsilon() -> None:
    # Inputs +e and -e (the worst pair): the output lies on e's side w.p. pi and 1 - pi, ratio e^eps.
    eps, n = 1.2, 20_000
    e = np.eye(6)[2]
    plus = l2_ball_mechanism(np.tile(e, (n, 1)), eps, np.random.default_rng(3))[:, 2] > 0
    minus = l2_ball_mechanism(np.tile(-e, (n, 1)), eps, np.random.default_rng(4))[:, 2] > 0
    keep = l2_ball_keep_probability(eps)
    # Two-sided binomial tests at 1e-4 each.
    assert stats.binomtest(int(plus.sum()), n, keep).pvalue > 1e-4
    assert stats.binomtest(int(minus.sum()), n, 1.0 - keep).pvalue > 1e-4


def test_l2_ball_mechanism_refuses_bad_input() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="epsilon"):
        l2_ball_mechanism([0.1], 0.0, rng)
    with pytest.raises(ValueError, match="last axis"):
        l2_ball_mechanism(np.zeros((3, 0)), 1.0, rng)
    with pytest.raises(TypeError, match="rng"):
        l2_ball_mechanism([0.1], 1.0, 3)  # type: ignore[arg-type]


# Amplification by shuffling -----------------------------------------------------------------------


def brute_force_delta(eps: float, eps0: float, n: int) -> float:
    """Hockey-stick divergence of the clones pair by enumerating (C, A, Z) (Feldman et al., Thm. 3.2)."""
    p, alpha = math.exp(-eps0), math.exp(eps0) / (1.0 + math.exp(eps0))
    P: dict[tuple[int, int], float] = {}
    Q: dict[tuple[int, int], float] = {}
    for c in range(n):
        wc = stats.binom.pmf(c, n - 1, p)
        for a in range(c + 1):
            wa = wc * stats.binom.pmf(a, c, 0.5)
            for z, wz in ((1, alpha), (0, 1.0 - alpha)):
                P[(a + z, c - a + 1 - z)] = P.get((a + z, c - a + 1 - z), 0.0) + wa * wz
                Q[(a + 1 - z, c - a + z)] = Q.get((a + 1 - z, c - a + z), 0.0) + wa * wz
    keys = set(P) | set(Q)
    forward = sum(max(0.0, P.get(k, 0.0) - math.exp(eps) * Q.get(k, 0.0)) for k in keys)
    backward = sum(max(0.0, Q.get(k, 0.0) - math.exp(eps) * P.get(k, 0.0)) for k in keys)
    return max(forward, backward)


@pytest.mark.parametrize(("eps", "eps0", "n"), [(0.2, 1.0, 6), (0.5, 2.0, 9), (0.0, 1.5, 4), (1.0, 3.0, 12)])
def test_shuffle_delta_matches_enumeration(eps: float, eps0: float, n: int) -> None:
    assert shuffle_delta(eps, eps0, n) == pytest.approx(brute_force_delta(eps, eps0, n), rel=1e-9, abs=1e-15)


def test_shuffle_one_report_is_randomized_response() -> None:
    # n = 1: no clones, the pair is randomized response at eps0.
    eps0, eps = 2.0, 0.7
    assert shuffle_delta(eps, eps0, 1) == pytest.approx((math.exp(eps0) - math.exp(eps)) / (math.exp(eps0) + 1))
    assert shuffle_delta(eps0, eps0, 1) == 0.0
    assert shuffle_epsilon(eps0, 1, 1e-9) == pytest.approx(eps0, abs=1e-6)


def fmt_closed_form(eps0: float, n: int, delta: float) -> float:
    """Feldman, McMillan & Talwar 2021, Thm. 3.1 (valid for eps0 <= ln(n / (16 ln(2 / delta))))."""
    a = 8.0 * math.sqrt(math.exp(eps0) * math.log(4.0 / delta)) / math.sqrt(n) + 8.0 * math.exp(eps0) / n
    return math.log(1.0 + (math.exp(eps0) - 1.0) / (math.exp(eps0) + 1.0) * a)


@pytest.mark.parametrize(("eps0", "n", "delta"), [(1.0, 1000, 1e-6), (2.0, 10_000, 1e-6), (3.0, 50_000, 1e-8)])
def test_shuffle_epsilon_is_below_the_closed_form_and_amplifies(eps0: float, n: int, delta: float) -> None:
    assert eps0 <= math.log(n / (16.0 * math.log(2.0 / delta)))  # the closed form's range
    eps = shuffle_epsilon(eps0, n, delta)
    assert 0.0 < eps < fmt_closed_form(eps0, n, delta) < eps0
    assert shuffle_delta(eps, eps0, n) <= delta


def test_local_epsilon_for_shuffle_inverts_shuffle_epsilon() -> None:
    for eps, n, delta in [(1.0, 1000, 1e-6), (0.5, 300, 1e-6), (2.0, 100, 0.1)]:
        eps0 = local_epsilon_for_shuffle(eps, n, delta)
        assert eps0 > eps
        assert shuffle_delta(eps, eps0, n) <= delta  # the guarantee holds at the returned eps0
        assert shuffle_delta(eps, eps0 * (1 + 1e-5), n) > delta  # and it is (nearly) the largest
        assert shuffle_epsilon(eps0, n, delta) == pytest.approx(eps, abs=1e-5)


def test_group_privacy_known_answers() -> None:
    assert group_privacy(0.5, 1e-6, 0) == (0.0, 0.0)
    assert group_privacy(0.5, 1e-6, 1) == (0.5, pytest.approx(1e-6))
    eps, dlt = group_privacy(1.0, 1e-6, 3)
    assert eps == 3.0 and dlt == pytest.approx(1e-6 * (1 + math.e + math.e**2))
    assert group_privacy(10.0, 1e-3, 1000)[1] == 1.0


# The clients' reports ------------------------------------------------------------------------------


def test_gaussian_reports_have_the_calibrated_noise() -> None:
    eps, delta = 1.0, 0.1
    agent = LDPOLS(3, eps, delta, l_x=0.5, l_y=2.0, gram_weight=0.4, seed=0)
    # Sensitivity 2 (the diameter of the unit ball), widened by sqrt(D) grid for the lattice (D = 9).
    wide = 2.0 + 3.0 * agent.grid
    assert agent.report_sensitivity == wide and 0.0 < agent.grid < 2.0**-20
    sigma = gaussian_sigma_analytic(eps, delta, wide)
    assert agent.sigma == sigma and gaussian_delta(sigma, eps, wide) <= delta
    raw = LDPOLS(3, eps, delta, l_x=0.5, l_y=2.0, gram_weight=0.4, seed=0, sampler="float")
    assert raw.sigma == gaussian_sigma_analytic(eps, delta, 2.0) and raw.grid == 0.0
    x, y = np.array([0.2, -0.3, 0.1]), 0.7
    exact = agent.encode_report(np.outer(x, x), y * x)
    rng = np.random.default_rng(5)
    noise = np.array([agent.encode_report(*agent.client_report(x, y, rng)) - exact for _ in range(20_000)])
    # Entries i.i.d. N(0, sigma²): KS test on all of them (false alarm 1e-3) and the covariance.
    assert stats.kstest(noise.ravel() / sigma, "norm").pvalue > 1e-3
    cov = np.cov(noise.T)
    # Diagonal within 5% of sigma² (s.e. about 1%), off-diagonal below 0.05 sigma² (s.e. 0.007).
    np.testing.assert_allclose(np.diag(cov), sigma**2, rtol=0.05)
    assert np.abs(cov - np.diag(np.diag(cov))).max() < 0.05 * sigma**2


def test_l2_ball_reports_are_the_reference_mechanism() -> None:
    # The compiled report of LDP-OLS ("l2_ball") is bandandit_envs' numpy mechanism with the same draws.
    agent = LDPOLS(4, 0.8, mechanism="l2_ball", l_x=0.6, l_y=1.5, gram_weight=0.3, seed=0)
    dim = 4 * 5 // 2 + 4
    assert agent.scale == l2_ball_scale(0.8, dim)
    rng = np.random.default_rng(7)
    for _ in range(50):
        x, y = rng.normal(size=4) * 0.5, float(rng.normal())
        seed = int(rng.integers(1 << 30))
        ours = agent.encode_report(*agent.client_report(x, y, np.random.default_rng(seed)))
        xc = x * min(1.0, 0.6 / np.linalg.norm(x))
        v = agent.encode_report(np.outer(xc, xc), float(np.clip(y, -1.5, 1.5)) * xc)
        assert np.linalg.norm(v) <= 1.0 + 1e-12
        ref = l2_ball_mechanism(v, 0.8, np.random.default_rng(seed))
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_clipped_reports_lie_in_the_unit_ball() -> None:
    # The sensitivity (2) holds: whatever x and y, the encoded clipped pair has norm <= 1.
    rng = np.random.default_rng(2)
    for w in (0.05, 0.5, 0.95):
        agent = LDPOLS(5, 1.0, l_x=0.4, l_y=1.0, gram_weight=w, seed=0)
        for _ in range(200):
            x = rng.normal(size=5) * rng.choice([0.01, 1.0, 100.0])
            y = float(rng.normal() * 10)
            xc = x * min(1.0, 0.4 / np.linalg.norm(x))
            v = agent.encode_report(np.outer(xc, xc), float(np.clip(y, -1, 1)) * xc)
            assert np.linalg.norm(v) <= 1.0 + 1e-12


def test_batch_noise_has_the_law_of_the_summed_reports() -> None:
    # The simulation draws a batch's Gaussian noise at once: N(0, n sigma² gs²) per decoded upper Gram
    # entry and N(0, n sigma² ms²) per y x entry. 4000 copies each play one batch of n = 5 rounds.
    d, n, copies = 2, 5, 4000
    agent = LDPOLS(d, 1.0, l_x=1.0, l_y=1.0, gram_weight=0.6, batch_size=n, n_envs=copies, seed=3)
    x = np.array([[[0.3, 0.4]]])  # one arm
    agent.run(np.broadcast_to(x, (n, 1, d)), np.full((n, 1), 0.5), parallel=False)
    iu = np.triu_indices(d)
    gram_noise = agent.server.gram[:, iu[0], iu[1]] - n * np.outer(x, x)[iu]
    mom_noise = agent.server.moment - n * 0.5 * x[0, 0]
    gs, ms = agent.sigma / 0.6, agent.sigma / 0.8
    for values, sd in ((gram_noise, math.sqrt(n) * gs), (mom_noise, math.sqrt(n) * ms)):
        assert stats.kstest(values.ravel() / sd, "norm").pvalue > 1e-3  # false alarm 1e-3 each
    assert np.all(agent.open_batch.gram == 0) and agent.open_batch.count == 0


# Kernels against numpy -----------------------------------------------------------------------------


def test_kernels_match_numpy() -> None:
    rng = np.random.default_rng(4)
    x, theta = rng.normal(size=(7, 5)), rng.normal(size=5)
    scores = (x @ theta) * np.minimum(1.0, 0.8 / np.linalg.norm(x, axis=1))
    assert choose_greedy(x, theta, 0.8) == int(np.argmax(scores))
    a = rng.normal(size=(5, 5))
    gram, mom = a @ a.T, rng.normal(size=5)
    pend_g, pend_m = np.triu(0.1 * rng.normal(size=(5, 5))), rng.normal(size=5)  # V + P stays positive definite
    full = gram + pend_g + np.triu(pend_g, 1).T
    g2, m2, u, th = np.triu(gram).copy(), mom.copy(), np.zeros((5, 5)), np.zeros(5)
    assert not refit(g2, m2, pend_g.copy(), pend_m.copy(), 0.5, u, th)
    np.testing.assert_allclose(th, np.linalg.solve(full + 0.5 * np.eye(5), mom + pend_m), rtol=1e-9)
    np.testing.assert_allclose(u.T @ u, full + 0.5 * np.eye(5), rtol=1e-9, atol=1e-12)
    pg, pm, noise = np.zeros((5, 5)), np.zeros(5), rng.normal(size=20)
    add_batch_noise(pg, pm, noise, np.array([2.0, 3.0, 0.0, 0.0, 0.0, 0.0]))  # grid 0: the float sampler
    expected = np.zeros((5, 5))
    expected[np.triu_indices(5)] = 2.0 * noise[:15]
    np.testing.assert_array_equal(pg, expected)
    np.testing.assert_array_equal(pm, 3.0 * noise[15:])


# Step API, fast path, batch mode -------------------------------------------------------------------


def play_steps(agent, features, rewards, users=None) -> np.ndarray:
    actions = []
    for t in range(features.shape[0]):
        a = agent.act(features[t])
        info = None if users is None else {"user_id": users[t]}
        if features.ndim == 4:
            agent.update(a, rewards[t, np.arange(features.shape[1]), a], info)
        else:
            agent.update(a, float(rewards[t, a]), info)
        actions.append(a)
    return np.array(actions)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_step_api_and_fast_path_choose_the_same_actions(name: str) -> None:
    x, r, _ = linear_problem(230, 5, 4, seed=1)
    users = np.arange(230) % 7
    kw = {"batch_size": 9, "seed": 4, "l_x": 0.9}
    fast = AGENTS[name](**kw)
    first = fast.run(x[:100], r[:100], users=users[:100], record_actions=True).actions
    second = fast.run(x[100:], r[100:], users=users[100:], record_actions=True).actions
    step = AGENTS[name](**kw)
    actions = play_steps(step, x, r, users)
    np.testing.assert_array_equal(np.concatenate([first, second]), actions)
    np.testing.assert_array_equal(fast.theta, step.theta)
    assert fast.t == step.t == 230 and fast.open_batch.count == step.open_batch.count == 230 % 9
    assert fast.max_user_reports == step.max_user_reports == 33
    assert fast.privacy_spent == step.privacy_spent
    # Copies: per-copy features, serial and parallel drivers, against the step API.
    xb, rb, _ = linear_problem(60, 5, 4, seed=2)
    xb = np.stack([xb, xb[::-1], -xb], axis=1)
    rb = np.stack([rb, rb[::-1], rb], axis=1)
    serial = AGENTS[name](n_envs=3, **kw).run(xb, rb, record_actions=True, parallel=False).actions
    parallel = AGENTS[name](n_envs=3, **kw).run(xb, rb, record_actions=True, parallel=True).actions
    np.testing.assert_array_equal(serial, parallel)
    np.testing.assert_array_equal(serial, play_steps(AGENTS[name](n_envs=3, **kw), xb, rb))


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_reset_continues_the_noise_and_a_seed_replays_the_run(name: str) -> None:
    x, r, e = linear_problem(120, 4, 4, seed=3)
    agent = AGENTS[name](batch_size=10, seed=8)
    a = agent.run(x, r, e, record_actions=True).actions
    agent.reset()  # fresh noise: the same problem gives another run
    assert agent.t == 0 and agent.max_user_reports == 0
    assert (agent.run(x, r, e, record_actions=True).actions != a).any()
    agent.reset(seed=8)
    np.testing.assert_array_equal(agent.run(x, r, e, record_actions=True).actions, a)


def test_learning_on_a_well_conditioned_problem() -> None:
    # Unit features in d = 4, high epsilon: greedy on private statistics beats random play by far.
    x, r, e = linear_problem(20_000, 10, 4, seed=5)
    random = float((e.max(axis=1) - e.mean(axis=1)).sum())
    for agent in (
        LDPOLS(4, 10.0, shift_scale=1.0, seed=0),
        LDPOLS(4, 10.0, mechanism="l2_ball", shift_scale=1.0, seed=0),
        ShuffleLinUCB(4, 2.0, batch_size=500, shift_scale=1.0, seed=0),
    ):
        regret = float(agent.run(x, r, e).total_regret)
        assert regret < 0.2 * random, type(agent).__name__


# Privacy accounting ---------------------------------------------------------------------------------


def test_ldp_ols_privacy_per_user_composes_the_busiest_users_reports() -> None:
    agent = LDPOLS(3, 1.0, 1e-5, seed=0)
    x, r, _ = linear_problem(300, 3, 3, seed=6)
    users = np.r_[np.zeros(120, dtype=int), np.arange(1, 181)]
    agent.run(x, r, users=users)
    assert agent.max_user_reports == 120
    mechanism = ReportMechanism.gaussian(agent.sigma, agent.report_sensitivity, 1.0, 1e-5)
    assert agent.privacy_spent == tight_composition(mechanism, 120, 1e-5)
    assert agent.privacy_per_report == (1.0, 1e-5)
    pure = LDPOLS(3, 1.0, mechanism="l2_ball", seed=0)
    pure.run(x[:50], r[:50])  # no user ids: the whole stream is one user
    assert pure.privacy_per_report == (1.0, 0.0)
    assert pure.privacy_spent == tight_composition(ReportMechanism.randomized_response(1.0), 50, 0.1)


def test_shuffle_privacy_local_and_central() -> None:
    eps, delta, n = 1.0, 1e-6, 4
    agent = ShuffleLinUCB(3, eps, delta, batch_size=n, seed=0)
    assert agent.local_epsilon == local_epsilon_for_shuffle(eps, n, delta)
    assert agent.privacy_per_report == (agent.local_epsilon, 0.0)
    assert agent.privacy_central_per_report == (eps, delta)
    x, r, _ = linear_problem(10, 3, 3, seed=7)
    # Batches of 4: [0, 0, 1, 2], [0, 3, 3, 3]; the last two rounds (batch not closed) are [0, 0].
    users = np.array([0, 0, 1, 2, 0, 3, 3, 3, 0, 0])
    agent.run(x[:6], r[:6], users=users[:6])
    play_steps(agent, x[6:], r[6:], users[6:])
    g = [math.expm1(m * eps) / math.expm1(eps) for m in range(4)]
    # User 0: 3 reports in closed batches, m = 2 then 1; user 3: m = 3 (the largest δ multiplier).
    assert agent.privacy_per_user_central() == (3 * eps, pytest.approx(delta * max(g[2] + g[1], g[3])))
    assert agent.max_user_reports == 5  # the local count includes the open batch
    local = tight_composition(ReportMechanism.randomized_response(agent.local_epsilon), 5, 0.1)
    assert agent.privacy_per_user(0.1).tight == local
    central = agent.privacy_per_user_central()
    assert agent.privacy_spent == (central if central[1] <= 0.1 and central[0] < local[0] else local)


def test_shuffle_amplifies_against_ldp() -> None:
    # At the same central epsilon a batch of 1000 allows a much larger local epsilon, hence less noise.
    agent = ShuffleLinUCB(20, 1.0, 1e-6, batch_size=1000)
    assert agent.local_epsilon > 2.5
    assert agent.scale < l2_ball_scale(1.0, 230) / 1.8


# The MovieLens env (synthetic default data) ------------------------------------------------------------


def test_on_movielens_env_through_gymnasium() -> None:
    for agent in (LDPOLS(20, 5.0, l_x=0.4, seed=1), ShuffleLinUCB(20, 5.0, batch_size=50, l_x=0.4, seed=1)):
        env = gym.make("MovieLensRecommendation-v0", horizon=400)  # the synthetic default data
        agent.check_env(env)
        obs, info = env.reset(seed=3)
        seen: dict[int, int] = {}
        truncated = False
        while not truncated:
            action = agent.act(obs)
            obs, reward, _, truncated, info = env.step(action)
            seen[info["user_id"]] = seen.get(info["user_id"], 0) + 1
            agent.update(action, reward, info)
        assert agent.t == 400
        assert agent.max_user_reports == max(seen.values())
        assert agent.n_clipped_features == 0  # the env's features have norm <= 0.4


# What the server holds ------------------------------------------------------------------------------

#: One report's raw datum: x (norm < 1, not clipped) and y, with entries no count or zero equals.
RAW_X = np.array([0.3, -0.5, 0.2])
RAW_Y = 0.6180339887

#: Local-DP agents with noise absurdly large for data in the unit ball, and how to reach their server object.
LDP_SERVERS = {
    "LDPOLS-gaussian": (lambda: LDPOLS(3, 1e-3, seed=1), lambda ag: ag.server),
    "LDPOLS-l2_ball": (lambda: LDPOLS(3, 1e-3, mechanism="l2_ball", seed=1), lambda ag: ag.server),
    "ShuffleLinUCB": (lambda: ShuffleLinUCB(3, 0.1, batch_size=50, seed=1), lambda ag: ag.server),
    "LDPLinUCB": (lambda: LDPLinUCB(3, 1e-3, seed=1), lambda ag: ag.server),
    "LDPWrapper-laplace": (lambda: LDPWrapper(UCB(2), "laplace", 1e-3, seed=1), lambda ag: ag.agent),
    "LDPWrapper-gaussian": (lambda: LDPWrapper(UCB(2), "gaussian", 1e-3, 0.1, seed=1), lambda ag: ag.agent),
    "LDPWrapper-rr-debias": (
        lambda: LDPWrapper(UCB(2), "randomized_response", 1e-3, rr_output="debias", seed=1),
        lambda ag: ag.agent,
    ),
    "LDPThompsonSampling": (lambda: LDPThompsonSampling(2, 1e-3, seed=1), lambda ag: ag),
}


def numeric_arrays(obj: object, path: str, seen: set[int] | None = None) -> list[tuple[str, np.ndarray]]:
    """Every number and numeric array reachable from ``obj`` through attributes, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [(path, obj.astype(np.float64))] if obj.dtype.kind in "iuf" else []
    if isinstance(obj, int | float | np.number) and not isinstance(obj, bool):
        return [(path, np.array([obj], dtype=np.float64))]
    items: list[tuple[str, object]] = []
    if isinstance(obj, list | tuple):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
    elif isinstance(obj, dict):
        items = [(f"{path}[{k!r}]", v) for k, v in obj.items()]
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        items = [(f"{path}.{k}", v) for k, v in vars(obj).items()]
    out: list[tuple[str, np.ndarray]] = []
    for sub_path, value in items:
        out += numeric_arrays(value, sub_path, seen)
    return out


def carries(values: np.ndarray, raw: np.ndarray) -> bool:
    """Whether a trailing block of ``values`` shaped like ``raw`` is a multiple of it (or of its upper triangle)."""
    if values.ndim < raw.ndim or values.shape[values.ndim - raw.ndim :] != raw.shape:
        return False
    candidates = [raw] + ([np.triu(raw)] if raw.ndim == 2 else [])
    for block in values.reshape((-1, *raw.shape)):
        for ref in candidates:
            norm = np.linalg.norm(block) * np.linalg.norm(ref)
            if norm > 0 and abs(float(np.sum(block * ref))) >= (1 - 1e-9) * norm:
                return True
    return False


@pytest.mark.parametrize("name", sorted(LDP_SERVERS))
def test_server_holds_no_raw_client_data_after_one_report(name: str) -> None:
    # After exactly one report, no array of the server object equals (or is a multiple of) the raw
    # x, y x or x xᵀ of that report, nor holds its raw reward: with noise this large, the privatized
    # report is nowhere near them.
    make, server_of = LDP_SERVERS[name]
    agent = make()
    if isinstance(agent, LDPWrapper | LDPThompsonSampling):
        assert agent.act() == 0
        agent.update(0, RAW_Y)
        raws = []
    else:
        agent.update(agent.act(RAW_X[None, :]), RAW_Y)
        raws = [RAW_X, RAW_Y * RAW_X, np.outer(RAW_X, RAW_X)]
    found = numeric_arrays(server_of(agent), "server")
    assert found  # the walk reached the server's state
    for path, values in found:
        assert not np.any(values == RAW_Y), f"{path} holds the raw reward"
        for raw in raws:
            assert not carries(values, raw), f"{path} carries a raw statistic of the report"


def test_ldp_ols_open_batch_sits_with_the_users() -> None:
    # The Gaussian simulation adds a batch's noise when it closes: until then the exact sums sit with
    # the users (BatchClients), and reach the server, noisy, at the close.
    # The float sampler: the open batch holds the users' exact sums (the lattice's are rounded).
    agent = LDPOLS(3, 1.0, batch_size=2, seed=1, sampler="float")
    agent.update(agent.act(RAW_X[None, :]), RAW_Y)
    assert isinstance(agent.open_batch, BatchClients) and agent.open_batch.count == 1
    np.testing.assert_allclose(np.triu(agent.open_batch.gram[0]), np.triu(np.outer(RAW_X, RAW_X)), rtol=1e-12)
    np.testing.assert_allclose(agent.open_batch.moment[0], RAW_Y * RAW_X, rtol=1e-12)
    assert np.all(agent.server.gram == 0) and np.all(agent.server.moment == 0)
    agent.update(agent.act(RAW_X[None, :]), RAW_Y)
    assert agent.open_batch.count == 0 and np.all(agent.open_batch.gram == 0)
    assert not np.allclose(agent.server.moment[0], 2 * RAW_Y * RAW_X)  # the batch's noise was added
    assert isinstance(ShuffleLinUCB(3, 1.0).open_batch, Shuffler)


# Input checks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: LDPOLS(3, 0.0), "epsilon"),
        (lambda: LDPOLS(3, 1.0, 1.0), "delta"),
        (lambda: LDPOLS(3, 1.0, mechanism="laplace"), "mechanism"),
        (lambda: LDPOLS(3, 1.0, gram_weight=1.0), "gram_weight"),
        (lambda: LDPOLS(3, 1.0, batch_size=0), "batch_size"),
        (lambda: LDPOLS(3, 1.0, l_x=1e300), "l_x and l_y"),
        (lambda: LDPOLS(3, 5e-324), "epsilon"),
        (lambda: ShuffleLinUCB(3, 1.0, user_delta=0.0), "user_delta"),
        (lambda: ShuffleLinUCB(3, 1000.0), "epsilon"),
        (lambda: ShuffleLinUCB(3, 1.0, width=-1.0), "width"),
    ],
)
def test_bad_arguments_are_refused_in_one_sentence(make, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_baselines_still_import() -> None:
    # The new agents sit next to LinUCB and LDP-LinUCB in agents.linear.
    assert LinUCB(3).name == "LinUCB" and LDPLinUCB(3, 1.0).name == "LDP-LinUCB"
    assert LDPOLS.name == "LDP-OLS" and ShuffleLinUCB.name == "Shuffle-LinUCB"


@pytest.mark.parametrize("mechanism", ["gaussian", "l2_ball"])
def test_step_api_draws_from_the_agents_own_generator_also_in_a_copy(mechanism: str) -> None:
    """The step kernel gets the generator through a typed list that holds ``rng`` itself, rebuilt for a copy."""
    import copy
    import pickle

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 5, 4)) * 0.2
    agent = LDPOLS(4, 1.0, mechanism=mechanism, batch_size=3, seed=1)
    for t in range(10):
        agent.update(agent.act(x[t]), 0.5)
    assert agent._rng_held()[0] is agent.rng
    for twin in (copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))):
        before = agent.rng.bit_generator.state
        reference = copy.deepcopy(agent)
        for t in range(10, 40):
            a, b = twin.act(x[t]), reference.act(x[t])
            assert a == b
            twin.update(a, 0.25)
            reference.update(b, 0.25)
        assert twin._rng_held()[0] is twin.rng
        assert twin.rng.bit_generator.state == reference.rng.bit_generator.state
        assert agent.rng.bit_generator.state == before  # the copies drew from their own generators
        np.testing.assert_array_equal(twin.server.theta, reference.server.theta)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_single_env_steps_match_the_fast_path_with_a_bonus_clipping_and_floors(name: str) -> None:
    """The one-call single-env step (parameter array, server buffer, open batch buffer) against ``run``."""
    x, r, _ = linear_problem(150, 5, 4, seed=11)
    kw = {"batch_size": 7, "seed": 2, "l_x": 0.6, "l_y": 0.5, "width": 0.3, "shift_scale": 0.0}
    fast = AGENTS[name](**kw)
    expected = fast.run(x, r, record_actions=True).actions
    step = AGENTS[name](**kw)
    np.testing.assert_array_equal(play_steps(step, x, r, None), expected)
    np.testing.assert_array_equal(step.server.buffer, fast.server.buffer)
    np.testing.assert_array_equal(step.open_batch.buffer, fast.open_batch.buffer)
    assert step.n_clipped_features == fast.n_clipped_features > 0
    assert step.n_clipped_rewards == fast.n_clipped_rewards > 0
    assert step.n_eig_floor == fast.n_eig_floor
    assert step.privacy_spent == fast.privacy_spent


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_server_and_open_batch_arrays_are_views_of_one_buffer_each(name: str) -> None:
    import copy
    import pickle

    agent = AGENTS[name](batch_size=5, seed=1)
    x, _, _ = linear_problem(3, 5, 4, seed=12)
    for t in range(3):
        agent.update(agent.act(x[t]), 0.5)
    for ag in (agent, pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)):
        srv, ob = ag.server, ag.open_batch
        for owner, names in ((srv, ("gram", "moment", "chol", "theta")), (ob, ("gram", "moment"))):
            for attr in names:
                view = getattr(owner, attr)
                assert np.shares_memory(view, owner.buffer) and view.flags.c_contiguous, attr
            with pytest.raises(AttributeError):
                owner.gram = np.zeros((1, 4, 4))
        assert not np.shares_memory(srv.buffer, ob.buffer)
        np.testing.assert_array_equal(srv.chol[0], np.sqrt(ag.reg) * np.eye(4))
        assert ob.count == 3 and np.any(ob.gram != 0)
    agent.act(x[0])
    agent.open_batch.buffer = np.zeros(5)
    with pytest.raises(ValueError, match="server.buffer and open_batch.buffer must hold"):
        agent.update(0, 0.5)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_single_env_choice_reads_the_layout_from_the_strides(name: str) -> None:
    """The step's choice kernel refuses a strided or Fortran-ordered observation; ``act`` plays it as its copy."""
    x, _, _ = linear_problem(2, 5, 8, seed=15)
    agent = AGENTS[name](batch_size=5, seed=1)
    params, buffer = agent._params, agent.server.buffer
    strided = x[0][:, ::2]  # (5, 4), rows 64 bytes apart
    for obs in (strided, np.asfortranarray(x[1][:, :4]), np.ascontiguousarray(x[0][:, ::2])[::-1]):
        assert agent._step.choose_one(obs, params, buffer) == -1
        assert agent.act(obs) == agent.act(np.ascontiguousarray(obs))
    assert agent._step.choose_one(np.ascontiguousarray(strided), params, buffer) >= 0


def test_plain_report_kernel_refuses_rounds_that_draw_or_close_and_matches_the_full_one() -> None:
    """``step_report_plain``: nothing written for a round that would draw or close; else ``step_report_one``'s sums."""
    from agents.linear._stats_kernels import step_report_one, step_report_plain

    x, _, _ = linear_problem(1, 5, 4, seed=16)
    obs = np.ascontiguousarray(x[0])
    gauss, ball = LDPOLS(4, 2.0, batch_size=3, seed=0), LDPOLS(4, 2.0, mechanism="l2_ball", batch_size=3, seed=0)
    pending, clips = np.zeros_like(gauss.open_batch.buffer), np.zeros((1, 2), dtype=np.int64)
    assert step_report_plain(obs, 1, 0.5, 2, gauss._params, pending, clips) == -1  # closes the batch
    assert step_report_plain(obs, 1, 0.5, 0, ball._params, pending, clips) == -1  # draws per report
    assert step_report_plain(obs, 1, 0.5, 0, gauss._params, np.zeros(5), clips) == -1
    assert step_report_plain(obs, 5, 0.5, 0, gauss._params, pending, clips) == -2
    assert step_report_plain(obs, 1, 0.5, 0, gauss._params, pending, np.zeros((1, 3), dtype=np.int64)) == -1
    assert not pending.any() and not clips.any()
    assert step_report_plain(obs, 1, 0.5, 1, gauss._params, pending, clips) == 0
    full = np.zeros_like(pending)
    holder = gauss._rng_holder()
    assert step_report_one(holder, obs, 1, 0.5, 2, 1, gauss._params, gauss.server.buffer.copy(), full) == 0
    np.testing.assert_array_equal(pending, full)
    assert not clips.any()
    # a clipped report: counted in the kernel, in the row of the first copy, as step_report_one's flags say
    big = obs * 100.0
    flags = step_report_one(holder, big, 1, 1e6, 2, 1, gauss._params, gauss.server.buffer.copy(), full)
    assert flags == 3
    assert step_report_plain(big, 1, 1e6, 1, gauss._params, pending, clips) == 0
    np.testing.assert_array_equal(clips, [[1, 1]])
    np.testing.assert_array_equal(pending, full)


def test_replaced_server_buffer_is_refused_by_the_next_round_that_reads_it() -> None:
    """LDP-OLS's plain rounds do not pass the server's buffer: the batch close refuses it, writing nothing."""
    x, _, _ = linear_problem(4, 5, 4, seed=17)
    agent = LDPOLS(4, 2.0, batch_size=3, seed=0)
    agent.server.buffer = np.zeros(5)
    for t in range(2):
        agent.update(agent.act(x[t]), 0.5)  # the choice falls back to the server's views; the report to the users
    agent.act(x[2])
    pending, state = agent.open_batch.buffer.copy(), agent.rng.bit_generator.state
    with pytest.raises(ValueError, match="server.buffer and open_batch.buffer must hold"):
        agent.update(0, 0.5)
    np.testing.assert_array_equal(agent.open_batch.buffer, pending)
    assert agent.rng.bit_generator.state == state and agent.t == 2


def test_shuffle_batches_count_anonymous_and_named_steps_as_the_fast_path() -> None:
    """Steps without a user id, then with, then without again: the same shuffle-batch ledger as ``run``."""
    x, r, _ = linear_problem(60, 5, 4, seed=13)
    users = np.arange(60) % 4
    parts = ((0, 13, None), (13, 34, users[13:34]), (34, 60, None))
    fast = ShuffleLinUCB(4, 1.0, batch_size=8, seed=3)
    for lo, hi, ids in parts:
        fast.run(x[lo:hi], r[lo:hi], users=ids)
    step = ShuffleLinUCB(4, 1.0, batch_size=8, seed=3)
    for lo, hi, ids in parts:
        play_steps(step, x[lo:hi], r[lo:hi], ids)
    assert step.privacy_per_user_central() == fast.privacy_per_user_central()
    assert step.privacy_spent == fast.privacy_spent
    assert step.max_user_reports == fast.max_user_reports
    np.testing.assert_array_equal(step.theta, fast.theta)


@pytest.mark.parametrize("cls", [LDPOLS, ShuffleLinUCB])
def test_greedy_step_refuses_non_finite_features_and_keeps_overflowing_rows(cls: type) -> None:
    """The greedy choice's folded finiteness check: NaN/inf refused, a row whose squares overflow still chosen."""
    theta, l_x = np.array([0.5, -0.25, 0.1]), 1.0
    finite = np.array([[0.1, 0.2, 0.3], [1e200, 0.0, 0.0], [0.3, -0.2, 0.0]])
    assert choose_greedy(finite, theta, l_x, True) == choose_greedy(finite, theta, l_x) == 2
    for bad in (np.inf, -np.inf, np.nan):
        x = finite.copy()
        x[2, 1] = bad
        assert choose_greedy(x, theta, l_x, True) == -1
        with pytest.raises(ValueError, match="obs must contain only finite numbers"):
            cls(3, 1.0, seed=0).act(x)
    assert cls(3, 1.0, seed=0).act(finite) in range(3)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_single_env_step_refuses_bad_feedback_before_drawing_or_writing(name: str) -> None:
    """The one-call step checks the arm and the reward in the kernel: a refusal draws and writes nothing."""
    x, _, _ = linear_problem(4, 5, 4, seed=14)
    for bad_action, bad_reward, match in (
        (5, 0.5, "action must be an arm index"),
        (-1, 0.5, "action must be an arm index"),
        (10**30, 0.5, "action must be an arm index"),
        (np.int64(7), 0.5, "action must be an arm index"),
        (1, math.nan, "reward must be a finite number"),
        (1, -math.inf, "reward must be a finite number"),
    ):
        agent = AGENTS[name](batch_size=2, seed=5)
        agent.update(agent.act(x[0]), 0.5)  # the next round closes the batch (draws for every mechanism)
        agent.act(x[1])
        rng_state, server, pending = (
            agent.rng.bit_generator.state,
            agent.server.buffer.copy(),
            agent.open_batch.buffer.copy(),
        )
        with pytest.raises(ValueError, match=match):
            agent.update(bad_action, bad_reward)
        assert agent.rng.bit_generator.state == rng_state and agent.t == 1 and agent.open_batch.count == 1
        np.testing.assert_array_equal(agent.server.buffer, server)
        np.testing.assert_array_equal(agent.open_batch.buffer, pending)
        agent.update(1, 0.25)  # the round can still be reported
        assert agent.t == 2 and agent.open_batch.count == 0
