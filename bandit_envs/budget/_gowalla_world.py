"""The location scenario of the budget paper (§6.2): POIs, local metric frames, the pure transition.

Distances are planar in a local equirectangular frame (km). City-sized data (every POI within
``CITY_KM`` of the POIs' median, e.g. the NYC subset or the synthetic city) has one frame centred
on that median and one POI index shared by all users. Otherwise each user gets a frame centred on
their most visited location, and a POI index holding only the POIs within
``2 * recommend + valid`` km of their locations (R = 0 once the reported point is more than
``recommend + valid`` km from the truth, so no other POI can matter). A user's check-ins farther
than ``home_radius_km`` from their most visited location are left out (the env models one city).
Geometry is built once per scenario and user, and shared by every env.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bandit_envs._types import FloatArray, IntArray
from bandit_envs.budget._core import BudgetConfig, Oracle, monte_carlo_oracle
from bandit_envs.budget._envs import Instance
from bandit_envs.budget._geo import Grid, GridStack, build_grid
from bandit_envs.datasets import CheckIns
from bandit_envs.datasets.env_data import checkins_from, shared_scenario
from bandit_envs.privacy import EARTH_RADIUS_M, haversine_m
from bandit_envs.validation import check_float, check_int

KM_PER_DEGREE = math.pi * EARTH_RADIUS_M / 1000.0 / 180.0
#: Slack (km) added to the POI box so that rounding never drops a POI at the boundary.
_SLACK_KM = 0.01
#: Data whose POIs all lie within this distance (km) of their median share one frame.
CITY_KM = 150.0


@dataclass(frozen=True)
class UserGeometry:
    """One user's check-in locations and nearby POIs in the user's local frame (km).

    ``locations`` (J, 2) are the distinct locations checked in at, ``checkins`` (n,) the location
    index of each kept check-in, ``valid_counts`` (J,) the POIs within ``valid`` km of each location.
    """

    locations: FloatArray
    checkins: IntArray
    valid_counts: IntArray
    grid: Grid
    #: (lat, lon) of the frame's origin, in degrees.
    center: tuple[float, float]
    #: Check-ins left out for lying farther than ``home_radius_km`` from the most visited location.
    dropped: int


class GowallaScenario:
    """POIs (every distinct location of the table) and each user's check-ins, with per-user geometry."""

    def __init__(self, checkins: CheckIns) -> None:
        if len(checkins) == 0:
            raise ValueError("data must hold at least one check-in, got an empty CheckIns table.")
        poi_ids, first = np.unique(checkins.location_id, return_index=True)
        self.poi_lat = checkins.lat[first].copy()
        self.poi_lon = checkins.lon[first].copy()
        order = np.argsort(checkins.user_id, kind="stable")
        users = checkins.user_id[order]
        self.user_ids, starts, self.counts = np.unique(users, return_index=True, return_counts=True)
        self._starts = starts
        self._poi_of_row = np.searchsorted(poi_ids, checkins.location_id[order])
        self.n_pois = int(poi_ids.size)
        lat_c, lon_c = float(np.median(self.poi_lat)), float(np.median(self.poi_lon))
        spread = float(haversine_m(lat_c, lon_c, self.poi_lat, self.poi_lon).max()) / 1000.0
        #: Centre of the shared frame of city-sized data, or None (one frame per user).
        self.city_center = (lat_c, lon_c) if spread <= CITY_KM else None
        self._city_grids: dict[tuple[float, float], Grid] = {}
        self._geometry: dict[tuple[Any, ...], UserGeometry] = {}
        #: Oracles computed for this scenario, by (user, settings).
        self.oracles: dict[tuple[Any, ...], Oracle] = {}

    def user_pois(self, user: int, name: str = "user") -> IntArray:
        """POI index of each check-in of ``user`` (``name``: the argument it was given by, for the error)."""
        i = int(np.searchsorted(self.user_ids, user))
        if i >= self.user_ids.size or self.user_ids[i] != user:
            raise ValueError(f"{name}={user!r} has no check-in in the data ({self.user_ids.size} users have).")
        return self._poi_of_row[self._starts[i] : self._starts[i] + self.counts[i]]

    def geometry(self, user: int, recommend_km: float, valid_km: float, home_km: float) -> UserGeometry:
        """The user's :class:`UserGeometry` (cached)."""
        key = (user, recommend_km, valid_km, home_km)
        if key not in self._geometry:
            self._geometry[key] = self._build_geometry(user, recommend_km, valid_km, home_km)
        return self._geometry[key]

    def _build_geometry(self, user: int, recommend_km: float, valid_km: float, home_km: float) -> UserGeometry:
        pois = self.user_pois(user)
        visited, visits = np.unique(pois, return_counts=True)
        home = int(visited[np.argmax(visits)])
        distance = haversine_m(self.poi_lat[home], self.poi_lon[home], self.poi_lat[pois], self.poi_lon[pois])
        kept = pois[distance / 1000.0 <= home_km]
        places, checkins = np.unique(kept, return_inverse=True)
        # Thin cells (width/height 1/4) measured fastest on the NYC data; results do not depend on them.
        size = max(recommend_km, valid_km)
        cell = (size / 60.0, size / 15.0)
        if self.city_center is not None:
            lat0, lon0 = self.city_center
            locations = self._project(places, lat0, lon0)
            if cell not in self._city_grids:
                xy = self._project(np.arange(self.n_pois), lat0, lon0)
                self._city_grids[cell] = build_grid(xy, xy.min(axis=0), xy.max(axis=0), cell)
            grid = self._city_grids[cell]
        else:
            lat0, lon0 = float(self.poi_lat[home]), float(self.poi_lon[home])
            locations = self._project(places, lat0, lon0)
            margin = 2.0 * recommend_km + valid_km + _SLACK_KM
            lower, upper = locations.min(axis=0) - margin, locations.max(axis=0) + margin
            # Preselect POIs by latitude (cheap on the whole SNAP file), then project only those.
            lat_pad = max(abs(lower[1]), abs(upper[1])) / KM_PER_DEGREE + 0.01
            candidates = np.flatnonzero(np.abs(self.poi_lat - lat0) <= lat_pad)
            grid = build_grid(self._project(candidates, lat0, lon0), lower, upper, cell)
        valid_counts = GridStack.of([grid]).count(np.zeros(places.size, dtype=np.int64), locations, valid_km)
        dropped = int(pois.size - kept.size)
        return UserGeometry(locations, checkins.astype(np.int64), valid_counts, grid, (lat0, lon0), dropped)

    def _project(self, index: IntArray, lat0: float, lon0: float) -> FloatArray:
        """Local equirectangular coordinates (km) of POIs ``index`` around (lat0, lon0)."""
        dlon = (self.poi_lon[index] - lon0 + 180.0) % 360.0 - 180.0
        x = dlon * KM_PER_DEGREE * math.cos(math.radians(lat0))
        y = (self.poi_lat[index] - lat0) * KM_PER_DEGREE
        return np.stack([x, y], axis=1)

    def eligible(self, min_checkins: int) -> IntArray:
        """Users with at least ``min_checkins`` check-ins."""
        return self.user_ids[self.counts >= min_checkins]


