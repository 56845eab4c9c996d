"""Per-copy numpy generators of batched agents (ε-greedy, Exp3 and its graph variants, SB3Agent), and draws from them.

The seeding rule of every batched agent is docs/design.md ("Agents", Seeds): copy i of
``Agent(..., n_envs=N, seed=s)`` plays exactly as ``Agent(..., seed=s + i)`` on the same rewards,
whatever the other copies do, as copy i of a native vector env is the single env seeded
``s + i`` (:func:`bandit_envs.core.copy_seeds`). :class:`CopyStreams` gives copy i the generator
``default_rng(s + i)``; with ``seed=None`` each copy gets fresh entropy. One env
(``n_envs=None``) draws from ``agent.rng`` itself. :func:`copy_laplace`, :func:`copy_uniforms`
and :func:`copy_normals` draw one value per copy from the copies' generators through their C
interface (the LDP wrapper's per-copy noise), with numpy's own algorithms, so each copy draws
exactly what ``Generator.laplace``, ``random`` and ``normal`` would; :func:`laplace_draw` is
``Generator.laplace`` of one generator's C interface (the elimination agents' releases).

The compiled kernels draw with :func:`bandit_envs.core.next_double` from each generator's C
interface, whose address is kept next to the generators (``_bitgens``), the same stream as
``Generator.random``: the plain-Python references of the kernels draw with ``rng.random()`` and
make the same choices. Copies of the agent made by :mod:`copy` or :mod:`pickle` get new
generator objects, so the addresses are computed again for them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from bandit_envs._jit import njit
from bandit_envs._ziggurat import in_rectangle, in_wedge, tail_try, word_abscissa
from bandit_envs.core import bitgen_draw_codegen, generator_addresses, next_double, next_uint64


@njit(inline="always")
def laplace_of_double(u, scale):  # pragma: no cover
    """NumPy's ``random_laplace`` from its uniform U in (0, 1): Laplace(0, ``scale``).

    ``0.0 - scale * log(2 - 2U)`` if U >= 1/2, else ``0.0 + scale * log(2U)``: the same
    floating-point operations as ``numpy/random/src/distributions/distributions.c``, which
    draws U again while U == 0 (the callers' loops do).
    """
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


@njit
def copy_laplace(bitgens, scale, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.laplace(0.0, scale)``, drawn from the generator at ``bitgens[b]``.

    numpy's ``random_laplace``: one uniform U (:func:`bandit_envs.core.next_double`, the stream of
    ``Generator.random``), redrawn while U == 0, then :func:`laplace_of_double`, so copy b draws
    exactly what a single agent with that generator draws (``tests/test_seed_streams.py``).
    """
    for b in range(out.shape[0]):
        while True:
            u = next_double(bitgens[b])
            if u > 0.0:
                out[b] = laplace_of_double(u, scale)
                break


@njit
def laplace_draw(bitgen, scale):  # pragma: no cover
    """``Generator.laplace(0.0, scale)`` of the generator at address ``bitgen``: the same value, from the same draw.

    As :func:`copy_laplace` for one generator (``bitgen`` from
    :func:`bandit_envs.core.generator_addresses`). Written here because numba's
    ``Generator.laplace`` takes a few tenths of a second of CPU time to compile (its layers of
    argument handling), which every first run of GAP or DPSE paid for their releases; and it
    takes an address rather than the Generator because handing numba a Generator costs about
    6 us a call (it reads the generator's C interface through ctypes), more than a step.
    """
    while True:
        u = next_double(bitgen)
        if u > 0.0:
            return laplace_of_double(u, scale)


@njit
def copy_uniforms(bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.random()``, drawn from the generator at ``bitgens[b]``."""
    for b in range(out.shape[0]):
        out[b] = next_double(bitgens[b])


def _next_uint32(typingctx: Any, bitgen: Any) -> Any:  # pragma: no cover - compiled
    """``next_uint32(bitgen)``: the generator's next 32 random bits, as ``next_uint64`` its next 64.

    numpy's PCG64 serves them from halves of its 64-bit draws (the other half kept in its state
    for the next call), so they interleave with ``Generator.integers`` exactly as numpy's do.
    """
    if not isinstance(bitgen, types.Integer):
        return None
    return types.uint32(bitgen), bitgen_draw_codegen("next_uint32", ir.IntType(32))


#: ``next_uint32(address)``, compiled code only.
next_uint32 = cast(Callable[[Any], int], intrinsic(_next_uint32))

_LOW32 = np.uint64(0xFFFFFFFF)


@njit(inline="always")
def lemire_keeps(m, bound):  # pragma: no cover
    """Whether the product ``m`` = (32 random bits) x ``bound`` gives an unbiased integer below ``bound``.

    Lemire's multiply-and-reject (Lemire, "Fast random integer generation in an interval", ACM
    TOMACS 29(1), 2019), as numpy's ``buffered_bounded_lemire_uint32``
    (``numpy/random/src/distributions/distributions.c``) applies it: the low 32 bits of ``m`` must
    be at least (2^32 - bound) mod bound, a modulo computed only when they are below ``bound``.
    The integer is then ``m >> 32``; a rejected product is drawn again.
    """
    leftover = m & _LOW32
    return leftover >= bound or leftover >= (_LOW32 - (bound - np.uint64(1))) % bound


@njit
def integer_below(bitgen, n):  # pragma: no cover
    """``Generator.integers(0, n)`` (1 <= n < 2**32) of the generator at address ``bitgen``, from the same draws.

    NumPy's bounded integers on a range that fits 32 bits (``random_bounded_uint64_fill`` of
    ``numpy/random/src/distributions/distributions.c``): nothing is drawn for n = 1; otherwise
    Lemire's multiply-and-reject (:func:`lemire_keeps`) on the generator's
    32-bit draws (``next_uint32``, which PCG64 serves from halves of its 64-bit draws, as NumPy
    does). Written here because numba's
    ``Generator.integers`` takes several tenths of a second of CPU time to compile (its argument
    checks, array output and 64-bit branch), a large part of a first run.
    """
    if n <= 1:
        return 0
    bound = np.uint64(n)
    while True:
        m = np.uint64(next_uint32(bitgen)) * bound
        if lemire_keeps(m, bound):
            return np.int64(m >> np.uint64(32))


@njit
def copy_integers(bitgens, n, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.integers(n)`` (2 <= n < 2^32), from the generator at ``bitgens[b]``.

    :func:`integer_below` of each copy's generator, so copy b draws exactly what a single agent
    with that generator draws.
    """
    for b in range(out.shape[0]):
        out[b] = integer_below(bitgens[b], n)


