"""The elimination agents' table simulator against a strong numpy GAP, compiled floors, and the code before.

Measured in one run, on the same reward tables (the gap paper's GAP: ε = 0.1, δ = 1/T, an
Erdős–Rényi feedback graph with p = 0.2; truncated-normal arms, the env's default):

* ``GAP.simulate`` (compiled, an epoch at a time) against :func:`numpy_gap`, a numpy GAP that
  works an epoch at a time: the epoch's rows viewed as (cycles, |Ω|, K) and summed over the
  cycles in one reduction (no copy per arm, no Python loop over rounds or arms), the noise
  drawn as one vector, the arms written by broadcasting and the regret at the checkpoints in
  closed form. Both are timed as ``simulate`` is called by default: the regret at 100
  checkpoints, the arm sequence not recorded (at K = 10 and 100, T = 10^5, the figures also
  give the pair recording it); a call of each that records it must give the same arms. At
  K = 10 (T = 10^5 and 10^4), K = 100 (T = 10^5) and K = 1,000 (T = 10^4, a 80 MB table).
  Goals: ≥ 3×, ≥ 1×, ≥ 1.5×, ≥ 1.5×;
* GAP, DPSE and AAE ``simulate`` against two compiled floors on the same table, given the
  agent's own arm sequence: :func:`revealed_floor` adds every entry the env reveals (the closed
  neighbourhood of the pulled arm for GAP, the pulled arm for DPSE and AAE) once to a per-arm
  sum, :func:`table_floor` reads the whole table once into per-arm sums (both index with
  unsigned integers, as the table runs do, the fastest plain loops; goals: GAP ≥ 0.6×,
  DPSE and AAE ≥ 0.5× of the revealed-entry floor; the table floor is reported only), GAP's at
  K = 10 and K = 100 (T = 10^5). What bounds GAP's goals against numpy there: the revealed-entry
  floor against numpy GAP (``bound on GAP vs numpy GAP`` rows, :func:`_gap_bound`), numpy ÷
  floor, about the most a GAP that reads every revealed entry can reach;
* with ``--baseline REV`` (default: the last commit before the epoch-level kernels) and git
  available: the full ``gap/privacy`` experiment on 2 processes with this code and with that
  commit's code, one after the other (goal: ≥ 3× faster). Both are run once at ``--quick``
  scale first, so each has its numba cache warm;
* with ``--variants``: GAP's table run with each of its two inner loops on both kinds of table
  (:func:`variant_ratios`): chunks made rewards as a batch (a table of uniforms) against round
  by round (a table of rewards), each on the other's table, same arms checked (no goal: the
  figures :func:`agents.elimination.drivers.compile_gap_run` cites for keeping both);
* peak memory of a streamed GAP run (a :class:`agents.common.tables.UniformTable`) at T = 10^8 in a
  child process (goal: ≤ 400 MB; T = 10^7 with ``--quick``), and that it equals the in-memory
  run on a shorter table. The figure is the child's ``VmHWM`` (its own peak RSS): its
  ``ru_maxrss`` would include this process's peak, which Linux carries over the fork and exec.

Times are this thread's CPU time (``time.thread_time``), the median of interleaved calls, so a
busy machine slows subject and reference alike. Every row states each side's ns per round.

Usage: ``python benchmarks/bench_elimination.py [--quick] [--kernels] [--variants] [--baseline REV]``
(``--kernels``: only the simulate rows; run with ``PYTHONPATH`` set to another checkout, it
measures that checkout's agents against the same references).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from _common import Ratio, interleaved, print_results

from agents.elimination.drivers import ONE_BITS, compile_gap_run, float_bits
from agents.elimination.policies import AAE, DPSE, GAP
from agents.elimination.reference import gap_elimination_slack, gap_epoch_length, get_ind_set
from bandit_envs.graph import GraphBanditEnv
from bandit_envs.privacy.lattice import sum_grid
from bandit_envs.privacy.streams import noise_generator

ROOT = Path(__file__).resolve().parents[1]
#: main before the epoch-level kernels (the per-round driver through function arguments).
BASELINE = "843e812"
N_ARMS, HORIZON, EPSILON = 10, 100_000, 0.1
MEMORY_GOAL_MB = 400.0


def numpy_gap(
    table: np.ndarray,
    closed: np.ndarray,
    gaps: np.ndarray,
    checkpoints: np.ndarray,
    epsilon: float,
    delta: float,
    seed: int,
    record_actions: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GAP (Algorithm 1, ``round_robin="index"``) with numpy, an epoch at a time.

    Epoch τ pulls Ω_τ (sorted) round-robin for L_τ cycles, so its rows of ``table`` are a
    (cycles, |Ω|, K) view whose sum over the cycles is every (position, arm) sum in one
    reduction; arm k's epoch sum c_{τ,k} adds the positions whose arm reveals k (``closed``,
    the closed neighbourhoods, and k active). Noise: one vector of Laplace draws for the active
    arms, in arm order, from :func:`bandit_envs.privacy.streams.noise_generator` (``seed``),
    released on GAP's lattice (:mod:`bandit_envs.privacy.lattice`), as
    :class:`agents.elimination.policies.GAP` draws and releases them. Returns the arm sequence, the
    cumulative regret at ``checkpoints`` (per epoch in closed form: whole cycles times the
    cycle's regret plus a prefix) and the last epoch's sums (what ``simulate`` leaves in the
    agent's state). Sums are numpy's, in another order than GAP's round order, so a decision
    within about 1e-15 of a threshold could differ. ``record_actions=False``: the arm sequence
    is not written (an empty array is returned), as ``GAP.simulate`` by default.
    """
    n_rounds, k_arms = table.shape
    rng = noise_generator(seed)
    grid = sum_grid(1.0 / epsilon, 1.0)
    neighbourhoods = [set(np.flatnonzero(row).tolist()) for row in closed]
    active = np.ones(k_arms, dtype=bool)
    means = np.zeros(k_arms)
    actions = np.empty(n_rounds if record_actions else 0, dtype=np.int16)
    regret = np.empty(checkpoints.size)
    sums = np.zeros(k_arms)
    t, tau, total = 0, 1, 0.0
    while t < n_rounds:
        arms = np.flatnonzero(active)
        omega = np.array(sorted(get_ind_set(arms.tolist(), means.tolist(), neighbourhoods)))
        m = omega.size
        length = gap_epoch_length(arms.size, tau, epsilon, delta)
        end = t + length * m
        stop = min(end, n_rounds)
        cycles, extra = divmod(stop - t, m)
        if record_actions:
            actions[t : t + cycles * m].reshape(cycles, m)[:] = omega
            actions[t + cycles * m : stop] = omega[:extra]
        per_position = table[t : t + cycles * m].reshape(cycles, m, k_arms).sum(axis=0)
        per_position[:extra] += table[t + cycles * m : stop]
        reveal = closed[omega] & active
        sums = np.einsum("ik,ik->k", per_position, reveal)
        prefix = np.concatenate(([0.0], np.cumsum(gaps[omega])))
        inside = (checkpoints > t) & (checkpoints <= stop)
        played = checkpoints[inside] - t
        regret[inside] = total + (played // m) * prefix[m] + prefix[played % m]
        total += cycles * prefix[m] + prefix[extra]
        if stop < end:
            break
        counts = length * reveal.sum(axis=0)
        # GAP's default (lattice) release: the sum on the grid plus Laplace((1 + g) o_k/(εL_τ)) snapped to it.
        noise = rng.laplace(0.0, (1.0 + grid) * counts[arms] / (epsilon * length))
        means[arms] = (np.rint(sums[arms] / grid) * grid + np.rint(noise / grid) * grid) / counts[arms]
        slack = gap_elimination_slack(arms.size, tau, epsilon, delta, length)
        active &= means >= means[arms].max() - slack
        t, tau = end, tau + 1
    return actions, regret, sums


# The floors index with unsigned integers (np.uint64), as the table runs do
# (agents.common.kernels.unsigned): numba then compiles no test for a negative index, which made
# the revealed-entry floor 2.2 -> 1.5 ns a round at K = 10. A floor must be the fastest plain loop.


@numba.njit(cache=True)
def revealed_floor(table, actions, revealed, n_revealed, sums):  # pragma: no cover
    """Add every entry the env reveals (``revealed[a_t, :n_revealed[a_t]]`` of row t) once to its arm's sum."""
    for t in range(table.shape[0]):
        a = np.uint64(actions[t])
        for j in range(n_revealed[a]):
            k = np.uint64(revealed[a, j])
            sums[k] += table[np.uint64(t), k]


@numba.njit(cache=True)
def required_floor(table, actions, revealed, n_revealed, sums, gaps):  # pragma: no cover
    """:func:`revealed_floor` plus what GAP's table run must do besides each round, and nothing else.

    Each entry's check (the largest of the entries' bits, looked at once at the end, as
    ``gap_run`` does per stretch) and each round's regret (the pulled arm's gap added): a round
    of ``GAP.simulate`` as it is timed here (its default call, the arms not recorded) without its
    epochs, eliminations and calls.
    """
    worst, total = np.uint64(0), 0.0
    for t in range(table.shape[0]):
        a = np.uint64(actions[t])
        for j in range(n_revealed[a]):
            k = np.uint64(revealed[a, j])
            r = table[np.uint64(t), k]
            worst = max(worst, float_bits(r))
            sums[k] += r
        total += gaps[a]
    return total, worst > ONE_BITS


@numba.njit(cache=True)
def table_floor(table, sums):  # pragma: no cover
    """Read the whole table once, row by row, into per-arm sums."""
    for t in range(table.shape[0]):
        for k in range(table.shape[1]):
            sums[np.uint64(k)] += table[np.uint64(t), np.uint64(k)]


def instance(n_arms: int, horizon: int, reward: str = "truncnorm") -> tuple[GraphBanditEnv, np.ndarray]:
    """The env (the paper's means for K = 10, evenly spaced below the best arm beyond) and its reward table."""
    common = {"n_arms": n_arms, "edge_probability": 0.2, "reward": reward, "horizon": horizon, "instance_seed": 3}
    if n_arms <= 10:
        env = GraphBanditEnv(gap=0.1, **common)
    else:
        means = np.concatenate(([0.9], np.linspace(0.8, 0.1, n_arms - 1)))
        env = GraphBanditEnv(means=means, **common)
    uniforms = np.random.default_rng(4).random((horizon, n_arms))
    return env, env.reward_model.from_uniforms(uniforms)


def _ns(seconds: float, horizon: int) -> str:
    return f"{seconds / horizon * 1e9:.1f}"


def _revealed_floor_call(
    table: np.ndarray, actions: np.ndarray, reveals: np.ndarray, gaps: np.ndarray | None = None
) -> tuple[Callable[[], object], float]:
    """:func:`revealed_floor` for the arm sequence ``actions``, compiled and ready to time; entries per round.

    ``reveals[a]``: the arms whose entries pulling ``a`` reveals. With ``gaps`` (the arms' gaps),
    :func:`required_floor` instead.
    """
    k_arms = table.shape[1]
    revealed = np.zeros((k_arms, k_arms), dtype=np.int64)
    n_revealed = np.zeros(k_arms, dtype=np.int64)
    for a in range(k_arms):
        cols = np.flatnonzero(reveals[a])
        revealed[a, : cols.size], n_revealed[a] = cols, cols.size
    acts = actions.astype(np.int64)
    sums = np.zeros(k_arms)

    def floor() -> None:
        if gaps is None:
            revealed_floor(table, acts, revealed, n_revealed, sums)
        else:
            required_floor(table, acts, revealed, n_revealed, sums, gaps)

    floor()
    return floor, float(n_revealed[acts].mean())


def _floors(
    name: str,
    table: np.ndarray,
    actions: np.ndarray,
    reveals: np.ndarray,
    goal: float,
    repeats: int,
    ours: Callable[[], object],
    gaps: np.ndarray | None = None,
) -> list[Ratio]:
    """``name``'s simulate (``ours``) against both floors on its own arm sequence ``actions``.

    With ``gaps`` (GAP), also the bound of the goal against the revealed-entry floor: that floor
    against :func:`required_floor`, timed alternately.
    """
    horizon, k_arms = table.shape
    floor, per_round = _revealed_floor_call(table, actions, reveals)
    sums = np.zeros(k_arms)
    table_floor(table, sums)
    clock = time.thread_time
    ours_s, floor_s = interleaved(ours, floor, repeats, clock)
    ours2_s, whole_s = interleaved(ours, lambda: table_floor(table, sums), repeats, clock)
    where = f"K = {k_arms}, T = {horizon:,}"
    bound: list[Ratio] = []
    if gaps is not None:
        required, _ = _revealed_floor_call(table, actions, reveals, gaps)
        floor2_s, required_s = interleaved(floor, required, repeats, clock)
        ceiling = floor2_s / required_s
        bound.append(
            Ratio(
                f"bound on {name} vs revealed-entry floor, {where}: the round's required work",
                "numba loop doing only what each round of GAP must (the entries added and checked, the regret)",
                "numba loop adding each revealed entry once",
                ceiling,
                None,
                f"{_ns(required_s, horizon)} vs {_ns(floor2_s, horizon)} ns/round: the {goal:g}x goal asks "
                f"{name} to run at {goal / ceiling:.2f} of this loop's speed with its epochs, eliminations "
                f"and simulate's own cost (its checks, state and generator) added",
            )
        )
    return [
        Ratio(
            f"{name} simulate vs revealed-entry floor",
            f"{name}.simulate",
            "numba loop adding each revealed entry once",
            floor_s / ours_s,
            goal,
            f"{_ns(ours_s, horizon)} vs {_ns(floor_s, horizon)} ns/round ({per_round:.2f} entries/round), {where}",
        ),
        Ratio(
            f"{name} simulate vs whole-table floor",
            f"{name}.simulate",
            "numba loop reading the whole table once",
            whole_s / ours2_s,
            None,
            f"{_ns(ours2_s, horizon)} vs {_ns(whole_s, horizon)} ns/round ({k_arms} entries/round), {where}",
        ),
        *bound,
    ]


def gap_ratios(n_arms: int, horizon: int, goal: float, repeats: int, floors: bool = False) -> list[Ratio]:
    """GAP.simulate against :func:`numpy_gap` (and the floors) at K = ``n_arms``, T = ``horizon``."""
    env, table = instance(n_arms, horizon)
    step = max(1, horizon // 100)
    checkpoints = np.arange(step, horizon + 1, step)
    delta = 1.0 / horizon
    # Agents built ahead: what is timed is simulate, not the constructor's checks.
    fresh = [GAP(n_arms, horizon, EPSILON, env.adjacency, seed=5) for _ in range(6 * repeats + 2)]

    # Timed as simulate is called by default (the regret at the checkpoints, the arm sequence not
    # recorded), on both sides; the arms are compared in a call of each that records them.
    def ours(record: bool = False) -> object:
        return fresh.pop().simulate(table, env.adjacency, env.gaps, checkpoints=checkpoints, record_actions=record)

    def reference(record: bool = False) -> object:
        return numpy_gap(table, env.neighbourhoods, env.gaps, checkpoints, EPSILON, delta, 5, record)

    agent = GAP(n_arms, horizon, EPSILON, env.adjacency, seed=5)
    result = agent.simulate(table, env.adjacency, env.gaps, checkpoints=checkpoints, record_actions=True)
    ref_actions, ref_regret, _ = numpy_gap(table, env.neighbourhoods, env.gaps, checkpoints, EPSILON, delta, 5)
    same = bool(np.array_equal(result.actions, ref_actions)) and bool(
        np.allclose(result.checkpoint_regret, ref_regret, rtol=1e-12)
    )
    ours_s, numpy_s = interleaved(ours, reference, repeats, time.thread_time)
    recorded = ""
    if floors:  # the same pair with the arm sequence written on both sides (record_actions=True)
        rec_s, rec_numpy_s = interleaved(lambda: ours(True), lambda: reference(True), repeats, time.thread_time)
        recorded = (
            f"; both recording the arm sequence: {_ns(rec_s, horizon)} vs {_ns(rec_numpy_s, horizon)} ns/round, "
            f"{rec_numpy_s / rec_s:.2f}x"
        )
    out = [
        Ratio(
            f"GAP simulate vs numpy GAP, K = {n_arms}, T = {horizon:,}",
            "GAP.simulate",
            "numpy GAP (an epoch's rows summed as one (cycles, |Ω|, K) reduction)",
            numpy_s / ours_s,
            goal,
            f"{_ns(ours_s, horizon)} vs {_ns(numpy_s, horizon)} ns/round, regret at 100 checkpoints, arms not "
            f"recorded (the default){recorded}; same arms and regret: {'yes' if same else 'NO'}",
        )
    ]
    if floors:
        assert result.actions is not None
        out += _floors("GAP", table, result.actions, env.neighbourhoods, 0.6, repeats, ours, env.gaps)
        out.append(_gap_bound(table, result.actions, env.neighbourhoods, goal, repeats, reference))
    return out


def _gap_bound(
    table: np.ndarray,
    actions: np.ndarray,
    reveals: np.ndarray,
    goal: float,
    repeats: int,
    reference: Callable[[], object],
) -> Ratio:
    """How many times faster than numpy GAP the revealed-entry floor is: what bounds the goal against numpy.

    The floor only adds each entry the env reveals once to its arm's sum, on GAP's own arm
    sequence; GAP must read those entries (the active arms' ones) and do more. So numpy ÷ floor
    is about the most any GAP reading every revealed entry could reach against numpy (GAP may
    pass it by a little: it skips eliminated arms' entries, and prefetches rows the floor does not).
    """
    horizon, k_arms = table.shape
    floor, per_round = _revealed_floor_call(table, actions, reveals)
    floor_s, numpy_s = interleaved(floor, reference, repeats, time.thread_time)
    bound = numpy_s / floor_s
    verdict = "above" if bound >= goal else "below"
    return Ratio(
        f"bound on GAP vs numpy GAP, K = {k_arms}, T = {horizon:,}: revealed-entry floor vs numpy GAP",
        "numba loop adding each revealed entry once",
        "numpy GAP",
        bound,
        None,
        f"{_ns(floor_s, horizon)} vs {_ns(numpy_s, horizon)} ns/round ({per_round:.2f} entries/round): "
        f"numpy ÷ floor = {bound:.2f}, {verdict} the {goal:g}x goal; no loop that reads every revealed "
        f"entry at the floor's speed exceeds {bound:.2f}x numpy",
    )


def single_arm_ratios(repeats: int) -> list[Ratio]:
    """DPSE and AAE (no side observations) against the floors, K = 10, T = 10^5."""
    env, table = instance(N_ARMS, HORIZON)
    checkpoints = np.arange(1000, HORIZON + 1, 1000)
    out: list[Ratio] = []
    makers: dict[str, Callable[[], DPSE | AAE]] = {
        "DPSE": lambda: DPSE(N_ARMS, HORIZON, 1.0, seed=5),
        "AAE": lambda: AAE(N_ARMS, HORIZON, delta=0.1, seed=5),
    }
    for name, make in makers.items():
        fresh = [make() for _ in range(4 * repeats + 2)]

        def ours(fresh: list[DPSE | AAE] = fresh) -> object:  # the default call, as GAP's rows time it
            return fresh.pop().simulate(table, env.adjacency, env.gaps, checkpoints=checkpoints)

        result = make().simulate(table, env.adjacency, env.gaps, checkpoints=checkpoints, record_actions=True)
        assert result.actions is not None
        out += _floors(name, table, result.actions, np.eye(N_ARMS, dtype=bool), 0.5, repeats, ours)
    return out


def kernel_ratios(repeats: int) -> list[Ratio]:
    """Every simulate row: GAP against numpy at four sizes, GAP, DPSE and AAE against the floors."""
    out = gap_ratios(N_ARMS, HORIZON, 3.0, repeats, floors=True)
    out += gap_ratios(100, HORIZON, 1.5, repeats, floors=True)
    out += gap_ratios(1000, 10_000, 1.5, repeats)
    out += gap_ratios(N_ARMS, 10_000, 1.0, 4 * repeats)
    out += single_arm_ratios(repeats)
    return out


def _variant_rows(
    loops: dict[bool, Callable[..., float]], n_arms: int, horizon: int, reward: str, repeats: int
) -> list[Ratio]:
    """Both loops of :func:`variant_ratios` on a table of rewards and one of uniforms (K = ``n_arms``)."""
    env, rewards = instance(n_arms, horizon, reward)
    uniforms = np.random.default_rng(4).random((horizon, n_arms))
    step = max(1, horizon // 100)
    checkpoints = np.arange(step, horizon + 1, step)
    out: list[Ratio] = []
    for table, law in ((rewards, None), (uniforms, env.reward_model)):

        def play(batched: bool, table: np.ndarray = table, law: object = law) -> tuple[float, np.ndarray]:
            agent = GAP(n_arms, horizon, EPSILON, env.adjacency, seed=5)
            actions = np.zeros(horizon, dtype=np.int16)
            bad = np.full(2, -1, dtype=np.int64)
            total = loops[batched](
                agent._state, agent._params, 0, agent._observes(env.adjacency), table, 0, horizon,
                agent._law(law), agent._override(None, horizon), env.gaps, checkpoints,
                np.zeros(checkpoints.size), actions, 0.0, agent.rng, bad,
            )  # fmt: skip
            return total, actions

        chunks, rounds = play(True), play(False)
        same = chunks[0] == rounds[0] and np.array_equal(chunks[1], rounds[1])
        chunks_s, rounds_s = interleaved(lambda: play(True), lambda: play(False), repeats, time.thread_time)
        kind, (faster, slower) = (
            ("uniforms", ("chunks", "round by round")) if law else ("rewards", ("round by round", "chunks"))
        )
        out.append(
            Ratio(
                f"GAP's inner loops on a table of {kind}, {reward}, K = {n_arms}",
                f"gap_run, {faster}",
                f"gap_run, {slower}",
                rounds_s / chunks_s if law else chunks_s / rounds_s,
                None,
                f"chunks {_ns(chunks_s, horizon)} vs round by round {_ns(rounds_s, horizon)} ns/round, "
                f"T = {horizon:,}; same arms and regret: {'yes' if same else 'NO'}",
            )
        )
    return out


def variant_ratios(repeats: int) -> list[Ratio]:
    """GAP's two inner loops against each other, each on both kinds of table (one run, same arms checked).

    GAP reads a table of uniforms in chunks made rewards as a batch (``gap_run_uniforms``) and a
    table of rewards round by round (``gap_run_rewards``); here each loop
    (:func:`agents.elimination.drivers.compile_gap_run`) runs on both. Every ratio is how many
    times faster the loop GAP uses for that kind of table is than the other.
    """
    out: list[Ratio] = []
    loops = {chunks: compile_gap_run(chunks) for chunks in (True, False)}
    for n_arms, horizon, reward in (
        (10, HORIZON, "bernoulli"),
        (10, HORIZON, "truncnorm"),
        (100, HORIZON, "bernoulli"),
        (1000, 10_000, "bernoulli"),
    ):
        out += _variant_rows(loops, n_arms, horizon, reward, repeats)
    return out


STREAM_CHILD = """
import resource, sys, numpy as np


def peak_mb():
    # VmHWM: the peak RSS of this process's own memory. ru_maxrss is not: Linux carries the
    # parent's peak over the fork (or vfork) and exec that started this child.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


from agents.elimination.policies import GAP
from agents.common.tables import UniformTable
from bandit_envs.graph import GraphBanditEnv
horizon = int(sys.argv[1])
env = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=horizon, instance_seed=3)
table = UniformTable(6, horizon, 10)
checkpoints = np.linspace(1, horizon, 100).astype(np.int64)
result = GAP(10, horizon, 0.1, env.adjacency, seed=5).simulate(
    table, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints
)
print(peak_mb(), result.total_regret)
"""


def stream_ratios(horizon: int) -> list[Ratio]:
    env_vars = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", STREAM_CHILD, str(horizon)], capture_output=True, text=True, env=env_vars, check=True
    )
    seconds = time.perf_counter() - start
    peak_mb, regret = (float(x) for x in out.stdout.split())
    # The same code on a short table: streamed in blocks equals the in-memory run.
    from agents.common.tables import UniformTable

    short = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=50_000, instance_seed=3)
    streamed, in_memory = (
        GAP(10, 50_000, 0.1, short.adjacency, seed=5).simulate(
            table, short.adjacency, short.gaps, law=short.reward_model, record_actions=True
        )
        for table in (UniformTable(6, 50_000, 10, block_rows=777), UniformTable(6, 50_000, 10).array())
    )
    assert streamed.actions is not None and in_memory.actions is not None
    equal = streamed.total_regret == in_memory.total_regret and np.array_equal(streamed.actions, in_memory.actions)
    return [
        Ratio(
            f"streamed GAP memory at T = {horizon:.0e}",
            "peak RSS of the child process (VmHWM)",
            f"{MEMORY_GOAL_MB:.0f} MB",
            MEMORY_GOAL_MB / peak_mb,
            1.0,
            f"peak RSS {peak_mb:.0f} MB, {seconds:.1f} s, regret {regret:.1f}; streamed == in-memory on "
            f"T = 50,000: {'yes' if equal else 'NO'}",
        )
    ]


def _extract(rev: str, folder: Path) -> bool:
    """Write the tree of commit ``rev`` into ``folder``; False if git or the commit is missing."""
    if shutil.which("git") is None:
        return False
    archive = folder / "tree.tar"
    with archive.open("wb") as out:
        done = subprocess.run(["git", "-C", str(ROOT), "archive", rev], stdout=out, stderr=subprocess.DEVNULL)
    if done.returncode != 0:
        return False
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "tree", filter="data")
    return True


