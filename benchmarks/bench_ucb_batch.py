"""Agent-steps per second of batched UCB (agents.UCB, numba kernels) vs a compiled loop and a plain loop.

Target: one core, 1000 copies, K = 10, act + update of all copies in <= 100 us, i.e.
>= 1e7 agent-steps/s; and at least 0.85x the speed of a hand-written compiled numba loop doing
the same UCB on the same reward table (:func:`compiled_ucb`, which also chooses the same actions:
checked). Measured here in one run:

* batched UCB fed from a pre-drawn Bernoulli reward table (agent time and whole loop);
* the hand-written compiled loop on the same table, interleaved with the agent's runs (medians),
  and the same loop with the arms' indices in a branch-free (vectorized) loop as the agent's
  kernel has them (for information: the stronger reference);
* batched UCB on the native vector env ``GraphBandit-v0`` (agent time and whole loop);
* a straightforward per-copy Python/numpy UCB (the reference loop) on a few copies of the same
  table, scaled per agent-step; its actions are checked against the batched agent's.

``results(quick)`` returns the ratios (``benchmarks/_common.py``); ``main`` prints them with the
table above. Usage: ``python benchmarks/bench_ucb_batch.py [--copies 1000] [--arms 10] [--steps 2000]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from _common import Ratio, print_results

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.common.kernels import first_argmax, ucb_row_choice
from agents.stochastic.index import UCB
from bandit_envs._jit import njit

TARGET = 1e7  # agent-steps per second
COMPILED_GOAL = 0.85  # batched UCB's speed as a fraction of the compiled loop's
TABLE_ROWS = 256  # distinct reward rows, cycled (keeps the table small; values are i.i.d.)
BLOCK = 50  # rounds timed at once when the agent and the compiled loop alternate


class ReferenceUCB:
    """UCB for one copy as one would write it without batching: numpy over the K arms."""

    def __init__(self, n_arms: int, alpha: float) -> None:
        self.alpha = alpha
        self.counts = np.zeros(n_arms)
        self.sums = np.zeros(n_arms)
        self.t = 0

    def act(self) -> int:
        untried = np.flatnonzero(self.counts == 0)
        if untried.size:
            return int(untried[0])
        means = self.sums / self.counts
        index = means + np.sqrt(self.alpha**2 * math.log(self.t + 1) / self.counts)
        return int(np.argmax(index))

    def update(self, action: int, reward: float) -> None:
        self.counts[action] += 1
        self.sums[action] += reward
        self.t += 1


@njit
def compiled_ucb(
    table: np.ndarray,
    start: int,
    stop: int,
    coef: float,
    sums: np.ndarray,
    means: np.ndarray,
    counts: np.ndarray,
    actions: np.ndarray,
) -> None:  # pragma: no cover
    """UCB for every copy b of ``table`` (rows, B, K) over rounds ``start..stop-1``, in one compiled loop.

    Round t (0-based) plays the first unplayed arm, else argmax of mean + sqrt(coef ln(t + 1) / n)
    (strict ``>``: ties to the lowest index), receives ``table[t % rows, b, arm]`` and updates
    the count, sum and mean (sum / count) of that arm in the (B, K) arrays ``counts``, ``sums``,
    ``means``; the arm goes to ``actions[t, b]``. The same arithmetic as :class:`agents.UCB` with
    ``alpha**2 == coef``, written the plain way.
    """
    n_rows, n_copies, _ = table.shape
    for t in range(start, stop):
        width = coef * math.log(t + 1)
        for b in range(n_copies):
            best = ucb_row_choice(means, counts, b, width)
            counts[b, best] += 1
            sums[b, best] += table[t % n_rows, b, best]
            means[b, best] = sums[b, best] / counts[b, best]
            actions[t, b] = best


@njit(error_model="numpy")
def compiled_ucb_split(
    table: np.ndarray,
    start: int,
    stop: int,
    coef: float,
    sums: np.ndarray,
    means: np.ndarray,
    counts: np.ndarray,
    actions: np.ndarray,
) -> None:  # pragma: no cover
    """:func:`compiled_ucb` with the arms' indices in a branch-free loop of their own (as the agent does).

    Once no count is 0, ``index[k] = means[b, k] + sqrt(width / counts[b, k])`` for every arm, then
    the first largest (:func:`agents.common.kernels.first_argmax`, inlined); LLVM vectorizes that
    loop (``error_model="numpy"``: no division check). The same values and actions as
    :func:`compiled_ucb`; the stronger reference.
    """
    n_rows, n_copies, n_arms = table.shape
    index = np.empty(n_arms)
    for t in range(start, stop):
        width = coef * math.log(t + 1)
        for b in range(n_copies):
            best = -1
            for k in range(n_arms):
                if counts[b, k] == 0:
                    best = k
                    break
            if best < 0:
                for k in range(n_arms):
                    index[k] = means[b, k] + np.sqrt(width / counts[b, k])
                best = first_argmax(index)
            counts[b, best] += 1
            sums[b, best] += table[t % n_rows, b, best]
            means[b, best] = sums[b, best] / counts[b, best]
            actions[t, b] = best


@contextmanager
def one_core() -> Iterator[str]:
    """Run the block pinned to one CPU (restoring the affinity afterwards)."""
    if not hasattr(os, "sched_setaffinity"):
        yield "not pinned (no sched_setaffinity)"
        return
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    try:
        yield f"pinned to CPU {cpu}"
    finally:
        os.sched_setaffinity(0, before)


def run_batched(
    agent: UCB, steps: int, rewards: Callable[[int, np.ndarray], np.ndarray], first: int = 0
) -> tuple[float, float, np.ndarray]:
    """Return (agent seconds, loop seconds, actions (steps, B)) of ``steps`` rounds from round ``first``."""
    actions = np.empty((steps, agent.batch), dtype=np.int64)
    agent_time = 0.0
    start = time.perf_counter()
    for t in range(steps):
        t0 = time.perf_counter()
        a = agent.act()
        t1 = time.perf_counter()
        r = rewards(first + t, a)
        t2 = time.perf_counter()
        agent.update(a, r)
        agent_time += (t1 - t0) + (time.perf_counter() - t2)
        actions[t] = a
    return agent_time, time.perf_counter() - start, actions


def play_table(
    agent: Any,
    table: np.ndarray,
    start: int,
    stop: int,
    actions: np.ndarray,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds (by ``clock``) spent in act + update over rounds ``start..stop-1`` of ``table``; arms into ``actions``.

    Round t reads row ``t % TABLE_ROWS`` of the (rows, B, K) table: copy b's reward is its entry at the arm it pulled.
    """
    rows = np.arange(agent.batch)
    spent = 0.0
    for t in range(start, stop):
        begin = clock()
        a = agent.act()
        middle = clock()
        r = table[t % TABLE_ROWS, rows, a]
        resume = clock()
        agent.update(a, r)
        spent += (middle - begin) + (clock() - resume)
        actions[t] = a
    return spent


