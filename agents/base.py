"""The agent interface (docs/design.md, "Agents"): ``act`` / ``update`` / ``reset``, batch-capable.

An agent built with ``n_envs=None`` plays one env: ``act`` returns an ``int`` and ``update``
takes a scalar reward and the env's step ``info``. Built with ``n_envs=N`` it plays N
independent copies in lock-step on a vector env: ``act`` returns an int array of shape (N,)
and ``update`` takes arrays with a leading batch axis (the vector env's info). All randomness,
including privacy noise, comes from generators built from ``seed``, never from global state.

Seeds (docs/design.md, "Agents", Seeds): copy i of an agent built with ``n_envs=N, seed=s``
makes exactly the draws of the same agent built with ``seed=s + i`` (policy randomness and
privacy noise, each from its own stream), as copy i of a vector env reset with seed s is the
single env reset with s + i.

Episodes: an agent learns within one episode of its env. When a vector env autoresets a copy
(Gymnasium's NEXT_STEP mode: the step after ``truncated`` returns reward 0 and observes
nothing), call ``agent.reset()`` rather than ``update`` for that step.

Input checks. Every agent refuses feedback that does not fit it, with one sentence naming the
argument, what was given and what is allowed (a ``TypeError`` for the wrong kind of value, a
``ValueError`` for a wrong shape or value), and leaves its state unchanged:

* ``action``: one env, an ``int`` or numpy integer scalar (not a float such as 1.0, not a bool,
  not a string, not a ``numpy.timedelta64``); N copies, an integer-dtype array of shape (N,) (an
  object array only if each entry is an int or numpy integer). Every arm in [0, K).
* ``reward``: a real number (array of shape (N,)), finite, and inside the agent's reward range
  where its guarantees need one (Thompson sampling, KL-UCB, Exp3, Exp3-SET, Exp3-IX, the
  elimination agents, the central-DP agents and LDPThompsonSampling: [0, 1]; the
  ``reward_bounds`` of each class) or its sums would overflow without one (LinUCB, which sums y x
  unclipped: [-1e100, 1e100]; UCB, UCB-N, SM-UCB, MOSS and ε-greedy, which sum each arm's
  rewards: [-1e289, 1e289], :data:`SUMMED_REWARD_BOUNDS`).
* ``info``: a dict or None. Its per-arm arrays (``observed_mask``, ``observed_rewards``) must
  have shape (K,) ((N, K) for N copies), the mask boolean, and observed rewards finite (and in
  the reward range) where the mask is True; ``optimal_action`` must be an arm below K.
* ``obs``: an observation with an arm axis (feature matrices of shape (K, d), (N, K, d) for N
  copies) must have K rows.

Arrays of numbers may be given as lists, but a list or tuple holding a bool (numpy would cast
``[True, 0.5]`` to numbers) is refused as a boolean array is, and so is a masked array
(``numpy.ma.MaskedArray``, whose masked entries numpy would read) in place of any array
(:func:`bandit_envs.validation.not_numbers`).

A per-arm array, an optimal action or an observation that shows another number of arms than the
agent's K means the env does not fit the agent; :meth:`Agent.check_env` tests that up front.
Each input has one checking path: a single env's action or reward is checked as a batch of one.
The checks are numpy reductions over the batch (or run inside the agents' compiled kernels),
so they cost little next to the step itself; one env's plain ``int`` action and ``float`` reward
that fit are accepted by a few comparisons (``Agent._scalar_feedback``).

State size: an agent refuses, before allocating anything, an ``n_envs`` or ``n_arms`` whose
learning state would exceed the memory limit (:func:`bandit_envs.validation.memory_limit`).
"""

from __future__ import annotations

import math
import numbers
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from numba import types

from bandit_envs._jit import entry_point, kernel_array, njit
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.validation import (
    check_choice,
    check_float,
    check_int,
    check_memory,
    first_bool,
    masked_array,
    not_numbers,
    summarize,
)

__all__ = [
    "Agent",
    "PrivateAgent",
    "SUMMED_REWARD_BOUNDS",
    "SingleEnvKernel",
    "check_choice",
    "check_float",
    "check_int",
    "check_int_range",
    "check_state_size",
    "describe",
    "state_arguments",
    "entry_point",
    "env_arms",
]


#: info keys holding one entry per arm (with a leading batch axis for N copies).
PER_ARM_INFO_KEYS = ("observed_mask", "observed_rewards")

_MAX_REPR = 60
_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)
_NP_INT64, _NP_FLOAT64 = np.int64, np.float64
_MASKED = np.ma.MaskedArray
_INT64_BOUND = 1 << 63  # Python ints that numpy makes int64 arrays of: [-2**63, 2**63)
#: The largest int64, the bound of the integer parameters that compiled kernels take as int64.
INT64_MAX = _INT64_BOUND - 1
#: Largest reward magnitude of the agents that sum each arm's rewards (UCB, UCB-N, SM-UCB, MOSS,
#: ε-greedy): a sum of up to 2**63 such rewards (the rounds their int64 counts can count) stays
#: below 9.3e307, under the largest float (about 1.8e308); two rewards of 1e308 would make a sum,
#: and so a mean and an index, infinite.
SUMMED_REWARD_LIMIT = 1e289
#: ``reward_bounds`` of those agents, and the reason their error gives.
SUMMED_REWARD_BOUNDS = (-SUMMED_REWARD_LIMIT, SUMMED_REWARD_LIMIT)
SUMMED_REWARD_REASON = "{name} sums each arm's rewards, and the sums must stay finite"


def describe(value: Any, typed: bool = True) -> str:
    """A short description of ``value`` for an error message (never a whole array).

    Arrays are described by shape and dtype (a masked array as such, with why it is refused),
    lists and tuples by length (and their first bool, if any), other values as
    :func:`bandit_envs.validation.summarize` quotes them (a long string by a prefix and its
    length) followed, if ``typed``, by their type.
    """
    if isinstance(value, np.ndarray):
        if isinstance(value, _MASKED):
            return masked_array(value)
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, list | tuple):
        odd = first_bool(value)
        holding = "" if odd is None else f" holding {summarize(odd)} ({type(odd).__name__})"
        return f"a {type(value).__name__} of length {len(value)}{holding}"
    text = " ".join(summarize(value).split())  # one line
    return f"{text} ({type(value).__name__})" if typed else text


