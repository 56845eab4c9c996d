"""Per-copy numpy generators of batched agents (ε-greedy, Exp3 and its graph variants, SB3Agent), and draws from them.

The seeding rule of every batched agent is docs/design.md ("Agents", Seeds): copy i of
``Agent(..., n_envs=N, seed=s)`` plays exactly as ``Agent(..., seed=s + i)`` on the same rewards,
whatever the other copies do, as copy i of a native vector env is the single env seeded
``s + i`` (:func:`bandit_envs.core.copy_seeds`). :class:`CopyStreams` gives copy i the generator
``default_rng(s + i)``; with ``seed=None`` each copy gets fresh entropy. One env
(``n_envs=None``) draws from ``agent.rng`` itself. :func:`copy_draws` draws one value per copy
from a numba typed list of such generators (the LDP wrapper's per-copy noise).

The compiled kernels draw with :func:`bandit_envs.core.next_double` from each generator's C
interface, whose address is kept next to the generators (``_bitgens``), the same stream as
``Generator.random``: the plain-Python references of the kernels draw with ``rng.random()`` and
make the same choices. Copies of the agent made by :mod:`copy` or :mod:`pickle` get new
generator objects, so the addresses are computed again for them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from bandit_envs._jit import njit
from bandit_envs.core import generator_addresses

#: Kinds of :func:`copy_draws`: ``laplace(0, scale)``, ``normal(0, scale)``, ``random()``.
LAPLACE, NORMAL, UNIFORM = 0, 1, 2


@njit
def copy_draws(rngs, kind, scale, out):  # pragma: no cover
    """``out[b]`` = one draw of copy b's generator ``rngs[b]`` (a numba typed list of generators).

    ``kind`` is :data:`LAPLACE` (``rngs[b].laplace(0.0, scale)``), :data:`NORMAL`
    (``rngs[b].normal(0.0, scale)``) or :data:`UNIFORM` (``rngs[b].random()``). numba's
    generator methods make numpy's draws (the same algorithms on the same bit generator), so
    copy b draws exactly what a single agent with that generator draws one value at a time;
    ``tests/test_seed_streams.py`` checks it. The list holds the generators themselves: their
    states advance.
    """
    for b in range(out.shape[0]):
        g = rngs[b]
        if kind == 0:
            out[b] = g.laplace(0.0, scale)
        elif kind == 1:
            out[b] = g.normal(0.0, scale)
        else:
            out[b] = g.random()


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
