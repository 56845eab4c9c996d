r"""Central-DP Thompson sampling: DPThompsonSampling (per-epoch Laplace releases).

It uses per-copy noise streams (:mod:`agents.central_dp.base`) for their privacy noise and per-copy
sampling streams (:mod:`agents.common.sampling`) for their posterior samples: copy i of a batch seeded
with s makes exactly the draws of a single agent seeded with s + i. Rewards must lie in [0, 1].

Hu & Hegde's DP-TS and Lazy-DP-TS ("Near-optimal Thompson sampling-based algorithms for
differentially private stochastic bandits", UAI 2022) are not implemented: only their abstract
and a third-party summary could be read, not the algorithm itself.
"""

from __future__ import annotations

from numba import types

from agents.base import FLOATS_2D, INTS_1D, INTS_2D, WORDS_2D, SingleEnvKernel
from agents.central_dp import kernels
from agents.central_dp.ucb import EpochAgent
from agents.common import sampling
from bandit_envs._types import IntArray

__all__ = ["DPThompsonSampling"]

#: The choice, through its compiled entry point (loaded by the first agent's streams).
_GAUSSIAN_TS_CHOOSE = SingleEnvKernel(
    kernels.gaussian_ts_choose, (INTS_2D, INTS_2D, FLOATS_2D, types.float64, WORDS_2D, INTS_1D)
)


class DPThompsonSampling(EpochAgent):
    r"""Thompson sampling on per-epoch Laplace releases (central ε-DP) [P].

    Each arm's rewards fill epochs of 1, 1, 2, 4, ... rewards (the epochs of
    :class:`agents.AdaPUCB`); at the end of an epoch of L rewards the arm's mean is released as
    μ̃_a = (epoch mean) + Laplace(1/(εL)) and n_a = L. Every round, arms without a release are
    played first (lowest index); then, per arm, θ_a ~ N(μ̃_a, 1/(4n_a) + 2/(εn_a)²) (the
    variance bound 1/4 of a [0, 1] reward plus the Laplace noise's variance 2/(εn_a)²), and the
    argmax is played. This is the library's own form, without a claimed regret bound; Hu &
    Hegde's DP-TS / Lazy-DP-TS (UAI 2022) were not implemented (their algorithm could not be
    checked).

    Privacy: ε-DP at the event level (neighbouring reward sequences differ in one round's
    reward): each reward enters one release (sensitivity 1/L, Laplace(1/(εL)) noise), releases
    of one arm use disjoint epochs and arms disjoint rewards (parallel composition), epoch
    boundaries depend only on pull counts, and the Gaussian samples are post-processing of the
    releases.

    Noise: one Laplace draw per closed epoch from the copy's noise stream; the K normal draws
    per round (once every arm has a release) come from the copy's sampling stream
    (:func:`agents.common.sampling.normal`, a ziggurat). Sampler: the released means use the lattice
    sampler by default (the epoch's sum released as ``snap(sum) + snap(Laplace((1 + grid)/ε))``
    on the grid ``sum_grid(1/ε, 1)``, divided by L; ε-DP up to the sampler's tail δ_s of
    ``privacy_spent``), or raw float noise with ``sampler="float"`` (not safe against
    floating-point attacks).

    Parameters
    ----------
    n_arms, epsilon, n_envs, seed, sampler
        As :class:`~agents.central_dp.ucb.AdaPUCB`: K >= 2 arms, the privacy budget ε, the copies run
        in lock-step, copy 0's noise seed (copy i: seed + i) and ``"lattice"`` or ``"float"`` releases.
    """

    name = "DP-TS"
    copy_axis_last = ("_sampling",)  # the (4, B) sampling-stream states

    def _seed_streams(self) -> None:
        super()._seed_streams()
        self._sampling = sampling.new_streams(self._copy_seeds)
        _GAUSSIAN_TS_CHOOSE.load()

    def _choose(self, out: IntArray) -> None:
        _GAUSSIAN_TS_CHOOSE.call(self._counts, self._n_mean, self._mean, self.epsilon, self._sampling, out)
