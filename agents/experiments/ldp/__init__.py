"""The LDP contextual-bandit family: LDP-LinUCB on a MovieLens recommendation environment.

``settings`` declares the experiments and claims as data, ``task`` runs one agent's run through
the compiled fast path (or a user agent through the step API), ``analysis`` writes summaries and
figures with the authors' numbers beside ours: the one their repository prints in text (962.4 at
ε = 8·10⁵), and approximate readings of the blog's figure, marked as such.
"""

from agents.experiments.ldp.settings import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
