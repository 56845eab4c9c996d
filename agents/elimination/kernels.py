"""Per-round state machines of the elimination agents (compiled; see ``agents.common.kernels``).

Conventions: ``state`` is a tuple of arrays with a batch axis first, ``params`` a tuple of
constants, ``b`` the copy, ``rewards`` a length-K row holding the observed rewards of this
round and NaN elsewhere. Rounds are counted from 0 (the paper's s_1 = 1 is our 0). ``bitgens``
is the (B,) uint64 array of the copies' generators' C interfaces
(:func:`bandit_envs.core.generator_addresses`; one env: its ``rng``'s), of which copy b draws
from ``bitgens[b]``, looked up only where a draw is made (kernels that draw nothing are passed
None): copy i of a batch seeded s draws as a single agent seeded s + i (docs/design.md,
"Agents", Seeds). Addresses rather than the Generators themselves, because handing numba a
Generator costs about 6 us a call (it reads its C interface through ctypes), more than a step.

State layout
------------
The layout of every agent's state is written down once, below: each name is a position in the
state tuple or a column of the tuple's int64 counter array. They are module-level ints, which
numba compiles as constants, so a named access costs the same as a bare number. The
``new_*_state`` functions allocate the layout; the kernels, :mod:`agents.elimination.policies` and the
tests read it through these names only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.common.kernels import argmax_masked
from agents.common.streams import integer_below, laplace_draw
from bandit_envs._jit import njit

#: Position of the (B, K) bool active set (arms not yet eliminated) in every agent's state.
ACTIVE = 0

# GAP and GAPU (Lu, Wang, Qiu, Zhang, Journal of Software 2022, Algorithm 1) -------------
GAP_MEAN = 1  # (B, K) float: μ̄_{τ-1,a}, the last released noisy means (0 before any; line 1)
GAP_OBSERVATIONS = 2  # (B, K) float: o_{τ,a}, observations of a in epoch τ (lines 4, 17)
GAP_SUMS = 3  # (B, K) float: c_{τ,a}, sum of those observed rewards (lines 4, 17)
GAP_OMEGA = 4  # (B, K) int: Ω_τ in round-robin order; the first GAP_OMEGA_SIZE entries count
GAP_COUNTERS = 5  # (B, GAP_N_COUNTERS) int64, columns:
GAP_OMEGA_SIZE = 0  # |Ω_τ|
GAP_EPOCH = 1  # τ, from 1
GAP_EPOCH_START = 2  # s_τ, first round of epoch τ
GAP_EPOCH_END = 3  # s_{τ+1} = s_τ + L_τ|Ω_τ| (line 12)
GAP_EPOCH_LENGTH = 4  # L_τ (line 12)
GAP_ROUND = 5  # rounds played
GAP_RELEASES = 6  # completed epochs, i.e. releases of noisy means (line 21)
GAP_N_COUNTERS = 7

# DPSE (Sajed & Sheffet 2019) --------------------------------------------------------------
DPSE_SUMS = 1  # (B, K) float: this epoch's reward sum of every arm
DPSE_SCHEDULE = 2  # (B, K) int: the active set S in index order; the first DPSE_N_SCHEDULED count
DPSE_COUNTERS = 3  # (B, DPSE_N_COUNTERS) int64, columns:
DPSE_N_SCHEDULED = 0  # |S| at the start of the epoch
DPSE_EPOCH = 1  # e, from 1
DPSE_EPOCH_START = 2  # first round of epoch e
DPSE_EPOCH_END = 3  # first round after epoch e (start + R_e|S|)
DPSE_REPETITIONS = 4  # R_e
DPSE_ROUND = 5  # rounds played
DPSE_RELEASES = 6  # completed epochs, i.e. releases of noisy means
DPSE_N_COUNTERS = 7

# AAE (Even-Dar, Mannor, Mansour 2006) ------------------------------------------------------
AAE_COUNTS = 1  # (B, K) float: n_a, observations of arm a so far
AAE_SUMS = 2  # (B, K) float: the sum of those observations (μ̂_a = sum / n_a)
AAE_ORDER = 3  # (B, K) int: the arms of the current pass (index order)
AAE_COUNTERS = 4  # (B, AAE_N_COUNTERS) int64, columns:
AAE_PASS_LENGTH = 0  # arms in the current pass
AAE_POSITION = 1  # position of the next arm in the pass
AAE_ROUND = 2  # rounds played
AAE_N_COUNTERS = 3

# AlphaSample (Cohen, Hazan, Koren 2016) ----------------------------------------------------
ALPHA_UNSEEN = 1  # (B, K) bool: active arms not yet observed in the current sweep
ALPHA_COUNTS = 2  # (B, K) float: observations of arm a while it was active
ALPHA_MEANS = 3  # (B, K) float: cumulative running mean of those observations
ALPHA_COUNTERS = 4  # (B, ALPHA_N_COUNTERS) int64, columns:
ALPHA_SWEEPS = 0  # completed sweeps of the current epoch
ALPHA_SWEEPS_PER_EPOCH = 1  # m_r
ALPHA_EPOCH = 2  # completed epochs
ALPHA_ROUND = 3  # rounds played
ALPHA_N_COUNTERS = 4
ALPHA_ACCURACY = 5  # (B,) float: ε_r, the current epoch's accuracy


def _new_state(
    batch: int,
    n_arms: int,
    size: int,
    counters: tuple[int, int],
    floats: tuple[int, ...] = (),
    ints: tuple[int, ...] = (),
    flags: tuple[int, ...] = (),
) -> list[npt.NDArray[Any]]:
    """The ``size`` slots of a fresh state: every arm active, then zeros (or True) everywhere.

    Slot :data:`ACTIVE` and the slots ``flags`` are (B, K) True, the slots ``floats`` (B, K)
    float 0, ``ints`` (B, K) int64 0, and ``counters = (slot, n)`` a (B, n) int64 0.
    """
    state: list[npt.NDArray[Any]] = [np.empty(0)] * size
    for slot in (ACTIVE, *flags):
        state[slot] = np.ones((batch, n_arms), dtype=np.bool_)
    for slot in floats:
        state[slot] = np.zeros((batch, n_arms))
    for slot in ints:
        state[slot] = np.zeros((batch, n_arms), dtype=np.int64)
    state[counters[0]] = np.zeros((batch, counters[1]), dtype=np.int64)
    return state


def new_gap_state(batch: int, n_arms: int) -> tuple[npt.NDArray[Any], ...]:
    """GAP state before planning epoch 1: all arms active, μ̄_0 = 0, τ = 1 (line 1)."""
    floats = (GAP_MEAN, GAP_OBSERVATIONS, GAP_SUMS)
    state = _new_state(batch, n_arms, 6, (GAP_COUNTERS, GAP_N_COUNTERS), floats, ints=(GAP_OMEGA,))
    state[GAP_COUNTERS][:, GAP_EPOCH] = 1
    return tuple(state)


def new_dpse_state(batch: int, n_arms: int) -> tuple[npt.NDArray[Any], ...]:
    """DPSE state before planning epoch 1: all arms active, e = 1."""
    state = _new_state(batch, n_arms, 4, (DPSE_COUNTERS, DPSE_N_COUNTERS), (DPSE_SUMS,), ints=(DPSE_SCHEDULE,))
    state[DPSE_COUNTERS][:, DPSE_EPOCH] = 1
    return tuple(state)


def new_aae_state(batch: int, n_arms: int) -> tuple[npt.NDArray[Any], ...]:
    """AAE state before the first pass: all arms active, no observations."""
    return tuple(_new_state(batch, n_arms, 5, (AAE_COUNTERS, AAE_N_COUNTERS), (AAE_COUNTS, AAE_SUMS), (AAE_ORDER,)))


def new_alpha_state(batch: int, n_arms: int, epsilon1: float, sweeps: int) -> tuple[npt.NDArray[Any], ...]:
    """AlphaSample state at the start of epoch 1: accuracy ε_1 and m_1 = ``sweeps`` sweeps."""
    state = _new_state(
        batch, n_arms, 6, (ALPHA_COUNTERS, ALPHA_N_COUNTERS), (ALPHA_COUNTS, ALPHA_MEANS), flags=(ALPHA_UNSEEN,)
    )
    state[ALPHA_COUNTERS][:, ALPHA_SWEEPS_PER_EPOCH] = sweeps
    state[ALPHA_ACCURACY] = np.full(batch, epsilon1)
    return tuple(state)


# ----------------------------------------------------------------------------------- GAP


@njit(inline="always")
def greedy_independent_set(active, means, closed, out, by_index):  # pragma: no cover
    """GetIndSet (GAP paper, Algorithm 1 lines 26-32): greedy by largest (noisy) mean.

    Returns |Ω|; ``out[:|Ω|]`` holds Ω in the order GetIndSet added the arms, or sorted by arm
    index if ``by_index``. Inlined into its one caller, :func:`gap_plan`: compiled apart, it took
    0.15-0.2 s more of a first run's CPU time (the README snippet's, one run each).
    """
    remaining = active.copy()
    m = 0
    while True:
        a = argmax_masked(means, remaining)
        if a < 0:
            break
        out[m] = a
        m += 1
        for k in range(remaining.shape[0]):
            if closed[a, k]:
                remaining[k] = False
    if by_index:  # insertion sort of out[:m] (m <= K is small; np.sort costs seconds of compilation)
        for i in range(1, m):
            arm = out[i]
            j = i - 1
            while j >= 0 and out[j] > arm:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = arm
    return m


@njit(inline="always")
def uniform_maximal_independent_set(active, closed, out, bitgen):  # pragma: no cover
    """Draw Ω uniformly from the maximal independent sets of the subgraph induced by ``active``.

    Enumerates the subsets of the active arms as bit masks (so K ≤ 20), in decreasing order of
    the mask, counts the maximal independent ones, then returns the one whose position in that
    order is ``Generator.integers(0, count)`` of the generator at ``bitgen`` (:func:`integer_below`, one draw per
    call). Returns |Ω|; ``out[:|Ω|]`` holds
    Ω sorted by arm index. Inlined into its one caller, :func:`gapu_plan` (a function compiled
    apart costs its own wrapper and module, about a tenth of a second of a first run).
    """
    k_arms = active.shape[0]
    nbr = np.zeros(k_arms, dtype=np.int64)
    amask = 0
    for i in range(k_arms):
        if active[i]:
            amask |= 1 << i
        for j in range(k_arms):
            if closed[i, j] and i != j:
                nbr[i] |= 1 << j
    count = np.int64(0)  # not the literal 0, for which numba would compile integer_below once more
    chosen = -1
    for rounds in range(2):
        if rounds == 1:
            chosen = integer_below(bitgen, count)
        seen = 0
        sub = amask
        while sub > 0:
            ok = True
            for i in range(k_arms):
                bit = 1 << i
                if sub & bit:
                    if nbr[i] & sub:
                        ok = False
                        break
                elif amask & bit and not (nbr[i] & sub):
                    ok = False  # an active arm outside Ω with no neighbour in Ω: not maximal
                    break
            if ok:
                if rounds == 0:
                    count += 1
                elif seen == chosen:
                    m = 0
                    for i in range(k_arms):
                        if sub & (1 << i):
                            out[m] = i
                            m += 1
                    return m
                else:
                    seen += 1
            sub = (sub - 1) & amask
    return 0


@njit
def gap_plan(state, params, b):  # pragma: no cover
    """Lines 3-12 of Algorithm 1: fresh sums, Ω_τ, L_τ and the next epoch's start (no draw).

    GAPU's Ω_τ (``uniform``) is left to :func:`gapu_plan`, which the agent calls right after
    this (|Ω_τ| = 0 until then): compiled on its own, the uniform rule and its draw are compiled
    only by a GAPU, not in every GAP kernel that plans. No generator argument: handing one to
    a compiled function costs its wrapper code and every call the unboxing.
    """
    active, mu = state[ACTIVE], state[GAP_MEAN]
    o, c, omega, ctr = state[GAP_OBSERVATIONS], state[GAP_SUMS], state[GAP_OMEGA], state[GAP_COUNTERS]
    eps, delta, closed, uniform, by_index, grid = params
    tau = ctr[b, GAP_EPOCH]
    n_active = 0
    for k in range(active.shape[1]):
        n_active += active[b, k]
    l1 = math.ldexp(1.0, 5 + 2 * tau) * math.log(8.0 * n_active * tau * tau / delta)  # 2^(5+2τ), exactly
    l2 = math.ldexp(1.0, 3 + tau) / eps * math.log(4.0 * n_active * tau * tau / delta)
    length = math.ceil(max(l1, l2))
    m = 0 if uniform else greedy_independent_set(active[b], mu[b], closed, omega[b], by_index)
    o[b, :] = 0.0
    c[b, :] = 0.0
    ctr[b, GAP_OMEGA_SIZE] = m
    ctr[b, GAP_EPOCH_LENGTH] = length
    ctr[b, GAP_EPOCH_END] = ctr[b, GAP_EPOCH_START] + length * m


@njit
def gapu_plan(state, params, b, bitgens):  # pragma: no cover
    """GAPU's Ω_τ, which :func:`gap_plan` left pending: a uniform maximal independent set (one draw of copy b's).

    ``bitgens[b]`` is copy b's generator. Sets |Ω_τ| and the next epoch's start as :func:`gap_plan` does.
    """
    active, omega, ctr = state[ACTIVE], state[GAP_OMEGA], state[GAP_COUNTERS]
    m = uniform_maximal_independent_set(active[b], params[2], omega[b], bitgens[b])
    ctr[b, GAP_OMEGA_SIZE] = m
    ctr[b, GAP_EPOCH_END] = ctr[b, GAP_EPOCH_START] + ctr[b, GAP_EPOCH_LENGTH] * m


@njit(inline="always")
def gap_act(state, params, b, bitgens):  # pragma: no cover
    """Line 14: the least-pulled arm of Ω_τ, ties to the earliest in Ω's order.

    Every arm of Ω_τ starts the epoch with n_{τ,a} = 0, so this argmin is a round-robin over
    Ω_τ in its stored order: round s_τ + i pulls Ω_τ[i mod |Ω_τ|].
    """
    omega, ctr = state[GAP_OMEGA], state[GAP_COUNTERS]
    position = (ctr[b, GAP_ROUND] - ctr[b, GAP_EPOCH_START]) % ctr[b, GAP_OMEGA_SIZE]
    return omega[b, position]


@njit(inline="always")
def gap_update(state, params, b, a, rewards, bitgens):  # pragma: no cover
    """Lines 15-19: accumulate this epoch's observations; True at the epoch's end, where :func:`gap_release` is due.

    The caller releases (the step API from Python, once per epoch, so that its update kernel
    does not compile in the release and the planning).
    """
    active = state[ACTIVE]
    o, c, ctr = state[GAP_OBSERVATIONS], state[GAP_SUMS], state[GAP_COUNTERS]
    k_arms = active.shape[1]
    for k in range(k_arms):
        if active[b, k] and rewards[k] == rewards[k]:
            o[b, k] += 1.0
            c[b, k] += rewards[k]
    ctr[b, GAP_ROUND] += 1
    return ctr[b, GAP_ROUND] == ctr[b, GAP_EPOCH_END]


@njit
def gap_release(state, params, b, bitgens):  # pragma: no cover
    """Lines 20-24 at the end of epoch τ: noisy means, elimination, then plan epoch τ + 1.

    The epoch completed, so o[k] >= L_τ for every active arm (Ω_τ dominates A_τ).
    """
    active, mu = state[ACTIVE], state[GAP_MEAN]
    o, c, ctr = state[GAP_OBSERVATIONS], state[GAP_SUMS], state[GAP_COUNTERS]
    eps, delta, closed, uniform, by_index, grid = params
    k_arms = active.shape[1]
    length = ctr[b, GAP_EPOCH_LENGTH]
    tau = ctr[b, GAP_EPOCH]
    n_active = 0
    for k in range(k_arms):
        n_active += active[b, k]
    scale = 1.0 / (eps * length)
    best = -np.inf
    g = bitgens[b]
    for k in range(k_arms):  # one Laplace draw per active arm, in arm order
        if active[b, k]:
            if grid > 0.0:  # lattice: the sum on the grid, noise of the same size on the sum's scale
                noise = laplace_draw(g, (1.0 + grid) * o[b, k] / (eps * length))
                mu[b, k] = (np.rint(c[b, k] / grid) * grid + np.rint(noise / grid) * grid) / o[b, k]
            else:
                mu[b, k] = c[b, k] / o[b, k] + laplace_draw(g, scale)
            best = max(best, mu[b, k])
    width = math.sqrt(2.0 * math.log(8.0 * n_active * tau * tau / delta) / length) + 2.0 * math.log(
        4.0 * n_active * tau * tau / delta
    ) / (eps * length)
    for k in range(k_arms):
        if active[b, k] and mu[b, k] < best - width:
            active[b, k] = False
    ctr[b, GAP_RELEASES] += 1
    ctr[b, GAP_EPOCH] += 1
    ctr[b, GAP_EPOCH_START] = ctr[b, GAP_EPOCH_END]
    gap_plan(state, params, b)


# ---------------------------------------------------------------------------------- DP-SE


@njit
def dpse_plan(state, params, b):  # pragma: no cover
    """Start epoch e: R_e = ⌈s·max(32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e))⌉, Δ_e = 2^-e."""
    active, sums, sched, ctr = state[ACTIVE], state[DPSE_SUMS], state[DPSE_SCHEDULE], state[DPSE_COUNTERS]
    eps, beta, schedule_scale, width_scale, grid = params
    e = ctr[b, DPSE_EPOCH]
    n = 0
    for k in range(active.shape[1]):
        if active[b, k]:
            sched[b, n] = k
            n += 1
    d = math.ldexp(1.0, -e)  # 2^-e, exactly
    r1 = 32.0 * math.log(8.0 * n * e * e / beta) / (d * d)
    r2 = 8.0 * math.log(4.0 * n * e * e / beta) / (eps * d)
    reps = max(1, math.ceil(schedule_scale * max(r1, r2)))
    sums[b, :] = 0.0
    ctr[b, DPSE_N_SCHEDULED] = n
    ctr[b, DPSE_REPETITIONS] = reps
    ctr[b, DPSE_EPOCH_END] = ctr[b, DPSE_EPOCH_START] + reps * n


@njit(inline="always")
def dpse_act(state, params, b, bitgens):  # pragma: no cover
    """Round-robin over the active set S in index order (each arm exactly R_e times per epoch)."""
    sched, ctr = state[DPSE_SCHEDULE], state[DPSE_COUNTERS]
    position = (ctr[b, DPSE_ROUND] - ctr[b, DPSE_EPOCH_START]) % ctr[b, DPSE_N_SCHEDULED]
    return sched[b, position]


@njit(inline="always")
def dpse_update(state, params, b, a, rewards, bitgens):  # pragma: no cover
    """Add the pulled arm's reward; at the epoch's end, :func:`dpse_release`."""
    sums, ctr = state[DPSE_SUMS], state[DPSE_COUNTERS]
    sums[b, a] += rewards[a]
    ctr[b, DPSE_ROUND] += 1
    if ctr[b, DPSE_ROUND] == ctr[b, DPSE_EPOCH_END]:
        dpse_release(state, params, b, bitgens)


@njit
def dpse_release(state, params, b, bitgens):  # pragma: no cover
    """End of epoch e: one noisy mean per active arm, elimination, then plan epoch e + 1."""
    active, sums, ctr = state[ACTIVE], state[DPSE_SUMS], state[DPSE_COUNTERS]
    eps, beta, schedule_scale, width_scale, grid = params
    reps = ctr[b, DPSE_REPETITIONS]
    n = ctr[b, DPSE_N_SCHEDULED]
    e = ctr[b, DPSE_EPOCH]
    k_arms = active.shape[1]
    noisy = np.full(k_arms, -np.inf)
    best = -np.inf
    g = bitgens[b]
    for k in range(k_arms):  # one Laplace draw per active arm, in arm order
        if active[b, k]:
            if grid > 0.0:  # lattice: the sum on the grid, Laplace((1 + grid)/eps) on the sum
                noise = laplace_draw(g, (1.0 + grid) / eps)
                noisy[k] = (np.rint(sums[b, k] / grid) * grid + np.rint(noise / grid) * grid) / reps
            else:
                noisy[k] = sums[b, k] / reps + laplace_draw(g, 1.0 / (eps * reps))
            best = max(best, noisy[k])
    h = math.sqrt(math.log(8.0 * n * e * e / beta) / (2.0 * reps))
    cw = math.log(4.0 * n * e * e / beta) / (eps * reps)
    for k in range(k_arms):
        if active[b, k] and best - noisy[k] > 2.0 * width_scale * (h + cw):
            active[b, k] = False
    ctr[b, DPSE_RELEASES] += 1
    ctr[b, DPSE_EPOCH] += 1
    ctr[b, DPSE_EPOCH_START] = ctr[b, DPSE_EPOCH_END]
    dpse_plan(state, params, b)


# ------------------------------------------------------------------------------------ AAE


@njit
def aae_order(state, b):  # pragma: no cover
    """Start a pass over the active arms in index order."""
    active, order, ctr = state[ACTIVE], state[AAE_ORDER], state[AAE_COUNTERS]
    m = 0
    for k in range(active.shape[1]):
        if active[b, k]:
            order[b, m] = k
            m += 1
    ctr[b, AAE_PASS_LENGTH] = m
    ctr[b, AAE_POSITION] = 0


@njit(inline="always")
def aae_act(state, params, b, bitgens):  # pragma: no cover
    """The next arm of the current pass."""
    order, ctr = state[AAE_ORDER], state[AAE_COUNTERS]
    return order[b, ctr[b, AAE_POSITION]]


@njit(inline="always")
def aae_update(state, params, b, a, rewards, bitgens):  # pragma: no cover
    """Add the observations to their arms' counts and sums; after a complete pass, :func:`aae_end_pass`."""
    active, n, total, ctr = state[ACTIVE], state[AAE_COUNTS], state[AAE_SUMS], state[AAE_COUNTERS]
    k_arms = active.shape[1]
    for k in range(k_arms):
        if active[b, k] and rewards[k] == rewards[k]:
            n[b, k] += 1.0
            total[b, k] += rewards[k]
    ctr[b, AAE_POSITION] += 1
    ctr[b, AAE_ROUND] += 1
    if ctr[b, AAE_POSITION] == ctr[b, AAE_PASS_LENGTH]:
        aae_end_pass(state, params, b)


