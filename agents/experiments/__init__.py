"""Paper experiments as data, their runner, analysis and the ``banditlab`` CLI."""

from agents.experiments.registry import EXPERIMENTS, Experiment, get_experiment

__all__ = ["EXPERIMENTS", "Experiment", "get_experiment"]
