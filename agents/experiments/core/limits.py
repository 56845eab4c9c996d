"""The ranges of an experiment's integer options: runs, horizon and base seed.

``banditlab run`` checks its options against these ranges as it parses them, and
:func:`agents.experiments.api.configure` checks the same values with :func:`check_count` for
:func:`agents.experiments.run`, :func:`agents.experiments.run_experiment` and
:func:`agents.experiments.score` (so ``banditlab score`` too), so a value out of range is one
sentence naming the option rather than an error from inside numpy.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from bandit_envs.validation import summarize

#: Fewest rounds of a run (every experiment is tested down to this horizon).
MIN_HORIZON = 10
#: Most rounds of a run: the checkpoints are computed in float64 (exact for integers up to 2**53)
#: and the kernels count rounds in int64.
MAX_HORIZON = 2**53
#: Most runs per setting (the memory limit usually refuses far fewer first:
#: :func:`agents.experiments.api.check_scale`).
MAX_RUNS = 2**53
#: Largest base seed, what an int64 holds (every run's seeds are derived from it by numpy's SeedSequence).
MAX_SEED = 2**63 - 1

#: Bits of an integer above which a message describes it by its size (Python will not print an
#: integer of more than 4300 digits).
_SHOWN_BITS = 4000


def _bound(value: int) -> str:
    """``value`` as a power of two where it is one (or one less), then its digits: ``2**53 (9007199254740992)``."""
    if value > 1024 and value & (value - 1) == 0:
        return f"2**{value.bit_length() - 1} ({value})"
    if value > 1024 and value & (value + 1) == 0:
        return f"2**{value.bit_length()} - 1 ({value})"
    return str(value)


def count_words(least: int, most: int | None = None) -> str:
    """What :func:`check_count` allows, in words: ``an integer >= 10 and <= 2**53 (9007199254740992)``."""
    return f"an integer >= {least}" + ("" if most is None else f" and <= {_bound(most)}")


def shown(value: Any) -> str:
    """``value`` quoted for a message; an integer too long to print is described by its number of bits."""
    if isinstance(value, int) and abs(value).bit_length() > _SHOWN_BITS:
        return f"an integer of {abs(value).bit_length()} bits"
    return summarize(value)


def check_count(name: str, value: Any, least: int, most: int) -> int:
    """``value`` as an ``int`` if it is an integer (a Python or numpy integer, not a bool) in [``least``, ``most``].

    Parameters
    ----------
    name
        The option, as the message names it (e.g. ``"--horizon"``).
    value
        What was given.
    least, most
        The allowed range, both included.

    Raises
    ------
    ValueError
        One sentence naming the option, what was given and what is allowed.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral) or not least <= int(value) <= most:
        raise ValueError(f"{name} must be {count_words(least, most)}, got {shown(value)}.")
    return int(value)
