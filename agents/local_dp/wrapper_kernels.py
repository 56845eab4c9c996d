"""Compiled kernels of :class:`agents.LDPWrapper`'s batched step: the users' reports and the noise-aware index.

A round of N copies through the wrapper's numpy code takes some twenty numpy calls (clip, the
count of clipped rewards, the noise, the lattice, the info the wrapped agent gets), 80-200 us a
round whatever N: at 100 copies five times the cost per copy of 1,000. These kernels do the
same arithmetic on the same draws in one call each, for the usual round (every copy's user
reports: no cap, no user ids). The numpy code stays the reference: ``LDPWrapper._privatize``
and ``_strip`` for :func:`batch_reports`, and ``ucb_choose`` with the Laplace forcing for
:func:`noise_aware_choose`; ``tests/test_ldp_wrapper.py`` compares them bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.common.kernels import first_argmax
from agents.common.streams import laplace_of_double, standard_normal
from bandit_envs._jit import njit
from bandit_envs.core import next_double

#: ``batch_reports``'s codes of the mechanisms (LDPWrapper.mechanism).
LAPLACE, GAUSSIAN, RANDOMIZED_RESPONSE = 0, 1, 2
MECHANISM_CODES = {"laplace": LAPLACE, "gaussian": GAUSSIAN, "randomized_response": RANDOMIZED_RESPONSE}


@njit(inline="always")
def clip(value: float, lo: float, hi: float) -> float:  # pragma: no cover
    """``numpy.clip`` of one finite value: ``lo`` if below it, ``hi`` if above, else the value itself.

    So a value equal to a bound is kept as it is (-0.0 clipped to [0, 1] stays -0.0, as numpy keeps it).
    """
    value = lo if value < lo else value
    return hi if value > hi else value


@njit(inline="always")
def snap(value: float, grid: float) -> float:  # pragma: no cover
    """``grid * rint(value / grid)`` (:func:`bandit_envs.privacy.lattice.snap`): exact, ties to even."""
    return np.rint(value / grid) * grid


@njit
def batch_reports(  # pragma: no cover
    actions: Any,
    rewards: Any,
    lo: float,
    hi: float,
    mechanism: int,
    scale: float,
    grid: float,
    p_zero: float,
    slope: float,
    bitgens: Any,
    clipped: Any,
    reports: Any,
    mask: Any,
    values: Any,
) -> None:
    """Every copy's report of its clipped reward, and the pulled-arm-only info the wrapped agent gets.

    Per copy b, with c = clip(``rewards[b]``, lo, hi) (``clipped[b]`` += 1 when c differs) and one
    draw from the generator at ``bitgens[b]`` (its user's):

    * Laplace: c + Lap(``scale``) (:func:`agents.common.streams.copy_laplace`'s draw);
    * Gaussian: c + N(0, ``scale``²) (:func:`agents.common.streams.copy_normals`'s);
    * with ``grid`` > 0 (the lattice sampler) both terms are snapped to the grid first;
    * randomized response (bits): 1.0 if U < ``p_zero`` + ``slope`` · clip((c − lo)/(hi − lo), 0, 1)
      else 0.0, with U the generator's next double (``p_zero`` = 1/(1 + e^ε), ``slope`` = tanh(ε/2):
      :func:`bandit_envs.privacy.bernoulli_mechanism`).

    ``reports[b]`` is the report; ``mask`` and ``values`` (zeros, (B, K)) get True and the report at
    the pulled arm ``actions[b]`` (``LDPWrapper._strip``), unless they are empty (an agent given no
    info). ε-LDP (or (ε, δ) for Gaussian) per report, as the wrapper states; nothing here reads
    anything but the copy's own reward.
    """
    span = hi - lo
    for b in range(rewards.shape[0]):
        r = rewards[b]
        c = clip(r, lo, hi)
        if c != r:
            clipped[b] += 1
        if mechanism == RANDOMIZED_RESPONSE:
            p_one = p_zero + slope * clip((c - lo) / span, 0.0, 1.0)
            report = 1.0 if next_double(bitgens[b]) < p_one else 0.0
        else:
            if mechanism == LAPLACE:
                u = next_double(bitgens[b])
                while u == 0.0:  # numpy's random_laplace draws again on 0
                    u = next_double(bitgens[b])
                noise = laplace_of_double(u, scale)
            else:
                noise = 0.0 + scale * standard_normal(bitgens[b])
            report = snap(c, grid) + snap(noise, grid) if grid > 0.0 else c + noise
        reports[b] = report
        if mask.shape[0] > 0:
            a = actions[b]
            mask[b, a] = True
            values[b, a] = report


@njit(error_model="numpy")
def noise_aware_choose(
    state: Any, n_arms: int, squared_widths: Any, log_t: float, forced_up_to: float, out: Any
) -> None:  # pragma: no cover
    """Per copy b of a wrapped UCB's packed state: the noise-aware index's arm of the round (``LDPWrapper.act``).

    The first arm whose count is at most ``forced_up_to`` (Laplace's forcing, 4 ln(t + 1); -1.0:
    none), else :func:`agents.common.kernels.ucb_row_choice` with the width ``squared_widths[b]``
    · ``log_t`` (w² ln t): its first arm with count 0, else the first argmax of mean + sqrt(width
    / count). The means and counts are read from UCB's packed rows (columns [K, 2K) and, as
    int64, [2K, 3K): ``agents/stochastic/index.py``). As in UCB's own choice, the rows are read in
    place and the indices computed in a loop without branches (every count is > 0 there), which
    LLVM vectorizes (packed square roots and divisions in the machine code; none through strided
    slices of the rows), then the first argmax: the same values and the same arm as
    ``ucb_row_choice``'s loop, in half its time at 1,000 copies.
    """
    ints = state.view(np.int64)  # the rows read in place, not through strided slices
    index = np.empty(n_arms)
    # A count of 0 is forced either way (Laplace's bound is >= 0; without forcing, an unplayed arm goes first).
    threshold = forced_up_to if forced_up_to >= 0.0 else 0.0
    for b in range(state.shape[0]):
        chosen = -1
        for k in range(n_arms):
            if ints[b, 2 * n_arms + k] <= threshold:
                chosen = k
                break
        if chosen < 0:
            width = squared_widths[b] * log_t
            for k in range(n_arms):
                index[k] = state[b, n_arms + k] + np.sqrt(width / ints[b, 2 * n_arms + k])
            chosen = first_argmax(index)
        out[b] = chosen
