"""Every built-in experiment writes the results recorded in ``tests/fixtures`` (see its README).

What is compared is what the contract promises on any machine (:mod:`recorded`): every integer,
boolean and identifier column exactly, floating-point columns to a relative tolerance of 1e-12
(another CPU's SIMD code paths move the last bits of a sum). Regenerate the fixtures with
``python tests/regenerate_fixtures.py``, which says what changed.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from recorded import assert_frames_match, fingerprint, fingerprint_difference, read_csv

from agents.experiments import EXPERIMENTS
from agents.experiments.cli import run_experiment

FIXTURES = Path(__file__).parent / "fixtures"
#: ``results.csv`` of each experiment at the small scale of :data:`SMALL`, gzipped.
SMALL_RESULTS = FIXTURES / "experiment-results-small"
#: Fingerprints (:func:`recorded.fingerprint`) of each experiment's ``results.csv`` at ``--quick`` scale.
QUICK_FINGERPRINTS = FIXTURES / "experiment-results-quick.json"

#: The scale at which the small fixtures were written (the options of ``banditlab run``).
SMALL: dict[str, dict[str, object]] = {
    "gap": {"runs": 2, "horizon": 2000},
    "budget": {"quick": True, "horizon": 100},
    "ldp-linucb": {"runs": 1, "horizon": 2000},
    "rl": {"quick": True, "runs": 1, "horizon": 100},
}


#: Experiments whose small-scale run takes more than ~10 s (63 settings for ldp-linucb/realistic).
SLOW_SMALL = ("ldp-linucb/realistic",)

#: The experiments with a recorded fixture: the gap, budget, ldp-linucb and rl families (the
#: dp-mab and graph families are tested against single-agent runs instead).
RECORDED = [e for e in EXPERIMENTS if (SMALL_RESULTS / f"{e.replace('/', '-')}.csv.gz").exists()]


def test_every_recorded_fixture_is_still_tested():
    # A fixture that disappears (a renamed id or file) must fail here, not drop out of the tests.
    families = {e.split("/")[0] for e in RECORDED}
    assert len(RECORDED) == 12 and families == set(SMALL), RECORDED
    assert set(json.loads(QUICK_FINGERPRINTS.read_text())) == {e.replace("/", "-") for e in RECORDED}


def small_scale(experiment_id: str) -> dict[str, object]:
    """The options of ``banditlab run`` that the small fixture of ``experiment_id`` was written at."""
    return SMALL[experiment_id.split("/")[0]]


def small_results(experiment_id: str, out: Path) -> bytes:
    """``results.csv`` of ``experiment_id`` run at its small scale into folder ``out``."""
    folder, _ = run_experiment(experiment_id, jobs=1, out=out, progress=False, **small_scale(experiment_id))
    return (folder / "results.csv").read_bytes()


def quick_results(experiment_id: str, out: Path) -> bytes:
    """``results.csv`` of ``experiment_id`` run at ``--quick`` scale with two jobs into folder ``out``.

    In a ``banditlab`` process of its own, as a user runs it: a process that already ran other
    experiments may hold OpenMP threads (numba's parallel kernels), which forked workers must not
    inherit.
    """
    command = [sys.executable, "-m", "banditlab", "run", experiment_id, "--quick", "--jobs", "2", "--no-progress"]
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return (out / "results.csv").read_bytes()


@pytest.mark.parametrize(
    "experiment_id",
    [pytest.param(e, marks=pytest.mark.slow) if e.startswith("rl/") or e in SLOW_SMALL else e for e in RECORDED],
)
def test_results_match_the_small_fixture(experiment_id, tmp_path):
    expected = gzip.decompress((SMALL_RESULTS / f"{experiment_id.replace('/', '-')}.csv.gz").read_bytes())
    assert_frames_match(read_csv(small_results(experiment_id, tmp_path)), read_csv(expected), experiment_id)


@pytest.mark.slow
@pytest.mark.parametrize("experiment_id", RECORDED)
def test_quick_scale_results_match_the_recorded_fingerprint(experiment_id, tmp_path):
    recorded = json.loads(QUICK_FINGERPRINTS.read_text())[experiment_id.replace("/", "-")]
    difference = fingerprint_difference(fingerprint(read_csv(quick_results(experiment_id, tmp_path))), recorded)
    assert difference is None, f"{experiment_id}: {difference}"
