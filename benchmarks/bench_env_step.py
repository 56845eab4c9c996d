"""Per-step cost and memory of ``GraphBandit-v0``, single env and native vector env.

Ratios returned by :func:`results` (every one measured against its reference in the same run):

* ``env.step`` of ``gym.make("GraphBandit-v0")`` (default instance, K = 10, truncated-normal
  rewards, full info dict) against the step of the smallest sensible Gymnasium env: Discrete
  actions, ``step`` draws one Bernoulli reward from ``self.np_random``. Both are made with
  ``gym.make`` so they carry the same wrappers (``OrderEnforcing``, ``PassiveEnvChecker``) and are
  timed interleaved, median of several repetitions. Goal: at most 3x slower (ratio >= 1/3).
* The native vector env with N = 1000 copies, per copy-step, against the single env's step
  (information: how much a copy-step of the vector env saves).
* The vector env with truncated-normal rewards against the same vector env with Bernoulli
  rewards: same N, K, instance and action sequence, interleaved in short runs (128 steps; the
  episodes go on from run to run), median of many runs, so that a burst of load on a shared
  machine moves few of them. Goal: at least 0.8x the copy-steps/s of Bernoulli rewards.
* ``env.step`` of ``gym.make("GraphBandit-v0")`` with ``render_mode=None`` against the same env
  class with the renderer hook removed (:class:`HooklessGraphBanditEnv`: its ``step`` is the step
  as it was before the render modes, without the ``if self._renderer is not None`` test), both made
  with ``gym.make``, same instance and actions, interleaved, median of several repetitions of
  thread CPU time. Goal: at least 0.95x (rendering costs nothing when it is off).
* Memory per copy of the vector env at K = 10: what N = 2000 copies hold beyond N = 1000
  (tracemalloc, after a reset and a few steps, the last step's outputs kept), divided by 1000,
  plus the scratch arrays of its compiled step (allocated by numba, not traced; counted at their
  largest). Goal: at most 8 KiB per copy (ratio 8 KiB / measured >= 1).

Usage: ``python benchmarks/bench_env_step.py [--quick] [--steps 20000] [--repeats 7] [--copies 1000]
[--vector-steps 128] [--vector-repeats 41] [--profile]``. ``--profile`` prints a
cProfile of the single env's step loop (also done when its ratio misses the goal).
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import time
import tracemalloc
from typing import Any

import gymnasium as gym
import numpy as np
from _common import Ratio, interleaved, print_results, traced_vector_bytes
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from bandit_envs.graph import GraphBanditEnv, observe, step_scratch_bytes

BARE_ID = "BenchBareBernoulli-v0"
HOOKLESS_ID = "BenchGraphBanditNoRenderHook-v0"
#: Arms of the default instance.
K = 10
#: Goal of the single env: at most this many times slower than the bare env.
SINGLE_GOAL = 1 / 3
#: Goal of truncated-normal against Bernoulli rewards in the vector env (copy-steps/s).
TRUNCNORM_GOAL = 0.8
#: Goal of the env without a render mode against the env without the renderer hook.
RENDER_OFF_GOAL = 0.95
#: Memory budget of one vector env copy at K = 10.
COPY_BUDGET = 8 * 1024


class BareBernoulliEnv(gym.Env[np.int64, np.int64]):
    """The reference: K Discrete actions, one Bernoulli(p) reward per step, no info."""

    def __init__(self, n_arms: int = K, p: float = 0.5) -> None:
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


class HooklessGraphBanditEnv(GraphBanditEnv):
    """``GraphBandit-v0`` with the renderer hook removed: the reference of the render-off ratio.

    Its ``step`` is :meth:`GraphBanditEnv.step` without the two lines that feed the renderer (keep
    the rest identical to it when that step changes).
    """

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        a = self._check_step(action)
        reward, mask, observed, regret = observe(next(self._rows), a, self._closed_rows, self._gaps, self._weights)
        info = {
            "observed_mask": mask.copy(),
            "observed_rewards": observed,
            "regret": regret,
            "expected_reward": self._expected[a],
            "optimal_action": self.optimal_action,
        }
        self._t += 1
        return self._obs, float(reward), False, self._t >= self.horizon, info


if BARE_ID not in registry:
    register(id=BARE_ID, entry_point=BareBernoulliEnv)
if HOOKLESS_ID not in registry:
    register(id=HOOKLESS_ID, entry_point=HooklessGraphBanditEnv)


def play_single(env: gym.Env[Any, Any], actions: list[int]) -> None:
    """One episode of ``env`` over ``actions`` (reset included, once per call)."""
    env.reset(seed=0)
    step = env.step
    for a in actions:
        step(a)


def play_vector(venv: gym.vector.VectorEnv[Any, Any, Any], actions: np.ndarray) -> None:
    """``venv`` stepped over the rows of ``actions`` (no reset: the episodes are longer than all repetitions)."""
    step = venv.step
    for a in actions:
        step(a)


def single_ratio(steps: int, repeats: int) -> tuple[Ratio, float]:
    """GraphBandit-v0 ``env.step`` against the bare Bernoulli env; also returns seconds per step."""
    graph = gym.make("GraphBandit-v0")  # default instance, horizon 100000
    bare = gym.make(BARE_ID)
    actions = np.random.default_rng(0).integers(0, K, size=steps).tolist()
    for env in (graph, bare):  # warm-up: numba kernels, first reward block, caches
        play_single(env, actions[:2000])
    g, b = interleaved(lambda: play_single(graph, actions), lambda: play_single(bare, actions), repeats)
    g, b = g / steps, b / steps
    ratio = Ratio(
        "GraphBandit-v0 env.step",
        "GraphBandit-v0 (gym.make)",
        "bare Bernoulli env (gym.make)",
        b / g,
        SINGLE_GOAL,
        f"{g * 1e6:.2f} vs {b * 1e6:.2f} us/step, {steps} steps, median of {repeats}",
    )
    return ratio, g


def render_off_ratio(steps: int, repeats: int) -> Ratio:
    """GraphBandit-v0 ``env.step`` with ``render_mode=None`` against the same env without the renderer hook."""
    graph = gym.make("GraphBandit-v0", render_mode=None)
    hookless = gym.make(HOOKLESS_ID)
    actions = np.random.default_rng(3).integers(0, K, size=steps).tolist()
    for env in (graph, hookless):  # warm-up
        play_single(env, actions[:2000])
    g, h = interleaved(
        lambda: play_single(graph, actions), lambda: play_single(hookless, actions), repeats, clock=time.thread_time
    )
    g, h = g / steps, h / steps
    return Ratio(
        "GraphBandit step, render_mode None vs before",
        "GraphBandit-v0, render_mode=None (gym.make)",
        "the same env class without the renderer hook (gym.make)",
        h / g,
        RENDER_OFF_GOAL,
        f"{g * 1e6:.3f} vs {h * 1e6:.3f} us/step (thread CPU time), {steps} steps, median of {repeats}",
    )


def vector_ratios(copies: int, steps: int, repeats: int, single_step: float) -> list[Ratio]:
    """Vector env per copy-step: against the single env, and truncated-normal against Bernoulli rewards."""
    truncnorm = gym.make_vec("GraphBandit-v0", num_envs=copies, reward="truncnorm")
    bernoulli = gym.make_vec("GraphBandit-v0", num_envs=copies, reward="bernoulli")
    actions = np.random.default_rng(1).integers(0, K, size=(steps, copies))
    for venv in (truncnorm, bernoulli):  # seeding 1000 generators costs more than 100 steps: not timed
        venv.reset(seed=0)
        play_vector(venv, actions[:10])  # warm-up
    t, b = interleaved(lambda: play_vector(truncnorm, actions), lambda: play_vector(bernoulli, actions), repeats)
    t, b = t / (steps * copies), b / (steps * copies)
    truncnorm.close()
    bernoulli.close()
    where = f"N={copies}, K={K}, median of {repeats} runs of {steps} steps"
    return [
        Ratio(
            "GraphBandit-v0 vector env copy-step",
            f"vector env per copy-step (N={copies})",
            "single env step (gym.make)",
            single_step / t,
            None,
            f"{t * 1e9:.1f} ns per copy-step vs {single_step * 1e9:.0f} ns per single step",
        ),
        Ratio(
            "GraphBandit-v0 vector env, truncated-normal rewards",
            "truncated-normal rewards",
            "Bernoulli rewards",
            b / t,
            TRUNCNORM_GOAL,
            f"{1e-6 / t:.2f} vs {1e-6 / b:.2f} million copy-steps/s, {where}",
        ),
    ]


def traced_bytes(copies: int) -> int:
    """Bytes traced by tracemalloc while a vector env of ``copies`` copies and its last step's outputs live."""
    return traced_vector_bytes(lambda: gym.make_vec("GraphBandit-v0", num_envs=copies))


