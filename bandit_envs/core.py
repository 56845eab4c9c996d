"""Plumbing shared by every environment family, written once: argument checks, seeding, noise blocks, autoreset.

A family (:mod:`bandit_envs.graph`, :mod:`bandit_envs.budget`, :mod:`bandit_envs.recommendation`)
writes its instance construction and its pure transition; its single env derives from
:class:`BanditEnv` and its native vector env from :class:`BanditVectorEnv`, and both call the
same transition. What lives here:

* checks of actions, reset options and ``render_mode``, each failing with one sentence naming the
  argument, the value given and what is allowed (:func:`check_action`, :func:`check_actions`,
  :func:`check_options`, :func:`check_render_mode`);
* the render modes (``"ansi"``, ``"rgb_array"``, ``"human"``): an env built with one holds a
  :class:`~bandit_envs.rendering.Renderer` fed from what its steps return (family hook
  :meth:`BanditEnv._scene`); without one it holds nothing and its step pays one ``is None`` test;
* per-copy seeding: ``reset(seed=s)`` seeds copy i of a vector env with ``s + i`` (or ``seed[i]``
  for a list; a seed is None or an integer >= 0, numpy integers included, never a bool:
  :func:`check_seed`), through the same :func:`gymnasium.utils.seeding.np_random` as ``gym.Env.reset``,
  so copy i reproduces the single env reset with that seed (:func:`copy_generators`);
* compiled draws: :func:`next_double` draws, inside numba code, the next double of a numpy
  generator given the address of its C interface (:func:`generator_addresses`), the very
  function ``Generator.random`` calls; a vector env keeps these addresses with its copies'
  generators, so one compiled pass draws for all copies, each from its own stream;
* noise blocks: the rows of uniforms (or other draws) a step consumes are drawn a block at a time
  from each copy's generator; results are a function of the stream only, never of the block size
  (:class:`NoiseBlock` for a single env, :class:`NoiseBlocks` for a batch of copies, whose blocks
  shrink as copies are added so that all of them together stay within
  :data:`NOISE_BUFFER_BYTES`);
* the memory of a vector env's copies: :func:`check_num_envs` refuses a ``num_envs`` whose copies
  would not fit in :func:`~bandit_envs.validation.memory_limit`, before anything is allocated;
* Gymnasium's NEXT_STEP autoreset: the step after a copy's truncation restarts that copy instead of
  playing (:meth:`BanditVectorEnv.step`).
"""

from __future__ import annotations

import ctypes
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from bandit_envs._jit import kernel_array, njit
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.rendering import (
    RENDER_FPS,
    RENDER_MODES,
    Renderer,
    Scene,
    render_mode_error,
    rendered_copies_error,
)
from bandit_envs.validation import check_int, check_memory, format_bytes, masked_array, not_numbers, summarize

ObsType = TypeVar("ObsType")


# ---------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------


def check_render_mode(env_id: str, render_mode: Any, num_envs: Any = None) -> None:
    """Refuse a ``render_mode`` other than None and :data:`~bandit_envs.rendering.RENDER_MODES`, in one sentence.

    A vector env passes its ``num_envs`` (checked here only if it is an int, before anything is
    built): more than :data:`~bandit_envs.rendering.MAX_RENDERED_COPIES` copies may not render.
    """
    error = render_mode_error(env_id, render_mode)
    if error is None and isinstance(num_envs, int | np.integer) and not isinstance(num_envs, bool):
        error = rendered_copies_error(env_id, render_mode, int(num_envs))
    if error is not None:
        raise error


def check_options(env_id: str, options: Any, allowed: Sequence[str] = ()) -> dict[str, Any]:
    """Return the ``reset`` options (``{}`` for None): a dict (or another mapping) whose keys are in ``allowed``.

    Raises
    ------
    TypeError
        One sentence for options that are not a mapping (a list or a string of key names, say).
    ValueError
        One sentence for keys outside ``allowed``.
    """
    if options is None:
        return {}
    takes = f"{env_id} takes no reset options" if not allowed else f"{env_id} takes {', '.join(map(repr, allowed))}"
    if not isinstance(options, Mapping):
        raise TypeError(
            f"options must be None or a dict ({takes}), got {summarize(options)} ({type(options).__name__})."
        )
    unknown = sorted(set(options) - set(allowed), key=str)
    if unknown:
        if not allowed:
            raise ValueError(f"options must be None or empty ({takes}), got keys {summarize(unknown)}.")
        raise ValueError(
            f"options of {env_id} may only contain {', '.join(repr(k) for k in allowed)}, "
            f"got unknown keys {summarize(unknown)}."
        )
    return dict(options)


