r"""Compiled kernels of the batched private-statistics agents (LDP-OLS, Shuffle-LinUCB); private.

The agents of :mod:`agents.linear.stats_base` run one protocol: the client plays the arm of
largest :math:`x^\top\theta` (plus an optional bonus), then reports its clipped pair (x, y) as
the vector

.. math:: v = \bigl(w_g\,\mathrm{upper}(x x^\top)/l_x^2,\ w_m\,y\,x/(l_x l_y)\bigr),
   \qquad w_g^2 + w_m^2 = 1,

of the unit ball of :math:`\mathbb{R}^D`, :math:`D = d(d+1)/2 + d`, privatized by the Gaussian
mechanism or by Duchi et al.'s L2-ball mechanism (:mod:`bandit_envs.privacy.l2_ball`). The
report is decoded (upper triangle times :math:`l_x^2/w_g`, the rest times :math:`l_x l_y/w_m`:
unbiased for :math:`x x^\top` and :math:`y x`) and added to the pending sums of the open batch
(held outside the server object, :class:`agents.linear.stats_base.OpenBatch`); when a batch is
complete, the server adds it to :math:`(V, u)` and solves
:math:`\theta = (V + c_t I)^{-1} u` with the shift :math:`c_t = \lambda + s\,\nu\sqrt t`
(:func:`refit`). The step API and the compiled fast path call the same per-copy kernels with the
same draws, so they choose the same actions (``tests/test_ldp_contextual.py``).

Each kernel's docstring gives its numpy equivalent; the linear algebra is that of
:mod:`agents.linear._kernels` (Cholesky factor, eigenvalue floor, triangular solves), imported
from there. Status tag: [P] marks an engineering choice of this project.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from agents.linear._kernels import (
    GENERATOR_HOLDER,
    GeneratorHolder,
    all_finite,
    choose_arm,
    clip_factor,
    copy_row,
    factor_solve,
    record_round,
    round_regret,
    server_views,
)
from bandit_envs._jit import njit
from bandit_envs._types import BoolArray, FloatArray, IntArray

__all__ = [
    "GENERATOR_HOLDER",
    "GeneratorHolder",
    "MECH_GAUSSIAN",
    "MECH_L2_BALL",
    "MECH_NONE",
    "P_BATCH_SD",
    "P_BATCH_SIZE",
    "P_DRAWS",
    "P_LEVEL",
    "P_REG",
    "P_SHIFT_SCALE",
    "P_WIDTH",
    "P_WORK",
    "add_batch_noise",
    "choose_greedy",
    "fill_block_noise",
    "fill_block_noise_copies",
    "fill_report_noise",
    "refit",
    "run_copy",
    "run_parallel",
    "run_serial",
    "step_choose",
    "step_choose_one",
    "step_report_one",
    "step_report_plain",
    "step_update",
    "write_report",
]


#: Mechanism codes of :func:`write_report`: exact report, Gaussian noise, L2-ball mechanism.
MECH_NONE, MECH_GAUSSIAN, MECH_L2_BALL = 0, 1, 2
#: Entries of the single-env kernels' parameter array (:func:`step_choose_one`, :func:`step_report_one`)
#: after the 9 of ``enc`` (:func:`write_report`): ``batch_sd`` (6 entries, :func:`add_batch_noise`),
#: then reg, noise level ν, shift_scale, width, batch_size and the draw counts of one report
#: (normals, uniforms) and of one batch close (normals), 3 entries; from ``P_WORK`` on, the scratch
#: of :func:`step_report_one` (one array argument less to pass per call).
P_BATCH_SD, P_REG, P_LEVEL, P_SHIFT_SCALE, P_WIDTH, P_BATCH_SIZE, P_DRAWS, P_WORK = 9, 15, 16, 17, 18, 19, 20, 23


@njit(error_model="numpy")
def fill_report_noise(rng: np.random.Generator, normals: FloatArray, uniforms: FloatArray) -> None:  # pragma: no cover
    """Draw every report's noise in report order: its D normals, then its uniforms.

    ``normals`` is (..., D) and ``uniforms`` (..., 2) or (..., 0), C-contiguous, with the same
    leading shape (one entry per report). numpy equivalent, report by report:
    ``normals[i] = rng.standard_normal(D)``, then ``uniforms[i] = rng.random(n_u)``.
    """
    dim = normals.shape[-1]
    n_u = uniforms.shape[-1]
    flat_n = normals.reshape(normals.size)
    flat_u = uniforms.reshape(uniforms.size)
    n_reports = normals.size // dim if dim > 0 else uniforms.size // max(n_u, 1)
    for r in range(n_reports):
        for i in range(dim):
            flat_n[r * dim + i] = rng.standard_normal()
        for i in range(n_u):
            flat_u[r * n_u + i] = rng.random()


@njit(error_model="numpy")
def fill_block_noise(
    rng: np.random.Generator,
    normals: FloatArray,
    uniforms: FloatArray,
    batch_normals: FloatArray,
    closes: BoolArray,
) -> None:  # pragma: no cover
    """Draw a block's noise in the order of the step API: round by round, each closing round's batch noise after it.

    ``normals`` (S, B, Dr) and ``uniforms`` (S, B, n_u) are the per-report draws of round s
    (:func:`fill_report_noise` of ``normals[s]``, ``uniforms[s]``); when ``closes[s]`` the next
    row of ``batch_normals`` (n_closes, B, Db) follows (:func:`fill_report_noise` of that row and
    no uniforms). numpy equivalent: that sequence of ``rng.standard_normal`` / ``rng.random``
    calls.
    """
    no_uniforms = np.empty((batch_normals.shape[1], 0))
    c = 0
    for s in range(normals.shape[0]):
        fill_report_noise(rng, normals[s], uniforms[s])
        if closes[s]:
            fill_report_noise(rng, batch_normals[c], no_uniforms)
            c += 1


@njit(error_model="numpy")
def add_batch_noise(
    pend_gram: FloatArray, pend_mom: FloatArray, normals: FloatArray, batch_sd: FloatArray
) -> None:  # pragma: no cover
    """Add the Gaussian noise of a whole batch to its pending sums (the simulation's shortcut, [P]).

    Until this call the pending sums are the users' exact data; they are held on the users' side
    (:class:`agents.linear.ldp_ols.BatchClients`), never in the server object.

    A batch of n reports, each with i.i.d. N(0, σ²) noise on every coordinate of v, carries in its
    decoded sum N(0, n σ² gs²) on each upper Gram entry and N(0, n σ² ms²) on each entry of y x
    (:func:`write_report`'s ``gs``, ``ms``): ``sd_gram = sqrt(n) σ gs`` and ``sd_mom = sqrt(n) σ
    ms``. numpy equivalent: ``P[np.triu_indices(d)] += sd_gram * normals[:m]`` (row-major) and
    ``p += sd_mom * normals[m:]``. ``batch_sd = (sd_gram, sd_mom, sqrt(n) σ, grid, gs, ms)``.

    Lattice sampler (``grid > 0``): the batch's noise is released on the grid of the encoded
    reports, ``snap(sqrt(n) σ g) * gs`` (resp. ``* ms``): the sum of the n reports' rounded
    noises is replaced by one rounded draw of their sum's law (a simulation shortcut [P] that
    differs from the per-report sum by at most ``n grid / 2`` per encoded coordinate); every
    encoded entry stays a multiple of ``grid``.
    """
    sd_gram, sd_mom, root_sigma, grid = batch_sd[0], batch_sd[1], batch_sd[2], batch_sd[3]
    gs, ms = batch_sd[4], batch_sd[5]
    d = pend_mom.shape[0]
    m = d * (d + 1) // 2
    idx = 0
    for i in range(d):
        for j in range(i, d):
            if grid > 0.0:
                pend_gram[i, j] += np.rint(root_sigma * normals[idx] / grid) * grid * gs
            else:
                pend_gram[i, j] += sd_gram * normals[idx]
            idx += 1
    for i in range(d):
        if grid > 0.0:
            pend_mom[i] += np.rint(root_sigma * normals[m + i] / grid) * grid * ms
        else:
            pend_mom[i] += sd_mom * normals[m + i]


@njit(error_model="numpy")
def choose_greedy(
    x: FloatArray, theta: FloatArray, l_x: float, check: bool = False, start: int = 0
) -> int:  # pragma: no cover
    """The arm of largest clipped score: ``argmax_a (x_a @ theta) * clip_factor(x_a @ x_a, l_x)``, ties to the lowest.

    numpy equivalent: ``np.argmax((x @ theta) * np.minimum(1, l_x / np.linalg.norm(x, axis=1)))``.
    With ``check`` (the step API's call), -1 if ``x`` holds a value that is not finite: the check
    is folded into the loop, since a row's sum of squares is finite exactly when its entries are,
    unless it overflows (then the row is checked entry by entry). θ is ``theta[start : start + d]``
    (the step API passes the server's buffer, without making a view of it).
    """
    n_arms, d = x.shape
    best = 0
    best_value = -np.inf
    for a in range(n_arms):
        dot = 0.0
        sq = 0.0
        for i in range(d):
            dot += x[a, i] * theta[start + i]
            sq += x[a, i] * x[a, i]
        if check and not sq < np.inf and not all_finite(x[a]):
            return -1
        value = dot * clip_factor(sq, l_x)
        if value > best_value:
            best_value = value
            best = a
    return best


@njit(error_model="numpy")
def _choose(
    x: FloatArray, theta: FloatArray, u_fac: FloatArray, width: float, l_x: float, work: FloatArray
) -> int:  # pragma: no cover
    """Greedy choice (``width == 0``) or :func:`agents.linear._kernels.choose_arm` with the sqrt bonus."""
    if width == 0.0:
        return choose_greedy(x, theta, l_x)
    n_arms, d = x.shape
    xt = work[: d * n_arms].reshape((d, n_arms))
    z = work[d * n_arms : 2 * d * n_arms].reshape((d, n_arms))
    return choose_arm(x, theta, u_fac, width, l_x, False, xt, z, work[2 * d * n_arms : 2 * d * n_arms + n_arms])


@njit(error_model="numpy")
def write_report(
    x: FloatArray,
    a: int,
    y: float,
    enc: FloatArray,
    normals: FloatArray,
    uniforms: FloatArray,
    pend_gram: FloatArray,
    pend_mom: FloatArray,
    xc: FloatArray,
) -> int:  # pragma: no cover
    r"""Privatize the report of arm ``a`` and add it, decoded, to the pending sums; return clip flags.

    ``enc = (mech, l_x, l_y, w_g, w_m, sigma, scale, keep, grid)``. The client clips x = ``x[a]`` to
    norm ``l_x`` (into ``xc``) and y to [-l_y, l_y] (flags: 1 if x was clipped, 2 if y was, summed)
    and forms v (the module docstring; ``upper`` is row-major, diagonal included, m = d(d+1)/2
    entries). Then, with ``g = normals`` (D,), ``gs = l_x**2 / w_g`` and ``ms = l_x * l_y / w_m``:

    * ``MECH_NONE``: the report is v;
    * ``MECH_GAUSSIAN``: ``v + sigma * g`` (:func:`bandit_envs.privacy.gaussian_mechanism` with a
      fixed σ); with the lattice sampler (``grid > 0``, also for ``MECH_NONE``, the exact part of
      the simulation's shortcut) ``snap(v) + snap(sigma * g)`` on the grid, every entry of the
      report a multiple of ``grid``;
    * ``MECH_L2_BALL``: ``z = ±scale * g / ||g||``, + when ``(g @ v) * s > 0`` equals
      ``uniforms[1] < keep``, where ``s = +1`` if ``uniforms[0] < 1/2 + ||v|| / 2`` else -1 (for
      v = 0, ``g[0]`` stands for ``g @ v``): :func:`bandit_envs.privacy.l2_ball.l2_ball_mechanism`
      at radius 1 with these draws, ``scale`` its B and ``keep`` its π.

    The server's decoding: ``pend_gram[i, j] += report[k] * gs`` for the k-th upper entry (i <= j;
    the lower triangle is not written) and ``pend_mom += report[m:] * ms``.
    """
    mech = enc[0]
    l_x, l_y, w_g, w_m = enc[1], enc[2], enc[3], enc[4]
    d = x.shape[1]
    m = d * (d + 1) // 2
    sq = 0.0
    for i in range(d):
        sq += x[a, i] * x[a, i]
    c = clip_factor(sq, l_x)
    yc = min(max(y, -l_y), l_y)
    flags = (1 if c < 1.0 else 0) + (2 if yc != y else 0)
    for i in range(d):
        xc[i] = x[a, i] * c
    gs = l_x * l_x / w_g
    ms = l_x * l_y / w_m
    if (mech == MECH_NONE or mech == MECH_GAUSSIAN) and enc[8] > 0.0:
        grid = enc[8]
        noise = enc[5] if mech == MECH_GAUSSIAN else 0.0
        vg = w_g / (l_x * l_x)
        vm = w_m / (l_x * l_y)
        idx = 0
        for i in range(d):
            for j in range(i, d):
                rep = np.rint(vg * xc[i] * xc[j] / grid) * grid
                if noise > 0.0:
                    rep += np.rint(noise * normals[idx] / grid) * grid
                pend_gram[i, j] += rep * gs
                idx += 1
        for i in range(d):
            rep = np.rint(vm * yc * xc[i] / grid) * grid
            if noise > 0.0:
                rep += np.rint(noise * normals[m + i] / grid) * grid
            pend_mom[i] += rep * ms
        return flags
    if mech == MECH_NONE or mech == MECH_GAUSSIAN:
        noise = enc[5] if mech == MECH_GAUSSIAN else 0.0
        idx = 0
        for i in range(d):
            for j in range(i, d):
                v = xc[i] * xc[j]
                if noise > 0.0:
                    v += noise * gs * normals[idx]
                pend_gram[i, j] += v
                idx += 1
        for i in range(d):
            v = yc * xc[i]
            if noise > 0.0:
                v += noise * ms * normals[m + i]
            pend_mom[i] += v
        return flags
    vg = w_g / (l_x * l_x)
    vm = w_m / (l_x * l_y)
    nv2 = 0.0
    gv = 0.0
    g2 = 0.0
    idx = 0
    for i in range(d):
        for j in range(i, d):
            v = vg * xc[i] * xc[j]
            nv2 += v * v
            gv += normals[idx] * v
            g2 += normals[idx] * normals[idx]
            idx += 1
    for i in range(d):
        v = vm * yc * xc[i]
        nv2 += v * v
        gv += normals[m + i] * v
        g2 += normals[m + i] * normals[m + i]
    if nv2 == 0.0:
        gv = normals[0]
    sign = 1.0 if uniforms[0] < 0.5 + 0.5 * math.sqrt(nv2) else -1.0
    f = enc[6] / math.sqrt(g2)
    if (gv * sign > 0.0) != (uniforms[1] < enc[7]):
        f = -f
    idx = 0
    for i in range(d):
        for j in range(i, d):
            pend_gram[i, j] += f * normals[idx] * gs
            idx += 1
    for i in range(d):
        pend_mom[i] += f * normals[m + i] * ms
    return flags


@njit(error_model="numpy")
def refit(
    gram: FloatArray,
    mom: FloatArray,
    pend_gram: FloatArray,
    pend_mom: FloatArray,
    shift: float,
    u_fac: FloatArray,
    theta: FloatArray,
) -> bool:  # pragma: no cover
    """Close a batch: add the pending sums to (V, u), zero them, refactor V + shift·I and solve θ.

    Only upper triangles are read and written. ``u_fac`` is the upper Cholesky factor of
    ``V + shift * I`` (:func:`agents.linear._kernels.cholesky_upper`), or of its eigenvalue-floored
    version when a pivot fails (:func:`agents.linear._kernels.eig_floor_factor`: eigenvalues raised
    to at least shift/2); returns True in that case. numpy equivalent without a floor:
    ``V += P; u += p; P[:] = 0; p[:] = 0; theta[:] = np.linalg.solve(V_sym + shift * I, u)``.
    """
    d = mom.shape[0]
    for i in range(d):
        mom[i] += pend_mom[i]
        pend_mom[i] = 0.0
        for j in range(i, d):
            gram[i, j] += pend_gram[i, j]
            pend_gram[i, j] = 0.0
    return factor_solve(gram, mom, shift, u_fac, theta)


@njit(error_model="numpy")
def _shift(t: int, reg: float, level: float, shift_scale: float) -> float:  # pragma: no cover
    """c_t = reg + shift_scale * level * sqrt(t) after t reports."""
    return reg + shift_scale * level * math.sqrt(t)


@njit(error_model="numpy")
def step_choose(
    obs: FloatArray, theta: FloatArray, u_fac: FloatArray, width: float, l_x: float, out: IntArray
) -> bool:  # pragma: no cover
    """The clients' choices (the step API's ``act``): ``out[b]`` for every copy b of ``obs``.

    ``obs`` (C-contiguous) is one env's (n_arms, d) or B copies' (B, n_arms, d). Greedy
    (:func:`choose_greedy`) when ``width == 0``, else the sqrt bonus of ``choose_arm``. Returns
    False, writing nothing, when ``obs`` holds a NaN or an infinity.
    """
    if not all_finite(obs):
        return False
    n_arms, d = obs.shape[-2], obs.shape[-1]
    x = obs.reshape((-1, n_arms, d))
    work = np.empty((2 * d + 1) * n_arms)
    for b in range(x.shape[0]):
        out[b] = _choose(x[b], theta[b], u_fac[b], width, l_x, work)
    return True


@njit(error_model="numpy")
def step_choose_one(obs: FloatArray, params: FloatArray, state: FloatArray) -> int:  # pragma: no cover
    """One env's choice (the step API's ``act``), or -1 when ``obs`` does not fit.

    ``obs`` should be the (n_arms, d) feature matrix, C-contiguous, n_arms >= 1, d the server's,
    all finite; otherwise -1 is returned and nothing computed. The layout is checked here, from
    the strides numba copies from the array whatever layout the entry point declares (C, for the
    speed of the loops), before any entry is read: the caller need not read numpy's flags. ``params`` is the
    agent's parameter array (``enc``, then ``P_*``) and ``state`` the one-copy server buffer
    (:func:`agents.linear._kernels.server_views`: V, u, U, θ). Same as :func:`step_choose` for one
    copy.
    """
    n_arms, d = obs.shape
    if n_arms < 1 or state.shape[0] != 2 * d * (d + 1) or obs.strides[1] != 8 or obs.strides[0] != 8 * d:
        return -1
    width, l_x = params[P_WIDTH], params[1]
    if width != 0.0:
        if not all_finite(obs):
            return -1
        _, _, u_fac, theta = server_views(state, d)
        work = np.empty((2 * d + 1) * n_arms)
        return _choose(obs, theta, u_fac, width, l_x, work)
    return choose_greedy(obs, state, l_x, True, 2 * d * d + d)  # θ, the buffer's last d


@njit(error_model="numpy")
def step_report_one(
    holder: Any,
    obs: FloatArray,
    action: int,
    reward: float,
    t: int,
    count: int,
    params: FloatArray,
    state: FloatArray,
    pending: FloatArray,
) -> int:  # pragma: no cover
    """One env's draws, report and (at a batch's end) refit: the step API's ``update`` with plain scalars.

    ``holder.rng`` is the agent's generator (:class:`GeneratorHolder`), ``t`` the reports
    received with this one, ``count`` the open batch's reports before it, ``params`` and
    ``state`` as in :func:`step_choose_one`, ``pending`` the open batch's buffer (its P (d, d),
    then p (d,); :class:`agents.linear.stats_base.OpenBatch`). ``params[P_WORK:]`` is the agent's
    scratch for the draws and the clipped x (at least Dr + n_u + Db + d floats; its content is not
    kept). The same draws, in the same order, and the same arithmetic as :func:`step_update` for
    one copy, with ``close = count + 1 == batch_size`` and the shift c_t of :func:`_shift`. Returns
    the clip flags (1: x, 2: y) plus 4 if the eigenvalue floor was used, or -1 (nothing drawn or
    written) when a buffer does not fit d, -2 (nothing drawn or written) when ``action`` is not an
    arm of ``obs`` or ``reward`` is not finite (the caller's checked path then says which).

    A round that draws nothing and closes no batch can take :func:`step_report_plain` instead.
    """
    n_arms, d = obs.shape
    if action < 0 or action >= n_arms or not -np.inf < reward < np.inf:
        return -2
    dd = d * d
    n_n, n_u, n_b = int(params[P_DRAWS]), int(params[P_DRAWS + 1]), int(params[P_DRAWS + 2])
    w = P_WORK
    if state.shape[0] != 2 * d * (d + 1) or pending.shape[0] != dd + d or params.shape[0] < w + n_n + n_u + n_b + d:
        return -1
    close = count + 1 == int(params[P_BATCH_SIZE])
    # Views of the scratch are made only where used: each view of an argument costs about 12 ns
    # (its reference count), as much as the rest of a round's bookkeeping.
    xc = params[w + n_n + n_u + n_b : w + n_n + n_u + n_b + d]
    pend_gram = pending[:dd].reshape((d, d))
    pend_mom = pending[dd:]
    rng = holder.rng
    normals = params[w : w + n_n]
    uniforms = params[w + n_n : w + n_n + n_u]
    batch_normals = params[w + n_n + n_u : w + n_n + n_u + n_b]
    for i in range(n_n):
        normals[i] = rng.standard_normal()
    for i in range(n_u):
        uniforms[i] = rng.random()
    if close:
        for i in range(n_b):
            batch_normals[i] = rng.standard_normal()
    flags = write_report(obs, action, reward, params, normals, uniforms, pend_gram, pend_mom, xc)
    if close:
        flags += _close_batch(t, params, state, pend_gram, pend_mom, batch_normals)
    return flags


@njit(error_model="numpy")
def step_report_plain(
    obs: FloatArray,
    action: int,
    reward: float,
    count: int,
    params: FloatArray,
    pending: FloatArray,
    clips: IntArray,
) -> int:  # pragma: no cover
    """:func:`step_report_one` for a round that draws nothing and closes no batch, without the generator and server.

    For a mechanism without per-report draws (LDP-OLS's Gaussian reports, whose noise the
    simulation adds per batch at its close) and a round that leaves the batch open
    (``count + 1 < batch_size``): the report of arm ``action`` added to the open batch's
    ``pending``, nothing drawn, the server's buffer not read (two arguments and an array fewer to
    pass than :func:`step_report_one`). The clip flags are counted here, in the first copy's row
    of ``clips`` (x, y), rather than returned, so that a round that clips takes no further Python
    step. Returns 0, -2 as :func:`step_report_one`, or -1 (nothing written) when ``pending``,
    ``params`` or ``clips`` does not fit, or the round would draw or close the batch.
    """
    n_arms, d = obs.shape
    if action < 0 or action >= n_arms or not -np.inf < reward < np.inf:
        return -2
    dd = d * d
    n_n, n_u, n_b = int(params[P_DRAWS]), int(params[P_DRAWS + 1]), int(params[P_DRAWS + 2])
    w = P_WORK + n_n + n_u + n_b
    if (
        pending.shape[0] != dd + d
        or params.shape[0] < w + d
        or clips.shape[0] < 1
        or clips.shape[1] != 2
        or n_n + n_u > 0
        or count + 1 >= int(params[P_BATCH_SIZE])
    ):
        return -1
    xc = params[w : w + d]
    # write_report reads no normals nor uniforms without draws (MECH_NONE): xc stands in for them
    flags = write_report(obs, action, reward, params, xc, xc, pending[:dd].reshape((d, d)), pending[dd:], xc)
    clips[0, 0] += flags & 1
    clips[0, 1] += flags >> 1
    return 0


@njit(error_model="numpy")
def _close_batch(
    t: int,
    params: FloatArray,
    state: FloatArray,
    pend_gram: FloatArray,
    pend_mom: FloatArray,
    batch_normals: FloatArray,
) -> int:  # pragma: no cover
    """:func:`step_report_one`'s batch close: the batch noise (if any normals), the refit; 4 if the floor was used."""
    gram, mom, u_fac, theta = server_views(state, pend_mom.shape[0])
    if batch_normals.shape[0] > 0:
        add_batch_noise(pend_gram, pend_mom, batch_normals, params[P_BATCH_SD : P_BATCH_SD + 6])
    shift = _shift(t, params[P_REG], params[P_LEVEL], params[P_SHIFT_SCALE])
    return 4 if refit(gram, mom, pend_gram, pend_mom, shift, u_fac, theta) else 0


