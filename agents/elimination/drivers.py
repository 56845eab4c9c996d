"""Compiled drivers of the elimination agents: one step for every copy, and epoch-level table runs.

The agents' decisions live once, in the state machines of :mod:`agents.elimination.kernels`
(``*_plan``, ``*_act``, ``*_update`` and the epoch-end functions ``gap_release``,
``dpse_release``, ``aae_end_pass``, ``alpha_end_sweep``). This module drives them two ways:

* ``*_act_batch`` / ``*_update_batch``: the step API, one round for every copy of a batched
  agent, calling ``*_act`` / ``*_update`` per copy with the round's observed rewards as a row
  (NaN where not observed) and the addresses of the copies' generators (``bitgens``; copy b
  draws from ``bitgens[b]``, see :mod:`agents.elimination.kernels`), or None where they draw nothing.
* ``*_run``: the table simulator, which plays one copy over a block of rows of a reward table.
  It does what ``*_act`` then ``*_update`` would do round after round, but an epoch (a pass for
  AAE, a sweep for AlphaSample) at a time: the arms each pull reveals are listed once per epoch,
  and the loop over the epoch's rounds only reads those table entries, adds them to the epoch's
  sums in round order (so every sum, hence every release and every draw of the generator, is
  the same as the step-by-step path's) and tallies the regret. At the epoch's end it calls the
  same epoch-end function as ``*_update``. A run can stop at any round (the end of a block) and
  resume from the state arrays, which hold everything, so a table can be fed in blocks.

Every ``*_run`` has the same signature::

    run(state, params, b, observes, block, t0, stop, law, override, gaps,
        checkpoints, regret_out, actions_out, total, bitgens, bad) -> total

``block`` holds rows ``t0 .. t0 + len(block) - 1`` of the table, and the copy plays from its
current round to ``min(stop, t0 + len(block))``. ``observes[a]`` are the arms pulling ``a``
reveals (the closed neighbourhood with side observations, else ``a`` alone); only active
revealed arms are read. ``law`` is ``None`` for a table of rewards, else the arms' laws
``(kind, loc, scale, cdf_lo, cdf_width)`` for a table of uniforms
(:func:`agents.common.kernels.to_reward`). numba compiles a run once per kind of table and drops
the branches a ``None`` argument does not take, so a run on rewards never compiles the inverse
CDF; GAP's run, the one with a loop for each kind, is two functions (:func:`compile_gap_run`).
``override`` is ``(t, k, v)``, entry (t, k) read as the reward ``v`` (``t = -1``: none).
``total`` is the regret so far; it comes back with this block's rounds added, and the cumulative
regret is written to ``regret_out[i]`` at round count ``checkpoints[i]``; arms go to
``actions_out[t]`` if it has ``stop`` entries. A table entry outside [0, 1] (or NaN) stops the
run before it is used: its round and arm go to ``bad``. ``bitgens`` holds the addresses of the
copies' generators (copy ``b`` draws from ``bitgens[b]``), or is None for a run that draws nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from agents.common.kernels import to_reward, unsigned, valid
from agents.elimination import kernels as k_
from bandit_envs._jit import njit
from bandit_envs.rewards import rewards_of_entries

# ------------------------------------------------------------------------ step API, per agent


@njit
def gap_act_batch(state, params, bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's next arm (GAP, GAPU)."""
    for b in range(out.shape[0]):
        out[b] = k_.gap_act(state, params, b, bitgens)


@njit
def gap_update_batch(state, params, actions, rewards, bitgens):  # pragma: no cover
    """Feed copy b its arm and its row of observed rewards (GAP, GAPU); 1 if an epoch ended (release due), else 0.

    First :func:`agents.elimination.kernels.gap_feedback_ok` on the round's revealed arms (the
    rewards that are not NaN; ``params[2]`` holds the declared closed neighbourhoods): where they
    fall short, nothing changes and the result is -1. The release of a copy whose epoch ended
    (its round count at its epoch's end) is left to the caller
    (:meth:`agents.elimination.policies.GAP._end_epochs`).
    """
    if not k_.gap_feedback_ok(params[2], actions, rewards, state):
        return -1
    ended = 0
    for b in range(actions.shape[0]):
        if k_.gap_update(state, params, b, actions[b], rewards[b], bitgens):
            ended = 1
    return ended


