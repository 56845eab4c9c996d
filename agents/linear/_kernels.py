r"""Compiled numba kernels of the linear agents (:mod:`agents.linear`); private to that package.

Every per-round computation of LinUCB and LDP-LinUCB is one of the kernels below, on float64
arrays with the batch axis first. The step API (``act``/``update`` of
:class:`agents.linear.base.LinearAgent`) and the compiled fast path (``LinearAgent.run``, a loop
over a block of feature and reward tensors) call the very same per-copy kernels, so both choose
identical actions for the same seed (``tests/test_linear_agents.py`` checks it;
``benchmarks/bench_ldp_linucb.py`` measures the speed).

Each kernel's docstring states what it computes and gives its numpy equivalent; the linear
algebra kernels are tested against those equivalents (``np.linalg.cholesky``,
``np.linalg.solve``) in ``tests/test_linear_agents.py``.

Linear algebra: the shifted Gram matrix is factorized :math:`\tilde V = U^\top U` (upper
Cholesky, hand-written for d ~ 20 where a LAPACK call costs more than the arithmetic). The
bonus uses :math:`x^\top \tilde V^{-1} x = \lVert U^{-\top} x\rVert^2` and
:math:`\theta = U^{-1} U^{-\top} u`; no inverse is formed. The loops are written in axpy form
(independent lanes innermost, no reductions reassociated), so results are bit-identical whether
or not LLVM vectorizes them, in whichever kernel they are inlined.

Names here carry no leading underscore: the module is private (``_kernels``), and its kernels
are imported by the other modules of :mod:`agents.linear` and by the tests. Status tag: [P]
marks an engineering choice of this project, not a constant of the papers.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import types
from numba.experimental import structref

from bandit_envs._jit import njit
from bandit_envs._types import BoolArray, FloatArray, IntArray

__all__ = [
    "EIG_ATOL",
    "EIG_RTOL",
    "GENERATOR_HOLDER",
    "PARAM_L_X",
    "PARAM_L_Y",
    "PARAM_QUADRATIC",
    "PARAM_SIGMA",
    "PARAM_X_MAX",
    "PIVOT_RTOL",
    "SCHEDULE_CONSTANT",
    "SCHEDULE_LDP",
    "GeneratorHolder",
    "all_finite",
    "all_within",
    "choose_arm",
    "choose_batch",
    "cholesky_upper",
    "clip_factor",
    "eig_floor_factor",
    "factor_solve",
    "fill_copy_normals",
    "fill_normals",
    "receive_batch",
    "round_schedule",
    "copy_row",
    "record_round",
    "round_regret",
    "run_copy",
    "run_parallel",
    "run_serial",
    "server_receive",
    "server_views",
    "solve_theta",
    "step_choose",
    "step_choose_one",
    "step_report",
    "step_report_drawn",
    "step_update",
    "write_report",
]


#: A Cholesky pivot at or below this fraction of the largest diagonal entry counts as a failure
#: (the shifted Gram matrix is indefinite or numerically singular) [P].
PIVOT_RTOL = 1e-10
#: Relative part of the eigenvalue floor of the fallback: max(c_t / 2, EIG_RTOL * max|λ|) [P].
EIG_RTOL = 1e-10
#: Absolute lower bound of the eigenvalue floor (only matters when V + cI is ~0) [P].
EIG_ATOL = 1e-12

#: Schedule kinds (entry 0 of the schedule parameters read by :func:`round_schedule`).
SCHEDULE_CONSTANT, SCHEDULE_LDP = 0.0, 1.0
#: Entries of the single-env kernels' parameter array after the 7 schedule parameters: the
#: clipping bounds l_x and l_y, the noise scale σ, the bonus (1.0: quadratic, 0.0: sqrt), the
#: lattice grid and the largest |entry| of a feature matrix that the agent takes (the largest
#: float when it takes any finite number).
PARAM_L_X, PARAM_L_Y, PARAM_SIGMA, PARAM_QUADRATIC, PARAM_GRID, PARAM_X_MAX = 7, 8, 9, 10, 11, 12


@structref.register
class GeneratorHolderType(types.StructRef):
    """numba type of :class:`GeneratorHolder`."""

    def preprocess_fields(self, fields: Any) -> tuple[tuple[str, Any], ...]:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class GeneratorHolder(structref.StructRefProxy):
    """A numpy Generator held in a numba structure, passed to compiled code as one pointer.

    Passing a numpy Generator to compiled code costs about 5 us a call (numba reads its bit
    generator's C interface through ctypes each time), a numba typed list that holds it about
    0.5 us, this structure about 0.15 us. It holds ``rng`` itself (the same bit generator):
    draws through it are draws of ``rng``. Not picklable (build another for a copy).
    """

    def __new__(cls, rng: np.random.Generator) -> GeneratorHolder:
        return structref.StructRefProxy.__new__(cls, rng)


structref.define_proxy(GeneratorHolder, GeneratorHolderType, ["rng"])

#: The numba type of a :class:`GeneratorHolder` (the single-env report kernel's first argument).
GENERATOR_HOLDER = GeneratorHolderType([("rng", numba.typeof(np.random.default_rng(0)))])


# --------------------------------------------------------------------------------------------
# Kernels: one copy
# --------------------------------------------------------------------------------------------


@njit(error_model="numpy")
def clip_factor(sq_norm: float, l_x: float) -> float:  # pragma: no cover
    """Factor (<= 1) that brings a vector of squared norm ``sq_norm`` to norm at most ``l_x``.

    Computes ``min(1, l_x / sqrt(sq_norm))`` (1 when ``sq_norm <= l_x**2``), so that
    ``x * clip_factor(x @ x, l_x)`` is ``x`` projected onto the ball of radius ``l_x``.
    """
    if sq_norm > l_x * l_x:
        return l_x / math.sqrt(sq_norm)
    return 1.0


@njit(error_model="numpy")
def cholesky_upper(a: FloatArray, shift: float, u: FloatArray, rtol: float) -> bool:  # pragma: no cover
    """Write into ``u`` the upper factor U (UᵀU = a + shift·I; only a's upper triangle is used).

    numpy equivalent (when it succeeds): ``u[:] = np.linalg.cholesky(a + shift * np.eye(d)).T``
    with ``a`` symmetrized from its upper triangle (compared in ``tests/test_linear_agents.py``).
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


@njit(error_model="numpy")
def eig_floor_factor(a: FloatArray, shift: float, u: FloatArray) -> None:  # pragma: no cover
    """Factor a + shift·I after raising its eigenvalues to max(shift / 2, EIG_RTOL max|λ|, EIG_ATOL).

    The fallback of :func:`server_receive` when :func:`cholesky_upper` fails. numpy equivalent:
    ``m = a_sym + shift * I`` (``a_sym`` mirrored from a's upper triangle), ``lam, q =
    np.linalg.eigh(m)``, ``lam = np.maximum(lam, max(shift / 2, EIG_RTOL * abs(lam).max(),
    EIG_ATOL))``, ``u[:] = np.linalg.cholesky((q * lam) @ q.T).T``. ``a`` itself is not changed.
    """
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
    if not cholesky_upper(rebuilt, 0.0, u, 0.0):  # all eigenvalues >= floor > 0: cannot fail
        raise FloatingPointError("eigenvalue floor failed to give a positive definite matrix")


@njit(error_model="numpy")
def solve_theta(u_fac: FloatArray, rhs: FloatArray, theta: FloatArray) -> None:  # pragma: no cover
    """Solve (UᵀU) theta = rhs by forward then backward substitution.

    numpy equivalent: ``theta[:] = np.linalg.solve(u_fac.T @ u_fac, rhs)``, i.e.
    ``w = solve_triangular(U.T, rhs, lower=True)`` then ``theta = solve_triangular(U, w)``
    (compared in ``tests/test_linear_agents.py``).
    """
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


@njit(error_model="numpy")
def factor_solve(
    v: FloatArray, u: FloatArray, shift: float, u_fac: FloatArray, theta: FloatArray
) -> bool:  # pragma: no cover
    """Factor V + shift·I into ``u_fac`` and solve θ; True if the eigenvalue floor was used.

    ``u_fac`` is :func:`cholesky_upper` of ``v + shift * I`` (or :func:`eig_floor_factor` when a
    pivot fails, see ``PIVOT_RTOL``); only ``v``'s upper triangle is read. ``theta`` is
    :func:`solve_theta` of ``u_fac`` and ``u``, i.e. ``np.linalg.solve(v + shift * I, u)`` when
    no floor is needed.
    """
    floored = False
    if not cholesky_upper(v, shift, u_fac, PIVOT_RTOL):
        eig_floor_factor(v, shift, u_fac)
        floored = True
    solve_theta(u_fac, u, theta)
    return floored


@njit(error_model="numpy")
def choose_arm(
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
    and ``scores`` (n_arms,) work arrays. numpy equivalent: ``xc = x * c[:, None]`` with ``c`` the
    per-row :func:`clip_factor`, ``z = solve_triangular(u_fac.T, xc.T, lower=True)``,
    ``q = (z**2).sum(0)``, ``np.argmax(xc @ theta + beta * (q if quadratic else np.sqrt(q)))``.
    """
    n_arms, d = x.shape
    # Squared norms summed over i in order, as in write_report, so clipping is bit-identical;
    # arms innermost keeps the 20 sums independent (a serial sum per arm is latency-bound).
    for a in range(n_arms):
        scores[a] = 0.0
    for i in range(d):
        for a in range(n_arms):
            scores[a] += x[a, i] * x[a, i]
    for a in range(n_arms):
        c = clip_factor(scores[a], l_x)
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


@njit(error_model="numpy")
def write_report(
    x: FloatArray,
    a: int,
    y: float,
    l_x: float,
    l_y: float,
    sigma: float,
    grid: float,
    noise: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
) -> int:  # pragma: no cover
    """Write the report (x xᵀ + B, y x + ξ) of arm ``a``; return clip flags (1: x clipped, 2: y clipped).

    x = ``x[a]`` clipped to norm ``l_x``, y clipped to [-l_y, l_y]. B is symmetric with its upper
    triangle (diagonal included, row by row) ``sigma * noise[:d(d+1)/2]`` and ξ = ``sigma *
    noise[d(d+1)/2:]``; with ``sigma == 0`` no noise is read (``noise`` may be empty). numpy
    equivalent: ``xc = x[a] * clip_factor(x[a] @ x[a], l_x)``, ``yc = np.clip(y, -l_y, l_y)``,
    ``B[np.triu_indices(d)] = sigma * noise[:m]`` (row-major, ``m = d(d+1)/2``) mirrored below the
    diagonal, ``gram[:] = np.outer(xc, xc) + B``, ``vec[:] = yc * xc + sigma * noise[m:m + d]``.

    Lattice sampler (``grid > 0``, :mod:`bandit_envs.privacy.lattice`): every entry is
    ``(rint(exact / grid) + rint((sigma / grid) * noise)) * grid``, i.e. ``snap(exact)`` plus the
    noise rounded to the grid, so the report's entries are multiples of
    ``grid`` whatever x and y are (``sigma`` is then the widened one). ``grid == 0``: the float
    sampler, the sums above bit for bit.
    """
    d = x.shape[1]
    sq = 0.0
    for i in range(d):
        sq += x[a, i] * x[a, i]
    c = clip_factor(sq, l_x)
    yc = min(max(y, -l_y), l_y)
    flags = (1 if c < 1.0 else 0) + (2 if yc != y else 0)
    for i in range(d):
        vec[i] = x[a, i] * c
    inv = 1.0 / grid if grid > 0.0 else 0.0  # a power of two: v * inv is v / grid exactly
    s_inv = sigma * inv  # the noise's scale in grid steps
    idx = 0
    for i in range(d):
        for j in range(i, d):
            v = vec[i] * vec[j]
            if sigma > 0.0:
                if grid > 0.0:  # (rint(v/g) + rint(σ n/g)) g: integers below 2**53 times g, exact
                    v = (np.rint(v * inv) + np.rint(s_inv * noise[idx])) * grid
                else:
                    v += sigma * noise[idx]
                idx += 1
            gram[i, j] = v
            gram[j, i] = v
    for i in range(d):
        vec[i] *= yc
        if sigma > 0.0:
            if grid > 0.0:
                vec[i] = (np.rint(vec[i] * inv) + np.rint(s_inv * noise[idx + i])) * grid
            else:
                vec[i] += sigma * noise[idx + i]
    return flags


@njit(error_model="numpy")
def server_receive(
    v_sum: FloatArray,
    u_sum: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
    shift: float,
    u_fac: FloatArray,
    theta: FloatArray,
) -> bool:  # pragma: no cover
    """Add a report, refactor V + shift·I into ``u_fac`` and solve θ; True if the eigenvalue floor was used.

    ``v_sum += gram``, ``u_sum += vec``, then ``u_fac`` is :func:`cholesky_upper` of
    ``v_sum + shift * I`` (or :func:`eig_floor_factor` when a pivot fails, see ``PIVOT_RTOL``)
    and ``theta`` is :func:`solve_theta` of ``u_fac`` and ``u_sum``, i.e.
    ``theta = np.linalg.solve(v_sum + shift * I, u_sum)`` when no floor is needed.
    """
    d = vec.shape[0]
    for i in range(d):
        u_sum[i] += vec[i]
        for j in range(d):
            v_sum[i, j] += gram[i, j]
    return factor_solve(v_sum, u_sum, shift, u_fac, theta)


@njit(error_model="numpy")
def round_schedule(t: int, p: FloatArray) -> tuple[float, float, float]:  # pragma: no cover
    r"""(γ_t, c_t, β_t) of round t (1-based) for the schedule parameters ``p``.

    ``p[0] == SCHEDULE_CONSTANT`` (LinUCB): ``p = (kind, beta, shift, ...)`` and the result is
    ``(0, shift, beta)`` for every t. ``p[0] == SCHEDULE_LDP`` (LDP-LinUCB): ``p = (kind, σ, d,
    ln T, k1, width_scale, shift_scale)`` with ``k1 = 4 sqrt(d) + 2 ln(2T/α)``, and

    * :math:`\gamma_t = \sigma\sqrt t\,k_1`,
    * :math:`c_t = 2\gamma_t` × ``shift_scale``,
    * :math:`eta_t = 2\sigma\sqrt{d\ln T} + (\sqrt{3\gamma_t} + \sigma\sqrt{dt/\gamma_t})\,d\ln T`
      × ``width_scale``,

    the constants of the authors' code for Zheng et al. (NeurIPS 2020), ``MIFA-Lab/LDPbandit2020``
    ``src/linucb.py``. Entries after the seventh are not read (the single-env kernels pass their
    whole parameter array, see ``PARAM_L_X``).
    """
    if p[0] == SCHEDULE_CONSTANT:
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


@njit(error_model="numpy")
def fill_copy_normals(rngs: Any, out: FloatArray) -> None:  # pragma: no cover
    """Fill ``out`` ((B, m) or (S, B, m), C-contiguous) with standard normals, copy b's from ``rngs[b]``.

    ``rngs`` is a numba typed list of the copies' generators. Copy b's entries are drawn in memory
    order (round by round), so copy b gets what :func:`fill_normals` gives a single agent with
    generator ``rngs[b]`` on its (S, 1, m) block: copy i of a batch seeded s draws as a single
    agent seeded s + i (docs/design.md, "Agents", Seeds).
    """
    x = out.reshape((-1, out.shape[-2], out.shape[-1]))
    for s0 in range(0, x.shape[0], 16):  # tiles of 16 rounds, so the copies' writes stay in cache
        for b in range(x.shape[1]):
            g = rngs[b]
            for s in range(s0, min(x.shape[0], s0 + 16)):
                for j in range(x.shape[2]):
                    x[s, b, j] = g.standard_normal()


@njit(error_model="numpy")
def fill_normals(rng: np.random.Generator, out: FloatArray) -> None:  # pragma: no cover
    """Fill ``out`` (C-contiguous) with standard normals from ``rng``, in memory order.

    Same values as ``out.reshape(-1)[:] = rng.standard_normal(out.size)``, drawn one at a time
    inside compiled code.
    """
    flat = out.reshape(out.size)
    for i in range(flat.shape[0]):
        flat[i] = rng.standard_normal()


# --------------------------------------------------------------------------------------------
# Kernels: batch (step API) and the compiled block loop (fast path)
# --------------------------------------------------------------------------------------------


@njit(error_model="numpy")
def choose_batch(
    obs: FloatArray, theta: FloatArray, u_fac: FloatArray, beta: float, l_x: float, quadratic: bool, out: IntArray
) -> None:  # pragma: no cover
    """``out[b] = choose_arm(obs[b], theta[b], u_fac[b], ...)`` for every copy b (one work buffer)."""
    n_rows, n_arms, d = obs.shape
    xt = np.empty((d, n_arms))
    z = np.empty((d, n_arms))
    scores = np.empty(n_arms)
    for b in range(n_rows):
        out[b] = choose_arm(obs[b], theta[b], u_fac[b], beta, l_x, quadratic, xt, z, scores)


@njit(error_model="numpy")
def receive_batch(
    v_sum: FloatArray,
    u_sum: FloatArray,
    gram: FloatArray,
    vec: FloatArray,
    shift: float,
    u_fac: FloatArray,
    theta: FloatArray,
    floored: IntArray,
) -> None:  # pragma: no cover
    """:func:`server_receive` for every copy b; ``floored[b]`` counts the rounds that used the eigenvalue floor."""
    for b in range(v_sum.shape[0]):
        floored[b] += server_receive(v_sum[b], u_sum[b], gram[b], vec[b], shift, u_fac[b], theta[b])


@njit(error_model="numpy")
def all_finite(values: FloatArray) -> bool:  # pragma: no cover
    """Whether every entry of ``values`` (C-contiguous) is finite: ``np.isfinite(values).all()``."""
    flat = values.reshape(values.size)
    for i in range(flat.shape[0]):
        if not np.isfinite(flat[i]):
            return False
    return True


@njit(error_model="numpy")
def all_within(values: FloatArray, bound: float) -> bool:  # pragma: no cover
    """Whether every entry of ``values`` (C-contiguous) lies in [-bound, bound]: ``(np.abs(values) <= bound).all()``.

    NaN lies nowhere, so with ``bound`` the largest float this is :func:`all_finite`. The loop has
    no exit, so the compiler vectorizes it: a 20 x 20 matrix in about 0.1 us, where
    :func:`all_finite`'s loop, which stops at the first bad entry, takes 0.4 us.
    """
    flat = values.reshape(values.size)
    ok = True
    for i in range(flat.shape[0]):
        ok &= abs(flat[i]) <= bound
    return ok


@njit(error_model="numpy")
def server_views(
    state: FloatArray, d: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:  # pragma: no cover
    """One copy's (V, u, U, θ) as views of a server buffer (:class:`~agents.linear.protocol.LinUCBServer`).

    ``state`` is the buffer of a server with one copy: V (d, d), u (d,), U (d, d) and θ (d,), in
    that order. numpy equivalent: ``np.split(state, np.cumsum([d*d, d, d*d]))`` with the two
    matrices reshaped to (d, d).
    """
    dd = d * d
    gram = state[:dd].reshape((d, d))
    moment = state[dd : dd + d]
    chol = state[dd + d : 2 * dd + d].reshape((d, d))
    theta = state[2 * dd + d : 2 * dd + 2 * d]
    return gram, moment, chol, theta


@njit(error_model="numpy")
def step_choose_one(x: FloatArray, t: int, params: FloatArray, state: FloatArray) -> int:  # pragma: no cover
    """One env's choice in round ``t`` (the step API's ``act``), or -1 when ``x`` does not fit.

    ``x`` (C-contiguous) should be the (n_arms, d) feature matrix, n_arms >= 1, d the server's,
    every entry in [-x_max, x_max] (so finite); otherwise -1 is returned and nothing computed.
    ``params`` is the agent's (schedule (7), l_x, l_y, σ, quadratic, grid, x_max) (``PARAM_*``)
    and ``state`` its one-copy server buffer
    (:func:`server_views`). With β = ``round_schedule(t, params)[2]``: ``choose_arm(x, θ, U, β,
    l_x, quadratic, ...)``, as :func:`step_choose` for one copy.
    """
    n_arms, d = x.shape
    if n_arms < 1 or state.shape[0] != 2 * d * (d + 1) or not all_within(x, params[PARAM_X_MAX]):
        return -1
    _, _, beta = round_schedule(t, params)
    _, _, chol, theta = server_views(state, d)
    work = np.empty((2 * d + 1) * n_arms)  # xt, z and scores of choose_arm in one allocation
    xt = work[: d * n_arms].reshape((d, n_arms))
    z = work[d * n_arms : 2 * d * n_arms].reshape((d, n_arms))
    quadratic = params[PARAM_QUADRATIC] != 0.0
    return choose_arm(x, theta, chol, beta, params[PARAM_L_X], quadratic, xt, z, work[2 * d * n_arms :])


@njit(error_model="numpy")
def step_choose(
    obs: FloatArray,
    t: int,
    theta: FloatArray,
    u_fac: FloatArray,
    sched: FloatArray,
    l_x: float,
    quadratic: bool,
    x_max: float,
    out: IntArray,
) -> bool:  # pragma: no cover
    """The clients' choices in round ``t`` (the step API's ``act``): ``out[b]`` for every copy b.

    The client's step of the (LDP-)LinUCB protocol (Zheng et al., NeurIPS 2020; LinUCB: Li et al.,
    WWW 2010), as in :func:`run_copy`.

    ``obs`` (C-contiguous) is one env's (n_arms, d) feature matrix or B copies' (B, n_arms, d).
    With β = ``round_schedule(t, sched)[2]``, ``out[b] = choose_arm(obs[b], theta[b], u_fac[b],
    β, l_x, quadratic, ...)``, as :func:`choose_batch`. Returns False, writing nothing, when
    an entry of ``obs`` lies outside [-x_max, x_max] (a NaN or an infinity always does).
    """
    if not all_within(obs, x_max):
        return False
    n_arms, d = obs.shape[-2], obs.shape[-1]
    x = obs.reshape((-1, n_arms, d))
    _, _, beta = round_schedule(t, sched)
    xt = np.empty((d, n_arms))
    z = np.empty((d, n_arms))
    scores = np.empty(n_arms)
    for b in range(x.shape[0]):
        out[b] = choose_arm(x[b], theta[b], u_fac[b], beta, l_x, quadratic, xt, z, scores)
    return True


@njit(error_model="numpy")
def step_update(
    obs: FloatArray,
    actions: IntArray,
    rewards: FloatArray,
    send: BoolArray,
    noise: FloatArray,
    t: int,
    sched: FloatArray,
    l_x: float,
    l_y: float,
    sigma: float,
    grid: float,
    v_sum: FloatArray,
    u_sum: FloatArray,
    u_fac: FloatArray,
    theta: FloatArray,
    clips: IntArray,
    floors: IntArray,
) -> None:  # pragma: no cover
    """Reports and server update of round t (the step API's ``update``) for every copy b.

    The report and server steps of the (LDP-)LinUCB protocol (Zheng et al., NeurIPS 2020), as in
    :func:`run_copy`.

    ``obs`` is the round's (n_arms, d) or (B, n_arms, d) features. A copy with ``send[b]``
    reports :func:`write_report` of its arm and reward with its row of ``noise`` (B, m) and
    counts the clip flags in ``clips[b]``; a copy whose user may not report sends a zero report
    (the server adds nothing). The server then adds each report and refactors V + c_t I, c_t =
    ``round_schedule(t, sched)[1]`` (:func:`server_receive`; eigenvalue floors count in
    ``floors[b]``). The client and the server stay separate functions: the server's only input
    is the report. Equivalent:
    ``flags[b] = write_report(...)`` for every copy, ``clips[send, 0] += flags[send] & 1``,
    ``clips[send, 1] += flags[send] >> 1``, the reports of the other copies set to zero, then
    :func:`receive_batch`.
    """
    n_arms, d = obs.shape[-2], obs.shape[-1]
    x = obs.reshape((-1, n_arms, d))
    _, shift, _ = round_schedule(t, sched)
    gram = np.empty((d, d))
    vec = np.empty(d)
    for b in range(v_sum.shape[0]):
        if send[b]:
            flags = write_report(x[b], actions[b], rewards[b], l_x, l_y, sigma, grid, noise[b], gram, vec)
            clips[b, 0] += flags & 1
            clips[b, 1] += flags >> 1
        else:
            gram[:] = 0.0
            vec[:] = 0.0
        floors[b] += server_receive(v_sum[b], u_sum[b], gram, vec, shift, u_fac[b], theta[b])


@njit(error_model="numpy")
def step_report(
    x: FloatArray, action: int, reward: float, noise: FloatArray, t: int, params: FloatArray, state: FloatArray
) -> int:  # pragma: no cover
    """One env's report and server update of round t (the step API's ``update`` with plain scalars).

    ``x`` is the round's (n_arms, d) features, ``noise`` the report's m normals, ``params`` and
    ``state`` as in :func:`step_choose_one`. Same as :func:`step_update` with one copy that
    reports: ``flags = write_report(x, action, reward, l_x, l_y, σ, noise, gram, vec)``, then
    :func:`server_receive` with c_t = ``round_schedule(t, params)[1]``. Returns the clip flags
    plus 4 if the eigenvalue floor was used (the caller counts them), or -1, computing nothing,
    when ``state`` is not the buffer of a one-copy server of dimension d.
    """
    d = x.shape[1]
    if state.shape[0] != 2 * d * (d + 1):
        return -1
    work = np.empty((d + 1) * d)  # the report (gram, vec) in one allocation
    return _report_into(x, action, reward, noise, t, params, state, work)


@njit(error_model="numpy")
def _report_into(
    x: FloatArray,
    action: int,
    reward: float,
    noise: FloatArray,
    t: int,
    params: FloatArray,
    state: FloatArray,
    work: FloatArray,
) -> int:  # pragma: no cover
    """:func:`step_report` once the buffer is checked, with the report (gram, vec) written in ``work[:(d+1)d]``."""
    d = x.shape[1]
    _, shift, _ = round_schedule(t, params)
    v_sum, u_sum, u_fac, theta = server_views(state, d)
    gram = work[: d * d].reshape((d, d))
    vec = work[d * d : d * d + d]
    l_x, l_y, sigma, grid = params[PARAM_L_X], params[PARAM_L_Y], params[PARAM_SIGMA], params[PARAM_GRID]
    flags = write_report(x, action, reward, l_x, l_y, sigma, grid, noise, gram, vec)
    return flags + (4 if server_receive(v_sum, u_sum, gram, vec, shift, u_fac, theta) else 0)


@njit(error_model="numpy")
def step_report_drawn(
    holder: Any, x: FloatArray, action: int, reward: float, t: int, params: FloatArray, state: FloatArray
) -> int:  # pragma: no cover
    """:func:`step_report` drawing the report's normals itself from ``holder.rng`` (:class:`GeneratorHolder`).

    The m = d(d+1)/2 + d normals (none when σ = 0) are ``holder.rng.standard_normal()`` one at a
    time, the same values as the ``rng.standard_normal(m)`` that :func:`step_report` is given
    (numba's Generator draws reproduce numpy's, as :func:`fill_normals` does for the fast path).
    Returns what :func:`step_report` returns; -1 (nothing drawn or written) when ``state`` does
    not fit d.
    """
    d = x.shape[1]
    if state.shape[0] != 2 * d * (d + 1):
        return -1
    m = d * (d + 1) // 2 + d if params[PARAM_SIGMA] > 0.0 else 0
    work = np.empty((d + 1) * d + m)  # the report (gram, vec), then the noise, in one allocation
    noise = work[(d + 1) * d :]
    rng = holder.rng
    for i in range(m):
        noise[i] = rng.standard_normal()
    return _report_into(x, action, reward, noise, t, params, state, work)


@njit(error_model="numpy")
def copy_row(b: int | np.int64, table: FloatArray) -> int | np.int64:  # pragma: no cover
    """Copy ``b``'s index on axis 1 of a fast-path table: ``b``, or 0 when the table's one row serves all copies."""
    return b if table.shape[1] > 1 else 0


@njit(error_model="numpy")
def round_regret(e: FloatArray, a: int) -> float:  # pragma: no cover
    """One round's regret ``max(e) - e[a]`` of arm ``a`` under the expected rewards ``e``."""
    top = e[0]
    for k in range(1, e.shape[0]):
        top = max(top, e[k])
    return top - e[a]


