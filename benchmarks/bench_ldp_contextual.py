"""Steps per second of LDP-OLS and Shuffle-LinUCB (agents.LDPOLS, agents.ShuffleLinUCB) vs the same loops in numpy.

Target: d = 20, 20 arms (the MovieLens setting), one run of each agent's compiled fast path
``run`` >= 100,000 steps/s. Measured here in one run, on a MovieLens-like synthetic problem
(943 users, each with a fixed 20 x 20 feature matrix of rows of norm 0.4; a random user per
round; rewards x.theta* in [-1, 1]), against a plain numpy loop of the same algorithm: greedy
choice, the clipped report encoded in the unit ball, privatized (LDP-OLS: Gaussian noise drawn
once per batch of 100, as the agent's simulation does; Shuffle-LinUCB: the L2-ball mechanism on
every report), added to the batch, and a ridge refit with ``np.linalg.solve`` at the end of each
batch (Shuffle-LinUCB: batches of 1000). Also the step API (``act`` + ``update``) of each agent,
against the numpy loop and against the agent's own ``run`` over the same rounds (goal: the step
API at least 0.5x the speed of ``run``, as for LinUCB and LDP-LinUCB in ``bench_step_api.py``;
both must choose the same actions, checked).

``results(quick)`` returns the ratios (fast path and step API over the numpy loop, step API over
``run``), timed alternately in the same run, medians; the 100,000 steps/s target is stated as the
ratio it needs against the numpy loop measured in that run.

Usage: ``python benchmarks/bench_ldp_contextual.py [--steps 100000] [--ref-steps 5000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numba
import numpy as np
from _common import Ratio, UserFeatures, interleaved, interleaved_per_step, step_api_vs_run, time_fast

from agents import LDPOLS, ShuffleLinUCB
from agents.linear.stats_base import StatsAgent

TARGET = 100_000.0  # steps/s, one run
D = ARMS = 20
EPSILON = 1.0
L_X = 0.4
BLOCK = 10_000  # rounds of features materialized at once


class Problem(UserFeatures):
    """MovieLens-like synthetic problem: 943 users' 20 x 20 matrices of rows of norm L_X, a random user each round."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(ARMS, D, BLOCK, feature_norm=L_X, theta_norm=2.5, seed=seed)


class NumpyLoop:
    """The agent's algorithm as a plain numpy loop, one round at a time (the reference)."""

    def __init__(self, agent: StatsAgent, seed: int = 0) -> None:
        self.d, self.agent = agent.n_features, agent
        self.rng = np.random.default_rng(seed)
        self.gram, self.moment = np.zeros((self.d, self.d)), np.zeros(self.d)
        self.pend_gram, self.pend_moment = np.zeros((self.d, self.d)), np.zeros(self.d)
        self.theta = np.zeros(self.d)
        self.iu = np.triu_indices(self.d)
        self.m = len(self.iu[0])
        self.t = 0
        self.regret = 0.0

    def step(self, x: np.ndarray, rewards: np.ndarray) -> None:
        ag = self.agent
        norms = np.linalg.norm(x, axis=1)
        a = int(np.argmax((x @ self.theta) * np.minimum(1.0, ag.l_x / norms)))
        self.regret += float(rewards.max() - rewards[a])
        xc = x[a] * min(1.0, ag.l_x / norms[a])
        y = float(np.clip(rewards[a], -ag.l_y, ag.l_y))
        gs, ms = ag.l_x**2 / ag.gram_weight, ag.l_x * ag.l_y / ag.moment_weight
        if isinstance(ag, ShuffleLinUCB):  # the L2-ball mechanism on the encoded report
            v = np.concatenate([np.outer(xc, xc)[self.iu] / gs, y * xc / ms])
            g = self.rng.standard_normal(v.size)
            u_sign, u_half = self.rng.random(2)
            nv = float(np.linalg.norm(v))
            sign = 1.0 if u_sign < 0.5 + nv / 2 else -1.0
            z = g * (ag.scale / np.linalg.norm(g))
            if (float(z @ v) * sign > 0) != (u_half < ag._keep):
                z = -z
            self.pend_gram[self.iu] += z[: self.m] * gs
            self.pend_moment += z[self.m :] * ms
        else:
            self.pend_gram += np.outer(xc, xc)
            self.pend_moment += y * xc
        self.t += 1
        if self.t % ag.batch_size == 0:
            if isinstance(ag, LDPOLS):  # the batch's Gaussian noise at once
                root_n = math.sqrt(ag.batch_size)
                noise = self.rng.standard_normal(self.m + self.d) * ag.sigma * root_n
                self.pend_gram[self.iu] += noise[: self.m] * gs
                self.pend_moment += noise[self.m :] * ms
            self.gram += self.pend_gram
            self.moment += self.pend_moment
            self.pend_gram[:] = 0.0
            self.pend_moment[:] = 0.0
            sym = np.triu(self.gram) + np.triu(self.gram, 1).T  # the upper triangle, as the agent reads it
            shift = ag.shift(self.t)
            self.theta = np.linalg.solve(sym + shift * np.eye(self.d), self.moment)


