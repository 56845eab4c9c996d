"""Random interleavings of the contextual agents' calls: LinUCB, LDP-LinUCB, LDP-OLS, Shuffle-LinUCB, SM-UCB, FixedArm.

``tests/test_single_env_interleavings.py`` and ``tests/test_batch_interleavings.py`` fuzz the index,
elimination and DP agents; these take an observation that matters (a feature matrix per round, or
SM-UCB's sensitivity φ_t), so they get a fuzzer of their own. Each sequence is drawn from a seeded
``numpy.random.default_rng`` and checks what the docstrings state:

* **Step API against a reference and the fast path** (``test_single_env_interleavings``). A
  *subject* goes through the operations below, a *reference* built alike only plays plain rounds
  (``act`` of a fresh C-ordered float64 matrix, ``update`` with ``int`` and ``float``), and both
  must choose the same arm every round and end with the same θ, round count, clip and floor
  counts and per-user privacy (``privacy_spent``, ``max_user_reports``, ``privacy_per_user()``).
  For the linear agents a third agent plays the same rounds through ``run`` in blocks of random
  length (with the rounds' ``users``), which ``LinearAgent.run`` / ``StatsAgent`` document to choose
  the same actions with the same draws as the step API; a round whose update is of an other arm
  than the agent's is played through the step API by that agent too.
* **Batches** (``test_batch_interleavings``): copy i of a batch of N = 3 seeded s chooses as the
  one-env agent seeded s + i fed copy i's part (docs/design.md, "Agents", Seeds; the linear base's
  docstring for the noise), and its θ, counts and per-copy accounting are single i's.
* Operations that must change nothing (the subject's, or the batch's): reading the public views and
  properties (which flushes the per-user report counts kept in bulk); a second ``act`` on the same
  matrix before the update (``act`` only scores the candidates, so it returns the same arm), an
  ``act`` on an other matrix first (the last ``act``'s observation is the one reported); the
  observation as float32 (of values exact in float32), F-ordered, strided, read-only or a nested
  list; the action as ``np.int64``/``np.int32``/0-d array, the reward as ``np.float64``/``np.float32``
  /0-d array (values exact in float32), ``info`` with the env's other keys or none; writing into the
  array ``act`` returns (batches); ``copy.deepcopy`` or a ``pickle`` round trip, also between ``act``
  and ``update``; and refused calls (observations of the wrong shape, not finite, not real;
  actions out of range or not integers; rewards not finite or outside ``reward_bounds``; a bad
  ``info``; an update without an ``act``), which must raise a one-sentence ``ValueError`` or
  ``TypeError`` (``RuntimeError`` for the update without ``act``, as ``LinearAgent.update`` says),
  leave the state (generators, server and open-batch buffers, counters, the pending observation) as
  it was, and let the round be reported after all.

The comparisons are exact: same process, same kernels, same draws.

Not fuzzed: writing into the observation array between ``act`` and ``update``. ``act`` documents only that the
observation "is kept for update"; a C-ordered float64 matrix is kept as it is (so the report then reads the new
values), any other form as a converted copy.

Found by the fuzz, fixed, and kept at the end as minimal repros: a ``copy.deepcopy`` or ``pickle`` of LinUCB or
LDP-LinUCB stepped through copies of its server's arrays, detached from the copy's server, so that it learned
nothing through the checked path (one env) or nothing its ``theta`` showed (batch).
"""

from __future__ import annotations

import copy
import math
import pickle
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from fractions import Fraction
from operator import attrgetter
from typing import Any

import numpy as np
import pytest

from agents import LDPOLS, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.base import Agent
from agents.budget.smucb import SMUCB, FixedArm

D = 3  #: features per arm
K = 4  #: arms
N = 3  #: copies of a batch


@dataclass(frozen=True)
class Case:
    """An agent to fuzz: ``make(n_envs, seed)``, what it observes and what it exposes."""

    make: Callable[[int | None, int], Agent]
    #: "linear": a (K, D) feature matrix; "phi": SM-UCB's sensitivity; "none": no observation (FixedArm).
    obs: str = "linear"
    #: Public views, properties and argument-free methods compared between agents.
    views: tuple[str, ...] = ()
    #: Its ``run`` plays rounds as the step API does ("users": it takes the rounds' users).
    run: str | None = None
    #: Rewards are drawn from [-1.5, 1.5] (the private agents clip them at l_y), else from [0, 1].
    wide_rewards: bool = True
    #: An ``update`` without an ``act`` is refused (RuntimeError), as the linear agents document.
    needs_act: bool = True
    #: A batch's copies share a round counter that advances when any copy reports (LDP-LinUCB's class
    #: docstring, per-user cap): a capped copy then parts from its single, so the batch fuzz gives new users.
    shared_counter: bool = False
    #: Features beyond this bound are refused (LinUCB's ``feature_bound``).
    feature_bound: float | None = None

    @property
    def private(self) -> bool:
        """It accounts for its users' privacy (the local-DP linear agents)."""
        return "privacy_spent" in self.views


