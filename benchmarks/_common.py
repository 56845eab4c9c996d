"""What every benchmark script shares: a measured ratio with its reference, and careful timing.

Every script in ``benchmarks/`` exposes ``results(quick: bool = False) -> list[Ratio]`` (used by
``python benchmarks/run_all.py``, which prints every ratio and writes the speed table of
``docs/reproductions/README.md``) and a ``main()`` for running it alone. A ratio is always
measured against its reference in the same process and the same run, interleaved where it
matters, so a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The real datasets, beside the checkout (never copied into it).
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
ML_DIR = DATA / "ml-latest-small"
GOWALLA_NYC = DATA / "gowalla-snap-nyc" / "loc-gowalla_totalCheckins.nyc.txt.gz"


@dataclass(frozen=True)
class Ratio:
    """One measured speed ratio: ``subject`` against ``reference``, both measured in this run.

    ``ratio`` is how many times faster the subject is (reference time / subject time), or the
    memory ratio when ``unit`` says so; ``goal`` is the smallest acceptable ratio (None: no goal,
    reported for information), and ``detail`` the raw figures in words.
    """

    name: str
    subject: str
    reference: str
    ratio: float
    goal: float | None
    detail: str

    @property
    def met(self) -> bool | None:
        """Whether the goal is met (None when there is no goal)."""
        return None if self.goal is None else self.ratio >= self.goal

    def line(self) -> str:
        """One printed line: name, ratio, goal and the raw figures."""
        goal = "" if self.goal is None else f" (goal >= {self.goal:g}x: {'met' if self.met else 'NOT MET'})"
        return f"{self.name}: {self.ratio:.3g}x{goal}  [{self.subject} vs {self.reference}: {self.detail}]"


def best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn`` (seconds), garbage collector off."""
    times = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return min(times)


