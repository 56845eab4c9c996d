"""Compiled draws from the vector envs' copies' generators: skip or fill many copies' doubles in one pass.

Each copy of a vector env has its own ``numpy.random.Generator``; compiled code reaches it through
the address of its C interface (:func:`bandit_envs.core.generator_addresses`) and draws with
:func:`bandit_envs.core.next_double`, the very function ``Generator.random`` draws through, so
the doubles here are the copy's own stream in its own order. Each kernel sits beside its
plain-Python reference on the generators themselves (``tests/test_compiled_draws.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from bandit_envs._jit import njit
from bandit_envs.core import next_double


@njit
def skip_doubles(bitgens: Any, counts: Any) -> None:  # pragma: no cover - compiled
    """Draw and discard ``counts[i]`` doubles from the generator at ``bitgens[i]``, for every i.

    Reference: ``rngs[i].random(counts[i])`` for every i (:func:`skip_doubles_reference`).
    """
    for i in range(bitgens.shape[0]):
        for _ in range(counts[i]):
            next_double(bitgens[i])


def skip_doubles_reference(rngs: Sequence[np.random.Generator], counts: Sequence[int]) -> None:
    """Readable reference of :func:`skip_doubles`, on the generators themselves."""
    for rng, count in zip(rngs, counts, strict=True):
        rng.random(int(count))


@njit
def fill_doubles(bitgens: Any, copies: Any, counts: Any, block: Any) -> None:  # pragma: no cover - compiled
    """Fill ``block[c, :counts[j]]`` with the next doubles of copy ``c = copies[j]``'s generator, for every j.

    ``block`` is a (copies, rows, width) float64 array; the doubles fill each row in order, so
    the rows are those of ``rngs[c].random((counts[j], width))`` (reference:
    :func:`fill_doubles_reference`), one compiled pass for every copy whose buffer ran out.
    """
    width = block.shape[2]
    for j in range(copies.shape[0]):
        c = copies[j]
        bitgen = bitgens[c]
        for r in range(counts[j]):
            for w in range(width):
                block[c, r, w] = next_double(bitgen)


def fill_doubles_reference(
    rngs: Sequence[np.random.Generator], copies: Sequence[int], counts: Sequence[int], block: npt.NDArray[np.float64]
) -> None:
    """Readable reference of :func:`fill_doubles`, on the generators themselves."""
    for c, k in zip(copies, counts, strict=True):
        block[c, :k] = rngs[c].random((int(k), block.shape[2]))
