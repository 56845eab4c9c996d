r"""The recommendation vector envs' episode streams, drawn in compiled code from their PCG64 states.

:class:`~bandit_envs.recommendation._problem.StreamStates` keeps each copy's episode streams
(contexts, reward noise) as PCG64 states in a uint64 array, six words a stream, and draws from a
stream by loading its state into a shared ``Generator``: a Python call and two conversions of
the state per refill. With many copies each copy's buffer holds few values (the copies share a
fixed memory budget) and is refilled often, so that call came to cost more than the step. The
kernels here step the states in the array itself and draw what ``Generator.random`` and
``Generator.standard_normal`` draw, for every refilled copy in one call: the same values, to
the bit on one machine (the readable reference is ``StreamStates.draw`` with numpy's own
generator; ``tests/test_recommendation_envs.py`` compares the two).

**PCG64** (O'Neill, M. E. (2014), *PCG: A Family of Simple Fast Space-Efficient Statistically
Good Algorithms for Random Number Generation*, §6.3, XSL RR 128/64; numpy's ``PCG64``): a 128-bit
linear congruential state ``s ← s·M + inc (mod 2^128)`` with numpy's multiplier ``M``, and the
output ``rotr64(hi(s) xor lo(s), s >> 122)`` of the *new* state. The 128-bit product is computed
from 64-bit words (the high word of the low words' product by one 128-bit multiply,
:func:`bandit_envs._uint128.multiply_high`). A double is ``(next >> 11) · 2^-53``.

**Standard normals** are numpy's ziggurat, step for step (:mod:`bandit_envs._ziggurat`, numpy's
tables as numba ships them). Where those tables are missing (another numba), :data:`AVAILABLE`
is False and the envs draw through ``StreamStates.draw``: slower at many copies, the same values.

**Seeding.** Each episode seeds a copy's two streams from two integers of the copy's own
generator (:func:`~bandit_envs.recommendation._problem.episode_seeds`): numpy's
``default_rng(seed)``, i.e. ``SeedSequence(seed)`` (O'Neill's ``seed_seq_fe``: the seed's 32-bit
words hashed into a pool of four, then eight 32-bit words of state drawn from the pool) and
``PCG64``'s ``pcg64_srandom_r`` (state 0, increment ``2·seq + 1``, one step, add the seed, one
step). :func:`fill_episode_seeds` and :func:`seed_streams` do both for every restarting copy in
one call each (reference: ``episode_seeds`` then ``StreamStates.seed``).

The words of a stream (``StreamStates.words[i]``): state high and low words, increment high and
low words, then ``has_uint32`` and ``uinteger`` (numpy's buffered 32-bit half, which neither
``random`` nor ``standard_normal`` reads or changes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_envs._jit import njit
from bandit_envs._uint128 import multiply_high
from bandit_envs._ziggurat import AVAILABLE, in_rectangle, in_wedge, tail_try, word_abscissa
from bandit_envs.core import next_uint64

__all__ = ["AVAILABLE", "fill_episode_seeds", "fill_normals", "fill_uniforms", "seed_streams"]

#: numpy's PCG64 multiplier ``M`` (``PCG_DEFAULT_MULTIPLIER_128``), high and low words.
MULTIPLIER_HIGH = np.uint64(2549297995355413924)
MULTIPLIER_LOW = np.uint64(4865540595714422341)

_LOW32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_U63 = np.uint64(63)
_ONE = np.uint64(1)
#: 2^-53: a double from the top 53 bits of a 64-bit draw.
_DOUBLE_UNIT = 1.0 / 9007199254740992.0


@njit(inline="always")
def _step(words: Any, i: Any) -> None:  # pragma: no cover - compiled
    """Stream i's state ``s ← s·M + inc (mod 2^128)`` on its words ``words[i, :4]``."""
    s_hi, s_lo, inc_hi, inc_lo = words[i, 0], words[i, 1], words[i, 2], words[i, 3]
    low = s_lo * MULTIPLIER_LOW
    high = multiply_high(s_lo, MULTIPLIER_LOW) + s_lo * MULTIPLIER_HIGH + s_hi * MULTIPLIER_LOW
    new_lo = low + inc_lo
    words[i, 0] = high + inc_hi + (_ONE if new_lo < low else np.uint64(0))
    words[i, 1] = new_lo


@njit(inline="always")
def stream_uint64(words: Any, i: Any) -> Any:  # pragma: no cover - compiled
    """Step stream i's PCG64 state and return its next 64-bit output (XSL RR of the new state)."""
    _step(words, i)
    new_hi, new_lo = words[i, 0], words[i, 1]
    x = new_hi ^ new_lo
    rotation = new_hi >> np.uint64(58)
    return (x >> rotation) | (x << ((np.uint64(64) - rotation) & _U63))


@njit(inline="always")
def stream_double(words: Any, i: Any) -> float:  # pragma: no cover - compiled
    """Stream i's next double in [0, 1), as ``Generator.random()`` draws it."""
    return float(stream_uint64(words, i) >> np.uint64(11)) * _DOUBLE_UNIT