def run_reference(copies: int, arms: int, steps: int, alpha: float, table: np.ndarray) -> tuple[float, np.ndarray]:
    actions = np.empty((steps, copies), dtype=np.int64)
    start = time.perf_counter()
    for i in range(copies):
        agent = ReferenceUCB(arms, alpha)
        for t in range(steps):
            a = agent.act()
            agent.update(a, float(table[t % TABLE_ROWS, i, a]))
            actions[t, i] = a
    return time.perf_counter() - start, actions


def bernoulli_table(copies: int, arms: int, seed: int = 0) -> np.ndarray:
    """(TABLE_ROWS, copies, arms) Bernoulli rewards, arm means drawn in [0.2, 0.8]."""
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.2, 0.8, size=arms)
    return (rng.random((TABLE_ROWS, copies, arms)) < means).astype(np.float64)


def compiled_ratio(
    copies: int,
    arms: int,
    steps: int,
    repeats: int,
    alpha: float = math.sqrt(2.0),
    loop: Callable[..., None] = compiled_ucb,
    goal: float | None = COMPILED_GOAL,
) -> tuple[Ratio, np.ndarray, float]:
    """Batched UCB (act + update only) against the compiled ``loop``, interleaved.

    Returns the ratio, the agent's actions (steps, copies) and its median seconds per step.
    """
    table = bernoulli_table(copies, arms)
    rows = np.arange(copies)

    def from_table(t: int, a: np.ndarray) -> np.ndarray:
        return table[t % TABLE_ROWS, rows, a]

    agent = UCB(arms, alpha, n_envs=copies)
    actions = np.empty((steps, copies), dtype=np.int64)
    compiled_actions = np.empty((steps, copies), dtype=np.int64)
    run_batched(agent, min(steps, 20), from_table)  # compile / load the kernels
    state = np.zeros((3, copies, arms))
    loop(table, 0, 2, alpha**2, state[0], state[1], state[2].astype(np.int64), compiled_actions)
    agent_times, compiled_times = [], []
    for _ in range(repeats):  # blocks of BLOCK rounds, agent and loop alternating: a busy machine slows both alike
        agent.reset()
        sums, means, counts = np.zeros((copies, arms)), np.zeros((copies, arms)), np.zeros((copies, arms), np.int64)
        agent_s = compiled_s = 0.0
        for start in range(0, steps, BLOCK):
            stop = min(steps, start + BLOCK)
            spent, _, actions[start:stop] = run_batched(agent, stop - start, from_table, start)
            agent_s += spent
            begin = time.perf_counter()
            loop(table, start, stop, alpha**2, sums, means, counts, compiled_actions)
            compiled_s += time.perf_counter() - begin
        agent_times.append(agent_s)
        compiled_times.append(compiled_s)
    agent_s, compiled_s = statistics.median(agent_times), statistics.median(compiled_times)
    same = np.array_equal(actions, compiled_actions)
    plain = loop is compiled_ucb
    ratio = Ratio(
        "batched UCB vs compiled loop" + ("" if plain else " with a vectorized index"),
        f"UCB(n_envs={copies}) act+update",
        f"hand-written numba loop ({'compiled_ucb' if plain else 'compiled_ucb_split'})",
        compiled_s / agent_s,
        goal,
        f"{agent_s / steps * 1e6:.1f} us vs {compiled_s / steps * 1e6:.1f} us per step of {copies} copies, "
        f"K={arms}, one core (medians of {repeats} runs, alternating every {BLOCK} rounds); same actions: {same}",
    )
    return ratio, actions, agent_s / steps


