r"""Shuffle-LinUCB: linear contextual bandit in the shuffle model of differential privacy.

:class:`ShuffleLinUCB` follows the shuffle-model framework of Chowdhury & Zhou [1]_ (Alg. 1,
"Shuffle Private LinUCB", its instantiation by amplification of local randomizers) and of
Garcelon, Chaudhuri, Perchet & Pirotta [2]_: the rounds are cut into batches of n =
``batch_size`` users; during a batch every user chooses with the model of the last batch, then
applies a local randomizer to its pair (x, y); a trusted shuffler collects the batch's n reports
and hands them to the server in a uniformly random order; the server adds them (a sum does not
depend on the order) and refits. The machinery is that of LDP-OLS
(:class:`agents.linear.stats_base.StatsAgent`): the same encoding of :math:`(x x^\top, y x)` in
the unit ball, the same ridge refit with a noise-scaled shift, greedy or optimistic play.

Local randomizer: Duchi et al.'s L2-ball mechanism (:mod:`bandit_envs.privacy.l2_ball`) at
:math:`\varepsilon_0`, pure :math:`\varepsilon_0`-LDP, so that the amplification theorem of
Feldman, McMillan & Talwar [3]_ (Thm. 3.2, with its numerical bound;
:mod:`bandit_envs.privacy.shuffle`) applies without a :math:`\delta_0` term [P]. A Gaussian
randomizer (the perturbation of LDP-LinUCB, which [1]_'s amplification instantiation builds on)
is only :math:`(\varepsilon_0, \delta_0)`-LDP, and its amplification needs :math:`\delta_0` of
order :math:`\delta/n`, hence more noise at the same central ε (at ε = 1, δ = 1e-6, n = 1000:
ε0 ≈ 2.7, where the L2-ball mechanism's variance per coordinate is about 2.0 r² against about
20 r² for an analytic Gaussian with δ0 = 2e-10).
:math:`\varepsilon_0` is the largest local ε whose n shuffled reports are
:math:`(\varepsilon, \delta)`-DP (:func:`~bandit_envs.privacy.shuffle.local_epsilon_for_shuffle`).

Privacy guarantee, both models stated:

* **local**, against anyone who sees one report (the shuffler included): each report is
  :math:`\varepsilon_0`-LDP (:attr:`ShuffleLinUCB.privacy_per_report`), neighbours being any two
  clipped pairs (x, y) with ``‖x‖ <= l_x``, ``|y| <= l_y``;
* **central**, against the server (the analyzer) that sees the shuffled batches: each closed
  batch is (ε, δ)-DP for one report replaced (:attr:`ShuffleLinUCB.privacy_central_per_report`);
  the reports of an open batch stay with the shuffler (``open_batch``, :class:`Shuffler`: its
  running sum of them, outside the server object) and are not released.

Per user. A user reports many times (``MovieLensRecommendation-v0`` draws one each round). Its
local loss is the composition of its k reports (:meth:`privacy_per_user`: basic and tight, the
ε0-LDP reports composed as randomized response at ε0, the optimal composition of ε0-DP
mechanisms, Kairouz, Oh & Viswanath, ICML 2015). Its central loss: a batch where it sent m
reports is, by group privacy, :math:`(m\varepsilon, \delta(e^{m\varepsilon}-1)/(e^\varepsilon-1))`-DP
for it (:func:`~bandit_envs.privacy.shuffle.group_privacy`), and the closed batches compose
sequentially: :meth:`privacy_per_user_central` gives :math:`(k_c\varepsilon, \sum_b \delta_b)` for
the worst user (k_c its reports in closed batches; reports without a user id count for every
user). Both bound what the server learns (the shuffled batches are post-processing of the local
reports); :attr:`privacy_spent` is the smaller one at ``user_delta``. Noise: per report D
standard normals and two uniforms from :func:`~bandit_envs.privacy.streams.noise_generator` of
``seed``; the shuffle itself is not simulated (the server only uses each batch's sum). Sampler:
the L2-ball reports ``±B g/‖g‖`` (a coin's sign times a direction drawn without the data) have
the same output set for every pair, so no lattice is needed and there is no ``sampler``
argument (contrast the Gaussian reports of :class:`agents.LDPLinUCB` and :class:`agents.LDPOLS`).

Status tags: [P] marks an engineering choice of this project; defaults chosen on the synthetic
default data of ``MovieLensRecommendation-v0`` only (see the class docstring).

References
----------
.. [1] S. R. Chowdhury, X. Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022
   (arXiv:2202.05567).
.. [2] E. Garcelon, K. Chaudhuri, V. Perchet, M. Pirotta, "Privacy Amplification via Shuffling
   for Linear Contextual Bandits", ALT 2022 (arXiv:2112.06008).
.. [3] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones: a simple and nearly optimal
   analysis of privacy amplification by shuffling", FOCS 2021 (arXiv:2012.12803).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import check_float
from agents.linear.stats_base import OpenBatch, StatsAgent
from bandit_envs.privacy._checks import MAX_EPSILON
from bandit_envs.privacy.shuffle import local_epsilon_for_shuffle

__all__ = ["MAX_BATCH", "ShuffleLinUCB", "Shuffler"]

#: Largest shuffle batch: the amplification bound evaluates binomial laws over the batch.
MAX_BATCH = 10**6


def _group_factor(m: int, epsilon: float) -> float:
    """(e^{m eps} - 1) / (e^eps - 1): the δ multiplier of group privacy for m changed reports (0 for m = 0)."""
    if m == 0:
        return 0.0
    try:
        return math.expm1(m * epsilon) / math.expm1(epsilon)
    except OverflowError:
        return math.inf


class Shuffler(OpenBatch):
    """The trusted shuffler of Shuffle-LinUCB: the reports of the open batch, not yet handed to the server.

    ``gram`` (upper triangle) and ``moment`` sum the decoded reports of the open batch (``count``
    of them), each privatized by its user with the ε0-LDP L2-ball mechanism. The shuffler sees
    every report (the local guarantee is what protects a user against it); the server receives a
    batch only when it closes, shuffled, and uses only its sum, which is why the simulation keeps
    a running sum rather than the reports and does not shuffle them.
    """


class _BatchLedger:
    """Per copy: each user's reports in the open shuffle batch, and its group-privacy sums over closed ones.

    With ``a_b`` anonymous reports (no user id: they count for every user) and ``m_ub`` named ones
    in batch b, user u's δ multiplier is ``S_u = sum_b g(m_ub + a_b)`` (``g`` = :func:`_group_factor`).
    It is kept as ``A + E_u`` with ``A = sum_b g(a_b)`` and ``E_u = sum over u's batches of
    g(m_ub + a_b) - g(a_b)``, so that users absent from a batch need no update; likewise the
    reports in closed batches are ``closed_anon + closed_named[u]``.
    """

    def __init__(self, batch: int, epsilon: float) -> None:
        self.epsilon = epsilon
        self.open: list[dict[Hashable, int]] = [{} for _ in range(batch)]
        self.open_anon = np.zeros(batch, dtype=np.int64)
        self.extra: list[dict[Hashable, float]] = [{} for _ in range(batch)]
        self.closed_named: list[dict[Hashable, int]] = [{} for _ in range(batch)]
        self.anon_factor = np.zeros(batch)
        self.closed_anon = np.zeros(batch, dtype=np.int64)
        self.max_extra = np.zeros(batch)
        self.max_named = np.zeros(batch, dtype=np.int64)

    def add(self, users: npt.NDArray[Any] | list[Any] | None, n_rounds: int) -> None:
        """Count rounds of the open batch: ``users`` (n_rounds, B) ids (an array, or a list of rows), or None."""
        if users is None:
            self.open_anon += n_rounds
            return
        if isinstance(users, list):
            for row in users:
                for counts, user in zip(self.open, row, strict=True):
                    counts[user] = counts.get(user, 0) + 1
            return
        for b, counts in enumerate(self.open):
            values, sizes = np.unique(users[:, b], return_counts=True)
            for v, c in zip(values.tolist(), sizes.tolist(), strict=True):
                counts[v] = counts.get(v, 0) + c

    def close(self) -> None:
        """The open batch is released: fold it into the group sums and start a new one."""
        for b, counts in enumerate(self.open):
            anon = int(self.open_anon[b])
            base = _group_factor(anon, self.epsilon)
            self.anon_factor[b] += base
            self.closed_anon[b] += anon
            extra, named = self.extra[b], self.closed_named[b]
            for user, m in counts.items():
                extra[user] = extra.get(user, 0.0) + _group_factor(m + anon, self.epsilon) - base
                named[user] = named.get(user, 0) + m
                self.max_extra[b] = max(self.max_extra[b], extra[user])
                self.max_named[b] = max(self.max_named[b], named[user])
            counts.clear()
        self.open_anon[:] = 0

    def worst(self) -> tuple[int, float]:
        """(reports in closed batches, δ multiplier S) of the worst user, each the worst over copies."""
        reports = int((self.closed_anon + self.max_named).max())
        factor = float((self.anon_factor + self.max_extra).max())
        return reports, factor


class ShuffleLinUCB(StatsAgent):
    r"""Shuffle-LinUCB: batched LinUCB/greedy on shuffled ε0-LDP reports, central (ε, δ) by amplification.

    Round t: the client plays :math:`\arg\max_a \tilde x_a^\top\theta + \beta\sqrt{\tilde x_a^\top
    (V + cI)^{-1}\tilde x_a}` with the model of the last closed batch (:math:`\tilde x_a` clipped
    to ``l_x``; ``width`` = β = 0, the default, is greedy), observes y and sends its pair through
    the L2-ball mechanism at ε0 to the shuffler. When n = ``batch_size`` reports are in, the
    server receives them shuffled, adds them to (V, u) and refits
    :math:`\theta = (V + c_t I)^{-1}u`, :math:`c_t = \lambda + s\,\nu\sqrt t` (module docstring
    of :mod:`agents.linear.stats_base`). Sampler: the L2-ball reports ±B·g/‖g‖ have the same output
    set for every pair (no lattice needed, no ``sampler`` argument; module docstring).

    Departures from the papers [P]: the local randomizer is the pure L2-ball mechanism (so the
    amplification needs no δ0; module docstring); ε0 is computed from the
    numerical clones bound of Feldman et al. rather than a closed form; the shift scales the
    noise's spectral norm instead of the papers' theory constants; ``width`` is a constant.

    Defaults [P] chosen on the synthetic default data of ``MovieLensRecommendation-v0`` only (T =
    10⁵, ε in {1, 10}): greedy, ``gram_weight = 0.1``, ``shift_scale = 16`` (as LDP-OLS),
    ``batch_size = 1000`` and ``delta = 1e-6``. Larger batches raise ε0 (more amplification) but
    the L2-ball mechanism's variance stops falling past ε0 ≈ 3 (it tends to (π/2)·r² per
    coordinate) while the model gets staler.

    Parameters
    ----------
    n_features
        Dimension d (>= 1).
    epsilon
        Central ε of one report in a shuffled batch (> 0).
    delta
        Central δ of one report in a shuffled batch, in (0, 1). Default 1e-6 [P].
    batch_size
        Users n per shuffled batch (1 to :data:`MAX_BATCH`). Default 1000 [P].
    user_delta
        δ at which :attr:`privacy_spent` states the per-user guarantee, in (0, 1). Default 0.1.
    l_x, l_y, gram_weight, reg, shift_scale, width
        As :class:`~agents.linear.ldp_ols.LDPOLS` (defaults 1, 1, 0.1, 1, 16, 0).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step (each its own
        population and shuffler).
    seed
        Seed of the privacy noise (through :func:`~bandit_envs.privacy.streams.noise_generator`).

    Attributes
    ----------
    local_epsilon
        ε0 of each report (local guarantee).
    scale
        Norm B of the L2-ball mechanism's outputs.
    noise_level
        ν, the typical spectral norm of one report's decoded Gram noise.

    Private state
    -------------
    As LDP-OLS: ``rng``, ``seed``, ``_last_obs``, the clip counters and the ledgers are the users'
    side or diagnostics; ``open_batch`` (:class:`Shuffler`) is the shuffler's running sum of the
    open batch's reports (not released until the batch closes); the server object (``server``:
    V and u of the closed batches, the factor and θ) is post-processing of the shuffled batches.

    References
    ----------
    .. [1] S. R. Chowdhury, X. Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022.
    .. [2] E. Garcelon, K. Chaudhuri, V. Perchet, M. Pirotta, "Privacy Amplification via
       Shuffling for Linear Contextual Bandits", ALT 2022.
    .. [3] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones", FOCS 2021.
    """

    name = "Shuffle-LinUCB"
    _open_batch_type = Shuffler
    max_batch_size = MAX_BATCH
    max_batch_size_reason = "the amplification bound sums over the batch"
    privacy_unit = (
        "one user: all the (x_t, y_t) reports carrying its info['user_id'] (without ids, the whole stream), "
        "features of the arm it plays and its reward (local ε0-DP per report; central (ε, δ) per report in a "
        "shuffled batch)"
    )

    def __init__(
        self,
        n_features: int,
        epsilon: float,
        delta: float = 1e-6,
        *,
        batch_size: int = 1000,
        user_delta: float = 0.1,
        l_x: float = 1.0,
        l_y: float = 1.0,
        gram_weight: float = 0.1,
        reg: float = 1.0,
        shift_scale: float = 16.0,
        width: float = 0.0,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(
            n_features,
            l_x=l_x,
            l_y=l_y,
            gram_weight=gram_weight,
            reg=reg,
            shift_scale=shift_scale,
            width=width,
            batch_size=batch_size,
            n_envs=n_envs,
            seed=seed,
        )
        self._check_epsilon_delta(epsilon, delta)
        self.user_delta = check_float("user_delta", user_delta, low=0.0, high=1.0, low_open=True, high_open=True)
        if not 1e-100 <= self.epsilon < 700.0:
            raise ValueError(f"epsilon must be in [1e-100, 700) (e^epsilon must be finite), got {self.epsilon:g}.")
        #: ε0 of each report: the largest whose ``batch_size`` shuffled reports are (ε, δ)-DP, at most
        #: ``MAX_EPSILON`` (a smaller ε0 keeps the bound: an ε0'-LDP report is ε0-LDP for ε0 >= ε0').
        self.local_epsilon = min(local_epsilon_for_shuffle(self.epsilon, self.batch_size, self.delta), MAX_EPSILON)
        self._setup_l2_ball(self.local_epsilon)
        self._reset_state()

    def _reset_state(self) -> None:
        super()._reset_state()
        self._batches = _BatchLedger(self.batch, self.epsilon)
        self._counted_t = 0  # the server's t up to which rounds are counted in _batches

    def _before_count(self, users: Any, n_steps: int) -> None:
        """Count the block's rounds in the shuffle batches they fall in, closing each completed batch.

        ``users``: the step API's list of one id per copy, the fast path's (T,) or (T, B) array
        (already checked), or None.
        """
        self._flush_open_anon()
        ids: npt.NDArray[Any] | list[Any] | None = None
        if isinstance(users, list):
            ids = [users]
        elif users is not None:
            arr = np.asarray(users)
            ids = np.broadcast_to(arr[:, None], (n_steps, self.batch)) if arr.ndim == 1 else arr
        start, pending = 0, self.open_batch.count
        while start < n_steps:
            stop = min(n_steps, start + self.batch_size - pending)
            self._batches.add(None if ids is None else ids[start:stop], stop - start)
            if pending + stop - start == self.batch_size:
                self._batches.close()
                pending = 0
            else:
                pending += stop - start
            start = stop
        self._counted_t = self.server.t + n_steps

    def _anonymous_batch_closed(self) -> None:
        self._flush_open_anon()
        self._batches.close()

    def _flush_open_anon(self) -> None:
        """Add the one-env rounds without a user id counted inline since the last count to the open shuffle batch.

        Every other round goes through :meth:`_before_count`, which flushes first and then marks
        its rounds as counted (``_counted_t``), so these rounds are the server's ``t`` since the mark.
        """
        k = self.server.t - self._counted_t
        if k > 0:
            self._batches.add(None, k)
        self._counted_t = self.server.t

    @property
    def privacy_per_report(self) -> tuple[float, float]:
        """Local guarantee of one report: (ε0, 0)."""
        return self.local_epsilon, 0.0

    @property
    def privacy_central_per_report(self) -> tuple[float, float]:
        """Central guarantee of one report in a shuffled batch of ``batch_size``: (ε, δ)."""
        return self.epsilon, self.delta

    def privacy_per_user_central(self) -> tuple[float, float]:
        """(ε, δ) of the worst user against the server: group privacy per closed batch, composed over batches."""
        reports, factor = self._batches.worst()
        return reports * self.epsilon, min(1.0, self.delta * factor)

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """Per-user (ε, δ) against the server, the better of two bounds.

        The central bound (:meth:`privacy_per_user_central`) when its δ is at most ``user_delta``
        and its ε is below the local one; else the local tight bound at ``user_delta``.
        """
        local = self.privacy_per_user(self.user_delta).tight
        central = self.privacy_per_user_central()
        return central if central[1] <= self.user_delta and central[0] < local[0] else local

    def __repr__(self) -> str:
        return (
            f"ShuffleLinUCB(n_features={self.n_features}, epsilon={self.epsilon}, delta={self.delta}, "
            f"batch_size={self.batch_size}, l_x={self.l_x}, l_y={self.l_y}, gram_weight={self.gram_weight}, "
            f"shift_scale={self.shift_scale}, width={self.width}, n_envs={self.n_envs})"
        )
