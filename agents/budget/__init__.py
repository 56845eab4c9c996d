"""Privacy-budget selection agents: SM-UCB and the fixed-budget baseline.

- :mod:`agents.budget.smucb`: :class:`SMUCB`, :class:`FixedArm` and the sensitivity weights.
"""

from agents.budget.smucb import SMUCB, FixedArm

__all__ = ["SMUCB", "FixedArm"]
