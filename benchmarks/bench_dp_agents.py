"""Agent-steps per second of the batched private agents (agents/central_dp/) vs batched UCB.

Goal: the private index agents (``HybridDPUCB``, ``TreeDPUCB``, ``AdaPUCB``) batched at K = 10
arms × 1000 copies on one core reach at least 0.3× the agent-steps per second of batched
:class:`agents.UCB` (their extra work: a Laplace draw from the copy's own noise stream and a
counter update per step, a wider index). The Thompson samplers (``DPThompsonSampling``: K normal
draws per copy and round; ``LDPThompsonSampling``: 2K gamma draws) are measured for
information, without a goal. Measured in one run:

* each agent against batched UCB on the same pre-drawn Bernoulli reward table, act + update
  only, the two alternating every 50 rounds (medians over runs of the thread CPU time, so
  other processes on the machine do not count);
* each agent against its plain per-copy Python loop (:mod:`agents.central_dp.reference`, one copy at
  a time, on a few copies of the same table), scaled per agent-step; the reference's arms are
  checked against the batched agent's copies (same seeds, same rewards: same arms).

``results(quick)`` returns the ratios (``benchmarks/_common.py``); ``main`` prints them.
Usage: ``python benchmarks/bench_dp_agents.py [--quick]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import Ratio, quick_main
from bench_ucb_batch import TABLE_ROWS, bernoulli_table, one_core, play_table

from agents.central_dp import reference as dp_reference
from agents.central_dp.thompson import DPThompsonSampling
from agents.central_dp.ucb import AdaPUCB, HybridDPUCB, TreeDPUCB
from agents.local_dp import reference as ldp_reference
from agents.local_dp.thompson import LDPThompsonSampling
from agents.stochastic.index import UCB

GOAL = 0.3  # a private index agent's agent-steps/s as a fraction of batched UCB's
BLOCK = 50  # rounds timed at once when an agent and UCB alternate
COPIES, ARMS, EPSILON, SEED = 1000, 10, 1.0, 0
HORIZON = 100_000  # TreeDPUCB's horizon: 17 tree levels


def agents_under_test(horizon: int) -> dict[str, tuple[Callable[[int | None, int], Any], Callable[[int], Any], bool]]:
    """name -> (make(n_envs, seed), make the plain per-copy reference(seed), has a speed goal)."""
    return {
        "HybridDPUCB": (
            lambda n, s: HybridDPUCB(ARMS, EPSILON, n_envs=n, seed=s),
            lambda s: dp_reference.ReferenceHybridDPUCB(ARMS, EPSILON, seed=s),
            True,
        ),
        "TreeDPUCB": (
            lambda n, s: TreeDPUCB(ARMS, horizon, EPSILON, n_envs=n, seed=s),
            lambda s: dp_reference.ReferenceTreeDPUCB(ARMS, horizon, EPSILON, seed=s),
            True,
        ),
        "AdaPUCB": (
            lambda n, s: AdaPUCB(ARMS, EPSILON, n_envs=n, seed=s),
            lambda s: dp_reference.ReferenceAdaPUCB(ARMS, EPSILON, seed=s),
            True,
        ),
        "DPThompsonSampling": (
            lambda n, s: DPThompsonSampling(ARMS, EPSILON, n_envs=n, seed=s),
            lambda s: dp_reference.ReferenceDPThompsonSampling(ARMS, EPSILON, seed=s),
            False,
        ),
        "LDPThompsonSampling": (
            lambda n, s: LDPThompsonSampling(ARMS, EPSILON, n_envs=n, seed=s),
            lambda s: ldp_reference.ReferenceLDPThompsonSampling(ARMS, EPSILON, seed=s),
            False,
        ),
    }


def run_batched(agent: Any, table: np.ndarray, start: int, stop: int, actions: np.ndarray) -> float:
    """Thread CPU seconds of act + update over rounds ``start..stop-1`` of ``table``; arms into ``actions``."""
    return play_table(agent, table, start, stop, actions, clock=time.thread_time)


def alternate(agent: Any, ucb: UCB, table: np.ndarray, steps: int) -> tuple[float, float, np.ndarray]:
    """(agent seconds, UCB seconds, the agent's arms): ``steps`` rounds each, alternating every BLOCK rounds."""
    actions = np.empty((steps, agent.batch), dtype=np.int64)
    ucb_actions = np.empty((steps, ucb.batch), dtype=np.int64)
    agent_s = ucb_s = 0.0
    for start in range(0, steps, BLOCK):
        stop = min(steps, start + BLOCK)
        agent_s += run_batched(agent, table, start, stop, actions)
        ucb_s += run_batched(ucb, table, start, stop, ucb_actions)
    return agent_s, ucb_s, actions


def run_reference(make: Callable[[int], Any], table: np.ndarray, steps: int, copies: int) -> tuple[float, np.ndarray]:
    """(thread CPU seconds, actions (steps, copies)) of the per-copy loop on copies 0..copies-1."""
    actions = np.empty((steps, copies), dtype=np.int64)
    start = time.thread_time()
    for i in range(copies):
        agent = make(SEED + i)
        for t in range(steps):
            a = agent.act()
            agent.update(a, float(table[t % TABLE_ROWS, i, a]))
            actions[t, i] = a
    return time.thread_time() - start, actions


def results(quick: bool = False) -> list[Ratio]:
    """Each private agent (1000 copies, K = 10, one core) against batched UCB and its per-copy loop."""
    steps, repeats, ref_steps, ref_copies = (200, 5, 200, 2) if quick else (1000, 7, 1000, 3)
    table = bernoulli_table(COPIES, ARMS)
    out = []
    with one_core():
        ucb = UCB(ARMS, n_envs=COPIES)
        warm = np.empty((20, COPIES), dtype=np.int64)
        run_batched(ucb, table, 0, 20, warm)  # compile / load
        for name, (make, make_reference, has_goal) in agents_under_test(HORIZON).items():
            run_batched(make(COPIES, SEED), table, 0, 20, warm)
            agent_times, ucb_times = [], []
            actions = np.empty(0)
            for _ in range(repeats):
                agent = make(COPIES, SEED)  # built outside the timed rounds
                ucb.reset()
                agent_s, ucb_s, actions = alternate(agent, ucb, table, steps)
                agent_times.append(agent_s)
                ucb_times.append(ucb_s)
            agent_s, ucb_s = statistics.median(agent_times), statistics.median(ucb_times)
            rate, ucb_rate = COPIES * steps / agent_s, COPIES * steps / ucb_s
            out.append(
                Ratio(
                    f"batched {name} vs batched UCB",
                    f"{name}(n_envs={COPIES}) act+update",
                    f"UCB(n_envs={COPIES}) act+update",
                    rate / ucb_rate,
                    GOAL if has_goal else None,
                    f"{rate:.3e} vs {ucb_rate:.3e} agent-steps/s ({agent_s / steps * 1e6:.0f} vs "
                    f"{ucb_s / steps * 1e6:.0f} us per step of {COPIES} copies), K={ARMS}, eps={EPSILON}, "
                    f"one core, thread CPU time, medians of {repeats} runs of {steps} rounds alternating every {BLOCK}",
                )
            )
            ref_s, ref_actions = run_reference(make_reference, table, min(ref_steps, steps), ref_copies)
            ref_rate = ref_copies * min(ref_steps, steps) / ref_s
            same = np.array_equal(ref_actions, actions[: min(ref_steps, steps), :ref_copies])
            out.append(
                Ratio(
                    f"batched {name} vs per-copy Python loop",
                    f"{name}(n_envs={COPIES}) act+update",
                    f"agents.central_dp.reference, {ref_copies} copies one by one",
                    rate / ref_rate,
                    None,
                    f"{rate:.3e} vs {ref_rate:.3e} agent-steps/s; same arms as copies 0-{ref_copies - 1}: {same}",
                )
            )
    return out


def main() -> None:
    quick_main(results, __doc__)


if __name__ == "__main__":
    main()
