"""The scorecard's suite: a fixed, versioned list of problems, each a registered env with fixed keywords.

Every problem is one registered env id (:data:`bandit_envs.ENV_IDS`) with fixed keywords, a full
horizon, the kind of agent that may play it (:data:`KINDS`) and, for the private problems, ε.
The scale (horizon and seeds) is the suite's: :data:`FULL` or :data:`QUICK` (``--quick``); a
problem's horizon at a scale is its full horizon times that scale's fraction. Changing any
problem, its normalisation or a built-in's parameters changes :data:`SUITE_VERSION`, which every
output carries (``meta.json``, ``results.csv``, ``summary.md``).

Normalisation (docs/score.md): a problem's score is ``1 − R_T / U_T`` for one seed, where
``R_T`` is the agent's regret after T rounds against the best arm played from the start and
``U_T`` is the expected regret of uniform random play on the same seed, so 0 is uniform random
play and 1 is the best arm from the start (or, for the contextual problems, the best arm of each
round's context). The card shows the mean over seeds with a t-based 95% interval, clipped to
[0, 1] (an adaptive agent can beat the best fixed arm of an adversarial table; the unclipped
values stay in ``results.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Version of the suite; part of every output. Bump it when a problem, a normalisation or a built-in changes.
SUITE_VERSION = "score-2"

#: Capabilities an agent may declare, and what each means (docs/score.md).
CAPABILITIES: dict[str, str] = {
    "context-free": "a K-armed bandit agent that ignores observations (Bernoulli, graph, adversarial problems)",
    "contextual": "a linear contextual agent reading each arm's feature vector (MovieLensRecommendation-v0)",
    "budget": "an agent choosing a privacy budget each round (PrivacyBudgetMovieLens-v0)",
    "private": "a central-DP agent built with the problem's ε (setting['epsilon'])",
    "local": "a natively local-DP agent built with the problem's ε (its users privatize their own reports)",
}

#: Problem kinds: which capabilities an agent needs to play them (any one of the alternatives).
KINDS: dict[str, str] = {
    "stochastic": "non-private context-free",
    "graph": "non-private context-free (side observations available)",
    "adversarial": "non-private context-free",
    "central": "private context-free, built with ε",
    "local": "context-free through reports: native local agents, or LDPWrapper around a non-private agent",
    "contextual": "non-private contextual",
    "contextual-local": "natively local contextual",
    "budget": "budget selection",
}


@dataclass(frozen=True)
class Problem:
    """One problem of the suite: a registered env with fixed keywords, horizon and ε."""

    name: str
    title: str
    env_id: str
    kind: str
    horizon: int
    keywords: dict[str, Any] = field(default_factory=dict)
    epsilon: float | None = None
    #: How the score is normalised, in words (docs/score.md and summary.md).
    normalisation: str = ""
    #: The non-private problem a private one adds noise to (the privacy-cost line divides by its score).
    base: str | None = None


#: Bernoulli means of the problems (fixed by the suite version).
EASY_MEANS: tuple[float, ...] = (0.9, 0.7, 0.6, 0.6, 0.5, 0.5, 0.4, 0.4, 0.3, 0.2)
HARD_MEANS: tuple[float, ...] = (0.5, 0.48, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3)
K100_MEANS: tuple[float, ...] = tuple(round(0.9 - 0.005 * k, 3) for k in range(100))
#: The adversarial table's Bernoulli means (best arm, every other arm) in its high and its low phases:
#: the gap stays 0.1 while every arm's mean jumps by 0.8 from one phase to the next.
ADVERSARIAL_PHASES: tuple[tuple[float, float], tuple[float, float]] = ((0.95, 0.85), (0.15, 0.05))
#: Phase j of the adversarial table lasts ⌈ADVERSARIAL_GROWTH^j⌉ rounds (j = 0, 1, ..., high phases even).
ADVERSARIAL_GROWTH = 1.6
#: The env's means on the adversarial problem (only its arm count and the table matter: the table replaces its draws).
ADVERSARIAL_MEANS: tuple[float, ...] = (0.55,) + (0.45,) * 9
EPSILONS: tuple[float, ...] = (0.1, 1.0, 10.0)

_PSEUDO = (
    "1 − R_T/U_T, R_T the pseudo-regret Σ_t (μ* − μ_{a_t}) and U_T = T·mean_a(μ* − μ_a) (uniform play's expectation)"
)
_ADV = (
    "1 − R_T/U_T on the seed's realised table X: R_T = max_a Σ_t X_ta − Σ_t X_{t,a_t} (best fixed arm in hindsight) "
    "and U_T = max_a Σ_t X_ta − Σ_t mean_a X_ta (uniform play's expectation)"
)
_CONTEXT = (
    "1 − R_T/U_T, R_T = Σ_t (max_a x_ta·θ − x_{t,a_t}·θ) (the best movie for each round's user) and U_T = "
    "Σ_t (max_a − mean_a) of the same expected ratings (uniform play's expectation)"
)
_BUDGET = (
    "1 − R_T/U_T, R_T the env's fixed_arm_regret summed (gap to the best fixed budget, averaged over φ) and "
    "U_T = T·mean_a(μ* − μ_a) over the env's expected_rewards (uniform play's expectation)"
)


def _bernoulli(means: tuple[float, ...]) -> dict[str, Any]:
    return {"n_arms": len(means), "edge_probability": 0.0, "means": list(means), "reward": "bernoulli"}


def _problems() -> tuple[Problem, ...]:
    stochastic = (
        Problem("bernoulli-easy", "Bernoulli, K = 10, gaps ≥ 0.2", "GraphBandit-v0", "stochastic", 20_000,
                _bernoulli(EASY_MEANS), normalisation=_PSEUDO),
        Problem("bernoulli-hard", "Bernoulli, K = 10, one gap of 0.02", "GraphBandit-v0", "stochastic", 20_000,
                _bernoulli(HARD_MEANS), normalisation=_PSEUDO),
        Problem("bernoulli-k100", "Bernoulli, K = 100, means 0.9 … 0.405", "GraphBandit-v0", "stochastic", 50_000,
                _bernoulli(K100_MEANS), normalisation=_PSEUDO),
    )  # fmt: skip
    graph = (
        Problem("graph-sparse", "Graph feedback, Erdős–Rényi p = 0.1", "GraphBandit-v0", "graph", 20_000,
                {"n_arms": 10, "edge_probability": 0.1, "gap": 0.1, "reward": "truncnorm"}, normalisation=_PSEUDO),
        Problem("graph-dense", "Graph feedback, Erdős–Rényi p = 0.5", "GraphBandit-v0", "graph", 20_000,
                {"n_arms": 10, "edge_probability": 0.5, "gap": 0.1, "reward": "truncnorm"}, normalisation=_PSEUDO),
        Problem("adversarial", "Stochastically constrained adversary, K = 10", "GraphBandit-v0", "adversarial", 20_000,
                {"n_arms": 10, "edge_probability": 0.0, "means": list(ADVERSARIAL_MEANS), "reward": "bernoulli"},
                normalisation=_ADV),
    )  # fmt: skip
    private = tuple(
        Problem(f"{p.name}@dp{e:g}", f"{p.title}, central DP ε = {e:g}", p.env_id, "central", p.horizon,
                p.keywords, epsilon=e, normalisation=_PSEUDO, base=p.name)
        for p in stochastic for e in EPSILONS
    )  # fmt: skip
    local = tuple(
        Problem(f"{p.name}@ldp{e:g}", f"{p.title}, local DP ε = {e:g}", p.env_id, "local", p.horizon,
                p.keywords, epsilon=e, normalisation=_PSEUDO, base=p.name)
        for p in stochastic for e in EPSILONS
    )  # fmt: skip
    other = (
        Problem("movielens", "MovieLens linear contextual (default data)", "MovieLensRecommendation-v0",
                "contextual", 20_000, {}, normalisation=_CONTEXT),
        Problem("movielens@ldp1", "MovieLens linear contextual, local DP ε = 1", "MovieLensRecommendation-v0",
                "contextual-local", 20_000, {}, epsilon=1.0, normalisation=_CONTEXT, base="movielens"),
        Problem("budget-movielens", "Privacy-budget selection, MovieLens (default data, γ = 1)",
                "PrivacyBudgetMovieLens-v0", "budget", 20_000, {"gamma": 1.0}, normalisation=_BUDGET),
    )  # fmt: skip
    return (*stochastic, *graph, *private, *local, *other)


#: The suite, in the order of the card.
PROBLEMS: tuple[Problem, ...] = _problems()
BY_NAME: dict[str, Problem] = {p.name: p for p in PROBLEMS}


def scaled_horizon(problem: Problem, fraction: float) -> int:
    """The problem's horizon at a scale: ``fraction`` of its full horizon, at least 2·K rounds (every arm tried)."""
    k = int(problem.keywords.get("n_arms", 20))
    return max(2 * k, round(problem.horizon * fraction))


@dataclass(frozen=True)
class Scale:
    """Seeds per problem and the fraction of each problem's full horizon played."""

    name: str
    runs: int
    fraction: float


FULL = Scale("full", 20, 1.0)
QUICK = Scale("quick", 8, 0.1)
