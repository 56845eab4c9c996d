"""Compiled steps of the Gaussian-noise private agents (``gaussian_ts.py``) and HybridDPUCB's paper width.

Conventions as in :mod:`agents.central_dp.kernels`: arrays carry the batch axis first, (B, K) per
arm or (B,) per copy; ``streams`` is the (B, 11) uint64 array of the copies' privacy-noise
streams (:mod:`agents.common.philox`), so copy b's draws come from row b only; ``t`` is the 1-based
number of the round being chosen; ties in an argmax go to the lowest arm.

The Gaussian draws are privacy noise (a Thompson sample of a Gaussian posterior is a Gaussian
mechanism on the arm's empirical mean), so they come from the noise streams, not from the
sampling streams of :mod:`agents.common.sampling`: :func:`gaussian_pair` is the Box–Muller transform of
two uniforms of the stream (``Generator.random()``), whose plain-Python twin is
:class:`agents.central_dp.gaussian_ts.ReferenceGaussians`. Floating-point Gaussian sampling shares the
low-order-bit weakness of floating-point Laplace sampling (Mironov, CCS 2012); a discrete
Gaussian (Canonne, Kamath, Steinke, NeurIPS 2020) would be the production choice.

The readable references of the whole agents are in :mod:`agents.central_dp.gaussian_ts`
(``Reference*`` classes), and ``tests/test_dp_gaussian_ts.py`` checks that both choose the same
arms for the same seed.
"""

from __future__ import annotations

import math

import numpy as np

from agents.central_dp.kernels import PULLS, RELEASE, first_zero
from agents.common import philox as rng_
from agents.common.kernels import first_argmax, first_bad
from bandit_envs._jit import njit

TWO_PI = 2.0 * math.pi


@njit(inline="always")
def gaussian_pair(streams, b):  # pragma: no cover
    """Two independent N(0, 1) draws of copy b: ``r cos(2π U2)``, ``r sin(2π U2)``, ``r = sqrt(-2 ln(1 - U1))``.

    Box & Muller (1958) on two uniforms U1, U2 in [0, 1) of the stream (U1 first). A round's
    draws are taken in pairs, in arm order; the second of a pair left over at the end of a
    round is discarded, so a copy's stream position depends only on its draws per round.
    """
    u1 = rng_.next_double(streams, b)
    u2 = rng_.next_double(streams, b)
    r = math.sqrt(-2.0 * math.log(1.0 - u1))
    angle = TWO_PI * u2
    return r * math.cos(angle), r * math.sin(angle)


# ------------------------------------------------------------- HybridDPUCB, width "paper"


@njit(error_model="numpy")
def hybrid_paper_choose(stats, alpha, eps, t, out):  # pragma: no cover
    """Per copy b, the first arm never pulled, else the argmax of DP-UCB-BOUND's index with the paper's width.

    ``S/N + sqrt(alpha² ln t / N) + v/N`` with ``v = c`` when N is a power of 2 (the release
    holds only the logarithmic part's noise) and ``v = c (ln N + 1)`` otherwise,
    ``c = (sqrt(8)/eps) ln(4 t⁴)`` (N the arm's pulls, S the hybrid counter's last release;
    ``stats`` as in :func:`agents.central_dp.kernels.hybrid_update`).
    """
    log_t = math.log(t)
    width = alpha * alpha * log_t
    scale = math.sqrt(8.0) / eps * math.log(4.0 * t**4)
    index = np.empty(stats.shape[2])
    pull_counts = stats[:, PULLS]
    for b in range(stats.shape[0]):
        best = first_zero(pull_counts, b)
        if best < 0:
            for k in range(index.shape[0]):
                n = stats[b, PULLS, k]
                pulls = np.int64(n)
                v = scale if pulls & (pulls - 1) == 0 else scale * (math.log(n) + 1.0)
                index[k] = stats[b, RELEASE, k] / n + math.sqrt(width / n) + v / n
            best = first_argmax(index)
        out[b] = best


# ------------------------------------------------------- per-arm pull counts and reward sums


