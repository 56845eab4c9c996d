"""Per-copy numpy generators of batched agents (ε-greedy, Exp3 and its graph variants, SB3Agent), and draws from them.

The seeding rule of every batched agent is docs/design.md ("Agents", Seeds): copy i of
``Agent(..., n_envs=N, seed=s)`` plays exactly as ``Agent(..., seed=s + i)`` on the same rewards,
whatever the other copies do, as copy i of a native vector env is the single env seeded
``s + i`` (:func:`bandit_envs.core.copy_seeds`). :class:`CopyStreams` gives copy i the generator
``default_rng(s + i)``; with ``seed=None`` each copy gets fresh entropy. One env
(``n_envs=None``) draws from ``agent.rng`` itself. :func:`copy_laplace`, :func:`copy_uniforms`
and :func:`copy_normals` draw one value per copy from the copies' generators (the LDP wrapper's
per-copy noise).

The compiled kernels draw with :func:`bandit_envs.core.next_double` from each generator's C
interface, whose address is kept next to the generators (``_bitgens``), the same stream as
``Generator.random``: the plain-Python references of the kernels draw with ``rng.random()`` and
make the same choices. Copies of the agent made by :mod:`copy` or :mod:`pickle` get new
generator objects, so the addresses are computed again for them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from bandit_envs._jit import njit
from bandit_envs.core import generator_addresses, next_double


@njit
def copy_laplace(bitgens, scale, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.laplace(0.0, scale)``, drawn from the generator at ``bitgens[b]``.

    numpy's ``random_laplace``: one uniform U (:func:`bandit_envs.core.next_double`, the stream of
    ``Generator.random``), redrawn while U == 0, then ``0.0 - scale * log(2 - 2U)`` if U >= 1/2
    else ``0.0 + scale * log(2U)``: the same floating-point operations, so copy b draws exactly
    what a single agent with that generator draws (``tests/test_seed_streams.py``).
    """
    for b in range(out.shape[0]):
        while True:
            u = next_double(bitgens[b])
            if u >= 0.5:
                out[b] = 0.0 - scale * math.log(2.0 - u - u)
                break
            if u > 0.0:
                out[b] = 0.0 + scale * math.log(u + u)
                break


@njit
def copy_uniforms(bitgens, out):  # pragma: no cover
    """``out[b]`` = copy b's ``Generator.random()``, drawn from the generator at ``bitgens[b]``."""
    for b in range(out.shape[0]):
        out[b] = next_double(bitgens[b])


@njit
def copy_normals(rngs, scale, out):  # pragma: no cover
    """``out[b]`` = ``rngs[b].normal(0.0, scale)``, ``rngs`` a numba typed list of the copies' generators.

    numba's generator methods make numpy's draws (the same algorithm on the same bit generator);
    the list holds the generators themselves, so their states advance.
    """
    for b in range(out.shape[0]):
        out[b] = rngs[b].normal(0.0, scale)


#: Bytes per copy that a generator takes (PCG64 with its seed sequence, about 0.6 KiB), for the
#: agents' state-size check.
GENERATOR_BYTES = 1024


class CopyStreams:
    """Mixin for an :class:`agents.base.Agent`: one generator per copy, reachable from compiled code.

    Call :meth:`_seed_copies` after the base class has set ``rng`` (constructor and ``reset``).
    """

    rng: np.random.Generator
    seed: int | None
    n_envs: int | None
    #: The copies' generators, in copy order.
    _copy_rngs: tuple[np.random.Generator, ...]
    #: ``_bitgens[i]``: the address of ``_copy_rngs[i]``'s C interface, for ``next_double``.
    _bitgens: npt.NDArray[np.uint64]
    #: ``int(_bitgens[0])``, for the one-env kernels (which take the address as a number).
    _bitgen_one: int

    def _seed_copies(self) -> None:
        """(Re)build the copies' generators from ``seed``: copy i gets ``seed + i``; one env uses ``rng``."""
        if self.n_envs is None:
            generators: tuple[np.random.Generator, ...] = (self.rng,)
        elif self.seed is None:
            generators = tuple(np.random.default_rng() for _ in range(self.n_envs))
        else:
            generators = tuple(np.random.default_rng(self.seed + i) for i in range(self.n_envs))
        self._copy_rngs = generators
        self._bitgens = generator_addresses(generators)
        self._bitgen_one = int(self._bitgens[0])

    @property
    def copy_rngs(self) -> tuple[np.random.Generator, ...]:
        """The generator of each copy (``(rng,)`` for one env)."""
        return self._copy_rngs

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_bitgens", None)  # addresses of this process's objects
        state.pop("_bitgen_one", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_copy_rngs" in state:
            if self.n_envs is None:  # one env: the stream is rng's (a copy made its own object of it)
                self._copy_rngs = (self.rng,)
            self._bitgens = generator_addresses(self._copy_rngs)
            self._bitgen_one = int(self._bitgens[0])
