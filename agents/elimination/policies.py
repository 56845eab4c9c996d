"""Elimination agents for graph feedback and privacy: GAP, GAPU, DPSE, AAE, AlphaSample.

Each agent is a compiled per-round state machine (``agents.elimination.kernels``, which also documents
the layout of the state arrays). The step API drives it one round at a time; the table simulator
:meth:`EliminationAgent.simulate` drives the same state machine an epoch at a time
(``agents.elimination.drivers``), with the same decisions and the same noise. Plain-Python versions of
GAP, DPSE and AAE that make the same decisions, written after the papers' algorithms, are in
:mod:`agents.elimination.reference`.

Status tags in the docstrings: [P] marks our engineering choices (not claimed to be the paper's),
[R] constants reconstructed from secondary descriptions of a paper, [V-code] constants checked
against public implementations.
"""

from __future__ import annotations

import math
import numbers
from abc import abstractmethod
from collections.abc import Iterator
from copy import copy as shallow_copy
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt
from numba import typeof
from numba.core import types as nb_types

from agents.base import (
    Agent,
    PrivateAgent,
    SingleEnvKernel,
    _as_array,
    as_float,
    check_choice,
    check_float,
    check_int,
    check_values,
    describe,
    entry_point,
    overflowed,
    value_error,
)
from agents.common.kernels import revealed_row
from agents.common.tables import BlockTable
from agents.elimination import drivers, kernels
from bandit_envs._jit import read_only_view
from bandit_envs.core import generator_addresses
from bandit_envs.feedback_graphs import as_adjacency, closed_neighbourhoods
from bandit_envs.privacy._checks import check_epsilon, laplace_tail_delta
from bandit_envs.privacy.lattice import check_sampler, sum_grid
from bandit_envs.privacy.streams import noise_generator
from bandit_envs.rewards import RewardModel

#: Compiled entry points of the step kernels, by (kernel, argument kinds): see ``EliminationAgent._entry``.
_ENTRY_POINTS: dict[tuple[Any, ...], Any] = {}
#: One env's round of side observations as a (1, K) row, checked (``EliminationAgent._update_one``).
_REVEALED_ROW = SingleEnvKernel(
    revealed_row,
    (
        nb_types.Array(nb_types.boolean, 1, "A"),
        nb_types.Array(nb_types.float64, 1, "A"),
        nb_types.int64,
        nb_types.float64,
        nb_types.float64,
        nb_types.float64,
        nb_types.float64[:, ::1],
    ),
)
_BOOL, _FLOAT64 = np.dtype(np.bool_), np.dtype(np.float64)


def _clone(rng: np.random.Generator) -> np.random.Generator:
    """A new generator in ``rng``'s state (the same stream from here on, drawn independently)."""
    other = np.random.Generator(type(rng.bit_generator)())
    other.bit_generator.state = rng.bit_generator.state
    return other


