"""Every ✗ and – a summary writes links to the paragraph of docs/reproductions/README.md explaining it.

The summaries are rendered by each family's analysis from the small-scale results recorded in
``tests/fixtures/experiment-results-small`` (and from a short run for the dp-mab family), both
as the small runs they are (most claims –) and as if that were the full scale (claims ✗).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from test_experiment_regression import SMALL_RESULTS, small_scale

from agents.experiments import EXPERIMENTS, get_experiment
from agents.experiments.cli import run_experiment
from agents.experiments.core.claims import (
    README,
    Claim,
    Trend,
    Verdict,
    claim_line,
    committed_summary,
    se_cell,
)
from agents.experiments.core.spec import Experiment

ROOT = Path(__file__).resolve().parent.parent
ANCHORS = set(re.findall(r'<a id="([^"]+)"></a>', (ROOT / README).read_text(encoding="utf-8")))
LINK = re.compile(r"\]\(\.\./README\.md#([^)]+)\)")
META = {"seed": 0, "seconds": 1.0, "jobs": 1, "data": {}}


def _small(experiment_id: str) -> tuple[pd.DataFrame, Experiment]:
    with gzip.open(SMALL_RESULTS / f"{experiment_id.replace('/', '-')}.csv.gz", "rt") as f:
        results = pd.read_csv(f)
    options = small_scale(experiment_id)
    exp = get_experiment(experiment_id).scaled(
        quick=bool(options.get("quick")),
        runs=options.get("runs"),  # type: ignore[arg-type]
        horizon=options.get("horizon"),  # type: ignore[arg-type]
    )
    return results, exp


def _unlinked(text: str) -> list[str]:
    """Lines of a summary with a ✗ or – verdict and no link to an anchor of README (tables: per column)."""
    bad = []
    header: list[str] = []
    for line in text.splitlines():
        if re.match(r"^\s*- (✗|–) ", line):
            anchors = LINK.findall(line)
            if not anchors or any(a not in ANCHORS for a in anchors):
                bad.append(line)
        elif line.startswith("|"):
            cells = line.split("|")
            if not header or line.startswith("|---"):
                header = header or cells
                continue
            for i, cell in enumerate(cells):
                if re.search(r"± [\d,.]+¹? (✗|–)\s*$", cell):
                    anchors = LINK.findall(header[i]) if i < len(header) else []
                    if not anchors or any(a not in ANCHORS for a in anchors):
                        bad.append(f"{header[i] if i < len(header) else '?'}: {line}")
        else:
            header = []
    return bad


def _marks(text: str) -> list[str]:
    return re.findall(r"^\s*- (✗|–) ", text, flags=re.MULTILINE) + re.findall(r"± [\d,.]+¹? (✗|–) \|", text)


RECORDED = [e for e in EXPERIMENTS if (SMALL_RESULTS / f"{e.replace('/', '-')}.csv.gz").exists()]


@pytest.mark.parametrize("experiment_id", RECORDED)
def test_every_cross_and_dash_links_to_its_explanation(experiment_id):
    results, exp = _small(experiment_id)
    seen = 0
    for scaled in (exp, replace(exp, full_horizon=exp.horizon, full_runs=exp.runs)):
        text = exp.family.summary(results, scaled, META)
        assert _unlinked(text) == [], experiment_id
        seen += len(_marks(text))
        # A run below full scale says where the committed full-scale verdicts are; a full-scale one does not.
        assert (f"`{committed_summary(experiment_id)}`" in text) is scaled.below_full_scale, experiment_id
    if exp.claims:
        assert seen > 0, f"{experiment_id}: no ✗ or – rendered, so nothing was checked"


def test_dp_mab_and_side_observation_verdicts_link_too(tmp_path):
    """Written outside docs/reproductions, a summary's links point at the README from where it is."""
    for i, experiment_id in enumerate(("dp-mab/epsilon", "graph/side-observations")):
        folder = tmp_path / "results" / str(i)
        _, text = run_experiment(experiment_id, runs=2, horizon=300, jobs=1, out=folder, progress=False)
        assert text == (folder / "summary.md").read_text(encoding="utf-8")
        targets = set(re.findall(r"\]\(([^)#]*)#[^)]+\)", text))
        assert len(targets) == 1, targets
        assert (folder / targets.pop()).resolve() == (ROOT / README).resolve(), experiment_id
        as_committed = text.replace(f"]({os.path.relpath(ROOT / README, folder)}#", "](../README.md#")
        assert _marks(text) and _unlinked(as_committed) == [], experiment_id


def test_summary_links_become_text_without_the_repository(monkeypatch, tmp_path):
    import agents.experiments.core.verdict as verdict

    line = f"- ✗ x {verdict.why_link('zero-standard-error')}"
    assert verdict.links_from(ROOT / "docs" / "reproductions" / "gap-privacy", line) == line  # committed: as is
    monkeypatch.setattr(verdict, "README", "no/such/README.md")  # a wheel without the repository
    assert verdict.links_from(tmp_path, line) == "- ✗ x (why: docs/reproductions/README.md#zero-standard-error)"