LINEAR = ("theta", "t", "n_eig_floor")
PRIVATE = (
    *LINEAR,
    "privacy_spent",
    "max_user_reports",
    "n_clipped_features",
    "n_clipped_rewards",
    "privacy_per_user",
)
STATS = (*PRIVATE, "open_batch.count")
CASES: dict[str, Case] = {
    "LinUCB": Case(lambda n, s: LinUCB(D, 0.7, n_envs=n, seed=s), views=LINEAR, run="plain", feature_bound=1e100),
    "LinUCB-greedy": Case(
        lambda n, s: LinUCB(D, 0.0, reg=0.5, n_envs=n, seed=s), views=LINEAR, run="plain", feature_bound=1e100
    ),
    "LDPLinUCB": Case(
        lambda n, s: LDPLinUCB(D, 2.0, horizon=400, n_envs=n, seed=s), views=(*PRIVATE, "n_withheld"), run="users"
    ),
    "LDPLinUCB-quadratic": Case(
        lambda n, s: LDPLinUCB(D, 4.0, horizon=400, l_x=0.6, l_y=0.4, bonus="quadratic", n_envs=n, seed=s),
        views=(*PRIVATE, "n_withheld"),
        run="users",
    ),
    "LDPLinUCB-capped": Case(  # withheld reports: the step API only (run refuses blocks past the cap)
        lambda n, s: LDPLinUCB(D, 2.0, horizon=400, max_reports_per_user=5, n_envs=n, seed=s),
        views=(*PRIVATE, "n_withheld"),
        shared_counter=True,
    ),
    "LDPOLS-gaussian": Case(lambda n, s: LDPOLS(D, 2.0, batch_size=4, n_envs=n, seed=s), views=STATS, run="users"),
    "LDPOLS-l2_ball": Case(
        lambda n, s: LDPOLS(D, 2.0, mechanism="l2_ball", l_x=0.8, width=0.3, batch_size=3, n_envs=n, seed=s),
        views=STATS,
        run="users",
    ),
    "ShuffleLinUCB": Case(
        lambda n, s: ShuffleLinUCB(D, 1.0, batch_size=5, width=0.4, n_envs=n, seed=s),
        views=(*STATS, "privacy_per_user_central"),
        run="users",
    ),
    "SMUCB": Case(
        lambda n, s: SMUCB(K, 0.3, 0.2, n_envs=n, seed=s),
        obs="phi",
        views=("sums", "counts", "means", "t"),
        wide_rewards=False,
        needs_act=False,
    ),
    "SMUCB-wide": Case(  # a wide index and a strong sensitivity bonus: the choices move with every term
        lambda n, s: SMUCB(K, 2.0, 1.0, n_envs=n, seed=s),
        obs="phi",
        views=("sums", "counts", "means", "t"),
        wide_rewards=False,
        needs_act=False,
    ),
    "FixedArm": Case(lambda n, s: FixedArm(K, 2, n_envs=n, seed=s), obs="none", wide_rewards=False, needs_act=False),
}

# --- values --------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """``value`` as nested Python values for an exact comparison (dataclasses by field, arrays as lists)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, np.ndarray):
        return (value.dtype.kind, value.tolist())
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def read(agent: Agent, name: str) -> Any:
    value = attrgetter(name)(agent)
    return plain(value() if callable(value) else value)


#: Views compared only at the end of a sequence: each composes the busiest user's reports with ``dp_accounting``
#: (0.1 s for each new report count); between, ``max_user_reports``, of which they are functions, is compared.
COSTLY = ("privacy_spent", "privacy_per_user", "privacy_per_user_central")


def views(agent: Agent, case: Case, final: bool = False) -> dict[str, Any]:
    return {name: read(agent, name) for name in case.views if final or name not in COSTLY}


