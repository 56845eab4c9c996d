"""Exponential-weights agents for adversarial bandits: Exp3, and Exp3-SET and Exp3-IX for feedback graphs.

All three keep cumulative loss estimates L̂ (losses ℓ = 1 − r, rewards in [0, 1]) and draw the
arm from p ∝ exp(−η L̂) each round. Exp3 sees the pulled arm's loss only; Exp3-SET and Exp3-IX
also read the side observations of the step's ``info`` (``observed_mask``, ``observed_rewards``,
as :class:`agents.UCBN` does) and divide each observed loss by the probability q_i that arm i is
observed, q_i = Σ_{j ∈ N[i]} p_j over its closed neighbourhood N[i] in the feedback graph. That is
why they take the graph (``feedback_graph``, a K×K adjacency: ``info["feedback_graph"]`` of the
env's ``reset``, or the env's ``graph`` argument) when built: the mask of a step tells which
losses were seen, not how likely each was to be seen. The graph is used for q only.

Batched like :class:`agents.UCB`: one packed float64 row per copy, one compiled call per ``act``
and ``update`` for all copies (:mod:`agents.adversarial.kernels`, with a plain-Python reference); each
copy draws from its own generator (:mod:`agents.common.streams`), so copy i of a batch plays as a
single agent seeded ``seed + i``.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np
from numba import types

from agents.adversarial.kernels import (
    EXTRA_COLUMNS,
    exp3_step,
    exp3_update,
    exp3ix_step,
    exp3ix_update,
    exp3set_step,
    exp3set_update,
    neighbour_lists,
    sample_into,
    sample_one,
)
from agents.base import Agent, SingleEnvKernel, check_float, check_int, describe
from agents.common.kernels import kernel_error
from agents.common.streams import GENERATOR_BYTES, CopyStreams, UniformsAhead
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.feedback_graphs import as_adjacency, closed_neighbourhoods, independence_number

_NP_INT64, _NP_FLOAT64 = np.int64, np.float64
_INT64, _FLOAT64, _BOOL = np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.bool_)
_NDARRAY, _EMPTY = np.ndarray, np.empty

#: Largest K for which Exp3-SET computes the independence number α(G) exactly for its default η.
EXACT_ALPHA_ARMS = 40

_STATE = types.Array(types.float64, 2, "C")
#: One env's ``act`` and Exp3's ``update``: one call each of a one-env kernel's compiled entry point.
_SAMPLE_ONE = SingleEnvKernel(sample_one, (_STATE, types.float64))
_EXP3_STEP = SingleEnvKernel(
    exp3_step, (_STATE, types.int64, types.float64, types.float64, types.float64, types.float64)
)
#: N copies' ``act`` and Exp3's ``update``, through the compiled entry points of the batched kernels.
#: Their arguments are arrays and numbers only (the generators are passed as the addresses of their
#: C interface), of the exact types below: the agent's own state and addresses, and the int64 and
#: float64 batches of shape (N,) that :meth:`Agent._feedback` returns (C-contiguous and writable:
#: :func:`bandit_envs._jit.kernel_array`, the form the dispatcher is given too).
_SAMPLE = SingleEnvKernel(sample_into, (_STATE, types.Array(types.uint64, 1, "C"), types.Array(types.int64, 1, "C")))
_EXP3_UPDATE = SingleEnvKernel(
    exp3_update,
    (_STATE, types.Array(types.int64, 1, "C"), types.Array(types.float64, 1, "C"), types.float64, types.float64),
)
#: Exp3-SET's and Exp3-IX's ``update`` (one env and N copies), through the compiled entry points: the
#: state, the (B,) actions and rewards and the (B, K) mask and observed rewards in the forms
#: :meth:`Agent._feedback` and :meth:`Agent._side_observations` return (``kernel_array``: C-contiguous
#: and writable), and the agent's neighbour lists. The dispatcher's typing of these eight or ten
#: arguments cost more than Exp3-SET's whole update at K = 10 in one env.
_INDICES = types.Array(types.int64, 1, "C")
_GRAPH_FEEDBACK = (
    _STATE,
    _INDICES,
    types.Array(types.float64, 1, "C"),
    types.Array(types.bool_, 2, "C"),
    _STATE,
    _INDICES,
    _INDICES,
)
_EXP3SET_UPDATE = SingleEnvKernel(exp3set_update, (*_GRAPH_FEEDBACK, types.float64))
_EXP3IX_UPDATE = SingleEnvKernel(exp3ix_update, (*_GRAPH_FEEDBACK, types.boolean, types.float64, types.float64))
#: One env's update with plain scalars and the env's own (K,) mask and observed rewards, of any
#: strides (layout ``"A"``), as UCB-N's one-env step takes them.
_ONE_ENV_FEEDBACK = (
    _STATE,
    types.int64,
    types.float64,
    types.Array(types.bool_, 1, "A"),
    types.Array(types.float64, 1, "A"),
    _INDICES,
    _INDICES,
)
_EXP3SET_STEP = SingleEnvKernel(exp3set_step, (*_ONE_ENV_FEEDBACK, types.float64, types.float64))
_EXP3IX_STEP = SingleEnvKernel(
    exp3ix_step, (*_ONE_ENV_FEEDBACK, types.boolean, types.float64, types.float64, types.float64)
)


def _sqrt_ratio(numerator: float, denominator: int) -> float:
    """sqrt(``numerator`` / ``denominator``) for an integer ``denominator`` > 0, also beyond the floats.

    A horizon T may be any integer: ``2 ln K / (K T)`` with a T past the floats (1e400) raises
    OverflowError in Python's division, so it is taken through logarithms there (the same η up to
    rounding; every T a float holds takes the plain division).
    """
    try:
        return math.sqrt(numerator / denominator)
    except OverflowError:
        return math.exp(0.5 * (math.log(numerator) - math.log(denominator)))


class _ExpWeights(UniformsAhead, CopyStreams, Agent):
    """Shared state (layout in :mod:`agents.adversarial.kernels`), sampling and accessors.

    One env draws its uniforms ahead (:class:`agents.common.streams.UniformsAhead`): Exp3's
    ``update`` samples the next arm in its compiled call (``_next``), which ``act`` returns,
    counting its uniform used; otherwise ``act`` samples from p with the next unused uniform.
    """

    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "{name} estimates losses 1 - r in [0, 1]"
    _state_bytes_per_arm = 32
    _state_bytes_per_copy = 64 + GENERATOR_BYTES
    _state: FloatArray

    @abstractmethod
    def _initial_rates(self) -> tuple[float, float]:
        """(η, γ) kept with p_1 (uniform) at the start."""
        ...

    def _reset_state(self) -> None:
        if self.n_envs is None:
            _SAMPLE_ONE.load()
        else:
            _SAMPLE.load()
        k = self.n_arms
        self._state = np.zeros((self.batch, 3 * k + EXTRA_COLUMNS))
        self._state[:, k : 2 * k] = 1.0 / k
        eta, gamma = self._initial_rates()
        self._state[:, 2 * k] = eta
        self._state[:, 2 * k + 1] = gamma
        self._state[:, 2 * k + EXTRA_COLUMNS :] = 1.0  # w = exp(-eta (0 - 0)), with min L = 0 in column 2K + 3
        self.t = 0
        self._batch_shape = (self.batch,)
        self._clear_uniforms()
        #: One env: the arm sampled by the last update for the next round (its uniform not yet used), or -1.
        self._next = -1

    def _forget_choice(self) -> None:
        self._next = -1  # its uniform stays unused: act samples afresh with it

    @property
    def probabilities(self) -> FloatArray:
        """(B, K) distribution p_t the next ``act`` draws from, a view of the agent's state."""
        self._next = -1  # the caller may write to it: act samples afresh (with the same uniform)
        return self._state[:, self.n_arms : 2 * self.n_arms]

    @property
    def loss_estimates(self) -> FloatArray:
        """(B, K) cumulative loss estimates L̂, a view of the agent's state."""
        self._state[:, 2 * self.n_arms + 3] = np.nan  # the caller may write to it: weights computed afresh
        return self._state[:, : self.n_arms]

    @property
    def eta(self) -> float | FloatArray:
        """The learning rate η that made the current distribution (one per copy in batch mode)."""
        eta = self._state[:, 2 * self.n_arms]
        return float(eta[0]) if self.n_envs is None else eta.copy()

    def act(self, obs: Any = None) -> Any:
        """Draw one arm per copy from p_t (one draw from each copy's generator)."""
        if obs is not None:
            self._check_obs(obs)
        n = self.n_envs
        if n is None:
            arm = self._next
            if arm >= 0:  # sampled by the last update
                self._next = -1
                self._position += 1
                return arm
            uniforms, position = self._uniforms, self._position
            if position >= len(uniforms):
                uniforms, position = self._draw_uniforms()
            self._position = position + 1
            chosen: int = _SAMPLE_ONE.call(self._state, uniforms[position])
            return chosen
        out = _EMPTY(n, _INT64)  # allocated here: cheaper than an array returned by compiled code
        _SAMPLE.call(self._state, self._bitgens, out)
        return out