@njit
def dpse_act_batch(state, params, bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's next arm (DPSE)."""
    for b in range(out.shape[0]):
        out[b] = k_.dpse_act(state, params, b, bitgens)


@njit
def dpse_update_batch(state, params, actions, rewards, bitgens):  # pragma: no cover
    """Feed copy b its arm and its row of observed rewards (DPSE)."""
    for b in range(actions.shape[0]):
        k_.dpse_update(state, params, b, actions[b], rewards[b], bitgens)


@njit
def aae_act_batch(state, params, bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's next arm (AAE)."""
    for b in range(out.shape[0]):
        out[b] = k_.aae_act(state, params, b, bitgens)


@njit
def aae_update_batch(state, params, actions, rewards, bitgens):  # pragma: no cover
    """Feed copy b its arm and its row of observed rewards (AAE)."""
    for b in range(actions.shape[0]):
        k_.aae_update(state, params, b, actions[b], rewards[b], bitgens)


@njit
def alpha_act_batch(state, params, bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's next arm (AlphaSample; one draw of copy b's generator)."""
    for b in range(out.shape[0]):
        out[b] = k_.alpha_act(state, params, b, bitgens)


@njit
def alpha_update_batch(state, params, actions, rewards, bitgens):  # pragma: no cover
    """Feed copy b its arm and its row of observed rewards (AlphaSample)."""
    for b in range(actions.shape[0]):
        k_.alpha_update(state, params, b, actions[b], rewards[b], bitgens)


# ------------------------------------------------------------------- table runs, shared parts


@njit(inline="always")
def first_checkpoint_after(checkpoints, t):  # pragma: no cover
    """Index of the first checkpoint (a 1-based round count) above ``t`` rounds played."""
    ci = 0
    while ci < checkpoints.shape[0] and checkpoints[ci] <= t:
        ci += 1
    return ci


@njit(inline="always")
def checkpoint_at(checkpoints, ci):  # pragma: no cover
    """The round count of checkpoint ``ci``, or -1 past the last one."""
    return checkpoints[ci] if ci < checkpoints.shape[0] else -1


@njit(inline="always")
def list_revealed(arms, n_arms_listed, observes, active, b, revealed, n_revealed):  # pragma: no cover
    """``revealed[i, :n_revealed[i]]``: the active arms that pulling ``arms[i]`` reveals, in index order."""
    for i in range(n_arms_listed):
        a = arms[i]
        n = 0
        for k in range(observes.shape[1]):
            if observes[a, k] and active[b, k]:
                revealed[i, n] = k
                n += 1
        n_revealed[i] = n


#: Rounds of a segment whose entries :func:`gap_run` reads in one batch.
CHUNK_ROUNDS = 256
#: How many rows ahead :func:`gap_run` asks the processor for the rows it will read (:func:`prefetch_rows`).
PREFETCH_ROWS = 64
#: Rounds between two calls of :func:`prefetch_rows`, each for as many rows. GAP at K = 100, T = 10^5
#: on a table of rewards (one run, ns a round): no prefetch 49, 32 rows every 32 rounds 35, 4 rows 32
#: ahead 21, 2 rows 64 ahead 17.6; at K = 10 (nothing prefetched) the same as without, within 5%.
#: A later machine with less memory bandwidth: no prefetch 58, 2 rows 16 to 256 ahead 43-46.
PREFETCH_BATCH = 2
#: The batch of rounds where nothing is prefetched: all of them, in one loop.
NO_BATCH = 1 << 40
#: Widest span of columns (entries) that :func:`gap_run` prefetches: 32 cache lines of 8 float64.
PREFETCH_SPAN = 256


def _prefetch(typingctx, array, row, col):  # pragma: no cover
    """Hint the processor to load the cache line of ``array[row, col]`` (LLVM's ``prefetch``; no effect on results).

    A hint only: it reads nothing into the program and cannot fault, so ``row`` may run past the
    last row (the caller keeps it inside anyway).
    """
    signature = types.void(array, row, col)

    def codegen(context, builder, sig, args):
        kind = sig.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, kind, view, [args[1], args[2]], wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        # read (0), keep in every cache level (3), data (1)
        builder.call(fn, [builder.bitcast(pointer, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return signature, codegen


def _float_bits(typingctx, value):  # pragma: no cover
    """The bits of a float64 as a uint64 (LLVM's ``bitcast``: no instruction).

    Non-negative floats order as their bits do, and a float above 1.0, an infinity, a negative
    float or a NaN has bits above those of 1.0, so the largest bits of a stretch's entries tell
    whether one of them may be outside [0, 1], with one unsigned maximum an entry where
    :func:`valid` takes two comparisons. -0.0 (which is in [0, 1]) also reads as above 1.0: the
    exact search that follows finds nothing. GAP's loop over a table of rewards keeps that maximum: 0.59-0.64x of
    the revealed-entry floor at K = 10 (median 0.63x) against 0.56-0.62x (median 0.61x) with
    ``ok &= valid(r)``, seven alternating runs each (benchmarks/bench_elimination.py).
    """
    signature = types.uint64(types.float64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return signature, codegen


float_bits = cast(Callable[[float], np.uint64], intrinsic(_float_bits))
#: The bits of 1.0: a float64 whose bits as a uint64 are at most these is in [+0.0, 1.0].
ONE_BITS = np.uint64(0x3FF0000000000000)


#: ``prefetch(array, row, col)``, compiled code only (see :func:`_prefetch`).
prefetch = cast(Callable[[Any, int, int], None], intrinsic(_prefetch))


@njit(inline="always")
def prefetch_span(revealed, n_revealed, m, k_arms):  # pragma: no cover
    """The columns ``lo .. hi - 1`` that an epoch's rounds read, or (0, 0) where the hardware's own prefetch suffices.

    The processor fetches ahead on its own along a row it reads through, but an epoch that reads
    a few columns of a long row (later epochs, with fewer active arms) jumps from row to row and
    waits for memory in every round: at K = 100 with the active arms in the first quarter of
    each row, 3x-4x slower than with :func:`prefetch_rows` (benchmarks/bench_elimination.py).
    Nothing is prefetched for rows of fewer than 32 entries or spans wider than
    :data:`PREFETCH_SPAN` (there the hints cost more than they save).
    """
    lo, hi = k_arms, np.int64(0)  # not the literal 0: numba would compile prefetch_rows once more for it
    for i in range(m):
        if n_revealed[i] > 0:
            lo = min(lo, revealed[i, 0])
            hi = max(hi, revealed[i, n_revealed[i] - 1] + 1)
    if k_arms < 32 or hi - lo > PREFETCH_SPAN or hi <= lo:
        return 0, 0
    return lo, hi


@njit
def prefetch_rows(block, first, last, lo, hi):  # pragma: no cover
    """Prefetch columns ``lo .. hi - 1`` of rows ``first .. last - 1`` of ``block`` (those that exist).

    The table runs call it once per :data:`PREFETCH_BATCH` rounds, for as many rows
    :data:`PREFETCH_ROWS` ahead, and only where ``lo < hi``: prefetching inside the loop over
    rounds, or any call there (even one not made), cost GAP 20%-40% at K = 10, where nothing is
    prefetched.
    """
    for ahead in range(first, min(last, block.shape[0])):
        for col in range(lo, hi, 8):
            prefetch(block, ahead, col)
        prefetch(block, ahead, hi - 1)


@njit
def gather_entries(  # pragma: no cover
    block, t0, t, stop, i, m, revealed, n_revealed, override_t, override_k, values, arms
):
    """Copy the entries rounds ``t .. stop - 1`` read into ``values`` / ``arms``, in reading order.

    Round s reads the entries ``revealed[i_s, :n_revealed[i_s]]`` of row s, where i_s runs from
    ``i`` through the round-robin of length ``m``. Returns (number of entries, index of the
    overridden entry (t, k) among them or -1).
    """
    n, where = 0, -1
    lo, hi = prefetch_span(revealed, n_revealed, m, block.shape[1])
    batch = PREFETCH_BATCH if hi > lo else NO_BATCH
    for first in range(t, stop, batch):
        if hi > lo:
            prefetch_rows(block, first - t0 + PREFETCH_ROWS, first - t0 + PREFETCH_ROWS + batch, lo, hi)
        for s in range(first, min(first + batch, stop)):
            row, iu = unsigned(s - t0), unsigned(i)
            for j in range(n_revealed[iu]):
                k = revealed[iu, j]
                values[n] = block[row, unsigned(k)]
                arms[n] = k
                if s == override_t and k == override_k:
                    where = n
                n += 1
            i += 1
            if i == m:
                i = 0
    return n, where


@njit
def first_invalid(values, n, skip):  # pragma: no cover
    """The first e < n (other than ``skip``) with ``values[e]`` outside [0, 1] or NaN; -1 if none."""
    for e in range(n):
        if not valid(values[e]) and e != skip:
            return e
    return -1


@njit
def round_of_entry(t, i, m, n_revealed, entry):  # pragma: no cover
    """The round, from ``t`` at position ``i`` of the round-robin, in which entry ``entry`` was read."""
    s, seen = t, n_revealed[i]
    while seen <= entry:
        s += 1
        i += 1
        if i == m:
            i = 0
        seen += n_revealed[i]
    return s


# ------------------------------------------------------------------------ table runs, per agent


@njit
def first_bad_entry(block, t0, t, stop, i, m, revealed, n_revealed):  # pragma: no cover
    """(round, arm) of the first entry outside [0, 1] or NaN read from round ``t`` on (position ``i`` of Ω).

    Entries in the order the round-robin reads them, up to round ``stop``; (-1, -1) if there is none.
    """
    s = t
    while s < stop:
        for j in range(n_revealed[i]):
            k = revealed[i, j]
            if not valid(block[s - t0, k]):
                return s, k
        s += 1
        i += 1
        if i == m:
            i = 0
    return -1, -1


@njit(inline="always")
def count_segment(o_b, revealed, n_revealed, m, first_position, n_rounds):  # pragma: no cover
    """o_{τ,k} += the rounds of a segment that revealed k (``n_rounds`` rounds of Ω from ``first_position``).

    Counted per position of Ω rather than added one by one in the loop (the same whole
    numbers, so the same floats).
    """
    for position in range(m):
        pulls = n_rounds // m + (1 if (position - first_position) % m < n_rounds % m else 0)
        for j in range(n_revealed[position]):
            o_b[revealed[position, j]] += pulls


def compile_gap_run(chunks: bool) -> Any:
    """GAP / GAPU's table run with one of its two loops: ``chunks`` (a constant of the closure) picks it.

    numba drops the branches on a constant before it compiles, so each run holds one loop and
    compiles in about two thirds of the time of one holding both, and a first run compiles only
    the loop its kind of table uses (the inverse CDF is never compiled for a table of rewards).
    The two are :data:`gap_run_uniforms` and :data:`gap_run_rewards`; benchmarks compile the other
    pairings (``benchmarks/bench_elimination.py --variants``).
    """

    @njit
    def gap_run(  # pragma: no cover
        state,
        params,
        b,
        observes,
        block,
        t0,
        stop,
        law,
        override,
        gaps,
        checkpoints,
        regret_out,
        actions_out,
        total,
        bitgens,
        bad,
    ):
        """GAP / GAPU over a block (Algorithm 1, lines 13-24 an epoch at a time).

        Epoch τ is a round-robin over Ω_τ (see :func:`agents.elimination.kernels.gap_act`): round
        s_τ + j pulls Ω_τ[j mod |Ω_τ|] and adds every revealed active arm's reward to c_{τ,k}
        (and 1 to o_{τ,k}), as :func:`~agents.elimination.kernels.gap_update` does. On a bad entry the
        counts o are left short; :meth:`~agents.elimination.policies.EliminationAgent.simulate` then restores
        the whole state. GAPU's run stops at the end of each epoch, its next Ω_τ pending
        (:func:`~agents.elimination.kernels.gap_plan`): ``simulate`` draws it
        (:func:`~agents.elimination.kernels.gapu_plan`) and calls the run again from there.

        Two loops read the entries: chunks of rounds whose entries are made rewards as a batch
        (:func:`gather_entries`, :func:`bandit_envs.rewards.rewards_of_entries`) for a table of
        uniforms and for the round of the overridden entry, and a round-by-round loop for a table
        of rewards; ``chunks`` keeps only the first. Both are written here rather than called: a
        call per chunk or stretch, with its array arguments, cost 2%-5% on uniforms and up to 3x
        with many checkpoints on rewards.
        """
        active, omega = state[k_.ACTIVE], state[k_.GAP_OMEGA]
        o, c, ctr = state[k_.GAP_OBSERVATIONS], state[k_.GAP_SUMS], state[k_.GAP_COUNTERS]
        o_b, c_b, omega_b = o[b], c[b], omega[b]
        override_t, override_k, override_v = override
        k_arms = active.shape[1]
        revealed = np.empty((k_arms, k_arms), dtype=np.int64)
        n_revealed = np.empty(k_arms, dtype=np.int64)
        # Either loop reads either kind of table (the round-by-round loop makes each entry a reward
        # on its own, a no-op for rewards); each is kept for the kind where the other is slower.
        # Measured with benchmarks/bench_elimination.py --variants (five runs on a busy 2-core
        # machine, same arms either way): on uniforms chunks are 1.3x-1.4x faster than round by
        # round for Bernoulli arms at K = 10, 1.5x-1.8x for truncated normals at K = 10, 1.8x-2.0x
        # at K = 100 and 1.9x-2.1x at K = 1,000; on rewards round by round is 1.3x-1.8x faster.
        # One run with both loops prefetching (--variants --quick): 1.43x, 1.75x, 2.83x, 2.15x on
        # uniforms; 1.54x-1.62x on rewards; again after GAPU's planning moved out of the kernels:
        # 1.42x, 1.23x, 2.76x, 2.13x on uniforms, 1.41x-1.61x on rewards. So one loop for both kinds
        # would make the experiments (uniforms) up to 2.8x slower, or GAP.simulate on a table of
        # rewards 1.4x-1.6x slower.
        size = (CHUNK_ROUNDS if chunks else 1) * k_arms
        values, arms, scratch = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size)
        record = actions_out.shape[0] >= stop
        t = ctr[b, k_.GAP_ROUND]
        end = min(stop, t0 + block.shape[0])
        ci = first_checkpoint_after(checkpoints, t)
        next_ck = checkpoint_at(checkpoints, ci)
        while t < end:
            m = ctr[b, k_.GAP_OMEGA_SIZE]
            list_revealed(omega[b], m, observes, active, b, revealed, n_revealed)
            lo, hi = prefetch_span(revealed, n_revealed, m, k_arms)
            batch = PREFETCH_BATCH if hi > lo else NO_BATCH
            epoch_end = ctr[b, k_.GAP_EPOCH_END]
            i = (t - ctr[b, k_.GAP_EPOCH_START]) % m
            segment_end = min(epoch_end, end)
            segment_start, first_position = t, i
            while t < segment_end:
                if chunks or t == override_t:
                    # A chunk of rounds read as a batch: a table of uniforms, or the round of the
                    # overridden entry in a table of rewards.
                    upto = min(segment_end, t + CHUNK_ROUNDS) if chunks else t + 1
                    n, where = gather_entries(
                        block, t0, t, upto, i, m, revealed, n_revealed, override_t, override_k, values, arms
                    )
                    wrong = first_invalid(values, n, where)
                    if wrong >= 0:
                        ctr[b, k_.GAP_ROUND] = bad[0] = round_of_entry(t, i, m, n_revealed, wrong)
                        bad[1] = arms[wrong]
                        return total
                    if law is not None:  # no call at all for rewards: an empty one made their loop 10% slower
                        rewards_of_entries(values, arms, n, law, scratch)
                    if where >= 0:
                        values[where] = override_v
                    for e in range(n):
                        c_b[unsigned(arms[e])] += values[e]
                    for s in range(t, upto):
                        a = omega_b[i]
                        # Round s's regret, arm and a checkpoint due after it. Written out in every
                        # kernel: an inlined helper returning (total, ci) makes the loop about twice as slow.
                        total += gaps[a]
                        if record:
                            actions_out[s] = a
                        if s + 1 == next_ck:
                            regret_out[ci] = total
                            ci += 1
                            next_ck = checkpoint_at(checkpoints, ci)
                        i += 1
                        if i == m:
                            i = 0
                    t = upto
                    continue
                # Rounds read one by one, in stretches that end before the round of the overridden
                # entry (override_t = -1: none) and at a checkpoint, so that the loop tests neither.
                stretch_end = segment_end if next_ck > segment_end or next_ck < 0 else next_ck
                if t < override_t < stretch_end:
                    stretch_end = override_t
                stretch_position, worst = i, np.uint64(0)
                for first in range(t, stretch_end, batch):
                    if hi > lo:  # the rows PREFETCH_ROWS ahead (see prefetch_span)
                        ahead = first - t0 + PREFETCH_ROWS
                        prefetch_rows(block, ahead, ahead + batch, lo, hi)
                    for s in range(first, min(first + batch, stretch_end)):
                        # unsigned indices: no wraparound test (see agents.common.kernels.unsigned)
                        row, iu = unsigned(s - t0), unsigned(i)
                        for j in range(n_revealed[iu]):
                            k = revealed[iu, j]
                            r = block[row, unsigned(k)]
                            worst = max(worst, float_bits(r))  # a bad entry is looked for after the stretch
                            c_b[unsigned(k)] += to_reward(r, k, law)
                        a = omega_b[iu]
                        total += gaps[unsigned(a)]
                        if record:
                            actions_out[unsigned(s)] = a
                        i += 1
                        if i == m:
                            i = 0
                if worst > ONE_BITS:  # perhaps a bad entry (or -0.0, whose bits read as a large number)
                    s_bad, k_bad = first_bad_entry(block, t0, t, stretch_end, stretch_position, m, revealed, n_revealed)
                    if s_bad >= 0:  # the stretch's first bad entry (the sums it reached are restored by the caller)
                        bad[0], bad[1] = s_bad, k_bad
                        ctr[b, k_.GAP_ROUND] = s_bad
                        return total
                t = stretch_end
                if t == next_ck:
                    regret_out[ci] = total
                    ci += 1
                    next_ck = checkpoint_at(checkpoints, ci)
            count_segment(o_b, revealed, n_revealed, m, first_position, t - segment_start)
            ctr[b, k_.GAP_ROUND] = t
            if t == epoch_end:
                k_.gap_release(state, params, b, bitgens)
                if ctr[b, k_.GAP_OMEGA_SIZE] == 0:  # GAPU: Ω_τ is drawn by the caller (kernels.gapu_plan)
                    return total
        return total

    return gap_run


#: GAP / GAPU's table run for a table of uniforms: chunks of rounds, their entries made rewards as a batch.
gap_run_uniforms = compile_gap_run(chunks=True)
#: GAP / GAPU's table run for a table of rewards: round by round (chunks only for the round of ``override``).
gap_run_rewards = compile_gap_run(chunks=False)


@njit
def dpse_run(  # pragma: no cover
    state,
    params,
    b,
    observes,
    block,
    t0,
    stop,
    law,
    override,
    gaps,
    checkpoints,
    regret_out,
    actions_out,
    total,
    bitgens,
    bad,
):
    """DP-SE over a block: epoch e is R_e rounds of round-robin over the active set S."""
    sched, sums, ctr = state[k_.DPSE_SCHEDULE], state[k_.DPSE_SUMS], state[k_.DPSE_COUNTERS]
    sums_b = sums[b]
    override_t, override_k, override_v = override
    record = actions_out.shape[0] >= stop
    t = ctr[b, k_.DPSE_ROUND]
    end = min(stop, t0 + block.shape[0])
    ci = first_checkpoint_after(checkpoints, t)
    next_ck = checkpoint_at(checkpoints, ci)
    while t < end:
        n = ctr[b, k_.DPSE_N_SCHEDULED]
        epoch_end = ctr[b, k_.DPSE_EPOCH_END]
        i = (t - ctr[b, k_.DPSE_EPOCH_START]) % n
        segment_end = min(epoch_end, end)
        while t < segment_end:
            a = sched[b, unsigned(i)]
            r = block[unsigned(t - t0), unsigned(a)]
            if t == override_t and a == override_k:
                r = override_v
            elif not valid(r):
                ctr[b, k_.DPSE_ROUND] = t
                bad[0], bad[1] = t, a
                return total
            else:
                r = to_reward(r, a, law)
            sums_b[unsigned(a)] += r  # unsigned indices: see agents.common.kernels.unsigned
            # Round t's regret, arm and a checkpoint due after it. Written out in every kernel:
            # an inlined helper returning (total, ci) makes the loop about twice as slow.
            total += gaps[unsigned(a)]
            if record:
                actions_out[unsigned(t)] = a
            if t + 1 == next_ck:
                regret_out[ci] = total
                ci += 1
                next_ck = checkpoint_at(checkpoints, ci)
            t += 1
            i += 1
            if i == n:
                i = 0
        ctr[b, k_.DPSE_ROUND] = t
        if t == epoch_end:
            k_.dpse_release(state, params, b, bitgens)
    return total


@njit
def most_reveals(revealed, n_revealed, length, k_arms):  # pragma: no cover
    """The most times one arm is revealed in a pass (1 without side observations): its updates per pass."""
    times = np.zeros(k_arms, dtype=np.int64)
    most = 0
    for i in range(length):
        for j in range(n_revealed[i]):
            k = revealed[i, j]
            times[k] += 1
            most = max(most, times[k])
    return most


@njit(inline="always")
def add_pass_counts(n_b, order_b, length, first, rounds):  # pragma: no cover
    """Count ``rounds`` rounds of passes over ``order_b[:length]`` from position ``first``, each pull observing its arm.

    Each position's arm gets one observation a whole pass and one more if the rest of the
    rounds reach it: the counts ``n += 1`` round by round would give (whole numbers, exact).
    :func:`count_segment` is the general form (several arms a position); called here instead, it
    made AAE 5%-10% slower at K = 10 (eight alternating runs), so AAE keeps this one.
    """
    whole, rest = divmod(rounds, length)
    for p in range(length):
        n_b[unsigned(order_b[p])] += whole + (1 if (p - first) % length < rest else 0)


@njit
def aae_passes_kept(order_b, length, n_b, sum_b, params, k_arms, per_pass):  # pragma: no cover
    """At a pass's end: how many more passes surely end without an elimination (-1: this one may eliminate).

    Arm k goes only if μ̂_k + rad_k < μ̂_j - rad_j, so μ̂_j - μ̂_k > 2 min(rad): no pass end
    whose spread of means s' = max μ̂ - min μ̂ is at most twice every radius eliminates.

    * The radii. rad(n)² = ln(F n²)/n (Even-Dar et al., F = cK/δ; Hoeffding's form halves it,
      F = 4K/δ) decreases in n when F exceeds e², and ln(F N²) ≥ ln(F n²) > 0 for N ≥ n, so
      while every count is at most n_max + m, every radius is at least
      rad(n_max + m) ≥ R √(n_max/(n_max + m)) ≥ R (1 - m/(2 n_max)), R = rad(n_max).
    * The means. Rewards are in [0, 1], so m more updates take a mean μ observed n times to
      (nμ + Σr)/(n + m), between (1 - c)μ and c + (1 - c)μ with c = m/(n + m): the spread grows
      by at most c(1 - s), c ≤ m/n_min.

    So while each arm gets at most m more updates with
    s + m(1 - s)/n_min < 2R - R m/n_max, i.e. m < (2R - s)/((1 - s)/n_min + R/n_max),
    no pass ends with an elimination. An arm gets at most ``per_pass`` updates a pass; one pass
    fewer than m/per_pass is returned, as a margin, and the margin 1e-9 covers rounding.
    """
    delta, cconst, hoeffding = params
    factor = 4.0 * k_arms / delta if hoeffding else cconst * k_arms / delta
    if factor <= 7.5:
        return -1
    low, high, most, fewest = np.inf, -np.inf, 0.0, np.inf
    for p in range(length):
        k = order_b[p]
        fewest = min(fewest, n_b[k])
        if n_b[k] > 0.0:
            mean = k_.aae_mean(sum_b[k], n_b[k])
            low, high, most = min(low, mean), max(high, mean), max(most, n_b[k])
    if most == 0.0:
        return 0
    rad = k_.aae_radius(most, k_arms, delta, cconst, hoeffding)
    spread = high - low
    slack = 2.0 * rad - (spread + 1e-9)
    if not slack > 0.0:
        return -1
    if fewest < 1.0:
        return 0
    updates = slack / ((1.0 - spread) / fewest + rad / most)
    more = updates / per_pass - 1.0
    return int(more) if more > 0.0 else 0


@njit
def aae_run(  # pragma: no cover
    state,
    params,
    b,
    observes,
    block,
    t0,
    stop,
    law,
    override,
    gaps,
    checkpoints,
    regret_out,
    actions_out,
    total,
    bitgens,
    bad,
):
    """AAE over a block, a pass over the active arms at a time (counts and sums as in ``aae_update``).

    At a pass's end :func:`aae_passes_kept` says how many more passes surely cannot eliminate
    an arm; the rounds up to the next pass end that might are played in one loop (the passes in
    between would only start the same pass again), then :func:`~agents.elimination.kernels.aae_end_pass`
    decides. That loop stops at each checkpoint (the regret is recorded between loops, not tested
    for in every round). Without side observations (each round reveals the pulled arm's entry
    alone) it reads that entry directly rather than through the revealed-entry lists, adds it to
    the arm's sum, and adds the stretch's counts after it (:func:`add_pass_counts`).
    Measured at K = 10, T = 10^5 against the revealed-entry floor (benchmarks/bench_elimination.py,
    five alternating runs): sums in place of running means (no division in the loop) and the
    counts added after the stretch took AAE from 0.35-0.37x of the floor to 0.40-0.47x, and the
    bound of :func:`aae_passes_kept` taken from the radius at the current counts (592 pass-end
    checks, 9 of them exact, against 1,601 and 380) to 0.52-0.57x (2.7-3.0 ns a round). One loop
    for both kinds of pass (each round's list of revealed arms, the counts also added after the
    stretch) reached 0.38-0.40x: the loop without side observations is kept, at 0.1-0.2 s more
    compilation.
    """
    active, order = state[k_.ACTIVE], state[k_.AAE_ORDER]
    n_obs, sums, ctr = state[k_.AAE_COUNTS], state[k_.AAE_SUMS], state[k_.AAE_COUNTERS]
    n_b, sum_b, order_b = n_obs[b], sums[b], order[b]
    override_t, override_k, override_v = override
    k_arms = active.shape[1]
    revealed = np.empty((k_arms, k_arms), dtype=np.int64)
    n_revealed = np.empty(k_arms, dtype=np.int64)
    record = actions_out.shape[0] >= stop
    t = ctr[b, k_.AAE_ROUND]
    end = min(stop, t0 + block.shape[0])
    ci = first_checkpoint_after(checkpoints, t)
    next_ck = checkpoint_at(checkpoints, ci)
    listed, per_pass = -1, 1  # the pass length ``revealed`` was listed for (the active set only shrinks)
    single = False  # each round of the pass reveals the pulled arm's entry alone
    while t < end:
        length = ctr[b, k_.AAE_PASS_LENGTH]
        if length != listed:
            list_revealed(order[b], length, observes, active, b, revealed, n_revealed)
            listed, per_pass = length, most_reveals(revealed, n_revealed, length, k_arms)
            single = per_pass == 1 and n_revealed[:length].sum() == length
        i = ctr[b, k_.AAE_POSITION]
        # One active arm left: every round is a pass of that arm, and aae_end_pass would only
        # start the same pass again. Otherwise play to the end of this pass, then check.
        check_at = end if length == 1 else t + length - i
        end_pass = length == 1
        while True:
            upto = min(check_at, end)
            while t < upto:  # up to the next checkpoint, then record it
                stretch = min(upto, next_ck) if next_ck > t else upto
                first = i
                for s in range(t, stretch):
                    iu = unsigned(i)  # unsigned indices: see agents.common.kernels.unsigned
                    # Two loops that read entries alike: one with `1 if single else ...` for its
                    # bounds and arm (the original loop) reached 0.48x of the revealed-entry floor
                    # against these two's 0.57-0.58x (four alternating runs).
                    if single:  # the pulled arm's entry alone; its count is added after the loop
                        k = order_b[iu]
                        ku = unsigned(k)
                        r = block[unsigned(s - t0), ku]
                        if s == override_t and k == override_k:
                            r = override_v
                        elif not valid(r):
                            add_pass_counts(n_b, order_b, length, first, s - t)
                            ctr[b, k_.AAE_ROUND] = s
                            ctr[b, k_.AAE_POSITION] = i
                            bad[0], bad[1] = s, k
                            return total
                        else:
                            r = to_reward(r, k, law)
                        sum_b[ku] += r
                    else:
                        for j in range(n_revealed[iu]):
                            k = revealed[iu, j]
                            ku = unsigned(k)
                            r = block[unsigned(s - t0), ku]
                            if s == override_t and k == override_k:
                                r = override_v
                            elif not valid(r):
                                ctr[b, k_.AAE_ROUND] = s
                                ctr[b, k_.AAE_POSITION] = i
                                bad[0], bad[1] = s, k
                                return total
                            else:
                                r = to_reward(r, k, law)
                            n_b[ku] += 1.0
                            sum_b[ku] += r
                    # Round s's regret and arm. Written out in every kernel: an inlined helper
                    # returning (total, ci) makes the loop about twice as slow.
                    a = order_b[iu]
                    total += gaps[unsigned(a)]
                    if record:
                        actions_out[unsigned(s)] = a
                    i += 1
                    if i == length:
                        i = 0
                if single:
                    add_pass_counts(n_b, order_b, length, first, stretch - t)
                t = stretch
                if t == next_ck:
                    regret_out[ci] = total
                    ci += 1
                    next_ck = checkpoint_at(checkpoints, ci)
            t = upto
            if t < check_at or length == 1:
                break
            more = aae_passes_kept(order_b, length, n_b, sum_b, params, k_arms, per_pass)
            if more < 0:
                end_pass = True
                break
            check_at = t + (more + 1) * length
        ctr[b, k_.AAE_ROUND] = t
        ctr[b, k_.AAE_POSITION] = i
        if end_pass:
            k_.aae_end_pass(state, params, b)
    return total


@njit
def alpha_run(  # pragma: no cover
    state,
    params,
    b,
    observes,
    block,
    t0,
    stop,
    law,
    override,
    gaps,
    checkpoints,
    regret_out,
    actions_out,
    total,
    bitgens,
    bad,
):
    """AlphaSample over a block: each round a uniformly random unseen active arm (one draw), as ``alpha_act``."""
    active, unseen = state[k_.ACTIVE], state[k_.ALPHA_UNSEEN]
    n_obs, mean, ctr = state[k_.ALPHA_COUNTS], state[k_.ALPHA_MEANS], state[k_.ALPHA_COUNTERS]
    active_b, unseen_b, n_b, mean_b = active[b], unseen[b], n_obs[b], mean[b]
    override_t, override_k, override_v = override
    k_arms = active.shape[1]
    record = actions_out.shape[0] >= stop
    t = ctr[b, k_.ALPHA_ROUND]
    end = min(stop, t0 + block.shape[0])
    ci = first_checkpoint_after(checkpoints, t)
    next_ck = checkpoint_at(checkpoints, ci)
    left = np.int64(0)  # not the literal 0 (see uniform_maximal_independent_set)
    for k in range(k_arms):
        left += unseen_b[k]
    while t < end:
        pick = k_.integer_below(bitgens[b], left)
        a = -1
        for k in range(k_arms):
            if unseen_b[k]:
                if pick == 0:
                    a = k
                    break
                pick -= 1
        for k in range(k_arms):
            if observes[a, k] and active_b[k]:
                r = block[t - t0, k]
                if t == override_t and k == override_k:
                    r = override_v
                elif not valid(r):
                    ctr[b, k_.ALPHA_ROUND] = t
                    bad[0], bad[1] = t, k
                    return total
                else:
                    r = to_reward(r, k, law)
                if unseen_b[k]:
                    unseen_b[k] = False
                    left -= 1
                n_b[k] += 1.0
                mean_b[k] += (r - mean_b[k]) / n_b[k]
        # Round t's regret, arm and a checkpoint due after it. Written out in every kernel:
        # an inlined helper returning (total, ci) makes the loop about twice as slow.
        total += gaps[a]
        if record:
            actions_out[t] = a
        if t + 1 == next_ck:
            regret_out[ci] = total
            ci += 1
            next_ck = checkpoint_at(checkpoints, ci)
        t += 1
        if left == 0:
            ctr[b, k_.ALPHA_ROUND] = t
            k_.alpha_end_sweep(state, params, b)
            for k in range(k_arms):
                left += unseen_b[k]
    ctr[b, k_.ALPHA_ROUND] = t
    return total
