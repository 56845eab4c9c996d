"""Compiled kernels of ε-greedy, KL-UCB and MOSS (:mod:`agents.greedy`, :mod:`agents.optimistic`), with references.

The three agents keep the same packed state: one float64 row per copy b,

    columns [0, K)     sums    reward sum per arm
    columns [K, 2K)    means   sums / counts
    columns [2K, 3K)   counts  pulls per arm: int64 values stored in the same 8 bytes
    columns [3K, 4K)   aux     per-arm value the agent keeps up to date when the arm is pulled:
                               KL-UCB  h(mean) = mean ln mean + (1 - mean) ln(1 - mean)
                               MOSS    the index mean + sqrt(max(ln(T / (K N)), 0) / N)
                               ε-greedy unused (0)
    column  4K         param   per-copy parameter: ε (constant schedule) or cK/d² (decaying
                               schedule) for ε-greedy, c for KL-UCB, T/K for MOSS

as :mod:`agents.index` packs UCB's (the kernels read the counts through ``state.view(np.int64)``).
Means are sum / count, so arms with equal reward histories have bit-equal means and exact ties
go to the lowest index. The round counter t is shared by the copies and passed as a number.

Each kernel says what it computes; the classes at the end of the module (:class:`GreedyReference`,
:class:`KLUCBReference`, :class:`MOSSReference`) are one copy of each agent in plain Python with
the same arithmetic, and make the same choices (``tests/test_baseline_agents.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_envs._jit import njit
from bandit_envs.core import next_double

#: Columns of a state row after the 4K per-arm columns (param).
EXTRA_COLUMNS = 1
#: ``kind`` of :func:`mean_update`: which per-arm ``aux`` value the agent keeps.
KIND_GREEDY, KIND_KLUCB, KIND_MOSS = 0, 1, 2
#: Newton steps at most in :func:`kl_index` (it needs about five from its starting point).
MAX_NEWTON = 100


@njit(inline="always")
def n_arms_of(columns: int) -> int:  # pragma: no cover
    """K of a packed row with ``columns`` columns."""
    return (columns - EXTRA_COLUMNS) // 4


# Updates ---------------------------------------------------------------------------------------


@njit(inline="always")
def entropy_term(p: float) -> float:  # pragma: no cover
    """``p ln p + (1 - p) ln(1 - p)`` with ``0 ln 0 = 0``: the part of kl(p, q) that does not depend on q."""
    h = 0.0
    if p > 0.0:
        h += p * math.log(p)
    if p < 1.0:
        h += (1.0 - p) * math.log(1.0 - p)
    return h


@njit(error_model="numpy")
def mean_update(state: Any, actions: Any, rewards: Any, kind: int, low: float, high: float) -> int:  # pragma: no cover
    """Per copy b, add ``rewards[b]`` to arm ``actions[b]``; return the first bad copy (-1 if none).

    ``counts += 1; sums += r; means = sums / counts`` for the pulled arm, then its ``aux``
    (module docstring) by ``kind``. Nothing is updated when a copy has an action outside [0, K)
    or a reward that is not finite or outside [``low``, ``high``].
    """
    ints = state.view(np.int64)
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    for b in range(n_rows):
        r = rewards[b]
        if actions[b] < 0 or actions[b] >= k_arms or not (low <= r <= high and np.isfinite(r)):
            return b
    for b in range(n_rows):
        k = actions[b]
        ints[b, 2 * k_arms + k] += 1
        n = ints[b, 2 * k_arms + k]
        state[b, k] += rewards[b]
        mean = state[b, k] / n
        state[b, k_arms + k] = mean
        if kind == KIND_KLUCB:
            state[b, 3 * k_arms + k] = entropy_term(mean)
        elif kind == KIND_MOSS:
            width = math.log(state[b, 4 * k_arms] / n)
            state[b, 3 * k_arms + k] = mean + math.sqrt(max(width, 0.0) / n)
    return -1


@njit(inline="always")
def first_unplayed(ints: Any, b: int, k_arms: int) -> int:  # pragma: no cover
    """The lowest arm of copy b never pulled, or -1."""
    for k in range(k_arms):
        if ints[b, 2 * k_arms + k] == 0:
            return k
    return -1


# ε-greedy -----------------------------------------------------------------------------------------


@njit(error_model="numpy")
def greedy_choose(state: Any, t: int, decaying: bool, bitgens: Any) -> Any:  # pragma: no cover
    """ε-greedy's arm of round t + 1 for every copy b (``t`` rounds completed).

    The first arm never pulled (no draw); else ε = param (constant) or min(1, param / (t + 1))
    (decaying: param = cK/d², t + 1 the round number n of the paper), one draw u from copy b's
    generator (at ``bitgens[b]``); u < ε: a uniform arm ``int(u' K)`` with a second draw u';
    else the arm with the largest mean (ties to the lowest index). Reference:
    :meth:`GreedyReference.act`.
    """
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    ints = state.view(np.int64)
    out = np.empty(n_rows, dtype=np.int64)
    for b in range(n_rows):
        chosen = first_unplayed(ints, b, k_arms)
        if chosen < 0:
            epsilon = state[b, 4 * k_arms]
            if decaying:
                epsilon = min(1.0, epsilon / (t + 1))
            if next_double(bitgens[b]) < epsilon:
                chosen = min(int(next_double(bitgens[b]) * k_arms), k_arms - 1)
            else:
                chosen = 0
                best = state[b, k_arms]
                for k in range(1, k_arms):
                    if state[b, k_arms + k] > best:
                        best = state[b, k_arms + k]
                        chosen = k
        out[b] = chosen
    return out


# KL-UCB -----------------------------------------------------------------------------------------


@njit(inline="always")
def kl_from(p: float, h: float, q: float) -> float:  # pragma: no cover
    """Bernoulli kl(p, q) = h − p ln q − (1 − p) ln(1 − q) for 0 < q < 1, with ``h = entropy_term(p)``."""
    value = h
    if p > 0.0:
        value -= p * math.log(q)
    if p < 1.0:
        value -= (1.0 - p) * math.log(1.0 - q)
    return value


@njit(inline="always")
def kl_start(p: float, h: float, d: float) -> float:  # pragma: no cover
    """A q ≥ max{q : kl(p, q) ≤ d} for 0 ≤ p < 1 and d > 0: the smallest of three upper bounds.

    Each is a point where kl(p, q) ≥ d by a lower bound of kl: Pinsker's p + sqrt(d/2)
    (kl(p, q) ≥ 2(q − p)²); p + a + sqrt(a² + 2pa) with a = d(1 − p) (kl(p, q) ≥ (q − p)²/(2q(1 − p)),
    as x(1 − x) ≤ q(1 − p) on [p, q] in kl(p, q) = ∫_p^q (q − x)/(x(1 − x)) dx); and
    1 − exp((h − d)/(1 − p)) (kl(p, q) ≥ h − (1 − p) ln(1 − q)).
    """
    a = d * (1.0 - p)
    q = min(p + math.sqrt(0.5 * d), p + a + math.sqrt(a * a + 2.0 * p * a))
    return min(q, 1.0 - math.exp((h - d) / (1.0 - p)))


@njit
def kl_index(p: float, h: float, d: float, tol: float) -> float:  # pragma: no cover
    """max{q ∈ [p, 1] : kl(p, q) ≤ d} to ``tol``: a q with q* ≤ q ≤ q* + tol (up to rounding).

    ``h = entropy_term(p)``. p for d ≤ 0; 1 for p = 1. Newton's method on the convex increasing
    f(q) = kl(p, q) − d on [p, 1), started to the right of the root q* at :func:`kl_start`. From
    the right every Newton iterate stays right of q* and they decrease to it; once a step is
    below ``tol``, f(q − tol) < 0 is checked, which puts q* within ``tol`` below q (else the steps
    go on). Reference: :func:`kl_index_reference`.
    """
    if not d > 0.0:
        return p
    if p >= 1.0:
        return 1.0
    q = kl_start(p, h, d)
    if q >= 1.0:
        return 1.0
    for _ in range(MAX_NEWTON):
        f = kl_from(p, h, q) - d
        if f <= 0.0:
            return q
        step = f * q * (1.0 - q) / (q - p)
        nxt = q - step
        if nxt <= p:  # not in exact arithmetic (convexity): bisect instead
            nxt = 0.5 * (p + q)
        if step <= tol:
            low = nxt - tol
            if low <= p or kl_from(p, h, low) < d:
                return nxt
        q = nxt
    return q


@njit(inline="always")
def klucb_delta(log_t: float, loglog_t: float, c: float) -> float:  # pragma: no cover
    """The KL-UCB threshold δ = ln t + c ln ln t, taken as 0 when negative or when t ≤ 1 (``log_t`` ≤ 0)."""
    if not log_t > 0.0:
        return 0.0
    delta = log_t if c == 0.0 else log_t + c * loglog_t
    return max(delta, 0.0)


@njit(inline="always")
def klucb_log_terms(t: int) -> tuple[float, float]:  # pragma: no cover
    """(ln t, ln ln t) for :func:`klucb_delta` (0 where not defined)."""
    log_t = math.log(t) if t > 1 else 0.0
    return log_t, (math.log(log_t) if log_t > 0.0 else 0.0)


#: Blocks of K columns of KL-UCB's anchor array (one row per copy): see :func:`set_anchor`.
ANCHOR_BLOCKS = 5


@njit(inline="always")
def set_anchor(cache: Any, b: int, k_arms: int, k: int, p: float, h: float, x: float) -> None:  # pragma: no cover
    """Make x (p < x < 1) arm k's anchor: keep x, kl(p, x), 1/kl(p, x) and 1/slope = x(1 − x)/(x − p)."""
    kx = kl_from(p, h, x)
    cache[b, k] = x
    cache[b, k_arms + k] = kx
    cache[b, 2 * k_arms + k] = 1.0 / kx if kx > 0.0 else 0.0
    cache[b, 3 * k_arms + k] = x * (1.0 - x) / (x - p)


@njit(inline="always")
def clear_anchor(cache: Any, b: int, k_arms: int, k: int, p: float) -> None:  # pragma: no cover
    """No anchor for arm k: bounds [p, 1] (x = p, 1/kl = 0, 1/slope = inf in :func:`index_bounds`)."""
    cache[b, k] = p
    cache[b, k_arms + k] = 0.0
    cache[b, 2 * k_arms + k] = 0.0
    cache[b, 3 * k_arms + k] = np.inf


@njit(inline="always")
def index_bounds(
    p: float, d: float, x: float, kx: float, inv_kx: float, inv_sx: float
) -> tuple[float, float]:  # pragma: no cover
    """(lower, upper) bounds of u = max{q : kl(p, q) ≤ d}, d > 0, from arm's anchor x (:func:`set_anchor`).

    By convexity of f(q) = kl(p, q) − d: the tangent at x lies below f, so its zero
    x + (d − kx)/slope is ≥ u (capped at 1); the chord from (p, −d) to (x, kx − d) lies above f
    on [p, x], so when kx ≥ d its zero p + (x − p) d / kx ≤ x is ≤ u; when kx < d, x < u and
    the chord's zero is above x, hence the min. No logarithm and no division: the anchor keeps
    the reciprocals. Without an anchor (:func:`clear_anchor`) the bounds are [p, 1].
    """
    lower = min(x, p + (x - p) * d * inv_kx)
    upper = min(x + (d - kx) * inv_sx, 1.0)
    return lower, upper


@njit(error_model="numpy")
def klucb_update(state: Any, cache: Any, actions: Any, rewards: Any, t_next: int) -> int:  # pragma: no cover
    """KL-UCB's update: :func:`mean_update` (with h(mean) in ``aux``), then a new anchor for the pulled arm.

    Rewards must be finite and in [0, 1] (else nothing changes and the first bad copy is
    returned). Anchors are kept at or left of the index u = max{q : kl(μ̂, q) ≤ d}, d = δ/N with
    δ that of round ``t_next`` + 1 (``t_next`` rounds completed after this update); δ only grows,
    so an anchor stays left of its arm's index until the arm is pulled again. From the pulled
    arm's old anchor x (or :func:`kl_start` if x is not in (μ̂, 1)), one Newton step gives x'
    right of u (the tangent lies below the convex kl(μ̂, ·) − d); the zero
    p + (x' − p) d / kl(μ̂, x') of the chord from (μ̂, −d) to x', left of u by convexity and close
    to it, becomes the anchor. Column block 4 keeps 1/N. The anchors only make the choice
    cheaper: the arm chosen is the same whatever they are.
    """
    bad = mean_update(state, actions, rewards, KIND_KLUCB, 0.0, 1.0)
    if bad >= 0:
        return bad
    ints = state.view(np.int64)
    k_arms = n_arms_of(state.shape[1])
    log_t, loglog_t = klucb_log_terms(t_next)
    for b in range(state.shape[0]):
        k = actions[b]
        p = state[b, k_arms + k]
        h = state[b, 3 * k_arms + k]
        inv_n = 1.0 / ints[b, 2 * k_arms + k]
        cache[b, 4 * k_arms + k] = inv_n
        d = klucb_delta(log_t, loglog_t, state[b, 4 * k_arms]) * inv_n
        x = cache[b, k]
        if not (p < 1.0 and d > 0.0):
            clear_anchor(cache, b, k_arms, k, p)
            continue
        if not p < x < 1.0:
            x = kl_start(p, h, d)
        if x < 1.0:  # one Newton step: the tangent's zero is right of u wherever x is
            x += (d - kl_from(p, h, x)) * x * (1.0 - x) / (x - p)
        if not p < x < 1.0:
            x = kl_start(p, h, d)
        if not x < 1.0:
            clear_anchor(cache, b, k_arms, k, p)
            continue
        kx = kl_from(p, h, x)
        if kx > d:  # the chord's zero, left of u
            x = p + (x - p) * d / kx
            if not p < x:
                clear_anchor(cache, b, k_arms, k, p)
                continue
            kx = kl_from(p, h, x)
        cache[b, k] = x
        cache[b, k_arms + k] = kx
        cache[b, 2 * k_arms + k] = 1.0 / kx if kx > 0.0 else 0.0
        cache[b, 3 * k_arms + k] = x * (1.0 - x) / (x - p)
    return -1


@njit(error_model="numpy")
def klucb_choose(state: Any, cache: Any, t: int, tol: float) -> Any:  # pragma: no cover
    """KL-UCB's arm of round t + 1 for every copy (``t`` rounds completed, the paper's t).

    The first arm never pulled; else the arm with the largest index
    u_k = max{q : N_k kl(μ̂_k, q) ≤ δ}, δ = ln t + c ln ln t (:func:`klucb_delta`), computed by
    :func:`kl_index` to ``tol``, ties to the lowest index: the argmax of
    :meth:`KLUCBReference.act`, which computes every index. Computed here with few logarithms:
    every arm's index has bounds lower_k ≤ u_k ≤ upper_k from its anchor (:func:`index_bounds`);
    c = argmax lower_k. If upper_k + tol < lower_c for every other k, the computed index of k
    (≤ u_k + tol) is below that of c (≥ u_c), and c is chosen without computing any index.
    Otherwise u_c is computed, then, in arm order, each other index unless upper_k + tol < v,
    v the best index so far; each computed index u becomes its arm's anchor u − tol (left of u*). δ ≤ 0 makes every
    index the mean: the first largest mean.
    """
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    ints = state.view(np.int64)
    out = np.empty(n_rows, dtype=np.int64)
    log_t, loglog_t = klucb_log_terms(t)
    lower = np.empty(k_arms)
    upper = np.empty(k_arms)
    for b in range(n_rows):
        chosen = first_unplayed(ints, b, k_arms)
        if chosen >= 0:
            out[b] = chosen
            continue
        delta = klucb_delta(log_t, loglog_t, state[b, 4 * k_arms])
        if not delta > 0.0:
            c = 0
            for k in range(1, k_arms):
                if state[b, k_arms + k] > state[b, k_arms + c]:
                    c = k
            out[b] = c
            continue
        for k in range(k_arms):  # branch-free: LLVM vectorizes it
            lower[k], upper[k] = index_bounds(
                state[b, k_arms + k],
                delta * cache[b, 4 * k_arms + k],
                cache[b, k],
                cache[b, k_arms + k],
                cache[b, 2 * k_arms + k],
                cache[b, 3 * k_arms + k],
            )
        c = 0
        for k in range(1, k_arms):
            if lower[k] > lower[c]:
                c = k
        top = -np.inf
        for k in range(k_arms):
            if k != c and upper[k] > top:
                top = upper[k]
        if top + tol < lower[c]:
            out[b] = c
            continue
        best = -1
        v = 0.0
        for j in range(k_arms):
            k = c if j == 0 else (j - 1 if j <= c else j)  # c first, then the others in arm order
            if best >= 0 and upper[k] + tol < v:
                continue
            p = state[b, k_arms + k]
            h = state[b, 3 * k_arms + k]
            d = delta / ints[b, 2 * k_arms + k]
            u = kl_index(p, h, d, tol)
            if p < u - tol < 1.0:  # left of the index (kl_index checks kl(p, u - tol) < d)
                set_anchor(cache, b, k_arms, k, p, h, u - tol)
            if best < 0 or u > v or (u == v and k < best):
                best = k
                v = u
        out[b] = best
    return out


# MOSS -------------------------------------------------------------------------------------------


@njit(error_model="numpy")
def moss_choose(state: Any) -> Any:  # pragma: no cover
    """MOSS's arm for every copy: the first arm never pulled, else the largest ``aux`` (ties to the lowest index).

    ``aux`` holds each arm's index μ̂ + sqrt(max(ln(T/(K N)), 0)/N), which changes only when the
    arm is pulled (:func:`mean_update`). Reference: :meth:`MOSSReference.act`.
    """
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    ints = state.view(np.int64)
    out = np.empty(n_rows, dtype=np.int64)
    for b in range(n_rows):
        chosen = first_unplayed(ints, b, k_arms)
        if chosen < 0:
            chosen = 0
            best = state[b, 3 * k_arms]
            for k in range(1, k_arms):
                if state[b, 3 * k_arms + k] > best:
                    best = state[b, 3 * k_arms + k]
                    chosen = k
        out[b] = chosen
    return out


# Readable references (one copy, plain Python) -----------------------------------------------------


class _PlainMeans:
    """Pull counts, reward sums and means (sum / count) of one copy, in plain Python."""

    def __init__(self, n_arms: int) -> None:
        self.n_arms = n_arms
        self.counts = [0] * n_arms
        self.sums = [0.0] * n_arms
        self.t = 0

    def update(self, action: int, reward: float) -> None:
        self.counts[action] += 1
        self.sums[action] += reward
        self.t += 1

    def mean(self, k: int) -> float:
        return self.sums[k] / self.counts[k]

    def unplayed(self) -> int | None:
        return self.counts.index(0) if 0 in self.counts else None

    @staticmethod
    def first_argmax(values: list[float]) -> int:
        return values.index(max(values))


class GreedyReference(_PlainMeans):
    """One copy of :class:`agents.EpsilonGreedy` in plain Python, drawing from ``rng``."""

    def __init__(self, n_arms: int, param: float, decaying: bool, rng: np.random.Generator) -> None:
        super().__init__(n_arms)
        self.param, self.decaying, self.rng = param, decaying, rng

    def act(self) -> int:
        unplayed = self.unplayed()
        if unplayed is not None:
            return unplayed
        epsilon = min(1.0, self.param / (self.t + 1)) if self.decaying else self.param
        if self.rng.random() < epsilon:
            return min(int(self.rng.random() * self.n_arms), self.n_arms - 1)
        return self.first_argmax([self.mean(k) for k in range(self.n_arms)])


def kl_bernoulli(p: float, q: float) -> float:
    """kl(p, q) = p ln(p/q) + (1 − p) ln((1 − p)/(1 − q)), written as :func:`kl_from` computes it."""
    return _kl_from_reference(p, _entropy_reference(p), q)


def _entropy_reference(p: float) -> float:
    h = 0.0
    if p > 0.0:
        h += p * math.log(p)
    if p < 1.0:
        h += (1.0 - p) * math.log(1.0 - p)
    return h


def _kl_from_reference(p: float, h: float, q: float) -> float:
    value = h
    if p > 0.0:
        value -= p * math.log(q)
    if p < 1.0:
        value -= (1.0 - p) * math.log(1.0 - q)
    return value


def kl_index_reference(p: float, d: float, tol: float) -> float:
    """:func:`kl_index` in plain Python (same steps, same result): max{q : kl(p, q) ≤ d} to ``tol``."""
    h = _entropy_reference(p)
    if not d > 0.0:
        return p
    if p >= 1.0:
        return 1.0
    a = d * (1.0 - p)
    q = min(p + math.sqrt(0.5 * d), p + a + math.sqrt(a * a + 2.0 * p * a))
    q = min(q, 1.0 - math.exp((h - d) / (1.0 - p)))
    if q >= 1.0:
        return 1.0
    for _ in range(MAX_NEWTON):
        f = _kl_from_reference(p, h, q) - d
        if f <= 0.0:
            return q
        step = f * q * (1.0 - q) / (q - p)
        nxt = q - step
        if nxt <= p:
            nxt = 0.5 * (p + q)
        if step <= tol and (nxt - tol <= p or _kl_from_reference(p, h, nxt - tol) < d):
            return nxt
        q = nxt
    return q


class KLUCBReference(_PlainMeans):
    """One copy of :class:`agents.KLUCB` in plain Python: every index computed, then the first argmax."""

    def __init__(self, n_arms: int, c: float, tol: float) -> None:
        super().__init__(n_arms)
        self.c, self.tol = c, tol

    def delta(self) -> float:
        """The threshold δ = ln t + c ln ln t (0 when negative or t ≤ 1)."""
        if self.t <= 1:
            return 0.0
        log_t = math.log(self.t)
        return max(log_t if self.c == 0.0 else log_t + self.c * math.log(log_t), 0.0)

    def index(self, k: int) -> float:
        return kl_index_reference(self.mean(k), self.delta() / self.counts[k], self.tol)

    def act(self) -> int:
        unplayed = self.unplayed()
        if unplayed is not None:
            return unplayed
        return self.first_argmax([self.index(k) for k in range(self.n_arms)])


class MOSSReference(_PlainMeans):
    """One copy of :class:`agents.MOSS` in plain Python."""

    def __init__(self, n_arms: int, horizon: int) -> None:
        super().__init__(n_arms)
        self.horizon = horizon

    def index(self, k: int) -> float:
        n = self.counts[k]
        return self.mean(k) + math.sqrt(max(math.log(self.horizon / self.n_arms / n), 0.0) / n)

    def act(self) -> int:
        unplayed = self.unplayed()
        if unplayed is not None:
            return unplayed
        return self.first_argmax([self.index(k) for k in range(self.n_arms)])
