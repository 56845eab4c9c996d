"""Compiled building blocks shared by the agents' kernels: reading a reward table, checking feedback, argmax.

The elimination agents' table runs (:mod:`agents.elimination.drivers`) read a table entry by entry:
an entry must pass :func:`valid`, then :func:`to_reward` maps it to a reward by the arm's law
exactly as the env does (:mod:`bandit_envs.rewards`). (Written as two small functions the
callers inline, rather than one reader returning a sentinel for a bad entry: numba compiles
the latter into a loop several times slower.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bandit_envs._jit import njit
from bandit_envs.rewards import KIND_CODES, reward_from_uniform

if TYPE_CHECKING:
    from agents.base import Agent
    from bandit_envs._types import BoolArray, FloatArray, IntArray

#: ``law[0]`` of :func:`to_reward` for Bernoulli arms (the others are truncated normals).
BERNOULLI = KIND_CODES["bernoulli"]


@njit(inline="always")
def unsigned(index):  # pragma: no cover
    """A non-negative ``index`` as an unsigned integer, for indexing an array with it.

    numba indexes with a signed integer as Python does, a negative one counting from the end, so
    every such read or write tests the index's sign and adds the length; with an unsigned one it
    does not. The table runs' hot loops index with arm numbers and rows read from arrays, where
    the compiler cannot tell the sign: measured on their loops at K = 10, T = 10^5
    (benchmarks/bench_elimination.py), GAP's on a table of rewards 5.0 -> 3.2 ns a round, DP-SE's
    3.4 -> 2.2, AAE's 5.0 -> 4.2, and the floor that only adds each revealed entry 2.2 -> 1.5.
    Only for an index known to be >= 0 (a negative one would become a huge one: numba does not
    check bounds).
    """
    return np.uint64(index)


@njit(inline="always")
def first_bad(actions, rewards, n_arms):  # pragma: no cover
    """The first copy whose action is outside [0, K) or whose reward is not in [0, 1] (NaN is not); -1 if none."""
    for b in range(actions.shape[0]):
        if actions[b] < 0 or actions[b] >= n_arms or not (0.0 <= rewards[b] <= 1.0):
            return b
    return -1


@njit(inline="always")
def first_bad_observed(mask, observed, low, high):  # pragma: no cover
    """``OBSERVED_REFUSED - b`` for the first copy b with an observed reward not in [``low``, ``high``].

    Observed: where ``mask``. -1 if none; NaN is not in any interval. Each row is tested without a
    branch per entry (a row with a few arms revealed at random places would mispredict one per
    revealed arm).
    """
    for b in range(mask.shape[0]):
        refused = False
        for k in range(mask.shape[1]):
            refused |= mask[b, k] & (not low <= observed[b, k] <= high)
        if refused:
            return OBSERVED_REFUSED - b
    return -1


@njit
def revealed_row(mask, seen, a, r, low, high, out):  # pragma: no cover
    """One env's round as the update kernels read it: ``out[0] = np.where(mask, seen, nan)``, then ``out[0, a] = r``.

    Returns the first arm k with ``mask[k]`` True and ``seen[k]`` not in [``low``, ``high``]
    (NaN included), or -1; after a k >= 0, ``out`` is not to be used. The check of every
    revealed reward that :meth:`agents.base.Agent._side_observations` makes with numpy, in one
    compiled pass for the elimination agents' one-env ``update`` (a refused round then takes
    the numpy path, which raises its sentence).
    """
    for k in range(out.shape[1]):
        if mask[k]:
            value = seen[k]
            if not low <= value <= high:
                return k
            out[0, k] = value
        else:
            out[0, k] = np.nan
    out[0, a] = r
    return -1


#: A batched update kernel that refuses copy b for an observed reward (``info["observed_rewards"]`` where
#: ``info["observed_mask"]``) returns ``OBSERVED_REFUSED - b``; for its action or reward, b.
OBSERVED_REFUSED = -2


def kernel_error(
    agent: Agent,
    actions: IntArray,
    rewards: FloatArray,
    b: int,
    mask: BoolArray | None = None,
    observed: FloatArray | None = None,
) -> ValueError:
    """The agent's error for copy ``b``, refused by a kernel: its action (outside [0, K)), else its reward.

    A ``b`` of ``OBSERVED_REFUSED - c`` (the kernel given the step's ``mask`` and ``observed``
    rewards) is copy c's observed reward: the sentence that names its entry.
    """
    if b <= OBSERVED_REFUSED and mask is not None and observed is not None:
        low = 0.5 if agent.reward_bounds is None else agent.reward_bounds[0]
        try:
            agent._check_observed(np.where(mask, observed, low))
        except ValueError as exc:
            return exc
        b = OBSERVED_REFUSED - b
    if not 0 <= actions[b] < agent.n_arms:
        return agent._action_range_error(int(actions[b]), b)
    return agent._reward_error(float(rewards[b]), b)


@njit(inline="always")
def valid(value):  # pragma: no cover
    """Whether a table entry is in [0, 1] (NaN is not), as the agents' bounds assume of every entry they read."""
    return 0.0 <= value <= 1.0


