"""The agents that the refusal tests (``test_agent_inputs.py``) and the property tests (``test_properties.py``)
feed: one builder per configuration, on K = 3 arms (linear agents: D = 2 features), called with ``n_envs``
(None for one env).

Each file adds what is its own (the agents wrapped in LDPWrapper, other constructors); both check
with :func:`conftest.missing_agents` that every public agent has an entry. Imported as
``from agent_tables import ...`` (pytest puts ``tests/`` on the path, as for ``conftest``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import PATH3, public_agent_classes
from gymnasium import spaces

import agents
from agents.base import Agent

K = 3  # arms
D = 2  # features of the linear agents

Make = Callable[[int | None], Agent]


class StubModel:
    """The part of a stable-baselines3 model that SB3Agent uses with ``deterministic=True``."""

    action_space = spaces.Discrete(K)
    observation_space = spaces.Box(0.0, 1.0, shape=(D,))

    def predict(self, obs: Any, deterministic: bool = True) -> tuple[np.ndarray, None]:
        return np.zeros(np.shape(obs)[0], dtype=np.int64), None


def context_free(horizon: int) -> dict[str, Make]:
    """The context-free agents (one entry per distinct configuration); ``horizon`` where one is needed."""
    return {
        "Random": lambda n: agents.Random(K, n_envs=n, seed=0),
        "UCB": lambda n: agents.UCB(K, n_envs=n),
        "UCBN": lambda n: agents.UCBN(K, n_envs=n),
        "TS": lambda n: agents.ThompsonSampling(K, n_envs=n, seed=0),
        "TS-N": lambda n: agents.ThompsonSampling(K, side_observations=True, n_envs=n, seed=0),
        "SMUCB": lambda n: agents.SMUCB(K, n_envs=n),
        "FixedArm": lambda n: agents.FixedArm(K, 1, n_envs=n),
        "GAP": lambda n: agents.GAP(K, horizon, 1.0, PATH3, n_envs=n, seed=0),
        "GAPU": lambda n: agents.GAPU(K, horizon, 1.0, PATH3, n_envs=n, seed=0),
        "DPSE": lambda n: agents.DPSE(K, horizon, 1.0, n_envs=n, seed=0),
        "AAE": lambda n: agents.AAE(K, horizon, n_envs=n),
        "AAE-side": lambda n: agents.AAE(K, horizon, side_observations=True, n_envs=n),
        "AlphaSample": lambda n: agents.AlphaSample(K, horizon, n_envs=n, seed=0),
        "EpsilonGreedy": lambda n: agents.EpsilonGreedy(K, n_envs=n, seed=0),
        "EpsilonGreedy-decaying": lambda n: agents.EpsilonGreedy(K, schedule="decaying", c=0.1, n_envs=n, seed=0),
        "KLUCB": lambda n: agents.KLUCB(K, n_envs=n),
        "MOSS": lambda n: agents.MOSS(K, horizon, n_envs=n),
        "Exp3": lambda n: agents.Exp3(K, n_envs=n, seed=0),
        "Exp3SET": lambda n: agents.Exp3SET(K, PATH3, horizon, n_envs=n, seed=0),
        "Exp3IX": lambda n: agents.Exp3IX(K, PATH3, n_envs=n, seed=0),
    }


def _named(tables: tuple[dict[str, Make], ...]) -> set[str]:
    """The class names the builders of ``tables`` call (``Name(`` in their source)."""
    calls = re.compile(r"\b([A-Z]\w*)\(")
    return {name for table in tables for make in table.values() for name in calls.findall(inspect.getsource(make))}


def _build_by_default(cls: type[Agent]) -> Make:
    def make(n: int | None) -> Agent:
        try:
            return cls(K, n_envs=n, seed=0)  # type: ignore[call-arg]
        except TypeError as exc:
            raise AssertionError(
                f"{cls.__name__} cannot be built as {cls.__name__}(K, n_envs=n, seed=0) ({exc}); add a builder for it "
                "in tests/agent_tables.py"
            ) from None

    return make


def by_default(*tables: dict[str, Make]) -> dict[str, Make]:
    """Every public agent class that no builder of ``tables`` calls, built as ``Cls(K, n_envs=n, seed=0)``.

    So a new agent whose constructor needs nothing more is fed by the refusal, copy and fuzz tests
    with no edit here (and counted in :data:`UNIT` if it sets ``reward_bounds``); one that needs more
    arguments fails them with a sentence saying to add a builder.
    """
    named = _named(tables)
    new = [c for c in public_agent_classes() if c.__name__ not in named]
    UNIT.update(c.__name__ for c in new if getattr(c, "reward_bounds", None) is not None)
    return {c.__name__: _build_by_default(c) for c in new}


def linear() -> dict[str, Make]:
    """The linear contextual agents, on D features."""
    return {
        "LinUCB": lambda n: agents.LinUCB(D, n_envs=n),
        "LDPLinUCB": lambda n: agents.LDPLinUCB(D, 1.0, n_envs=n, seed=0),
        "LDPOLS": lambda n: agents.LDPOLS(D, 1.0, batch_size=2, n_envs=n, seed=0),
        "ShuffleLinUCB": lambda n: agents.ShuffleLinUCB(D, 1.0, batch_size=2, n_envs=n, seed=0),
    }


def private(horizon: int) -> dict[str, Make]:
    """The private agents of agents/central_dp/ and LDPThompsonSampling; rewards in [0, 1]."""
    return {
        "HybridDPUCB": lambda n: agents.HybridDPUCB(K, 1.0, n_envs=n, seed=0),
        "TreeDPUCB": lambda n: agents.TreeDPUCB(K, horizon, 1.0, n_envs=n, seed=0),
        "AdaPUCB": lambda n: agents.AdaPUCB(K, 1.0, n_envs=n, seed=0),
        "AdaPUCB-cumulative": lambda n: agents.AdaPUCB(K, 1.0, variant="cumulative", n_envs=n, seed=0),
        "DPThompsonSampling": lambda n: agents.DPThompsonSampling(K, 1.0, n_envs=n, seed=0),
        "LDPThompsonSampling": lambda n: agents.LDPThompsonSampling(K, 1.0, n_envs=n, seed=0),
        "PrePullGaussianTS": lambda n: agents.PrePullGaussianTS(K, 2, 2.0, n_envs=n, seed=0),
        "DPTSUCB": lambda n: agents.DPTSUCB(K, horizon, 0.5, n_envs=n, seed=0),
        # The budget-calibrated constructors of agents/central_dp/gaussian_ts.py.
        "PrePullGaussianTS-budget": lambda n: agents.PrePullGaussianTS.for_budget(K, horizon, 1.0, n_envs=n, seed=0),
        "DPTSUCB-budget": lambda n: agents.DPTSUCB.for_budget(K, horizon, 1.0, n_envs=n, seed=0),
    }


#: Agents whose guarantees need rewards in [0, 1] (their docstrings say so).
UNIT = {"TS", "TS-N", "GAP", "GAPU", "DPSE", "AAE", "AAE-side", "AlphaSample", "KLUCB", "Exp3", "Exp3SET", "Exp3IX"}
UNIT |= set(private(1))
#: Agents that sum each arm's rewards, which must then lie in [-1e289, 1e289] (their sums stay finite).
SUMMING = {"UCB", "UCBN", "SMUCB", "EpsilonGreedy", "EpsilonGreedy-decaying", "MOSS"}
SUMMING_REWARDS = (-1e289, 1e289)
#: Agents that read info["observed_rewards"].
SIDE = {"UCBN", "TS-N", "GAP", "GAPU", "AAE-side", "AlphaSample", "Exp3SET", "Exp3IX"}
LINEAR = set(linear())
