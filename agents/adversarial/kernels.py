"""Compiled kernels of Exp3, Exp3-SET and Exp3-IX (:mod:`agents.adversarial.exp3`), with a plain-Python reference.

The three agents keep the same packed state, one float64 row per copy b:

    columns [0, K)     L       cumulative loss estimates L̂_k
    columns [K, 2K)    p       the distribution p_t the next arm is drawn from
    column  2K         eta     the learning rate η that made p
    column  2K + 1     gamma   Exp3: the uniform-exploration weight γ; Exp3-IX: the implicit
                               exploration γ_t of the round being played
    column  2K + 2     S       Exp3-IX: Σ_s Q_s of its adaptive learning rate (else 0)
    column  2K + 3     low     the shift the weights were made with, a past min L̂ (NaN: recompute)
    columns [2K+4, 3K+4) w     the weights exp(−η (L̂_k − low)) that made p

p = (1 − γ) w / Σ w + γ/K for Exp3 (γ = 0 for the graph agents). ``update`` turns the round's
losses ℓ = 1 − r into importance-weighted estimates and computes the next p. The shift ``low``
keeps every weight at most 1 (L̂ only grows, so low ≤ min L̂): it is min L̂ when all K weights
are computed, and kept while the largest weight is at least e^−16 (:data:`WEIGHT_FLOOR`), that
is while η (min L̂ − low) ≤ 16. A round changes a few L̂ (Exp3: the pulled arm's; Exp3-SET and
Exp3-IX: the revealed arms' with a loss); with η and low kept, every other weight is the number
it was (the same operation on the same operands), so the update computes only the changed arms'
exponentials, then Σ w and p from the kept weights (:func:`exp3_row`,
:func:`refresh_distribution`): the same bits as all K weights computed with that low
(:func:`distribution_from`), with one exponential instead of K for Exp3. All K are computed,
with a new low = min L̂, when η changes (the anytime η_t of Exp3 and the adaptive η_t of Exp3-IX
change every round) or the largest weight falls below e^−16. Exp3-SET and Exp3-IX sum q_i over
each arm's list of neighbours (:func:`neighbour_lists`), so a round costs what the graph's edges
cost, not K² reads, and they check the round's feedback in the same call (nothing changed when
refused).
``act`` draws from p with one draw u from the copy's generator
(:func:`bandit_envs.core.next_double`): the first arm whose cumulative probability exceeds u.
:class:`ExpWeightsReference` is one copy of each agent in plain Python, drawing with
``rng.random()``, and makes the same choices (``tests/test_baseline_agents.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.common.kernels import first_bad, first_bad_observed, unsigned
from bandit_envs._jit import njit
from bandit_envs.core import next_double

#: Columns of a state row besides its 3K per-arm columns (eta, gamma, S, low).
EXTRA_COLUMNS = 4
#: Smallest probability an importance weight divides by: an arm the agent gave (numerically)
#: zero probability can only have been played by a caller that did not use ``act``.
MIN_PROBABILITY = 1e-300


@njit(inline="always")
def n_arms_of(columns: int) -> int:  # pragma: no cover
    """K of a packed row with ``columns`` columns."""
    return (columns - EXTRA_COLUMNS) // 3


# The hot loops below index the state with unsigned integers (agents.common.kernels.unsigned): numba
# then compiles no negative-index test. Exp3-IX's update at K = 10, 1,000 copies: 328 -> 253-271 us
# with that and the sums fused into the loops that compute their terms (the same bits).


@njit(inline="always")
def min_loss(state: Any, b: int, k_arms: int) -> float:  # pragma: no cover
    """Min L̂ of row b."""
    bu = unsigned(b)
    low = state[bu, 0]
    for k in range(1, k_arms):
        low = min(low, state[bu, unsigned(k)])
    return low


@njit(inline="always")
def scale_weights(state: Any, b: int, k_arms: int, gamma: float, total: float) -> None:  # pragma: no cover
    """P = (1 − γ) w / ``total`` + γ/K from row b's kept weights, ``total`` their sum in arm order."""
    bu, weights, probabilities = unsigned(b), unsigned(2 * k_arms + EXTRA_COLUMNS), unsigned(k_arms)
    scale = (1.0 - gamma) / total
    floor = gamma / k_arms
    for k in range(k_arms):
        state[bu, probabilities + unsigned(k)] = state[bu, weights + unsigned(k)] * scale + floor


