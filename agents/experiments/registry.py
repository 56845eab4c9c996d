"""One registry: experiment id → :class:`~agents.experiments.core.spec.Experiment`, for every family.

A family package exports ``EXPERIMENTS`` (a tuple of records); this module only collects them.
Nothing else in the package dispatches on an experiment's kind: a record carries its family's
task and analysis.
"""

from __future__ import annotations

from agents.experiments import budget, dpmab, gap, ldp, rl
from agents.experiments.core.spec import Experiment
from bandit_envs.validation import summarize

#: The families, one per line (a new family adds its line here).
FAMILIES = (
    gap,
    budget,
    ldp,
    rl,
    dpmab,
)
EXPERIMENTS: dict[str, Experiment] = {e.id: e for family in FAMILIES for e in family.EXPERIMENTS}


def get_experiment(experiment_id: str) -> Experiment:
    """Look an experiment up by id, with one clear sentence if it does not exist."""
    try:
        return EXPERIMENTS[experiment_id]
    except (KeyError, TypeError):
        raise ValueError(
            f"experiment id must be one of {sorted(EXPERIMENTS)}, got {summarize(experiment_id)}."
        ) from None