@njit(inline="always")
def aae_mean(total, n):  # pragma: no cover
    """μ̂ of an arm whose n observations sum to ``total`` (0 before any)."""
    return total / n if n > 0.0 else 0.0


@njit(inline="always")
def aae_radius(n, k_arms, delta, cconst, hoeffding):  # pragma: no cover
    """Confidence radius of an arm observed n times (plain version: :func:`agents.elimination.reference.aae_radius`).

    √(ln(cKn²/δ)/n) (Even-Dar, Mannor, Mansour 2006), or √(ln(4Kn²/δ)/(2n)) with ``hoeffding``;
    infinite for n = 0.
    """
    if n <= 0.0:
        return np.inf
    if hoeffding:
        return math.sqrt(math.log(4.0 * k_arms * (n * n) / delta) / (2.0 * n))
    return math.sqrt(math.log(cconst * k_arms * (n * n) / delta) / n)


@njit
def aae_end_pass(state, params, b):  # pragma: no cover
    """After a complete pass: eliminate by per-arm confidence radii, then start the next pass.

    Arms observed equally often have equal radii, so a radius is computed once per count seen
    (the last count and radius are kept; in a pass without side observations every active arm
    has the same count). An arm's mean is its sum over its count (an arm observed once or more:
    active arms have been, after a complete pass).
    """
    active, n, total, ctr = state[ACTIVE], state[AAE_COUNTS], state[AAE_SUMS], state[AAE_COUNTERS]
    delta, cconst, hoeffding = params
    k_arms = active.shape[1]
    if ctr[b, AAE_PASS_LENGTH] > 1:
        last_n, last_rad = 0.0, np.inf  # n = 0: an infinite radius
        lower = -np.inf
        for k in range(k_arms):
            if active[b, k]:
                if n[b, k] != last_n:
                    last_n, last_rad = n[b, k], aae_radius(n[b, k], k_arms, delta, cconst, hoeffding)
                lower = max(lower, aae_mean(total[b, k], n[b, k]) - last_rad)
        for k in range(k_arms):
            if active[b, k]:
                if n[b, k] != last_n:
                    last_n, last_rad = n[b, k], aae_radius(n[b, k], k_arms, delta, cconst, hoeffding)
                if aae_mean(total[b, k], n[b, k]) + last_rad < lower:
                    active[b, k] = False
    aae_order(state, b)