def fingerprint(agent: Agent) -> list[Any]:
    """What a refused call must leave as it was: generators, buffers, counters, the pending observation."""
    state = vars(agent)
    parts: list[Any] = [agent.rng.bit_generator.state]
    parts += [g.bit_generator.state for g in state.get("_copy_rngs", ())]
    server = state.get("server")
    if server is not None:
        parts += [server.t, server.buffer.tolist(), server.n_eig_floor.tolist()]
    batch = state.get("open_batch")
    if batch is not None:
        parts += [batch.count, batch.buffer.tolist()]
    for name in ("_clips", "sums", "counts", "_last_obs"):
        value = state.get(name)
        parts.append(None if value is None else np.asarray(value).tolist())
    if "t" in state:
        parts.append(state["t"])
    return parts


def one_sentence(error: BaseException) -> None:
    """A refusal says what is wrong in one sentence (no traceback text, no second sentence)."""
    message = str(error)
    assert message and "\n" not in message, repr(message)
    assert message.rstrip(")").endswith("."), repr(message)
    assert not re.search(r"\.\s+[A-Z]", message[:-1]), f"more than one sentence: {message!r}"


def features(rng: np.random.Generator, lead: tuple[int, ...] = ()) -> np.ndarray:
    """A feature matrix of multiples of 1/32 in [-1, 1] (exact in float32)."""
    return rng.integers(-32, 33, size=(*lead, K, D)) / 32.0


def sensitivity(rng: np.random.Generator, n: int | None = None) -> Any:
    """φ_t: multiples of 1/16 in [0, 1] (exact in float32), a float or (n,)."""
    return float(rng.integers(0, 17) / 16.0) if n is None else rng.integers(0, 17, size=n) / 16.0


def reward(rng: np.random.Generator, case: Case, n: int | None = None) -> Any:
    """Multiples of 1/64 (exact in float32); 0/1 now and then."""
    size = () if n is None else (n,)
    if rng.random() < 0.3:
        values = rng.integers(0, 2, size=size).astype(np.float64)
    else:
        low, high = (-96, 97) if case.wide_rewards else (0, 65)
        values = rng.integers(low, high, size=size) / 64.0
    return float(values) if n is None else values


def obs_forms(rng: np.random.Generator, obs: Any) -> Any:
    """``obs`` (a float64 array) in a form the agent must take alike, a new object each time."""
    arr = np.asarray(obs, dtype=np.float64)
    which = int(rng.integers(8))
    if which == 0:
        return arr.copy()
    if which == 1:
        return arr.astype(np.float32)
    if which == 2:
        return np.asfortranarray(arr)
    if which == 3:  # a strided view of a larger array
        return np.repeat(arr, 2, axis=-1)[..., ::2]
    if which == 4:
        out = arr.copy()
        out.setflags(write=False)
        return out
    if which == 5:
        return arr.tolist()
    if which == 6:  # a view whose base is larger (an env's row of a table)
        return np.stack([arr, -arr])[0]
    return np.ascontiguousarray(arr[::-1])[::-1] if arr.ndim else arr.copy()  # negative strides


def phi_form(rng: np.random.Generator, phi: float) -> Any:
    which = int(rng.integers(7))
    forms: list[Callable[[float], Any]] = [
        float,
        np.float64,
        np.float32,
        np.array,
        lambda p: np.array([p]),
        lambda p: [p],
        lambda p: Fraction(p),
    ]
    if phi in (0.0, 1.0) and rng.random() < 0.3:
        return int(phi)
    return forms[which](phi)


def action_form(rng: np.random.Generator, action: int) -> Any:
    forms: list[Callable[[int], Any]] = [int, np.int64, np.int32, np.array, np.uint8]
    return forms[int(rng.integers(len(forms)))](action)


def reward_form(rng: np.random.Generator, value: float) -> Any:
    forms: list[Callable[[float], Any]] = [float, np.float64, np.float32, np.array]
    if value in (0.0, 1.0) and rng.random() < 0.3:
        return int(value)
    return forms[int(rng.integers(len(forms)))](value)


