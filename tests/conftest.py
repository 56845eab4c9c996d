"""Shared test settings: the real-data lookup and the per-id settings of the env contract suite.

* :func:`shared_data`: the one place that knows where the real datasets live (``../shared/data``
  from the project root, never copied into the repository); a test asks for a file or folder by
  its name there and is skipped, with the reason, when it is absent.
* :data:`ENV_TEST_KWARGS`: cheap constructor keywords per registered id (a short horizon, a small
  oracle); ids missing from the table get :data:`DEFAULT_ENV_TEST_KWARGS`, so a newly registered id
  is tested by ``tests/test_env_contract.py`` without editing any test (fixture :func:`env_kwargs`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: Where the real datasets live (see shared/data/README.md).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

#: Keywords for ids not in :data:`ENV_TEST_KWARGS` (every env of the suite takes ``horizon``).
DEFAULT_ENV_TEST_KWARGS: dict[str, Any] = {"horizon": 7}

#: Cheap settings per registered id for the contract suite (keep the whole suite under 30 s).
ENV_TEST_KWARGS: dict[str, dict[str, Any]] = {
    "GraphBandit-v0": {"horizon": 7},
    "PrivacyBudgetMovieLens-v0": {"horizon": 7, "oracle_samples": 1000},
    "PrivacyBudgetGowalla-v0": {"horizon": 7, "oracle_samples": 1000},
    "MovieLensRecommendation-v0": {"horizon": 7},
    "GowallaRecommendation-v0": {"horizon": 7},
}


def env_test_kwargs(env_id: str) -> dict[str, Any]:
    """A fresh copy of the contract suite's keywords for ``env_id``."""
    return dict(ENV_TEST_KWARGS.get(env_id, DEFAULT_ENV_TEST_KWARGS))


@pytest.fixture(scope="session")
def env_kwargs() -> Callable[[str], dict[str, Any]]:
    """:func:`env_test_kwargs`, for tests: ``env_kwargs(env_id)`` is a fresh dict of keywords."""
    return env_test_kwargs


@pytest.fixture(scope="session")
def shared_data() -> Callable[[str], Path]:
    """A function ``path(name)``: the absolute path of ``name`` under ``../shared/data``.

    ``name`` may be nested (``"gowalla-snap-nyc/loc-gowalla_totalCheckins.nyc.txt.gz"``). When it
    does not exist the calling test is skipped with the reason.
    """

    def path(name: str) -> Path:
        found = (SHARED_DATA / name).resolve()
        if not found.exists():
            pytest.skip(f"real test data not found at {found} (see shared/data/README.md)")
        return found

    return path