# ---------------------------------------------------------------------------- AlphaSample


@njit(inline="always")
def alpha_act(state, params, b, bitgens):  # pragma: no cover
    """AlphaSample: a uniformly random arm among the active arms not yet observed this sweep."""
    unseen = state[ALPHA_UNSEEN]
    count = np.int64(0)  # not the literal 0 (see uniform_maximal_independent_set)
    for k in range(unseen.shape[1]):
        count += unseen[b, k]
    pick = integer_below(bitgens[b], count)
    for k in range(unseen.shape[1]):
        if unseen[b, k]:
            if pick == 0:
                return k
            pick -= 1
    return -1


@njit(inline="always")
def alpha_update(state, params, b, a, rewards, bitgens):  # pragma: no cover
    """Update cumulative means of observed active arms; at a sweep's end, :func:`alpha_end_sweep`."""
    active, unseen, n, mean = state[ACTIVE], state[ALPHA_UNSEEN], state[ALPHA_COUNTS], state[ALPHA_MEANS]
    ctr = state[ALPHA_COUNTERS]
    k_arms = active.shape[1]
    left = 0
    for k in range(k_arms):
        if rewards[k] == rewards[k]:
            unseen[b, k] = False
            if active[b, k]:
                n[b, k] += 1.0
                mean[b, k] += (rewards[k] - mean[b, k]) / n[b, k]
        left += unseen[b, k]
    ctr[b, ALPHA_ROUND] += 1
    if not left:
        alpha_end_sweep(state, params, b)


