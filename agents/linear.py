r"""Linear contextual bandits: LinUCB (OFUL-style) and LDP-LinUCB (Zheng et al., NeurIPS 2020).

Each round the agent receives the feature matrix :math:`X_t` (one row :math:`x_{t,a} \in
\mathbb{R}^d` per arm; with ``n_envs=N`` a stack of shape (N, n_arms, d)) and plays the arm of
largest optimistic index :math:`x^\top\hat\theta + \beta\,\mathrm{bonus}(x)`. Both agents are the
same protocol between a *server* (:class:`LinUCBServer`: the sums :math:`V = \sum x x^\top`,
:math:`u = \sum y x`, the estimate :math:`\theta` and the Cholesky factor of the shifted Gram
matrix) and a *client*, the user of round t (:func:`client_choose`, :func:`client_report`):

1. the server broadcasts :math:`\theta` and the factor of :math:`\tilde V = V + cI`;
2. the client scores its own candidates and plays the best one (the action never leaves it);
3. the client observes the reward and sends :math:`(x x^\top, y x)` — exactly for LinUCB,
   clipped and perturbed by Gaussian noise for LDP-LinUCB;
4. the server adds the report and refactorizes.

All per-round work is done by numba kernels on float64 arrays with the batch axis first. The
step API (``act``/``update``) and the compiled fast path (:meth:`LinUCB.run`, a loop over a block
of feature and reward tensors) call the very same per-copy kernels, so both choose identical
actions for the same seed (``tests/test_linear_agents.py`` checks it;
``benchmarks/bench_ldp_linucb.py`` measures the speed).

Linear algebra: the shifted Gram matrix is factorized :math:`\tilde V = U^\top U` (upper
Cholesky, hand-written for d ~ 20 where a LAPACK call costs more than the arithmetic). The
bonus uses :math:`x^\top \tilde V^{-1} x = \lVert U^{-\top} x\rVert^2` and
:math:`\theta = U^{-1} U^{-\top} u`; no inverse is formed. The loops are written in axpy form
(independent lanes innermost, no reductions reassociated), so results are bit-identical whether
or not LLVM vectorizes them, in whichever kernel they are inlined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from agents.base import Agent, PrivateAgent
from bandit_envs.privacy import gaussian_delta, gaussian_sigma_analytic
from bandit_envs.validation import check_choice, check_float, check_int

__all__ = [
    "LDPLinUCB",
    "LinUCB",
    "LinUCBServer",
    "LinearRunResult",
    "client_choose",
    "client_report",
    "ldp_linucb_sensitivity",
    "ldp_linucb_sigma",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

BONUSES = ("sqrt", "quadratic")
SIGMA_METHODS = ("classic", "analytic")

#: A Cholesky pivot at or below this fraction of the largest diagonal entry counts as a failure
#: (the shifted Gram matrix is indefinite or numerically singular) [P].
PIVOT_RTOL = 1e-10
#: Relative part of the eigenvalue floor of the fallback: max(c_t / 2, EIG_RTOL * max|λ|) [P].
EIG_RTOL = 1e-10
#: Absolute lower bound of the eigenvalue floor (only matters when V + cI is ~0) [P].
EIG_ATOL = 1e-12
#: Normal draws kept in memory at once by the fast path (per chunk of rounds), ~4 MB.
_NOISE_CHUNK = 1 << 19

# Schedule kinds (row 0 of the schedule parameters).
_CONSTANT, _LDP = 0.0, 1.0


# --------------------------------------------------------------------------------------------
# Kernels: one copy
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True, error_model="numpy")
def _clip_factor(sq_norm: float, l_x: float) -> float:  # pragma: no cover
    """Factor (<= 1) that brings a vector of squared norm ``sq_norm`` to norm at most ``l_x``."""
    if sq_norm > l_x * l_x:
        return l_x / math.sqrt(sq_norm)
    return 1.0


@numba.njit(cache=True, error_model="numpy")
def _cholesky_upper(a: FloatArray, shift: float, u: FloatArray, rtol: float) -> bool:  # pragma: no cover
    """Write into ``u`` the upper factor U (UᵀU = a + shift·I; only a's upper triangle is used).

    Returns False, leaving ``u`` unusable, when a pivot is <= ``rtol`` times the largest diagonal
    entry of ``a + shift·I`` (or NaN): the matrix is indefinite or numerically singular. Rows are
    updated over their full length (the part left of the diagonal is discarded): fixed-length
    loops are faster than triangular ones at d ~ 20.
    """
    d = a.shape[0]
    scale = 0.0
    for i in range(d):
        scale = max(scale, abs(a[i, i] + shift))
    tol = rtol * scale
    for j in range(d):
        for k in range(d):
            u[j, k] = a[j, k]
        u[j, j] += shift
        for i in range(j):
            f = u[i, j]
            for k in range(d):
                u[j, k] -= f * u[i, k]
        p = u[j, j]
        if not p > tol:
            return False
        r = math.sqrt(p)
        inv = 1.0 / r
        for k in range(d):
            u[j, k] *= inv
        for k in range(j):
            u[j, k] = 0.0
        u[j, j] = r
    return True


@numba.njit(cache=True, error_model="numpy")
def _eig_floor_factor(a: FloatArray, shift: float, u: FloatArray) -> None:  # pragma: no cover
    """Factor a + shift·I after raising its eigenvalues to max(shift / 2, EIG_RTOL max|λ|, EIG_ATOL)."""
    d = a.shape[0]
    m = np.empty((d, d))
    for i in range(d):
        for j in range(i, d):
            m[i, j] = a[i, j]
            m[j, i] = a[i, j]
        m[i, i] += shift
    lam, q = np.linalg.eigh(m)
    top = 0.0
    for i in range(d):
        top = max(top, abs(lam[i]))
    floor = max(0.5 * shift, EIG_RTOL * top, EIG_ATOL)
    for i in range(d):
        lam[i] = max(lam[i], floor)
    rebuilt = np.zeros((d, d))
    for k in range(d):
        for i in range(d):
            f = q[i, k] * lam[k]
            for j in range(d):
                rebuilt[i, j] += f * q[j, k]
    if not _cholesky_upper(rebuilt, 0.0, u, 0.0):  # all eigenvalues >= floor > 0: cannot fail
        raise FloatingPointError("eigenvalue floor failed to give a positive definite matrix")


@numba.njit(cache=True, error_model="numpy")
def _solve_theta(u_fac: FloatArray, rhs: FloatArray, theta: FloatArray) -> None:  # pragma: no cover
    """Solve (UᵀU) theta = rhs by forward then backward substitution."""
    d = rhs.shape[0]
    for i in range(d):
        theta[i] = rhs[i]
    for k in range(d):  # Uᵀ w = rhs, column-oriented
        theta[k] /= u_fac[k, k]
        w = theta[k]
        for i in range(k + 1, d):
            theta[i] -= u_fac[k, i] * w
    for k in range(d - 1, -1, -1):  # U theta = w, column-oriented (independent lanes, no serial sum)
        theta[k] /= u_fac[k, k]
        w = theta[k]
        for i in range(k):
            theta[i] -= u_fac[i, k] * w


@numba.njit(cache=True, error_model="numpy")
def _client_choose(
    x: FloatArray,
    theta: FloatArray,
    u_fac: FloatArray,
    beta: float,
    l_x: float,
    quadratic: bool,
    xt: FloatArray,
    z: FloatArray,
    scores: FloatArray,
) -> int:  # pragma: no cover
    """Argmax over the rows of ``x`` (each clipped to norm ``l_x``) of x·θ + β·bonus; lowest index on ties.

    bonus = sqrt(xᵀṼ⁻¹x) or, with ``quadratic``, xᵀṼ⁻¹x, where Ṽ = UᵀU. ``xt``, ``z`` are (d, n_arms)
    and ``scores`` (n_arms,) work arrays.
    """
    n_arms, d = x.shape
    # Squared norms summed over i in order, as in _client_report, so clipping is bit-identical;
    # arms innermost keeps the 20 sums independent (a serial sum per arm is latency-bound).
    for a in range(n_arms):
        scores[a] = 0.0
    for i in range(d):
        for a in range(n_arms):
            scores[a] += x[a, i] * x[a, i]
    for a in range(n_arms):
        c = _clip_factor(scores[a], l_x)
        for i in range(d):
            xt[i, a] = x[a, i] * c
            z[i, a] = xt[i, a]
        scores[a] = 0.0
    for i in range(d):
        th = theta[i]
        for a in range(n_arms):
            scores[a] += xt[i, a] * th
    for k in range(d):  # z = U⁻ᵀ xt, all arms at once
        inv = 1.0 / u_fac[k, k]
        for a in range(n_arms):
            z[k, a] *= inv
        for i in range(k + 1, d):
            f = u_fac[k, i]
            for a in range(n_arms):
                z[i, a] -= f * z[k, a]
    for a in range(n_arms):  # xᵀṼ⁻¹x = ‖z‖², accumulated in row 0 of xt (no longer needed)
        xt[0, a] = 0.0
    for i in range(d):
        for a in range(n_arms):
            xt[0, a] += z[i, a] * z[i, a]
    best = 0
    best_value = -np.inf
    for a in range(n_arms):
        q = xt[0, a]
        value = scores[a] + beta * (q if quadratic else math.sqrt(q))
        if value > best_value:
            best_value = value
            best = a
    return best


@numba.njit(cache=True, error_model="numpy")
def _client_report(
    x: FloatArray,
    a: int,
    y: float,
    l_x: float,
    l_y: float,
    sigma: float,
    noise: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
) -> int:  # pragma: no cover
    """Write the report (x xᵀ + B, y x + ξ) of arm ``a``; return clip flags (1: x clipped, 2: y clipped).

    x = ``x[a]`` clipped to norm ``l_x``, y clipped to [-l_y, l_y]. B is symmetric with its upper
    triangle (diagonal included, row by row) ``sigma * noise[:d(d+1)/2]`` and ξ = ``sigma *
    noise[d(d+1)/2:]``; with ``sigma == 0`` no noise is read (``noise`` may be empty).
    """
    d = x.shape[1]
    sq = 0.0
    for i in range(d):
        sq += x[a, i] * x[a, i]
    c = _clip_factor(sq, l_x)
    yc = min(max(y, -l_y), l_y)
    flags = (1 if c < 1.0 else 0) + (2 if yc != y else 0)
    for i in range(d):
        vec[i] = x[a, i] * c
    idx = 0
    for i in range(d):
        for j in range(i, d):
            v = vec[i] * vec[j]
            if sigma > 0.0:
                v += sigma * noise[idx]
                idx += 1
            gram[i, j] = v
            gram[j, i] = v
    for i in range(d):
        vec[i] *= yc
        if sigma > 0.0:
            vec[i] += sigma * noise[idx + i]
    return flags


@numba.njit(cache=True, error_model="numpy")
def _server_receive(
    v_sum: FloatArray,
    u_sum: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
    shift: float,
    u_fac: FloatArray,
    theta: FloatArray,
) -> bool:  # pragma: no cover
    """Add a report, refactor V + shift·I into ``u_fac`` and solve θ; True if the eigenvalue floor was used."""
    d = vec.shape[0]
    for i in range(d):
        u_sum[i] += vec[i]
        for j in range(d):
            v_sum[i, j] += gram[i, j]
    floored = False
    if not _cholesky_upper(v_sum, shift, u_fac, PIVOT_RTOL):
        _eig_floor_factor(v_sum, shift, u_fac)
        floored = True
    _solve_theta(u_fac, u_sum, theta)
    return floored


@numba.njit(cache=True, error_model="numpy")
def _schedule(t: int, p: FloatArray) -> tuple[float, float, float]:  # pragma: no cover
    """(γ_t, c_t, β_t) of round t (1-based) for the schedule parameters ``p`` (see ``_schedule_params``)."""
    if p[0] == _CONSTANT:
        return 0.0, p[2], p[1]
    sigma, d, log_t_max, k1, width_scale, shift_scale = p[1], p[2], p[3], p[4], p[5], p[6]
    gamma = sigma * math.sqrt(t) * k1
    shift = shift_scale * 2.0 * gamma
    # σ·sqrt(d t / γ_t) = sqrt(σ d sqrt(t) / k1): same value, no 0/0 when σ underflows.
    beta = (
        2.0 * sigma * math.sqrt(d * log_t_max)
        + (math.sqrt(3.0 * gamma) + math.sqrt(sigma * d * math.sqrt(t) / k1)) * d * log_t_max
    )
    return gamma, shift, width_scale * beta


@numba.njit(cache=True, error_model="numpy")
def _fill_normals(rng: np.random.Generator, out: FloatArray) -> None:  # pragma: no cover
    """Fill ``out`` (C-contiguous) with standard normals from ``rng``, in memory order."""
    flat = out.reshape(out.size)
    for i in range(flat.shape[0]):
        flat[i] = rng.standard_normal()


# --------------------------------------------------------------------------------------------
# Kernels: batch (step API) and the compiled block loop (fast path)
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True, error_model="numpy")
def _choose_batch(
    obs: FloatArray, theta: FloatArray, u_fac: FloatArray, beta: float, l_x: float, quadratic: bool, out: IntArray
) -> None:  # pragma: no cover
    n_rows, n_arms, d = obs.shape
    xt = np.empty((d, n_arms))
    z = np.empty((d, n_arms))
    scores = np.empty(n_arms)
    for b in range(n_rows):
        out[b] = _client_choose(obs[b], theta[b], u_fac[b], beta, l_x, quadratic, xt, z, scores)


@numba.njit(cache=True, error_model="numpy")
def _report_batch(
    obs: FloatArray,
    actions: IntArray,
    rewards: FloatArray,
    l_x: float,
    l_y: float,
    sigma: float,
    noise: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
    flags: IntArray,
) -> None:  # pragma: no cover
    for b in range(obs.shape[0]):
        flags[b] = _client_report(obs[b], actions[b], rewards[b], l_x, l_y, sigma, noise[b], gram[b], vec[b])


@numba.njit(cache=True, error_model="numpy")
def _receive_batch(
    v_sum: FloatArray,
    u_sum: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
    shift: float,
    u_fac: FloatArray,
    theta: FloatArray,
    floored: IntArray,
) -> None:  # pragma: no cover
    for b in range(v_sum.shape[0]):
        floored[b] += _server_receive(v_sum[b], u_sum[b], gram[b], vec[b], shift, u_fac[b], theta[b])


@numba.njit(cache=True, error_model="numpy")
def _run_copy(
    b: int | np.int64, tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]
) -> None:  # pragma: no cover
    """Play rounds t0+1 .. t0+S of copy ``b``: the fast path's loop around the step kernels.

    ``tables`` = (features (S, 1 or B, n_arms, d), rewards (S, 1 or B, n_arms), expected (same),
    noise (S, B, m), ck_slot (S,), regret_out (n_ck, B), actions_out (S or 0, B)); axis 1 of
    length 1 is shared by all copies; ``noise`` holds the normals the step path would draw, in
    its order. ``params`` = (t0, schedule, l_x, l_y, sigma, quadratic). ``state`` = (V, u, U, θ,
    cum_regret (B,), counters (B, 3)). Regret max(expected) - expected[a] adds to
    ``cum_regret[b]``; ``counters[b]`` counts clipped x, clipped y and floors; round s is stored
    at ``regret_out[ck_slot[s], b]`` when ``ck_slot[s] >= 0``; actions go to ``actions_out[s, b]``
    if it has S rows.
    """
    features, rewards, expected, noise, ck_slot, regret_out, actions_out = tables
    t0, sched, l_x, l_y, sigma, quadratic = params
    v_sum, u_sum, u_fac, theta, cum_regret, counters = state
    n_steps, _, n_arms, d = features.shape
    fx = b if features.shape[1] > 1 else 0
    fr = b if rewards.shape[1] > 1 else 0
    fe = b if expected.shape[1] > 1 else 0
    record = actions_out.shape[0] == n_steps
    xt = np.empty((d, n_arms))
    z = np.empty((d, n_arms))
    scores = np.empty(n_arms)
    gram = np.empty((d, d))
    vec = np.empty(d)
    for s in range(n_steps):
        _, shift, beta = _schedule(t0 + s + 1, sched)
        x = features[s, fx]
        a = _client_choose(x, theta[b], u_fac[b], beta, l_x, quadratic, xt, z, scores)
        e = expected[s, fe]
        top = e[0]
        for k in range(1, n_arms):
            top = max(top, e[k])
        cum_regret[b] += top - e[a]
        flags = _client_report(x, a, rewards[s, fr, a], l_x, l_y, sigma, noise[s, b], gram, vec)
        counters[b, 0] += flags & 1
        counters[b, 1] += flags >> 1
        counters[b, 2] += _server_receive(v_sum[b], u_sum[b], gram, vec, shift, u_fac[b], theta[b])
        if record:
            actions_out[s, b] = a
        if ck_slot[s] >= 0:
            regret_out[ck_slot[s], b] = cum_regret[b]


@numba.njit(cache=True, error_model="numpy")
def _run_serial(tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]) -> None:  # pragma: no cover
    """:func:`_run_copy` for every copy, in the calling thread."""
    for b in range(state[0].shape[0]):
        _run_copy(b, tables, params, state)


@numba.njit(cache=True, parallel=True, error_model="numpy")
def _run_parallel(tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]) -> None:  # pragma: no cover
    """:func:`_run_copy` for every copy, copies spread over numba's threads (they share nothing)."""
    for b in numba.prange(state[0].shape[0]):
        _run_copy(np.int64(b), tables, params, state)  # prange indices may be unsigned


# --------------------------------------------------------------------------------------------
# Server and client
# --------------------------------------------------------------------------------------------


class LinUCBServer:
    """Server side of (LDP-)LinUCB: the aggregated reports and the model, for B copies.

    It holds only what users sent and what it computed from that: V = Σ reports of x xᵀ,
    u = Σ reports of y x, θ = (V + cI)⁻¹u and the upper Cholesky factor U of V + cI
    (``chol``, UᵀU = V + cI). It never receives a feature, a reward or an action. Arrays carry the
    batch axis first: ``gram`` (B, d, d), ``moment`` (B, d), ``theta`` (B, d), ``chol`` (B, d, d).

    Parameters
    ----------
    n_features
        Dimension d.
    batch
        Number B of independent copies.
    initial_shift
        c before the first report (V = 0, U = sqrt(c)·I, θ = 0).
    """

    def __init__(self, n_features: int, batch: int, initial_shift: float) -> None:
        d = n_features
        self.gram: FloatArray = np.zeros((batch, d, d))
        self.moment: FloatArray = np.zeros((batch, d))
        self.theta: FloatArray = np.zeros((batch, d))
        self.chol: FloatArray = np.zeros((batch, d, d))
        self.chol[:, np.arange(d), np.arange(d)] = math.sqrt(initial_shift)
        #: Reports received (the round number t of the last one).
        self.t = 0
        #: Per copy, how often V + cI was indefinite and the eigenvalue floor was used.
        self.n_eig_floor: IntArray = np.zeros(batch, dtype=np.int64)

    def receive(self, gram_reports: FloatArray, vector_reports: FloatArray, shift: float) -> None:
        """Add one report per copy ((B, d, d) and (B, d)) and refactor V + shift·I."""
        _receive_batch(
            self.gram,
            self.moment,
            np.ascontiguousarray(gram_reports, dtype=np.float64),
            np.ascontiguousarray(vector_reports, dtype=np.float64),
            float(shift),
            self.chol,
            self.theta,
            self.n_eig_floor,
        )
        self.t += 1


def client_choose(
    features: npt.ArrayLike,
    theta: npt.ArrayLike,
    chol: npt.ArrayLike,
    beta: float,
    *,
    l_x: float = math.inf,
    bonus: str = "sqrt",
) -> int:
    """Client side: the arm a user plays given the server's broadcast (θ, U, β).

    Candidates (rows of ``features``, shape (n_arms, d)) are clipped to norm ``l_x`` and scored
    x·θ + β·sqrt(xᵀ(UᵀU)⁻¹x) (``bonus="sqrt"``) or β·xᵀ(UᵀU)⁻¹x (``"quadratic"``); the largest
    score wins, ties to the lowest index.
    """
    check_choice("bonus", bonus, BONUSES)
    d = np.shape(theta)[0] if np.ndim(theta) == 1 else 0
    if d == 0 or np.shape(chol) != (d, d):
        raise ValueError(f"theta and chol must have shapes (d,) and (d, d), got {np.shape(theta)}, {np.shape(chol)}.")
    x = _as_features("features", features, (), d)
    out = np.empty(1, dtype=np.int64)
    _choose_batch(
        x[None],
        np.ascontiguousarray(theta, dtype=np.float64)[None],
        np.ascontiguousarray(chol, dtype=np.float64)[None],
        float(beta),
        float(l_x),
        bonus == "quadratic",
        out,
    )
    return int(out[0])


def client_report(
    x: npt.ArrayLike, y: float, sigma: float, rng: np.random.Generator, *, l_x: float = math.inf, l_y: float = math.inf
) -> tuple[FloatArray, FloatArray, int]:
    """Client side: the privatized report (x xᵀ + B, y x + ξ) and the clip flags of one user.

    ``x`` (d,) is clipped to norm ``l_x`` and ``y`` to [-l_y, l_y]; B is a symmetric Gaussian
    matrix (upper triangle with the diagonal i.i.d. N(0, σ²), drawn row by row, mirrored) and
    ξ ~ N(0, σ²I), drawn after B. Flags: 1 if x was clipped, 2 if y was clipped (summed).
    """
    sigma = check_float("sigma", sigma, low=0.0)
    row = np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1)
    d = row.shape[1]
    noise = np.empty(d * (d + 1) // 2 + d if sigma > 0 else 0)
    _fill_normals(rng, noise)
    gram, vec = np.empty((d, d)), np.empty(d)
    flags = _client_report(row, 0, float(y), float(l_x), float(l_y), float(sigma), noise, gram, vec)
    return gram, vec, int(flags)


@dataclass
class LinearRunResult:
    """What :meth:`LinUCB.run` returns (copy axis last, dropped when the agent has ``n_envs=None``).

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


# --------------------------------------------------------------------------------------------
# Agents
# --------------------------------------------------------------------------------------------


def _as_features(name: str, value: Any, lead: tuple[int, ...], d: int) -> FloatArray:
    """``value`` as a C-contiguous float64 array of shape lead + (n_arms, d), finite, n_arms >= 1."""
    shape_text = "(" + ", ".join([str(n) for n in lead] + ["n_arms", str(d)]) + ")"
    try:
        arr = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float array of shape {shape_text}, got {type(value).__name__}.") from None
    if arr.ndim != len(lead) + 2 or arr.shape[: len(lead)] != lead or arr.shape[-1] != d or arr.shape[-2] < 1:
        raise ValueError(f"{name} must have shape {shape_text}, got {arr.shape}.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must contain only finite numbers, but it has NaN or inf.")
    return arr


class _LinearAgent(Agent):
    """Shared machinery of LinUCB and LDP-LinUCB: server, client calls, step API and fast path."""

    _sched: FloatArray
    _sigma: float
    _l_x: float
    _l_y: float
    _quadratic: bool
    _initial_shift: float

    def __init__(self, n_features: int, *, n_envs: int | None, seed: int | None) -> None:
        # The arm count is read from each observation; Agent's fixed-K check does not apply.
        super().__init__(2, n_envs=n_envs, seed=seed)
        self.n_arms = 0
        self.n_features = check_int("n_features", n_features, minimum=1)

    @property
    def _noise_size(self) -> int:
        d = self.n_features
        return d * (d + 1) // 2 + d if self._sigma > 0 else 0

    def _reset_state(self) -> None:
        self.server = LinUCBServer(self.n_features, self.batch, self._initial_shift)
        self._clips: IntArray = np.zeros((self.batch, 2), dtype=np.int64)
        self._last_obs: FloatArray | None = None

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
        """(γ_t, c_t, β_t) of round ``t`` (1-based): noise bound, shift and exploration width."""
        gamma, shift, beta = _schedule(check_int("t", t, minimum=1), self._sched)
        return float(gamma), float(shift), float(beta)

    def act(self, obs: Any = None) -> Any:
        """Client side of round t+1: score the candidates of ``obs`` with the broadcast θ, U, β_{t+1}.

        ``obs`` is the (n_arms, d) feature matrix (with ``n_envs=N``: (N, n_arms, d)); it is kept
        for ``update``, which reports the chosen row.
        """
        lead = () if self.n_envs is None else (self.n_envs,)
        x = _as_features("obs", obs, lead, self.n_features).reshape((self.batch, -1, self.n_features))
        self.n_arms = x.shape[1]
        _, _, beta = _schedule(self.server.t + 1, self._sched)
        out = np.empty(self.batch, dtype=np.int64)
        _choose_batch(x, self.server.theta, self.server.chol, beta, self._l_x, self._quadratic, out)
        self._last_obs = x
        return self._out(out)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Client report of the arm played in the last ``act`` (features kept from it), then server update.

        ``info`` is not used (its ``regret`` is the env's business, not the learner's).
        """
        if self._last_obs is None:
            raise RuntimeError("update() needs the features of the last act(obs); call act(obs) first.")
        a, r, _ = self._batched(action, reward, None)
        n_arms = self._last_obs.shape[1]
        bad = np.flatnonzero((a < 0) | (a >= n_arms))
        if bad.size:
            raise ValueError(f"action must be an arm index in [0, {n_arms - 1}], got {action!r}.")
        if not np.isfinite(r).all():
            raise ValueError(f"reward must be a finite number, got {reward!r}.")
        d = self.n_features
        noise = np.empty((self.batch, self._noise_size))
        _fill_normals(self.rng, noise)
        gram, vec = np.empty((self.batch, d, d)), np.empty((self.batch, d))
        flags = np.empty(self.batch, dtype=np.int64)
        _report_batch(self._last_obs, a, r, self._l_x, self._l_y, self._sigma, noise, gram, vec, flags)
        self._clips[:, 0] += flags & 1
        self._clips[:, 1] += flags >> 1
        self._last_obs = None
        _, shift, _ = _schedule(self.server.t + 1, self._sched)
        self.server.receive(gram, vec, shift)

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
        n_copies = self.batch
        d = self.n_features
        try:
            feat = np.ascontiguousarray(features, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"features must be a float array, got {type(features).__name__}.") from None
        per_copy = feat.ndim == 4
        if feat.ndim not in (3, 4) or (per_copy and (self.n_envs is None or feat.shape[1] != n_copies)):
            allowed = "(T, n_arms, d)" + ("" if self.n_envs is None else f" or (T, {n_copies}, n_arms, d)")
            raise ValueError(f"features must have shape {allowed} with d={d}, got {feat.shape}.")
        n_steps = feat.shape[0]
        lead = (n_steps, n_copies) if per_copy else (n_steps,)
        feat = _as_features("features", feat, lead, d).reshape(n_steps, -1, feat.shape[-2], d)
        n_arms = feat.shape[2]
        rew = self._table("rewards", rewards, n_steps, n_arms)
        exp = rew if expected_rewards is None else self._table("expected_rewards", expected_rewards, n_steps, n_arms)
        ck = self._checkpoints(checkpoints, n_steps)
        regret_out = np.zeros((ck.shape[0], n_copies))
        actions = np.zeros((n_steps if record_actions else 0, n_copies), dtype=np.int64)
        cum = np.zeros(n_copies)
        counters = np.zeros((n_copies, 3), dtype=np.int64)
        m = self._noise_size
        chunk = max(1, _NOISE_CHUNK // max(1, n_copies * m))
        if parallel is None:
            parallel = n_copies > 1 and numba.get_num_threads() > 1
        srv = self.server
        for start in range(0, n_steps, chunk):
            stop = min(n_steps, start + chunk)
            noise = np.empty((stop - start, n_copies, m))
            _fill_normals(self.rng, noise)
            slot = np.full(stop - start, -1, dtype=np.int64)
            hit = (ck > start) & (ck <= stop)
            slot[ck[hit] - start - 1] = np.flatnonzero(hit)
            driver = _run_parallel if parallel else _run_serial
            driver(
                (feat[start:stop], rew[start:stop], exp[start:stop], noise, slot, regret_out, actions[start:stop]),
                (srv.t, self._sched, self._l_x, self._l_y, self._sigma, self._quadratic),
                (srv.gram, srv.moment, srv.chol, srv.theta, cum, counters),
            )
            srv.t += stop - start
        self._clips += counters[:, :2]
        srv.n_eig_floor += counters[:, 2]
        self._last_obs = None
        if self.n_envs is None:
            return LinearRunResult(float(cum[0]), regret_out[:, 0], actions[:, 0] if record_actions else None)
        return LinearRunResult(cum, regret_out, actions if record_actions else None)

    def _table(self, name: str, value: Any, n_steps: int, n_arms: int) -> FloatArray:
        """Reward-like table as (T, 1 or B, n_arms) float64, finite."""
        try:
            arr = np.ascontiguousarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a float array, got {type(value).__name__}.") from None
        shapes = [(n_steps, n_arms)] + ([] if self.n_envs is None else [(n_steps, self.batch, n_arms)])
        if arr.shape not in shapes:
            allowed = " or ".join(str(s) for s in shapes)
            raise ValueError(f"{name} must have shape {allowed} to match features, got {arr.shape}.")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must contain only finite numbers, but it has NaN or inf.")
        return arr.reshape(n_steps, -1, n_arms)

    @staticmethod
    def _checkpoints(checkpoints: Any, n_steps: int) -> IntArray:
        if checkpoints is None:
            return np.zeros(0, dtype=np.int64)
        ck = np.asarray(checkpoints)
        if ck.ndim != 1 or ck.dtype.kind not in "iu":
            raise ValueError(f"checkpoints must be a 1-d array of integers, got {checkpoints!r}.")
        ck = ck.astype(np.int64)
        if ck.size and (ck[0] < 1 or ck[-1] > n_steps or np.any(np.diff(ck) <= 0)):
            raise ValueError(f"checkpoints must be strictly increasing round counts in [1, {n_steps}], got {ck}.")
        return ck


class LinUCB(_LinearAgent):
    r"""LinUCB / OFUL-style optimistic linear bandit with a constant width.

    Round t plays :math:`\arg\max_a x_a^\top\hat\theta + \alpha\sqrt{x_a^\top V^{-1} x_a}` (ties to
    the lowest index) with :math:`V = \lambda I + \sum_s x_s x_s^\top` and
    :math:`\hat\theta = V^{-1}\sum_s y_s x_s` (ridge regression), solved through the Cholesky
    factor of V. The width β = ``alpha`` is a constant [P]: OFUL's
    :math:`\beta_t = R\sqrt{d \ln((1 + t/\lambda)/\delta)} + \sqrt\lambda S` [2]_ grows like
    :math:`\sqrt{\ln t}`, and in practice a tuned constant (Li et al.'s α [1]_) is standard.
    It is LDP-LinUCB without noise, clipping or growing shift (one protocol: :class:`LinUCBServer`).

    Parameters
    ----------
    n_features
        Dimension d of the feature vectors (>= 1).
    alpha
        Exploration width β (>= 0; 0 is greedy ridge regression). Default 1.0 [P].
    reg
        Ridge parameter λ (> 0).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (LinUCB itself is deterministic).

    Attributes
    ----------
    server
        The :class:`LinUCBServer`: Σ x xᵀ (λI enters as its constant shift), Σ y x, θ, Cholesky factor.

    References
    ----------
    .. [1] L. Li, W. Chu, J. Langford, R. E. Schapire, "A contextual-bandit approach to personalized
       news article recommendation", WWW 2010.
    .. [2] Y. Abbasi-Yadkori, D. Pál, Cs. Szepesvári, "Improved algorithms for linear stochastic
       bandits", NeurIPS 2011.
    """

    name = "LinUCB"

    def __init__(
        self,
        n_features: int,
        alpha: float = 1.0,
        reg: float = 1.0,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_features, n_envs=n_envs, seed=seed)
        self.alpha = check_float("alpha", alpha, low=0.0)
        self.reg = check_float("reg", reg, low=0.0, low_open=True)
        self._sched = np.array([_CONSTANT, self.alpha, self.reg, 0.0, 0.0, 0.0, 0.0])
        self._sigma = 0.0
        self._l_x = self._l_y = math.inf
        self._quadratic = False
        self._initial_shift = self.reg
        self._reset_state()

    def __repr__(self) -> str:
        return (
            f"LinUCB(n_features={self.n_features}, alpha={self.alpha}, reg={self.reg}, "
            f"n_envs={self.n_envs}, seed={self.seed})"
        )


def ldp_linucb_sensitivity(l_x: float = 1.0, l_y: float = 1.0) -> float:
    """L2 sensitivity Δ₂ = 2·sqrt(l_x⁴ + l_x² l_y²) of one user's report (upper triangle of x xᵀ, y x).

    The upper triangle (diagonal included) of x xᵀ has Frobenius norm <= ‖x‖² <= l_x² and
    ‖y x‖ <= l_x l_y, so two users' reports differ by at most 2 l_x² and 2 l_x l_y (ALGORITHMS.md 6.2).
    """
    lx = check_float("l_x", l_x, low=0.0, low_open=True)
    ly = check_float("l_y", l_y, low=0.0, low_open=True)
    return 2.0 * math.sqrt(lx**4 + lx**2 * ly**2)


def ldp_linucb_sigma(
    epsilon: float, delta: float, l_x: float = 1.0, l_y: float = 1.0, method: str = "classic"
) -> float:
    """Noise scale σ of LDP-LinUCB's Gaussian mechanism on the report (ALGORITHMS.md 6.2, 7.3).

    ``"classic"``: σ = sqrt(2 ln(1.25/δ))·Δ₂/ε, computed for every ε (= 4·sqrt(ln(1.25/δ))/ε at
    l_x = l_y = 1, the authors' code [V-code]); the (ε, δ) guarantee is proven only for ε < 1.
    ``"analytic"``: the smallest σ that is (ε, δ)-DP for Δ₂ (Balle & Wang 2018), any ε.
    """
    eps = check_float("epsilon", epsilon, low=0.0, low_open=True)
    dlt = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    check_choice("sigma_method", method, SIGMA_METHODS)
    sens = ldp_linucb_sensitivity(l_x, l_y)
    if method == "analytic":
        return gaussian_sigma_analytic(eps, dlt, sens)
    return math.sqrt(2.0 * math.log(1.25 / dlt)) * sens / eps


class LDPLinUCB(_LinearAgent, PrivateAgent):
    r"""LDP-LinUCB: LinUCB under local differential privacy (Zheng et al. [1]_, authors' code [V-code]).

    Protocol of round t (1-based), ALGORITHMS.md 6.2. The server broadcasts θ and the factor of
    :math:`\tilde V = V + c_{t-1} I` (c = ``initial_shift`` = 0.1 before the first report, as in
    the code). The **client** (the user; :func:`client_choose`) clips its candidates to
    :math:`\lVert x\rVert \le l_x`, plays
    :math:`a_t = \arg\max_a x_a^\top\theta + \beta_t \sqrt{x_a^\top\tilde V^{-1}x_a}` (``bonus="sqrt"``,
    the OFUL / Shariff-Sheffet form the paper follows [P]; ``bonus="quadratic"`` drops the square
    root as the authors' code does), observes y, clips it to [-l_y, l_y] and sends
    :math:`(x x^\top + B_t,\ y x + \xi_t)` (:func:`client_report`): :math:`B_t` symmetric with its
    upper triangle, diagonal included, i.i.d. :math:`N(0, \sigma^2)` and mirrored,
    :math:`\xi_t \sim N(0, \sigma^2 I_d)`. The **server** (:class:`LinUCBServer`) adds the report
    to (V, u), computes :math:`c_t` and :math:`\theta = (V + c_t I)^{-1} u`. The server never sees
    x, y or the action: the action is computed and kept on the client side (the authors' code
    returns it to the server, unused; under LDP that would leak x). This class simulates both
    sides; ``update(action, ...)`` hands the action to the client part only.

    Constants (all logs natural, d = ``n_features``, T = ``horizon``, α = ``alpha``) [V-code]:

    * :math:`\sigma = \sqrt{2\ln(1.25/\delta)}\,\Delta_2/\varepsilon`,
      :math:`\Delta_2 = 2\sqrt{l_x^4 + l_x^2 l_y^2}` (``sigma_method="classic"``; equals the
      code's :math:`4\sqrt{\ln(1.25/\delta)}/\varepsilon` at :math:`l_x = l_y = 1`; the README's
      value is √2 larger, see ALGORITHMS.md 6.2), or the analytic Gaussian σ for Δ₂;
    * :math:`\gamma_t = \sigma\sqrt t\,(4\sqrt d + 2\ln(2T/\alpha))`;
    * :math:`c_t = 2\gamma_t` × ``shift_scale``;
    * :math:`\beta_t = 2\sigma\sqrt{d\ln T} + (\sqrt{3\gamma_t} + \sigma\sqrt{dt/\gamma_t})\,d\ln T`
      × ``width_scale``.

    With these constants at practical ε the algorithm explores almost uniformly (d = 20,
    T = 1e5, α = δ = 0.1, ε = 1: σ = 6.36, c_T ≈ 1.9e5, β_T ≈ 1.3e5), which is why the authors
    ran ε = 8e5 (σ ≈ 8e-6, c_T ≈ 0.24, β_T ≈ 145). ``width_scale`` and ``shift_scale`` [P] trade
    the theory constants for practice; privacy depends only on σ.

    Indefinite Ṽ: the shifted matrix is indefinite with probability <= α (more often with a
    small ``shift_scale``). When its Cholesky factorization fails (a pivot <= 1e-10 × the largest
    diagonal entry), its eigenvalues are raised to max(c_t/2, 1e-10·max|λ|, 1e-12) — c_t/2 = γ_t
    is the smallest eigenvalue the analysis guarantees on its high-probability event — and the
    floored matrix is factorized instead [P]; ``n_eig_floor`` counts these rounds. V itself is
    not changed.

    Privacy. Unit: one user's datum — its features and reward, i.e. the pair (x_t, y_t) it
    reports (any two pairs with ‖x‖ <= l_x, |y| <= l_y are neighbours). Each report is one
    Gaussian mechanism with L2 sensitivity Δ₂ on the clipped pair, so it is (ε, δ)-LDP; each user
    reports once, so no composition over rounds is needed, and everything the server computes is
    post-processing. Clipping is what makes Δ₂ a bound: ``n_clipped_features`` and
    ``n_clipped_rewards`` count the reports whose x or y was clipped. With ``"classic"`` the
    guarantee is proven only for ε < 1; for larger ε, :attr:`privacy_spent` returns the exact δ'
    at which this σ is (ε, δ')-DP (Balle & Wang, Thm. 8) when it exceeds δ. At the authors'
    ε = 8e5 that δ' is ≈ 1: no meaningful guarantee (σ ≈ 8e-6 ≪ Δ₂). Use ``"analytic"`` for a
    valid (ε, δ) at any ε. Noise comes from the agent's generator (floating-point Gaussian
    sampling is not side-channel safe; fine for research).

    Parameters
    ----------
    n_features
        Dimension d (>= 1).
    epsilon
        Privacy parameter ε (> 0). The code's class default is 100, its script uses 8e5.
    delta
        Privacy parameter δ in (0, 1). Default 0.1 [V-code].
    alpha
        Failure probability α of the confidence bounds in (0, 1). Default 0.1 [V-code].
    horizon
        T in the constants (>= 2). Default 1e5 [V-code].
    sigma_method
        ``"classic"`` (default, the code) or ``"analytic"``.
    l_x, l_y
        Bounds ‖x‖ <= l_x and |y| <= l_y enforced by clipping (default 1, the code's assumptions).
    bonus
        ``"sqrt"`` (default) or ``"quadratic"`` (the authors' code).
    width_scale, shift_scale
        Multipliers (>= 0) of β_t and c_t. Default 1.
    initial_shift
        c used before the first report (> 0). Default 0.1 [V-code].
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (the privacy noise).

    References
    ----------
    .. [1] K. Zheng, T. Cai, W. Huang, Z. Li, L. Wang, "Locally Differentially Private
       (Contextual) Bandits Learning", NeurIPS 2020 (arXiv:2006.00701); code
       ``MIFA-Lab/LDPbandit2020`` ``src/linucb.py``; blog ``shared/seeds/ldp-bandits-linucb-blog.txt``.
    """

    name = "LDP-LinUCB"
    privacy_unit = "one user's datum (x_t, y_t): the features of the arm it plays and its reward (local DP)"

    def __init__(
        self,
        n_features: int,
        epsilon: float,
        delta: float = 0.1,
        alpha: float = 0.1,
        horizon: int = 100_000,
        *,
        sigma_method: str = "classic",
        l_x: float = 1.0,
        l_y: float = 1.0,
        bonus: str = "sqrt",
        width_scale: float = 1.0,
        shift_scale: float = 1.0,
        initial_shift: float = 0.1,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_features, n_envs=n_envs, seed=seed)
        self.epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
        self.delta = check_float("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.alpha = check_float("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        self.horizon = check_int("horizon", horizon, minimum=2)
        self.sigma_method = check_choice("sigma_method", sigma_method, SIGMA_METHODS)
        self.bonus = check_choice("bonus", bonus, BONUSES)
        self.l_x = check_float("l_x", l_x, low=0.0, low_open=True)
        self.l_y = check_float("l_y", l_y, low=0.0, low_open=True)
        self.width_scale = check_float("width_scale", width_scale, low=0.0)
        self.shift_scale = check_float("shift_scale", shift_scale, low=0.0)
        self.initial_shift = check_float("initial_shift", initial_shift, low=0.0, low_open=True)
        self.sensitivity = ldp_linucb_sensitivity(self.l_x, self.l_y)
        self.sigma = ldp_linucb_sigma(self.epsilon, self.delta, self.l_x, self.l_y, self.sigma_method)
        exact = gaussian_delta(self.sigma, self.epsilon, self.sensitivity)
        self._delta_spent = self.delta if exact <= self.delta else exact
        d, t_max = float(self.n_features), float(self.horizon)
        k1 = 4.0 * math.sqrt(d) + 2.0 * math.log(2.0 * t_max / self.alpha)
        self._sched = np.array(
            [_LDP, self.sigma, d, math.log(t_max), k1, self.width_scale, self.shift_scale], dtype=np.float64
        )
        self._sigma, self._l_x, self._l_y = self.sigma, self.l_x, self.l_y
        self._quadratic = self.bonus == "quadratic"
        self._initial_shift = self.initial_shift
        self._reset_state()

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) of each user's report: (ε, δ) when the mechanism guarantees it, else (ε, exact δ' > δ)."""
        return self.epsilon, self._delta_spent

    @property
    def n_clipped_features(self) -> int | IntArray:
        """Reports whose feature vector was clipped to norm l_x (per copy)."""
        return self._per_copy(self._clips[:, 0])

    @property
    def n_clipped_rewards(self) -> int | IntArray:
        """Reports whose reward was clipped to [-l_y, l_y] (per copy)."""
        return self._per_copy(self._clips[:, 1])

    def __repr__(self) -> str:
        return (
            f"LDPLinUCB(n_features={self.n_features}, epsilon={self.epsilon}, delta={self.delta}, "
            f"alpha={self.alpha}, horizon={self.horizon}, sigma_method={self.sigma_method!r}, "
            f"bonus={self.bonus!r}, n_envs={self.n_envs}, seed={self.seed})"
        )
