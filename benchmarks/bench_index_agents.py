"""Agent-steps per second of the batched baselines (ε-greedy, KL-UCB, MOSS, the Exp3 family, TS) vs UCB and loops.

For each agent, 1000 copies and K = 10 arms on one core, fed from a pre-drawn Bernoulli reward
table (``bench_ucb_batch.bernoulli_table``; only ``act`` + ``update`` are timed):

* its speed as a ratio to batched :class:`agents.UCB` measured in the same run, the two
  alternating every 50 rounds (medians of the repeats), goal >= 0.3;
* its speed as a ratio to the same agent written as a plain per-copy Python loop (the readable
  references of :mod:`agents.stochastic.index_kernels`, :mod:`agents.adversarial.kernels` and
  :mod:`agents.stochastic.thompson_kernels`) on a few copies of the same table, scaled per agent-step,
  with a check that the loop chose the same arms as those copies of the batch (copy i of a
  batch seeded s draws as a single agent seeded s + i);
* batched Exp3 (fixed η, horizon T) against a hand-written numba loop over the same copies and
  reward table (:func:`compiled_exp3`: per copy and round one uniform from the copy's generator,
  the arm by a scan of w / Σw, and the pulled arm's weight times exp(−η ℓ/p), the sum kept
  up to date: one exponential per copy and round), interleaved, medians. Goal >= 1: the agent
  (Python calls included) at least as fast as the loop. The loop's arithmetic differs from the
  agent's in the last bits of p, so their actions agree until the first draw that falls within
  rounding of a boundary between two arms (printed: the rounds on which all copies agreed);
* batched Exp3-SET (its default η for the rounds played) and Exp3-IX (its adaptive η) against
  hand-written numba loops over the same copies, on an Erdős–Rényi feedback graph G(10, 0.3)
  and G(100, 0.05) (a quarter of the rounds at K = 100), the graph as neighbour lists:
  :func:`compiled_exp3set` keeps w and Σw and multiplies each revealed arm's weight by
  exp(−η ℓ/q) (one exponential per revealed arm); :func:`compiled_exp3ix` computes the K weights
  exp(−η_t (L̂ − min L̂)) every round, as η_t changes (K exponentials). The agents get the env's
  info (mask: the pulled arm's closed neighbourhood; observed rewards: the table's row), built
  outside the timed calls. Goal >= 1, as for Exp3;
* Beta-Bernoulli Thompson sampling's whole step against numpy drawing only its K Beta variates
  per copy (``Generator.beta`` on the (copies, K) array, and the argmax): what the compiled
  sampler of :mod:`agents.common.sampling` saves;

Every batched agent with 100 copies against itself with 1000 is ``bench_small_batch.py``.

``results(quick)`` returns the ratios (``benchmarks/_common.py``); ``main`` prints them. Usage:
``python benchmarks/bench_index_agents.py [--quick]``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import Ratio, quick_main
from bench_ucb_batch import TABLE_ROWS, bernoulli_table, one_core, play_table

from agents import KLUCB, MOSS, UCB, EpsilonGreedy, Exp3, Exp3IX, Exp3SET, ThompsonSampling
from agents.adversarial.kernels import ExpWeightsReference, neighbour_lists
from agents.base import Agent
from agents.stochastic.index_kernels import GreedyReference, KLUCBReference, MOSSReference
from agents.stochastic.thompson_kernels import ThompsonReference
from bandit_envs._jit import njit
from bandit_envs.core import generator_addresses, next_double
from bandit_envs.feedback_graphs import closed_neighbourhoods, erdos_renyi

GOAL = 0.3  # batched agent's speed as a fraction of batched UCB's
BLOCK = 50  # rounds timed at once when the agent and UCB alternate
SEED = 7
COPIES, ARMS = 1000, 10

#: name -> (batched agent for (copies, steps), plain reference of copy i for (arms, steps, i)).
AGENTS: dict[str, tuple[Callable[[int, int], Agent], Callable[[int, int, int], Any]]] = {
    "EpsilonGreedy": (
        lambda n, steps: EpsilonGreedy(ARMS, 0.1, n_envs=n, seed=SEED),
        lambda k, steps, i: GreedyReference(k, 0.1, False, np.random.default_rng(SEED + i)),
    ),
    "KLUCB": (
        lambda n, steps: KLUCB(ARMS, n_envs=n),
        lambda k, steps, i: KLUCBReference(k, 0.0, 1e-9),
    ),
    "MOSS": (
        lambda n, steps: MOSS(ARMS, steps, n_envs=n),
        lambda k, steps, i: MOSSReference(k, steps),
    ),
    "Exp3": (
        lambda n, steps: Exp3(ARMS, steps, n_envs=n, seed=SEED),
        lambda k, steps, i: ExpWeightsReference(k, "exp3", np.random.default_rng(SEED + i), Exp3(k, steps).eta_at, 0.0),
    ),
    "ThompsonSampling": (
        lambda n, steps: ThompsonSampling(ARMS, n_envs=n, seed=SEED),
        lambda k, steps, i: ThompsonReference(k, SEED + i),
    ),
}


def alternate_blocks(
    play: Callable[[Agent, np.ndarray, int, int, np.ndarray], float],
    runs: list[tuple[Agent, np.ndarray, np.ndarray]],
    steps: int,
    repeats: int,
) -> list[float]:
    """Median seconds of each (agent, table, actions) run over ``repeats`` runs of ``steps`` rounds.

    Each run first plays 20 rounds (compiling / loading the kernels); then every repeat resets the
    agents and plays them in turn, ``BLOCK`` rounds each, in the order given, timed by ``play``.
    """
    for agent, rewards, actions in runs:
        play(agent, rewards, 0, min(steps, 20), actions)
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for agent, _rewards, _actions in runs:
            agent.reset()
        seconds = [0.0] * len(runs)
        for start in range(0, steps, BLOCK):
            stop = min(steps, start + BLOCK)
            for i, (agent, rewards, actions) in enumerate(runs):
                seconds[i] += play(agent, rewards, start, stop, actions)
        for i, s in enumerate(seconds):
            times[i].append(s)
    return [statistics.median(t) for t in times]


def against_ucb(name: str, table: np.ndarray, steps: int, repeats: int) -> tuple[Ratio, np.ndarray, float]:
    """The agent against batched UCB, alternating blocks; (ratio, the agent's actions, its seconds per step)."""
    make = AGENTS[name][0]
    agent, ucb = make(COPIES, steps), UCB(ARMS, n_envs=COPIES)
    actions = np.empty((steps, COPIES), dtype=np.int64)
    ucb_actions = np.empty((steps, COPIES), dtype=np.int64)
    runs = [(ucb, table, ucb_actions), (agent, table, actions)]
    ucb_s, agent_s = alternate_blocks(run_block_cpu, runs, steps, repeats)
    ratio = Ratio(
        f"batched {name} vs batched UCB",
        f"{name}(n_envs={COPIES}) act+update",
        f"UCB(n_envs={COPIES}) act+update",
        ucb_s / agent_s,
        GOAL,
        f"{agent_s / steps * 1e6:.1f} us vs {ucb_s / steps * 1e6:.1f} us per step of {COPIES} copies, K={ARMS}, "
        f"one core, thread CPU time less the table lookups (medians of {repeats} runs, alternating every {BLOCK} "
        f"rounds); {COPIES * steps / agent_s:.3e} agent-steps/s",
    )
    return ratio, actions, agent_s / steps


def against_loop(name: str, table: np.ndarray, steps: int, copies: int, actions: np.ndarray, step_s: float) -> Ratio:
    """The batched agent's agent-steps/s against the plain per-copy loop of the same agent."""
    make_reference = AGENTS[name][1]
    loop_actions = np.empty((steps, copies), dtype=np.int64)
    # Built before the clock starts: Exp3's reference takes its schedule from an Exp3 agent, whose
    # first construction in a process loads compiled kernels (it once made the loop look 30x slower).
    references = [make_reference(ARMS, steps, i) for i in range(copies)]
    start = time.perf_counter()
    for i, reference in enumerate(references):
        for t in range(steps):
            a = reference.act()
            reference.update(a, float(table[t % TABLE_ROWS, i, a]))
            loop_actions[t, i] = a
    loop_rate = copies * steps / (time.perf_counter() - start)
    rate = COPIES / step_s
    same = np.array_equal(loop_actions, actions[:, :copies])
    return Ratio(
        f"batched {name} vs per-copy Python loop",
        f"{name}(n_envs={COPIES}) act+update",
        f"plain-Python {name}, {copies} copies one by one",
        rate / loop_rate,
        None,
        f"{rate:.3e} vs {loop_rate:.3e} agent-steps/s; same actions as copies 0-{copies - 1}: {same}",
    )


@njit(inline="always")
def weighted_draw(weights: np.ndarray, bu: np.uint64, n_arms: int, u: float) -> int:  # pragma: no cover
    """The first arm whose cumulative weight exceeds ``u`` (a draw in [0, Σw)), else the last: the plain scan."""
    acc = 0.0
    for k in range(n_arms):
        acc += weights[bu, np.uint64(k)]
        if u < acc:
            return k
    return n_arms - 1


@njit(error_model="numpy")
def compiled_exp3(
    table: np.ndarray,
    start: int,
    stop: int,
    eta: float,
    bitgens: np.ndarray,
    weights: np.ndarray,
    totals: np.ndarray,
    actions: np.ndarray,
) -> None:  # pragma: no cover
    """Exp3 with fixed η (γ = 0) for every copy b of ``table`` (rows, B, K) over rounds ``start..stop-1``.

    The plain way: copy b keeps weights w (``weights[b]``, start 1) and their sum ``totals[b]``;
    it draws u from its generator (``bitgens[b]``, as the agent does), plays the first arm whose
    cumulative w / Σw exceeds u, receives r = ``table[t % rows, b, arm]`` and multiplies that
    arm's weight by exp(−η (1 − r) / p), p = w / Σw (loss-based importance weighting), updating
    the sum by the difference. One exponential per copy and round.
    """
    n_rows, n_copies, n_arms = table.shape
    # Unsigned indices (np.uint64): numba then compiles no negative-index test (as the agents' table
    # runs, agents.common.kernels.unsigned); 6-8% faster here (three alternating runs): the stronger reference.
    for t in range(start, stop):
        tu, row = np.uint64(t), np.uint64(t % n_rows)
        for b in range(n_copies):
            bu = np.uint64(b)
            total = totals[bu]
            arm = weighted_draw(weights, bu, n_arms, next_double(bitgens[bu]) * total)
            au = np.uint64(arm)
            loss = 1.0 - table[row, bu, au]
            old = weights[bu, au]
            new = old * math.exp(-eta * loss * total / old)
            weights[bu, au] = new
            totals[bu] = total - old + new
            actions[tu, bu] = arm


def medians_and_agreement(
    agent_times: list[float], loop_times: list[float], actions: np.ndarray, loop_actions: np.ndarray
) -> tuple[float, float, int]:
    """Median seconds of the agent and of its hand-written loop; the rounds before the first where an arm differs."""
    differ = np.flatnonzero((actions != loop_actions).any(axis=1))
    agreed = int(differ[0]) if differ.size else actions.shape[0]
    return statistics.median(agent_times), statistics.median(loop_times), agreed


def compiled_exp3_ratio(table: np.ndarray, steps: int, repeats: int) -> Ratio:
    """Batched Exp3 (act + update) against :func:`compiled_exp3` on the same table, alternating blocks."""
    agent = Exp3(ARMS, steps, n_envs=COPIES, seed=SEED)
    eta = float(agent.fixed_eta or 0.0)
    actions = np.empty((steps, COPIES), dtype=np.int64)
    loop_actions = np.empty((steps, COPIES), dtype=np.int64)
    play_table(agent, table, 0, min(steps, 20), actions)  # compile / load the kernels
    agent_times, loop_times = [], []
    for _ in range(repeats):
        agent.reset()
        rngs = [np.random.default_rng(SEED + i) for i in range(COPIES)]  # the agent's copies' streams
        bitgens = generator_addresses(rngs)
        weights, totals = np.ones((COPIES, ARMS)), np.full(COPIES, float(ARMS))
        compiled_exp3(table, 0, 0, eta, bitgens, weights, totals, loop_actions)
        agent_s = loop_s = 0.0
        for start in range(0, steps, BLOCK):
            stop = min(steps, start + BLOCK)
            agent_s += play_table(agent, table, start, stop, actions)
            t0 = time.perf_counter()
            compiled_exp3(table, start, stop, eta, bitgens, weights, totals, loop_actions)
            loop_s += time.perf_counter() - t0
        agent_times.append(agent_s)
        loop_times.append(loop_s)
    agent_s, loop_s, agreed = medians_and_agreement(agent_times, loop_times, actions, loop_actions)
    return Ratio(
        "batched Exp3 vs hand-written numba loop",
        f"Exp3(n_envs={COPIES}) act+update",
        "compiled_exp3 (one exponential per copy and round)",
        loop_s / agent_s,
        1.0,
        f"{agent_s / steps * 1e6:.1f} us vs {loop_s / steps * 1e6:.1f} us per step of {COPIES} copies, K={ARMS}, "
        f"one core (medians of {repeats} runs, alternating every {BLOCK} rounds); all copies chose the same "
        f"arms in the first {agreed} of {steps} rounds",
    )


def numpy_beta_ratio(table: np.ndarray, steps: int, repeats: int) -> Ratio:
    """Thompson sampling's whole step against numpy drawing only the K Beta variates per copy.

    The numpy side draws ``Generator.beta`` on the whole (copies, K) array of posterior
    parameters and takes the argmax, with no bookkeeping: what any TS built on numpy's sampler
    pays at least.
    """
    ts = ThompsonSampling(ARMS, n_envs=COPIES, seed=SEED)
    actions = np.empty((steps, COPIES), dtype=np.int64)
    play_table(ts, table, 0, min(steps, 20), actions)
    rng = np.random.default_rng(SEED)
    alpha = 1.0 + rng.integers(0, steps, (COPIES, ARMS)).astype(np.float64)
    beta = 1.0 + rng.integers(0, steps, (COPIES, ARMS)).astype(np.float64)
    ts_t, numpy_t = [], []
    for _ in range(repeats):
        ts.reset()
        ts_s = numpy_s = 0.0
        for start in range(0, steps, BLOCK):
            stop = min(steps, start + BLOCK)
            ts_s += play_table(ts, table, start, stop, actions)
            t0 = time.perf_counter()
            for _ in range(stop - start):
                rng.beta(alpha, beta).argmax(axis=1)
            numpy_s += time.perf_counter() - t0
        ts_t.append(ts_s)
        numpy_t.append(numpy_s)
    ts_s, numpy_s = statistics.median(ts_t), statistics.median(numpy_t)
    return Ratio(
        "batched ThompsonSampling vs numpy's Beta draws alone",
        f"ThompsonSampling(n_envs={COPIES}) act+update",
        f"numpy drawing only the K Beta variates of {COPIES} copies, and their argmax",
        numpy_s / ts_s,
        None,
        f"{ts_s / steps * 1e6:.1f} us vs {numpy_s / steps * 1e6:.1f} us per step of {COPIES} copies, K={ARMS}, "
        f"one core (medians of {repeats} runs, alternating every {BLOCK} rounds)",
    )


def run_block_cpu(agent: Agent, table: np.ndarray, start: int, stop: int, actions: np.ndarray) -> float:
    """:func:`run_block` timed in this thread's CPU time as a whole, the table lookups (replayed alone) taken out.

    Two clock reads per block rather than four per round: at 100 copies a step costs a few
    microseconds, and a CPU-time clock read (a system call) is a noticeable part of that. The
    rounds' action arrays (the caller owns them) are kept in a list while timed and copied into
    ``actions`` afterwards, so that the timed loop holds act, update, the lookup and a list
    append (about 20 ns), not a copy into the record (about 0.1 us at 100 copies); the replay
    looks the rewards up from the same list.
    """
    rows = np.arange(agent.batch)
    chosen: list[np.ndarray] = []
    keep = chosen.append
    t0 = time.thread_time()
    for t in range(start, stop):
        a = agent.act()
        agent.update(a, table[t % TABLE_ROWS, rows, a])
        keep(a)
    t1 = time.thread_time()
    for t, a in zip(range(start, stop), chosen, strict=True):
        table[t % TABLE_ROWS, rows, a]
    spent = (t1 - t0) - (time.thread_time() - t1)
    actions[start:stop] = chosen
    return spent


@njit(error_model="numpy")
def compiled_exp3set(
    table: np.ndarray,
    start: int,
    stop: int,
    eta: float,
    first: np.ndarray,
    neighbours: np.ndarray,
    bitgens: np.ndarray,
    weights: np.ndarray,
    totals: np.ndarray,
    scratch: np.ndarray,
    actions: np.ndarray,
) -> None:  # pragma: no cover
    """Exp3-SET with fixed η for every copy b of ``table`` (rows, B, K) over rounds ``start..stop-1``.

    The plain way, with the graph as neighbour lists (arm i's closed neighbourhood is
    ``neighbours[first[i]:first[i + 1]]``): copy b keeps weights w (start 1) and Σw; it draws u
    from its generator, plays the first arm whose cumulative w / Σw exceeds u, reads the rewards
    of that arm's neighbours from row ``t % rows`` of the table, computes each one's
    q_i = Σ_{j ∈ N[i]} w_j / Σw before any weight changes, multiplies w_i by
    exp(−η (1 − r_i) / q_i), and sums w again. One exponential per revealed arm.
    """
    n_rows, n_copies, n_arms = table.shape
    for t in range(start, stop):
        row = np.uint64(t % n_rows)
        for b in range(n_copies):
            bu = np.uint64(b)
            total = totals[bu]
            arm = weighted_draw(weights, bu, n_arms, next_double(bitgens[bu]) * total)
            for e in range(first[arm], first[arm + 1]):
                i = neighbours[e]
                q = 0.0
                for f in range(first[i], first[i + 1]):
                    q += weights[bu, np.uint64(neighbours[f])]
                scratch[e - first[arm]] = q / total
            for e in range(first[arm], first[arm + 1]):
                i = np.uint64(neighbours[e])
                weights[bu, i] *= math.exp(-eta * (1.0 - table[row, bu, i]) / scratch[e - first[arm]])
            total = 0.0
            for k in range(n_arms):
                total += weights[bu, np.uint64(k)]
            totals[bu] = total
            actions[t, b] = arm


@njit(error_model="numpy")
def compiled_exp3ix(
    table: np.ndarray,
    start: int,
    stop: int,
    first: np.ndarray,
    neighbours: np.ndarray,
    bitgens: np.ndarray,
    losses: np.ndarray,
    spent: np.ndarray,
    p: np.ndarray,
    q: np.ndarray,
    actions: np.ndarray,
) -> None:  # pragma: no cover
    """Exp3-IX with its adaptive η_t = 2γ_t = sqrt(ln K / (K + Σ Q)) for every copy b over rounds ``start..stop-1``.

    The plain way, with the graph as neighbour lists: copy b keeps its loss estimates L̂ and Σ Q;
    each round it computes η and γ, the K weights exp(−η (L̂ − min L̂)) and their sum, draws u
    from its generator and plays the first arm whose cumulative weight exceeds u Σw, normalises p,
    computes q_i = Σ_{j ∈ N[i]} p_j + γ for every arm (Q = Σ p_i / q_i needs them all), and adds
    (1 − r_i) / q_i to L̂_i for the pulled arm's neighbours. K exponentials per copy and round.
    """
    n_rows, n_copies, n_arms = table.shape
    log_k = math.log(n_arms)
    for t in range(start, stop):
        row = np.uint64(t % n_rows)
        for b in range(n_copies):
            bu = np.uint64(b)
            eta = math.sqrt(log_k / (n_arms + spent[bu]))
            gamma = 0.5 * eta
            low = losses[bu, 0]
            for k in range(1, n_arms):
                low = min(low, losses[bu, np.uint64(k)])
            total = 0.0
            for k in range(n_arms):
                w = math.exp(-eta * (losses[bu, np.uint64(k)] - low))
                p[k] = w
                total += w
            u = next_double(bitgens[bu]) * total
            acc = 0.0
            arm = n_arms - 1
            for k in range(n_arms):
                acc += p[k]
                if u < acc:
                    arm = k
                    break
            scale = 1.0 / total
            for k in range(n_arms):
                p[k] *= scale
            ratio = 0.0
            for i in range(n_arms):
                observe = gamma
                for f in range(first[i], first[i + 1]):
                    observe += p[neighbours[f]]
                q[i] = observe
                ratio += p[i] / observe
            spent[bu] += ratio
            for e in range(first[arm], first[arm + 1]):
                i = np.uint64(neighbours[e])
                losses[bu, i] += (1.0 - table[row, bu, i]) / q[i]
            actions[t, b] = arm


#: The graph runs: (K, edge probability of the Erdős–Rényi graph, the share of the rounds played).
GRAPH_SIZES = ((10, 0.3, 1), (100, 0.05, 4))


def play_graph_table(
    agent: Agent, table: np.ndarray, closed: np.ndarray, start: int, stop: int, actions: np.ndarray
) -> float:
    """Seconds in act + update over rounds ``start..stop-1``, the side observations read from the table's rows untimed.

    Round t: copy b's observed mask is the closed neighbourhood of its arm, its observed rewards
    row ``t % rows`` of the (rows, B, K) table (the env's info), its reward the pulled arm's entry.
    """
    rows = np.arange(agent.batch)
    spent = 0.0
    for t in range(start, stop):
        begin = time.perf_counter()
        a = agent.act()
        middle = time.perf_counter()
        observed = table[t % table.shape[0]]
        info = {"observed_mask": closed[a], "observed_rewards": observed}
        r = observed[rows, a]
        resume = time.perf_counter()
        agent.update(a, r, info)
        spent += (middle - begin) + (time.perf_counter() - resume)
        actions[t] = a
    return spent


def compiled_graph_ratio(name: str, n_arms: int, edge_p: float, copies: int, steps: int, repeats: int) -> Ratio:
    """Batched Exp3-SET (its default η for ``steps``) or Exp3-IX (adaptive) against its hand-written numba loop."""
    graph = erdos_renyi(n_arms, edge_p, SEED)
    closed = closed_neighbourhoods(graph)
    first, neighbours = neighbour_lists(closed)
    table = bernoulli_table(copies, n_arms)
    agent: Agent = (
        Exp3SET(n_arms, graph, steps, n_envs=copies, seed=SEED)
        if name == "Exp3-SET"
        else Exp3IX(n_arms, graph, n_envs=copies, seed=SEED)
    )
    actions = np.empty((steps, copies), dtype=np.int64)
    loop_actions = np.empty((steps, copies), dtype=np.int64)
    play_graph_table(agent, table, closed, 0, min(steps, 20), actions)  # compile / load the kernels
    agent_times, loop_times = [], []
    eta = float(getattr(agent, "fixed_eta", None) or 0.0)
    for _ in range(repeats):
        agent.reset()
        rngs = [np.random.default_rng(SEED + i) for i in range(copies)]  # the copies' streams, kept alive
        bitgens = generator_addresses(rngs)
        if name == "Exp3-SET":  # weights, their sums and the revealed arms' q
            state: tuple[np.ndarray, ...] = (
                np.ones((copies, n_arms)),
                np.full(copies, float(n_arms)),
                np.empty(n_arms),
            )
        else:  # loss estimates, Σ Q, p and q
            state = (np.zeros((copies, n_arms)), np.zeros(copies), np.empty(n_arms), np.empty(n_arms))
        agent_s = loop_s = 0.0
        for start in range(0, steps, BLOCK):
            stop = min(steps, start + BLOCK)
            agent_s += play_graph_table(agent, table, closed, start, stop, actions)
            t0 = time.perf_counter()
            if name == "Exp3-SET":
                compiled_exp3set(table, start, stop, eta, first, neighbours, bitgens, *state, loop_actions)
            else:
                compiled_exp3ix(table, start, stop, first, neighbours, bitgens, *state, loop_actions)
            loop_s += time.perf_counter() - t0
        agent_times.append(agent_s)
        loop_times.append(loop_s)
    agent_s, loop_s, agreed = medians_and_agreement(agent_times, loop_times, actions, loop_actions)
    exps = "one exponential per revealed arm" if name == "Exp3-SET" else "K exponentials per copy and round"
    degree = closed.sum() / n_arms
    return Ratio(
        f"batched {name} vs hand-written numba loop, K = {n_arms}",
        f"{name}(n_envs={copies}) act+update",
        f"a numba loop over neighbour lists ({exps})",
        loop_s / agent_s,
        1.0,
        f"{agent_s / steps * 1e6:.1f} us vs {loop_s / steps * 1e6:.1f} us per step of {copies} copies, "
        f"Erdős–Rényi graph G({n_arms}, {edge_p}) (mean closed neighbourhood {degree:.1f} arms), one core, the env's "
        f"info built untimed (medians of {repeats} runs, alternating every {BLOCK} rounds); all copies chose the same "
        f"arms in the first {agreed} of {steps} rounds",
    )


def results(quick: bool = False) -> list[Ratio]:
    """Each baseline batched (1000 copies, K = 10, one core) against batched UCB and against its plain loop."""
    steps, repeats, loop_copies = (300, 3, 2) if quick else (2000, 5, 5)
    table = bernoulli_table(COPIES, ARMS)
    out = []
    with one_core():
        for name in AGENTS:
            ratio, actions, step_s = against_ucb(name, table, steps, repeats)
            out.append(ratio)
            out.append(against_loop(name, table, steps, loop_copies, actions, step_s))
        out.append(compiled_exp3_ratio(table, steps, repeats))
        for graph_agent in ("Exp3-SET", "Exp3-IX"):
            for k, p, share in GRAPH_SIZES:
                out.append(compiled_graph_ratio(graph_agent, k, p, COPIES, max(steps // share, BLOCK), repeats))
        out.append(numpy_beta_ratio(table, steps, repeats))
    return out


def main() -> None:
    quick_main(results, __doc__, "fewer rounds and repeats")


if __name__ == "__main__":
    main()
