"""The MovieLens instance: movie selection, completion, features (built once per data and settings)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_envs._types import FloatArray, IntArray
from bandit_envs.datasets import Ratings
from bandit_envs.datasets.env_data import ratings_from, shared_scenario
from bandit_envs.recommendation._completion import (
    als_completion,
    authors_completion,
    clip_rewards,
    normalize_ratings,
    product_features,
)
from bandit_envs.recommendation._problem import Problem, uniform_index
from bandit_envs.validation import check_choice, check_float, check_int, check_memory

COMPLETIONS = ("authors", "lowrank")
MOVIE_SELECTIONS = ("first", "popular")
SINGULAR_VALUES = ("theta", "features")


class MovieLensProblem(Problem):
    """Contexts are the users who rated at least one selected movie; arms are the selected movies.

    Attributes: ``features`` (n_users, n_movies, rank), ``rewards`` (n_users, n_movies; the
    completed normalized ratings clipped to [-1, 1]), ``theta`` (θ*: ``features @ theta`` equals the
    rewards except at the ``n_clipped`` clipped entries), ``normalized_ratings`` (the data,
    0.4 (r - 2.5), NaN where unrated), ``user_ids`` and ``item_ids`` (the data's ids of rows and arms).
    """

    n_uniforms = 1

    def __init__(self, ratings: Ratings, item_ids: IntArray, rank: int, completion: str, singular_values: str,
                 regularization: float) -> None:  # fmt: skip
        sub = ratings.subset(np.isin(ratings.item_id, item_ids))
        stars, self.user_ids, self.item_ids = sub.matrix(dense=True)
        self.normalized_ratings = normalize_ratings(stars)
        if completion == "authors":
            completed = authors_completion(self.normalized_ratings, rank)
        else:
            completed = als_completion(self.normalized_ratings, rank, regularization)
        self.features, self.theta = product_features(completed, rank, singular_values)
        rewards, self.n_clipped = clip_rewards(completed)
        super().__init__(rewards)
        self.dim = rank
        for arr in (self.features, self.theta, self.normalized_ratings, self.user_ids, self.item_ids):
            arr.setflags(write=False)

    def features_of(self, contexts: Any) -> FloatArray:
        """Rows of :attr:`features`, copied (callers may keep or modify them)."""
        rows = self.features[contexts]
        return rows.copy() if np.ndim(contexts) == 0 else rows  # an integer index gives a view

    def contexts(self, uniforms: FloatArray) -> IntArray:
        """A uniformly random user per row (the authors' ``random.randint`` over users)."""
        return uniform_index(uniforms[:, 0], self.n_contexts)

    def static_info(self) -> dict[str, Any]:
        """The movie ids of the arms and the number of clipped rewards."""
        return {"item_ids": self.item_ids.copy(), "n_clipped": self.n_clipped}


def select_movies(ratings: Ratings, n_movies: int, selection: str) -> IntArray:
    """Ids of the ``n_movies`` first (smallest ids) or most rated (ties: smaller id) movies, ascending."""
    ids, counts = np.unique(ratings.item_id, return_counts=True)
    if n_movies > ids.size:
        raise ValueError(f"n_movies={n_movies} exceeds the {ids.size} movies of the data; use at most {ids.size}.")
    if selection == "popular":
        ids = ids[np.lexsort((ids, -counts))]
    return np.sort(ids[:n_movies])


def movielens_problem(data: Any, n_movies: Any, movie_selection: Any, rank: Any, completion: Any,
                      singular_values: Any, regularization: Any, instance_seed: Any) -> MovieLensProblem:  # fmt: skip
    """Validate the arguments and return the (cached) instance for ``data``."""
    n_movies = check_int("n_movies", n_movies, minimum=2)
    check_choice("movie_selection", movie_selection, MOVIE_SELECTIONS)
    rank = check_int("rank", rank, minimum=1)
    check_choice("completion", completion, COMPLETIONS)
    check_choice("singular_values", singular_values, SINGULAR_VALUES)
    regularization = check_float("regularization", regularization, low=0.0, low_open=True)
    check_int("instance_seed", instance_seed, minimum=0)  # accepted for the common interface: nothing is random
    if completion == "authors" and rank > n_movies:
        raise ValueError(f"rank must be at most n_movies={n_movies} with completion='authors', got rank={rank}.")
    if completion == "lowrank" and rank >= n_movies:
        raise ValueError(
            f"rank must be below n_movies={n_movies} with completion='lowrank' (at rank >= n_movies nothing is "
            f"completed), got rank={rank}; lower rank or raise n_movies."
        )
    table = ratings_from(data)
    items = select_movies(table, n_movies, movie_selection)
    n_users = np.unique(table.user_id[np.isin(table.item_id, items)]).size
    if rank > n_users:
        raise ValueError(f"rank={rank} exceeds the {n_users} users who rated the selected movies; lower rank.")
    fit = regularization if completion == "lowrank" else None
    key = ("recommendation", n_movies, movie_selection, rank, completion, singular_values, fit)

    def build() -> MovieLensProblem:
        # Dense (user, movie) tables: ratings, completion, SVD, rewards, and the features (rank per entry).
        check_memory(
            f"n_movies={n_movies} with rank={rank} ({n_users} users × {n_movies} movies, {8 * (rank + 10)} bytes each)",
            8.0 * (rank + 10) * n_users * n_movies,
            "use fewer movies or a lower rank",
        )
        return MovieLensProblem(table, items, rank, completion, singular_values, regularization)

    return shared_scenario(table, key, build)