def check_action(action: Any, n_actions: int) -> int:
    """Return ``action`` as an ``int`` if it is an integer (int, numpy integer) in [0, n_actions).

    Parameters
    ----------
    action : Any
        The action given to ``step``: an int, a numpy integer or a 0-d integer array.
    n_actions : int
        Size of the ``Discrete`` action space.

    Returns
    -------
    int
        The action.

    Raises
    ------
    ValueError
        One sentence naming ``action``, the value and its type, and the allowed range. Floats
        (even integral ones such as ``1.0``), booleans, time spans (``numpy.timedelta64``, which
        numpy counts as an integer), strings, None, masked arrays and arrays of more than one
        element are refused.
    """
    if type(action) is int:  # the common case first: one type check, one comparison
        if 0 <= action < n_actions:
            return action
    elif isinstance(action, np.integer):
        if 0 <= action < n_actions and not isinstance(action, np.timedelta64):
            return int(action)
    elif isinstance(action, int) and not isinstance(action, bool):
        if 0 <= action < n_actions:
            return int(action)
    elif (
        isinstance(action, np.ndarray)
        and action.shape == ()
        and action.dtype.kind in "iu"  # not np.issubdtype(..., np.integer): True for timedelta64
        and not isinstance(action, np.ma.MaskedArray)
    ):
        if 0 <= action < n_actions:
            return int(action)
    masked = isinstance(action, np.ma.MaskedArray)
    got = masked_array(action) if masked else f"{summarize(action)} ({type(action).__name__})"
    raise ValueError(f"action must be an integer (int or numpy integer) in [0, {n_actions - 1}], got {got}.")


class EpisodeNotRunning(ResetNeeded, RuntimeError):
    """A single env's step outside an episode (none started, or it ended at the horizon).

    Gymnasium's :class:`~gymnasium.error.ResetNeeded`, as the vector envs raise for a step before
    ``reset`` (and ``gym.make``'s order-enforcing wrapper does), and a ``RuntimeError``, as before.
    """


@njit
def first_outside(actions: IntArray, n_actions: int) -> int:  # pragma: no cover
    """Index of the first entry of ``actions`` outside [0, ``n_actions``), or -1: one compiled pass.

    :func:`check_actions`' test of the usual batch (int64, C-contiguous), where numpy's comparisons
    and ``any`` take several microseconds a step on small batches.
    """
    for i in range(actions.shape[0]):
        if actions[i] < 0 or actions[i] >= n_actions:
            return i
    return -1


_INT64 = np.dtype(np.int64)


def check_actions(actions: Any, num_envs: int, n_actions: int) -> IntArray:
    """Return ``actions`` as an integer array of shape (num_envs,) with values in [0, n_actions).

    Parameters
    ----------
    actions : Any
        One action per copy of a vector env (array-like).
    num_envs : int
        Number of copies.
    n_actions : int
        Size of each copy's ``Discrete`` action space.

    Returns
    -------
    ndarray of int64
        ``actions`` as a C-contiguous, writable int64 array in the machine's byte order, the one
        form the compiled steps are compiled for (:func:`bandit_envs._jit.kernel_array`): not
        copied when it is one already; any other integer array (``int32``, ``uint8``, a strided
        view, a read-only array, the other byte order such as ``'>i8'``) is converted, rather than
        compiling the env's step again for it.

    Raises
    ------
    ValueError
        One sentence naming ``actions``, what was given (dtype and shape, or the first value out
        of range and its index) and what is allowed. Floats (even integral ones), booleans (also
        inside a list: ``[True, 0]``), time spans (``timedelta64``), strings and masked arrays
        (whose masked entries would be played) are refused, as by :func:`check_action`.
    """
    allowed = f"an integer array of shape ({num_envs},) with values in [0, {n_actions - 1}]"
    if (
        type(actions) is np.ndarray
        and actions.shape == (num_envs,)
        and (actions.dtype is _INT64 or actions.dtype == _INT64)
        and actions.flags.carray
    ):  # the usual batch, which kernel_array below returns as it is
        i = first_outside(actions, n_actions)
        if i < 0:
            return actions
        raise ValueError(f"actions must be {allowed}, got actions[{i}] = {actions[i]}.")
    if type(actions) is np.ndarray:
        a = actions
    else:
        odd = not_numbers(actions)  # a masked array, a list holding a bool: numpy would misread them
        if odd is not None:
            raise ValueError(f"actions must be {allowed}, got {odd}.")
        try:
            a = np.asarray(actions)
        except (TypeError, ValueError):  # e.g. ragged nested lists
            a = np.asarray(None)
    if a.shape != (num_envs,) or a.dtype.kind not in "iu":  # np.issubdtype(m8, np.integer) is True
        given = f"a {a.dtype} array of shape {a.shape}" if isinstance(actions, np.ndarray) else summarize(actions)
        raise ValueError(f"actions must be {allowed}, got {given}.")
    bad = (a < 0) | (a >= n_actions)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"actions must be {allowed}, got actions[{i}] = {a[i]}.")
    return kernel_array(a, np.int64)  # also a big-endian '>i8': compiled code takes native integers only


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """Return a ``reset`` seed as an ``int`` (None stays None), refusing anything but an integer >= 0.

    Parameters
    ----------
    seed : Any
        What the user gave: None, an int or a numpy integer (which seeds as the int of the same
        value, in a single env as in a vector env).
    name : str
        The argument, for the message (``"seed[1]"`` for an entry of a vector env's list).

    Raises
    ------
    TypeError
        One sentence for a bool (not a seed, though Python counts it as an int), a float (even an
        integral one), a string or anything else that is not an integer.
    ValueError
        One sentence for a negative integer.
    """
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be None or an integer >= 0 (int or numpy integer), "
            f"got {summarize(seed)} ({type(seed).__name__})."
        )
    if seed < 0:
        raise ValueError(f"{name} must be None or an integer >= 0, got {summarize(seed)}.")
    return int(seed)


