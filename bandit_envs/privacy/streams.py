"""A generator for privacy noise that shares no stream with other generators built from the same seed.

Seeding an env and a mechanism with the same integer gives them the same bit stream
(``numpy.random.default_rng(s)`` and Gymnasium's ``reset(seed=s)`` both start from
``SeedSequence(s)``), so the noise would be a function of the env's draws. :func:`noise_generator`
derives the noise stream from ``SeedSequence(s)`` with a fixed spawn key instead: a child
sequence, statistically independent of the parent and of its ``spawn()`` children (NumPy's
``SeedSequence`` hashes the spawn key into the state). No privacy guarantee of its own: it is
where the mechanisms' noise comes from.

:func:`philox_noise_generator` is the same stream definition on numpy's counter-based Philox bit
generator, whose state compiled kernels can advance themselves (the per-copy noise streams of
the batched private agents, ``agents/common/philox.py``).
"""

from __future__ import annotations

import numpy as np

from bandit_envs.validation import check_int

__all__ = ["NOISE_SPAWN_KEY", "noise_generator", "philox_noise_generator"]

NOISE_SPAWN_KEY = 0x4C44_5000
"""Spawn key of the noise stream (far from the small keys ``SeedSequence.spawn`` hands out)."""


def noise_generator(seed: int | None) -> np.random.Generator:
    """The generator of a mechanism's noise for ``seed``, independent of ``default_rng(seed)``.

    ``numpy.random.default_rng(numpy.random.SeedSequence(seed, spawn_key=(NOISE_SPAWN_KEY,)))``:
    reproducible for an integer seed, fresh OS entropy for None.

    Parameters
    ----------
    seed : int or None
        A seed >= 0, or None.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        If ``seed`` is negative.
    TypeError
        If ``seed`` is not an integer or None.
    """
    entropy = None if seed is None else check_int("seed", seed, minimum=0)
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(NOISE_SPAWN_KEY,)))


def philox_noise_generator(seed: int) -> np.random.Generator:
    """The noise generator of ``seed`` on the Philox bit generator (one copy's stream of a private agent).

    ``Generator(Philox(SeedSequence(seed, spawn_key=(NOISE_SPAWN_KEY,))))``: the seed sequence of
    :func:`noise_generator`, hence also independent of ``numpy.random.default_rng(seed)``, with
    numpy's Philox4x64-10 as the bit generator (its key is the sequence's first two 64-bit words).

    Parameters, return value and errors are those of :func:`noise_generator`, except that ``seed``
    may not be None.
    """
    entropy = check_int("seed", seed, minimum=0)
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(entropy, spawn_key=(NOISE_SPAWN_KEY,))))
