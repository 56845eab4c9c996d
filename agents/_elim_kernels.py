"""Per-round state machines of the elimination agents (compiled; see ``agents._kernels``).

Conventions: ``state`` is a tuple of arrays with a batch axis first, ``params`` a tuple of
constants, ``b`` the copy, ``rewards`` a length-K row holding the observed rewards of this
round and NaN elsewhere. Rounds are counted from 0 (the paper's s_1 = 1 is our 0).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from agents._kernels import argmax_masked

# ----------------------------------------------------------------------------------- GAP


@numba.njit(cache=True)
def greedy_independent_set(active, means, closed, out, by_index):  # pragma: no cover
    """GetIndSet (gap paper, Algorithm 1 lines 26-32): greedy by largest (noisy) mean.

    Returns |Ω|; ``out[:|Ω|]`` holds Ω in the order GetIndSet added the arms, or sorted by arm
    index if ``by_index``.
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
    if by_index:
        out[:m] = np.sort(out[:m])
    return m


@numba.njit(cache=True)
def uniform_maximal_independent_set(active, closed, out, rng):  # pragma: no cover
    """Draw Ω uniformly from the maximal independent sets of the subgraph induced by ``active``.

    Enumerates the subsets of the active arms as bit masks (so K ≤ 20). Returns |Ω|.
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
    count = 0
    chosen = -1
    for rounds in range(2):
        if rounds == 1:
            chosen = rng.integers(0, count)
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


@numba.njit(cache=True)
def gap_plan(state, params, b, rng):  # pragma: no cover
    """Lines 3-12 of Algorithm 1: fresh sums, Ω_τ, L_τ and the next epoch's start."""
    active, mu, o, c, omega, ints = state
    eps, delta, closed, uniform, by_index = params
    tau = ints[b, 1]
    n_active = 0
    for k in range(active.shape[1]):
        n_active += active[b, k]
    l1 = 2.0 ** (5 + 2 * tau) * math.log(8.0 * n_active * tau * tau / delta)
    l2 = 2.0 ** (3 + tau) / eps * math.log(4.0 * n_active * tau * tau / delta)
    length = math.ceil(max(l1, l2))
    if uniform:
        m = uniform_maximal_independent_set(active[b], closed, omega[b], rng)
    else:
        m = greedy_independent_set(active[b], mu[b], closed, omega[b], by_index)
    o[b, :] = 0.0
    c[b, :] = 0.0
    ints[b, 0] = m
    ints[b, 4] = length
    ints[b, 3] = ints[b, 2] + length * m


@numba.njit(cache=True, inline="always")
def gap_act(state, params, b, rng):  # pragma: no cover
    """Line 14: the least-pulled arm of Ω_τ, ties to the earliest in Ω's order (round-robin)."""
    omega, ints = state[4], state[5]
    return omega[b, (ints[b, 5] - ints[b, 2]) % ints[b, 0]]


@numba.njit(cache=True, inline="always")
def gap_update(state, params, b, a, rewards, rng):  # pragma: no cover
    """Lines 15-24: accumulate this epoch's observations; at the epoch's end release and eliminate."""
    active, mu, o, c, omega, ints = state
    eps, delta, closed, uniform, by_index = params
    k_arms = active.shape[1]
    for k in range(k_arms):
        if active[b, k] and rewards[k] == rewards[k]:
            o[b, k] += 1.0
            c[b, k] += rewards[k]
    ints[b, 5] += 1
    if ints[b, 5] != ints[b, 3]:
        return
    # Lines 20-23. The epoch completed, so o[k] >= L for every active arm (Ω dominates A).
    length = ints[b, 4]
    tau = ints[b, 1]
    n_active = 0
    for k in range(k_arms):
        n_active += active[b, k]
    scale = 1.0 / (eps * length)
    best = -np.inf
    for k in range(k_arms):
        if active[b, k]:
            mu[b, k] = c[b, k] / o[b, k] + rng.laplace(0.0, scale)
            best = max(best, mu[b, k])
    width = math.sqrt(2.0 * math.log(8.0 * n_active * tau * tau / delta) / length) + 2.0 * math.log(
        4.0 * n_active * tau * tau / delta
    ) / (eps * length)
    for k in range(k_arms):
        if active[b, k] and mu[b, k] < best - width:
            active[b, k] = False
    ints[b, 6] += 1
    ints[b, 1] += 1
    ints[b, 2] = ints[b, 3]
    gap_plan(state, params, b, rng)


# ---------------------------------------------------------------------------------- DP-SE


@numba.njit(cache=True)
def dpse_plan(state, params, b):  # pragma: no cover
    """Start epoch e: R_e = ⌈s·max(32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e))⌉, Δ_e = 2^-e."""
    active, sums, sched, ints = state
    eps, beta, schedule_scale, width_scale = params
    e = ints[b, 1]
    n = 0
    for k in range(active.shape[1]):
        if active[b, k]:
            sched[b, n] = k
            n += 1
    d = 2.0 ** (-e)
    r1 = 32.0 * math.log(8.0 * n * e * e / beta) / (d * d)
    r2 = 8.0 * math.log(4.0 * n * e * e / beta) / (eps * d)
    reps = max(1, math.ceil(schedule_scale * max(r1, r2)))
    sums[b, :] = 0.0
    ints[b, 0] = n
    ints[b, 4] = reps
    ints[b, 3] = ints[b, 2] + reps * n


