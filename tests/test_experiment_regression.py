"""Every built-in experiment writes the same results.csv, byte for byte, as before the restructuring."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from agents.experiments import EXPERIMENTS
from agents.experiments.cli import run_experiment

FIXTURES = Path(__file__).parent / "fixtures" / "results-before-restructuring"

#: The scale at which the fixtures were written (the options of ``banditlab run``).
SMALL: dict[str, dict[str, object]] = {
    "gap": {"runs": 2, "horizon": 2000},
    "budget": {"quick": True, "horizon": 100},
    "ldp-linucb": {"runs": 1, "horizon": 2000},
    "rl": {"quick": True, "runs": 1, "horizon": 100},
}


#: Experiments whose small-scale run takes more than ~10 s (63 settings for ldp-linucb/realistic).
SLOW_SMALL = ("ldp-linucb/realistic",)

#: The experiments with a recorded fixture: the eleven of the restructuring and ldp-linucb/realistic
#: (the dp-mab families, added later, are tested against single-agent runs instead).
RECORDED = [e for e in EXPERIMENTS if (FIXTURES / f"{e.replace('/', '-')}.csv.gz").exists()]


def test_every_recorded_fixture_is_still_tested():
    # A fixture that disappears (a renamed id or file) must fail here, not drop out of the tests.
    families = {e.split("/")[0] for e in RECORDED}
    assert len(RECORDED) == 12 and families == set(SMALL), RECORDED


def _small(experiment_id: str) -> dict[str, object]:
    return SMALL[experiment_id.split("/")[0]]


@pytest.mark.parametrize(
    "experiment_id",
    [pytest.param(e, marks=pytest.mark.slow) if e.startswith("rl/") or e in SLOW_SMALL else e for e in RECORDED],
)
def test_results_are_byte_identical_to_the_fixture(experiment_id, tmp_path):
    folder, _ = run_experiment(experiment_id, jobs=1, out=tmp_path, progress=False, **_small(experiment_id))
    expected = gzip.decompress((FIXTURES / f"{experiment_id.replace('/', '-')}.csv.gz").read_bytes())
    assert (folder / "results.csv").read_bytes() == expected


@pytest.mark.slow
@pytest.mark.parametrize("experiment_id", RECORDED)
def test_quick_scale_results_have_the_recorded_digest(experiment_id, tmp_path):
    digests = json.loads((FIXTURES / "quick-sha256.json").read_text())
    folder, _ = run_experiment(experiment_id, quick=True, jobs=2, out=tmp_path, progress=False)
    digest = hashlib.sha256((folder / "results.csv").read_bytes()).hexdigest()
    assert digest == digests[experiment_id.replace("/", "-")]
