"""``benchmarks/run_all.py``'s report: a ratio whose own check came out false is named, not only printed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

RUN_ALL = Path(__file__).resolve().parent.parent / "benchmarks" / "run_all.py"


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_all_under_test", RUN_ALL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("detail", "failed"),
    [
        ("2.10 us vs 0.99 us per round; same actions: True", False),
        ("2.10 us vs 0.99 us per round; same actions: False", True),
        ("6.9 vs 16.1 ns/round; same arms and regret: yes", False),
        ("6.9 vs 16.1 ns/round; same arms and regret: no", True),
        ("4.1e+07 vs 1.8e+05 agent-steps/s; same actions as copies 0-9: False", True),
        ("peak RSS 211 MB, 6.0 s; streamed == in-memory on T = 50,000: no", True),
        ("peak RSS 211 MB, 6.0 s; streamed == in-memory on T = 50,000: yes", False),
        ("1.5 ms vs 470 ms, one of each", False),
        ("nothing the same; the verdict: no", False),  # "same" must lead the check's own words
    ],
)
def test_a_failed_check_in_a_ratios_figures_is_found(run_all: ModuleType, detail: str, failed: bool) -> None:
    ratio = run_all.Ratio("row", "subject", "reference", 1.0, None, detail)
    assert (run_all.failed_checks([ratio]) == [ratio]) is failed
