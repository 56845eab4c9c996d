"""Plain-Python version of :class:`agents.LDPThompsonSampling` (``agents/local_dp/thompson.py``), one copy.

It makes the same draws in the same order as the compiled agent (report noise from
:func:`bandit_envs.privacy.streams.philox_noise_generator` of the copy's seed, posterior draws from
:class:`agents.common.sampling.SamplerReference`), so on the same rewards it sees the same reports
and chooses the same arms (``tests/test_dp_agents.py``).
"""

from __future__ import annotations

import numpy as np

from agents.central_dp.reference import first_argmax
from agents.common.sampling import SamplerReference
from bandit_envs.privacy.randomized_response import bernoulli_mechanism
from bandit_envs.privacy.streams import philox_noise_generator

__all__ = ["ReferenceLDPThompsonSampling"]


class ReferenceLDPThompsonSampling:
    """:class:`agents.LDPThompsonSampling` for one copy: Beta-Bernoulli TS on Bernoulli-mechanism reports."""

    def __init__(self, n_arms: int, epsilon: float, *, seed: int) -> None:
        self.rng = philox_noise_generator(seed)
        self.draws = SamplerReference(seed)
        self.eps = epsilon
        self.successes = [0] * n_arms
        self.failures = [0] * n_arms

    def act(self) -> int:
        """The argmax of the Beta samples."""
        theta = self.draws.betas([(s + 1.0, f + 1.0) for s, f in zip(self.successes, self.failures, strict=True)])
        return first_argmax(theta)

    def update(self, arm: int, reward: float) -> None:
        """Count the user's randomized-response report of the reward."""
        report = int(bernoulli_mechanism(np.array([reward]), self.eps, self.rng)[0])
        if report:
            self.successes[arm] += 1
        else:
            self.failures[arm] += 1