@njit(inline="always")
def normalize(state: Any, b: int, k_arms: int, gamma: float) -> None:  # pragma: no cover
    """P = (1 − γ) w / Σ w + γ/K from row b's kept weights (summed in arm order)."""
    bu, weights = unsigned(b), unsigned(2 * k_arms + EXTRA_COLUMNS)
    total = 0.0
    for k in range(k_arms):
        total += state[bu, weights + unsigned(k)]
    scale_weights(state, b, k_arms, gamma, total)


@njit(inline="always")
def distribution_from(  # pragma: no cover
    state: Any, b: int, k_arms: int, eta: float, gamma: float, low: float
) -> None:
    """Set row b's p = (1 − γ) w / Σ w + γ/K with all K weights w = exp(−η (L̂ − ``low``)); keep η, low and w.

    Σ w is summed in arm order as the weights are computed (:func:`normalize`'s sum).
    """
    bu, weights = unsigned(b), unsigned(2 * k_arms + EXTRA_COLUMNS)
    total = 0.0
    for k in range(k_arms):
        w = math.exp(-eta * (state[bu, unsigned(k)] - low))
        state[bu, weights + unsigned(k)] = w
        total += w
    scale_weights(state, b, k_arms, gamma, total)
    state[bu, unsigned(2 * k_arms)] = eta
    state[bu, unsigned(2 * k_arms + 3)] = low


@njit(inline="always")
def set_distribution(state: Any, b: int, k_arms: int, eta: float, gamma: float) -> None:  # pragma: no cover
    """:func:`distribution_from` with a new shift, low = min L̂."""
    distribution_from(state, b, k_arms, eta, gamma, min_loss(state, b, k_arms))


#: The kept shift ``low`` serves while the largest weight is at least e^−16 ≈ 1.1e-7
#: (:data:`WEIGHT_FLOOR`): while η (min L̂ − low) ≤ 16. Only arms whose p is below e^−690 then lose
#: their weight to underflow.
SHIFT_SLACK = 16.0
#: The smallest largest weight of a kept shift, e^−SHIFT_SLACK.
WEIGHT_FLOOR = math.exp(-SHIFT_SLACK)


@njit(inline="always")
def shift_kept(state: Any, b: int, k_arms: int, eta: float) -> bool:  # pragma: no cover
    """Whether row b's kept weights were made with ``eta`` and a shift low that is a number (NaN: recompute)."""
    low = state[b, 2 * k_arms + 3]
    return state[b, 2 * k_arms] == eta and low == low


@njit(inline="always")
def normalize_kept(state: Any, b: int, k_arms: int, gamma: float) -> bool:  # pragma: no cover
    """:func:`normalize` if the largest kept weight is at least :data:`WEIGHT_FLOOR` (the shift serves); else False.

    Tested in the pass that sums the weights, as whether any weight reaches the floor (an or of
    comparisons beside the sum), rather than min L̂ in a pass of its own: a running ``max`` there
    made Exp3's batched step 12% slower in paired runs. p is not written when False. Reference:
    :meth:`ExpWeightsReference._distribution`.
    """
    bu, weights = unsigned(b), unsigned(2 * k_arms + EXTRA_COLUMNS)
    total = 0.0
    serves = False
    for k in range(k_arms):
        w = state[bu, weights + unsigned(k)]
        total += w
        serves |= w >= WEIGHT_FLOOR
    if not serves:
        return False
    scale_weights(state, b, k_arms, gamma, total)
    return True


@njit
def recompute_rows(state: Any, eta: float, gamma: float) -> None:  # pragma: no cover
    """Every row's p and weights computed from all K losses with the row's kept shift low (tests compare)."""
    k_arms = n_arms_of(state.shape[1])
    for b in range(state.shape[0]):
        distribution_from(state, b, k_arms, eta, gamma, state[b, 2 * k_arms + 3])


