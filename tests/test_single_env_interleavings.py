"""Random interleavings of one-env calls: the one-env agent plays as the same agent with ``n_envs=1``.

The design rule (docs/design.md, "Agents", Seeds) makes copy 0 of ``Agent(..., n_envs=1, seed=s)``
play exactly as ``Agent(..., seed=s)``, whatever the user does between calls. The one-env paths are
hand-optimised (an ``update`` that already chooses the next arm, uniforms drawn ahead, draws made
ahead and unmade), so each test here drives a one-env agent and its batch-of-one twin through the
same seeded random sequence of operations, the ones a user or an env may make:

* a normal round (``act`` then ``update``), with the reward given as ``float``, ``np.float64``,
  ``np.float32``, ``int`` 0/1 or ``np.int64``, the action as ``int``, ``np.int64``, ``np.int32`` or a
  0-d array, and an ``info`` as the env gives it (``optimal_action``, and the side observations
  ``observed_mask`` / ``observed_rewards`` of shape (K,), (1, K) for the twin);
* reading the public views and properties, setting ``t`` to its own value where it is settable;
* a second ``act`` without an update, a second ``update`` without an act;
* a ``copy.deepcopy`` or a ``pickle`` round trip of the one-env agent (and now and then of the twin);
* ``reset()`` and ``reset(seed=k)`` of both;
* a refused update (NaN or infinite reward, an arm out of range, a reward outside ``reward_bounds``,
  a non-integer action, a bad ``info``), which must raise the same error class on both and change
  nothing (the views of a copy taken before it are those of a copy taken after it).

Both agents must choose the same arm every time both act. A second test starts with updates of
other arms than the agent's (one arm left unpulled past round K), which the agents that play every
arm once first must still play first.

The tests at the end keep the case these found: KL-UCB once stopped playing a never-pulled arm
first from round K + 1 on (it took every arm to be pulled by then), and its one-env agent and its
batch of one then parted.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from agents import (
    AAE,
    DPSE,
    DPTSUCB,
    GAP,
    GAPU,
    KLUCB,
    MOSS,
    UCB,
    UCBN,
    AdaPUCB,
    AlphaSample,
    DPThompsonSampling,
    EpsilonGreedy,
    Exp3,
    Exp3IX,
    Exp3SET,
    HybridDPUCB,
    LDPThompsonSampling,
    LDPWrapper,
    PrePullGaussianTS,
    Random,
    ThompsonSampling,
    TreeDPUCB,
)
from agents.base import Agent

K = 5
#: The path graph 0 - 1 - 2 - 3 - 4 (adjacency without self loops) and its closed neighbourhoods.
PATH = np.diag(np.ones(K - 1, dtype=bool), 1) | np.diag(np.ones(K - 1, dtype=bool), -1)
CLOSED = PATH | np.eye(K, dtype=bool)
#: The arms' mean rewards (gaps of 0.15, so that the elimination agents eliminate within a test).
ARM_MEANS = np.array([0.5, 0.35, 0.8, 0.2, 0.65])


@dataclass(frozen=True)
class Case:
    """An agent to fuzz: how to build it, what it reads from ``info`` and what it exposes."""

    make: Callable[[int | None], Agent]
    #: It learns from the side observations (``observed_mask`` and ``observed_rewards`` are required).
    side: bool = False
    #: Public views, properties and argument-free methods to read (and compare) between calls.
    views: tuple[str, ...] = ()
    #: Operations in the fuzz (the elimination agents' epochs are long: more rounds, fewer copies).
    n_ops: int = 400
    #: A normal round may be refused, identically by both (GAP refuses a round that leaves an arm short).
    rounds_may_be_refused: bool = False
    #: Rewards outside [0, 1] are given now and then (agents that take any finite reward).
    any_reward: bool = False


MEANS = ("sums", "means", "counts", "t")
EXP = ("probabilities", "loss_estimates", "eta", "t")
CASES: dict[str, Case] = {
    "UCB": Case(lambda n: UCB(K, n_envs=n, seed=3), views=MEANS, any_reward=True),
    "UCB-alpha": Case(lambda n: UCB(K, 0.5, n_envs=n, seed=3), views=MEANS, any_reward=True),
    "UCBN": Case(lambda n: UCBN(K, n_envs=n, seed=3), side=True, views=MEANS, any_reward=True),
    "KLUCB": Case(lambda n: KLUCB(K, n_envs=n, seed=3), views=(*MEANS, "indices")),
    "KLUCB-c3": Case(lambda n: KLUCB(K, 3.0, tol=1e-6, n_envs=n, seed=3), views=(*MEANS, "indices")),
    "MOSS": Case(lambda n: MOSS(K, 300, n_envs=n, seed=3), views=(*MEANS, "indices"), any_reward=True),
    "EpsilonGreedy": Case(
        lambda n: EpsilonGreedy(K, 0.3, n_envs=n, seed=4), views=(*MEANS, "current_epsilon"), any_reward=True
    ),
    "EpsilonGreedy-decaying": Case(
        lambda n: EpsilonGreedy(K, schedule="decaying", c=0.5, d=0.5, n_envs=n, seed=5),
        views=(*MEANS, "current_epsilon"),
        any_reward=True,
    ),
    "EpsilonGreedy-greedy": Case(lambda n: EpsilonGreedy(K, 0.0, n_envs=n, seed=4), views=MEANS, any_reward=True),
    "Exp3": Case(lambda n: Exp3(K, 300, n_envs=n, seed=6), views=EXP),
    "Exp3-anytime": Case(lambda n: Exp3(K, gamma=0.1, n_envs=n, seed=7), views=EXP),
    "Exp3-eta": Case(lambda n: Exp3(K, eta=0.3, n_envs=n, seed=7), views=EXP),
    "Exp3SET": Case(
        lambda n: Exp3SET(K, PATH, 300, n_envs=n, seed=8), side=True, views=(*EXP, "observation_probabilities")
    ),
    "Exp3IX": Case(
        lambda n: Exp3IX(K, PATH, n_envs=n, seed=9), side=True, views=(*EXP, "gamma", "observation_probabilities")
    ),
    "TS": Case(lambda n: ThompsonSampling(K, n_envs=n, seed=10), views=("successes", "failures", "copy_seeds")),
    "TS-N": Case(
        lambda n: ThompsonSampling(K, side_observations=True, n_envs=n, seed=11),
        side=True,
        views=("successes", "failures", "copy_seeds"),
    ),
    "Random": Case(lambda n: Random(K, n_envs=n, seed=12), any_reward=True),
    "HybridDPUCB": Case(
        lambda n: HybridDPUCB(K, 1.0, n_envs=n, seed=13),
        views=("counts", "released", "released_sums", "n_draws", "t", "privacy_spent"),
    ),
    "TreeDPUCB": Case(
        lambda n: TreeDPUCB(K, 200, 1.0, n_envs=n, seed=14),
        views=("counts", "released", "n_draws", "t", "privacy_spent"),
    ),
    "AdaPUCB": Case(lambda n: AdaPUCB(K, 1.0, n_envs=n, seed=15), views=("n_draws", "t", "privacy_spent")),
    "DPThompsonSampling": Case(
        lambda n: DPThompsonSampling(K, 1.0, n_envs=n, seed=16), views=("n_draws", "t", "privacy_spent")
    ),
    "PrePullGaussianTS": Case(
        lambda n: PrePullGaussianTS(K, 2, n_envs=n, seed=17), views=("n_draws", "t", "privacy_spent"), n_ops=250
    ),
    "DPTSUCB": Case(lambda n: DPTSUCB(K, 300, n_envs=n, seed=18), views=("n_draws", "t", "privacy_spent"), n_ops=250),
    "LDPThompsonSampling": Case(
        lambda n: LDPThompsonSampling(K, 1.0, n_envs=n, seed=19),
        views=("successes", "failures", "n_draws", "t", "privacy_spent"),
    ),
    "LDPWrapper-EpsilonGreedy": Case(
        lambda n: LDPWrapper(EpsilonGreedy(K, 0.3, n_envs=n, seed=20), "laplace", 1.0, seed=1000),
        views=("privacy_spent",),
        any_reward=True,
    ),
    "LDPWrapper-TS": Case(
        lambda n: LDPWrapper(ThompsonSampling(K, n_envs=n, seed=21), "randomized_response", 1.0, seed=2000),
        views=("privacy_spent",),
    ),
    "LDPWrapper-Exp3": Case(
        lambda n: LDPWrapper(Exp3(K, 300, n_envs=n, seed=22), "randomized_response", 1.0, seed=3000),
        views=("privacy_spent",),
    ),
    "GAP": Case(
        lambda n: GAP(K, 100_000, 1.0, PATH, delta=0.9, n_envs=n, seed=23),
        side=True,
        views=("active", "epoch_length", "independent_set", "privacy_spent"),
        n_ops=4000,
        rounds_may_be_refused=True,
    ),
    "GAPU": Case(
        lambda n: GAPU(K, 100_000, 1.0, PATH, delta=0.9, n_envs=n, seed=24),
        side=True,
        views=("active", "epoch_length", "independent_set", "privacy_spent"),
        n_ops=4000,
        rounds_may_be_refused=True,
    ),
    "DPSE": Case(
        lambda n: DPSE(K, 100_000, 1.0, schedule_scale=0.01, width_scale=0.1, n_envs=n, seed=25),
        views=("active", "epoch_repetitions", "privacy_spent"),
        n_ops=1200,
    ),
    "AAE": Case(lambda n: AAE(K, 2000, 0.5, radius="hoeffding", n_envs=n, seed=26), views=("active",), n_ops=1500),
    "AAE-N": Case(
        lambda n: AAE(K, 2000, 0.5, radius="hoeffding", side_observations=True, n_envs=n, seed=26),
        side=True,
        views=("active",),
        n_ops=1000,
    ),
    "AlphaSample": Case(
        lambda n: AlphaSample(K, 2000, coeff=0.05, n_envs=n, seed=27), side=True, views=("active",), n_ops=800
    ),
}

# --- feedback in the forms a user or an env gives it ----------------------------------------------

#: How the one-env agent gets the reward r (the twin gets ``np.array([float(given)])``): int kinds
#: are given only for 0/1 rewards.
FLOAT_KINDS: list[Callable[[float], Any]] = [float, float, np.float64, np.float32, np.array, Fraction]
INT_KINDS: list[Callable[[float], Any]] = [int, np.int64, np.int32, np.uint8]
#: How the one-env agent gets the arm (the twin gets ``np.array([action])``).
ACTION_KINDS: list[Callable[[int], Any]] = [
    int,
    int,
    np.int64,
    np.int32,
    np.uint64,
    np.int8,
    np.array,
    lambda a: np.array(a, dtype=np.int32),
]


def twin_action(action: Any) -> np.ndarray:
    """The twin's batch of one for the one-env ``action`` (same dtype: a float or bool stays refused)."""
    return np.array([action])  # a 0-d array gives shape (1,), a (1,) array the refused shape (1, 1)


