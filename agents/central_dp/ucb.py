r"""Central-DP UCB agents: HybridDPUCB, TreeDPUCB (continual-release counters) and AdaPUCB (per-epoch releases).

All three are ε-DP at the **event level**: neighbouring reward sequences differ in one round's
reward r_t ∈ [0, 1] (``privacy_unit``), and the guarantee covers the arm sequence and every
released statistic. Each reward enters only the statistics of the arm pulled in its round;
each arm's statistics are an ε-DP mechanism of that arm's reward stream, and the streams are
disjoint, so the mechanisms compose in parallel; the arm choices are post-processing of the
releases (the argument holds for adaptively chosen arms because the noise is independent of
the data). Rewards outside [0, 1] are refused (the sensitivities assume the range).

Noise: per-copy streams (:mod:`agents.central_dp.base`): copy i of a batch seeded with s draws exactly
as a single agent seeded with s + i. Floating-point Laplace sampling leaks through low-order
bits (Mironov, CCS 2012): fine for research, not for production.

Private state: everything but the releases (the exact sums inside the counters and epochs, the
streams' states and the seeds) is the curator's; publish the actions or the releases, not the
agent object.

Status tags: [V-paper] checked in the paper's text; [V-code] in a public implementation;
[R] reconstructed, not checked; [P] our choice.

The compiled steps are in :mod:`agents.central_dp.kernels`; plain-Python versions of the agents that
make the same releases and choices are in :mod:`agents.central_dp.reference`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import types

from agents.base import (
    FLOATS_1D,
    FLOATS_2D,
    INTS_1D,
    INTS_2D,
    WORDS_2D,
    SingleEnvKernel,
    check_choice,
    check_float,
    check_int,
)
from agents.central_dp import gaussian_kernels, kernels
from agents.central_dp.base import (
    CopiedState,
    StreamPrivateAgent,
    check_epsilon,
)
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.privacy._checks import laplace_tail_delta
from bandit_envs.privacy.counters import hybrid_increment, tree_depth, tree_increment

__all__ = ["AdaPUCB", "HybridDPUCB", "TreeDPUCB"]

SQRT2 = math.sqrt(2.0)
#: Tree levels a HybridDPUCB allocates at first (it adds levels as pull counts grow).
_FIRST_LEVELS = 8
_F64, _BOOL = types.float64, types.boolean
#: The epoch agents' update and AdaP-UCB's choice, through their compiled entry points.
_EPOCH_UPDATE = SingleEnvKernel(
    kernels.epoch_update,
    (
        INTS_2D, INTS_2D, FLOATS_2D, INTS_2D, FLOATS_2D, INTS_2D, FLOATS_2D, INTS_2D, INTS_1D, INTS_1D, INTS_1D,
        FLOATS_1D, _F64, _F64, _BOOL, WORDS_2D,
    ),
)  # fmt: skip
_ADAP_CHOOSE = SingleEnvKernel(
    kernels.adap_choose, (INTS_2D, FLOATS_2D, INTS_2D, INTS_2D, INTS_1D, _F64, _F64, _BOOL, _F64, INTS_1D)
)
_FLOATS_3D, _FLOATS_4D = types.Array(types.float64, 3, "C"), types.Array(types.float64, 4, "C")
#: The counter agents' choice and updates, through their compiled entry points (no argument typing a call).
_BOUND_CHOOSE = SingleEnvKernel(kernels.bound_choose, (_FLOATS_3D, _F64, _F64, _F64, _F64, INTS_1D))
_PAPER_CHOOSE = SingleEnvKernel(gaussian_kernels.hybrid_paper_choose, (_FLOATS_3D, _F64, _F64, _F64, INTS_1D))
_HYBRID_UPDATE = SingleEnvKernel(
    kernels.hybrid_update,
    (_FLOATS_3D, _FLOATS_4D, _FLOATS_3D, INTS_1D, FLOATS_1D, _F64, _F64, WORDS_2D, FLOATS_1D),
)
_TREE_UPDATE = SingleEnvKernel(
    kernels.tree_update, (_FLOATS_3D, _FLOATS_4D, INTS_1D, FLOATS_1D, _F64, _F64, WORDS_2D, FLOATS_1D)
)


def _grown(psums: FloatArray, needed: int) -> FloatArray:
    """``psums`` (B, K, L, 2) with at least ``needed`` levels (8 more than needed when it grows)."""
    levels = psums.shape[2]
    if needed <= levels:
        return psums
    grown = np.zeros((psums.shape[0], psums.shape[1], needed + 8, 2))
    grown[:, :, :levels] = psums
    return grown


def _check_alpha(value: Any) -> float:
    alpha = check_float("alpha", value, low=0.0, low_open=True)
    if alpha > 1e100:
        raise ValueError(f"alpha must be at most 1e100 (alpha**2 ln t must stay finite), got {value!r}.")
    return alpha


def _check_power(value: Any) -> float:
    return check_float("confidence_power", value, low=0.0, high=1e3, low_open=True)


class _CounterAgent(StreamPrivateAgent):
    """A private UCB whose arms each release a running noisy sum after every pull (a continual-release counter).

    ``_stats[:, kernels.PULLS]`` and ``_stats[:, kernels.RELEASE]`` hold, per copy and arm, the
    pulls and the counter's last release; subclasses say what the counter is.
    """

    _stats: FloatArray

    @property
    def counts(self) -> IntArray:
        """(B, K) pulls per arm."""
        return self._stats[:, kernels.PULLS].astype(np.int64)

    @property
    def released(self) -> FloatArray:
        """(B, K) the counters' last releases Ŝ (noisy reward sums; 0 before the first pull)."""
        return self._stats[:, kernels.RELEASE].copy()

    @property
    def released_sums(self) -> FloatArray:
        """(B, K) :attr:`released`: the counters' last releases."""
        return self.released