#: Rounds per tile of the per-copy fills (each copy draws a tile's rounds, then the next copy).
_TILE = 16


@njit(error_model="numpy")
def fill_block_noise_copies(
    rngs: Any,
    normals: FloatArray,
    uniforms: FloatArray,
    batch_normals: FloatArray,
    closes: BoolArray,
) -> None:  # pragma: no cover
    """:func:`fill_block_noise` with one generator per copy: copy b's draws from ``rngs[b]`` (a numba typed list).

    Copy b draws, round by round, its report's normals and uniforms and, when ``closes[s]``, its
    row of the batch noise: what :func:`fill_block_noise` draws for a single agent with generator
    ``rngs[b]``, so copy i of a batch seeded s draws as a single agent seeded s + i
    (docs/design.md, "Agents", Seeds).
    """
    n_rounds = normals.shape[0]
    c0 = 0  # closes before the tile
    for s0 in range(0, n_rounds, _TILE):  # tiles of rounds, so the writes of the copies stay in cache
        s1 = min(n_rounds, s0 + _TILE)
        for b in range(normals.shape[1]):
            g = rngs[b]
            c = c0
            for s in range(s0, s1):
                for i in range(normals.shape[2]):
                    normals[s, b, i] = g.standard_normal()
                for i in range(uniforms.shape[2]):
                    uniforms[s, b, i] = g.random()
                if closes[s]:
                    for i in range(batch_normals.shape[2]):
                        batch_normals[c, b, i] = g.standard_normal()
                    c += 1
        for s in range(s0, s1):
            c0 += closes[s]


