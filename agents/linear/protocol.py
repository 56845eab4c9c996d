r"""The client/server protocol of (LDP-)LinUCB: what the server holds, what a user computes and sends.

Both agents of :mod:`agents.linear` are the same protocol between a *server*
(:class:`LinUCBServer`: the sums :math:`V = \sum x x^\top`, :math:`u = \sum y x`, the estimate
:math:`\theta` and the Cholesky factor of the shifted Gram matrix) and a *client*, the user of
round t (:func:`client_choose`, :func:`client_report`):

1. the server broadcasts :math:`\theta` and the factor of :math:`\tilde V = V + cI`;
2. the client scores its own candidates and plays the best one (the action never leaves it);
3. the client observes the reward and sends :math:`(x x^\top, y x)`: exactly for LinUCB,
   clipped and perturbed by Gaussian noise for LDP-LinUCB;
4. the server adds the report and refactorizes.

This is the protocol of LDP-LinUCB in Zheng et al., "Locally Differentially Private
(Contextual) Bandits Learning", NeurIPS 2020 (arXiv:2006.00701), with the constants of the
authors' code ``MIFA-Lab/LDPbandit2020`` ``src/linucb.py``; LinUCB is the case without noise.

Privacy of a report (LDP-LinUCB, :func:`client_report` with ``sigma > 0``): the unit is one
user's datum, the pair (x, y) it reports, and any two pairs with ``‖x‖ <= l_x`` and
``|y| <= l_y`` (after clipping) are neighbours. The report is one Gaussian mechanism on the
upper triangle of :math:`x x^\top` (diagonal included) and :math:`y x`, whose L2 sensitivity is
:func:`~agents.linear.ldp_linucb.ldp_linucb_sensitivity`; with ``sigma`` from
:func:`~agents.linear.ldp_linucb.ldp_linucb_sigma` each report is (ε, δ)-LDP (the classic
calibration is proven for ε < 1 only, see :class:`~agents.linear.ldp_linucb.LDPLinUCB`).
Noise: ``d(d+1)/2 + d`` standard normals per report from the ``numpy.random.Generator`` passed
in, scaled by ``sigma``. Everything the server computes is post-processing of the reports.
"""

from __future__ import annotations

import math
import operator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from agents.base import _first_bad, check_choice, check_float
from agents.linear._kernels import choose_batch, fill_normals, receive_batch, write_report
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.validation import real_array

__all__ = ["BONUSES", "LinUCBServer", "ServerBuffer", "SharedBuffer", "as_features", "client_choose", "client_report"]


#: Exploration bonuses of the client's index: sqrt(xᵀṼ⁻¹x) or xᵀṼ⁻¹x.
BONUSES = ("sqrt", "quadratic")
#: The largest round count t the compiled kernels take (an int64). The private agents' shift and
#: width grow with t: their constructors check that these are finite here, hence at every round.
LAST_ROUND = 2**63 - 1


def as_features(
    name: str,
    value: Any,
    lead: tuple[int, ...],
    d: int,
    bound: float | None = None,
    reason: str = "",
    axes: tuple[str, ...] = (),
) -> FloatArray:
    """``value`` as a C-contiguous float64 array of shape lead + (n_arms, d), finite, n_arms >= 1.

    With ``bound``, every entry must also lie in [-bound, bound] (``reason`` says why, in the
    refusal, which names the first entry outside by ``axes``, the names of the ``lead`` axes,
    then its arm and feature).
    """
    shape_text = "(" + ", ".join([str(n) for n in lead] + ["n_arms", str(d)]) + ")"
    arr = np.ascontiguousarray(real_array(name, value, f"a float array of shape {shape_text}"))
    if arr.ndim != len(lead) + 2 or arr.shape[: len(lead)] != lead or arr.shape[-1] != d or arr.shape[-2] < 1:
        raise ValueError(f"{name} must have shape {shape_text}, got {arr.shape}.")
    if bound is None:
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must contain only finite numbers, but it has NaN or inf.")
    elif arr.size and not (-bound <= arr.min() and arr.max() <= bound):  # NaN fails too, and no array is made
        index = _first_bad(np.abs(arr) <= bound)
        where = ", ".join(f"{axis} {i}" for axis, i in zip((*axes, "arm", "feature"), index, strict=True))
        raise ValueError(
            f"{name} must contain only finite numbers in [{-bound:g}, {bound:g}] ({reason}), got "
            f"{float(arr[index])!r} at {where}."
        )
    return arr


