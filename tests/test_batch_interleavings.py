"""Random interleavings of batched calls: copy i of a batch of N plays as the one-env agent seeded s + i.

The design rule (docs/design.md, "Agents", Seeds): copy i of ``Agent(..., n_envs=N, seed=s)`` makes the
draws, and so the choices, of ``Agent(..., seed=s + i)`` fed the same feedback, whatever the other copies
get. ``tests/test_single_env_interleavings.py`` fuzzes a one-env agent against its batch of one; here a
batch of N = 3 copies runs next to three one-env agents seeded s, s + 1, s + 2, through one seeded random
sequence of operations applied to both sides alike:

* a normal round, each copy with its own reward (and info), the batch's given as float64, 0/1 int64,
  float32, strided or read-only arrays, the singles' as the matching scalars; the env's ``info``
  (``optimal_action`` per copy, side observations ``observed_mask``/``observed_rewards`` of shape
  (N, K) for the batch and (K,) for a single);
* a second ``act`` without an update, a second ``update`` without an act, an update of other arms;
* reading the public views and properties (copy i's row against single i's; ``privacy_spent`` of a private
  batch against the worst of the singles');
* writing through the views that the class docs call views of the state (``sums``/``means``/``counts``
  of UCB, UCB-N, KL-UCB, MOSS and ε-greedy; ``probabilities``/``loss_estimates`` of the Exp3 family):
  the same values into copy i's row and single i's row, for some copies only;
* ``copy.deepcopy`` and ``pickle`` round trips of the batch (now and then of a single);
* ``reset()`` and ``reset(seed=k)`` (the singles then get k + i);
* a refused update (NaN or infinite reward in one copy, an arm out of range in one copy, a reward outside
  ``reward_bounds``, a NaN side observation of one copy for the agents that read them): the batch
  must raise and change nothing (its views, and the arms a copy of it plays on fixed feedback, are
  those of a copy taken before).

Every time both sides act, copy i's arm must be single i's.

The registry is this module's own: the one of ``test_single_env_interleavings`` builds each agent with
a fixed seed (``make(n_envs)``), so it cannot build the singles seeded s + i.

The LDP wrapper under a per-user report cap (``max_reports_per_user`` with ``info["user_id"]``): copy 0's
user is user 0 (capped after two reports) in about half the rounds and a new user in the others, copies 1
and 2 get a new user each round (never capped).
The class docstring ("Cap in batch mode") puts a capped copy's rows back but lets counters the copies share
advance (UCB's round t), so for a wrapped UCB only the never-capped copies 1 and 2 are compared; for
ε-greedy, Exp3 (fixed horizon) and Thompson sampling every copy is (copy 0 of the wrapped UCB does part from
single 0 in these runs, as documented).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
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
from agents.base import Agent, PrivateAgent

K = 5
N = 3
#: The path graph 0 - 1 - 2 - 3 - 4 (adjacency without self loops) and its closed neighbourhoods.
PATH = np.diag(np.ones(K - 1, dtype=bool), 1) | np.diag(np.ones(K - 1, dtype=bool), -1)
CLOSED = PATH | np.eye(K, dtype=bool)
ARM_MEANS = np.array([0.5, 0.35, 0.8, 0.2, 0.65])
ALL = tuple(range(N))


@dataclass(frozen=True)
class Case:
    """An agent to fuzz: ``make(n_envs, seed)``, what it reads from ``info`` and what it exposes."""

    make: Callable[[int | None, int], Agent]
    side: bool = False
    #: Public views, properties and argument-free methods, compared copy by copy.
    views: tuple[str, ...] = ()
    #: Which views of the state are written through: "means" (sums, means, counts) or "exp" (Exp3's).
    writes: str | None = None
    n_ops: int = 250
    #: Only act-then-update rounds of the arm chosen (GAP refuses a round that leaves an arm short).
    strict_rounds: bool = False
    any_reward: bool = False
    #: Per-user report cap: copy 0's users are soon capped, the others' never.
    capped: bool = False
    #: The copies whose arms must equal the singles' (UCB under a cap: the never-capped ones).
    compared: tuple[int, ...] = ALL


MEANS = ("sums", "means", "counts", "t")
EXP = ("probabilities", "loss_estimates", "eta", "t")
LDP = ("n_withheld", "n_clipped", "max_user_reports")


def wrapped(agent: Callable[[int | None, int], Agent], mechanism: str, **kw: Any) -> Callable[[int | None, int], Agent]:
    """An LDPWrapper around ``agent(n, s)``, its noise seeded s + 1000 (copy i: s + 1000 + i)."""
    return lambda n, s: LDPWrapper(agent(n, s), mechanism, 1.0, seed=s + 1000, **kw)


CASES: dict[str, Case] = {
    "UCB": Case(lambda n, s: UCB(K, n_envs=n, seed=s), views=MEANS, writes="means", any_reward=True),
    "UCB-alpha": Case(lambda n, s: UCB(K, 0.5, n_envs=n, seed=s), views=MEANS, writes="means", any_reward=True),
    "UCBN": Case(lambda n, s: UCBN(K, n_envs=n, seed=s), side=True, views=MEANS, writes="means", any_reward=True),
    "KLUCB": Case(lambda n, s: KLUCB(K, n_envs=n, seed=s), views=(*MEANS, "indices"), writes="means"),
    "MOSS": Case(
        lambda n, s: MOSS(K, 300, n_envs=n, seed=s), views=(*MEANS, "indices"), writes="means", any_reward=True
    ),
    "EpsilonGreedy": Case(
        lambda n, s: EpsilonGreedy(K, 0.3, n_envs=n, seed=s),
        views=(*MEANS, "current_epsilon"),
        writes="means",
        any_reward=True,
    ),
    "EpsilonGreedy-decaying": Case(
        lambda n, s: EpsilonGreedy(K, schedule="decaying", c=0.5, d=0.5, n_envs=n, seed=s),
        views=(*MEANS, "current_epsilon"),
        writes="means",
        any_reward=True,
    ),
    "Exp3": Case(lambda n, s: Exp3(K, 300, n_envs=n, seed=s), views=EXP, writes="exp"),
    "Exp3-anytime": Case(lambda n, s: Exp3(K, gamma=0.1, n_envs=n, seed=s), views=EXP, writes="exp"),
    "Exp3SET": Case(
        lambda n, s: Exp3SET(K, PATH, 300, n_envs=n, seed=s),
        side=True,
        views=(*EXP, "observation_probabilities"),
        writes="exp",
    ),
    "Exp3IX": Case(
        lambda n, s: Exp3IX(K, PATH, n_envs=n, seed=s),
        side=True,
        views=(*EXP, "gamma", "observation_probabilities"),
        writes="exp",
    ),
    "TS": Case(lambda n, s: ThompsonSampling(K, n_envs=n, seed=s), views=("successes", "failures", "copy_seeds")),
    "TS-N": Case(
        lambda n, s: ThompsonSampling(K, side_observations=True, n_envs=n, seed=s),
        side=True,
        views=("successes", "failures", "copy_seeds"),
    ),
    "Random": Case(lambda n, s: Random(K, n_envs=n, seed=s), any_reward=True),
    "HybridDPUCB": Case(
        lambda n, s: HybridDPUCB(K, 1.0, n_envs=n, seed=s),
        views=("counts", "released", "released_sums", "n_draws", "t"),
    ),
    "TreeDPUCB": Case(
        lambda n, s: TreeDPUCB(K, 200, 1.0, n_envs=n, seed=s), views=("counts", "released", "n_draws", "t")
    ),
    "AdaPUCB": Case(lambda n, s: AdaPUCB(K, 1.0, n_envs=n, seed=s), views=("n_draws", "t")),
    "DPThompsonSampling": Case(lambda n, s: DPThompsonSampling(K, 1.0, n_envs=n, seed=s), views=("n_draws", "t")),
    "PrePullGaussianTS": Case(
        lambda n, s: PrePullGaussianTS(K, 2, n_envs=n, seed=s), views=("n_draws", "t"), n_ops=150
    ),
    "DPTSUCB": Case(lambda n, s: DPTSUCB(K, 300, n_envs=n, seed=s), views=("n_draws", "t"), n_ops=150),
    "LDPThompsonSampling": Case(
        lambda n, s: LDPThompsonSampling(K, 1.0, n_envs=n, seed=s), views=("successes", "failures", "n_draws", "t")
    ),
    "GAP": Case(
        lambda n, s: GAP(K, 100_000, 1.0, PATH, delta=0.9, n_envs=n, seed=s),
        side=True,
        views=("active", "epoch_length", "independent_set"),
        n_ops=1500,
        strict_rounds=True,
    ),
    "GAPU": Case(
        lambda n, s: GAPU(K, 100_000, 1.0, PATH, delta=0.9, n_envs=n, seed=s),
        side=True,
        views=("active", "epoch_length", "independent_set"),
        n_ops=1500,
        strict_rounds=True,
    ),
    "DPSE": Case(
        lambda n, s: DPSE(K, 100_000, 1.0, schedule_scale=0.01, width_scale=0.1, n_envs=n, seed=s),
        views=("active", "epoch_repetitions"),
        n_ops=800,
    ),
    "AAE": Case(lambda n, s: AAE(K, 2000, 0.5, radius="hoeffding", n_envs=n, seed=s), views=("active",), n_ops=800),
    "AAE-N": Case(
        lambda n, s: AAE(K, 2000, 0.5, radius="hoeffding", side_observations=True, n_envs=n, seed=s),
        side=True,
        views=("active",),
        n_ops=800,
    ),
    "AlphaSample": Case(
        lambda n, s: AlphaSample(K, 2000, coeff=0.05, n_envs=n, seed=s), side=True, views=("active",), n_ops=600
    ),
    "LDPWrapper-EpsilonGreedy": Case(
        wrapped(lambda n, s: EpsilonGreedy(K, 0.3, n_envs=n, seed=s), "laplace"), views=LDP, any_reward=True
    ),
    "LDPWrapper-TS": Case(
        wrapped(lambda n, s: ThompsonSampling(K, n_envs=n, seed=s), "randomized_response"), views=LDP
    ),
    "LDPWrapper-Exp3": Case(wrapped(lambda n, s: Exp3(K, 300, n_envs=n, seed=s), "randomized_response"), views=LDP),
    "LDPWrapper-UCB": Case(
        wrapped(lambda n, s: UCB(K, n_envs=n, seed=s), "laplace", noise_aware=False), views=LDP, any_reward=True
    ),
}

#: The LDP wrapper under a cap of 2 reports per user (see the module docstring for what is compared).
CAPPED: dict[str, Case] = {
    "capped-UCB": Case(
        wrapped(lambda n, s: UCB(K, n_envs=n, seed=s), "laplace", noise_aware=False, max_reports_per_user=2),
        views=LDP,
        capped=True,
        compared=(1, 2),  # copy 0's capped rounds still advance the shared round t (by design)
    ),
    "capped-EpsilonGreedy": Case(
        wrapped(lambda n, s: EpsilonGreedy(K, 0.3, n_envs=n, seed=s), "laplace", max_reports_per_user=2),
        views=LDP,
        capped=True,
    ),
    "capped-Exp3": Case(
        wrapped(lambda n, s: Exp3(K, 300, n_envs=n, seed=s), "randomized_response", max_reports_per_user=2),
        views=LDP,
        capped=True,
    ),
    "capped-TS": Case(
        wrapped(lambda n, s: ThompsonSampling(K, n_envs=n, seed=s), "randomized_response", max_reports_per_user=2),
        views=LDP,
        capped=True,
    ),
}


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except (TypeError, ValueError) as error:
        return "raised", type(error)


def value_of(agent: Agent, name: str) -> Any:
    value = getattr(agent, name)
    return value() if callable(value) else value


def rows(single: Any, batch: Any, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Single i's value and copy i's part of the batch's (a value the copies share is compared whole)."""
    b = part(batch, i)
    if isinstance(single, list) and single and isinstance(single[0], list | int):  # copy_seeds, independent sets
        return np.asarray(single[0], dtype=np.float64), b
    s = np.asarray(single, dtype=np.float64)
    if s.ndim == b.ndim + 1 and s.shape[0] == 1:
        s = s[0]
    return s, b