def _experiment_seconds(code: Path, out: Path, quick: bool) -> tuple[float, float]:
    """Wall and CPU seconds (all processes) of ``banditlab run gap/privacy --jobs 2`` with the code in ``code``."""
    env_vars = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "agents.experiments.cli", "run", "gap/privacy"]
    command += ["--jobs", "2", "--out", str(out)] + (["--quick"] if quick else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # cwd=code: python -m puts the working directory first on sys.path, so it must be that code's.
    subprocess.run(command, env=env_vars, cwd=code, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def experiment_ratios(baseline: str, quick: bool) -> list[Ratio]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not _extract(baseline, folder):
            print(f"  (skipped gap/privacy against {baseline}: git or the commit is not available)")
            return []
        old = folder / "tree"
        for code, name in ((old, "old-warm"), (ROOT, "new-warm")):
            _experiment_seconds(code, folder / name, quick=True)
        new_s, new_cpu = _experiment_seconds(ROOT, folder / "new", quick)
        old_s, old_cpu = _experiment_seconds(old, folder / "old", quick)
    scale = "--quick" if quick else "full scale"
    return [
        Ratio(
            f"gap/privacy ({scale}, 2 processes) vs main at {baseline}",
            "this code",
            f"commit {baseline} (per-round driver)",
            old_s / new_s,
            None if quick else 3.0,
            f"wall {new_s:.1f} s vs {old_s:.1f} s; CPU {new_cpu:.1f} s vs {old_cpu:.1f} s",
        )
    ]


def results(quick: bool = False, baseline: str = BASELINE) -> list[Ratio]:
    """Every ratio of this benchmark (``quick``: shorter stream, gap/privacy at --quick scale)."""
    out = kernel_ratios(repeats=5 if quick else 11)
    out += stream_ratios(10**7 if quick else 10**8)
    out += experiment_ratios(baseline, quick)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10^7 stream, gap/privacy at --quick scale")
    parser.add_argument("--baseline", default=BASELINE, help="commit to compare gap/privacy against")
    parser.add_argument("--kernels", action="store_true", help="only the simulate rows")
    parser.add_argument("--variants", action="store_true", help="only GAP's two inner loops against each other")
    args = parser.parse_args()
    if args.variants:
        print_results(variant_ratios(repeats=5 if args.quick else 11))
    elif args.kernels:
        print_results(kernel_ratios(repeats=5 if args.quick else 11))
    else:
        print_results(results(args.quick, args.baseline))


if __name__ == "__main__":
    main()