@njit
def sample_into(state: Any, bitgens: Any, out: Any) -> None:  # pragma: no cover
    """One arm per copy b drawn from p into ``out[b]``: :func:`sample_row` with u from ``bitgens[b]``.

    The batched ``act`` allocates ``out`` in Python: returning an array made in compiled code
    costs about 0.45 us more per call.
    """
    k_arms = n_arms_of(state.shape[1])
    for b in range(state.shape[0]):
        out[b] = sample_row(state, b, k_arms, next_double(bitgens[b]))


#: Above this many arms :func:`sample_row` stops at the drawn arm (one mispredicted branch a draw) instead of
#: summing all K probabilities without a branch. 1,000 draws, p ∝ U⁴, alternating calls, branch-free time ÷
#: early-exit time: 0.58 at K = 10, 0.91 at 32, 1.16 at 64, 1.27 at 100.
EARLY_EXIT_ARMS = 48


@njit(inline="always")
def sample_row(state: Any, b: int, k_arms: int, u: float) -> int:  # pragma: no cover
    """Row b's arm for the draw u: the first k with p_0 + ... + p_k > u.

    A u above the total (rounding) takes the last arm of positive probability. Reference:
    :meth:`ExpWeightsReference.act`. The cumulative sums never decrease (p ≥ 0), so the first k
    with u < p_0 + ... + p_k is the number of sums ≤ u, counted without a branch for up to
    :data:`EARLY_EXIT_ARMS` arms (the loop's exit would be mispredicted about once a draw); with
    more arms the scan stops at that k (the same arm, from the same sums).
    """
    bu, probabilities = unsigned(b), unsigned(k_arms)
    total = 0.0
    if k_arms > EARLY_EXIT_ARMS:
        for k in range(k_arms):
            total += state[bu, probabilities + unsigned(k)]
            if u < total:
                return k
    else:
        below = 0
        for k in range(k_arms):
            total += state[bu, probabilities + unsigned(k)]
            below += total <= u
        if below < k_arms:
            return below
    last = 0
    for k in range(k_arms):
        if state[bu, probabilities + unsigned(k)] > 0.0:
            last = k
    return last


@njit(error_model="numpy")
def exp3_update(state: Any, actions: Any, rewards: Any, eta_next: float, gamma: float) -> int:  # pragma: no cover
    """Exp3's update of every copy (:func:`exp3_row`); the first refused copy (nothing changed), or -1.

    Refused: an action outside [0, K) or a reward that is not in [0, 1].
    """
    n_rows = state.shape[0]
    k_arms = n_arms_of(state.shape[1])
    for b in range(n_rows):
        r = rewards[b]
        if actions[b] < 0 or actions[b] >= k_arms or not 0.0 <= r <= 1.0:
            return b
    for b in range(n_rows):
        exp3_row(state, b, k_arms, actions[b], rewards[b], eta_next, gamma)
    return -1


@njit(inline="always")
def exp3_row(
    state: Any, b: int, k_arms: int, a: int, r: float, eta_next: float, gamma: float
) -> None:  # pragma: no cover
    """Exp3's update of row b with arm ``a`` and reward ``r`` (checked by the caller).

    L̂_a += (1 − r)/p_a for the pulled arm a (loss-based importance weighting), then p from
    η = ``eta_next``: with the kept shift (:func:`shift_kept`, :func:`normalize_kept`) only w_a
    is recomputed (module notes), else all K (:func:`set_distribution`). A copy with loss 0 and an unchanged η keeps
    its p (recomputing it would give the same numbers). Reference: :meth:`ExpWeightsReference.update`.
    """
    loss = 1.0 - r
    if loss == 0.0 and state[b, 2 * k_arms] == eta_next:
        return  # L̂ and η as before: p would be recomputed to the same values
    state[b, a] += loss / max(state[b, k_arms + a], MIN_PROBABILITY)
    if shift_kept(state, b, k_arms, eta_next):
        low = state[b, 2 * k_arms + 3]
        state[b, 2 * k_arms + EXTRA_COLUMNS + a] = math.exp(-eta_next * (state[b, a] - low))
        if normalize_kept(state, b, k_arms, gamma):
            return
    set_distribution(state, b, k_arms, eta_next, gamma)


