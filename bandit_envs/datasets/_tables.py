"""Typed tables: ratings (MovieLens schema) and check-ins (Gowalla schema).

A table is a frozen dataclass of equal-length, read-only 1-D numpy arrays, one per column, so
that a loaded file, a synthetic dataset and a filtered subset all have the same type. Columns are
checked (types, finite values in range) and are the table's own: later edits of the arrays a
caller passed in change nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt
from scipy import sparse

from bandit_envs.validation import check_float, masked_array, summarize

T = TypeVar("T", bound="_Table")


def _refuse_outside(name: str, column: np.ndarray, inside: np.ndarray, allowed: str) -> None:
    """Refuse ``column`` unless every entry is ``inside``, quoting the first that is not."""
    if not inside.all():
        i = int(np.argmin(inside))
        raise ValueError(f"{name} must hold {allowed}, got {name}[{i}] = {summarize(column[i].item())}.")


class _Table:
    """Column checks and row selection shared by :class:`Ratings` and :class:`CheckIns`.

    Each column is checked as it is given: a 1-D array of integers (an ``"int"`` column, whose
    values must fit in int64) or of real numbers (a ``"float"`` column, whose values must be finite
    and in the range of :attr:`_ranges`); a masked array (``numpy.ma``) is refused, as numpy would
    read its masked entries as values. A column is stored as a read-only int64 or float64 array
    of its own: an array the caller may still write to is copied, so later edits of it change
    nothing. A read-only array that owns its memory (a loader's, a generator's, another table's
    column) is kept as it is, without a copy.
    """

    _kinds: ClassVar[dict[str, str]]  # column name -> "int" or "float"
    #: Per float column, (low, high, low_open): the interval its values must lie in, besides being finite.
    _ranges: ClassVar[dict[str, tuple[float, float, bool]]] = {}
    user_id: np.ndarray

    def __post_init__(self) -> None:
        n_rows = None
        for name, kind in self._kinds.items():
            given = getattr(self, name)
            if isinstance(given, np.ma.MaskedArray):
                raise TypeError(f"{name} must be a 1-D array, got {masked_array(given)}.")
            arr = np.asarray(given)
            if arr.ndim != 1:
                raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}.")
            if kind == "int" and arr.size and arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}.")
            if kind == "float" and arr.size and arr.dtype.kind not in "iuf":
                raise TypeError(f"{name} must be a real-valued array, got dtype {arr.dtype}.")
            if n_rows is not None and arr.shape[0] != n_rows:
                raise ValueError(
                    f"all columns must have the same length, but {name} has {arr.shape[0]} rows "
                    f"and the columns before it have {n_rows}."
                )
            n_rows = arr.shape[0]
            if arr.size and arr.dtype.kind == "u" and arr.dtype.itemsize == 8:  # int64 would wrap them
                _refuse_outside(name, arr, arr <= np.iinfo(np.int64).max, "integers below 2**63")
            if kind == "float" and arr.size:
                low, high, low_open = self._ranges.get(name, (-np.inf, np.inf, False))
                with np.errstate(invalid="ignore"):
                    inside = np.isfinite(arr) & (arr > low if low_open else arr >= low) & (arr <= high)
                interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
                what = "finite numbers" if np.isinf(low) and np.isinf(high) else f"finite numbers in {interval}"
                _refuse_outside(name, arr, inside, what)
            dtype = np.int64 if kind == "int" else np.float64
            if arr.dtype == dtype and arr.base is None and not arr.flags.writeable:
                col = arr  # owned and read-only: nobody can change it under the table
            else:
                col = np.array(arr, dtype=dtype, copy=True)
                col.flags.writeable = False
            object.__setattr__(self, name, col)

    @classmethod
    def _adopt(cls: type[T], **columns: np.ndarray) -> T:
        """The table of arrays that nothing else holds (a loader's or an index's fresh results), without copies.

        The arrays are made read-only and kept as they are (see the class docstring).
        """
        for arr in columns.values():
            if isinstance(arr, np.ndarray) and arr.base is None:
                arr.flags.writeable = False
        return cls(**columns)

    def __len__(self) -> int:
        return int(self.user_id.shape[0])

    @property
    def n_users(self) -> int:
        """Number of distinct users."""
        return int(np.unique(self.user_id).size)

    def subset(self: T, rows: npt.ArrayLike) -> T:
        """Return the table restricted to ``rows`` (a boolean mask or integer indices)."""
        index = np.asarray(rows)
        if index.dtype == bool and index.shape != (len(self),):
            raise ValueError(f"rows must be a boolean mask of length {len(self)}, got shape {index.shape}.")
        return type(self)._adopt(**{name: getattr(self, name)[index] for name in self._kinds})


@dataclass(frozen=True, eq=False)  # eq=False: == on numpy columns has no single truth value
class Ratings(_Table):
    """Explicit ratings, one row per (user, item) rating, in the MovieLens schema.

    Parameters
    ----------
    user_id : ndarray of int64, shape (n,)
        User id as in the source (MovieLens ids start at 1).
    item_id : ndarray of int64, shape (n,)
        Item (movie) id as in the source; ids need not be contiguous.
    rating : ndarray of float64, shape (n,)
        The rating (1..5 stars, or 0.5..5 in half stars, depending on the dataset): a finite
        number > 0, as :meth:`matrix` reads an implicit zero as "not rated".
    timestamp : ndarray of int64, shape (n,)
        Unix time of the rating in seconds.
    """

    _kinds: ClassVar[dict[str, str]] = {
        "user_id": "int",
        "item_id": "int",
        "rating": "float",
        "timestamp": "int",
    }
    #: A rating is a positive number of stars: :meth:`matrix` reads an implicit zero as "not rated".
    _ranges: ClassVar[dict[str, tuple[float, float, bool]]] = {"rating": (0.0, np.inf, True)}
    user_id: np.ndarray
    item_id: np.ndarray
    rating: np.ndarray
    timestamp: np.ndarray

    @property
    def n_items(self) -> int:
        """Number of distinct rated items."""
        return int(np.unique(self.item_id).size)

    @overload
    def matrix(self, *, dense: Literal[False] = False) -> tuple[sparse.csr_array, np.ndarray, np.ndarray]: ...

    @overload
    def matrix(self, *, dense: Literal[True]) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def matrix(self, *, dense: bool = False) -> tuple[sparse.csr_array | np.ndarray, np.ndarray, np.ndarray]:
        """Return the user x item rating matrix with contiguous indices and the id maps.

        Parameters
        ----------
        dense : bool, default False
            If False, return a ``scipy.sparse.csr_array`` whose stored entries are the ratings
            (ratings are positive, so an implicit zero means "not rated"). If True, return a
            float64 ndarray with ``nan`` where a user did not rate an item.

        Returns
        -------
        matrix : scipy.sparse.csr_array or ndarray, shape (n_users, n_items)
            ``matrix[u, i]`` is the rating of user ``user_ids[u]`` for item ``item_ids[i]``.
        user_ids : ndarray of int64, shape (n_users,)
            Sorted original user ids: row ``u`` belongs to user ``user_ids[u]``.
        item_ids : ndarray of int64, shape (n_items,)
            Sorted original item ids: column ``i`` belongs to item ``item_ids[i]``.

        Raises
        ------
        ValueError
            If a (user, item) pair is rated more than once.
        """
        user_ids, rows = np.unique(self.user_id, return_inverse=True)
        item_ids, cols = np.unique(self.item_id, return_inverse=True)
        shape = (user_ids.size, item_ids.size)
        n_pairs = np.unique(rows * np.int64(shape[1]) + cols).size
        if n_pairs != len(self):
            raise ValueError(
                f"the ratings hold {len(self) - n_pairs} repeated (user, item) pairs, so they do "
                "not form a matrix; keep one rating per pair first."
            )
        if dense:
            out = np.full(shape, np.nan)
            out[rows, cols] = self.rating
            return out, user_ids, item_ids
        return sparse.csr_array((self.rating, (rows, cols)), shape=shape), user_ids, item_ids


@dataclass(frozen=True)
class BBox:
    """A latitude/longitude bounding box in degrees (WGS84), bounds included.

    Parameters
    ----------
    lat_min, lat_max : float
        Southern and northern bounds, in [-90, 90] with ``lat_min < lat_max``.
    lon_min, lon_max : float
        Western and eastern bounds, in [-180, 180] with ``lon_min < lon_max`` (boxes across
        the antimeridian are not supported).
    """

    lat_min: float
    lat_max: float
    lon_min: float
    lon_max: float

    def __post_init__(self) -> None:
        limits = {"lat_min": 90.0, "lat_max": 90.0, "lon_min": 180.0, "lon_max": 180.0}
        for name, limit in limits.items():
            check_float(name, getattr(self, name), low=-limit, high=limit)
        if not (self.lat_min < self.lat_max and self.lon_min < self.lon_max):
            raise ValueError(
                "a bounding box needs lat_min < lat_max and lon_min < lon_max, got "
                f"(lat_min, lat_max, lon_min, lon_max) = {dataclasses.astuple(self)}."
            )

    def contains(self, lat: npt.ArrayLike, lon: npt.ArrayLike) -> np.ndarray:
        """Return a boolean array, True where (lat, lon) lies inside the box."""
        lat, lon = np.asarray(lat), np.asarray(lon)
        return (lat >= self.lat_min) & (lat <= self.lat_max) & (lon >= self.lon_min) & (lon <= self.lon_max)


NYC_BBOX = BBox(lat_min=40.4774, lat_max=40.9176, lon_min=-74.2591, lon_max=-73.7004)
"""The usual bounding box of New York City's five boroughs."""


