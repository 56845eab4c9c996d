"""The movie scenario of the budget paper (§6.1): the server's similarity tables and the pure transition.

The scenario (the filtered ratings, their item-item Gram matrix, and per user the nearest-neighbour
table computed without that user's row) is built once per dataset and shared by every env over it,
so many user-envs are cheap; a vector env may hold a different user in every copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from bandit_envs._types import FloatArray, IntArray
from bandit_envs.budget._core import BudgetConfig, Oracle, monte_carlo_oracle
from bandit_envs.budget._envs import Instance
from bandit_envs.datasets import Ratings, filter_min_counts
from bandit_envs.datasets.env_data import ratings_from, shared_scenario
from bandit_envs.validation import check_choice, check_float, check_int

LOSS_MODELS = ("revealed", "expected", "revealed_watched", "watched")
NEXT_ITEM = ("recommended", "random")
SIMILARITIES = ("ratings", "binary")

#: Rows of the similarity matrix processed at once when building a user's neighbour table.
_CHUNK = 512
#: Users per chunk of the Gram-matrix product (bounds the dense copy of the rating matrix).
_USER_CHUNK = 4096


class MovieLensScenario:
    """The server's side of the movie scenario for one ratings table.

    Parameters
    ----------
    ratings : Ratings
        The ratings; the (``min_user_ratings``, ``min_movie_raters``)-core is kept (the paper keeps
        users with >= 20 ratings and movies with >= 50 raters of MovieLens 10M, §7.1.1).
    min_movie_raters, min_user_ratings : int
        Core thresholds.
    similarity : {"ratings", "binary"}
        Cosine similarity of the movies' rating columns ("ratings", the paper's "评分记录") or of
        their watch indicators ("binary").

    Notes
    -----
    The Gram matrix ``G = X^T X`` (M x M, float64) of all users is kept; a user's similarities
    without their own row are ``(G - x x^T) / (n n^T)`` with the reduced column norms ``n``, so a
    user's nearest-neighbour table costs one pass over G. Memory: ``8 M^2`` bytes (41 MB for the
    2,264 movies of ml-latest-small with the default thresholds).
    """

    def __init__(self, ratings: Ratings, min_movie_raters: int, min_user_ratings: int, similarity: str) -> None:
        core = filter_min_counts(ratings, min_user=min_user_ratings, min_item=min_movie_raters)
        if len(core) == 0:
            raise ValueError(
                f"no ratings are left after keeping users with >= min_user_ratings={min_user_ratings} ratings "
                f"and movies with >= min_movie_raters={min_movie_raters} raters; lower the thresholds."
            )
        matrix, self.user_ids, self.item_ids = core.matrix()
        matrix = matrix.tocsr()
        if similarity == "binary":
            matrix.data[:] = 1.0
        self.n_items = int(self.item_ids.size)
        self.counts = np.diff(matrix.indptr).astype(np.int64)
        self._matrix = matrix
        # Ratings are multiples of 0.5 and counts are far below 2^22, so float32 sums are exact.
        gram = np.zeros((self.n_items, self.n_items), dtype=np.float32)
        for start in range(0, matrix.shape[0], _USER_CHUNK):
            block = matrix[start : start + _USER_CHUNK].toarray().astype(np.float32)
            gram += block.T @ block
        self._gram = gram.astype(np.float64)
        self._norms2 = np.diag(self._gram).copy()
        self._nearest: dict[int, npt.NDArray[np.int64]] = {}
        #: Oracles computed for this scenario, by (user, settings).
        self.oracles: dict[tuple[Any, ...], Oracle] = {}

    def row(self, user: int, name: str = "user") -> int:
        """Row of ``user`` in the rating matrix (in the core; ``name``: its argument, for the error)."""
        i = int(np.searchsorted(self.user_ids, user))
        if i >= self.user_ids.size or self.user_ids[i] != user:
            raise ValueError(
                f"{name}={user!r} is not among the {self.user_ids.size} users of the data that keep >= "
                "min_user_ratings ratings on movies with >= min_movie_raters raters."
            )
        return i

    def watched(self, user: int) -> npt.NDArray[np.bool_]:
        """The user's watch bits over the M movies (True where the core has a rating)."""
        out = np.zeros(self.n_items, dtype=bool)
        r = self.row(user)
        out[self._matrix.indices[self._matrix.indptr[r] : self._matrix.indptr[r + 1]]] = True
        return out

    def nearest(self, user: int) -> npt.NDArray[np.int64]:
        """For every movie, the most similar other movie by cosine over the other users' ratings.

        Ties go to the lowest index; a movie nobody else rated has similarity 0 with every movie.
        """
        if user not in self._nearest:
            x = np.zeros(self.n_items)
            r = self.row(user)
            lo, hi = self._matrix.indptr[r], self._matrix.indptr[r + 1]
            x[self._matrix.indices[lo:hi]] = self._matrix.data[lo:hi]
            norms = np.sqrt(np.maximum(self._norms2 - x * x, 0.0))
            inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0.0)
            out = np.empty(self.n_items, dtype=np.int64)
            for start in range(0, self.n_items, _CHUNK):
                rows = np.arange(start, min(start + _CHUNK, self.n_items))
                sim = self._gram[rows] - x[rows, None] * x[None, :]
                sim *= inv[rows, None]
                sim *= inv[None, :]
                sim[np.arange(rows.size), rows] = -np.inf
                out[rows] = sim.argmax(axis=1)
            out.setflags(write=False)
            self._nearest[user] = out
        return self._nearest[user]

    def eligible(self, min_fraction: float, max_fraction: float) -> IntArray:
        """Users whose watched share of the M movies lies in [min_fraction, max_fraction]."""
        share = self.counts / self.n_items
        return self.user_ids[(share >= min_fraction) & (share <= max_fraction)]


