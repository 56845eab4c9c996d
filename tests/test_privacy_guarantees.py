"""Privacy statements checked against what the mechanisms and agents really do.

* HybridDPUCB's stated δ covers the Laplace sampler's tail of every release a reward can enter,
  whatever the depth of the binary tree that reward lands in (agents/central_dp/ucb.py);
* an audit refuses a claim it cannot compare with its bound (NaN, negative, a bool or a string):
  a NaN claim would make every comparison false, so a leaking agent would pass (agents/audit);
* a user with many pure-ε reports gets a valid composed (ε', δ) in bounded time and memory, where
  the privacy loss distribution would need gigabytes (bandit_envs/privacy/accounting.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents import UCB, HybridDPUCB
from agents.audit import audit, subject_for
from agents.audit.subjects import Subject, claimed_number
from bandit_envs.privacy._checks import laplace_tail_delta
from bandit_envs.privacy.accounting import ReportMechanism, tight_composition, user_privacy

# --------------------------------------------------------------------- HybridDPUCB's sampler tail


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0, 15.0])
@pytest.mark.parametrize("rounds", [3, 10, 100])
def test_hybrid_ucb_delta_covers_the_tail_of_every_binary_depth(epsilon, rounds):
    # A reward at an arm's n-th pull (n not a power of 2) enters j = floor(log2 n) p-sums at ε/(2j),
    # plus one logarithmic increment at ε/2; the stated δ must cover the worst j an arm can be at.
    agent = HybridDPUCB(2, epsilon, seed=0)
    for _ in range(rounds):
        agent.update(agent.act(), 0.5)
    most = max(1, rounds.bit_length())
    for j in range(1, most + 1):
        entered = laplace_tail_delta(epsilon / 2.0) + j * laplace_tail_delta(epsilon / (2.0 * j))
        assert agent.privacy_spent[1] >= entered * (1.0 - 1e-12)


def test_hybrid_ucb_delta_at_a_large_epsilon_is_that_of_the_one_level_tree():
    # At ε = 15 a depth-1 p-sum (ε/2) has a tail about 20 times that of 2 p-sums at ε/4: the old
    # statement took the deepest tree only and understated δ.
    agent = HybridDPUCB(2, 15.0, seed=0)
    for _ in range(3):
        agent.update(agent.act(), 0.5)
    assert agent.privacy_spent == (15.0, 2.0 * laplace_tail_delta(7.5))


# ----------------------------------------------------------------------------- audit claims


class _NanClaim(UCB):
    name = "NanClaim"
    privacy_per_report = (float("nan"), 0.0)


class _NegativeDelta(UCB):
    name = "NegativeDelta"
    privacy_per_report = (1.0, -0.5)


class _BoolEpsilon(UCB):
    name = "BoolEpsilon"
    epsilon = True


class _StringEpsilon(UCB):
    name = "StringEpsilon"
    epsilon = "1"


class _NanSpent(UCB):
    name = "NanSpent"

    @property
    def privacy_spent(self) -> tuple[float, float]:
        return (float("nan"), 0.0)


@pytest.mark.parametrize(
    ("cls", "error", "match"),
    [
        (_NanClaim, ValueError, r"NanClaim\.privacy_per_report\[0\].*got nan"),
        (_NegativeDelta, ValueError, r"privacy_per_report\[1\].*\[0, 1\], got -0\.5"),
        (_BoolEpsilon, TypeError, r"BoolEpsilon\.epsilon.*real number, got True"),
        (_StringEpsilon, TypeError, r"StringEpsilon\.epsilon.*real number, got '1'"),
        (_NanSpent, ValueError, r"NanSpent\.privacy_spent\[0\].*got nan"),
    ],
)
def test_audit_refuses_a_claim_it_cannot_compare(cls, error, match):
    with pytest.raises(error, match=match):
        subject_for(cls, horizon=20)


def test_a_nan_claim_no_longer_passes_a_leaking_agent():
    # UCB adds no noise: the audit's bound is far above any real claim. With a NaN claim the old
    # verdict was "no violation found"; now the claim is refused before any run.
    with pytest.raises(ValueError, match="claimed epsilon"):
        audit(_NanClaim, horizon=20, runs=200)


def test_a_ready_subject_with_a_nan_claim_is_refused():
    base = subject_for("LaplaceCount", epsilon=1.0)
    with pytest.raises(ValueError, match="claimed epsilon of LaplaceCount"):
        Subject(**{**base.__dict__, "epsilon": math.nan})
    with pytest.raises(ValueError, match="claimed delta of LaplaceCount"):
        Subject(**{**base.__dict__, "delta": 1.5})


def test_claimed_number_keeps_real_claims():
    assert claimed_number("e", np.float64(0.5)) == 0.5
    assert claimed_number("e", 3) == 3.0
    assert math.isinf(claimed_number("e", math.inf))  # claims nothing: an inconclusive audit
    assert claimed_number("d", 1.0, top=1.0) == 1.0


# ------------------------------------------------------------------ composition of many reports


def _rr_curve(epsilon: float, k: int, eps_prime: float) -> float:
    """Exact delta(eps') of k-fold randomized response, over every count (log space)."""
    from scipy import special

    j = np.arange(k + 1, dtype=np.float64)
    log_p = special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1)
    log_p += j * math.log(special.expit(epsilon)) + (k - j) * math.log(special.expit(-epsilon))
    loss = epsilon * (2 * j - k)
    keep = loss > eps_prime
    return float(np.sum(np.exp(log_p[keep]) * -np.expm1(eps_prime - loss[keep])))


@pytest.mark.parametrize("kind", ["laplace", "randomized_response"])
def test_a_million_reports_compose_in_bounded_memory_and_validly(kind):
    # The PLD of 10**6 reports at ε = 0.01 needed a 36 GB array (a MemoryError deep in scipy.fft).
    eps, k, delta = 0.01, 10**6, 1e-6
    mech = ReportMechanism.laplace(eps) if kind == "laplace" else ReportMechanism.randomized_response(eps)
    composed, stated = tight_composition(mech, k, delta)
    assert stated == delta
    assert composed < 0.02 * k * eps  # far below the basic kε
    # valid: k-fold randomized response, the least private composition of k ε-DP reports, is within δ there
    assert _rr_curve(eps, k, composed) <= delta
    if kind == "randomized_response":  # exact for it: a little less ε is not enough
        assert _rr_curve(eps, k, 0.999 * composed) > delta
    assert user_privacy(mech, k, delta).tight == (composed, stated)
