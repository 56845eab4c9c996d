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

Which group-3 tests can have power. AdaPUCB and DPThompsonSampling are audited through their arm
sequences: they release an arm's first reward with Laplace(1/ε) noise, so the decision at round
2, which compares the two first rewards (both changed), carries up to 2ε; the third changed entry
adds more at the next release. The counter agents' arm sequences cannot: HybridDPUCB's first
reward enters only the logarithmic half of its counter (Laplace(2/ε), ε/2), and TreeDPUCB's
enters one p-sum of scale depth/ε_arm at a time; no single p-sum carries more than ε_arm of three
entries (a p-sum over ≥ 3 items needs depth ≥ 3, so 3/depth ≤ 1), so pairs that put the three
entries into one p-sum cannot work either. They are audited through their releases instead
(view "releases", the default for them): every release is recorded, and the events are
thresholds on the releases' privacy loss Λ = ln(p(output|D)/p(output|D′))
(agents.audit.events.release_loss), which on these pairs reaches 1.5ε (hybrid: the first two
releases of arm 0 and the first of arm 1, Laplace(2/ε) each) and 2.2ε_arm (tree, depth 5: the
p-sums [1], [1,2], [1..4], [1..8] of both arms). The default-suite tests run at ε where the bound
exceeded the claim at every one of seeds 0-4 when written (HybridDPUCB at ε = 2 and TreeDPUCB
split at ε = 4, claim 2, with 5,000 runs; TreeDPUCB-parallel at ε = 2 with 10,000); the slow ones
at ε = 1 (split: ε = 2, claim 1) with 20,000 runs, also 5 of 5 seeds (lowest bound 1.24 over a
claim of 1 for each of the three). At one changed entry Λ ≤ the claim for every output (a known answer, tested
below), and the audits at the claimed ε found no violation at seeds 0-4 with 10,000 runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import AdaPUCB, DPThompsonSampling, HybridDPUCB, TreeDPUCB
from agents.audit import NO_VIOLATION, VIOLATION, audit, subject_for, summary
from agents.audit.events import ReleaseRuns, release_loss
from agents.audit.subjects import INDEX_CHANGES, index_pairs
from agents.audit.summary import Planned
from agents.central_dp.gaussian_ts import PrePullGaussianTS
from agents.experiments.cli import main
from bandit_envs.privacy.counters import BinaryTreeCounter, HybridCounter, hybrid_increment, tree_increment

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


def test_a_subclass_or_users_private_agent_is_held_to_its_own_privacy_spent() -> None:
    """Not to its ``epsilon`` attribute: a subclass of TreeDPUCB states ε/K per entry as TreeDPUCB does,
    and a Gaussian sampler states (ε, δ) for the rounds it ran, not (ε given, 0)."""

    class MyTree(TreeDPUCB):
        pass

    assert subject_for(MyTree, epsilon=1.0, horizon=50).epsilon == 0.5  # the ε/K it states, not its ε = 1
    spent = PrePullGaussianTS(2, seed=0)  # as the audit builds the class (it takes neither horizon nor epsilon)
    for _ in range(50):
        spent.update(spent.act(), 0.0)

    class MyGaussian(PrePullGaussianTS):
        pass

    subject = subject_for(MyGaussian, epsilon=1.0, horizon=50)
    assert (subject.epsilon, subject.delta) == pytest.approx(spent.privacy_spent)
    assert subject.delta > 0


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


@pytest.mark.parametrize(
    ("name", "epsilon", "runs"),
    [
        ("HybridDPUCB", 2.0, 5000),
        ("TreeDPUCB", 4.0, 5000),
        ("TreeDPUCB-parallel", 2.0, 10_000),
        pytest.param("HybridDPUCB", 1.0, 20_000, marks=pytest.mark.slow),
        pytest.param("TreeDPUCB", 2.0, 20_000, marks=pytest.mark.slow),
        pytest.param("TreeDPUCB-parallel", 1.0, 20_000, marks=pytest.mark.slow),
    ],
)
def test_counter_agents_audited_through_their_releases_violate_the_one_entry_claim_on_three_entries(
    name: str, epsilon: float, runs: int
) -> None:
    result = audit(name, epsilon=epsilon, group=3, runs=runs, seed=0)
    assert result.verdict == VIOLATION and result.epsilon < result.epsilon_lower <= 3.0 * result.epsilon
    assert "view: releases" in result.note and "privacy loss of the releases" in result.event


def test_the_arm_view_of_the_counters_stays_below_the_one_entry_claim_on_three_entries() -> None:
    """Through the arms alone, three entries on these pairs show no more than ε (the docstring says why)."""
    result = audit("HybridDPUCB", epsilon=1.0, group=3, runs=1000, seed=0, view="arms")
    assert "view: arms" in result.note and result.verdict == NO_VIOLATION


