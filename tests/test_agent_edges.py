"""Edge cases of the agents' constructors and public helpers: one sentence naming the argument, never a deep error.

* Counts beyond the floats (``10**400`` arms, copies or features) are refused by the state-size check,
  not by an ``OverflowError`` of its arithmetic.
* The elimination agents' default confidence 1/T (AlphaSample's 1/(2KT)) for a horizon past the floats.
* Setting ``t`` of the packed-mean agents (UCB, UCB-N, ε-greedy, KL-UCB, MOSS, SM-UCB), ``Exp3.eta_at``
  and the linear agents' ``schedule``/``shift`` take integers in the range their kernels count in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from agent_tables import StubModel
from conftest import PATH3

import agents
from agents.base import INT64_MAX, Agent

HUGE = 10**400  # an int beyond the floats: float(HUGE) raises OverflowError


@pytest.mark.parametrize(
    "make",
    [
        lambda: agents.UCB(HUGE),
        lambda: agents.UCB(3, n_envs=HUGE),
        lambda: agents.ThompsonSampling(HUGE),
        lambda: agents.Exp3SET(HUGE, PATH3, 10),
        lambda: agents.GAP(HUGE, 10, 1.0, PATH3),
        lambda: agents.AAE(3, 10, n_envs=HUGE),
        lambda: agents.SMUCB(HUGE),
        lambda: agents.LinUCB(HUGE),
        lambda: agents.LinUCB(2, n_envs=HUGE),
        lambda: agents.LDPOLS(HUGE, 1.0),
        lambda: agents.ShuffleLinUCB(2, 1.0, n_envs=HUGE),
    ],
)
def test_counts_beyond_the_floats_are_refused_by_the_state_size_check(make: Callable[[], Agent]) -> None:
    with pytest.raises(ValueError, match=r"=100000000000000000\.\.\.0+ .*would need more bytes than a float counts"):
        make()


@pytest.mark.parametrize(
    ("make", "name", "formula"),
    [
        (lambda h: agents.GAP(3, h, 1.0, PATH3, seed=0), "delta", "1/T"),
        (lambda h: agents.GAPU(3, h, 1.0, PATH3, seed=0), "delta", "1/T"),
        (lambda h: agents.DPSE(3, h, 1.0, seed=0), "beta", "1/T"),
        (lambda h: agents.AAE(3, h), "delta", "1/T"),
        (lambda h: agents.AlphaSample(3, h, seed=0), "delta", "1/(2KT)"),
    ],
)
def test_elimination_default_confidence_past_the_floats(make: Callable[[int], Agent], name: str, formula: str) -> None:
    with pytest.raises(
        ValueError, match=rf"^{name} must be given .* its default {re.escape(formula)} is 0 as a float\.$"
    ):
        make(HUGE)
    # AlphaSample's 2KT passes the floats first (K = 3, T = 1e308), where 1.0 / (2KT) raised OverflowError.
    if formula == "1/(2KT)":
        with pytest.raises(ValueError, match="^delta must be given"):
            make(10**308)
    # The defaults of the horizons a float holds are unchanged: 1/T exactly as Python divides.
    agent: Any = make(10**6)
    assert getattr(agent, name) == (1.0 / (6 * 10**6) if formula == "1/(2KT)" else 1.0 / 10**6)


def test_elimination_huge_horizon_with_a_given_confidence_still_plays() -> None:
    agent = agents.AAE(3, HUGE, delta=0.01)
    arm = agent.act()
    agent.update(arm, 0.5)
    assert agent.delta == 0.01


MEAN_AGENTS: list[Callable[[], Any]] = [
    lambda: agents.UCB(3),
    lambda: agents.UCBN(3),
    lambda: agents.EpsilonGreedy(3, seed=0),
    lambda: agents.KLUCB(3),
    lambda: agents.MOSS(3, 100),
    lambda: agents.SMUCB(3),
]


def _feed(agent: Any, arm: Any, reward: Any) -> None:
    """One update, with the side observations UCB-N reads (every arm revealed, with ``reward``)."""
    info = None
    if isinstance(agent, agents.UCBN):
        info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.full(3, float(reward))}
    agent.update(arm, reward, info)


@pytest.mark.parametrize("make", MEAN_AGENTS)
@pytest.mark.parametrize(
    ("value", "error", "pattern"),
    [
        (-1, ValueError, r"^t must be an integer in \[0, 9,223,372,036,854,775,806\] .* got -1\.$"),
        (2**63, ValueError, r"^t must be an integer in \[0, .* got 9223372036854775808\.$"),
        (1.5, TypeError, r"^t must be an integer, got 1\.5 \(float\)\.$"),
        ("a", TypeError, r"^t must be an integer, got 'a' \(str\)\.$"),
        (None, TypeError, r"^t must be an integer, got None"),
    ],
)
def test_setting_t_refuses_what_the_kernels_cannot_take(
    make: Callable[[], Any], value: Any, error: type[Exception], pattern: str
) -> None:
    agent = make()
    for arm in range(3):
        _feed(agent, arm, 0.5)
    with pytest.raises(error, match=pattern):
        agent.t = value
    assert agent.t == 3  # unchanged


@pytest.mark.parametrize("make", MEAN_AGENTS)
def test_setting_t_takes_integers_and_plays_as_the_general_path(make: Callable[[], Any]) -> None:
    agent, other = make(), make()
    obs = 0.5 if isinstance(agent, agents.SMUCB) else None
    for arm, reward in [(0, 0.25), (1, 0.75), (2, 0.5)]:
        _feed(agent, arm, reward)
        _feed(other, np.int32(arm), np.float32(reward))  # the checked path (exact floats)
    agent.t = np.int64(7)
    assert type(agent.t) is int and agent.t == 7
    other.t = 7
    assert agent.act(obs) == other.act(obs)
    agent.t = INT64_MAX - 1  # the largest: round t + 1 still fits in int64
    assert 0 <= agent.act(obs) < 3


def test_exp3_eta_at_takes_rounds_from_one() -> None:
    agent = agents.Exp3(3)
    assert agent.eta_at(1) == np.sqrt(np.log(3) / 3)
    with pytest.raises(ValueError, match=r"^t must be an integer >= 1, got 0\.$"):
        agent.eta_at(0)
    with pytest.raises(ValueError, match=r"^t must be an integer >= 1, got -1\.$"):
        agent.eta_at(-1)
    with pytest.raises(TypeError, match=r"^t must be an integer, got 1\.5 \(float\)\.$"):
        agent.eta_at(1.5)
    assert 0.0 < agent.eta_at(HUGE) < 1e-199  # sqrt(ln K / (t K)) past the floats
    assert agents.Exp3(3, eta=0.2).eta_at(HUGE) == 0.2


@pytest.mark.parametrize(
    "make",
    [
        lambda: agents.LinUCB(2),
        lambda: agents.LDPLinUCB(2, 1.0, seed=0),
        lambda: agents.LDPOLS(2, 1.0, seed=0),
        lambda: agents.ShuffleLinUCB(2, 1.0, seed=0),
    ],
)
def test_linear_schedule_takes_the_rounds_the_server_counts(make: Callable[[], Any]) -> None:
    agent = make()
    assert len(agent.schedule(INT64_MAX)) == 3
    with pytest.raises(ValueError, match=r"^t must be an integer in \[1, 9,223,372,036,854,775,807\] .*int64"):
        agent.schedule(2**63)
    with pytest.raises(ValueError, match=r"^t must be an integer in \[1, .* got 0\.$"):
        agent.schedule(0)
    if hasattr(agent, "shift"):
        assert agent.shift(0) == agent.reg
        with pytest.raises(ValueError, match=r"^t must be an integer in \[0, .*int64\), got 100000000000000000"):
            agent.shift(HUGE)


def test_aae_takes_numpy_bools_for_side_observations_as_thompson_sampling_does() -> None:
    agent = agents.AAE(3, 100, side_observations=np.True_)
    assert agent.side_observations is True
    assert agents.ThompsonSampling(3, side_observations=np.True_).side_observations is True
    with pytest.raises(TypeError, match=r"^side_observations must be True or False, got 1 \(int\)\.$"):
        agents.AAE(3, 100, side_observations=1)


class _EpsilonGreedyModel(StubModel):
    """A DQN-like model as SB3Agent recognises one: ``predict`` and ``exploration_rate``, no ``policy``."""

    exploration_rate = 0.5


@pytest.mark.parametrize("n_envs", [None, 3])
def test_sb3_agent_acts_with_the_exploring_models_its_constructor_takes(n_envs: int | None) -> None:
    agent = agents.SB3Agent(_EpsilonGreedyModel(), deterministic=False, n_envs=n_envs, seed=3)
    obs = np.full((2,) if n_envs is None else (n_envs, 2), 0.5)
    arms = [np.asarray(agent.act(obs)) for _ in range(20)]
    assert all(((a >= 0) & (a < 3)).all() for a in arms)
    assert any((a != 0).any() for a in arms)  # explored: the greedy arm of the stub is 0
