"""Speed of ``MovieLensRecommendation-v0`` and ``GowallaRecommendation-v0``: construction, steps, fast path.

Printed, on the real data of ``../shared/data`` when present (else on the synthetic defaults):

* construction: loading the data, then building each instance (the authors' SVD construction; the
  ALS low-rank completion on the 200 most rated movies at rank 10; Gowalla's visit-matrix SVD and
  nearest-POI tables), then the same again (cached);
* steps/s of the single env made with ``gym.make`` (with its wrappers), random actions, next to a
  plain reference loop in the style of the authors' ``train_eval.py`` (draw a user with
  ``random.randint``, look up its feature and reward rows: no info, no checks);
* the native vector env (``gym.make_vec``, N = 32 copies): steps/s and copy-steps/s;
* the fast path: ``round_contexts`` and ``round_noise`` for T = 10^6 rounds, and one reward gather.

The LDP experiment runs T = 10^6 rounds per run for 4 values of ε: with the fast path the env's share
of a run is the time of ``round_contexts`` plus one gather, whatever the agent loop costs.

* the native vector env at 100,000 copies (20,000 when quick) against 1,000, per copy-step, with
  an autoreset of every copy every 20 steps (thread CPU time);
* memory per copy of the native vector env (``gym.make_vec``) at N = 1000 and 10,000 copies:
  tracemalloc's bytes held after a reset and three steps (the last step's outputs kept), all
  over N and what N more copies add (2N minus N, over N); the larger of the two is the figure.
  Goal: at most 16 KiB per copy (ratio 16 KiB / measured >= 1).

``results(quick)`` returns, per env, the fast path per round (``round_contexts``, ``round_noise``
and one reward gather: context indices, features left to the consumer) and the native vector env
per copy-step, each against the single env's step through ``gym.make``; and, for MovieLens, that
step against the authors-style loop; and the memory per copy of the vector env (N = 1000 only
when ``quick``). Timed alternately in the same run, medians.

Usage: ``python benchmarks/bench_recommendation_env.py [--steps 200000] [--vector-steps 20000] [--synthetic]
[--memory-only]``.
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from typing import Any

import gymnasium as gym
import numpy as np
from _common import Ratio, data_paths, interleaved, loop_seconds, parse_data_args, timed, traced_vector_bytes

import bandit_envs  # noqa: F401  (registers the ids)
from bandit_envs.datasets.env_data import checkins_from, ratings_from
from bandit_envs.recommendation import GowallaRecommendationEnv, MovieLensRecommendationEnv

PAPER_T = 1_000_000
N_ENVS = 32
#: Memory budget of one vector env copy at large N (20 arms, d = 20).
COPY_BUDGET = 16 * 1024
#: Numbers of copies at which the memory per copy is measured.
MEMORY_COPIES = (1000, 10_000)
#: Copies of the vector env at which the per-copy step is compared with 1,000 copies (a full run).
MANY_COPIES = 100_000


def construction(label: str, make: Any) -> Any:
    env, cold = timed(make)
    _, warm = timed(make)
    p = env.problem
    print(
        f"  {label:44s} {cold * 1000:7.1f} ms (cached: {warm * 1000:5.1f} ms): {p.n_contexts:6d} contexts x "
        f"{p.n_arms} arms x d={p.dim}"
    )
    return env


def single_steps(env_id: str, data: Any, steps: int) -> None:
    env = gym.make(env_id, data=data, horizon=steps, reward_noise=0.1)
    actions = np.random.default_rng(0).integers(0, 20, steps).tolist()
    env.reset(seed=0)
    rate = steps / loop_seconds(env.step, actions)
    print(f"  {env_id:28s} single env (gym.make): {rate:10,.0f} steps/s; T=10^6 in {PAPER_T / rate:5.1f} s")
    raw = env.unwrapped
    raw.reset(seed=0)
    rate = steps / loop_seconds(raw.step, actions)
    print(f"  {env_id:28s} single env (unwrapped): {rate:9,.0f} steps/s; T=10^6 in {PAPER_T / rate:5.1f} s")


def reference_loop(env: MovieLensRecommendationEnv, steps: int) -> None:
    _, elapsed = timed(authors_loop(env, steps))
    print(f"  {'reference: authors-style loop':28s} (no info/checks): {steps / elapsed:10,.0f} steps/s")


def vector_steps(env_id: str, data: Any, steps: int) -> None:
    venv = gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode="vector_entry_point", data=data,
                        horizon=PAPER_T, reward_noise=0.1)  # fmt: skip
    venv.reset(seed=0)
    actions = np.random.default_rng(1).integers(0, 20, (steps, N_ENVS))
    loop_seconds(venv.step, actions[:50])  # warm-up
    per_step = loop_seconds(venv.step, actions) / steps
    print(
        f"  {env_id:28s} vector env N={N_ENVS}: {1 / per_step:9,.0f} steps/s = {N_ENVS / per_step:11,.0f} "
        f"copy-steps/s; {N_ENVS} runs of T=10^6 in {per_step * PAPER_T:5.1f} s"
    )


def fast_path(label: str, env: Any) -> None:
    contexts, t_contexts = timed(lambda: env.round_contexts(PAPER_T, 0))
    _, t_noise = timed(lambda: env.round_noise(PAPER_T, 0))
    actions = np.random.default_rng(2).integers(0, env.n_arms, PAPER_T)
    _, t_gather = timed(lambda: env.rewards[contexts, actions])
    _, t_features = timed(lambda: env.features_of(contexts[:1000]))
    print(
        f"  {label:28s} fast path T=10^6: round_contexts {t_contexts * 1000:6.1f} ms, round_noise "
        f"{t_noise * 1000:5.1f} ms, reward gather {t_gather * 1000:5.1f} ms; features_of "
        f"{t_features * 1000:5.2f} us/round"
    )


def single_loop(env_id: str, data: Any, steps: int) -> Any:
    """A function running ``steps`` steps of the single env (``gym.make``), random actions."""
    env = gym.make(env_id, data=data, horizon=PAPER_T, reward_noise=0.1)
    actions = np.random.default_rng(0).integers(0, env.unwrapped.n_arms, steps).tolist()

    def run() -> None:
        env.reset(seed=0)
        step = env.step
        for a in actions:
            step(a)

    return run


def results(quick: bool = False) -> list[Ratio]:
    """Fast path and vector env against the single env's step; that step against the authors-style loop."""
    ml_data, gw_data, words = data_paths()
    print(f"bench_recommendation_env: {words}")
    steps, rounds, vector_steps, repeats = (5_000, 100_000, 500, 3) if quick else (50_000, PAPER_T, 5_000, 5)
    where = f"{words}, median of {repeats} alternating runs"
    out = []
    for env_id, env in (
        ("MovieLensRecommendation-v0", MovieLensRecommendationEnv(ml_data, reward_noise=0.1)),
        ("GowallaRecommendation-v0", GowallaRecommendationEnv(gw_data, reward_noise=0.1)),
    ):
        data = ml_data if env_id.startswith("MovieLens") else gw_data
        single = single_loop(env_id, data, steps)
        actions = np.random.default_rng(2).integers(0, env.n_arms, rounds)

        def fast(env: Any = env, actions: np.ndarray = actions) -> None:
            contexts = env.round_contexts(len(actions), 0)
            env.rewards[contexts, actions] + env.round_noise(len(actions), 0)

        single()  # warm-up
        fast()
        f, s = interleaved(fast, single, repeats)
        f, s = f / rounds, s / steps
        out.append(
            Ratio(
                f"{env_id} fast path per round",
                "round_contexts + round_noise + one reward gather",
                "single env step (gym.make)",
                s / f,
                None,
                f"{f * 1e9:.0f} vs {s * 1e9:.0f} ns per round (fast path over T={rounds:,}: "
                f"{f * rounds * 1000:.0f} ms), {where}",
            )
        )
        venv = gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode="vector_entry_point", data=data,
                            horizon=PAPER_T, reward_noise=0.1)  # fmt: skip
        venv.reset(seed=0)
        vector_actions = np.random.default_rng(1).integers(0, env.n_arms, (vector_steps, N_ENVS))

        def vector(venv: Any = venv, vector_actions: np.ndarray = vector_actions) -> None:
            step = venv.step
            for a in vector_actions:
                step(a)

        vector()  # warm-up
        v, s = interleaved(vector, single, repeats)
        v, s = v / (vector_steps * N_ENVS), s / steps
        out.append(
            Ratio(
                f"{env_id} native vector env, {N_ENVS} copies",
                f"vector env step (gym.make_vec, N={N_ENVS}), per copy",
                "single env step (gym.make)",
                s / v,
                None,
                f"{v * 1e9:.0f} vs {s * 1e9:.0f} ns per copy-step, {where}",
            )
        )
        if env_id.startswith("MovieLens"):
            reference = authors_loop(env, steps)
            r, s = interleaved(reference, single, repeats)
            out.append(
                Ratio(
                    f"{env_id} single env against the authors-style loop",
                    "single env step (gym.make): checks, info, features",
                    "authors-style loop: random user, feature and reward row lookups",
                    r / s,
                    None,
                    f"{s / steps * 1e9:.0f} vs {r / steps * 1e9:.0f} ns per step, {where}",
                )
            )
    for env_id, data in (("MovieLensRecommendation-v0", ml_data), ("GowallaRecommendation-v0", gw_data)):
        out.append(scale_ratio(env_id, data, 20_000 if quick else MANY_COPIES, words))
        out.extend(memory_ratios(env_id, data, MEMORY_COPIES[:1] if quick else MEMORY_COPIES))
    return out


