r"""Batched private sufficient statistics: the step API and fast path of LDP-OLS and Shuffle-LinUCB.

:class:`StatsAgent` is the protocol of :mod:`agents.linear._stats_kernels` for one env or ``B``
copies in lock-step. Each round the client (the user) plays the arm of largest
:math:`x^\top\theta` (``width = 0``: greedy) or :math:`x^\top\theta + \beta\sqrt{x^\top\tilde V^{-1}x}`
with the model the server last broadcast, then sends one privatized report of its clipped
pair (x, y) encoding :math:`(x x^\top, y x)` in the unit ball (``gram_weight`` splits the ball
between the two blocks). The server adds the decoded reports of a batch of ``batch_size``
rounds and, at the end of the batch, refits

.. math:: \theta = (V + c_t I)^{-1} u,\qquad c_t = \lambda + s\,\nu\sqrt t,

where t counts the reports, :math:`\nu = 2 s_g \sqrt d` is the typical spectral norm of one
report's noise matrix (:math:`s_g` the standard deviation of a decoded Gram entry's noise), so
that :math:`\nu\sqrt t` is that of the sum, and s = ``shift_scale``. A shift that grows like
the noise keeps :math:`V + c_t I` positive definite and, with s large, shrinks θ towards
:math:`u / c_t`: a ridge estimate for a Gram matrix swamped by noise [P]. When the factorization
fails the eigenvalues are floored at :math:`c_t/2` (as in LDP-LinUCB; ``n_eig_floor``).

:meth:`StatsAgent.act`/:meth:`StatsAgent.update` (one compiled call each) and
:meth:`StatsAgent.run` (a block of rounds in one compiled loop, ``agents.linear._stats_kernels``)
use the same kernels and draws: the same actions for the same seed. Subclasses choose the
mechanism, its parameters and the privacy accounting.

Where the data sits. The server object (:class:`StatsServer`, the agent's ``server``) holds only
the sums of the reports of closed batches, the factor and θ. The reports of the open batch are
summed outside it, in the agent's ``open_batch`` (:class:`OpenBatch`), and reach V and u when
the batch closes; each agent documents who holds them: LDP-OLS's users
(:class:`~agents.linear.ldp_ols.BatchClients`: with the Gaussian mechanism the simulation adds a
batch's noise in aggregate at its close, so until then these sums are the users' exact data),
Shuffle-LinUCB's trusted shuffler (:class:`~agents.linear.shuffle_linucb.Shuffler`: privatized
reports it has not yet handed on). Status tag: [P] marks an engineering
choice of this project, not a constant of the papers.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from numba import types

from agents.base import (
    INT64_MAX,
    as_float,
    check_float,
    check_int_range,
    check_state_size,
    entry_point,
    state_arguments,
)
from agents.linear._stats_kernels import (
    GENERATOR_HOLDER,
    MECH_GAUSSIAN,
    MECH_L2_BALL,
    MECH_NONE,
    P_WORK,
    GeneratorHolder,
    fill_block_noise,
    fill_block_noise_copies,
    fill_report_noise,
    run_parallel,
    run_serial,
    step_choose,
    step_choose_one,
    step_report_one,
    step_report_plain,
    step_update,
    write_report,
)
from agents.linear.base import StepKernels, _RunBlock
from agents.linear.private_base import LocalDPLinearAgent
from agents.linear.protocol import LAST_ROUND, ServerBuffer, SharedBuffer, as_features
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.privacy.accounting import ReportLedger, ReportMechanism, user_ids
from bandit_envs.privacy.l2_ball import l2_ball_keep_probability, l2_ball_scale

__all__ = ["OpenBatch", "StatsAgent", "StatsServer"]


#: Report draws (normals and uniforms) kept in memory at once by the fast path, ~4 MB.
_NOISE_CHUNK = 1 << 19


_FLOAT64 = np.dtype(np.float64)
_NDARRAY = np.ndarray
_NP_INT64, _NP_FLOAT64 = np.int64, np.float64
_INF = math.inf


class _StepKernels(StepKernels):
    """LDP-OLS's and Shuffle-LinUCB's step kernels for observations of one rank (2: one env, 3: N copies).

    The arrays the agent owns are C-contiguous; actions and rewards come from the caller and may
    have any strides (layout ``"A"``). ``choose_one`` and ``report_one`` are one env's calls with
    plain scalars (rank 2 only): they take the agent's parameter array ``_params`` (its scratch
    included), the server's ``buffer`` and the open batch's ``buffer`` where the batch calls take a
    dozen arrays (each array argument costs about 25 ns to pass); ``report_plain``
    (:func:`~agents.linear._stats_kernels.step_report_plain`, without the generator nor the
    server's buffer) takes the rounds that draw nothing and close no batch (LDP-OLS's Gaussian
    reports between batch closes). ``choose_one`` checks the observation's strides in the
    kernel (cheaper than numpy's ``flags`` in Python).
    """

    def __init__(self, rank: int) -> None:
        super().__init__(rank)
        f8, i8 = types.float64, types.int64
        obs = types.Array(f8, rank, "C")
        vec, mat, cube = types.Array(f8, 1, "C"), types.Array(f8, 2, "C"), types.Array(f8, 3, "C")
        int_vec, int_mat = types.Array(i8, 1, "C"), types.Array(i8, 2, "C")
        rngs = types.ListType(numba.typeof(np.random.default_rng(0)))
        self.choose: Any = entry_point(step_choose, (obs, mat, cube, f8, f8, int_vec))
        self.update: Any = entry_point(
            step_update,
            (rngs, obs, types.Array(i8, 1, "A"), types.Array(f8, 1, "A"), mat, mat, mat, vec, vec, types.boolean, f8,
             cube, mat, cube, mat, cube, mat, int_mat, int_vec),
        )  # fmt: skip
        if rank == 2:  # one env: the parameter array, the server's buffer and the open batch's
            self.choose_one: Any = entry_point(step_choose_one, (obs, vec, vec))
            self.report_one: Any = entry_point(step_report_one, (GENERATOR_HOLDER, obs, i8, f8, i8, i8, vec, vec, vec))
            self.report_plain: Any = entry_point(step_report_plain, (obs, i8, f8, i8, vec, vec, int_mat))


class StatsServer(ServerBuffer):
    """Server side of the batched statistics agents, for B copies (batch axis first).

    It holds only what it received, the closed batches' reports, and what it computed from them:
    V (``gram``, upper triangle) and u (``moment``), the sums of those reports, the upper Cholesky factor of
    :math:`V + c I` (``chol``) and θ (``theta``); ``t`` counts the rounds played (the reports
    sent, the open batch's included). The open batch's reports are not here: they sit in the
    agent's ``open_batch`` (:class:`OpenBatch`) until the batch closes. The four arrays are
    C-contiguous views of one float buffer (``buffer``, in the order V, u, U, θ), so that a
    single-env step passes one array to its compiled kernel: write into them in place; they
    cannot be rebound.
    """


class OpenBatch(SharedBuffer):
    """The reports of the open batch, summed outside the server until the batch closes (B copies, batch axis first).

    ``gram`` (B, d, d; upper triangle) and ``moment`` (B, d) are the sums of the decoded reports
    of the open batch, ``count`` their number (shared by the copies, which play in lock-step).
    The kernels add each report here and, when the batch closes, add the sums to the server's V
    and u and zero them (:func:`agents.linear._stats_kernels.refit`). Who holds them, and what
    they are before the batch closes, is the subclass's docstring (LDP-OLS:
    :class:`~agents.linear.ldp_ols.BatchClients`; Shuffle-LinUCB:
    :class:`~agents.linear.shuffle_linucb.Shuffler`). Both are views of one float buffer
    (``buffer``: P, then p), passed whole by the single-env step.
    """

    def __init__(self, n_features: int, batch: int) -> None:
        super().__init__(n_features, batch)
        self.count = 0


class StatsAgent(LocalDPLinearAgent):
    """Shared machinery of the batched private-statistics agents (see the module docstring).

    Subclasses call :meth:`_setup` with the mechanism and its noise, then :meth:`_reset_state`;
    they implement the privacy properties. Arguments are checked here.
    """

    server: StatsServer  # type: ignore[assignment]  # LinearAgent's properties read theta, t, n_eig_floor
    #: The class of ``open_batch``: who holds the open batch's reports (set by each agent).
    _open_batch_type: type[OpenBatch] = OpenBatch
    #: The largest ``batch_size`` and why: the kernels' parameter array holds it as a float64,
    #: exact up to 2⁵³ (a subclass may bound it further).
    max_batch_size: int = 2**53
    max_batch_size_reason: str = "the compiled kernels hold it as a float64, exact up to 2**53"

    def __init__(
        self,
        n_features: int,
        *,
        l_x: float,
        l_y: float,
        gram_weight: float,
        reg: float,
        shift_scale: float,
        width: float,
        batch_size: int,
        n_envs: int | None,
        seed: int | None,
    ) -> None:
        super().__init__(n_features, n_envs=n_envs, seed=seed)
        self.l_x = check_float("l_x", l_x, low=0.0, low_open=True)
        self.l_y = check_float("l_y", l_y, low=0.0, low_open=True)
        if not (1e-150 < self.l_x < 1e150 and 1e-150 < self.l_y < 1e150):
            raise ValueError(f"l_x and l_y must lie in (1e-150, 1e150), got l_x={self.l_x:g} and l_y={self.l_y:g}.")
        self.gram_weight = check_float("gram_weight", gram_weight, low=0.0, high=1.0, low_open=True, high_open=True)
        self.reg = check_float("reg", reg, low=0.0, low_open=True)
        self.shift_scale = check_float("shift_scale", shift_scale, low=0.0)
        self.width = check_float("width", width, low=0.0)
        self.batch_size = check_int_range("batch_size", batch_size, 1, self.max_batch_size, self.max_batch_size_reason)
        self._mech = MECH_NONE
        self._sigma = 0.0
        self._scale = 0.0
        self._keep = 0.0
        self._level = 0.0

    def _setup(
        self, mechanism: int, sigma: float, scale: float, keep: float, noise_sd: float, grid: float = 0.0
    ) -> None:
        """Fix the mechanism: code, Gaussian σ, L2-ball B and π, the noise sd per coordinate of v, the lattice grid.

        ``grid`` > 0 (Gaussian only): the lattice sampler, every report entry (encoded) a multiple
        of ``grid`` (:func:`agents.linear._stats_kernels.write_report`); ``sigma`` is then the
        widened one (:func:`lattice_sigma`).
        """
        self._mech, self._sigma, self._scale, self._keep = mechanism, sigma, scale, keep
        self._grid = grid
        d = self.n_features
        dim = d * (d + 1) // 2 + d
        w_g = self.gram_weight
        self.moment_weight = w_m = math.sqrt(1.0 - w_g * w_g)
        #: Typical spectral norm ν of one report's decoded Gram noise (2 s_g sqrt(d)).
        self.noise_level = 2.0 * noise_sd * self.l_x * self.l_x / w_g * math.sqrt(d)
        self._level = self.noise_level
        #: What a client does (the mechanism itself); :meth:`client_report` runs it.
        self._enc_client = np.array(
            [mechanism, self.l_x, self.l_y, w_g, w_m, sigma, scale, keep, grid], dtype=np.float64
        )
        if mechanism == MECH_GAUSSIAN:
            # Simulation shortcut [P]: the server only ever uses a batch's sum, and the sum of n reports'
            # i.i.d. N(0, σ²) noises is one N(0, n σ²) draw per coordinate: drawn once per batch. Until
            # then the open batch's sums are un-noised: they stay on the users' side (``open_batch``).
            self._enc = self._enc_client.copy()
            self._enc[0] = MECH_NONE
            root_n = math.sqrt(self.batch_size)
            gs, ms = self.l_x * self.l_x / w_g, self.l_x * self.l_y / w_m
            self._batch_sd = np.array(
                [root_n * sigma * self.l_x * self.l_x / w_g, root_n * sigma * self.l_x * self.l_y / w_m,
                 root_n * sigma, grid, gs, ms]
            )  # fmt: skip
            self._n_normals, self._n_batch_normals = 0, dim
        else:
            self._enc = self._enc_client
            self._batch_sd = np.zeros(6)
            self._n_normals, self._n_batch_normals = (0 if mechanism == MECH_NONE else dim), 0
        self._n_uniforms = 2 if mechanism == MECH_L2_BALL else 0
        scales = [self.noise_level, *self._batch_sd[:2], *self._enc_client, l_x2 := self.l_x * self.l_x / w_g]
        if not all(math.isfinite(v) for v in scales) or l_x2 == 0.0:
            raise ValueError(
                f"epsilon, l_x, l_y and gram_weight must give finite noise scales, got noise level "
                f"{self.noise_level:g} with l_x={self.l_x:g}, l_y={self.l_y:g}, gram_weight={w_g:g}."
            )
        # The same fields LinearAgent's constructor sets (unused by this family's kernels).
        self._sched = np.zeros(7)
        self._quadratic = False
        self._initial_shift = self.reg

    @property
    def grid(self) -> float:
        """The grid every report entry (encoded) is a multiple of (lattice sampler), else 0.0."""
        return self._grid

    def _setup_l2_ball(self, epsilon: float) -> None:
        """Duchi et al.'s L2-ball mechanism at ``epsilon`` (ε-LDP per report): sets ``scale`` and ``report_mechanism``.

        The mechanism's outputs have norm B = ``scale`` (:mod:`bandit_envs.privacy.l2_ball`); an ε-LDP
        report is accounted as randomized response at ε (the optimal composition of ε-DP mechanisms).
        """
        d = self.n_features
        dim = d * (d + 1) // 2 + d
        self.scale = l2_ball_scale(epsilon, dim)
        self.report_mechanism = ReportMechanism.randomized_response(epsilon)
        keep = l2_ball_keep_probability(epsilon)
        self._setup(MECH_L2_BALL, 0.0, self.scale, keep, self.scale / math.sqrt(dim))

    def client_report(
        self, x: npt.ArrayLike, y: float, rng: np.random.Generator | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """The report one user sends for the pair (x, y), as the server decodes it: (Gram (d, d), y x (d,)).

        x is clipped to ``l_x``, y to [-l_y, l_y], encoded in the unit ball, privatized by the
        agent's mechanism with draws from ``rng`` (default: the agent's generator; D normals, then
        two uniforms for the L2-ball mechanism) and decoded (the Gram report mirrored from its
        upper triangle). The simulation itself draws the Gaussian noise per batch (see
        :meth:`_setup`); this is the per-report mechanism whose guarantee the agent states.
        """
        row = np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1)
        if row.shape[1] != self.n_features or not np.isfinite(row).all():
            raise ValueError(f"x must be {self.n_features} finite numbers, got shape {np.shape(x)}.")
        yv = check_float("y", y)
        d = self.n_features
        dim = d * (d + 1) // 2 + d if self._mech != MECH_NONE else 0
        normals = np.empty((1, dim))
        uniforms = np.empty((1, 2 if self._mech == MECH_L2_BALL else 0))
        fill_report_noise(self.rng if rng is None else rng, normals, uniforms)
        gram, vec, xc = np.zeros((d, d)), np.zeros(d), np.empty(d)
        write_report(row, 0, yv, self._enc_client, normals[0], uniforms[0], gram, vec, xc)
        upper = np.triu(gram)
        return upper + np.triu(gram, 1).T, vec

    def encode_report(self, gram: npt.ArrayLike, moment: npt.ArrayLike) -> FloatArray:
        """The unit-ball vector v (D,) of a decoded report: upper(gram) · w_g / l_x², moment · w_m / (l_x l_y).

        The inverse of the server's decoding; for an exact pair, ``encode_report(np.outer(x, x), y * x)``
        is the v the mechanism privatizes (norm at most 1 for clipped x, y).
        """
        g = np.asarray(gram, dtype=np.float64)
        m = np.asarray(moment, dtype=np.float64)
        iu = np.triu_indices(self.n_features)
        return np.concatenate([g[iu] * self.gram_weight / self.l_x**2, m * self.moment_weight / (self.l_x * self.l_y)])

    def _check_state_size(self) -> None:
        # V, the open batch's V, factor and per-step buffers: about 4d² + 6d floats per copy, plus noise rows.
        d = as_float(self.n_features)  # inf beyond the floats (10**400): refused as beyond any memory
        check_state_size(
            8.0 * as_float(self.batch) * (4.0 * d * d + 6.0 * d + d * (d + 1) / 2.0 + 16.0),
            state_arguments(self.n_envs, n_features=self.n_features),
        )

    @property
    def _noise_size(self) -> int:
        return self._n_normals

    def _check_shift(self) -> None:
        """Refuse a ``shift_scale`` (or ``reg``) whose shift c_t is not finite at some round (t < 2**63).

        c_t grows with t: it is checked at the last round the kernels count. Called by
        :meth:`_reset_state`, which the subclasses' constructors call once the noise level is set.
        """
        root = math.sqrt(LAST_ROUND)
        if math.isfinite(self.reg + self.shift_scale * self._level * root):
            return
        limit = max(0.0, sys.float_info.max - self.reg) / (self._level * root)
        raise ValueError(
            f"shift_scale must keep the shift c_t = reg + shift_scale·ν·sqrt(t) finite at every round t < 2**63, "
            f"so be at most {limit:g} with reg={self.reg:g} and the noise level ν = {self._level:g} that "
            f"epsilon, l_x and gram_weight give, got shift_scale={self.shift_scale:g}."
        )

    def _reset_state(self) -> None:
        self._check_shift()
        self.server = StatsServer(self.n_features, self.batch, self.reg)
        self.open_batch = self._open_batch_type(self.n_features, self.batch)
        self._clips: IntArray = np.zeros((self.batch, 2), dtype=np.int64)
        self._last_obs: FloatArray | None = None
        self._reports = ReportLedger(self.batch)
        self._reset_reports()
        self._step = _StepKernels.load(2 if self.n_envs is None else 3)
        self._normals = np.empty((self.batch, self._n_normals))
        self._uniforms = np.empty((self.batch, self._n_uniforms))
        self._batch_normals = np.empty((self.batch, self._n_batch_normals))
        self._a1 = np.zeros(1, dtype=np.int64)
        self._r1 = np.zeros(1)
        #: Rounds whose open batch holds fewer reports than this draw nothing (no per-report draws, no
        #: batch close): ``batch_size - 1`` for LDP-OLS's Gaussian reports, else 0.
        self._no_draws_before = self.batch_size - 1 if self._n_normals + self._n_uniforms == 0 else 0
        self._holder: tuple[np.random.Generator, GeneratorHolder] | None = None
        #: The single-env kernels' parameters (``enc``, then the ``P_*`` entries of
        #: :mod:`agents.linear._stats_kernels`), fixed at construction like the fast path's, then
        #: from ``P_WORK`` on the single-env report's scratch (its draws and the clipped x; not state).
        params = [*self._enc, *self._batch_sd, self.reg, self._level, self.shift_scale, self.width, self.batch_size,
                  self._n_normals, self._n_uniforms, self._n_batch_normals]  # fmt: skip
        work = self._n_normals + self._n_uniforms + self._n_batch_normals + self.n_features
        self._params = np.zeros(P_WORK + work)
        self._params[: len(params)] = params

    # Schedule ---------------------------------------------------------------------------------

    def shift(self, t: int) -> float:
        """Shift c_t = reg + shift_scale · noise_level · sqrt(t) of a refit after t reports (0 <= t <= 2**63 - 1)."""
        t = check_int_range("t", t, 0, INT64_MAX, "the server counts reports in int64")
        return self.reg + self.shift_scale * self._level * math.sqrt(t)

    def schedule(self, t: int) -> tuple[float, float, float]:
        """(0, c_t, width): LinearAgent's (γ_t, c_t, β_t) for a refit after t reports (1 <= t <= 2**63 - 1)."""
        t = check_int_range("t", t, 1, INT64_MAX, "the server counts reports in int64")
        return 0.0, self.shift(t), self.width

    # Step API ---------------------------------------------------------------------------------

    def act(self, obs: Any = None) -> Any:
        """Client side of the next round: score the candidates of ``obs`` with the last broadcast θ.

        ``obs`` is the (n_arms, d) feature matrix (with ``n_envs=N``: (N, n_arms, d)); it is kept
        for ``update``, which reports the chosen row. One compiled call. A float64 array the step
        can use directly (C-ordered, say) is kept as it is, not copied (a copy would cost a tenth of
        a step): a loop that writes the next round's features into the same array must do so after
        ``update`` (this package's envs return a new array every step). Any other observation is
        kept as a converted copy.
        """
        if (
            type(obs) is _NDARRAY
            and obs.ndim == 2
            and (obs.dtype is _FLOAT64 or obs.dtype == _FLOAT64)
            and self.n_envs is None
        ):  # the usual observation, used as it is: the kernel checks its layout, shape and values
            chosen = self._step.choose_one(obs, self._params, self.server.buffer)
            if chosen >= 0:
                self.n_arms = len(obs)
                self._last_obs = obs
                return chosen
        srv = self.server
        out = np.empty(self.batch, dtype=np.int64)
        rank = 2 if self.n_envs is None else 3
        shape = getattr(obs, "shape", None)
        if (
            type(obs) is np.ndarray
            and obs.ndim == rank
            and (obs.dtype is _FLOAT64 or obs.dtype == _FLOAT64)
            and obs.flags.c_contiguous
            and shape is not None
            and shape[-1] == self.n_features
            and shape[-2] >= 1
            and (rank == 2 or shape[0] == self.n_envs)
            and self._step.choose(obs, srv.theta, srv.chol, self.width, self.l_x, out)
        ):  # the usual observation, used as it is
            x = obs
        else:
            x = as_features("obs", obs, () if self.n_envs is None else (self.n_envs,), self.n_features)
            step_choose(x, srv.theta, srv.chol, self.width, self.l_x, out)
        self.n_arms = x.shape[-2]
        self._last_obs = x
        return int(out[0]) if self.n_envs is None else out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Client report of the arm played in the last ``act``, then the server's update.

        ``info`` is not used for learning; its ``user_id`` (one per copy) names the round's user
        for the accounting (none: the whole stream is one user), and its per-arm arrays and
        ``optimal_action`` must fit the arm count of the last observation. One compiled call
        (the draws, the reports and, at the end of a batch, the refit).
        """
        x = self._last_obs
        tr, ta = type(reward), type(action)
        if (
            info is None
            and (tr is _NP_FLOAT64 or tr is float)
            and (ta is int or ta is _NP_INT64)
            and x is not None
            and self.n_envs is None
        ):  # the usual one-env feedback: the kernel checks the arm's range and the reward's finiteness
            ob = self.open_batch
            count = ob.count
            if count < self._no_draws_before:  # draws nothing, closes no batch: no generator, no server buffer
                try:  # the kernel counts the clips
                    code = self._step.report_plain(x, action, reward, count, self._params, ob.buffer, self._clips)
                except OverflowError:  # an int action beyond int64: not an arm
                    code = -2
                if code:
                    self._report_code(code, x, action, reward)
                self._last_obs = None
                self._pending_anonymous += 1
                self.server.t += 1
                ob.count = count + 1
                return
            self._report_drawn(x, action, reward, None)
            return
        if x is None:
            raise RuntimeError("update() needs the features of the last act(obs); call act(obs) first.")
        r = self._plain_feedback(x, action, reward)
        if r is None:
            self._update_copies(x, action, reward, info)
            return
        users = None
        if info is not None:
            self._check_info(info, x.shape[-2])
            users = user_ids(info, 1) if info else None
        self._report_drawn(x, action, r, users)

    def _report_drawn(self, x: FloatArray, action: Any, reward: float, users: list[Any] | None) -> None:
        """One env's report with plain scalars (a float reward) that may draw or close a batch: one compiled call."""
        srv, ob = self.server, self.open_batch
        count = ob.count
        try:
            if count < self._no_draws_before:  # a round that draws nothing: the call without the generator
                code = self._step.report_plain(x, action, reward, count, self._params, ob.buffer, self._clips)
            else:
                holder = self._holder
                gen = holder[1] if holder is not None and holder[0] is self.rng else self._rng_holder()
                code = self._step.report_one(
                    gen, x, action, reward, srv.t + 1, count, self._params, srv.buffer, ob.buffer
                )
        except OverflowError:  # an int action beyond int64: not an arm
            code = -2
        if code:
            self._report_code(code, x, action, reward)
        self._last_obs = None
        if users is None:  # counted inline; a subclass sees a completed batch after the counters advance
            self._pending_anonymous += 1
            srv.t += 1
            if count + 1 == self.batch_size:
                ob.count = 0
                self._anonymous_batch_closed()
            else:
                ob.count = count + 1
            return
        close = count + 1 == self.batch_size
        self._count_one(users, close)
        srv.t += 1
        ob.count = 0 if close else count + 1

    def _report_code(self, code: int, x: FloatArray, action: Any, reward: float) -> None:
        """Act on a nonzero code of the single-env report kernel: raise for a refusal, else count its flags."""
        if code < 0:
            if code == -2:  # an arm outside the observation or a reward that is not finite
                self._feedback(action, reward, None, n_arms=x.shape[-2])  # raises the sentence that says which
            srv, ob = self.server, self.open_batch
            raise ValueError(
                f"server.buffer and open_batch.buffer must hold the state of one copy of dimension "
                f"{self.n_features}, got {srv.buffer.shape[0]} and {ob.buffer.shape[0]} floats."
            )
        # clip flags (1: x, 2: y) and the eigenvalue floor (4)
        self._clips[0, 0] += code & 1
        self._clips[0, 1] += (code >> 1) & 1
        self.server.n_eig_floor[0] += code >> 2

    def _update_copies(self, x: FloatArray, action: Any, reward: Any, info: dict[str, Any] | None) -> None:
        """:meth:`update` for N copies, or for one env's feedback that is not plain scalars (checked here)."""
        a, rewards = self._feedback(action, reward, info, n_arms=x.shape[-2])
        users = user_ids(info, self.batch) if info else None
        srv, ob = self.server, self.open_batch
        close = ob.count + 1 == self.batch_size
        self._step.update(
            self._rng_held(),
            x,
            a,
            rewards,
            self._normals,
            self._uniforms,
            self._batch_normals,
            self._enc,
            self._batch_sd,
            close,
            self.shift(srv.t + 1) if close else 0.0,
            srv.gram,
            srv.moment,
            ob.gram,
            ob.moment,
            srv.chol,
            srv.theta,
            self._clips,
            srv.n_eig_floor,
        )
        self._before_count(users, 1)
        srv.t += 1
        ob.count = 0 if close else ob.count + 1
        self._count_round(users)
        self._last_obs = None

    @property
    def _state(self) -> tuple[FloatArray, ...]:
        """(V, u, open batch's V, open batch's u, factor, θ): the arrays the kernels update in place."""
        srv, ob = self.server, self.open_batch
        return srv.gram, srv.moment, ob.gram, ob.moment, srv.chol, srv.theta

    def _before_count(self, users: Any, n_steps: int) -> None:
        """Hook for subclasses: the rounds about to be counted (the server's counters not yet advanced)."""

    def _count_one(self, users: list[Any] | None, close: bool) -> None:
        """Count one env's round with user ids (``close``: it completes the open batch), counters not yet advanced."""
        self._before_count(users, 1)
        self._count_round(users)

    def _anonymous_batch_closed(self) -> None:
        """Hook for subclasses: a one-env round counted inline (no user id) completed the open batch.

        ``_before_count`` was not called for that round; the server's counters have advanced.
        """

    # Fast path --------------------------------------------------------------------------------

    def _play_block(self, block: _RunBlock, users: Any) -> None:
        """The compiled loop of :meth:`run` (same kernels and draws as the step API) over a checked block.

        ``users`` (checked): the block's users, counted in the shuffle batches by
        :meth:`_before_count` before the loop.
        """
        n_copies, n_steps = self.batch, block.n_steps
        srv, ob = self.server, self.open_batch
        self._before_count(users, n_steps)
        per_round = max(1, n_copies * (self._n_normals + self._n_uniforms + self._n_batch_normals // self.batch_size))
        chunk = max(1, _NOISE_CHUNK // per_round)
        driver = run_parallel if block.parallel else run_serial
        params = (self.batch_size, self._enc, self._batch_sd, self.reg, self._level, self.shift_scale, self.width)
        for start in range(0, n_steps, chunk):
            stop = min(n_steps, start + chunk)
            normals = np.empty((stop - start, n_copies, self._n_normals))
            uniforms = np.empty((stop - start, n_copies, self._n_uniforms))
            closes = (ob.count + np.arange(1, stop - start + 1)) % self.batch_size == 0
            batch_normals = np.empty((int(closes.sum()), n_copies, self._n_batch_normals))
            drawn = closes & (self._n_batch_normals > 0)
            if self.n_envs is None:
                fill_block_noise(self.rng, normals, uniforms, batch_normals, drawn)
            else:  # copy b's draws from its own generator, in the order a single agent makes them
                fill_block_noise_copies(self._rng_held(), normals, uniforms, batch_normals, drawn)
            driver(
                (*block.tables(start, stop), normals, uniforms, batch_normals, block.slots(start, stop),
                 block.regret, block.actions[start:stop]),
                (srv.t, ob.count, *params),
                (*self._state, block.cum, block.counters),
            )  # fmt: skip
            ob.count = (ob.count + stop - start) % self.batch_size
            srv.t += stop - start
