"""Reward distributions on [0, 1], sampled by inverse CDF from uniforms.

Every reward is a deterministic function of one uniform draw, so a block of rows drawn at once
equals the same rows drawn one at a time, and any code that holds the uniforms (the step-wise
env, the batched simulators of ``agents``) reproduces the same rewards bit for bit. This is what
makes common random numbers and the "same reward table" equality tests exact.

The gap paper (§5) draws rewards from a normal with mean ``mu`` and variance 0.01 truncated to
[0, 1]. The expected reward of that distribution is *not* ``mu`` (e.g. ``mu = 0.9`` gives
0.8712): :attr:`RewardModel.expected` holds the true means, and environments report regret
with them.

A wide normal truncated to [0, 1] is flat there: from a standard deviation of
:data:`FLAT_SCALE` on its density varies across [0, 1] by less than 1/(2σ²) = 5·10⁻¹¹ of
itself, so its rewards are the uniforms themselves (code :data:`FLAT`), each within about
10⁻¹¹ of the exact law's quantile; :attr:`RewardModel.expected` stays the exact law's mean
(within 5·10⁻¹² of the uniform's 0.5 there). The inversion would not do there: Φ(a) and Φ(b)
both round to about 0.5, and their difference (about 0.4/σ) spans ever fewer doubles (a
handful at σ = 10¹⁵, every reward 0.9 or 0.8 from σ = 10¹⁷ on); below :data:`FLAT_SCALE` it
keeps every reward within about 3·10⁻¹⁶·σ (3·10⁻¹¹) of the exact quantile.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special

from bandit_envs._jit import njit, read_only_view
from bandit_envs.validation import check_choice, check_float, check_unit_array

RewardKind = Literal["truncnorm", "bernoulli"]
KIND_CODES: dict[str, int] = {"truncnorm": 0, "bernoulli": 1}
#: The code of a truncated normal whose ``scale`` is at least :data:`FLAT_SCALE`: rewards are the
#: uniforms themselves (:meth:`RewardModel.code`).
FLAT = 2
#: The standard deviation from which a normal truncated to [0, 1] is sampled as uniform on [0, 1]
#: (see the module docstring): around it both errors, the uniform's against the exact law and the
#: inversion's rounding, are a few 10⁻¹¹ at most.
FLAT_SCALE = 1e5


#: AS241's coefficients (Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3), 477-484,
#: PPND16), highest power first: numerator and denominator of each region's rational function.
CENTRAL_NUM = (
    2.5090809287301226727e3, 3.3430575583588128105e4, 6.7265770927008700853e4, 4.5921953931549871457e4,
    1.3731693765509461125e4, 1.9715909503065514427e3, 1.3314166789178437745e2, 3.3871328727963666080e0,
)  # fmt: skip
CENTRAL_DEN = (
    5.2264952788528545610e3, 2.8729085735721942674e4, 3.9307895800092710610e4, 2.1213794301586595867e4,
    5.3941960214247511077e3, 6.8718700749205790830e2, 4.2313330701600911252e1, 1.0,
)  # fmt: skip
NEAR_NUM = (
    7.74545014278341407640e-4, 2.27238449892691845833e-2, 2.41780725177450611770e-1, 1.27045825245236838258e0,
    3.64784832476320460504e0, 5.76949722146069140550e0, 4.63033784615654529590e0, 1.42343711074968357734e0,
)  # fmt: skip
NEAR_DEN = (
    1.05075007164441684324e-9, 5.47593808499534494600e-4, 1.51986665636164571966e-2, 1.48103976427480074590e-1,
    6.89767334985100004550e-1, 1.67638483018380384940e0, 2.05319162663775882187e0, 1.0,
)  # fmt: skip
FAR_NUM = (
    2.01033439929228813265e-7, 2.71155556874348757815e-5, 1.24266094738807843860e-3, 2.65321895265761230930e-2,
    2.96560571828504891230e-1, 1.78482653991729133580e0, 5.46378491116411436990e0, 6.65790464350110377720e0,
)  # fmt: skip
FAR_DEN = (
    2.04426310338993978564e-15, 1.42151175831644588870e-7, 1.84631831751005468180e-5, 7.86869131145613259100e-4,
    1.48753612908506148525e-2, 1.36929880922735805310e-1, 5.99832206555887937690e-1, 1.0,
)  # fmt: skip


def horner(coefficients: tuple[float, ...], x: float) -> float:
    """The polynomial with ``coefficients`` (highest power first) at ``x``: ``(c0·x + c1)·x + c2 …``, Horner's rule.

    The plain-Python reference of :func:`horner_pair`, which writes the rule out for eight
    coefficients (the same operations in the same order, so the same floats): a compiled loop
    over the coefficients, inlined six times, cost about a tenth of a second of every first
    run's compilation, and compiled apart it made the batched quantile about 10% slower.
    """
    value = coefficients[0]
    for c in coefficients[1:]:
        value = value * x + c
    return value


@njit(inline="always")
def horner_pair(a: tuple[float, ...], b: tuple[float, ...], x: float) -> tuple[float, float]:  # pragma: no cover
    """``(horner(a, x), horner(b, x))`` for eight coefficients each (a rational function's two polynomials)."""
    num = ((((((a[0] * x + a[1]) * x + a[2]) * x + a[3]) * x + a[4]) * x + a[5]) * x + a[6]) * x + a[7]
    den = ((((((b[0] * x + b[1]) * x + b[2]) * x + b[3]) * x + b[4]) * x + b[5]) * x + b[6]) * x + b[7]
    return num, den


@njit(inline="always")
def ndtri_central(q: float) -> float:  # pragma: no cover - compiled
    """AS241's central region, ``|q| <= 0.425`` with ``q = p - 0.5``: polynomials in ``0.180625 - q²``.

    No branch, so a loop of it over an array compiles to vector instructions; every operation is
    the one :func:`ndtri` performs, in the same order, so the result is the same to the bit.
    Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3), 477-484 (PPND16).
    """
    num, den = horner_pair(CENTRAL_NUM, CENTRAL_DEN, 0.180625 - q * q)
    return num * q / den


@njit(inline="always")
def ndtri_tail_near(r: float) -> float:  # pragma: no cover - compiled
    """AS241's tails for ``r = sqrt(-log(min(p, 1 - p))) <= 5``: ``|ndtri(p)|``, polynomials in ``r - 1.6``.

    No branch (see :func:`ndtri_central`). Wichura, M. J. (1988), Algorithm AS 241, Applied
    Statistics 37(3), 477-484 (PPND16).
    """
    num, den = horner_pair(NEAR_NUM, NEAR_DEN, r - 1.6)
    return num / den


@njit(inline="always")
def ndtri_tail_far(r: float) -> float:  # pragma: no cover - compiled
    """AS241's tails for ``r > 5`` (``min(p, 1 - p) < exp(-25)``): polynomials in ``r - 5``.

    Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3), 477-484 (PPND16).
    """
    num, den = horner_pair(FAR_NUM, FAR_DEN, r - 5.0)
    return num / den


@njit(inline="always")
def ndtri_tail(p: float, q: float) -> float:  # pragma: no cover - compiled
    """AS241's tails, ``|q| > 0.425`` with ``q = p - 0.5``: functions of ``r = sqrt(-log(min(p, 1 - p)))``.

    Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3), 477-484 (PPND16).
    """
    r = p if q <= 0.0 else 1.0 - p
    if r <= 0.0:
        return -np.inf if q < 0.0 else np.inf
    r = np.sqrt(-np.log(r))
    x = ndtri_tail_near(r) if r <= 5.0 else ndtri_tail_far(r)
    return -x if q < 0.0 else x


@njit(inline="always")
def ndtri(p: float) -> float:  # pragma: no cover - compiled
    """Standard normal quantile, Wichura's AS241 (PPND16), relative accuracy about 1e-16.

    Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3), 477-484.
    """
    q = p - 0.5
    if abs(q) <= 0.425:
        return ndtri_central(q)
    return ndtri_tail(p, q)


@njit(inline="always")
def bernoulli_from_uniform(u: float, loc: float) -> float:  # pragma: no cover - compiled
    """A Bernoulli(``loc``) reward from one uniform: 1 if ``u < loc`` (inverse CDF)."""
    return 1.0 if u < loc else 0.0


@njit(inline="always")
def truncnorm_quantile_argument(u: float, cdf_lo: float, cdf_width: float) -> float:  # pragma: no cover - compiled
    """Where ``u`` falls in the normal CDF's range over [0, 1]: ``Φ(a) + u·(Φ(b) − Φ(a))``."""
    return cdf_lo + u * cdf_width


@njit(inline="always")
def truncnorm_from_normal(z: float, loc: float, scale: float) -> float:  # pragma: no cover - compiled
    """The reward of normal quantile ``z``: ``loc + scale·z``, clipped to [0, 1] against rounding."""
    x = loc + scale * z
    return min(1.0, max(0.0, x))


@njit(inline="always")
def reward_from_uniform(
    u: float, kind: int, loc: float, scale: float, cdf_lo: float, cdf_width: float
) -> float:  # pragma: no cover - compiled
    """Map one uniform draw to one reward (kind 0: truncated normal, 1: Bernoulli, :data:`FLAT`: the uniform).

    Both by inversion of the CDF (Devroye, L. (1986), Non-Uniform Random Variate Generation,
    Springer, §II.2): the truncated normal is ``loc + scale·Φ⁻¹(Φ(a) + u·(Φ(b) − Φ(a)))`` with
    ``a = −loc/scale``, ``b = (1 − loc)/scale``, Φ⁻¹ by :func:`ndtri`; from
    :data:`FLAT_SCALE` on (code :data:`FLAT`) it is ``u`` itself.
    """
    if kind == 1:
        return bernoulli_from_uniform(u, loc)
    if kind == FLAT:
        return u
    return truncnorm_from_normal(ndtri(truncnorm_quantile_argument(u, cdf_lo, cdf_width)), loc, scale)


@njit(error_model="numpy")
def ndtri_many(p: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Write ``out[j] = ndtri(p[j])`` for every j, in passes that suit a batch (reference: :func:`ndtri`).

    :func:`ndtri` branches on each argument; here the branches become passes over arrays, each
    without branches where most of the work is, so that the compiler vectorises them:
    :func:`ndtri_central` of every entry; then, for the tail entries only (``|p - 0.5| > 0.425``,
    gathered first), ``r = sqrt(-log(min(p, 1 - p)))`` (scalar: ``log`` is the C library's) and
    :func:`ndtri_tail_near` of every ``r``; last, per tail entry, the branches of
    :func:`ndtri_tail` pick that value, :func:`ndtri_tail_far` or an infinity, and the sign.
    Each entry goes through exactly the operations of :func:`ndtri`, in the same order, so the
    results are the same to the bit (IEEE 754 arithmetic without fast-math; ``error_model="numpy"``
    only drops numba's zero-division check, which the values that are kept never need).
    """
    n = p.shape[0]
    for j in range(n):
        out[j] = ndtri_central(p[j] - 0.5)
    tails = np.empty(n, dtype=np.int64)
    t = 0
    for j in range(n):
        tails[t] = j
        t += not abs(p[j] - 0.5) <= 0.425
    r = np.empty(t)
    for s in range(t):
        pj = p[tails[s]]
        m = pj if pj - 0.5 <= 0.0 else 1.0 - pj
        r[s] = 0.0 if m <= 0.0 else np.sqrt(-np.log(m))
    near = np.empty(t)
    for s in range(t):
        near[s] = ndtri_tail_near(r[s])
    for s in range(t):
        j = tails[s]
        q = p[j] - 0.5
        m = p[j] if q <= 0.0 else 1.0 - p[j]
        if m <= 0.0:
            out[j] = -np.inf if q < 0.0 else np.inf
        else:
            x = near[s] if r[s] <= 5.0 else ndtri_tail_far(r[s])
            out[j] = -x if q < 0.0 else x


@njit(error_model="numpy")
def rewards_of_entries(
    u: np.ndarray,
    arms: np.ndarray,
    n: int,
    law: tuple[int, np.ndarray, float, np.ndarray, np.ndarray] | None,
    scratch: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Replace ``u[e]`` by arm ``arms[e]``'s reward from that uniform, for e < n, in passes.

    ``law`` is :meth:`RewardModel.params` ``(kind, loc, scale, cdf_lo, cdf_width)``, or None
    where the entries are rewards already (nothing to do; numba drops the rest when it compiles
    for None). The same value as :func:`reward_from_uniform` to the bit: Bernoulli entries by one
    comparison each; flat ones (:data:`FLAT`) are their uniforms; truncated-normal entries through
    :func:`ndtri_many` (the quantile argument of every entry into ``scratch`` (length >= n), then
    the normal quantiles, then the rewards), which a batch of uniforms costs about a third of
    calling :func:`ndtri` entry by entry.
    """
    if law is None:
        return
    kind, loc, scale, cdf_lo, cdf_width = law
    if kind == 1:
        for e in range(n):
            u[e] = bernoulli_from_uniform(u[e], loc[arms[e]])
        return
    if kind == FLAT:
        return
    for e in range(n):
        k = arms[e]
        scratch[e] = truncnorm_quantile_argument(u[e], cdf_lo[k], cdf_width[k])
    ndtri_many(scratch[:n], u[:n])
    for e in range(n):
        u[e] = truncnorm_from_normal(u[e], loc[arms[e]], scale)


@njit
def rewards_from_uniforms(
    u: np.ndarray,
    kind: int,
    loc: np.ndarray,
    scale: float,
    cdf_lo: np.ndarray,
    cdf_width: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled
    """Map an (n, K) block of uniforms to an (n, K) block of rewards, column k with arm k's law."""
    n, k_arms = u.shape
    out = np.empty((n, k_arms))
    for i in range(n):
        for k in range(k_arms):
            out[i, k] = reward_from_uniform(u[i, k], kind, loc[k], scale, cdf_lo[k], cdf_width[k])
    return out


@functools.lru_cache(maxsize=256)
def _truncnorm_means(loc: bytes, scale: float) -> tuple[float, ...]:
    """Means of normals (locations ``loc``, float64 bytes, in [0, 1]) truncated to [0, 1].

    The truncated normal's mean (Johnson, Kotz and Balakrishnan, Continuous Univariate
    Distributions, vol. 1, 2nd ed., Wiley 1994, chapter 13) is
    ``μ + σ·(φ(a) − φ(b))/(Φ(b) − Φ(a))`` with ``a = −μ/σ``, ``b = (1 − μ)/σ``. Here
    ``a <= 0 <= b``, so both differences are written without cancellation:
    ``Φ(b) − Φ(a) = (erf(b/√2) + erf(−a/√2))/2``, a sum of two terms of one sign, and
    ``φ(a) − φ(b)`` as the larger density times ``expm1`` of half the difference of the squares
    (``b² − a² = (b − a)(b + a)``), with the sign that keeps ``expm1``'s argument <= 0. Within 2
    units in the last place of the exact mean for every σ checked (10⁻⁴ to 10⁶, against 50-digit
    arithmetic); scipy.stats' ``truncnorm`` agrees with it to 4 units for σ <= 1 and loses digits
    for wider normals (2·10⁻³ relative at σ = 10⁶). Written out rather than taken from
    scipy.stats, whose import takes a large part of a second. Cached: experiments build the same
    arms for thousands of runs.
    """
    mu = np.frombuffer(loc, dtype=np.float64)
    if scale >= 1e8:  # flat on [0, 1]: the mean is 0.5 - (1 - 2μ)/(24σ²) + ..., 0.5 in float64
        return (0.5,) * mu.size
    root = math.sqrt(2.0 * math.pi)
    # For a tiny σ the squares (or a and b themselves) overflow: exp then gives 0 and expm1 -1,
    # the right limits, and where a and b are both infinite the mean is its limit μ.
    with np.errstate(over="ignore", invalid="ignore"):
        a, b = (0.0 - mu) / scale, (1.0 - mu) / scale
        mass = 0.5 * (special.erf(b / math.sqrt(2.0)) + special.erf(-a / math.sqrt(2.0)))
        squares = (b - a) * (b + a)  # b² − a²
        lead = np.abs(a) <= np.abs(b)  # φ(a) >= φ(b): factor out φ(a), else φ(b)
        densities = np.empty_like(mu)
        densities[lead] = np.exp(-0.5 * a[lead] ** 2) / root * -np.expm1(-0.5 * squares[lead])
        densities[~lead] = np.exp(-0.5 * b[~lead] ** 2) / root * np.expm1(0.5 * squares[~lead])
        means = mu + scale * densities / mass
    return tuple(np.where(np.isfinite(means), means, mu).tolist())


@dataclass(frozen=True)
class RewardModel:
    """Per-arm reward laws on [0, 1].

    Parameters
    ----------
    kind
        ``"truncnorm"``: normal with location ``loc[k]`` and standard deviation ``scale``
        truncated to [0, 1] (gap paper §5, ``scale = 0.1``), uniform on [0, 1] from
        :data:`FLAT_SCALE` on (see the module docstring); ``"bernoulli"``: Bernoulli with mean
        ``loc[k]``.
    loc
        Location parameters, one per arm, in [0, 1].
    scale
        Standard deviation of the normal before truncation (ignored for Bernoulli).
    """

    kind: RewardKind
    loc: npt.NDArray[np.float64]
    scale: float = 0.1

    def __post_init__(self) -> None:
        check_choice("reward", self.kind, KIND_CODES)
        # A copy: the caller's array (e.g. the ``means`` given to an env) may be edited later, and the
        # draws must keep the law the model was built with (its ``expected``, an env's gaps).
        loc = np.array(check_unit_array("means", self.loc, booleans=False), dtype=np.float64, order="C", copy=True)
        object.__setattr__(self, "loc", loc)
        check_float("reward_std", self.scale, low=0.0, low_open=True)
        if self.code == FLAT:  # the quantile argument Φ(a) + u·(Φ(b) − Φ(a)) of a flat law is u itself
            lo, width = np.zeros_like(self.loc), np.ones_like(self.loc)
        else:
            lo = special.ndtr((0.0 - self.loc) / self.scale)
            width = special.ndtr((1.0 - self.loc) / self.scale) - lo
        object.__setattr__(self, "cdf_lo", lo)
        object.__setattr__(self, "cdf_width", width)

    @property
    def code(self) -> int:
        """Integer code of the law used by compiled kernels: :data:`KIND_CODES`, or :data:`FLAT`."""
        if self.kind == "truncnorm" and self.scale >= FLAT_SCALE:
            return FLAT
        return KIND_CODES[self.kind]

    @property
    def n_arms(self) -> int:
        """Number of arms."""
        return int(self.loc.shape[0])

    @property
    def expected(self) -> npt.NDArray[np.float64]:
        """True expected reward of each arm (the truncated normal's own mean)."""
        if self.kind == "bernoulli":
            return self.loc.copy()
        return np.array(_truncnorm_means(self.loc.tobytes(), float(self.scale)))

    def params(self) -> tuple[int, np.ndarray, float, np.ndarray, np.ndarray]:
        """Arguments for the compiled kernels: (kind, loc, scale, cdf_lo, cdf_width)."""
        return self.code, self.loc, float(self.scale), self.cdf_lo, self.cdf_width  # type: ignore[attr-defined]

    def from_uniforms(self, u: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Rewards for an (n, K) block of uniforms."""
        return rewards_from_uniforms(read_only_view(np.ascontiguousarray(u, dtype=np.float64)), *self.params())

    def sample(self, rng: np.random.Generator, n: int) -> npt.NDArray[np.float64]:
        """Draw an (n, K) reward table from ``rng``."""
        return self.from_uniforms(rng.random((n, self.n_arms)))
