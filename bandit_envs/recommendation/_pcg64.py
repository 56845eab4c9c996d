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
from 64-bit words (the high word of the low words' product from 32-bit halves), as numpy does
where the compiler has no 128-bit integers. A double is ``(next >> 11) · 2^-53``.

**Standard normals** are numpy's ziggurat (Marsaglia, G. & Tsang, W. W. (2000), *The Ziggurat
Method for Generating Random Variables*, J. Stat. Softw. 5(8); numpy's
``random_standard_normal`` in ``numpy/random/src/distributions/distributions.c``), with 256
layers: one 64-bit draw gives the layer (8 bits), the sign (1 bit) and a 52-bit magnitude;
99.3% of draws end there, the rest test the wedge (one more double and an ``exp``) or, in the
base layer, draw the tail by Marsaglia's method (two doubles and two ``log1p``). The layers'
tables are numpy's, as numba ships them for its own ``Generator.standard_normal``
(``numba.np.random._constants``). Where that module is missing (another numba),
:data:`AVAILABLE` is False and the envs draw through ``StreamStates.draw``: slower at many
copies, the same values.

The words of a stream (``StreamStates.words[i]``): state high and low words, increment high and
low words, then ``has_uint32`` and ``uinteger`` (numpy's buffered 32-bit half, which neither
``random`` nor ``standard_normal`` reads or changes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_envs._jit import njit

try:  # numpy's ziggurat tables, as numba ships them for its own Generator.standard_normal
    from numba.np.random import _constants as _tables

    _ki, _wi, _fi = _tables.ki_double, _tables.wi_double, _tables.fi_double
    _NOR_R, _NOR_INV_R = _tables.ziggurat_nor_r, _tables.ziggurat_nor_inv_r
    #: Whether the compiled streams can be used (numba's copy of numpy's ziggurat tables was found).
    AVAILABLE = len(_ki) == len(_wi) == len(_fi) == 256
except (ImportError, AttributeError):  # pragma: no cover - another numba: the envs draw through numpy
    _fi = _wi = np.zeros(256)
    _ki = np.zeros(256, dtype=np.uint64)
    _NOR_R = _NOR_INV_R = 0.0
    AVAILABLE = False

#: The layers' tables as arrays of the types the comparisons need (global arrays are constants to numba).
KI = np.asarray(_ki, dtype=np.uint64)
WI = np.asarray(_wi, dtype=np.float64)
FI = np.asarray(_fi, dtype=np.float64)
NOR_R = float(_NOR_R)
NOR_INV_R = float(_NOR_INV_R)

#: numpy's PCG64 multiplier ``M`` (``PCG_DEFAULT_MULTIPLIER_128``), high and low words.
MULTIPLIER_HIGH = np.uint64(2549297995355413924)
MULTIPLIER_LOW = np.uint64(4865540595714422341)

_LOW32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_U63 = np.uint64(63)
_ONE = np.uint64(1)
_MANTISSA = np.uint64(0x000FFFFFFFFFFFFF)
_LAYER = np.uint64(0xFF)
#: 2^-53: a double from the top 53 bits of a 64-bit draw.
_DOUBLE_UNIT = 1.0 / 9007199254740992.0


@njit(inline="always")
def multiply_high(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    """The high 64 bits of the 128-bit product of two uint64 words (from their 32-bit halves)."""
    a_lo, a_hi = a & _LOW32, a >> _U32
    b_lo, b_hi = b & _LOW32, b >> _U32
    low = a_lo * b_lo
    cross_1 = a_lo * b_hi
    cross_2 = a_hi * b_lo
    middle = (low >> _U32) + (cross_1 & _LOW32) + (cross_2 & _LOW32)
    return a_hi * b_hi + (cross_1 >> _U32) + (cross_2 >> _U32) + (middle >> _U32)


@njit(inline="always")
def stream_uint64(words: Any, i: Any) -> Any:  # pragma: no cover - compiled
    """Step stream i's PCG64 state (``words[i, :4]``) and return its next 64-bit output."""
    s_hi, s_lo, inc_hi, inc_lo = words[i, 0], words[i, 1], words[i, 2], words[i, 3]
    low = s_lo * MULTIPLIER_LOW
    high = multiply_high(s_lo, MULTIPLIER_LOW) + s_lo * MULTIPLIER_HIGH + s_hi * MULTIPLIER_LOW
    new_lo = low + inc_lo
    new_hi = high + inc_hi + (_ONE if new_lo < low else np.uint64(0))
    words[i, 0], words[i, 1] = new_hi, new_lo
    x = new_hi ^ new_lo
    rotation = new_hi >> np.uint64(58)
    return (x >> rotation) | (x << ((np.uint64(64) - rotation) & _U63))


@njit(inline="always")
def stream_double(words: Any, i: Any) -> float:  # pragma: no cover - compiled
    """Stream i's next double in [0, 1), as ``Generator.random()`` draws it."""
    return float(stream_uint64(words, i) >> np.uint64(11)) * _DOUBLE_UNIT


@njit
def stream_normal(words: Any, i: Any) -> float:  # pragma: no cover - compiled
    """Stream i's next standard normal, as ``Generator.standard_normal()`` draws it (numpy's ziggurat)."""
    while True:
        r = stream_uint64(words, i)
        layer = np.intp(r & _LAYER)
        r >>= np.uint64(8)
        magnitude = (r >> _ONE) & _MANTISSA
        x = float(magnitude) * WI[layer]
        if r & _ONE:
            x = -x
        if magnitude < KI[layer]:
            return x  # inside the layer's rectangle: 99.3% of draws
        if layer == 0:  # the base layer's tail beyond NOR_R (Marsaglia's method)
            while True:
                xx = -NOR_INV_R * math.log1p(-stream_double(words, i))
                yy = -math.log1p(-stream_double(words, i))
                if yy + yy > xx * xx:
                    return -(NOR_R + xx) if (magnitude >> np.uint64(8)) & _ONE else NOR_R + xx
        elif (FI[layer - 1] - FI[layer]) * stream_double(words, i) + FI[layer] < math.exp(-0.5 * x * x):
            return x  # in the wedge under the density


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