@njit(inline="always")
def to_reward(value, k, law):  # pragma: no cover
    """Arm k's reward for a valid table entry ``value``.

    ``law`` is ``None`` where the table holds the rewards themselves (the entry is the reward),
    else ``(kind, loc, scale, cdf_lo, cdf_width)`` (:meth:`bandit_envs.rewards.RewardModel.params`)
    for a table of uniforms, each mapped to arm k's reward by
    :func:`bandit_envs.rewards.reward_from_uniform`. The test is on the argument's type, so numba
    drops the branch not taken before compiling: a run on rewards never compiles the inverse CDF.
    """
    if law is None:
        return value
    kind, loc, scale, cdf_lo, cdf_width = law
    return law_reward(value, kind, loc[k], scale, cdf_lo[k], cdf_width[k])


@njit
def law_reward(u, kind, loc, scale, cdf_lo, cdf_width):  # pragma: no cover
    """:func:`bandit_envs.rewards.reward_from_uniform`, compiled once here rather than inlined.

    Every table run calls it, so inlining would type and compile the inverse CDF again in each
    of them (seconds of a first run's compilation) for a call that costs about a nanosecond.
    """
    return reward_from_uniform(u, kind, loc, scale, cdf_lo, cdf_width)


@njit(inline="always")
def first_argmax(values):  # pragma: no cover
    """Index of the largest ``values[k]``, lowest index on ties (strict ``>``); 0 when none exceeds -inf."""
    best = 0
    best_value = -np.inf
    for k in range(values.shape[0]):
        if values[k] > best_value:
            best_value = values[k]
            best = k
    return best


@njit
def argmax_masked(values, mask):  # pragma: no cover
    """Index of the largest ``values[k]`` with ``mask[k]``, lowest index on ties (-1 if none)."""
    best = -1
    for k in range(values.shape[0]):
        if mask[k] and (best < 0 or values[k] > values[best]):
            best = k
    return best


@njit(inline="always")
def ucb_row_choice(means, counts, b, width):  # pragma: no cover
    """Row b's first arm with count 0, else argmax of ``means[b, k] + sqrt(width / counts[b, k])`` (strict ``>``)."""
    best = 0
    best_value = -np.inf
    for k in range(means.shape[1]):
        n = counts[b, k]
        if n == 0:
            return k
        value = means[b, k] + np.sqrt(width / n)
        if value > best_value:
            best_value = value
            best = k
    return best


@njit
def ucb_choose(means, counts, width):  # pragma: no cover
    """Per row b, the first arm with count 0, else argmax of mean + sqrt(width[b] / count).

    ``width`` is the per-copy exploration numerator (alpha^2 ln t for UCB). Strict ``>`` breaks
    ties towards the lowest index. Used by the agents that shift the means or widen the index
    (SM-UCB, the noise-aware LDP wrapper); UCB and UCB-N choose with their fused
    ``_choose_row`` (``agents/stochastic/index.py``).
    """
    out = np.empty(means.shape[0], dtype=np.int64)
    for b in range(means.shape[0]):
        out[b] = ucb_row_choice(means, counts, b, width[b])
    return out
