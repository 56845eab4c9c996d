"""Central-DP stochastic bandit agents: private UCB and Thompson sampling on privately released statistics.

- :mod:`agents.central_dp.base`: :class:`StreamPrivateAgent`, per-copy noise streams and the ε check;
- :mod:`agents.central_dp.ucb`: :class:`HybridDPUCB`, :class:`TreeDPUCB`, :class:`AdaPUCB`;
- :mod:`agents.central_dp.thompson`: :class:`DPThompsonSampling`;
- :mod:`agents.central_dp.gaussian_ts`: :class:`PrePullGaussianTS`, :class:`DPTSUCB` (Gaussian DP);
- :mod:`agents.central_dp.kernels`, :mod:`agents.central_dp.gaussian_kernels`: compiled steps;
- :mod:`agents.central_dp.reference`: plain-Python versions, one copy each.
"""

from agents.central_dp.gaussian_ts import DPTSUCB, PrePullGaussianTS
from agents.central_dp.thompson import DPThompsonSampling
from agents.central_dp.ucb import AdaPUCB, HybridDPUCB, TreeDPUCB

__all__ = ["DPTSUCB", "AdaPUCB", "DPThompsonSampling", "HybridDPUCB", "PrePullGaussianTS", "TreeDPUCB"]
