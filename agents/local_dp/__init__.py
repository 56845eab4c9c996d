"""Local-DP agents: the generic conversion of a bandit agent to local DP, and LDP Thompson sampling.

- :mod:`agents.local_dp.wrapper`: :class:`LDPWrapper` (any context-free agent on privatized reports);
- :mod:`agents.local_dp.thompson`: :class:`LDPThompsonSampling` (Beta-Bernoulli TS on randomized response);
- :mod:`agents.local_dp.reference`: its plain-Python twin.

The linear local-DP agents (LDP-LinUCB, LDP-OLS) live with the linear family, :mod:`agents.linear`.
"""

from agents.local_dp.thompson import LDPThompsonSampling
from agents.local_dp.wrapper import LDPWrapper

__all__ = ["LDPThompsonSampling", "LDPWrapper"]
