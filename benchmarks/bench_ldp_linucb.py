"""Steps per second of LDP-LinUCB (agents.LDPLinUCB) vs a plain numpy loop of the authors' code.

Target: d = 20, 20 arms (the authors' MovieLens setting), one run >= 178,000 steps/s,
i.e. 100x the 1,780 steps/s the authors published for their code; batched runs (>= 32 copies)
faster per agent-step still. Measured here in one run, on a MovieLens-like synthetic problem
(943 users, each with a fixed 20 x 20 feature matrix of unit rows; a random user per round;
rewards x.theta* in [-1, 1]):

* the compiled fast path ``LDPLinUCB.run`` for one run, and for 32 copies (numba threads over
  copies; also with one thread);
* the step API ``act``/``update`` for one run and for 32 copies;
* the reference: the authors' ``src/linucb.py`` loop written in plain numpy (np.linalg.inv of
  V + cI every step, float32 as in their code; noise from a Generator instead of ``np.random``).

``results(quick)`` returns the ratios (fast path and step API against the reference loop, batched
against one run), timed alternately in the same run, medians; the 178,000 steps/s target is stated
as the ratio it needs against the reference loop measured in that run.

Usage: ``python benchmarks/bench_ldp_linucb.py [--steps 100000] [--copies 32] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numba
import numpy as np
from _common import Ratio, UserFeatures, interleaved_per_step, time_fast

from agents import LDPLinUCB

TARGET = 178_000.0  # steps/s, one run
PUBLISHED = 1_780.0  # steps/s of the authors' code, as published
D = ARMS = 20
EPSILON, DELTA, ALPHA = 8e5, 0.1, 0.1  # the authors' script
BLOCK = 10_000  # rounds of features materialized at once


class ReferenceLDPLinUCB:
    """The authors' ``LinUCB`` (MIFA-Lab/LDPbandit2020 ``src/linucb.py``), same arithmetic, plain numpy."""

    def __init__(self, d: int, epsilon: float, delta: float, alpha: float, horizon: int) -> None:
        self.d, self.alpha, self.horizon = d, alpha, horizon
        self.V = np.zeros((d, d), dtype=np.float32)
        self.u = np.zeros(d, dtype=np.float32)
        self.theta = np.zeros(d, dtype=np.float32)
        self.sigma = 4 * math.sqrt(math.log(1.25 / delta)) / epsilon
        self.c = 0.1
        self.beta = 0.0
        self.regret = 0.0
        self.rng = np.random.default_rng(0)  # the code calls np.random.normal; same cost, no global state
        self.inverse()

    def inverse(self) -> None:
        self.Vc_inv = np.linalg.inv(self.V + np.eye(self.d, dtype=np.float32) * self.c)

    def update_status(self, t: int) -> None:
        d, sigma, big_t = self.d, self.sigma, self.horizon
        gamma = sigma * math.sqrt(t) * (4 * math.sqrt(d) + 2 * math.log(2 * big_t / self.alpha))
        self.c = 2 * gamma
        self.beta = 2 * sigma * math.sqrt(d * math.log(big_t)) + (
            math.sqrt(3 * gamma) + sigma * math.sqrt(d * t / gamma)
        ) * d * math.log(big_t)

    def construct(self, x: np.ndarray, rewards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores = x @ self.theta + self.beta * np.sum(x.T * (self.Vc_inv @ x.T), axis=0)
        a = int(np.argmax(scores))
        xa = x[a]
        self.regret += float(rewards.max() - rewards[a])
        noise = self.rng.normal(0, self.sigma, size=(self.d, self.d))
        noise = np.triu(noise)
        noise += noise.T - np.diag(noise.diagonal())
        xi = self.rng.normal(0, self.sigma, size=self.d)
        return (np.outer(xa, xa) + noise).astype(np.float32), (xa * rewards[a] + xi).astype(np.float32)

    def server_update(self, gram: np.ndarray, vec: np.ndarray) -> None:
        self.V += gram
        self.u += vec
        self.inverse()
        self.theta = self.Vc_inv @ self.u


class Problem(UserFeatures):
    """MovieLens-like synthetic problem: 943 users' 20 x 20 feature matrices of unit rows, a random user each round."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(ARMS, D, BLOCK, seed=seed)


def time_steps(agent: LDPLinUCB, problem: Problem, steps: int) -> tuple[float, np.ndarray]:
    """(seconds of act + update, actions) over ``steps`` rounds of the step API, the noise restarted from the seed."""
    agent.reset(seed=agent.seed)
    x, r = problem.block(0)
    if agent.n_envs is not None:
        x = np.broadcast_to(x[:, None], (BLOCK, agent.n_envs, ARMS, D))
    actions = []
    t0 = time.perf_counter()
    for t in range(steps):
        a = agent.act(x[t])
        agent.update(a, r[t % BLOCK, a])
        actions.append(a)
    return time.perf_counter() - t0, np.array(actions)


def time_reference(problem: Problem, steps: int, horizon: int) -> tuple[float, float]:
    ref = ReferenceLDPLinUCB(D, EPSILON, DELTA, ALPHA, horizon)
    x, r = problem.block(0)
    t0 = time.perf_counter()
    for t in range(steps):
        ref.update_status(t + 1)
        gram, vec = ref.construct(x[t].astype(np.float32), r[t].astype(np.float32))
        ref.server_update(gram, vec)
    return time.perf_counter() - t0, ref.regret


def make_agent(copies: int | None, horizon: int) -> LDPLinUCB:
    """LDP-LinUCB in the authors' setting, with the quadratic bonus of their code."""
    return LDPLinUCB(D, EPSILON, DELTA, ALPHA, horizon, bonus="quadratic", n_envs=copies, seed=0)


def results(quick: bool = False) -> list[Ratio]:
    """Fast path (one run, batched) and step API against the reference numpy loop, alternating, medians."""
    steps, batch_steps, api_steps, ref_steps = (
        (20_000, 5_000, 1_000, 1_000) if quick else (100_000, 20_000, 5_000, 5_000)
    )
    copies, repeats = 32, (3 if quick else 5)
    problem = Problem()
    single, batched, api = make_agent(None, steps), make_agent(copies, batch_steps), make_agent(None, steps)
    time_fast(single, problem, 200)  # compile / load the kernels
    time_fast(batched, problem, 20)
    time_steps(api, problem, 20)

    def fast() -> float:
        return time_fast(single, problem, steps)[0] / steps

    def fast_batched() -> float:
        return time_fast(batched, problem, batch_steps)[0] / (copies * batch_steps)

    def step_api() -> float:
        return time_steps(api, problem, api_steps)[0] / api_steps

    def reference() -> float:
        return time_reference(problem, ref_steps, steps)[0] / ref_steps

    def rate(seconds_per_step: float) -> str:
        return f"{1 / seconds_per_step:,.0f}"

    threads = numba.get_num_threads()
    fast_t, ref_t = interleaved_per_step(fast, reference, repeats)
    api_t, ref2_t = interleaved_per_step(step_api, reference, repeats)
    batch_t, single_t = interleaved_per_step(fast_batched, fast, repeats)
    x, r = problem.block(0)
    same = np.array_equal(
        make_agent(None, steps).run(x[:api_steps], r[:api_steps], record_actions=True).actions,
        time_steps(make_agent(None, steps), problem, api_steps)[1],
    )
    where = f"d={D}, {ARMS} arms, median of {repeats} alternating runs"
    return [
        Ratio(
            "LDPLinUCB fast path, one run",
            "LDPLinUCB.run (compiled)",
            "the authors' loop in plain numpy",
            ref_t / fast_t,
            TARGET * ref_t,
            f"{rate(fast_t)} vs {rate(ref_t)} steps/s, {where}; goal: the {TARGET:,.0f} steps/s target "
            f"(100x the published {PUBLISHED:,.0f}) over the reference rate",
        ),
        Ratio(
            "LDPLinUCB step API, one run",
            "LDPLinUCB act + update",
            "the authors' loop in plain numpy",
            ref2_t / api_t,
            None,
            f"{rate(api_t)} vs {rate(ref2_t)} steps/s, {where}; same actions as the fast path: {same}",
        ),
        Ratio(
            f"LDPLinUCB fast path, {copies} copies per agent-step",
            f"LDPLinUCB.run, {copies} copies ({threads} threads)",
            "LDPLinUCB.run, one run",
            single_t / batch_t,
            1.0,
            f"{rate(batch_t)} vs {rate(single_t)} agent-steps/s, {where}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="rounds of the single fast run")
    parser.add_argument("--copies", type=int, default=32)
    parser.add_argument("--batch-steps", type=int, default=20_000, help="rounds of the batched fast run")
    parser.add_argument("--step-api-steps", type=int, default=5_000)
    parser.add_argument("--ref-steps", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed runs")
    args = parser.parse_args()
    n, steps = args.copies, args.steps

    threads = numba.get_num_threads()
    print(
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__} ({threads} threads)"
    )
    print(f"LDP-LinUCB d={D}, {ARMS} arms, epsilon={EPSILON:g}, delta={DELTA}, alpha={ALPHA}; best of {args.repeats}\n")
    problem = Problem()

    agent = make_agent
    single = agent(None, steps)
    time_fast(single, problem, 200)  # compile / load the kernels
    best = min(time_fast(single, problem, steps) for _ in range(args.repeats))
    single_rate, single_regret = steps / best[0], best[1]

    batched = agent(n, args.batch_steps)
    time_fast(batched, problem, 20)
    batch_s = min(time_fast(batched, problem, args.batch_steps)[0] for _ in range(args.repeats))
    batch_rate = n * args.batch_steps / batch_s
    numba.set_num_threads(1)
    batch1_s = min(time_fast(batched, problem, args.batch_steps)[0] for _ in range(args.repeats))
    numba.set_num_threads(threads)
    batch1_rate = n * args.batch_steps / batch1_s

    k = args.step_api_steps
    step_single = agent(None, steps)
    time_steps(step_single, problem, 20)
    step_s, step_actions = min((time_steps(step_single, problem, k) for _ in range(args.repeats)), key=lambda p: p[0])
    fast_check = agent(None, steps)
    x, r = problem.block(0)
    same = np.array_equal(fast_check.run(x[:k], r[:k], record_actions=True).actions, step_actions)
    step_batch = agent(n, steps)
    time_steps(step_batch, problem, 20)
    step_batch_s = min(time_steps(step_batch, problem, k // 4)[0] for _ in range(args.repeats))

    ref_s, ref_regret = time_reference(problem, args.ref_steps, steps)
    ref_rate = args.ref_steps / ref_s
    ours_regret = float(agent(None, steps).run(x[: args.ref_steps], r[: args.ref_steps]).total_regret)

    rows = [
        ("fast path, 1 run", single_rate, 1),
        (f"fast path, {n} copies, {threads} threads", batch_rate, n),
        (f"fast path, {n} copies, 1 thread", batch1_rate, n),
        ("step API act+update, 1 run", k / step_s, 1),
        (f"step API act+update, {n} copies", n * (k // 4) / step_batch_s, n),
        ("reference numpy loop (authors' code)", ref_rate, 1),
    ]
    print(f"{'path':<42}{'agent-steps/s':>16}{'us/agent-step':>16}")
    for label, rate, _ in rows:
        print(f"{label:<42}{rate:>16,.0f}{1e6 / rate:>16.2f}")
    print(f"\nratio fast path (1 run) / reference numpy loop: {single_rate / ref_rate:,.0f}x")
    print(f"ratio fast path (1 run) / published {PUBLISHED:,.0f} steps/s: {single_rate / PUBLISHED:,.0f}x")
    print(f"ratio batched ({n} copies) / published: {batch_rate / PUBLISHED:,.0f}x")
    print(f"step API and fast path choose the same {k} actions: {same}")
    print(
        f"regret over the first {args.ref_steps} rounds: reference {ref_regret:.1f}, ours {ours_regret:.1f} "
        f"(same algorithm, different noise streams); ours over {steps} rounds: {single_regret:.1f}"
    )
    verdict = "PASS" if single_rate >= TARGET else "FAIL"
    print(f"target >= {TARGET:,.0f} steps/s for one run (100x published): {verdict}")
    faster = "yes" if batch_rate > single_rate else "no"
    print(f"batched faster per agent-step than one run: {faster}")


if __name__ == "__main__":
    main()
