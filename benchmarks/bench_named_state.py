"""Packed state rows against named state (a NamedTuple of arrays, or one record-dtype row) in the stochastic kernels.

UCB, UCB-N, ε-greedy, KL-UCB and MOSS keep one float64 row per copy with the int64 pull counts
stored in the same 8 bytes (``state.view(np.int64)``; layouts in ``agents/stochastic/index.py``
and ``agents/stochastic/index_kernels.py``). This script measures what naming the fields would
cost, on UCB's step (the same arithmetic as ``agents/stochastic/index.py``'s ``_choose_row``,
``_add_observation``, ``_pulled_step``, ``_pulled_update``), K = 10, three layouts:

* ``packed``: the agents' own kernels on the (B, 3K + 1) row;
* ``named``: ``UCBState(sums, means, counts, per_copy)``, a NamedTuple of (B, K) float64, float64,
  int64 arrays and a (B,) record array of the per-copy values (field ``c``, dtype built with
  ``align=True``);
* ``record``: one (B,) array of an aligned record dtype with fields ``sums``, ``means``,
  ``counts`` (K values each) and ``c`` (the record type holds K, so the kernels compile once per K).

Ratios (packed time / layout time, above 1: the layout is faster), medians of alternating runs:

* one env's update + choice (the single-env step: one call of the kernel's compiled entry point
  per round, as ``UCB.update`` makes it; the per-call cost of the Python loop is in both);
* the batched choice + update (two dispatcher calls per round, as the batched agents make them)
  at 100 and 1000 copies;
* a call of a kernel that does nothing through its compiled entry point, with the packed arrays
  against named arrays of the mean-state agents (sums, means, counts, aux, per-copy record) and
  of KL-UCB (those and its six anchor arrays): the cost of passing the fields one by one, which
  every single-env step of those agents would pay.

The packed layout is kept where a named one loses more than 5% (the comments beside the layouts
quote these figures). Usage: ``python benchmarks/bench_named_state.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numba
import numpy as np
from _common import Ratio, print_results
from bench_ucb_batch import one_core
from numba import types

from agents.base import entry_point
from agents.common.kernels import first_argmax
from agents.stochastic import index as ucb_kernels
from bandit_envs._jit import njit

K = 10
PER_COPY = np.dtype([("c", np.float64)], align=True)


class UCBState(NamedTuple):
    """UCB's state with named fields: (B, K) sums, means, counts and the (B,) per-copy record."""

    sums: np.ndarray
    means: np.ndarray
    counts: np.ndarray
    per_copy: np.ndarray


def record_dtype(n_arms: int) -> np.dtype:
    """The aligned record of one copy: sums, means, counts (``n_arms`` values each) and c."""
    return np.dtype(
        [
            ("sums", np.float64, (n_arms,)),
            ("means", np.float64, (n_arms,)),
            ("counts", np.int64, (n_arms,)),
            ("c", np.float64),
        ],
        align=True,
    )


def new_packed(copies: int, c: float = 2.0) -> np.ndarray:
    state = np.zeros((copies, 3 * K + 1))
    state[:, 3 * K] = c
    return state


def new_named(copies: int, c: float = 2.0) -> UCBState:
    per_copy = np.zeros(copies, dtype=PER_COPY)
    per_copy["c"] = c
    return UCBState(np.zeros((copies, K)), np.zeros((copies, K)), np.zeros((copies, K), dtype=np.int64), per_copy)


def new_record(copies: int, c: float = 2.0) -> np.ndarray:
    state = np.zeros(copies, dtype=record_dtype(K))
    state["c"] = c
    return state


# Named: a NamedTuple of arrays ---------------------------------------------------------------------


@njit(error_model="numpy", inline="always")
def named_choose_row(s: Any, b: int, log_t: float, index: Any) -> int:  # pragma: no cover
    """``_choose_row`` of ``agents/stochastic/index.py`` on the named state."""
    n_arms = index.shape[0]
    for k in range(n_arms):
        if s.counts[b, k] == 0:
            return k
    width = s.per_copy[b].c * log_t
    for k in range(n_arms):
        index[k] = s.means[b, k] + np.sqrt(width / s.counts[b, k])
    return first_argmax(index)


@njit(error_model="numpy")
def named_choose_rows(s: Any, t: int) -> Any:  # pragma: no cover
    """``_choose_rows`` on the named state."""
    log_t = math.log(t + 1)
    index = np.empty(s.means.shape[1])
    out = np.empty(s.means.shape[0], dtype=np.int64)
    for b in range(s.means.shape[0]):
        out[b] = named_choose_row(s, b, log_t, index)
    return out


@njit(error_model="numpy", inline="always")
def named_add(s: Any, b: int, k: int, value: float) -> None:  # pragma: no cover
    """``_add_observation`` on the named state."""
    s.counts[b, k] += 1
    s.sums[b, k] += value
    s.means[b, k] = s.sums[b, k] / s.counts[b, k]


