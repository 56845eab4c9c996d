"""The comparison of recorded results (tests/recorded.py) accepts another CPU's rounding and nothing more.

Another CPU moved 808 of 1,100 regret values of a recorded ``results.csv`` by up to 1.1e-15
relative; such differences must pass, while any change of behaviour (an action, a count, an
identifier, a float beyond 1e-12 relative) must fail.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from recorded import array_difference, fingerprint, fingerprint_difference, frame_difference, read_csv

SMALL = Path(__file__).parent / "fixtures" / "experiment-results-small" / "ldp-linucb-epsilon.csv.gz"


@pytest.fixture(scope="module")
def recorded() -> pd.DataFrame:
    return read_csv(gzip.decompress(SMALL.read_bytes()))


def _nudged(frame: pd.DataFrame, relative: float, seed: int = 0) -> pd.DataFrame:
    """``frame`` with every float value moved by up to ``relative`` of itself, in either direction."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            values = out[column].to_numpy()
            out[column] = values * (1 + relative * rng.uniform(-1, 1, size=values.shape))
    return out


def test_another_cpus_rounding_passes(recorded: pd.DataFrame) -> None:
    nudged = _nudged(recorded, 1.1e-15)
    assert not nudged.equals(recorded)  # the nudge changed bits
    assert frame_difference(nudged, recorded) is None
    assert fingerprint_difference(fingerprint(nudged), fingerprint(recorded)) is None


def test_a_float_change_beyond_the_tolerance_fails(recorded: pd.DataFrame) -> None:
    changed = recorded.copy()
    changed.loc[17, "regret"] *= 1 + 1e-9
    assert "regret" in str(frame_difference(changed, recorded))
    assert "regret" in str(fingerprint_difference(fingerprint(changed), fingerprint(recorded)))


@pytest.mark.parametrize("column", ["t", "max_user_reports", "agent", "run"])
def test_any_change_of_an_exact_column_fails(recorded: pd.DataFrame, column: str) -> None:
    changed = recorded.copy()
    if pd.api.types.is_integer_dtype(changed[column]):
        changed.loc[3, column] += 1
    else:
        changed.loc[3, column] = "another agent"
    assert frame_difference(changed, recorded) is not None
    assert fingerprint_difference(fingerprint(changed), fingerprint(recorded)) is not None


def test_a_dropped_row_or_column_fails(recorded: pd.DataFrame) -> None:
    assert "rows" in str(frame_difference(recorded.iloc[:-1], recorded))
    assert "columns" in str(frame_difference(recorded.drop(columns="regret"), recorded))


def test_arrays_integers_exactly_floats_to_the_tolerance() -> None:
    floats = np.linspace(0.0, 5.0, 11)
    assert array_difference(floats * (1 + 1e-15), floats) is None
    assert array_difference(floats + 1e-9, floats) is not None
    assert array_difference(np.arange(5), np.array([0, 1, 2, 3, 5])) is not None
    assert array_difference(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) is None