def scale_ratio(env_id: str, data: Any, many: int, words: str, horizon: int = 20, steps: int = 40) -> Ratio:
    """Per copy-step at ``many`` copies against 1,000, with an autoreset of every copy each ``horizon`` steps.

    With many copies each copy's buffered contexts and noise hold few values (the copies share a
    fixed budget) and are refilled often, and every copy seeds new streams at each autoreset:
    both are one compiled pass over all copies, so the per-copy cost should not grow with N
    beyond the memory traffic of the observations (20 arms x d = 20 floats per copy-step).
    """
    kwargs = {"vectorization_mode": "vector_entry_point", "data": data, "horizon": horizon, "reward_noise": 0.1}

    def stepper(n: int) -> Any:
        venv = gym.make_vec(env_id, num_envs=n, **kwargs)
        venv.reset(seed=0)
        actions = np.zeros(n, dtype=np.int64)

        def run() -> None:
            for _ in range(steps):
                venv.step(actions)

        run()  # warm-up
        return run

    big, small = stepper(many), stepper(1000)
    b, s = interleaved(big, small, 3, clock=time.thread_time)
    b, s = b / (steps * many), s / (steps * 1000)
    return Ratio(
        f"{env_id} native vector env, {many:,} vs 1,000 copies per copy-step",
        f"vector env step, N={many:,}, per copy",
        "vector env step, N=1,000, per copy",
        s / b,
        None,
        f"{b * 1e9:.0f} vs {s * 1e9:.0f} ns per copy-step, horizon {horizon} (an autoreset of every copy each "
        f"{horizon} steps), {steps} steps, thread CPU time, {words}, median of 3 alternating runs",
    )