def copy_seeds(seed: Any, num_envs: int) -> list[int | None] | None:
    """The seed of each copy for ``reset(seed=seed)`` of a vector env.

    Parameters
    ----------
    seed : None, int or sequence
        None keeps every copy's generator running (as ``gym.Env.reset``); an integer ``s`` >= 0
        (an int or a numpy integer) seeds copy i with ``s + i``, so copy i reproduces the single
        env reset with that seed; a sequence (a list, a tuple or a 1-D array) gives one seed (an
        integer >= 0, or None) per copy; a copy whose seed is None keeps its generator running, as
        the single env reset with ``seed=None`` does (and as Gymnasium's ``SyncVectorEnv``).
    num_envs : int
        Number of copies.

    Returns
    -------
    list or None
        One seed per copy, or None.

    Raises
    ------
    TypeError
        One sentence for a seed that is neither None, an integer nor a sequence (a float, a
        string, a bool), or an entry of a sequence that is neither None nor an integer.
    ValueError
        One sentence for a negative seed, or a sequence without one entry per copy.
    """
    if seed is None:
        return None  # as in gym.Env.reset: no seed keeps each copy's generator running
    allowed = f"None, an integer >= 0 or a list of num_envs={num_envs} seeds"
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        check_seed(seed)
        return [int(seed) + i for i in range(num_envs)]
    if isinstance(seed, str | bytes) or not (
        isinstance(seed, Sequence) or (isinstance(seed, np.ndarray) and seed.ndim == 1)
    ):
        raise TypeError(f"seed must be {allowed}, got {summarize(seed)} ({type(seed).__name__}).")
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"seed must be {allowed}, got a list of {len(seeds)} seeds.")
    return [check_seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]


def copy_generators(
    seed: Any, num_envs: int, kept: Sequence[np.random.Generator] | None = None
) -> list[np.random.Generator] | None:
    """Generators of the copies for ``reset(seed=seed)`` (see :func:`copy_seeds`), or None to keep them all.

    A copy whose seed (in a sequence) is None keeps its generator ``kept[i]``, or gets fresh
    entropy without ``kept``.
    """
    seeds = copy_seeds(seed, num_envs)
    if seeds is None:
        return None
    return [
        kept[i] if s is None and kept is not None else gym.utils.seeding.np_random(s)[0] for i, s in enumerate(seeds)
    ]


# ---------------------------------------------------------------------------------------------
# The copies' generators in compiled code
# ---------------------------------------------------------------------------------------------

#: ``PyCapsule_GetPointer`` of the C API, with its own prototype (``ctypes.pythonapi``'s is shared).
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def generator_addresses(rngs: Sequence[np.random.Generator]) -> npt.NDArray[np.uint64]:
    """The address of each generator's C interface, for :func:`next_double` in compiled code.

    Every numpy bit generator publishes a ``bitgen_t`` struct (its state and its ``next_uint64``,
    ``next_uint32``, ``next_double`` and ``next_raw`` functions) in a capsule, its ``capsule``
    attribute (NumPy reference, "Random sampling: BitGenerator", and ``numpy/random/bitgen.h``).
    An address is valid as long as its generator lives: keep the generators with the addresses,
    as :class:`BanditVectorEnv` does.

    Parameters
    ----------
    rngs : sequence of numpy.random.Generator
        The generators, e.g. one per copy of a vector env.

    Returns
    -------
    ndarray of uint64
        ``addresses[i]`` is the ``bitgen_t`` of ``rngs[i].bit_generator``.
    """
    return np.array(
        [_capsule_pointer(rng.bit_generator.capsule, b"BitGenerator") for rng in rngs], dtype=np.uint64
    ).reshape(len(rngs))