def movielens_scenario(
    data: Any = None, min_movie_raters: int = 10, min_user_ratings: int = 20, similarity: str = "ratings"
) -> MovieLensScenario:
    """The shared :class:`MovieLensScenario` of ``data`` (None, a dataset name, a path, or a Ratings table)."""
    min_movie_raters = check_int("min_movie_raters", min_movie_raters, minimum=1)
    min_user_ratings = check_int("min_user_ratings", min_user_ratings, minimum=1)
    check_choice("similarity", similarity, SIMILARITIES)
    table = ratings_from(data)
    key = ("movielens", min_movie_raters, min_user_ratings, similarity)
    return shared_scenario(table, key, lambda: MovieLensScenario(table, min_movie_raters, min_user_ratings, similarity))


@dataclass(frozen=True)
class MovieLensWorld:
    """The users of a batch and the pure transition of §6.1 (one step of every copy).

    ``nearest`` and ``watched`` are the users' (U x M) tables flattened; ``who`` picks the user.
    Noise columns: 0 the randomized-response coin, 1 the random recommendation, 2 the next datum's
    movie (``next_item="random"`` and the first datum).
    """

    nearest: IntArray
    watched: npt.NDArray[np.bool_]
    item_ids: IntArray
    loss: str
    next_item: str
    n_noise: ClassVar[int] = 3

    @property
    def n_items(self) -> int:
        """Number of movies M."""
        return int(self.item_ids.size)

    def _item(self, uniform: FloatArray) -> IntArray:
        return np.minimum((uniform * self.n_items).astype(np.int64), self.n_items - 1)

    def start(self, who: IntArray, noise: FloatArray) -> IntArray:
        """The first datum: the watch bit of a uniformly random movie (§7.1.2)."""
        return self._item(noise[:, 2])

    def step(
        self, who: IntArray, state: IntArray, epsilon: FloatArray, noise: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray, dict[str, Any]]:
        """Perturb the watch bit of movie ``state``, recommend, and score (see the env docstring)."""
        base = who * self.n_items
        truth = self.watched[base + state]
        # Randomized response exactly as bandit_envs.privacy.randomized_response: keep the bit
        # when u < e^eps / (1 + e^eps), else flip it (vectorized over per-copy budgets).
        keep = noise[:, 0] < expit(epsilon)
        report = truth == keep
        recommended = np.where(report, self.nearest[base + state], self._item(noise[:, 1]))
        reward = self.watched[base + recommended].astype(np.float64)
        if self.loss == "revealed":
            loss_factor = keep.astype(np.float64)
        elif self.loss == "expected":
            loss_factor = expit(epsilon)
        elif self.loss == "revealed_watched":
            loss_factor = (keep & truth).astype(np.float64)
        else:
            loss_factor = truth.astype(np.float64)
        following = recommended if self.next_item == "recommended" else self._item(noise[:, 2])
        extra = {"true_bit": truth, "reported_bit": report, "recommended_item": self.item_ids[recommended]}
        return following, reward, loss_factor, extra

    def burn_in(self, budgets: FloatArray) -> int:
        """Steps until the movie chain forgets its start (within 1e-6 in total variation).

        Each step jumps to a uniform movie (the start law) with probability at least
        ``1 / (1 + e^max(eps))``, so after t steps the chain's law is stationary up to the
        probability of no jump, ``(1 - q)^t``. i.i.d. rounds (``next_item="random"``) need none.
        """
        if self.next_item == "random":
            return 0
        q = float(expit(-budgets.max()))
        return math.ceil(math.log(1e-6) / math.log1p(-q))