@njit(error_model="numpy")
def step_update(
    rngs: Any,
    obs: FloatArray,
    actions: IntArray,
    rewards: FloatArray,
    normals: FloatArray,
    uniforms: FloatArray,
    batch_normals: FloatArray,
    enc: FloatArray,
    batch_sd: FloatArray,
    close: bool,
    shift: float,
    gram: FloatArray,
    mom: FloatArray,
    pend_gram: FloatArray,
    pend_mom: FloatArray,
    u_fac: FloatArray,
    theta: FloatArray,
    clips: IntArray,
    floors: IntArray,
) -> None:  # pragma: no cover
    """One round's draws, reports for every copy b (the step API's ``update``), then the refit if ``close``.

    Copy b draws from ``rngs[b]``, a numba typed list of the agent's own generators (the same bit
    generators; passing a numpy Generator to compiled code costs about 5 us a call, as numba reads
    its bit generator's C interface through ctypes each time, while a typed list that holds them
    is passed as a pointer): its report's normals, then its uniforms and, when ``close`` and
    Db > 0, its batch noise, the order of :func:`fill_block_noise` for one round. One env
    (``[rng]``) draws from ``rng``; copy i of a batch seeded s draws as a single agent seeded
    s + i (docs/design.md, "Agents", Seeds).
    ``obs`` is the round's (n_arms, d) or (B, n_arms, d). The draws go to the work buffers
    ``normals`` (B, Dr), ``uniforms`` (B, 2 or 0) and ``batch_normals`` (B, Db); ``batch_sd =
    (sd_gram, sd_mom)``; the arrays (V, u, P, p, U, θ) have a batch axis: the server's V, u, U, θ
    and the open batch's pending sums P, p (:class:`agents.linear.stats_base.OpenBatch`).
    Equivalent: ``flags[b] = write_report(obs[b], actions[b], rewards[b], enc, normals[b],
    uniforms[b], P[b], p[b], xc)`` counted in ``clips[b]``, then, if ``close``,
    :func:`add_batch_noise` (when Db > 0) and ``floors[b] += refit(V[b], u[b], P[b], p[b], shift,
    U[b], θ[b])``.
    """
    draw_batch = close and batch_normals.shape[1] > 0
    n_arms, d = obs.shape[-2], obs.shape[-1]
    x = obs.reshape((-1, n_arms, d))
    xc = np.empty(d)
    for b in range(gram.shape[0]):
        g = rngs[b]
        for i in range(normals.shape[1]):
            normals[b, i] = g.standard_normal()
        for i in range(uniforms.shape[1]):
            uniforms[b, i] = g.random()
        if draw_batch:
            for i in range(batch_normals.shape[1]):
                batch_normals[b, i] = g.standard_normal()
        flags = write_report(x[b], actions[b], rewards[b], enc, normals[b], uniforms[b], pend_gram[b], pend_mom[b], xc)
        clips[b, 0] += flags & 1
        clips[b, 1] += flags >> 1
        if close:
            if draw_batch:
                add_batch_noise(pend_gram[b], pend_mom[b], batch_normals[b], batch_sd)
            floors[b] += refit(gram[b], mom[b], pend_gram[b], pend_mom[b], shift, u_fac[b], theta[b])


