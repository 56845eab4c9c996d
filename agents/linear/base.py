r"""Machinery shared by LinUCB and LDP-LinUCB: the step API and the compiled fast path.

:class:`LinearAgent` runs the protocol of :mod:`agents.linear.protocol` for one env or ``B``
copies in lock-step: ``act`` is the client's choice, ``update`` the client's report followed by
the server's update, and :meth:`LinearAgent.run` plays a block of rounds in one compiled loop
(:func:`agents.linear._kernels.run_copy`) with the same kernels and the same random draws, so it
chooses the same actions as the step API. Each ``act`` and each ``update`` is one compiled call
(``step_choose_one`` / ``step_report_drawn`` for one env, ``step_choose`` / ``step_update`` for
copies), called through its compiled entry point (:func:`agents.base.entry_point`); the noise
is standard normals, the same draws as the fast path's (one env: ``rng``'s, drawn inside the
compiled call through a :class:`~agents.linear._kernels.GeneratorHolder`; copies: copy b's from
its own noise generator, :func:`~agents.linear._kernels.fill_copy_normals`, so copy i of a batch
seeded s draws as a single agent seeded s + i). The one-env step API costs about 1.2-1.4x ``run`` per round for
LDP-LinUCB (``benchmarks/bench_step_api.py``). Subclasses set the schedule of
(γ_t, c_t, β_t), the noise scale and the clipping bounds; they add no per-round logic.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self, cast

import numba
import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import (
    INT64_MAX,
    Agent,
    _as_array,
    _space,
    as_float,
    check_int,
    check_int_range,
    check_state_size,
    check_values,
    describe,
    entry_point,
    env_arms,
    state_arguments,
)
from agents.linear._kernels import (
    GENERATOR_HOLDER,
    GeneratorHolder,
    fill_copy_normals,
    fill_normals,
    round_schedule,
    run_parallel,
    run_serial,
    step_choose,
    step_choose_one,
    step_report_drawn,
    step_update,
)
from agents.linear.protocol import LinUCBServer, as_features
from bandit_envs._types import BoolArray, FloatArray, IntArray

__all__ = ["LinearAgent", "LinearRunResult"]


#: Normal draws kept in memory at once by the fast path (per chunk of rounds), ~4 MB.
_NOISE_CHUNK = 1 << 19
_FLOAT64 = np.dtype(np.float64)
_NP_INT64, _NP_FLOAT64 = np.int64, np.float64


class StepKernels:
    """Compiled entry points of a family's step kernels for observations of one rank (2: one env, 3: N copies).

    Subclasses compile their entry points in ``__init__``. :meth:`load` gives the one instance per
    class and rank of this process; a copy of an agent (pickle, deepcopy) loads it again by rank,
    so it uses the entry points of the process it lands in.
    """

    _loaded: ClassVar[dict[tuple[type, int], StepKernels]] = {}

    def __init__(self, rank: int) -> None:
        self.rank = rank

    @classmethod
    def load(cls, rank: int) -> Self:
        """The step kernels of this class for observations of ``rank`` dimensions, compiled once per process."""
        kernels = StepKernels._loaded.get((cls, rank))
        if kernels is None:
            kernels = StepKernels._loaded[(cls, rank)] = cls(rank)
        return cast(Self, kernels)

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        """Pickled by rank (see the class docstring)."""
        return type(self).load, (self.rank,)


class _StepKernels(StepKernels):
    """LinUCB's and LDP-LinUCB's step kernels for observations of one rank (2: one env, 3: N copies).

    The arrays the agent owns are C-contiguous; actions and rewards come from the caller and may
    have any strides (layout ``"A"``). ``choose`` and ``update`` end with the agent's
    ``_choose_args`` or ``_report_args`` (the arrays and parameters that do not change between
    rounds). ``choose_one`` and ``report_drawn`` are one env's calls with plain scalars (rank 2
    only): they take the agent's parameter array ``_params`` and the server's ``buffer``, two
    arrays where the batch calls take eight (each array argument costs about 0.05 us to pass);
    ``report_drawn`` draws the report's normals itself, from the agent's
    generator held in a :class:`~agents.linear._kernels.GeneratorHolder`.
    """

    def __init__(self, rank: int) -> None:
        super().__init__(rank)
        f8, i8, flag = types.float64, types.int64, types.boolean
        obs = types.Array(f8, rank, "C")
        vec, mat, cube = types.Array(f8, 1, "C"), types.Array(f8, 2, "C"), types.Array(f8, 3, "C")
        ints, int_mat = types.Array(i8, 1, "C"), types.Array(i8, 2, "C")
        any_ints, any_floats = types.Array(i8, 1, "A"), types.Array(f8, 1, "A")
        any_flags = types.Array(types.bool_, 1, "A")
        choose_args = (mat, cube, vec, f8, flag, f8)  # θ, U, schedule, l_x, quadratic, x_max
        # schedule, l_x, l_y, σ, grid, V, u, U, θ, clip counts, floor counts
        report_args = (vec, f8, f8, f8, f8, cube, mat, cube, mat, int_mat, ints)
        self.choose: Callable[..., bool] = entry_point(step_choose, (obs, i8, *choose_args, ints))
        self.update: Callable[..., None] = entry_point(
            step_update, (obs, any_ints, any_floats, any_flags, mat, i8, *report_args)
        )
        if rank == 2:  # one env: the agent's parameter array and the server's buffer
            self.choose_one: Callable[..., int] = entry_point(step_choose_one, (obs, i8, vec, vec))
            self.report_drawn: Callable[..., int] = entry_point(
                step_report_drawn, (GENERATOR_HOLDER, obs, i8, f8, i8, vec, vec)
            )


@dataclass
class LinearRunResult:
    """What :meth:`LinearAgent.run` returns (copy axis last, dropped when the agent has ``n_envs=None``).

    Attributes
    ----------
    total_regret
        Cumulative regret over the block, float or (B,).
    checkpoint_regret
        Cumulative regret at each checkpoint, (n_checkpoints,) or (n_checkpoints, B).
    actions
        Arms played, (T,) or (T, B), if ``record_actions``; else None.
    """

    total_regret: float | FloatArray
    checkpoint_regret: FloatArray
    actions: IntArray | None


@dataclass
class _RunBlock:
    """One :meth:`LinearAgent.run` call: its checked inputs and the outputs the compiled loop fills.

    Tables are (T, 1 or B, n_arms[, d]); ``regret`` is (n_checkpoints, B), ``actions`` (T or 0, B),
    ``cum`` (B,) and ``counters`` (B, 3): clipped features, clipped rewards, eigenvalue floors.
    """

    features: FloatArray
    rewards: FloatArray
    expected: FloatArray
    checkpoints: IntArray
    record_actions: bool
    parallel: bool
    regret: FloatArray
    actions: IntArray
    cum: FloatArray
    counters: IntArray

    @property
    def n_steps(self) -> int:
        """T, the rounds of the block."""
        return int(self.features.shape[0])

    def tables(self, start: int, stop: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Rounds ``start:stop`` of the features, rewards and expected rewards."""
        return self.features[start:stop], self.rewards[start:stop], self.expected[start:stop]

    def slots(self, start: int, stop: int) -> IntArray:
        """Per round of ``start:stop``: the index of the checkpoint it closes, or -1."""
        ck = self.checkpoints
        slot = np.full(stop - start, -1, dtype=np.int64)
        hit = (ck > start) & (ck <= stop)
        slot[ck[hit] - start - 1] = np.flatnonzero(hit)
        return slot