def gowalla_scenario(data: Any = None) -> GowallaScenario:
    """The shared :class:`GowallaScenario` of ``data`` (None, a dataset name, a path, or a CheckIns table)."""
    table = checkins_from(data)
    return shared_scenario(table, ("gowalla",), lambda: GowallaScenario(table))


@dataclass(frozen=True)
class GowallaWorld:
    """The users of a batch and the pure transition of §6.2 (one step of every copy).

    Per-user arrays are concatenated: the state is a row of ``locations``; ``first_checkin[u]`` and
    ``n_checkins[u]`` slice user u's ``checkins``; user u's POIs are grid ``grid_of_user[u]``. Noise
    columns: 0 and 1 the radius (Gamma(2) as a sum of two exponentials), 2 the angle, 3 the next
    check-in.
    """

    locations: FloatArray
    valid_counts: IntArray
    checkins: IntArray
    first_checkin: IntArray
    n_checkins: IntArray
    grids: GridStack
    grid_of_user: IntArray
    epsilon_unit_km: float
    recommend_km: float
    valid_km: float
    loss_scale_km: float
    n_noise: ClassVar[int] = 4

    @classmethod
    def of(cls, geometries: list[UserGeometry], **settings: float) -> GowallaWorld:
        """Concatenate the users' geometries."""
        loc_offsets = np.cumsum([0] + [g.locations.shape[0] for g in geometries])
        sizes = np.array([g.checkins.size for g in geometries], dtype=np.int64)
        grids: list[Grid] = []
        for g in geometries:
            if not any(g.grid is known for known in grids):
                grids.append(g.grid)
        return cls(
            np.concatenate([g.locations for g in geometries]),
            np.concatenate([g.valid_counts for g in geometries]),
            np.concatenate([g.checkins + off for g, off in zip(geometries, loc_offsets[:-1], strict=True)]),
            np.cumsum(sizes) - sizes,
            sizes,
            GridStack.of(grids),
            np.array([next(i for i, known in enumerate(grids) if g.grid is known) for g in geometries]),
            **settings,
        )

    def _checkin(self, who: IntArray, uniform: FloatArray) -> IntArray:
        n = self.n_checkins[who]
        return self.checkins[self.first_checkin[who] + np.minimum((uniform * n).astype(np.int64), n - 1)]

    def start(self, who: IntArray, noise: FloatArray) -> IntArray:
        """The first datum: a uniformly random check-in of the user."""
        return self._checkin(who, noise[:, 3])

    def step(
        self, who: IntArray, state: IntArray, epsilon: FloatArray, noise: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray, dict[str, Any]]:
        """Perturb the location ``state`` by planar Laplace, recommend by radius, score (see the env docstring)."""
        # Planar Laplace (Andrés et al. 2013): radius ~ Gamma(2, unit/eps) km, angle uniform.
        radius = -(np.log1p(-noise[:, 0]) + np.log1p(-noise[:, 1])) * (self.epsilon_unit_km / epsilon)
        angle = 2.0 * math.pi * noise[:, 2]
        truth = self.locations[state]
        reported = truth + radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
        reward = np.zeros(state.shape[0])
        grid = self.grid_of_user[who]
        near = np.flatnonzero(radius <= self.recommend_km + self.valid_km)
        if near.size:
            # |S ∩ C|: all of C when the valid disk lies inside the recommended one, else counted.
            hits = self.valid_counts[state[near]]
            crossing = radius[near] > self.recommend_km - self.valid_km
            if crossing.any():
                c = near[crossing]
                hits[crossing] = self.grids.count(grid[c], truth[c], self.valid_km, reported[c], self.recommend_km)
            some = hits > 0
            s = near[some]
            recommended = self.grids.count(grid[s], reported[s], self.recommend_km)
            reward[s] = np.minimum(hits[some] / recommended, 1.0)
        loss_factor = np.exp(-radius / self.loss_scale_km)
        return self._checkin(who, noise[:, 3]), reward, loss_factor, {"displacement_km": radius}

    def burn_in(self, budgets: FloatArray) -> int:
        """Rounds are i.i.d. (a fresh random check-in each round): no burn-in."""
        return 0


