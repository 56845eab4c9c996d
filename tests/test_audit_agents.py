"""Privacy audits of the central-DP index and Thompson agents and of LDP Thompson sampling (agents.audit).

Error rates. Each audit's lower bound exceeds the true privacy loss of its event with probability
≤ 2.5% (Clopper–Pearson at α/4 per side, agents/audit/bounds.py), so a test asserting "no
violation" of a correct ε-DP agent fails with probability ≤ 2.5% per audit at a random seed; the
seeds are fixed, so every test is deterministic. The group-3 tests assert a violation of the
one-entry claim ε when three entries change (the agent is only 3ε-DP there); the runs were chosen
so that the bound exceeded ε at every one of seeds 0-4 when the tests were written (AdaPUCB at
ε = 1 with 5,000 runs per input; AdaPUCB-cumulative at ε = 2 with 20,000 and DPThompsonSampling
at ε = 3 with 40,000, both slow-marked: their best events exceed ε by only 0.2-0.5 and, for DP-TS, are rare
(P ≈ 0.002 on one input), so fewer runs leave the bound's confidence margin larger than that).

Which group-3 tests can have power. The audit sees arm sequences only. AdaPUCB and
DPThompsonSampling release an arm's first reward with Laplace(1/ε) noise, so the decision at
round 2, which compares the two first rewards (both changed), carries up to 2ε; the third
changed entry adds more at the next release. HybridDPUCB's first reward enters only the
logarithmic half of its counter (Laplace(2/ε), ε/2), and TreeDPUCB's enters one p-sum of
scale depth/ε_arm at a time, so with rewards in [0, 1] the first decisions carry at most about ε
for three entries: no number of runs shows a group-3 violation on these pairs, and those tests
only check that the bound stays below the group-privacy limit 3ε.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import AdaPUCB, DPThompsonSampling, HybridDPUCB, TreeDPUCB
from agents.audit import NO_VIOLATION, VIOLATION, audit, subject_for, summary
from agents.audit.subjects import INDEX_CHANGES, index_pairs
from agents.audit.summary import Planned
from agents.experiments.cli import main

CENTRAL = ("HybridDPUCB", "TreeDPUCB", "TreeDPUCB-parallel", "AdaPUCB", "AdaPUCB-cumulative", "DPThompsonSampling")


@pytest.mark.parametrize("name", [*CENTRAL, "LDPThompsonSampling"])
def test_private_agents_pass_at_their_claimed_epsilon(name: str) -> None:
    result = audit(name, epsilon=1.0, runs=1000, seed=0)
    assert result.verdict == NO_VIOLATION and result.epsilon_lower <= result.epsilon
    assert result.power.has_power


def test_the_claim_is_the_agents_privacy_spent() -> None:
    """TreeDPUCB with the default split budget claims ε/K per entry; the audit tests that, and says so."""
    split = subject_for("TreeDPUCB", epsilon=1.0)
    assert split.epsilon == 0.5 and "ε/K = 0.5" in split.note
    assert subject_for("TreeDPUCB-parallel", epsilon=1.0).epsilon == 1.0
    ldp = subject_for("LDPThompsonSampling", epsilon=2.0)
    assert ldp.unit == "report" and ldp.epsilon == 2.0 and "post-processing" in ldp.note
    for cls in (HybridDPUCB, TreeDPUCB, AdaPUCB, DPThompsonSampling):  # a class gets its built-in subject
        assert subject_for(cls, epsilon=0.5).pairs[0].label == subject_for(cls.__name__, epsilon=0.5).pairs[0].label


def test_index_pairs_change_the_first_rewards_of_both_arms() -> None:
    for pair in index_pairs(16, 3):
        first, second = pair.tables()
        changed = sorted((t, k) for t, k, _ in pair.changed)
        assert changed == [(t, k) for t, k, _, _ in INDEX_CHANGES[:3]]
        assert (first[0, 0], first[1, 1], second[0, 0], second[1, 1]) == (1.0, 0.0, 0.0, 1.0)
    report = index_pairs(16, 1, "report")[0]
    assert sorted((t, k) for t, k, _ in report.changed) == [(0, 0), (0, 1)]
    with pytest.raises(ValueError, match="horizon must exceed"):
        index_pairs(3, 3)


@pytest.mark.parametrize(
    ("name", "epsilon", "runs"),
    [
        ("AdaPUCB", 1.0, 5000),
        pytest.param("AdaPUCB-cumulative", 2.0, 20_000, marks=pytest.mark.slow),
        pytest.param("DPThompsonSampling", 3.0, 40_000, marks=pytest.mark.slow),
    ],
)
def test_three_changed_entries_violate_the_one_entry_claim(name: str, epsilon: float, runs: int) -> None:
    result = audit(name, epsilon=epsilon, group=3, runs=runs, seed=0)
    assert result.verdict == VIOLATION and epsilon < result.epsilon_lower <= 3.0 * epsilon


@pytest.mark.parametrize("name", ["HybridDPUCB", "TreeDPUCB"])
def test_counter_agents_stay_within_group_privacy_on_three_entries(name: str) -> None:
    result = audit(name, epsilon=1.0, group=3, runs=1000, seed=0)
    assert result.epsilon_lower <= 3.0 * result.epsilon


# --- banditlab audit all ---------------------------------------------------------------------------


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_audit_all_writes_the_summary_and_figure_and_never_replaces_foreign_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plans = (Planned("AdaPUCB"), Planned("AdaPUCB", 1.0, 3, runs=400, role="group"), Planned("NonPrivateUCB"))
    monkeypatch.setattr(summary, "ALL_AUDITS", plans)
    out = tmp_path / "audit"
    assert _main(["audit", "all", "--runs", "200", "--out", str(out)]) == 0
    text = (out / "summary.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| AdaPUCB") or line.startswith("| NonPrivateUCB")]
    assert len(rows) == 3 and rows[1].split("|")[3].strip() == "3" and "400" in rows[1]
    assert "**violation**" in rows[2] and "A lower bound only." in text
    assert "post-processing of all reports" in text
    assert (out / "figure.png").stat().st_size > 0
    capsys.readouterr()
    assert _main(["audit", "all", "--runs", "200", "--out", str(out)]) == 0  # its own files: replaced
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "summary.md").write_text("my notes")
    assert _main(["audit", "all", "--runs", "200", "--out", str(foreign)]) == 2
    assert "never replaces or deletes" in capsys.readouterr().err
    assert (foreign / "summary.md").read_text() == "my notes"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "all"], "--out must name a folder"),
        (["audit", "all", "--out", "x", "--group", "3"], "takes only --runs, --seed, --out and --force"),
        (["audit", "GAP", "--out", "x"], "--out is for `banditlab audit all`"),
    ],
)
def test_audit_all_bad_input_is_one_sentence(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x").exists()