def twin_reward(reward: Any) -> np.ndarray:
    """The twin's batch of one for the one-env ``reward``: float64 for any real number, else as given."""
    if isinstance(reward, np.ndarray):  # 0-d: its value as float64; (1,): the refused shape (1, 1)
        return np.array([float(reward)]) if reward.shape == () and reward.dtype.kind in "iuf" else np.array([reward])
    if isinstance(reward, bool | np.bool_) or not isinstance(reward, int | float | np.integer | np.floating | Fraction):
        return np.array([reward])
    try:
        return np.array([float(reward)])
    except OverflowError:  # an int beyond the floats: refused as not finite, as one env refuses it
        return np.array([math.inf])


def twin_info(info: Any) -> Any:
    """The env's info of the batch of one: per-arm arrays and lists get the batch axis, numbers become (1,) arrays."""
    if not isinstance(info, dict):
        return info
    out: dict[str, Any] = {}
    for key, value in info.items():
        if isinstance(value, np.ndarray):
            out[key] = value[None]
        else:
            out[key] = [value] if isinstance(value, list) else np.array([value])
    return out


def env_round(rng: np.random.Generator, case: Case, action: int) -> tuple[float, dict[str, Any] | None]:
    """A reward for ``action`` and the env's info (GraphBandit-v0's keys), or no info."""
    binary = rng.random() < 0.5
    if binary:
        row = (rng.random(K) < ARM_MEANS).astype(np.float64)
    else:
        row = np.clip(ARM_MEANS + rng.uniform(-0.2, 0.2, K), 0.0, 1.0)
    if case.any_reward and not binary and rng.random() < 0.2:
        row = rng.uniform(-2.0, 3.0, K)
    info: dict[str, Any] | None = None
    if case.side or rng.random() < 0.5:
        info = {"optimal_action": int(rng.integers(K)) if rng.random() < 0.5 else np.int64(rng.integers(K))}
        info["regret"] = float(rng.random())
        info["expected_reward"] = float(rng.random())
        if case.side or rng.random() < 0.5:  # the graph env's side observations: others ignore them
            mask = CLOSED[action].copy()
            info["observed_mask"] = mask
            info["observed_rewards"] = np.where(mask, row, 0.0)
    return float(row[action]), info