def interleaved(
    subject: Callable[[], object],
    reference: Callable[[], object],
    repeats: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """Median times (subject, reference) of ``repeats`` alternating calls of each (seconds).

    ``clock`` is wall time by default; ``time.thread_time`` counts only this thread's CPU time,
    which on a shared machine leaves out the time other processes hold the core.
    """
    s_times, r_times = [], []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = clock()
            subject()
            s_times.append(clock() - start)
            start = clock()
            reference()
            r_times.append(clock() - start)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(s_times), statistics.median(r_times)


def interleaved_per_step(
    subject: Callable[[], float], reference: Callable[[], float], repeats: int
) -> tuple[float, float]:
    """Median per-step times (subject, reference) of alternating calls that each return their per-step time."""
    s_out: list[float] = []
    r_out: list[float] = []
    interleaved(lambda: s_out.append(subject()), lambda: r_out.append(reference()), repeats)
    return statistics.median(s_out), statistics.median(r_out)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """(``fn()``, its wall time in seconds)."""
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def loop_seconds(step: Callable[[Any], object], actions: Iterable[Any]) -> float:
    """Wall seconds of ``step(a)`` for every ``a`` of ``actions``, in order."""
    start = time.perf_counter()
    for a in actions:
        step(a)
    return time.perf_counter() - start


def print_results(results: list[Ratio]) -> None:
    """Print one line per ratio."""
    for result in results:
        print(result.line())


def quick_main(results: Callable[..., list[Ratio]], doc: str | None, quick_help: str = "shorter runs") -> None:
    """The ``main()`` of a script whose only option is ``--quick``: parse it, print ``results(quick=...)``."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    print_results(results(quick=args.quick))


def data_paths(synthetic: bool = False) -> tuple[Any, Any, str]:
    """(MovieLens data, Gowalla data, words): the real data of ``../shared/data`` if both are there, else None."""
    if not synthetic and ML_DIR.exists() and GOWALLA_NYC.exists():
        return str(ML_DIR), str(GOWALLA_NYC), "real data (ml-latest-small, Gowalla NYC)"
    if synthetic:
        return None, None, "synthetic defaults"
    return None, None, f"synthetic defaults ({ML_DIR} or {GOWALLA_NYC} not found)"


def announce_data(synthetic: bool = False) -> tuple[Any, Any, str]:
    """:func:`data_paths`, after printing the Python and numpy versions and which data the run uses."""
    import platform

    ml_data, gw_data, words = data_paths(synthetic)
    print(f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}")
    print(f"data: {words}")
    return ml_data, gw_data, words


def parse_data_args(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, Any, Any]:
    """Add ``--synthetic`` to ``parser``, parse the command line, announce the data: (args, MovieLens, Gowalla data)."""
    parser.add_argument("--synthetic", action="store_true", help="use the synthetic defaults even if real data exist")
    args = parser.parse_args()
    ml_data, gw_data, _ = announce_data(args.synthetic)
    return args, ml_data, gw_data


def traced_vector_bytes(make: Callable[[], Any]) -> int:
    """Bytes traced by tracemalloc while the vector env ``make()`` builds and its last step's outputs live.

    The env is reset with seed 0 and stepped three times with uniform random arms (seed 2).
    """
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    venv = make()
    venv.reset(seed=0)
    for a in np.random.default_rng(2).integers(0, venv.single_action_space.n, size=(3, venv.num_envs)):
        out = venv.step(a)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    del out, venv
    gc.collect()
    return held


class UserFeatures:
    """MovieLens-like synthetic contextual problem: per-user feature matrices, a random user each round.

    ``n_users`` users each hold a fixed ``arms`` x ``d`` matrix of rows of norm ``feature_norm``;
    rewards are ``x . theta`` clipped to [-1, 1], ``theta`` of norm ``theta_norm``. Rounds are fed
    in blocks of ``block_size`` (the users of a block are a rotation of one random draw).
    """

    def __init__(
        self,
        arms: int,
        d: int,
        block_size: int,
        feature_norm: float = 1.0,
        theta_norm: float = 1.0,
        seed: int = 0,
        n_users: int = 943,
    ) -> None:
        rng = np.random.default_rng(seed)
        feats = rng.normal(size=(n_users, arms, d))
        self.features = feature_norm * feats / np.linalg.norm(feats, axis=2, keepdims=True)
        theta = rng.normal(size=d)
        self.rewards = np.clip(self.features @ (theta_norm * theta / np.linalg.norm(theta)), -1.0, 1.0)
        self.block_size = block_size
        self.users = np.random.default_rng(seed + 1).integers(n_users, size=block_size)

    def block(self, start: int) -> tuple[np.ndarray, np.ndarray]:
        """(features, rewards) of rounds ``start..start + block_size - 1``."""
        users = np.roll(self.users, -start)
        return self.features[users], self.rewards[users]


def step_api_vs_run(
    name: str, label: str, agent: Any, features: np.ndarray, rewards: np.ndarray, repeats: int, where: str
) -> Ratio:
    """A contextual agent's step API against its own compiled ``run`` over the same rounds: goal 0.5x.

    The step API is ``act(features[t])`` + ``update(a, rewards[t, a])`` for every round t after a
    reset; ``run`` plays the same rounds in one call after a reset. Timed alternately (wall time,
    medians of ``repeats``), after one untimed call of each; both must choose the same actions
    (checked, stated in the detail). ``label`` is the class name, ``where`` the problem in words.
    """
    import numba

    steps = features.shape[0]

    def step_api() -> None:
        agent.reset()
        act, update = agent.act, agent.update
        for t in range(steps):
            a = act(features[t])
            update(a, rewards[t, a])

    def compiled() -> None:
        agent.reset()
        agent.run(features, rewards)

    step_api()
    compiled()
    step_s, run_s = interleaved(step_api, compiled, repeats)
    # reset(seed=...) restarts a private agent's noise (a plain reset() continues it), so the
    # step API and run draw the same noise and must choose the same arms.
    agent.reset(seed=agent.seed)
    chosen = []
    for t in range(steps):
        a = agent.act(features[t])
        agent.update(a, rewards[t, a])
        chosen.append(a)
    agent.reset(seed=agent.seed)
    result = agent.run(features, rewards, record_actions=True)
    same = result.actions is not None and np.array_equal(result.actions, chosen)
    return Ratio(
        f"{name} step API vs its run",
        f"{label} act+update",
        f"{label}.run",
        run_s / step_s,
        0.5,
        f"{step_s / steps * 1e6:.2f} us vs {run_s / steps * 1e6:.2f} us per round ({where}, {steps} rounds, median of "
        f"{repeats} alternating runs, numba {numba.get_num_threads()} threads); same actions: {same}",
    )


def time_fast(agent: Any, problem: UserFeatures, steps: int) -> tuple[float, float]:
    """(seconds in the agent's compiled ``run``, total regret of copy 0) over ``steps`` rounds fed in blocks."""
    agent.reset()
    spent, regret = 0.0, 0.0
    for start in range(0, steps, problem.block_size):
        x, r = problem.block(start)
        n = min(problem.block_size, steps - start)
        t0 = time.perf_counter()
        res = agent.run(x[:n], r[:n])
        spent += time.perf_counter() - t0
        regret += float(np.atleast_1d(res.total_regret)[0])
    return spent, regret