def check_int_range(name: str, value: Any, low: int, high: int, reason: str) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) in [``low``, ``high``].

    For the integer parameters that reach compiled code, whose types hold only so much
    (``reason`` says what bounds ``high``, e.g. ``"the compiled kernels count pulls in int64"``).

    Raises
    ------
    TypeError
        If ``value`` is not an integer (as :func:`check_int`).
    ValueError
        One sentence with the allowed range, ``reason`` and the value given.
    """
    v = check_int(name, value)
    if not low <= v <= high:
        got = describe(v, typed=False)
        raise ValueError(f"{name} must be an integer in [{low:,}, {high:,}] ({reason}), got {got}.")
    return v


def as_float(value: Any) -> float:
    """``float(value)`` for a real number, infinite (with its sign) where that overflows (huge ints)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def overflowed(value: Any, converted: float) -> bool:
    """Whether :func:`as_float` made the real number ``value`` infinite though it is finite (a huge int)."""
    return math.isinf(converted) and not isinstance(value, float | np.number | np.ndarray)


def given(value: Any, converted: float) -> Any:
    """What a refusal quotes for the real number ``value`` that :func:`as_float` made ``converted``.

    ``value`` itself where the conversion overflowed (a Python int beyond the floats, which
    ``converted`` would show as ``inf``), else ``converted``.
    """
    return value if overflowed(value, converted) else converted


def quote(value: Any) -> str:
    """A number as a refusal quotes it: a float as ``nan``, ``1e+300``, ..., any other value by :func:`describe`."""
    return repr(float(value)) if isinstance(value, float) else describe(value, typed=False)


def check_state_size(nbytes: float, what: str) -> None:
    """Refuse a learning state of ``nbytes`` bytes above the memory limit, before allocating it.

    The limit is the envs' (:func:`bandit_envs.validation.memory_limit`: half of the physical
    memory, or ``$BANDIT_ENVS_MEMORY_LIMIT``), so an agent and its vector env accept the same sizes.

    Parameters
    ----------
    nbytes
        Size the state would take.
    what
        The arguments that set it, e.g. ``"n_envs=1000000 with n_arms=10"``.

    Raises
    ------
    ValueError
        One sentence with the size it would take and the limit.
    """
    check_memory(f"{what} (agent state)", nbytes, "use fewer copies or arms")


def state_arguments(n_envs: int | None, **sizes: int) -> str:
    """The arguments that set an agent's state size, as its refusal names them: ``"n_envs=8 with n_arms=10"``.

    A count beyond the floats (``10**400``) is quoted by its first and last digits (:func:`describe`).
    """
    named = " with ".join(f"{name}={describe(value, typed=False)}" for name, value in sizes.items())
    return named if n_envs is None else f"n_envs={describe(n_envs, typed=False)} with {named}"


def _as_array(value: Any) -> npt.NDArray[Any] | None:
    """``value`` as a numpy array of numbers, or None when numpy cannot make a regular array of it.

    None too for what numpy would misread as numbers (:func:`bandit_envs.validation.not_numbers`):
    a masked array (its masked entries) and a list or tuple holding a bool (cast to 1 or 0), as the
    callers refuse a boolean array. For arrays of values of which a bool is never one: actions,
    rewards, tables, gaps, features, checkpoints (:func:`_array_like` takes them as numpy does).
    """
    if type(value) is np.ndarray:
        return value
    if not_numbers(value) is not None:
        return None
    return _array_like(value)


def _array_like(value: Any) -> npt.NDArray[Any] | None:
    """``value`` as a numpy array as numpy makes it (bools and masked arrays included), or None when it cannot."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, str | bytes) or value is None:
        return None
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if arr.dtype.kind in "OSUV" else arr


def _first_bad(ok: npt.NDArray[np.bool_]) -> tuple[int, ...]:
    """Index (as a tuple) of the first False of ``ok``."""
    flat = int(np.flatnonzero(~ok.reshape(-1))[0])
    return tuple(int(i) for i in np.unravel_index(flat, ok.shape))


class _Scalar(NamedTuple):
    """What a single env's action or reward may be as a number (:meth:`Agent._batch_view`)."""

    #: Python and numpy types it may be, recognised before the slower abstract-type check.
    types: tuple[type, ...]
    #: Any other numbers it may be (an abstract type of :mod:`numbers`); never a bool.
    kind: type
    #: Its conversion to the element of the batch of one.
    convert: Callable[[Any], Any]


#: An arm: any integer (a Python int beyond int64 makes an object array, refused by the range check).
_ACTION = _Scalar((int, np.integer), numbers.Integral, int)
#: A reward: any real number (a Python int beyond the floats is infinite, so refused).
_REWARD = _Scalar((float, int, np.floating, np.integer), numbers.Real, as_float)


def _first_outside(batch: npt.NDArray[Any], low: float, high: float) -> int:
    """Index of the first entry of the 1-d ``batch`` outside [``low``, ``high``] (NaN is outside), or -1.

    A batch of one (a single env's action or reward, or one copy's) is compared as a Python
    number: 0.1 us, where numpy's min and max take 1.6 us.
    """
    if batch.shape[0] == 1:
        return -1 if low <= batch.item() <= high else 0
    if low <= batch.min() and batch.max() <= high:
        return -1
    return int(np.flatnonzero(~((batch >= low) & (batch <= high)))[0])


def _long_doubles(value: Any) -> npt.NDArray[Any] | None:
    """``value`` as an array if it holds floats wider than float64 (long doubles), else None.

    The agents compute in float64: a long double just outside the reward bounds can round onto
    one of them (1 + 1e-19 to 1.0), and its check must see it before it is rounded.
    """
    if isinstance(value, np.ndarray | np.floating) and value.dtype.kind == "f" and value.dtype.itemsize > 8:
        return np.asarray(value).reshape(-1)
    return None


@njit
def first_refused(actions, rewards, n_arms, low, high):  # pragma: no cover
    """The first copy whose action is outside [0, K) or whose reward is not in [``low``, ``high``]; -1 if none.

    NaN is in no interval. :meth:`Agent._feedback`'s check of N copies' usual batch in one compiled
    call: what :func:`_first_outside` finds for the actions, then for the rewards, without four
    numpy reductions. A refused copy sends the batch to those checks, which say why.
    """
    for b in range(actions.shape[0]):
        if actions[b] < 0 or actions[b] >= n_arms or not (low <= rewards[b] <= high):
            return b
    return -1