#: The members of numpy's ``bitgen_t`` struct, in order (``numpy/random/bitgen.h``): the state, then
#: the functions that draw from it.
BITGEN_MEMBERS: tuple[str, ...] = ("state", "next_uint64", "next_uint32", "next_double", "next_raw")


def bitgen_draw_codegen(member: str, result: ir.Type) -> Callable[[Any, Any, Any, Any], Any]:
    """The codegen of an intrinsic ``draw(bitgen)`` that calls ``bitgen->member(bitgen->state)``.

    ``bitgen`` is the address of a generator's ``bitgen_t`` (:func:`generator_addresses`);
    ``member`` names one of its draw functions (:data:`BITGEN_MEMBERS`: ``"next_uint64"``,
    ``"next_uint32"``, ``"next_double"`` or ``"next_raw"``) and ``result`` is the LLVM type it
    returns. The call is the one numpy's own samplers make, so the draws are the generator's own
    stream. Shared by :func:`next_double` and ``agents.common.streams.next_uint64``.
    """
    index = BITGEN_MEMBERS.index(member)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        void_p = ir.IntType(8).as_pointer()
        members: list[ir.Type] = [void_p] * len(BITGEN_MEMBERS)
        members[index] = ir.FunctionType(result, [void_p]).as_pointer()
        struct = builder.inttoptr(args[0], ir.LiteralStructType(members).as_pointer())
        zero, field = ir.Constant(ir.IntType(32), 0), ir.IntType(32)
        state = builder.load(builder.gep(struct, [zero, field(0)]))
        draw = builder.load(builder.gep(struct, [zero, field(index)]))
        return builder.call(draw, [state])

    return codegen


def _next_double(typingctx: Any, bitgen: Any) -> Any:  # pragma: no cover - compiled
    """``next_double(bitgen)``: the next double in [0, 1) of the generator whose ``bitgen_t`` is at ``bitgen``.

    Compiled code only (reference: ``rng.random()``). It calls ``bitgen->next_double(bitgen->state)``,
    the very function through which ``Generator.random`` draws each of its doubles
    (``random_standard_uniform_fill`` in ``numpy/random/src/distributions/distributions.c``), so
    a copy's draws here and through its ``Generator`` are one stream, in one order. The
    generator's lock is not taken: a generator must not be drawn from by two threads at once.
    """
    if not isinstance(bitgen, types.Integer):
        return None
    return types.float64(bitgen), bitgen_draw_codegen("next_double", ir.DoubleType())


#: ``next_double(address)``, compiled code only: see :func:`_next_double` (typed here as what it is
#: to its callers, a function of the address).
next_double = cast(Callable[[Any], float], intrinsic(_next_double))


def _next_uint64(typingctx: Any, bitgen: Any) -> Any:  # pragma: no cover - compiled
    """``next_uint64(bitgen)``: the next 64 random bits of the generator whose ``bitgen_t`` is at ``bitgen``.

    Compiled code only, like :func:`_next_double`: it calls ``bitgen->next_uint64(bitgen->state)``,
    the function numpy's own samplers call (``Generator.integers``, ``standard_normal``).
    """
    if not isinstance(bitgen, types.Integer):
        return None
    return types.uint64(bitgen), bitgen_draw_codegen("next_uint64", ir.IntType(64))


#: ``next_uint64(address)``, compiled code only (typed here as what it is to its callers).
next_uint64 = cast(Callable[[Any], int], intrinsic(_next_uint64))


# ---------------------------------------------------------------------------------------------
# Noise blocks
# ---------------------------------------------------------------------------------------------


class NoiseBlock:
    """One env's stream of noise rows, drawn ``block_rows`` (or fewer) at a time from its generator.

    ``draw(k)`` returns the next ``k`` rows of the env's stream (an array, or a list when the step
    wants Python scalars). :meth:`restart` says how many rows the episode will consume, so a refill
    never draws past the episode's end and a reset never discards drawn rows; it returns the
    iterator of the episode's rows (``next(rows)`` is one step's row, drawn lazily by blocks).
    """

    __slots__ = ("block_rows", "draw")

    def __init__(self, draw: Callable[[int], Any], block_rows: int) -> None:
        self.draw = draw
        self.block_rows = block_rows

    def restart(self, rows: int, table: Any = None) -> EpisodeRows:
        """The rows of an episode of ``rows`` rows; with ``table``, its rows replayed instead."""
        if table is not None:
            return EpisodeRows(self.draw, self.block_rows, 0, iter(table))
        return EpisodeRows(self.draw, self.block_rows, rows, iter(()))