def neighbour_lists(closed: Any) -> tuple[Any, Any]:
    """(start, arms): arm i's closed neighbourhood N[i] is ``arms[start[i]:start[i + 1]]``, in index order.

    The graph agents' kernels sum q_i over these lists: |N[i]| reads rather than a pass over a
    row of K flags (the same additions in the same order, so the same q_i).
    """
    flags = np.asarray(closed, dtype=np.bool_)
    start = np.zeros(flags.shape[0] + 1, dtype=np.int64)
    np.cumsum(flags.sum(axis=1), out=start[1:])
    arms = np.nonzero(flags)[1].astype(np.int64)  # row by row, each row's columns in increasing order
    return start, arms


@njit(inline="always")
def observation_probability(  # pragma: no cover
    state: Any, b: int, k_arms: int, start: Any, arms: Any, i: int
) -> float:
    """q_i = Σ_{j ∈ N[i]} p_j: the probability that arm i's loss is observed (N[i] the closed neighbourhood).

    Summed in arm order over ``arms[start[i]:start[i + 1]]`` (:func:`neighbour_lists`).
    """
    bu, probabilities, iu = unsigned(b), unsigned(k_arms), unsigned(i)
    q = 0.0
    for e in range(start[iu], start[iu + 1]):
        q += state[bu, probabilities + unsigned(arms[unsigned(e)])]
    return q


@njit(inline="always")
def losing_arms(mask: Any, observed: Any, k_arms: int, out: Any) -> int:  # pragma: no cover
    """The arms observed with a loss (``mask`` and a reward below 1: one row, (K,)), in index order, into ``out[:n]``.

    Returns n. Only their L̂ change: an observed reward of 1 adds 0 / q = +0.0, which leaves
    L̂ ≥ 0 as it was, so its q, its division and its weight are skipped (the same numbers). Built
    without a branch per arm: the loops then read this list, where a test of each of K flags
    mispredicts about once per listed arm (at K = 100 with six arms revealed at random places,
    such tests took a quarter of Exp3-SET's update).
    """
    n = 0
    for i in range(k_arms):
        iu = unsigned(i)
        out[unsigned(n)] = i
        n += mask[iu] & (observed[iu] < 1.0)
    return n


@njit(inline="always")
def refresh_distribution(
    state: Any, b: int, k_arms: int, changed: Any, n_changed: int, eta: float
) -> None:  # pragma: no cover
    """Row b's p from η after the losses of the arms ``changed[:n_changed]`` grew: γ = 0.

    Exp3's shortcut for the graph agents (module notes): with the kept shift
    (:func:`shift_kept`, :func:`normalize_kept`) only the changed arms' weights are recomputed
    (every other one would be the same number), then Σ w and p; else all K (:func:`set_distribution`).
    """
    if shift_kept(state, b, k_arms, eta):
        bu, weights = unsigned(b), unsigned(2 * k_arms + EXTRA_COLUMNS)
        low = state[bu, unsigned(2 * k_arms + 3)]
        for e in range(n_changed):
            i = unsigned(changed[unsigned(e)])
            state[bu, weights + i] = math.exp(-eta * (state[bu, i] - low))
        if normalize_kept(state, b, k_arms, 0.0):
            return
    set_distribution(state, b, k_arms, eta, 0.0)


@njit(inline="always")
def graph_feedback_refused(  # pragma: no cover
    actions: Any, rewards: Any, mask: Any, observed: Any, k_arms: int
) -> int:
    """-1 if every copy's feedback fits; else the first refused copy b (kernel_error's code).

    First the actions and rewards of all copies (b: an action outside [0, K) or a reward not in
    [0, 1]), then their observed rewards (``OBSERVED_REFUSED - b``: not in [0, 1] where observed),
    the order in which the Python checks raised.
    """
    bad = first_bad(actions, rewards, k_arms)
    if bad >= 0:
        return bad
    return first_bad_observed(mask, observed, 0.0, 1.0)