class HybridDPUCB(_CounterAgent):
    r"""DP-UCB with one hybrid counter per arm (DP-UCB-BOUND style, Tossou & Dimitrakakis 2016) [R/P].

    Each arm's rewards go to a hybrid continual-release counter
    (:class:`bandit_envs.privacy.counters.HybridCounter`, Chan, Shi & Song 2011, §4), which
    releases a noisy sum Ŝ_i after every pull of arm i. After every arm was pulled once (lowest
    index first), round t plays

    .. math:: \arg\max_i \frac{\hat S_i}{n_i} + \alpha\sqrt{\frac{\ln t}{n_i}} + \frac{B_i(t)}{n_i},

    with n_i the pulls of arm i and B_i(t) a bound on the Laplace noise inside Ŝ_i, chosen by
    ``bound``:

    * ``"exact"`` (default) [P]: the bound of
      :func:`bandit_envs.privacy.counters.laplace_sum_bound` for the noise terms actually in the
      release, at confidence 1 − t^{-p} (p = ``confidence_power``): k + 1 logarithmic terms of
      scale 2/ε and popcount(n_i − 2^k) binary p-sums of scale 2k/ε, k = ⌊log₂ n_i⌋ (the
      binary part's tree has k levels for the 2^k − 1 items it counts; the item 2^{k+1} goes to
      the logarithmic part). Proven: each release's noise is below B_i(t) with probability at
      least 1 − t^{-p}. Conservative: 2 to 2.6 times ``"paper"``'s width at ε = 1, T = 10⁴.
    * ``"paper"`` [V-code]: B_i(t) = v = c·(ln n_i + 1), c = (√8/ε)·ln(4t⁴), and v = c when
      n_i is a power of 2 (the release then holds only the logarithmic part's noise):
      DP-UCB-BOUND's width as a public implementation of it writes it (Tossou & Dimitrakakis
      2016, with the hybrid mechanism's error bound of Chan, Shi & Song 2011); it takes t as
      the rounds completed, we take the round being chosen (one more). The paper
      states it as holding with probability 1 − t⁻⁴; we did not re-derive that (our exact
      bound for the same noise is larger), so treat the confidence statement as the paper's,
      not this library's. ``confidence_power`` is not used (the paper fixes t⁻⁴). Measured on
      K = 5 Bernoulli arms with means 0.9, 0.8, …, 0.5, T = 10⁴, ε = 1, 50 seeds: regret
      860 ± 11 against ``"exact"``'s 1254 ± 9.

    The privacy guarantee is the same for both: the width is post-processing of the releases.
    The structure (hybrid counter per arm, UCB index widened by a high-probability bound on the
    counter's noise, confidence t⁻⁴) is [R]; α = √2 gives the UCB1 term √(2 ln t / n).

    Privacy: ε-DP, event level (module docstring). Each arm's counter is ε-DP for its stream
    (each half of it ε/2-DP; an item enters one logarithmic increment and at most k p-sums of
    Laplace(2k/ε)); streams are disjoint; the index and the arms are post-processing.

    Noise: one Laplace draw per update of every copy (the counter's release for that item), from
    the copy's stream, in the order :class:`~bandit_envs.privacy.counters.HybridCounter` draws.
    Sampler: the released sums :attr:`released` use the lattice sampler by default (every
    p-sum and logarithmic increment on the grid ``sum_grid(1/ε, 1)``, scales widened by
    ``1 + grid``: ε-DP up to the sampler's tail δ_s of ``privacy_spent``), or raw float noise
    with ``sampler="float"``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        Privacy budget ε of the agent.
    alpha
        UCB coefficient (> 0); √2 (default) is UCB1's √(2 ln t / n).
    confidence_power
        p in (0, 1000]: the ``"exact"`` noise bound holds with probability 1 − t^{-p}. Default 4.
    bound
        ``"exact"`` (default) or ``"paper"``: the noise bound B_i(t) of the index (above).
    n_envs, seed, sampler
        Copies run in lock-step, copy 0's noise seed (copy i: seed + i) and ``"lattice"`` (default)
        or ``"float"`` releases, as for every :class:`~agents.central_dp.base.StreamPrivateAgent`.

    Attributes
    ----------
    counts, released
        (B, K) pulls and released noisy sums Ŝ per arm.

    References
    ----------
    .. [1] A. C. Y. Tossou, C. Dimitrakakis, "Algorithms for Differentially Private Multi-Armed
       Bandits", AAAI 2016 (arXiv:1511.08681).
    .. [2] T.-H. H. Chan, E. Shi, D. Song, "Private and continual release of statistics", ACM
       TISSEC 14(3), 2011.
    """

    name = "Hybrid-DP-UCB"

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        alpha: float = SQRT2,
        confidence_power: float = 4.0,
        bound: str = "exact",
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        self.alpha = _check_alpha(alpha)
        self.confidence_power = _check_power(confidence_power)
        self._set_sampler(sampler, self.epsilon)
        self.bound = check_choice("bound", bound, ("exact", "paper"))
        self._reset_state()
        (_PAPER_CHOOSE if self.bound == "paper" else _BOUND_CHOOSE).load()
        _HYBRID_UPDATE.load()

    # 16 bytes per tree level and arm for up to 32 levels, plus 6 words per arm.
    _state_bytes_per_arm = 16 * 32 + 8 * 8

    def _reset_learning(self) -> None:
        self._stats = np.zeros((self.batch, 4, self.n_arms))
        self._psums = np.zeros((self.batch, self.n_arms, _FIRST_LEVELS, 2))
        self._log = np.zeros((self.batch, self.n_arms, 4))
        self._noise = np.zeros(self.batch)

    def release_increment(self, n: int) -> tuple[int, float]:
        """(m, b) of :func:`bandit_envs.privacy.counters.hybrid_increment` for the agent's ε (width 1 + grid)."""
        return hybrid_increment(n, self.epsilon, 1.0 + self._grid)

    def _tail_delta(self) -> float:
        """One logarithmic increment at ε/2 and the p-sums of one binary part: their δ_s added.

        A reward enters the binary part of its arm's counter at some depth j (j = ⌊log₂ n⌋ for the
        arm's n-th pull, at most k = ⌊log₂ t⌋ + 1 here): at most j p-sums, each at ε/(2j). The
        worst j is taken: ``j δ_s(ε/(2j))`` grows with j for ε ≤ 2 but is largest at j = 1 for
        large ε (δ_s grows exponentially in ε), so the deepest tree alone would understate it.
        """
        k = max(1, self._t.bit_length())
        binary = max(j * laplace_tail_delta(self.epsilon / (2.0 * j)) for j in range(1, k + 1))
        return min(1.0, laplace_tail_delta(self.epsilon / 2.0) + binary)

    def noise_bound(self, t: int | None = None) -> FloatArray:
        """(B, K) B_i(t), the bound on each release's Laplace noise at round ``t`` (default: the next)."""
        t = self._t + 1 if t is None else check_int("t", t, minimum=1)
        if self.bound == "paper":
            pulls = self._stats[:, kernels.PULLS].astype(np.int64)
            power_of_2 = (pulls & (pulls - 1)) == 0
            logs = np.where(power_of_2, 1.0, np.log(np.maximum(pulls, 1)) + 1.0)
            paper: FloatArray = np.where(pulls > 0, math.sqrt(8.0) / self.epsilon * math.log(4.0 * t**4) * logs, 0.0)
            return paper
        log_g = math.log(2.0) + self.confidence_power * math.log(t)
        nu = np.maximum(self._stats[:, kernels.ROOT_VAR], self._stats[:, kernels.MAX_SCALE] * math.sqrt(log_g))
        out: FloatArray = nu * math.sqrt(8.0 * log_g)
        return out

    def _choose(self, out: IntArray) -> None:
        if self.bound == "paper":
            _PAPER_CHOOSE.call(self._stats, self.alpha, self.epsilon, float(self._t + 1), out)
            return
        _BOUND_CHOOSE.call(self._stats, self.alpha, self.confidence_power, 0.0, float(self._t + 1), out)

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        # Storage grows with the rounds played: an arm's count n <= t + 1 needs floor(log2 n) levels.
        self._psums = _grown(self._psums, (self._t + 1).bit_length())
        bad: int = _HYBRID_UPDATE.call(
            self._stats, self._psums, self._log, actions, rewards, self.epsilon, self._grid, self._streams, self._noise
        )
        return bad

    @property
    def n_draws(self) -> int | IntArray:
        """Laplace draws so far: one per update (the counter's release for that reward)."""
        return self._t if self.n_envs is None else np.full(self.batch, self._t, dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"HybridDPUCB(n_arms={self.n_arms}, epsilon={self.epsilon}, alpha={self.alpha}, "
            f"confidence_power={self.confidence_power}, bound={self.bound!r}, n_envs={self.n_envs})"
        )


