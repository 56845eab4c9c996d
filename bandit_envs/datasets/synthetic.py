"""Seeded synthetic datasets with the MovieLens and Gowalla schemas.

They are the offline defaults of the data-backed environments (docs/design.md): same table
types as the loaders, similar shape (sparsity, popularity skew, heavy-tailed activity, spatial
clustering), generated from a single ``seed`` with ``numpy.random.default_rng``. They are not
fitted to the real data; they only make every code path runnable without a download.
"""

from __future__ import annotations

import numpy as np

from bandit_envs.datasets._tables import CheckIns, Ratings
from bandit_envs.validation import check_float, check_int, check_memory, summarize

_MOVIELENS_START = 1_420_070_400  # 2015-01-01T00:00:00Z
_GOWALLA_START = 1_233_446_400  # 2009-02-01T00:00:00Z, the start of SNAP's Gowalla crawl
_GOWALLA_END = 1_287_878_400  # 2010-10-24T00:00:00Z, its end
_KM_PER_DEGREE = 111.32  # along a meridian, and along the equator

#: Largest ``popularity_exponent``: at 10 the most popular item is already 1024 times as popular as
#: the second, and ``n_items ** -10`` stays a positive float for any table that fits in memory
#: (beyond about 100, the weights of unpopular items underflow to 0 and sampling fails).
MAX_POPULARITY_EXPONENT = 10.0
#: Largest ``activity_sigma``: at 10 users' activity weights already span some 40 orders of
#: magnitude (beyond about 58, the log-normal weights overflow).
MAX_ACTIVITY_SIGMA = 10.0
#: Largest rating ``noise``, in stars: far beyond the 0.5-5 scale (any noise above a few stars only
#: pushes ratings to 0.5 or 5); beyond about 1e307 the noisy scores overflow.
MAX_RATING_NOISE = 100.0
#: Largest ``cluster_km`` and ``city_km``: about half the Earth's circumference, the longest distance
#: between two points on Earth (beyond about 1e150 km the distances overflow).
MAX_SPREAD_KM = 20_000.0
#: Largest ``median_checkins``: the users other than the heavy ones have at most 1800 check-ins.
MAX_MEDIAN_CHECKINS = 1800
#: Memory of one POI cluster (centre, Dirichlet weights, probabilities and temporaries), bytes.
_CLUSTER_BYTES = 64.0


def _size(n: int) -> float:
    """A checked count as a float for a memory estimate (an int too large for a float counts as 1e300)."""
    return float(min(n, 10**300))


