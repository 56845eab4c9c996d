"""What the central-DP index agents and the private Thompson samplers share: per-copy noise streams.

:class:`StreamPrivateAgent` is a :class:`agents.base.PrivateAgent` whose noise comes from one
stream per copy (:mod:`agents.common.philox`), following the seeding rule of every batched agent
(docs/design.md, "Agents", Seeds): copy i of an agent built with ``seed=s`` and ``n_envs=N`` draws
from the stream of seed ``s + i``, which is the stream of a single agent built with ``seed=s + i``. So copy i of a batch
makes exactly the choices of that single agent on the same rewards, and running one agent on a
fixed reward sequence with fresh seeds samples its output distribution (what an empirical
privacy audit needs). The stream of seed s is
:func:`bandit_envs.privacy.streams.philox_noise_generator` ``(s)``, independent of
``numpy.random.default_rng(s)`` (an env seeded with the same integer does not share it). With
``seed=None`` the first copy's seed is drawn from the operating system at construction (and by
``reset(seed=None)`` never again: ``reset()`` continues the streams) and kept in the private
``_copy_seeds``: whoever holds it can regenerate the noise, so it is never shown.

Episodes: ``reset()`` continues every stream (fresh noise for the next episode);
``reset(seed=s)`` restarts them as for an agent constructed with ``seed=s``
(:meth:`agents.base.PrivateAgent.reset`). ``privacy_spent`` covers the rewards since the last
reset; a user whose rewards enter several episodes composes their guarantees. A
:func:`copy.deepcopy` or pickle of an agent holds its streams' state and makes the same future
draws: never run a copy and the original on different data and release both.

Private state: ``seed``, ``_copy_seeds`` and the streams' states (``_streams``, and the samplers'
``_sampling``) are the curator's; they are not part of the agents' ``repr``.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from agents.base import PrivateAgent
from agents.common import philox as _philox
from agents.common.kernels import kernel_error
from bandit_envs._types import FloatArray, IntArray
from bandit_envs.privacy._checks import MAX_EPSILON, laplace_tail_delta
from bandit_envs.privacy._checks import check_epsilon as _check_epsilon
from bandit_envs.privacy.lattice import check_sampler, sum_grid

#: ε below this makes the noise scales overflow (or lose all meaning); above ``MAX_EPSILON`` the
#: bounded noise samplers break the stated guarantee (:data:`bandit_envs.privacy.MAX_EPSILON`).
EPSILON_RANGE = (1e-100, MAX_EPSILON)


_Array = TypeVar("_Array", bound=np.ndarray)


class CopiedState(Generic[_Array]):
    """A read-only attribute that returns a copy of one of the agent's state arrays (never a view).

    ``counts: CopiedState[IntArray] = CopiedState("_counts", "(B, K) pulls per arm.")`` reads as the
    property ``return self._counts.copy()`` with that docstring.
    """

    def __init__(self, name: str, doc: str) -> None:
        self._name = name
        self._public = name
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._public = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> CopiedState[_Array]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _Array: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj, self._name).copy()

    def __set__(self, obj: object, value: Any) -> None:
        """Refused, as for a property without a setter."""
        raise AttributeError(f"property {self._public!r} of {type(obj).__name__!r} object has no setter")


def check_epsilon(value: Any) -> float:
    """``epsilon`` as a float in :data:`EPSILON_RANGE` (one-sentence errors)."""
    return _check_epsilon("epsilon", value)  # the privacy package's check: [1e-100, MAX_EPSILON]


def _fresh_seed() -> int:
    """A seed from the operating system's entropy (numpy's 128-bit ``SeedSequence().entropy``)."""
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)
    return entropy


class StreamPrivateAgent(PrivateAgent):
    """A private agent with one noise stream per copy; rewards in [0, 1]; subclasses set the learning state.

    Subclasses implement ``_reset_learning`` (allocate the state), ``_choose(out)`` (the arms of
    round ``t + 1`` into ``out``, shape (B,)) and ``_learn(actions, rewards)`` (checked feedback
    of every copy). The round counter ``t`` (updates received) is shared by the copies.

    Every subclass takes the keyword arguments below, written here once (a subclass's Parameters
    section only names them).

    Other Parameters
    ----------------
    n_envs : int or None
        ``None`` for one env, or the number N of copies run in lock-step.
    seed : int or None
        Seed of copy 0's noise stream (copy i: seed + i).
    sampler : {"lattice", "float"}
        The agents with Laplace releases (:meth:`_set_sampler`). ``"lattice"`` (default): every
        release is ``snap(exact) + snap(noise)`` on the power-of-two grid :attr:`grid`
        (:mod:`bandit_envs.privacy.lattice`), its output set independent of the rewards, with the
        Laplace scales widened by ``1 + grid`` for the rounding; ``"float"``: raw floating-point
        noise, faster, **not safe against floating-point attacks** (Mironov 2012).
    """

    reward_bounds = (0.0, 1.0)
    reward_bounds_reason = "the privacy guarantee of {name} (the sensitivity of its releases) assumes it"
    privacy_unit: str = (
        "one round's reward r_t (event level: neighbouring reward sequences differ in one round's reward)"
    )
    _state_bytes_per_copy: ClassVar[int] = 8 * (_philox.STATE_WORDS + 4)

    epsilon: float
    #: ``"lattice"`` (default) or ``"float"``: how the released values are sampled (:meth:`_set_sampler`).
    sampler: str = "lattice"
    #: The lattice grid of the releases (0.0: the float sampler).
    _grid: float = 0.0
    _streams: npt.NDArray[np.uint64]
    _draws: IntArray
    _copy_seeds: list[int]
    _t: int

    def _set_sampler(self, sampler: str, release_epsilon: float) -> None:
        """Check ``sampler``; the lattice grid is ``sum_grid(1 / release_epsilon, 1)`` (rewards in [0, 1]).

        ``release_epsilon`` is the epsilon of one release of sensitivity 1 (a reward sum): the
        grid is about ``2**-20`` of its Laplace scale ``1 / release_epsilon``, and the agents widen
        every scale by ``1 + grid`` for the rounding (:mod:`bandit_envs.privacy.lattice`).
        """
        self.sampler = check_sampler(sampler)
        self._grid = 0.0 if self.sampler == "float" else sum_grid(1.0 / release_epsilon, 1.0)

    @property
    def grid(self) -> float:
        """The grid every released value is a multiple of (lattice sampler), 0.0 for the float sampler."""
        return self._grid

    def _reset_state(self) -> None:
        if self._noise_due():  # construction or reset(seed=s); reset() continues the streams
            first = self.seed if self.seed is not None else _fresh_seed()
            self._copy_seeds = [first + i for i in range(self.batch)]
            self._seed_streams()
        self._draws = np.zeros(self.batch, dtype=np.int64)
        self._t = 0
        #: One env's arm, action and reward as the kernels take them ((1,) arrays, rewritten every round).
        self._one_arm = np.zeros(1, dtype=np.int64)
        self._one_action, self._one_reward = np.zeros(1, dtype=np.int64), np.zeros(1)
        self._reset_learning()

    def _seed_streams(self) -> None:
        """Build every copy's streams from ``_copy_seeds``; a subclass with more streams (sampling) adds them."""
        self._streams = _philox.new_streams(self._copy_seeds)

    @abstractmethod
    def _reset_learning(self) -> None: ...

    @abstractmethod
    def _choose(self, out: IntArray) -> None: ...

    @abstractmethod
    def _learn(self, actions: IntArray, rewards: FloatArray) -> int:
        """Learn from every copy's feedback, checked first by the compiled kernel.

        Returns the first bad copy (action outside [0, K) or reward outside [0, 1]; then nothing
        is learnt), or -1.
        """
        ...

    @property
    def n_draws(self) -> int | IntArray:
        """Noise draws behind the releases so far (int for one env, (N,) per copy).

        Laplace draws of the central agents (one per release), randomized-response reports of
        :class:`agents.LDPThompsonSampling`; the samplers' Gaussian and Beta draws do not count.
        """
        return int(self._draws[0]) if self.n_envs is None else self._draws.copy()

    @property
    def t(self) -> int:
        """Rounds completed (updates received)."""
        return self._t

    def act(self, obs: Any = None) -> Any:
        """The arm of every copy for round ``t + 1``."""
        if obs is not None:
            self._check_obs(obs)
        if self.n_envs is None:  # one env: the kept (1,) array, returned as an int
            one = self._one_arm
            self._choose(one)
            return int(one[0])
        out = np.empty(self.n_envs, dtype=np.int64)
        self._choose(out)
        return out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the pulled arm's reward (in [0, 1]); side observations in ``info`` are ignored."""
        value = None if self.n_envs is not None else self._scalar_feedback(action, reward)
        if value is not None:  # one env's plain int and float that fit: written into the kept (1,) arrays
            if info is not None:
                self._check_info(info)
            a, r = self._one_action, self._one_reward
            a[0], r[0] = action, value
            try:
                bad = self._learn(a, r)
            finally:  # the raw reward is not kept: a local-DP agent's server must never hold it
                r[0] = 0.0
            if bad >= 0:
                raise kernel_error(self, np.array([action], dtype=np.int64), np.array([value]), bad)
            self._t += 1
            return
        a, r = self._feedback(action, reward, info, check_values=False)
        bad = self._learn(a, r)
        if bad >= 0:
            raise kernel_error(self, a, r, bad)
        self._t += 1

    def release_increment(self, n: int) -> tuple[int, float] | None:
        """How an arm's n-th release (after its n-th pull, n >= 1) adds noise, for an audit of the releases.

        ``(m, b)``: release(n) = release(m) + (the arm's rewards of its pulls m + 1 .. n) +
        Laplace(b), with release(0) = 0 and the Laplace draw independent of every other release's
        (a continual-release counter's fresh p-sum). Then the releases of one arm are a Laplace
        mechanism on its reward stream, and the privacy loss of its whole release stream between
        two neighbouring reward tables can be computed from the releases
        (:func:`agents.audit.events.release_loss`). ``None`` (the default): the agent's releases
        are not of this form (epochs released as means, randomized responses), so only its arm
        sequence can be audited.
        """
        return None

    @property
    def released_sums(self) -> FloatArray | None:
        """(B, K) each arm's last release as a noisy reward sum (0 before its first pull), or ``None``.

        ``None`` for an agent without :meth:`release_increment`. The releases are what the privacy
        guarantee is about (the arms are their post-processing); they are public.
        """
        return None

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ_s) under :attr:`privacy_unit` once any reward was received, else (0, 0).

        ε is the design's; δ_s the Laplace sampler's tail (:meth:`_tail_delta`), about
        ``3e-16`` at ε = 1 (:mod:`bandit_envs.privacy.lattice`).
        """
        return (self.epsilon, self._tail_delta()) if self._t > 0 else (0.0, 0.0)

    def _tail_delta(self) -> float:
        """δ of the bounded Laplace draws of the releases one reward enters: here one release at ε.

        :func:`~bandit_envs.privacy._checks.laplace_tail_delta`: a release lands where the
        neighbour's cannot with probability at most ``e**(ε − 36.04)/2``. Agents whose rewards
        enter several releases add them up.
        """
        return laplace_tail_delta(self.epsilon)

    def __repr__(self) -> str:  # without the seed: it regenerates the noise
        return f"{type(self).__name__}(n_arms={self.n_arms}, epsilon={self.epsilon}, n_envs={self.n_envs})"