class TreeDPUCB(_CounterAgent):
    r"""Private UCB with tree-based aggregation (Mishra & Thakurta, UAI 2015) [R; constants V-code].

    Each arm's rewards go to a binary tree counter over the horizon T
    (:class:`bandit_envs.privacy.counters.BinaryTreeCounter`: ⌊log₂ T⌋ + 1 levels, every p-sum
    Laplace(levels/ε_arm)), releasing a noisy sum Ŝ_i after every pull of arm i. After every
    arm was pulled once (lowest index first), round t plays

    .. math:: \arg\max_i \frac{\hat S_i}{n_i} + \alpha\sqrt{\frac{\ln t}{n_i}} + \frac{c_i(t)}{n_i}

    with the confidence relaxation c (``width``):

    * ``"mt15"`` (default): c = ln²T ln(K T ln T / γ) / ε_arm, the same for every arm and round.
      With the paper's split (ε_arm = ε/K) this is K ln²T ln(K T ln T / γ) / ε, the relaxation
      of the public implementation ``keirp/private-bandits`` (``private_ucb.py``) [V-code]: a
      union bound over the K·T·ln T p-sums (≈ ln T p-sums per release, each Laplace of scale
      ≈ ln T/ε_arm and below scale·ln(K T ln T/γ) except with probability γ/(K T ln T)). The
      paper's text was not available to us, so whether it is the paper's exact constant is [R].
      With ``"parallel"`` the same bound at ε_arm = ε (K times narrower; that implementation
      gives each tree ε yet keeps K/ε, a width for noise K times larger than it adds).
      Very wide at practical ε: K = 10, T = 10⁵, γ = 1/T, ``"split"``, ε = 5 gives c ≈ 7.4·10³
      (ε = 1: 3.7·10⁴), while the noise inside a release has standard deviation
      √(2 popcount(n_i))·depth/ε_arm ≈ 10² and its exact t⁻⁴ bound (below) is ≈ 4.5·10³. Until
      c/n_i falls below the gaps the pulls equalise μ_i + c/n_i, close to round-robin: on the
      instance of ``dp-mab/epsilon`` (gaps 0.1 to 0.5) that predicts regret 2.2·10⁴ at ε = 5 and
      2.4·10⁴ at ε = 1 over T = 10⁵ (uniform play: 2.5·10⁴), as measured. It is the algorithm
      as published (a loose width), not a defect of the trees.
    * ``"exact"`` [P]: the bound of :func:`bandit_envs.privacy.counters.laplace_sum_bound` for
      the popcount(n_i) p-sums inside Ŝ_i, at confidence 1 − t^{-p} (p = ``confidence_power``).

    Reproducing the public implementation above: it uses γ = T⁻⁴ (our default γ = 1/T gives a
    width 2.2–2.3 times narrower at T = 10⁴–10⁵, K = 5–10), gives every tree the full ε, and
    sizes the width for ε/K. That is ``TreeDPUCB(K, T, ε, per_arm_budget="parallel",
    gamma=T**-4.0, relaxation_epsilon=ε/K)`` (trees ε-DP each, relaxation
    K ln²T ln(K T ln T · T⁴)/ε). ``per_arm_budget="split", gamma=T**-4.0`` has the same width
    but trees of ε/K (K times the noise, the stricter guarantee); ``"parallel"`` alone has the
    same noise but a width sized for it (K times narrower).

    Budget split (``per_arm_budget``): ``"split"`` (default, the paper's accounting as recalled
    by a secondary summary [R]): every tree gets ε_arm = ε/K; ``"parallel"``: ε_arm = ε. At the
    event level of this library each reward enters one tree only, so the agent is ε_arm-DP:
    ε/K with ``"split"`` (the stricter guarantee, and what :attr:`privacy_spent` reports), ε
    with ``"parallel"``. The paper's "ε in total" is what ``"split"`` guarantees under the
    coarser unit where one neighbouring change can touch every arm's stream.

    Privacy: ε_arm-DP, event level (module docstring). An item enters at most ⌊log₂ T⌋ + 1
    p-sums of its arm's tree, each with Laplace((⌊log₂ T⌋ + 1)/ε_arm): that tree's releases are
    ε_arm-DP; trees are disjoint; the index and the arms are post-processing. The trees hold T
    items: past ``horizon`` rounds the agent still checks the feedback and counts the rounds but
    learns nothing more (its releases stay as they are; no reward enters a release).

    Noise: one Laplace draw per update of every copy (the p-sum the reward closes), from the
    copy's stream, as :class:`~bandit_envs.privacy.counters.BinaryTreeCounter` draws.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    horizon
        T (>= 1), the rounds whose rewards the agent learns from (the trees' size).
    epsilon
        Privacy budget ε.
    per_arm_budget
        ``"split"`` (ε/K per tree) or ``"parallel"`` (ε per tree).
    width
        ``"mt15"`` or ``"exact"``.
    gamma
        γ in (0, 1) of the ``"mt15"`` relaxation; default 1/T (for T = 1: 1/2).
    relaxation_epsilon
        The ε_arm the ``"mt15"`` relaxation is sized for (> 0); default ``None``: the trees'
        ε_arm. Only the width changes (the noise and the guarantee follow ``per_arm_budget``);
        ε/K with ``"parallel"`` reproduces the public implementation (above).
    alpha
        UCB coefficient (> 0); √2 (default): √(2 ln t / n), as the implementation above.
    confidence_power
        p in (0, 1000] of the ``"exact"`` width. Default 4.
    n_envs, seed, sampler
        Copies run in lock-step, copy 0's noise seed (copy i: seed + i) and ``"lattice"`` (default)
        or ``"float"`` releases, as for every :class:`~agents.central_dp.base.StreamPrivateAgent`.

    Attributes
    ----------
    counts, released
        (B, K) pulls and released noisy sums per arm.
    epsilon_per_arm, depth, relaxation
        ε_arm, the trees' levels, and c of ``"mt15"`` (0 for ``"exact"``).

    References
    ----------
    .. [1] N. Mishra, A. Thakurta, "(Nearly) Optimal Differentially Private Stochastic Multi-Arm
       Bandits", UAI 2015, pp. 592-601.
    """

    name = "Tree-DP-UCB"

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        per_arm_budget: str = "split",
        width: str = "mt15",
        gamma: float | None = None,
        alpha: float = SQRT2,
        confidence_power: float = 4.0,
        relaxation_epsilon: float | None = None,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.depth = tree_depth(self.horizon)
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        self.per_arm_budget = check_choice("per_arm_budget", per_arm_budget, ("split", "parallel"))
        self.width = check_choice("width", width, ("mt15", "exact"))
        self.alpha = _check_alpha(alpha)
        self.confidence_power = _check_power(confidence_power)
        default_gamma = 1.0 / self.horizon if self.horizon > 1 else 0.5
        self.gamma = (
            default_gamma
            if gamma is None
            else check_float("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
        )
        k = self.n_arms
        self.epsilon_per_arm = self.epsilon / k if self.per_arm_budget == "split" else self.epsilon
        self._set_sampler(sampler, self.epsilon_per_arm)
        self.relaxation_epsilon = (
            self.epsilon_per_arm
            if relaxation_epsilon is None
            else check_float("relaxation_epsilon", relaxation_epsilon, low=0.0, high=1e100, low_open=True)
        )
        self._scale = self.depth * (1.0 + self._grid) / self.epsilon_per_arm
        self.relaxation = 0.0
        if self.width == "mt15" and self.horizon > 1:
            log_t = math.log(self.horizon)
            # ln²T / ε_arm: the K of the published K ln²T ln(·)/ε is the split's ε_arm = ε/K.
            self.relaxation = log_t**2 * math.log(k * self.horizon * log_t / self.gamma) / self.relaxation_epsilon
        if not math.isfinite(self._scale * self._scale * self.depth):  # a product, not **: inf, no OverflowError
            raise ValueError(
                f"epsilon={epsilon!r} with n_arms={k} and horizon={self.horizon} gives a noise scale that is not "
                "finite; use a larger epsilon."
            )
        if not math.isfinite(self.relaxation):
            raise ValueError(
                f"gamma={self.gamma!r} and relaxation_epsilon={self.relaxation_epsilon!r} with horizon={self.horizon} "
                "give a relaxation of the index that is not finite; use a larger gamma or relaxation_epsilon."
            )
        self._reset_state()
        _BOUND_CHOOSE.load()
        _TREE_UPDATE.load()

    def _state_nbytes(self) -> float:
        per_arm = 16.0 * self.depth + 32.0
        return float(self.batch) * (float(self.n_arms) * per_arm + self._state_bytes_per_copy)

    def _reset_learning(self) -> None:
        self._stats = np.zeros((self.batch, 4, self.n_arms))
        self._psums = np.zeros((self.batch, self.n_arms, min(self.depth, _FIRST_LEVELS), 2))
        self._noise = np.zeros(self.batch)

    def release_increment(self, n: int) -> tuple[int, float]:
        """(m, depth/ε_arm): :func:`bandit_envs.privacy.counters.tree_increment`, every p-sum's Laplace scale."""
        return tree_increment(n), self._scale

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε_arm, δ_s) once any reward was received: ε/K with ``"split"``, ε with ``"parallel"``.

        δ_s: the sampler's tail of the at most ``depth`` p-sums a reward enters, each at
        ε_arm/depth (:meth:`_tail_delta`).
        """
        return (self.epsilon_per_arm, self._tail_delta()) if self._t > 0 else (0.0, 0.0)

    def _tail_delta(self) -> float:
        """``depth`` releases at ε_arm/depth each: depth · δ_s(ε_arm/depth)."""
        return min(1.0, self.depth * laplace_tail_delta(self.epsilon_per_arm / self.depth))

    def _choose(self, out: IntArray) -> None:
        power = self.confidence_power if self.width == "exact" else 0.0
        _BOUND_CHOOSE.call(self._stats, self.alpha, power, self.relaxation, float(self._t + 1), out)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the pulled arm's reward (in [0, 1]); past ``horizon`` rounds, only check it, count the round."""
        if self._t < self.horizon:
            super().update(action, reward, info)
            return
        self._check_feedback(action, reward, info)
        self._t += 1

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        # Storage grows with the rounds played (the noise scale is the horizon's depth throughout).
        self._psums = _grown(self._psums, min((self._t + 1).bit_length(), self.depth))
        bad: int = _TREE_UPDATE.call(
            self._stats, self._psums, actions, rewards, self._scale, self._grid, self._streams, self._noise
        )
        return bad

    @property
    def n_draws(self) -> int | IntArray:
        """Laplace draws so far: one per update up to the horizon (the p-sum that reward closes)."""
        draws = min(self._t, self.horizon)
        return draws if self.n_envs is None else np.full(self.batch, draws, dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"TreeDPUCB(n_arms={self.n_arms}, horizon={self.horizon}, epsilon={self.epsilon}, "
            f"per_arm_budget={self.per_arm_budget!r}, width={self.width!r}, n_envs={self.n_envs})"
        )


