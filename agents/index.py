"""Index and sampling agents without privacy: Random, UCB, UCB-N and Thompson sampling (TS, TS-N).

State arrays carry the batch axis first, shape (B, K) with B = ``self.batch``, so one env and N
copies in lock-step run the same code. The per-step work of UCB and UCB-N (the index argmax and
the count/mean update) is done by numba kernels looping over those arrays: the batched path must
reach 10^7 agent-steps per second (1000 copies, K = 10, one core;
``benchmarks/bench_ucb_batch.py`` measures it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import Agent, check_float
from bandit_envs._jit import njit

FloatArray = npt.NDArray[np.float64]
SQRT2 = math.sqrt(2.0)
IntArray = npt.NDArray[np.int64]


@njit
def _ucb_choose(means: FloatArray, counts: IntArray, width: FloatArray) -> IntArray:  # pragma: no cover
    """Per row b, the first arm with count 0, else argmax of mean + sqrt(width[b] / count).

    ``width`` is the per-copy exploration numerator (alpha^2 ln t for UCB, 2 ln t for UCB-N).
    Strict ``>`` breaks ties towards the lowest index.
    """
    n_rows, n_arms = means.shape
    out = np.empty(n_rows, dtype=np.int64)
    for b in range(n_rows):
        best = 0
        best_value = -np.inf
        for k in range(n_arms):
            n = counts[b, k]
            if n == 0:
                best = k
                break
            value = means[b, k] + np.sqrt(width[b] / n)
            if value > best_value:
                best_value = value
                best = k
        out[b] = best
    return out


@njit
def _pulled_update(
    actions: IntArray, rewards: FloatArray, sums: FloatArray, counts: IntArray, means: FloatArray
) -> int:  # pragma: no cover
    """Add each row's reward to its pulled arm; return the first bad row (-1 if none).

    Nothing is updated when a row has an action outside [0, K) or a non-finite reward. Means are
    sum / count rather than a running update so that arms with equal reward histories (in any
    order) have bit-equal means and exact ties go to the lowest index.
    """
    n_rows, n_arms = sums.shape
    for b in range(n_rows):
        if actions[b] < 0 or actions[b] >= n_arms or not np.isfinite(rewards[b]):
            return b
    for b in range(n_rows):
        a = actions[b]
        counts[b, a] += 1
        sums[b, a] += rewards[b]
        means[b, a] = sums[b, a] / counts[b, a]
    return -1


@njit
def _observed_update(
    actions: IntArray,
    rewards: FloatArray,
    mask: npt.NDArray[np.bool_],
    observed: FloatArray,
    sums: FloatArray,
    counts: IntArray,
    means: FloatArray,
) -> int:  # pragma: no cover
    """Add every observed reward (``mask``) to its arm; return the first bad row (-1 if none).

    Nothing is updated when a row has an action outside [0, K), a non-finite reward or a
    non-finite observed reward. Means as in ``_pulled_update``.
    """
    n_rows, n_arms = sums.shape
    for b in range(n_rows):
        if actions[b] < 0 or actions[b] >= n_arms or not np.isfinite(rewards[b]):
            return b
        for k in range(n_arms):
            if mask[b, k] and not np.isfinite(observed[b, k]):
                return b
    for b in range(n_rows):
        for k in range(n_arms):
            if mask[b, k]:
                counts[b, k] += 1
                sums[b, k] += observed[b, k]
                means[b, k] = sums[b, k] / counts[b, k]
    return -1


def _row_error(b: int, n_envs: int | None, what: str, value: Any, allowed: str) -> ValueError:
    """One-sentence error about copy ``b`` (or the single env)."""
    where = "" if n_envs is None else f" for copy {b}"
    return ValueError(f"{what} must be {allowed}{where}, got {value!r}.")


def _kernel_error(agent: Agent, actions: IntArray, rewards: FloatArray, b: int) -> ValueError:
    """Error for copy ``b``, refused by a kernel for its action (outside [0, K)) or its reward."""
    if not 0 <= actions[b] < agent.n_arms:
        return agent._action_range_error(int(actions[b]), b)
    return agent._reward_error(float(rewards[b]), b)


class Random(Agent):
    """Pull an arm uniformly at random each round.

    The usual lower reference in regret plots. Draws come from ``self.rng``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator.
    """

    name = "Random"

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self._reset_state()

    def _reset_state(self) -> None:
        """Random keeps no learning state."""

    def act(self, obs: Any = None) -> Any:
        """Draw one uniform arm per copy."""
        self._check_obs(obs)
        return self._out(self.rng.integers(self.n_arms, size=self.batch, dtype=np.int64))

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Check the feedback (it must fit the agent), then ignore it."""
        self._feedback(action, reward, info)