@dataclass(frozen=True, kw_only=True)
class MovieLensBudgetConfig(BudgetConfig):
    """Every keyword of ``PrivacyBudgetMovieLens-v0``, validated (see the env's docstring for their meaning)."""

    loss: str = "revealed"
    next_item: str = "recommended"
    similarity: str = "ratings"
    min_movie_raters: int = 10
    min_user_ratings: int = 20
    min_watched_fraction: float = 0.25
    max_watched_fraction: float = 0.6

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("loss", self.loss, LOSS_MODELS)
        check_choice("next_item", self.next_item, NEXT_ITEM)
        check_choice("similarity", self.similarity, SIMILARITIES)
        self._set("min_movie_raters", check_int("min_movie_raters", self.min_movie_raters, minimum=1))
        self._set("min_user_ratings", check_int("min_user_ratings", self.min_user_ratings, minimum=1))
        lo = check_float("min_watched_fraction", self.min_watched_fraction, low=0.0, high=1.0)
        hi = check_float("max_watched_fraction", self.max_watched_fraction, low=0.0, high=1.0)
        if lo > hi:
            raise ValueError(
                f"min_watched_fraction must not exceed max_watched_fraction, got {self.min_watched_fraction!r} > "
                f"{self.max_watched_fraction!r}."
            )
        self._set("min_watched_fraction", lo)
        self._set("max_watched_fraction", hi)


def movielens_instance(config: MovieLensBudgetConfig, users: list[Any], names: list[str]) -> tuple[Instance, IntArray]:
    """Build the instance of ``config`` for ``users`` (one entry per copy; None = drawn from ``instance_seed``)."""
    grid = config.budget_grid
    loss, next_item = config.loss, config.next_item
    lo, hi = config.min_watched_fraction, config.max_watched_fraction
    seed, samples, o_seed = config.instance_seed, config.oracle_samples, config.oracle_seed
    scenario = movielens_scenario(config.data, config.min_movie_raters, config.min_user_ratings, config.similarity)
    eligible = scenario.eligible(lo, hi)
    if eligible.size == 0:
        raise ValueError(
            f"no user of the data watched a share of the {scenario.n_items} movies within "
            f"[min_watched_fraction, max_watched_fraction] = [{lo:g}, {hi:g}]; widen the range."
        )
    chosen = [_check_user(scenario, u, eligible, seed, lo, hi, n) for u, n in zip(users, names, strict=True)]
    distinct, who = np.unique(np.array(chosen, dtype=np.int64), return_inverse=True)
    world = MovieLensWorld(
        np.concatenate([scenario.nearest(int(u)) for u in distinct]),
        np.concatenate([scenario.watched(int(u)) for u in distinct]),
        scenario.item_ids,
        loss,
        next_item,
    )
    oracles = []
    for u in distinct:
        key = (int(u), tuple(grid.tolist()), loss, next_item, samples, o_seed)
        if key not in scenario.oracles:
            tables = (scenario.nearest(int(u)), scenario.watched(int(u)))
            solo = MovieLensWorld(*tables, scenario.item_ids, loss, next_item)
            scenario.oracles[key] = monte_carlo_oracle(solo, grid, samples, o_seed)
        oracles.append(scenario.oracles[key])
    levels = np.array([config.sensitivity.user_level(seed, int(u)) for u in distinct])
    return Instance(world, distinct, tuple(oracles), levels, grid, config.sensitivity), who.astype(np.int64)


def _check_user(
    scenario: MovieLensScenario, user: Any, eligible: IntArray, seed: int, lo: float, hi: float, name: str
) -> int:
    if user is None:
        return int(eligible[np.random.default_rng(seed).integers(eligible.size)])
    u = check_int(name, user)
    share = scenario.counts[scenario.row(u, name)] / scenario.n_items
    if not lo <= share <= hi:
        raise ValueError(
            f"{name}={user!r} watched {share:.3f} of the {scenario.n_items} movies, outside "
            f"[min_watched_fraction, max_watched_fraction] = [{lo:g}, {hi:g}] ({eligible.size} users qualify)."
        )
    return u