class EpochAgent(StreamPrivateAgent):
    """Per-arm doubling epochs with one Laplace release per closed epoch (shared by AdaPUCB and DPThompsonSampling).

    Arm a's rewards fill epochs of 1, 1, 2, 4, ... rewards (after a release at n pulls, the next
    epoch holds n rewards, closing at 2n); at the end of an epoch the arm's statistic is released
    with Laplace noise: the epoch's mean + Laplace(1/(εL)) (L its rewards), or, cumulative, the
    epoch's sum + Laplace(1/ε) added to the running noisy sum. Each reward is in exactly one
    release of sensitivity 1/L (mean) or 1 (sum): ε-DP per release, and releases of disjoint data
    compose in parallel. The epoch schedule depends only on pull counts (post-processing).
    """

    _cumulative = False
    _state_bytes_per_arm = 8 * 9

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon(epsilon)
        self._set_sampler(sampler, self.epsilon)
        self._reset_state()
        _EPOCH_UPDATE.load()

    def _reset_learning(self) -> None:
        shape = (self.batch, self.n_arms)
        self._counts = np.zeros(shape, dtype=np.int64)
        self._in_count = np.zeros(shape, dtype=np.int64)
        self._in_sum = np.zeros(shape)
        self._length = np.ones(shape, dtype=np.int64)
        self._mean = np.zeros(shape)
        self._n_mean = np.zeros(shape, dtype=np.int64)
        self._noisy_sum = np.zeros(shape)
        self._n_terms = np.zeros(shape, dtype=np.int64)
        self._committed = np.full(self.batch, -1, dtype=np.int64)

    counts: CopiedState[IntArray] = CopiedState("_counts", "(B, K) pulls per arm.")
    released_means: CopiedState[FloatArray] = CopiedState(
        "_mean", "(B, K) the last released noisy mean of each arm (0 before its first release)."
    )
    release_sizes: CopiedState[IntArray] = CopiedState(
        "_n_mean", "(B, K) the rewards behind each arm's last release (its epoch's, or all for ``cumulative``)."
    )
    epoch_lengths: CopiedState[IntArray] = CopiedState(
        "_length", "(B, K) the length of each arm's open epoch (1, 1, 2, 4, ...)."
    )

    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        bad: int = _EPOCH_UPDATE.call(
            self._counts, self._in_count, self._in_sum, self._length, self._mean, self._n_mean, self._noisy_sum,
            self._n_terms, self._committed, self._draws, actions, rewards, self.epsilon, self._grid, self._cumulative,
            self._streams,
        )  # fmt: skip
        return bad


