"""Every batched agent with 100 copies against itself with 1,000, per agent-step: what the fixed cost of a round adds.

A batched agent's round costs a fixed part (the Python of ``act`` and ``update``, the argument
checks, the calls into compiled code) plus a part per copy. The goal: at 100 copies, at most
1.5x the per-agent-step cost at 1,000 (ratio >= 1/1.5). Every batched agent of the library is
measured: the index agents, the Exp3 family, the graph agents, the central-DP agents, local-DP
Thompson sampling and :class:`agents.LDPWrapper` around UCB (each mechanism) and Thompson
sampling. K = 10, one core.

Both sizes play the same Bernoulli reward table (``bench_ucb_batch.bernoulli_table``; the 100
copies get the first 100 copies' rewards and seeds, so they choose the first 100 copies' arms,
which is checked), alternating every ``BLOCK`` rounds, medians of the repeats. Each round's
``act`` and ``update`` calls are timed (``time.perf_counter`` around each: about 0.1 us of
clock reads a round, alike for both sizes); the pulled arms' rewards are picked, and the graph
agents' info made (the pulled arm's closed neighbourhood in G(10, 0.3) and the table's row, as
:class:`bandit_envs.graph.GraphBanditVectorEnv` gives), between the timed calls.

What the goal leaves: at 100 copies it allows half the 1,000-copy cost per agent-step for the
fixed part of a round. Each row states that allowance next to the cost of a round of
:class:`EmptyAgent`, which does only what every batched round does (a new array of arms, the
usual check of the feedback, one compiled call in ``act`` and one in ``update``, which do
nothing): where the empty round alone exceeds the allowance, no leaner Python can meet the goal,
unless the copies' own work costs less at 100 copies than at 1,000 (their state fits in a
smaller cache there).

``results(quick)`` returns the ratios (``benchmarks/_common.py``); ``main`` prints them. Usage:
``python benchmarks/bench_small_batch.py [--quick]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from _common import Ratio, quick_main
from bench_index_agents import BLOCK, alternate_blocks
from bench_ucb_batch import TABLE_ROWS, bernoulli_table, one_core
from numba import types

from agents import (
    DPTSUCB,
    KLUCB,
    MOSS,
    UCB,
    UCBN,
    AdaPUCB,
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
from agents.base import Agent, SingleEnvKernel
from bandit_envs._jit import njit
from bandit_envs.feedback_graphs import closed_neighbourhoods, erdos_renyi

SMALL, LARGE = 100, 1000  # copies of the two batches
GOAL = 1 / 1.5  # the small batch's per-agent-step speed as a fraction of the large batch's
ARMS = 10
SEED = 7
HORIZON = 10_000  # the horizon of the agents that take one (the rounds played stay below it)
#: The feedback graph of the graph agents: Erdős–Rényi G(10, 0.3), as bench_index_agents' Exp3-SET rows.
GRAPH = erdos_renyi(ARMS, 0.3, SEED)
CLOSED = closed_neighbourhoods(GRAPH)

#: name -> (the agent with n copies, whether it reads the env's side observations).
AGENTS: dict[str, tuple[Callable[[int], Agent], bool]] = {
    "Random": (lambda n: Random(ARMS, n_envs=n, seed=SEED), False),
    "UCB": (lambda n: UCB(ARMS, n_envs=n, seed=SEED), False),
    "KLUCB": (lambda n: KLUCB(ARMS, n_envs=n, seed=SEED), False),
    "MOSS": (lambda n: MOSS(ARMS, HORIZON, n_envs=n, seed=SEED), False),
    "ThompsonSampling": (lambda n: ThompsonSampling(ARMS, n_envs=n, seed=SEED), False),
    "EpsilonGreedy": (lambda n: EpsilonGreedy(ARMS, n_envs=n, seed=SEED), False),
    "Exp3": (lambda n: Exp3(ARMS, HORIZON, n_envs=n, seed=SEED), False),
    "UCBN": (lambda n: UCBN(ARMS, n_envs=n, seed=SEED), True),
    "TS-N": (lambda n: ThompsonSampling(ARMS, side_observations=True, n_envs=n, seed=SEED), True),
    "Exp3SET": (lambda n: Exp3SET(ARMS, GRAPH, HORIZON, n_envs=n, seed=SEED), True),
    "Exp3IX": (lambda n: Exp3IX(ARMS, GRAPH, n_envs=n, seed=SEED), True),
    "HybridDPUCB": (lambda n: HybridDPUCB(ARMS, 1.0, n_envs=n, seed=SEED), False),
    "TreeDPUCB": (lambda n: TreeDPUCB(ARMS, HORIZON, 1.0, n_envs=n, seed=SEED), False),
    "AdaPUCB": (lambda n: AdaPUCB(ARMS, 1.0, n_envs=n, seed=SEED), False),
    "DPThompsonSampling": (lambda n: DPThompsonSampling(ARMS, 1.0, n_envs=n, seed=SEED), False),
    "PrePullGaussianTS": (lambda n: PrePullGaussianTS.for_budget(ARMS, HORIZON, 1.0, n_envs=n, seed=SEED), False),
    "DPTSUCB": (lambda n: DPTSUCB.for_budget(ARMS, HORIZON, 1.0, n_envs=n, seed=SEED), False),
    "LDPThompsonSampling": (lambda n: LDPThompsonSampling(ARMS, 1.0, n_envs=n, seed=SEED), False),
    "LDPWrapper(UCB, laplace)": (
        lambda n: LDPWrapper(UCB(ARMS, n_envs=n, seed=SEED), "laplace", 1.0, seed=SEED + LARGE),
        False,
    ),
    "LDPWrapper(UCB, gaussian)": (
        lambda n: LDPWrapper(UCB(ARMS, n_envs=n, seed=SEED), "gaussian", 0.9, 1e-5, seed=SEED + LARGE),
        False,
    ),
    "LDPWrapper(UCB, randomized_response)": (
        lambda n: LDPWrapper(UCB(ARMS, n_envs=n, seed=SEED), "randomized_response", 1.0, seed=SEED + LARGE),
        False,
    ),
    "LDPWrapper(ThompsonSampling, randomized_response)": (
        lambda n: LDPWrapper(
            ThompsonSampling(ARMS, n_envs=n, seed=SEED), "randomized_response", 1.0, seed=SEED + LARGE
        ),
        False,
    ),
}


@njit
def _nothing(arms):  # pragma: no cover
    """A compiled call that does nothing with its array."""
    return arms.shape[0]


_NOTHING = SingleEnvKernel(_nothing, (types.Array(types.int64, 1, "C"),))
_ZEROS, _INT64, _FLOAT64 = np.zeros, np.dtype(np.int64), np.dtype(np.float64)


class EmptyAgent(Agent):
    """An agent whose round is only what every batched round does: the bound on a round's fixed cost.

    ``act`` makes a new array of arms (the caller owns it) and makes one compiled call (which
    does nothing); ``update`` checks the usual batch as the fastest agents do (int64 and float64
    arrays of the batch's shape, C-contiguous, no info: the first case of
    :meth:`agents.base.Agent._feedback`, inlined, the values left to the kernel) and makes one
    compiled call. Every arm is 0.
    """

    def __init__(self, n_arms: int, *, n_envs: int) -> None:
        super().__init__(n_arms, n_envs=n_envs)
        self._shape = (n_envs,)
        _NOTHING.load()

    def _reset_state(self) -> None:
        pass

    def act(self, obs: Any = None) -> Any:
        out = _ZEROS(self._shape, _INT64)  # arm 0 everywhere (the kernel does nothing)
        _NOTHING.call(out)
        return out

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        if not (
            type(action) is np.ndarray
            and type(reward) is np.ndarray
            and action.dtype is _INT64
            and reward.dtype is _FLOAT64
            and action.shape == reward.shape == self._shape
            and info is None
            and action.flags.carray
            and reward.flags.carray
        ):
            action, _ = self._feedback(action, reward, info, check_values=False)
        _NOTHING.call(action)


def _play(agent: Agent, table: np.ndarray, start: int, stop: int, actions: np.ndarray, observes: bool) -> float:
    """Rounds ``start``..``stop`` of ``agent`` on ``table`` ((TABLE_ROWS, B, K)); seconds inside act and update."""
    rows = np.arange(table.shape[1])
    clock = time.perf_counter
    spent = 0.0
    for t in range(start, stop):
        row = table[t % TABLE_ROWS]
        t0 = clock()
        a = agent.act()
        t1 = clock()
        actions[t] = a
        rewards = row[rows, a]
        info = {"observed_mask": CLOSED[a], "observed_rewards": row} if observes else None
        t2 = clock()
        agent.update(a, rewards, info)
        spent += (t1 - t0) + (clock() - t2)
    return spent


def _alternate(
    runs: list[tuple[Agent, np.ndarray, np.ndarray]], observes: bool, steps: int, repeats: int
) -> list[float]:
    """Median seconds of each (agent, table, actions) over ``repeats`` runs, alternating (``alternate_blocks``)."""
    return alternate_blocks(partial(_play, observes=observes), runs, steps, repeats)


def fixed_cost(table: np.ndarray, steps: int, repeats: int) -> float:
    """Seconds of an :class:`EmptyAgent` round at 100 copies: the least fixed cost of a batched round."""
    small = np.ascontiguousarray(table[:, :SMALL])
    actions = np.empty((steps, SMALL), dtype=np.int64)
    (seconds,) = _alternate([(EmptyAgent(ARMS, n_envs=SMALL), small, actions)], False, steps, repeats)
    return seconds / steps


def small_batch_ratio(name: str, table: np.ndarray, steps: int, repeats: int, empty_s: float) -> Ratio:
    """``name`` with 100 copies against itself with 1,000, per agent-step, beside an empty round's fixed cost."""
    make, observes = AGENTS[name]
    small_table = np.ascontiguousarray(table[:, :SMALL])
    small_actions = np.empty((steps, SMALL), dtype=np.int64)
    large_actions = np.empty((steps, LARGE), dtype=np.int64)
    runs = [(make(LARGE), table, large_actions), (make(SMALL), small_table, small_actions)]
    large_s, small_s = _alternate(runs, observes, steps, repeats)
    per_small, per_large = small_s / (steps * SMALL), large_s / (steps * LARGE)
    same = np.array_equal(small_actions, large_actions[:, :SMALL])
    return Ratio(
        f"batched {name}, {SMALL} vs {LARGE} copies per agent-step",
        f"{name}(n_envs={SMALL}) act+update",
        f"{name}(n_envs={LARGE}) act+update",
        per_large / per_small,
        GOAL,
        f"{per_small * 1e9:.1f} vs {per_large * 1e9:.1f} ns per agent-step ({small_s / steps * 1e6:.2f} vs "
        f"{large_s / steps * 1e6:.2f} us per round of all copies), K={ARMS}, one core, "
        f"{'the env info of G(10, 0.3), ' if observes else ''}medians of {repeats} runs alternating every "
        f"{BLOCK} rounds; the goal leaves {per_large / 2 * 1e9:.1f} ns per agent-step for the fixed cost, an "
        f"empty round (EmptyAgent) takes {empty_s / SMALL * 1e9:.1f}; the {SMALL} copies chose the arms of the "
        f"first {SMALL} of {LARGE}: {same}",
    )


def results(quick: bool = False) -> list[Ratio]:
    """Every batched agent at 100 copies against 1,000 (K = 10, one core)."""
    steps, repeats = (300, 3) if quick else (2000, 5)
    table = bernoulli_table(LARGE, ARMS)
    with one_core():
        empty_s = fixed_cost(table, steps, repeats)
        return [small_batch_ratio(name, table, steps, repeats, empty_s) for name in AGENTS]


def main() -> None:
    quick_main(results, __doc__, "fewer rounds and repeats")


if __name__ == "__main__":
    main()
