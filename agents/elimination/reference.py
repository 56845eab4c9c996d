"""Plain-Python reference versions of GAP, DPSE and AAE, written after the papers' algorithms.

These functions are for reading and teaching: one loop per epoch (or pass), one statement per
line of the paper's algorithm where possible, readable names, no numba and no vectorisation.
They play a whole reward table and return the arms they pulled. They make exactly the same
decisions as the compiled agents of :mod:`agents.elimination.policies` given the same table, graph,
parameters and seed (``tests/test_reference_agents.py`` checks this), because they follow the
same documented choices:

* rounds are counted from 0 (the GAP paper's s_1 = 1 is our round 0);
* ties are broken towards the lowest arm index (GetIndSet's argmax, DPSE's and AAE's orders),
  and GAP's line 14 breaks ties as its ``round_robin`` option says;
* an epoch (or pass) cut short by the end of the table releases nothing and eliminates nothing;
* the Laplace noise comes from :func:`bandit_envs.privacy.streams.noise_generator` ``(seed)``,
  the compiled agents' noise stream, independent of ``numpy.random.default_rng(seed)`` and so
  of a reward table or env seeded with the same integer (or from the generator passed as
  ``seed``), one ``rng.laplace(0.0, scale)`` draw per active arm, in increasing arm order, at
  the end of every completed epoch; nothing else draws from it;
* sums and running means are accumulated in the same order and with the same floating-point
  expressions as the compiled agents, so the released numbers are bit-for-bit identical.

The compiled agents draw their noise with :func:`agents.common.streams.laplace_draw`,
NumPy's ``Generator.laplace`` algorithm on the same bit generator, which consumes it exactly
like NumPy's; the tests check the generators end in the same state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import _as_array, check_choice, check_values, describe
from bandit_envs.feedback_graphs import as_adjacency, closed_neighbourhoods
from bandit_envs.privacy._checks import check_epsilon
from bandit_envs.privacy.lattice import check_sampler, sum_grid
from bandit_envs.privacy.streams import noise_generator

__all__ = [
    "ReferenceRun",
    "aae_radius",
    "dpse_repetitions",
    "gap_elimination_slack",
    "gap_epoch_length",
    "get_ind_set",
    "run_aae",
    "run_dpse",
    "run_gap",
]


@dataclass
class ReferenceRun:
    """What a reference run returns.

    Attributes
    ----------
    actions
        The arm pulled in every round of the table.
    active
        The arms still active at the end, in increasing order.
    releases
        Number of completed epochs (GAP, DPSE: releases of noisy means) or passes (AAE).
    released_means
        The noisy means of the last completed epoch (GAP, DPSE), by arm; empty for AAE.
    """

    actions: list[int] = field(default_factory=list)
    active: list[int] = field(default_factory=list)
    releases: int = 0
    released_means: dict[int, float] = field(default_factory=dict)


def _rewards(table: Any) -> npt.NDArray[np.float64]:
    """``table`` as a (T, K) float array of rewards in [0, 1] (the rule of the compiled agents)."""
    arr = _as_array(table)
    if arr is None or arr.dtype.kind not in "iuf":
        raise TypeError(f"table must be a (T, K) array of rewards in [0, 1], got {describe(table)}.")
    if arr.ndim != 2:
        raise ValueError(f"table must be a (T, K) array of rewards, got shape {arr.shape}.")
    rewards = arr.astype(np.float64)
    check_values("table", rewards, (0.0, 1.0), "the algorithms' bounds assume it", ("round", "arm"))
    return rewards


def _generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else noise_generator(seed)


def _neighbourhoods(graph: Any, n_arms: int) -> list[set[int]]:
    """The closed neighbourhood N(a) = {a} ∪ {neighbours of a} of every arm, as sets."""
    closed = closed_neighbourhoods(as_adjacency(graph, n_arms))
    return [{int(j) for j in np.flatnonzero(closed[a])} for a in range(n_arms)]


# ----------------------------------------------------------------------------------- GAP


def get_ind_set(arms: list[int], means: list[float], neighbourhoods: list[set[int]]) -> list[int]:
    """GetIndSet (GAP paper, Algorithm 1, lines 26-32): a maximal independent set, greedily.

    Parameters
    ----------
    arms
        The active arms A_τ.
    means
        μ̄_{τ-1,a} for every arm a (indexed by arm).
    neighbourhoods
        Closed neighbourhoods N(a) of the feedback graph.

    Returns
    -------
    list of int
        Ω in the order the arms were added: each time the remaining arm with the largest
        mean, the lowest index on ties.
    """
    remaining = sorted(arms)
    omega: list[int] = []  # line 27
    while remaining:  # line 28
        best = max(remaining, key=lambda a: means[a])  # line 29 (max keeps the first maximum)
        omega.append(best)  # line 30: Ω = Ω ∪ {a'}
        remaining = [a for a in remaining if a not in neighbourhoods[best]]  # line 30: A = A − N(a')
    return omega  # line 32


def gap_epoch_length(n_active: int, tau: int, epsilon: float, delta: float) -> int:
    """L_τ = ⌈max(2^{5+2τ} ln(8|A_τ|τ²/δ), 2^{3+τ} ε⁻¹ ln(4|A_τ|τ²/δ))⌉ (Algorithm 1, lines 10-12)."""
    l1 = 2.0 ** (5 + 2 * tau) * math.log(8.0 * n_active * tau * tau / delta)  # line 10
    l2 = 2.0 ** (3 + tau) / epsilon * math.log(4.0 * n_active * tau * tau / delta)  # line 11
    return math.ceil(max(l1, l2))  # line 12


def gap_elimination_slack(n_active: int, tau: int, epsilon: float, delta: float, length: int) -> float:
    """√(2 ln(8|A_τ|τ²/δ)/L_τ) + 2 ln(4|A_τ|τ²/δ)/(εL_τ), the slack of Algorithm 1, line 23."""
    hoeffding = math.sqrt(2.0 * math.log(8.0 * n_active * tau * tau / delta) / length)
    laplace = 2.0 * math.log(4.0 * n_active * tau * tau / delta) / (epsilon * length)
    return hoeffding + laplace


def run_gap(
    table: Any,
    graph: Any,
    epsilon: float,
    delta: float | None = None,
    *,
    round_robin: str = "index",
    horizon: int | None = None,
    seed: int | np.random.Generator | None = None,
    sampler: str = "lattice",
) -> ReferenceRun:
    """GAP, graph-based arm elimination with differential privacy (GAP paper, Algorithm 1).

    Lu, Wang, Qiu, Zhang, "Differentially private algorithm for graphical bandits", Journal of
    Software 33(9), 2022. Line numbers in the comments are those of Algorithm 1.

    Parameters
    ----------
    table
        (T, K) rewards r_{t,a} in [0, 1]; row t is revealed in round t (from 0).
    graph
        Undirected feedback graph (networkx graph or K×K boolean adjacency, no self loops);
        pulling a reveals the rewards of its closed neighbourhood N(a).
    epsilon
        Privacy budget ε > 0.
    delta
        Confidence parameter δ ∈ (0, 1); default 1/``horizon``.
    round_robin
        How line 14's argmin breaks ties: ``"index"`` towards the lowest arm index, ``"greedy"``
        towards the arm GetIndSet added first (as :class:`agents.GAP`).
    horizon
        T, used only for the default δ; default the number of rows of ``table``.
    seed
        Seed of the noise generator, or the generator itself.
    sampler
        ``"lattice"`` (default): each noisy mean is the arm's sum and its Laplace noise, both
        rounded to the grid ``sum_grid(1/ε, 1)`` (noise scale widened by ``1 + grid``), divided by
        the count, as the agent does; ``"float"``: raw float noise on the mean.

    Returns
    -------
    ReferenceRun
        The arms pulled, the final active set and the last released noisy means.
    """
    rewards = _rewards(table)
    n_rounds, n_arms = rewards.shape
    neighbourhoods = _neighbourhoods(graph, n_arms)
    check_choice("round_robin", round_robin, ("greedy", "index"))
    epsilon = check_epsilon("epsilon", epsilon)
    delta = 1.0 / (horizon or n_rounds) if delta is None else delta
    grid = 0.0 if check_sampler(sampler) == "float" else sum_grid(1.0 / epsilon, 1.0)
    rng = _generator(seed)
    run = ReferenceRun()

    # Line 1: τ = 1, s_1 = 1 (round 0 here), A_1 = [K], μ̄_{0,a} = 0.
    tau = 1
    t = 0
    active = list(range(n_arms))
    noisy_mean = [0.0] * n_arms
    while t < n_rounds:  # line 2
        # Lines 3-5: fresh observation counts o and reward sums c for this epoch.
        observations = dict.fromkeys(active, 0)
        sums = dict.fromkeys(active, 0.0)
        # Line 6: Ω_τ = GetIndSet(A_τ, μ̄_{τ-1}).
        omega = get_ind_set(active, noisy_mean, neighbourhoods)
        tie_order = omega if round_robin == "greedy" else sorted(omega)
        # Lines 7-9: pull counts of the arms of Ω_τ.
        pulls = dict.fromkeys(omega, 0)
        # Lines 10-12: epoch length L_τ and the next epoch's first round s_{τ+1}.
        length = gap_epoch_length(len(active), tau, epsilon, delta)
        next_start = t + length * len(omega)
        # Line 13: rounds s_τ .. min(T, s_{τ+1}) - 1.
        while t < min(n_rounds, next_start):
            arm = min(tie_order, key=lambda a: pulls[a])  # line 14 (min keeps the first minimum)
            pulls[arm] += 1  # line 15
            run.actions.append(arm)
            for a in sorted(neighbourhoods[arm]):  # line 16: a ∈ N(a_t) ∩ A_τ
                if a in observations:
                    observations[a] += 1  # line 17
                    sums[a] += rewards[t, a]
            t += 1
        if t < next_start:
            break  # the table ended inside the epoch: no release, no elimination
        # Lines 20-22: noisy means, one Laplace(0, 1/(εL_τ)) draw per active arm, in arm order.
        # Ω_τ dominates A_τ, so observations[a] >= L_τ > 0.
        for a in active:
            if grid > 0.0:
                noise = rng.laplace(0.0, (1.0 + grid) * observations[a] / (epsilon * length))
                noisy_mean[a] = float(np.rint(sums[a] / grid) * grid + np.rint(noise / grid) * grid) / observations[a]
            else:
                noisy_mean[a] = sums[a] / observations[a] + rng.laplace(0.0, 1.0 / (epsilon * length))
        run.released_means = {a: noisy_mean[a] for a in active}
        run.releases += 1
        # Line 23: drop the arms whose noisy mean is below the best one minus the slack.
        slack = gap_elimination_slack(len(active), tau, epsilon, delta, length)
        best = max(noisy_mean[a] for a in active)
        active = [a for a in active if not noisy_mean[a] < best - slack]
        tau += 1  # line 24
    run.active = active
    return run


# ---------------------------------------------------------------------------------- DP-SE


def dpse_repetitions(n_active: int, e: int, epsilon: float, beta: float, schedule_scale: float = 1.0) -> int:
    """R_e = max(1, ⌈s·max(32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e))⌉) with Δ_e = 2^{-e}."""
    gap = 2.0 ** (-e)
    hoeffding = 32.0 * math.log(8.0 * n_active * e * e / beta) / (gap * gap)
    laplace = 8.0 * math.log(4.0 * n_active * e * e / beta) / (epsilon * gap)
    return max(1, math.ceil(schedule_scale * max(hoeffding, laplace)))


def run_dpse(
    table: Any,
    epsilon: float,
    beta: float | None = None,
    *,
    schedule_scale: float = 1.0,
    width_scale: float = 1.0,
    horizon: int | None = None,
    seed: int | np.random.Generator | None = None,
    sampler: str = "lattice",
) -> ReferenceRun:
    """DP-SE, differentially private successive elimination (Sajed & Sheffet, ICML 2019).

    Epoch e = 1, 2, ...: pull every arm of the active set S exactly R_e times (round-robin in
    index order), release μ̃_a = (this epoch's sum of a)/R_e + Laplace(0, 1/(εR_e)) for every
    a ∈ S, and drop a if max_b μ̃_b − μ̃_a > 2w(h_e + c_e). Only the pulled arm's reward is used.
    Like :class:`agents.DPSE`, epochs go on (and release) when one arm is left.

    Parameters
    ----------
    table
        (T, K) rewards in [0, 1]; row t is revealed in round t (from 0).
    epsilon
        Privacy budget ε > 0.
    beta
        Failure probability β ∈ (0, 1); default 1/``horizon``.
    schedule_scale, width_scale
        Multipliers s of R_e and w of the elimination slack (1 is the paper's schedule).
    horizon
        T, used only for the default β; default the number of rows of ``table``.
    seed
        Seed of the noise generator, or the generator itself.
    sampler
        ``"lattice"`` (default): each noisy mean is the arm's sum and its Laplace noise, both
        rounded to the grid ``sum_grid(1/ε, 1)`` (noise scale widened by ``1 + grid``), divided by
        the count, as the agent does; ``"float"``: raw float noise on the mean.

    Returns
    -------
    ReferenceRun
        The arms pulled, the final active set and the last released noisy means.
    """
    rewards = _rewards(table)
    n_rounds, n_arms = rewards.shape
    epsilon = check_epsilon("epsilon", epsilon)
    beta = 1.0 / (horizon or n_rounds) if beta is None else beta
    grid = 0.0 if check_sampler(sampler) == "float" else sum_grid(1.0 / epsilon, 1.0)
    rng = _generator(seed)
    run = ReferenceRun()

    active = list(range(n_arms))
    e = 1
    t = 0
    while t < n_rounds:
        n_active = len(active)
        repetitions = dpse_repetitions(n_active, e, epsilon, beta, schedule_scale)
        sums = dict.fromkeys(active, 0.0)  # fresh samples every epoch
        start, end = t, t + repetitions * n_active
        while t < min(n_rounds, end):
            arm = active[(t - start) % n_active]  # round-robin: every arm R_e times
            run.actions.append(arm)
            sums[arm] += rewards[t, arm]
            t += 1
        if t < end:
            break  # the table ended inside the epoch: no release, no elimination
        # One independent Laplace draw per active arm, in arm order.
        noisy = {}
        for a in active:
            if grid > 0.0:
                noise = rng.laplace(0.0, (1.0 + grid) / epsilon)
                noisy[a] = float(np.rint(sums[a] / grid) * grid + np.rint(noise / grid) * grid) / repetitions
            else:
                noisy[a] = sums[a] / repetitions + rng.laplace(0.0, 1.0 / (epsilon * repetitions))
        run.released_means = noisy
        run.releases += 1
        hoeffding = math.sqrt(math.log(8.0 * n_active * e * e / beta) / (2.0 * repetitions))
        laplace = math.log(4.0 * n_active * e * e / beta) / (epsilon * repetitions)
        best = max(noisy.values())
        active = [a for a in active if not best - noisy[a] > 2.0 * width_scale * (hoeffding + laplace)]
        e += 1
    run.active = active
    return run


# ------------------------------------------------------------------------------------ AAE


def aae_radius(count: int, n_arms: int, delta: float, c: float = 4.0, radius: str = "evendar") -> float:
    """Confidence radius of an arm observed ``count`` times (infinite when ``count`` is 0).

    ``"evendar"``: √(ln(cKn²/δ)/n), the α_t of successive elimination with unknown biases
    (Even-Dar, Mannor, Mansour 2006) with t replaced by the arm's count n; ``"hoeffding"``:
    √(ln(4Kn²/δ)/(2n)).
    """
    if count == 0:
        return math.inf
    if radius == "hoeffding":
        return math.sqrt(math.log(4.0 * n_arms * count**2 / delta) / (2.0 * count))
    return math.sqrt(math.log(c * n_arms * count**2 / delta) / count)


def run_aae(
    table: Any,
    graph: Any = None,
    delta: float | None = None,
    *,
    c: float = 4.0,
    radius: str = "evendar",
    side_observations: bool = False,
    horizon: int | None = None,
) -> ReferenceRun:
    """Active arm elimination (Even-Dar, Mannor, Mansour, JMLR 2006), regret-minimisation form.

    Passes over the active arms in index order, pulling each once; every observation is added
    to the arm's count and sum, and μ̂_j is the sum over the count. After a complete pass with
    more than one arm, arm j is dropped if μ̂_j + rad_j < max_i (μ̂_i − rad_i) with the per-arm
    radii of :func:`aae_radius` (with equal counts this is Even-Dar et al.'s rule
    μ̂_max − μ̂_j ≥ 2α). Not private; deterministic.

    Parameters
    ----------
    table
        (T, K) rewards in [0, 1]; row t is revealed in round t (from 0).
    graph
        Feedback graph, used only with ``side_observations`` (then pulling a also reveals the
        rewards of a's neighbours).
    delta
        Confidence parameter δ ∈ (0, 1); default 1/``horizon``.
    c, radius
        Constant c of the Even-Dar radius, and ``"evendar"`` or ``"hoeffding"``.
    side_observations
        Learn from every revealed reward, not only the pulled arm's.
    horizon
        T, used only for the default δ; default the number of rows of ``table``.

    Returns
    -------
    ReferenceRun
        The arms pulled, the final active set and the number of passes completed.
    """
    rewards = _rewards(table)
    n_rounds, n_arms = rewards.shape
    check_choice("radius", radius, ("evendar", "hoeffding"))
    if side_observations:
        neighbourhoods = _neighbourhoods(graph, n_arms)
    else:
        neighbourhoods = [{a} for a in range(n_arms)]
    delta = 1.0 / (horizon or n_rounds) if delta is None else delta
    run = ReferenceRun()

    active = list(range(n_arms))
    counts = [0] * n_arms
    sums = [0.0] * n_arms
    t = 0
    while t < n_rounds:
        one_pass = list(active)
        for arm in one_pass:
            if t == n_rounds:
                run.active = active
                return run  # a truncated pass: no elimination
            run.actions.append(arm)
            for j in sorted(neighbourhoods[arm]):
                if j in active:
                    counts[j] += 1
                    sums[j] += rewards[t, j]
            t += 1
        run.releases += 1
        if len(one_pass) > 1:
            radii = {j: aae_radius(counts[j], n_arms, delta, c, radius) for j in active}
            means = {j: sums[j] / counts[j] if counts[j] else 0.0 for j in active}
            best_lower = max(means[j] - radii[j] for j in active)
            active = [j for j in active if not means[j] + radii[j] < best_lower]
    run.active = active
    return run