@dataclass(frozen=True, eq=False)
class CheckIns(_Table):
    """Location check-ins, one row per visit, in the SNAP Gowalla schema.

    Parameters
    ----------
    user_id : ndarray of int64, shape (n,)
        User id as in the source (SNAP ids start at 0).
    timestamp : ndarray of int64, shape (n,)
        Unix time of the check-in in seconds (UTC).
    lat, lon : ndarray of float64, shape (n,)
        Coordinates of the location in degrees: latitudes in [-90, 90], longitudes in
        [-180, 180].
    location_id : ndarray of int64, shape (n,)
        Id of the point of interest checked in at.
    """

    _kinds: ClassVar[dict[str, str]] = {
        "user_id": "int",
        "timestamp": "int",
        "lat": "float",
        "lon": "float",
        "location_id": "int",
    }
    _ranges: ClassVar[dict[str, tuple[float, float, bool]]] = {
        "lat": (-90.0, 90.0, False),
        "lon": (-180.0, 180.0, False),
    }
    user_id: np.ndarray
    timestamp: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    location_id: np.ndarray

    @property
    def n_locations(self) -> int:
        """Number of distinct locations."""
        return int(np.unique(self.location_id).size)

    def within(self, bbox: BBox) -> CheckIns:
        """Return the check-ins whose coordinates lie inside ``bbox``."""
        return self.subset(bbox.contains(self.lat, self.lon))