def make_agent(kind: str, copies: int | None = None) -> StatsAgent:
    if kind == "LDP-OLS":
        return LDPOLS(D, EPSILON, l_x=L_X, n_envs=copies, seed=0)
    return ShuffleLinUCB(D, EPSILON, l_x=L_X, n_envs=copies, seed=0)


def time_steps(agent: StatsAgent, problem: Problem, steps: int) -> float:
    """Seconds of act + update over ``steps`` rounds through the step API."""
    agent.reset()
    x, r = problem.block(0)
    t0 = time.perf_counter()
    for t in range(steps):
        a = agent.act(x[t])
        agent.update(a, float(r[t, a]))
    return time.perf_counter() - t0


def time_reference(kind: str, problem: Problem, steps: int) -> tuple[float, float]:
    ref = NumpyLoop(make_agent(kind))
    x, r = problem.block(0)
    t0 = time.perf_counter()
    for t in range(steps):
        ref.step(x[t], r[t])
    return time.perf_counter() - t0, ref.regret


def kernel_calls(agent: StatsAgent, features: np.ndarray, rewards: np.ndarray) -> list[int]:
    """The step API's compiled calls alone, from a Python loop: LDP-OLS's rounds without its Python methods.

    Per round: the choice kernel, then the report kernel that draws nothing (or, at the round
    before a batch closes, the one that draws and refits), with the agent's own arrays, as
    ``act`` and ``update`` call them, but without their checks (the observation's type, rank
    and dtype, the action's and reward's types) and bookkeeping (the round and batch counters,
    the privacy ledger's count, the last observation). The bound of any step API made of these
    kernels: returns the arms, which must be ``run``'s after ``reset(seed=...)`` (which restarts
    the noise; a plain ``reset()`` continues it).
    """
    agent.reset(seed=agent.seed)
    step, params = agent._step, agent._params
    choose, plain, drawn = step.choose_one, step.report_plain, step.report_one
    server, pending, clips = agent.server.buffer, agent.open_batch.buffer, agent._clips
    holder = agent._rng_holder()
    no_draws, batch = agent._no_draws_before, agent.batch_size
    count, chosen = 0, []
    for t in range(features.shape[0]):
        x = features[t]
        a = choose(x, params, server)
        if count < no_draws:
            plain(x, a, rewards[t, a], count, params, pending, clips)
        else:
            drawn(holder, x, a, rewards[t, a], t + 1, count, params, server, pending)
        count = 0 if count + 1 == batch else count + 1
        chosen.append(a)
    return chosen


def calls_bound(problem: Problem, quick: bool) -> Ratio:
    """LDP-OLS's compiled calls alone from Python (:func:`kernel_calls`) against its ``run``: the step API's bound."""
    steps, repeats = (5_000, 5) if quick else (BLOCK, 9)
    x, r = problem.block(0)
    x, r = x[:steps], r[:steps]
    agent = make_agent("LDP-OLS")
    kernel_calls(agent, x, r)

    def compiled() -> None:
        agent.reset()
        agent.run(x, r)

    compiled()
    calls_s, run_s = interleaved(lambda: kernel_calls(agent, x, r), compiled, repeats)
    chosen = kernel_calls(agent, x, r)
    agent.reset(seed=agent.seed)
    result = agent.run(x, r, record_actions=True)
    same = result.actions is not None and np.array_equal(result.actions, chosen)
    return Ratio(
        "bound on LDP-OLS step API vs its run: the compiled calls alone",
        "LDP-OLS's choice and report kernels called from a Python loop, without act's and update's checks and "
        "bookkeeping",
        "LDPOLS.run",
        run_s / calls_s,
        None,
        f"{calls_s / steps * 1e6:.2f} us vs {run_s / steps * 1e6:.2f} us per round (d={D}, {ARMS} arms, "
        f"ε={EPSILON:g}, {steps} rounds, median of {repeats} alternating runs); same actions: {same}. What the "
        "step API adds to this is Python's: act's and update's calls and their checks and counters",
    )