def reward_kind(rng: np.random.Generator, integral: bool) -> int:
    """How the rewards are given: 0 float64, 1 float32, 2 strided, 3 read-only, 4 both, 5 int64 (0/1 only)."""
    return int(rng.integers(6 if integral else 5))


def as_batch(values: np.ndarray, kind: int) -> np.ndarray:
    """``values`` (N,) as an array of a kind the batch takes."""
    if kind == 5:
        return values.astype(np.int64)
    if kind == 1:
        return values.astype(np.float32)
    if kind == 2:  # a strided view of a larger array
        return np.repeat(values, 2)[::2]
    out = values.copy() if kind == 3 else np.repeat(values, 3)[::3] if kind == 4 else values.astype(np.float64)
    if kind in (3, 4):
        out.setflags(write=False)
    return out


def as_scalar(value: float, kind: int) -> Any:
    """The one-env twin of an entry of ``as_batch(..., kind)``: int, np.float32, or float / np.float64."""
    if kind == 5:
        return int(value)
    if kind == 1:
        return np.float32(value)
    return np.float64(value) if kind in (3, 4) else float(value)


def part(batch: Any, i: int) -> np.ndarray:
    """Copy i's part of a batch's value (a value the copies share, whole)."""
    if isinstance(batch, list) and batch and isinstance(batch[0], list | int):
        return np.asarray(batch[i], dtype=np.float64)
    b = np.asarray(batch, dtype=np.float64)
    return b[i] if b.ndim >= 1 and b.shape[0] == N else b


