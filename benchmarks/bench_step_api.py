"""Cost of the single-copy step API (``act`` + ``update``), each against a reference timed in the same run.

Ratios (every pair interleaved, several repetitions, medians):

* ``agents.UCB`` with one env (no ``n_envs``), K = 10: microseconds per ``act()`` +
  ``update(action, reward)`` with a float reward. Goal: at most 1 us, reported as the ratio
  1 us / measured (goal 1). Printed beside it, from the same run: two bare Python method calls on
  a trivial object in the same loop (the floor of any step API), and the same agent built with
  ``n_envs=1``, whose arrays of shape (1,) take the general checked path (the cost of the
  single-env step before it had its own one-call path).
* The other index agents with one env, K = 10 (``KLUCB``, ``MOSS``, ``EpsilonGreedy``,
  ``Exp3`` with a horizon and anytime, ``ThompsonSampling``, ``Random``): microseconds per ``act()`` +
  ``update(action, reward)`` (wall time, and the thread's CPU time, which a busy machine does
  not inflate). Goal: at most 1 us (Thompson sampling: 1.5 us, its K Beta draws included),
  reported as goal / measured (goal 1). Printed beside it: the same agent with ``n_envs=1``
  (the general checked path) and whether both chose the same arms on the same rewards.
* ``agents.UCB`` and ``agents.UCBN`` with one env fed the ``GraphBandit-v0`` step output
  (reward and info, side observations included) against the same agents with ``n_envs=1``, for
  information.
* The elimination agents with one env (``GAP``, ``GAPU``, ``DPSE``, ``AAE``, ``AlphaSample``, K = 10)
  fed the ``GraphBandit-v0`` step output of their own arms, against the same agents with
  ``n_envs=1`` (the general checked path), for information.
* The central- and local-DP index agents with one env, K = 10, ε = 1 (``HybridDPUCB``,
  ``TreeDPUCB``, ``AdaPUCB``, ``DPThompsonSampling``, ``DPTSUCB``, ``PrePullGaussianTS``,
  ``LDPThompsonSampling``): act + update against the same agent with ``n_envs=1`` (the general
  checked path), for information; both must choose the same arms.
* ``LDPWrapper`` around UCB (Laplace, the noise-aware index) and around Thompson sampling
  (randomized response) with one env, K = 10: microseconds per ``act()`` + ``update(action,
  reward)`` against the wrapped agent alone in the same loop (what the user-side report costs),
  for information; printed beside it, the wrapper built with ``n_envs=1`` (the general path).
* ``LinUCB`` and ``LDPLinUCB`` (d = 20, 20 arms, MovieLens-like features as in
  ``bench_ldp_linucb.py``): the step API over T rounds against the same agent's compiled
  ``run`` over the same rounds. Goal: the step API at least 0.5x the speed of ``run``. Both must
  choose the same actions (checked).

Usage: ``python benchmarks/bench_step_api.py [--quick]``.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from _common import Ratio, interleaved, print_results, step_api_vs_run

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
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
    HybridDPUCB,
    LDPLinUCB,
    LDPThompsonSampling,
    LDPWrapper,
    LinUCB,
    PrePullGaussianTS,
    Random,
    ThompsonSampling,
    TreeDPUCB,
)
from agents.base import Agent

K = 10  # arms of the UCB agents
D = ARMS = 20  # features and arms of the linear agents
UCB_GOAL_US = 1.0

#: The index agents timed with one env: name -> (constructor for one env or n copies, goal in us).
INDEX_AGENTS: dict[str, tuple[Callable[[int | None], Agent], float]] = {
    "KLUCB": (lambda n: KLUCB(K, n_envs=n), 1.0),
    "MOSS": (lambda n: MOSS(K, 100_000, n_envs=n), 1.0),
    "EpsilonGreedy": (lambda n: EpsilonGreedy(K, 0.1, n_envs=n, seed=3), 1.0),
    "Exp3 (horizon)": (lambda n: Exp3(K, 100_000, n_envs=n, seed=3), 1.0),
    "Exp3 (anytime)": (lambda n: Exp3(K, n_envs=n, seed=3), 1.0),
    "ThompsonSampling": (lambda n: ThompsonSampling(K, n_envs=n, seed=3), 1.5),
    "Random": (lambda n: Random(K, n_envs=n, seed=3), 1.0),
}


class Bare:
    """The reference object: ``act`` and ``update`` that do nothing."""

    def act(self) -> int:
        return 1

    def update(self, action: int, reward: float) -> None:
        pass


def bernoulli_rows(rounds: int, seed: int = 0) -> list[list[float]]:
    """A table of Bernoulli rewards (rounds x K) as Python lists, arm means in [0.2, 0.8]."""
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.2, 0.8, size=K)
    return (rng.random((rounds, K)) < means).astype(np.float64).tolist()


def step_loop(agent: Any, rows: list[list[float]]) -> Callable[[], None]:
    """A loop of ``update(act(), reward of the chosen arm)`` over ``rows`` (after a reset)."""

    def run() -> None:
        if hasattr(agent, "reset"):
            agent.reset()
        act, update = agent.act, agent.update
        for row in rows:
            a = act()
            update(a, row[a])

    return run


def batched_loop(agent: Agent, rows: list[list[float]]) -> Callable[[], None]:
    """The same loop through the general checked path: ``n_envs=1``, arrays of shape (1,)."""
    table = np.array(rows)

    def run() -> None:
        agent.reset()
        act, update = agent.act, agent.update
        for t in range(table.shape[0]):
            a = act()
            update(a, table[t, a])

    return run


def interleaved_thread_time(
    subject: Callable[[], object], reference: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """:func:`interleaved` in this thread's CPU time."""
    return interleaved(subject, reference, repeats, clock=time.thread_time)