@njit(inline="always")
def exp3set_row(
    state: Any, b: int, k_arms: int, mask: Any, observed: Any, start: Any, arms: Any, eta: float, q: Any, seen: Any
) -> None:  # pragma: no cover
    """Exp3-SET's update of row b with its (K,) ``mask`` and ``observed`` rewards (checked by the caller).

    For every arm i observed: L̂_i += ℓ_i / q_i with ℓ_i = 1 − ``observed[i]`` and
    q_i = Σ_{j ∈ N[i]} p_j (:func:`observation_probability`), then p from η
    (:func:`refresh_distribution`). Only the q_i of the observed arms with a loss are computed
    (:func:`losing_arms`): at most |N[a]| sums a round rather than K, the same numbers. ``q`` and
    ``seen`` are scratch arrays of K entries. Reference: :meth:`ExpWeightsReference.update`.
    """
    bu = unsigned(b)
    n_seen = losing_arms(mask, observed, k_arms, seen)
    for e in range(n_seen):
        q[unsigned(e)] = observation_probability(state, b, k_arms, start, arms, seen[unsigned(e)])
    for e in range(n_seen):
        i = unsigned(seen[unsigned(e)])
        state[bu, i] += (1.0 - observed[i]) / max(q[unsigned(e)], MIN_PROBABILITY)
    refresh_distribution(state, b, k_arms, seen, n_seen, eta)


@njit(error_model="numpy")
def exp3set_update(
    state: Any, actions: Any, rewards: Any, mask: Any, observed: Any, start: Any, arms: Any, eta: float
) -> int:  # pragma: no cover
    """Exp3-SET's update of every copy (:func:`exp3set_row`); the refused copy (nothing changed), or -1.

    Refused: :func:`graph_feedback_refused`. ``actions`` and ``rewards`` are checked only.
    """
    k_arms = n_arms_of(state.shape[1])
    bad = graph_feedback_refused(actions, rewards, mask, observed, k_arms)
    if bad != -1:
        return bad
    q = np.empty(k_arms)
    seen = np.empty(k_arms, dtype=np.int64)
    for b in range(state.shape[0]):
        exp3set_row(state, b, k_arms, mask[b], observed[b], start, arms, eta, q, seen)
    return -1


@njit(inline="always")
def exp3ix_row(
    state: Any,
    b: int,
    k_arms: int,
    mask: Any,
    observed: Any,
    start: Any,
    arms: Any,
    adaptive: bool,
    eta: float,
    gamma: float,
    q: Any,
    seen: Any,
    log_k: float,
) -> None:  # pragma: no cover
    """Exp3-IX's update of row b with its (K,) ``mask`` and ``observed`` rewards (checked by the caller).

    With γ_t the row's ``gamma``: for every arm i observed, L̂_i += ℓ_i / (q_i + γ_t) (implicit
    exploration); Q_t = Σ_i p_i / (q_i + γ_t) is added to S. A fixed γ may be 0, so q_i + γ_t is
    taken as at least :data:`MIN_PROBABILITY`, as Exp3-SET takes q_i: an arm observed though p
    gave it no chance (an update not from ``act``) would otherwise add 0/0 = NaN to L̂. Next η and
    γ: adaptive, η = sqrt(ln K / (K + S)) and γ = η/2; else the given ``eta`` and ``gamma``. Then p
    from η (:func:`refresh_distribution`: all K weights when η changes, as the adaptive η does every
    round). ``q`` and ``seen`` are scratch arrays of K entries; ``log_k`` is ln K. Reference:
    :meth:`ExpWeightsReference.update`.
    """
    bu = unsigned(b)
    probabilities, gamma_column, sum_column = unsigned(k_arms), unsigned(2 * k_arms + 1), unsigned(2 * k_arms + 2)
    g = state[bu, gamma_column]
    spent = 0.0
    for i in range(k_arms):
        iu = unsigned(i)
        # γ = 0 (a fixed gamma of 0) with an arm observed that p gave no chance: divide by the floor, not 0
        q_i = max(observation_probability(state, b, k_arms, start, arms, i) + g, MIN_PROBABILITY)
        q[iu] = q_i
        spent += state[bu, probabilities + iu] / q_i
    n_seen = losing_arms(mask, observed, k_arms, seen)
    for e in range(n_seen):
        i = unsigned(seen[unsigned(e)])
        state[bu, i] += (1.0 - observed[i]) / q[i]
    state[bu, sum_column] += spent
    if adaptive:
        next_eta = math.sqrt(log_k / (k_arms + state[bu, sum_column]))
        next_gamma = 0.5 * next_eta
    else:
        next_eta, next_gamma = eta, gamma
    state[bu, gamma_column] = next_gamma
    refresh_distribution(state, b, k_arms, seen, n_seen, next_eta)


