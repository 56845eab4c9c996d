"""The gap paper family: differentially private arm elimination with graph feedback (GAP, §5).

``settings`` declares the experiments (Table 1, Figures 1–3) and their claims as data, ``task``
runs one (setting, run) with common random numbers, ``analysis`` writes summaries and figures.
"""

from agents.experiments.gap.settings import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
