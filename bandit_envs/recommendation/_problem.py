"""A finite-context linear bandit instance and the pure functions every env and fast path share.

A *context* is what a round shows the learner: a user (MovieLens) or a user at a check-in (Gowalla).
An instance is a finite set of contexts, each with ``n_arms`` feature vectors in R^d and the
noiseless reward of every arm; a round draws a context, the learner picks an arm, and the reward is
that arm's noiseless reward plus Gaussian noise. Contexts come from uniforms by a fixed map and the
noise from standard normals, each drawn in sequence from its own stream, so a stream gives the same
rounds however it is cut into blocks: the single env, the vector env and ``round_contexts`` agree.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from bandit_envs._types import FloatArray, IntArray

#: Largest seed drawn for an episode's generators (numpy accepts any non-negative int).
_SEED_BOUND = 2**62


class Problem(ABC):
    """Noiseless rewards per (context, arm) and the maps from uniforms to contexts, contexts to features.

    Subclasses set ``dim``, ``n_uniforms`` and ``user_ids`` (the data's user id of each context)
    and implement :meth:`features_of` and :meth:`contexts`.
    """

    dim: int
    n_uniforms: int
    user_ids: IntArray

    def __init__(self, rewards: FloatArray) -> None:
        self.rewards = np.ascontiguousarray(rewards, dtype=np.float64)
        self.rewards.setflags(write=False)
        self.n_contexts, self.n_arms = self.rewards.shape
        #: Best noiseless reward of each context and its arm (the lowest index among ties).
        self.optimal = self.rewards.argmax(axis=1)
        self.best = self.rewards[np.arange(self.n_contexts), self.optimal]
        for arr in (self.optimal, self.best):
            arr.setflags(write=False)

    @abstractmethod
    def features_of(self, contexts: Any) -> FloatArray:
        """Feature vectors of every arm: shape (n_arms, d) for one context, (n, n_arms, d) for n."""

    @abstractmethod
    def contexts(self, uniforms: FloatArray) -> IntArray:
        """Contexts from a (n, n_uniforms) array of uniforms in [0, 1)."""

    def round_info(self, contexts: Any) -> dict[str, Any]:
        """Step-info entries describing the round's context (at least ``user_id``)."""
        return {"user_id": self.user_ids[contexts]}

    def static_info(self) -> dict[str, Any]:
        """Reset-info entries that describe the instance."""
        return {}


def uniform_index(uniform: FloatArray, size: Any) -> IntArray:
    """floor(u * size): a uniform index in [0, size) (the bias is below 2^-53 per draw)."""
    return np.minimum((uniform * size).astype(np.int64), np.asarray(size) - 1)


def episode_generators(parent: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """The generators of one episode's contexts and reward noise, seeded from the env's generator.

    Two streams keep the contexts independent of the noise level (and of whether noise is drawn).
    """
    context_seed, noise_seed = episode_seeds(parent)
    return np.random.default_rng(context_seed), np.random.default_rng(noise_seed)


def episode_seeds(parent: np.random.Generator) -> tuple[int, int]:
    """The seeds of one episode's context and noise generators (:func:`episode_generators`), drawn from ``parent``."""
    context_seed, noise_seed = (int(s) for s in parent.integers(0, _SEED_BOUND, size=2))
    return context_seed, noise_seed


class StreamStates:
    """The PCG64 states of ``n`` streams in one array, drawn from by one shared generator.

    Stream i is the stream of ``np.random.default_rng(seed)`` (a ``PCG64`` seeded with ``seed``)
    for the seed given to :meth:`seed`: :meth:`draw` loads its state into the shared generator,
    draws, and stores the state back. numpy's ``PCG64`` state is its 128-bit LCG state and
    increment plus one buffered 32-bit half (NumPy reference, "Random sampling: PCG64"), so the
    draws are exactly those of a generator of its own; a stream costs 48 bytes instead of a
    ``Generator`` object (about 1.5 KiB with its ``PCG64`` and ``SeedSequence``).
    """

    _MASK = (1 << 64) - 1

    def __init__(self, n: int) -> None:
        #: Row i: state high and low words, increment high and low words, has_uint32, uinteger.
        self.words = np.zeros((n, 6), dtype=np.uint64)
        self.worker = np.random.Generator(np.random.PCG64(0))

    def seed(self, i: int, seed: int) -> None:
        """Start stream i at ``np.random.default_rng(seed)``'s first draw."""
        self._store(i, np.random.PCG64(seed).state)

    def draw(self, i: int, fn: Callable[[np.random.Generator], Any]) -> Any:
        """``fn(generator)`` on a generator at stream i's state; stream i then continues after those draws."""
        w = [int(x) for x in self.words[i]]
        self.worker.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
            "has_uint32": w[4],
            "uinteger": w[5],
        }
        out = fn(self.worker)
        self._store(i, self.worker.bit_generator.state)
        return out

    def _store(self, i: int, state: Any) -> None:
        s, inc = state["state"]["state"], state["state"]["inc"]
        m = self._MASK
        self.words[i] = (s >> 64, s & m, inc >> 64, inc & m, state["has_uint32"], state["uinteger"])


def draw_contexts(problem: Problem, rng: np.random.Generator, size: int) -> IntArray:
    """The next ``size`` contexts of a stream (rows of ``n_uniforms`` uniforms each)."""
    return problem.contexts(rng.random((size, problem.n_uniforms)))


def draw_noise(rng: np.random.Generator, std: float, size: int) -> FloatArray:
    """The next ``size`` reward-noise values of a stream (nothing is drawn when ``std`` is 0)."""
    if std == 0.0:
        return np.zeros(size)
    return std * rng.standard_normal(size)


def outcome(problem: Problem, contexts: Any, actions: Any, noise: Any) -> tuple[Any, Any, Any, Any]:
    """One round, for one context (ints) or a batch (arrays): (reward, expected, regret, optimal action)."""
    expected = problem.rewards[contexts, actions]
    return expected + noise, expected, problem.best[contexts] - expected, problem.optimal[contexts]