class Pair:
    """A batch of N copies seeded s and N singles seeded s + i, driven alike."""

    def __init__(self, case: Case, seed: int, fuzz_seed: int) -> None:
        self.case = case
        self.seed = seed
        self.batch = case.make(N, seed)
        self.singles = [case.make(None, seed + i) for i in range(N)]
        self.rng = np.random.default_rng(fuzz_seed)
        self.last_b = np.zeros(N, dtype=np.int64)
        self.last_s = [0] * N
        self.log: list[str] = []
        self.round = 0

    def where(self) -> str:
        return " / ".join(self.log[-12:])

    # --- acting -----------------------------------------------------------------------------------

    def act(self) -> None:
        self.log.append("act")
        b = self.batch.act()
        assert isinstance(b, np.ndarray) and b.shape == (N,) and b.dtype == np.int64, (b, self.where())
        s = [single.act() for single in self.singles]
        for i in self.case.compared:
            assert int(b[i]) == s[i], f"copy {i} chose {int(b[i])}, single {i} chose {s[i]}, after: {self.where()}"
        self.last_b, self.last_s = b.copy(), [int(a) for a in s]

    # --- feedback ---------------------------------------------------------------------------------

    def feedback(self) -> tuple[np.ndarray, bool, np.ndarray, np.ndarray, bool]:
        """Each copy's reward row (N, K), whether 0/1, and the env's info parts."""
        binary = self.rng.random() < 0.5
        if binary:
            table = (self.rng.random((N, K)) < ARM_MEANS).astype(np.float64)
        else:
            table = np.clip(ARM_MEANS + self.rng.uniform(-0.2, 0.2, (N, K)), 0.0, 1.0)
            if self.case.any_reward and self.rng.random() < 0.2:
                table = self.rng.uniform(-2.0, 3.0, (N, K))
        optimal = self.rng.integers(K, size=N)
        with_info = self.case.side or self.case.capped or self.rng.random() < 0.6
        return table, binary, optimal, self.rng.random(N), with_info

    def users(self) -> np.ndarray:
        """Copy 0: user 0 (capped after two reports) or a new user, at random; the others: a new user every round."""
        self.round += 1
        first = 0 if self.rng.random() < 0.5 else 3 * 10**6 + self.round
        return np.array([first, 10**6 + self.round, 2 * 10**6 + self.round])

    def update(self, arms_b: np.ndarray, arms_s: list[int]) -> None:
        table, binary, optimal, regret, with_info = self.feedback()
        rewards_b = table[np.arange(N), arms_b]
        rewards_s = np.array([table[i, arms_s[i]] for i in range(N)])
        kind = reward_kind(self.rng, binary)
        given_b = as_batch(rewards_b, kind)
        given_s = [as_scalar(r, kind) for r in rewards_s]
        actions = arms_b.astype(np.int32) if self.rng.random() < 0.3 else arms_b.copy()
        if self.rng.random() < 0.2:
            actions = np.repeat(actions, 2)[::2]
        info_b: dict[str, Any] | None = None
        infos_s: list[dict[str, Any] | None] = [None] * N
        if with_info:
            info_b = {"optimal_action": optimal, "regret": regret}
            infos_s = [{"optimal_action": int(optimal[i]), "regret": float(regret[i])} for i in range(N)]
            if self.case.side or self.rng.random() < 0.5:
                mask_b = CLOSED[arms_b]
                info_b["observed_mask"] = mask_b
                info_b["observed_rewards"] = np.where(mask_b, table, 0.0)
                for i in range(N):
                    mask = CLOSED[arms_s[i]]
                    infos_s[i] = dict(
                        infos_s[i] or {}, observed_mask=mask, observed_rewards=np.where(mask, table[i], 0.0)
                    )
            if self.case.capped:
                users = self.users()
                info_b["user_id"] = users
                for i in range(N):
                    infos_s[i] = dict(infos_s[i] or {}, user_id=int(users[i]))
        self.log.append(f"update({actions.tolist()}, {given_b.dtype}{given_b.tolist()}, {sorted(info_b or {})})")
        one = outcome(lambda: self.batch.update(actions, given_b, info_b))
        assert one[0] == "ok", (f"the batch refused a valid update: {one[1]}", self.where())
        for i, single in enumerate(self.singles):
            got = outcome(partial(single.update, arms_s[i], given_s[i], infos_s[i]))
            assert got[0] == "ok", (f"single {i} refused a valid update: {got[1]}", self.where())

    def round_trip(self) -> None:
        self.act()
        self.update(self.last_b, self.last_s)

    def update_again(self) -> None:
        self.update(self.last_b, self.last_s)

    def update_other_arms(self) -> None:
        arms = self.rng.integers(K, size=N)
        self.update(arms, [int(a) for a in arms])

    # --- views --------------------------------------------------------------------------------------

    def views(self) -> None:
        self.log.append("views")
        for name in self.case.views:
            batch = value_of(self.batch, name)
            for i in self.case.compared:
                s, b = rows(value_of(self.singles[i], name), batch, i)
                np.testing.assert_array_equal(s, b, err_msg=f"{name} of copy {i} after: {self.where()}")

        if isinstance(self.batch, PrivateAgent):  # the batch's guarantee is the worst over its copies
            worst = np.max([np.asarray(single.privacy_spent) for single in self.singles], axis=0)  # type: ignore[attr-defined]
            np.testing.assert_allclose(self.batch.privacy_spent, worst, rtol=1e-9, err_msg=self.where())

    def write_views(self) -> None:
        """Write the same values into copy i's rows and single i's rows, for a random subset of copies."""
        which = [i for i in range(N) if self.rng.random() < 0.5] or [int(self.rng.integers(N))]
        self.log.append(f"write {self.case.writes} of copies {which}")
        for i in which:
            k = int(self.rng.integers(K))
            if self.case.writes == "means":
                count = int(self.rng.integers(0, 30))
                mean = float(self.rng.random())
                for agent, row in ((self.batch, i), (self.singles[i], 0)):
                    agent.counts[row, k] = count  # type: ignore[attr-defined]
                    agent.means[row, k] = mean  # type: ignore[attr-defined]
                    agent.sums[row, k] = mean * count  # type: ignore[attr-defined]
            else:
                p = self.rng.dirichlet(np.ones(K)) * 0.9 + 0.1 / K
                loss = float(self.rng.uniform(0.0, 5.0)) if self.rng.random() < 0.5 else None
                for agent, row in ((self.batch, i), (self.singles[i], 0)):
                    agent.probabilities[row] = p  # type: ignore[attr-defined]
                    if loss is not None:
                        agent.loss_estimates[row, k] = loss  # type: ignore[attr-defined]
        self.views()

    # --- copies and resets ------------------------------------------------------------------------

    def copies(self) -> None:
        how = int(self.rng.integers(3))
        self.log.append(["deepcopy", "pickle", "pickle of a single"][how])
        if how == 0:
            self.batch = copy.deepcopy(self.batch)
        elif how == 1:
            self.batch = pickle.loads(pickle.dumps(self.batch))
        else:
            i = int(self.rng.integers(N))
            self.singles[i] = pickle.loads(pickle.dumps(self.singles[i]))

    def reset(self) -> None:
        if self.rng.random() < 0.5:
            self.log.append("reset()")
            self.batch.reset()
            for single in self.singles:
                single.reset()
        else:
            seed = int(self.rng.integers(50, 60))
            self.log.append(f"reset(seed={seed})")
            self.batch.reset(seed=seed)
            for i, single in enumerate(self.singles):
                single.reset(seed=seed + i)

    # --- refused updates ----------------------------------------------------------------------------

    def refused(self) -> None:
        """A bad value in one copy: the batch raises and nothing changes (views, and the arms played next)."""
        bad = int(self.rng.integers(N))
        actions = self.last_b.copy()
        rewards = np.full(N, 0.5)
        bounded = self.batch.reward_bounds is not None
        what = int(self.rng.integers(7 if self.case.side else 6 if bounded else 5))
        if what == 5 and not bounded:
            what = 6
        if what == 5:  # outside reward_bounds: [0, 1], or the summing agents' [-1e289, 1e289]
            high = self.batch.reward_bounds[1] if bounded else 0.0
            rewards[bad] = 1.5 if high == 1.0 else 2.0 * high
        elif what == 0:
            rewards[bad] = np.nan
        elif what == 1:
            rewards[bad] = np.inf
        elif what == 2:
            rewards[bad] = -np.inf
        elif what == 3:
            actions[bad] = K
        elif what == 4:
            actions[bad] = -1
        info: dict[str, Any] | None = None
        if self.case.capped:
            info = {"user_id": np.array([0, 10**6 + self.round, 2 * 10**6 + self.round])}
        elif self.case.side:  # the side observations of the arms given (the bad arm's copy: of its last arm)
            shown = np.where((actions >= 0) & (actions < K), actions, self.last_b)
            mask = CLOSED[shown]
            observed = np.where(mask, 0.5, 0.0)
            observed[np.arange(N), shown] = rewards
            if what == 6:  # a revealed reward that is not a number, in one copy
                observed[bad, (shown[bad] + 1) % K if shown[bad] < K - 1 else shown[bad] - 1] = np.nan
            info = {"observed_mask": mask, "observed_rewards": observed}
        self.log.append(f"refused update({actions.tolist()}, {rewards.tolist()}, {sorted(info or {})})")
        before = copy.deepcopy(self.batch)
        got = outcome(lambda: self.batch.update(actions, rewards, info))
        assert got[0] == "raised", f"the batch took a bad update ({what} in copy {bad}) after: {self.where()}"
        after = copy.deepcopy(self.batch)
        for name in self.case.views:
            old, new = value_of(before, name), value_of(after, name)
            for i in range(N):
                np.testing.assert_array_equal(part(old, i), part(new, i), err_msg=f"{name} {self.where()}")
        if hasattr(before, "t"):
            assert before.t == after.t  # type: ignore[attr-defined]
        assert future(before, self.case) == future(after, self.case), f"the refused update changed: {self.where()}"

    # --- the fuzz ---------------------------------------------------------------------------------------

    def fuzz(self, n_ops: int) -> None:
        strict = self.case.strict_rounds
        ops: list[tuple[float, Callable[[], Any]]] = [
            (0.45, self.round_trip),
            (0.0 if strict else 0.07, self.act),
            (0.0 if strict else 0.07, self.update_again),
            (0.0 if strict else 0.05, self.update_other_arms),
            (0.08, self.views),
            (0.08 if self.case.writes else 0.0, self.write_views),
            (0.08, self.copies),
            (min(0.02, 4.0 / n_ops), self.reset),
            (0.08, self.refused),
        ]
        weights = np.array([w for w, _ in ops])
        for j in self.rng.choice(len(ops), size=n_ops, p=weights / weights.sum()):
            ops[int(j)][1]()
        for _ in range(20):
            self.round_trip()
        self.views()