def bad_observations(case: Case, lead: tuple[int, ...], rng: np.random.Generator) -> list[Any]:
    """Observations every agent of ``case`` must refuse (FixedArm ignores its observation: none)."""
    if case.obs == "none":
        return []
    if case.obs == "phi":
        n = lead[0] if lead else None
        good = 0.5 if n is None else np.full(n, 0.5)
        out: list[Any] = []
        for bad in (math.nan, 1.5, -0.0625, math.inf, 1.0 + 1e-12):
            value = np.array(good, dtype=np.float64)
            value[...] = 0.5
            if n is None:
                out += [bad, np.array([bad])]
            else:
                value[int(rng.integers(n))] = bad
                out.append(value)
        out += ["0.5", None, True, 0.5j, np.zeros(2 if n is None else n + 1), np.zeros((1, 2) if n is None else (n, 2))]
        return out
    x = features(rng, lead)
    out = []
    for bad in (math.nan, math.inf, -math.inf):
        y = x.copy()
        y[np.unravel_index(int(rng.integers(y.size)), y.shape)] = bad
        out.append(y)
    if case.feature_bound is not None:
        y = x.copy()
        y[..., 1, 2] = 2 * case.feature_bound
        out.append(y)
    out += [
        x[..., :-1],
        np.concatenate([x, x[..., :1]], axis=-1),
        x[..., 0, :],
        x[None],
        x[..., :0, :],
        x.astype(np.complex128),
        "features",
        None,
        [[0.5] * D, [0.5] * (D - 1)] if not lead else [x[0].tolist()] * (lead[0] + 1),
        x.astype(str),
    ]
    if lead:
        out.append(x[:-1])
    return out


def bad_feedback(case: Case, action: int, n: int | None, rng: np.random.Generator) -> list[tuple[Any, Any, Any]]:
    """(action, reward, info) every agent must refuse for a pending round of arm ``action``."""
    if n is None:
        out: list[tuple[Any, Any, Any]] = [
            (K, 0.5, None),
            (-1, 0.5, None),
            (np.int64(K), 0.5, None),
            (2**70, 0.5, None),
            (True, 0.5, None),
            (float(action), 0.5, None),
            (str(action), 0.5, None),
            (None, 0.5, None),
            (np.array([action]), 0.5, None),
            (action, math.nan, None),
            (action, np.float32(math.inf), None),
            (action, -math.inf, None),
            (action, "0.5", None),
            (action, None, None),
            (action, True, None),
            (action, 10**400, None),
            (action, np.array([0.5]), None),
            (action, 0.5, {"optimal_action": K}),
            (action, 0.5, [("user_id", 1)]),
        ]
        if case.private:
            out += [(action, 0.5, {"user_id": [1, 2]}), (action, 0.5, {"user_id": np.array([1, 2])})]
        if case.obs == "linear" and case.feature_bound is not None:
            out.append((action, 1e101, None))
        return out
    arms = np.full(n, action, dtype=np.int64)
    i = int(rng.integers(n))
    bad_arm, nan_reward = arms.copy(), np.full(n, 0.5)
    bad_arm[i] = K
    nan_reward[i] = math.nan
    out = [
        (bad_arm, np.full(n, 0.5), None),
        (arms[:-1], np.full(n, 0.5), None),
        (arms.astype(np.float64), np.full(n, 0.5), None),
        (int(action), np.full(n, 0.5), None),
        (arms, nan_reward, None),
        (arms, np.full(n + 1, 0.5), None),
        (arms, np.full(n, 0.5).astype(str), None),
        (arms, np.full(n, 0.5), {"optimal_action": np.full(n, K)}),
    ]
    if case.private:
        out.append((arms, np.full(n, 0.5), {"user_id": np.arange(n + 1)}))
    return out


def refuse(call: Callable[[], Any], allowed: tuple[type[BaseException], ...] = (ValueError, TypeError)) -> None:
    """``call()`` must raise one of ``allowed`` in one sentence."""
    try:
        call()
    except allowed as error:
        one_sentence(error)
        return
    raise AssertionError("not refused")


def copied(agent: Agent, how: int) -> Agent:
    """A ``copy.deepcopy`` (``how`` 0) or ``pickle`` round trip (1) of ``agent``."""
    return copy.deepcopy(agent) if how == 0 else pickle.loads(pickle.dumps(agent))


def check_refused(agent: Agent, call: Callable[[], Any], allowed: tuple[type[BaseException], ...], where: str) -> None:
    """``call`` (on ``agent``) is refused in one sentence and leaves ``agent`` as it was."""
    before = fingerprint(agent)
    try:
        refuse(call, allowed)
    except AssertionError as error:
        raise AssertionError(f"{error} after: {where}") from None
    assert fingerprint(agent) == before, f"a refused call changed the agent, after: {where}"


# --- one env: subject, reference and fast path ----------------------------------------------------


