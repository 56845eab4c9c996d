"""Exact point counts in disks (and in intersections of two disks) over a uniform grid.

The Gowalla budget env needs, every step and for every copy, the number of POIs within 3 km of
a reported location (thousands of POIs in Manhattan). ``scipy.spatial.cKDTree`` answers that by
visiting every point inside the disk (16 ms for 400 queries on the NYC data); this index answers
it in time proportional to the disk's rows plus the points near its boundary: points are sorted by
grid cell (row-major), so the cells of one grid row that lie entirely inside the disk are one
contiguous slice whose size is a difference of two offsets, and only the points of the cells the
circle crosses are tested one by one. Counts are exact (the cell size changes speed, never results).

Several grids (one per local km frame: one for a city-sized dataset, else one per user) are
concatenated so that one compiled call serves a whole batch of copies. A query costs about a
microsecond, so a call runs its queries in parallel on numba's threads only when there are at least
:data:`PARALLEL_MIN_QUERIES` of them (about a millisecond of work, which pays for waking the
threads) and more than one core is free at that moment (:func:`bandit_envs._parallel.free_cores`),
on that many threads; else serially, in the calling thread (a single env's step asks one or two
queries: a parallel call there cost it 38 times more CPU on a busy machine). Results are the same
either way; :func:`count_reference` is the plain-numpy reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from bandit_envs._jit import kernel_array, njit
from bandit_envs._parallel import free_cores

#: Upper bound on the cells of one grid; the cell size grows beyond it (speed only).
MAX_CELLS = 2_000_000
#: Fewest queries of one call that run in parallel (about 1 us each: ~1 ms of work; fewer run serially).
PARALLEL_MIN_QUERIES = 1000


@dataclass(frozen=True)
class Grid:
    """Points of one local frame sorted by the cell of a uniform grid of ``cell = (width, height)`` cells.

    Points of cell ``(row, col)`` are ``x[cell_start[row * nx + col] : cell_start[row * nx + col + 1]]``;
    ``origin`` is the lower-left corner of cell (0, 0) and ``shape`` is ``(nx, ny)``.
    """

    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    cell_start: npt.NDArray[np.int32]
    origin: tuple[float, float]
    cell: tuple[float, float]
    shape: tuple[int, int]


def build_grid(
    xy: npt.NDArray[np.float64], lower: npt.ArrayLike, upper: npt.ArrayLike, cell: tuple[float, float]
) -> Grid:
    """Index the points ``xy`` (n, 2) lying in the box [lower, upper] (points outside are dropped).

    Thin cells (width much below height) work best: a disk's rows cost O(1) each, and only the
    points of the few cells its circle crosses are tested.
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    size = np.asarray(cell, dtype=np.float64)
    extent = np.maximum(hi - lo, size)
    size = size * max(1.0, math.sqrt(float(np.prod(extent / size)) / MAX_CELLS))
    nx, ny = (int(v) for v in np.ceil(extent / size).astype(np.int64))
    inside = np.all((xy >= lo) & (xy <= hi), axis=1)
    pts = xy[inside]
    col = np.minimum(((pts[:, 0] - lo[0]) / size[0]).astype(np.int64), nx - 1)
    row = np.minimum(((pts[:, 1] - lo[1]) / size[1]).astype(np.int64), ny - 1)
    flat = row * nx + col
    order = np.argsort(flat, kind="stable")
    cell_start = np.searchsorted(flat[order], np.arange(nx * ny + 1)).astype(np.int32)
    return Grid(
        np.ascontiguousarray(pts[order, 0]),
        np.ascontiguousarray(pts[order, 1]),
        cell_start,
        (float(lo[0]), float(lo[1])),
        (float(size[0]), float(size[1])),
        (nx, ny),
    )