@njit(error_model="numpy")
def run_copy(
    b: int | np.int64, tables: tuple[Any, ...], params: tuple[Any, ...], state: tuple[Any, ...]
) -> None:  # pragma: no cover
    """Play rounds t0+1 .. t0+S of copy ``b``: the fast path's loop around the step kernels.

    ``tables`` = (features (S, 1 or B, n_arms, d), rewards (S, 1 or B, n_arms), expected (same),
    normals (S, B, Dr), uniforms (S, B, 2 or 0), batch_normals (n_closes, B, Db), ck_slot (S,),
    regret_out (n_ck, B), actions_out (S or 0, B)). ``params`` = (t0, pending0, batch_size, enc,
    batch_sd, reg, level, shift_scale, width): the reports received before the block, those of
    them in the open batch, and the rest (``batch_sd`` as in :func:`step_update`).
    ``state`` = (V, u, P, p, U, θ, cum_regret (B,), counters (B, 3)). Round s: the client
    chooses with θ[b] (:func:`_choose`), regret max(expected) - expected[a] is added, the report is
    written (:func:`write_report`) and, when it completes a batch of ``batch_size``, the batch is
    refitted with c_t after t = t0 + s + 1 reports (:func:`add_batch_noise` from the next row of
    ``batch_normals`` when Db > 0, then :func:`refit`). ``counters[b]`` counts clipped
    x, clipped y and eigenvalue floors; checkpoints and actions as in
    :func:`agents.linear._kernels.run_copy`.
    """
    features, rewards, expected, normals, uniforms, batch_normals, ck_slot, regret_out, actions_out = tables
    t0, pending0, batch_size, enc, batch_sd, reg, level, shift_scale, width = params
    gram, mom, pend_gram, pend_mom, u_fac, theta, cum_regret, counters = state
    n_steps, _, n_arms, d = features.shape
    fx, fr, fe = copy_row(b, features), copy_row(b, rewards), copy_row(b, expected)
    work = np.empty((2 * d + 1) * n_arms)
    xc = np.empty(d)
    pending = pending0
    closed = 0
    for s in range(n_steps):
        x = features[s, fx]
        a = _choose(x, theta[b], u_fac[b], width, enc[1], work)
        cum_regret[b] += round_regret(expected[s, fe], a)
        flags = write_report(x, a, rewards[s, fr, a], enc, normals[s, b], uniforms[s, b], pend_gram[b], pend_mom[b], xc)
        counters[b, 0] += flags & 1
        counters[b, 1] += flags >> 1
        pending += 1
        if pending == batch_size:
            pending = 0
            shift = _shift(t0 + s + 1, reg, level, shift_scale)
            if batch_normals.shape[2] > 0:
                add_batch_noise(pend_gram[b], pend_mom[b], batch_normals[closed, b], batch_sd)
            closed += 1
            counters[b, 2] += refit(gram[b], mom[b], pend_gram[b], pend_mom[b], shift, u_fac[b], theta[b])
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