class Driver(ABC):
    """What the one-env and the batch fuzzers share: the log, refused calls, ``run`` in blocks, the loop.

    A subclass sets ``case``, ``rng``, ``named``, ``fast``, ``block`` and ``log``, names its agent under
    test (:attr:`subject`), the leading shape of its observations (``lead``) and copies (``n``), and
    says how it plays a round, compares, copies, resets and checks the fast path.
    """

    case: Case
    rng: np.random.Generator
    named: bool
    fast: Any
    block: list[tuple[Any, np.ndarray, Any, Any]]
    log: list[str]
    lead: tuple[int, ...] = ()
    n: int | None = None

    @property
    @abstractmethod
    def subject(self) -> Agent:
        """The agent under test."""

    @abstractmethod
    def round(self) -> None:
        """Overridden by each driver."""

    @abstractmethod
    def compare(self, final: bool = False) -> None:
        """Overridden by each driver."""

    @abstractmethod
    def copy(self) -> None:
        """Overridden by each driver."""

    @abstractmethod
    def check_fast(self, final: bool = False) -> None:
        """Overridden by each driver."""

    @abstractmethod
    def reset(self) -> None:
        """Overridden by each driver."""

    def where(self) -> str:
        return " / ".join(self.log[:1] + self.log[1:][-14:])

    def refused_act(self) -> None:
        options = bad_observations(self.case, self.lead, self.rng)
        if not options:
            return
        bad = options[int(self.rng.integers(len(options)))]
        self.log.append(f"refused act({type(bad).__name__} {getattr(bad, 'shape', bad)!r})")
        check_refused(self.subject, lambda: self.subject.act(bad), (ValueError, TypeError), self.where())

    def refused_update(self, action: int) -> None:
        options = bad_feedback(self.case, action, self.n, self.rng)
        bad = options[int(self.rng.integers(len(options)))]
        self.log.append(f"refused update{bad!r}")
        check_refused(self.subject, lambda: self.subject.update(*bad), (ValueError, TypeError), self.where())

    def flush(self) -> None:
        """The fast path plays the rounds played since it last ran: the same actions, the same state after."""
        if self.fast is None or not self.block:
            return
        obs, rows, users, actions = zip(*self.block, strict=True)
        self.block = []
        kw: dict[str, Any] = {}
        if self.case.run == "users":
            kw["users"] = np.stack(users) if self.named else None
        self.log.append(f"run({len(actions)} rounds)")
        result = self.fast.run(np.stack(obs), np.stack(rows), record_actions=True, **kw)
        assert result.actions is not None
        assert result.actions.tolist() == np.stack(actions).tolist(), f"run chose otherwise, after: {self.where()}"
        self.check_fast()

    def fuzz(self, n_rounds: int) -> None:
        for _ in range(n_rounds):
            self.round()
            op = self.rng.random()
            if op < 0.12:
                self.compare()
            elif op < 0.22:
                self.copy()
            elif op < 0.32:
                self.flush()
            elif op < 0.35:
                self.reset()
        self.flush()
        self.compare(final=True)
        if self.fast is not None:
            self.check_fast(final=True)