@njit
def alpha_end_sweep(state, params, b):  # pragma: no cover
    """Every active arm was observed: close the sweep, and the epoch after m_r sweeps."""
    active, unseen, mean = state[ACTIVE], state[ALPHA_UNSEEN], state[ALPHA_MEANS]
    ctr, eps_r = state[ALPHA_COUNTERS], state[ALPHA_ACCURACY]
    delta, coeff = params
    k_arms = active.shape[1]
    ctr[b, ALPHA_SWEEPS] += 1
    if ctr[b, ALPHA_SWEEPS] >= ctr[b, ALPHA_SWEEPS_PER_EPOCH]:
        best = -np.inf
        for k in range(k_arms):
            if active[b, k]:
                best = max(best, mean[b, k])
        for k in range(k_arms):
            if active[b, k] and mean[b, k] < best - 2.0 * eps_r[b]:
                active[b, k] = False
        eps_r[b] = eps_r[b] / 2.0
        ctr[b, ALPHA_SWEEPS_PER_EPOCH] = max(1, math.ceil(coeff * 2.0 * math.log(1.0 / delta) / (eps_r[b] * eps_r[b])))
        ctr[b, ALPHA_SWEEPS] = 0
        ctr[b, ALPHA_EPOCH] += 1
    for k in range(k_arms):
        unseen[b, k] = active[b, k]