@njit
def largest_entry(values):  # pragma: no cover
    """The largest entry of a 1-d int64 array, or -1 if it is empty: ``values.max()`` in one compiled call.

    What :func:`_largest_arm` computes for a vector env's ``info['optimal_action']`` (one int64
    per copy), where numpy's ``max`` takes 1-2 us a round on a small batch.
    """
    largest = -1
    for i in range(values.shape[0]):
        if i == 0 or values[i] > largest:
            largest = values[i]
    return largest


def _integer_objects(value: Any) -> npt.NDArray[np.object_] | None:
    """A list, tuple or 1-d object array of integers (not bools) as a 1-d object array; None for anything else.

    What numpy makes of integers beyond int64 and uint64 (``[0, 2**64]``): an object array,
    which :func:`_array_like` does not take. As an object array of ints, the callers' range
    checks name the copy and the value.
    """
    if not isinstance(value, list | tuple) and not (
        type(value) is np.ndarray and value.dtype == object and value.ndim == 1
    ):
        return None
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_) for v in value):
        return None
    objects = np.empty(len(value), dtype=object)
    objects[:] = list(value)
    return objects


def _largest_arm(best: Any) -> int:
    """The largest arm index in an ``info['optimal_action']`` (an integer or an integer array).

    -1 when it holds no integers (the agents never read it: it is checked only for an arm at or
    beyond their K, the sign of an env with more arms; a negative or non-integer value is let through).
    """
    if type(best) is np.ndarray and best.ndim == 1 and (best.dtype is _INT64 or best.dtype == _INT64):
        largest = _LARGEST_ENTRY.call  # a vector env's int64 per copy: one compiled call
        if largest is _LARGEST_ENTRY.kernel:
            _LARGEST_ENTRY.load()
            largest = _LARGEST_ENTRY.call
        found: int = largest(best)
        return found
    if isinstance(best, numbers.Integral) and not isinstance(best, bool | np.bool_):
        return int(best)  # also a Python int beyond int64, which numpy makes an object array of
    arr = _array_like(best)
    if arr is not None and arr.dtype.kind != "O":
        return int(arr.max()) if arr.dtype.kind in "iu" and arr.size else -1
    try:  # what numpy made no array of numbers of: perhaps integers beyond int64 among other entries
        flat = np.asarray(best, dtype=object).reshape(-1)
    except (TypeError, ValueError):
        return -1
    ints = [int(v) for v in flat if isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)]
    return max(ints, default=-1)