class Single(Driver):
    """A subject that goes through every operation, a reference fed plain rounds, and ``run`` in blocks."""

    def __init__(self, name: str, seed: int, fuzz_seed: int) -> None:
        self.case = case = CASES[name]
        self.rng = np.random.default_rng(fuzz_seed)
        self.ref, self.sub = case.make(None, seed), case.make(None, seed)
        self.fast = case.make(None, seed) if case.run else None
        self.named = self.rng.random() < 0.6  # the rounds carry a user id (else none does)
        self.block: list[tuple[Any, np.ndarray, int, int]] = []  # rounds the fast path has still to play
        self.log: list[str] = [f"{name} seed={seed} fuzz={fuzz_seed} named={self.named}"]

    @property
    def subject(self) -> Agent:
        return self.sub

    # observations -----------------------------------------------------------------------------------

    def draw_obs(self) -> Any:
        if self.case.obs == "linear":
            return features(self.rng)
        return sensitivity(self.rng) if self.case.obs == "phi" else None

    def given(self, obs: Any) -> Any:
        if self.case.obs == "linear":
            return obs_forms(self.rng, obs)
        return phi_form(self.rng, obs) if self.case.obs == "phi" else None

    def plain_obs(self, obs: Any) -> Any:
        return obs.copy() if isinstance(obs, np.ndarray) else obs

    # operations -------------------------------------------------------------------------------------

    def compare(self, final: bool = False) -> None:
        self.log.append("views")
        assert views(self.sub, self.case, final) == views(self.ref, self.case, final), self.where()

    def copy(self) -> None:
        how = int(self.rng.integers(2))
        self.log.append(["deepcopy", "pickle"][how])
        self.sub = copied(self.sub, how)

    def check_fast(self, final: bool = False) -> None:
        assert views(self.fast, self.case, final) == views(self.ref, self.case, final), self.where()

    def info(self, user: int, action: int) -> tuple[Any, Any]:
        """The reference's info and the subject's (the env's other keys, the id as another integer type)."""
        extra: dict[str, Any] = {}
        if self.rng.random() < 0.4:
            extra = {"regret": float(self.rng.random()), "optimal_action": int(self.rng.integers(K))}
        if self.named:
            uid = np.int64(user) if self.rng.random() < 0.5 else user
            return {"user_id": user}, {**extra, "user_id": uid}
        return None, (extra or ({} if self.rng.random() < 0.3 else None))

    def round(self) -> None:
        case, rng = self.case, self.rng
        obs = self.draw_obs()
        if rng.random() < 0.15:  # an act on another observation first: the last act's observation counts
            decoy = self.draw_obs()
            self.log.append("decoy act")
            self.sub.act(self.given(decoy))
        if rng.random() < 0.1:
            self.refused_act()
        a = self.ref.act(self.plain_obs(obs))
        given = self.given(obs)
        self.log.append(f"act({type(given).__name__})")
        b = self.sub.act(given)
        assert type(b) is int and b == a, f"the subject chose {b!r}, the reference {a}, after: {self.where()}"
        if rng.random() < 0.15:
            self.log.append("act again")
            assert self.sub.act(self.given(obs)) == a, self.where()
        for _ in range(int(rng.integers(0, 3))):  # between act and update
            op = rng.random()
            if op < 0.3:
                self.copy()
            elif op < 0.5:
                self.compare()
            elif op < 0.6:
                self.refused_act()
            else:
                self.refused_update(a)
        arm = int(rng.integers(K)) if rng.random() < 0.08 else a  # an update of another arm than the agent's
        r = reward(rng, case)
        user = int(rng.integers(4)) if rng.random() < 0.7 else int(rng.integers(10**9))
        info_ref, info_sub = self.info(user, arm)
        if arm != a:  # a round the fast path cannot play: it plays the rounds before it, then this one by steps
            self.flush()
        self.ref.update(arm, r, info_ref)
        act_given, r_given = action_form(rng, arm), reward_form(rng, r)
        self.log.append(f"update({act_given!r}, {r_given!r}, {info_sub})")
        self.sub.update(act_given, r_given, info_sub)
        if self.fast is not None:
            if arm == a:
                row = rng.integers(-64, 65, size=K) / 64.0
                row[a] = r
                self.block.append((obs, row, user, a))
            else:
                assert self.fast.act(self.plain_obs(obs)) == a, self.where()
                self.fast.update(arm, r, info_ref)
        if case.needs_act and rng.random() < 0.1:
            self.log.append("update without act")
            check_refused(self.sub, lambda: self.sub.update(arm, r, info_sub), (RuntimeError,), self.where())

    def reset(self) -> None:
        self.flush()
        kw = {"seed": int(self.rng.integers(100))} if self.rng.random() < 0.5 else {}
        self.log.append(f"reset({kw})")
        for agent in (self.ref, self.sub, self.fast):
            if agent is not None:
                agent.reset(**kw)


# --- batches: copy i of a batch seeded s against the one-env agent seeded s + i ---------------------


def rows_of(value: Any, i: int) -> Any:
    """Copy i's part of a batch's view (a value the copies share: whole)."""
    if isinstance(value, tuple) and len(value[1]) == N:  # a plain() array with the copy axis first
        row = value[1][i]
        return (value[0], row) if isinstance(row, list) else row
    return value


def single_part(value: Any) -> Any:
    """A one-env agent's view, without the batch axis of one that some views keep (SM-UCB's sums)."""
    if isinstance(value, tuple) and isinstance(value[1], list) and len(value[1]) == 1 and isinstance(value[1][0], list):
        return (value[0], value[1][0])
    return value


def nested_max(values: list[Any]) -> Any:
    """The entry-by-entry maximum of equally shaped plain() values."""
    first = values[0]
    if isinstance(first, dict):
        return {key: nested_max([v[key] for v in values]) for key in first}
    if isinstance(first, list | tuple):
        return type(first)(nested_max(list(column)) for column in zip(*values, strict=True))
    return max(values)


#: Views of a batch that are the worst over its copies, not per copy.
WORST = ("privacy_spent", "privacy_per_user", "privacy_per_user_central")