@njit(inline="always")
def gap_feedback_ok(neighbourhoods, actions, rewards, state):  # pragma: no cover
    """Whether a round's revealed arms keep GAP's/GAPU's privacy noise sound, for every copy.

    ``rewards[b, k]`` is NaN where copy b did not observe arm k. True when pulling
    ``actions[b]`` revealed every arm of its closed neighbourhood in the declared graph (no NaN
    in ``rewards[b]`` where ``neighbourhoods[actions[b]]``) and, in a round that ends an epoch,
    every active arm then has at least L_τ observations. The step API's check on each update,
    made by the update kernel before it changes anything (``GAP._refuse_revealed`` says which arm
    and round when this is False); numpy equivalent, with ``seen = ~isnan(rewards)``:
    ``not (neighbourhoods[actions] & ~seen).any()`` and, for the copies whose round ends the
    epoch, ``((observations + (seen & active) >= L_τ) | ~active).all()``.
    """
    active, obs, ctr = state[ACTIVE], state[GAP_OBSERVATIONS], state[GAP_COUNTERS]
    for b in range(actions.shape[0]):
        row = neighbourhoods[actions[b]]
        for k in range(row.shape[0]):
            if row[k] and rewards[b, k] != rewards[b, k]:
                return False
        if ctr[b, GAP_ROUND] + 1 == ctr[b, GAP_EPOCH_END]:
            for k in range(row.shape[0]):
                seen = obs[b, k] + (1.0 if rewards[b, k] == rewards[b, k] and active[b, k] else 0.0)
                if active[b, k] and seen < ctr[b, GAP_EPOCH_LENGTH]:
                    return False
    return True
