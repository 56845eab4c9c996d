"""The lattice sampler's cost: each private agent with ``sampler="lattice"`` (default) against ``sampler="float"``.

Goal: the lattice path (releases on a power-of-two grid, :mod:`bandit_envs.privacy.lattice`) at
most 1.5× the time of the float path, i.e. a speed ratio (float time / lattice time) of at least
1/1.5 ≈ 0.67, for every private agent, measured in one run, the two alternating:

* the batched central agents of ``bench_dp_agents.py`` (K = 10, 1000 copies, one core, act +
  update, thread CPU time, the two alternating every 50 rounds);
* GAP's and DPSE's compiled ``simulate`` on the instance of ``bench_elimination.py``;
* ``LDPWrapper(UCB)`` (Laplace and Gaussian reports, 1000 copies);
* LDP-LinUCB's and LDP-OLS's compiled ``run`` on the problems of ``bench_ldp_linucb.py`` and
  ``bench_ldp_contextual.py``.

Usage: ``python benchmarks/bench_samplers.py [--quick]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import Ratio, interleaved, quick_main
from bench_dp_agents import alternate, run_batched
from bench_ucb_batch import bernoulli_table, one_core

from agents import DPSE, GAP, LDPOLS, UCB, LDPLinUCB, LDPWrapper
from agents.central_dp.thompson import DPThompsonSampling
from agents.central_dp.ucb import AdaPUCB, HybridDPUCB, TreeDPUCB

GOAL = 1.0 / 1.5  # float time / lattice time
COPIES, ARMS, EPSILON, SEED = 1000, 10, 1.0, 0


def batched_agents() -> dict[str, Callable[[str], Any]]:
    """name -> make(sampler): the batched agents timed act + update."""
    return {
        "HybridDPUCB": lambda s: HybridDPUCB(ARMS, EPSILON, n_envs=COPIES, seed=SEED, sampler=s),
        "TreeDPUCB": lambda s: TreeDPUCB(ARMS, 100_000, EPSILON, n_envs=COPIES, seed=SEED, sampler=s),
        "AdaPUCB": lambda s: AdaPUCB(ARMS, EPSILON, n_envs=COPIES, seed=SEED, sampler=s),
        "DPThompsonSampling": lambda s: DPThompsonSampling(ARMS, EPSILON, n_envs=COPIES, seed=SEED, sampler=s),
        "LDPWrapper(UCB, laplace)": lambda s: LDPWrapper(
            UCB(ARMS, n_envs=COPIES), "laplace", EPSILON, seed=SEED, sampler=s
        ),
        "LDPWrapper(UCB, gaussian)": lambda s: LDPWrapper(
            UCB(ARMS, n_envs=COPIES), "gaussian", 0.5, 1e-5, seed=SEED, sampler=s
        ),
    }


def batched_ratios(steps: int, repeats: int) -> list[Ratio]:
    table = bernoulli_table(COPIES, ARMS)
    out = []
    warm = np.empty((20, COPIES), dtype=np.int64)
    with one_core():
        for name, make in batched_agents().items():
            run_batched(make("lattice"), table, 0, 20, warm)  # compile / load
            run_batched(make("float"), table, 0, 20, warm)
            lattice_times, float_times = [], []
            for _ in range(repeats):
                lattice_s, float_s, _ = alternate(make("lattice"), make("float"), table, steps)
                lattice_times.append(lattice_s)
                float_times.append(float_s)
            lat, flt = statistics.median(lattice_times), statistics.median(float_times)
            out.append(
                Ratio(
                    f"{name}: lattice vs float sampler",
                    f"{name} sampler='lattice' act+update",
                    f"{name} sampler='float' act+update",
                    flt / lat,
                    GOAL,
                    f"{lat / steps * 1e6:.0f} vs {flt / steps * 1e6:.0f} us per step of {COPIES} copies (lattice/float "
                    f"= {lat / flt:.3f}), one core, thread CPU time, medians of {repeats} runs of {steps} rounds",
                )
            )
    return out


def elimination_ratios(repeats: int) -> list[Ratio]:
    from bench_elimination import EPSILON as GAP_EPSILON
    from bench_elimination import HORIZON, N_ARMS, instance

    env, table = instance(N_ARMS, HORIZON)
    out = []
    makers: dict[str, Callable[[str], Any]] = {
        "GAP": lambda s: GAP(N_ARMS, HORIZON, GAP_EPSILON, env.adjacency, seed=5, sampler=s),
        "DPSE": lambda s: DPSE(N_ARMS, HORIZON, GAP_EPSILON, seed=5, sampler=s),
    }
    for name, make in makers.items():
        graph = env.adjacency if name == "GAP" else np.zeros_like(env.adjacency)
        fresh = {s: [make(s) for _ in range(repeats + 1)] for s in ("lattice", "float")}
        for s in fresh:
            fresh[s].pop().simulate(table, graph, env.gaps)  # compile / load

        def run(sampler: str, pool: dict[str, list[Any]] = fresh, adjacency: np.ndarray = graph) -> None:
            pool[sampler].pop().simulate(table, adjacency, env.gaps)

        lat, flt = interleaved(lambda: run("lattice"), lambda: run("float"), repeats, clock=time.thread_time)
        out.append(
            Ratio(
                f"{name}.simulate: lattice vs float sampler",
                f"{name} sampler='lattice'",
                f"{name} sampler='float'",
                flt / lat,
                GOAL,
                f"{lat * 1e3:.1f} vs {flt * 1e3:.1f} ms for {HORIZON} rounds (lattice/float = {lat / flt:.3f}), "
                f"thread CPU time, medians of {repeats}",
            )
        )
    return out


def linear_ratios(steps: int, repeats: int) -> list[Ratio]:
    import bench_ldp_contextual as ctx
    import bench_ldp_linucb as lin

    out = []
    cases: list[tuple[str, Callable[[str], Any], Any, Any]] = [
        (
            "LDPLinUCB.run",
            lambda s: LDPLinUCB(lin.D, lin.EPSILON, lin.DELTA, lin.ALPHA, steps, bonus="quadratic", seed=0, sampler=s),
            lin.Problem(),
            lin.time_fast,
        ),
        (
            "LDPOLS.run",
            lambda s: LDPOLS(ctx.D, ctx.EPSILON, l_x=ctx.L_X, seed=0, sampler=s),
            ctx.Problem(),
            ctx.time_fast,
        ),
    ]
    for name, make, problem, time_fast in cases:
        agents = {s: make(s) for s in ("lattice", "float")}
        for agent in agents.values():
            time_fast(agent, problem, min(steps, 1000))  # compile / load
        lattice_times, float_times = [], []
        for _ in range(repeats):
            lattice_times.append(time_fast(agents["lattice"], problem, steps)[0])
            float_times.append(time_fast(agents["float"], problem, steps)[0])
        lat, flt = statistics.median(lattice_times), statistics.median(float_times)
        out.append(
            Ratio(
                f"{name}: lattice vs float sampler",
                f"{name} sampler='lattice'",
                f"{name} sampler='float'",
                flt / lat,
                GOAL,
                f"{lat * 1e3:.1f} vs {flt * 1e3:.1f} ms for {steps} rounds (lattice/float = {lat / flt:.3f}), "
                f"wall time, medians of {repeats} alternating runs",
            )
        )
    return out


def results(quick: bool = False) -> list[Ratio]:
    """Every private agent's lattice path against its float path, in this run."""
    steps, repeats = (200, 3) if quick else (1000, 5)
    out = batched_ratios(steps, repeats)
    out += elimination_ratios(repeats)
    out += linear_ratios(20_000 if quick else 50_000, repeats)
    return out


def main() -> None:
    quick_main(results, __doc__)


if __name__ == "__main__":
    main()
