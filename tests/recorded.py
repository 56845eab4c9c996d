"""How a recorded result is compared with today's: what the contract promises, on any CPU.

The same seed gives the same actions, counts and identifiers on every machine, so those are
compared exactly. Floating-point values are not byte-identical across CPUs: numpy and numba pick
other SIMD code paths (and summation orders) on another processor, which moves the last bits of a
sum. They are compared to a relative tolerance of :data:`RTOL` (with :data:`ATOL` as the floor for
values at or near zero), far below any difference a change of behaviour makes and far above the
rounding differences between CPUs (about 1e-15 relative). Exact comparisons of floats stay only
where the code path is the same process and the same compiled kernel.
"""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

#: Relative tolerance for floating-point values of recorded results.
RTOL = 1e-12
#: Absolute tolerance, for values at or near zero.
ATOL = 1e-12


def read_csv(source: bytes | str | Path) -> pd.DataFrame:
    """A results CSV (its bytes or its path), every column as pandas infers it."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    return pd.read_csv(io.BytesIO(data), keep_default_na=True)


def float_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` that hold floating-point values."""
    return [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]


def frame_difference(actual: pd.DataFrame, expected: pd.DataFrame) -> str | None:
    """Why ``actual`` does not match ``expected`` (None if it does).

    Columns and their order, the number of rows, every non-float column (integers, booleans,
    identifiers) exactly; float columns to :data:`RTOL` / :data:`ATOL`, NaN matching NaN.
    """
    if list(actual.columns) != list(expected.columns):
        return f"columns {list(actual.columns)} != recorded {list(expected.columns)}"
    if len(actual) != len(expected):
        return f"{len(actual)} rows != recorded {len(expected)}"
    floats = set(float_columns(expected)) & set(float_columns(actual))
    exact = [c for c in expected.columns if c not in floats]
    try:
        pd.testing.assert_frame_equal(
            actual[exact].reset_index(drop=True), expected[exact].reset_index(drop=True), check_exact=True
        )
    except AssertionError as error:
        return f"exact columns differ: {error}"
    for column in sorted(floats):
        difference = array_difference(actual[column].to_numpy(), expected[column].to_numpy())
        if difference is not None:
            return f"column {column!r}: {difference}"
    return None


def array_difference(actual: np.ndarray, expected: np.ndarray) -> str | None:
    """Why array ``actual`` does not match ``expected`` (None if it does): floats to the tolerance, the rest exactly."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != recorded {expected.shape}"
    if actual.dtype.kind != expected.dtype.kind:
        return f"dtype {actual.dtype} != recorded {expected.dtype}"
    if expected.dtype.kind in "fc":
        close = np.isclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True)
        if close.all():
            return None
        where = np.flatnonzero(~close.ravel())
        i = where[0]
        a, e = actual.ravel()[i], expected.ravel()[i]
        return (
            f"{where.size} of {close.size} values differ beyond rtol={RTOL:g}; first at flat index {i}: {a!r} vs {e!r}"
        )
    if not np.array_equal(actual, expected):
        where = np.flatnonzero(actual.ravel() != expected.ravel())
        return f"{where.size} of {actual.size} values differ; first at flat index {where[0]}"
    return None


def max_relative_difference(actual: pd.DataFrame, expected: pd.DataFrame) -> float:
    """The largest relative difference over the float columns both frames share (0.0 if none)."""
    worst = 0.0
    for column in set(float_columns(actual)) & set(float_columns(expected)):
        a, e = actual[column].to_numpy(), expected[column].to_numpy()
        if a.shape != e.shape:
            continue
        both = np.isfinite(a) & np.isfinite(e)
        scale = np.maximum(np.abs(e[both]), ATOL)
        if both.any():
            worst = max(worst, float(np.max(np.abs(a[both] - e[both]) / scale)))
    return worst


def assert_frames_match(actual: pd.DataFrame, expected: pd.DataFrame, what: str = "results") -> None:
    """Assert :func:`frame_difference` finds nothing, naming ``what`` was compared."""
    difference = frame_difference(actual, expected)
    assert difference is None, f"{what}: {difference}"


def assert_csv_match(actual: bytes | str | Path, expected: bytes | str | Path, what: str = "results.csv") -> None:
    """Assert two results CSVs (bytes or paths) match: exact columns exactly, floats to the tolerance."""
    assert_frames_match(read_csv(actual), read_csv(expected), what)


def assert_arrays_match(actual: np.ndarray, expected: np.ndarray, what: str = "array") -> None:
    """Assert :func:`array_difference` finds nothing, naming ``what`` was compared."""
    difference = array_difference(actual, expected)
    assert difference is None, f"{what}: {difference}"


#: Number of random projections in a :func:`fingerprint` of a float column.
PROJECTIONS = 4
#: Relative tolerance of a projection, against the projection of the absolute values. The sums
#: are correctly rounded (math.fsum of exactly rounded products), so they differ between CPUs
#: only as much as the values do (about 1e-15 relative); a single value changed by more than
#: ``PROJECTION_RTOL`` times the column's weighted sum of absolute values is always caught.
PROJECTION_RTOL = 1e-13


def _weights(n: int) -> np.ndarray:
    """Fixed weights in [0.5, 1.5) (PCG64 seeded 0: the same on every machine)."""
    return np.random.default_rng(0).uniform(0.5, 1.5, size=(PROJECTIONS, n))


def fingerprint(frame: pd.DataFrame) -> dict[str, object]:
    """A compact record of a large results table that can be compared to a tolerance.

    The non-float columns (and where the floats are NaN) by the sha256 of their CSV text; each
    float column by :data:`PROJECTIONS` weighted sums with fixed random weights, beside the same
    sums of absolute values (the scale a difference is measured against). This is weaker than the
    per-value comparison of :func:`frame_difference` (the tolerance is a share of the whole
    column's sum), and meant for results too large to record: a change of behaviour (another arm
    pulled, another noise draw) moves values by far more than it.
    """
    floats = float_columns(frame)
    exact = frame[[c for c in frame.columns if c not in floats]].copy()
    for column in floats:
        exact[f"{column}.isnan"] = frame[column].isna()
    weights = _weights(len(frame))
    projections: dict[str, list[list[float]]] = {}
    for column in floats:
        values = np.nan_to_num(frame[column].to_numpy(dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
        sums = [math.fsum(w * values) for w in weights]
        scales = [math.fsum(w * np.abs(values)) for w in weights]
        projections[column] = [sums, scales]
    return {
        "rows": len(frame),
        "columns": list(frame.columns),
        "exact_sha256": hashlib.sha256(exact.to_csv(index=False).encode()).hexdigest(),
        "float_projections": projections,
    }


def fingerprint_difference(actual: dict[str, object], expected: dict[str, object]) -> str | None:
    """Why fingerprint ``actual`` does not match ``expected`` (None if it does)."""
    for key in ("rows", "columns", "exact_sha256"):
        if actual[key] != expected[key]:
            return f"{key}: {actual[key]!r} != recorded {expected[key]!r}"
    got, want = actual["float_projections"], expected["float_projections"]
    assert isinstance(got, dict) and isinstance(want, dict)
    for column, (sums, scales) in want.items():
        new = np.asarray(got[column][0])
        bound = PROJECTION_RTOL * np.asarray(scales) + ATOL
        if np.any(np.abs(new - np.asarray(sums)) > bound):
            return f"column {column!r}: projections {new.tolist()} != recorded {sums} (beyond rtol={PROJECTION_RTOL:g})"
    return None