def future(agent: Agent, case: Case) -> list[list[int]]:
    """The arms a copy of the batch ``agent`` plays in a few rounds of fixed feedback."""
    agent = copy.deepcopy(agent)
    rng = np.random.default_rng(99)
    arms: list[list[int]] = []
    for step in range(6):
        arm = agent.act()
        arms.append([int(a) for a in arm])
        rewards = (rng.random(N) < 0.5).astype(np.float64)
        info: dict[str, Any] | None = None
        if case.side:
            mask = CLOSED[arm]
            info = {"observed_mask": mask, "observed_rewards": np.where(mask, 0.5, 0.0)}
        if case.capped:
            info = dict(info or {}, user_id=np.array([0, 5 * 10**6 + step, 6 * 10**6 + step]))
        agent.update(arm, rewards, info)
    return arms


#: Every agent's first sequence in the default run; its second behind the slow marker.
FUZZ = [
    pytest.param(name, seed, id=f"{name}-{seed}", marks=pytest.mark.slow if seed else ())
    for name in sorted(CASES)
    for seed in (0, 1)
]


@pytest.mark.parametrize(("name", "fuzz_seed"), FUZZ)
def test_copy_i_of_a_batch_plays_as_the_single_seeded_s_plus_i(name: str, fuzz_seed: int) -> None:
    case = CASES[name]
    Pair(case, 3 + 10 * fuzz_seed, fuzz_seed).fuzz(case.n_ops)


