"""Figures shared by families: cumulative-regret curves, one panel per setting."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.experiments.core.spec import Experiment


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend.

    Imported on first use rather than with the package: pyplot costs about a second to import,
    which every worker process and ``banditlab list`` would otherwise pay.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, dpi: int = 110, *, tight: bool = True) -> None:
    """Lay out ``fig``, write it to ``path`` at ``dpi`` and close it (pyplot keeps open figures alive).

    ``tight=False`` keeps the layout the caller set (``tight_layout`` measures every tick label of
    every panel: most of the time of a figure of many panels).
    """
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)


def regret_figure(
    results: pd.DataFrame, exp: Experiment, path: Path, title: Callable[[Mapping[str, Any]], str] | None = None
) -> None:
    """Cumulative regret curves (mean ± s.e. band over runs), one panel per setting, one line per agent."""
    plt = pyplot()
    curves: dict[tuple[int, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s, a, t, reg in zip(results["setting"], results["agent"], results["t"], results["regret"], strict=True):
        curves[(int(s), str(a))][int(t)].append(float(reg))
    n = len(exp.settings)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.8), sharey=False, squeeze=False)
    # Past the default cycle's 10 colours, one of 20 per agent (so no two agents share a colour).
    palette = plt.get_cmap("tab20") if len(exp.all_agents) > 10 else None
    for i, s in enumerate(exp.settings):
        ax = axes[0, i]
        for j, a in enumerate(exp.all_agents):
            pts = curves[(i, a)]
            ts = np.array(sorted(pts))
            m = np.array([np.mean(pts[t]) for t in ts])
            se = np.array([np.std(pts[t], ddof=1) / math.sqrt(len(pts[t])) if len(pts[t]) > 1 else 0.0 for t in ts])
            color = None if palette is None else palette(j % 20)
            ax.plot(ts, m, label=a, color=color)
            ax.fill_between(ts, m - se, m + se, alpha=0.25, color=color)
        ax.set_title(
            title(s) if title else ", ".join(f"{k}={v:g}" for k, v in s.items() if isinstance(v, float)), fontsize=9
        )
        ax.set_xlabel("round t")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        if i == 0:
            ax.set_ylabel("cumulative regret")
            ax.legend(fontsize=8)
    fig.suptitle(f"{exp.id} ({exp.source}); {exp.runs} runs, mean ± s.e.", fontsize=10)
    save_figure(fig, path)