def _view(name: str, doc: str) -> Any:
    """A read-only attribute of a :class:`SharedBuffer`: its view ``_<name>`` (write into it in place)."""
    return property(operator.attrgetter("_" + name), doc=doc)


class SharedBuffer:
    """Arrays of B copies (batch axis first) that are C-contiguous views of one float buffer, ``buffer``.

    ``_layout`` names the views in buffer order with the rank of one copy's part (2: a (d, d)
    matrix, 1: a (d,) vector), the sums of the reports ``gram`` (upper triangle) and ``moment``
    first; each is kept as ``_<name>`` and read through a read-only property of the same name
    (``_view``), so it cannot be rebound: write into it in place. The buffer lets a single-env
    step pass one array to its compiled kernel. Pickled as the buffer and the public attributes;
    the views are rebuilt on unpickling, still sharing the buffer.
    """

    _layout: ClassVar[tuple[tuple[str, int], ...]] = (("gram", 2), ("moment", 1))
    _gram: FloatArray
    _moment: FloatArray

    def __init__(self, n_features: int, batch: int) -> None:
        d = n_features
        self.buffer: FloatArray = np.zeros(batch * sum(d**rank for _, rank in self._layout))
        self._make_views(d, batch)

    def _make_views(self, d: int, batch: int) -> None:
        self._shape = (batch, d)
        start = 0
        for name, rank in self._layout:
            size = batch * d**rank
            setattr(self, "_" + name, self.buffer[start : start + size].reshape((batch,) + (d,) * rank))
            start += size

    gram: FloatArray = _view("gram", "The sum of the reports' x xᵀ, (B, d, d): the server's V, the open batch's P.")
    moment: FloatArray = _view("moment", "The sum of the reports' y x, (B, d): the server's u, the open batch's p.")

    def __getstate__(self) -> dict[str, Any]:
        """The buffer, the other public attributes and the shape (B, d)."""
        state = {key: value for key, value in self.__dict__.items() if not key.startswith("_")}
        state["shape"] = self._shape
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        batch, d = state.pop("shape")
        self.__dict__.update(state)
        self._make_views(d, batch)


class ServerBuffer(SharedBuffer):
    """The arrays of a linear agents' server, for B copies: V, u, the factor U of V + cI, and θ.

    ``gram`` (B, d, d; upper triangle) is V, ``moment`` (B, d) is u, ``chol`` (B, d, d) is the upper
    Cholesky factor U of V + cI (UᵀU = V + cI) and ``theta`` (B, d) is θ = (V + cI)⁻¹u. The four
    are C-contiguous views of one float buffer (``buffer``, in that order), so that a single-env
    step passes one array to its compiled kernel: write into them in place; they cannot be
    rebound. ``t`` counts the rounds, ``n_eig_floor`` per copy how often V + cI was indefinite
    and the eigenvalue floor was used. What "received" means is the subclass's docstring
    (:class:`LinUCBServer`, :class:`agents.linear.stats_base.StatsServer`).

    Parameters
    ----------
    n_features
        Dimension d.
    batch
        Number B of independent copies.
    initial_shift
        c before the first report (V = 0, U = sqrt(c)·I, θ = 0).
    """

    _layout = (("gram", 2), ("moment", 1), ("chol", 2), ("theta", 1))
    _chol: FloatArray
    _theta: FloatArray

    def __init__(self, n_features: int, batch: int, initial_shift: float) -> None:
        super().__init__(n_features, batch)
        d = n_features
        self.chol[:, np.arange(d), np.arange(d)] = math.sqrt(initial_shift)
        #: Reports received (the round number t of the last one).
        self.t = 0
        #: Per copy, how often V + cI was indefinite and the eigenvalue floor was used.
        self.n_eig_floor: IntArray = np.zeros(batch, dtype=np.int64)

    chol: FloatArray = _view("chol", "The upper Cholesky factor U of V + cI, (B, d, d).")
    theta: FloatArray = _view("theta", "The estimate θ = (V + cI)⁻¹u, (B, d).")