@njit
def named_step(s: Any, action: int, reward: float, t: int) -> int:  # pragma: no cover
    """``_pulled_step`` on the named state."""
    n_arms = s.means.shape[1]
    if ucb_kernels._refused(action, reward, n_arms):
        return -1
    named_add(s, 0, action, reward)
    return named_choose_row(s, 0, math.log(t + 1), np.empty(n_arms))


@njit
def named_update(s: Any, actions: Any, rewards: Any) -> int:  # pragma: no cover
    """``_pulled_update`` on the named state."""
    n_rows, n_arms = s.means.shape
    for b in range(n_rows):
        if ucb_kernels._refused(actions[b], rewards[b], n_arms):
            return b
    for b in range(n_rows):
        named_add(s, b, actions[b], rewards[b])
    return -1


# Record: one row of an aligned record dtype per copy ---------------------------------------------


@njit(error_model="numpy", inline="always")
def record_choose_row(s: Any, b: int, log_t: float, index: Any) -> int:  # pragma: no cover
    """``_choose_row`` on the record rows."""
    row = s[b]
    counts, means = row.counts, row.means
    n_arms = index.shape[0]
    for k in range(n_arms):
        if counts[k] == 0:
            return k
    width = row.c * log_t
    for k in range(n_arms):
        index[k] = means[k] + np.sqrt(width / counts[k])
    return first_argmax(index)


@njit(error_model="numpy")
def record_choose_rows(s: Any, t: int) -> Any:  # pragma: no cover
    """``_choose_rows`` on the record rows."""
    log_t = math.log(t + 1)
    index = np.empty(s[0].means.shape[0])
    out = np.empty(s.shape[0], dtype=np.int64)
    for b in range(s.shape[0]):
        out[b] = record_choose_row(s, b, log_t, index)
    return out


@njit(error_model="numpy", inline="always")
def record_add(s: Any, b: int, k: int, value: float) -> None:  # pragma: no cover
    """``_add_observation`` on the record rows."""
    row = s[b]
    row.counts[k] += 1
    row.sums[k] += value
    row.means[k] = row.sums[k] / row.counts[k]


@njit
def record_step(s: Any, action: int, reward: float, t: int) -> int:  # pragma: no cover
    """``_pulled_step`` on the record rows."""
    n_arms = s[0].means.shape[0]
    if ucb_kernels._refused(action, reward, n_arms):
        return -1
    record_add(s, 0, action, reward)
    return record_choose_row(s, 0, math.log(t + 1), np.empty(n_arms))


@njit
def record_update(s: Any, actions: Any, rewards: Any) -> int:  # pragma: no cover
    """``_pulled_update`` on the record rows."""
    n_rows, n_arms = s.shape[0], s[0].means.shape[0]
    for b in range(n_rows):
        if ucb_kernels._refused(actions[b], rewards[b], n_arms):
            return b
    for b in range(n_rows):
        record_add(s, b, actions[b], rewards[b])
    return -1


