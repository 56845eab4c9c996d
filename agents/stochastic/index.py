"""Index and sampling agents without privacy: Random, UCB, UCB-N and Thompson sampling (TS, TS-N).

State arrays carry the batch axis first, shape (B, K) with B = ``self.batch``, so one env and N
copies in lock-step run the same code. The per-step work of UCB and UCB-N (the index argmax and
the count/mean update) is done by numba kernels looping over those arrays: the batched path must
reach 10^7 agent-steps per second (1000 copies, K = 10, one core;
``benchmarks/bench_ucb_batch.py`` measures it).

UCB and UCB-N keep their state packed in one (B, 3K + 1) array. With one env, ``update`` with
plain scalars is one compiled call that adds the reward and already chooses the next arm, which
``act`` then returns: well under a microsecond per act + update
(``benchmarks/bench_step_api.py`` measures it). With N copies, UCB's ``update`` is likewise one
call of a compiled entry point that adds the rewards and chooses every copy's next arm, so that
the fixed cost of a round stays small next to 100 copies' work
(``benchmarks/bench_index_agents.py``, 100 against 1000 copies).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import (
    SUMMED_REWARD_BOUNDS,
    SUMMED_REWARD_REASON,
    Agent,
    SingleEnvKernel,
    check_float,
    describe,
    entry_point,
    quote,
)
from agents.common import sampling
from agents.common.kernels import OBSERVED_REFUSED, first_argmax, kernel_error
from agents.common.streams import GENERATOR_BYTES, CopyStreams, copy_integers, integer_below
from agents.stochastic import thompson_kernels as ts_kernels
from agents.stochastic.index_kernels import SUMMED_HIGH, SUMMED_LOW, feedback_fits, reward_fits
from agents.stochastic.mean_state import PackedMeanViews
from bandit_envs._jit import njit
from bandit_envs.validation import not_numbers, real_array

FloatArray = npt.NDArray[np.float64]
SQRT2 = math.sqrt(2.0)
IntArray = npt.NDArray[np.int64]
_BOOL = np.dtype(np.bool_)
_FLOAT64 = np.dtype(np.float64)
_INT64 = np.dtype(np.int64)
_NDARRAY, _EMPTY = np.ndarray, np.empty
_NP_INT64, _NP_FLOAT64 = np.int64, np.float64


# Packed state of UCB and UCB-N ------------------------------------------------------------
#
# One float64 row per copy b, so that one env's step is one compiled call with one array:
#
#   columns [0, K)     sums    reward (observation) sum per arm
#   columns [K, 2K)    means   sums / counts
#   columns [2K, 3K)   counts  pulls (observations) per arm: int64 values stored in the same 8 bytes
#   column  3K         c       squared exploration coefficient (alpha^2 for UCB, 2 for UCB-N)
#
# The kernels read the counts through ``state.view(np.int64)``; the agents expose ``sums``,
# ``means`` and ``counts`` as views of the same memory. The round counter t is shared by the
# copies and passed to the kernels as a number.
#
# Packed rather than named, as measured by ``benchmarks/bench_named_state.py`` (UCB's step, K = 10,
# three runs on a shared 2-core machine, ratios to the packed row in the same run): a NamedTuple of
# (B, K) sums, means, counts and a (B,) per-copy record (a dtype built with align=True) ran one
# env's update + choice at 0.58-0.73x the speed and the batched act + update at 0.60x (100 copies)
# and 0.95-0.97x (1000 copies), numba typing and unboxing every array at every call; one aligned
# record row per copy (fields sums, means, counts, c) matched the single-env step (1.03x in two
# runs) but ran the batched step at 0.44-0.50x, and compiles once per K. Both lose more than 5%.

#: Columns of a state row after the 3K per-arm columns (c).
_EXTRA_COLUMNS = 1
#: The largest ln(t + 1) of a round count t in int64, by which the kernels multiply c = alpha^2.
_LOG_ROUNDS = math.log(2.0**63)
#: The largest UCB alpha: c ln(t + 1) = alpha^2 ln(t + 1) must stay a finite float for every round
#: (up to alpha = sqrt(max float / ln 2**63) = 2.03e153): with an infinite width every index is inf,
#: and argmax plays arm 0 for ever.
ALPHA_MAX = 2e153
#: The smallest UCB alpha: its square must not round to 0.0 (the greedy alpha = 0, which is refused),
#: as below 1.57e-162.
ALPHA_MIN = 1e-161
assert ALPHA_MAX**2 * _LOG_ROUNDS <= sys.float_info.max and ALPHA_MIN**2 > 0.0


@njit(error_model="numpy", inline="always")
def _choose_row(state: FloatArray, ints: IntArray, b: int, log_t: float, index: FloatArray) -> int:  # pragma: no cover
    """Copy b's arm for round t + 1: the first arm never counted, else argmax of mean + sqrt(c ln(t + 1) / count).

    The index of UCB1 (Auer, Cesa-Bianchi & Fischer 2002) with c = alpha^2, and of UCB-N (Caron
    et al. 2012) with c = 2 and counts of observations. ``log_t`` is ln(t + 1), t the rounds
    completed (the same for every copy: computed once per round by the caller); ``index`` is a
    work array of K floats. Strict ``>`` breaks ties towards the lowest index. Pure-Python
    equivalent, with ``counts``, ``means`` and ``c`` read from row b::

        if 0 in counts:
            return counts.index(0)
        width = c * math.log(t + 1)
        index = [means[k] + math.sqrt(width / counts[k]) for k in range(K)]
        return index.index(max(index))

    The indices are computed in a loop of their own, without branches (every count is > 0 there,
    and ``error_model="numpy"`` drops numba's division check), which LLVM vectorizes; the values
    are the same, sqrt and division being exactly rounded either way.
    """
    n_arms = index.shape[0]
    for k in range(n_arms):
        if ints[b, 2 * n_arms + k] == 0:
            return k
    width = state[b, 3 * n_arms] * log_t
    for k in range(n_arms):
        index[k] = state[b, n_arms + k] + np.sqrt(width / ints[b, 2 * n_arms + k])
    return first_argmax(index)


@njit(error_model="numpy")
def _choose_rows(state: FloatArray, t: int) -> IntArray:  # pragma: no cover
    """``out[b] = _choose_row(state, ints, b, ln(t + 1), ...)`` for every copy b: the batched ``act``."""
    ints = state.view(np.int64)
    log_t = math.log(t + 1)
    index = np.empty((state.shape[1] - _EXTRA_COLUMNS) // 3)
    out = np.empty(state.shape[0], dtype=np.int64)
    for b in range(state.shape[0]):
        out[b] = _choose_row(state, ints, b, log_t, index)
    return out


@njit(inline="always")
def _counts_and_arms(state: FloatArray) -> tuple[IntArray, int]:  # pragma: no cover
    """The int64 view of a packed state (the counts' columns are read through it) and its number of arms K."""
    return state.view(np.int64), (state.shape[1] - _EXTRA_COLUMNS) // 3


@njit(error_model="numpy", inline="always")
def _add_observation(state: FloatArray, ints: IntArray, b: int, k: int, value: float) -> None:  # pragma: no cover
    """``counts[b, k] += 1; sums[b, k] += value; means[b, k] = sums[b, k] / counts[b, k]``.

    Means are sum / count rather than a running update so that arms with equal reward histories
    (in any order) have bit-equal means and exact ties go to the lowest index.
    """
    n_arms = (state.shape[1] - _EXTRA_COLUMNS) // 3
    ints[b, 2 * n_arms + k] += 1
    state[b, k] += value
    state[b, n_arms + k] = state[b, k] / ints[b, 2 * n_arms + k]


@njit(inline="always")
def _refused(action: int, reward: float, n_arms: int) -> bool:  # pragma: no cover
    """Whether a kernel refuses a copy's feedback: ``action`` outside [0, K) or a ``reward`` outside the bounds.

    The bounds are UCB's ``reward_bounds``, ``SUMMED_REWARD_BOUNDS`` (:mod:`agents.base`), tested
    as every index agent's kernels test theirs (:func:`~agents.stochastic.index_kernels.feedback_fits`).
    """
    return not feedback_fits(action, reward, n_arms, SUMMED_LOW, SUMMED_HIGH)


@njit(inline="always")
def _summable(reward: float) -> bool:  # pragma: no cover
    """Whether an observed ``reward`` is within UCB's bounds (:func:`~agents.stochastic.index_kernels.reward_fits`)."""
    return reward_fits(reward, SUMMED_LOW, SUMMED_HIGH)


@njit
def _pulled_step(state: FloatArray, action: int, reward: float, t: int) -> int:  # pragma: no cover
    """One env's UCB step: add ``reward`` to the pulled arm and return the arm of round t + 1.

    ``t`` counts the rounds completed with this one. Works on row 0. Returns -1, changing
    nothing, for an ``action`` outside [0, K) or a reward outside the bounds. Python equivalent:
    ``counts[a] += 1; sums[a] += r; means[a] = sums[a] / counts[a]; return choose(t)`` (see
    :func:`_choose_row`).
    """
    ints, n_arms = _counts_and_arms(state)
    if _refused(action, reward, n_arms):
        return -1
    _add_observation(state, ints, 0, action, reward)
    return _choose_row(state, ints, 0, math.log(t + 1), np.empty(n_arms))


@njit(error_model="numpy")
def _pulled_update(
    state: FloatArray, actions: IntArray, rewards: FloatArray, t: int, out: IntArray
) -> int:  # pragma: no cover
    """Per copy b, add ``rewards[b]`` to arm ``actions[b]`` and put the arm of round t + 1 in ``out[b]``.

    The batched UCB step in one call: ``t`` counts the rounds completed with this one, and
    ``out[b]`` is :func:`_choose_row` of the updated row b (what the next ``act`` would compute);
    an ``out`` of another length than the number of copies (empty) asks for the update alone.
    Returns the first bad copy (-1 if none): nothing is updated, and ``out`` not written, when a
    copy has an action outside [0, K) or a reward outside the bounds. Python equivalent, per copy:
    ``counts[a] += 1; sums[a] += r; means[a] = sums[a] / counts[a]; out[b] = choose(t)``.
    """
    ints, n_arms = _counts_and_arms(state)
    n_rows = state.shape[0]
    for b in range(n_rows):
        if _refused(actions[b], rewards[b], n_arms):
            return b
    if out.shape[0] != n_rows:  # an agent that chooses otherwise (SM-UCB): the update alone
        for b in range(n_rows):
            _add_observation(state, ints, b, actions[b], rewards[b])
        return -1
    for b in range(n_rows):  # every update first: choosing each row right after its update took 1.8x as long
        _add_observation(state, ints, b, actions[b], rewards[b])
    log_t = math.log(t + 1)
    index = np.empty(n_arms)
    for b in range(n_rows):
        out[b] = _choose_row(state, ints, b, log_t, index)
    return -1


@njit
def _observed_step(
    state: FloatArray, action: int, reward: float, mask: npt.NDArray[np.bool_], observed: FloatArray, t: int
) -> int:  # pragma: no cover
    """One env's UCB-N step: add every observed reward (``mask``, shape (K,)) and return the arm of round t + 1.

    ``t`` counts the rounds completed with this one. Works on row 0. Returns -1, changing
    nothing, for an ``action`` outside [0, K), or a reward or an observed reward outside the
    bounds. Python equivalent: ``for k in range(K): if mask[k]: counts[k] += 1;
    sums[k] += observed[k]; means[k] = sums[k] / counts[k]``, then ``return choose(t)``.
    """
    ints, n_arms = _counts_and_arms(state)
    if _refused(action, reward, n_arms):
        return -1
    for k in range(n_arms):
        if mask[k] and not _summable(observed[k]):
            return -1
    for k in range(n_arms):
        if mask[k]:
            _add_observation(state, ints, 0, k, observed[k])
    return _choose_row(state, ints, 0, math.log(t + 1), np.empty(n_arms))


@njit(error_model="numpy")
def _observed_update(
    state: FloatArray,
    actions: IntArray,
    rewards: FloatArray,
    mask: npt.NDArray[np.bool_],
    observed: FloatArray,
    t: int,
    out: IntArray,
) -> int:  # pragma: no cover
    """Per copy b, add every observed reward (``mask[b]``), then the arm of round t + 1 in ``out[b]``.

    -1 if done, else which copy was refused and why: nothing is updated (and ``out`` not
    written) when a copy has an action outside [0, K), or a reward or an observed reward outside
    the bounds; the first such copy b is returned as b for its action or reward, as
    ``OBSERVED_REFUSED - b`` for an observed reward (:data:`agents.common.kernels.OBSERVED_REFUSED`).
    As :func:`_pulled_update`: ``t`` counts the rounds completed with this one, and an ``out`` of
    another length than the number of copies (empty) asks for the update alone.
    """
    ints, n_arms = _counts_and_arms(state)
    n_rows = state.shape[0]
    for b in range(n_rows):
        if _refused(actions[b], rewards[b], n_arms):
            return b
        for k in range(n_arms):
            if mask[b, k] and not _summable(observed[b, k]):
                return OBSERVED_REFUSED - b
    for b in range(n_rows):
        for k in range(n_arms):
            if mask[b, k]:
                _add_observation(state, ints, b, k, observed[b, k])
    if out.shape[0] == n_rows:
        log_t = math.log(t + 1)
        index = np.empty(n_arms)
        for b in range(n_rows):
            out[b] = _choose_row(state, ints, b, log_t, index)
    return -1


_STATE = types.Array(types.float64, 2, "C")
_ANY_FLAGS, _ANY_VALUES = types.Array(types.bool_, 1, "A"), types.Array(types.float64, 1, "A")  # any strides
_TS_CHOOSE_ONE = SingleEnvKernel(
    ts_kernels.beta_choose_one, (types.Array(types.float64, 3, "C"), types.Array(types.uint64, 2, "C"))
)
_TS_STEP = SingleEnvKernel(
    ts_kernels.coin_step_choose,
    (
        _STATE,
        _STATE,
        types.Array(types.float64, 3, "C"),
        types.Array(types.uint64, 2, "C"),
        types.Array(types.uint64, 2, "C"),
        types.int64,
        types.float64,
        types.boolean,
    ),
)
#: One env's TS-N update with the env's own info arrays (any strides: layout "A").
_TS_OBSERVED_STEP = SingleEnvKernel(
    ts_kernels.coin_step_observed,
    (_STATE, _STATE, types.Array(types.float64, 3, "C"), types.Array(types.uint64, 2, "C"), _ANY_FLAGS, _ANY_VALUES),
)
#: N copies' UCB step as ``update`` calls it: :func:`_pulled_update` until the first batched UCB
#: is built, then its compiled entry point (:func:`_load_pulled_update`), which takes the agent's
#: own state, the int64 and float64 batches of shape (N,) that :meth:`Agent._feedback` returns
#: (C-contiguous and writable: :func:`bandit_envs._jit.kernel_array`, the form the dispatcher is
#: given too, so that the two compile one version), the round and the agent's new (N,) output array.
_pulled_update_call: Callable[..., int] = _pulled_update
_BATCH_ARMS, _BATCH_REWARDS = types.Array(types.int64, 1, "C"), types.Array(types.float64, 1, "C")
_PULLED_UPDATE_SIGNATURE = (
    _STATE,
    _BATCH_ARMS,
    _BATCH_REWARDS,
    types.int64,
    types.Array(types.int64, 1, "C"),
)
#: N copies' Thompson sampling ``act`` and ``update`` (without side observations), through the
#: compiled entry points of :func:`~agents.stochastic.thompson_kernels.beta_choose` and
#: :func:`~agents.stochastic.thompson_kernels.coin_update`: the agent's own arrays (its new output
#: array for ``act``) and the int64 and float64 batches of shape (N,) that :meth:`Agent._feedback`
#: returns (C-contiguous, as for ``_pulled_update``).
_POSTERIORS = types.Array(types.float64, 2, "C")
#: (successes, failures, shapes) and the sampling streams, as every Thompson kernel takes them.
_BETA_STATE, _SAMPLING = (
    (_POSTERIORS, _POSTERIORS, types.Array(types.float64, 3, "C")),
    types.Array(types.uint64, 2, "C"),
)
_TS_CHOOSE = SingleEnvKernel(ts_kernels.beta_choose, (_BETA_STATE[2], _SAMPLING, types.Array(types.int64, 1, "C")))
_TS_COIN_UPDATE = SingleEnvKernel(ts_kernels.coin_update, (*_BETA_STATE, _BATCH_ARMS, _BATCH_REWARDS, _SAMPLING))
#: TS-N's ``update`` (one env's other inputs and N copies), through its compiled entry point: the
#: agent's arrays, the batches of :meth:`Agent._feedback` and the (B, K) C-contiguous mask and
#: observed rewards that :meth:`Agent._side_observations` returns.
_TS_COIN_UPDATE_OBSERVED = SingleEnvKernel(
    ts_kernels.coin_update_observed,
    (
        *_BETA_STATE,
        _BATCH_ARMS,
        _BATCH_REWARDS,
        types.Array(types.bool_, 2, "C"),
        types.Array(types.float64, 2, "C"),
        _SAMPLING,
    ),
)
#: Random's batched ``act``, through the compiled entry point of :func:`~agents.common.streams.copy_integers`.
_COPY_INTEGERS = SingleEnvKernel(copy_integers, (types.Array(types.uint64, 1, "C"), types.int64, _BATCH_ARMS))
#: One env's ``rng.integers(K)`` (K < 2**32), from the generator's address: ``Random``'s one-env choice.
_ONE_INTEGER = SingleEnvKernel(integer_below, (types.uint64, types.int64))
#: One env's step kernels as ``update`` calls them: the dispatchers until the first single-env
#: agent is built, then their compiled entry points (:func:`_load_pulled_step`,
#: :func:`_load_observed_step`).
_pulled_step_call: Callable[..., int] = _pulled_step
_observed_step_call: Callable[..., int] = _observed_step
#: UCB-N's ``update`` (N copies, and one env's other inputs): the dispatcher until the first
#: batched UCB-N is built, then its compiled entry point (:func:`_load_observed_update`), which
#: takes the (B, K) C-contiguous mask and observed rewards of :meth:`Agent._side_observations`.
_observed_update_call: Callable[..., int] = _observed_update


def _load_pulled_step() -> None:
    """Make UCB's single-env step call the compiled entry point of ``_pulled_step`` (once per process)."""
    global _pulled_step_call
    if _pulled_step_call is _pulled_step:
        _pulled_step_call = entry_point(_pulled_step, (_STATE, types.int64, types.float64, types.int64))


def _load_pulled_update() -> None:
    """Make batched UCB's ``update`` call the compiled entry point of ``_pulled_update`` (once per process)."""
    global _pulled_update_call
    if _pulled_update_call is _pulled_update:
        _pulled_update_call = entry_point(_pulled_update, _PULLED_UPDATE_SIGNATURE)


def _load_observed_step() -> None:
    """Make UCB-N's single-env step call the compiled entry point of ``_observed_step`` (once per process)."""
    global _observed_step_call
    if _observed_step_call is _observed_step:
        signature = (_STATE, types.int64, types.float64, _ANY_FLAGS, _ANY_VALUES, types.int64)
        _observed_step_call = entry_point(_observed_step, signature)


def _load_observed_update() -> None:
    """Make batched UCB-N's ``update`` call the compiled entry point of ``_observed_update`` (once per process)."""
    global _observed_update_call
    if _observed_update_call is _observed_update:
        flags, values = types.Array(types.bool_, 2, "C"), types.Array(types.float64, 2, "C")
        signature = (_STATE, _BATCH_ARMS, _BATCH_REWARDS, flags, values, types.int64, types.Array(types.int64, 1, "C"))
        _observed_update_call = entry_point(_observed_update, signature)


def row_error(b: int, n_envs: int | None, what: str, value: Any, allowed: str) -> ValueError:
    """One-sentence error about copy ``b`` (or the single env)."""
    where = "" if n_envs is None else f" for copy {b}"
    return ValueError(f"{what} must be {allowed}{where}, got {quote(value)}.")


class Random(CopyStreams, Agent):
    """Pull an arm uniformly at random each round.

    The usual lower reference in regret plots. Draws come from ``self.rng`` (one env), and copy i
    of a batch seeded s from ``default_rng(s + i)`` (:class:`agents.common.streams.CopyStreams`):
    the arms a single agent seeded s + i pulls.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator.
    """

    name = "Random"
    reads_side_observations = False
    _state_bytes_per_copy = GENERATOR_BYTES

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self._seed_copies()
        self._reset_state()
        if self.n_envs is not None:
            _COPY_INTEGERS.load()
        elif self.n_arms < 2**32:
            _ONE_INTEGER.load()

    def _reset_state(self) -> None:
        """Random keeps no learning state."""

    def act(self, obs: Any = None) -> Any:
        """Draw one uniform arm per copy, each from its copy's generator (one env: ``rng.integers(K)``'s draw)."""
        if obs is not None:
            self._check_obs(obs)
        n = self.n_envs
        if n is None:
            if self.n_arms < 2**32:  # rng.integers(K) in one compiled call (integer_below: the same draws)
                arm: int = _ONE_INTEGER.call(self._bitgen_one, self.n_arms)
                return arm
            return int(self.rng.integers(self.n_arms))
        out = _EMPTY(n, _INT64)
        _COPY_INTEGERS.call(self._bitgens, self.n_arms, out)
        return out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Check the feedback (it must fit the agent), then ignore it."""
        self._check_feedback(action, reward, info)


class _UCBIndex(PackedMeanViews, Agent):
    """Shared state and index choice of UCB and UCB-N: argmax mean + sqrt(c ln t / n).

    The state is one packed float64 row per copy (layout above ``_choose_row``), and ``sums``,
    ``means`` and ``counts`` are views of it. With one env, each ``update`` is one compiled call
    that also chooses the next arm, and ``act`` returns that arm. Reading one of the state
    attributes or setting ``t`` forgets the cached arm (the caller may write to the view), so
    ``act`` then computes it afresh from the state. With N copies, UCB's ``update`` chooses the
    next arms in the same compiled call too (``_next_rows``, a new array each round), which
    ``act`` returns once.
    """

    reward_bounds = SUMMED_REWARD_BOUNDS
    reward_bounds_reason = SUMMED_REWARD_REASON
    #: Squared exploration coefficient per copy, shape (B,) (alpha^2 for UCB, 2 for UCB-N).
    _width_coef: FloatArray
    #: The packed state, shape (B, 3K + 1).
    _state: FloatArray
    #: One env: the arm ``act`` returns, chosen from the current state; -1 when not known.
    _next: int

    def _reset_state(self) -> None:
        k = self.n_arms
        self._state = np.zeros((self.batch, 3 * k + _EXTRA_COLUMNS))
        self._state[:, 3 * k] = self._width_coef
        self._t = 0
        self._arm_shape = (k,)
        self._batch_shape = (self.batch,)
        self._next = 0 if self.n_envs is None else -1  # nothing counted yet: arm 0 first
        self._next_rows = None

    def act(self, obs: Any = None) -> Any:
        """Choose the arm with the largest index in round ``t + 1`` (unplayed arms first)."""
        if obs is not None:
            self._check_obs(obs)
        chosen = self._next
        if chosen >= 0:  # one env: chosen by the last update from the current state
            return chosen
        rows = self._next_rows
        if rows is not None:  # N copies: chosen by the last update (returned once: the caller owns it)
            self._next_rows = None
            return rows
        actions = _choose_rows(self._state, self._t)
        if self.n_envs is None:
            self._next = chosen = int(actions[0])
            return chosen
        return actions


class UCB(_UCBIndex):
    r"""UCB1-style index policy that learns only from the pulled arm.

    After playing every arm once (lowest index first), round t (1-based) plays

    .. math:: I_t = \arg\max_i \bar X_i + \alpha \sqrt{\ln t / N_i},

    where :math:`\bar X_i` is the mean reward and :math:`N_i` the number of pulls of arm i; ties
    go to the lowest index. ``alpha = sqrt(2)`` is UCB1 [1]_ [R]; the privacy-budget paper uses
    the same index with ``alpha`` as a tuned parameter. UCB1 writes ln n with n = t - 1 plays so
    far; we use the round number t, as UCB-N does [2]_, so that UCB-N on an empty graph is this
    agent with ``alpha = sqrt(2)`` [P]. Rewards are any numbers in [-1e289, 1e289]
    (:data:`agents.base.SUMMED_REWARD_BOUNDS`: a sum of 2**63 of them stays finite) [P].

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    alpha
        Exploration coefficient in [1e-161, 2e153] (:data:`ALPHA_MIN`, :data:`ALPHA_MAX`: alpha^2 ln t
        must be a finite float above 0); ``sqrt(2)`` gives UCB1. In batch mode also an array of
        ``n_envs`` coefficients, one per copy (an α sweep run as one batch).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (UCB itself is deterministic).

    Attributes
    ----------
    sums, counts, means
        (B, K) reward sum, number of pulls and mean reward per arm, B = ``batch``.
    t
        Rounds completed (updates received).

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, P. Fischer, "Finite-time Analysis of the Multiarmed Bandit
       Problem", Machine Learning 47, 235-256, 2002.
    .. [2] S. Caron, B. Kveton, M. Lelarge, S. Bhagat, "Leveraging Side Observations in
       Stochastic Bandits", UAI 2012.
    """

    name = "UCB"
    reads_side_observations = False  # the pulled arm's reward only

    def __init__(
        self,
        n_arms: int,
        alpha: float | npt.ArrayLike = SQRT2,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.alpha = per_copy_float("alpha", alpha, self.n_envs, low=0.0, low_open=True)
        _check_alpha_range(self.alpha)
        self._width_coef = np.broadcast_to(np.square(self.alpha), (self.batch,)).astype(np.float64)
        self._reset_state()
        # Subclasses that choose otherwise (SM-UCB) have the update alone computed.
        self._choose_in_update = type(self).act is _UCBIndex.act
        if self.n_envs is None:
            _load_pulled_step()
        else:
            _load_pulled_update()

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add ``reward`` to the pulled arm's mean; side observations in ``info`` are ignored."""
        n = self.n_envs
        if n is not None:  # N copies: one compiled call, which also chooses the next arms
            if (
                type(action) is _NDARRAY
                and type(reward) is _NDARRAY
                and (action.dtype is _INT64 or action.dtype == _INT64)  # numba-made arrays: an equal dtype
                and (reward.dtype is _FLOAT64 or reward.dtype == _FLOAT64)
                and action.shape == reward.shape == self._batch_shape
                and info is None
                and action.flags.carray  # the one form the kernels are compiled for (bandit_envs._jit.kernel_array)
                and reward.flags.carray
            ):  # the usual batch, which Agent._feedback returns as it is (its first case, inlined)
                a, rewards = action, reward
            else:
                a, rewards = self._feedback(action, reward, info, check_values=False)
            choose = self._choose_in_update
            out = _EMPTY(n if choose else 0, _INT64)
            t = self._t + 1
            bad = _pulled_update_call(self._state, a, rewards, t, out)
            if bad >= 0:
                raise kernel_error(self, a, rewards, bad)
            self._t = t
            self._next_rows = out if choose else None
            return
        tr, ta = type(reward), type(action)
        if (tr is float or tr is _NP_FLOAT64) and (ta is int or ta is _NP_INT64) and self.n_envs is None:
            r = reward if 0 <= action < self.n_arms else None  # the usual step: Agent._scalar_feedback inlined
        else:
            r = self._scalar_feedback(action, reward)
        if r is not None:  # one env, plain scalars: one compiled call, which also chooses the next arm
            if info is not None:
                self._check_info(info)
            t = self._t + 1
            chosen = _pulled_step_call(self._state, action, r, t)
            if chosen >= 0:
                self._t = t
                self._next = chosen
                return
        a, rewards = self._feedback(action, reward, info, check_values=False)  # one env's other inputs
        bad = _pulled_update(self._state, a, rewards, self._t + 1, np.empty(0, _INT64))
        if bad >= 0:
            raise kernel_error(self, a, rewards, bad)
        self._t += 1
        self._next = -1

    def __repr__(self) -> str:
        return f"UCB(n_arms={self.n_arms}, alpha={self.alpha}, n_envs={self.n_envs}, seed={self.seed})"


class UCBN(_UCBIndex):
    r"""UCB-N: UCB on all observations, including side observations of a feedback graph.

    Caron et al. [1]_, Algorithm 1 [V-paper]. Round t (1-based) plays

    .. math:: I_t = \arg\max_i \bar X_i + \sqrt{2 \ln t / O_i},

    with :math:`\sqrt{1/0} = \infty` (unobserved arms first, lowest index; ties to the lowest
    index), where :math:`\bar X_i` is the mean of all observations of arm i and :math:`O_i` their
    number. After the step, every arm k in ``info["observed_mask"]`` (the closed neighbourhood of
    the pulled arm) gets :math:`O_k \mathrel{+}= 1`, and :math:`X_k` =
    ``info["observed_rewards"][k]`` joins its mean (kept as sum / O_k). On the empty graph this
    is :class:`UCB` with ``alpha = sqrt(2)``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    n_envs, seed
        As :class:`UCB` (UCB-N itself is deterministic: ``seed`` only seeds ``rng``).

    Attributes
    ----------
    sums, counts, means
        (B, K) sum, number O_i and mean of the observations of each arm.
    t
        Rounds completed (updates received).

    References
    ----------
    .. [1] S. Caron, B. Kveton, M. Lelarge, S. Bhagat, "Leveraging Side Observations in
       Stochastic Bandits", UAI 2012, pp. 142-151. arXiv:1210.4839.
    """

    name = "UCB-N"

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self._width_coef = np.full(self.batch, 2.0)
        self._reset_state()
        # A subclass that chooses otherwise has the update alone computed (as UCB's).
        self._choose_in_update = type(self).act is _UCBIndex.act
        if self.n_envs is None:
            _load_observed_step()
        else:
            _load_observed_update()

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add every observed reward (``observed_mask``, ``observed_rewards`` in ``info``)."""
        r = None if self.n_envs is not None else self._scalar_feedback(action, reward)
        if r is not None and type(info) is dict:  # one env, the env's own info: one compiled call
            mask, observed = info.get("observed_mask"), info.get("observed_rewards")
            best = info.get("optimal_action")
            if (
                type(mask) is np.ndarray
                and (mask.dtype is _BOOL or mask.dtype == _BOOL)  # numba-made arrays: an equal dtype
                and mask.shape == self._arm_shape
                and type(observed) is np.ndarray
                and (observed.dtype is _FLOAT64 or observed.dtype == _FLOAT64)
                and observed.shape == self._arm_shape
                and (best is None or ((type(best) is int or type(best) is np.int64) and best < self.n_arms))
            ):
                t = self._t + 1
                chosen = _observed_step_call(self._state, action, r, mask, observed, t)
                if chosen >= 0:
                    self._t = t
                    self._next = chosen
                    return
        a, rewards, mask, observed = self._observed_feedback(action, reward, info)
        n = self.n_envs
        out = _EMPTY(n if n is not None and self._choose_in_update else 0, _INT64)  # empty: the update alone
        t = self._t + 1
        bad = _observed_update_call(self._state, a, rewards, mask, observed, t, out)
        if bad != -1:
            raise kernel_error(self, a, rewards, bad, mask, observed)
        self._t = t
        self._next = -1
        self._next_rows = out if out.shape[0] else None  # N copies: the next arms, chosen in the same call


class ThompsonSampling(Agent):
    r"""Beta-Bernoulli Thompson sampling with the r-coin trick; TS-N with side observations.

    Each round draws :math:`\theta_i \sim \mathrm{Beta}(S_i + 1, F_i + 1)` (Beta(1, 1) prior) and
    plays :math:`\arg\max_i \theta_i` (the first arm on an exact tie, an event of probability
    about 0). Each observation :math:`r \in [0, 1]` is binarised by a fresh coin
    :math:`b \sim \mathrm{Bernoulli}(r)` (exactly r for Bernoulli rewards) and counted in S
    (b = 1) or F (b = 0): Agrawal & Goyal [1]_ [R]. With ``side_observations=True`` this is
    TS-N [2]_ [R]: every arm revealed in ``info["observed_mask"]`` is updated with its own coin
    on ``info["observed_rewards"]``, in arm order.

    Draws: each copy has its own sampling stream (:mod:`agents.common.sampling`: SFC64 words, ziggurat
    normals, Marsaglia & Tsang gammas, Beta = X/(X + Y)); copy i of an agent with ``seed=s`` and
    ``n_envs=N`` draws exactly as a single agent with ``seed=s + i``, so it makes the same
    choices on the same rewards. Per round: a round of two gammas per arm, in arm order (the
    first word of every gamma, then the further words of the few that need them), then one
    uniform per coin. The kernels are compiled (:mod:`agents.stochastic.thompson_kernels`, whose
    :class:`~agents.stochastic.thompson_kernels.ThompsonReference` is one copy in plain Python).

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    side_observations
        ``False``: learn from the pulled arm only (TS); ``True``: from every revealed arm (TS-N).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of copy 0's sampling stream (copy i: seed + i); ``None`` draws one from the
        operating system at every reset (kept in :attr:`copy_seeds`).

    Attributes
    ----------
    successes, failures
        (B, K) coin counts S and F per arm (copies; the agent's own arrays are private).

    References
    ----------
    .. [1] S. Agrawal, N. Goyal, "Analysis of Thompson Sampling for the Multi-armed Bandit
       Problem", COLT 2012. arXiv:1111.1797.
    .. [2] A. C. Y. Tossou, C. Dimitrakakis, D. Dubhashi, "Thompson Sampling for Stochastic
       Bandits with Graph Feedback", AAAI 2017. arXiv:1701.04238.
    """

    name = "TS"
    reads_side_observations = False  # with side_observations=True (TS-N), True on the instance
    copy_axis_last = ("_streams", "_shapes")  # the (4, B) sampling-stream states, the (4, K, B) gamma constants
    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "the r-coin of Thompson sampling needs it"
    _state_bytes_per_arm = 8 * (2 + ts_kernels.SHAPE_WORDS)

    def __init__(
        self,
        n_arms: int,
        *,
        side_observations: bool = False,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        if not isinstance(side_observations, bool | np.bool_):
            raise TypeError(
                f"side_observations must be True or False, got {describe(side_observations, typed=False)} "
                f"({type(side_observations).__name__})."
            )
        self.side_observations = bool(side_observations)
        if self.side_observations:
            self.name = "TS-N"
        # TS-N reads them; so does a subclass's own update (Agent.__init_subclass__)
        self.reads_side_observations = self.side_observations or type(self).reads_side_observations
        self._reset_state()
        if self.n_envs is None:
            _TS_CHOOSE_ONE.load()
            if self.side_observations:
                _TS_OBSERVED_STEP.load()
            else:
                _TS_STEP.load()
        else:
            _TS_CHOOSE.load()
            (_TS_COIN_UPDATE_OBSERVED if self.side_observations else _TS_COIN_UPDATE).load()

    def _reset_state(self) -> None:
        self._copy_seeds = sampling.copy_seeds(self.seed, self.batch)
        self._streams = sampling.new_streams(self._copy_seeds)
        self._successes, self._failures, self._shapes = ts_kernels.new_posteriors(self.batch, self.n_arms)
        self._batch_shape = (self.batch,)
        #: One env: the arm chosen by the last update for the next round (-1: none), and the stream's
        #: state before that choice's draws (see :func:`~agents.stochastic.thompson_kernels.coin_step_choose`).
        self._next = -1
        self._stream_mark = self._streams.copy()

    def _forget_choice(self) -> None:
        """Unmake the draws of a choice the last update made and no ``act`` returned (before any other draw)."""
        if self._next >= 0:
            self._streams[:] = self._stream_mark
            self._next = -1

    @property
    def successes(self) -> FloatArray:
        """(B, K) coins equal to 1 per arm."""
        return self._successes.copy()

    @property
    def failures(self) -> FloatArray:
        """(B, K) coins equal to 0 per arm."""
        return self._failures.copy()

    @property
    def copy_seeds(self) -> list[int]:
        """The seed of each copy's sampling stream: copy i of an agent seeded with s has seed s + i."""
        return list(self._copy_seeds)

    def act(self, obs: Any = None) -> Any:
        """Sample the posteriors and play the argmax per copy."""
        if obs is not None:
            self._check_obs(obs)
        n = self.n_envs
        if n is None:  # one env: the arm the last update chose, or one call of the compiled entry point
            arm: int = self._next
            if arm >= 0:
                self._next = -1
                return arm
            arm = _TS_CHOOSE_ONE.call(self._shapes, self._streams)
            return arm
        out = _EMPTY(n, _INT64)  # allocated here: cheaper than an array returned by compiled code
        _TS_CHOOSE.call(self._shapes, self._streams, out)
        return out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Toss one r-coin per observation and add it to S or F (one env, TS: and choose the next arm)."""
        if self.side_observations:
            if self.n_envs is None and type(info) is dict and self._observed_step(action, reward, info):
                return
            # every value checked by the compiled call, which changes nothing when it refuses one
            a, rewards, mask, observed = self._observed_feedback(action, reward, info)
            bad = _TS_COIN_UPDATE_OBSERVED.call(
                self._successes, self._failures, self._shapes, a, rewards, mask, observed, self._streams
            )
            if bad != -1:
                raise kernel_error(self, a, rewards, bad, mask, observed)
        elif self.n_envs is not None:  # N copies: one call of the compiled entry point
            if (
                type(action) is _NDARRAY
                and type(reward) is _NDARRAY
                and (action.dtype is _INT64 or action.dtype == _INT64)  # numba-made arrays: an equal dtype
                and (reward.dtype is _FLOAT64 or reward.dtype == _FLOAT64)
                and action.shape == reward.shape == self._batch_shape
                and info is None
                and action.flags.carray  # the one form the kernels are compiled for (bandit_envs._jit.kernel_array)
                and reward.flags.carray
            ):  # the usual batch, which Agent._feedback returns as it is (its first case, inlined)
                a, rewards = action, reward
            else:
                a, rewards = self._feedback(action, reward, info, check_values=False)
            bad = _TS_COIN_UPDATE.call(self._successes, self._failures, self._shapes, a, rewards, self._streams)
            if bad >= 0:
                raise kernel_error(self, a, rewards, bad)
        else:
            tr, ta = type(reward), type(action)
            value = (
                reward
                if (tr is float or tr is _NP_FLOAT64) and (ta is int or ta is _NP_INT64)
                else self._plain_value(action, reward)  # an int reward, say: a float if it fits
            )
            if value is not None and (info is None or self._plain_value(action, value) is not None):
                # one env, plain scalars: one compiled call, which refuses (changing nothing) an action
                # outside [0, K) or a reward outside [0, 1]; the checked path then says which. With an
                # info, the range is checked first, so that a bad action is named before a bad info.
                if info is not None:
                    self._check_info(info)
                try:  # the coin, then the next round's choice (returned by act)
                    chosen = _TS_STEP.call(
                        self._successes,
                        self._failures,
                        self._shapes,
                        self._streams,
                        self._stream_mark,
                        action,
                        value,
                        self._next >= 0,
                    )
                except OverflowError:  # an int action beyond int64: not an arm
                    chosen = -1
                if chosen >= 0:
                    self._next = chosen
                    return
            a, rewards = self._feedback(action, reward, info, check_values=False)  # one env's other inputs
            self._forget_choice()
            bad = ts_kernels.coin_update(self._successes, self._failures, self._shapes, a, rewards, self._streams)
            if bad >= 0:
                raise kernel_error(self, a, rewards, bad)

    def _observed_step(self, action: Any, reward: Any, info: dict[str, Any]) -> bool:
        """TS-N with one env, plain scalars and the env's info arrays: one compiled call; False if not taken.

        The same checks as the general path (the action and reward by :meth:`_scalar_feedback`, the
        info's shapes and optimal action by :meth:`_check_info`, every revealed reward in [0, 1] by
        the kernel, which changes nothing when it refuses) and the same coins
        (:func:`~agents.stochastic.thompson_kernels.coin_step_observed`). False, with nothing
        changed, for anything else; the general path then learns or says what is wrong.
        """
        if self._scalar_feedback(action, reward) is None:
            return False
        mask, observed = info.get("observed_mask"), info.get("observed_rewards")
        if (
            type(mask) is not _NDARRAY
            or type(observed) is not _NDARRAY
            or not (mask.dtype is _BOOL or mask.dtype == _BOOL)
            or not (observed.dtype is _FLOAT64 or observed.dtype == _FLOAT64)
        ):
            return False
        self._check_info(info)  # (K,) shapes and the optimal action, before the kernel reads the arrays
        done: int = _TS_OBSERVED_STEP.call(self._successes, self._failures, self._shapes, self._streams, mask, observed)
        return done < 0

    def __repr__(self) -> str:
        return (
            f"ThompsonSampling(n_arms={self.n_arms}, "
            f"side_observations={self.side_observations}, n_envs={self.n_envs}, "
            f"seed={self.seed})"
        )


def _check_alpha_range(alpha: float | FloatArray) -> None:
    """Refuse a UCB ``alpha`` (already > 0 and finite) whose square times ln t is not a finite float above 0.

    Outside [:data:`ALPHA_MIN`, :data:`ALPHA_MAX`], c = alpha^2 rounds to 0 (the greedy alpha = 0,
    which is refused) or c ln t overflows to inf (every index inf: arm 0 for ever).
    """
    values = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if ALPHA_MIN <= values.min() and values.max() <= ALPHA_MAX:
        return
    i = int(np.flatnonzero((values < ALPHA_MIN) | (values > ALPHA_MAX))[0])
    where = "alpha" if np.ndim(alpha) == 0 else f"alpha[{i}]"
    raise ValueError(
        f"{where} must be a number in [{ALPHA_MIN:g}, {ALPHA_MAX:g}] (the index multiplies alpha² by ln t, "
        f"which must be a finite float other than 0), got {float(values[i])!r}."
    )


def per_copy_float(
    name: str,
    value: Any,
    n_envs: int | None,
    *,
    low: float,
    low_open: bool = False,
    high: float | None = None,
    high_open: bool = False,
) -> float | FloatArray:
    """A float, or in batch mode optionally an (n_envs,) array of floats, each checked (in [low, high]).

    Bools are refused, also inside a list (``[True, 1.0]``, which numpy casts to numbers), and so
    are masked arrays (whose masked entries numpy would read).
    """
    try:
        ndim = np.ndim(value)
    except (TypeError, ValueError):  # e.g. ragged nested lists: refused by real_array below
        ndim = -1
    if ndim == 0:
        return check_float(name, value, low=low, low_open=low_open, high=high, high_open=high_open)
    if n_envs is None:
        raise ValueError(f"{name} must be a single number when n_envs is None, got {describe(value)}.")
    allowed = f"a number or an array of n_envs={n_envs} numbers"
    odd = not_numbers(value)  # a masked array, a list holding a bool
    if odd is not None:
        raise TypeError(f"{name} must be {allowed}, got {odd}.")
    arr = real_array(name, value, allowed, booleans=False)
    if arr.shape != (n_envs,):
        raise ValueError(f"{name} must be {allowed}, got shape {arr.shape}.")
    for i, v in enumerate(arr.tolist()):
        check_float(f"{name}[{i}]", v, low=low, low_open=low_open, high=high, high_open=high_open)
    return arr.astype(np.float64)  # a copy: never the caller's array
