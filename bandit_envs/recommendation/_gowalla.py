"""The Gowalla instance: eligible users, the visit matrix and its factors, nearest-POI candidate sets."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import svds
from scipy.spatial import cKDTree

from bandit_envs._types import FloatArray, IntArray
from bandit_envs.datasets import CheckIns
from bandit_envs.datasets.env_data import checkins_from, shared_scenario
from bandit_envs.recommendation._problem import Problem, uniform_index
from bandit_envs.validation import check_choice, check_float, check_int, check_memory

REWARDS = ("log_visits", "visited")
EARTH_RADIUS_KM = 6371.0088


class GowallaProblem(Problem):
    """Contexts are the distinct (user, POI) pairs of the eligible users' check-ins.

    A round's context is drawn as: a uniformly random eligible user, then one of that user's
    check-ins uniformly (so a pair's probability is proportional to its check-in count). Its arms
    are the ``n_arms`` POIs nearest to the pair's POI (that POI itself excluded).

    Attributes: ``user_factors`` (n_users, rank) and ``poi_factors`` (n_pois, rank): U and V of the
    rank-``rank`` truncated SVD of the eligible users' visit matrix M ≈ U diag(s) V^T (``s``);
    ``candidates`` (n_contexts, n_arms) POI indices; ``distances_km`` (n_contexts, n_arms);
    ``context_user``, ``context_poi``: the pair of each context (indices); ``user_ids``,
    ``location_ids``: the data's ids of users and POIs.
    """

    n_uniforms = 2

    def __init__(self, checkins: CheckIns, n_arms: int, rank: int, min_user_checkins: int, reward: str,
                 distance_km: float | None) -> None:  # fmt: skip
        ids, counts = np.unique(checkins.user_id, return_counts=True)
        rows = np.isin(checkins.user_id, ids[counts >= min_user_checkins])
        user_ids, users = np.unique(checkins.user_id[rows], return_inverse=True)
        self.location_ids, pois = np.unique(checkins.location_id[rows], return_inverse=True)
        n_users, n_pois = user_ids.size, self.location_ids.size
        if min(n_users, n_pois) <= rank or n_pois <= n_arms:
            raise ValueError(
                f"the {n_users} users with >= min_user_checkins={min_user_checkins} check-ins visit {n_pois} POIs, "
                f"too few for rank={rank} (needs more users and POIs than rank) and n_arms={n_arms} (needs more "
                "POIs than n_arms); lower them or min_user_checkins."
            )
        # Distinct (user, POI) pairs in user-major order are the contexts; their check-in counts weight them.
        keys, visits = np.unique(users * np.int64(n_pois) + pois, return_counts=True)
        _check_size(keys.size, n_users, n_pois, n_arms, rank)
        self.context_user, self.context_poi = keys // n_pois, keys % n_pois
        self._keys = keys
        self._cumulative = np.cumsum(visits)
        self._user_total = np.bincount(self.context_user, weights=visits, minlength=n_users).astype(np.int64)
        self._user_start = np.cumsum(self._user_total) - self._user_total
        value = _visit_value(visits, self.context_user, n_users, reward)
        matrix = sparse.csr_array((value, (self.context_user, self.context_poi)), shape=(n_users, n_pois))
        self.user_factors, self.s, self.poi_factors = _factors(matrix, rank)
        poi_candidates, poi_distances = _nearest(checkins.lat[rows], checkins.lon[rows], pois, n_pois, n_arms)
        self.candidates = poi_candidates[self.context_poi]
        self.distances_km = poi_distances[self.context_poi]
        self.distance_km = distance_km
        # A candidate's reward is the user's value of it: look the pair up among the sorted keys.
        wanted = self.context_user[:, None] * np.int64(n_pois) + self.candidates
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        super().__init__(np.where(keys[at] == wanted, value[at], 0.0))
        self.dim = rank + (distance_km is not None)
        self.user_ids = user_ids[self.context_user]
        for arr in (self.user_factors, self.poi_factors, self.s, self.candidates, self.distances_km,
                    self.context_user, self.context_poi, self.user_ids, self.location_ids):  # fmt: skip
            arr.setflags(write=False)

    def features_of(self, contexts: Any) -> FloatArray:
        """Features U_user ⊙ V_poi of the candidates; with ``distance_km``, [U ⊙ V, exp(-km / distance_km)] / √2."""
        product = (
            self.user_factors[self.context_user[contexts]][..., None, :] * self.poi_factors[self.candidates[contexts]]
        )
        if self.distance_km is None:
            return product
        closeness = np.exp(-self.distances_km[contexts] / self.distance_km)[..., None]
        return np.concatenate([product, closeness], axis=-1) / math.sqrt(2.0)

    def contexts(self, uniforms: FloatArray) -> IntArray:
        """A uniform eligible user (first column), then one of their check-ins uniformly (second)."""
        user = uniform_index(uniforms[:, 0], self._user_total.size)
        checkin = self._user_start[user] + uniform_index(uniforms[:, 1], self._user_total[user])
        return np.searchsorted(self._cumulative, checkin, side="right")

    def round_info(self, contexts: Any) -> dict[str, Any]:
        """The user, the POI of the current check-in and the arms' POIs (the data's ids)."""
        return {
            "user_id": self.user_ids[contexts],
            "location_id": self.location_ids[self.context_poi[contexts]],
            "candidate_ids": self.location_ids[self.candidates[contexts]],
        }

    def static_info(self) -> dict[str, Any]:
        """Rewards lie in [0, 1] by construction: nothing is clipped."""
        return {"n_clipped": 0}


def _check_size(n_contexts: int, n_users: int, n_pois: int, n_arms: int, rank: int) -> None:
    """Refuse ``n_arms`` and ``rank`` whose tables would exceed the memory limit (before they are built).

    Per (context, arm): the candidates, their distances and rewards and the lookups building them
    (64 bytes); per (POI, arm): the nearest-neighbour query (48 bytes); the truncated SVD of the
    (user, POI) matrix: 32 bytes per (row or column, 2·rank + 1).
    """
    nbytes = 64.0 * n_contexts * n_arms + 48.0 * n_pois * (n_arms + 1) + 32.0 * (n_users + n_pois) * (2 * rank + 1)
    check_memory(
        f"n_arms={n_arms} with rank={rank} ({n_contexts} contexts, {n_users} users and {n_pois} POIs)",
        nbytes,
        "use fewer arms, a lower rank or fewer users (min_user_checkins)",
    )


def _visit_value(visits: IntArray, user: IntArray, n_users: int, reward: str) -> FloatArray:
    """log(1 + c) / log(1 + the user's largest c) ("log_visits"), or 1 ("visited"), per visited pair."""
    if reward == "visited":
        return np.ones(visits.size)
    top = np.zeros(n_users, dtype=np.int64)
    np.maximum.at(top, user, visits)
    return np.log1p(visits) / np.log1p(top[user])


def _factors(matrix: sparse.csr_array, rank: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """U, s, V of the rank-``rank`` truncated SVD (ARPACK from a fixed start vector: deterministic).

    Rows of U and V are rescaled to norm / entries <= 1 (a no-op up to rounding), so every
    ‖U_u ⊙ V_p‖ <= ‖U_u‖ max_k |V_pk| <= 1.
    """
    u, s, vh = svds(matrix, k=rank, v0=np.ones(min(matrix.shape)))
    order = np.argsort(-s)
    u, s, v = u[:, order], s[order], vh[order].T
    u = u / max(1.0, float(np.linalg.norm(u, axis=1).max()))
    v = v / max(1.0, float(np.abs(v).max()))
    return np.ascontiguousarray(u), s, np.ascontiguousarray(v)


def _nearest(lat: FloatArray, lon: FloatArray, poi: IntArray, n_pois: int, n_arms: int) -> tuple[IntArray, FloatArray]:
    """For every POI the ``n_arms`` nearest other POIs and their great-circle distances in km.

    A POI's position is the mean of its check-ins' coordinates. Neighbours are found on the unit
    sphere (chord length orders like great-circle distance), so any region works, the whole world too.
    """
    count = np.bincount(poi, minlength=n_pois)
    phi = np.radians(np.bincount(poi, weights=lat, minlength=n_pois) / count)
    lam = np.radians(np.bincount(poi, weights=lon, minlength=n_pois) / count)
    xyz = np.column_stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)])
    chord, index = cKDTree(xyz).query(xyz, k=n_arms + 1)
    # Drop each POI from its own list (other POIs may share its coordinates and come first).
    own = index == np.arange(n_pois)[:, None]
    own[~own.any(axis=1), -1] = True
    keep = ~own
    index = index[keep].reshape(n_pois, n_arms)
    km = 2.0 * EARTH_RADIUS_KM * np.arcsin(np.minimum(chord[keep].reshape(n_pois, n_arms) / 2.0, 1.0))
    return index.astype(np.int64), km


def gowalla_problem(data: Any, n_arms: Any, rank: Any, min_user_checkins: Any, reward: Any, distance_km: Any,
                    instance_seed: Any) -> GowallaProblem:  # fmt: skip
    """Validate the arguments and return the (cached) instance for ``data``."""
    n_arms = check_int("n_arms", n_arms, minimum=2)
    rank = check_int("rank", rank, minimum=1)
    min_user_checkins = check_int("min_user_checkins", min_user_checkins, minimum=1)
    check_choice("reward", reward, REWARDS)
    if distance_km is not None:
        distance_km = check_float("distance_km", distance_km, low=0.0, low_open=True)
    check_int("instance_seed", instance_seed, minimum=0)  # accepted for the common interface: nothing is random
    table = checkins_from(data)
    key = ("recommendation", n_arms, rank, min_user_checkins, reward, distance_km)
    return shared_scenario(
        table, key, lambda: GowallaProblem(table, n_arms, rank, min_user_checkins, reward, distance_km)
    )