@dataclass(frozen=True)
class StepTimes:
    """Microseconds per act + update of a single-env agent against two bare method calls and its n_envs=1 path."""

    us: float  # the single-env agent, wall time (interleaved with the bare calls)
    bare_us: float
    cpu_us: float  # the same pair in this thread's CPU time
    bare_cpu_us: float
    us_again: float  # the single-env agent interleaved with the checked n_envs=1 path
    old_us: float
    same: bool  # same actions as the n_envs=1 path over the first ``same_rounds`` rounds


def step_times(single: Agent, batch1: Agent, rows: list[list[float]], repeats: int, same_rounds: int) -> StepTimes:
    """Time ``single`` (n_envs None) against two bare method calls and ``batch1`` (n_envs=1) on ``rows``; medians."""
    steps = len(rows)
    one, ref, old = step_loop(single, rows), step_loop(Bare(), rows), batched_loop(batch1, rows)
    for fn in (one, ref, old):  # compile / load the kernels
        fn()
    us, bare_us = (x / steps * 1e6 for x in interleaved(one, ref, repeats))
    cpu_us, bare_cpu_us = (x / steps * 1e6 for x in interleaved_thread_time(one, ref, repeats))
    # The checked path is ~10x slower: fewer rounds of it, and its own interleaving with the subject.
    us_again, old_us = (x / steps * 1e6 for x in interleaved(one, old, max(3, repeats // 3)))
    single.reset()
    batch1.reset()
    same = all(single_step(single, batch1, row) for row in rows[:same_rounds])
    return StepTimes(us, bare_us, cpu_us, bare_cpu_us, us_again, old_us, same)


def ucb_ratios(quick: bool) -> list[Ratio]:
    steps, repeats = (2_000, 5) if quick else (20_000, 15)
    times = step_times(UCB(K), UCB(K, n_envs=1), bernoulli_rows(steps), repeats, same_rounds=500)
    us, bare_us, cpu_us, bare_cpu_us = times.us, times.bare_us, times.cpu_us, times.bare_cpu_us
    us_again, old_us, same = times.us_again, times.old_us, times.same
    detail = (
        f"{us:.3f} us per act+update (K={K}, float rewards; wall time, median of {repeats}); two bare "
        f"method calls in the same loop {bare_us:.3f} us (UCB = {us / bare_us:.1f}x them); CPU time of the "
        f"thread: UCB {cpu_us:.3f} us, bare calls {bare_cpu_us:.3f} us; the checked n_envs=1 path "
        f"{old_us:.2f} us; same actions as the n_envs=1 path: {same}"
    )
    return [
        Ratio(
            "UCB single-env act+update <= 1 us",
            "UCB(10) act+update",
            f"{UCB_GOAL_US:g} us",
            UCB_GOAL_US / us,
            1.0,
            detail,
        ),
        Ratio(
            "UCB single-env step vs checked n_envs=1 path",
            "UCB(10) act+update",
            "UCB(10, n_envs=1) act+update",
            old_us / us_again,
            None,
            f"{us_again:.3f} us vs {old_us:.2f} us per step (wall time, interleaved)",
        ),
    ]


def index_agent_ratio(name: str, make: Callable[[int | None], Agent], goal_us: float, quick: bool) -> Ratio:
    """One index agent's single-env act + update against its goal, with its n_envs=1 path for information."""
    steps, repeats = (2_000, 5) if quick else (20_000, 9)
    times = step_times(make(None), make(1), bernoulli_rows(steps), repeats, same_rounds=2_000)
    us, bare_us, cpu_us, old_us, same = times.us, times.bare_us, times.cpu_us, times.old_us, times.same
    return Ratio(
        f"{name} single-env act+update <= {goal_us:g} us",
        f"{name}({K}) act+update",
        f"{goal_us:g} us",
        goal_us / us,
        1.0,
        f"{us:.3f} us per act+update (wall time, median of {repeats}; thread CPU time {cpu_us:.3f} us); two "
        f"bare method calls {bare_us:.3f} us; the checked n_envs=1 path {old_us:.2f} us; same actions as "
        f"the n_envs=1 path: {same}",
    )


#: The private index agents timed with one env, for information: name -> constructor for one env or n copies.
DP_AGENTS: dict[str, Callable[[int | None], Agent]] = {
    "HybridDPUCB": lambda n: HybridDPUCB(K, 1.0, n_envs=n, seed=3),
    "TreeDPUCB": lambda n: TreeDPUCB(K, 100_000, 1.0, n_envs=n, seed=3),
    "AdaPUCB": lambda n: AdaPUCB(K, 1.0, n_envs=n, seed=3),
    "DPThompsonSampling": lambda n: DPThompsonSampling(K, 1.0, n_envs=n, seed=3),
    "DPTSUCB": lambda n: DPTSUCB(K, 100_000, 1.0, n_envs=n, seed=3),
    "PrePullGaussianTS": lambda n: PrePullGaussianTS(K, 5, n_envs=n, seed=3),
    "LDPThompsonSampling": lambda n: LDPThompsonSampling(K, 1.0, n_envs=n, seed=3),
}


def dp_agent_ratio(name: str, quick: bool) -> Ratio:
    """One private agent's single-env act + update against its checked n_envs=1 path (no goal)."""
    make = DP_AGENTS[name]
    steps, repeats = (2_000, 5) if quick else (20_000, 9)
    rows = bernoulli_rows(steps)
    times = step_times(make(None), make(1), rows, repeats, same_rounds=0)
    # reset() continues the noise: fresh agents, whose streams start from the seed, for the arms
    single, batch1 = make(None), make(1)
    same = all(single_step(single, batch1, row) for row in rows[:2_000])
    return Ratio(
        f"{name} single-env act+update vs checked n_envs=1 path",
        f"{name}({K}) act+update",
        f"{name}({K}, n_envs=1) act+update",
        times.old_us / times.us_again,
        None,
        f"{times.us:.3f} us per act+update (wall time, median of {repeats}; thread CPU time {times.cpu_us:.3f} us) "
        f"vs {times.old_us:.2f} us; two bare method calls {times.bare_us:.3f} us; same arms as the n_envs=1 "
        f"path: {same}",
    )


#: The wrappers timed with one env: name -> (constructor of the wrapped agent, mechanism).
WRAPPERS: dict[str, tuple[Callable[[int | None], Agent], str]] = {
    "LDPWrapper(UCB, laplace)": (lambda n: UCB(K, n_envs=n), "laplace"),
    "LDPWrapper(ThompsonSampling, randomized_response)": (
        lambda n: ThompsonSampling(K, n_envs=n, seed=3),
        "randomized_response",
    ),
}


def wrapper_ratio(name: str, quick: bool) -> Ratio:
    """One env's ``LDPWrapper`` act + update against the wrapped agent alone, with its n_envs=1 path for information."""
    make, mechanism = WRAPPERS[name]
    steps, repeats = (2_000, 5) if quick else (20_000, 9)
    rows = bernoulli_rows(steps)

    def wrapped(n: int | None) -> LDPWrapper:
        return LDPWrapper(make(n), mechanism, 1.0, seed=11)

    times = step_times(wrapped(None), wrapped(1), rows, repeats, same_rounds=0)
    # reset() continues the noise: fresh wrappers, whose users' noise starts from the seed, for the arms
    single, batch1 = wrapped(None), wrapped(1)
    same = all(single_step(single, batch1, row) for row in rows[:2_000])
    alone, subject = step_loop(make(None), rows), step_loop(wrapped(None), rows)
    subject_us, alone_us = (x / steps * 1e6 for x in interleaved(subject, alone, repeats))
    return Ratio(
        f"{name} single-env act+update vs the wrapped agent alone",
        f"{name}, K={K}, epsilon=1, act+update",
        f"{name.split('(')[1].split(',')[0]}({K}) act+update",
        alone_us / subject_us,
        None,
        f"{subject_us:.2f} us vs {alone_us:.3f} us per act+update (wall time, median of {repeats}); the "
        f"wrapper with n_envs=1 (the general path) {times.old_us:.2f} us; same arms as the n_envs=1 path: {same}",
    )


def single_step(single: Agent, batch1: Agent, row: list[float]) -> bool:
    """One round of both agents on the same reward row; whether they chose the same arm."""
    a, b = single.act(), batch1.act()
    single.update(a, row[a])
    batch1.update(b, np.array([row[int(b[0])]]))
    return a == int(b[0])


def with_info_ratio(make: Callable[..., UCB | UCBN], name: str, quick: bool) -> Ratio:
    """One env fed the real ``GraphBandit-v0`` step output (reward and info) against the checked ``n_envs=1`` path."""
    steps, repeats = (1_000, 5) if quick else (10_000, 9)
    env = gym.make("GraphBandit-v0", n_arms=K, edge_probability=0.3, instance_seed=1, horizon=steps)
    env.reset(seed=0)
    feedback = []
    rng = np.random.default_rng(2)
    for a in rng.integers(0, K, size=steps).tolist():  # the env's real step output, recorded
        _, reward, _, _, info = env.step(a)
        feedback.append((reward, info))
    where = "GraphBandit-v0 reward and info, side observations included"
    return replayed_ratio(name, make(K), make(K, n_envs=1), feedback, repeats, where)


def replayed_ratio(
    name: str, one_env: Agent, batch_of_one: Agent, feedback: list[tuple[Any, dict[str, Any]]], repeats: int, where: str
) -> Ratio:
    """``one_env`` replaying the recorded (reward, info) of each round against ``batch_of_one`` (n_envs=1) on the same.

    Each replay starts from ``reset(seed=0)``, so an agent seeded 0 chooses the arms it chose when
    the feedback was recorded.
    """
    batch_feedback = [
        (np.array([reward]), {key: np.asarray(value)[None] for key, value in info.items()}) for reward, info in feedback
    ]

    def loop(agent: Agent, rounds: list[tuple[Any, dict[str, Any]]]) -> Callable[[], None]:
        def run() -> None:
            agent.reset(seed=0)
            act, update = agent.act, agent.update
            for reward, info in rounds:
                update(act(), reward, info)

        return run

    one, checked = loop(one_env, feedback), loop(batch_of_one, batch_feedback)
    one()
    checked()
    us, old_us = (x / len(feedback) * 1e6 for x in interleaved(one, checked, repeats))
    return Ratio(
        f"{name} single-env step with the env's info vs checked n_envs=1 path",
        f"{name}(10) act+update(a, r, info)",
        f"{name}(10, n_envs=1) act+update",
        old_us / us,
        None,
        f"{us:.2f} us vs {old_us:.2f} us per step ({where})",
    )


#: The elimination agents timed with one env on GraphBandit-v0: name -> constructor (graph, horizon, n_envs).
ELIMINATION_AGENTS: dict[str, Callable[[np.ndarray, int, int | None], Agent]] = {
    "GAP": lambda graph, horizon, n: GAP(K, horizon, 1.0, graph, n_envs=n, seed=0),
    "GAPU": lambda graph, horizon, n: GAPU(K, horizon, 1.0, graph, n_envs=n, seed=0),
    "DPSE": lambda graph, horizon, n: DPSE(K, horizon, 1.0, n_envs=n, seed=0),
    "AAE": lambda graph, horizon, n: AAE(K, horizon, n_envs=n, seed=0),
    "AlphaSample": lambda graph, horizon, n: AlphaSample(K, horizon, n_envs=n, seed=0),
}


def elimination_step_ratio(name: str, quick: bool) -> Ratio:
    """One env's act + update(a, r, info) on ``GraphBandit-v0``'s output for its own arms, against ``n_envs=1``."""
    steps, repeats = (1_000, 5) if quick else (10_000, 9)
    env = gym.make("GraphBandit-v0", n_arms=K, edge_probability=0.3, instance_seed=1, horizon=steps)
    _, info = env.reset(seed=0)
    make = ELIMINATION_AGENTS[name]
    single, checked = make(info["feedback_graph"], steps, None), make(info["feedback_graph"], steps, 1)
    feedback = []
    for _ in range(steps):  # the env's real step output for the arms the agent chooses, recorded
        a = single.act()
        _, reward, _, _, info = env.step(a)
        single.update(a, reward, info)
        feedback.append((reward, info))
    where = "GraphBandit-v0 reward and info for the agent's own arms"
    return replayed_ratio(name, single, checked, feedback, repeats, where)


def linear_problem(rounds: int, seed: int = 0, n_users: int = 943) -> tuple[np.ndarray, np.ndarray]:
    """MovieLens-like rounds: a random user's fixed 20 x 20 matrix of unit rows, rewards x.theta* in [-1, 1]."""
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n_users, ARMS, D))
    feats /= np.linalg.norm(feats, axis=2, keepdims=True)
    theta = rng.normal(size=D)
    rewards = np.clip(feats @ (theta / np.linalg.norm(theta)), -1.0, 1.0)
    users = rng.integers(n_users, size=rounds)
    return np.ascontiguousarray(feats[users]), np.ascontiguousarray(rewards[users])


def linear_ratio(name: str, make: Callable[[], LinUCB | LDPLinUCB], quick: bool) -> Ratio:
    steps, repeats = (1_000, 5) if quick else (5_000, 9)
    x, r = linear_problem(steps)
    return step_api_vs_run(name, name, make(), x, r, repeats, f"d={D}, {ARMS} arms")


def results(quick: bool = False) -> list[Ratio]:
    """The step-API ratios (``quick``: a few seconds in all)."""
    out = ucb_ratios(quick)
    out.extend(index_agent_ratio(name, make, goal, quick) for name, (make, goal) in INDEX_AGENTS.items())
    out.append(with_info_ratio(UCB, "UCB", quick))
    out.append(with_info_ratio(UCBN, "UCBN", quick))
    out.extend(elimination_step_ratio(name, quick) for name in ELIMINATION_AGENTS)
    out.extend(dp_agent_ratio(name, quick) for name in DP_AGENTS)
    out.extend(wrapper_ratio(name, quick) for name in WRAPPERS)
    out.append(linear_ratio("LinUCB", lambda: LinUCB(D, 1.0, seed=0), quick))
    out.append(
        linear_ratio(
            "LDPLinUCB",
            lambda: LDPLinUCB(D, 8e5, 0.1, 0.1, 100_000, bonus="quadratic", seed=0),
            quick,
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repetitions (a few seconds)")
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")
    print_results(results(args.quick))


if __name__ == "__main__":
    main()
