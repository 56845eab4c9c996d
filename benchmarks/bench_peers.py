"""Side by side with peer libraries, when they are installed: SMPyBandits, MABWiser, gymnax.

Each peer lives in its own virtual environment (its pins conflict with ours; see
``benchmarks/README.md`` for the install commands). A peer is found, in this order, through the
option ``--smpybandits/--mabwiser/--gymnax PYTHON``, the environment variable
``BANDIT_PEER_SMPYBANDITS`` / ``BANDIT_PEER_MABWISER`` / ``BANDIT_PEER_GYMNAX`` giving the peer
venv's ``python``, or by importing it in the current interpreter. Its side runs in a subprocess
of that Python (``benchmarks/peers/*.py``), set up once and asked for one timed run at a time;
our side runs in this process on the same problem, through the project's public API. Runs
alternate peer, ours, peer, ours; medians are compared. Measured:

* SMPyBandits ``UCB`` and MABWiser ``UCB1`` against ``agents.UCB`` (alpha = sqrt 2, the same
  index), K = 10 Bernoulli arms, one copy, the same horizon T: the agent on a pre-drawn reward
  table identical on both sides, and (SMPyBandits) the agent on its own env: SMPyBandits'
  Bernoulli arms against ``gym.make("GraphBandit-v0", reward="bernoulli")`` on the empty graph;
* gymnax ``BernoulliBandit-misc`` (2 arms) vmapped over N copies against our native vector env
  (``gym.make_vec("GraphBandit-v0", num_envs=N, n_arms=2, reward="bernoulli")``), copy-steps per
  second with pre-drawn random actions: gymnax as one compiled ``lax.scan`` over the whole run,
  and as one jitted step per Python step. Both sides on one core.

Ratios are ours against the peer (peer time / our time: above 1, ours is faster). No goals: these
are reported for information. With no peer found, nothing is measured and the missing peers are
listed with their install commands.

Usage: ``python benchmarks/bench_peers.py [--quick] [--smpybandits PY] [--mabwiser PY] [--gymnax PY]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np
from _common import Ratio, print_results

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents import UCB

PEER_DIR = Path(__file__).resolve().parent / "peers"
MARK = "@@bench "
MEANS = [0.05 + 0.1 * k for k in range(10)]  # K = 10 Bernoulli arms, best 0.95, gaps 0.1
SEED = 0


@dataclass(frozen=True)
class Peer:
    """A peer library: how to find it, how to install it, and the script that runs its side."""

    name: str
    module: str
    script: str
    install: str

    @property
    def variable(self) -> str:
        """Environment variable giving the Python of the peer's venv."""
        return f"BANDIT_PEER_{self.name.upper()}"

    @property
    def option(self) -> str:
        """Command-line option giving the Python of the peer's venv."""
        return f"--{self.name.lower()}"


PEERS = (
    Peer(
        "SMPyBandits",
        "SMPyBandits",
        "smpybandits_ucb.py",
        'pip install SMPyBandits "numpy<2" "scipy<1.14" "pandas<2.3"',
    ),
    Peer("MABWiser", "mabwiser", "mabwiser_ucb.py", "pip install mabwiser"),
    Peer("gymnax", "gymnax", "gymnax_bandit.py", 'pip install gymnax "jax[cpu]" six'),
)


def find_python(peer: Peer, given: str | None = None) -> str | None:
    """The Python that runs ``peer``: ``given``, else its environment variable, else this one if it imports it."""
    path = given or os.environ.get(peer.variable)
    if path:
        return path
    if importlib.util.find_spec(peer.module) is not None:
        return sys.executable
    return None


class PeerError(RuntimeError):
    """A peer's process failed to start or to answer."""