def traced_bytes(env_id: str, data: Any, copies: int) -> int:
    """Bytes traced by tracemalloc while a vector env of ``copies`` copies and its last step's outputs live."""
    kwargs = {"vectorization_mode": "vector_entry_point", "data": data, "reward_noise": 0.1}
    return traced_vector_bytes(lambda: gym.make_vec(env_id, num_envs=copies, **kwargs))


def memory_ratios(env_id: str, data: Any, copies: tuple[int, ...] = MEMORY_COPIES) -> list[Ratio]:
    """Bytes per copy of the native vector env at each N of ``copies``: all over N, and (2N - N) / N."""
    gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", data=data).reset(seed=0)  # data cached
    out = []
    tracemalloc.start()
    try:
        for n in copies:
            small, large = traced_bytes(env_id, data, n), traced_bytes(env_id, data, 2 * n)
            total, added = small / n, (large - small) / n
            per_copy = max(total, added)
            out.append(
                Ratio(
                    f"{env_id} vector env memory per copy, N={n:,}",
                    "bytes per copy (20 arms, d=20)",
                    f"budget {COPY_BUDGET // 1024} KiB",
                    COPY_BUDGET / per_copy,
                    1.0,
                    f"{per_copy:.0f} bytes per copy: {total:.0f} (all bytes at N={n:,}, over N), "
                    f"{added:.0f} (N={2 * n:,} minus N={n:,}, over N)",
                )
            )
    finally:
        tracemalloc.stop()
    return out


