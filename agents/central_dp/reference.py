"""Plain-Python versions of the private agents of ``ucb.py`` and ``thompson.py`` in this package, one copy each.

Written after the algorithms as their docstrings state them, with the counters of
:mod:`bandit_envs.privacy.counters`, :func:`bandit_envs.privacy.counters.laplace_sum_bound`,
:func:`bandit_envs.privacy.randomized_response.bernoulli_mechanism` and a numpy generator per
copy (:func:`bandit_envs.privacy.streams.philox_noise_generator` of the copy's seed; the Thompson
samplers' posterior draws from :class:`agents.common.sampling.SamplerReference`). They make
the same draws in the same order as the compiled agents, so on the same rewards they release
the same statistics and choose the same arms (``tests/test_dp_agents.py``); indices are
computed in another order of floating-point operations, so a choice between two indices within
a few ulps of each other could differ (not seen in practice). Slow (a Python loop per round
and copy): the benchmark's plain per-copy loop (``benchmarks/bench_dp_agents.py``).

Each class has ``act() -> int`` and ``update(arm, reward)``; rewards must lie in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np

from agents.common.sampling import SamplerReference
from bandit_envs.privacy.counters import BinaryTreeCounter, HybridCounter, laplace_sum_bound, tree_depth
from bandit_envs.privacy.lattice import check_sampler, sum_grid
from bandit_envs.privacy.streams import philox_noise_generator

__all__ = [
    "first_argmax",
    "ReferenceAdaPUCB",
    "ReferenceDPThompsonSampling",
    "ReferenceHybridDPUCB",
    "ReferenceTreeDPUCB",
]


def first_argmax(values: list[float]) -> int:
    """First index of the largest value."""
    best = 0
    for k, v in enumerate(values):
        if v > values[best]:
            best = k
    return best


class ReferenceHybridDPUCB:
    """:class:`agents.HybridDPUCB` for one copy: a :class:`HybridCounter` per arm, one generator."""

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        alpha: float = math.sqrt(2.0),
        confidence_power: float = 4.0,
        bound: str = "exact",
        *,
        seed: int,
        sampler: str = "lattice",
    ) -> None:
        self.rng = philox_noise_generator(seed)
        self.counters = [HybridCounter(epsilon, self.rng, sampler=sampler) for _ in range(n_arms)]
        self.alpha, self.power, self.t = alpha, confidence_power, 0
        self.epsilon, self.bound = epsilon, bound

    def _width(self, count: int, scales: list[float], t: int) -> float:
        """B_i(t): the exact Laplace-sum bound, or the paper's v (c at a power of 2, else c (ln n + 1))."""
        if self.bound == "paper":
            c = math.sqrt(8.0) / self.epsilon * math.log(4.0 * t**4)
            return c if count & (count - 1) == 0 else c * (math.log(count) + 1.0)
        return laplace_sum_bound(scales, t ** (-self.power))

    def act(self) -> int:
        """The arm of round ``t + 1``."""
        t = self.t + 1
        for k, c in enumerate(self.counters):
            if c.count == 0:
                return k
        index = [
            c.value / c.count
            + self.alpha * math.sqrt(math.log(t) / c.count)
            + self._width(c.count, c.noise_scales(), t) / c.count
            for c in self.counters
        ]
        return first_argmax(index)

    def update(self, arm: int, reward: float) -> None:
        """Feed the reward to the arm's counter."""
        self.counters[arm].add(reward)
        self.t += 1


class ReferenceTreeDPUCB:
    """:class:`agents.TreeDPUCB` for one copy: a :class:`BinaryTreeCounter` per arm over the horizon."""

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        per_arm_budget: str = "split",
        width: str = "mt15",
        gamma: float | None = None,
        alpha: float = math.sqrt(2.0),
        confidence_power: float = 4.0,
        relaxation_epsilon: float | None = None,
        *,
        seed: int,
        sampler: str = "lattice",
    ) -> None:
        self.rng = philox_noise_generator(seed)
        eps_arm = epsilon / n_arms if per_arm_budget == "split" else epsilon
        eps_width = eps_arm if relaxation_epsilon is None else relaxation_epsilon
        self.counters = [BinaryTreeCounter(horizon, eps_arm, self.rng, sampler=sampler) for _ in range(n_arms)]
        gamma = (1.0 / horizon if horizon > 1 else 0.5) if gamma is None else gamma
        log_t = math.log(horizon)
        self.relaxation = 0.0
        if width == "mt15" and horizon > 1:
            self.relaxation = log_t**2 * math.log(n_arms * horizon * log_t / gamma) / eps_width
        self.width, self.alpha, self.power, self.t = width, alpha, confidence_power, 0
        assert self.counters[0].depth == tree_depth(horizon)

    def act(self) -> int:
        """The arm of round ``t + 1``."""
        t = self.t + 1
        for k, c in enumerate(self.counters):
            if c.count == 0:
                return k
        index = []
        for c in self.counters:
            extra = self.relaxation
            if self.width == "exact":
                extra += laplace_sum_bound(c.noise_scales(), t ** (-self.power))
            index.append(c.value / c.count + self.alpha * math.sqrt(math.log(t) / c.count) + extra / c.count)
        return first_argmax(index)

    def update(self, arm: int, reward: float) -> None:
        """Feed the reward to the arm's counter."""
        self.counters[arm].add(reward)
        self.t += 1