class EpisodeRows:
    """The iterator of an episode's noise rows (:meth:`NoiseBlock.restart`), refilled by blocks.

    It holds the iterator over the rows drawn so far and the number of rows still to draw, so an
    env copied by :func:`copy.deepcopy` or :mod:`pickle` at any point of an episode goes on with
    the same rows (a generator function would make the env impossible to copy).
    """

    __slots__ = ("_block", "_block_rows", "_draw", "_left")

    def __init__(self, draw: Callable[[int], Any], block_rows: int, rows: int, block: Iterator[Any]) -> None:
        self._draw = draw
        self._block_rows = block_rows
        self._left = rows
        self._block = block

    def __iter__(self) -> EpisodeRows:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._block)
        except StopIteration:
            if self._left <= 0:
                raise
        k = min(self._block_rows, self._left)
        self._left -= k
        self._block = iter(self._draw(k))
        return next(self._block)


#: Bytes of the rows that a vector env's copies keep drawn ahead, all copies together (per
#: :class:`NoiseBlocks`; an env with two streams gives each half): a copy's block holds at most
#: the family's block length, fewer as copies are added, never less than one row.
NOISE_BUFFER_BYTES = 64 * 2**20
#: Bytes of one copy's random generator (a numpy ``Generator`` and its ``PCG64``), rounded up.
GENERATOR_BYTES = 1536