class PeerProcess:
    """One peer script running in its own Python: set up once, then one timed run per request."""

    def __init__(self, peer: Peer, python: str, params: dict[str, Any]) -> None:
        env = dict(os.environ)
        if python != sys.executable:  # a foreign venv must not see our path settings
            env.pop("PYTHONPATH", None)
            env.pop("PYTHONHOME", None)
        env.setdefault("JAX_PLATFORMS", "cpu")
        self.peer = peer
        self.stderr = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a full pipe would block the peer
        try:
            self.proc = subprocess.Popen(
                [python, str(PEER_DIR / peer.script), json.dumps(params)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                text=True,
                env=env,
            )
        except OSError as exc:
            self.stderr.close()
            raise PeerError(f"cannot run {python}: {exc.strerror}") from exc
        self.version = str(self._answer()["version"])

    def _answer(self) -> dict[str, Any]:
        stdout: TextIO | None = self.proc.stdout
        assert stdout is not None
        for line in stdout:
            if line.startswith(MARK):
                return dict(json.loads(line[len(MARK) :]))
        self.proc.wait()
        self.stderr.seek(0)
        stderr = self.stderr.read()
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {self.proc.returncode}"
        raise PeerError(f"{self.proc.args[0]} stopped: {last}")

    def run(self, mode: str) -> float:
        """Seconds per step (or per copy-step) of one run in ``mode``."""
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(mode + "\n")
        stdin.flush()
        answer = self._answer()
        return float(answer["seconds"]) / int(answer["steps"])

    def close(self) -> None:
        """End the peer's process (closing its input ends its loop)."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


@contextmanager
def peer_process(peer: Peer, python: str, params: dict[str, Any]) -> Iterator[PeerProcess]:
    """A started peer process, ended on exit."""
    proc = PeerProcess(peer, python, params)
    try:
        yield proc
    finally:
        proc.close()


def alternate(peer: PeerProcess, mode: str, ours: Callable[[], float], repeats: int) -> tuple[float, float]:
    """Median seconds per step (peer, ours) of ``repeats`` alternating runs, after one warm-up run each."""
    peer.run(mode)
    ours()
    peer_t, ours_t = [], []
    for _ in range(repeats):
        peer_t.append(peer.run(mode))
        enabled = gc.isenabled()
        gc.disable()
        try:
            ours_t.append(ours())
        finally:
            if enabled:
                gc.enable()
    return statistics.median(peer_t), statistics.median(ours_t)


# Our side ------------------------------------------------------------------------------------


def reward_table(horizon: int) -> list[list[float]]:
    """The (T, K) Bernoulli reward table both sides read (same generator and seed as the peer scripts)."""
    rng = np.random.default_rng(SEED)
    table: list[list[float]] = (rng.random((horizon, len(MEANS))) < np.array(MEANS)).astype(float).tolist()
    return table


def ucb_on_table(horizon: int) -> Callable[[], float]:
    """One run of ``agents.UCB`` on the reward table: seconds per step."""
    table = reward_table(horizon)
    agent = UCB(len(MEANS))

    def run() -> float:
        agent.reset()
        act, update = agent.act, agent.update
        start = time.perf_counter()
        for t in range(horizon):
            a = act()
            update(a, table[t][a])
        return (time.perf_counter() - start) / horizon

    return run


def ucb_on_env(horizon: int) -> Callable[[], float]:
    """One episode of ``agents.UCB`` on ``GraphBandit-v0`` (Bernoulli, empty graph): seconds per step."""
    k = len(MEANS)
    env = gym.make(
        "GraphBandit-v0", graph=np.zeros((k, k), dtype=bool), means=MEANS, reward="bernoulli", horizon=horizon
    )
    agent = UCB(k)
    episode = itertools.count()

    def run() -> float:
        obs, _ = env.reset(seed=next(episode))
        agent.reset()
        act, step, update = agent.act, env.step, agent.update
        start = time.perf_counter()
        for _ in range(horizon):
            a = act(obs)
            obs, r, _, _, info = step(a)
            update(a, r, info)
        return (time.perf_counter() - start) / horizon

    return run


def vector_env(copies: int, steps: int) -> Callable[[], float]:
    """``steps`` steps of the native vector env, 2 Bernoulli arms, random actions: seconds per copy-step."""
    venv = gym.make_vec(
        "GraphBandit-v0",
        num_envs=copies,
        n_arms=2,
        graph=np.zeros((2, 2), dtype=bool),
        means=[0.1, 0.9],
        reward="bernoulli",
        horizon=steps + 1,
    )
    actions = np.random.default_rng(SEED).integers(0, 2, size=(steps, copies))
    episode = itertools.count()

    def run() -> float:
        venv.reset(seed=next(episode))
        step = venv.step
        start = time.perf_counter()
        for a in actions:
            step(a)
        return (time.perf_counter() - start) / (steps * copies)

    return run


# Comparisons ---------------------------------------------------------------------------------


def ucb_single(peer: Peer, python: str, quick: bool) -> list[Ratio]:
    """UCB, K = 10 Bernoulli arms, one copy: SMPyBandits or MABWiser against ``agents.UCB``."""
    horizon = 2_000 if quick else 10_000
    repeats = 3 if quick else 7
    out = []
    with peer_process(peer, python, {"means": MEANS, "horizon": horizon, "seed": SEED}) as proc:
        label = f"{peer.name} {proc.version}"
        policy = "UCB" if peer.name == "SMPyBandits" else "UCB1(alpha=1)"
        p, o = alternate(proc, "table", ucb_on_table(horizon), repeats)
        out.append(
            Ratio(
                f"{peer.name}: UCB, K=10 Bernoulli, one copy, agent only",
                "agents.UCB act+update",
                f"{label} {policy}",
                p / o,
                None,
                f"{o * 1e6:.2f} vs {p * 1e6:.2f} us/step, same reward table, T={horizon}, "
                f"median of {repeats} alternating runs",
            )
        )
        if peer.name == "SMPyBandits":
            p, o = alternate(proc, "env", ucb_on_env(horizon), repeats)
            out.append(
                Ratio(
                    f"{peer.name}: UCB, K=10 Bernoulli, one copy, agent + env",
                    'agents.UCB on gym.make("GraphBandit-v0", reward="bernoulli")',
                    f"{label} UCB on its Bernoulli arms",
                    p / o,
                    None,
                    f"{o * 1e6:.2f} vs {p * 1e6:.2f} us/step, T={horizon}, median of {repeats} alternating runs",
                )
            )
    return out


def gymnax_vector(peer: Peer, python: str, quick: bool) -> list[Ratio]:
    """gymnax's vmapped Bernoulli bandit against our native vector env, copies-steps per second."""
    copies, steps = 1000, (200 if quick else 1000)
    repeats = 3 if quick else 7
    ours = vector_env(copies, steps)
    out = []
    with peer_process(peer, python, {"copies": copies, "steps": steps, "seed": SEED}) as proc:
        label = f"gymnax {proc.version}"
        for mode, how in (("scan", "jit(lax.scan) of the whole run"), ("step", "one jitted step per Python step")):
            p, o = alternate(proc, mode, ours, repeats)
            out.append(
                Ratio(
                    f"gymnax: Bernoulli bandit, {copies} copies, env step ({mode})",
                    f'gym.make_vec("GraphBandit-v0", num_envs={copies}) step',
                    f"{label} BernoulliBandit-misc, vmap, {how}",
                    p / o,
                    None,
                    f"{1 / o:.3g} vs {1 / p:.3g} copy-steps/s ({o * 1e9:.0f} vs {p * 1e9:.0f} ns/copy-step), "
                    f"K=2, T={steps}, one core each, median of {repeats} alternating runs",
                )
            )
    return out


COMPARISONS: dict[str, Callable[[Peer, str, bool], list[Ratio]]] = {
    "SMPyBandits": ucb_single,
    "MABWiser": ucb_single,
    "gymnax": gymnax_vector,
}


def results(quick: bool = False, pythons: dict[str, str | None] | None = None) -> list[Ratio]:
    """Every comparison with a peer that is found; the peers not found are listed, with how to install them.

    ``pythons`` maps a peer's name to the Python of its venv (else its environment variable, else
    the current interpreter if it imports the peer).
    """
    pythons = pythons or {}
    out: list[Ratio] = []
    for peer in PEERS:
        python = find_python(peer, pythons.get(peer.name))
        if python is None:
            print(
                f"{peer.name}: skipped, not found (set {peer.variable} to the python of a venv made with "
                f"`{peer.install}`, or pass {peer.option})"
            )
            continue
        try:
            found = COMPARISONS[peer.name](peer, python, quick)
        except PeerError as exc:
            print(f"{peer.name}: skipped, {exc}")
            continue
        print(f"{peer.name}: measured with {python}")
        out.extend(found)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer repeats")
    for peer in PEERS:
        parser.add_argument(peer.option, metavar="PYTHON", help=f"python of a venv with {peer.name}")
    args = parser.parse_args()
    pythons = {peer.name: getattr(args, peer.option[2:]) for peer in PEERS}
    print_results(results(args.quick, pythons))


if __name__ == "__main__":
    main()