@njit
def packed_update(state: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> int:  # pragma: no cover
    """``_pulled_update`` on the packed state, the update alone (an empty ``out``: no choice made)."""
    return ucb_kernels._pulled_update(state, actions, rewards, 0, np.empty(0, np.int64))


@njit
def nothing(s: Any) -> int:  # pragma: no cover
    """A kernel that only receives its argument."""
    return 0


# Timing ------------------------------------------------------------------------------------------

LAYOUTS = {
    "packed": (new_packed, ucb_kernels._pulled_step, ucb_kernels._choose_rows, packed_update),
    "named": (new_named, named_step, named_choose_rows, named_update),
    "record": (new_record, record_step, record_choose_rows, record_update),
}
_INT, _FLOAT = types.int64, types.float64


def counts_of(state: Any) -> np.ndarray:
    """The (B, K) pull counts of a state in any of the layouts."""
    if isinstance(state, UCBState):
        return state.counts
    if state.dtype.names:
        return np.asarray(state["counts"])
    return np.asarray(state.view(np.int64)[:, 2 * K : 3 * K])


def alternate(runs: dict[str, Callable[[], tuple[float, Any]]], repeats: int) -> dict[str, float]:
    """Median seconds of each run, the runs alternating ``repeats`` times; checks equal counts."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        counts = []
        for name, run in runs.items():
            seconds, state = run()
            times[name].append(seconds)
            counts.append(counts_of(state))
        if not all(np.array_equal(counts[0], c) for c in counts[1:]):
            raise AssertionError("the layouts made different choices")
    return {name: statistics.median(t) for name, t in times.items()}


def single_env(rounds: int, repeats: int) -> dict[str, float]:
    """Seconds per round of one env's step (compiled entry point called from a Python loop)."""
    rng = np.random.default_rng(0)
    rewards = (rng.random((rounds, K)) < np.linspace(0.2, 0.8, K)).astype(np.float64).tolist()

    def runner(new: Callable[[int], Any], step: Any) -> Callable[[], tuple[float, Any]]:
        call = entry_point(step, (numba.typeof(new(1)), _INT, _FLOAT, _INT))

        def run() -> tuple[float, Any]:
            state, a = new(1), 0
            start = time.perf_counter()
            for t in range(rounds):
                a = call(state, a, rewards[t][a], t + 1)
            return time.perf_counter() - start, state

        return run

    runs = {name: runner(new, step) for name, (new, step, _, _) in LAYOUTS.items()}
    return {name: s / rounds for name, s in alternate(runs, repeats).items()}


def batched(copies: int, rounds: int, repeats: int) -> dict[str, float]:
    """Seconds per round of the batched choice + update of ``copies`` copies (dispatcher calls)."""
    rng = np.random.default_rng(1)
    table = (rng.random((64, copies, K)) < rng.uniform(0.2, 0.8, (copies, K))).astype(np.float64)
    rows = np.arange(copies)

    def runner(new: Callable[[int], Any], choose: Any, update: Any) -> Callable[[], tuple[float, Any]]:
        def run() -> tuple[float, Any]:
            state, spent = new(copies), 0.0
            for t in range(rounds):
                start = time.perf_counter()
                a = choose(state, t)
                middle = time.perf_counter()
                r = table[t % 64, rows, a]
                resume = time.perf_counter()
                update(state, a, r)
                spent += time.perf_counter() - resume + middle - start
            return spent, state

        return run

    runs = {name: runner(new, choose, update) for name, (new, _, choose, update) in LAYOUTS.items()}
    for run in runs.values():  # compile
        run()
    return {name: s / rounds for name, s in alternate(runs, repeats).items()}


def call_cost(calls: int, repeats: int) -> dict[str, float]:
    """Seconds per call of :func:`nothing` through its entry point, per layout of the agents' state."""

    def named_arrays(n: int) -> tuple[Any, ...]:
        return tuple(np.zeros((1, K)) for _ in range(n - 1)) + (np.zeros(1, dtype=PER_COPY),)

    states = {
        "packed, one array (UCB, MOSS, eps-greedy)": np.zeros((1, 4 * K + 1)),
        "packed, two arrays (KL-UCB)": (np.zeros((1, 4 * K + 1)), np.zeros((1, 6 * K))),
        "named, 4 arrays + record (UCB)": named_arrays(4),
        "named, 5 arrays + record (MOSS, eps-greedy)": named_arrays(5),
        "named, 11 arrays + record (KL-UCB)": named_arrays(11),
    }
    calls_of = {name: entry_point(nothing, (numba.typeof(state),)) for name, state in states.items()}
    times: dict[str, list[float]] = {name: [] for name in states}
    for _ in range(repeats):  # the layouts alternate
        for name, state in states.items():
            call = calls_of[name]
            start = time.perf_counter()
            for _ in range(calls):
                call(state)
            times[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def results(quick: bool = False) -> list[Ratio]:
    """Packed against named and record layouts: single-env step, batched at 100 and 1000 copies, call cost."""
    rounds, batch_rounds, repeats = (20_000, 100, 3) if quick else (200_000, 300, 7)
    out = []
    with one_core():
        single = single_env(rounds, repeats)
        for layout in ("named", "record"):
            out.append(
                Ratio(
                    f"UCB single-env step, {layout} vs packed state",
                    f"{layout} state",
                    "packed state (agents/stochastic/index.py)",
                    single["packed"] / single[layout],
                    None,
                    f"{single[layout] * 1e6:.3f} us vs {single['packed'] * 1e6:.3f} us per update + choice "
                    f"(entry-point call from a Python loop, K={K}, medians of {repeats} alternating runs)",
                )
            )
        for copies in (100, 1000):
            times = batched(copies, batch_rounds, repeats)
            for layout in ("named", "record"):
                out.append(
                    Ratio(
                        f"UCB batched choice + update, {copies} copies, {layout} vs packed state",
                        f"{layout} state",
                        "packed state (agents/stochastic/index.py)",
                        times["packed"] / times[layout],
                        None,
                        f"{times[layout] * 1e6:.2f} us vs {times['packed'] * 1e6:.2f} us per round of {copies} "
                        f"copies, K={K} (medians of {repeats} alternating runs)",
                    )
                )
        calls = call_cost(rounds, repeats)
        packed_one = calls["packed, one array (UCB, MOSS, eps-greedy)"]
        for name, seconds in calls.items():
            out.append(
                Ratio(
                    f"entry-point call of an empty kernel, {name}",
                    name,
                    "packed, one array",
                    packed_one / seconds,
                    None,
                    f"{seconds * 1e9:.0f} ns vs {packed_one * 1e9:.0f} ns per call",
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repeats")
    args = parser.parse_args()
    print_results(results(quick=args.quick))


if __name__ == "__main__":
    main()