def test_every_claim_names_an_explanation_that_exists():
    for experiment_id, exp in EXPERIMENTS.items():
        for claim in exp.claims:
            assert claim.why in ANCHORS, (experiment_id, claim.text, claim.why)
    # The general paragraphs the verdict code links to without a claim's own anchor.
    assert {"not-resolvable-at-this-scale", "your-agents", "zero-standard-error", "added-settings"} <= ANCHORS
    # Shape and trend claims of ldp-linucb/epsilon and sqrt-t link their added settings' line too.
    for experiment_id in ("ldp-linucb/epsilon", "ldp-linucb/sqrt-t"):
        for claim in EXPERIMENTS[experiment_id].claims:
            assert f"{claim.why}-added" in ANCHORS, claim.why


def test_a_quick_run_names_the_committed_full_scale_summary():
    for experiment_id, exp in EXPERIMENTS.items():
        path = committed_summary(experiment_id)
        assert (ROOT / path).is_file(), path
        assert f"`{path}`" in exp.scaled(quick=True).scale_note()
        assert exp.scale_note() == ""


def test_committed_reproductions_are_recorded_so_their_commands_can_replace_them():
    """docs/reproductions/README.md's commands rewrite these folders: each file must be banditlab's, unedited."""
    from agents.experiments.core.outputs import RECORD, sha256_of

    folders = [d for d in (ROOT / "docs" / "reproductions").iterdir() if d.is_dir()]
    assert len(folders) == len(EXPERIMENTS) + 1  # and the privacy audit's
    for folder in folders:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        files = {p.name for p in folder.iterdir() if p.is_file() and p.name != RECORD}
        assert set(record["files"]) == files, folder.name
        for name in files:  # a hand edit makes the file the editor's, and the command then refuses it
            assert record["files"][name] == sha256_of(folder / name), f"{folder.name}/{name} changed since recorded"


def test_an_undecided_verdict_says_not_resolvable_at_this_scale_with_the_scale():
    claim = Claim("x falls", Trend("x", "decreasing"), why="not-resolvable-at-this-scale")
    line = claim_line(claim, Verdict(None, "1, 2: within its interval."), "3 runs per setting, T = 2,000")
    assert line.startswith("- – *x falls* **not resolvable at this scale** (3 runs per setting, T = 2,000")
    assert "](../README.md#not-resolvable-at-this-scale)" in line
    na = claim_line(claim, Verdict(None, "no distance.", applicable=False), "3 runs per setting, T = 2,000")
    assert "**not applicable here**" in na and "not resolvable" not in na
    assert "](../README" not in claim_line(claim, Verdict(True, "holds."))


def test_a_standard_error_of_exactly_zero_is_footnoted_with_its_reason():
    assert se_cell([5.0, 5.0, 5.0]) == ("5 ± 0¹", True)
    assert se_cell([5.0, 5.2, 4.9]) == ("5 ± 0", False)  # rounds to 0 but is not 0: no footnote
    results, exp = _small("gap/regret-gap")
    last = (results["t"] == exp.horizon) & (results["agent"] == "DPSE") & (results["setting"] == 0)
    results.loc[last, "regret"] = 1234.0
    text = exp.family.summary(results, exp, META)
    assert "1,234 ± 0¹" in text
    note = next(line for line in text.splitlines() if line.startswith("¹ ± 0"))
    assert "exactly 0" in note and "DPSE: its elimination schedule is deterministic" in note
    assert "](../README.md#zero-standard-error)" in note


def _ldp_rows(grid: str, eps: float, sigma: str, bonus: str, regret_at) -> list[dict[str, object]]:
    return [
        {
            "agent": "LDP-LinUCB",
            "epsilon": eps,
            "sigma_method": sigma,
            "bonus": bonus,
            "grid": grid,
            "run": run,
            "t": t,
            "regret": regret_at(t) + run,
        }  # fmt: skip
        for run in range(3)
        for t in range(100, 1001, 100)
    ]


def test_ldp_claims_are_decided_on_the_source_settings_and_added_ones_reported_apart():
    exp = get_experiment("ldp-linucb/epsilon").scaled(runs=3, horizon=1000)
    exp = replace(exp, full_horizon=1000, full_runs=3)
    rows = [
        *_ldp_rows("authors", 1e5, "classic", "quadratic", lambda t: 40.0 * t**0.5),
        *_ldp_rows("authors", 8e5, "classic", "quadratic", lambda t: 10.0 * t**0.5),
        *_ldp_rows("realistic", 1.0, "analytic", "sqrt", lambda t: 0.5 * t + 0.001 * t**2),  # never slows down
        *_ldp_rows("realistic", 5.0, "analytic", "sqrt", lambda t: 0.5 * t + 0.001 * t**2),
    ]
    text = exp.family.summary(pd.DataFrame(rows), exp, META)
    lines = text.splitlines()
    slowing = next(i for i, line in enumerate(lines) if "*Regret grows more and more slowly" in line)
    assert lines[slowing].startswith("- ✓ ") and "2 of 2 settings" in lines[slowing]
    added = lines[slowing + 1]
    assert added.startswith("  - ✗ *Added by this project, not in the source*") and "0 of 2 settings" in added
    assert "](../README.md#ldp-slowing-added)" in added
    # The authors' values: the one printed in text, and figure readings marked as approximate.
    assert "962.4 (authors' repository, text); ≈ 950 (read off the blog's figure)" in text
    assert "≈ 6,250 (read off the blog's figure)" in text
    assert "| 950 |" not in text and "| 6,250 |" not in text
