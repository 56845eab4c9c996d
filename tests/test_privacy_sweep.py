"""Privacy sweep: regression tests for defects where a stated guarantee did not hold.

Each test fails on the code before its fix. Statistical checks use fixed seeds and tolerances far
from the values a defect gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from agents import GAP, UCB, LDPWrapper
from agents.audit import VIOLATION, audit
from agents.audit.subjects import simulates_its_steps
from bandit_envs.privacy import gaussian_delta
from bandit_envs.privacy.accounting import ReportMechanism

# --- the audit plays a subclass of an elimination agent as it really acts ----------------------


class _LeakyGAP(GAP):
    """GAP whose every action after the first is the raw reward (> 1/2) of the round before; claims ε-DP."""

    name = "LeakyGAP"

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        feedback_graph: Any,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        self._last: npt.NDArray[np.int64] | None = None
        super().__init__(n_arms, horizon, epsilon, feedback_graph, n_envs=n_envs, seed=seed)

    def _reset_state(self) -> None:
        super()._reset_state()
        self._last = None

    def act(self, obs: Any = None) -> Any:
        action = super().act(obs)
        return action if self._last is None else self._out(self._last)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        super().update(action, reward, info)
        self._last = (np.atleast_1d(np.asarray(reward, dtype=np.float64)) > 0.5).astype(np.int64)

    @property
    def privacy_spent(self) -> tuple[float, float]:
        return self.epsilon, 0.0


def test_audit_of_an_elimination_subclass_sees_its_overridden_act() -> None:
    """A GAP subclass whose act plays the last raw reward is a violation (the compiled simulate hid it)."""
    result = audit(_LeakyGAP, epsilon=1.0, runs=200, seed=0, horizon=6)
    assert result.verdict == VIOLATION
    assert result.epsilon_lower > 1.0


def test_only_elimination_agents_as_defined_there_are_audited_on_the_simulator() -> None:
    """The compiled simulator stands in for act/update only where they are agents.elimination's own."""
    graph = np.zeros((2, 2), dtype=bool)
    assert simulates_its_steps(GAP(2, 100, 1.0, graph, seed=0))
    assert not simulates_its_steps(_LeakyGAP(2, 100, 1.0, graph, seed=0))
    patched = GAP(2, 100, 1.0, graph, seed=0)
    patched.act = lambda obs=None: 0  # type: ignore[method-assign]
    assert not simulates_its_steps(patched)


# --- LDPWrapper: the users' noise is never a stream the server side holds, however deep -----------


def test_ldp_wrapper_refuses_the_seed_of_a_nested_wrapped_agents_noise() -> None:
    """An outer wrapper seeded as the GAP inside an inner wrapper would share GAP's noise stream."""
    gap = GAP(2, 100_000, 1.0, np.zeros((2, 2), dtype=bool), seed=5)
    inner = LDPWrapper(gap, "randomized_response", seed=7)
    with pytest.raises(ValueError, match="seed must give the users' noise a stream of its own"):
        LDPWrapper(inner, "randomized_response", seed=5)
    outer = LDPWrapper(inner, "randomized_response", seed=9)
    with pytest.raises(ValueError, match="seed must give the users' noise a stream of its own"):
        outer.reset(seed=5)


# --- the accountant never states a Gaussian report as (ε, 0)-DP ----------------------------------


def test_a_gaussian_report_with_delta_zero_is_refused() -> None:
    """Gaussian noise is never (ε, 0)-DP: its exact δ at ε is positive, so a claimed δ = 0 is refused."""
    assert gaussian_delta(1.0, 1.0, 1.0) > 0.1  # σ = Δ at ε = 1: δ ≈ 0.127, far from 0
    with pytest.raises(ValueError, match=r"^delta must be at least 0\.126\d*, the exact delta"):
        ReportMechanism.gaussian(1.0, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="delta must be > 0 for the gaussian mechanism"):
        ReportMechanism("gaussian", 1.0, 0.0, 1.0)


def test_a_gaussian_report_claiming_less_than_its_exact_delta_is_refused() -> None:
    """A claimed δ below the exact δ of σ at ε is refused; the exact δ itself, and anything above it, is kept."""
    exact = gaussian_delta(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"^delta must be at least 0\.126\d*, .* got 0\.1\.$"):
        ReportMechanism.gaussian(1.0, 1.0, 1.0, 0.1)
    assert ReportMechanism.gaussian(1.0, 1.0, 1.0, exact).delta == exact
    assert ReportMechanism.gaussian(1.0, 1.0, 1.0, 0.2).delta == 0.2
    # the library's own callers state exact or larger deltas (the wrapper's classic calibration here)
    mech = LDPWrapper(UCB(3), "gaussian", 0.5, delta=1e-5, seed=9).report_mechanism
    assert mech.delta >= gaussian_delta(mech.noise_multiplier, mech.epsilon, 1.0)