def memory_ratio(copies: int = 1000) -> Ratio:
    """Bytes per copy of the vector env: N = 2·copies against N = copies, plus the step's scratch."""
    gym.make_vec("GraphBandit-v0", num_envs=2).reset(seed=0)  # compile and import first, untraced
    tracemalloc.start()
    try:
        small, large = traced_bytes(copies), traced_bytes(2 * copies)
    finally:
        tracemalloc.stop()
    traced = (large - small) / copies
    scratch = step_scratch_bytes(K)  # allocated by the compiled step while it runs, at most
    per_copy = traced + scratch
    return Ratio(
        "GraphBandit-v0 vector env memory per copy",
        f"bytes per copy (K={K})",
        f"budget {COPY_BUDGET // 1024} KiB",
        COPY_BUDGET / per_copy,
        1.0,
        f"{per_copy:.0f} bytes per copy: {traced:.0f} traced (N={2 * copies} minus N={copies}) + {scratch} scratch",
    )


def measure(steps: int, repeats: int, copies: int, vector_steps: int, vector_repeats: int) -> list[Ratio]:
    """The ratios of this benchmark at the given sizes (see the module docstring)."""
    single, single_step = single_ratio(steps, repeats)
    return [
        single,
        render_off_ratio(steps, 2 * repeats + 1),
        *vector_ratios(copies, vector_steps, vector_repeats, single_step),
        memory_ratio(copies),
    ]