class Exp3(_ExpWeights):
    r"""Exp3 with loss-based importance weighting (Auer, Cesa-Bianchi, Freund & Schapire [1]_).

    Round t draws :math:`I_t \sim p_t` with

    .. math:: p_{t,k} = (1-\gamma)\frac{\exp(-\eta_t \hat L_{t-1,k})}{\sum_j \exp(-\eta_t \hat L_{t-1,j})}
              + \frac{\gamma}{K},
              \qquad \hat L_{t,k} = \hat L_{t-1,k} + \frac{(1 - r_t)\,\mathbb 1\{I_t = k\}}{p_{t,k}}.

    Exp3 of [1]_ (§3) mixes in γ/K and weights rewards; the loss-based form used here needs no
    mixing (γ = 0 by default) and is the one analysed by Bubeck & Cesa-Bianchi [2]_, Theorem 3.1,
    and Lattimore & Szepesvári [3]_, §11.3-11.4. Defaults [P]:

    * ``horizon`` given: the fixed η = sqrt(2 ln K / (K T)), with expected regret at most
      sqrt(2 T K ln K) ([2]_, Theorem 3.1; [3]_, Theorem 11.2);
    * no horizon: the anytime η_t = sqrt(ln K / (t K)), regret at most 2 sqrt(T K ln K) at every T
      ([2]_, Theorem 3.1);
    * ``eta`` given: that fixed η.

    Rewards must be in [0, 1]; side observations in ``info`` are ignored.

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    horizon
        Number of rounds T (>= 1) for the fixed-horizon η, or None for the anytime η_t.
    eta
        A fixed learning rate η > 0 instead (then ``horizon`` is not used).
    gamma
        Uniform exploration γ in [0, 1) mixed into p (default 0).
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the generators: copy i of a batch uses ``seed + i``.

    Attributes
    ----------
    probabilities, loss_estimates
        (B, K) p_t and L̂ of every copy.
    eta
        The learning rate η_t that made p_t (per copy in batch mode); ``fixed_eta`` is the fixed η, or
        None for the anytime schedule.
    t
        Rounds completed (updates received).

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, Y. Freund, R. E. Schapire, "The Nonstochastic Multiarmed
       Bandit Problem", SIAM Journal on Computing 32(1), 48-77, 2002.
    .. [2] S. Bubeck, N. Cesa-Bianchi, "Regret Analysis of Stochastic and Nonstochastic
       Multi-armed Bandit Problems", Foundations and Trends in Machine Learning 5(1), 2012.
    .. [3] T. Lattimore, C. Szepesvári, "Bandit Algorithms", Cambridge University Press, 2020.
    """

    name = "Exp3"
    reads_side_observations = False  # the pulled arm's loss only

    def __init__(
        self,
        n_arms: int,
        horizon: int | None = None,
        *,
        eta: float | None = None,
        gamma: float = 0.0,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        self.horizon = None if horizon is None else check_int("horizon", horizon, minimum=1)
        self.gamma = check_float("gamma", gamma, low=0.0, high=1.0, high_open=True)
        k = self.n_arms
        if eta is not None:
            self.fixed_eta: float | None = check_float("eta", eta, low=0.0, low_open=True)
        elif self.horizon is not None:
            self.fixed_eta = _sqrt_ratio(2.0 * math.log(k), k * self.horizon)
        else:
            self.fixed_eta = None
        self._log_k_over_k = math.log(k) / k
        self._seed_copies()
        self._reset_state()
        if self.n_envs is None:
            _EXP3_STEP.load()
        else:
            _EXP3_UPDATE.load()

    def eta_at(self, t: int) -> float:
        """η_t of round t (1-based): the fixed η, or sqrt(ln K / (t K)).

        Raises
        ------
        TypeError, ValueError
            If ``t`` is not an integer >= 1 (round 0 has no η: ln K / (0 K) is not a number).
        """
        t = check_int("t", t, minimum=1)
        return self.fixed_eta if self.fixed_eta is not None else _sqrt_ratio(self._log_k_over_k, t)

    def _initial_rates(self) -> tuple[float, float]:
        return self.eta_at(1), self.gamma

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add the pulled arm's importance-weighted loss and compute p of the next round."""
        n = self.n_envs
        if n is None:
            tr, ta = type(reward), type(action)
            value = (
                reward
                if (tr is float or tr is _NP_FLOAT64) and (ta is int or ta is _NP_INT64)
                else self._plain_value(action, reward)  # an int reward, say: a float if it fits
            )
            if value is not None and (info is None or self._plain_value(action, value) is not None):
                # the usual one-env step: one compiled call, which refuses (changing nothing) an action
                # outside [0, K) or a reward outside [0, 1]; the checked path then says which. With an
                # info, the range is checked first, so that a bad action is named before a bad info.
                if info is not None:
                    self._check_info(info)
                fixed = self.fixed_eta
                eta = fixed if fixed is not None else math.sqrt(self._log_k_over_k / (self.t + 2))  # eta_at(t + 2)
                uniforms, position = self._uniforms, self._position
                if position >= len(uniforms):
                    uniforms, position = self._draw_uniforms()
                try:  # the update, and the next round's arm sampled (its uniform used when act returns it)
                    chosen = _EXP3_STEP.call(self._state, action, value, eta, self.gamma, uniforms[position])
                except OverflowError:  # an int action beyond int64: not an arm
                    chosen = -1
                if chosen >= 0:
                    self.t += 1
                    self._next = chosen
                    return
            a, r = self._feedback(action, reward, info, check_values=False)
        elif (
            type(action) is _NDARRAY
            and type(reward) is _NDARRAY
            and (action.dtype is _INT64 or action.dtype == _INT64)
            and (reward.dtype is _FLOAT64 or reward.dtype == _FLOAT64)
            and action.shape == reward.shape == self._batch_shape
            and info is None
            and action.flags.carray  # the one form the kernels are compiled for (bandit_envs._jit.kernel_array)
            and reward.flags.carray
        ):  # N copies' usual batch, which Agent._feedback returns as it is (its first case, inlined)
            a, r = action, reward
        else:
            a, r = self._feedback(action, reward, info, check_values=False)  # int64 and float64, shape (B,)
        t = self.t
        fixed = self.fixed_eta
        eta = fixed if fixed is not None else math.sqrt(self._log_k_over_k / (t + 2))  # eta_at(t + 2)
        bad = _EXP3_UPDATE.call(self._state, a, r, eta, self.gamma)
        if bad >= 0:
            raise kernel_error(self, a, r, bad)
        self.t = t + 1
        self._next = -1

    def __repr__(self) -> str:
        return (
            f"Exp3(n_arms={self.n_arms}, horizon={self.horizon}, eta={self.fixed_eta}, gamma={self.gamma}, "
            f"n_envs={self.n_envs}, seed={self.seed})"
        )


class _GraphExpWeights(_ExpWeights):
    """Exponential weights with side observations: the graph, q_i and the checked update inputs."""

    def __init__(self, n_arms: int, feedback_graph: Any, *, n_envs: int | None, seed: int | None) -> None:
        super().__init__(n_arms, n_envs=n_envs, seed=seed)
        if feedback_graph is None:
            raise ValueError(
                "feedback_graph is required (a networkx graph or K×K boolean adjacency, e.g. "
                "info['feedback_graph'] of the env's reset), got None."
            )
        self.adjacency = as_adjacency(feedback_graph, self.n_arms, "feedback_graph")
        self.neighbourhoods = closed_neighbourhoods(self.adjacency)
        self._closed = np.ascontiguousarray(self.neighbourhoods)
        #: (start, arms) of each closed neighbourhood, for the kernels' q_i (kernels.neighbour_lists).
        self._neighbours = neighbour_lists(self._closed)
        self._arm_shape = (self.n_arms,)

    def _state_nbytes(self) -> float:
        return super()._state_nbytes() + float(self.n_arms) ** 2  # the K×K closed neighbourhoods

    def observation_probabilities(self) -> FloatArray:
        """(B, K) q_i = Σ_{j ∈ N[i]} p_j: the probability that arm i's loss is observed next round.

        Summed in arm order, as the update kernels sum it
        (:func:`~agents.adversarial.kernels.observation_probability`), so every copy's row is that of
        the single agent bit for bit (a matrix product sums in an order of the linear-algebra
        library's choosing, which may differ between a (1, K) row and the rows of a batch).
        """
        p = self.probabilities
        q: FloatArray = np.zeros(p.shape)
        for j in range(self.n_arms):
            q += np.where(self._closed[:, j], p[:, j : j + 1], 0.0)  # adding 0.0 changes no sum
        return q

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Add every observed arm's importance-weighted loss (:meth:`_add_losses`); compute p of the next round.

        ``info`` carries the step's side observations (``observed_mask``, ``observed_rewards``).
        """
        if self.n_envs is None and type(info) is dict:  # one env, the env's own info: one compiled call
            value = self._scalar_feedback(action, reward)
            mask, observed = info.get("observed_mask"), info.get("observed_rewards")
            best = info.get("optimal_action")
            if (
                value is not None
                and type(mask) is np.ndarray
                and (mask.dtype is _BOOL or mask.dtype == _BOOL)  # numba-made arrays: an equal dtype
                and mask.shape == self._arm_shape
                and type(observed) is np.ndarray
                and (observed.dtype is _FLOAT64 or observed.dtype == _FLOAT64)
                and observed.shape == self._arm_shape
                and (best is None or ((type(best) is int or type(best) is _NP_INT64) and best < self.n_arms))
            ):
                uniforms, position = self._uniforms, self._position
                if position >= len(uniforms):
                    uniforms, position = self._draw_uniforms()
                # the update, and the next round's arm sampled (its uniform used when act returns it)
                chosen = self._one_env_step(action, value, mask, observed, uniforms[position])
                if chosen >= 0:
                    self.t += 1
                    self._next = chosen
                    return
        self._next = -1
        a, r, mask, observed = self._observed_feedback(action, reward, info)
        bad = self._add_losses(a, r, mask, observed)  # the kernel checks the values: nothing changed if refused
        if bad != -1:
            raise kernel_error(self, a, r, bad, mask, observed)
        self.t += 1

    @abstractmethod
    def _one_env_step(self, action: int, reward: float, mask: BoolArray, observed: FloatArray, u: float) -> int:
        """:meth:`_add_losses` of one env with plain scalars and (K,) arrays, then the next arm for the uniform ``u``.

        -1 if refused (nothing changed).
        """
        ...

    @abstractmethod
    def _add_losses(self, actions: IntArray, rewards: FloatArray, mask: BoolArray, observed: FloatArray) -> int:
        """Add the (B, K) observed losses ``1 - observed`` where ``mask`` to L̂, weighted by the algorithm's rule.

        One compiled call, which first checks the round's feedback: -1, or the refused copy as
        :func:`~agents.common.kernels.kernel_error` reads it (nothing changed).
        """
        ...


class Exp3SET(_GraphExpWeights):
    r"""Exp3-SET for bandits with a feedback graph (Alon, Cesa-Bianchi, Gentile & Mansour [1]_).

    Exponential weights without explicit exploration: round t draws :math:`I_t \sim p_t`,
    :math:`p_{t,k} \propto \exp(-\eta \hat L_{t-1,k})`, observes the losses of the arms in
    ``info["observed_mask"]`` (the closed neighbourhood of :math:`I_t`) and adds to each observed
    arm i the importance-weighted loss

    .. math:: \hat\ell_{t,i} = \frac{\ell_{t,i}}{q_{t,i}}, \qquad
              q_{t,i} = \sum_{j \in N[i]} p_{t,j},

    where :math:`q_{t,i}` is the probability that arm i is *observed* (not played) at round t:
    [1]_, §3, the Exp3-SET algorithm. Its regret is at most ln K / η + (η/2) Σ_t E[mas(G_t)]
    ([1]_, §3), and mas(G) = α(G), the independence number, for an undirected graph. Default
    [P]: with ``horizon`` T, η = sqrt(2 ln K / (α T)), which makes the bound sqrt(2 α T ln K);
    α is computed exactly for K <= 40 (:func:`bandit_envs.feedback_graphs.independence_number`),
    else the upper bound K is used (the Exp3 tuning), unless ``alpha`` is given. On the empty
    graph q = p, and Exp3-SET is :class:`Exp3` with the same horizon. Rewards (observed ones too)
    must be in [0, 1].

    Parameters
    ----------
    n_arms
        Number of arms K (>= 2).
    feedback_graph
        networkx graph or K×K boolean adjacency (undirected, no self loops) of the env.
    horizon
        Number of rounds T for the default η (required unless ``eta`` is given).
    eta
        A fixed learning rate η > 0 instead.
    alpha
        Independence number α(G) (or an upper bound, in [1, K]) for the default η.
    n_envs
        ``None`` for one env, or the number N of copies run in lock-step.
    seed
        Seed of the generators: copy i of a batch uses ``seed + i``.

    Attributes
    ----------
    adjacency, neighbourhoods
        K×K adjacency of the feedback graph and its closed neighbourhoods N[i] (for q).
    fixed_eta, alpha
        The fixed learning rate η, and the α(G) of its default (None when ``eta`` was given alone).
    probabilities, loss_estimates, eta, t
        As :class:`Exp3`.

    References
    ----------
    .. [1] N. Alon, N. Cesa-Bianchi, C. Gentile, Y. Mansour, "From Bandits to Experts: A Tale of
       Domination and Independence", NeurIPS 2013. arXiv:1307.4564.
    """

    name = "Exp3-SET"

    def __init__(
        self,
        n_arms: int,
        feedback_graph: Any,
        horizon: int | None = None,
        *,
        eta: float | None = None,
        alpha: int | None = None,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, feedback_graph, n_envs=n_envs, seed=seed)
        k = self.n_arms
        self.horizon = None if horizon is None else check_int("horizon", horizon, minimum=1)
        if alpha is not None:
            alpha = check_int("alpha", alpha)  # its type; then the range, stated whole whichever side is passed
            if not 1 <= alpha <= k:
                got = describe(alpha, typed=False)
                raise ValueError(f"alpha must be an independence number in [1, {k}] (K = n_arms), got {got}.")
        if eta is not None:
            self.fixed_eta = check_float("eta", eta, low=0.0, low_open=True)
        elif self.horizon is None:
            raise ValueError(
                "Exp3SET needs horizon (for its default learning rate sqrt(2 ln K / (alpha T))) or eta, got neither."
            )
        else:
            if alpha is None:
                alpha = independence_number(self.adjacency) if k <= EXACT_ALPHA_ARMS else k
            self.fixed_eta = _sqrt_ratio(2.0 * math.log(k), alpha * self.horizon)
        self.alpha = alpha
        self._seed_copies()
        self._reset_state()
        (_EXP3SET_STEP if self.n_envs is None else _EXP3SET_UPDATE).load()

    def _initial_rates(self) -> tuple[float, float]:
        return self.fixed_eta, 0.0

    def _one_env_step(self, action: int, reward: float, mask: BoolArray, observed: FloatArray, u: float) -> int:
        start, arms = self._neighbours
        return int(_EXP3SET_STEP.call(self._state, action, reward, mask, observed, start, arms, self.fixed_eta, u))

    def _add_losses(self, actions: IntArray, rewards: FloatArray, mask: BoolArray, observed: FloatArray) -> int:
        """Every observed arm's loss divided by its observation probability q_i."""
        start, arms = self._neighbours
        return int(_EXP3SET_UPDATE.call(self._state, actions, rewards, mask, observed, start, arms, self.fixed_eta))

    def __repr__(self) -> str:
        return (
            f"Exp3SET(n_arms={self.n_arms}, horizon={self.horizon}, eta={self.fixed_eta}, alpha={self.alpha}, "
            f"n_envs={self.n_envs}, seed={self.seed})"
        )


class Exp3IX(_GraphExpWeights):
    r"""Exp3-IX: exponential weights with implicit exploration (Kocák, Neu, Valko & Munos [1]_).

    Round t draws :math:`I_t \sim p_t`, :math:`p_{t,k} \propto \exp(-\eta_t \hat L_{t-1,k})`, and
    adds to every arm i observed in ``info["observed_mask"]`` the biased estimate

    .. math:: \hat\ell_{t,i} = \frac{\ell_{t,i}}{q_{t,i} + \gamma_t}, \qquad
              q_{t,i} = \sum_{j \in N[i]} p_{t,j},

    the implicit exploration γ_t > 0 keeping the estimates bounded without mixing uniform
    exploration into p: [1]_, §3, Algorithm 1 (Exp3-IX). Its regret is at most
    ln K / η_T + Σ_t (η_t/2 + γ_t) E[Q_t] with Q_t = Σ_i p_{t,i} / (q_{t,i} + γ_t) ([1]_,
    Theorem 1). Default [P]: the paper's adaptive tuning η_t = 2γ_t = sqrt(ln K / (K + Σ_{s<t} Q_s)),
    which needs neither the horizon nor α(G); ``eta`` gives a fixed η instead (with γ = η/2
    unless ``gamma`` is given). Rewards (observed ones too) must be in [0, 1].

    Parameters
    ----------
    n_arms, feedback_graph, n_envs, seed
        As :class:`Exp3SET`.
    eta
        A fixed learning rate η > 0 (None: the adaptive tuning).
    gamma
        A fixed implicit exploration γ >= 0 (only with ``eta``; default η/2). With γ = 0 each
        q_i + γ is taken as at least 1e-300, as Exp3-SET takes q_i, so that an arm observed though
        p gave it no chance (an update not from ``act``) adds a finite loss estimate, not NaN.

    Attributes
    ----------
    adjacency, neighbourhoods
        As :class:`Exp3SET`.
    fixed_eta, fixed_gamma
        The fixed η and γ (None: the adaptive tuning).
    gamma
        The implicit exploration γ_t of the next round.
    probabilities, loss_estimates, eta, t
        As :class:`Exp3`.

    References
    ----------
    .. [1] T. Kocák, G. Neu, M. Valko, R. Munos, "Efficient learning by implicit exploration in
       bandit problems with side observations", NeurIPS 2014.
    """

    name = "Exp3-IX"

    def __init__(
        self,
        n_arms: int,
        feedback_graph: Any,
        *,
        eta: float | None = None,
        gamma: float | None = None,
        n_envs: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_arms, feedback_graph, n_envs=n_envs, seed=seed)
        if eta is None:
            if gamma is not None:
                raise ValueError(
                    f"gamma is the implicit exploration of a fixed eta: give eta too, or neither (adaptive), "
                    f"got gamma={describe(gamma, typed=False)}."
                )
            self.fixed_eta: float | None = None
            self.fixed_gamma: float | None = None
        else:
            self.fixed_eta = check_float("eta", eta, low=0.0, low_open=True)
            self.fixed_gamma = 0.5 * self.fixed_eta if gamma is None else check_float("gamma", gamma, low=0.0)
        self._seed_copies()
        self._reset_state()
        (_EXP3IX_STEP if self.n_envs is None else _EXP3IX_UPDATE).load()

    def _initial_rates(self) -> tuple[float, float]:
        if self.fixed_eta is None:
            eta = math.sqrt(math.log(self.n_arms) / self.n_arms)
            return eta, 0.5 * eta
        assert self.fixed_gamma is not None
        return self.fixed_eta, self.fixed_gamma

    @property
    def gamma(self) -> float | FloatArray:
        """The implicit exploration γ_t of the next round (one per copy in batch mode)."""
        gamma = self._state[:, 2 * self.n_arms + 1]
        return float(gamma[0]) if self.n_envs is None else gamma.copy()

    def _one_env_step(self, action: int, reward: float, mask: BoolArray, observed: FloatArray, u: float) -> int:
        eta = 0.0 if self.fixed_eta is None else self.fixed_eta
        gamma = 0.0 if self.fixed_gamma is None else self.fixed_gamma
        start, arms = self._neighbours
        adaptive = self.fixed_eta is None
        state = self._state
        return int(_EXP3IX_STEP.call(state, action, reward, mask, observed, start, arms, adaptive, eta, gamma, u))

    def _add_losses(self, actions: IntArray, rewards: FloatArray, mask: BoolArray, observed: FloatArray) -> int:
        """Every observed arm's loss divided by (q_i + γ_t); the kernel also computes η and γ of the next round."""
        eta = 0.0 if self.fixed_eta is None else self.fixed_eta
        gamma = 0.0 if self.fixed_gamma is None else self.fixed_gamma
        start, arms = self._neighbours
        adaptive = self.fixed_eta is None
        return int(
            _EXP3IX_UPDATE.call(self._state, actions, rewards, mask, observed, start, arms, adaptive, eta, gamma)
        )

    def __repr__(self) -> str:
        return (
            f"Exp3IX(n_arms={self.n_arms}, eta={self.fixed_eta}, gamma={self.fixed_gamma}, "
            f"n_envs={self.n_envs}, seed={self.seed})"
        )
