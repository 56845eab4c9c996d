"""The cap on epsilon (``MAX_EPSILON``) and the bounded numpy samplers it is derived from."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import bandit_envs.privacy as P
from agents import DPSE, GAP
from agents.audit import subject_for
from agents.central_dp.ucb import HybridDPUCB
from agents.linear import LDPOLS, LDPLinUCB, ShuffleLinUCB
from agents.local_dp.thompson import LDPThompsonSampling
from agents.local_dp.wrapper import LDPWrapper
from agents.stochastic.index import UCB
from bandit_envs.privacy._checks import LAPLACE_SAMPLER_BOUND, MAX_EPSILON, laplace_tail_delta
from bandit_envs.privacy.accounting import ReportMechanism
from bandit_envs.privacy.counters import BinaryTreeCounter

EPS = 15.5  # just above the cap
G = ~np.eye(3, dtype=bool)


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


ENTRY_POINTS: dict[str, Callable[[float], Any]] = {
    "laplace_mechanism": lambda e: P.laplace_mechanism(np.zeros(3), e, _rng()),
    "laplace_mechanism float": lambda e: P.laplace_mechanism(np.zeros(3), e, _rng(), sampler="float"),
    "gaussian_mechanism": lambda e: P.gaussian_mechanism(np.zeros(3), e, 1e-5, _rng()),
    "randomized_response": lambda e: P.randomized_response(np.zeros(3, dtype=int), e, _rng()),
    "bernoulli_mechanism": lambda e: P.bernoulli_mechanism(np.zeros(3), e, _rng()),
    "rr_debias": lambda e: P.rr_debias(np.zeros(3), e),
    "l2_ball_mechanism": lambda e: P.l2_ball_mechanism(np.zeros(3), e, _rng()),
    "ReportMechanism.laplace": lambda e: ReportMechanism.laplace(e),
    "ReportMechanism.randomized_response": lambda e: ReportMechanism.randomized_response(e),
    "BinaryTreeCounter": lambda e: BinaryTreeCounter(8, e, _rng()),
    "shuffle_epsilon local_epsilon": lambda e: P.shuffle_epsilon(e, 100, 1e-6),
    "LDPWrapper laplace": lambda e: LDPWrapper(UCB(3), epsilon=e),
    "LDPWrapper randomized_response": lambda e: LDPWrapper(UCB(3), epsilon=e, mechanism="randomized_response"),
    "LDPThompsonSampling": lambda e: LDPThompsonSampling(3, e),
    "HybridDPUCB": lambda e: HybridDPUCB(3, e),
    "GAP": lambda e: GAP(3, 100, e, G),
    "DPSE": lambda e: DPSE(3, 100, e),
    "LDPOLS": lambda e: LDPOLS(2, e),
    "ShuffleLinUCB": lambda e: ShuffleLinUCB(2, e),
    "audit subject_for": lambda e: subject_for("GAP", epsilon=e),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_epsilon_above_the_cap_is_refused_in_one_sentence(name: str) -> None:
    with pytest.raises(ValueError) as info:
        ENTRY_POINTS[name](EPS)
    message = str(info.value)
    assert re.search(r"epsilon must be in \(0, 15\], got 15\.5: ", message), message
    assert "bounded noise samplers" in message and message.count(". ") == 0 and message.endswith(".")


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_epsilon_at_the_cap_is_accepted(name: str) -> None:
    ENTRY_POINTS[name](MAX_EPSILON)


def test_ldp_linucb_takes_any_epsilon_and_states_the_delta_that_holds() -> None:
    # Its (epsilon, delta) per report adds the normal sampler's tail event, so it holds at any
    # epsilon: negligible at the cap, about 1 (no guarantee) at the authors' epsilon = 8e5.
    eps, delta = LDPLinUCB(2, MAX_EPSILON, 0.1, sigma_method="analytic").privacy_per_report
    assert eps == MAX_EPSILON and 0.1 <= delta <= 0.1 + 1e-12
    for method in ("classic", "analytic"):
        eps, delta = LDPLinUCB(2, 8e5, 0.1, sigma_method=method).privacy_per_report
        assert eps == 8e5 and delta > 0.99


def test_cli_audit_refuses_epsilon_above_the_cap(capsys: pytest.CaptureFixture[str]) -> None:
    from banditlab import main

    assert main(["audit", "GAP", "--epsilon", "16"]) != 0
    assert "epsilon must be in (0, 15], got 16.0" in capsys.readouterr().err


def test_the_laplace_sampler_bound() -> None:
    # numpy's Laplace: b log(2U) or -b log(2 - 2U), U a multiple of 2**-53, so |N| <= 52 ln 2 b.
    assert LAPLACE_SAMPLER_BOUND == pytest.approx(36.0437, abs=1e-4)
    assert laplace_tail_delta(MAX_EPSILON) == pytest.approx(3.63e-10, rel=1e-2)
    draws = np.random.default_rng(1).laplace(0.0, 1.0, size=4_000_000)
    assert np.abs(draws).max() < LAPLACE_SAMPLER_BOUND + 1e-9


def test_the_laplace_tail_event_has_the_stated_probability() -> None:
    # The raw sampler (not the refused API) at epsilon = 30, b = 1: the neighbour x' = 30 has
    # outputs >= 30 - B, and x = 0 lands below that with probability ~ e**(30 - B) / 2 = 1.2e-3.
    eps, n = 30.0, 2_000_000
    draws = np.random.default_rng(2).laplace(0.0, 1.0, size=n)
    frequency = float(np.mean(draws < eps - LAPLACE_SAMPLER_BOUND))
    expected = laplace_tail_delta(eps) - 0.5 * math.exp(-LAPLACE_SAMPLER_BOUND)
    sd = math.sqrt(expected / n)
    assert abs(frequency - expected) < 5 * sd, (frequency, expected)
    neighbour = eps + np.random.default_rng(3).laplace(0.0, 1.0, size=n)
    assert neighbour.min() >= eps - LAPLACE_SAMPLER_BOUND  # the event has probability 0 there


def test_randomized_response_at_the_cap_keeps_a_random_flip() -> None:
    from scipy.special import expit

    flip = 1.0 - float(expit(MAX_EPSILON))
    exact = math.exp(-MAX_EPSILON) / (1.0 + math.exp(-MAX_EPSILON))
    assert abs(flip - exact) / exact < 1e-9
    assert float(expit(37.0)) == 1.0  # why larger epsilon is refused