def results(quick: bool = False) -> list[Ratio]:
    """The ratios of this benchmark (``quick``: a few seconds in all, noisier)."""
    if quick:
        return measure(steps=3000, repeats=3, copies=1000, vector_steps=64, vector_repeats=15)
    return measure(steps=20_000, repeats=7, copies=1000, vector_steps=128, vector_repeats=41)


def profile(steps: int) -> None:
    """Print where the time of the single env's step loop goes."""
    env = gym.make("GraphBandit-v0")
    actions = np.random.default_rng(0).integers(0, K, size=steps).tolist()
    prof = cProfile.Profile()
    prof.enable()
    play_single(env, actions)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds in all, noisier (other sizes ignored)")
    parser.add_argument("--steps", type=int, default=20_000, help="single-env steps per repetition")
    parser.add_argument("--repeats", type=int, default=7, help="repetitions of each timing (median)")
    parser.add_argument("--copies", type=int, default=1000, help="copies of the vector env")
    parser.add_argument("--vector-steps", type=int, default=128, help="vector env steps per repetition")
    parser.add_argument("--vector-repeats", type=int, default=41, help="repetitions of the vector timings (median)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the single env's steps")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}")
    start = time.perf_counter()
    if args.quick:
        out = results(quick=True)
    else:
        out = measure(args.steps, args.repeats, args.copies, args.vector_steps, args.vector_repeats)
    print_results(out)
    print(f"({time.perf_counter() - start:.1f} s)")
    if args.profile or out[0].met is False:
        profile(20_000)


if __name__ == "__main__":
    main()
