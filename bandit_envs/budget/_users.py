"""Which users an env over some data may be: the eligible users of either scenario."""

from __future__ import annotations

from typing import Any

from bandit_envs._types import IntArray
from bandit_envs.budget._core import BudgetConfig
from bandit_envs.budget._gowalla_world import GowallaBudgetConfig, gowalla_scenario
from bandit_envs.budget._movielens_world import MovieLensBudgetConfig, movielens_scenario
from bandit_envs.validation import check_choice, check_float, check_int

_CONFIGS: dict[str, type[BudgetConfig]] = {"movielens": MovieLensBudgetConfig, "gowalla": GowallaBudgetConfig}
_THRESHOLDS = {
    "movielens": ("min_movie_raters", "min_user_ratings", "similarity", "min_watched_fraction", "max_watched_fraction"),
    "gowalla": ("min_user_checkins",),
}


def eligible_user_ids(scenario: str, data: Any = None, **thresholds: Any) -> IntArray:
    """Sorted ids of the users that ``user=`` / ``users=`` accept for ``data``.

    Parameters
    ----------
    scenario : {"movielens", "gowalla"}
        Which env.
    data : Any
        The env's ``data`` argument (None: the synthetic default).
    **thresholds
        The env's eligibility arguments (MovieLens: ``min_movie_raters``, ``min_user_ratings``,
        ``similarity``, ``min_watched_fraction``, ``max_watched_fraction``; Gowalla:
        ``min_user_checkins``); omitted ones take the env's defaults.

    Returns
    -------
    ndarray of int64
        The user ids, ascending (the scenario is built, or taken from the cache).
    """
    check_choice("scenario", scenario, tuple(_CONFIGS))
    unknown = sorted(set(thresholds) - set(_THRESHOLDS[scenario]))
    if unknown:
        raise ValueError(f"thresholds of scenario={scenario!r} may be {list(_THRESHOLDS[scenario])}, got {unknown}.")
    defaults = _CONFIGS[scenario].keywords()
    args = {name: thresholds.get(name, defaults[name]) for name in _THRESHOLDS[scenario]}
    if scenario == "gowalla":
        return gowalla_scenario(data).eligible(check_int("min_user_checkins", args["min_user_checkins"], minimum=1))
    lo = check_float("min_watched_fraction", args["min_watched_fraction"], low=0.0, high=1.0)
    hi = check_float("max_watched_fraction", args["max_watched_fraction"], low=0.0, high=1.0)
    built = movielens_scenario(data, args["min_movie_raters"], args["min_user_ratings"], args["similarity"])
    return built.eligible(lo, hi)
