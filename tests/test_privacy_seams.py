"""Privacy at the seams between the local-DP wrapper and the agent it wraps.

The users' side of :class:`agents.LDPWrapper` (its noise) must stay out of the server's hands, and
the wrapped agent must be able to take the reports the mechanism sends. No statistical test here
draws on chance: every check is exact for its seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from agents import DPSE, GAP, KLUCB, UCB, AdaPUCB, Exp3, LDPWrapper, ThompsonSampling
from agents.experiments.scorecard import PROBLEMS

EDGELESS = np.zeros((2, 2), dtype=bool)


class _SpyDPSE(DPSE):
    """DPSE that keeps the reports it is given (what the server sees)."""

    def _reset_state(self) -> None:
        super()._reset_state()
        self.reports: list[float] = []

    def update(self, action, reward, info=None):  # type: ignore[no-untyped-def]
        self.reports.append(float(reward))
        super().update(action, reward, info)


def test_same_seed_for_wrapper_and_a_private_agent_would_hand_the_server_the_users_noise() -> None:
    """DPSE (like GAP and GAPU) draws its noise from ``noise_generator(seed)``, the wrapper's users too.

    With one seed for both, the server-side agent holds a copy of the users' noise stream: it
    replays each user's uniform u and reads a 0/1 reward exactly whenever q <= u < p (the bit is
    then kept whatever it is), a share tanh(ε/2) of the rounds, although each report claims ε-LDP.
    The repro below shows that (exact, no chance involved: the replayed uniforms are the users'),
    and the wrapper must refuse such a seed.
    """
    eps, rounds = 1.0, 400
    rewards = np.random.default_rng(5).integers(0, 2, rounds).astype(np.float64)
    spy = _SpyDPSE(2, 10_000, eps, seed=None)
    wrapper = LDPWrapper(spy, "randomized_response", eps, seed=3)
    # What the collision gives the server: the users' uniforms, from a generator it would hold.
    server = np.random.Generator(type(wrapper.rng.bit_generator)())
    server.bit_generator.state = wrapper.rng.bit_generator.state
    for t in range(rounds):
        wrapper.update(wrapper.act(), rewards[t])
    uniforms = server.random(rounds)
    read = (uniforms >= expit(-eps)) & (uniforms < expit(eps))
    assert read.mean() > 0.35  # tanh(1/2) = 0.46 of the rounds
    np.testing.assert_array_equal(np.asarray(spy.reports)[read], rewards[read])  # read exactly
    with pytest.raises(ValueError, match=r"seed must .*DPSE"):
        LDPWrapper(DPSE(2, 10_000, eps, seed=3), "randomized_response", eps, seed=3)


def test_wrapper_refuses_seeds_whose_copies_share_a_wrapped_agents_noise_stream() -> None:
    eps = 1.0
    with pytest.raises(ValueError, match=r"seed must .*GAP"):  # wrapper copy 0 = seed 2 = GAP's copy 2
        LDPWrapper(GAP(2, 10_000, eps, EDGELESS, n_envs=4, seed=0), "randomized_response", eps, seed=2)
    with pytest.raises(ValueError, match=r"seed must .*GAP"):  # wrapper copy 3 = seed 3 = GAP's copy 0
        LDPWrapper(GAP(2, 10_000, eps, EDGELESS, n_envs=4, seed=3), "randomized_response", eps, seed=0)
    ok = LDPWrapper(GAP(2, 10_000, eps, EDGELESS, n_envs=4, seed=0), "randomized_response", eps, seed=4)
    with pytest.raises(ValueError, match=r"seed must .*GAP"):  # reset(seed=...) too, before anything changes
        ok.reset(seed=1)
    assert ok.seed == 4
    # An advanced generator still replays the stream from its start: the check is on the stream, not its state.
    dpse = DPSE(2, 10_000, eps, seed=9)
    dpse.rng.random(100)
    with pytest.raises(ValueError, match=r"seed must .*DPSE"):
        LDPWrapper(dpse, "randomized_response", eps, seed=9)
    # A non-private agent's generator is default_rng(seed), another stream: the same seed is fine.
    LDPWrapper(UCB(2, seed=3), "laplace", eps, seed=3)
    LDPWrapper(ThompsonSampling(2, seed=3), "randomized_response", eps, seed=3)
    LDPWrapper(DPSE(2, 10_000, eps, seed=None), "randomized_response", eps, seed=3)


@pytest.mark.parametrize(
    ("agent", "mechanism", "kwargs"),
    [
        (KLUCB(2), "laplace", {}),
        (Exp3(2, 100), "gaussian", {"delta": 0.1, "epsilon": 0.5}),
        (AdaPUCB(2, 1.0), "randomized_response", {"rr_output": "debias"}),
    ],
)
def test_wrapper_refuses_agents_whose_reward_bounds_the_reports_leave(agent, mechanism, kwargs) -> None:  # type: ignore[no-untyped-def]
    """KL-UCB, Exp3 and the central-DP agents need rewards in [0, 1], as Thompson sampling does.

    Before, the wrapper took them with Laplace, Gaussian or debiased reports and the run failed at
    the first report outside [0, 1] with an error about a reward the caller never gave.
    """
    kwargs = {"epsilon": 1.0, **kwargs}
    with pytest.raises(ValueError, match=r"mechanism must be 'randomized_response' with rr_output='bits'"):
        LDPWrapper(agent, mechanism, seed=0, **kwargs)
    bits = LDPWrapper(agent, "randomized_response", 1.0, seed=0)  # reports in {0, 1}: accepted and runs
    for r in np.random.default_rng(1).random(50):
        bits.update(bits.act(), float(r))


def test_the_scorecard_seeds_a_wrapped_users_agent_past_its_copies() -> None:
    """A user's agent of N copies (seeds s..s+N-1) is wrapped with users seeded from s + N on.

    With s + 1, copy i of the users would share copy i + 1's stream with the agent, and the
    wrapper refuses that; DPSE stands in for a user's agent that draws from its own seeds.
    """
    from agents.experiments.scorecard.task import _wrap

    problem = next(p for p in PROBLEMS if p.kind == "local")
    with pytest.raises(ValueError, match="seed must give the users' noise a stream of its own"):
        _wrap(DPSE(2, 1000, 1.0, n_envs=3, seed=7), problem, 7)
    wrapper = _wrap(DPSE(2, 1000, 1.0, n_envs=3, seed=7), problem, 7, 3)
    assert isinstance(wrapper, LDPWrapper)
