"""Per-copy sampling streams inside compiled kernels: exact normal, gamma and Beta draws, fast.

Thompson samplers draw K posterior samples per copy and round, so the sampler is their whole
cost. The kernels here give each copy its own stream (copy i of a batch seeded s draws exactly as
a single agent seeded s + i, docs/design.md, "Agents", Seeds) and draw:

* **words** from numpy's :class:`numpy.random.SFC64` bit generator (Chris Doty-Humphrey's Small
  Fast Chaotic generator, 256 bits of state, period at least 2⁶⁴), written out for numba: a
  stream's state is one column ``(a, b, c, counter)`` of a ``(4, B)`` uint64 array (copies
  along the last axis, so that a pass over the copies reads each word contiguously), exactly
  ``SFC64(...).state["state"]["state"]``, and :func:`next_word` is ``SFC64.random_raw()``. The
  stream of seed s is :func:`sampling_bit_generator` ``(s)``: ``SFC64(SeedSequence(s,
  spawn_key=(SAMPLING_SPAWN_KEY,)))``, independent of ``default_rng(s)`` and of the privacy noise
  streams of the same seed (another spawn key). These draws are exploration, not privacy noise.
* **normals** by the ziggurat method (Marsaglia & Tsang, "The ziggurat method for generating
  random variables", J. Stat. Software 5(8), 2000) with 1024 layers from the low 34 bits of one
  word: 10 bits choose the layer, 1 bit the sign, 23 bits the abscissa (the resolution of a
  float32 ziggurat); 99.57% of draws end there (256 layers would leave 1.49% to the slow
  path, 1024 leave 0.43%), the others use the layer's wedge test or Marsaglia's exponential
  tail method beyond r = 4.0388..., with further words.
* **gammas** by Marsaglia & Tsang ("A simple method for generating gamma variables", ACM TOMS
  26(3), 2000), shape >= 1: d = shape − 1/3, c = 1/√(9d) (:func:`gamma_constants`, computed
  once per shape by the callers and passed in); each trial takes one word, whose low 34 bits
  give x ~ N(0, 1) and whose top 30 bits the uniform U; v = (1 + cx)³ and d·v is accepted if
  U < 1 − 0.0331x⁴ or ln U < x²/2 + d(1 − v + ln v).
* **gammas for all copies at once**: :func:`gamma_pass` makes every copy's first trial in one
  branch-free loop over the copies (which the compiler turns into vector instructions) and
  keeps each trial's word; the few trials (0.4% to 6%) whose outcome needs more (a ziggurat
  wedge or tail, or the logarithmic acceptance test) are completed later by
  :func:`gamma_finish` on the kept word. So that the pass never waits for them, a *round* of
  draws (:meth:`SamplerReference.gammas`) takes the first word of each of its draws in order,
  and only then the further words of the draws that need them, in the same order.
* **Betas** as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), X's first word before Y's.

Every kernel has a plain-Python twin in :class:`SamplerReference`, which draws the same words
from numpy's own SFC64 and does the same floating-point operations in the same order, so the
twins agree draw for draw (``tests/test_sampling.py``, which also tests each law with
Kolmogorov–Smirnov tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from numba.core import cgutils
from numba.extending import intrinsic

from bandit_envs._jit import njit
from bandit_envs.validation import check_int

__all__ = [
    "SAMPLING_SPAWN_KEY",
    "STATE_WORDS",
    "SamplerReference",
    "copy_seeds",
    "gamma",
    "gamma_constants",
    "gamma_finish",
    "gamma_pass",
    "gamma_trial",
    "gamma_trial_on",
    "load",
    "new_streams",
    "next_word",
    "normal",
    "sampling_bit_generator",
    "shape_constants",
    "step_copy",
    "store",
    "table_entry",
    "uniform",
    "uniform_pass",
    "ziggurat_entries",
]

SAMPLING_SPAWN_KEY = 0x5453_0000
"""Spawn key of the sampling streams (another than the privacy noise streams' key)."""

#: Words of one stream's state (SFC64's a, b, c and counter).
STATE_WORDS = 4

# ------------------------------------------------------------------------ ziggurat tables
#: Layers of the ziggurat, its base layer's right edge r and the area v of every layer: r solves
#: "the recursion of :func:`_ziggurat_edges` closes at the top, v/x_1023 + f(x_1023) = 1" with
#: v = r·f(r) + ∫_r^∞ f (computed to 40 digits, then rounded; ``tests/test_sampling.py`` checks both).
LAYERS = 1024
TAIL_START = 4.038849846109504
LAYER_AREA = 0.001226324646353088
#: Bits of a word that choose the layer (the next bit is the sign, the 23 after it the abscissa).
LAYER_BITS = 10


def _ziggurat_edges() -> npt.NDArray[np.float64]:
    """Right edges x_0 > x_1 = r > ... > x_1023 > x_1024 = 0 of the layers (Marsaglia & Tsang, §2).

    Layer i >= 1 is the rectangle [0, x_i] × [f(x_i), f(x_{i+1})] under f(x) = exp(−x²/2), of
    area v: f(x_{i+1}) = v/x_i + f(x_i). The base layer 0 is [0, x_0] × [0, f(r)] with
    x_0 = v/f(r), whose part beyond r stands for the tail.
    """
    edges = np.empty(LAYERS + 1)
    edges[0] = LAYER_AREA / math.exp(-0.5 * TAIL_START * TAIL_START)
    edges[1] = TAIL_START
    for i in range(1, LAYERS - 1):
        edges[i + 1] = math.sqrt(-2.0 * math.log(LAYER_AREA / edges[i] + math.exp(-0.5 * edges[i] * edges[i])))
    edges[LAYERS] = 0.0
    return edges


_EDGES = _ziggurat_edges()
_SCALE = 2.0**23
#: Abscissa per unit of the 23-bit integer, by the 11 low bits (layer, then sign): +w_i, then −w_i.
SIGNED_WIDTHS = np.concatenate([_EDGES[:LAYERS] / _SCALE, -_EDGES[:LAYERS] / _SCALE])
#: The 23-bit integers below which a layer's point lies under the curve for sure (x < x_{i+1}).
INNER = np.array([int(_EDGES[i + 1] / _EDGES[i] * _SCALE) for i in range(LAYERS)], dtype=np.int64)
#: f(x_i) = exp(−x_i²/2) at every edge (the wedge test's bounds).
HEIGHTS = np.exp(-0.5 * _EDGES * _EDGES)

_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U11 = np.uint64(11)
_U24 = np.uint64(24)
_U40 = np.uint64(40)
_LAYER = np.uint64(LAYERS - 1)  # the layer's bits
_SIGNED_LAYER = np.uint64(2 * LAYERS - 1)  # the layer's and the sign's
_ABSCISSA_SHIFT = np.uint64(LAYER_BITS + 1)
_LOW23 = np.uint64(0x7FFFFF)
_UNIFORM_SHIFT = np.uint64(LAYER_BITS + 24)  # U from the 30 bits above the normal's 34
_TWO_M53 = 1.0 / 9007199254740992.0
_TWO_M30 = 1.0 / 1073741824.0
#: :data:`INNER` as int32, so that the copies' pass compares 32-bit integers.
_INNER32 = INNER.astype(np.int32)


def sampling_bit_generator(seed: int) -> np.random.SFC64:
    """The SFC64 bit generator of copy seed ``seed`` (what row ``b`` of :func:`new_streams` holds)."""
    entropy = check_int("seed", seed, minimum=0)
    return np.random.SFC64(np.random.SeedSequence(entropy, spawn_key=(SAMPLING_SPAWN_KEY,)))


def copy_seeds(seed: int | None, copies: int) -> list[int]:
    """Seeds s, s + 1, ..., s + copies − 1 of the copies; s from the operating system if ``seed`` is None."""
    if seed is None:
        first = np.random.SeedSequence().entropy
        assert isinstance(first, int)  # what numpy draws from the operating system
    else:
        first = check_int("seed", seed, minimum=0)  # a numpy integer as an int, so s + i cannot wrap
    return [first + i for i in range(copies)]


def new_streams(seeds: Sequence[int]) -> npt.NDArray[np.uint64]:
    """The (4, B) sampling-stream states of the copies with these seeds (column b: copy b)."""
    out = np.zeros((STATE_WORDS, len(seeds)), dtype=np.uint64)
    for b, seed in enumerate(seeds):
        out[:, b] = sampling_bit_generator(seed).state["state"]["state"]
    return out


def gamma_constants(shape: float) -> tuple[float, float]:
    """(d, c) = (shape − 1/3, 1/√(9d)) of Marsaglia & Tsang's method for ``shape >= 1``."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


# ------------------------------------------------------------------------------ kernels
# A stream travels through the kernels as a tuple of its four words, so that a copy's state
# stays in registers while its K draws are made: load it, draw, store it back.


@njit(inline="always")
def load(streams, b):  # pragma: no cover
    """Copy b's stream state as a tuple (a, b, c, counter)."""
    return (streams[0, b], streams[1, b], streams[2, b], streams[3, b])


@njit(inline="always")
def store(streams, b, state):  # pragma: no cover
    """Write copy b's stream state back."""
    streams[0, b], streams[1, b], streams[2, b], streams[3, b] = state


@njit(inline="always")
def next_word(state):  # pragma: no cover
    """(64 random bits, next state): one step of SFC64 (``SFC64.random_raw()``)."""
    a, b, c, counter = state
    word = a + b + counter
    return word, (b ^ (b >> _U11), c + (c << _U3), ((c << _U24) | (c >> _U40)) + word, counter + _U1)


@njit(inline="always")
def uniform(state):  # pragma: no cover
    """(U in [0, 1) with 53 random bits, next state) (``Generator.random()`` on SFC64)."""
    word, state = next_word(state)
    return np.float64(np.int64(word >> _U11)) * _TWO_M53, state


@njit(inline="always")
def normal(word, state):  # pragma: no cover
    """(x ~ N(0, 1) from the low 34 bits of ``word``, next state): the 1024-layer ziggurat.

    Further words are drawn only when the point falls outside its layer's inner rectangle.
    """
    while True:
        layer = np.int64(word & _LAYER)
        m = np.int64((word >> _ABSCISSA_SHIFT) & _LOW23)
        x = np.float64(m) * SIGNED_WIDTHS[np.int64(word & _SIGNED_LAYER)]
        if m < INNER[layer]:
            return x, state
        if layer == 0:  # beyond r: Marsaglia's tail method
            while True:
                u1, state = uniform(state)
                u2, state = uniform(state)
                a = -math.log(1.0 - u1) / TAIL_START
                e = -math.log(1.0 - u2)
                if e + e >= a * a:
                    return (-(TAIL_START + a) if x < 0.0 else TAIL_START + a), state
        u, state = uniform(state)
        if HEIGHTS[layer] + u * (HEIGHTS[layer + 1] - HEIGHTS[layer]) < math.exp(-0.5 * x * x):
            return x, state
        word, state = next_word(state)


@njit(inline="always")
def shape_constants(shape):  # pragma: no cover
    """(d, c) of :func:`gamma_constants`, compiled (the same operations)."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


def _table_entry(typingctx, table, index):  # pragma: no cover
    """``table[index]`` read by one scalar load, which LLVM never turns into a vector gather.

    The load is an unordered atomic one: on an aligned word the same instruction as a plain
    load (no fence, no lock), but LLVM vectorizes no loop that holds one. A loop that reads
    small tables at random indices (the ziggurat's, :func:`ziggurat_entries`) is then compiled
    with scalar loads rather than gather instructions, which run slowly on some processors:
    on a 2-core Intel Xeon with AVX-512 the first trials of Thompson sampling's 1,000 copies took
    about 136 µs a round with gathers and 65 µs with the table lookups in a loop of their own
    (the same values). ``index`` must be in range: nothing checks it.
    """
    signature = table.dtype(table, index)

    def codegen(context, builder, sig, args):
        kind = sig.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, kind, view, [args[1]], wraparound=False)
        return builder.load_atomic(pointer, "unordered", context.get_abi_sizeof(context.get_data_type(kind.dtype)))

    return signature, codegen


#: ``table_entry(table, index)``, compiled code only (see :func:`_table_entry`).
table_entry = cast(Callable[[Any, Any], Any], intrinsic(_table_entry))


@njit(inline="always")
def ziggurat_entries(word):  # pragma: no cover
    """(abscissa per unit, inner bound) of ``word``'s layer: the ``SIGNED_WIDTHS`` and ``INNER`` of :func:`gamma_trial`.

    Read with :func:`table_entry`, so that a loop of these lookups is not compiled to gathers.
    """
    width = table_entry(SIGNED_WIDTHS, np.int64(word & _SIGNED_LAYER))
    return width, table_entry(_INNER32, np.int64(word & _LAYER))


@njit(inline="always")
def gamma_trial(word, d, c):  # pragma: no cover
    """(d·v, accepted) of the gamma trial on ``word`` when it ends on its fast path, branch-free.

    ``accepted`` is True only if :func:`gamma_finish` would accept this trial's d·v too: the
    normal's point lies inside its layer's inner rectangle, v = (1 + y)³ with y = cx and
    1 + y > 0, U > 0, and −w − w²/2 < G − margin with w = 1 − U, where the left side bounds
    ln U = ln(1 − w) from above (every further term of its series is negative) and G is a lower
    bound of the acceptance test's right-hand side x²/2 + d(1 − v + ln v). G replaces
    ln v = 3 ln(1 + y) by the lower bound 3(P₅(y) − y⁶/(6 min(1, 1 + y))), P₅ the series up to
    y⁵/5: for y >= 0, ln(1 + y) − P₆(y) has derivative y⁶/(1 + y) >= 0; for −1 < y < 0 the tail
    Σ_{n>=6} |y|ⁿ/n is at most y⁶/(6(1 + y)). With (1 + y)³ expanded, every term up to y³
    cancels against x²/2, because 9dc² = 1: G = d(−(3/4)y⁴ + (3/5)y⁵ − y⁶/(2 min(1, 1 + y)))
    (about −x⁴/(108d)). Multiplied by m = min(1, 1 + y) > 0 the test is
    (w + w²/2 − margin)·m > d·y⁴·((3/4 − (3/5)y)·m + y²/2), without a logarithm or a division.
    The margin 10⁻¹²(1 + d) exceeds the rounding errors of both sides (of the test here, which
    has no cancellation, of the dropped x²/2·(1 − 9dc²) with c rounded, and of the
    floating-point test in :func:`gamma_finish`), so that test (its squeeze or its logarithmic
    test) accepts whenever this one does. The fast path decides all but about 0.43% of trials
    at large shapes (the ziggurat's slow path), 1.0% at shape 5, 2.4% at shape 2 and 6% at
    shape 1, where Marsaglia & Tsang's method itself rejects about 5%; its squeeze
    U < 1 − 0.0331x⁴ alone leaves about 10% to the logarithms whatever the shape. Otherwise
    ``accepted`` is False and :func:`gamma_finish` gives the exact outcome.
    """
    return gamma_trial_on(word, SIGNED_WIDTHS[np.int64(word & _SIGNED_LAYER)], _INNER32[np.int64(word & _LAYER)], d, c)


@njit(inline="always")
def gamma_trial_on(word, width, inner, d, c):  # pragma: no cover
    """:func:`gamma_trial` with ``word``'s table entries given (:func:`ziggurat_entries`): the same operations."""
    m = np.int32((word >> _ABSCISSA_SHIFT) & _LOW23)
    x = np.float64(m) * width
    y = c * x
    v = 1.0 + y
    u = np.float64(np.int32(word >> _UNIFORM_SHIFT)) * _TWO_M30
    y2 = y * y
    mv = min(v, 1.0)
    w = 1.0 - u
    slack = (w + 0.5 * w * w - 1e-12 * (1.0 + d)) * mv
    bound = d * (y2 * y2) * ((0.75 - 0.6 * y) * mv + 0.5 * y2)
    accepted = (m < inner) & (v > 0.0) & (u > 0.0) & (slack > bound)
    return d * (v * v * v), accepted


@njit
def gamma_finish(word, state, d, c):  # pragma: no cover
    """(Gamma(d + 1/3, 1) draw, next state): Marsaglia & Tsang from a first trial on ``word``.

    Compiled apart and called, not inlined: it runs only for the trials :func:`gamma_trial` leaves
    undecided (a few percent), and inlined at its four call sites in the Thompson kernels it
    made their first use compile about 1.3 s longer each (``docs/kernels.md``, rule 7).
    """
    while True:
        x, state = normal(word, state)
        v = 1.0 + c * x
        if v > 0.0:
            v = v * v * v
            u = np.float64(np.int32(word >> _UNIFORM_SHIFT)) * _TWO_M30
            if u < 1.0 - 0.0331 * (x * x) * (x * x):
                return d * v, state
            if u > 0.0 and math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
                return d * v, state
        word, state = next_word(state)


@njit(inline="always")
def gamma(state, d, c):  # pragma: no cover
    """(Gamma(d + 1/3, 1) draw, next state) for the constants (d, c) of :func:`gamma_constants`."""
    word, state = next_word(state)
    return gamma_finish(word, state, d, c)


@njit(inline="always")
def step_copy(sa, sb, sc, sw, b):  # pragma: no cover
    """Copy b's next word (:func:`next_word`) on the four word rows of the streams, updated in place.

    The passes over all copies use it: their loads and stores of neighbouring copies' words are
    contiguous, so the compiler turns the loop into vector instructions.
    """
    a, bb, cc, counter = sa[b], sb[b], sc[b], sw[b]
    word = a + bb + counter
    sa[b] = bb ^ (bb >> _U11)
    sb[b] = cc + (cc << _U3)
    sc[b] = ((cc << _U24) | (cc >> _U40)) + word
    sw[b] = counter + _U1
    return word


@njit
def uniform_pass(streams, out):  # pragma: no cover
    """``out[b]`` = copy b's next uniform (:func:`uniform` on each stream), in one pass over the copies.

    The streams' words are laid out copy-last, so the SFC64 steps of neighbouring copies run
    side by side (LLVM vectorizes the integer part); the same numbers as :func:`uniform` copy by
    copy. Drawing a round's uniforms before using them keeps this pass free of the users'
    data-dependent branches.
    """
    sa, sb, sc, sw = streams[0], streams[1], streams[2], streams[3]
    for b in range(sa.shape[0]):
        word = step_copy(sa, sb, sc, sw, b)
        out[b] = np.float64(np.int64(word >> _U11)) * _TWO_M53


@njit(error_model="numpy")
def gamma_pass(streams, d, c, out, words):  # pragma: no cover
    """Every copy b's first gamma trial with constants (d[b], c[b]): one word from its stream.

    ``out[b]`` gets the draw where the trial decided it, else NaN (a gamma draw is never NaN),
    and ``words[b]`` the trial's word, from which :func:`gamma_finish` completes a NaN draw
    once the round's first words are drawn (see :meth:`SamplerReference.gammas`).
    """
    sa, sb, sc, sw = streams[0], streams[1], streams[2], streams[3]
    for b in range(sa.shape[0]):
        word = step_copy(sa, sb, sc, sw, b)
        value, accepted = gamma_trial(word, d[b], c[b])
        out[b] = value if accepted else np.nan
        words[b] = word


# ------------------------------------------------------------------------ Python twins


class SamplerReference:
    """The kernels above in plain Python, on numpy's SFC64 of copy seed ``seed`` (one copy).

    Each method draws what its kernel draws, in the same order, with the same floating-point
    operations, so both return the same numbers.
    """

    def __init__(self, seed: int) -> None:
        self.bits = sampling_bit_generator(seed)

    def word(self) -> int:
        """64 random bits (:func:`next_word`)."""
        return int(self.bits.random_raw())

    def uniform(self) -> float:
        """U in [0, 1) (:func:`uniform`)."""
        return float(self.word() >> 11) * _TWO_M53

    def normal(self, word: int | None = None) -> float:
        """N(0, 1) from ``word``'s low 34 bits (a fresh word if None) (:func:`normal`)."""
        if word is None:
            word = self.word()
        while True:
            layer = word & (LAYERS - 1)
            m = (word >> (LAYER_BITS + 1)) & 0x7FFFFF
            x = float(m) * float(SIGNED_WIDTHS[word & (2 * LAYERS - 1)])
            if m < INNER[layer]:
                return x
            if layer == 0:
                while True:
                    a = -math.log(1.0 - self.uniform()) / TAIL_START
                    e = -math.log(1.0 - self.uniform())
                    if e + e >= a * a:
                        return -(TAIL_START + a) if x < 0.0 else TAIL_START + a
            low, high = float(HEIGHTS[layer]), float(HEIGHTS[layer + 1])
            if low + self.uniform() * (high - low) < math.exp(-0.5 * x * x):
                return x
            word = self.word()

    def gamma_from(self, word: int, shape: float) -> float:
        """Gamma(shape, 1), shape >= 1, with its first trial on ``word`` (:func:`gamma_finish`)."""
        d, c = gamma_constants(shape)
        while True:
            x = self.normal(word)
            v = 1.0 + c * x
            if v > 0.0:
                v = v * v * v
                u = float(word >> (LAYER_BITS + 24)) * _TWO_M30
                if u < 1.0 - 0.0331 * (x * x) * (x * x):
                    return d * v
                if u > 0.0 and math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
                    return d * v
            word = self.word()

    def gamma(self, shape: float) -> float:
        """Gamma(shape, 1), shape >= 1, alone (:func:`gamma`)."""
        return self.gamma_from(self.word(), shape)

    def gammas(self, shapes: Sequence[float]) -> list[float]:
        """A round of gammas: every draw's first word, in order, then each draw finished in order.

        This is the order of :func:`gamma_pass` followed by :func:`gamma_finish` of the draws it
        left NaN (:func:`agents.stochastic.thompson_kernels.beta_choose`).
        """
        words = [self.word() for _ in shapes]
        return [self.gamma_from(word, shape) for word, shape in zip(words, shapes, strict=True)]

    def betas(self, pairs: Sequence[tuple[float, float]]) -> list[float]:
        """A round of Betas Beta(a, b), a, b >= 1: X / (X + Y) with :meth:`gammas` of a₀, b₀, a₁, b₁, ..."""
        g = self.gammas([shape for pair in pairs for shape in pair])
        return [x / (x + y) for x, y in zip(g[::2], g[1::2], strict=True)]

    def beta(self, a: float, b: float) -> float:
        """Beta(a, b) alone: a round of one (:meth:`betas`)."""
        return self.betas([(a, b)])[0]
