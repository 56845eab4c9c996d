"""One registry: experiment id → :class:`~agents.experiments.core.spec.Experiment`, for every family.

A family package exports ``EXPERIMENTS`` (a tuple of records); this module only collects them.
Nothing else in the package dispatches on an experiment's kind: a record carries its family's
task and analysis.
"""

from __future__ import annotations

import difflib

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
    """Look an experiment up by id, with one clear sentence if it does not exist (:func:`unknown_experiment`)."""
    try:
        return EXPERIMENTS[experiment_id]
    except (KeyError, TypeError):
        raise ValueError(unknown_experiment(experiment_id)) from None


#: Longest id for which :func:`unknown_experiment` looks for a close match (longer text is no typo).
_SUGGEST_LENGTH = 100


def unknown_experiment(experiment_id: object) -> str:
    """The sentence refusing an id that is not in the registry, with the closest id if one is close.

    ``experiment id must be one of [...], got 'gap/regret-esp'; did you mean 'gap/regret-eps'?``
    (case and surrounding spaces are ignored when looking for the close id).
    """
    ids = sorted(EXPERIMENTS)
    sentence = f"experiment id must be one of {ids}, got {summarize(experiment_id)}"
    if isinstance(experiment_id, str) and len(experiment_id) <= _SUGGEST_LENGTH:
        lowered = {e.lower(): e for e in ids}
        close = difflib.get_close_matches(experiment_id.strip().lower(), list(lowered), n=1, cutoff=0.6)
        if close:
            return f"{sentence}; did you mean {lowered[close[0]]!r}?"
    return f"{sentence}."