def results(quick: bool = False) -> list[Ratio]:
    """Batched UCB (1000 copies, K = 10, one core): against the compiled loop, the 1e7 target and plain Python."""
    copies, arms = 1000, 10
    steps, repeats, ref_copies = (300, 5, 2) if quick else (2000, 7, 10)
    with one_core():
        compiled, actions, step_s = compiled_ratio(copies, arms, steps, repeats)
        split, _, _ = compiled_ratio(copies, arms, steps, repeats, loop=compiled_ucb_split, goal=None)
        rate = copies / step_s
        table = bernoulli_table(copies, arms)
        ref_s, ref_actions = run_reference(ref_copies, arms, steps, math.sqrt(2.0), table)
    ref_rate = ref_copies * steps / ref_s
    same = np.array_equal(ref_actions, actions[:, :ref_copies])
    return [
        compiled,
        split,
        Ratio(
            "batched UCB agent-steps/s vs target",
            f"UCB(n_envs={copies}) act+update",
            f"{TARGET:.0e} agent-steps/s",
            rate / TARGET,
            1.0,
            f"{rate:.3e} agent-steps/s ({copies / rate * 1e6:.1f} us per step of all copies), one core",
        ),
        Ratio(
            "batched UCB vs per-copy numpy loop",
            f"UCB(n_envs={copies}) act+update",
            f"ReferenceUCB, {ref_copies} copies one by one",
            rate / ref_rate,
            None,
            f"{rate:.3e} vs {ref_rate:.3e} agent-steps/s; same actions as copies 0-{ref_copies - 1}: {same}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--ref-copies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed runs")
    parser.add_argument("--quick", action="store_true", help="only the ratios of results(quick=True)")
    args = parser.parse_args()
    if args.quick:
        print_results(results(quick=True))
        return
    n, k, steps = args.copies, args.arms, args.steps
    alpha = math.sqrt(2.0)

    with one_core() as pinned:
        print(
            f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}; {pinned}"
        )
        print(f"UCB(alpha=sqrt 2), {n} copies x K={k} x {steps} steps; best of {args.repeats}\n")

        table = bernoulli_table(n, k)
        rows = np.arange(n)

        def from_table(t: int, a: np.ndarray) -> np.ndarray:
            return table[t % TABLE_ROWS, rows, a]

        agent = UCB(k, alpha, n_envs=n)
        run_batched(agent, min(steps, 50), from_table)  # compile / load the numba kernels
        best_agent, best_loop = math.inf, math.inf
        for _ in range(args.repeats):
            agent.reset()
            agent_s, loop_s, batched_actions = run_batched(agent, steps, from_table)
            best_agent, best_loop = min(best_agent, agent_s), min(best_loop, loop_s)
        table_agent_rate, table_loop_rate = n * steps / best_agent, n * steps / best_loop

        compiled, _, _ = compiled_ratio(n, k, steps, args.repeats, alpha)

        env = gym.make_vec("GraphBandit-v0", num_envs=n, n_arms=k, horizon=steps)

        def from_env(t: int, a: np.ndarray) -> np.ndarray:
            return env.step(a)[1]

        env_agent, env_loop = math.inf, math.inf
        for repeat in range(args.repeats):
            env.reset(seed=repeat)
            agent.reset()
            agent_s, loop_s, _ = run_batched(agent, steps, from_env)
            env_agent, env_loop = min(env_agent, agent_s), min(env_loop, loop_s)
        env_agent_rate, env_loop_rate = n * steps / env_agent, n * steps / env_loop

        ref_copies = min(args.ref_copies, n)
        ref_s, ref_actions = run_reference(ref_copies, k, steps, alpha, table)
    ref_rate = ref_copies * steps / ref_s
    same = np.array_equal(ref_actions, batched_actions[:, :ref_copies])

    print(f"{'path':<44}{'agent-steps/s':>16}{'us/step (all copies)':>24}")
    for label, rate, copies in [
        ("batched UCB, table: act+update only", table_agent_rate, n),
        ("batched UCB, table: whole loop", table_loop_rate, n),
        ("batched UCB, vector env: act+update only", env_agent_rate, n),
        ("batched UCB, vector env: whole loop", env_loop_rate, n),
        (f"reference per-copy loop ({ref_copies} copies)", ref_rate, ref_copies),
    ]:
        print(f"{label:<44}{rate:>16.3e}{copies / rate * 1e6:>24.1f}")
    print(f"\nratio batched (act+update) / reference: {table_agent_rate / ref_rate:,.0f}x")
    print(f"ratio batched whole loop on the env / reference: {env_loop_rate / ref_rate:,.0f}x")
    print(f"reference actions equal batched copies 0-{ref_copies - 1}: {same}")
    verdict = "PASS" if table_agent_rate >= TARGET else "FAIL"
    print(f"target >= {TARGET:.0e} agent-steps/s (act+update): {verdict}")
    print(compiled.line())


if __name__ == "__main__":
    main()
