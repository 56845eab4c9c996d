"""Seeds of an experiment's runs: every random stream is a pure function of (base seed, run, stream).

Common random numbers: run ``r`` of every agent and every setting uses the same reward noise
(``table_seed``), the same instance (``instance_seed = r`` where a family draws instances) and
the same agent seed (``agent_seed``), so paired comparisons between agents and settings see the
same luck.

Independence: the env and the agent of a run must never get the same integer, because
``numpy.random.default_rng(s)`` and Gymnasium's ``reset(seed=s)`` then produce the same bit
stream and the agent's draws (its privacy noise) would be a function of the env's. The two
functions hash different ``SeedSequence`` entropy ((base, run) and (base, run, stream)) to 63-bit
integers, so the env gets ``table_seed`` and every agent ``agent_seed``; a family never passes
one seed to both.
"""

from __future__ import annotations

import numpy as np


def table_seed(base_seed: int, run: int) -> int:
    """Integer seed of run ``run``'s reward noise (also valid for ``env.reset(seed=...)``)."""
    return int(np.random.SeedSequence([base_seed, run]).generate_state(1, np.uint64)[0] >> 1)


def agent_seed(base_seed: int, run: int, stream: int = 1) -> int:
    """Seed of every agent's generator in run ``run`` (policy randomness and privacy noise).

    ``stream`` selects an independent seed for the same run (2 picks the changed table entry of
    a privacy pair, 3 is the fresh noise of its second run, 4 the RL model's training seed, 5 the
    seed of the RL training envs).
    """
    return int(np.random.SeedSequence([base_seed, run, stream]).generate_state(1, np.uint64)[0] >> 1)