@numba.njit(cache=True, inline="always")
def dpse_act(state, params, b, rng):  # pragma: no cover
    """Round-robin over the active set S (each arm exactly R_e times per epoch)."""
    sched, ints = state[2], state[3]
    return sched[b, (ints[b, 5] - ints[b, 2]) % ints[b, 0]]


@numba.njit(cache=True, inline="always")
def dpse_update(state, params, b, a, rewards, rng):  # pragma: no cover
    """Add the pulled arm's reward; at the epoch's end release noisy means and eliminate."""
    active, sums, sched, ints = state
    eps, beta, schedule_scale, width_scale = params
    sums[b, a] += rewards[a]
    ints[b, 5] += 1
    if ints[b, 5] != ints[b, 3]:
        return
    reps = ints[b, 4]
    n = ints[b, 0]
    e = ints[b, 1]
    k_arms = active.shape[1]
    noisy = np.full(k_arms, -np.inf)
    best = -np.inf
    for k in range(k_arms):
        if active[b, k]:
            noisy[k] = sums[b, k] / reps + rng.laplace(0.0, 1.0 / (eps * reps))
            best = max(best, noisy[k])
    h = math.sqrt(math.log(8.0 * n * e * e / beta) / (2.0 * reps))
    cw = math.log(4.0 * n * e * e / beta) / (eps * reps)
    for k in range(k_arms):
        if active[b, k] and best - noisy[k] > 2.0 * width_scale * (h + cw):
            active[b, k] = False
    ints[b, 6] += 1
    ints[b, 1] += 1
    ints[b, 2] = ints[b, 3]
    dpse_plan(state, params, b)


# ------------------------------------------------------------------------------------ AAE


@numba.njit(cache=True)
def aae_order(state, b):  # pragma: no cover
    """Start a pass over the active arms in index order."""
    active, n, mean, order, ints = state
    m = 0
    for k in range(active.shape[1]):
        if active[b, k]:
            order[b, m] = k
            m += 1
    ints[b, 0] = m
    ints[b, 1] = 0


@numba.njit(cache=True, inline="always")
def aae_act(state, params, b, rng):  # pragma: no cover
    """The next arm of the current pass."""
    order, ints = state[3], state[4]
    return order[b, ints[b, 1]]


@numba.njit(cache=True, inline="always")
def aae_update(state, params, b, a, rewards, rng):  # pragma: no cover
    """Update running means; after a complete pass eliminate by per-arm confidence radii."""
    active, n, mean, order, ints = state
    delta, cconst, hoeffding = params
    k_arms = active.shape[1]
    for k in range(k_arms):
        if active[b, k] and rewards[k] == rewards[k]:
            n[b, k] += 1.0
            mean[b, k] += (rewards[k] - mean[b, k]) / n[b, k]
    ints[b, 1] += 1
    ints[b, 2] += 1
    if ints[b, 1] < ints[b, 0]:
        return
    if ints[b, 0] > 1:
        rad = np.full(k_arms, np.inf)
        lower = -np.inf
        for k in range(k_arms):
            if active[b, k] and n[b, k] > 0:
                if hoeffding:
                    rad[k] = math.sqrt(math.log(4.0 * k_arms * n[b, k] ** 2 / delta) / (2.0 * n[b, k]))
                else:
                    rad[k] = math.sqrt(math.log(cconst * k_arms * n[b, k] ** 2 / delta) / n[b, k])
            if active[b, k]:
                lower = max(lower, mean[b, k] - rad[k])
        for k in range(k_arms):
            if active[b, k] and mean[b, k] + rad[k] < lower:
                active[b, k] = False
    aae_order(state, b)


# ---------------------------------------------------------------------------- AlphaSample


@numba.njit(cache=True, inline="always")
def alpha_act(state, params, b, rng):  # pragma: no cover
    """AlphaSample: a uniformly random arm among the active arms not yet observed this sweep."""
    unseen = state[1]
    count = 0
    for k in range(unseen.shape[1]):
        count += unseen[b, k]
    pick = rng.integers(0, count)
    for k in range(unseen.shape[1]):
        if unseen[b, k]:
            if pick == 0:
                return k
            pick -= 1
    return -1


@numba.njit(cache=True, inline="always")
def alpha_update(state, params, b, a, rewards, rng):  # pragma: no cover
    """Update cumulative means of observed active arms; close sweeps and epochs (§2.2)."""
    active, unseen, n, mean, ints, eps_r = state
    delta, coeff = params
    k_arms = active.shape[1]
    left = 0
    for k in range(k_arms):
        if rewards[k] == rewards[k]:
            unseen[b, k] = False
            if active[b, k]:
                n[b, k] += 1.0
                mean[b, k] += (rewards[k] - mean[b, k]) / n[b, k]
        left += unseen[b, k]
    ints[b, 3] += 1
    if left:
        return
    ints[b, 0] += 1
    if ints[b, 0] >= ints[b, 1]:
        best = -np.inf
        for k in range(k_arms):
            if active[b, k]:
                best = max(best, mean[b, k])
        for k in range(k_arms):
            if active[b, k] and mean[b, k] < best - 2.0 * eps_r[b]:
                active[b, k] = False
        eps_r[b] = eps_r[b] / 2.0
        ints[b, 1] = max(1, math.ceil(coeff * 2.0 * math.log(1.0 / delta) / eps_r[b] ** 2))
        ints[b, 0] = 0
        ints[b, 2] += 1
    for k in range(k_arms):
        unseen[b, k] = active[b, k]