@njit(error_model="numpy")
def exp3ix_update(
    state: Any,
    actions: Any,
    rewards: Any,
    mask: Any,
    observed: Any,
    start: Any,
    arms: Any,
    adaptive: bool,
    eta: float,
    gamma: float,
) -> int:  # pragma: no cover
    """Exp3-IX's update of every copy (:func:`exp3ix_row`); the refused copy (nothing changed), or -1.

    Refused: :func:`graph_feedback_refused`. ``actions`` and ``rewards`` are checked only.
    """
    k_arms = n_arms_of(state.shape[1])
    bad = graph_feedback_refused(actions, rewards, mask, observed, k_arms)
    if bad != -1:
        return bad
    q = np.empty(k_arms)
    seen = np.empty(k_arms, dtype=np.int64)
    log_k = math.log(k_arms)
    for b in range(state.shape[0]):
        exp3ix_row(state, b, k_arms, mask[b], observed[b], start, arms, adaptive, eta, gamma, q, seen, log_k)
    return -1


@njit(inline="always")
def graph_step_refused(action: int, reward: float, mask: Any, observed: Any, k_arms: int) -> bool:  # pragma: no cover
    """One env's :func:`graph_feedback_refused`: an action outside [0, K), or a reward or observed one not in [0, 1]."""
    if action < 0 or action >= k_arms or not 0.0 <= reward <= 1.0:
        return True
    refused = False
    for i in range(k_arms):
        refused |= mask[i] & (not 0.0 <= observed[i] <= 1.0)
    return refused


# One env: scalars in, an int out, each through its compiled entry point
# (:class:`agents.base.SingleEnvKernel`). Each computes row 0 with the row function the batched
# kernel above loops over, so it computes and draws exactly what that kernel does for a batch of
# one copy, without building one-element arrays (an allocation costs about 15 ns).


@njit
def sample_one(state: Any, u: float) -> int:  # pragma: no cover
    """:func:`sample_into` of one env (row 0), for the generator's next uniform ``u``."""
    return sample_row(state, 0, n_arms_of(state.shape[1]), u)


@njit(error_model="numpy")
def exp3_step(  # pragma: no cover
    state: Any, action: int, reward: float, eta_next: float, gamma: float, u: float
) -> int:
    """:func:`exp3_update` of one env (row 0), then :func:`sample_one` of the next round for the uniform ``u``.

    Returns the next round's arm, or -1 if the feedback is refused (nothing changed).
    """
    k_arms = n_arms_of(state.shape[1])
    if action < 0 or action >= k_arms or not 0.0 <= reward <= 1.0:
        return -1
    exp3_row(state, 0, k_arms, action, reward, eta_next, gamma)
    return sample_row(state, 0, k_arms, u)


@njit(error_model="numpy")
def exp3set_step(  # pragma: no cover
    state: Any, action: int, reward: float, mask: Any, observed: Any, start: Any, arms: Any, eta: float, u: float
) -> int:
    """:func:`exp3set_update` of one env (row 0) with its (K,) ``mask`` and ``observed``, then :func:`sample_one`.

    Returns the next round's arm for the uniform ``u``, or -1 if the feedback is refused (nothing changed).
    """
    k_arms = n_arms_of(state.shape[1])
    if graph_step_refused(action, reward, mask, observed, k_arms):
        return -1
    exp3set_row(state, 0, k_arms, mask, observed, start, arms, eta, np.empty(k_arms), np.empty(k_arms, np.int64))
    return sample_row(state, 0, k_arms, u)


