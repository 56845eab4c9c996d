"""Compiled steps of the private agents of ``ucb.py`` and ``thompson.py`` in this package, all copies at once.

Conventions: arrays carry the batch axis first, (B, K) per arm or (B,) per copy; ``streams`` is
the (B, 11) uint64 array of the copies' noise streams (:mod:`agents.common.philox`), so copy b's draws
come from row b only and a batch of N copies makes, copy for copy, the draws of N single agents;
``sampling_streams`` are the (4, B) sampling streams of :mod:`agents.common.sampling` (column b).
``t`` is the 1-based number of the round being chosen. Ties in an argmax go to the lowest arm.

Sampler: ``grid`` > 0 is the lattice sampler (:mod:`bandit_envs.privacy.lattice`): every noisy
statistic is released as ``snap(exact) + snap(noise)``, both rounded to the power-of-two grid,
so its value is a multiple of ``grid`` whatever the rewards; the callers widen the Laplace
scales for the rounding (sensitivity ``1 + grid`` per reward in [0, 1]). ``grid == 0`` is the
float sampler: ``exact + noise``, the old releases bit for bit, not safe against floating-point
attacks.

Each kernel's docstring gives its plain-Python meaning; the readable references of the whole
agents, written with :mod:`bandit_envs.privacy.counters` and numpy generators, are in
:mod:`agents.central_dp.reference`, and ``tests/test_dp_agents.py`` checks that both make the same
releases and choose the same arms.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from agents.common import philox as rng_
from agents.common import sampling
from agents.common.kernels import first_argmax, first_bad
from agents.stochastic import thompson_kernels as ts_kernels
from bandit_envs._jit import njit

# ---------------------------------------------------------------------- binary tree counters


@intrinsic
def trailing_zeros(typingctx, x):  # pragma: no cover
    """Number of trailing zero bits of an int64 x > 0 (LLVM's ``cttz``; Python: ``(x & -x).bit_length() - 1``)."""
    signature = types.int64(types.int64)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64")
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return signature, codegen


@intrinsic
def popcount(typingctx, x):  # pragma: no cover
    """Number of set bits of an int64 x >= 0 (LLVM's ``ctpop``; Python: ``x.bit_count()``)."""
    signature = types.int64(types.int64)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return signature, codegen


#
# Packed state of the counter agents (HybridDPUCB, TreeDPUCB): a copy's statistics are one
# contiguous block, each a row over the K arms (so the index loop over the arms vectorizes), and
# an arm's tree is one contiguous block of interleaved exact and noisy p-sums:
#
#   stats  (B, 4, K)      rows N (pulls, as floats), S (the counters' last releases), sqrt(Σ b²)
#                         and max b of the Laplace scales b inside S (for the noise bound)
#   psums  (B, K, L, 2)   p-sums of the tree, level by level: [..., 0] exact α, [..., 1] noisy α̂
#   log    (B, K, 4)      HybridDPUCB only: β (the logarithmic part's release), the items since
#                         the last power of 2 (exact), that power 2^k and k (as floats)

PULLS, RELEASE, ROOT_VAR, MAX_SCALE = 0, 1, 2, 3
BETA, PENDING, TOP, LEVELS = 0, 1, 2, 3


@njit(inline="always")
def first_zero(counts, b):  # pragma: no cover
    """The lowest arm k with ``counts[b, k] == 0`` (copy b's first arm not yet pulled or released), or -1."""
    for k in range(counts.shape[1]):
        if counts[b, k] == 0:
            return k
    return -1


@njit(inline="always")
def release(exact, noise, grid):  # pragma: no cover
    """``exact + noise`` (float sampler, ``grid == 0``) or ``snap(exact) + snap(noise)`` on the grid (lattice).

    ``snap(v) = rint(v / grid) * grid``, exact for a power-of-two ``grid``; the sum of two
    multiples of ``grid`` below ``2**53 grid`` is exact too.
    """
    if grid > 0.0:
        return np.rint(exact / grid) * grid + np.rint(noise / grid) * grid
    return exact + noise


@njit(inline="always")
def tree_add(psums, b, k, position, x, noise, grid):  # pragma: no cover
    """Item number ``position`` (1-based) of a binary tree counter; returns (its new release, popcount(position)).

    Python equivalent (:class:`bandit_envs.privacy.counters.BinaryTreeCounter.add`, with
    ``exact``/``noisy`` the p-sums α, α̂ of copy b's arm k in ``psums``, and ``noise`` the
    item's Laplace draw)::

        i = lowest set bit of position
        exact[i] = sum(exact[:i]) + x; exact[:i] = 0; noisy[:i] = 0
        noisy[i] = exact[i] + noise        # lattice (grid > 0): snap(exact[i]) + snap(noise)
        return sum(noisy[j] for the set bits j of position), popcount(position)

    The release visits the set bits of ``position`` in increasing order (lowest set bit first,
    then clearing it), the order of the reference's sum.
    """
    i = trailing_zeros(position)  # type: ignore[call-arg,var-annotated]
    acc = 0.0
    for j in range(i):
        acc += psums[b, k, j, 0]
        psums[b, k, j, 0] = 0.0
        psums[b, k, j, 1] = 0.0
    psums[b, k, i, 0] = acc + x
    psums[b, k, i, 1] = release(psums[b, k, i, 0], noise, grid)
    total = 0.0
    rest = position
    while rest:
        total += psums[b, k, trailing_zeros(rest), 1]
        rest &= rest - 1
    return total, popcount(position)


@njit
def standard_laplace(streams, out):  # pragma: no cover
    """``out[b]`` = one Laplace(0, 1) draw of copy b's stream, for every copy.

    ``scale * out[b]`` is bit for bit the draw ``laplace(streams, b, scale)`` would have made
    (numpy's ``0.0 - scale * log(2 - 2U)`` or ``0.0 + scale * log(2U)``: the sign and the scale
    factor are exact). The counters' updates draw first, in a loop of their own, then do the
    bookkeeping: interleaving the two is slower.
    """
    for b in range(out.shape[0]):
        out[b] = rng_.laplace(streams, b, 1.0)


# ----------------------------------------------------------------------- HybridDPUCB


@njit
def hybrid_update(stats, psums, log, actions, rewards, eps, grid, streams, noise):  # pragma: no cover
    """Feed copy b's reward ``rewards[b]`` to the hybrid counter of arm ``actions[b]``, for every b.

    Returns :func:`first_bad` of the feedback, changing nothing when it is not -1. ``noise`` is
    a work array of B floats (:func:`standard_laplace`). Python equivalent per copy
    (:class:`bandit_envs.privacy.counters.HybridCounter.add` of that arm's counter, n its item
    count after this one, k = floor(log2 n))::

        if n is a power of 2:   beta += (pending + x) + laplace(2w/eps); pending = 0; release = beta
        else:                   pending += x
                                release = beta + tree_add(position n - 2^k, laplace(k w / (eps/2)))

    with ``w = 1 + grid`` (the widened sensitivity; 1 for the float sampler) and, for the lattice
    sampler, every noisy term released as :func:`release` of its exact part and its noise.

    The tree of the items 2^k + 1 .. 2^(k+1) - 1 has k levels; its p-sums are cleared at every
    power of 2. ``stats``' last two columns become the root of the sum of squares and the
    largest of the Laplace scales inside the release: k + 1 terms of 2/eps, and
    popcount(n - 2^k) terms of k / (eps/2).
    """
    bad = first_bad(actions, rewards, stats.shape[2])
    if bad >= 0:
        return bad
    standard_laplace(streams, noise)
    wide = 1.0 + grid
    log_scale = 2.0 * wide / eps
    for b in range(actions.shape[0]):
        a = actions[b]
        x = rewards[b]
        stats[b, PULLS, a] += 1.0
        n = np.int64(stats[b, PULLS, a])
        top = np.int64(log[b, a, TOP])
        if n == 2 * top or top == 0:  # n is a power of 2 (k = floor(log2 n), kept rather than recounted)
            log[b, a, TOP] = n
            log[b, a, LEVELS] = 0.0 if top == 0 else log[b, a, LEVELS] + 1.0
        k = np.int64(log[b, a, LEVELS])
        if n == 1 << k:
            log[b, a, BETA] += release(log[b, a, PENDING] + x, log_scale * noise[b], grid)
            log[b, a, PENDING] = 0.0
            for j in range(k):
                psums[b, a, j, 0] = 0.0
                psums[b, a, j, 1] = 0.0
            stats[b, RELEASE, a] = log[b, a, BETA]
            stats[b, ROOT_VAR, a] = math.sqrt(k + 1) * log_scale
            stats[b, MAX_SCALE, a] = log_scale
        else:
            log[b, a, PENDING] += x
            scale = (
                k * wide / (eps / 2.0)
            )  # the binary part's depth k over its budget eps/2, as the counter computes it
            total, bits = tree_add(psums, b, a, n - (1 << k), x, scale * noise[b], grid)
            stats[b, RELEASE, a] = log[b, a, BETA] + total
            stats[b, ROOT_VAR, a] = math.sqrt((k + 1) * log_scale * log_scale + bits * scale * scale)
            stats[b, MAX_SCALE, a] = scale
    return -1


@njit(error_model="numpy")
def bound_choose(stats, alpha, power, relaxation, t, out):  # pragma: no cover
    """Per copy b, the first arm never pulled, else the argmax of the private UCB index.

    The index is ``S/N + alpha * sqrt(ln t / N) + (relaxation + B)/N``, with B the Laplace-sum bound
    (:func:`bandit_envs.privacy.counters.laplace_sum_bound`) of the release's noise at
    gamma = t**-power: ``nu * sqrt(8 L)``, ``nu = max(sqrt(Σ b²), max b * sqrt(L))``,
    ``L = ln 2 + power ln t``. ``power = 0`` drops B (then only the constant ``relaxation``
    widens the index). The indices are computed in a branch-free loop, as
    ``(S + relaxation + B) * (1/N) + sqrt(alpha² ln t * (1/N))`` (one division per arm).
    """
    log_t = math.log(t)
    width = alpha * alpha * log_t
    log_g = math.log(2.0) + power * log_t
    root_g = math.sqrt(log_g)
    factor = math.sqrt(8.0 * log_g)
    use_bound = power > 0.0
    n_arms = stats.shape[2]
    index = np.empty(n_arms)
    for b in range(stats.shape[0]):
        best = -1
        for k in range(n_arms):
            if stats[b, PULLS, k] == 0.0:
                best = k
                break
        if best < 0:
            if use_bound:
                for k in range(n_arms):
                    inverse = 1.0 / stats[b, PULLS, k]
                    bound = max(stats[b, ROOT_VAR, k], stats[b, MAX_SCALE, k] * root_g) * factor
                    index[k] = (stats[b, RELEASE, k] + relaxation + bound) * inverse + math.sqrt(width * inverse)
            else:
                for k in range(n_arms):
                    inverse = 1.0 / stats[b, PULLS, k]
                    index[k] = (stats[b, RELEASE, k] + relaxation) * inverse + math.sqrt(width * inverse)
            best = first_argmax(index)
        out[b] = best


# --------------------------------------------------------------------------- TreeDPUCB


@njit
def tree_update(stats, psums, actions, rewards, scale, grid, streams, noise):  # pragma: no cover
    """Feed copy b's reward to the binary tree counter of arm ``actions[b]`` (Laplace(``scale``) p-sums, on ``grid``).

    Python equivalent per copy: ``release = tree_add(position n, laplace(scale))`` with n the
    arm's item count after this one; the scale columns of ``stats``: popcount(n) terms of
    ``scale``. Returns :func:`first_bad` of the feedback, changing nothing when it is not -1.
    ``noise`` is a work array of B floats (:func:`standard_laplace`).
    """
    bad = first_bad(actions, rewards, stats.shape[2])
    if bad >= 0:
        return bad
    standard_laplace(streams, noise)
    for b in range(actions.shape[0]):
        a = actions[b]
        stats[b, PULLS, a] += 1.0
        total, bits = tree_add(psums, b, a, np.int64(stats[b, PULLS, a]), rewards[b], scale * noise[b], grid)
        stats[b, RELEASE, a] = total
        stats[b, ROOT_VAR, a] = math.sqrt(bits) * scale
        stats[b, MAX_SCALE, a] = scale
    return -1


# --------------------------------------------------------- per-arm doubling epochs (AdaP)


@njit
def epoch_update(
    counts,
    in_count,
    in_sum,
    length,
    mean,
    n_mean,
    noisy_sum,
    n_terms,
    committed,
    draws,
    actions,
    rewards,
    eps,
    grid,
    cumulative,
    streams,
):  # pragma: no cover
    """Add copy b's reward to the open epoch of arm ``actions[b]``; release the epoch when it is full.

    Python equivalent per copy, arm a (``length`` is 1 until a's first release, then the pulls
    of a at its last release, so epochs hold 1, 1, 2, 4, ... rewards)::

        counts[a] += 1; in_count[a] += 1; in_sum[a] += x
        if in_count[a] == length[a]:
            if cumulative: noisy_sum[a] += in_sum[a] + laplace(1/eps); n_terms[a] += 1
                           mean[a] = noisy_sum[a] / counts[a]; n_mean[a] = counts[a]
            else:          mean[a] = in_sum[a] / length[a] + laplace(1 / (eps * length[a]))
                           n_mean[a] = length[a]
            length[a] = counts[a]; in_count[a] = 0; in_sum[a] = 0
            if committed == a: committed = -1      # the episode of a is over

    Lattice sampler (``grid > 0``, w = 1 + grid): the epoch's sum is released on the grid,
    ``s = release(in_sum[a], laplace(w/eps), grid)``, then ``noisy_sum[a] += s`` (cumulative) or
    ``mean[a] = s / length[a]`` (forgetful: the mean is that lattice sum divided by the public
    epoch length, a post-processing).

    Returns :func:`first_bad` of the feedback, changing nothing when it is not -1.
    """
    bad = first_bad(actions, rewards, counts.shape[1])
    if bad >= 0:
        return bad
    for b in range(actions.shape[0]):
        a = actions[b]
        counts[b, a] += 1
        in_count[b, a] += 1
        in_sum[b, a] += rewards[b]
        if in_count[b, a] == length[b, a]:
            size = length[b, a]
            if grid > 0.0:
                lattice_sum = release(in_sum[b, a], rng_.laplace(streams, b, (1.0 + grid) / eps), grid)
                if cumulative:
                    noisy_sum[b, a] += lattice_sum
                    n_terms[b, a] += 1
                    mean[b, a] = noisy_sum[b, a] / counts[b, a]
                    n_mean[b, a] = counts[b, a]
                else:
                    mean[b, a] = lattice_sum / size
                    n_mean[b, a] = size
            elif cumulative:
                noisy_sum[b, a] += in_sum[b, a] + rng_.laplace(streams, b, 1.0 / eps)
                n_terms[b, a] += 1
                mean[b, a] = noisy_sum[b, a] / counts[b, a]
                n_mean[b, a] = counts[b, a]
            else:
                mean[b, a] = in_sum[b, a] / size + rng_.laplace(streams, b, 1.0 / (eps * size))
                n_mean[b, a] = size
            draws[b] += 1
            length[b, a] = counts[b, a]
            in_count[b, a] = 0
            in_sum[b, a] = 0.0
            if committed[b] == a:
                committed[b] = -1
    return -1


@njit(error_model="numpy")
def adap_choose(counts, mean, n_mean, n_terms, committed, alpha, eps, cumulative, t, out):  # pragma: no cover
    """Per copy b: the committed arm while its episode lasts; else start an episode and commit to its arm.

    The new episode's arm is the first arm never pulled, else the argmax of the AdaP-UCB index
    at round t (Azize & Basu, Eq. 7; ``n = n_mean``):
    ``mean + sqrt(alpha ln(2t) / (2n)) + alpha ln(t) / (eps n)`` (forgetful), or
    ``mean + sqrt(alpha ln(2t) / (2n)) + B / n`` (cumulative), B the Laplace-sum bound of
    ``n_terms`` terms of scale 1/eps at gamma = t**-alpha:
    ``max(sqrt(n_terms), sqrt(L)) / eps * sqrt(8 L)``, ``L = ln(2 t**alpha)``.
    """
    log_t = math.log(t)
    hoeffding = alpha * math.log(2.0 * t) / 2.0
    privacy = alpha * log_t / eps
    log_g = math.log(2.0) + alpha * log_t
    index = np.empty(counts.shape[1])
    for b in range(counts.shape[0]):
        if committed[b] >= 0:
            out[b] = committed[b]
            continue
        best = first_zero(counts, b)
        if best < 0:
            for k in range(index.shape[0]):
                n = n_mean[b, k]
                if cumulative:
                    extra = max(math.sqrt(n_terms[b, k]), math.sqrt(log_g)) / eps * math.sqrt(8.0 * log_g)
                else:
                    extra = privacy
                index[k] = mean[b, k] + math.sqrt(hoeffding / n) + extra / n
            best = first_argmax(index)
        committed[b] = best
        out[b] = best


@njit
def gaussian_ts_choose(counts, n_mean, mean, eps, sampling_streams, out):  # pragma: no cover
    """Per copy b: the first arm with no release yet, else argmax of θ_k ~ N(mean, 1/(4n) + 2/(eps n)²).

    ``n = n_mean[b, k]`` (the rewards behind the release). One normal draw per arm, in arm order,
    from copy b's sampling stream (:func:`agents.common.sampling.normal` of one word), only when every
    arm has a release. The argmax is taken as the draws come (the first largest, as
    :func:`~agents.common.kernels.first_argmax`): writing θ to an array and calling that helper
    made the batched agent about 8% slower (benchmarks/bench_dp_agents.py).
    """
    n_arms = counts.shape[1]
    for b in range(counts.shape[0]):
        best = first_zero(n_mean, b)
        if best < 0:
            best = 0
            best_value = -np.inf
            state = sampling.load(sampling_streams, b)
            for k in range(n_arms):
                n = n_mean[b, k]
                noise = 1.0 / (eps * n)
                sd = math.sqrt(0.25 / n + 2.0 * noise * noise)
                word, state = sampling.next_word(state)
                x, state = sampling.normal(word, state)
                value = mean[b, k] + sd * x
                if value > best_value:
                    best_value = value
                    best = k
            sampling.store(sampling_streams, b, state)
        out[b] = best


# ------------------------------------------------------------------- LDP Thompson sampling


@njit
def rr_update(successes, failures, shapes, actions, rewards, p_zero, slope, streams):  # pragma: no cover
    """Per copy b, one randomized-response report of reward r: bit = U < p_zero + slope * r; S or F += 1.

    ``shapes`` (the Beta samplers' gamma constants, :mod:`agents.stochastic.thompson_kernels`) follows.

    ``p_zero = 1/(1 + e^eps)``, ``slope = tanh(eps/2)``: the Bernoulli mechanism
    (:func:`bandit_envs.privacy.randomized_response.bernoulli_mechanism`), one uniform U from
    copy b's stream. Returns :func:`first_bad` of the feedback, changing nothing when it is not -1.
    """
    bad = first_bad(actions, rewards, successes.shape[1])
    if bad >= 0:
        return bad
    u = np.empty(actions.shape[0])
    rng_.double_pass(streams, u)  # the copies' uniforms first, then the reports
    for b in range(actions.shape[0]):
        ts_kernels.count_coin(successes, failures, shapes, b, actions[b], u[b] < p_zero + slope * rewards[b])
    return -1