class AdaPUCB(EpochAgent):
    r"""AdaP-UCB: UCB on Laplace-noised per-episode means with doubling episodes per arm (Azize & Basu 2022) [V-paper].

    Algorithm 1 with the AdaP-UCB index (Eq. 7) of Azize & Basu, "When Privacy Meets Partial
    Information: A Refined Analysis of Differentially Private Bandits", NeurIPS 2022 (checked in
    the text of the submitted version): pull every arm once; then each episode ℓ starts at round
    t_ℓ, chooses A_ℓ = argmax_a I_a(t_ℓ) and pulls A_ℓ until its pull count doubles. An arm's
    statistic is released at the end of each of its episodes from that episode's rewards only
    (``variant="forgetful"``, the paper): μ̃_a = (episode mean) + Laplace(1/(ε n_a)), with n_a
    the episode's rewards, and

    .. math:: I_a(t) = \tilde\mu_a + \sqrt{\frac{\alpha \ln(2t)}{2 n_a}} + \frac{\alpha \ln t}{\varepsilon n_a}.

    The paper writes n_a as ½N_a(t_ℓ − 1); we use the actual episode size (the same number,
    except after the first pull, whose episode has 1 reward). ``variant="cumulative"`` [P]
    adds each episode's sum + Laplace(1/ε) to a running noisy sum S̃_a, μ̃_a = S̃_a/N_a over all
    N_a pulls, and replaces the last term by B_a/N_a, B_a the bound of
    :func:`bandit_envs.privacy.counters.laplace_sum_bound` for its k_a terms of scale 1/ε at
    γ = t^{-α}. An arm pulled outside its episode (an update with another arm than :meth:`act`
    chose) adds the reward to that arm's open episode.

    Privacy: ε-DP, event level (Theorem 6 of the paper; module docstring): each reward is in one
    release, of sensitivity 1/n_a (mean) or 1 (sum) with matching Laplace noise; releases use
    disjoint data; episode boundaries depend only on pull counts.

    Regret (the paper, Theorem 7, α > 3): Σ_{Δ_a>0} (16α log T / min(Δ_a, ε) + α/(α − 3)).

    Noise: one Laplace draw per completed episode, from the copy's stream. Sampler: the
    released means :attr:`released_means` use the lattice sampler by default: the episode's sum
    is released as ``snap(sum) + snap(Laplace((1 + grid)/ε))`` on the grid ``sum_grid(1/ε, 1)`` and
    divided by the public episode size (ε-DP up to the sampler's tail δ_s of ``privacy_spent``, a
    post-processing of a lattice release); ``sampler="float"`` gives the raw
    ``mean + Laplace(1/(ε n_a))``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    epsilon
        Privacy budget ε.
    alpha
        α > 0; the paper's bound needs α > 3, its experiments use 3.1 (the default).
    variant
        ``"forgetful"`` (the paper) or ``"cumulative"``.
    n_envs, seed, sampler
        Copies run in lock-step, copy 0's noise seed (copy i: seed + i) and ``"lattice"`` (default)
        or ``"float"`` releases, as for every :class:`~agents.central_dp.base.StreamPrivateAgent`.

    References
    ----------
    .. [1] A. Azize, D. Basu, "When Privacy Meets Partial Information: A Refined Analysis of
       Differentially Private Bandits", NeurIPS 2022 (arXiv:2209.02570), Algorithm 1, Eq. 7.
    """

    name = "AdaP-UCB"

    def __init__(
        self,
        n_arms: int,
        epsilon: float,
        alpha: float = 3.1,
        variant: str = "forgetful",
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, epsilon, n_envs=n_envs, seed=seed, sampler=sampler)
        self.alpha = check_float("alpha", alpha, low=0.0, high=1e100, low_open=True)
        self.variant = check_choice("variant", variant, ("forgetful", "cumulative"))
        self._cumulative = self.variant == "cumulative"
        _ADAP_CHOOSE.load()

    committed: CopiedState[IntArray] = CopiedState(
        "_committed", "(B,) the arm of each copy's open episode (-1: the next act starts a new one)."
    )

    def _choose(self, out: IntArray) -> None:
        _ADAP_CHOOSE.call(
            self._counts, self._mean, self._n_mean, self._n_terms, self._committed, self.alpha, self.epsilon,
            self._cumulative, float(self._t + 1), out,
        )  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"AdaPUCB(n_arms={self.n_arms}, epsilon={self.epsilon}, alpha={self.alpha}, variant={self.variant!r}, "
            f"n_envs={self.n_envs})"
        )
