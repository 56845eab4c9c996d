"""The graph-feedback instances the gap and rl families play: one Erdős–Rényi graph per run.

A setting names ``gap`` (Δmin) and ``edge_probability`` (p); run ``r`` plays the
:class:`~bandit_envs.graph.GraphBanditEnv` whose graph and arm order are drawn with
``instance_seed = r``, so every agent and every setting of a run shares one graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.experiments.core.spec import Experiment
from bandit_envs.graph import GraphBanditEnv


def graph_instance(n_arms: int, setting: Mapping[str, Any], horizon: int, run: int) -> GraphBanditEnv:
    """Run ``run``'s instance of ``setting``: the env with its graph (``instance_seed = run``)."""
    return GraphBanditEnv(
        n_arms=n_arms,
        edge_probability=setting["edge_probability"],
        gap=setting["gap"],
        horizon=horizon,
        instance_seed=run,
    )


def check_instances(experiment: Experiment) -> None:
    """Build each setting's instance once in this process, so a bad ``--set`` is one sentence before any work."""
    for setting in experiment.settings:
        try:
            GraphBanditEnv(
                n_arms=experiment.n_arms, edge_probability=setting["edge_probability"], gap=setting["gap"], horizon=10
            )
        except ValueError as exc:
            raise ValueError(
                f"the instance with n_arms = {experiment.n_arms}, gap = {setting['gap']:g} and edge_probability = "
                f"{setting['edge_probability']:g} is invalid: {exc}"
            ) from None