def given_reward(rng: np.random.Generator, reward: float) -> Any:
    """``reward`` in one of the forms a user gives it (an int kind only for 0 and 1)."""
    if reward in (0.0, 1.0) and rng.random() < 0.5:
        return INT_KINDS[int(rng.integers(len(INT_KINDS)))](reward)
    kind = FLOAT_KINDS[int(rng.integers(len(FLOAT_KINDS)))]
    return kind(reward)


def given_action(rng: np.random.Generator, action: int) -> Any:
    return ACTION_KINDS[int(rng.integers(len(ACTION_KINDS)))](action)


# --- the twin pair ------------------------------------------------------------------------------


def outcome(call: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """("ok", value) or ("raised", the error class) of ``call(*args)`` (TypeError and ValueError only)."""
    try:
        return "ok", call(*args)
    except (TypeError, ValueError) as error:
        return "raised", type(error)


def read(agent: Agent, name: str) -> np.ndarray:
    """The view ``name`` of ``agent`` (a method is called), flattened for comparison with the twin's."""
    value = getattr(agent, name)
    if callable(value):
        value = value()
    if isinstance(value, tuple | list) and value and isinstance(value[0], list):  # GAP's independent sets
        value = np.array(value[0])
    return np.ravel(np.asarray(value, dtype=np.float64))


def t_settable(agent: Agent) -> bool:
    """Whether ``t`` can be assigned (a property with a setter, or a plain attribute)."""
    prop = getattr(type(agent), "t", None)
    if isinstance(prop, property):
        return prop.fset is not None
    return "t" in vars(agent)


def bad_feedback(agent: Agent, action: int, side: bool) -> list[tuple[Any, Any, Any]]:
    """Updates every agent must refuse (raise, changing nothing), for an otherwise valid ``action``."""
    bad: list[tuple[Any, Any, Any]] = [
        (action, math.nan, None),
        (action, np.float64(math.nan), None),
        (action, np.float32(math.nan), None),
        (action, math.inf, None),
        (action, -math.inf, None),
        (K, 0.5, None),
        (-1, 0.5, None),
        (np.int64(K), 0.5, None),
        (np.int32(-1), 0.5, None),
        (np.array(K), 0.5, None),
        (2**70, 0.5, None),
        (True, 0.5, None),
        (float(action), 0.5, None),
        (str(action), 0.5, None),
        (action, "0.5", None),
        (action, None, None),
        (action, True, None),
        (action, 0.5, {"optimal_action": K}),
        (action, 0.5, {"optimal_action": np.int64(K)}),
        (action, 0.5, {"observed_mask": np.ones(K + 1, dtype=bool), "observed_rewards": np.zeros(K + 1)}),
        (action, 10**400, None),
        (action, np.array([0.5]), None),  # a batch's shape (the twin gets (1, 1)): refused as an other kind
        (np.array([action]), 0.5, None),
        (action, 0.5, [("optimal_action", 0)]),
    ]
    if side:  # a revealed reward that is not a number, or that is outside the bounds
        mask = CLOSED[action].copy()
        nan = np.where(mask, 0.5, 0.0)
        nan[(action + 1) % K if mask[(action + 1) % K] else action] = math.nan
        bad.append((action, 0.5, {"observed_mask": mask, "observed_rewards": nan}))
        bad.append((action, 0.5, {"observed_mask": mask.astype(np.float64), "observed_rewards": np.zeros(K)}))
        if agent.reward_bounds is not None:
            beyond = 1.5 if agent.reward_bounds == (0.0, 1.0) else 2.0 * agent.reward_bounds[1]
            bad.append((action, 0.5, {"observed_mask": mask, "observed_rewards": np.where(mask, beyond, 0.0)}))
    if agent.reward_bounds == (0.0, 1.0):
        bad += [(action, 1.5, None), (action, -0.1, None), (action, 2, None), (action, np.int64(-1), None)]
        bad += [(action, np.float32(1.25), None), (action, np.nextafter(1.0, 2.0), None)]
    elif agent.reward_bounds is not None:  # the summing agents' [-1e289, 1e289]
        low, high = agent.reward_bounds
        bad += [(action, 2.0 * high, None), (action, 2.0 * low, None), (action, np.nextafter(high, math.inf), None)]
        bad += [(action, 10**300, None), (action, np.float64(1e308), None)]
    return bad


def odd_feedback(rng: np.random.Generator, case: Case, action: int) -> tuple[Any, Any, Any, Callable[[Any], Any]]:
    """Feedback in an unusual form, which both must take alike (learn from, or refuse).

    Returns the action, the reward, the info and how the twin's info is made of it.
    """
    reward, info = env_round(rng, case, action)
    full = info is not None and "observed_mask" in info
    which = int(rng.integers(10))
    if which == 0 and info is not None:  # a read-only mapping, not a dict: the checked path
        return action, reward, MappingProxyType(info), lambda i: MappingProxyType(twin_info(dict(i)))
    if which == 1 and full:  # the mask as integers 0 and 1
        assert info is not None
        info["observed_mask"] = info["observed_mask"].astype(np.int64)
    elif which == 2 and full:  # not finite where not observed: not read
        assert info is not None
        info["observed_rewards"] = np.where(info["observed_mask"], info["observed_rewards"], math.nan)
    elif which == 3 and full:  # not finite where observed (an agent without side observations may ignore it)
        assert info is not None
        other = [k for k in np.flatnonzero(info["observed_mask"]) if k != action]
        info["observed_rewards"][other[0] if other else action] = math.nan
    elif which == 4:
        info = dict(info or {}, optimal_action=np.int32(rng.integers(K)), user_id=int(rng.integers(3)))
    elif which == 5:
        return action, np.float16(reward), info, twin_info
    elif which == 6 and case.side:  # the side observations missing
        info = {"optimal_action": 0}
    elif which == 7 and full:  # strided views of a larger array, as an env may hand out rows
        assert info is not None
        info["observed_mask"] = np.repeat(info["observed_mask"], 2)[::2]
        info["observed_rewards"] = np.repeat(info["observed_rewards"], 2)[::2]
    elif which == 8 and full:  # float32 revealed rewards
        assert info is not None
        info["observed_rewards"] = info["observed_rewards"].astype(np.float32)
    elif which == 9 and full:  # lists, not arrays
        assert info is not None
        lists = {key: info[key].tolist() for key in ("observed_mask", "observed_rewards")}
        info.update(lists)
    return action, reward, info, twin_info


class Twins:
    """A one-env agent and its batch of one, driven alike; every act of both must choose the same arm."""

    def __init__(self, case: Case, seed: int) -> None:
        self.case = case
        self.single = case.make(None)
        self.batch = case.make(1)
        self.rng = np.random.default_rng(seed)
        self.last = 0  # the arm of the last act (what a second update feeds back)
        self.log: list[str] = []

    def where(self) -> str:
        return " / ".join(self.log[-12:])

    def act(self) -> int:
        if self.rng.random() < 0.3:  # the env's observation (GraphBandit-v0's is 0)
            a, b = self.single.act(0), self.batch.act(np.zeros(1, dtype=np.int64))
        else:
            a, b = self.single.act(), self.batch.act()
        assert type(a) is int, (type(a), self.where())
        assert isinstance(b, np.ndarray) and b.shape == (1,), (b, self.where())
        assert a == int(b[0]), f"one env chose {a}, the batch of one {int(b[0])}, after: {self.where()}"
        self.last = a
        return a

    def update(self, action: int) -> None:
        reward, info = env_round(self.rng, self.case, action)
        given = given_reward(self.rng, reward)
        act_given = given_action(self.rng, action)
        self.log.append(f"update({act_given!r}, {given!r}, {sorted(info) if info else None})")
        one = outcome(lambda: self.single.update(act_given, given, info))
        other = outcome(lambda: self.batch.update(twin_action(act_given), twin_reward(given), twin_info(info)))
        assert one[0] == other[0] and (one[0] == "ok" or one[1] is other[1]), (one, other, self.where())
        if not (self.case.rounds_may_be_refused or one[0] == "ok"):
            raise AssertionError(f"a valid update was refused ({one[1]}) after: {self.where()}")

    def views(self) -> None:
        self.log.append("views")
        for name in self.case.views:
            np.testing.assert_array_equal(read(self.single, name), read(self.batch, name), err_msg=name)

    def set_t(self) -> None:
        if t_settable(self.single):
            self.log.append("t = t")
            self.single.t = self.single.t  # type: ignore[attr-defined]
            self.batch.t = self.batch.t  # type: ignore[attr-defined]

    def copy_single(self) -> None:
        how = int(self.rng.integers(4))
        self.log.append(["deepcopy", "pickle", "deepcopy of both", "fork"][how])
        if how == 1:
            self.single = pickle.loads(pickle.dumps(self.single))
        elif how == 3 and hasattr(self.single, "fork"):  # the elimination agents' cheap copy
            self.single = self.single.fork()
        else:
            self.single = copy.deepcopy(self.single)
        if how == 2:
            self.batch = pickle.loads(pickle.dumps(self.batch))

    def reset(self) -> None:
        if self.rng.random() < 0.5:
            self.log.append("reset()")
            self.single.reset()
            self.batch.reset()
        else:
            seed = int(self.rng.integers(50, 60))
            self.log.append(f"reset(seed={seed})")
            self.single.reset(seed=seed)
            self.batch.reset(seed=seed)

    def refused(self) -> None:
        """A bad update: both raise the same error class, and a copy taken before has the views of one taken after."""
        options = bad_feedback(self.single, self.last, self.case.side)
        action, reward, info = options[int(self.rng.integers(len(options)))]
        self.log.append(f"refused update({action!r}, {reward!r}, {info})")
        self.unusual(action, reward, info, twin_info, must_refuse=True)

    def odd(self) -> None:
        """Feedback in an unusual form: both learn from it, or both refuse it (then changing nothing)."""
        action, reward, info, to_twin = odd_feedback(self.rng, self.case, self.last)
        self.log.append(f"odd update({action!r}, {reward!r}, {info})")
        self.unusual(action, reward, info, to_twin, must_refuse=False)

    def unusual(self, action: Any, reward: Any, info: Any, to_twin: Callable[[Any], Any], must_refuse: bool) -> None:
        before = copy.deepcopy(self.single), copy.deepcopy(self.batch)
        one = outcome(lambda: self.single.update(action, reward, info))
        other = outcome(lambda: self.batch.update(twin_action(action), twin_reward(reward), to_twin(info)))
        assert one[0] == "raised" or not must_refuse, (one, self.where())
        # A wrong shape is a ValueError for a batch, a TypeError (not a number) for one env.
        same_kind = one[1] is other[1] or (isinstance(action, np.ndarray) or isinstance(reward, np.ndarray))
        assert one[0] == other[0] and (one[0] == "ok" or same_kind), (one, other, self.where())
        if one[0] == "ok":
            return
        after = copy.deepcopy(self.single), copy.deepcopy(self.batch)
        for old, new in zip(before, after, strict=True):
            for name in self.case.views:
                np.testing.assert_array_equal(read(old, name), read(new, name), err_msg=f"{name} {self.where()}")
            if hasattr(old, "t"):
                assert old.t == new.t  # type: ignore[attr-defined]
            # nothing drawn either: the agent plays on as the copy taken before
            assert self.future(old) == self.future(new), f"the refused update changed the agent: {self.where()}"

    def future(self, agent: Agent) -> list[Any]:
        """The arms a copy of ``agent`` plays in a few rounds of fixed feedback (one env or a batch of one)."""
        agent = copy.deepcopy(agent)
        rng = np.random.default_rng(99)
        arms: list[Any] = []
        for _ in range(6):
            arm = agent.act()
            arm = arm if agent.n_envs is None else int(arm[0])
            reward, info = env_round(rng, self.case, arm)
            if agent.n_envs is None:
                arms.append((arm, outcome(agent.update, arm, reward, info)[0]))
            else:
                arms.append((arm, outcome(agent.update, np.array([arm]), np.array([reward]), twin_info(info))[0]))
        return arms

    def fuzz(self, n_ops: int) -> None:
        ops: list[tuple[float, Callable[[], Any]]] = [
            (0.45, lambda: self.update(self.act())),
            (0.08, self.act),  # an act without an update (the next round's act then comes on top)
            (0.08, lambda: self.update(self.last)),  # an update without an act
            (0.05, lambda: self.update(int(self.rng.integers(K)))),  # another arm than the agent chose
            (0.08, self.views),
            (0.05, self.set_t),
            (0.10, self.copy_single),
            (min(0.02, 4.0 / n_ops), self.reset),  # a few per run: the elimination agents' epochs are long
            (0.09, self.refused),
            (0.04, self.odd),
        ]
        weights = np.array([w for w, _ in ops])
        choices = self.rng.choice(len(ops), size=n_ops, p=weights / weights.sum())
        for i in choices:
            ops[int(i)][1]()
        for _ in range(20):  # and the two still play alike
            self.update(self.act())


#: Every agent's first sequence in the default run; its second behind the slow marker.
FUZZ = [
    pytest.param(name, seed, id=f"{name}-{seed}", marks=pytest.mark.slow if seed else ())
    for name in sorted(CASES)
    for seed in (0, 1)
]
#: Seeds whose interleavings leave an arm of KL-UCB unpulled after K updates (see the tests at the end).
FUZZ += [pytest.param(name, seed, id=f"{name}-{seed}") for name, seed in (("KLUCB", 15), ("KLUCB-c3", 13))]


@pytest.mark.parametrize(("name", "seed"), FUZZ)
def test_random_interleavings_play_as_the_batch_of_one(name: str, seed: int) -> None:
    case = CASES[name]
    Twins(case, seed).fuzz(case.n_ops)


@pytest.mark.parametrize("name", sorted(CASES))
def test_feedback_of_other_arms_from_the_start_plays_as_the_batch_of_one(name: str) -> None:
    """Updates without act from the first round, of other arms than the agent's (one left unpulled), then the fuzz.

    The index agents and ε-greedy, which play every arm once first, must then play the unpulled arm.
    """
    case = CASES[name]
    twins = Twins(case, 7)
    for arm in [0, 1, 0, 2, 1, 0, 3, 2][: K + 2]:  # arm K - 1 never pulled, more than K rounds
        twins.update(arm)
    arm = twins.act()
    if name.split("-")[0] in ("UCB", "KLUCB", "MOSS", "EpsilonGreedy"):
        assert arm == K - 1
    twins.fuzz(min(case.n_ops, 150))


def test_klucb_one_env_and_batch_of_one_agree_after_updates_without_act() -> None:
    one, batch = KLUCB(3), KLUCB(3, n_envs=1)
    for arm, reward in [(0, 0.5), (1, 0.5), (0, 1.0), (1, 0.0)]:  # arm 2 never pulled, no act in between
        one.update(arm, reward)
        batch.update(np.array([arm]), np.array([reward]))
    assert one.act() == int(batch.act()[0])


@pytest.mark.parametrize("n_envs", [None, 1, 3])
def test_klucb_plays_an_arm_never_pulled_first_whatever_the_updates(n_envs: int | None) -> None:
    agent = KLUCB(3, n_envs=n_envs)
    for arm, reward in [(0, 0.0), (1, 1.0), (1, 0.0)]:  # t = 3 = K, arm 2 never pulled
        agent.act()
        agent.update(
            arm if n_envs is None else np.full(n_envs, arm), reward if n_envs is None else np.full(n_envs, reward)
        )
    assert np.isinf(agent.indices()[0, 2])  # its index is infinite: the docstring's "first arm never pulled"
    assert np.all(agent.act() == 2)


@pytest.mark.parametrize("n_envs", [None, 1, 3])
def test_klucb_plays_an_arm_whose_count_was_set_to_zero_first(n_envs: int | None) -> None:
    """A count written to 0 through the ``counts`` view makes its arm one never pulled: KL-UCB's kept decisions
    (made when every arm had been pulled) must not skip it."""
    agent = KLUCB(3, n_envs=n_envs)
    rng = np.random.default_rng(0)
    for _ in range(200):
        arm = agent.act()
        agent.update(arm, (rng.random(np.shape(arm)) < 0.3 + 0.3 * np.asarray(arm)).astype(float) * 1.0)
    assert np.all(agent.act() == 2)  # the best arm, by a kept decision
    agent.counts[:, 2] = 0
    assert np.all(agent.act() == 2) and np.all(agent.act() == 2)
    agent.counts[:, 1] = 0
    assert np.all(agent.act() == 1)


@pytest.mark.parametrize("n_envs", [None, 3])
def test_klucb_chooses_from_means_written_through_the_views(n_envs: int | None) -> None:
    """KL-UCB's anchors and kept decisions bound the indices of the means they were made at: after a mean is
    written through ``means`` (and ``sums`` to match), the next choice is the argmax of the indices as they are."""
    for trial in range(8):
        agent = KLUCB(4, n_envs=n_envs)
        rng = np.random.default_rng(trial)
        for _ in range(300):
            arm = agent.act()
            agent.update(arm, (rng.random(np.shape(arm)) < 0.2 + 0.2 * np.asarray(arm)).astype(float) * 1.0)
        for _ in range(3):
            k = int(rng.integers(0, 4))
            means = agent.means
            means[:, k] = np.clip(means[:, k] + rng.uniform(-0.3, 0.3), 0.0, 1.0)
            agent.sums[:, k] = agent.means[:, k] * agent.counts[:, k]
            expected = agent.indices().argmax(axis=1)
            np.testing.assert_array_equal(np.atleast_1d(agent.act()), expected, err_msg=f"trial {trial}")
            arm = agent.act()
            agent.update(arm, (rng.random(np.shape(arm)) < 0.5).astype(float) * 1.0)


@pytest.mark.parametrize("n_envs", [None, 3])
def test_moss_chooses_from_means_and_counts_written_through_the_views(n_envs: int | None) -> None:
    """MOSS keeps each arm's index, made when the arm is pulled: a mean or count written through the views must
    be in the next choice, as the index B_k = mean + sqrt(max(ln(T / (K N)), 0) / N) of the values as they are."""
    horizon, k_arms = 2000, 4
    for trial in range(8):
        agent = MOSS(k_arms, horizon, n_envs=n_envs)
        rng = np.random.default_rng(trial)
        for _ in range(200):
            arm = agent.act()
            agent.update(arm, (rng.random(np.shape(arm)) < 0.2 + 0.2 * np.asarray(arm)).astype(float) * 1.0)
        for _ in range(3):
            k = int(rng.integers(0, k_arms))
            agent.means[:, k] = agent.means[:, k] + rng.uniform(-0.3, 0.3)
            agent.counts[:, k] = agent.counts[:, k] + int(rng.integers(-5, 20))
            means, counts = agent.means.copy(), agent.counts.copy()
            bonus = np.sqrt(np.maximum(np.log(horizon / k_arms / counts), 0.0) / counts)
            np.testing.assert_array_equal(
                np.atleast_1d(agent.act()), (means + bonus).argmax(axis=1), err_msg=f"trial {trial}"
            )
            arm = agent.act()
            agent.update(arm, (rng.random(np.shape(arm)) < 0.5).astype(float) * 1.0)
