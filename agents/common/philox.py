"""Per-copy noise streams inside compiled kernels: numpy's Philox bit generator, written out for numba.

A batched private agent gives each copy its own stream, so that copy i of a batch behaves
exactly as a single agent seeded with copy i's seed (docs/design.md, "Agents", Seeds). numba cannot loop
over a list of :class:`numpy.random.Generator` objects, so the kernels carry the streams as rows
of one ``(B, 11)`` uint64 array: the state of numpy's :class:`numpy.random.Philox` bit
generator (Philox4x64-10 of Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1,
2, 3", SC 2011), laid out as

    columns 0-3   counter (4 words)
    columns 4-5   key (2 words)
    columns 6-9   buffer of the last block's 4 outputs
    column  10    buffer position (4: empty)

which is exactly ``Philox(...).state``'s ``counter``, ``key``, ``buffer`` and ``buffer_pos``.
The kernels below produce the same numbers as numpy does from that state, so the readable
reference of every kernel is numpy itself: row ``b`` is the generator
:func:`bandit_envs.privacy.streams.philox_noise_generator` of copy b's seed, and

* :func:`next_double` is ``Generator.random()`` (53 random bits, ``(x >> 11) * 2**-53``);
* :func:`laplace` is ``Generator.laplace(0.0, scale)`` (numpy's ``random_laplace``: one
  uniform U, redrawn while U == 0, ``0.0 - scale * log(2 - 2U)`` if U >= 1/2 else
  ``0.0 + scale * log(2U)``).

These streams carry privacy noise only; the Thompson samplers' posterior draws come from the
faster sampling streams of :mod:`agents.common.sampling`. ``tests/test_dp_agents.py`` checks each
kernel against numpy draw for draw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bandit_envs._jit import njit
from bandit_envs._uint128 import multiply_high
from bandit_envs.privacy.streams import philox_noise_generator

__all__ = [
    "STATE_WORDS",
    "double_pass",
    "laplace",
    "new_streams",
    "next_double",
]

#: Words of one stream's state (counter 4, key 2, buffer 4, buffer position 1).
STATE_WORDS = 11
_BUFFER = 6
_POSITION = 10

_M0 = np.uint64(0xD2E7470EE14C6C93)  # Philox4x64 multipliers
_M1 = np.uint64(0xCA5A826395121157)
_W0 = np.uint64(0x9E3779B97F4A7C15)  # Weyl key increments
_W1 = np.uint64(0xBB67AE8584CAA73B)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_FOUR = np.uint64(4)
_TWO_M53 = 1.0 / 9007199254740992.0


def new_streams(seeds: Sequence[int]) -> npt.NDArray[np.uint64]:
    """The (B, 11) stream states of the copies with these seeds (each a fresh Philox generator)."""
    out = np.zeros((len(seeds), STATE_WORDS), dtype=np.uint64)
    for b, seed in enumerate(seeds):
        state = philox_noise_generator(seed).bit_generator.state["state"]
        out[b, 4:6] = state["key"]
    out[:, _POSITION] = 4
    return out


@njit(inline="always")
def _mulhilo(a, b):  # pragma: no cover
    """(high, low) 64-bit words of the 128-bit product a·b (Random123's ``mulhilo64``)."""
    return multiply_high(a, b), a * b


@njit(inline="always")
def _refill(state, b):  # pragma: no cover
    """Increment copy b's counter (with carries) and fill its buffer with Philox4x64-10 of it.

    Inlined where it is used: a call per refill keeps the rounds of neighbouring copies from
    overlapping (:func:`double_pass` runs about twice as fast inlined).
    """
    state[b, 0] += _ONE
    if state[b, 0] == _ZERO:
        state[b, 1] += _ONE
        if state[b, 1] == _ZERO:
            state[b, 2] += _ONE
            if state[b, 2] == _ZERO:
                state[b, 3] += _ONE
    c0, c1, c2, c3 = state[b, 0], state[b, 1], state[b, 2], state[b, 3]
    k0, k1 = state[b, 4], state[b, 5]
    for r in range(10):
        if r > 0:
            k0 += _W0
            k1 += _W1
        hi0, lo0 = _mulhilo(_M0, c0)
        hi1, lo1 = _mulhilo(_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    state[b, _BUFFER] = c0
    state[b, _BUFFER + 1] = c1
    state[b, _BUFFER + 2] = c2
    state[b, _BUFFER + 3] = c3
    state[b, _POSITION] = _ZERO


@njit(inline="always")
def next_uint64(state, b):  # pragma: no cover
    """Copy b's next 64 random bits (``Philox.random_raw()``)."""
    if state[b, _POSITION] >= _FOUR:
        _refill(state, b)
    position = state[b, _POSITION]
    state[b, _POSITION] = position + _ONE
    return state[b, _BUFFER + np.int64(position)]


@njit(inline="always")
def next_double(state, b):  # pragma: no cover
    """Copy b's next uniform in [0, 1) (``Generator.random()``)."""
    return np.float64(next_uint64(state, b) >> _S11) * _TWO_M53


@njit
def double_pass(state, out):  # pragma: no cover
    """``out[b]`` = copy b's next uniform (:func:`next_double` of each copy), in one pass over the copies.

    Drawing a round's uniforms in a loop of their own lets the Philox rounds of several copies
    overlap (they are independent), which a loop that also branches on the users' data prevents.
    """
    for b in range(out.shape[0]):
        out[b] = next_double(state, b)


@njit(inline="always")
def laplace(state, b, scale):  # pragma: no cover
    """One Laplace(0, ``scale``) draw of copy b (``Generator.laplace(0.0, scale)``).

    numpy's formula with selects instead of branches (a random branch costs more than the
    logarithm): w = 2 - 2U if U >= 1/2 else 2U (U redrawn while w == 0, i.e. U == 0), then
    ``0.0 - scale * log(w)`` or ``0.0 + scale * log(w)``: the same floating-point operations.
    """
    while True:
        u = next_double(state, b)
        upper = u >= 0.5
        w = (2.0 - u - u) if upper else (u + u)
        if w > 0.0:
            break
    x = scale * math.log(w)
    return (0.0 - x) if upper else (0.0 + x)
