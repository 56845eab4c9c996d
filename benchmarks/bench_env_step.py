"""Per-step cost of ``GraphBandit-v0`` against a bare one-Bernoulli Gymnasium env.

Target: ``env.step`` of ``gym.make("GraphBandit-v0")`` (default instance, K = 10,
truncated-normal rewards, full info dict) costs at most 3x the step of the smallest sensible
Gymnasium env: Discrete actions, ``step`` draws one Bernoulli reward from ``self.np_random``.
Both envs are created with ``gym.make`` so they carry the same wrappers (``OrderEnforcing``,
``PassiveEnvChecker``), and are timed in the same run, interleaved, several repetitions, median.

Also printed: the per-copy cost of one step of the native vector env with N = 1000 copies.

Usage: ``python benchmarks/bench_env_step.py [--steps 20000] [--repeats 7] [--copies 1000]
[--profile]``. ``--profile`` prints a cProfile of the GraphBandit step loop (also done
automatically when the ratio misses the target).
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)

TARGET_RATIO = 3.0
BARE_ID = "BenchBareBernoulli-v0"


class BareBernoulliEnv(gym.Env[np.int64, np.int64]):
    """The reference: K Discrete actions, one Bernoulli(p) reward per step, no info."""

    def __init__(self, n_arms: int = 10, p: float = 0.5) -> None:
        self.action_space = spaces.Discrete(n_arms)
        self.observation_space = spaces.Discrete(1)
        self.p = p
        self._obs = np.int64(0)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        super().reset(seed=seed)
        return self._obs, {}

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        return self._obs, float(self.np_random.random() < self.p), False, False, {}


if BARE_ID not in registry:
    register(id=BARE_ID, entry_point=BareBernoulliEnv)


def time_steps(env: gym.Env[Any, Any], actions: np.ndarray) -> float:
    """Seconds per ``env.step`` over ``actions`` (one episode, reset excluded)."""
    env.reset(seed=0)
    step = env.step
    acts = actions.tolist()
    start = time.perf_counter()
    for a in acts:
        step(a)
    return (time.perf_counter() - start) / len(acts)


def time_vector(num_envs: int, steps: int, repeats: int) -> float:
    """Median seconds per copy-step of the native vector env with ``num_envs`` copies."""
    venv = gym.make_vec("GraphBandit-v0", num_envs=num_envs, horizon=100_000)
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 10, size=(steps, num_envs))
    times = []
    for _ in range(repeats):
        venv.reset(seed=0)
        start = time.perf_counter()
        for a in actions:
            venv.step(a)
        times.append((time.perf_counter() - start) / (steps * num_envs))
    venv.close()
    return statistics.median(times)


def profile(env: gym.Env[Any, Any], actions: np.ndarray) -> None:
    """Print where the time of the GraphBandit step loop goes."""
    prof = cProfile.Profile()
    prof.enable()
    time_steps(env, actions)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--vector-steps", type=int, default=1024)  # 2 reward blocks
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    graph = gym.make("GraphBandit-v0")  # default instance, horizon 100000
    bare = gym.make(BARE_ID)
    actions = np.random.default_rng(0).integers(0, 10, size=args.steps)
    for env in (graph, bare):  # warm-up: numba kernels, first reward block, caches
        time_steps(env, actions[:2000])

    graph_t, bare_t = [], []
    for _ in range(args.repeats):
        graph_t.append(time_steps(graph, actions))
        bare_t.append(time_steps(bare, actions))
    g, b = statistics.median(graph_t), statistics.median(bare_t)
    ratio = g / b
    vec = time_vector(args.copies, args.vector_steps, max(3, args.repeats // 2))

    print(f"python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}")
    print(f"{args.steps} steps x {args.repeats} repeats, median (min..max) per step:")
    print(
        f"  GraphBandit-v0 (gym.make)    {g * 1e6:7.2f} us/step  ({min(graph_t) * 1e6:.2f}..{max(graph_t) * 1e6:.2f})"
    )
    print(f"  bare Bernoulli (gym.make)    {b * 1e6:7.2f} us/step  ({min(bare_t) * 1e6:.2f}..{max(bare_t) * 1e6:.2f})")
    verdict = "OK" if ratio <= TARGET_RATIO else "MISSED"
    print(f"  ratio                        {ratio:7.2f}  (target <= {TARGET_RATIO:g}: {verdict})")
    print(
        f"  vector env N={args.copies}: {vec * 1e6:7.3f} us per copy-step "
        f"({vec * args.copies * 1e6:.1f} us per vector step)"
    )
    if args.profile or ratio > TARGET_RATIO:
        profile(graph, actions)


if __name__ == "__main__":
    main()