@njit(error_model="numpy")
def record_round(
    s: int, b: int | np.int64, a: int, cum: float, ck_slot: IntArray, regret_out: FloatArray, actions_out: IntArray
) -> None:  # pragma: no cover
    """Store round ``s`` of copy ``b``'s action and cumulative regret ``cum``.

    The action goes to ``actions_out[s, b]`` if ``actions_out`` has a row per round (as ``ck_slot``
    does), the regret to ``regret_out[ck_slot[s], b]`` when ``ck_slot[s] >= 0``.
    """
    if actions_out.shape[0] == ck_slot.shape[0]:
        actions_out[s, b] = a
    if ck_slot[s] >= 0:
        regret_out[ck_slot[s], b] = cum


@njit(error_model="numpy")
def run_copy(
    b: int | np.int64, tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]
) -> None:  # pragma: no cover
    """Play rounds t0+1 .. t0+S of copy ``b``: the fast path's loop around the step kernels.

    ``tables`` = (features (S, 1 or B, n_arms, d), rewards (S, 1 or B, n_arms), expected (same),
    noise (S, B, m), ck_slot (S,), regret_out (n_ck, B), actions_out (S or 0, B)); axis 1 of
    length 1 is shared by all copies; ``noise`` holds the normals the step path would draw, in
    its order. ``params`` = (t0, schedule, l_x, l_y, sigma, quadratic, grid). ``state`` = (V, u, U, θ,
    cum_regret (B,), counters (B, 3)). Regret max(expected) - expected[a] adds to
    ``cum_regret[b]``; ``counters[b]`` counts clipped x, clipped y and floors; round s is stored
    at ``regret_out[ck_slot[s], b]`` when ``ck_slot[s] >= 0``; actions go to ``actions_out[s, b]``
    if it has S rows.
    """
    features, rewards, expected, noise, ck_slot, regret_out, actions_out = tables
    t0, sched, l_x, l_y, sigma, quadratic, grid = params
    v_sum, u_sum, u_fac, theta, cum_regret, counters = state
    n_steps, _, n_arms, d = features.shape
    fx, fr, fe = copy_row(b, features), copy_row(b, rewards), copy_row(b, expected)
    xt = np.empty((d, n_arms))
    z = np.empty((d, n_arms))
    scores = np.empty(n_arms)
    gram = np.empty((d, d))
    vec = np.empty(d)
    for s in range(n_steps):
        _, shift, beta = round_schedule(t0 + s + 1, sched)
        x = features[s, fx]
        a = choose_arm(x, theta[b], u_fac[b], beta, l_x, quadratic, xt, z, scores)
        cum_regret[b] += round_regret(expected[s, fe], a)
        flags = write_report(x, a, rewards[s, fr, a], l_x, l_y, sigma, grid, noise[s, b], gram, vec)
        counters[b, 0] += flags & 1
        counters[b, 1] += flags >> 1
        counters[b, 2] += server_receive(v_sum[b], u_sum[b], gram, vec, shift, u_fac[b], theta[b])
        record_round(s, b, a, cum_regret[b], ck_slot, regret_out, actions_out)


@njit(error_model="numpy")
def run_serial(tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]) -> None:  # pragma: no cover
    """:func:`run_copy` for every copy, in the calling thread."""
    for b in range(state[0].shape[0]):
        run_copy(b, tables, params, state)


@njit(parallel=True, error_model="numpy")
def run_parallel(tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]) -> None:  # pragma: no cover
    """:func:`run_copy` for every copy, copies spread over numba's threads (they share nothing)."""
    for b in numba.prange(state[0].shape[0]):
        run_copy(np.int64(b), tables, params, state)  # prange indices may be unsigned
