"""Agent-steps per second of batched UCB (agents.index.UCB, numba kernels) vs a plain loop.

Target: one core, 1000 copies, K = 10, act + update of all copies in <= 100 us, i.e.
>= 1e7 agent-steps/s. Measured here in one run:

* batched UCB fed from a pre-drawn Bernoulli reward table (agent time and whole loop);
* batched UCB on the native vector env ``GraphBandit-v0`` (agent time and whole loop);
* a straightforward per-copy Python/numpy UCB (the reference loop) on a few copies of the same
  table, scaled per agent-step; its actions are checked against the batched agent's.

Usage: ``python benchmarks/bench_ucb_batch.py [--copies 1000] [--arms 10] [--steps 2000]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.index import UCB

TARGET = 1e7  # agent-steps per second
TABLE_ROWS = 256  # distinct reward rows, cycled (keeps the table small; values are i.i.d.)


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


def pin_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def run_batched(
    agent: UCB, steps: int, rewards: Callable[[int, np.ndarray], np.ndarray]
) -> tuple[float, float, np.ndarray]:
    """Return (agent seconds, loop seconds, actions (steps, B)) of one run."""
    actions = np.empty((steps, agent.batch), dtype=np.int64)
    agent_time = 0.0
    start = time.perf_counter()
    for t in range(steps):
        t0 = time.perf_counter()
        a = agent.act()
        t1 = time.perf_counter()
        r = rewards(t, a)
        t2 = time.perf_counter()
        agent.update(a, r)
        agent_time += (t1 - t0) + (time.perf_counter() - t2)
        actions[t] = a
    return agent_time, time.perf_counter() - start, actions


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--ref-copies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed runs")
    args = parser.parse_args()
    n, k, steps = args.copies, args.arms, args.steps
    alpha = math.sqrt(2.0)

    print(
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}; {pin_one_core()}"
    )
    print(f"UCB(alpha=sqrt 2), {n} copies x K={k} x {steps} steps; best of {args.repeats}\n")

    rng = np.random.default_rng(0)
    means = rng.uniform(0.2, 0.8, size=k)
    table = (rng.random((TABLE_ROWS, n, k)) < means).astype(np.float64)
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


if __name__ == "__main__":
    main()