def _as_mask(mask: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """An ``info['observed_mask']`` as booleans: a boolean array, or integers 0 and 1."""
    if mask.dtype.kind == "b":
        return mask
    if mask.dtype.kind not in "iu":
        raise TypeError(f"info['observed_mask'] must be a boolean array of shape {mask.shape}, got dtype {mask.dtype}.")
    if mask.size and (mask.min() < 0 or mask.max() > 1):
        bad = mask.max() if mask.max() > 1 else mask.min()
        raise ValueError(f"info['observed_mask'] must be booleans (or integers 0 and 1), got {bad}.")
    return mask.astype(np.bool_)


def value_error(
    what: str,
    value: Any,
    bounds: tuple[float, float] | None,
    reason: str,
    where: str = "",
    plural: bool = False,
    condition: str = "",
) -> ValueError:
    """The one-sentence error for a non-finite or out-of-range reward (step API and fast paths alike).

    Parameters
    ----------
    what
        What holds the value, e.g. ``"reward"``, ``"info['observed_rewards']"``, ``"table"``.
    value
        The first bad value: a float, or the number given where its float would misquote it
        (:func:`given`).
    bounds
        The allowed (low, high), inclusive, or None for any finite number.
    reason
        Why the bounds are needed (said in parentheses), or "".
    where
        Where the value sits, e.g. ``" for copy 3"`` or ``" at round 5, arm 2"``.
    plural
        ``what`` holds several numbers ("finite numbers" instead of "a finite number").
    condition
        Which of the numbers the rule is for, e.g. ``" where info['observed_mask'] is True"``.
    """
    allowed = "finite numbers" if plural else "a finite number"
    if bounds is not None:
        allowed += f" in [{bounds[0]:g}, {bounds[1]:g}]"
    allowed += condition
    if reason:
        allowed += f" ({reason})"
    return ValueError(f"{what} must be {allowed}, got {quote(value)}{where}.")


def check_values(
    what: str,
    values: FloatArray,
    bounds: tuple[float, float] | None,
    reason: str,
    axes: tuple[str, ...],
    condition: str = "",
) -> None:
    """Raise :func:`value_error` for the first non-finite or out-of-bounds entry of ``values``.

    One pass for the minimum and one for the maximum (NaN propagates through both), so the check
    is cheap on the fast paths' tables. ``axes`` names the axes for the error's position, e.g.
    ``("round", "arm")``.
    """
    if values.size == 0:
        return
    low, high = (-math.inf, math.inf) if bounds is None else bounds
    lo, hi = values.min(), values.max()
    if low <= lo and hi <= high and (bounds is not None or (math.isfinite(lo) and math.isfinite(hi))):
        return
    ok = np.isfinite(values) & (values >= low) & (values <= high)
    index = _first_bad(ok)
    where = " at " + ", ".join(f"{name} {i}" for name, i in zip(axes, index, strict=True)) if index else ""
    bad = values[index]  # a long double quoted at its precision (it may round onto a bound as a float)
    raise value_error(
        what, bad if values.dtype.itemsize > 8 else float(bad), bounds, reason, where, values.ndim > 0, condition
    )


class SingleEnvKernel:
    """A kernel of the agents' one-env steps, called through its compiled entry point once loaded.

    Exp3's batched ``act`` and ``update`` use it too: their arguments are arrays and numbers only
    (never a numpy Generator, which numba would unbox through ctypes), of exactly the declared
    types.

    ``call`` is the dispatcher itself until :meth:`load` (which an agent's constructor calls for
    one env) replaces it by :func:`entry_point` ``(kernel, signature)``: a module-level object,
    so agents keep no compiled function in their state (they stay picklable) and an agent
    restored from a pickle in a fresh process still steps correctly (through the dispatcher)
    until the next constructor loads the entry point.

    Parameters
    ----------
    kernel
        A numba dispatcher.
    signature
        The numba types its callers pass (see :func:`entry_point`).
    """

    __slots__ = ("call", "kernel", "signature")

    def __init__(self, kernel: Any, signature: tuple[Any, ...]) -> None:
        self.kernel = kernel
        self.signature = signature
        self.call: Callable[..., Any] = kernel

    def load(self) -> None:
        """Replace ``call`` by the compiled entry point (once per process)."""
        if self.call is self.kernel:
            self.call = entry_point(self.kernel, self.signature)


#: The numba types of the arrays the agents' compiled entry points take: an agent's own state
#: arrays (C-contiguous) and the batches of actions and rewards :meth:`Agent._feedback` returns.
INTS_1D, INTS_2D = types.Array(types.int64, 1, "C"), types.Array(types.int64, 2, "C")
FLOATS_1D, FLOATS_2D = types.Array(types.float64, 1, "C"), types.Array(types.float64, 2, "C")
FLOATS_3D, WORDS_2D = types.Array(types.float64, 3, "C"), types.Array(types.uint64, 2, "C")

#: The check of N copies' usual batch in ``Agent._feedback`` (loaded on first use).
_FIRST_REFUSED = SingleEnvKernel(first_refused, (INTS_1D, FLOATS_1D, types.int64, types.float64, types.float64))
#: The largest arm of a vector env's ``info['optimal_action']`` in ``Agent._check_info`` (loaded on first use;
#: any strides: the info's arrays are the env's).
_LARGEST_ENTRY = SingleEnvKernel(largest_entry, (types.Array(types.int64, 1, "A"),))


class Agent(ABC):
    """Base class of every agent.

    Parameters
    ----------
    n_arms
        Number of arms K (≥ 2).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (policy randomness). Private agents draw their noise from
        a stream derived from it for noise alone; copy i of a batch draws as a single agent
        seeded ``seed + i`` (docs/design.md, "Agents", Seeds).

    Raises
    ------
    ValueError
        If ``n_envs`` × ``n_arms`` would need a learning state above the memory limit
        (:func:`bandit_envs.validation.memory_limit`).
    """

    #: Short name used in tables and figures.
    name: str = "Agent"
    #: Per-copy arrays whose copy axis is the last, not the first (the convention of this module's
    #: batched state): column b is copy b. :class:`agents.LDPWrapper` puts back a capped copy's
    #: column of these, as it puts back its row of the others.
    copy_axis_last: ClassVar[tuple[str, ...]] = ()
    #: Whether ``act`` reads the env's observation (contexts, sensitivities, the RL model's input).
    #: :class:`agents.LDPWrapper` refuses such agents: an observation can carry raw rewards.
    reads_obs: ClassVar[bool] = False
    #: Whether ``update`` may read an info's side observations (``observed_mask``, ``observed_rewards``).
    #: :class:`agents.LDPWrapper`, which strips an info to the pulled arm's privatized report, gives an
    #: agent that declares False no info at all: the same learning without two (N, K) arrays a round.
    #: A class that defines its own ``update`` is taken to read them (True) unless it declares False
    #: itself, so a subclass of an agent that reads none is safe by default.
    reads_side_observations: bool = True
    #: Rewards the agent accepts, (low, high) inclusive; None: any finite number (:data:`SUMMED_REWARD_BOUNDS`
    #: for the agents that sum them).
    reward_bounds: ClassVar[tuple[float, float] | None] = None
    #: Why ``reward_bounds`` is needed, said in the error for a reward outside them.
    reward_bounds_reason: ClassVar[str] = ""
    #: Bytes of learning state (and per-step work arrays) per copy and arm, and per copy, for the
    #: size check of the constructor.
    _state_bytes_per_arm: ClassVar[int] = 32
    _state_bytes_per_copy: ClassVar[int] = 64
    #: Closed bounds that a plain float reward must lie in for the one-env steps' inlined check
    #: (:meth:`_plain_value`): :attr:`reward_bounds`, or the largest finite floats (so that NaN and
    #: infinities fail the one comparison). Set for every subclass from its ``reward_bounds``.
    _plain_low: ClassVar[float] = -sys.float_info.max
    _plain_high: ClassVar[float] = sys.float_info.max

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "update" in cls.__dict__ and "reads_side_observations" not in cls.__dict__:
            cls.reads_side_observations = True  # a new update: it may read what its parent's did not
        bounds = cls.reward_bounds
        cls._plain_low, cls._plain_high = (
            (-sys.float_info.max, sys.float_info.max) if bounds is None else (float(bounds[0]), float(bounds[1]))
        )

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.n_envs = None if n_envs is None else check_int("n_envs", n_envs, minimum=1)
        self.seed = None if seed is None else check_int("seed", seed, minimum=0)  # a numpy integer as an int
        self._check_state_size()
        self.rng = np.random.default_rng(self.seed)

    @property
    def batch(self) -> int:
        """Number of copies the agent holds state for (1 when ``n_envs`` is None)."""
        return 1 if self.n_envs is None else self.n_envs

    def _state_nbytes(self) -> float:
        """Bytes of learning state the agent allocates (checked against the memory limit)."""
        return as_float(self.batch) * (as_float(self.n_arms) * self._state_bytes_per_arm + self._state_bytes_per_copy)

    def _check_state_size(self) -> None:
        try:
            nbytes = self._state_nbytes()
        except OverflowError:  # a count beyond the floats (n_arms=10**400) in a subclass's sum: beyond any memory
            nbytes = math.inf
        check_state_size(nbytes, state_arguments(self.n_envs, n_arms=self.n_arms))

    def reset(self, seed: int | None = None) -> None:
        """Forget everything learned and restart the generator: from ``seed`` if given, else from the stored seed.

        So an agent without privacy noise replays its run on the same feedback after ``reset()``
        (with ``seed=None`` at construction, a generator of fresh entropy). A private agent
        (:meth:`PrivateAgent.reset`) continues its generators instead unless ``seed`` is given.
        A ``seed`` that is not an integer >= 0 is refused before anything changes; a numpy integer
        is kept as the ``int`` it equals.
        """
        if seed is not None:
            self.seed = check_int("seed", seed, minimum=0)
        self.rng = np.random.default_rng(self.seed)
        self._reset_state()

    @abstractmethod
    def _reset_state(self) -> None:
        """Set the learning state to its initial value."""

    def _forget_choice(self) -> None:  # noqa: B027 - a hook: most agents choose in act and keep nothing to drop
        """Drop an arm that the last ``update`` chose for the next ``act`` (agents that choose in their update).

        For a caller that changes the learning state between ``update`` and ``act`` (the LDP
        wrapper putting back a capped copy's rows): ``act`` then chooses from the state as it is.
        Nothing to drop here.
        """

    @abstractmethod
    def act(self, obs: Any = None) -> Any:
        """Choose the next arm (int), or one arm per copy (int array of shape (N,))."""

    @abstractmethod
    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the last step: its action(s), reward(s) and the env's info."""

    # Pairing with an env -----------------------------------------------------------------

    def check_env(self, env: Any) -> None:
        """Check that ``env`` fits the agent: its number of arms and of copies.

        A single env must have ``action_space == Discrete(n_arms)`` (starting at 0) and the agent
        ``n_envs=None``; a vector env must have ``single_action_space == Discrete(n_arms)`` and
        ``num_envs == n_envs``. Call it before a run: a mismatch would otherwise show up only as a
        wrong-shaped ``info`` or an arm out of range, or not at all.

        Parameters
        ----------
        env
            A Gymnasium env or vector env.

        Raises
        ------
        ValueError
            One sentence naming what differs.
        """
        n_arms = env_arms(env)
        if n_arms != self.n_arms:
            raise ValueError(
                f"env must have the agent's number of arms (n_arms={self.n_arms}), got an env with "
                f"{n_arms} arms ({_action_space(env)})."
            )
        self._check_env_copies(env)

    def _check_env_copies(self, env: Any) -> None:
        num_envs = getattr(env, "num_envs", None)
        if num_envs is None and self.n_envs is not None:
            raise ValueError(
                f"env must be a vector env with num_envs={self.n_envs} for an agent with n_envs={self.n_envs}, "
                f"got a single env ({type(env).__name__})."
            )
        if num_envs is not None and num_envs != self.n_envs:
            wanted = "a single env" if self.n_envs is None else f"a vector env with num_envs={self.n_envs}"
            raise ValueError(
                f"env must be {wanted} for an agent with n_envs={self.n_envs}, got a vector env with "
                f"num_envs={num_envs}."
            )

    # Input checks for subclasses ---------------------------------------------------------
    #
    # Every input has one checking path. An action or a reward is first viewed as a batch of shape
    # (B,) (:meth:`_batch_view`: a single env's scalar is a batch of one), then that batch is checked
    # (kind, shape, then values); only the wording of a refusal depends on the mode ("an int" for
    # one env, "an array of shape (N,)" for N copies). The agents' one-call single-env steps do not
    # come here for plain scalars that fit (:meth:`_scalar_feedback`); anything else does, so the
    # refusals are the same on every path.

    def _out(self, actions: IntArray) -> Any:
        return int(actions[0]) if self.n_envs is None else actions

    def _where(self, b: int) -> str:
        return "" if self.n_envs is None else f" for copy {b}"

    def _batch_view(self, value: Any, scalar: _Scalar) -> npt.NDArray[Any] | None:
        """``value`` as an array with the batch axis, or None when it cannot be one (kind and shape unchecked).

        N copies: the array-like itself (:func:`_as_array`). One env: a batch of one, made of a
        0-d array or of a number that ``scalar`` allows (:data:`_ACTION`, :data:`_REWARD`).
        """
        if self.n_envs is not None:
            return value if type(value) is np.ndarray else _as_array(value)
        if isinstance(value, bool | np.bool_ | np.timedelta64):  # not numbers here (a time span is a numpy integer)
            return None
        if isinstance(value, scalar.types) or isinstance(value, scalar.kind):
            return np.array([scalar.convert(value)])
        if (
            isinstance(value, np.ndarray)
            and value.shape == ()
            and value.dtype.kind not in "OSUV"
            and not isinstance(value, _MASKED)
        ):
            return value.reshape(1)
        return None

    def _input_error(self, what: str, value: Any, arr: Any, kinds: str, one: str, many: str) -> TypeError | ValueError:
        """The refusal of an ``action`` or ``reward`` (``what``) whose batch ``arr`` has the wrong kind or shape.

        ``one`` and ``many`` say what is allowed for one env and for N copies (``{shape}`` is
        filled in). A wrong kind is a ``TypeError``, a wrong shape of the right kind a ``ValueError``.
        """
        if self.n_envs is None:
            return TypeError(f"{what} must be {one}, got {describe(value)}.")
        error = TypeError if arr is None or arr.dtype.kind not in kinds else ValueError
        got = describe(value)
        listed = isinstance(value, list | tuple) and len(value) == self.n_envs
        if error is TypeError and listed and "holding" not in got:
            kind = numbers.Integral if kinds == "iu" else numbers.Real  # say which entry is of the wrong kind
            b = next((b for b, v in enumerate(value) if isinstance(v, bool | np.bool_) or not isinstance(v, kind)), -1)
            if b >= 0:
                got += f" holding {describe(value[b])}{self._where(b)}"
        return error(f"{what} must be {many.format(shape=(self.n_envs,))}, got {got}.")

    def _actions(self, action: Any, n_arms: int | None = None, *, check_range: bool = True) -> IntArray:
        """``action`` as an int64 array of shape (B,), checked (type, shape and, by default, range).

        One env's arm is an integer (``int``, a numpy integer or a 0-d integer array; a Python int
        beyond int64 becomes an object array, which the range check refuses). An object array of
        N copies is taken only if each entry is an integer (an ``int`` or a numpy integer, not a
        bool nor a ``numpy.timedelta64``), then range-checked alike. A list holding a bool and a
        masked array are refused (:func:`_as_array`). ``check_range=False`` leaves the range of an int64 batch
        to a compiled kernel that reports the first bad copy (then raise
        :meth:`_action_range_error`); other integer dtypes are checked before conversion.
        """
        k = self.n_arms if n_arms is None else n_arms
        arr = self._batch_view(action, _ACTION)
        if arr is None and self.n_envs is not None:  # perhaps integers beyond int64: their copy is named below
            arr = _integer_objects(action)
        many = f"an integer array of shape {{shape}}, one arm in [0, {k - 1}] per copy"
        if arr is None or arr.dtype.kind not in "iuO" or arr.shape != (self.n_envs or 1,):
            raise self._input_error(
                "action", action, arr, "iu", f"an integer arm index in [0, {k - 1}] (an int or numpy integer)", many
            )
        if arr.dtype.kind == "O":  # a cast to int64 would truncate 1.5 and fail on '1' inside numpy
            for b, entry in enumerate(arr):
                if isinstance(entry, bool | np.timedelta64) or not isinstance(entry, int | np.integer):
                    raise TypeError(
                        f"action must be {many.format(shape=(self.n_envs,))}, got an object array holding "
                        f"{describe(entry)}{self._where(b)}."
                    )
        if check_range or arr.dtype != _INT64:
            b = _first_outside(arr, 0, k - 1)
            if b >= 0:
                raise self._action_range_error(int(arr[b]), b, k)
        return kernel_array(arr, np.int64)  # one form for the kernels, whatever the caller's

    def _action_range_error(self, value: int, b: int, n_arms: int | None = None) -> ValueError:
        """The error for copy ``b``'s action ``value`` outside [0, K)."""
        k = self.n_arms if n_arms is None else n_arms
        got = describe(value, typed=False)
        return ValueError(
            f"action must be an arm index in [0, {k - 1}] (the agent has {k} arms){self._where(b)}, got {got}."
        )

    def _rewards(self, reward: Any, *, check: bool = True) -> FloatArray:
        """``reward`` as a float64 array of shape (B,), checked (type, shape and, by default, values).

        One env's reward is a real number (not a bool) or a 0-d real array. Values must be finite
        and inside :attr:`reward_bounds`. ``check=False`` leaves the values to a compiled kernel
        (then raise :meth:`_reward_error`).
        """
        arr = self._batch_view(reward, _REWARD)
        if arr is None and isinstance(reward, list | tuple) and self.n_envs is not None:
            for b, v in enumerate(reward):  # an int beyond the floats (numpy makes an object array): quoted as given
                integer = isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)
                if integer and overflowed(v, as_float(v)):
                    raise self._reward_error(v, b)
        if arr is None or arr.dtype.kind not in "iuf" or arr.shape != (self.n_envs or 1,):
            raise self._input_error(
                "reward", reward, arr, "iuf", "a real number", "a real array of shape {shape}, one reward per copy"
            )
        wide = _long_doubles(reward)
        if wide is not None and wide.shape == arr.shape:  # checked at their own precision, whatever ``check`` says
            b = _first_outside(wide, self._plain_low, self._plain_high)
            if b >= 0:
                raise self._reward_error(wide[b], b)
        r: FloatArray = kernel_array(arr, np.float64)  # one form for the kernels, whatever the caller's
        if self.n_envs is None and overflowed(reward, r[0]):  # an int beyond the floats: quoted as given, not inf
            raise self._reward_error(reward, 0)
        if check:
            b = _first_outside(r, self._plain_low, self._plain_high)
            if b >= 0:
                raise self._reward_error(float(r[b]), b)
        return r

    def _scalar_feedback(self, action: Any, reward: Any, n_arms: int | None = None) -> float | None:
        """One env's reward as a float when (``action``, ``reward``) are plain scalars that fit; else None.

        Plain: an ``int`` or ``np.int64`` action in [0, K) and a ``float``, ``np.float64``, ``int``
        or ``np.int64`` reward that is finite and inside :attr:`reward_bounds`. This is the check
        of the agents' one-call steps; anything else returns None (also for N copies), and the
        caller takes :meth:`_feedback`, whose checks give the errors. ``info`` is not looked at.
        """
        ta, tr = type(action), type(reward)
        if (
            self.n_envs is not None
            or (ta is not int and ta is not _NP_INT64)
            or (tr is not float and tr is not _NP_FLOAT64 and tr is not int and tr is not _NP_INT64)
        ):
            return None
        k = self.n_arms if n_arms is None else n_arms
        if 0 <= action < k and self._plain_low <= reward <= self._plain_high:  # NaN fails too
            return float(reward)
        return None

    #: The same check, under the name the one-env steps call after inlining its usual case (an int
    #: action and a float reward, compared against ``_plain_low`` and ``_plain_high``).
    _plain_value = _scalar_feedback

    def _reward_error(self, value: Any, b: int) -> ValueError:
        """The error for copy ``b``'s reward ``value`` (not finite or outside :attr:`reward_bounds`)."""
        return value_error("reward", value, self.reward_bounds, self._bounds_reason(), self._where(b))

    def _bounds_reason(self) -> str:
        return self.reward_bounds_reason.format(name=self.name)

    def _feedback(
        self,
        action: Any,
        reward: Any,
        info: Any,
        *,
        n_arms: int | None = None,
        check_values: bool = True,
    ) -> tuple[IntArray, FloatArray]:
        """Checked (actions (B,), rewards (B,)) of one ``update``; ``info`` is checked too.

        ``check_values=False`` checks types and shapes only and leaves the action range and the
        reward values to a compiled kernel. ``n_arms`` overrides the agent's K (linear agents
        read it from the last observation).
        """
        n = self.n_envs
        if (
            n is not None
            and type(action) is np.ndarray
            and type(reward) is np.ndarray
            and action.shape == reward.shape == (n,)
            and (action.dtype is _INT64 or action.dtype == _INT64)  # numba-made arrays: an equal dtype
            and (reward.dtype is _FLOAT64 or reward.dtype == _FLOAT64)
            and action.flags.carray  # C-contiguous, aligned and writable: the one form the kernels are compiled for
            and reward.flags.carray
            and (not check_values or self._refused_copy(action, reward, n_arms) < 0)
        ):  # N copies' usual batch, fitting when checked: what _actions and _rewards return as they are
            if info is not None:
                self._check_info(info, n_arms)
            return action, reward
        value = None if n is not None else self._scalar_feedback(action, reward, n_arms)
        if value is not None:  # one env's plain int and float that fit: nothing left to check. This
            # skips the batch of one (0.7 us instead of 1.6 us, on single-env steps of 2.5 us and up).
            a, r = np.array([action], dtype=np.int64), np.array([value])
        else:
            a = self._actions(action, n_arms, check_range=check_values)
            r = self._rewards(reward, check=check_values)
        if info is not None:
            self._check_info(info, n_arms)
        return a, r

    def _check_feedback(self, action: Any, reward: Any, info: Any) -> None:
        """Check one ``update``'s feedback that the agent learns nothing from (``Random``, ``FixedArm``).

        One env's plain int and float that fit (:meth:`_scalar_feedback`) are checked as they are,
        with the info; anything else goes through :meth:`_feedback`, whose checks give the errors.
        """
        if self._scalar_feedback(action, reward) is not None:
            if info is not None:
                self._check_info(info)
            return
        self._feedback(action, reward, info)

    def _refused_copy(self, actions: IntArray, rewards: FloatArray, n_arms: int | None) -> int:
        """The first copy of a usual batch (int64 and float64, C-contiguous) whose action or reward does not fit, or -1.

        One compiled call (:func:`first_refused`) where the checks of
        :meth:`_actions` and :meth:`_rewards` take four numpy reductions: 1-2 us a round on
        small batches. A refused copy is then checked in Python, which says why.
        """
        check = _FIRST_REFUSED.call
        if check is _FIRST_REFUSED.kernel:
            _FIRST_REFUSED.load()
            check = _FIRST_REFUSED.call
        k = self.n_arms if n_arms is None else n_arms
        refused: int = check(actions, rewards, k, self._plain_low, self._plain_high)
        return refused

    def _check_info(self, info: Any, n_arms: int | None = None) -> None:
        """Check the env's step ``info`` against the agent's arm count (cheap: shapes and one max)."""
        if type(info) is not dict and not isinstance(info, Mapping):
            raise TypeError(f"info must be the env's step info (a dict) or None, got {describe(info)}.")
        k = self.n_arms if n_arms is None else n_arms
        expected = (k,) if self.n_envs is None else (self.n_envs, k)
        for key in PER_ARM_INFO_KEYS:
            value = info.get(key)
            if value is not None and (value.shape if isinstance(value, np.ndarray) else _shape(value)) != expected:
                raise self._per_arm_error(key, value, k)
        best = info.get("optimal_action")
        if best is not None:
            # One env's int (within int64) or np.int64 is compared as it is: through _largest_arm,
            # _check_info takes 15% longer (0.32 -> 0.37 us, most of it in UCB's 0.7 us step with info).
            tb = type(best)
            largest = best if (tb is int and best < _INT64_BOUND) or tb is _NP_INT64 else _largest_arm(best)
            if largest >= k:
                raise self._best_error(int(largest), k)

    def _per_arm_error(self, key: str, value: Any, k: int) -> ValueError:
        """The error for an ``info[key]`` (a per-arm array) whose shape is not (K,), or (N, K) for N copies."""
        expected = (k,) if self.n_envs is None else (self.n_envs, k)
        shape = _shape(value)
        return ValueError(
            f"info[{key!r}] must have shape {expected}, one entry per arm"
            f"{'' if self.n_envs is None else ' for each copy'} (the agent has {k} arms), got "
            f"{'a value without a regular shape' if shape is None else f'shape {shape}'}."
        )

    @staticmethod
    def _best_error(best: int, k: int) -> ValueError:
        """The error for an ``info['optimal_action']`` of ``best``, not an arm of the agent's ``k``."""
        return ValueError(
            f"info['optimal_action'] must be an arm index below the agent's {k} arms, got "
            f"{best}, so the env has more arms than the agent."
        )

    def _observed_feedback(
        self, action: Any, reward: Any, info: Any
    ) -> tuple[IntArray, FloatArray, npt.NDArray[np.bool_], FloatArray]:
        """(actions, rewards, ``observed_mask``, ``observed_rewards``) of a side-observation agent's update.

        Types and shapes checked, the values left to the compiled update that reads them: what
        :meth:`_feedback` and :meth:`_side_observations` return with ``check_values=False``. N
        copies' usual feedback (the vector env's: int64 and float64 (N,) batches, a boolean and
        a float64 (N, K) array, C-contiguous, and ``optimal_action`` within the arms) is returned
        as it is after one pass of cheap tests (1-2 us a round on small batches less than the two
        calls; :func:`largest_entry` reads ``optimal_action``).
        """
        n = self.n_envs
        if n is not None and type(info) is dict:
            mask, observed = info.get("observed_mask"), info.get("observed_rewards")
            best = info.get("optimal_action")
            if (
                type(action) is np.ndarray
                and type(reward) is np.ndarray
                and type(mask) is np.ndarray
                and type(observed) is np.ndarray
                and (action.dtype is _INT64 or action.dtype == _INT64)  # numba-made arrays: an equal dtype
                and (reward.dtype is _FLOAT64 or reward.dtype == _FLOAT64)
                and (mask.dtype is _BOOL or mask.dtype == _BOOL)
                and (observed.dtype is _FLOAT64 or observed.dtype == _FLOAT64)
                and action.shape == reward.shape == (n,)
                and mask.shape == observed.shape == (n, self.n_arms)
                and action.flags.carray  # C-contiguous, aligned and writable: the form the kernels are compiled for
                and reward.flags.carray
                and mask.flags.carray
                and observed.flags.carray
                and (best is None or _largest_arm(best) < self.n_arms)
            ):
                return action, reward, mask, observed
        a, r = self._feedback(action, reward, info, check_values=False)
        mask, observed = self._side_observations(info, check_values=False, info_checked=info is not None)
        return a, r, mask, observed

    def _side_observations(
        self, info: Any, n_arms: int | None = None, *, check_values: bool = True, info_checked: bool = False
    ) -> tuple[npt.NDArray[np.bool_], FloatArray]:
        """The (B, K) boolean ``observed_mask`` and float64 ``observed_rewards`` of ``info``, checked.

        Observed rewards (where the mask is True) must be finite and inside
        :attr:`reward_bounds`; ``check_values=False`` leaves that to a compiled kernel.
        ``info_checked``: the caller has just checked ``info`` (:meth:`_check_info`, which
        :meth:`_feedback` runs), so its shapes are not checked again.
        """
        for key in PER_ARM_INFO_KEYS:
            if not (type(info) is dict or isinstance(info, Mapping)) or key not in info:
                keys = sorted(map(str, info))[:8] if isinstance(info, Mapping) else None
                got = describe(info) if keys is None else f"keys {keys}"
                raise ValueError(f"info must contain {key!r} (side observations from the env), got {got}.")
        if not info_checked:
            self._check_info(info, n_arms)
        raw_mask, raw_values = info["observed_mask"], info["observed_rewards"]
        if (
            not check_values
            and self.n_envs is not None
            and type(raw_mask) is np.ndarray
            and type(raw_values) is np.ndarray
            and (raw_mask.dtype is _BOOL or raw_mask.dtype == _BOOL)  # numba-made arrays: an equal dtype
            and (raw_values.dtype is _FLOAT64 or raw_values.dtype == _FLOAT64)
            and raw_mask.ndim == raw_values.ndim == 2  # (N, K), as _check_info has checked
            and raw_mask.flags.carray
            and raw_values.flags.carray
        ):  # N copies' usual info (the vector env's): what the conversions below return as it is
            return raw_mask, raw_values
        k = self.n_arms if n_arms is None else n_arms
        mask = _as_mask(raw_mask if type(raw_mask) is np.ndarray else self._info_array("observed_mask", raw_mask, k))
        values = raw_values if type(raw_values) is np.ndarray else self._info_array("observed_rewards", raw_values, k)
        if values.dtype.kind not in "iuf":
            raise TypeError(
                f"info['observed_rewards'] must be a real array of shape {values.shape}, got dtype {values.dtype}."
            )
        mask = kernel_array(mask.reshape(self.batch, k), np.bool_)  # one form for the kernels, as actions
        wide = _long_doubles(values)
        if wide is not None and self.reward_bounds is not None:  # checked before they are rounded to float64
            seen = np.where(mask.reshape(-1), wide, self.reward_bounds[0]).reshape(self.batch, k)
            self._check_observed(seen)
        values = kernel_array(values.reshape(self.batch, k), np.float64)
        if check_values:
            seen = np.where(mask, values, 0.5 if self.reward_bounds is None else self.reward_bounds[0])
            self._check_observed(seen)
        return mask, values

    def _info_array(self, key: str, value: Any, k: int) -> npt.NDArray[Any]:
        """A per-arm ``info[key]`` given as other than an ndarray, as an array; refused if numpy would misread it.

        A masked array is refused (its masked entries would be read), and ``observed_rewards``
        holding a bool (a list cast to numbers); ``observed_mask`` may be a list of bools.
        """
        rewards = key == "observed_rewards"
        if isinstance(value, _MASKED) or (rewards and not_numbers(value) is not None):
            expected = (k,) if self.n_envs is None else (self.n_envs, k)
            allowed = "a real array" if rewards else "a boolean array"
            raise TypeError(f"info[{key!r}] must be {allowed} of shape {expected}, got {describe(value)}.")
        return np.asarray(value)

    def _check_observed(self, seen: FloatArray) -> None:
        """Raise for the first bad observed reward; ``seen`` holds a valid value where nothing was observed."""
        axes = ("arm",) if self.n_envs is None else ("copy", "arm")
        check_values(
            "info['observed_rewards']",
            seen if self.n_envs is not None else seen[0],
            self.reward_bounds,
            self._bounds_reason(),
            axes,
            " where info['observed_mask'] is True",
        )

    def _check_obs(self, obs: Any) -> None:
        """Refuse an observation whose arm axis (feature matrices (K, d) or (N, K, d)) has another K."""
        if isinstance(obs, np.ndarray):
            lead = 0 if self.n_envs is None else 1
            if obs.ndim == lead + 2 and obs.shape[lead] != self.n_arms:
                raise ValueError(
                    f"obs must have one row per arm of the agent ({self.n_arms} arms) on its arm axis, got "
                    f"shape {obs.shape}, so the env has {obs.shape[lead]} arms."
                )

    def _batched(
        self, action: Any, reward: Any, info: dict[str, Any] | None, key: str | None = None
    ) -> tuple[IntArray, FloatArray, Any]:
        """Return (actions (B,), rewards (B,), info[key] with a batch axis or None), all checked."""
        a, r = self._feedback(action, reward, info)
        extra = None
        if key is not None:
            mask, values = self._side_observations(info)
            extra = mask if key == "observed_mask" else values
        return a, r, extra

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_arms={self.n_arms}, n_envs={self.n_envs}, seed={self.seed})"


