"""Compiled kernels of ε-greedy, KL-UCB and MOSS (``greedy.py``, ``optimistic.py`` in this package), with references.

The three agents keep the same packed state: one float64 row per copy b,

    columns [0, K)     sums    reward sum per arm
    columns [K, 2K)    means   sums / counts
    columns [2K, 3K)   counts  pulls per arm: int64 values stored in the same 8 bytes
    columns [3K, 4K)   aux     per-arm value the agent keeps up to date when the arm is pulled:
                               MOSS    the index mean + sqrt(max(ln(T / (K N)), 0) / N)
                               ε-greedy, KL-UCB unused (0; KL-UCB keeps its anchors apart)
    column  4K         param   per-copy parameter: ε (constant schedule) or cK/d² (decaying
                               schedule) for ε-greedy, c for KL-UCB, T/K for MOSS

as :mod:`agents.stochastic.index` packs UCB's (the kernels read the counts through ``state.view(np.int64)``),
and for the same measured reason (the comment above UCB's layout): named fields, one array each,
would be typed and unboxed at every call, and an empty kernel's call already costs 2-3x the
packed row's with this state's five arrays and a per-copy record (257-379 ns against 80-124 ns)
and 5-9x with KL-UCB's eleven and a record (540-789 ns; ``benchmarks/bench_named_state.py``),
more than the 5% that named state was allowed to cost these sub-microsecond steps.
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

from agents.base import SUMMED_REWARD_BOUNDS
from bandit_envs._jit import njit
from bandit_envs.core import next_double

#: Columns of a state row after the 4K per-arm columns (param).
EXTRA_COLUMNS = 1
#: ``kind`` of :func:`mean_update`: which per-arm ``aux`` value the agent keeps.
KIND_GREEDY, KIND_KLUCB, KIND_MOSS = 0, 1, 2
#: Newton steps at most in :func:`kl_search` (from an arm's anchor it needs one or two).
MAX_NEWTON = 100
#: :data:`agents.base.SUMMED_REWARD_BOUNDS`, the bounds of the rewards of the agents that sum them, as
#: two module constants (numba compiles them into the single-env steps).
SUMMED_LOW, SUMMED_HIGH = SUMMED_REWARD_BOUNDS


@njit(inline="always")
def n_arms_of(columns: int) -> int:  # pragma: no cover
    """K of a packed row with ``columns`` columns."""
    return (columns - EXTRA_COLUMNS) // 4


# Updates ---------------------------------------------------------------------------------------


@njit(error_model="numpy")
def mean_update(state: Any, actions: Any, rewards: Any, kind: int, low: float, high: float) -> int:  # pragma: no cover
    """Per copy b, add ``rewards[b]`` to arm ``actions[b]`` (:func:`mean_add`); return the first bad copy (-1 if none).

    Nothing is updated when a copy has an action outside [0, K) or a reward that is not finite
    or outside [``low``, ``high``] (the agent's ``reward_bounds``).
    """
    ints = state.view(np.int64)
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    for b in range(n_rows):
        if not feedback_fits(actions[b], rewards[b], k_arms, low, high):
            return b
    for b in range(n_rows):
        mean_add(state, ints, b, k_arms, actions[b], rewards[b], kind)
    return -1


@njit(inline="always")
def feedback_fits(action: int, reward: float, k_arms: int, low: float, high: float) -> bool:  # pragma: no cover
    """Whether ``action`` is in [0, K) and ``reward`` is finite and in [``low``, ``high``]."""
    return 0 <= action < k_arms and reward_fits(reward, low, high)


@njit(inline="always")
def reward_fits(reward: float, low: float, high: float) -> bool:  # pragma: no cover
    """Whether ``reward`` is finite and in [``low``, ``high``] (NaN is not): every index agent's reward test.

    The batched updates pass the agent's ``reward_bounds``; the single-env steps of the agents that
    sum their rewards (UCB, UCB-N, SM-UCB, MOSS, ε-greedy) pass those agents' bounds,
    :data:`SUMMED_LOW` and :data:`SUMMED_HIGH`, as constants.
    """
    return low <= reward <= high and np.isfinite(reward)


@njit(inline="always")
def mean_add(state: Any, ints: Any, b: int, k_arms: int, k: int, r: float, kind: int) -> None:  # pragma: no cover
    """Copy b pulled arm k for reward r: ``counts += 1; sums += r; means = sums / counts``, then its ``aux``.

    Which ``aux`` is said by ``kind``. ``ints`` is ``state.view(np.int64)`` (the counts); the
    caller has checked k and r.
    """
    ints[b, 2 * k_arms + k] += 1
    n = ints[b, 2 * k_arms + k]
    state[b, k] += r
    mean = state[b, k] / n
    state[b, k_arms + k] = mean
    if kind == KIND_MOSS:
        width = math.log(state[b, 4 * k_arms] / n)
        state[b, 3 * k_arms + k] = mean + math.sqrt(max(width, 0.0) / n)


@njit(inline="always")
def first_unplayed(ints: Any, b: int, k_arms: int) -> int:  # pragma: no cover
    """The lowest arm of copy b never pulled, or -1."""
    for k in range(k_arms):
        if ints[b, 2 * k_arms + k] == 0:
            return k
    return -1


@njit(inline="always")
def choice_frame(state: Any) -> Any:  # pragma: no cover
    """What a batched choice reads and fills: (B, K, the int64 view of the counts, an empty (B,) int64 ``out``)."""
    n_rows = state.shape[0]
    return n_rows, n_arms_of(state.shape[1]), state.view(np.int64), np.empty(n_rows, dtype=np.int64)


@njit(inline="always")
def other_top(upper: Any, c: int) -> float:  # pragma: no cover
    """The largest ``upper[k]`` over the arms k != c (-inf if none): a branch-free max chain."""
    top = -np.inf
    for k in range(upper.shape[0]):
        top = max(top, upper[k] if k != c else -np.inf)
    return top


@njit(inline="always")
def column_argmax(state: Any, b: int, start: int, k_arms: int) -> int:  # pragma: no cover
    """The arm k < K of the largest ``state[b, start + k]``, the lowest on ties (strict ``>``)."""
    chosen = 0
    best = state[b, start]
    for k in range(1, k_arms):
        if state[b, start + k] > best:
            best = state[b, start + k]
            chosen = k
    return chosen


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
#
# The computed index is a point of the grid tol·ℤ (tol the agent's accuracy): for 0 ≤ p < 1 and
# d > 0, with u* = max{q ∈ [p, 1] : kl(p, q) ≤ d} the exact index,
#
#     û(p, d) = min({m·tol : m ∈ ℤ, p < m·tol < 1, kl(p, m·tol) > d} ∪ {1}),
#
# the first grid point right of u*, so u* < û ≤ u* + tol (û = 1 when no grid point below 1 is
# right of u*). û depends on p, d and tol only, not on how u* was approached, so the kernels may
# start their search anywhere (from a bound kept per arm) and still compute the value of the
# readable reference (:func:`kl_index_reference`, which bisects). kl(p, ·) increases on (p, 1) by
# f'·tol per grid step, far more than the rounding of its evaluation (tol ≥ 1e-12), so the
# grid test is monotone and the search (:func:`grid_point`) finds that one m.

#: Margin added to tol when bounds decide a comparison without computing an index (covers rounding).
SLACK = 1e-12


@njit(inline="always")
def kl_terms(p: float, q: float) -> tuple[float, float]:  # pragma: no cover
    """(kl(p, q), ∂kl/∂p (p, q)) for 0 ≤ p ≤ 1 and 0 < q < 1, with 0 ln 0 = 0.

    kl(p, q) = p a + (1 − p) b with a = ln(p/q), b = ln((1 − p)/(1 − q)), and ∂kl/∂p = a − b:
    two logarithms. Reference: :func:`kl_bernoulli` (same arithmetic).
    """
    a = math.log(p / q) if p > 0.0 else 0.0
    b = math.log((1.0 - p) / (1.0 - q)) if p < 1.0 else 0.0
    return p * a + (1.0 - p) * b, a - b


@njit(inline="always")
def kl_upper(p: float, d: float) -> float:  # pragma: no cover
    """A q ≥ u* = max{q : kl(p, q) ≤ d} for 0 ≤ p < 1 and d > 0, without logarithms (may be ≥ 1).

    The smaller of two points where kl(p, q) ≥ d by a lower bound of kl: Pinsker's p + sqrt(d/2)
    (kl(p, q) ≥ 2(q − p)²), and p + a + sqrt(a² + 2pa) with a = d(1 − p)
    (kl(p, q) ≥ (q − p)²/(2q(1 − p)), as x(1 − x) ≤ q(1 − p) on [p, q] in
    kl(p, q) = ∫_p^q (q − x)/(x(1 − x)) dx).
    """
    a = d * (1.0 - p)
    return min(p + math.sqrt(0.5 * d), p + a + math.sqrt(a * a + 2.0 * p * a))


@njit(error_model="numpy")
def grid_point(p: float, d: float, tol: float, x: float) -> float:  # pragma: no cover
    """û(p, d) (module notes above) from a point x near u*: the grid point right of x, then moved until it is û.

    m = ⌊x / tol⌋ + 1 (at most the first grid point ≥ 1, at least the first right of p); m goes up while
    kl(p, m·tol) ≤ d (m·tol < 1), then down while kl(p, (m − 1)·tol) > d ((m − 1)·tol > p).
    Two evaluations of kl when |x − u*| < tol. Reference: :func:`grid_point_reference`.
    """
    m = math.floor(max(x, p) / tol) + 1
    while (m - 1) * tol >= 1.0:
        m -= 1
    while m * tol <= p:
        m += 1
    while m * tol < 1.0 and not kl_terms(p, m * tol)[0] > d:
        m += 1
    while (m - 1) * tol > p and kl_terms(p, (m - 1) * tol)[0] > d:
        m -= 1
    return min(m * tol, 1.0)


@njit(inline="always")
def kl_search(p: float, d: float, tol: float, start: float) -> tuple[float, float, float, float]:  # pragma: no cover
    """(û, x, kl(p, x), ∂kl/∂p(p, x)) for 0 ≤ p < 1, d > 0: the index and the last point where kl was evaluated.

    Newton's method on the convex increasing f(q) = kl(p, q) − d from ``start`` (a guess near
    u*, e.g. an upper bound kept per arm; :func:`kl_upper` if not in (p, 1)), kept in a bracket
    [lo, hi] ∋ u* (bisection when a step leaves it), until the error after the step (about
    step² f''/(2f'), bounded by step² (2 − x)/(2(1 − x)(x − p))) is below tol/8 or the bracket
    below tol/4; then :func:`grid_point`, which
    finds û from any point (a worse point costs it more steps, never another value).
    The value does not depend on ``start`` (module notes).
    """
    lo, hi = p, 1.0
    x = min(start, kl_upper(p, d))
    if not p < x < 1.0:
        x = 0.5 * (p + 1.0)
    kx = gx = 0.0
    xe = x
    for _ in range(MAX_NEWTON):
        kx, gx = kl_terms(p, x)
        xe = x
        f = kx - d
        if f > 0.0:
            hi = x
        else:
            lo = x
        step = f * x * (1.0 - x) / (x - p)
        x -= step
        # The next error is about step² f''/(2f') <= step² (2 − x) / (2(1 − x)(x − p)) at the new x
        # (f'' = p/x² + (1 − p)/(1 − x)², f' = (x − p)/(x(1 − x))): stop when it is below tol/8.
        # Near 1 the curvature is large, and a criterion without the (1 − x) would stop far from u*.
        if p < x < 1.0 and step * step * (2.0 - x) <= 0.25 * tol * (1.0 - x) * (x - p):
            break
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        if hi - lo <= 0.25 * tol:
            break
    return grid_point(p, d, tol, x), xe, kx, gx


@njit
def kl_index(p: float, d: float, tol: float) -> float:  # pragma: no cover
    """The computed KL-UCB index û(p, d) (module notes above): p for d ≤ 0, 1 for p = 1.

    û lies in (u*, u* + tol], u* = max{q ∈ [p, 1] : kl(p, q) ≤ d}. Reference: :func:`kl_index_reference`.
    """
    if not d > 0.0:
        return p
    if p >= 1.0:
        return 1.0
    return kl_search(p, d, tol, 1.0)[0]


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
ANCHOR_BLOCKS = 8
#: Columns of KL-UCB's anchor array after the blocks: the copy's last decision by bounds (arm c,
#: bound U, threshold δ'), see :func:`klucb_choose`.
DECISION_COLUMNS = 3
#: Rounds ahead (at least; a 64th of the rounds completed when more) for which a decision's
#: bound U is computed: δ' is the threshold of round t + 1 + max(DECISION_ROUNDS, t // 64).
DECISION_ROUNDS = 16
#: Evaluations of kl at most in :func:`klucb_choose`'s refinement of one copy's bounds.
REFINEMENTS = 4


@njit(inline="always")
def set_anchor(
    cache: Any, b: int, k_arms: int, k: int, p: float, x: float, kx: float, gx: float
) -> None:  # pragma: no cover
    """Make x (p < x < 1, kl(p, x) = kx, ∂kl/∂p = gx) arm k's anchor.

    Blocks: x, kl(p, x), 1/kl(p, x), 1/slope = x(1 − x)/(x − p), ∂kl/∂p, (block 5, set by
    the update) 1/N, and the mean p and kl(p, x) at which x was evaluated (blocks 6 and 7); the
    reciprocals from one division (their rounding is far below :data:`SLACK`). Without a usable
    x (not in (p, 1), or kl(p, x) = 0) the anchor is cleared: x = p, 1/kl = 0, 1/slope = inf,
    which make the bounds of :func:`index_bounds` [p, 1].

    :func:`klucb_update` may later move the arm's mean to p' without evaluating kl: blocks 1 and
    2 then hold a lower bound of kl(p', x) and the reciprocal of an upper bound, and block 3 the
    slope at (p', x), which keeps the bounds of :func:`index_bounds` valid (see there).
    """
    if p < x < 1.0 and kx > 0.0:
        w = 1.0 / (kx * (x - p))  # one division for both reciprocals
        cache[b, k] = x
        cache[b, k_arms + k] = kx
        cache[b, 2 * k_arms + k] = (x - p) * w
        cache[b, 3 * k_arms + k] = x * (1.0 - x) * kx * w
        cache[b, 4 * k_arms + k] = gx
        cache[b, 6 * k_arms + k] = p
        cache[b, 7 * k_arms + k] = kx
    else:
        cache[b, k] = p
        cache[b, k_arms + k] = 0.0
        cache[b, 2 * k_arms + k] = 0.0
        cache[b, 3 * k_arms + k] = np.inf
        cache[b, 4 * k_arms + k] = 0.0
        cache[b, 6 * k_arms + k] = p
        cache[b, 7 * k_arms + k] = 0.0


@njit(inline="always")
def index_bounds(
    p: float, d: float, x: float, kx: float, inv_kx: float, inv_sx: float
) -> tuple[float, float]:  # pragma: no cover
    """(lower, upper) bounds of u* = max{q : kl(p, q) ≤ d}, d > 0, from the arm's anchor x (:func:`set_anchor`).

    x may be left or right of u*. By convexity of f(q) = kl(p, q) − d: the tangent at x lies
    below f, so its zero x + (d − kx)/slope is ≥ u* (capped at 1); the chord from (p, −d) to
    (x, kx − d) lies above f on [p, x], so when kx ≥ d its zero p + (x − p) d / kx ≤ x is ≤ u*;
    when kx < d, x < u* and the chord's zero is above x, hence the min. No logarithm and no
    division: the anchor keeps the reciprocals. A cleared anchor gives [p, 1]. Both bounds still
    hold with any kx ≤ kl(p, x) in the tangent and any 1/inv_kx ≥ kl(p, x) in the chord (a lower
    tangent, a higher chord end), as :func:`klucb_update` leaves them when it moves p without
    evaluating kl.
    """
    lower = min(x, p + (x - p) * d * inv_kx)
    upper = min(x + (d - kx) * inv_sx, 1.0)
    return lower, upper


@njit(inline="always")
def quadratic_lower(p: float, x: float, r: float, inv_sx: float, upper: float) -> float:  # pragma: no cover
    """A lower bound of u* closer than x, for an anchor x left of u* (kl(p, x) = d − r, r > 0) and u* ≤ upper < 1.

    On [x, upper], f(q) = kl(p, q) − d ≤ −r + s (q − x) + M (q − x)²/2 with s = f'(x) = 1/``inv_sx``
    and M = max(f''(x), f''(upper)) ≥ f'' there (f''(q) = p/q² + (1 − p)/(1 − q)² is convex);
    the zero x + 2r/(s + sqrt(s² + 2Mr)) of the right-hand side is ≤ u*.
    """
    s = 1.0 / inv_sx
    m = max(
        p / (x * x) + (1.0 - p) / ((1.0 - x) * (1.0 - x)),
        p / (upper * upper) + (1.0 - p) / ((1.0 - upper) * (1.0 - upper)),
    )
    return x + 2.0 * r / (s + math.sqrt(s * s + 2.0 * m * r))


@njit(error_model="numpy")
def klucb_update(
    state: Any, cache: Any, actions: Any, rewards: Any, t_next: int, tol: float
) -> int:  # pragma: no cover
    """KL-UCB's update: counts, sums and means of the pulled arm, then a new anchor for it.

    Rewards must be finite and in [0, 1] (else nothing changes and the first bad copy is
    returned). The anchor is one point x' where kl(μ̂', ·) is evaluated (two logarithms), chosen
    near the new index u* for d' = δ'/N', δ' that of round ``t_next`` + 1 (``t_next`` rounds
    completed after this update): the first-order prediction from the old anchor x (evaluated at
    the mean p_a), kl(μ̂', x') ≈ kl(p_a, x) + ∂kl/∂p (μ̂' − p_a) + slope (x' − x) = d', or
    :func:`kl_upper` when that point is not in (μ̂', 1). Block 5 keeps 1/N'. The anchors only make
    the choice cheaper: whatever they are, the bounds of :func:`index_bounds` hold and the arm
    chosen is the same.

    Without a logarithm when the copy pulled the arm of its last decision by bounds
    (:func:`klucb_choose`) and bounds alone show the decision still holds next round: x stays,
    evaluated at the mean p_a (blocks 6, 7: kl(p_a, x) = k_a, ∂kl/∂p = g_a in block 4), and as
    kl(·, x) is convex with second derivative 1/(p(1 − p)) ≥ 0,

        k_a + g_a (μ̂' − p_a) ≤ kl(μ̂', x) ≤ k_a + g_a (μ̂' − p_a) + (μ̂' − p_a)² / (2 min(v(p_a), v(μ̂'))),

    v(p) = p(1 − p) (concave, so its minimum on [p_a, μ̂'] is at an end; 0 < p_a, μ̂' < 1). Blocks
    1 and 2 take the lower bound and the reciprocal of the upper one, block 3 the slope at
    (μ̂', x): :func:`index_bounds` then still bounds u* (its tangent bound needs kl(μ̂', x) from
    below, its chord bound from above). This is done only when the chord bound of the new index
    is above the decision's U by ``tol`` + :data:`SLACK`, so that the next choice is decided by
    the same test; otherwise x' is evaluated as above. Pulling any other arm ends the copy's
    decision (its U bounded the other arms for their means and counts of then).
    """
    ints = state.view(np.int64)
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    for b in range(n_rows):
        r = rewards[b]
        if actions[b] < 0 or actions[b] >= k_arms or not (0.0 <= r <= 1.0):
            return b
    log_terms = klucb_log_terms(t_next)
    for b in range(n_rows):
        klucb_add((state, cache, ints), b, k_arms, actions[b], rewards[b], log_terms, tol)
    return -1


@njit(inline="always")
def klucb_add(
    arrays: Any, b: int, k_arms: int, k: int, r: float, log_terms: Any, tol: float
) -> None:  # pragma: no cover
    """:func:`klucb_update` of copy b, arm k, reward r (checked by the caller); ``arrays`` = (state, cache, ints).

    ``log_terms`` = :func:`klucb_log_terms` of the rounds completed with this one.
    """
    state, cache, ints = arrays
    decision = ANCHOR_BLOCKS * k_arms
    kept = k == cache[b, decision]
    if not kept:  # another arm's mean and count change: the copy's U no longer holds
        cache[b, decision + 2] = -1.0
    ints[b, 2 * k_arms + k] += 1
    n = ints[b, 2 * k_arms + k]
    state[b, k] += r
    p = state[b, k] / n
    state[b, k_arms + k] = p
    inv_n = 1.0 / n
    cache[b, 5 * k_arms + k] = inv_n
    delta_next = klucb_delta(log_terms[0], log_terms[1], state[b, 4 * k_arms])
    d = delta_next * inv_n
    if not (p < 1.0 and d > 0.0):
        set_anchor(cache, b, k_arms, k, p, p, 0.0, 0.0)
        return
    x = cache[b, k]
    pa = cache[b, 6 * k_arms + k]
    ka = cache[b, 7 * k_arms + k]
    ga = cache[b, 4 * k_arms + k]
    if kept and delta_next <= cache[b, decision + 2] and 0.0 < pa < 1.0 and 0.0 < p < x < 1.0 and ka > 0.0:
        dp = p - pa
        lo = ka + ga * dp
        m2 = 2.0 * min(pa * (1.0 - pa), p * (1.0 - p))
        hi2 = m2 * lo + dp * dp  # m2 times the upper bound of kl(p, x)
        keep = cache[b, decision + 1] + tol + SLACK
        # The chord bound min(x, p + (x - p) d / hi) above U + tol + SLACK, without a division:
        if hi2 > 0.0 and keep < x and (keep - p) * hi2 < (x - p) * d * m2:
            w = 1.0 / (hi2 * (x - p))  # one division for 1/hi and the slope's reciprocal
            cache[b, k_arms + k] = lo
            cache[b, 2 * k_arms + k] = m2 * (x - p) * w
            cache[b, 3 * k_arms + k] = x * (1.0 - x) * hi2 * w
            return
    x += (d - ka - ga * (p - pa)) * cache[b, 3 * k_arms + k]
    if not p < x < 1.0:
        x = kl_upper(p, d)
        if not x < 1.0:
            x = 0.5 * (p + 1.0)
    kx, gx = kl_terms(p, x)
    set_anchor(cache, b, k_arms, k, p, x, kx, gx)


@njit(inline="always")
def keep_decision(state: Any, cache: Any, b: int, k_arms: int, c: int, delta_ahead: float) -> None:  # pragma: no cover
    """Keep copy b's decision by bounds for arm c: (c, U, δ'), δ' = ``delta_ahead`` (:func:`klucb_choose`).

    U is the largest upper bound (:func:`index_bounds`) of the arms k ≠ c at the threshold δ'.
    """
    top = -np.inf
    for k in range(k_arms):
        u = index_bounds(
            state[b, k_arms + k],
            delta_ahead * cache[b, 5 * k_arms + k],
            cache[b, k],
            cache[b, k_arms + k],
            cache[b, 2 * k_arms + k],
            cache[b, 3 * k_arms + k],
        )[1]
        top = max(top, u if k != c else -np.inf)
    decision = ANCHOR_BLOCKS * k_arms
    cache[b, decision] = c
    cache[b, decision + 1] = top
    cache[b, decision + 2] = delta_ahead


@njit(inline="always")
def _largest_mean(state: Any, b: int, k_arms: int) -> int:  # pragma: no cover
    """The first arm with the largest mean (every index is the mean when δ ≤ 0)."""
    c = 0
    for k in range(1, k_arms):
        if state[b, k_arms + k] > state[b, k_arms + c]:
            c = k
    return c


@njit(inline="always")
def _kept_decision(state: Any, cache: Any, b: int, k_arms: int, delta: float, margin: float) -> int:  # pragma: no cover
    """The arm of copy b's kept decision if it still decides at δ > 0 (:func:`keep_decision`), else -1.

    Branch-free (c's lower bound is computed even when the decision no longer holds), so that
    :func:`_kept_pass` runs through the copies without jumps. The column of c holds 0 (as reset)
    or the arm of the last decision, an arm < K either way (clamping it cost 2 us per
    ``klucb_choose`` of 1000 copies).
    """
    decision = ANCHOR_BLOCKS * k_arms
    c = int(cache[b, decision])
    p = state[b, k_arms + c]
    x = cache[b, c]
    lower_c = min(x, p + (x - p) * (delta * cache[b, 5 * k_arms + c]) * cache[b, 2 * k_arms + c])
    # δ beyond δ': the last decision's U no longer bounds the other arms; else index_bounds' lower bound of c
    holds = (delta > 0.0) & (not delta > cache[b, decision + 2]) & (cache[b, decision + 1] + margin < lower_c)
    return c if holds else -1


@njit(inline="always")
def _kept_pass(
    state: Any, cache: Any, k_arms: int, log_terms: Any, margin: float, out: Any, todo: Any
) -> int:  # pragma: no cover
    """``out[b]`` = :func:`_kept_decision` of every copy b (-1 where none decides); the others in ``todo``.

    Returns how many copies it left in ``todo`` (their b, in order); ``log_terms`` is (ln t, ln ln t).

    The copies left to decide are gathered without a branch (each b written, the count advanced
    by 0 or 1), so that the second pass visits them alone: 23.2 rather than 25.5 us per
    ``klucb_choose`` of 1000 copies (K = 10, rounds 1-2000 of ``benchmarks/bench_index_agents.py``,
    where about 83% of the copies keep their decision), against one loop that tests each copy.
    """
    n_todo = 0
    for b in range(state.shape[0]):
        delta = klucb_delta(log_terms[0], log_terms[1], state[b, 4 * k_arms])
        # A copy with a kept decision has pulled every arm: decisions are made only then (pulls never
        # decrease, and the agent drops its decisions when its counts can be written: _forget_choice).
        kept = _kept_decision(state, cache, b, k_arms, delta, margin)
        out[b] = kept
        todo[n_todo] = b
        n_todo += kept < 0
    return n_todo


@njit(inline="always")
def _all_bounds(
    state: Any, cache: Any, b: int, k_arms: int, delta: float, lower: Any, upper: Any
) -> int:  # pragma: no cover
    """Every arm's index bounds into ``lower`` and ``upper``; the first arm with the largest lower bound."""
    for k in range(k_arms):  # branch-free: LLVM vectorizes it
        lower[k], upper[k] = index_bounds(
            state[b, k_arms + k],
            delta * cache[b, 5 * k_arms + k],
            cache[b, k],
            cache[b, k_arms + k],
            cache[b, 2 * k_arms + k],
            cache[b, 3 * k_arms + k],
        )
    # Branch-free max chains (compare-and-branch argmax loops mispredict often).
    best_lower = lower[0]
    for k in range(1, k_arms):
        best_lower = max(best_lower, lower[k])
    c = 0
    while c < k_arms - 1 and lower[c] != best_lower:
        c += 1
    return c


@njit(inline="always")
def _closer_lower(
    state: Any, cache: Any, b: int, k_arms: int, c: int, delta: float, top: float, margin: float, lower: Any, upper: Any
) -> bool:  # pragma: no cover
    """Whether a closer lower bound of u*_c decides c (it needs kl(p, x) itself: an anchor evaluated at this p)."""
    x = cache[b, c]
    p = state[b, k_arms + c]
    if top + margin < upper[c] and x > p and cache[b, 6 * k_arms + c] == p:
        r = delta * cache[b, 5 * k_arms + c] - cache[b, k_arms + c]
        if r > 0.0:
            lower[c] = quadratic_lower(p, x, r, cache[b, 3 * k_arms + c], upper[c])
            return top + margin < lower[c]
    return False


@njit(inline="always")
def _refine(arrays: Any, b: int, k_arms: int, c: int, delta: float, tol: float, bounds: Any) -> int:  # pragma: no cover
    """Up to :data:`REFINEMENTS` evaluations of kl narrowing the bounds (see :func:`klucb_choose`); the new c.

    Each is at the upper bound of whichever of c and the other arm with the largest upper bound has
    the wider bounds (a Newton step from the right: the tangent there is the new upper bound, the
    chord the new lower one), until the bounds decide, or both are narrower than tol/4, or the two
    arms tie (then the exact loop).
    """
    state, cache, ints = arrays
    lower, upper = bounds
    margin = tol + SLACK
    for _ in range(REFINEMENTS):
        j = -1
        top = -np.inf
        for k in range(k_arms):
            if k != c and upper[k] > top:
                top = upper[k]
                j = k
        if j < 0 or top + margin < lower[c]:
            break
        if state[b, k_arms + j] == state[b, k_arms + c] and ints[b, 2 * k_arms + j] == ints[b, 2 * k_arms + c]:
            break
        if upper[c] - lower[c] >= upper[j] - lower[j]:
            j = c
        if upper[j] - lower[j] <= 0.25 * tol:
            break
        p = state[b, k_arms + j]
        if not p < 1.0:
            break
        d = delta * cache[b, 5 * k_arms + j]
        x = min(upper[j], kl_upper(p, d))
        if not p < x < 1.0:
            break
        kx, gx = kl_terms(p, x)
        set_anchor(cache, b, k_arms, j, p, x, kx, gx)
        lower[j], upper[j] = index_bounds(
            p, d, cache[b, j], cache[b, k_arms + j], cache[b, 2 * k_arms + j], cache[b, 3 * k_arms + j]
        )
        if lower[j] > lower[c] or (lower[j] == lower[c] and j < c):
            c = j
    return c


# Compiled apart, not inlined (as grid_point): the exact path is the rare one (most choices are
# decided by bounds) and its Newton steps cost far more than a call, while numba retypes an
# inlined helper at every call site. Inlined, it and grid_point made the first batched use of
# KL-UCB compile for 11-12 s on a 2-core Xeon; apart, 7-7.5 s, with the same speed in paired runs.
@njit(error_model="numpy")
def _exact_choice(
    arrays: Any, b: int, k_arms: int, c: int, delta: float, tol: float, bounds: Any
) -> int:  # pragma: no cover
    """The arm of largest computed index, c first, then the others in arm order (see :func:`klucb_choose`)."""
    state, cache, ints = arrays
    lower, upper = bounds
    margin = tol + SLACK
    best = -1
    v = 0.0
    for j in range(k_arms):
        k = c if j == 0 else (j - 1 if j <= c else j)  # c first, then the others in arm order
        if best >= 0 and upper[k] + margin < v:
            continue
        p = state[b, k_arms + k]
        d = delta / ints[b, 2 * k_arms + k]  # as the reference: δ / N, not δ · (1 / N)
        if best >= 0 and p == state[b, k_arms + best] and ints[b, 2 * k_arms + k] == ints[b, 2 * k_arms + best]:
            if k < best:  # the same mean and count as the best arm: the same index, an exact tie
                best = k
            continue
        if best >= 0 and p < 1.0:  # one evaluation of kl may rule k out (see klucb_choose's docstring)
            q = v - margin - 2.0 * SLACK
            if p + tol < q < 1.0:
                kq, gq = kl_terms(p, q)
                if kq > d:
                    set_anchor(cache, b, k_arms, k, p, q, kq, gq)
                    continue
        if p >= 1.0:
            u = 1.0
        elif upper[k] - lower[k] <= 0.25 * tol:  # the bounds already locate u*: no Newton step
            u = grid_point(p, d, tol, upper[k])
        else:
            u, x, kx, gx = kl_search(p, d, tol, upper[k])
            set_anchor(cache, b, k_arms, k, p, x, kx, gx)
        if best < 0 or u > v or (u == v and k < best):
            best = k
            v = u
    return best


@njit(error_model="numpy")
def klucb_choose(state: Any, cache: Any, t: int, tol: float) -> Any:  # pragma: no cover
    """KL-UCB's arm of round t + 1 for every copy (``t`` rounds completed, the paper's t).

    The first arm never pulled; else the arm with the largest computed index û_k = û(μ̂_k, δ/N_k)
    (module notes), δ = ln t + c ln ln t (:func:`klucb_delta`), ties to the lowest index: the
    argmax of :meth:`KLUCBReference.act`, which computes every index. Here with few logarithms:
    every arm has bounds lower_k ≤ u*_k ≤ upper_k from its anchor (:func:`index_bounds`), so
    lower_k < û_k ≤ upper_k + tol; c = argmax lower_k. If upper_k + tol + SLACK < lower_c for
    every other k, c is chosen without computing any index. Otherwise up to :data:`REFINEMENTS`
    single evaluations of kl narrow the bounds: each at the upper bound of whichever of c and j
    (the other arm with the largest upper bound) has the wider ones, which makes that point the
    arm's anchor (its tangent gives the next upper bound, a Newton step from the right, and its
    chord the lower one), c becoming the arm with the largest lower bound again; they stop when
    the bounds decide as above, or j has c's mean and count (an exact tie), or the bounds are
    narrower than tol/4. Otherwise û_c is computed
    (:func:`kl_search` from upper_c), then, in arm order, each other index unless
    upper_k + tol + SLACK < v, v the best index so far, or kl(μ̂_k, q) > d_k at
    q = v − tol − 2·SLACK (one evaluation: then u*_k < q + SLACK, as kl grows by far more than
    its rounding over SLACK (module notes), so û_k ≤ u*_k + tol < v); each evaluation leaves its
    point as the arm's anchor. An arm with the mean and count of the best arm so far has its
    index (û depends on μ̂, δ/N and tol only): an exact tie, settled by the arm order without
    computing. δ ≤ 0 makes every index the mean: the first largest mean.

    Each decision by bounds (before or after the refinement) is kept (:func:`keep_decision`,
    in the last :data:`DECISION_COLUMNS` columns of the anchor array): the arm c, U = the
    largest upper bound of the other arms at the threshold δ' of round
    t + 1 + max(:data:`DECISION_ROUNDS`, t // 64), and δ'. While no other arm is pulled
    (:func:`klucb_update` ends the decision otherwise), their means and counts stay, u*_k grows
    with δ and upper bounds hold for any δ, so U ≥ u*_k for every k ≠ c as long as δ ≤ δ'; then
    U + tol + SLACK < lower_c decides c (û_k ≤ u*_k + tol < lower_c < û_c) from c's bounds
    alone, without the bounds of the other arms.

    With more than one copy, from round K + 1 on, a first pass (:func:`_kept_pass`) settles the
    copies that have pulled every arm and whose kept decision decides, and a second goes through
    the others alone (the copies in ``todo``); each copy computes the same, whatever the order of
    the copies. An arm never pulled is looked for in every copy, whatever the round: updates of
    arms the agent did not choose can leave one past round K.
    """
    n_rows, k_arms, ints, out = choice_frame(state)
    log_terms = klucb_log_terms(t)
    lower = np.empty(k_arms)
    upper = np.empty(k_arms)
    margin = tol + SLACK
    # Before round K + 1 every copy has an arm never pulled. Later one may still have one (updates
    # of arms the agent did not choose): each copy is looked at, the first pass included.
    two_pass = t >= k_arms and n_rows > 1  # one env: no work array to allocate
    log_ahead, loglog_ahead = klucb_log_terms(t + 1 + max(DECISION_ROUNDS, t // 64))
    todo = np.empty(n_rows, dtype=np.int64) if two_pass else out
    n_todo = _kept_pass(state, cache, k_arms, log_terms, margin, out, todo) if two_pass else n_rows
    for i in range(n_todo):
        b = todo[i] if two_pass else i
        chosen = first_unplayed(ints, b, k_arms)
        if chosen >= 0:
            out[b] = chosen
            continue
        delta = klucb_delta(log_terms[0], log_terms[1], state[b, 4 * k_arms])
        if not delta > 0.0:
            out[b] = _largest_mean(state, b, k_arms)
            continue
        kept = -1 if two_pass else _kept_decision(state, cache, b, k_arms, delta, margin)
        if kept >= 0:
            out[b] = kept
            continue
        c = _all_bounds(state, cache, b, k_arms, delta, lower, upper)
        top = other_top(upper, c)
        if not top + margin < lower[c]:  # the bounds do not decide: a closer lower bound, refinements
            if _closer_lower(state, cache, b, k_arms, c, delta, top, margin, lower, upper):
                out[b] = c
                continue
            c = _refine((state, cache, ints), b, k_arms, c, delta, tol, (lower, upper))
            if not other_top(upper, c) + margin < lower[c]:
                out[b] = _exact_choice((state, cache, ints), b, k_arms, c, delta, tol, (lower, upper))
                continue
        # decided by bounds (at once or after the refinements): the decision is kept
        out[b] = c
        keep_decision(state, cache, b, k_arms, c, klucb_delta(log_ahead, loglog_ahead, state[b, 4 * k_arms]))
    return out


# MOSS -------------------------------------------------------------------------------------------


@njit(error_model="numpy")
def moss_choose(state: Any) -> Any:  # pragma: no cover
    """MOSS's arm for every copy (:func:`moss_row`)."""
    n_rows, k_arms, ints, out = choice_frame(state)
    for b in range(n_rows):
        out[b] = moss_row(state, ints, b, k_arms)
    return out


@njit(error_model="numpy")
def moss_update(state: Any, actions: Any, rewards: Any, low: float, high: float, out: Any) -> int:  # pragma: no cover
    """MOSS's batched update and the next round's arms in one call: :func:`mean_update`, then :func:`moss_row`.

    Returns :func:`mean_update`'s code; ``out`` is written only when it is -1 (nothing changed
    otherwise). MOSS's choice draws nothing and reads only the state, so it is the arm ``act``
    would choose (:func:`moss_choose`).
    """
    bad = mean_update(state, actions, rewards, KIND_MOSS, low, high)
    if bad != -1:
        return bad
    ints = state.view(np.int64)
    k_arms = n_arms_of(state.shape[1])
    for b in range(state.shape[0]):
        out[b] = moss_row(state, ints, b, k_arms)
    return -1


@njit(inline="always")
def moss_row(state: Any, ints: Any, b: int, k_arms: int) -> int:  # pragma: no cover
    """MOSS's arm for copy b: the first arm never pulled, else the largest ``aux`` (ties to the lowest index).

    ``aux`` holds each arm's index μ̂ + sqrt(max(ln(T/(K N)), 0)/N), which changes only when the
    arm is pulled (:func:`mean_add`). Reference: :meth:`MOSSReference.act`.
    """
    chosen = first_unplayed(ints, b, k_arms)
    return chosen if chosen >= 0 else column_argmax(state, b, 3 * k_arms, k_arms)


# One env ----------------------------------------------------------------------------------------
#
# A single-env agent's ``act`` and ``update`` each make one call of a kernel below through its
# compiled entry point (:class:`agents.base.SingleEnvKernel`): scalars in, an int out, so that
# numba neither types arguments nor boxes an array per call. Each computes row 0 with the row
# functions the batched kernels above loop over (no one-element arrays: an allocation costs about
# 15 ns), so it computes (and draws) exactly what that kernel computes for a batch of one copy;
# its reference is the batched kernel's.


@njit(error_model="numpy")
def mean_step(state: Any, action: int, reward: float, kind: int, low: float, high: float) -> int:  # pragma: no cover
    """:func:`mean_update` of one env (row 0): 0 if refused (nothing changed), else -1."""
    k_arms = n_arms_of(state.shape[1])
    if not feedback_fits(action, reward, k_arms, low, high):
        return 0
    mean_add(state, state.view(np.int64), 0, k_arms, action, reward, kind)
    return -1


#: :func:`greedy_pick_one` returns ``arm << GREEDY_USED_BITS | uniforms used``.
GREEDY_USED_BITS = 2


@njit(error_model="numpy")
def greedy_pick_one(state: Any, t: int, decaying: bool, u: float, v: float) -> int:  # pragma: no cover
    """:func:`greedy_choose` of one env (row 0), with the generator's next two uniforms ``u``, ``v`` given.

    The same choice as :func:`greedy_choose` drawing u, then v if it explores; the caller keeps
    its generator's uniforms in order and learns from the result how many were used: it returns
    ``arm << GREEDY_USED_BITS | used``, ``used`` 0 (an unplayed arm), 1 (exploit) or 2 (explore).
    Written apart from the batched loop: a row function shared with :func:`greedy_choose` made
    the batched choice 10% slower (numba's inlining).
    """
    k_arms = n_arms_of(state.shape[1])
    chosen = first_unplayed(state.view(np.int64), 0, k_arms)
    if chosen >= 0:
        return chosen << GREEDY_USED_BITS
    epsilon = state[0, 4 * k_arms]
    if decaying:
        epsilon = min(1.0, epsilon / (t + 1))
    if u < epsilon:
        return min(int(v * k_arms), k_arms - 1) << GREEDY_USED_BITS | 2
    return column_argmax(state, 0, k_arms, k_arms) << GREEDY_USED_BITS | 1


@njit(error_model="numpy")
def greedy_step(  # pragma: no cover
    state: Any, action: int, reward: float, t_next: int, decaying: bool, u: float, v: float
) -> int:
    """One env's ε-greedy step: :func:`mean_update`, then :func:`greedy_pick_one` of round ``t_next`` + 1.

    ``t_next`` counts the rounds completed with this one. -1 if the feedback is refused (nothing
    changed): an action outside [0, K) or a reward outside ``SUMMED_REWARD_BOUNDS`` (:mod:`agents.base`).
    """
    if mean_step(state, action, reward, KIND_GREEDY, SUMMED_LOW, SUMMED_HIGH) >= 0:
        return -1
    return greedy_pick_one(state, t_next, decaying, u, v)


@njit(error_model="numpy")
def moss_choose_one(state: Any) -> int:  # pragma: no cover
    """:func:`moss_choose` of one env (row 0)."""
    return moss_row(state, state.view(np.int64), 0, n_arms_of(state.shape[1]))


@njit(error_model="numpy")
def moss_step(state: Any, action: int, reward: float) -> int:  # pragma: no cover
    """One env's MOSS step: :func:`mean_update`, then :func:`moss_choose`.

    Returns the arm of the next round, or -1 if the feedback is refused (nothing changed): an
    action outside [0, K) or a reward outside ``SUMMED_REWARD_BOUNDS`` (:mod:`agents.base`).
    """
    if mean_step(state, action, reward, KIND_MOSS, SUMMED_LOW, SUMMED_HIGH) >= 0:
        return -1
    return moss_choose_one(state)


@njit(error_model="numpy")
def klucb_step(state: Any, cache: Any, action: int, reward: float, t_next: int, tol: float) -> int:  # pragma: no cover
    """One env's KL-UCB step: :func:`klucb_update`, then the arm of round ``t_next`` + 1 (:func:`klucb_choose`).

    ``t_next`` counts the rounds completed with this one. -1 if the feedback is refused
    (nothing changed).
    """
    k_arms = n_arms_of(state.shape[1])
    if action < 0 or action >= k_arms or not (0.0 <= reward <= 1.0):
        return -1
    klucb_add((state, cache, state.view(np.int64)), 0, k_arms, action, reward, klucb_log_terms(t_next), tol)
    return klucb_choose_one(state, cache, t_next, tol)


@njit(error_model="numpy")
def klucb_choose_one(state: Any, cache: Any, t: int, tol: float) -> int:  # pragma: no cover
    """:func:`klucb_choose` of one env (row 0)."""
    return klucb_choose(state, cache, t, tol)[0]


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
        """The arm this copy plays next (ties to the lowest arm)."""
        unplayed = self.unplayed()
        if unplayed is not None:
            return unplayed
        epsilon = min(1.0, self.param / (self.t + 1)) if self.decaying else self.param
        if self.rng.random() < epsilon:
            return min(int(self.rng.random() * self.n_arms), self.n_arms - 1)
        return self.first_argmax([self.mean(k) for k in range(self.n_arms)])


def kl_bernoulli(p: float, q: float) -> float:
    """kl(p, q) = p ln(p/q) + (1 − p) ln((1 − p)/(1 − q)) with 0 ln 0 = 0, as :func:`kl_terms` computes it."""
    a = math.log(p / q) if p > 0.0 else 0.0
    b = math.log((1.0 - p) / (1.0 - q)) if p < 1.0 else 0.0
    return p * a + (1.0 - p) * b


def grid_point_reference(p: float, d: float, tol: float, x: float) -> float:
    """:func:`grid_point` in plain Python: û(p, d) from a point x near u* (same steps, same result)."""
    m = math.floor(max(x, p) / tol) + 1
    while (m - 1) * tol >= 1.0:
        m -= 1
    while m * tol <= p:
        m += 1
    while m * tol < 1.0 and not kl_bernoulli(p, m * tol) > d:
        m += 1
    while (m - 1) * tol > p and kl_bernoulli(p, (m - 1) * tol) > d:
        m -= 1
    return min(m * tol, 1.0)


def kl_index_reference(p: float, d: float, tol: float) -> float:
    """The computed index û(p, d) of :func:`kl_index` in plain Python: bisection, then the grid point.

    u* = max{q ∈ [p, 1] : kl(p, q) ≤ d} is bisected in [p, 1] until the bracket is below tol/4;
    the grid point right of it (:func:`grid_point_reference`) is the first grid point right of
    u*, the same value the kernels reach by Newton steps from elsewhere.
    """
    if not d > 0.0:
        return p
    if p >= 1.0:
        return 1.0
    lo, hi = p, 1.0  # kl(p, lo) <= d < kl(p, hi), kl(p, 1) being infinite
    while hi - lo > 0.25 * tol:
        mid = 0.5 * (lo + hi)
        if kl_bernoulli(p, mid) > d:
            hi = mid
        else:
            lo = mid
    return grid_point_reference(p, d, tol, hi)


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
        """The index of arm k."""
        return kl_index_reference(self.mean(k), self.delta() / self.counts[k], self.tol)

    def act(self) -> int:
        """The arm this copy plays next (ties to the lowest arm)."""
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
        """The index of arm k."""
        n = self.counts[k]
        return self.mean(k) + math.sqrt(max(math.log(self.horizon / self.n_arms / n), 0.0) / n)

    def act(self) -> int:
        """The arm this copy plays next (ties to the lowest arm)."""
        unplayed = self.unplayed()
        if unplayed is not None:
            return unplayed
        return self.first_argmax([self.index(k) for k in range(self.n_arms)])