@njit
def standard_normal(bitgen):  # pragma: no cover
    """``Generator.standard_normal()`` of the generator at address ``bitgen`` (numpy's ziggurat, exactly).

    numpy's ``random_standard_normal`` (``numpy/random/src/distributions/distributions.c``) with
    its 256-layer tables, in the steps of :mod:`bandit_envs._ziggurat`: one 64-bit word gives
    the layer, the sign and the abscissa; outside the layer's rectangle, the wedge test or the
    tail beyond r draw further doubles.
    """
    while True:
        x, layer, magnitude = word_abscissa(next_uint64(bitgen))
        if in_rectangle(layer, magnitude):
            return x
        if layer == 0:
            while True:
                value, kept = tail_try(magnitude, next_double(bitgen), next_double(bitgen))
                if kept:
                    return value
        elif in_wedge(layer, x, next_double(bitgen)):
            return x


@njit
def copy_normals(bitgens, scale, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.normal(0.0, scale)`` (numpy's ``0.0 + scale * standard_normal``)."""
    for b in range(out.shape[0]):
        out[b] = 0.0 + scale * standard_normal(bitgens[b])


#: Bytes per copy that a generator takes (PCG64 with its seed sequence, about 0.6 KiB), for the
#: agents' state-size check.
GENERATOR_BYTES = 1024


class CopyStreams:
    """Mixin for an :class:`agents.base.Agent`: one generator per copy, reachable from compiled code.

    Call :meth:`_seed_copies` after the base class has set ``rng`` (constructor and ``reset``).
    """

    rng: np.random.Generator
    seed: int | None
    n_envs: int | None
    #: The copies' generators, in copy order.
    _copy_rngs: tuple[np.random.Generator, ...]
    #: ``_bitgens[i]``: the address of ``_copy_rngs[i]``'s C interface, for ``next_double``.
    _bitgens: npt.NDArray[np.uint64]
    #: ``int(_bitgens[0])``, for the one-env kernels (which take the address as a number).
    _bitgen_one: int

    def _seed_copies(self) -> None:
        """(Re)build the copies' generators from ``seed``: copy i gets ``seed + i``; one env uses ``rng``."""
        if self.n_envs is None:
            generators: tuple[np.random.Generator, ...] = (self.rng,)
        elif self.seed is None:
            generators = tuple(np.random.default_rng() for _ in range(self.n_envs))
        else:
            generators = tuple(np.random.default_rng(self.seed + i) for i in range(self.n_envs))
        self._copy_rngs = generators
        self._bitgens = generator_addresses(generators)
        self._bitgen_one = int(self._bitgens[0])

    def reset(self, seed: int | None = None) -> None:
        """Forget everything learned and restart every copy's generator (reseeded if ``seed`` is given)."""
        super().reset(seed)  # type: ignore[misc]  # the agent class after this mixin
        self._seed_copies()

    @property
    def copy_rngs(self) -> tuple[np.random.Generator, ...]:
        """The generator of each copy (``(rng,)`` for one env)."""
        return self._copy_rngs

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_bitgens", None)  # addresses of this process's objects
        state.pop("_bitgen_one", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_copy_rngs" in state:
            if self.n_envs is None:  # one env: the stream is rng's (a copy made its own object of it)
                self._copy_rngs = (self.rng,)
            self._bitgens = generator_addresses(self._copy_rngs)
            self._bitgen_one = int(self._bitgens[0])


#: One env: uniforms that :class:`UniformsAhead` draws from the generator at a time.
UNIFORM_BLOCK = 256


class UniformsAhead:
    """Mixin for a one-env agent whose step hands its compiled call the generator's next uniforms as numbers.

    ``rng``'s uniforms are drawn :data:`UNIFORM_BLOCK` at a time (``rng.random(n)``: the numbers
    ``Generator.random()`` would give one by one, in the same order) into ``_uniforms`` and used
    in order from ``_position``, so an agent that takes them here makes the choices of a copy
    drawing one at a time with :func:`bandit_envs.core.next_double` (the batched kernels), while
    its one-env ``update`` can choose the next arm in the same compiled call as the update: the
    call is given the next unused uniforms, and the agent counts them used only when ``act``
    returns that arm. ``rng`` itself runs up to a block ahead of the uniforms used. Call
    :meth:`_clear_uniforms` wherever ``rng`` is made anew (``_reset_state``).
    """

    rng: np.random.Generator
    #: The uniforms drawn ahead; those from ``_position`` on are not used yet.
    _uniforms: list[float]
    _position: int

    def _clear_uniforms(self) -> None:
        self._uniforms = []
        self._position = 0

    def _draw_uniforms(self) -> tuple[list[float], int]:
        """``_uniforms`` with its unused numbers first and a block more, and the position of the first (0)."""
        self._uniforms = uniforms = self._uniforms[self._position :] + self.rng.random(UNIFORM_BLOCK).tolist()
        self._position = 0
        return uniforms, 0
