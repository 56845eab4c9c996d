"""Pieces shared by both budget scenarios: payoff, budgets, sensitivities, noise rows, the oracle, the config.

Every transition here is a pure function of its inputs and of a row of uniforms drawn from a
``numpy.random.Generator``: each step of each copy consumes exactly one row of ``n_noise + 1``
uniforms (the last one draws the sensitivity of the next datum), so results depend only on the
generator's stream, never on how many rows are drawn at once, and the single env, the vector env
and the Monte Carlo oracle all call the same functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np
from scipy.special import ndtr, ndtri

from bandit_envs._types import FloatArray, IntArray
from bandit_envs.validation import check_float, check_int, check_memory, real_array, summarize

#: Largest allowed budget. The paper's grid is {0.1, ..., 1}; beyond 5 randomized response
#: reports the truth with probability > 0.993 and the movie chain mixes too slowly for the oracle.
MAX_BUDGET = 5.0

#: Rows of uniforms drawn per refill (speed only: results are a function of the stream).
BLOCK_ROWS = 512

#: Largest ``horizon``: an episode consumes ``horizon + 1`` rows of uniforms, counted in int64 by
#: the vector env's buffers (whose largest value is 2**63 - 1).
MAX_HORIZON = 2**63 - 2

ConfigT = TypeVar("ConfigT", bound="BudgetConfig")


class World(Protocol):
    """The scenario side of a batch of copies: per-user tables and the pure transition.

    ``who`` (int array, batch axis first) says which of the world's users each copy is.
    """

    #: Uniforms a step consumes besides the sensitivity column.
    n_noise: ClassVar[int]

    def start(self, who: IntArray, noise: FloatArray) -> IntArray:
        """Initial state (the first datum) of each copy from its reset row."""
        ...

    def step(
        self, who: IntArray, state: IntArray, epsilon: FloatArray, noise: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray, dict[str, Any]]:
        """Send the current datum with budget ``epsilon``: (next state, R, L / phi, extra info)."""
        ...

    def burn_in(self, budgets: FloatArray) -> int:
        """Steps after which the state's law is stationary (within 1e-6) under any fixed budget."""
        ...


def payoff(recommendation: Any, loss: Any, gamma: float) -> Any:
    """The paper's payoff mu = (gamma R - L) / (gamma + 1) + 1 (eqs. 15 and 21)."""
    return (gamma * recommendation - loss) / (gamma + 1.0) + 1.0


def budget_grid(n_budgets: Any, budgets: Any) -> FloatArray:
    """The arms: ``budgets`` if given, else the paper's {1/K, 2/K, ..., 1} with K = ``n_budgets``."""
    if budgets is None:
        k = check_int("n_budgets", n_budgets, minimum=2)
        check_memory(
            f"n_budgets={k} (the grid and the per-budget tables, about 128 bytes a budget)",
            128.0 * k,
            "use fewer budgets",
        )
        return np.arange(1, k + 1, dtype=np.float64) / k
    arr = np.array(real_array("budgets", budgets, "a 1-D array of numbers", booleans=False))
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"budgets must be a 1-D array of at least 2 budgets, got shape {arr.shape}.")
    bad = ~(np.isfinite(arr) & (arr > 0.0) & (arr <= MAX_BUDGET))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"budgets must be finite numbers in (0, {MAX_BUDGET:g}], got budgets[{i}] = {float(arr[i])!r}."
        )
    values, first, counts = np.unique(arr, return_index=True, return_counts=True)
    if values.size != arr.size:
        i = int(first[np.argmax(counts > 1)])
        raise ValueError(f"budgets must be distinct, got budgets[{i}] = {float(arr[i])!r} more than once.")
    arr.setflags(write=False)
    return arr


