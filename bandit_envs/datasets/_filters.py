"""Selections used by the experiments: most active users, minimum-count cores."""

from __future__ import annotations

import numpy as np

from bandit_envs.datasets._tables import CheckIns, Ratings
from bandit_envs.validation import check_int, summarize


def top_users(table: Ratings | CheckIns, n: int | None = None, min_count: int = 1) -> np.ndarray:
    """Return the ids of the most active users, most active first.

    Parameters
    ----------
    table : Ratings or CheckIns
        The table whose rows are counted per user.
    n : int or None, default None
        Return at most this many users; None returns every user that qualifies.
    min_count : int, default 1
        Keep only users with at least this many rows. The budget paper's Gowalla experiment
        uses the users with more than 1800 check-ins: ``top_users(checkins, min_count=1801)``.

    Returns
    -------
    ndarray of int64
        User ids sorted by decreasing row count; ties are broken by increasing id, so the result
        is deterministic.
    """
    if not isinstance(table, Ratings | CheckIns):
        raise TypeError(f"table must be a Ratings or CheckIns table, got {summarize(table)} ({type(table).__name__}).")
    if n is not None:
        n = check_int("n", n, minimum=0)
    min_count = check_int("min_count", min_count, minimum=1)
    ids, counts = np.unique(table.user_id, return_counts=True)
    order = np.lexsort((ids, -counts))
    chosen = ids[order][counts[order] >= min_count]
    return chosen if n is None else chosen[:n]


def filter_min_counts(ratings: Ratings, min_user: int = 20, min_item: int = 50) -> Ratings:
    """Keep the ratings of users and items that have enough ratings.

    Dropping rare items can push a user under ``min_user`` and vice versa, so both filters are
    repeated until neither removes anything: in the result every user has at least ``min_user``
    and every item at least ``min_item`` ratings (the ``(min_user, min_item)``-core). The result
    may be empty.

    Parameters
    ----------
    ratings : Ratings
        The ratings to filter.
    min_user : int, default 20
        Minimum number of ratings per user (MovieLens already guarantees 20).
    min_item : int, default 50
        Minimum number of ratings per item.

    Returns
    -------
    Ratings
        The rows that survive, in their original order.
    """
    if not isinstance(ratings, Ratings):
        raise TypeError(f"ratings must be a Ratings table, got {summarize(ratings)} ({type(ratings).__name__}).")
    min_user = check_int("min_user", min_user, minimum=1)
    min_item = check_int("min_item", min_item, minimum=1)
    keep = np.ones(len(ratings), dtype=bool)
    while True:
        before = int(keep.sum())
        for column, minimum in ((ratings.item_id, min_item), (ratings.user_id, min_user)):
            _, inverse, counts = np.unique(column[keep], return_inverse=True, return_counts=True)
            keep[np.flatnonzero(keep)[counts[inverse] < minimum]] = False
        if int(keep.sum()) == before:
            return ratings.subset(keep)