@njit
def stream_normal(words: Any, i: Any) -> float:  # pragma: no cover - compiled
    """Stream i's next standard normal, as ``Generator.standard_normal()`` draws it (:mod:`bandit_envs._ziggurat`)."""
    while True:
        x, layer, magnitude = word_abscissa(stream_uint64(words, i))
        if in_rectangle(layer, magnitude):
            return x
        if layer == 0:
            while True:
                value, kept = tail_try(magnitude, stream_double(words, i), stream_double(words, i))
                if kept:
                    return value
        elif in_wedge(layer, x, stream_double(words, i)):
            return x


@njit
def fill_uniforms(words: Any, copies: Any, counts: Any, out: Any) -> None:  # pragma: no cover - compiled
    """Rows of uniforms of the copies' streams: ``counts[j]`` rows of copy ``copies[j]``, copies in order.

    ``out`` has ``counts.sum()`` rows of ``width`` columns; copy j's rows are those of
    ``Generator.random((counts[j], width))`` on its stream, which then continues after them.
    """
    width = out.shape[1]
    row = 0
    for j in range(copies.shape[0]):
        c = copies[j]
        for _ in range(counts[j]):
            for w in range(width):
                out[row, w] = stream_double(words, c)
            row += 1


@njit
def fill_normals(words: Any, copies: Any, counts: Any, std: float, block: Any) -> None:  # pragma: no cover
    """``block[c, :counts[j]] = std · (the next counts[j] standard normals of stream c)``, ``c = copies[j]``."""
    for j in range(copies.shape[0]):
        c = copies[j]
        for r in range(counts[j]):
            block[c, r] = std * stream_normal(words, c)


@njit
def fill_episode_seeds(bitgens: Any, copies: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out[j] = rngs[copies[j]].integers(0, 2**62, size=out.shape[1])`` from the generators' C interfaces.

    numpy draws a bound of 2^62 by Lemire's method on 64-bit words; with a power of two nothing
    is ever rejected and the integer is the word's top 62 bits (reference: ``episode_seeds``).
    """
    for j in range(copies.shape[0]):
        bitgen = bitgens[copies[j]]
        for m in range(out.shape[1]):
            out[j, m] = next_uint64(bitgen) >> np.uint64(2)


#: numpy's ``SeedSequence`` hashing constants (``numpy/random/bit_generator.pyx``).
_INIT_A, _MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_MULT_L, _MIX_MULT_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
_SHIFT = np.uint64(16)
_POOL = 4


@njit(inline="always")
def _hashmix(value: Any, hash_const: Any) -> tuple[Any, Any]:  # pragma: no cover - compiled
    """``SeedSequence``'s ``hashmix`` on 32-bit values held in uint64: (hashed value, next hash constant)."""
    value = value ^ hash_const
    hash_const = (hash_const * _MULT_A) & _LOW32
    value = (value * hash_const) & _LOW32
    return value ^ (value >> _SHIFT), hash_const


@njit(inline="always")
def _mix(x: Any, y: Any) -> Any:  # pragma: no cover - compiled
    """``SeedSequence``'s ``mix`` of two 32-bit values (the difference taken modulo 2^32)."""
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _LOW32
    return result ^ (result >> _SHIFT)


@njit
def seed_streams(words: Any, rows: Any, seeds: Any) -> None:  # pragma: no cover - compiled
    """Start stream ``rows[j]`` at ``np.random.default_rng(seeds[j])``'s first draw, for every j (seeds < 2^64).

    ``SeedSequence(seed).generate_state(4, np.uint64)`` (the pool from the seed's one or two
    32-bit words, no spawn key), then ``PCG64``'s seeding with state words (v0, v1) and sequence
    words (v2, v3) (reference: ``StreamStates.seed``).
    """
    pool = np.empty(_POOL, dtype=np.uint64)
    entropy = np.empty(2, dtype=np.uint64)
    state32 = np.empty(2 * _POOL, dtype=np.uint64)
    for j in range(rows.shape[0]):
        seed = np.uint64(seeds[j])
        entropy[0], entropy[1] = seed & _LOW32, seed >> _U32
        n_entropy = 2 if entropy[1] != np.uint64(0) else 1
        hash_const = _INIT_A
        for p in range(_POOL):
            pool[p], hash_const = _hashmix(entropy[p] if p < n_entropy else np.uint64(0), hash_const)
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    hashed, hash_const = _hashmix(pool[src], hash_const)
                    pool[dst] = _mix(pool[dst], hashed)
        hash_const = _INIT_B
        for w in range(2 * _POOL):
            value = pool[w % _POOL] ^ hash_const
            hash_const = (hash_const * _MULT_B) & _LOW32
            value = (value * hash_const) & _LOW32
            state32[w] = value ^ (value >> _SHIFT)
        v0, v1 = state32[0] | (state32[1] << _U32), state32[2] | (state32[3] << _U32)
        v2, v3 = state32[4] | (state32[5] << _U32), state32[6] | (state32[7] << _U32)
        # pcg64_srandom_r: state 0, increment 2·(v2, v3) + 1, a step, the seed (v0, v1) added, a step
        i = rows[j]
        words[i, 0], words[i, 1] = np.uint64(0), np.uint64(0)
        words[i, 2], words[i, 3] = (v2 << _ONE) | (v3 >> _U63), (v3 << _ONE) | _ONE
        words[i, 4], words[i, 5] = np.uint64(0), np.uint64(0)
        _step(words, i)
        low = words[i, 1] + v1
        words[i, 0] = words[i, 0] + v0 + (_ONE if low < v1 else np.uint64(0))
        words[i, 1] = low
        _step(words, i)