def _normal_pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class SensitivityModel:
    """Per-user privacy level phi_n ~ U[low, high] and per-datum phi_t ~ N(phi_n, std^2) clipped to [0, 1].

    The paper's §7.1.3 (2): ``low, high = 0.3, 0.8`` and ``std = 1/20`` (eq. 22 clips to [0, 1]).
    ``level`` fixes phi_n for every user instead of drawing it.
    """

    low: float = 0.3
    high: float = 0.8
    std: float = 0.05
    level: float | None = None

    @classmethod
    def checked(cls, sensitivity_range: Any, sensitivity_std: Any, sensitivity_level: Any) -> SensitivityModel:
        """Validate the constructor arguments of the envs."""
        if isinstance(sensitivity_range, np.ndarray) and sensitivity_range.ndim == 1:
            sensitivity_range = sensitivity_range.tolist()  # a numpy pair is a pair
        if not isinstance(sensitivity_range, tuple | list) or len(sensitivity_range) != 2:
            raise ValueError(
                f"sensitivity_range must be a pair (low, high): a tuple, list or 1-D array of two numbers, got "
                f"{summarize(sensitivity_range)}."
            )
        low = check_float("sensitivity_range[0]", sensitivity_range[0], low=0.0, high=1.0)
        high = check_float("sensitivity_range[1]", sensitivity_range[1], low=0.0, high=1.0)
        if low > high:
            raise ValueError(
                f"sensitivity_range must have low <= high within [0, 1], got {summarize(sensitivity_range)}."
            )
        std = check_float("sensitivity_std", sensitivity_std, low=0.0)
        level = None
        if sensitivity_level is not None:
            level = check_float("sensitivity_level", sensitivity_level, low=0.0, high=1.0)
        return cls(low, high, std, level)

    def user_level(self, instance_seed: int, user: int) -> float:
        """phi_n of ``user``: a function of (instance_seed, user) only, so any batch of users agrees."""
        if self.level is not None:
            return self.level
        rng = np.random.default_rng([instance_seed, user])
        return float(rng.uniform(self.low, self.high))

    def draw(self, level: FloatArray, uniform: FloatArray) -> FloatArray:
        """phi_t from a uniform by inversion: clip(level + std * Phi^-1(u), 0, 1); ``level`` itself when std is 0."""
        if self.std == 0.0:  # Phi^-1(0) is -inf, and 0 * -inf would make phi_t NaN
            return np.array(np.broadcast_to(level, np.shape(uniform)), dtype=np.float64)
        return np.clip(level + self.std * ndtri(uniform), 0.0, 1.0)

    def mean(self, level: float) -> float:
        """E[phi_t] for a user with phi_n = ``level`` (the mean of the clipped normal)."""
        if self.std == 0.0:
            return level
        a, b = -level / self.std, (1.0 - level) / self.std
        inside = level * (ndtr(b) - ndtr(a)) + self.std * (_normal_pdf(a) - _normal_pdf(b))
        return float(inside + (1.0 - ndtr(b)))


@dataclass(frozen=True)
class Oracle:
    """Monte Carlo estimates, per arm, of E[R] and E[L] / phi for one user.

    Both scenarios' loss is phi_t times a factor independent of phi_t, so the expected payoff of
    arm ``a`` given the observed sensitivity phi is exactly linear in phi:
    ``(gamma * recommendation[a] - phi * loss_factor[a]) / (gamma + 1) + 1``.
    """

    recommendation: FloatArray
    loss_factor: FloatArray
    recommendation_se: FloatArray
    loss_factor_se: FloatArray
    samples: int
    burn_in: int

    def payoffs(self, phi: float, gamma: float) -> FloatArray:
        """Expected payoff of every arm when the datum's sensitivity is ``phi``."""
        return np.asarray(payoff(self.recommendation, phi * self.loss_factor, gamma), dtype=np.float64)


#: Steps each oracle chain records after its burn-in (a stateful chain only).
ORACLE_CHAIN_STEPS = 100
#: Bytes the Monte Carlo oracle holds per budget and chain: the chain's state, budget and sums,
#: its noise row, and its share of a step's arrays (either scenario's transition).
ORACLE_BYTES_PER_CHAIN = 400