class LinearAgent(Agent):
    """Shared machinery of LinUCB and LDP-LinUCB: server, client calls, step API and fast path."""

    _sched: FloatArray
    _sigma: float
    #: Grid of the lattice sampler of the reports (0.0: float sampler, or no noise).
    reads_obs = True  # the arms' features
    _grid: float = 0.0
    _l_x: float
    _l_y: float
    _quadratic: bool
    _initial_shift: float
    #: The copies' report-noise generators (set by the private agents, which draw report noise).
    _copy_rngs: tuple[np.random.Generator, ...]
    #: Largest |entry| of the features the agent takes (``act``'s ``obs``, ``run``'s ``features``);
    #: None: any finite number (the private agents clip each row to norm l_x).
    feature_bound: ClassVar[float | None] = None
    #: Why ``feature_bound`` is needed, said in the refusal of features outside it.
    feature_bound_reason: ClassVar[str] = ""

    def __init__(self, n_features: int, *, n_envs: int | None, seed: int | None) -> None:
        # The arm count is read from each observation; Agent's fixed-K check does not apply.
        self.n_features = check_int("n_features", n_features, minimum=1)
        super().__init__(2, n_envs=n_envs, seed=seed)
        self.n_arms = 0

    def _check_state_size(self) -> None:
        # Server (V, U, θ, u) and the per-step report and noise buffers: about 4d² + 4d floats per copy.
        d = as_float(self.n_features)  # inf beyond the floats (10**400): refused as beyond any memory
        nbytes = 8.0 * as_float(self.batch) * (4.0 * d * d + 4.0 * d + 8.0)
        check_state_size(nbytes, state_arguments(self.n_envs, n_features=self.n_features))

    def check_env(self, env: Any) -> None:
        """Check that ``env`` fits the agent: feature matrices (n_arms, d) with d = ``n_features``.

        The env's observation space (``single_observation_space`` of a vector env) must be a Box of
        shape (K, d) with K its number of arms, and the env single (``n_envs=None``) or a vector
        env with ``num_envs == n_envs``.

        Raises
        ------
        ValueError
            One sentence naming what differs.
        """
        n_arms = env_arms(env)
        space = _space(env, "observation_space")
        shape = getattr(space, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != n_arms or shape[1] != self.n_features:
            raise ValueError(
                f"env must observe feature matrices of shape ({n_arms}, {self.n_features}), one row of "
                f"n_features={self.n_features} per arm, got observations of shape {shape}."
            )
        self._check_env_copies(env)

    def _rng_held(self) -> Any:
        """A numba typed list of the copies' noise generators (the private agents' report noise; none here)."""
        raise NotImplementedError(f"{type(self).__name__} draws no report noise.")

    @property
    def _noise_size(self) -> int:
        d = self.n_features
        return d * (d + 1) // 2 + d if self._sigma > 0 else 0

    def _reset_state(self) -> None:
        self.server = LinUCBServer(self.n_features, self.batch, self._initial_shift)
        self._clips: IntArray = np.zeros((self.batch, 2), dtype=np.int64)
        self._last_obs: FloatArray | None = None
        self._send_all = np.ones(self.batch, dtype=np.bool_)
        self._no_noise = np.empty((self.batch, 0))
        self._m = self._noise_size
        self._holder: tuple[np.random.Generator, GeneratorHolder] | None = None
        self._bind_server()
        self._kernels = _StepKernels.load(2 if self.n_envs is None else 3)

    def _bind_server(self) -> None:
        """Collect the arrays and parameters every step call passes after the round's own values.

        The step calls check that ``server`` is still the one bound here and bind again if not.
        """
        srv = self.server
        if not isinstance(srv, LinUCBServer) or srv.theta.shape != (self.batch, self.n_features):
            shape = getattr(getattr(srv, "theta", None), "shape", None)
            raise ValueError(
                f"server must be a LinUCBServer of {self.batch} cop{'y' if self.batch == 1 else 'ies'} and "
                f"dimension n_features={self.n_features} (theta of shape {(self.batch, self.n_features)}), "
                f"got {type(srv).__name__} with theta of shape {shape}."
            )
        self._bound_server = srv
        x_max = sys.float_info.max if self.feature_bound is None else self.feature_bound  # the kernels' check
        self._params = np.array(
            [*self._sched, self._l_x, self._l_y, self._sigma, float(self._quadratic), self._grid, x_max]
        )
        self._choose_args = (srv.theta, srv.chol, self._sched, self._l_x, self._quadratic, x_max)
        self._report_args = (
            self._sched,
            self._l_x,
            self._l_y,
            self._sigma,
            self._grid,
            srv.gram,
            srv.moment,
            srv.chol,
            srv.theta,
            self._clips,
            srv.n_eig_floor,
        )

    def _rng_holder(self) -> GeneratorHolder:
        """A :class:`~agents.linear._kernels.GeneratorHolder` of ``rng`` itself, for the single-env report.

        Built again when ``rng`` is another object (a reset, a copy of the agent): a copy's holder
        would hold a copy of the generator, so it is never pickled (:meth:`__getstate__`).
        """
        holder = self._holder
        if holder is None or holder[0] is not self.rng:
            holder = self._holder = (self.rng, GeneratorHolder(self.rng))
        return holder[1]

    def __getstate__(self) -> dict[str, Any]:
        """The agent without its generator holder and without its binding to the server's arrays.

        The bound tuples hold views of the server's buffer; a copy would hold copies of them, and
        learn into arrays its server no longer has. The copy binds again at its first step.
        """
        state = dict(self.__dict__)
        state["_holder"] = None
        state["_bound_server"] = state["_choose_args"] = state["_report_args"] = None
        return state

    def _per_copy(self, values: IntArray) -> int | IntArray:
        return int(values[0]) if self.n_envs is None else values.copy()

    @property
    def t(self) -> int:
        """Rounds completed (reports received by the server)."""
        return self.server.t

    @property
    def theta(self) -> FloatArray:
        """Current estimate θ, (d,) or (B, d)."""
        return self.server.theta[0] if self.n_envs is None else self.server.theta

    @property
    def n_eig_floor(self) -> int | IntArray:
        """Rounds in which V + cI was indefinite and the eigenvalue floor was used (per copy)."""
        return self._per_copy(self.server.n_eig_floor)

    def schedule(self, t: int) -> tuple[float, float, float]:
        """(γ_t, c_t, β_t) of round ``t`` (1-based, at most 2**63 - 1: the server counts rounds in int64).

        Raises
        ------
        TypeError, ValueError
            If ``t`` is not an integer in [1, 2**63 - 1].
        """
        t = check_int_range("t", t, 1, INT64_MAX, "the server counts rounds in int64")
        gamma, shift, beta = round_schedule(t, self._sched)
        return float(gamma), float(shift), float(beta)

    def act(self, obs: Any = None) -> Any:
        """Client side of round t+1: score the candidates of ``obs`` with the broadcast θ, U, β_{t+1}.

        ``obs`` is the (n_arms, d) feature matrix (with ``n_envs=N``: (N, n_arms, d)) of finite
        numbers (inside [-:attr:`feature_bound`, :attr:`feature_bound`] where the agent has one);
        it is kept for ``update``, which reports the chosen row. A float64 array the step can use
        directly (C-ordered, say) is kept as it is, not copied (a copy would cost a few percent of
        a step): a loop that writes the next round's features into the same array must do so after
        ``update`` (this package's envs return a new array every step). Any other observation is
        kept as a converted copy.
        """
        if (
            self.n_envs is None
            and type(obs) is np.ndarray
            and obs.ndim == 2
            and (obs.dtype is _FLOAT64 or obs.dtype == _FLOAT64)  # arrays made by numba: an equal dtype
            and obs.flags.c_contiguous
        ):  # the usual observation, used as it is: the kernel checks its shape and values
            srv = self.server
            if srv is not self._bound_server:
                self._bind_server()
            chosen = self._kernels.choose_one(obs, srv.t + 1, self._params, srv.buffer)
            if chosen >= 0:
                self.n_arms = obs.shape[0]
                self._last_obs = obs
                return chosen
        lead, axes = ((), ()) if self.n_envs is None else ((self.n_envs,), ("copy",))
        x = self._features("obs", obs, lead, axes)
        srv = self.server
        if srv is not self._bound_server:
            self._bind_server()
        out = np.empty(self.batch, dtype=np.int64)
        self._kernels.choose(x, srv.t + 1, *self._choose_args, out)
        self.n_arms = x.shape[-2]
        self._last_obs = x
        return int(out[0]) if self.n_envs is None else out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Client report of the arm played in the last ``act`` (features kept from it), then server update.

        ``info`` is not used (its ``regret`` is the env's business, not the learner's), but its
        per-arm arrays and ``optimal_action`` must fit the arm count of the last observation.
        """
        x = self._last_obs
        if x is None:
            raise RuntimeError("update() needs the features of the last act(obs); call act(obs) first.")
        r = self._plain_feedback(x, action, reward)
        if r is not None:  # one env, plain scalars: one compiled call
            if info is not None:
                self._check_info(info, x.shape[-2])
            self._report_one(x, action, r)
            return
        a, rewards = self._feedback(action, reward, info, n_arms=x.shape[-2])
        self._report(x, a, rewards, self._send_all)

    def _features(self, name: str, value: Any, lead: tuple[int, ...], axes: tuple[str, ...]) -> FloatArray:
        """:func:`~agents.linear.protocol.as_features` with :attr:`feature_bound` (``axes`` names ``lead``'s axes)."""
        reason = self.feature_bound_reason.format(name=self.name)
        return as_features(name, value, lead, self.n_features, self.feature_bound, reason, axes)

    def _plain_feedback(self, x: FloatArray, action: Any, reward: Any) -> float | None:
        """:meth:`Agent._scalar_feedback` for the arms of ``x``, with the usual case (int, float) inlined.

        The rewards must lie inside ``reward_bounds`` (LinUCB's), or be finite (the private agents
        clip them: their ``reward_bounds`` is None).
        """
        tr, ta = type(reward), type(action)
        if (tr is float or tr is _NP_FLOAT64) and (ta is int or ta is _NP_INT64) and self.n_envs is None:
            return reward if 0 <= action < x.shape[0] and self._plain_low <= reward <= self._plain_high else None
        return self._scalar_feedback(action, reward, x.shape[-2])

    def _report_one(self, x: FloatArray, action: int, reward: float) -> None:
        """One env's report of round t+1 and the server update, for an action and reward already checked.

        One compiled call (:func:`~agents.linear._kernels.step_report_drawn`), which draws the
        report's normals from ``rng`` itself: the same draws as ``rng.standard_normal(m)``.
        """
        srv = self.server
        if srv is not self._bound_server:
            self._bind_server()
        holder = self._holder
        gen = holder[1] if holder is not None and holder[0] is self.rng else self._rng_holder()
        code = self._kernels.report_drawn(gen, x, action, reward, srv.t + 1, self._params, srv.buffer)
        if code < 0:  # the server's buffer was replaced since it was bound
            raise ValueError(
                f"server.buffer must hold V, u, U and theta of one copy of dimension {self.n_features} "
                f"({2 * self.n_features * (self.n_features + 1)} floats), got {srv.buffer.shape[0]} floats."
            )
        srv.t += 1
        self._last_obs = None
        if code:  # clip flags (1: x, 2: y) and the eigenvalue floor (4)
            self._clips[0, 0] += code & 1
            self._clips[0, 1] += (code >> 1) & 1
            srv.n_eig_floor[0] += code >> 2

    def _report(self, x: FloatArray, actions: IntArray, rewards: FloatArray, send: BoolArray) -> None:
        """Round t+1's reports (from the copies with ``send``; the others send nothing) and server update.

        Every reporting copy draws its ``d(d+1)/2 + d`` normals (when σ > 0) from its own noise
        generator (``rng`` for one env; copy i of a batch seeded s: a single agent's seeded s + i,
        docs/design.md, "Agents", Seeds); a copy whose user may not report draws nothing, as a
        single agent draws nothing for a withheld report. ``step_update``
        (:mod:`agents.linear._kernels`) does the rest in one compiled call.
        """
        m = self._m
        if not m:
            noise = self._no_noise
        elif self.n_envs is None:
            noise = self.rng.standard_normal((1, m))
        elif send is self._send_all or send.all():
            noise = np.empty((self.batch, m))
            fill_copy_normals(self._rng_held(), noise)
        else:  # the reporting copies' draws only (numpy's normals: the ones fill_copy_normals makes)
            noise = np.zeros((self.batch, m))
            for b in np.flatnonzero(send):
                noise[b] = self._copy_rngs[b].standard_normal(m)
        srv = self.server
        if srv is not self._bound_server:
            self._bind_server()
        self._kernels.update(x, actions, rewards, send, noise, srv.t + 1, *self._report_args)
        srv.t += 1
        self._last_obs = None

    def run(
        self,
        features: npt.ArrayLike,
        rewards: npt.ArrayLike,
        expected_rewards: npt.ArrayLike | None = None,
        *,
        checkpoints: npt.ArrayLike | None = None,
        record_actions: bool = False,
        parallel: bool | None = None,
    ) -> LinearRunResult:
        """Play a block of T rounds from the current state in a compiled loop (the fast path).

        Same kernels, same random draws and hence the same actions as T ``act``/``update`` calls;
        call it again with the next block to continue (the round counter and the model carry on).

        Parameters
        ----------
        features
            (T, n_arms, d) feature matrices, shared by every copy, or (T, N, n_arms, d), one per copy.
        rewards
            (T, n_arms) or (T, N, n_arms): the reward the client observes if it plays each arm.
        expected_rewards
            Same shape rules: expected rewards, for the regret max_a E[r_a] - E[r_played]. Default
            ``rewards`` (the regret of the authors' code, on realized ratings).
        checkpoints
            Ascending round counts within the block (1..T) at which to record the cumulative regret.
        record_actions
            Keep the arms played.
        parallel
            Spread the copies over numba's threads (``numba.set_num_threads`` limits them). Default:
            when there are several copies and several threads. The result is the same either way.

        Returns
        -------
        LinearRunResult
            Regret over this block (not since reset) and optionally the actions.
        """
        block = self._run_inputs(features, rewards, expected_rewards, checkpoints, record_actions, parallel)
        self._play_block(block, None)
        return self._run_result(block)

    def _play_block(self, block: _RunBlock, users: Any) -> None:
        """The compiled loop of :meth:`run` over a checked block (``users``: its rounds' users, unused here)."""
        n_copies, n_steps = self.batch, block.n_steps
        m = self._noise_size
        chunk = max(1, _NOISE_CHUNK // max(1, n_copies * m))
        srv = self.server
        for start in range(0, n_steps, chunk):
            stop = min(n_steps, start + chunk)
            noise = np.empty((stop - start, n_copies, m))
            if self.n_envs is None:
                fill_normals(self.rng, noise)
            elif m:  # copy b's normals from its own generator, as the step API draws them
                fill_copy_normals(self._rng_held(), noise)
            driver = run_parallel if block.parallel else run_serial
            driver(
                (*block.tables(start, stop), noise, block.slots(start, stop), block.regret, block.actions[start:stop]),
                (srv.t, self._sched, self._l_x, self._l_y, self._sigma, self._quadratic, self._grid),
                (srv.gram, srv.moment, srv.chol, srv.theta, block.cum, block.counters),
            )
            srv.t += stop - start

    def _run_inputs(
        self,
        features: npt.ArrayLike,
        rewards: npt.ArrayLike,
        expected_rewards: npt.ArrayLike | None,
        checkpoints: npt.ArrayLike | None,
        record_actions: bool,
        parallel: bool | None,
    ) -> _RunBlock:
        """The checked arguments of :meth:`run` (same rules and messages for every linear agent) and its outputs."""
        n_copies = self.batch
        d = self.n_features
        if not isinstance(record_actions, bool | np.bool_):
            raise TypeError(f"record_actions must be True or False, got {describe(record_actions)}.")
        if parallel is not None and not isinstance(parallel, bool | np.bool_):
            raise TypeError(f"parallel must be True, False or None, got {describe(parallel)}.")
        raw = _as_array(features)
        if raw is None or raw.dtype.kind not in "iuf":
            raise TypeError(f"features must be a real array, got {describe(features)}.")
        feat = np.ascontiguousarray(raw, dtype=np.float64)
        per_copy = feat.ndim == 4
        if feat.ndim not in (3, 4) or (per_copy and (self.n_envs is None or feat.shape[1] != n_copies)):
            allowed = "(T, n_arms, d)" + ("" if self.n_envs is None else f" or (T, {n_copies}, n_arms, d)")
            raise ValueError(f"features must have shape {allowed} with d={d}, got {feat.shape}.")
        n_steps = feat.shape[0]
        if n_steps == 0:
            raise ValueError(f"features must hold at least one round (T >= 1), got shape {feat.shape}.")
        lead, axes = ((n_steps, n_copies), ("round", "copy")) if per_copy else ((n_steps,), ("round",))
        feat = self._features("features", feat, lead, axes).reshape(n_steps, -1, feat.shape[-2], d)
        n_arms = feat.shape[2]
        rew = self._table("rewards", rewards, n_steps, n_arms)
        exp = rew if expected_rewards is None else self._table("expected_rewards", expected_rewards, n_steps, n_arms)
        ck = self._checkpoints(checkpoints, n_steps)
        if parallel is None:
            parallel = n_copies > 1 and numba.get_num_threads() > 1
        return _RunBlock(
            features=feat,
            rewards=rew,
            expected=exp,
            checkpoints=ck,
            record_actions=bool(record_actions),
            parallel=bool(parallel),
            regret=np.zeros((ck.shape[0], n_copies)),
            actions=np.zeros((n_steps if record_actions else 0, n_copies), dtype=np.int64),
            cum=np.zeros(n_copies),
            counters=np.zeros((n_copies, 3), dtype=np.int64),
        )

    def _run_result(self, block: _RunBlock) -> LinearRunResult:
        """Add a finished block's clip and floor counts to the agent's; the block's regret and actions."""
        self._clips += block.counters[:, :2]
        self.server.n_eig_floor += block.counters[:, 2]
        self._last_obs = None
        cum, regret, actions = block.cum, block.regret, block.actions if block.record_actions else None
        if self.n_envs is None:
            return LinearRunResult(float(cum[0]), regret[:, 0], None if actions is None else actions[:, 0])
        return LinearRunResult(cum, regret, actions)

    def _table(self, name: str, value: Any, n_steps: int, n_arms: int) -> FloatArray:
        """Reward-like table as (T, 1 or B, n_arms) float64, finite (and inside ``reward_bounds``, LinUCB's)."""
        raw = _as_array(value)
        if raw is None or raw.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a real array, got {describe(value)}.")
        arr = np.ascontiguousarray(raw, dtype=np.float64)
        shapes = [(n_steps, n_arms)] + ([] if self.n_envs is None else [(n_steps, self.batch, n_arms)])
        if arr.shape not in shapes:
            allowed = " or ".join(str(s) for s in shapes)
            raise ValueError(f"{name} must have shape {allowed} to match features, got {arr.shape}.")
        # The same rule and message as ``update``'s reward check.
        axes = ("round", "copy", "arm") if arr.ndim == 3 else ("round", "arm")
        check_values(name, arr, self.reward_bounds, self._bounds_reason(), axes)
        return arr.reshape(n_steps, -1, n_arms)

    @staticmethod
    def _checkpoints(checkpoints: Any, n_steps: int) -> IntArray:
        if checkpoints is None:
            return np.zeros(0, dtype=np.int64)
        raw = _as_array(checkpoints)
        if raw is None or raw.ndim != 1 or raw.dtype.kind not in "iu":
            raise ValueError(f"checkpoints must be a 1-d array of integers, got {describe(checkpoints)}.")
        if raw.size and (raw.min() < 1 or raw.max() > n_steps):
            raise ValueError(
                f"checkpoints must be round counts in [1, {n_steps}], got values from {raw.min()} to {raw.max()}."
            )
        ck = raw.astype(np.int64)
        if np.any(np.diff(ck) <= 0):
            raise ValueError(
                f"checkpoints must be strictly increasing round counts in [1, {n_steps}], got {ck.size} values "
                "not in increasing order."
            )
        return ck