#: The largest radius in km the Gowalla env takes: half the Earth's circumference, the greatest
#: distance between two points on it.
MAX_DISTANCE_KM = 20_037.5


@dataclass(frozen=True, kw_only=True)
class GowallaBudgetConfig(BudgetConfig):
    """Every keyword of ``PrivacyBudgetGowalla-v0``, validated (see the env's docstring for their meaning)."""

    epsilon_unit_km: float = 1.0
    recommend_radius_km: float = 3.0
    valid_radius_km: float = 1.0
    loss_scale_km: float = 1.0
    home_radius_km: float = 50.0
    min_user_checkins: int = 800

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("epsilon_unit_km", "loss_scale_km"):
            self._set(name, check_float(name, getattr(self, name), low=0.0, low_open=True))
        # Radii are distances between points on the Earth: none exceeds MAX_DISTANCE_KM (and a larger
        # one would overflow the squared distances of the grid counts, scoring every report 1).
        for name in ("recommend_radius_km", "valid_radius_km"):
            self._set(name, check_float(name, getattr(self, name), low=0.0, high=MAX_DISTANCE_KM, low_open=True))
        self._set("home_radius_km", check_float("home_radius_km", self.home_radius_km, low=0.0, high=MAX_DISTANCE_KM))
        self._set("min_user_checkins", check_int("min_user_checkins", self.min_user_checkins, minimum=1))

    def world_settings(self) -> dict[str, float]:
        """The keyword arguments of :meth:`GowallaWorld.of` besides the geometries."""
        return {
            "epsilon_unit_km": self.epsilon_unit_km,
            "recommend_km": self.recommend_radius_km,
            "valid_km": self.valid_radius_km,
            "loss_scale_km": self.loss_scale_km,
        }


def gowalla_instance(config: GowallaBudgetConfig, users: list[Any], names: list[str]) -> tuple[Instance, IntArray]:
    """Build the instance of ``config`` for ``users`` (one entry per copy; None = drawn from ``instance_seed``)."""
    grid = config.budget_grid
    settings = config.world_settings()
    home_km, min_checkins = config.home_radius_km, config.min_user_checkins
    seed, samples, o_seed = config.instance_seed, config.oracle_samples, config.oracle_seed
    scenario = gowalla_scenario(config.data)
    eligible = scenario.eligible(min_checkins)
    if eligible.size == 0:
        raise ValueError(
            f"no user of the data has >= min_user_checkins={min_checkins} check-ins "
            f"(the most active has {scenario.counts.max()}); lower min_user_checkins."
        )
    chosen = [_check_user(scenario, u, eligible, seed, min_checkins, n) for u, n in zip(users, names, strict=True)]
    distinct, who = np.unique(np.array(chosen, dtype=np.int64), return_inverse=True)
    geo = [scenario.geometry(int(u), settings["recommend_km"], settings["valid_km"], home_km) for u in distinct]
    oracles = []
    for u, g in zip(distinct, geo, strict=True):
        key = (int(u), tuple(grid.tolist()), home_km, *settings.values(), samples, o_seed)
        if key not in scenario.oracles:
            scenario.oracles[key] = monte_carlo_oracle(GowallaWorld.of([g], **settings), grid, samples, o_seed)
        oracles.append(scenario.oracles[key])
    levels = np.array([config.sensitivity.user_level(seed, int(u)) for u in distinct])
    world = GowallaWorld.of(geo, **settings)
    return Instance(world, distinct, tuple(oracles), levels, grid, config.sensitivity), who.astype(np.int64)


def _check_user(
    scenario: GowallaScenario, user: Any, eligible: IntArray, seed: int, min_checkins: int, name: str
) -> int:
    if user is None:
        return int(eligible[np.random.default_rng(seed).integers(eligible.size)])
    u = check_int(name, user)
    n = scenario.user_pois(u, name).size
    if n < min_checkins:
        raise ValueError(
            f"{name}={user!r} has {n} check-ins, fewer than min_user_checkins={min_checkins} "
            f"({eligible.size} users qualify)."
        )
    return u