class Batch(Driver):
    """A batch of N copies seeded s (and its fast path), and N one-env agents seeded s + i."""

    def __init__(self, name: str, seed: int, fuzz_seed: int) -> None:
        self.case = case = CASES[name]
        self.rng = np.random.default_rng(fuzz_seed)
        self.batch = case.make(N, seed)
        self.singles = [case.make(None, seed + i) for i in range(N)]
        self.fast = case.make(N, seed) if case.run else None
        self.named = self.rng.random() < 0.6
        self.block: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray]] = []
        self.log: list[str] = [f"{name} seed={seed} fuzz={fuzz_seed} named={self.named}"]
        self.lead, self.n = (N,), N

    @property
    def subject(self) -> Agent:
        return self.batch

    def draw_obs(self) -> Any:
        if self.case.obs == "linear":
            return features(self.rng, (N,))
        return sensitivity(self.rng, N) if self.case.obs == "phi" else None

    def given(self, obs: Any) -> Any:
        if self.case.obs == "linear":
            return obs_forms(self.rng, obs)
        if self.case.obs == "phi":
            which = int(self.rng.integers(5))
            return [obs.copy(), obs[:, None].copy(), obs.astype(np.float32), obs.tolist(), np.repeat(obs, 2)[::2]][
                which
            ]
        return None

    def single_obs(self, obs: Any, i: int) -> Any:
        if self.case.obs == "linear":
            return obs[i].copy()
        return float(obs[i]) if self.case.obs == "phi" else None

    def compare(self, final: bool = False) -> None:
        self.log.append("views")
        self.compare_with(self.batch, final)

    def compare_with(self, batch: Agent, final: bool = False) -> None:
        got = views(batch, self.case, final)
        singles = [views(s, self.case, final) for s in self.singles]
        for name, value in got.items():
            if name in WORST:
                expected = self.worst(name, singles)
                assert value == expected, (name, value, expected, [s[name] for s in singles], self.where())
                continue
            for i in range(N):
                mine = single_part(singles[i][name])
                assert rows_of(value, i) == mine, (name, i, value, mine, self.where())

    def worst(self, name: str, singles: list[dict[str, Any]]) -> Any:
        """A batch's guarantee: the worst over its copies, entry by entry (the docstrings' "worst over copies").

        Shuffle-LinUCB's ``privacy_spent`` applies its rule (the central bound if its δ is at most
        ``user_delta`` and its ε below the local one) to the worst central and worst local bounds.
        """
        if name == "privacy_spent" and isinstance(self.batch, ShuffleLinUCB):
            central = nested_max([read(s, "privacy_per_user_central") for s in self.singles])
            local = nested_max([plain(s.privacy_per_user(s.user_delta).tight) for s in self.singles])
            return central if central[1] <= self.batch.user_delta and central[0] < local[0] else local
        return nested_max([s[name] for s in singles])

    def check_fast(self, final: bool = False) -> None:
        self.compare_with(self.fast, final)

    def copy(self) -> None:
        how = int(self.rng.integers(3))
        self.log.append(["deepcopy", "pickle", "pickle of a single"][how])
        if how == 2:
            i = int(self.rng.integers(N))
            self.singles[i] = copied(self.singles[i], 1)
        else:
            self.batch = copied(self.batch, how)

    def round(self) -> None:
        case, rng = self.case, self.rng
        obs = self.draw_obs()
        if rng.random() < 0.15 and case.obs != "none":
            self.log.append("decoy act")
            self.batch.act(self.given(self.draw_obs()))
        if rng.random() < 0.1:
            self.refused_act()
        self.log.append("act")
        out = self.batch.act(self.given(obs))
        assert isinstance(out, np.ndarray) and out.shape == (N,) and out.dtype == np.int64, (out, self.where())
        chosen = out.copy()
        out[:] = (out + 1) % K  # the caller owns the array act returns
        singles = [s.act(self.single_obs(obs, i)) for i, s in enumerate(self.singles)]
        assert chosen.tolist() == singles, f"the copies chose {chosen.tolist()}, the singles {singles}: {self.where()}"
        if rng.random() < 0.15:
            self.log.append("act again")
            assert self.batch.act(self.given(obs)).tolist() == singles, self.where()
        for _ in range(int(rng.integers(0, 3))):
            op = rng.random()
            if op < 0.3:
                self.copy()
            elif op < 0.5:
                self.compare()
            elif op < 0.6:
                self.refused_act()
            else:
                self.refused_update(int(chosen[0]))
        arms = rng.integers(K, size=N) if rng.random() < 0.08 else chosen.copy()
        rewards = reward(rng, case, N)
        users = rng.integers(4, size=N) + 10 * np.arange(N)  # copy i's users: 10 i .. 10 i + 3
        if case.shared_counter:  # users never capped (see Case.shared_counter)
            users = 10**6 * np.arange(1, N + 1) + len(self.log)
        info: dict[str, Any] | None = None
        if self.named:
            info = {"user_id": users if rng.random() < 0.5 else users.tolist()}
        elif rng.random() < 0.3:
            info = {"regret": rng.random(N), "optimal_action": rng.integers(K, size=N)}
        if (arms != chosen).any():
            self.flush()
        for i, single in enumerate(self.singles):
            single.update(int(arms[i]), float(rewards[i]), {"user_id": int(users[i])} if self.named else None)
        kind = int(rng.integers(4))
        given_arms = [arms, arms.astype(np.int32), np.repeat(arms, 2)[::2], arms.tolist()][kind]
        given_rewards = [rewards, rewards.astype(np.float32), np.repeat(rewards, 3)[::3], rewards.tolist()][
            int(rng.integers(4))
        ]
        self.log.append(f"update({given_arms!r}, {given_rewards!r}, {info})")
        self.batch.update(given_arms, given_rewards, info)
        if self.fast is not None:
            if (arms == chosen).all():
                table = rng.integers(-64, 65, size=(N, K)) / 64.0
                table[np.arange(N), arms] = rewards
                self.block.append((obs, table, users, chosen))
            else:
                assert self.fast.act(obs.copy()).tolist() == chosen.tolist(), self.where()
                self.fast.update(arms, rewards, {"user_id": users} if self.named else None)
        if case.needs_act and rng.random() < 0.1:
            self.log.append("update without act")
            check_refused(self.batch, lambda: self.batch.update(arms, rewards, info), (RuntimeError,), self.where())

    def reset(self) -> None:
        self.flush()
        seed = int(self.rng.integers(100)) if self.rng.random() < 0.5 else None
        self.log.append(f"reset(seed={seed})")
        for agent in (self.batch, self.fast):
            if agent is not None:
                agent.reset() if seed is None else agent.reset(seed=seed)
        for i, single in enumerate(self.singles):
            single.reset() if seed is None else single.reset(seed=seed + i)


