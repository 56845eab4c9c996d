"""Adversarial bandit agents: Exp3 and its graph-feedback variants Exp3-SET and Exp3-IX.

- :mod:`agents.adversarial.exp3`: :class:`Exp3`, :class:`Exp3SET`, :class:`Exp3IX`;
- :mod:`agents.adversarial.kernels`: their compiled batched steps.
"""

from agents.adversarial.exp3 import Exp3, Exp3IX, Exp3SET

__all__ = ["Exp3", "Exp3IX", "Exp3SET"]