def oracle_chains(samples: int, burn_in: int) -> int:
    """Chains per budget of :func:`monte_carlo_oracle` for ``samples`` steps (after ``burn_in``, if any)."""
    steps = ORACLE_CHAIN_STEPS if burn_in else 1
    return -(-samples // steps)


def check_oracle_size(n_budgets: int, samples: int, chains: int) -> None:
    """Refuse ``oracle_samples`` (with ``n_budgets`` arms) whose oracle chains would exceed the memory limit."""
    check_memory(
        f"oracle_samples={samples} with {n_budgets} budgets ({n_budgets * chains:.3g} Monte Carlo chains "
        f"of about {ORACLE_BYTES_PER_CHAIN} bytes)",
        float(n_budgets) * chains * ORACLE_BYTES_PER_CHAIN,
        "lower oracle_samples or use fewer budgets",
    )


def monte_carlo_oracle(world: World, budgets: FloatArray, samples: int, seed: int) -> Oracle:
    """Estimate every arm's E[R] and E[L / phi] for user 0 of ``world`` with the env's own transition.

    Each arm runs ``C`` copies from the reset law for ``world.burn_in`` steps and then records
    ``ORACLE_CHAIN_STEPS`` steps (one step if the world needs no burn-in: its rounds are i.i.d.),
    so ``C * steps >= samples`` transitions are averaged per arm. All arms see the same uniforms
    (common random numbers), which makes the estimated gaps much more precise than the levels.
    Standard errors are those of the mean of the ``C`` independent per-copy averages.
    """
    k = budgets.size
    burn = world.burn_in(budgets)
    steps = ORACLE_CHAIN_STEPS if burn else 1
    copies = oracle_chains(samples, burn)
    check_oracle_size(k, samples, copies)
    rng = np.random.default_rng(seed)
    who = np.zeros(k * copies, dtype=np.int64)
    eps = np.repeat(budgets, copies)
    width = world.n_noise + 1
    state = world.start(who, np.tile(rng.random((copies, width)), (k, 1))[:, : world.n_noise])
    rec = np.zeros(k * copies)
    loss = np.zeros(k * copies)
    for t in range(burn + steps):
        noise = np.tile(rng.random((copies, width)), (k, 1))[:, : world.n_noise]
        state, r, lf, _ = world.step(who, state, eps, noise)
        if t >= burn:
            rec += r
            loss += lf
    # Per-copy averages are independent across copies; their spread gives the standard errors.
    rec_means = (rec / steps).reshape(k, copies)
    loss_means = (loss / steps).reshape(k, copies)
    root = math.sqrt(copies)
    return Oracle(
        rec_means.mean(axis=1),
        loss_means.mean(axis=1),
        rec_means.std(axis=1, ddof=1) / root,
        loss_means.std(axis=1, ddof=1) / root,
        copies * steps,
        burn,
    )


@dataclass(frozen=True, kw_only=True)
class BudgetConfig:
    """The arguments both budget scenarios share, validated once (budget paper §7.1.3).

    Each field is the env keyword of the same name, with the same default; the scenario configs
    (:class:`~bandit_envs.budget.MovieLensBudgetConfig`, :class:`~bandit_envs.budget.GowallaBudgetConfig`)
    add theirs. ``__post_init__`` checks every field (an invalid one raises ``ValueError`` or
    ``TypeError`` naming it) and stores the checked values; ``data`` and ``user`` are checked
    when the instance is built (they need the data).

    Attributes
    ----------
    budget_grid : ndarray of float64
        The arms: ``budgets``, or the paper's {1/K, ..., 1} with K = ``n_budgets``.
    sensitivity : SensitivityModel
        The law of phi_n and phi_t.
    """

    data: Any = None
    user: int | None = None
    n_budgets: int = 10
    budgets: Any = None
    gamma: float = 1.0
    sensitivity_range: tuple[float, float] = (0.3, 0.8)
    sensitivity_std: float = 0.05
    sensitivity_level: float | None = None
    horizon: int = 20_000
    instance_seed: int = 0
    oracle_samples: int = 20_000
    oracle_seed: int = 0
    budget_grid: FloatArray = field(init=False, repr=False, compare=False)
    sensitivity: SensitivityModel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._set("budget_grid", budget_grid(self.n_budgets, self.budgets))
        self._set("gamma", check_float("gamma", self.gamma, low=0.0))
        self._set(
            "sensitivity",
            SensitivityModel.checked(self.sensitivity_range, self.sensitivity_std, self.sensitivity_level),
        )
        horizon = check_int("horizon", self.horizon, minimum=1)
        if horizon > MAX_HORIZON:
            raise ValueError(
                f"horizon must be an integer in [1, 2**63 - 2] (an episode uses horizon + 1 noise rows, counted in "
                f"int64), got {summarize(self.horizon)}."
            )
        self._set("horizon", horizon)
        self._set("instance_seed", check_int("instance_seed", self.instance_seed, minimum=0))
        self._set("oracle_samples", check_int("oracle_samples", self.oracle_samples, minimum=1000))
        # The fewest chains any scenario runs (a stateful one); the oracle checks its own count.
        k, samples = int(self.budget_grid.size), self.oracle_samples
        check_oracle_size(k, samples, oracle_chains(samples, burn_in=1))
        self._set("oracle_seed", check_int("oracle_seed", self.oracle_seed, minimum=0))

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    @classmethod
    def keywords(cls) -> dict[str, Any]:
        """The env keywords of this config and their defaults."""
        return {f.name: f.default for f in fields(cls) if f.init}

    @classmethod
    def from_keywords(cls: type[ConfigT], owner: str, keywords: dict[str, Any]) -> ConfigT:
        """The config of ``owner``'s keyword arguments; an unknown keyword raises ``TypeError`` naming it.

        The message is Python's own for a missing parameter of ``owner.__init__``, as when every
        keyword was spelled out in the env's signature.
        """
        known = cls.keywords()
        for name in keywords:
            if name not in known:
                raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {name!r}")
        return cls(**keywords)
