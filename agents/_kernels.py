"""Compiled building blocks shared by the step path and the batched simulators.

Each elimination agent is a per-round state machine written once as two numba functions,
``act(state, params, b, rng)`` and ``update(state, params, b, a, rewards, rng)``, over state
arrays with a batch axis first. The step API (``Agent.act``/``Agent.update``) calls them for
every copy; :func:`simulate` calls the very same functions in a compiled loop over a reward
table. So the fast path is the real code, and tests check both give the same actions.

The three drivers below take the agent's functions as arguments and are not cached on disk:
numba cannot pickle a cache index keyed by function types once those functions are recompiled
(``ReferenceError: underlying object has vanished``), so each process compiles them once.
"""

from __future__ import annotations

import numba
import numpy as np

from bandit_envs._jit import njit
from bandit_envs.rewards import reward_from_uniform

#: ``mode`` of :func:`simulate`: the table holds uniforms, mapped to rewards by the arms' laws.
TABLE_UNIFORMS = 0
#: ``mode`` of :func:`simulate`: the table holds the rewards themselves.
TABLE_REWARDS = 1


@numba.njit
def act_batch(act, state, params, rng, out):  # pragma: no cover
    """Fill ``out[b]`` with copy b's action."""
    for b in range(out.shape[0]):
        out[b] = act(state, params, b, rng)


@numba.njit
def update_batch(update, state, params, actions, rewards, rng):  # pragma: no cover
    """Feed copy b its action and its row of observed rewards."""
    for b in range(actions.shape[0]):
        update(state, params, b, actions[b], rewards[b], rng)


@numba.njit
def simulate(  # pragma: no cover
    act,
    update,
    state,
    params,
    b,
    observes,
    table,
    mode,
    kind,
    loc,
    scale,
    cdf_lo,
    cdf_width,
    start,
    stop,
    override_t,
    override_k,
    override_v,
    gaps,
    checkpoints,
    regret_out,
    actions_out,
    rng,
    bad_out,
):
    """Run copy ``b`` over rounds ``start..stop-1`` of a reward table.

    ``table`` holds rewards (``mode == TABLE_REWARDS``) or uniforms mapped to rewards by the
    arms' laws (``mode == TABLE_UNIFORMS``, see :mod:`bandit_envs.rewards`); only the entries the agent observes
    (``observes[a]``) are computed, the rest of the row the agent sees is NaN. Entry
    (``override_t``, ``override_k``) is replaced by
    ``override_v`` (neighbouring tables). Cumulative regret is written at the rounds listed in
    ``checkpoints`` (ascending, 1-based counts); actions go to ``actions_out`` if it is long
    enough. Returns the total regret.

    Every table entry the agent reads (a reward, or a uniform in ``TABLE_UNIFORMS`` mode) must be
    in [0, 1] (NaN is not): the agents' bounds assume it, and a NaN would read as "not observed".
    At the first entry that is not, the loop stops before feeding it, writes its round and arm to
    ``bad_out`` and returns; the caller restores the agent's state and reports it.
    """
    k_arms = table.shape[1]
    row = np.full(k_arms, np.nan)
    total = 0.0
    ci = 0
    n_ck = checkpoints.shape[0]
    while ci < n_ck and checkpoints[ci] <= start:
        ci += 1
    record = actions_out.shape[0] >= stop
    for t in range(start, stop):
        a = act(state, params, b, rng)
        obs = observes[a]
        for k in range(k_arms):
            if obs[k]:
                if t == override_t and k == override_k:
                    row[k] = override_v
                    continue
                value = table[t, k]
                if not (0.0 <= value <= 1.0):
                    bad_out[0] = t
                    bad_out[1] = k
                    return total
                if mode == TABLE_REWARDS:
                    row[k] = value
                else:
                    row[k] = reward_from_uniform(value, kind, loc[k], scale, cdf_lo[k], cdf_width[k])
        update(state, params, b, a, row, rng)
        for k in range(k_arms):
            row[k] = np.nan
        total += gaps[a]
        if record:
            actions_out[t] = a
        while ci < n_ck and checkpoints[ci] == t + 1:
            regret_out[ci] = total
            ci += 1
    return total


@njit
def argmax_masked(values, mask):  # pragma: no cover
    """Index of the largest ``values[k]`` with ``mask[k]``, lowest index on ties (-1 if none)."""
    best = -1
    for k in range(values.shape[0]):
        if mask[k] and (best < 0 or values[k] > values[best]):
            best = k
    return best
