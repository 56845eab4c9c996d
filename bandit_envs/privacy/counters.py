"""Continual-release counters: a running sum released after every item, epsilon-DP for the whole stream.

- :class:`BinaryTreeCounter`: the binary mechanism of Chan, Shi & Song [CSS11]_ (section 3.4;
  the tree-based aggregation of Dwork, Naor, Pitassi & Rothblum [DNPR10]_), for a stream of at
  most ``horizon`` items.
- :class:`HybridCounter`: the hybrid mechanism of [CSS11]_ (section 4), for a stream of any
  length: a logarithmic part released at every power of 2 plus a binary counter for the items
  since, each with half of the budget.

Guarantee (both counters): the unit is **one item** of the stream, neighbouring streams differ
in one item, both values in ``bounds`` (items outside are refused); the sequence of *all*
releases is epsilon-DP (delta = 0) for that unit, epsilon per stream. Two streams that share no
item compose in parallel: per-arm counters of a bandit, each fed only its own arm's rewards,
are together epsilon-DP for "one reward changes" (event level). An item that is fed to several
streams costs epsilon per stream (sequential composition).

Why: an item enters the noisy partial sums ("p-sums", nodes of the tree) of at most one node per
level of the tree, i.e. at most :func:`tree_depth` of them, and every p-sum gets
Laplace(depth * sensitivity / epsilon) noise, so the vector of p-sums is epsilon-DP (the
Laplace mechanism with L1 sensitivity depth * sensitivity) and every release is a sum of p-sums
(post-processing). The depth of a tree over ``H`` items is ``floor(log2 H) + 1``
(``H.bit_length()``): the binary digits of the positions 1..H. Public implementations that use
``ceil(log2 H)`` levels add one level too few when H is a power of 2 (the p-sum of all H items
is a level of its own). The hybrid mechanism's binary part counts the items strictly between
two powers of 2, ``2**k + 1 .. 2**(k+1) - 1``, i.e. ``H = 2**k - 1`` items and ``k`` levels; the
item ``2**(k+1)`` goes to the logarithmic part.

Noise: one ``rng.laplace(0, scale)`` draw per item (the p-sum that item closes, or the
logarithmic release at a power of 2), from the ``numpy.random.Generator`` passed as ``rng``.
:meth:`BinaryTreeCounter.noise_scales` / :meth:`HybridCounter.noise_scales` list the scales of
the Laplace terms inside the current release, and :func:`laplace_sum_bound` turns them into a
bound on the release's error that holds with probability 1 - gamma (the confidence width of the
private UCB agents, ``agents/central_dp/ucb.py``).

Sampler: with the default ``sampler="lattice"`` (:mod:`bandit_envs.privacy.lattice`) every noisy
p-sum (and logarithmic increment) is released as ``snap(exact) + snap(noise)`` on the grid
``g = sum_grid(width / epsilon, width)`` (a power of two about ``2**-20`` of the per-item scale), so
every release is a sum of multiples of ``g`` whatever the items; rounding an exact sum moves it by
at most ``g / 2``, so the per-item sensitivity becomes ``width + g`` and every scale above uses
``width + g`` in place of ``width``: epsilon-DP as stated, up to the Laplace sampler's tail event
(probability at most ``e**(epsilon - 36.04) / 2`` per release; :mod:`bandit_envs.privacy.lattice`).
``sampler="float"``: the raw
``exact + noise`` of the float Laplace draws, whose low-order bits depend on the items [M12]_,
**not safe against floating-point attacks**.

References
----------
.. [CSS11] T.-H. H. Chan, E. Shi, D. Song, "Private and continual release of statistics",
   ACM Transactions on Information and System Security 14(3), 2011 (ICALP 2010).
.. [DNPR10] C. Dwork, M. Naor, T. Pitassi, G. N. Rothblum, "Differential privacy under
   continual observation", STOC 2010.
.. [M12] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from bandit_envs.privacy._checks import LAPLACE_SAMPLER_BOUND, POSITIVE_RANGE, check_epsilon, check_rng
from bandit_envs.privacy.lattice import check_sampler, sum_grid
from bandit_envs.validation import check_float, check_int, summarize

__all__ = [
    "BinaryTreeCounter",
    "HybridCounter",
    "hybrid_increment",
    "laplace_sum_bound",
    "tree_depth",
    "tree_increment",
]


def _release(exact: float, noise: float, grid: float) -> float:
    """``exact + noise`` (float sampler, ``grid == 0``), else both rounded to the grid and added (lattice)."""
    if grid > 0.0:
        return float(np.rint(exact / grid) * grid + np.rint(noise / grid) * grid)
    return exact + noise


def tree_depth(n_items: int) -> int:
    """Levels of the binary tree over ``n_items`` items: ``floor(log2 n_items) + 1`` (0 for none).

    The most p-sums (tree nodes) one item can enter, and so the factor of the per-node noise.
    Examples: 1 item: 1 level; 2 or 3: 2; 4 to 7: 3; 8: 4.

    Raises
    ------
    ValueError, TypeError
        If ``n_items`` is not an integer >= 0.
    """
    return check_int("n_items", n_items, minimum=0).bit_length()


def tree_increment(n: int) -> int:
    """The m < n such that a binary tree counter's release after n items is its release after m plus one fresh p-sum.

    The p-sum item n closes covers the items m + 1 .. n, m = n − (the lowest set bit of n), and
    the release after n items is the release after m items plus that p-sum's noisy value (the
    higher set bits of n are those of m, whose p-sums are unchanged since) [CSS11]_ section 3.4:
    release(n) − release(m) = Σ_{j=m+1}^{n} x_j + Laplace(:attr:`BinaryTreeCounter.scale`), the
    draw of item n, independent of every other release's. release(0) = 0.

    Raises
    ------
    ValueError, TypeError
        If ``n`` is not an integer >= 1.
    """
    n = check_int("n", n, minimum=1)
    return n - (n & -n)


def hybrid_increment(n: int, epsilon: float, width: float = 1.0) -> tuple[int, float]:
    """(m, b): a hybrid counter's release after n items is its release after m items + Σ x_{m+1..n} + Laplace(b).

    The Laplace draw is item n's, independent of every other release's [CSS11]_ section 4: at
    n = 2^k the logarithmic release β_k = β_{k−1} + (the items 2^{k−1} + 1 .. 2^k) + Laplace(2w/ε),
    so m = n/2 (m = 0 for n = 1); otherwise item n closes the binary part's p-sum over the items
    m + 1 .. n, m = n − (the lowest set bit of n − 2^k), k = ⌊log₂ n⌋, with Laplace(2kw/ε).

    Raises
    ------
    ValueError, TypeError
        If ``n`` is not an integer >= 1 or ``epsilon``, ``width`` are not numbers > 0.
    """
    n = check_int("n", n, minimum=1)
    eps = check_epsilon("epsilon", epsilon)
    w = check_float("width", width, low=0.0, low_open=True)
    if n & (n - 1) == 0:
        return n // 2, 2.0 * w / eps
    k = n.bit_length() - 1
    position = n - (1 << k)
    return n - (position & -position), 2.0 * k * w / eps


def laplace_sum_bound(scales: Sequence[float], gamma: float) -> float:
    r"""A number B with P(|Y| > B) <= gamma for Y a sum of independent Laplace(b_k), b_k = ``scales``.

    B = ν·sqrt(8 ln(2/γ)) with ν = max(sqrt(Σ b_k²), b_M·sqrt(ln(2/γ))), b_M = max b_k: the
    concentration bound for sums of Laplace variables of [CSS11]_ (Lemma 2.8 and its corollary;
    we re-derived it, so it does not rest on our reading of the paper). For 0 < h < 1/(√2 b_M),
    E e^{h Lap(b)} = 1/(1 − h²b²) <= e^{2h²b²} (1/(1 − x) <= e^{2x} on [0, 1/2]), so by
    Chernoff P(Y > λ) <= exp(−hλ + 2h²ν²); h = λ/(4ν²) is allowed when
    λ <= 2√2 ν²/b_M and gives exp(−λ²/(8ν²)). With λ = ν·sqrt(8 ln(2/γ)) that condition is
    ν >= b_M sqrt(ln(2/γ)), and the two tails give γ. An empty sum has bound 0.

    Parameters
    ----------
    scales
        The Laplace scales b_k > 0 of the terms: a sequence (list, tuple, 1-D array, any iterable
        but a string or bytes).
    gamma
        Failure probability in (0, 1).

    Raises
    ------
    TypeError
        If ``scales`` is not a sequence (a number, a string, bytes, an array of other than one
        dimension) or a scale is not a real number.
    ValueError
        If a scale is not a finite number > 0, ``gamma`` is not in (0, 1), or the bound is beyond
        the largest float.
    """
    g = check_float("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
    if isinstance(scales, np.ndarray):
        sequence = scales.ndim == 1
    else:  # a str or bytes would be read character by character (b"3" as the scale 51)
        sequence = isinstance(scales, Iterable) and not isinstance(scales, str | bytes | bytearray | memoryview)
    if not sequence:
        raise TypeError(
            f"scales must be a sequence of Laplace scales > 0, got {summarize(scales)} ({type(scales).__name__})."
        )
    values = [check_float(f"scales[{i}]", b, low=0.0, low_open=True) for i, b in enumerate(scales)]
    if not values:
        return 0.0
    ratio = 2.0 / g
    log_term = math.log(ratio) if math.isfinite(ratio) else math.log(2.0) - math.log(g)  # 2 / g overflows: g subnormal
    top = max(values)
    squares = math.fsum(b * b for b in values)
    if math.isfinite(squares) and min(values) ** 2 >= sys.float_info.min:
        root = math.sqrt(squares)
    else:  # a square over- or underflows: scale by the largest (exact up to rounding)
        root = top * math.sqrt(math.fsum((b / top) ** 2 for b in values))
    bound = max(root, top * math.sqrt(log_term)) * math.sqrt(8.0 * log_term)
    if not math.isfinite(bound):
        raise ValueError(
            f"scales must give a bound below the largest float ({sys.float_info.max:g}) at gamma={gamma!r}, "
            f"got {len(values)} scales up to {top:g}."
        )
    return bound


def _check_bounds(bounds: Any) -> tuple[float, float]:
    """``bounds`` as floats ``(lower, upper)``, ``lower < upper``, the width in :data:`POSITIVE_RANGE`.

    The width is the sensitivity of one item, so it gets the range of an explicit sensitivity:
    beyond it the noise scale and the default grid over- or underflow.
    """
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise TypeError(f"bounds must be a pair (lower, upper), got {summarize(bounds)}.")
    lo = check_float("bounds[0]", bounds[0])
    hi = check_float("bounds[1]", bounds[1])
    if not lo < hi or not math.isfinite(hi - lo):
        raise ValueError(
            f"bounds must be (lower, upper) with lower < upper and a finite width, got {summarize(bounds)}."
        )
    low, high = POSITIVE_RANGE
    if not low <= hi - lo <= high:
        raise ValueError(
            f"bounds must have a width upper - lower in [{low:g}, {high:g}] (it is the sensitivity of one item; "
            f"beyond, the noise scale over- or underflows), got {summarize(bounds)}."
        )
    return lo, hi


def _check_grid(grid: Any, horizon: int, depth: int, bounds: tuple[float, float], epsilon: float) -> float:
    """An explicit lattice grid of :class:`BinaryTreeCounter`, checked against what it must hold.

    Refused: a grid that is not a number or not a power of two, below the smallest normal float
    (a subnormal grid), so coarse that the noise scale ``depth * (width + grid) / epsilon`` overflows, or so fine that
    the largest p-sum (``2**(depth - 1)`` items of magnitude up to ``max(|lower|, |upper|)``) or
    Laplace draw (``LAPLACE_SAMPLER_BOUND`` scales) over the grid overflows, which would make the
    releases inf or NaN.
    """
    g = check_float("grid", grid, low=0.0, low_open=True)
    if math.isfinite(g) and math.frexp(g)[0] != 0.5:  # the lattice's rounding is exact on powers of two only
        raise ValueError(
            f"grid must be a power of two (the lattice sampler's rounding is exact only then, "
            f"bandit_envs/privacy/lattice.py), got {grid!r}."
        )
    if g < sys.float_info.min:
        raise ValueError(
            f"grid must be at least the smallest normal float {sys.float_info.min:g} (values / grid "
            f"overflow on a subnormal grid), got {grid!r}."
        )
    width = bounds[1] - bounds[0]
    scale = depth * (width + g) / epsilon
    if not math.isfinite(scale):
        raise ValueError(
            f"grid must be small enough that the noise scale depth * (width + grid) / epsilon = "
            f"{depth} * ({width:g} + grid) / {epsilon:g} stays finite, got {grid!r}."
        )
    magnitude = max(abs(bounds[0]), abs(bounds[1]))
    log_sum = math.log2(magnitude) + depth - 1 if magnitude > 0.0 else -math.inf
    log_top = max(log_sum, math.log2(LAPLACE_SAMPLER_BOUND * scale))
    if log_top - math.log2(g) >= 1023.0:  # values / grid would come within a factor 2 of overflowing
        e = log_top - 1023.0
        least = f"{2.0**e:g}" if e < 1023.0 else f"2**{e:.0f}"
        raise ValueError(
            f"grid must be at least {least} for horizon={horizon} and bounds={bounds} (a p-sum or noise draw of "
            f"up to 2**{log_top:.0f} over the grid must stay a finite float), got {grid!r}."
        )
    return g


def _check_item(x: Any, bounds: tuple[float, float]) -> float:
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        raise TypeError(f"x must be a real number, got {summarize(x)} ({type(x).__name__}).")
    v = float(x)
    if not bounds[0] <= v <= bounds[1]:
        raise ValueError(
            f"x must be a finite number in [{bounds[0]:g}, {bounds[1]:g}] (the counter's sensitivity assumes it), "
            f"got {x!r}."
        )
    return v


class BinaryTreeCounter:
    """The binary mechanism: running sums of at most ``horizon`` items, epsilon-DP for the stream.

    Chan, Shi & Song [CSS11]_ section 3.4. Item t (1-based) closes the p-sum α_i of the tree
    node ending at t, i = the lowest set bit of t: α_i = Σ_{j<i} α_j + x_t, the lower p-sums
    are cleared, and α̂_i = α_i + Laplace(depth·w/ε) is drawn, with depth = :func:`tree_depth`
    (``horizon``) and w the width of ``bounds``. The release after t items is the sum of the
    α̂_j over the set bits j of t, i.e. popcount(t) Laplace terms.

    Guarantee: epsilon-DP (delta = 0) for the sequence of all releases, unit one item (both
    values in ``bounds``); see the module docstring. Noise: one ``rng.laplace`` draw per item.

    Parameters
    ----------
    horizon
        Most items the counter takes (>= 1); it refuses more.
    epsilon
        Privacy parameter of the stream, > 0.
    rng
        Source of the noise.
    bounds
        (lower, upper): the values an item may take. Default (0, 1).
    sampler
        ``"lattice"`` (default: releases on the grid ``g``, safe against floating-point attacks)
        or ``"float"`` (raw noise, not safe against them); see the module docstring.
    grid
        The lattice grid ``g``; ``None`` (default): ``sum_grid(width / epsilon, width)``. Ignored by
        the float sampler. :class:`HybridCounter` passes its own. Refused: a grid that is not a power
        of two, below the smallest normal float, one at which the noise scale overflows, and one so
        fine that a p-sum or a noise draw over the grid would overflow (the releases would be inf or
        NaN).

    Attributes
    ----------
    depth
        Levels of the tree, ``floor(log2 horizon) + 1``.
    scale
        The Laplace scale of every p-sum, ``depth * (width + g) / epsilon`` (``g = 0`` for the
        float sampler), ``width = upper - lower``.
    count
        Items taken so far.
    value
        The last release (0.0 before any item).
    n_draws
        Laplace draws so far (one per item).
    """

    def __init__(
        self,
        horizon: int,
        epsilon: float,
        rng: np.random.Generator,
        bounds: tuple[float, float] = (0.0, 1.0),
        *,
        sampler: str = "lattice",
        grid: float | None = None,
    ) -> None:
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.rng = check_rng(rng)
        self.bounds = _check_bounds(bounds)
        self.sampler = check_sampler(sampler)
        self.depth = tree_depth(self.horizon)
        width = self.bounds[1] - self.bounds[0]
        if self.sampler == "float":
            self.grid = 0.0
        elif grid is None:
            self.grid = sum_grid(width / self.epsilon, width)
        else:
            self.grid = _check_grid(grid, self.horizon, self.depth, self.bounds, self.epsilon)
        self.scale = self.depth * (width + self.grid) / self.epsilon
        if not math.isfinite(self.scale):
            raise ValueError(f"epsilon must give a finite noise scale depth * width / epsilon, got {epsilon!r}.")
        self.count = 0
        self.value = 0.0
        self.n_draws = 0
        self._exact = [0.0] * self.depth  # α_j
        self._noisy = [0.0] * self.depth  # α̂_j

    def add(self, x: float) -> float:
        """Take the next item and return the new release (the noisy running sum).

        Raises
        ------
        ValueError
            If ``x`` is outside ``bounds`` or the counter already took ``horizon`` items.
        TypeError
            If ``x`` is not a real number.
        """
        v = _check_item(x, self.bounds)
        if self.count >= self.horizon:
            raise ValueError(f"the counter takes at most horizon={self.horizon} items, got one more.")
        self.count += 1
        i = (self.count & -self.count).bit_length() - 1  # lowest set bit of t
        # Sums added left to right, as the compiled kernels add them (builtin sum() rounds otherwise
        # from Python 3.12 on, which compensates the rounding of floats).
        exact = 0.0
        for j in range(i):
            exact += self._exact[j]
            self._exact[j] = 0.0
            self._noisy[j] = 0.0
        self._exact[i] = exact + v
        self._noisy[i] = _release(self._exact[i], float(self.rng.laplace(0.0, self.scale)), self.grid)
        self.n_draws += 1
        value = 0.0
        for j in range(self.depth):
            if self.count >> j & 1:
                value += self._noisy[j]
        self.value = value
        return self.value

    def noise_scales(self) -> list[float]:
        """The Laplace scales of the terms inside :attr:`value`: ``popcount(count)`` times :attr:`scale`."""
        return [self.scale] * self.count.bit_count()

    def __repr__(self) -> str:
        return f"BinaryTreeCounter(horizon={self.horizon}, epsilon={self.epsilon}, count={self.count})"


class HybridCounter:
    """The hybrid mechanism: running sums of a stream of any length, epsilon-DP for the stream.

    Chan, Shi & Song [CSS11]_ section 4, with ε/2 for each part:

    * logarithmic part: at item n = 2^k, β_k = β_{k−1} + (the items since 2^{k−1}) +
      Laplace(2w/ε) is released (β_0 = x_1 + Laplace(2w/ε)); each item enters one increment;
    * binary part: the items 2^k + 1 .. 2^{k+1} − 1 go to a fresh :class:`BinaryTreeCounter`
      with horizon 2^k − 1 (k levels) and budget ε/2, i.e. p-sums with Laplace(2kw/ε);

    (w the width of ``bounds``). The release after n items is β_k for n = 2^k, else β_k plus the
    binary counter's release for the n − 2^k items since, with k = floor(log2 n): k + 1 terms of
    scale 2w/ε and popcount(n − 2^k) of scale 2kw/ε (:meth:`noise_scales`).

    Guarantee: epsilon-DP (delta = 0) for the sequence of all releases, unit one item (both
    values in ``bounds``): each part is ε/2-DP and every item enters both (sequential
    composition). Noise: one ``rng.laplace`` draw per item (the logarithmic release at a power
    of 2, else the binary p-sum the item closes).

    Parameters
    ----------
    epsilon, rng, bounds, sampler
        As :class:`BinaryTreeCounter`'s (the counter has no horizon); both parts use the grid
        ``g = sum_grid(width / epsilon, width)`` and the widened ``w = width + g``.

    Attributes
    ----------
    count, value, n_draws
        Items taken, the last release (0.0 before any item), Laplace draws so far.
    log_scale
        Laplace scale of the logarithmic releases, ``2 * (width + g) / epsilon``.
    grid
        The lattice grid ``g`` (0.0 for the float sampler).
    """

    def __init__(
        self,
        epsilon: float,
        rng: np.random.Generator,
        bounds: tuple[float, float] = (0.0, 1.0),
        *,
        sampler: str = "lattice",
    ) -> None:
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.rng = check_rng(rng)
        self.bounds = _check_bounds(bounds)
        self.sampler = check_sampler(sampler)
        width = self.bounds[1] - self.bounds[0]
        self.grid = 0.0 if self.sampler == "float" else sum_grid(width / self.epsilon, width)
        self.log_scale = 2.0 * (width + self.grid) / self.epsilon
        if not math.isfinite(self.log_scale):
            raise ValueError(f"epsilon must give a finite noise scale 2 * width / epsilon, got {epsilon!r}.")
        self.count = 0
        self.value = 0.0
        self.n_draws = 0
        self._beta = 0.0
        self._pending = 0.0  # items since the last power of 2 (exact)
        self._n_log_terms = 0
        self._binary: BinaryTreeCounter | None = None

    def add(self, x: float) -> float:
        """Take the next item and return the new release (the noisy running sum).

        Raises
        ------
        ValueError, TypeError
            If ``x`` is not a real number in ``bounds``.
        """
        v = _check_item(x, self.bounds)
        self.count += 1
        n = self.count
        if n & (n - 1) == 0:  # a power of 2: the logarithmic release
            self._beta += _release(self._pending + v, float(self.rng.laplace(0.0, self.log_scale)), self.grid)
            self._pending = 0.0
            self._n_log_terms += 1
            self._binary = None
            self.value = self._beta
        else:
            if self._binary is None:  # the first item after 2^k: a counter over the 2^k - 1 items up to 2^(k+1)
                top = 1 << (n.bit_length() - 1)
                self._binary = BinaryTreeCounter(
                    top - 1, self.epsilon / 2.0, self.rng, self.bounds, sampler=self.sampler, grid=self.grid or None
                )
            self._pending += v
            self.value = self._beta + self._binary.add(v)
        self.n_draws += 1
        return self.value

    def noise_scales(self) -> list[float]:
        """The Laplace scales of the terms inside :attr:`value` (logarithmic terms first)."""
        scales = [self.log_scale] * self._n_log_terms
        if self._binary is not None:
            scales += self._binary.noise_scales()
        return scales

    def __repr__(self) -> str:
        return f"HybridCounter(epsilon={self.epsilon}, count={self.count})"
