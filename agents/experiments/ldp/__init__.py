"""The LDP contextual-bandit family: LDP-LinUCB on a MovieLens recommendation environment.

``settings`` declares the experiments and claims as data, ``task`` runs one agent's run through
the compiled fast path (or a user agent through the step API), ``analysis`` writes summaries and
figures with the published numbers beside ours.
"""

from agents.experiments.ldp.settings import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