@njit
def sums_update(counts, sums, actions, rewards):  # pragma: no cover
    """``counts[b, a] += 1; sums[b, a] += r`` for every copy b (a = ``actions[b]``, r = ``rewards[b]``).

    Returns :func:`agents.common.kernels.first_bad` of the feedback, changing nothing when it is not -1.
    """
    bad = first_bad(actions, rewards, counts.shape[1])
    if bad >= 0:
        return bad
    for b in range(actions.shape[0]):
        a = actions[b]
        counts[b, a] += 1
        sums[b, a] += rewards[b]
    return -1


# ------------------------------------------- Gaussian Thompson sampling with pre-pulls (Ou et al.)


@njit
def prepull_ts_choose(counts, sums, pre_pulls, variance, streams, draws, out):  # pragma: no cover
    """Per copy b: the lowest arm with fewer than ``max(pre_pulls, 1)`` pulls; else Gaussian Thompson sampling.

    θ_k = sums[k]/(counts[k] + 1) + sqrt(variance/(counts[k] + 1)) · Z_k, one N(0, 1) draw Z_k
    per arm in arm order (:func:`gaussian_pair`: arms 0 and 1 share a pair, then 2 and 3, ...)
    from copy b's noise stream, and the argmax of θ is played; ``draws[b]`` counts the sampling
    rounds.
    """
    first = max(pre_pulls, 1)
    n_arms = counts.shape[1]
    theta = np.empty(n_arms)
    for b in range(counts.shape[0]):
        best = -1
        for k in range(n_arms):
            if counts[b, k] < first:
                best = k
                break
        if best < 0:
            spare = 0.0
            for k in range(n_arms):
                if k % 2 == 0:
                    z, spare = gaussian_pair(streams, b)
                else:
                    z = spare
                n1 = counts[b, k] + 1.0
                theta[k] = sums[b, k] / n1 + math.sqrt(variance / n1) * z
            best = first_argmax(theta)
            draws[b] += 1
        out[b] = best


# ------------------------------------------------------------------------- DP-TS-UCB (Hu et al.)


@njit
def ts_ucb_update(counts, sums, used, top, actions, rewards):  # pragma: no cover
    """:func:`sums_update`, and the pulled arm gets a new posterior: its sample count and best sample reset.

    Returns :func:`agents.common.kernels.first_bad` of the feedback, changing nothing when it is not -1.
    """
    bad = sums_update(counts, sums, actions, rewards)
    if bad >= 0:
        return bad
    for b in range(actions.shape[0]):
        a = actions[b]
        used[b, a] = 0
        top[b, a] = -np.inf
    return -1


@njit
def ts_ucb_choose(counts, sums, used, top, budget, variance, streams, draws, out):  # pragma: no cover
    """Per copy b: the lowest arm never pulled; else argmax over arms of a fresh or a reused posterior sample.

    Arm k's posterior is N(sums[k]/counts[k], variance/counts[k]). While it has given fewer than
    ``budget`` samples (``used[b, k]``), the arm's value is a fresh sample (one N(0, 1) draw of
    copy b's noise stream; the round's draws in arm order, in pairs of :func:`gaussian_pair`);
    after that, the largest of its samples (``top[b, k]``), drawing nothing. ``draws[b]``
    counts the Gaussian draws.
    """
    values = np.empty(counts.shape[1])
    for b in range(counts.shape[0]):
        best = first_zero(counts, b)
        if best < 0:
            spare = 0.0
            have_spare = False
            for k in range(values.shape[0]):
                if used[b, k] < budget:
                    if have_spare:
                        z = spare
                        have_spare = False
                    else:
                        z, spare = gaussian_pair(streams, b)
                        have_spare = True
                    n = np.float64(counts[b, k])
                    value = sums[b, k] / n + math.sqrt(variance / n) * z
                    used[b, k] += 1
                    draws[b] += 1
                    if value > top[b, k]:
                        top[b, k] = value
                else:
                    value = top[b, k]
                values[k] = value
            best = first_argmax(values)
        out[b] = best