def _shape(value: Any) -> tuple[int, ...] | None:
    """Shape of an array-like, or None when it has no regular shape."""
    arr = _array_like(value)
    return None if arr is None else arr.shape


def env_arms(env: Any) -> int:
    """Number of arms of a Gymnasium env or vector env (its ``Discrete`` action space's ``n``).

    Raises
    ------
    ValueError
        If the action space is not ``Discrete(K)`` starting at 0.
    """
    space = _space(env, "action_space")
    if not isinstance(space, spaces.Discrete) or int(space.start) != 0:
        raise ValueError(f"env must have a Discrete(K) action space starting at 0, got {_action_space(env)}.")
    return int(space.n)


def _space(env: Any, name: str) -> Any:
    single = getattr(env, f"single_{name}", None) if getattr(env, "num_envs", None) is not None else None
    return single if single is not None else getattr(env, name, None)


def _action_space(env: Any) -> str:
    vector = getattr(env, "num_envs", None) is not None
    text = repr(_space(env, "action_space"))
    if len(text) > _MAX_REPR:
        text = text[: _MAX_REPR - 3] + "..."
    return f"{'single_' if vector else ''}action_space {text}"


class PrivateAgent(Agent):
    """An agent with a differential-privacy guarantee.

    Subclasses document the privacy unit (what one neighbouring change is), ε (and δ), and
    where their noise comes from, and report the budget used so far in ``privacy_spent``.

    Noise across episodes: :meth:`reset` without a seed forgets what was learned but continues
    the agent's generators (noise and any other draws), as Gymnasium's ``env.reset()`` without a
    seed continues the env's generator, so every episode gets fresh noise. ``reset(seed=s)``
    restarts them from ``s``: the same draws as an agent constructed with ``seed=s``, so two
    episodes run with the same seed on different data share their noise, and the difference of
    their releases is the difference of the exact values (never release both).

    Copies: :func:`copy.deepcopy` or :mod:`pickle` of an agent (and ``fork`` of the elimination
    agents) holds its generators in their current state, so the copy makes the same future
    draws as the original. Never run a copy and the original on different data and release
    both: their noise cancels in the difference.

    ``privacy_spent`` covers the data since the last reset (or construction). A user whose data
    enters several episodes loses what those episodes' guarantees compose to.
    """

    #: Plain-language neighbouring relation, e.g. "one entry r_{t,k} of the reward table".
    privacy_unit: str = ""
    #: Whether the noise generators are built from ``seed`` (set by :meth:`_noise_due`).
    _noise_seeded: bool = False

    def reset(self, seed: int | None = None) -> None:
        """Forget everything learned; the generators continue, or restart from ``seed`` if it is given.

        Without ``seed``, the next episode's noise is fresh (the generators go on from where the
        last episode left them). With ``seed``, the agent draws as one constructed with it:
        reusing a seed on other data reuses its noise.
        """
        if seed is not None:
            self.seed = check_int("seed", seed, minimum=0)  # a numpy integer kept as the int it equals
            self._noise_seeded = False
        self._reset_state()

    def _noise_due(self) -> bool:
        """Whether ``_reset_state`` must build the generators from ``seed`` (construction, ``reset(seed=s)``).

        True once per seeding: the call marks them built, so a later ``reset()`` continues them.
        """
        if self._noise_seeded:
            return False
        self._noise_seeded = True
        return True

    def __repr__(self) -> str:  # without the seed: whoever holds it can subtract the noise
        return f"{type(self).__name__}(n_arms={self.n_arms}, n_envs={self.n_envs})"

    @property
    @abstractmethod
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) spent since the last reset under ``privacy_unit`` (a user in several episodes composes them)."""