def authors_loop(env: MovieLensRecommendationEnv, steps: int) -> Any:
    """A function running ``steps`` rounds of a loop in the style of the authors' ``train_eval.py``.

    Draw a user with ``random.randint``, look up its feature and reward rows: no info, no checks.
    """
    features, rewards = env.features, env.rewards
    last = features.shape[0] - 1
    actions = np.random.default_rng(0).integers(0, 20, steps).tolist()

    def run() -> None:
        rng = random.Random(0)
        for a in actions:
            user = rng.randint(0, last)
            _x = features[user]
            _r = rewards[user][a]

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="single-env steps timed")
    parser.add_argument("--vector-steps", type=int, default=20_000, help="vector-env steps timed")
    parser.add_argument("--memory-only", action="store_true", help="only the vector env's memory per copy")
    args, ml_data, gw_data = parse_data_args(parser)
    if args.memory_only:
        print("memory per copy (tracemalloc)")
        for env_id, data in (("MovieLensRecommendation-v0", ml_data), ("GowallaRecommendation-v0", gw_data)):
            for ratio in memory_ratios(env_id, data):
                print(f"  {ratio.line()}")
        return

    _, ml_load = timed(lambda: ratings_from(ml_data))
    _, gw_load = timed(lambda: checkins_from(gw_data))
    print(f"construction (load: MovieLens {ml_load:.2f} s, Gowalla {gw_load:.2f} s)")
    ml = construction(
        "MovieLens authors (20 first movies, rank 20)", lambda: MovieLensRecommendationEnv(ml_data, reward_noise=0.1)
    )
    construction(
        "MovieLens lowrank (200 most rated, rank 10)",
        lambda: MovieLensRecommendationEnv(ml_data, n_movies=200, movie_selection="popular", rank=10,
                                           completion="lowrank"),
    )  # fmt: skip
    gw = construction("Gowalla (20 nearest POIs, rank 20)", lambda: GowallaRecommendationEnv(gw_data, reward_noise=0.1))

    print("steps")
    single_steps("MovieLensRecommendation-v0", ml_data, args.steps)
    reference_loop(ml, args.steps)
    single_steps("GowallaRecommendation-v0", gw_data, args.steps)
    vector_steps("MovieLensRecommendation-v0", ml_data, args.vector_steps)
    vector_steps("GowallaRecommendation-v0", gw_data, args.vector_steps)
    print("fast path")
    fast_path("MovieLensRecommendation-v0", ml)
    fast_path("GowallaRecommendation-v0", gw)
    print("memory per copy (tracemalloc)")
    for env_id, data in (("MovieLensRecommendation-v0", ml_data), ("GowallaRecommendation-v0", gw_data)):
        for ratio in memory_ratios(env_id, data):
            print(f"  {ratio.line()}")


if __name__ == "__main__":
    main()