def test_only_the_counters_can_be_audited_through_their_releases() -> None:
    for name in ("AdaPUCB", "DPThompsonSampling", "LDPThompsonSampling", "NonPrivateUCB"):
        assert "view: releases" not in subject_for(name).note
        with pytest.raises(ValueError, match="view must be 'arms'"):
            subject_for(name, view="releases")
    with pytest.raises(ValueError, match="view must be one of"):
        subject_for("HybridDPUCB", view="nodes")


class MyHybrid(HybridDPUCB):
    """A user's agent class (not a built-in): audited generically, through its releases on request."""


class MyAdaP(AdaPUCB):
    """A user's agent whose releases (epoch means) have no independent increments to audit."""


def test_any_agent_that_describes_its_releases_can_be_audited_through_them() -> None:
    result = audit(MyHybrid, epsilon=1.0, runs=400, horizon=64, seed=0, view="releases")
    assert result.agent == "MyHybrid" and "view: releases" in result.note and result.verdict == NO_VIOLATION
    assert "view" not in subject_for(MyHybrid, horizon=64).note  # a user's agent: arms unless asked
    with pytest.raises(ValueError, match="view must be 'arms' for MyAdaP"):
        subject_for(MyAdaP, horizon=64, view="releases")
    with pytest.raises(ValueError, match="view must be None for a ready Subject"):
        subject_for(subject_for("HybridDPUCB"), view="arms")


@pytest.mark.parametrize("counter", ["tree", "hybrid"])
@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_release_increments_isolate_one_fresh_laplace_draw(counter: str, sampler: str) -> None:
    """release(n) − release(m) − (items m+1..n) is the n-th item's own draw, for the counters' m."""
    items = np.random.default_rng(1).random(40)
    draws = np.random.default_rng(7)
    if counter == "tree":
        tree = BinaryTreeCounter(40, 1.0, np.random.default_rng(7), sampler=sampler)
        releases = [0.0] + [tree.add(float(x)) for x in items]
        scales = [tree.scale] * 40
        previous = [tree_increment(n) for n in range(1, 41)]
    else:
        hybrid = HybridCounter(1.0, np.random.default_rng(7), sampler=sampler)
        releases = [0.0] + [hybrid.add(float(x)) for x in items]
        width = 1.0 + hybrid.grid  # the lattice's widened sensitivity (1 for the float sampler)
        previous, scales = zip(*(hybrid_increment(n, 1.0, width) for n in range(1, 41)), strict=True)  # type: ignore[assignment]
    sums = np.concatenate([[0.0], np.cumsum(items)])
    for n in range(1, 41):
        m = previous[n - 1]
        # Lattice: the p-sums' exact parts and draws are rounded to the grid (< 2**-20 here).
        assert releases[n] - releases[m] - (sums[n] - sums[m]) == pytest.approx(
            draws.laplace(0.0, scales[n - 1]), abs=1e-9 if sampler == "float" else 1e-5
        )


@pytest.mark.parametrize(("name", "epsilon"), [("HybridDPUCB", 1.0), ("TreeDPUCB", 2.0), ("TreeDPUCB-parallel", 1.0)])
def test_the_privacy_loss_of_the_releases_is_within_the_claim_for_every_output(name: str, epsilon: float) -> None:
    """Pure ε-DP output by output: |Λ| ≤ G × claim; three entries show more than the claim, at most 1.5× or 2.2×."""
    most = {"HybridDPUCB": 1.5, "TreeDPUCB": 2.2, "TreeDPUCB-parallel": 2.2}[name]
    for group in (1, 3):
        subject = subject_for(name, epsilon=epsilon, group=group)
        for p, pair in enumerate(subject.pairs):
            for which in (0, 1):
                runs = subject.sample(pair, which, 400, 10 * p + which)
                assert isinstance(runs, ReleaseRuns)
                loss = release_loss(runs)
                assert np.all(np.abs(loss) <= group * subject.epsilon + 1e-9)
                if group == 3 and which == 0:
                    assert subject.epsilon < loss.max() <= most * subject.epsilon + 1e-9


# --- banditlab audit all ---------------------------------------------------------------------------


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_audit_all_writes_the_summary_and_figure_and_never_replaces_foreign_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], rendered_figures: None
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
        (["audit", "all", "--out", "x", "--view", "arms"], "takes only --runs, --seed, --out and --force"),
        (["audit", "AdaPUCB", "--view", "releases"], "view must be 'arms' for AdaPUCB"),
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


def test_audit_seed_range_is_banditlab_runs() -> None:
    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, 9,223,372,036,854,775,807\]"):
        audit("GAP", runs=200, horizon=20, seed=2**64)