class _Epochs:
    """Per-arm doubling epochs (1, 1, 2, 4, ... rewards) with one Laplace release each (AdaP-UCB, DP-TS)."""

    def __init__(self, n_arms: int, epsilon: float, cumulative: bool, seed: int, sampler: str = "lattice") -> None:
        self.rng = philox_noise_generator(seed)
        self.eps, self.cumulative = epsilon, cumulative
        self.grid = 0.0 if check_sampler(sampler) == "float" else sum_grid(1.0 / epsilon, 1.0)
        self.pulls = [0] * n_arms
        self.epoch: list[list[float]] = [[] for _ in range(n_arms)]  # this epoch's rewards
        self.length = [1] * n_arms
        self.mean = [0.0] * n_arms  # last release
        self.size = [0] * n_arms  # rewards behind it
        self.noisy_sum = [0.0] * n_arms
        self.terms = [0] * n_arms
        self.t = 0

    def add(self, arm: int, reward: float) -> bool:
        """Add a reward; release the arm's epoch if it is full (then return True)."""
        self.pulls[arm] += 1
        self.epoch[arm].append(reward)
        self.t += 1
        if len(self.epoch[arm]) < self.length[arm]:
            return False
        total = 0.0
        for r in self.epoch[arm]:  # in order, as the kernel adds them
            total += r
        n = self.length[arm]
        if self.grid > 0.0:  # the lattice sampler: the epoch's sum on the grid, widened scale
            g = self.grid
            noise = self.rng.laplace(0.0, (1.0 + g) / self.eps)
            lattice_sum = float(np.rint(total / g) * g + np.rint(noise / g) * g)
            if self.cumulative:
                self.noisy_sum[arm] += lattice_sum
                self.terms[arm] += 1
                self.mean[arm] = self.noisy_sum[arm] / self.pulls[arm]
                self.size[arm] = self.pulls[arm]
            else:
                self.mean[arm] = lattice_sum / n
                self.size[arm] = n
        elif self.cumulative:
            self.noisy_sum[arm] += total + self.rng.laplace(0.0, 1.0 / self.eps)
            self.terms[arm] += 1
            self.mean[arm] = self.noisy_sum[arm] / self.pulls[arm]
            self.size[arm] = self.pulls[arm]
        else:
            self.mean[arm] = total / n + self.rng.laplace(0.0, 1.0 / (self.eps * n))
            self.size[arm] = n
        self.length[arm] = self.pulls[arm]
        self.epoch[arm] = []
        return True


class ReferenceAdaPUCB(_Epochs):
    """:class:`agents.AdaPUCB` for one copy: episodes that pull the chosen arm until its count doubles."""

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        alpha: float = 3.1,
        variant: str = "forgetful",
        *,
        seed: int,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, epsilon, variant == "cumulative", seed, sampler)
        self.alpha = alpha
        self.committed = -1

    def act(self) -> int:
        """The committed arm, or the arm of a new episode."""
        if self.committed >= 0:
            return self.committed
        t = self.t + 1
        untried = [k for k, n in enumerate(self.pulls) if n == 0]
        if untried:
            self.committed = untried[0]
            return self.committed
        index = []
        for k in range(len(self.pulls)):
            n = self.size[k]
            if self.cumulative:
                bound = laplace_sum_bound([1.0 / self.eps] * self.terms[k], t ** (-self.alpha))
            else:
                bound = self.alpha * math.log(t) / self.eps
            index.append(self.mean[k] + math.sqrt(self.alpha * math.log(2 * t) / (2 * n)) + bound / n)
        self.committed = first_argmax(index)
        return self.committed

    def update(self, arm: int, reward: float) -> None:
        """Add the reward to the arm's epoch; the episode ends with the committed arm's release."""
        if self.add(arm, reward) and arm == self.committed:
            self.committed = -1


class ReferenceDPThompsonSampling(_Epochs):
    """:class:`agents.DPThompsonSampling` for one copy: Gaussian samples around the per-epoch releases."""

    def __init__(self, n_arms: int, epsilon: float, *, seed: int, sampler: str = "lattice") -> None:
        super().__init__(n_arms, epsilon, False, seed, sampler)
        self.draws = SamplerReference(seed)

    def act(self) -> int:
        """An arm without a release, else the argmax of the Gaussian samples."""
        for k, n in enumerate(self.size):
            if n == 0:
                return k
        theta = []
        for k, n in enumerate(self.size):
            sd = math.sqrt(0.25 / n + 2.0 * (1.0 / (self.eps * n)) ** 2)
            theta.append(self.mean[k] + sd * self.draws.normal())
        return first_argmax(theta)

    def update(self, arm: int, reward: float) -> None:
        """Add the reward to the arm's epoch."""
        self.add(arm, reward)
