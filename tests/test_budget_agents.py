"""Tests of agents.budget.smucb: SM-UCB and FixedArm (FixHalf) of the privacy-budget paper."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from agents.budget.smucb import SMUCB, FixedArm, sensitivity_weights
from agents.stochastic.index import UCB


def feed(agent: SMUCB, phi: float, expected: int, reward: float) -> None:
    """One act/update round of a single agent, checking the chosen arm."""
    action = agent.act(phi)
    assert action == expected
    agent.update(action, reward)


class ReferenceSMUCB:
    """Eq. (9)-(10) of the paper for one copy, written directly with Python floats."""

    def __init__(self, n_arms: int, alpha: float, beta: float) -> None:
        self.k, self.alpha, self.beta = n_arms, alpha, beta
        self.counts = [0] * n_arms
        self.sums = [0.0] * n_arms
        self.t = 0

    def act(self, phi: float) -> int:
        for i in range(self.k):
            if self.counts[i] == 0:
                return i
        t = self.t + 1
        peak = math.ceil((1 - phi) * self.k)
        index = [
            self.sums[i] / self.counts[i]
            + self.alpha * math.sqrt(math.log(t) / self.counts[i])
            + self.beta * (1 - abs(peak - (i + 1)) / self.k)
            for i in range(self.k)
        ]
        return max(range(self.k), key=lambda i: (index[i], -i))

    def update(self, action: int, reward: float) -> None:
        self.counts[action] += 1
        self.sums[action] += reward
        self.t += 1


# Sensitivity weights, eq. (10) -----------------------------------------------------------


def test_weights_peak_at_ceil_of_one_minus_phi_times_k():
    # ⌈(1 - 0.45) * 10⌉ = ⌈5.5⌉ = 6: w_6 = 1, w_5 = w_7 = 0.9, ..., w_1 = 0.5, w_10 = 0.6.
    np.testing.assert_allclose(sensitivity_weights(0.45, 10), [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.9, 0.8, 0.7, 0.6])


@pytest.mark.parametrize(
    ("phi", "peak"),
    [(0.0, 10), (0.05, 10), (0.1, 9), (0.3, 7), (0.7, 3), (0.71, 3), (0.9, 1), (0.95, 1)],
)
def test_weights_peak_positions_including_grid_values(phi, peak):
    # (1 - 0.7) * 10 = 3.0000000000000004 in floating point; the exact ceiling is 3.
    w = sensitivity_weights(phi, 10)
    assert int(np.argmax(w)) == peak - 1
    np.testing.assert_allclose(w, 1 - np.abs(peak - np.arange(1, 11)) / 10)


def test_weights_at_phi_one_follow_eq_10_literally():
    # ⌈0⌉ = 0: the peak lies below arm 1, w_i = 1 - i/K (still largest at arm 1).
    np.testing.assert_allclose(sensitivity_weights(1.0, 10), 1 - np.arange(1, 11) / 10)


def test_weights_accept_arrays():
    w = sensitivity_weights([0.45, 1.0], 10)
    assert w.shape == (2, 10)
    np.testing.assert_array_equal(w[0], sensitivity_weights(0.45, 10))


@pytest.mark.parametrize("phi", [-0.01, 1.01, float("nan"), [0.5, 2.0]])
def test_weights_reject_sensitivity_outside_unit_interval(phi):
    with pytest.raises(ValueError, match=r"phi.* \[0, 1\]"):
        sensitivity_weights(phi, 10)


# SM-UCB known answers ----------------------------------------------------------------------


@pytest.mark.parametrize("phi", [0.0, 0.45, 1.0])
def test_smucb_plays_each_arm_first_whatever_the_sensitivity(phi):
    agent = SMUCB(4, alpha=1.0, beta=1.0)
    for arm in range(4):
        feed(agent, phi, arm, 0.0)


@pytest.mark.parametrize(("phi", "expected"), [(0.9, 0), (0.5, 1), (0.1, 2), (1.0, 0), (0.0, 2)])
def test_smucb_equal_means_go_to_the_peak_arm(phi, expected):
    # K = 3: ⌈0.3⌉ = 1, ⌈1.5⌉ = 2, ⌈2.7⌉ = 3, ⌈0⌉ = 0 (arm 1 nearest), ⌈3⌉ = 3.
    agent = SMUCB(3, alpha=1.0, beta=0.01)
    for arm in range(3):
        feed(agent, 0.5, arm, 0.5)
    assert agent.act(phi) == expected


@pytest.mark.parametrize(("beta", "expected"), [(0.1, 0), (0.2, 2)])
def test_smucb_beta_trades_mean_for_sensitivity(beta, expected):
    agent = SMUCB(3, alpha=1.0, beta=beta)
    for arm, reward in enumerate([0.6, 0.5, 0.5]):
        feed(agent, 0.5, arm, reward)
    # t = 4, phi = 0.1: peak 3, w = [1/3, 2/3, 1]; every N_i = 1, same sqrt(ln 4).
    # arm 0: 0.6 + beta/3, arm 2: 0.5 + beta -> arm 2 iff beta * 2/3 > 0.1.
    assert agent.act(0.1) == expected


@pytest.mark.parametrize(("gap", "expected"), [(0.0005, 5), (0.002, 4)])
def test_smucb_paper_defaults_k10(gap, expected):
    agent = SMUCB(10)  # alpha 0.3, beta 0.01
    rewards = [0.5] * 10
    rewards[4] += gap
    for arm, reward in enumerate(rewards):
        feed(agent, 0.45, arm, reward)
    # t = 11, phi = 0.45: w_5 = 0.9, w_6 = 1 (arms 4 and 5, 0-based), bonus gap beta * 0.1 = 0.001.
    assert agent.act(0.45) == expected


def test_smucb_hand_computed_exploration():
    agent = SMUCB(3, alpha=0.5, beta=0.1)
    for arm, reward in [(0, 0.9), (1, 0.5), (2, 0.2), (0, 0.9)]:
        feed(agent, 0.5, arm, reward)
    # t = 5, ln 5 = 1.60944, phi = 0.8: peak ⌈0.6⌉ = 1, w = [1, 2/3, 1/3].
    # arm 0: 0.9 + 0.5 * sqrt(ln5 / 2) + 0.1 = 1.44853
    # arm 1: 0.5 + 0.5 * sqrt(ln5) + 0.0667 = 1.20099; arm 2: 0.2 + 0.63432 + 0.0333 = 0.86766.
    assert agent.act(0.8) == 0
    agent.update(0, 0.0)
    # t = 6, ln 6 = 1.79176: arm 0 mean 0.6, N = 3 -> 0.6 + 0.5 * sqrt(ln6 / 3) + 0.1 = 1.08641;
    # arm 1: 0.5 + 0.5 * sqrt(ln6) + 0.0667 = 1.23595 -> arm 1.
    assert agent.act(0.8) == 1


def test_smucb_act_does_not_change_state():
    agent = SMUCB(3)
    for arm in range(3):
        feed(agent, 0.5, arm, 0.1 * arm)
    assert agent.act(0.2) == agent.act(0.2)
    np.testing.assert_array_equal(agent.counts, [[1, 1, 1]])
    assert agent.t == 3


def test_smucb_matches_reference_implementation():
    rng = np.random.default_rng(0)
    k, steps = 10, 3000
    means = rng.uniform(0.4, 0.6, size=k)
    agent, ref = SMUCB(k, alpha=0.1, beta=0.05), ReferenceSMUCB(k, alpha=0.1, beta=0.05)
    phis = np.clip(rng.normal(0.55, 0.05, size=steps), 0.0, 1.0)
    for t in range(steps):
        action = agent.act(float(phis[t]))
        assert action == ref.act(float(phis[t])), f"round {t + 1}"
        reward = float(rng.random() < means[action])
        agent.update(action, reward)
        ref.update(action, reward)


def test_smucb_with_beta_zero_is_ucb():
    rng = np.random.default_rng(1)
    k, steps = 10, 3000
    table = rng.random((steps, k))
    phis = rng.random(steps)
    smucb, ucb = SMUCB(k, alpha=0.3, beta=0.0), UCB(k, alpha=0.3)
    for t in range(steps):
        a, b = smucb.act(phis[t]), ucb.act()
        assert a == b, f"round {t + 1}"
        smucb.update(a, table[t, a])
        ucb.update(b, table[t, b])
    np.testing.assert_array_equal(smucb.counts, ucb.counts)


def test_smucb_sensitivity_moves_choices_towards_small_budgets():
    rng = np.random.default_rng(2)
    counts = {}
    for phi in (0.2, 0.8):
        agent = SMUCB(10, alpha=0.05, beta=0.2)
        for _ in range(500):
            action = agent.act(phi)
            agent.update(action, float(rng.random() < 0.5))
        counts[phi] = agent.counts[0]
    # Peaks at arm 8 (phi 0.2) and arm 2 (phi 0.8): the mean budget index is lower for phi = 0.8.
    mean_arm = {phi: float(np.arange(10) @ c / c.sum()) for phi, c in counts.items()}
    assert mean_arm[0.8] < mean_arm[0.2]


@pytest.mark.parametrize("obs_shape", ["flat", "column"])
def test_smucb_batched_equals_single(obs_shape):
    rng = np.random.default_rng(3)
    n, k, steps = 5, 10, 400
    table = (rng.random((steps, n, k)) < np.linspace(0.3, 0.7, k)).astype(float)
    phis = rng.random((steps, n))
    phis[::7] = 1.0
    phis[3::11] = 0.0
    batched = SMUCB(k, alpha=0.3, beta=0.05, n_envs=n)
    singles = [SMUCB(k, alpha=0.3, beta=0.05) for _ in range(n)]
    rows = np.arange(n)
    for t in range(steps):
        obs = phis[t] if obs_shape == "flat" else phis[t][:, None]
        actions = batched.act(obs)
        assert actions.shape == (n,)
        assert actions.dtype == np.int64
        expected = [s.act(np.array([phis[t, b]])) for b, s in enumerate(singles)]
        np.testing.assert_array_equal(actions, expected)
        batched.update(actions, table[t, rows, actions])
        for b, s in enumerate(singles):
            s.update(expected[b], table[t, b, expected[b]])
    for b, s in enumerate(singles):
        np.testing.assert_array_equal(batched.means[b], s.means[0])


def test_smucb_reset_replays():
    agent = SMUCB(4, n_envs=3)
    obs = np.array([0.1, 0.5, 0.9])
    rewards = np.array([[0.2, 0.8, 0.5, 0.1]] * 3)

    def run() -> list[list[int]]:
        out = []
        for _ in range(20):
            a = agent.act(obs)
            agent.update(a, rewards[0, a])
            out.append(a.tolist())
        return out

    first = run()
    agent.reset(seed=5)
    assert agent.t == 0
    assert not agent.counts.any()
    assert run() == first


def test_smucb_repr_and_exports():
    assert repr(SMUCB(10, n_envs=2, seed=1)) == "SMUCB(n_arms=10, alpha=0.3, beta=0.01, n_envs=2, seed=1)"
    assert agents.SMUCB is SMUCB
    assert agents.FixedArm is FixedArm
    assert SMUCB.name == "SM-UCB"


# FixedArm / FixHalf ------------------------------------------------------------------------


def test_fixed_arm_always_plays_its_arm():
    agent = FixedArm(5, 3)
    for reward in [0.0, 1.0, 0.5]:
        assert agent.act() == 3
        agent.update(3, reward)
    assert isinstance(agent.act(0.7), int)


def test_fixed_arm_batched():
    agent = FixedArm(5, 0, n_envs=4)
    actions = agent.act(np.full(4, 0.5))
    np.testing.assert_array_equal(actions, [0, 0, 0, 0])
    assert actions.dtype == np.int64
    actions[:] = 2  # the caller owns the returned array
    agent.update(actions, np.ones(4))
    np.testing.assert_array_equal(agent.act(), [0, 0, 0, 0])


def test_fix_half_is_budget_one_half():
    agent = FixedArm.fix_half()
    assert agent.arm == 4
    assert (agent.arm + 1) / agent.n_arms == 0.5  # e_i = i / K with i = arm + 1
    assert agent.name == "FixHalf"
    assert agent.act() == 4
    assert FixedArm.fix_half(6, n_envs=2).act().tolist() == [2, 2]
    assert repr(agent) == "FixedArm(n_arms=10, arm=4, n_envs=None, seed=None)"


# Invalid arguments -------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan"), float("inf")])
def test_smucb_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        SMUCB(10, alpha=alpha)


@pytest.mark.parametrize("beta", [-0.01, float("nan"), float("inf")])
def test_smucb_rejects_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        SMUCB(10, beta=beta)


def test_smucb_rejects_non_numeric_parameters():
    with pytest.raises(TypeError, match="alpha"):
        SMUCB(10, alpha="0.3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="beta"):
        SMUCB(10, beta=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("obs", [-0.1, 1.1, float("nan"), float("inf"), np.array([1.5])])
def test_smucb_rejects_sensitivity_outside_unit_interval(obs):
    agent = SMUCB(10)
    with pytest.raises(ValueError, match=r"obs \(the sensitivity φ_t\) must be a number in \[0, 1\]"):
        agent.act(obs)


def test_smucb_names_the_bad_copy():
    agent = SMUCB(10, n_envs=3)
    with pytest.raises(ValueError, match="for copy 2, got nan"):
        agent.act(np.array([0.1, 0.2, np.nan]))


@pytest.mark.parametrize("obs", [None, "high", object()])
def test_smucb_rejects_non_numeric_obs(obs):
    with pytest.raises(TypeError, match="obs must be the sensitivity"):
        SMUCB(10).act(obs)


@pytest.mark.parametrize(("n_envs", "obs"), [(None, [0.1, 0.2]), (3, [0.1, 0.2]), (2, [[0.1, 0.2]]), (2, 0.5)])
def test_smucb_rejects_obs_of_wrong_shape(n_envs, obs):
    with pytest.raises(ValueError, match="obs must be the sensitivity.*shape"):
        SMUCB(10, n_envs=n_envs).act(np.asarray(obs))


def test_smucb_rejects_bad_update():
    agent = SMUCB(3)
    with pytest.raises(ValueError, match="action"):
        agent.update(3, 0.5)
    with pytest.raises(ValueError, match="reward"):
        agent.update(0, float("nan"))


@pytest.mark.parametrize("arm", [-1, 10])
def test_fixed_arm_rejects_arm_out_of_range(arm):
    with pytest.raises(ValueError, match=r"arm must be .*\[0, 9\]"):
        FixedArm(10, arm)


@pytest.mark.parametrize("arm", [1.0, "4", True, None])
def test_fixed_arm_rejects_non_integer_arm(arm):
    with pytest.raises(TypeError, match="arm"):
        FixedArm(10, arm)


def test_fix_half_needs_an_even_number_of_arms():
    with pytest.raises(ValueError, match="n_arms must be even"):
        FixedArm.fix_half(9)