class _UCBIndex(Agent):
    """Shared state and index choice of UCB and UCB-N: argmax mean + sqrt(width_coef ln t / n)."""

    #: Squared exploration coefficient per copy, shape (B,) (alpha^2 for UCB, 2 for UCB-N).
    _width_coef: FloatArray

    def _reset_state(self) -> None:
        self.sums: FloatArray = np.zeros((self.batch, self.n_arms))
        self.means: FloatArray = np.zeros((self.batch, self.n_arms))
        self.counts: IntArray = np.zeros((self.batch, self.n_arms), dtype=np.int64)
        self.t = 0

    def act(self, obs: Any = None) -> Any:
        """Choose the arm with the largest index in round ``t + 1`` (unplayed arms first)."""
        if obs is not None:
            self._check_obs(obs)
        width = self._width_coef * math.log(self.t + 1)
        return self._out(_ucb_choose(self.means, self.counts, width))


class UCB(_UCBIndex):
    r"""UCB1-style index policy that learns only from the pulled arm.

    After playing every arm once (lowest index first), round t (1-based) plays

    .. math:: I_t = \arg\max_i \bar X_i + \alpha \sqrt{\ln t / N_i},

    where :math:`\bar X_i` is the mean reward and :math:`N_i` the number of pulls of arm i; ties
    go to the lowest index. ``alpha = sqrt(2)`` is UCB1 [1]_ [R]; the privacy-budget paper uses
    the same index with ``alpha`` as a tuned parameter. UCB1 writes ln n with n = t - 1 plays so
    far; we use the round number t, as UCB-N does [2]_, so that UCB-N on an empty graph is this
    agent with ``alpha = sqrt(2)`` [P].

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    alpha
        Exploration coefficient (> 0); ``sqrt(2)`` gives UCB1. In batch mode also an array of
        ``n_envs`` coefficients, one per copy (an α sweep run as one batch).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (UCB itself is deterministic).

    Attributes
    ----------
    sums, counts, means
        (B, K) reward sum, number of pulls and mean reward per arm, B = ``batch``.
    t
        Rounds completed (updates received).

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, P. Fischer, "Finite-time Analysis of the Multiarmed Bandit
       Problem", Machine Learning 47, 235-256, 2002.
    .. [2] S. Caron, B. Kveton, M. Lelarge, S. Bhagat, "Leveraging Side Observations in
       Stochastic Bandits", UAI 2012.
    """

    name = "UCB"

    def __init__(
        self,
        n_arms: int,
        alpha: float | npt.ArrayLike = SQRT2,
        *,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.alpha = per_copy_float("alpha", alpha, self.n_envs, low=0.0, low_open=True)
        self._width_coef = np.broadcast_to(np.square(self.alpha), (self.batch,)).astype(np.float64)
        self._reset_state()

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add ``reward`` to the pulled arm's mean; side observations in ``info`` are ignored."""
        a, r = self._feedback(action, reward, info, check_values=False)
        bad = _pulled_update(a, r, self.sums, self.counts, self.means)
        if bad >= 0:
            raise _kernel_error(self, a, r, bad)
        self.t += 1

    def __repr__(self) -> str:
        return f"UCB(n_arms={self.n_arms}, alpha={self.alpha}, n_envs={self.n_envs}, seed={self.seed})"


class UCBN(_UCBIndex):
    r"""UCB-N: UCB on all observations, including side observations of a feedback graph.

    Caron et al. [1]_, Algorithm 1 [V-paper]. Round t (1-based) plays

    .. math:: I_t = \arg\max_i \bar X_i + \sqrt{2 \ln t / O_i},

    with :math:`\sqrt{1/0} = \infty` (unobserved arms first, lowest index; ties to the lowest
    index), where :math:`\bar X_i` is the mean of all observations of arm i and :math:`O_i` their
    number. After the step, every arm k in ``info["observed_mask"]`` (the closed neighbourhood of
    the pulled arm) gets :math:`O_k \mathrel{+}= 1`, and :math:`X_k` =
    ``info["observed_rewards"][k]`` joins its mean (kept as sum / O_k). On the empty graph this
    is :class:`UCB` with ``alpha = sqrt(2)``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator (UCB-N itself is deterministic).

    Attributes
    ----------
    sums, counts, means
        (B, K) sum, number O_i and mean of the observations of each arm.
    t
        Rounds completed (updates received).

    References
    ----------
    .. [1] S. Caron, B. Kveton, M. Lelarge, S. Bhagat, "Leveraging Side Observations in
       Stochastic Bandits", UAI 2012, pp. 142-151. arXiv:1210.4839.
    """

    name = "UCB-N"

    def __init__(self, n_arms: int, *, n_envs: int | None = None, seed: int | None = None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self._width_coef = np.full(self.batch, 2.0)
        self._reset_state()

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add every observed reward (``observed_mask``, ``observed_rewards`` in ``info``)."""
        a, r = self._feedback(action, reward, info, check_values=False)
        mask, observed = self._side_observations(info, check_values=False)
        bad = _observed_update(a, r, mask, observed, self.sums, self.counts, self.means)
        if bad >= 0:
            if 0 <= a[bad] < self.n_arms and np.isfinite(r[bad]):
                self._check_observed(np.where(mask, observed, 0.0))
            raise _kernel_error(self, a, r, bad)
        self.t += 1


class ThompsonSampling(Agent):
    r"""Beta-Bernoulli Thompson sampling with the r-coin trick; TS-N with side observations.

    Each round draws :math:`\theta_i \sim \mathrm{Beta}(S_i + 1, F_i + 1)` (Beta(1, 1) prior) and
    plays :math:`\arg\max_i \theta_i`, ties broken uniformly at random. Each observation
    :math:`r \in [0, 1]` is binarised by a fresh coin :math:`b \sim \mathrm{Bernoulli}(r)`
    (exactly r for Bernoulli rewards) and counted in S (b = 1) or F (b = 0): Agrawal & Goyal
    [1]_ [R]. With ``side_observations=True`` this is TS-N [2]_ [R]: every arm revealed in
    ``info["observed_mask"]`` is updated with its own coin on ``info["observed_rewards"]``.
    All draws come from ``self.rng``.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    side_observations
        ``False``: learn from the pulled arm only (TS); ``True``: from every revealed arm (TS-N).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the agent's generator.

    Attributes
    ----------
    successes, failures
        (B, K) coin counts S and F per arm.

    References
    ----------
    .. [1] S. Agrawal, N. Goyal, "Analysis of Thompson Sampling for the Multi-armed Bandit
       Problem", COLT 2012. arXiv:1111.1797.
    .. [2] A. C. Y. Tossou, C. Dimitrakakis, D. Dubhashi, "Thompson Sampling for Stochastic
       Bandits with Graph Feedback", AAAI 2017. arXiv:1701.04238.
    """

    name = "TS"
    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "the r-coin of Thompson sampling needs it"

    def __init__(
        self,
        n_arms: int,
        *,
        side_observations: bool = False,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        if not isinstance(side_observations, bool | np.bool_):
            raise TypeError(
                f"side_observations must be True or False, got {side_observations!r} "
                f"({type(side_observations).__name__})."
            )
        self.side_observations = bool(side_observations)
        if self.side_observations:
            self.name = "TS-N"
        self._reset_state()

    def _reset_state(self) -> None:
        self.successes: FloatArray = np.zeros((self.batch, self.n_arms))
        self.failures: FloatArray = np.zeros((self.batch, self.n_arms))

    def act(self, obs: Any = None) -> Any:
        """Sample the posteriors and play the argmax per copy."""
        self._check_obs(obs)
        theta = self.rng.beta(self.successes + 1.0, self.failures + 1.0)
        top = theta == theta.max(axis=1, keepdims=True)
        actions = np.argmax(top, axis=1)
        tied = np.flatnonzero(top.sum(axis=1) > 1)
        for b in tied:
            actions[b] = self.rng.choice(np.flatnonzero(top[b]))
        return self._out(actions.astype(np.int64, copy=False))

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Toss one r-coin per observation and add it to S or F."""
        a, values = self._feedback(action, reward, info)
        if self.side_observations:
            mask, observed = self._side_observations(info)
            values = observed[mask]
        else:
            mask = np.zeros((self.batch, self.n_arms), dtype=np.bool_)
            mask[np.arange(self.batch), a] = True
        coins = self.rng.random(values.shape[0]) < values
        self.successes[mask] += coins
        self.failures[mask] += ~coins

    def __repr__(self) -> str:
        return (
            f"ThompsonSampling(n_arms={self.n_arms}, "
            f"side_observations={self.side_observations}, n_envs={self.n_envs}, "
            f"seed={self.seed})"
        )


def per_copy_float(
    name: str, value: Any, n_envs: int | None, *, low: float, low_open: bool = False
) -> float | FloatArray:
    """A float, or in batch mode optionally an (n_envs,) array of floats, each checked."""
    if np.ndim(value) == 0:
        return check_float(name, value, low=low, low_open=low_open)
    if n_envs is None:
        raise ValueError(
            f"{name} must be a single number when n_envs is None, got an array of shape {np.shape(value)}."
        )
    arr = np.asarray(value)
    if arr.shape != (n_envs,):
        raise ValueError(f"{name} must be a number or an array of n_envs={n_envs} numbers, got shape {arr.shape}.")
    for i, v in enumerate(arr.tolist()):
        check_float(f"{name}[{i}]", v, low=low, low_open=low_open)
    return arr.astype(np.float64)