@njit(error_model="numpy")
def exp3ix_step(  # pragma: no cover
    state: Any,
    action: int,
    reward: float,
    mask: Any,
    observed: Any,
    start: Any,
    arms: Any,
    adaptive: bool,
    eta: float,
    gamma: float,
    u: float,
) -> int:
    """:func:`exp3ix_update` of one env (row 0) with its (K,) ``mask`` and ``observed``, then :func:`sample_one`.

    Returns the next round's arm for the uniform ``u``, or -1 if the feedback is refused (nothing changed).
    """
    k_arms = n_arms_of(state.shape[1])
    if graph_step_refused(action, reward, mask, observed, k_arms):
        return -1
    q, seen = np.empty(k_arms), np.empty(k_arms, np.int64)
    exp3ix_row(state, 0, k_arms, mask, observed, start, arms, adaptive, eta, gamma, q, seen, math.log(k_arms))
    return sample_row(state, 0, k_arms, u)


class ExpWeightsReference:
    """One copy of Exp3, Exp3-SET or Exp3-IX in plain Python, drawing from ``rng``.

    ``kind`` is ``"exp3"`` (``eta(t)`` gives η of round t, ``gamma`` the uniform exploration),
    ``"set"`` (``closed`` the K×K closed neighbourhoods, fixed η) or ``"ix"`` (fixed η and γ, or
    ``eta=None`` for the adaptive tuning).
    """

    def __init__(
        self,
        n_arms: int,
        kind: str,
        rng: np.random.Generator,
        eta: Any,
        gamma: float | None = 0.0,
        closed: Any = None,
    ) -> None:
        self.k, self.kind, self.rng = n_arms, kind, rng
        self.eta_of, self.gamma = eta, gamma
        self.closed = closed
        self.losses = [0.0] * n_arms
        self.p = [1.0 / n_arms] * n_arms
        self.t = 0
        self.spent = 0.0
        self.ix_gamma: float = 0.5 * math.sqrt(math.log(n_arms) / n_arms) if eta is None else float(gamma or 0.0)
        # the weights' shift and the η they were made with (module notes): p_1 is uniform, low = 0
        self.low = 0.0
        if kind == "exp3":
            self.eta_used: float = eta(1)
        else:
            self.eta_used = math.sqrt(math.log(n_arms) / n_arms) if eta is None else float(eta)

    def act(self) -> int:
        """The arm this copy plays next."""
        u = self.rng.random()
        total, last = 0.0, 0
        for k, pk in enumerate(self.p):
            if pk > 0.0:
                last = k
            total += pk
            if u < total:
                return k
        return last

    def _distribution(self, eta: float, gamma: float) -> None:
        # the kept shift while it serves (same η, the largest weight at least WEIGHT_FLOOR), else min L̂
        weights = [math.exp(-eta * (loss - self.low)) for loss in self.losses]
        if not (eta == self.eta_used and max(weights) >= WEIGHT_FLOOR):
            self.low, self.eta_used = min(self.losses), eta
            weights = [math.exp(-eta * (loss - self.low)) for loss in self.losses]
        total = 0.0  # summed left to right, as the kernel does
        for w in weights:
            total += w
        self.p = [w * ((1.0 - gamma) / total) + gamma / self.k for w in weights]

    def q(self, i: int) -> float:
        """Probability that arm i's loss is observed under the current p."""
        total = 0.0
        for j in range(self.k):
            if self.closed[i][j]:
                total += self.p[j]
        return total

    def update(self, action: int, reward: float, observed: dict[int, float] | None = None) -> None:
        """Learn from the round; ``observed`` maps each observed arm to its reward (graph agents)."""
        self.t += 1
        if self.kind == "exp3":
            self.losses[action] += (1.0 - reward) / max(self.p[action], 1e-300)
            self._distribution(self.eta_of(self.t + 1), float(self.gamma or 0.0))
            return
        assert observed is not None
        q = [self.q(i) for i in range(self.k)]
        if self.kind == "set":
            for i, value in observed.items():
                self.losses[i] += (1.0 - value) / max(q[i], 1e-300)
            self._distribution(self.eta_of, 0.0)
            return
        g = self.ix_gamma
        spent = 0.0
        for i in range(self.k):
            qg = max(q[i] + g, 1e-300)
            spent += self.p[i] / qg
            if i in observed:
                self.losses[i] += (1.0 - observed[i]) / qg
        self.spent += spent
        if self.eta_of is None:
            eta = math.sqrt(math.log(self.k) / (self.k + self.spent))
            self.ix_gamma = 0.5 * eta
        else:
            eta = self.eta_of
        self._distribution(eta, 0.0)
