"""The elimination agents' table simulator: GAP against a numpy GAP, a compiled floor, and the code before.

Measured in one run, on the same reward table (K = 10, T = 10^5, the gap paper's GAP: ε = 0.1,
δ = 1/T, an Erdős–Rényi feedback graph with p = 0.2):

* ``GAP.simulate`` (compiled, an epoch at a time) against a plain-numpy GAP written here that
  sums each epoch with one vectorised column sum per arm of Ω_τ (goal: ≥ 5× faster); both
  must pull the same arms;
* ``GAP.simulate`` against a compiled floor: a numba loop that, given GAP's arm sequence, reads
  each entry the env reveals once and adds it to a sum (goal: ≥ 0.3× the floor's speed);
* with ``--baseline REV`` (default: the last commit before the epoch-level kernels) and git
  available: the full ``gap/privacy`` experiment on 2 processes with this code and with that
  commit's code, one after the other (goal: ≥ 3× faster). Both are run once at ``--quick``
  scale first, so each has its numba cache warm;
* peak memory of a streamed GAP run (a :class:`agents.tables.UniformTable`) at T = 10^8 in a
  child process (goal: ≤ 400 MB; T = 10^7 with ``--quick``), and that it equals the in-memory
  run on a shorter table.

Usage: ``python benchmarks/bench_elimination.py [--quick] [--baseline REV]``.
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
from pathlib import Path

import numba
import numpy as np
from _common import Ratio, interleaved, print_results

from agents.elimination import GAP
from agents.reference import gap_elimination_slack, gap_epoch_length, get_ind_set
from bandit_envs.graph import GraphBanditEnv

ROOT = Path(__file__).resolve().parents[1]
#: main before the epoch-level kernels (the per-round driver through function arguments).
BASELINE = "843e812"
N_ARMS, HORIZON, EPSILON = 10, 100_000, 0.1
MEMORY_GOAL_MB = 400.0


def numpy_gap(table: np.ndarray, closed: np.ndarray, epsilon: float, delta: float, seed: int) -> np.ndarray:
    """GAP (Algorithm 1, ``round_robin="index"``) with numpy: one column sum per arm of Ω per epoch.

    Returns the arm sequence. Same choices as :class:`agents.elimination.GAP` (ties to the lowest
    index, Laplace draws in arm order from ``default_rng(seed)``), but the epoch's sums are
    numpy's (pairwise) sums, so a decision within 1e-16 of a threshold could differ.
    """
    n_rounds, k_arms = table.shape
    rng = np.random.default_rng(seed)
    neighbourhoods = [set(np.flatnonzero(row).tolist()) for row in closed]
    active = np.ones(k_arms, dtype=bool)
    means = np.zeros(k_arms)
    actions = np.empty(n_rounds, dtype=np.int64)
    t, tau = 0, 1
    while t < n_rounds:
        arms = np.flatnonzero(active).tolist()
        omega = np.array(sorted(get_ind_set(arms, means.tolist(), neighbourhoods)))
        m = omega.size
        length = gap_epoch_length(len(arms), tau, epsilon, delta)
        end = t + length * m
        stop = min(end, n_rounds)
        actions[t:stop] = np.resize(omega, stop - t)
        observations = np.zeros(k_arms)
        sums = np.zeros(k_arms)
        for i, a in enumerate(omega):
            rows = table[t + i : stop : m]
            cols = np.flatnonzero(closed[a] & active)
            sums[cols] += rows[:, cols].sum(axis=0)
            observations[cols] += rows.shape[0]
        if stop < end:
            break
        for k in arms:
            means[k] = sums[k] / observations[k] + rng.laplace(0.0, 1.0 / (epsilon * length))
        slack = gap_elimination_slack(len(arms), tau, epsilon, delta, length)
        active &= means >= means[active].max() - slack
        t, tau = end, tau + 1
    return actions


@numba.njit(cache=True)
def floor_loop(table, actions, revealed, n_revealed, sums, counts):  # pragma: no cover
    """Read every entry the env reveals once (arm a_t's closed neighbourhood) and add it up."""
    for t in range(table.shape[0]):
        a = actions[t]
        for j in range(n_revealed[a]):
            k = revealed[a, j]
            counts[k] += 1.0
            sums[k] += table[t, k]


def instance() -> tuple[GraphBanditEnv, np.ndarray]:
    env = GraphBanditEnv(n_arms=N_ARMS, edge_probability=0.2, gap=0.1, horizon=HORIZON, instance_seed=3)
    uniforms = np.random.default_rng(4).random((HORIZON, N_ARMS))
    return env, env.reward_model.from_uniforms(uniforms)


def kernel_ratios(repeats: int) -> list[Ratio]:
    env, table = instance()
    checkpoints = np.arange(1000, HORIZON + 1, 1000)

    # Agents built ahead: what is timed is simulate, not the constructor's checks.
    fresh = [GAP(N_ARMS, HORIZON, EPSILON, env.adjacency, seed=5) for _ in range(4 * repeats + 2)]

    def ours() -> np.ndarray:
        result = fresh.pop().simulate(table, env.adjacency, env.gaps, checkpoints=checkpoints, record_actions=True)
        assert result.actions is not None
        return result.actions

    def reference() -> np.ndarray:
        actions = numpy_gap(table, env.neighbourhoods, EPSILON, 1.0 / HORIZON, seed=5)
        np.cumsum(env.gaps[actions])[checkpoints - 1]  # the regret curve, as simulate computes it
        return actions

    actions = ours()
    same = bool(np.array_equal(actions, reference()))
    ours_s, numpy_s = interleaved(ours, reference, repeats)
    revealed = np.zeros((N_ARMS, N_ARMS), dtype=np.int64)
    n_revealed = np.zeros(N_ARMS, dtype=np.int64)
    for a in range(N_ARMS):
        cols = np.flatnonzero(env.neighbourhoods[a])
        revealed[a, : cols.size], n_revealed[a] = cols, cols.size
    acts = actions.astype(np.int64)
    sums, counts = np.zeros(N_ARMS), np.zeros(N_ARMS)
    floor_loop(table, acts, revealed, n_revealed, sums, counts)
    ours_s, floor_s = interleaved(ours, lambda: floor_loop(table, acts, revealed, n_revealed, sums, counts), repeats)
    per_round = float(n_revealed[acts].mean())
    return [
        Ratio(
            "GAP simulate vs numpy epoch-vectorised GAP",
            "GAP.simulate",
            "numpy GAP (one column sum per arm of Ω per epoch)",
            numpy_s / ours_s,
            5.0,
            f"{ours_s / HORIZON * 1e9:.1f} vs {numpy_s / HORIZON * 1e9:.1f} ns/round, K = {N_ARMS}, T = {HORIZON:,}; "
            f"same arms: {'yes' if same else 'NO'}",
        ),
        Ratio(
            "GAP simulate vs compiled floor",
            "GAP.simulate",
            "numba loop reading each revealed entry once",
            floor_s / ours_s,
            0.3,
            f"{ours_s / HORIZON * 1e9:.1f} vs {floor_s / HORIZON * 1e9:.1f} ns/round ({per_round:.2f} entries/round)",
        ),
    ]


STREAM_CHILD = """
import resource, sys, numpy as np
from agents.elimination import GAP
from agents.tables import UniformTable
from bandit_envs.graph import GraphBanditEnv
horizon = int(sys.argv[1])
env = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=horizon, instance_seed=3)
table = UniformTable(6, horizon, 10)
checkpoints = np.linspace(1, horizon, 100).astype(np.int64)
result = GAP(10, horizon, 0.1, env.adjacency, seed=5).simulate(
    table, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints
)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, result.total_regret)
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
    from agents.tables import UniformTable

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
            "peak RSS of the whole process",
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
    args = parser.parse_args()
    print_results(results(args.quick, args.baseline))


if __name__ == "__main__":
    main()
