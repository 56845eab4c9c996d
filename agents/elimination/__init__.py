"""Arm elimination under graph feedback: GAP, GAPU, DPSE, AAE and AlphaSample.

- :mod:`agents.elimination.policies`: the agent classes and :class:`EliminationAgent`, their
  step API and ``simulate`` on a reward table;
- :mod:`agents.elimination.kernels`: the compiled state machines and their state layout;
- :mod:`agents.elimination.drivers`: the compiled table runs that drive them;
- :mod:`agents.elimination.reference`: plain-Python GAP, DPSE and AAE written after the papers.
"""

from agents.elimination.policies import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from agents.elimination.policies import SimulationResult as SimulationResult

#: The public agents (``SimulationResult``, what ``simulate`` returns, is importable from here too).
__all__ = ["AAE", "DPSE", "GAP", "GAPU", "AlphaSample", "EliminationAgent"]
