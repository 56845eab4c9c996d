"""Central-DP bandits against their non-private versions, and the value of side observations.

Two experiments (``dp-mab/epsilon`` and ``graph/side-observations``) whose tasks play a block
of runs as copies of batched agents (:attr:`~agents.experiments.core.spec.Family.runs_per_task`).
"""

from agents.experiments.dpmab.settings import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