@dataclass(frozen=True)
class GridStack:
    """Several :class:`Grid` concatenated for the compiled counter; grid ``g`` serves queries with ``who == g``."""

    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    cell_start: npt.NDArray[np.int32]
    geometry: npt.NDArray[np.float64]  # (G, 4): origin x, origin y, cell width, cell height
    layout: npt.NDArray[np.int64]  # (G, 3): nx, ny, offset of the grid's cells in cell_start

    @classmethod
    def of(cls, grids: Sequence[Grid]) -> GridStack:
        """Concatenate ``grids``."""
        point_offsets = np.cumsum([0] + [g.x.size for g in grids])
        cell_offsets = np.cumsum([0] + [g.cell_start.size for g in grids])
        return cls(
            np.concatenate([g.x for g in grids]),
            np.concatenate([g.y for g in grids]),
            np.concatenate([g.cell_start + off for g, off in zip(grids, point_offsets[:-1], strict=True)]).astype(
                np.int32
            ),
            np.array([[*g.origin, *g.cell] for g in grids], dtype=np.float64),
            np.array([[g.shape[0], g.shape[1], off] for g, off in zip(grids, cell_offsets[:-1], strict=True)]),
        )

    def count(
        self,
        who: npt.NDArray[np.int64],
        a: npt.NDArray[np.float64],
        radius_a: float,
        b: npt.NDArray[np.float64] | None = None,
        radius_b: float = 0.0,
    ) -> npt.NDArray[np.int64]:
        """Points of grid ``who[i]`` within ``radius_a`` of ``a[i]`` (and within ``radius_b`` of ``b[i]`` if given)."""
        out = np.empty(who.shape[0], dtype=np.int64)
        if b is None:
            b, radius_b = a, -1.0
        # The columns as C arrays (bandit_envs._jit.kernel_array): one query's column is a C view, many
        # queries' a strided one, and the kernel would be compiled for each.
        ax, ay = kernel_array(a[:, 0], np.float64), kernel_array(a[:, 1], np.float64)
        bx, by = (ax, ay) if b is a else (kernel_array(b[:, 0], np.float64), kernel_array(b[:, 1], np.float64))
        args = (
            self.x, self.y, self.cell_start, self.geometry, self.layout,
            who, ax, ay, radius_a, bx, by, radius_b, out,
        )  # fmt: skip
        threads = free_cores(numba.get_num_threads()) if who.shape[0] >= PARALLEL_MIN_QUERIES else 1
        if threads > 1:
            previous = numba.get_num_threads()
            numba.set_num_threads(threads)
            try:
                _count_parallel(*args)
            finally:
                numba.set_num_threads(previous)
        else:
            _count(*args)
        return out

    def points_of(self, g: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(x, y) of grid ``g``'s points."""
        nx, ny, offset = (int(v) for v in self.layout[g])
        start, stop = int(self.cell_start[offset]), int(self.cell_start[offset + nx * ny])
        return self.x[start:stop], self.y[start:stop]


def count_reference(
    stack: GridStack,
    who: npt.NDArray[np.int64],
    a: npt.NDArray[np.float64],
    radius_a: float,
    b: npt.NDArray[np.float64] | None = None,
    radius_b: float = 0.0,
) -> npt.NDArray[np.int64]:
    """:meth:`GridStack.count` in plain numpy: every point of the query's grid tested against the disk(s)."""
    out = np.empty(who.shape[0], dtype=np.int64)
    for i, g in enumerate(who.tolist()):
        x, y = stack.points_of(g)
        inside = (x - a[i, 0]) ** 2 + (y - a[i, 1]) ** 2 <= radius_a * radius_a
        if b is not None:
            inside &= (x - b[i, 0]) ** 2 + (y - b[i, 1]) ** 2 <= radius_b * radius_b
        out[i] = int(np.count_nonzero(inside))
    return out


@njit
def _half_widths(y_lo: float, y_hi: float, cy: float, r: float) -> tuple[float, float]:
    """Half-widths of a disk's x-extent over the row band [y_lo, y_hi]: (any point, whole band); -1 if none."""
    near = 0.0 if y_lo <= cy <= y_hi else min(abs(y_lo - cy), abs(y_hi - cy))
    if near > r:
        return -1.0, -1.0
    far = max(abs(y_lo - cy), abs(y_hi - cy))
    inner = math.sqrt(r * r - far * far) if far <= r else -1.0
    return math.sqrt(r * r - near * near), inner


@njit
def _in_one(px, py, start, stop, ax, ay, ra2):
    # Branch-free so that LLVM vectorizes the loop.
    n = 0
    for k in range(start, stop):
        dx = px[k] - ax
        dy = py[k] - ay
        n += dx * dx + dy * dy <= ra2
    return n


@njit
def _in_two(px, py, start, stop, ax, ay, ra2, bx, by, rb2):
    n = 0
    for k in range(start, stop):
        dxa = px[k] - ax
        dya = py[k] - ay
        dxb = px[k] - bx
        dyb = py[k] - by
        n += (dxa * dxa + dya * dya <= ra2) & (dxb * dxb + dyb * dyb <= rb2)
    return n


@njit(inline="always")
def _count_query(px, py, cell_start, geometry, layout, who, ax, ay, ra, bx, by, rb, q):  # pragma: no cover
    """Points of grid ``who[q]`` in the disk of radius ``ra`` about (ax[q], ay[q]) (and in rb's about b if rb >= 0).

    Reference: :func:`count_reference`.
    """
    two = rb >= 0.0  # rb < 0 means "one disk": the second disk's tests are skipped.
    ra2 = ra * ra
    rb2 = rb * rb
    g = who[q]
    x0, y0, hx, hy = geometry[g, 0], geometry[g, 1], geometry[g, 2], geometry[g, 3]
    nx, ny, offset = layout[g, 0], layout[g, 1], layout[g, 2]
    row_lo = max(0, int(math.floor((ay[q] - ra - y0) / hy)))
    row_hi = min(ny - 1, int(math.floor((ay[q] + ra - y0) / hy)))
    total = 0
    for row in range(row_lo, row_hi + 1):
        y_lo = y0 + row * hy
        wa_out, wa_in = _half_widths(y_lo, y_lo + hy, ay[q], ra)
        if wa_out < 0.0:
            continue
        lo = ax[q] - wa_out
        hi = ax[q] + wa_out
        in_lo = ax[q] - wa_in
        in_hi = ax[q] + wa_in
        inner = wa_in >= 0.0
        if two:
            wb_out, wb_in = _half_widths(y_lo, y_lo + hy, by[q], rb)
            if wb_out < 0.0:
                continue
            lo = max(lo, bx[q] - wb_out)
            hi = min(hi, bx[q] + wb_out)
            in_lo = max(in_lo, bx[q] - wb_in)
            in_hi = min(in_hi, bx[q] + wb_in)
            inner = inner and wb_in >= 0.0
        if lo > hi:
            continue
        c_lo = max(0, int(math.floor((lo - x0) / hx)))
        c_hi = min(nx - 1, int(math.floor((hi - x0) / hx)))
        if c_lo > c_hi:
            continue
        # Cells [i_lo, i_hi] lie entirely inside the disk(s): count them without looking.
        i_lo, i_hi = c_hi + 1, c_hi
        if inner and in_lo <= in_hi:
            i_lo = max(c_lo, int(math.ceil((in_lo - x0) / hx)))
            i_hi = min(c_hi, int(math.floor((in_hi - x0) / hx)) - 1)
        base = offset + row * nx
        if i_lo <= i_hi:
            total += cell_start[base + i_hi + 1] - cell_start[base + i_lo]
            spans = ((c_lo, i_lo - 1), (i_hi + 1, c_hi))
        else:
            spans = ((c_lo, c_hi), (1, 0))
        for first, last in spans:
            if first <= last:
                start, stop = cell_start[base + first], cell_start[base + last + 1]
                if two:
                    total += _in_two(px, py, start, stop, ax[q], ay[q], ra2, bx[q], by[q], rb2)
                else:
                    total += _in_one(px, py, start, stop, ax[q], ay[q], ra2)
    return total


@njit
def _count(px, py, cell_start, geometry, layout, who, ax, ay, ra, bx, by, rb, out):  # pragma: no cover
    """``out[q] = _count_query(..., q)`` for every query, in the calling thread."""
    for q in range(who.shape[0]):
        out[q] = _count_query(px, py, cell_start, geometry, layout, who, ax, ay, ra, bx, by, rb, q)


@njit(parallel=True)
def _count_parallel(px, py, cell_start, geometry, layout, who, ax, ay, ra, bx, by, rb, out):  # pragma: no cover
    """:func:`_count` with the queries spread over numba's threads (the same counts)."""
    for q in numba.prange(who.shape[0]):
        out[q] = _count_query(px, py, cell_start, geometry, layout, who, ax, ay, ra, bx, by, rb, q)
