"""The experiment engine shared by every paper family: specs, claims, seeds, tasks, backends, results.

Nothing here imports a family: families (``agents.experiments.gap``, ``budget``, ``ldp``, ``rl``)
hand their task and analysis to the core through their :class:`~agents.experiments.core.spec.Experiment`
records.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """The installed version of bandit-envs (``"unknown"`` when run from an uninstalled checkout)."""
    try:
        return version("bandit-envs")
    except PackageNotFoundError:
        return "unknown"