@pytest.mark.parametrize(("name", "fuzz_seed"), [(n, s) for n in sorted(CAPPED) for s in (0, 1)])
def test_capped_ldp_wrapper_copies_play_as_the_single_wrappers(name: str, fuzz_seed: int) -> None:
    """Copy 0's user 0 is capped after two reports, the other copies' users never: compared copies play alike."""
    case = CAPPED[name]
    pair = Pair(case, 3 + 10 * fuzz_seed, fuzz_seed)
    pair.fuzz(300)
    withheld = np.asarray(value_of(pair.batch, "n_withheld"))
    assert withheld[0] > 20 and withheld[1] == withheld[2] == 0  # copy 0 was capped while the others reported


def test_exp3set_observation_probabilities_of_copy_i_equal_the_single_seeded_s_plus_i() -> None:
    """Bit for bit: summed in arm order (a matrix product once summed a (3, K) batch's rows in another order)."""
    batch = Exp3SET(K, PATH, 300, n_envs=N, seed=0)
    singles = [Exp3SET(K, PATH, 300, seed=i) for i in range(N)]
    p = np.random.default_rng(0).dirichlet(np.ones(K), size=N)
    for i in range(N):
        batch.probabilities[i] = p[i]
        singles[i].probabilities[0] = p[i]
    q = batch.observation_probabilities()
    for i in range(N):
        np.testing.assert_array_equal(q[i], singles[i].observation_probabilities()[0], err_msg=f"copy {i}")
