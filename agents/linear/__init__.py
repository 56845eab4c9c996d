r"""Linear contextual bandits: LinUCB (OFUL-style) and LDP-LinUCB (Zheng et al., NeurIPS 2020).

Each round the agent receives the feature matrix :math:`X_t` (one row :math:`x_{t,a} \in
\mathbb{R}^d` per arm; with ``n_envs=N`` a stack of shape (N, n_arms, d)) and plays the arm of
largest optimistic index :math:`x^\top\hat\theta + \beta\,\mathrm{bonus}(x)`. Modules:

- :mod:`agents.linear.protocol`: the client/server protocol both agents share
  (:class:`LinUCBServer`, :func:`client_choose`, :func:`client_report`) and the privacy of a
  report;
- :mod:`agents.linear.base`: :class:`LinearAgent`, the step API and the compiled fast path
  (:meth:`LinearAgent.run`), and :class:`LinearRunResult`;
- :mod:`agents.linear.linucb`: :class:`LinUCB` (constant width, no noise);
- :mod:`agents.linear.ldp_linucb`: :class:`LDPLinUCB`, :func:`ldp_linucb_sensitivity`,
  :func:`ldp_linucb_sigma` (Gaussian reports, (ε, δ)-LDP per report);
- :mod:`agents.linear.private_base`: :class:`~agents.linear.private_base.LocalDPLinearAgent`, the
  per-user report accounting of the local-DP agents below;
- :mod:`agents.linear.stats_base`: :class:`StatsAgent`, batched private sufficient statistics
  with greedy (or optimistic) play, shared by :class:`LDPOLS` (:mod:`agents.linear.ldp_ols`,
  Han et al., NeurIPS 2021: local DP) and :class:`ShuffleLinUCB`
  (:mod:`agents.linear.shuffle_linucb`, Chowdhury & Zhou, ICML 2022; Garcelon et al., ALT 2022:
  the shuffle model);
- ``agents.linear._kernels`` and ``agents.linear._stats_kernels``: the compiled numba kernels
  (private).

Where numba kernels live (the rule for the whole code base, with its known exceptions, is in
``docs/kernels.md``): compiled kernels live in an internal module of their own next to the code
that uses them (``agents/common/kernels.py`` for the generic drivers, ``agents/elimination/kernels.py``
for the elimination agents, ``agents/linear/_kernels.py`` here, ``bandit_envs/budget/_geo.py`` for
the Gowalla budget env); kernels that other modules import from it have no leading underscore,
since the module is internal already. A public module holds ``@numba.njit`` functions only
in two cases: a few small kernels of its own, kept at its top under underscore names
(``agents/stochastic/index.py``, ``agents/budget/smucb.py``), or compiled primitives that are public API
(``bandit_envs/rewards.py``). Each kernel's docstring states what it computes; where a kernel
replaces a numpy or LAPACK routine the docstring gives the numpy equivalent and a test compares
the two (here: ``tests/test_linear_agents.py``).
"""

from agents.linear._kernels import EIG_ATOL as EIG_ATOL
from agents.linear._kernels import EIG_RTOL as EIG_RTOL
from agents.linear._kernels import PIVOT_RTOL as PIVOT_RTOL
from agents.linear.base import LinearAgent, LinearRunResult
from agents.linear.ldp_linucb import SIGMA_METHODS as SIGMA_METHODS
from agents.linear.ldp_linucb import LDPLinUCB, ldp_linucb_sensitivity, ldp_linucb_sigma
from agents.linear.ldp_ols import LDPOLS
from agents.linear.ldp_ols import OLS_MECHANISMS as OLS_MECHANISMS
from agents.linear.linucb import LinUCB
from agents.linear.protocol import BONUSES as BONUSES
from agents.linear.protocol import LinUCBServer, client_choose, client_report
from agents.linear.shuffle_linucb import ShuffleLinUCB
from agents.linear.stats_base import StatsAgent

#: Former private name of :class:`LinearAgent` (kept so that older imports keep working).
_LinearAgent = LinearAgent

__all__ = [
    "LDPLinUCB",
    "LDPOLS",
    "LinUCB",
    "LinUCBServer",
    "LinearAgent",
    "LinearRunResult",
    "ShuffleLinUCB",
    "StatsAgent",
    "client_choose",
    "client_report",
    "ldp_linucb_sensitivity",
    "ldp_linucb_sigma",
]