def step_vs_run(kind: str, problem: Problem, quick: bool) -> Ratio:
    """The step API (act + update over T rounds) against the same agent's ``run`` over the same T rounds."""
    steps, repeats = (5_000, 5) if quick else (BLOCK, 9)
    x, r = problem.block(0)
    agent = make_agent(kind)
    return step_api_vs_run(
        kind, type(agent).__name__, agent, x[:steps], r[:steps], repeats, f"d={D}, {ARMS} arms, ε={EPSILON:g}"
    )


def results(quick: bool = False) -> list[Ratio]:
    """Fast path and step API of each agent against its numpy loop, and the step API against ``run``; medians."""
    steps, api_steps, ref_steps = (20_000, 2_000, 2_000) if quick else (100_000, 5_000, 5_000)
    repeats = 3 if quick else 5
    problem = Problem()
    out: list[Ratio] = []
    for kind in ("LDP-OLS", "Shuffle-LinUCB"):
        fast_agent, api_agent = make_agent(kind), make_agent(kind)
        time_fast(fast_agent, problem, 2_000)  # compile / load the kernels
        time_steps(api_agent, problem, 20)

        def fast(agent: StatsAgent = fast_agent) -> float:
            return time_fast(agent, problem, steps)[0] / steps

        def step_api(agent: StatsAgent = api_agent) -> float:
            return time_steps(agent, problem, api_steps) / api_steps

        def reference(kind: str = kind) -> float:
            return time_reference(kind, problem, ref_steps)[0] / ref_steps

        fast_t, ref_t = interleaved_per_step(fast, reference, repeats)
        api_t, ref2_t = interleaved_per_step(step_api, reference, repeats)
        where = f"d={D}, {ARMS} arms, ε={EPSILON:g}, median of {repeats} alternating runs"
        out += [
            Ratio(
                f"{kind} fast path, one run",
                f"{type(fast_agent).__name__}.run (compiled)",
                "the same loop in plain numpy",
                ref_t / fast_t,
                TARGET * ref_t,
                f"{1 / fast_t:,.0f} vs {1 / ref_t:,.0f} steps/s, {where}; goal: the {TARGET:,.0f} steps/s target "
                "over the reference rate",
            ),
            Ratio(
                f"{kind} step API, one run",
                f"{type(api_agent).__name__} act + update",
                "the same loop in plain numpy",
                ref2_t / api_t,
                None,
                f"{1 / api_t:,.0f} vs {1 / ref2_t:,.0f} steps/s, {where}",
            ),
            step_vs_run(kind, problem, quick),
        ]
        if kind == "LDP-OLS":
            out.append(calls_bound(problem, quick))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="rounds of the fast runs")
    parser.add_argument("--ref-steps", type=int, default=5_000, help="rounds of the numpy loops")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed runs")
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__} ({numba.get_num_threads()} threads); d={D}, {ARMS} arms, ε={EPSILON:g}\n"
    )
    problem = Problem()
    print(f"{'path':<40}{'steps/s':>14}{'regret/round':>14}")
    for kind in ("LDP-OLS", "Shuffle-LinUCB"):
        agent = make_agent(kind)
        time_fast(agent, problem, 2_000)
        seconds, regret = min(time_fast(agent, problem, args.steps) for _ in range(args.repeats))
        print(f"{kind + ' fast path':<40}{args.steps / seconds:>14,.0f}{regret / args.steps:>14.4f}")
        ref_s, ref_regret = min(time_reference(kind, problem, args.ref_steps) for _ in range(args.repeats))
        print(f"{kind + ' numpy loop':<40}{args.ref_steps / ref_s:>14,.0f}{ref_regret / args.ref_steps:>14.4f}")
        rate = args.steps / seconds
        print(f"  ratio {rate * ref_s / args.ref_steps:,.1f}x; target >= {TARGET:,.0f} steps/s: "
              f"{'PASS' if rate >= TARGET else 'FAIL'}")  # fmt: skip


if __name__ == "__main__":
    main()