def _kinds(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """What fixes the numba type of each value: its Python type, an array's dtype, rank and layout, a tuple's items."""
    return tuple(
        (type(v), v.dtype.str, v.ndim, v.flags.c_contiguous)
        if isinstance(v, np.ndarray)
        else (_kinds(v) if isinstance(v, tuple) else type(v))
        for v in values
    )


@dataclass
class SimulationResult:
    """What :meth:`EliminationAgent.simulate` returns."""

    total_regret: float
    checkpoint_regret: npt.NDArray[np.float64]
    actions: npt.NDArray[np.int16] | npt.NDArray[np.int64] | None


class EliminationAgent(Agent):
    """Shared machinery: state arrays, the step API and the compiled table simulator.

    ``side_observations`` says whether the agent learns from the neighbours' rewards that the
    env reveals (``info["observed_rewards"]``) or only from the pulled arm's reward.
    """

    side_observations: ClassVar[bool] = False
    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "the confidence bounds of {name} assume it"
    _state_bytes_per_arm = 48
    #: Compiled drivers of the agent's state machine (:mod:`agents.elimination.drivers`).
    _act_batch: ClassVar[Any]
    _update_batch: ClassVar[Any]
    _run: ClassVar[Any]
    #: Whether ``_act_batch`` or ``_update_batch`` draw from the generators (else they are passed None).
    _steps_draw: ClassVar[bool] = True
    #: Whether ``_run`` draws from the generator (else it is passed None, as the step kernels are).
    _run_draws: ClassVar[bool] = True
    #: The table run for a table of rewards where it differs from ``_run`` (compiled with another loop), else None.
    _run_on_rewards: ClassVar[Any] = None
    #: The copies' generators, in copy order (``(rng,)`` for one env); see :meth:`_seed_copies`.
    _copy_rngs: tuple[np.random.Generator, ...]

    def __init__(self, n_arms: int, horizon: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self._state: tuple[Any, ...] = ()
        self._params: tuple[Any, ...] = ()
        #: Per step kernel (act, update): (state, params, generator, compiled entry) of the last lookup.
        self._entries: list[tuple[Any, Any, Any, Any] | None] = [None, None]
        #: (generators, their addresses) of the last :meth:`_bitgens`: what the compiled kernels draw from.
        self._bitgen_cache: tuple[Any, npt.NDArray[np.uint64]] | None = None

    #: The lattice grid of the released noisy means' sums (0.0: float sampler or no noise).
    _grid: float = 0.0

    @property
    def grid(self) -> float:
        """The grid the private agents' released sums are multiples of (0.0: float sampler, or no noise)."""
        return self._grid

    def __getstate__(self) -> dict[str, Any]:
        """The state for :mod:`pickle` and :func:`copy.deepcopy`, without the compiled entry points.

        Entry points are compiled closures of this process (they cannot be pickled); a copy looks
        them up again at its first step. Everything else, the generator included, is copied.
        """
        state = dict(self.__dict__)
        state["_entries"] = [None, None]
        state["_bitgen_cache"] = None  # addresses in this process's memory, of these generator objects
        return state

    def _stream(self, seed: int | None) -> np.random.Generator:
        """The generator a single agent seeded ``seed`` draws from (its ``rng``): ``default_rng(seed)`` here."""
        return np.random.default_rng(seed)

    def _seed_copies(self) -> None:
        """(Re)build the copies' generators: copy i of a batch seeded s gets ``_stream(s + i)``; one env uses ``rng``.

        So copy i plays exactly as a single agent seeded ``s + i`` (docs/design.md, "Agents", Seeds);
        with ``seed=None`` every copy gets fresh entropy. Call it after ``rng`` is set.
        """
        if self.n_envs is None:
            self._copy_rngs = (self.rng,)
        elif self.seed is None:
            self._copy_rngs = tuple(self._stream(None) for _ in range(self.n_envs))
        else:
            self._copy_rngs = tuple(self._stream(self.seed + i) for i in range(self.n_envs))
        self._bitgen_cache = None

    def _copy_rng(self, copy: int) -> np.random.Generator:
        """Copy ``copy``'s generator (``rng`` for one env)."""
        return self.rng if self.n_envs is None else self._copy_rngs[copy]

    def _bitgens(self) -> npt.NDArray[np.uint64]:
        """The addresses of the copies' generators' C interfaces, in copy order (``rng``'s for one env).

        What the compiled kernels draw from (:mod:`agents.elimination.kernels`): handing numba a
        Generator costs about 6 us a call (it reads the generator's C interface through ctypes),
        an address nothing. Computed again whenever ``rng`` (one env) or the copies' generators
        are other objects than last time; the cache holds the generators themselves, so an
        address is never used after its generator is gone.
        """
        source: Any = self.rng if self.n_envs is None else self._copy_rngs
        cached = self._bitgen_cache
        if cached is None or cached[0] is not source:
            cached = self._bitgen_cache = (source, generator_addresses((source,) if self.n_envs is None else source))
        return cached[1]

    def _step_rngs(self) -> npt.NDArray[np.uint64] | None:
        """What the step kernels take: :meth:`_bitgens`, or None where they draw nothing (:attr:`_steps_draw`)."""
        return self._bitgens() if self._steps_draw else None

    def act(self, obs: Any = None) -> Any:
        """Next arm of every copy."""
        self._check_obs(obs)
        out = np.empty(self.batch, dtype=np.int64)
        self._entry(type(self)._act_batch, 0)(self._state, self._params, self._step_rngs(), out)
        return self._out(out)

    def _entry(self, kernel: Any, which: int) -> Any:
        """``kernel``'s compiled entry point for this agent's argument types (its dispatcher as a fallback).

        Calling a numba dispatcher types every argument at every call, about 0.1-0.2 us per
        argument, as much as the step itself. The entry point is looked up once per state,
        parameters and generators' addresses (they change only at reset, or when a user replaces
        the generator) and kept in a cache shared by every agent with the same argument types.
        """
        rngs = self._step_rngs()
        cached = self._entries[which]
        if cached is not None and cached[0] is self._state and cached[1] is self._params and cached[2] is rngs:
            return cached[3]
        key = (kernel, _kinds(self._state), _kinds(self._params), rngs is None)
        entry = _ENTRY_POINTS.get(key)
        if entry is None:
            entry = _ENTRY_POINTS[key] = entry_point(kernel, self._signature(kernel, which))
        self._entries[which] = (self._state, self._params, rngs, entry)
        return entry

    def _signature(self, kernel: Any, which: int) -> tuple[Any, ...]:
        """The numba types of ``kernel``'s arguments as :meth:`act` (0) or :meth:`update` (1) pass them."""
        head = (typeof(self._state), typeof(self._params))
        rngs = typeof(self._step_rngs())  # none, or uint64[::1]
        if which == 0:
            return (*head, rngs, nb_types.int64[::1])
        return (*head, nb_types.int64[::1], nb_types.float64[:, ::1], rngs)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Feed the step's reward (and the revealed neighbours' rewards if the agent uses them).

        Every reward the agent reads (the pulled arm's, and with side observations every reward
        where ``info["observed_mask"]`` is True) must be finite and in [0, 1]; nothing is read as
        "not observed" because it is NaN.
        """
        if self.n_envs is None and (info is None or type(info) is dict) and self._update_one(action, reward, info):
            return
        a, r = self._feedback(action, reward, info)
        if self.side_observations:
            mask, seen = self._side_observations(info)
            self._check_revealed(a, mask)
            rows = np.where(mask, seen, np.nan)
        else:
            rows = np.full((self.batch, self.n_arms), np.nan)
        rows[np.arange(self.batch), a] = r
        fits = a.dtype == np.int64 and a.flags.c_contiguous and rows.flags.c_contiguous
        self._learn(a, rows, mask if self.side_observations else None, fits)

    def _learn(self, a: npt.NDArray[np.int64], rows: npt.NDArray[np.float64], mask: Any, fits: bool = True) -> None:
        """The update kernel on checked actions and (B, K) rows, then what it leaves to do at an epoch's end.

        ``mask`` is the env's revealed arms ((B, K), or (K,) for one env), for GAP's refusal of a
        round that reveals too few; ``fits``: the arrays have the entry point's types (else the
        dispatcher types them).
        """
        kernel = type(self)._update_batch
        if fits:
            kernel = self._entry(kernel, 1)
        result = kernel(self._state, self._params, a, rows, self._step_rngs())
        if result:  # None or 0 for a round that ends no epoch
            if result < 0:  # GAP's kernel refused the revealed arms and changed nothing
                self._refuse_revealed(a, mask.reshape(self.batch, self.n_arms))
            self._end_epochs()

    def _update_one(self, action: Any, reward: Any, info: dict[str, Any] | None) -> bool:
        """One env's usual round (plain action and reward, the env's info dict or None), checked and learnt cheaply.

        The same checks and the same state change as the general path of :meth:`update`, which
        costs about four times as much in numpy calls on one env's K entries: here the revealed
        rewards are checked and laid out as the update kernel's row in one compiled pass
        (:func:`agents.common.kernels.revealed_row`). Returns False, having changed nothing, for
        anything else (other types, a revealed reward refused, the pulled arm not revealed):
        :meth:`update` then takes the general path, which raises its sentence or learns.
        """
        value = self._scalar_feedback(action, reward)
        if value is None or (info is None and self.side_observations):  # the general path says what is missing
            return False
        if info is not None:
            self._check_info(info)  # shapes and the optimal action, as the general path checks them
        k = self.n_arms
        revealed: Any = None  # the env's mask, for GAP's refusal of a round that reveals too few arms
        if info is not None and self.side_observations:
            revealed = mask = info.get("observed_mask")
            seen = info.get("observed_rewards")
            if (
                type(mask) is not np.ndarray
                or type(seen) is not np.ndarray
                or mask.dtype != _BOOL
                or seen.dtype != _FLOAT64
                or not mask[action]
            ):
                return False
            rows = np.empty((1, k))
            _REVEALED_ROW.load()
            if _REVEALED_ROW.call(mask, seen, action, value, self._plain_low, self._plain_high, rows) >= 0:
                return False
        else:
            rows = np.full((1, k), np.nan)
            rows[0, action] = value
        self._learn(np.array([action], dtype=np.int64), rows, revealed)
        return True

    def _end_epochs(self) -> None:
        """What the update kernel left to do at the end of copies' epochs (its result was True); nothing here."""

    def _check_revealed(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> None:
        """Check the arms the env revealed (``mask``, (B, K)) against what the agent assumes; nothing by default."""

    def _refuse_revealed(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> None:
        """Raise for revealed arms (``mask``) that the update kernel refused (it returned -1); only GAP's does."""
        raise RuntimeError(f"{self.name}'s update kernel refused the round's revealed arms.")

    def simulate(
        self,
        table: npt.NDArray[np.float64] | BlockTable,
        feedback_graph: npt.NDArray[np.bool_],
        gaps: npt.NDArray[np.float64],
        *,
        law: RewardModel | None = None,
        override: tuple[int, int, float] | None = None,
        checkpoints: npt.NDArray[np.int64] | None = None,
        record_actions: bool = False,
        copy: int = 0,
    ) -> SimulationResult:
        """Play copy ``copy`` from its current state to the end of ``table`` (compiled, an epoch at a time).

        The result, the arm sequence and the agent's state and generator afterwards are exactly
        those of calling :meth:`act` and :meth:`update` round after round on the same rewards
        (with every revealed reward when the agent uses side observations).

        Parameters
        ----------
        table
            (T, K) rewards, or uniforms when ``law`` is given (rewards are then computed lazily,
            only where read; :mod:`bandit_envs.rewards` maps uniforms to rewards exactly as the env
            does): an array, or a :class:`agents.common.tables.BlockTable` such as
            :class:`agents.common.tables.UniformTable` that produces its rows in blocks, so memory stays
            flat in T. Every entry the agent reads must be finite and in [0, 1], as the step API
            requires of every reward it reads (the privacy and confidence bounds assume it; a NaN
            is not read as "not observed").
        feedback_graph
            K×K adjacency of the env (no self loops).
        gaps
            Per-arm regret μ* − μ_k of the env (true expected rewards): finite and non-negative.
        override
            ``(t, k, v)`` replaces entry r_{t,k} by the reward ``v`` (a neighbouring reward sequence).
        law
            The arms' reward laws when ``table`` holds uniforms (``None``: it holds rewards).
        checkpoints
            1-based round counts at which to record the cumulative regret.
        record_actions
            Keep the arm sequence (``SimulationResult.actions``).
        copy
            Which copy of a batched agent to play.

        Raises
        ------
        ValueError, TypeError
            One sentence for a table entry read by the agent that is not finite or outside
            [0, 1] (with its round and arm; checked by the compiled loop as it reads the entry,
            and the agent's state and generator are then restored), a block of another width,
            an ``override`` outside the table or with such a value, checkpoints that are not
            increasing round counts in [1, T], ``gaps`` of another shape or with a negative or
            non-finite entry, a table of more than 2**53 rows, or a bad ``copy``. For a copy that
            has played rounds already (the table's rows are rounds counted from 0): a table with
            fewer rows than those, or checkpoints at or before them. A table of long doubles with
            an entry outside [0, 1] that a float64 would round into it.
        """
        # A short run's fixed cost is mostly Python (about 25 us, 5-10% of a run of 10**5 rounds
        # at K = 10 with the caches cold after the table's rows): the usual arguments take the
        # shortest tests.
        if type(copy) is not int or not 0 <= copy < self.batch:
            copy = check_int("copy", copy, minimum=0)
            if copy >= self.batch:
                raise ValueError(f"copy must be a copy index in [0, {self.batch - 1}], got {copy}.")
        if record_actions is not False and record_actions is not True and not isinstance(record_actions, np.bool_):
            raise TypeError(f"record_actions must be True or False, got {describe(record_actions)}.")
        n_rounds, blocks = self._table_blocks(table)
        observes = self._observes(feedback_graph)
        law_tuple = self._law(law)
        override_tuple = self._override(override, n_rounds)
        ck = _simulate_checkpoints(checkpoints, n_rounds)
        gap_values = _simulate_gaps(gaps, self.n_arms)
        ck_out = np.zeros(ck.shape[0])
        actions: npt.NDArray[np.int16] | npt.NDArray[np.int64]
        if self.n_arms <= 32767:  # np.iinfo(np.int16).max
            # not recording: an empty array, which the kernels never write (they record into an array of T rows)
            actions = np.zeros(n_rounds, dtype=np.int16) if record_actions else _NOT_RECORDED
        else:  # arm indices that do not fit in int16
            actions = np.zeros(n_rounds if record_actions else 0, dtype=np.int64)
        start = self._rounds_played(copy)
        if start and (n_rounds < start or (ck.size and ck[0] <= start)):  # a run that goes on: rows are rounds from 0
            played = f"the {start:,} rounds copy {copy} has played"
            if n_rounds < start:
                raise ValueError(
                    f"table must have a row for each of {played} and those to play, got {n_rounds:,} rows."
                )
            raise ValueError(f"checkpoints must be round counts after {played}, got {int(ck[0]):,}.")
        # The kernel checks every entry it reads (no extra pass over the table); on a bad one it
        # stops, and the state and generator are put back as they were.
        rng = self._copy_rng(copy)
        saved = [array.copy() for array in self._state], rng.bit_generator.state
        bitgens = self._bitgens() if self._run_draws else None
        bad = _NO_BAD_ENTRY.copy()
        total = 0.0
        t0 = 0
        cls = type(self)  # the class's kernels (read through an instance, a dispatcher makes a bound method)
        run = cls._run if law_tuple is not None or cls._run_on_rewards is None else cls._run_on_rewards
        try:
            for block in blocks:
                rows = block.shape[0]
                while t0 + rows > start:
                    total = run(
                        self._state,
                        self._params,
                        copy,
                        observes,
                        block,
                        t0,
                        n_rounds,
                        law_tuple,
                        override_tuple,
                        gap_values,
                        ck,
                        ck_out,
                        actions,
                        total,
                        bitgens,
                        bad,
                    )
                    if bad[0] >= 0:
                        value = float(block[bad[0] - t0, bad[1]])
                        where = f" at round {bad[0]}, arm {bad[1]}"
                        if law is None:  # the rewards the agent reads: the step API's rule and message
                            raise value_error(
                                "table", value, self.reward_bounds, self._bounds_reason(), where, plural=True
                            )
                        raise value_error(
                            "table", value, (0.0, 1.0), "uniforms that law maps to rewards", where, plural=True
                        )
                    if not self._resume(copy):
                        break
                t0 += rows
            if t0 != n_rounds:
                raise ValueError(f"table's blocks must make {n_rounds} rows (its shape), got {t0}.")
        except BaseException:  # a bad entry or block, or an interruption: the agent is as it was
            for array, copied in zip(self._state, saved[0], strict=True):
                array[...] = copied
            rng.bit_generator.state = saved[1]
            raise
        return SimulationResult(float(total), ck_out, actions if record_actions else None)

    def _resume(self, copy: int) -> bool:
        """After copy ``copy``'s table run returned: do what it stopped for and say whether to run on (never here)."""
        return False

    def _observes(self, feedback_graph: Any) -> npt.NDArray[np.bool_]:
        """Row a: the arms pulling a reveals to the agent (N(a) with side observations, else a).

        The checked graph is kept for the next call with an equal boolean array (experiments
        simulate thousands of runs on one graph; checking it is most of a short run's overhead),
        and :func:`_check_graph` keeps the last graph any agent checked for the next agent.
        """
        cached = getattr(self, "_observes_cache", None)
        if cached is not None and _same_graph(feedback_graph, cached[0]):
            observes: npt.NDArray[np.bool_] = cached[1]
            return observes
        closed = _check_graph(feedback_graph, self.n_arms)
        observes = closed if self.side_observations else np.eye(self.n_arms, dtype=bool)
        if type(feedback_graph) is np.ndarray and feedback_graph.dtype == np.bool_:
            self._observes_cache = (feedback_graph.copy(), observes)
        return observes

    def _table_blocks(self, table: Any) -> tuple[int, Iterator[npt.NDArray[np.float64]]]:
        """T and the table's rows as checked float64 C-contiguous blocks (one block for an array)."""
        if (
            type(table) is np.ndarray
            and table.ndim == 2
            and (table.dtype is _FLOAT64 or table.dtype == _FLOAT64)  # numba-made arrays: an equal dtype
            and table.shape[1] == self.n_arms
            and table.flags.c_contiguous
        ):  # the usual table, as _block returns it: a read-only view
            return table.shape[0], iter((read_only_view(table),))
        if not isinstance(table, np.ndarray) and hasattr(table, "blocks"):  # a BlockTable (cheaper than isinstance)
            shape = tuple(table.shape)
            if len(shape) != 2 or shape[1] != self.n_arms or not 1 <= shape[0] <= MAX_EPOCH_LENGTH:
                raise ValueError(f"table must have shape (T, {self.n_arms}) with T in [1, 2**53], got {shape}.")
            return int(shape[0]), (self._block(block) for block in table.blocks())
        block = self._block(table)  # T = 0 rows: nothing to play (no table has more than 2**53 rows in memory)
        return block.shape[0], iter([block])

    def _block(self, table: Any) -> npt.NDArray[np.float64]:
        """A table or a block of one as a read-only float64 C-contiguous (rows, K) array."""
        arr = _as_array(table)
        if arr is None or arr.dtype.kind not in "iuf":
            raise TypeError(f"table must be a real array of shape (T, {self.n_arms}), got {describe(table)}.")
        if arr.ndim != 2 or arr.shape[1] != self.n_arms:
            raise ValueError(f"table must have shape (T, {self.n_arms}), got {arr.shape}.")
        if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:  # long doubles: none may round into [0, 1]
            _check_rounding_into_unit(arr)
        # Read-only whoever owns it (the env's table is, a user's need not be): one compiled table
        # run for both (bandit_envs._jit.read_only_view; a view, no copy of a large table).
        return read_only_view(np.ascontiguousarray(arr, dtype=np.float64))

    def _law(self, law: Any) -> tuple[Any, ...] | None:
        """``law`` as the compiled reader's tuple (kind, loc, scale, cdf_lo, cdf_width); None for a table of rewards."""
        if law is None:
            return None
        if not isinstance(law, RewardModel):
            raise TypeError(f"law must be a bandit_envs.rewards.RewardModel or None, got {describe(law)}.")
        if law.n_arms != self.n_arms:
            raise ValueError(f"law must have one reward law per arm ({self.n_arms}), got {law.n_arms}.")
        kind, loc, scale, lo, width = law.params()
        return kind, loc, scale, lo, width

    def _override(self, override: Any, n_rounds: int) -> tuple[int, int, float]:
        """``override`` as (round, arm, reward), checked; (-1, -1, 0) for None."""
        if override is None:
            return -1, -1, 0.0
        if not isinstance(override, tuple | list) or len(override) != 3:
            raise TypeError(f"override must be None or a triple (t, k, v), got {describe(override)}.")
        t = check_int("override[0] (the round t)", override[0], minimum=0)
        k = check_int("override[1] (the arm k)", override[1], minimum=0)
        if t >= n_rounds or k >= self.n_arms:
            raise ValueError(
                f"override must name an entry (t, k) of the table, t < {n_rounds} and k < {self.n_arms}, "
                f"got ({t}, {k})."
            )
        v = override[2]
        if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
            raise TypeError(f"override[2] (the reward v) must be a real number, got {describe(v)}.")
        value = as_float(v)
        if overflowed(v, value):  # an int beyond the floats: quoted as given, not inf
            raise value_error("override[2] (the reward v)", v, self.reward_bounds, self._bounds_reason())
        check_values("override[2] (the reward v)", np.array(value), self.reward_bounds, self._bounds_reason(), ())
        return t, k, value

    def fork(self) -> Self:
        """An independent copy of the agent as it is now: same parameters, copied state and generator.

        Both then go on exactly as the original would (the copy's generator continues from the
        same state). Cheaper than :func:`copy.deepcopy`, which the privacy pairs of the
        experiments would otherwise pay thousands of times: the parameters are shared, as they
        are never written after construction.

        It is public, for coupled measurements such as those pairs: a run and its neighbouring
        run (one reward changed) with common noise. For a private agent (GAP, GAPU, DPSE) the
        fork draws the same noise as the original, so the two runs' releases on different data
        differ by the exact values' difference: never release both; the guarantee covers one.
        """
        other = shallow_copy(self)
        other._entries = [None, None]
        other._state = tuple(array.copy() for array in self._state)
        other.rng = _clone(self.rng)
        other._copy_rngs = (other.rng,) if self.n_envs is None else tuple(_clone(g) for g in self._copy_rngs)
        other._bitgen_cache = None
        return other

    @abstractmethod
    def _rounds_played(self, copy: int) -> int:
        """Rounds copy ``copy`` has played since its reset."""

    @property
    def active(self) -> npt.NDArray[np.bool_]:
        """Active (not yet eliminated) arms of every copy, shape (B, K)."""
        return self._state[kernels.ACTIVE].copy()


#: The last checkpoints checked by :func:`_simulate_checkpoints` and the last gaps checked by
#: :func:`_simulate_gaps`: (T or K, their bytes, the checked array). Experiments pass the same
#: checkpoints and gaps to thousands of runs; comparing bytes is cheaper than checking (the gaps'
#: checks took about 4 us of the 35 us a short GAP run cost besides its rounds).
_LAST_CHECKPOINTS: list[tuple[int, bytes, npt.NDArray[np.int64]]] = []
_LAST_GAPS: list[tuple[int, bytes, npt.NDArray[np.float64]]] = []


def _simulate_checkpoints(checkpoints: Any, n_rounds: int) -> npt.NDArray[np.int64]:
    """``checkpoints`` as strictly increasing int64 round counts in [1, n_rounds]."""
    if checkpoints is None:
        return np.zeros(0, dtype=np.int64)
    if type(checkpoints) is np.ndarray and checkpoints.dtype == np.int64 and checkpoints.ndim == 1:
        raw = checkpoints.tobytes()
        if _LAST_CHECKPOINTS and _LAST_CHECKPOINTS[0][0] == n_rounds and _LAST_CHECKPOINTS[0][1] == raw:
            return _LAST_CHECKPOINTS[0][2]
        checked = _check_checkpoints(checkpoints, n_rounds).copy()  # private: the kernels only read it
        _LAST_CHECKPOINTS[:] = [(n_rounds, raw, checked)]
        return checked
    return _check_checkpoints(checkpoints, n_rounds)


def _simulate_gaps(gaps: Any, n_arms: int) -> npt.NDArray[np.float64]:
    """``gaps`` as a float64 array of ``n_arms`` finite, non-negative regrets (a private copy if cached)."""
    if type(gaps) is np.ndarray and gaps.dtype == np.float64 and gaps.shape == (n_arms,):  # not a subclass
        raw = gaps.tobytes()
        if _LAST_GAPS and _LAST_GAPS[0][0] == n_arms and _LAST_GAPS[0][1] == raw:
            return _LAST_GAPS[0][2]
        checked = _check_gaps(gaps, n_arms).copy()  # private: the kernels only read it
        _LAST_GAPS[:] = [(n_arms, raw, checked)]
        return checked
    return _check_gaps(gaps, n_arms)


def _check_gaps(gaps: Any, n_arms: int) -> npt.NDArray[np.float64]:
    """The checks of :func:`_simulate_gaps`."""
    gap_arr = _as_array(gaps)
    if gap_arr is None or gap_arr.dtype.kind not in "iuf" or gap_arr.shape != (n_arms,):
        raise ValueError(f"gaps must be a real array of shape ({n_arms},), one regret per arm, got {describe(gaps)}.")
    gap_values = np.ascontiguousarray(gap_arr, dtype=np.float64)
    check_values("gaps", gap_values, None, "", ("arm",))
    if gap_values.min() < 0.0:  # μ* is the largest mean: no arm has a negative gap
        arm = int(np.argmax(gap_values < 0.0))
        negative = float(gap_values[arm])
        raise ValueError(f"gaps must be non-negative (μ* − μ_k >= 0 for every arm k), got {negative!r} at arm {arm}.")
    return gap_values


def _check_checkpoints(checkpoints: Any, n_rounds: int) -> npt.NDArray[np.int64]:
    """The checks of :func:`_simulate_checkpoints`."""
    if isinstance(checkpoints, list | tuple) and not checkpoints:  # none, as an empty integer array
        return np.zeros(0, dtype=np.int64)
    arr = _as_array(checkpoints)
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(f"checkpoints must be a 1-d array of integers, got {describe(checkpoints)}.")
    ck = np.ascontiguousarray(arr, dtype=np.int64)
    if ck.size and (arr.min() < 1 or arr.max() > n_rounds or np.any(np.diff(ck) <= 0)):
        raise ValueError(
            f"checkpoints must be strictly increasing round counts in [1, {n_rounds}], got {ck.size} values "
            f"from {int(arr.min())} to {int(arr.max())}."
        )
    return ck


def _check_rounding_into_unit(table: npt.NDArray[Any]) -> None:
    """Refuse a table of long doubles with an entry outside [0, 1] that rounds into it as a float64.

    The compiled loop reads float64 entries and refuses those outside [0, 1] (or not finite); a long
    double just above 1 (or just below 0) would reach it as 1.0 (or -0.0) and be read. One pass over
    the table, for long-double tables only.
    """
    rounded = table.astype(np.float64)
    hidden = ~((table >= 0) & (table <= 1)) & (rounded >= 0) & (rounded <= 1)
    if hidden.any():
        t, k = (int(i) for i in np.argwhere(hidden)[0])
        raise ValueError(
            f"table must hold rewards in [0, 1] the agent can read exactly, got {table[t, k]!r} at round {t}, "
            f"arm {k}, a long double that rounds to {rounded[t, k]!r} as a float64."
        )


#: What :meth:`EliminationAgent.simulate` passes when it records no arms (empty: the kernels only read its
#: length; writable, the type they are compiled for), and the bad-entry report it copies.
_NOT_RECORDED = np.zeros(0, dtype=np.int16)
_NO_BAD_ENTRY = np.full(2, -1, dtype=np.int64)


#: Longest first epoch (in rounds, or sweeps for AlphaSample) an agent accepts: the round
#: counters are int64, and no run comes near 2**53 rounds.
MAX_EPOCH_LENGTH = 2**53


def _check_first_epoch(agent: str, what: str, compute: Any, params: str) -> None:
    """Refuse parameters whose first epoch is infinite or longer than :data:`MAX_EPOCH_LENGTH`."""
    try:
        value = float(compute())
    except (OverflowError, ZeroDivisionError):
        value = math.inf
    if not value <= MAX_EPOCH_LENGTH:  # also NaN
        raise ValueError(
            f"{params} make the first epoch of {agent} {what} = {value:g}, above 2**53; use larger parameters."
        )


def _confidence(name: str, value: float | None, horizon: int, per_round: int = 1) -> float:
    """A failure probability in (0, 1), or when ``value`` is None the default 1 / (``per_round`` × ``horizon``).

    The default is 1/T (AlphaSample's 1/(2KT): ``per_round`` = 2K), the product rounded to a float
    once. A horizon whose default is 0 as a float (beyond about 1.8e308 rounds, where Python's
    ``1.0 / T`` raises OverflowError) is refused in one sentence: give ``value`` then.
    """
    if value is None:
        default = 1.0 / as_float(per_round * horizon)  # as_float: inf for an int past the floats
        if default > 0.0:
            return default
        formula = "1/T" if per_round == 1 else "1/(2KT)"
        raise ValueError(
            f"{name} must be given (a number in (0, 1)) for horizon={describe(horizon, typed=False)}: its default "
            f"{formula} is 0 as a float."
        )
    return check_float(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


#: The boolean feedback graph checked last, by any agent, and its closed neighbourhoods: experiments
#: build a new agent for every run and agent on one graph, and checking the graph again took
#: 15 us of the 60 us a table run of AAE at K = 10 cost besides its rounds (one measurement).
_last_checked: list[tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = []


def _same_graph(graph: Any, checked: npt.NDArray[np.bool_]) -> bool:
    """Whether ``graph`` is a boolean array equal to the ``checked`` one."""
    return (
        type(graph) is np.ndarray  # not a subclass: a masked array's masked entries are not edges
        and graph.dtype == np.bool_
        and graph.shape == checked.shape
        and graph.tobytes() == checked.tobytes()
    )


def _check_graph(feedback_graph: Any, n_arms: int) -> npt.NDArray[np.bool_]:
    """The closed neighbourhoods of a feedback graph on ``n_arms`` arms, checked (a new array each call).

    A boolean array equal to the last one checked is not checked again (:data:`_last_checked`).
    """
    if feedback_graph is None:
        raise ValueError("feedback_graph is required (a networkx graph or K×K boolean adjacency), got None.")
    if _last_checked:
        graph, closed = _last_checked[0]
        if graph.shape == (n_arms, n_arms) and _same_graph(feedback_graph, graph):
            return closed.copy()
    closed = closed_neighbourhoods(as_adjacency(feedback_graph, n_arms, "feedback_graph"))
    if type(feedback_graph) is np.ndarray and feedback_graph.dtype == np.bool_:
        _last_checked[:] = [(feedback_graph.copy(), closed.copy())]
    return closed


class GAP(EliminationAgent, PrivateAgent):
    r"""GAP: graph-based arm elimination with differential privacy (the gap paper, Algorithm 1).

    The gap paper: Lu, Wang, Qiu, Zhang, "Differentially private algorithm for graphical
    bandits", Journal of Software 33(9), 2022.

    Epoch τ (line numbers of Algorithm 1): fresh sums o, c (3-5); Ω_τ = GetIndSet(A_τ, μ̄_{τ-1})
    greedily by the last noisy means (6, 26-32); L_τ = ⌈max(2^{5+2τ} ln(8|A_τ|τ²/δ),
    2^{3+τ} ε⁻¹ ln(4|A_τ|τ²/δ))⌉ (10-12); L_τ|Ω_τ| rounds that pull the least-pulled arm of Ω_τ
    (14) and record every observed active arm (15-18); then μ̄_{τ,a} = c/o + Laplace(1/(εL_τ))
    (21) and elimination of arms below max μ̄ − √(2 ln(8|A|τ²/δ)/L_τ) − 2 ln(4|A|τ²/δ)/(εL_τ)
    (23). An epoch cut short by the horizon releases nothing.

    Choices [P]: ties in GetIndSet's argmax (e.g. the all-zero μ̄_0) go to the lowest arm index;
    ties in line 14's argmin go to the lowest arm index (``round_robin="index"``, the usual argmin
    convention) or to the arm GetIndSet added first (``"greedy"``, what iterating over Ω as the
    list GetIndSet builds would do), so an epoch is a round-robin over Ω_τ in that order. The
    choice leaves the distribution of the regret unchanged (rewards are i.i.d. over rounds) but
    not the arm sequence of a given run, hence not how often the runs on two neighbouring tables
    differ: only ``"index"`` reproduces the paper's Table 1 (see ``docs/reproductions``). Rounds
    are counted from 0.

    Privacy (Theorem 1): ε-DP for the arm sequence a_1..a_T, where neighbouring reward
    sequences differ in one entry r_{t,k} (Definition 3). That entry enters only arm k's mean
    of its own epoch, which averages o_{τ,k} ≥ L_τ values in [0, 1] (Ω_τ is a maximal
    independent set of G(A_τ), so it dominates A_τ), so the sensitivity is ≤ 1/L_τ and
    Laplace(1/(εL_τ)) noise from the agent's noise generator makes each release ε-DP; releases use
    disjoint data (parallel composition) and everything else is post-processing. Under the
    coarser unit "one round's whole revealed vector" the same code is only (d_max+1)ε-DP.

    Noise: one Laplace draw per active arm, in increasing arm order, at the
    last round of every completed epoch, from the agent's generator ``rng``, which is
    :func:`bandit_envs.privacy.streams.noise_generator` ``(seed)``: a stream no env, reward table
    or other generator seeded with the same integer reproduces (GAPU's uniform draws of Ω_τ come
    from it too, between releases). Copy i of a batch seeded s draws from ``noise_generator(s + i)``
    (docs/design.md, "Agents", Seeds).
    :func:`agents.elimination.reference.run_gap` is a plain-Python version of Algorithm 1 that makes the same
    decisions with the same draws.

    Sampler: the noisy means compared use the lattice sampler by default
    (:mod:`bandit_envs.privacy.lattice`): arm k's sum is released as ``snap(c_k) +
    snap(Laplace((1 + g) o_k/(εL_τ)))`` on the grid ``g = sum_grid(1/ε, 1)`` and divided by its
    public count o_k (the same noise as the float form on the mean; the sum's sensitivity 1
    widened to 1 + g for the rounding: ε-DP up to the sampler's tail δ_s of ``privacy_spent``).
    ``sampler="float"``: the raw ``c_k/o_k + Laplace(1/(εL_τ))``, not safe against floating-point
    attacks.

    Feedback: :meth:`update` checks that pulling arm a revealed every arm of N(a) in
    ``feedback_graph`` (``info["observed_mask"]``) and refuses the round in one sentence
    otherwise, learning nothing from it (arms revealed beyond N(a) are counted): the privacy
    argument above needs every active arm observed L_τ times per epoch, which only the
    declared graph guarantees. As a caller that pulls other arms than :meth:`act` chose can
    also leave an arm short, the last round of an epoch is refused too if an active arm would
    be released with fewer than L_τ observations (nothing is released). Sizing the noise to
    the count actually reached instead would also change the confidence widths and the epoch
    schedule the regret bound is proved for, and would hide an env whose graph is not the
    declared one. :meth:`simulate` reads the graph it is given itself, so its neighbourhoods
    cannot fall short of it.

    Private state: what the guarantee covers is the arm sequence, and with it the released
    noisy means ``_state[GAP_MEAN]``, the active set, Ω_τ and L_τ (all post-processing of the
    releases). The curator's private state is everything else: the current epoch's un-noised
    sums and observation counts (``_state[GAP_SUMS]``, ``_state[GAP_OBSERVATIONS]``, which an
    epoch cut short by the horizon leaves filled), and the generator ``rng`` and ``seed`` (with
    them the Laplace draws can be recomputed and subtracted from the released means). Do not
    publish an agent object; publish its actions or its released means.

    Parameters
    ----------
    n_arms, horizon, epsilon
        K, T and the budget ε > 0.
    feedback_graph
        networkx graph or K×K boolean adjacency (undirected, no self loops).
    delta
        Confidence parameter δ ∈ (0, 1); the paper's experiments use 1/T (the default).
    round_robin
        Order of the round-robin over Ω_τ: ``"index"`` (default) or ``"greedy"``.
    sampler
        ``"lattice"`` (default) or ``"float"`` (raw noise, faster, not safe against
        floating-point attacks); see Sampler above.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the noise generator (copy i of a batch: ``noise_generator(seed + i)``; see Noise above).
    """

    name = "GAP"
    side_observations = True
    reward_bounds_reason = "the privacy and confidence bounds of {name} assume it"
    privacy_unit = "one entry r_{t,k} of the T×K reward table (gap paper, Definition 3)"
    _act_batch = drivers.gap_act_batch
    _update_batch = drivers.gap_update_batch
    _steps_draw = False  # the round-robin and the sums draw nothing; the release draws, from Python (_end_epochs)
    _run = drivers.gap_run_uniforms
    _run_on_rewards = drivers.gap_run_rewards
    _uniform = 0

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        feedback_graph: Any,
        delta: float | None = None,
        round_robin: str = "index",
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, horizon, n_envs=n_envs, seed=seed)
        self.round_robin = check_choice("round_robin", round_robin, ("greedy", "index"))
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.sampler = check_sampler(sampler)
        self._grid = 0.0 if self.sampler == "float" else sum_grid(1.0 / self.epsilon, 1.0)
        self.delta = _confidence("delta", delta, self.horizon)
        self.neighbourhoods = _check_graph(feedback_graph, self.n_arms)
        if type(feedback_graph) is np.ndarray and feedback_graph.dtype == np.bool_:
            self._observes_cache = (feedback_graph.copy(), self.neighbourhoods)  # checked: see _observes
        k, eps, dlt = self.n_arms, self.epsilon, self.delta
        _check_first_epoch(
            self.name,
            "L_1 rounds per arm",
            lambda: max(2.0**7 * math.log(8.0 * k / dlt), 2.0**4 / eps * math.log(4.0 * k / dlt)),
            f"epsilon={eps:g} and delta={dlt:g}",
        )
        self._reset_state()

    def _state_nbytes(self) -> float:
        return super()._state_nbytes() + float(self.n_arms) ** 2  # the K×K closed neighbourhoods

    def _stream(self, seed: int | None) -> np.random.Generator:
        """The noise generator of a single agent seeded ``seed``: ``noise_generator(seed)``."""
        return noise_generator(seed)

    def _reset_state(self) -> None:
        if self._noise_due():  # construction or reset(seed=s); reset() continues the noise
            self.rng = noise_generator(self.seed)
            self._seed_copies()
        self._state = kernels.new_gap_state(self.batch, self.n_arms)
        self._params = (
            self.epsilon, self.delta, self.neighbourhoods, self._uniform, self.round_robin == "index", self._grid
        )  # fmt: skip
        for i in range(self.batch):
            kernels.gap_plan(self._state, self._params, i)

    def _rounds_played(self, copy: int) -> int:
        rounds: int = self._state[kernels.GAP_COUNTERS].item(copy, kernels.GAP_ROUND)
        return rounds

    def _end_epochs(self) -> None:
        """Release (lines 20-24) every copy whose epoch ended in this update, from its own generator."""
        ctr = self._state[kernels.GAP_COUNTERS]
        for i in np.flatnonzero(ctr[:, kernels.GAP_ROUND] == ctr[:, kernels.GAP_EPOCH_END]):
            kernels.gap_release(self._state, self._params, int(i), self._bitgens())

    def _check_revealed(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> None:
        """Refuse a round that does not reveal every arm of the pulled arm's neighbourhood in ``feedback_graph``.

        The release of epoch τ adds Laplace(1/(εL_τ)) noise to each active arm's mean, which is
        ε-DP only if that mean averages at least L_τ rewards; the round-robin over Ω_τ guarantees
        this only if pulling arm a reveals every arm of N(a) in the declared graph. Calibrating
        the noise to the count actually reached would also change the confidence widths and the
        epoch schedule the regret bound is proved for, and would hide an env whose graph is not
        the declared one; so a round that reveals fewer arms is refused (nothing is learnt from
        it). Arms revealed beyond N(a) are counted: more observations only lower the sensitivity.
        :meth:`simulate` reads the graph it is given itself and cannot fall short of it.
        """
        pulled = mask[0, actions[0]] if self.batch == 1 else mask[np.arange(self.batch), actions].all()
        if not pulled:  # the rest is checked by the update kernel (kernels.gap_feedback_ok)
            self._refuse_revealed(actions, mask)

    def _refuse_revealed(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> None:
        """Raise the sentence for a round whose revealed arms fall short: which copy, arm and round."""
        declared = self.neighbourhoods[actions]
        missing = declared & ~mask
        if not missing.any():
            self._check_release_counts(mask)
            super()._refuse_revealed(actions, mask)  # not reached: the kernel refuses only these two
        copy, arm, where = self._first_offence(missing)
        raise ValueError(
            f"info['observed_mask'] must reveal every arm of the pulled arm's closed neighbourhood in {self.name}'s "
            f"feedback_graph (its privacy noise assumes L_τ observations of every arm per epoch), got arm {arm} "
            f"not revealed in round {self._rounds_played(copy)}{where}: pulling arm {int(actions[copy])}, the graph "
            f"declares {np.flatnonzero(declared[copy]).tolist()}, the env revealed "
            f"{np.flatnonzero(mask[copy]).tolist()}."
        )

    def _first_offence(self, offending: npt.NDArray[np.bool_]) -> tuple[int, int, str]:
        """The first (copy, arm) set in ``offending`` (B, K), and `` of copy i`` for a batched agent's message."""
        copy = int(np.flatnonzero(offending.any(axis=1))[0])
        arm = int(np.flatnonzero(offending[copy])[0])
        return copy, arm, "" if self.n_envs is None else f" of copy {copy}"

    def _check_release_counts(self, mask: npt.NDArray[np.bool_]) -> None:
        """Refuse the last round of an epoch if an active arm would be released with fewer than L_τ observations.

        With the declared neighbourhoods revealed, only pulls of other arms than the ones
        :meth:`act` chose (its round-robin over Ω_τ) can leave an active arm short; the release
        would then average fewer rewards than its noise is sized for, so nothing is released.
        """
        ctr = self._state[kernels.GAP_COUNTERS]
        ending = ctr[:, kernels.GAP_ROUND] + 1 == ctr[:, kernels.GAP_EPOCH_END]
        if not ending.any():
            return
        active = self._state[kernels.ACTIVE]
        counts = self._state[kernels.GAP_OBSERVATIONS] + (mask & active)
        short = ending[:, None] & active & (counts < ctr[:, kernels.GAP_EPOCH_LENGTH][:, None])
        if not short.any():
            return
        copy, arm, where = self._first_offence(short)
        raise ValueError(
            f"action must be the arm {self.name} chose (act), as the release of each epoch needs L_τ observations "
            f"of every active arm, got an epoch ending in round {self._rounds_played(copy)}{where} with arm {arm} "
            f"observed {int(counts[copy, arm])} times, fewer than L_τ = {int(ctr[copy, kernels.GAP_EPOCH_LENGTH])}; "
            "nothing is released."
        )

    @property
    def independent_set(self) -> list[list[int]]:
        """Ω_τ of every copy, in round-robin order."""
        omega, counters = self._state[kernels.GAP_OMEGA], self._state[kernels.GAP_COUNTERS]
        return [omega[i, : counters[i, kernels.GAP_OMEGA_SIZE]].tolist() for i in range(self.batch)]

    @property
    def epoch_length(self) -> npt.NDArray[np.int64]:
        """L_τ of every copy."""
        return self._state[kernels.GAP_COUNTERS][:, kernels.GAP_EPOCH_LENGTH].copy()

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ_s) once any epoch has been released (each entry enters at most one release), else (0, 0).

        δ_s is the Laplace sampler's tail of that release
        (:func:`~bandit_envs.privacy._checks.laplace_tail_delta`, about ``3e-16`` at ε = 1).
        """
        released = int(self._state[kernels.GAP_COUNTERS][:, kernels.GAP_RELEASES].max()) > 0
        return (self.epsilon, laplace_tail_delta(self.epsilon)) if released else (0.0, 0.0)


class GAPU(GAP):
    """GAP with Ω_τ drawn uniformly at random (gap paper §5.2's ablation of GetIndSet).

    The paper says Ω_τ is drawn from "all independent sets" of G(A_τ). A non-maximal set can
    leave active arms unobserved for a whole epoch (o_{τ,a} = 0 and line 21 divides by zero,
    and the privacy proof's o_{τ,a} ≥ L_τ fails), so we draw uniformly from the *maximal*
    independent sets, which is what the privacy and regret proofs need [P]. Enumeration by bit
    masks limits GAPU to K ≤ 20. Privacy and sampler (lattice by default, ``sampler="float"``
    not safe against floating-point attacks): as :class:`GAP`.

    Parameters
    ----------
    n_arms, horizon, epsilon, feedback_graph, delta, n_envs, seed, sampler
        As :class:`GAP` (which also takes ``round_robin``; GAPU draws Ω_τ instead), with K ≤ 20.
    """

    name = "GAPU"
    _uniform = 1

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        feedback_graph: Any,
        delta: float | None = None,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        if check_int("n_arms", n_arms, minimum=2) > 20:
            raise ValueError(f"n_arms must be <= 20 for GAPU (it enumerates maximal independent sets), got {n_arms}.")
        super().__init__(
            n_arms, horizon, epsilon, feedback_graph, delta, "index", n_envs=n_envs, seed=seed, sampler=sampler
        )

    # Ω_τ is drawn by its own kernel (kernels.gapu_plan) right after kernels.gap_plan, which leaves
    # it pending (|Ω_τ| = 0), so that GAP's kernels do not compile the uniform rule.

    def _reset_state(self) -> None:
        super()._reset_state()
        self._draw_pending()

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """As :meth:`GAP.update`; a copy whose epoch ended then draws its next Ω_τ."""
        super().update(action, reward, info)
        self._draw_pending()

    def _draw_pending(self) -> None:
        """Draw Ω_τ of every copy whose epoch ended (each from its own generator)."""
        sizes = self._state[kernels.GAP_COUNTERS][:, kernels.GAP_OMEGA_SIZE]
        if self.n_envs is None:  # one env: no numpy call in the rounds that end no epoch
            pending: Any = (0,) if sizes[0] == 0 else ()
        else:
            pending = np.flatnonzero(sizes == 0)
        for i in pending:
            kernels.gapu_plan(self._state, self._params, int(i), self._bitgens())

    def _resume(self, copy: int) -> bool:
        """The table run stops at an epoch's end with Ω_τ pending: draw it, and run on."""
        if self._state[kernels.GAP_COUNTERS][copy, kernels.GAP_OMEGA_SIZE]:
            return False
        kernels.gapu_plan(self._state, self._params, copy, self._bitgens())
        return True


class DPSE(EliminationAgent, PrivateAgent):
    r"""DP-SE, differentially private successive elimination (Sajed & Sheffet, ICML 2019) [V-code].

    Epoch e: Δ_e = 2^{-e}; every active arm is pulled R_e = ⌈s·max(32 ln(8|S|e²/β)/Δ_e²,
    8 ln(4|S|e²/β)/(εΔ_e))⌉ times (round-robin); μ̃_a = (this epoch's sum)/R_e + Lap(1/(εR_e)),
    independently per arm; arm a is eliminated if max μ̃ − μ̃_a > 2w(h_e + c_e) with
    h_e = √(ln(8|S|e²/β)/(2R_e)), c_e = ln(4|S|e²/β)/(εR_e). Not graph
    aware: learns only from the pulled arm's reward.

    Privacy: ε-DP (event level: neighbouring sequences differ in one reward, here one entry
    r_{t,k}); each reward enters one release, a mean of R_e values of sensitivity 1/R_e with
    Laplace(1/(εR_e)) noise from the agent's generator ``rng``,
    :func:`bandit_envs.privacy.streams.noise_generator` ``(seed)`` (independent of an env or a
    table seeded with the same integer; copy i of a batch seeded s draws from
    ``noise_generator(s + i)``, docs/design.md, "Agents", Seeds); epochs use disjoint data. The
    ``schedule_scale`` s and ``width_scale`` w [P] change regret, not privacy. Epochs go on
    (and release) when one arm is left; an epoch cut short by the horizon releases nothing.
    Plain-Python version: :func:`agents.elimination.reference.run_dpse`.

    Sampler: the noisy means compared use the lattice sampler by default
    (:mod:`bandit_envs.privacy.lattice`): each sum is released as ``snap(sum) +
    snap(Laplace((1 + g)/ε))`` on the grid ``g = sum_grid(1/ε, 1)``, then divided by R_e (exactly
    ε-DP, the rounding paid by the widened scale); ``sampler="float"`` (keyword): the raw
    ``sum/R_e + Lap(1/(εR_e))``, not safe against floating-point attacks.

    Private state: the released noisy means, the active set and the epoch lengths are covered by
    the guarantee; the current epoch's un-noised sums (``_state[DPSE_SUMS]``) and the generator
    ``rng`` / ``seed`` are the curator's private state and must not be published.

    Parameters
    ----------
    n_arms, horizon, epsilon
        K, T and the budget ε > 0.
    beta
        Failure probability β ∈ (0, 1) of the confidence bounds (default 1/T).
    schedule_scale, width_scale
        s > 0 and w > 0 above (default 1: the paper's R_e and elimination rule).
    n_envs, seed
        As :class:`GAP`.
    sampler
        ``"lattice"`` (default) or ``"float"``; see Sampler above.
    """

    name = "DPSE"
    reward_bounds_reason = "the privacy and confidence bounds of {name} assume it"
    privacy_unit = "one reward entry r_{t,k} (event level)"
    _act_batch = drivers.dpse_act_batch
    _update_batch = drivers.dpse_update_batch
    _run = drivers.dpse_run

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        epsilon: float,
        beta: float | None = None,
        schedule_scale: float = 1.0,
        width_scale: float = 1.0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
        sampler: str = "lattice",
    ) -> None:
        super().__init__(n_arms, horizon, n_envs=n_envs, seed=seed)
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.sampler = check_sampler(sampler)
        self._grid = 0.0 if self.sampler == "float" else sum_grid(1.0 / self.epsilon, 1.0)
        self.beta = _confidence("beta", beta, self.horizon)
        self.schedule_scale = check_float("schedule_scale", schedule_scale, low=0.0, low_open=True)
        self.width_scale = check_float("width_scale", width_scale, low=0.0, low_open=True)
        k, eps, beta, s = self.n_arms, self.epsilon, self.beta, self.schedule_scale
        _check_first_epoch(
            self.name,
            "R_1 pulls per arm",
            lambda: s * max(32.0 * math.log(8.0 * k / beta) / 0.25, 8.0 * math.log(4.0 * k / beta) / (eps * 0.5)),
            f"epsilon={eps:g}, beta={beta:g} and schedule_scale={s:g}",
        )
        self._reset_state()

    def _stream(self, seed: int | None) -> np.random.Generator:
        """The noise generator of a single agent seeded ``seed``: ``noise_generator(seed)``."""
        return noise_generator(seed)

    def _reset_state(self) -> None:
        if self._noise_due():  # construction or reset(seed=s); reset() continues the noise
            self.rng = noise_generator(self.seed)
            self._seed_copies()
        self._state = kernels.new_dpse_state(self.batch, self.n_arms)
        self._params = (self.epsilon, self.beta, self.schedule_scale, self.width_scale, self._grid)
        for i in range(self.batch):
            kernels.dpse_plan(self._state, self._params, i)

    def _rounds_played(self, copy: int) -> int:
        rounds: int = self._state[kernels.DPSE_COUNTERS].item(copy, kernels.DPSE_ROUND)
        return rounds

    @property
    def epoch_repetitions(self) -> npt.NDArray[np.int64]:
        """R_e of the current epoch, per copy."""
        return self._state[kernels.DPSE_COUNTERS][:, kernels.DPSE_REPETITIONS].copy()

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ_s) once any epoch has been released, else (0, 0); δ_s as for :class:`GAP`."""
        released = int(self._state[kernels.DPSE_COUNTERS][:, kernels.DPSE_RELEASES].max()) > 0
        return (self.epsilon, laplace_tail_delta(self.epsilon)) if released else (0.0, 0.0)


class AAE(EliminationAgent):
    r"""Active arm elimination (Even-Dar, Mannor, Mansour, JMLR 2006, successive elimination with unknown biases) [R/P].

    Passes over the active arms in index order; after each complete pass, with per-arm radii
    rad_j = √(ln(c K n_j²/δ)/n_j) (``radius="evendar"``) or √(ln(4K n_j²/δ)/(2n_j))
    (``"hoeffding"``), arms with μ̂_j + rad_j < max_i(μ̂_i − rad_i) are eliminated. Not private.
    ``side_observations=False`` (default) is the multi-armed version the gap paper compares
    against ("designed for multi-armed bandits, cannot use the extra feedback", §5.2).
    Plain-Python version: :func:`agents.elimination.reference.run_aae`.

    Parameters
    ----------
    n_arms, horizon
        K and T.
    delta
        Failure probability δ ∈ (0, 1) of the radii (default 1/T).
    c
        Constant c > 0 of the ``"evendar"`` radius (default 4).
    radius
        ``"evendar"`` (default) or ``"hoeffding"``.
    side_observations
        Also learn from the revealed neighbours' rewards (``info["observed_rewards"]``); default False.
    n_envs, seed
        ``None`` for one env or the number N of copies; the seed of the generators (AAE draws nothing).
    """

    name = "AAE"
    _act_batch = drivers.aae_act_batch
    _update_batch = drivers.aae_update_batch
    _run = drivers.aae_run
    _steps_draw = False  # passes in index order: nothing is drawn
    _run_draws = False

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        delta: float | None = None,
        c: float = 4.0,
        radius: str = "evendar",
        side_observations: bool = False,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, horizon, n_envs=n_envs, seed=seed)
        self.delta = _confidence("delta", delta, self.horizon)
        self.c = check_float("c", c, low=0.0, low_open=True)
        self.radius = check_choice("radius", radius, ("evendar", "hoeffding"))
        if not isinstance(side_observations, bool | np.bool_):  # numpy's np.True_ as ThompsonSampling takes it
            raise TypeError(f"side_observations must be True or False, got {describe(side_observations)}.")
        self.side_observations = bool(side_observations)  # type: ignore[misc]
        self._reset_state()

    def _reset_state(self) -> None:
        self._seed_copies()
        self._state = kernels.new_aae_state(self.batch, self.n_arms)
        self._params = (self.delta, self.c, self.radius == "hoeffding")
        for i in range(self.batch):
            kernels.aae_order(self._state, i)

    def _rounds_played(self, copy: int) -> int:
        rounds: int = self._state[kernels.AAE_COUNTERS].item(copy, kernels.AAE_ROUND)
        return rounds


class AlphaSample(EliminationAgent):
    r"""Elimination with AlphaSample sweeps (Cohen, Hazan, Koren, ICML 2016) [R/V-code].

    A sweep pulls uniformly random active arms not yet observed in the sweep until every
    active arm was observed (≤ α pulls on a fixed undirected graph; the graph itself is never
    used, only the revealed set). Epoch r runs m_r = max(1, ⌈coeff·2 ln(1/δ)/ε_r²⌉) sweeps, then
    keeps arms with cumulative mean ≥ max − 2ε_r and halves ε_r. Not private.

    Parameters
    ----------
    n_arms, horizon
        K and T.
    delta
        Failure probability δ ∈ (0, 1) (default 1/(2KT)).
    epsilon1
        The first epoch's ε_1 > 0 (default 1/2).
    coeff
        The factor coeff > 0 of m_r (default 1).
    n_envs, seed
        ``None`` for one env or the number N of copies; the seed of the generators (copy i of a
        batch seeded s draws from ``default_rng(s + i)``).
    """

    name = "AlphaSample"
    side_observations = True
    _act_batch = drivers.alpha_act_batch
    _update_batch = drivers.alpha_update_batch
    _run = drivers.alpha_run

    def __init__(
        self,
        n_arms: int,
        horizon: int,
        delta: float | None = None,
        epsilon1: float = 0.5,
        coeff: float = 1.0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, horizon, n_envs=n_envs, seed=seed)
        self.delta = _confidence("delta", delta, self.horizon, 2 * self.n_arms)
        self.epsilon1 = check_float("epsilon1", epsilon1, low=0.0, low_open=True)
        self.coeff = check_float("coeff", coeff, low=0.0, low_open=True)
        c, dlt, e1 = self.coeff, self.delta, self.epsilon1
        _check_first_epoch(
            self.name,
            "m_1 sweeps",
            lambda: c * 2.0 * math.log(1.0 / dlt) / e1**2,
            f"delta={dlt:g}, epsilon1={e1:g} and coeff={c:g}",
        )
        self._reset_state()

    def _reset_state(self) -> None:
        self._seed_copies()
        sweeps = max(1, math.ceil(self.coeff * 2.0 * math.log(1.0 / self.delta) / self.epsilon1**2))
        self._state = kernels.new_alpha_state(self.batch, self.n_arms, self.epsilon1, sweeps)
        self._params = (self.delta, self.coeff)

    def _rounds_played(self, copy: int) -> int:
        rounds: int = self._state[kernels.ALPHA_COUNTERS].item(copy, kernels.ALPHA_ROUND)
        return rounds
