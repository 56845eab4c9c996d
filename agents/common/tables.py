"""Reward tables streamed in blocks of rows, so a simulation's memory does not grow with T.

:meth:`agents.elimination.policies.EliminationAgent.simulate` reads a T×K table of rewards or of
uniforms. An in-memory table needs 8·T·K bytes (763 MB at T = 10⁷, K = 10); a
:class:`UniformTable` holds only its seed and draws the same uniforms one block of rows at a
time when the simulation reaches them, so memory stays flat in T.

numpy's ``Generator.random`` fills an array with consecutive draws of its bit generator, so
drawing the rows in blocks gives exactly the table ``np.random.default_rng(seed).random((T, K))``
(tests check this), and a streamed run equals the in-memory run on that table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from bandit_envs.validation import check_int, check_memory, summarize

#: Default rows per block: 2¹⁶ rows of K = 10 float64 are 5 MiB.
BLOCK_ROWS = 1 << 16
#: Most rows of a :class:`UniformTable`: the simulators count rounds in int64, and no run comes near 2**53 rounds.
MAX_ROUNDS = 2**53


@runtime_checkable
class BlockTable(Protocol):
    """A table the simulators read block by block: its ``shape`` and its rows in order."""

    @property
    def shape(self) -> tuple[int, int]:
        """(T, K)."""
        ...

    def blocks(self) -> Iterator[npt.NDArray[np.float64]]:
        """Consecutive blocks of rows (2-d, K columns) that together make the T rows."""
        ...


class UniformTable:
    """The T×K table of uniforms ``np.random.default_rng(seed).random((T, K))``, drawn in blocks.

    Parameters
    ----------
    seed
        Seed of the table's generator (anything :func:`numpy.random.default_rng` accepts but a
        Generator, which would be consumed by the first pass): None, a non-negative integer, a
        sequence of them or a SeedSequence.
    n_rounds, n_arms
        T (at most :data:`MAX_ROUNDS`) and K.
    block_rows
        Rows per block (the last block may be shorter); one block must fit in the memory limit
        (:func:`bandit_envs.validation.memory_limit`).

    Raises
    ------
    TypeError, ValueError
        One sentence naming the argument, what was given and what is allowed.

    Examples
    --------
    >>> table = UniformTable(7, 100_000_000, 10)   # 8 GB if held in memory; 5 MiB at a time here
    >>> table.shape
    (100000000, 10)
    """

    def __init__(self, seed: Any, n_rounds: int, n_arms: int, block_rows: int = BLOCK_ROWS) -> None:
        if isinstance(seed, np.random.Generator | np.random.BitGenerator):
            raise TypeError(
                "seed must be an int, a SeedSequence or None (a Generator would be consumed by the first pass), "
                f"got {type(seed).__name__}."
            )
        try:  # what numpy refuses, refused here rather than at the first block, in our words
            np.random.default_rng(seed)
        except (TypeError, ValueError) as exc:
            raise type(exc)(
                "seed must be None, a non-negative integer, a sequence of non-negative integers or a SeedSequence, "
                f"got {summarize(seed)} ({type(seed).__name__})."
            ) from None
        self.seed = seed
        self.n_rounds = check_int("n_rounds", n_rounds, minimum=1)
        if self.n_rounds > MAX_ROUNDS:
            raise ValueError(f"n_rounds must be an integer in [1, 2**53], got {self.n_rounds}.")
        self.n_arms = check_int("n_arms", n_arms, minimum=1)
        self.block_rows = check_int("block_rows", block_rows, minimum=1)
        rows = min(self.block_rows, self.n_rounds)
        check_memory(
            f"n_arms={self.n_arms} with {rows} rows a block (one block of the table)",
            8.0 * rows * self.n_arms,
            "use fewer arms or a smaller block_rows",
        )

    @property
    def shape(self) -> tuple[int, int]:
        """(T, K)."""
        return self.n_rounds, self.n_arms

    def blocks(self) -> Iterator[npt.NDArray[np.float64]]:
        """The table's rows, ``block_rows`` at a time, drawn afresh from the seed on every call."""
        rng = np.random.default_rng(self.seed)
        for start in range(0, self.n_rounds, self.block_rows):
            yield rng.random((min(self.block_rows, self.n_rounds - start), self.n_arms))

    def array(self) -> npt.NDArray[np.float64]:
        """The whole table in memory (for short tables and tests); ValueError if it would exceed the memory limit."""
        check_memory(
            f"n_rounds={self.n_rounds} with n_arms={self.n_arms} (the whole table)",
            8.0 * self.n_rounds * self.n_arms,
            "read it in blocks with blocks()",
        )
        return np.random.default_rng(self.seed).random((self.n_rounds, self.n_arms))

    def __repr__(self) -> str:
        return f"UniformTable(seed={self.seed!r}, n_rounds={self.n_rounds}, n_arms={self.n_arms})"