def synthetic_movielens(
    n_users: int = 600,
    n_items: int = 1500,
    rank: int = 10,
    density: float = 0.03,
    seed: int = 0,
    *,
    min_user_ratings: int = 20,
    popularity_exponent: float = 1.0,
    activity_sigma: float = 1.5,
    noise: float = 0.5,
) -> Ratings:
    """Generate MovieLens-like ratings from a low-rank latent-factor model.

    Which items a user rates: user ``u`` rates ``min_user_ratings`` items plus a share of the
    remaining budget ``density * n_users * n_items`` proportional to a log-normal weight
    (heavy-tailed activity), capped at ``n_items``; the items are drawn without replacement
    with Zipf-like probabilities ``rank(i) ** -popularity_exponent`` (popularity ranks are
    shuffled over item ids). The rating is ``3.5 + b_u + b_i + 0.8 <p_u, q_i> / sqrt(rank) + e``
    with biases ``b ~ N(0, 0.35²)``, factors ``p, q ~ N(0, I_rank)`` and ``e ~ N(0, noise²)``,
    rounded to the half-star scale 0.5..5; before noise and rounding the rating matrix has rank
    at most ``rank + 2``.
    Rows are in time order: timestamps start at 2015-01-01 and strictly increase.

    With the defaults: about 27,000 ratings (density 0.025-0.03), every user has at least 20
    ratings, the 10% most popular items receive about 40-60% of the ratings, and the mean
    rating is about 3.5 (MovieLens: 3.5).

    Parameters
    ----------
    n_users, n_items : int
        Numbers of users (ids 1..n_users) and items (ids 1..n_items); some unpopular items may
        receive no rating.
    rank : int, default 10
        Dimension of the latent factors.
    density : float, default 0.03
        Target fraction of the user x item matrix that is rated; must be at least
        ``min_user_ratings / n_items``. The result is slightly below it (rounding, caps).
    seed : int, default 0
        Seed of the generator; the same arguments give the same table.
    min_user_ratings : int, default 20
        Minimum number of ratings per user (MovieLens guarantees 20).
    popularity_exponent : float, default 1.0
        Exponent of the Zipf-like item popularity, in [0, 10] (0 means uniform).
    activity_sigma : float, default 1.5
        Log-normal sigma of user activity, in [0, 10] (0 means equal activity).
    noise : float, default 0.5
        Standard deviation of the rating noise, in stars, in [0, 100].

    Returns
    -------
    Ratings
        One rating per rated (user, item) pair.
    """
    n_users = check_int("n_users", n_users, minimum=1)
    n_items = check_int("n_items", n_items, minimum=1)
    rank = check_int("rank", rank, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    min_user_ratings = check_int("min_user_ratings", min_user_ratings, minimum=1)
    if min_user_ratings > n_items:
        raise ValueError(f"min_user_ratings must be at most n_items = {n_items}, got {summarize(min_user_ratings)}.")
    density = check_float("density", density, low=min_user_ratings / n_items, high=1.0)
    popularity_exponent = check_float("popularity_exponent", popularity_exponent, low=0.0, high=MAX_POPULARITY_EXPONENT)
    activity_sigma = check_float("activity_sigma", activity_sigma, low=0.0, high=MAX_ACTIVITY_SIGMA)
    noise = check_float("noise", noise, low=0.0, high=MAX_RATING_NOISE)
    n_u, n_i = _size(n_users), _size(n_items)
    n_rows = max(density * n_u * n_i, n_u * min_user_ratings)
    check_memory(
        f"n_users={summarize(n_users)}, n_items={summarize(n_items)} and rank={summarize(rank)} at "
        f"density={density:g} (about {n_rows:.3g} ratings)",
        112.0 * n_rows + 8.0 * (_size(rank) + 2.0) * (n_u + n_i),  # the columns and their temporaries
        "use fewer users or items, a lower rank or a lower density",
    )
    rng = np.random.default_rng(seed)

    extra = max(0, round(density * n_users * n_items) - n_users * min_user_ratings)
    weight = rng.lognormal(0.0, activity_sigma, n_users)
    counts = min_user_ratings + np.floor(extra * weight / weight.sum()).astype(np.int64)
    counts = np.minimum(counts, n_items)
    popularity = np.arange(1, n_items + 1, dtype=np.float64) ** -popularity_exponent
    popularity = rng.permutation(popularity / popularity.sum())
    users = np.repeat(np.arange(n_users), counts)
    items = np.concatenate([rng.choice(n_items, size=count, replace=False, p=popularity) for count in counts])

    user_factors = rng.normal(0.0, 1.0, (n_users, rank))
    item_factors = rng.normal(0.0, 1.0, (n_items, rank))
    user_bias = rng.normal(0.0, 0.35, n_users)
    item_bias = rng.normal(0.0, 0.35, n_items)
    affinity = np.einsum("nk,nk->n", user_factors[users], item_factors[items]) / np.sqrt(rank)
    score = 3.5 + user_bias[users] + item_bias[items] + 0.8 * affinity
    score += rng.normal(0.0, noise, users.size)
    rating = np.clip(np.round(2.0 * score) / 2.0, 0.5, 5.0)

    order = rng.permutation(users.size)
    gaps = 1 + np.floor(rng.exponential(600.0, users.size)).astype(np.int64)
    return Ratings._adopt(
        user_id=users[order] + 1,
        item_id=items[order] + 1,
        rating=rating[order],
        timestamp=_MOVIELENS_START + np.cumsum(gaps),
    )


def synthetic_gowalla(
    n_users: int = 200,
    n_pois: int = 800,
    seed: int = 0,
    center: tuple[float, float] = (40.73, -73.99),
    *,
    n_clusters: int = 6,
    cluster_km: float = 2.0,
    city_km: float = 8.0,
    distance_km: float = 2.0,
    n_heavy_users: int = 5,
    median_checkins: int = 20,
) -> CheckIns:
    """Generate Gowalla-like check-ins in one city, with clustered POIs and local users.

    POIs: ``n_clusters`` Gaussian clusters (standard deviation ``cluster_km``) whose centres are
    spread around ``center`` with standard deviation ``city_km``; each POI gets a log-normal
    popularity. Users: each has a home near a POI drawn by popularity and checks in at POI ``j``
    with probability proportional to ``popularity[j] * exp(-distance(home, j) / distance_km)``.
    Activity is heavy-tailed: ``n_heavy_users`` users have 1801-2600 check-ins (so the budget
    paper's "users with more than 1800 check-ins" selects exactly them), the others about
    ``median_checkins`` (log-normal, at least 1, at most 1800). Check-in times are uniform over
    SNAP's crawl period (2009-02-01 .. 2010-10-24); rows are in time order. Coordinates are the
    POI's, as in SNAP.

    With the defaults: about 17,000 check-ins; every coordinate within about 40 km of
    ``center``; each user's check-ins spread over a much smaller area than the city's.

    Parameters
    ----------
    n_users : int, default 200
        Number of users (ids 0..n_users-1).
    n_pois : int, default 800
        Number of points of interest (location ids 0..n_pois-1).
    seed : int, default 0
        Seed of the generator; the same arguments give the same table.
    center : (float, float), default (40.73, -73.99)
        (latitude, longitude) of the city centre in degrees (default: Manhattan); latitude in
        [-80, 80].
    n_clusters : int, default 6
        Number of POI clusters (bounded by the memory limit, 64 bytes a cluster).
    cluster_km : float, default 2.0
        Standard deviation of POI positions around their cluster centre, in km, in [0, 20000].
    city_km : float, default 8.0
        Standard deviation of cluster centres around ``center``, in km, in [0, 20000].
    distance_km : float, default 2.0
        Distance scale of the users' preference for POIs near home, in km.
    n_heavy_users : int, default 5
        Number of users with more than 1800 check-ins (at most ``n_users``).
    median_checkins : int, default 20
        Median number of check-ins of the other users, in [1, 1800].

    Returns
    -------
    CheckIns
        The check-ins, in time order.
    """
    n_users = check_int("n_users", n_users, minimum=1)
    n_pois = check_int("n_pois", n_pois, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(center, tuple | list) or len(center) != 2:
        raise ValueError(f"center must be a (latitude, longitude) pair, got {summarize(center)}.")
    lat0 = check_float("center latitude", center[0], low=-80.0, high=80.0)
    lon0 = check_float("center longitude", center[1], low=-180.0, high=180.0)
    n_clusters = check_int("n_clusters", n_clusters, minimum=1)
    check_memory(
        f"n_clusters={summarize(n_clusters)} (about {_CLUSTER_BYTES:.0f} bytes a cluster)",
        _CLUSTER_BYTES * _size(n_clusters),
        "use fewer clusters",
    )
    cluster_km = check_float("cluster_km", cluster_km, low=0.0, high=MAX_SPREAD_KM)
    city_km = check_float("city_km", city_km, low=0.0, high=MAX_SPREAD_KM)
    distance_km = check_float("distance_km", distance_km, low=0.0, low_open=True)
    n_heavy_users = check_int("n_heavy_users", n_heavy_users, minimum=0)
    if n_heavy_users > n_users:
        raise ValueError(f"n_heavy_users must be at most n_users = {n_users}, got {summarize(n_heavy_users)}.")
    median_checkins = check_int("median_checkins", median_checkins, minimum=1)
    if median_checkins > MAX_MEDIAN_CHECKINS:
        raise ValueError(
            f"median_checkins must be an integer in [1, {MAX_MEDIAN_CHECKINS}] (the users other than the heavy "
            f"ones have at most {MAX_MEDIAN_CHECKINS} check-ins), got {summarize(median_checkins)}."
        )
    check_memory(
        f"n_users={summarize(n_users)} and n_pois={summarize(n_pois)} (a user × POI preference table, 40 bytes a pair)",
        40.0 * _size(n_users) * _size(n_pois)
        + 80.0 * 2600 * _size(n_heavy_users)
        + 80.0 * min(1800, 20 * median_checkins) * _size(n_users),
        "use fewer users or POIs",
    )
    rng = np.random.default_rng(seed)

    cluster_xy = rng.normal(0.0, city_km, (n_clusters, 2))
    cluster = rng.choice(n_clusters, size=n_pois, p=rng.dirichlet(np.full(n_clusters, 2.0)))
    poi_xy = cluster_xy[cluster] + rng.normal(0.0, cluster_km, (n_pois, 2))
    popularity = rng.lognormal(0.0, 1.0, n_pois)
    popularity /= popularity.sum()
    home_xy = poi_xy[rng.choice(n_pois, size=n_users, p=popularity)]
    home_xy = home_xy + rng.normal(0.0, 0.5, (n_users, 2))

    counts = np.minimum(1800, 1 + np.floor(rng.lognormal(np.log(median_checkins), 1.0, n_users)))
    counts = counts.astype(np.int64)
    heavy = rng.choice(n_users, size=n_heavy_users, replace=False)
    counts[heavy] = rng.integers(1801, 2601, size=n_heavy_users)

    distance = np.linalg.norm(home_xy[:, None, :] - poi_xy[None, :, :], axis=2)
    # Subtracting each user's nearest distance keeps exp() away from underflow in large cities.
    nearest = distance.min(axis=1, keepdims=True)
    preference = popularity * np.exp(-(distance - nearest) / distance_km)
    preference /= preference.sum(axis=1, keepdims=True)
    users = np.repeat(np.arange(n_users), counts)
    pois = np.concatenate([rng.choice(n_pois, size=count, p=preference[u]) for u, count in enumerate(counts)])
    times = rng.integers(_GOWALLA_START, _GOWALLA_END, size=users.size)
    order = np.lexsort((users, times))

    lat = np.clip(lat0 + poi_xy[:, 1] / _KM_PER_DEGREE, -90.0, 90.0)
    lon = lon0 + poi_xy[:, 0] / (_KM_PER_DEGREE * np.cos(np.radians(lat0)))
    lon = (lon + 180.0) % 360.0 - 180.0
    return CheckIns._adopt(
        user_id=users[order],
        timestamp=times[order],
        lat=lat[pois[order]],
        lon=lon[pois[order]],
        location_id=pois[order],
    )