def block_rows_for(num_envs: int, block_rows: int, row_bytes: int, budget: int | None = None) -> int:
    """Rows per copy of a :class:`NoiseBlocks`: ``block_rows``, fewer if the copies would exceed ``budget``.

    Parameters
    ----------
    num_envs : int
        Number of copies.
    block_rows : int
        The family's block length (rows drawn per refill when memory allows).
    row_bytes : int
        Bytes of one row.
    budget : int, optional
        Bytes all copies' blocks may take together (default :data:`NOISE_BUFFER_BYTES`); at
        least one row per copy is kept.

    Returns
    -------
    int
        Between 1 and ``block_rows``.
    """
    budget = NOISE_BUFFER_BYTES if budget is None else budget
    return max(1, min(block_rows, budget // max(1, num_envs * row_bytes)))


def check_num_envs(
    env_id: str,
    num_envs: Any,
    copy_bytes: float,
    noise: Sequence[tuple[int, int]] = (),
    budget: int | None = None,
) -> int:
    """Return ``num_envs`` if it is an integer >= 1 whose copies fit in the memory limit.

    Parameters
    ----------
    env_id : str
        The env, for the message.
    num_envs : Any
        The number of copies asked for.
    copy_bytes : float
        The family's estimate of a copy's memory besides its noise rows (generator, per-copy
        tables, the arrays of one step).
    noise : sequence of (block_rows, row_bytes)
        The copies' :class:`NoiseBlocks`, one pair each.
    budget : int, optional
        The budget of each of those blocks (default :data:`NOISE_BUFFER_BYTES`).

    Returns
    -------
    int
        ``num_envs``.

    Raises
    ------
    TypeError, ValueError
        If ``num_envs`` is not an integer >= 1, or if the copies would need more than
        :func:`~bandit_envs.validation.memory_limit` (the message states the estimate).
    """
    n = check_int("num_envs", num_envs, minimum=1)
    total = n * copy_bytes + sum(n * block_rows_for(n, rows, row, budget) * row for rows, row in noise)
    what = f"num_envs={summarize(n)} copies of {env_id} (about {format_bytes(total / n)} each)"
    check_memory(what, total, "use fewer copies, or run them in several vector envs one after another")
    return n


class NoiseBlocks:
    """The buffers of ``num_envs`` copies in one array, each refilled from its own generator.

    ``draw(i, k)`` returns the next ``k`` rows of copy i's stream; the rows of one step of every
    copy are read with one fancy index. As :class:`NoiseBlock`, a copy never draws past the rows
    its episode will consume. Each copy buffers ``block_rows`` rows, or fewer when all copies
    together would exceed ``budget`` bytes (:func:`block_rows_for`); the rows are the copy's
    stream either way, so results do not depend on it.
    """

    def __init__(
        self,
        num_envs: int,
        block_rows: int,
        row_shape: tuple[int, ...] = (),
        dtype: Any = np.float64,
        budget: int | None = None,
    ) -> None:
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        block_rows = block_rows_for(num_envs, block_rows, row_bytes, budget)
        self.block_rows = block_rows
        self.block = np.zeros((num_envs, block_rows, *row_shape), dtype=dtype)
        self.pos = np.zeros(num_envs, dtype=np.int64)
        self.len = np.zeros(num_envs, dtype=np.int64)
        self.left = np.zeros(num_envs, dtype=np.int64)
        self._arange = np.arange(num_envs)

    def restart(self, which: Any, rows: int) -> None:
        """Start an episode of ``rows`` rows in the copies ``which`` (a mask or a slice)."""
        self.pos[which] = 0
        self.len[which] = 0
        self.left[which] = rows

    def next(
        self,
        draw: Callable[[int, int], Any],
        active: BoolArray | None = None,
        refill: Callable[[IntArray, IntArray, Any], None] | None = None,
    ) -> Any:
        """The next row of every copy, refilling empty buffers first.

        ``draw(i, k)`` is copy i's next ``k`` rows. ``refill(copies, counts, block)``, if given,
        fills ``block[copies[j], :counts[j]]`` with those rows for every j in one call instead
        (e.g. :func:`fill_doubles`): with many copies the buffers hold few rows each and are
        refilled often, and one Python call per copy would then cost more than the step.
        With ``active``, only those copies consume (and refill); the others' rows are placeholders
        for the caller to mask.
        """
        empty = self.pos >= self.len
        if active is not None:
            empty &= active
        if empty.any():
            copies = np.flatnonzero(empty)
            counts = np.minimum(self.left[copies], self.block_rows)
            if refill is not None:
                refill(copies, counts, self.block)
            else:
                for i, k in zip(copies.tolist(), counts.tolist(), strict=True):
                    self.block[i, :k] = draw(i, k)
            self.left[copies] -= counts
            self.len[copies] = counts
            self.pos[copies] = 0
        if active is None:
            rows = self.block[self._arange, self.pos]
            self.pos += 1
        else:
            rows = self.block[self._arange, np.minimum(self.pos, self.block_rows - 1)]
            self.pos += active
        return rows


# ---------------------------------------------------------------------------------------------
# Base classes
# ---------------------------------------------------------------------------------------------


def _scene_of(env: Any) -> Scene:
    """The env's scene for a render mode; a one-sentence error if its class does not render."""
    scene = env._scene()
    if scene is None:
        raise ValueError(
            f"render_mode={env.render_mode!r} needs {type(env).__name__} to describe its frames (a _scene "
            "method, as the suite's envs have); build it with render_mode=None."
        )
    return scene


class BanditEnv(gym.Env[ObsType, np.int64], Generic[ObsType]):
    """A single env of the suite: episodes of ``horizon`` steps, never terminated, only truncated.

    Subclasses set ``env_id``, the spaces, ``horizon`` and ``n_actions``; their ``reset`` calls
    :meth:`_start_episode` and their ``step`` calls :meth:`_check_step`, plays the family's
    transition, then :meth:`_end_step`.
    """

    env_id: ClassVar[str] = ""
    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}
    horizon: int
    n_actions: int
    #: Steps played in the episode; ``horizon`` (no episode running) until the first reset.
    _t: int
    #: The renderer; None (the class default, nothing tracked) unless a render mode was given.
    _renderer: Renderer | None = None

    def _scene(self) -> Scene | None:
        """Family hook: what the env's frames show besides the common part (:mod:`bandit_envs.rendering.scenes`).

        None (the default) for an env class that does not render: a render mode is then refused.
        """
        return None

    def _init_rendering(self, render_mode: str | None) -> None:
        """Set ``render_mode`` (already checked) and, unless it is None, create the renderer (the env is built)."""
        self.render_mode = render_mode
        # An instance attribute even when None: the step's test then reads the instance's dict.
        self._renderer = None if render_mode is None else Renderer(render_mode, _scene_of(self))

    def render(self) -> Any:
        """The frame of the episode so far: a str (``"ansi"``), an (H, W, 3) uint8 array (``"rgb_array"``).

        In ``"human"`` mode the text frame is printed (at every reset and step too) and None is
        returned; without a render mode Gymnasium's warning is logged and None returned.
        """
        if self._renderer is None:
            gym.logger.warn(
                f"render() of {self.env_id} was called without a render mode; "
                f"build the env with render_mode one of {', '.join(map(repr, RENDER_MODES))}."
            )
            return None
        return self._renderer.render()

    def close(self) -> None:
        """Close the renderer's figure, if any."""
        if self._renderer is not None:
            self._renderer.close()
        super().close()

    def _start_episode(self, seed: Any) -> None:
        """Seed ``np_random`` (if ``seed`` is given; checked by :func:`check_seed`) and start counting steps."""
        gym.Env.reset(self, seed=check_seed(seed))
        self._t = 0
        if self._renderer is not None:
            self._renderer.reset()

    def _check_step(self, action: Any) -> int:
        """Refuse a step outside an episode, or an action outside the action space; return the action."""
        if type(action) is int and 0 <= action < self.n_actions and self._t < self.horizon:
            return action  # the common case, without a further call
        if self._t >= self.horizon:
            raise EpisodeNotRunning(
                f"no episode is running (none started, or it ended after horizon={self.horizon} steps); call reset()."
            )
        return check_action(action, self.n_actions)

    def _end_step(self) -> bool:
        """Count the step; True when it truncates the episode."""
        self._t += 1
        return self._t >= self.horizon


class BanditVectorEnv(VectorEnv[Any, Any, Any], ABC):
    """``num_envs`` copies of a single env stepped together, with Gymnasium's NEXT_STEP autoreset.

    Copy i draws from its own generator ``_rngs[i]`` (a tuple, replaced as a whole), whose C
    interface is at ``_bitgens[i]`` for compiled code (:func:`generator_addresses`,
    :func:`next_double`); :meth:`_seed` reseeds them as :func:`copy_generators` (a copy whose seed
    is None keeps its generator) and ``np_random``/``np_random_seed`` report them per copy, as
    Gymnasium's ``SyncVectorEnv`` does. :meth:`step`
    checks the actions, restarts the copies truncated at the previous step (family hook
    :meth:`_restart`), plays every copy (family hook :meth:`_play`, told which copies restart:
    those play nothing), then counts the steps of the playing copies.
    """

    env_id: ClassVar[str] = ""
    metadata: dict[str, Any] = {
        "render_modes": list(RENDER_MODES),
        "render_fps": RENDER_FPS,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    horizon: int
    n_actions: int
    #: The renderer of the copies; None (nothing tracked) unless a render mode was given.
    _renderer: Renderer | None = None
    _copy_rngs: tuple[np.random.Generator, ...]
    #: ``_bitgens[i]``: the address of ``_rngs[i]``'s C interface (set with ``_rngs``).
    _bitgens: npt.NDArray[np.uint64]

    @property
    def _rngs(self) -> tuple[np.random.Generator, ...]:
        """The copies' generators; setting them also sets ``_bitgens``, so the two always agree."""
        return self._copy_rngs

    @_rngs.setter
    def _rngs(self, rngs: Sequence[np.random.Generator]) -> None:
        generators = tuple(rngs)
        self._bitgens = generator_addresses(generators)
        self._copy_rngs = generators
        self.__dict__.pop("_unseeded_copies", None)

    @property  # type: ignore[misc]  # read-only, as SyncVectorEnv's
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """The copies' generators, copy i's at index i (as Gymnasium's ``SyncVectorEnv``)."""
        return self._rngs

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Each copy's seed (as ``SyncVectorEnv``): ``s + i`` after ``reset(seed=s)``, -1 if never seeded (unknown)."""
        return tuple(self.__dict__.get("_copy_seeds", (-1,) * self.num_envs))

    def __getattr__(self, name: str) -> Any:
        """Make the copies' unseeded generators (fresh OS entropy) when they are first used.

        :meth:`_init_copies` leaves them to this: most vector envs are reset with a seed before
        they draw, and that replaces every copy's generator (a generator costs about 13 us).
        """
        if name in ("_copy_rngs", "_bitgens") and "_unseeded_copies" in self.__dict__:
            self._rngs = [np.random.default_rng() for _ in range(self.__dict__["_unseeded_copies"])]
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        """What ``copy.deepcopy`` and ``pickle`` copy; unseeded generators are made first (copies draw alike)."""
        self._rngs  # noqa: B018 - made now if they were left to the first use
        state = dict(self.__dict__)
        if "_step_entry" in state:  # a family's compiled step (not picklable): made again at the next step
            state["_step_entry"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a copy made by ``copy.deepcopy`` or ``pickle``: its generators are new objects, at new addresses."""
        self.__dict__.update(state)
        if "_copy_rngs" in state:
            self._rngs = state["_copy_rngs"]

    def _init_copies(
        self,
        num_envs: Any,
        single_action_space: spaces.Discrete,
        single_observation_space: Any,
        observation_space: Any = None,
    ) -> None:
        """Set the spaces and the per-copy bookkeeping (``num_envs`` already checked or not).

        ``observation_space``: the batched observation space, if the family builds its own
        (default: Gymnasium's ``batch_space`` of the single one).
        """
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        n = self.num_envs
        self.single_action_space = single_action_space
        self.single_observation_space = single_observation_space
        self.action_space = batch_space(single_action_space, n)
        self.observation_space = (
            batch_space(single_observation_space, n) if observation_space is None else observation_space
        )
        self._unseeded_copies = n  # each copy's generator, fresh OS entropy, is made on first use (__getattr__)
        self._t = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._reset_once = False  # step() before the first reset() is refused, as for a single env
        self._arange = np.arange(n)
        self._all = np.ones(n, dtype=bool)

    def _scene(self) -> Scene | None:
        """Family hook: what the copies' frames show besides the common part (as :meth:`BanditEnv._scene`)."""
        return None

    def _init_rendering(self, render_mode: str | None) -> None:
        """Set ``render_mode`` (already checked) and, unless None, create the renderer of every copy.

        At most :data:`~bandit_envs.rendering.MAX_RENDERED_COPIES` copies may render (one sentence
        otherwise).
        """
        error = rendered_copies_error(self.env_id, render_mode, self.num_envs)
        if error is not None:
            raise error
        self.render_mode = render_mode
        self._renderer = None if render_mode is None else Renderer(render_mode, _scene_of(self), self.num_envs)

    def render(self) -> tuple[Any, ...] | None:
        """The tuple of the copies' frames (each as a single env's ``render()``); None in human mode or without one."""
        if self._renderer is None:
            gym.logger.warn(f"render() of the {self.env_id} vector env was called without a render mode.")
            return None
        return self._renderer.render_copies()

    def close_extras(self, **kwargs: Any) -> None:
        """Close the renderer's figure, if any."""
        if self._renderer is not None:
            self._renderer.close()

    def _keeps_streams(self, seed: Any) -> bool:
        """Whether ``reset(seed=seed)`` keeps some copy's generator running (``seed`` checked, one sentence if wrong).

        True for None and for a list with a None entry: those copies continue their stream, as the
        single env reset with ``seed=None``.
        """
        seeds = copy_seeds(seed, self.num_envs)
        return seeds is None or None in seeds

    def _seed(self, seed: Any) -> None:
        """Reseed the copies for ``reset(seed=seed)``; a copy whose seed is None keeps its generator running."""
        seeds = copy_seeds(seed, self.num_envs)
        if seeds is None:
            return
        known = self.np_random_seed
        self._copy_seeds = tuple(known[i] if s is None else s for i, s in enumerate(seeds))
        generators = copy_generators(seeds, self.num_envs, self._rngs if None in seeds else None)
        assert generators is not None  # seeds is a list
        self._rngs = generators

    def _restart_all(self) -> None:
        """Start an episode in every copy (the bookkeeping part of ``reset``)."""
        self._t[:] = 0
        self._done[:] = False
        self._reset_once = True
        self._restart(self._all)
        if self._renderer is not None:
            self._renderer.reset()

    def _restart(self, which: BoolArray) -> None:
        """Family hook: forget the buffered noise and the episode state of the copies ``which``."""

    @abstractmethod
    def _play(self, actions: IntArray, restarting: BoolArray) -> tuple[Any, FloatArray, dict[str, Any]]:
        """Family hook: one step of every copy, ``(observation, reward, info)``.

        The copies in ``restarting`` start a new episode at this step (NEXT_STEP autoreset): they
        consume their reset's noise, and their reward is 0.
        """

    def step(self, actions: Any) -> tuple[Any, FloatArray, BoolArray, BoolArray, dict[str, Any]]:
        """Step every copy (copies truncated at the previous step are reset instead: NEXT_STEP autoreset)."""
        if not self._reset_once:
            raise ResetNeeded(
                f"step() of the {self.env_id} vector env was called before reset(); call reset() first, as for a "
                "single env."
            )
        a = check_actions(actions, self.num_envs, self.n_actions)
        restarting = self._done
        if np.count_nonzero(restarting):  # faster than any() on small batches
            self._t[restarting] = 0
            self._restart(restarting)
        obs, reward, info = self._play(a, restarting)
        if self._renderer is not None:
            self._renderer.record_batch(a, reward, info, restarting)
        self._t += ~restarting
        truncated = self._t >= self.horizon
        self._done = truncated.copy()
        return obs, reward, np.zeros(self.num_envs, dtype=bool), truncated, info