#: Sequences per agent and rounds per sequence (each round: several calls and checks).
N_SINGLE, N_BATCH, ROUNDS = 12, 8, 40


@pytest.mark.parametrize("name", sorted(CASES))
def test_single_env_interleavings_play_as_the_reference_and_the_fast_path(name: str) -> None:
    for k in range(N_SINGLE):
        Single(name, seed=100 + k, fuzz_seed=k).fuzz(ROUNDS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_copy_i_of_a_batch_plays_as_the_single_agent_seeded_s_plus_i(name: str) -> None:
    for k in range(N_BATCH):
        Batch(name, seed=200 + 7 * k, fuzz_seed=1000 + k).fuzz(ROUNDS)


# --- defects found by the fuzz, fixed (kept as minimal repros) -------------------------------------------


@pytest.mark.parametrize("how", [0, 1], ids=["deepcopy", "pickle"])
@pytest.mark.parametrize(
    "make", [lambda: LinUCB(D), lambda: LDPLinUCB(D, 1e6, horizon=100, seed=0)], ids=["LinUCB", "LDPLinUCB"]
)
def test_a_copied_linear_agent_reports_to_its_server_through_the_checked_path(make: Any, how: int) -> None:
    """One report of arm 0 with a float32 reward (the checked path, ``_report``) to a copy of a new agent."""
    x = np.eye(K, D)
    original = make()
    copied_agent = copy.deepcopy(make()) if how == 0 else pickle.loads(pickle.dumps(make()))
    for agent in (original, copied_agent):
        agent.act(x)
        agent.update(0, np.float32(1.0))
    assert copied_agent.theta.tolist() == original.theta.tolist() != [0.0] * D


@pytest.mark.parametrize("how", [0, 1], ids=["deepcopy", "pickle"])
def test_a_copied_batch_of_linucb_shows_what_it_learns(how: int) -> None:
    x = np.eye(K, D)[None].repeat(2, axis=0)
    original, copied_agent = LinUCB(D, 0.1, n_envs=2), LinUCB(D, 0.1, n_envs=2)
    copied_agent = copy.deepcopy(copied_agent) if how == 0 else pickle.loads(pickle.dumps(copied_agent))
    for agent in (original, copied_agent):
        for _ in range(3):  # arm 1 pays 1, the others 0
            agent.update(agent.act(x), (agent.act(x) == 1).astype(float))
    assert copied_agent.act(x).tolist() == original.act(x).tolist()
    assert copied_agent.theta.tolist() == original.theta.tolist()
