r"""numpy's ziggurat for standard normals, in pieces any compiled source of random words can drive.

numpy's ``Generator.standard_normal`` (``random_standard_normal`` in
``numpy/random/src/distributions/distributions.c``) is the ziggurat method of Marsaglia, G. &
Tsang, W. W. (2000), *The Ziggurat Method for Generating Random Variables*, J. Stat. Softw.
5(8), with 256 layers. A draw, in numpy's order:

1. one 64-bit word gives the layer (its low 8 bits), then the sign (1 bit) and a 52-bit
   magnitude: ``x = ±magnitude · w[layer]`` (:func:`word_abscissa`);
2. if ``magnitude < k[layer]`` the point lies in the layer's rectangle: ``x`` is the draw
   (99.3% of words; :func:`in_rectangle`);
3. else, in the base layer (0), the tail beyond ``r`` by Marsaglia's method: two doubles per
   try until one is kept (:func:`tail_try`); in another layer, the wedge test with one double
   (:func:`in_wedge`): ``x`` is kept, or a new word is drawn.

The tables ``w``, ``k``, ``f`` and the edge ``r`` are numpy's, as numba ships them for its own
``Generator.standard_normal`` (``numba.np.random._constants``). Where that module is missing
(another numba), :data:`AVAILABLE` is False and the callers draw through numpy instead.

Two sources drive these pieces, each with its own short loop in the three steps above: a numpy
generator's C interface (``agents.common.streams.standard_normal``, the LDP wrapper's per-copy
noise) and the recommendation vector envs' PCG64 stream states
(:func:`bandit_envs.recommendation._pcg64.stream_normal`). Both are tested equal to
``Generator.standard_normal`` draw for draw.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_envs._jit import njit

try:
    from numba.np.random import _constants as _tables

    _ki, _wi, _fi = _tables.ki_double, _tables.wi_double, _tables.fi_double
    _r, _inv_r = _tables.ziggurat_nor_r, _tables.ziggurat_nor_inv_r
    #: Whether numba's copy of numpy's ziggurat tables was found (the compiled normals can be used).
    AVAILABLE = len(_ki) == len(_wi) == len(_fi) == 256
except (ImportError, AttributeError):  # pragma: no cover - another numba: callers draw through numpy
    _ki, _wi, _fi = np.zeros(256, dtype=np.uint64), np.zeros(256), np.zeros(256)
    _r = _inv_r = 1.0
    AVAILABLE = False

#: Each layer's magnitude bound ``k``, abscissa scale ``w`` and density ``f`` (global arrays are
#: constants to numba).
K = np.asarray(_ki, dtype=np.uint64)
W = np.asarray(_wi, dtype=np.float64)
F = np.asarray(_fi, dtype=np.float64)
#: The base layer's right edge ``r`` and ``1/r``.
R = float(_r)
INV_R = float(_inv_r)

_LAYER = np.uint64(0xFF)
_MAGNITUDE = np.uint64(0x000FFFFFFFFFFFFF)
_ONE = np.uint64(1)
_EIGHT = np.uint64(8)


@njit(inline="always")
def word_abscissa(word: Any) -> tuple[float, Any, Any]:  # pragma: no cover - compiled
    """Step 1: ``(x, layer, magnitude)`` of a 64-bit word."""
    layer = np.intp(word & _LAYER)
    rest = word >> _EIGHT
    magnitude = (rest >> _ONE) & _MAGNITUDE
    x = float(magnitude) * W[layer]
    return (-x if rest & _ONE else x), layer, magnitude


@njit(inline="always")
def in_rectangle(layer: int, magnitude: Any) -> bool:  # pragma: no cover - compiled
    """Step 2: whether the word's point lies in its layer's rectangle (then ``x`` is the draw)."""
    return magnitude < K[layer]


@njit(inline="always")
def in_wedge(layer: int, x: float, u: float) -> bool:  # pragma: no cover - compiled
    """Step 3, layer > 0: whether ``x`` lies under the density, from the double ``u``."""
    return (F[layer - 1] - F[layer]) * u + F[layer] < math.exp(-0.5 * x * x)


@njit(inline="always")
def tail_try(magnitude: Any, u1: float, u2: float) -> tuple[float, bool]:  # pragma: no cover - compiled
    """Step 3, base layer: ``(value, kept)`` of one try of the tail beyond ``r`` from two doubles.

    ``1 - u`` rather than ``u`` inside the logarithms, as numpy draws them (no log of 0).
    """
    xx = -INV_R * math.log1p(-u1)
    yy = -math.log1p(-u2)
    value = -(R + xx) if (magnitude >> _EIGHT) & _ONE else R + xx
    return value, yy + yy > xx * xx