class LinUCBServer(ServerBuffer):
    """Server side of (LDP-)LinUCB: the aggregated reports and the model, for B copies.

    It holds only what users sent and what it computed from that: V = Σ reports of x xᵀ,
    u = Σ reports of y x, θ = (V + cI)⁻¹u and the upper Cholesky factor U of V + cI
    (``chol``, UᵀU = V + cI). It never receives a feature, a reward or an action. Arrays carry the
    batch axis first: ``gram`` (B, d, d), ``moment`` (B, d), ``chol`` (B, d, d), ``theta`` (B, d).
    The four are C-contiguous views of one float buffer (``buffer``, in that order), so a
    single-env step passes one array to its compiled kernel instead of four: write into them in
    place (``server.gram[...] = ...``); they cannot be rebound. Parameters: :class:`ServerBuffer`.
    """

    def receive(self, gram_reports: FloatArray, vector_reports: FloatArray, shift: float) -> None:
        """Add one report per copy ((B, d, d) and (B, d)) and refactor V + shift·I."""
        receive_batch(
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
    x = as_features("features", features, (), d)
    out = np.empty(1, dtype=np.int64)
    choose_batch(
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
    x: npt.ArrayLike,
    y: float,
    sigma: float,
    rng: np.random.Generator,
    *,
    l_x: float = 1.0,
    l_y: float = 1.0,
    grid: float = 0.0,
) -> tuple[FloatArray, FloatArray, int]:
    """Client side: the privatized report (x xᵀ + B, y x + ξ) and the clip flags of one user.

    ``x`` (d,) is clipped to norm ``l_x`` and ``y`` to [-l_y, l_y]: finite positive bounds, default
    1 as the agents use, so no report is ever unclipped (the (ε, δ)-LDP statement of a report
    assumes ‖x‖ <= l_x and |y| <= l_y, with ``sigma`` calibrated to the same bounds by
    :func:`~agents.linear.ldp_linucb.ldp_linucb_sigma`). B is a symmetric Gaussian matrix (upper
    triangle with the diagonal i.i.d. N(0, σ²), drawn row by row, mirrored) and ξ ~ N(0, σ²I),
    drawn after B. Flags: 1 if x was clipped, 2 if y was clipped (summed).
    ``grid`` > 0 (e.g. :attr:`agents.LDPLinUCB.grid`, with its σ): the lattice sampler, every
    entry ``snap(exact) + snap(noise)`` on that grid; 0 (default here): the raw float sum, not
    safe against floating-point attacks.
    """
    sigma = check_float("sigma", sigma, low=0.0)
    grid = check_float("grid", grid, low=0.0)
    l_x = check_float("l_x", l_x, low=0.0, low_open=True)  # finite: an infinite bound clips nothing
    l_y = check_float("l_y", l_y, low=0.0, low_open=True)
    row = np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1)
    d = row.shape[1]
    noise = np.empty(d * (d + 1) // 2 + d if sigma > 0 else 0)
    fill_normals(rng, noise)
    gram, vec = np.empty((d, d)), np.empty(d)
    flags = write_report(row, 0, float(y), float(l_x), float(l_y), float(sigma), grid, noise, gram, vec)
    return gram, vec, int(flags)
