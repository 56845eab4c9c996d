"""The empirical privacy audit (agents.audit, ``banditlab audit``).

Statistical tests use fixed seeds. Error rates: a mechanism that meets its claim gets a lower
bound above its ε with probability ≤ 2.5% per audit (Clopper–Pearson, see agents/audit/bounds.py);
the broken mechanisms below are flagged with probability near 1 at the runs given (each was flagged
in 10 of 10 seeds when the runs were chosen). Goodness-of-fit checks use significance level 1e-3.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import lazy_module

from agents import DPSE, GAP, UCB, LDPWrapper
from agents.audit import INCONCLUSIVE, NO_VIOLATION, VIOLATION, audit, subject_for
from agents.audit.bounds import (
    ceiling,
    clopper_pearson,
    detectable_probability,
    flag_probability,
    loss_interval,
    loss_lower,
    runs_needed,
)
from agents.audit.canaries import NonPrivateUCB, OverclaimedGAP
from agents.audit.events import ArmSequenceEvents, ThresholdEvents, choose, run_lengths
from agents.audit.neighbours import bresenham, generic_pairs, release_pairs
from agents.audit.procedure import run_audit
from agents.audit.subjects import dpse_subject, gap_subject, laplace_count_subject
from agents.experiments.cli import main

stats = lazy_module("scipy.stats")

SIGNIFICANCE = 1e-3


def _laplace_difference_tail(x: float) -> float:
    """P(L₁ − L₂ > x) for independent standard Laplace L₁, L₂ and x ≥ 0: ½ e^{−x} (1 + x/2)."""
    return 0.5 * math.exp(-x) * (1.0 + x / 2.0)


# --- bounds ----------------------------------------------------------------------------------


def test_clopper_pearson_is_scipys_exact_interval() -> None:
    for k, n in [(0, 10), (3, 10), (10, 10), (57, 400)]:
        lo, hi = clopper_pearson(k, n, 0.025)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert float(lo) == pytest.approx(ci.low, abs=1e-12)
        assert float(hi) == pytest.approx(ci.high, abs=1e-12)


def test_lower_bound_exceeds_a_true_loss_at_most_alpha_over_two_of_the_time() -> None:
    """Counts of an event whose loss is exactly ε: the bound exceeds ε in ≤ 2.5% of 20,000 audits."""
    rng = np.random.default_rng(0)
    eps, n, reps = 1.0, 500, 20_000
    for p_second in (0.02, 0.1, 0.3):
        p_first = p_second * math.exp(eps)
        low = loss_lower(rng.binomial(n, p_first, reps), n, rng.binomial(n, p_second, reps), n, 0.0)
        above = int(np.count_nonzero(low > eps))
        assert stats.binomtest(above, reps, 0.025, alternative="greater").pvalue > SIGNIFICANCE
    # The same check fails for a bound without the Clopper-Pearson margins (the point estimate).
    k1, k2 = rng.binomial(n, 0.1 * math.e, reps), rng.binomial(n, 0.1, reps)
    naive = np.log(k1 / np.maximum(k2, 1))
    assert np.mean(naive > eps) > 0.3


def test_delta_enters_as_p_first_minus_delta() -> None:
    interval = loss_interval(600, 1000, 200, 1000, 0.1)
    assert interval.estimate == pytest.approx(math.log((0.6 - 0.1) / 0.2))
    assert interval.low < interval.estimate < interval.high
    assert loss_lower(50, 1000, 0, 1000, 0.1) == -np.inf  # P(E|D) cannot be shown above δ


def test_flag_probability_matches_simulation() -> None:
    rng = np.random.default_rng(1)
    n, eps, p1, p2 = 300, 0.5, 0.3, 0.08
    exact = flag_probability(p1, p2, n, eps)
    reps = 20_000
    flagged = int(np.count_nonzero(loss_lower(rng.binomial(n, p1, reps), n, rng.binomial(n, p2, reps), n, 0.0) > eps))
    assert stats.binomtest(flagged, reps, exact).pvalue > SIGNIFICANCE
    assert stats.binomtest(flagged, reps, min(1.0, exact + 0.03)).pvalue < SIGNIFICANCE


def test_ceiling_runs_needed_and_detectable_probability() -> None:
    assert ceiling(1000) == pytest.approx(math.log((0.0125 ** (1 / 1000)) / (1 - 0.0125 ** (1 / 1000))))
    need = runs_needed(4.0)
    assert need is not None and ceiling(need) > 4.0 >= ceiling(need - 1)
    with_delta = runs_needed(1.0, delta=0.5)
    assert with_delta is not None and with_delta > runs_needed(1.0)  # type: ignore[operator]
    least = detectable_probability(1.0, 2.0, 2000)
    assert least is not None and 0.0 < least < 1.0
    assert flag_probability(least, least * math.exp(-2.0), 2000, 1.0) >= 0.5
    assert flag_probability(least * 0.8, least * 0.8 * math.exp(-2.0), 2000, 1.0) < 0.5
    assert detectable_probability(1.0, 1.05, 300) is None  # too close to the claim for 300 runs


# --- neighbours and events -----------------------------------------------------------------------


def test_bresenham_tables_have_exact_proportions_and_start_with_one() -> None:
    column = bresenham(0.3, 1000)
    assert set(np.unique(column)) <= {0.0, 1.0} and column[0] == 1.0
    assert np.all(np.abs(np.cumsum(column) - 0.3 * np.arange(1, 1001)) < 1.0 + 1e-9)


def test_pairs_differ_in_the_stated_unit() -> None:
    entry = generic_pairs(50, 2, "entry", group=3)[0]
    first, second = entry.tables()
    assert np.argwhere(first != second).tolist() == [[0, 0], [1, 0], [2, 0]]
    report = generic_pairs(50, 3, "report")[0]
    first, second = report.tables()
    assert np.argwhere(first != second).tolist() == [[0, 0], [0, 1], [0, 2]]
    assert "round 0's rewards (all arms): 1 → 0" in report.change()
    pair = release_pairs(100, list(range(0, 80, 2)), 0.01, 0.05, (2.0,), group=2, decision="x")[0]
    first, second = pair.tables()
    assert first[0:80:2, 0].mean() == pytest.approx(0.9)
    assert second[0:80:2, 0].mean() == pytest.approx(0.9 - 2 / 40)
    assert first[:, 1] == pytest.approx(0.9 - 0.05 - 2 * 0.01)


def test_events_count_arm_sequences_and_choose_the_planted_difference() -> None:
    rng = np.random.default_rng(2)
    n, rounds = 400, 6
    first = np.zeros((n, rounds), dtype=np.int16)
    second = np.zeros((n, rounds), dtype=np.int16)
    first[:, 4] = rng.random(n) < 0.5  # arm 1 at round 4: half the runs on D, never on D′
    blocks = [(0, block) for block in ArmSequenceEvents(2).candidates(first, second)]
    choice = choose(blocks, n, n, 0.0)
    assert not choice.swap and choice.varied
    np.testing.assert_array_equal(choice.event.test(first), first[:, 4] == 1)
    assert choice.event.count(second) == 0
    assert choice.event.description == "arm 1 played at round 4"  # the first of the equivalent events
    assert run_lengths(np.array([0, 0, 1, 1, 1, 0])) == "0×2, 1×3, 0×1"
    values = ThresholdEvents().candidates(rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n))
    choice = choose([(0, block) for block in values], n, n, 0.0)
    assert choice.score > 0 and choice.varied


# --- known mechanisms and broken agents ---------------------------------------------------------


def test_laplace_count_passes_at_its_epsilon_and_a_miscalibrated_one_is_rejected() -> None:
    good = run_audit(laplace_count_subject(0.5), runs=4000, seed=3)
    assert good.verdict == NO_VIOLATION and good.epsilon_lower <= 0.5
    assert good.epsilon_lower > 0.2  # the audit is not vacuous: threshold events show most of ε
    bad = run_audit(laplace_count_subject(0.5, noise_epsilon=1.5), runs=4000, seed=3)
    assert bad.verdict == VIOLATION and bad.epsilon_lower > 0.5
    assert bad.interval[0] <= 1.5 <= bad.interval[1] or bad.interval[1] < 1.5  # never above the true loss


def test_a_non_private_agent_claimed_private_is_rejected() -> None:
    result = audit("NonPrivateUCB", epsilon=1.0, runs=200, seed=0)
    assert result.verdict == VIOLATION
    assert result.p_first in (0.0, 1.0) and result.p_second == 1.0 - result.p_first
    assert result.epsilon_lower == pytest.approx(ceiling(100))  # the most 100 runs per input can show


def test_overclaimed_gap_is_rejected() -> None:
    result = audit("OverclaimedGAP", epsilon=0.5, runs=2000, seed=0)
    assert result.verdict == VIOLATION and result.epsilon_lower > 0.5


def test_three_changed_entries_exceed_gaps_one_entry_epsilon() -> None:
    """GAP calibrated for one entry at ε = 0.5 is only 1.5-DP for three: the audit sees more than 0.5."""
    result = audit("GAP", epsilon=0.5, group=3, runs=4000, seed=0)
    assert result.verdict == VIOLATION and 0.5 < result.epsilon_lower <= 1.5


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("GAP", {}), ("GAPU", {}), ("DPSE", {}), ("LDPWrapper", {"horizon": 200}), ("LDPLinUCB", {"horizon": 50})],
)
def test_library_agents_pass_at_their_epsilon(name: str, kwargs: dict[str, int]) -> None:
    result = audit(name, epsilon=1.0, runs=600, seed=1, **kwargs)
    assert result.epsilon_lower <= result.epsilon and result.verdict == NO_VIOLATION
    assert result.power.has_power and result.estimation_runs == 300
    if name.startswith("LDP"):  # round 0's report only: the power statement says what stands for the rest
        assert "covers only the reports of round 0" in result.power.text, result.power.text


def test_release_pairs_sit_where_the_decision_flips() -> None:
    """On D of the pair x noise scales from the boundary, the decision flips with P(Z > x), Z a Laplace difference.

    Checks that the audit's pairs for GAP (which arm leads), GAPU and DPSE (elimination width)
    are where the agents' first release decides, with the agents' own noise.
    """
    for subject, half in [(gap_subject(1.0), 1.0), (gap_subject(1.0, uniform=True), 0.5), (dpse_subject(1.0), 1.0)]:
        pair = subject.pairs[0]  # x = 1
        outputs = subject.sample(pair, 0, 1000, 11)
        flipped = int(np.count_nonzero(outputs[:, -1] == 1))  # arm 1 played after the release
        expected = half * _laplace_difference_tail(1.0)
        assert stats.binomtest(flipped, 1000, expected).pvalue > SIGNIFICANCE, subject.name
        assert stats.binomtest(flipped, 1000, half * _laplace_difference_tail(2.0)).pvalue < SIGNIFICANCE


def test_too_short_a_horizon_or_too_few_runs_is_inconclusive() -> None:
    short = audit("GAP", horizon=300, runs=200, seed=0)
    assert short.verdict == INCONCLUSIVE and not short.power.has_power
    assert "every run on D and on D′ gave the same output" in short.power.text
    assert "not within T = 300" in short.note
    weak = audit("LaplaceCount", epsilon=8.0, runs=200, seed=0)
    assert weak.verdict == INCONCLUSIVE and f"--runs {2 * runs_needed(8.0)}" in weak.power.text  # type: ignore[operator]


def test_the_audit_is_a_function_of_its_seed() -> None:
    assert audit("GAP", runs=200, seed=5) == audit("GAP", runs=200, seed=5)


def test_any_agent_class_or_factory_is_audited_through_the_step_api(tmp_path: Path) -> None:
    def factory(env, setting, seed, n_envs=None):  # type: ignore[no-untyped-def]
        return LDPWrapper(UCB(2, n_envs=n_envs), epsilon=setting["epsilon"], seed=seed)

    result = audit(factory, epsilon=2.0, runs=400, horizon=100)
    assert result.unit == "report" and result.epsilon == 2.0 and result.verdict == NO_VIOLATION
    result = audit(NonPrivateUCB, epsilon=1.0, runs=200, horizon=100)
    assert result.unit == "entry" and result.verdict == VIOLATION

    def one_env(env, setting, seed):  # type: ignore[no-untyped-def]  # no n_envs: one agent and env per run
        return NonPrivateUCB(2, setting["epsilon"], seed=seed)

    single = audit(one_env, epsilon=1.0, runs=200, horizon=30)
    assert single.verdict == VIOLATION and single.p_first + single.p_second == 1.0
    plain = audit(UCB, epsilon=0.5, runs=200, horizon=100)  # no claim of its own: the given ε is audited
    assert plain.verdict == VIOLATION and "states no ε" in plain.note
    for cls in (GAP, OverclaimedGAP):  # the built-in classes get the built-in pairs (around the first release)
        assert subject_for(cls, epsilon=0.5).note == subject_for(cls.__name__, epsilon=0.5).note != ""

    def dpse(env, setting, seed):  # type: ignore[no-untyped-def]  # an elimination agent: the compiled simulator
        return DPSE(2, setting["horizon"], setting["epsilon"], schedule_scale=0.02, seed=seed)

    generic = audit(dpse, epsilon=1.0, runs=400, horizon=200)
    assert generic.unit == "entry" and generic.epsilon == 1.0 and generic.verdict != VIOLATION


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent": "NoSuchAgent"}, "agent must be one of"),
        ({"agent": "GAP", "epsilon": 0.0}, "epsilon must be a finite number in (0, 15]"),
        ({"agent": "GAP", "runs": 50}, "runs must be"),
        ({"agent": "GAP", "unit": "report"}, "unit must be 'entry' for GAP"),
        ({"agent": "GAP", "env_id": "Foo-v0"}, "env must be an env that replays reward tables"),
        ({"agent": "mine", "factory": "no_such_module:make"}, "cannot be imported"),
    ],
)
def test_bad_arguments_are_one_sentence(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        audit(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value) and str(info.value).endswith(".")


# --- the CLI ---------------------------------------------------------------------------------------


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse refuses a bad option value itself
        return int(exc.code or 0)


def test_cli_prints_the_table_line_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["audit", "GAP", "--runs", "400", "--seed", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["agent", "unit", "claimed", "ε"]
    row = out[1].split()
    assert row[:3] == ["GAP", "entry", "1"] and row[3] == "≥" and "400" in row
    assert out[1].endswith(NO_VIOLATION)
    assert any(line.startswith("  power: ") for line in out)


def test_cli_exits_1_for_a_violation_and_audits_a_user_factory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(["audit", "NonPrivateUCB", "--runs", "200"]) == 1
    assert capsys.readouterr().out.splitlines()[1].endswith(VIOLATION)
    module = tmp_path / "my_agent.py"
    module.write_text(
        "from agents.audit.canaries import NonPrivateUCB\n"
        "def make(env, setting, seed, n_envs=None):\n"
        "    return NonPrivateUCB(2, setting['epsilon'], n_envs=n_envs, seed=seed)\n"
    )
    assert _main(["audit", "mine", "--agent", f"{module}:make", "--runs", "200", "--horizon", "60"]) == 1
    assert capsys.readouterr().out.splitlines()[1].startswith("mine ")


@pytest.mark.parametrize(("agent", "label"), [("{module}:make", "make"), ("Custom={module}:make", "Custom")])
def test_cli_audits_a_user_agent_without_a_label(agent: str, label: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """AGENT is optional with --agent: the audit is labelled by the name --agent gives (NAME=, else the factory's)."""
    module = tmp_path / "my_agent.py"
    module.write_text(
        "from agents.audit.canaries import NonPrivateUCB\n"
        "def make(env, setting, seed, n_envs=None):\n"
        "    return NonPrivateUCB(2, setting['epsilon'], n_envs=n_envs, seed=seed)\n"
    )
    assert _main(["audit", "--agent", agent.format(module=module), "--runs", "200", "--horizon", "60"]) == 1
    assert capsys.readouterr().out.splitlines()[1].startswith(f"{label} ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "NoSuchAgent"], "agent must be one of"),
        (["audit", "GAP", "--epsilon", "0"], "--epsilon must be a finite number > 0, got '0'"),
        (["audit", "GAP", "--epsilon", "-1"], "--epsilon must be a finite number > 0"),
        (["audit", "GAP", "--runs", "10"], "--runs must be an integer >= 200, got '10'"),
        (["audit", "GAP", "--env", "Foo-v0"], "env must be an env that replays reward tables"),
        (["audit", "GAP", "--unit", "report"], "unit must be 'entry' for GAP"),
        (["audit", "mine", "--agent", "no_such_module:make"], "cannot be imported"),
        (["audit", "--agent", "no_such_module:make"], "cannot be imported"),
        (["audit"], "audit needs AGENT (one of GAP"),
    ],
)
def test_cli_bad_input_exits_2_with_one_sentence(argv: list[str], message: str, capsys) -> None:  # type: ignore[no-untyped-def]
    assert _main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("banditlab: error: ") and "Traceback" not in captured.err
    assert message in lines[0]
    assert captured.out == ""


def test_cli_a_user_agent_that_fails_or_is_linear_is_one_sentence(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    module = tmp_path / "broken_agent.py"
    module.write_text(
        "from agents import UCB, LinUCB\n"
        "class Broken(UCB):\n"
        "    def update(self, action, reward, info=None):\n"
        "        raise RuntimeError('boom')\n"
        "def make(env, setting, seed, n_envs=None):\n"
        "    return Broken(2, n_envs=n_envs, seed=seed)\n"
        "def linear(env, setting, seed):\n"
        "    return LinUCB(2, seed=seed)\n"
    )
    for factory, message in [("make", "agent 'mine' failed while replaying"), ("linear", "linear contextual agent")]:
        assert _main(["audit", "mine", "--agent", f"{module}:{factory}", "--runs", "200", "--horizon", "20"]) == 2
        captured = capsys.readouterr()
        lines = [line for line in captured.err.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0] and "Traceback" not in captured.err


#: A user agent file: arms at random (its own seeded noise, nothing else), except where ``LEAK`` makes an
#: action a function of one raw reward. ``second``: arm 0 is played at rounds 0 and 1, and round 2's
#: action is 1 iff r_{1,0} > 0.5; ``previous``: from round 3 on every action is 1 iff the previous
#: round's reward > 0.5; ``at 57``: round 58's action is 1 iff r_{57,·} > 0.5 (``declared`` says it releases
#: after round 57). All claim ε = setting["epsilon"] per reward entry.
LEAKY_AGENT = """
import numpy as np

class Leaky:
    privacy_unit = "one reward entry r_{t,k}"

    def __init__(self, epsilon, n_envs, seed, leak):
        self.epsilon, self.n, self.leak = epsilon, n_envs, leak
        self.reset(seed)

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self.t, self.last = 0, np.zeros(self.n or 1)

    def act(self, obs=None):
        action = self.rng.integers(0, 2, self.n or 1)
        if self.leak == "second" and self.t < 2:
            action[:] = 0
        elif (self.leak, self.t) in (("second", 2), ("at 57", 58)) or self.leak == "previous" and self.t >= 3:
            action = (self.last > 0.5).astype(np.int64)
        return action if self.n else int(action[0])

    def update(self, action, reward, info=None):
        self.last = np.atleast_1d(np.asarray(reward, dtype=float))
        self.t += 1

def second(env, setting, seed, n_envs=None):
    return Leaky(setting["epsilon"], n_envs, seed, "second")

def previous(env, setting, seed, n_envs=None):
    return Leaky(setting["epsilon"], n_envs, seed, "previous")

def private(env, setting, seed, n_envs=None):
    return Leaky(setting["epsilon"], n_envs, seed, None)

def at_57(env, setting, seed, n_envs=None):
    return Leaky(setting["epsilon"], n_envs, seed, "at 57")

def declared(env, setting, seed, n_envs=None):
    agent = Leaky(setting["epsilon"], n_envs, seed, "at 57")
    agent.release_rounds = [57]
    return agent

def bad_declaration(env, setting, seed, n_envs=None):
    agent = Leaky(setting["epsilon"], n_envs, seed, None)
    agent.release_rounds = [setting["horizon"]]
    return agent
"""


def _leaky(tmp_path: Path, name: str) -> str:
    module = tmp_path / "leaky_agent.py"
    module.write_text(LEAKY_AGENT)
    return f"{module}:{name}"


@pytest.mark.parametrize("leak", ["second", "previous"])
def test_an_agent_whose_action_carries_one_raw_reward_is_flagged(tmp_path: Path, leak: str) -> None:
    result = audit("leaky", factory=_leaky(tmp_path, leak), epsilon=1.0, runs=2000, horizon=100)
    assert result.verdict == VIOLATION, result.report()


def test_the_search_spans_the_horizon_and_its_power_says_so(tmp_path: Path) -> None:
    result = audit("private", factory=_leaky(tmp_path, "private"), epsilon=1.0, horizon=1000, runs=200)
    assert result.verdict == NO_VIOLATION
    rounds = [int(t) for t in result.note.split("changes searched at rounds ")[1].split(" (")[0].split(", ")]
    assert rounds[:3] == [0, 1, 2] and 500 in rounds and rounds[-1] == 998
    assert len([t for t in rounds if 3 <= t < 500]) >= 2  # middle rounds too
    assert "covers only the changes tried" in result.power.text and "998 of T = 1000" in result.power.text


def test_the_search_tries_the_rounds_an_agent_declares_its_releases_at(tmp_path: Path) -> None:
    hidden = audit("leaky", factory=_leaky(tmp_path, "at_57"), epsilon=1.0, runs=2000, horizon=100)
    assert hidden.verdict == NO_VIOLATION and " 57" not in hidden.note  # a leak at a round not searched passes
    found = audit("leaky", factory=_leaky(tmp_path, "declared"), epsilon=1.0, runs=2000, horizon=100)
    assert found.verdict == VIOLATION and "declared releases [57]" in found.note, found.report()
    with pytest.raises(ValueError, match=r"release_rounds \[100\]; they must be a sequence of round numbers"):
        audit("leaky", factory=_leaky(tmp_path, "bad_declaration"), epsilon=1.0, runs=200, horizon=100)


def test_a_private_user_agent_passes_the_search_at_the_default_runs() -> None:
    def dpts(env, setting, seed, n_envs=None):  # type: ignore[no-untyped-def]
        from agents import DPThompsonSampling

        return DPThompsonSampling(2, epsilon=setting["epsilon"], n_envs=n_envs, seed=seed)

    result = audit(dpts, epsilon=1.0, horizon=60)
    assert result.verdict == NO_VIOLATION and "changes searched at rounds" in result.note, result.report()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_the_documented_power_checks_and_controls_are_rejected_for_ten_seeds(seed: int) -> None:
    from agents.audit.summary import ALL_AUDITS

    for plan in ALL_AUDITS:
        if plan.role != "claim":
            result = audit(
                plan.agent,
                epsilon=plan.epsilon,
                group=plan.group,
                horizon=plan.horizon,
                runs=max(10_000, plan.runs),
                seed=seed,
            )
            assert result.verdict == VIOLATION, (seed, result.report())


def test_the_report_reads_the_result_in_plain_words():
    """The point estimate, what the lower bound means (about 0: could not tell), and what the run could see."""
    from agents.audit import audit

    private = audit("GAP", epsilon=1.0, runs=400, seed=0)
    reading = private.report().splitlines()[2]
    assert reading.startswith("  reading: the best event's privacy loss is estimated at "), reading
    assert f"{private.estimate:.3f}" in reading and "would have flagged a loss of 2 (2× the claim)" in reading
    leaky = audit("NonPrivateUCB", epsilon=1.0, runs=400, seed=0)
    assert leaky.verdict == "violation" and "exceeds the claim 1" in leaky.report().splitlines()[2]
    near_zero = dataclasses.replace(private, epsilon_lower=0.0, interval=(-0.2, 1.3))
    text = near_zero.reading()
    assert "about 0, so this run could not tell a leak from chance" in text
    assert "an upper end above the claim is no evidence of a violation" in text


def test_a_batched_user_agent_returning_one_arm_is_told_why_it_was_batched() -> None:
    """A factory taking ``n_envs`` whose act returns one arm: the sentence says the audit batched it, and how."""
    from agents import UCB

    class OneArm(UCB):
        def act(self, obs=None):  # type: ignore[no-untyped-def, override]
            return 0

    def one_arm(env, setting, seed, n_envs=None):  # type: ignore[no-untyped-def]
        return OneArm(2, n_envs=n_envs, seed=seed)

    with pytest.raises(ValueError, match=r"act returned 0, but it was built with n_envs=\d+ .* one arm per copy"):
        audit(one_arm, epsilon=1.0, horizon=20, runs=200)


def test_an_update_editing_the_returned_action_does_not_change_the_recorded_arms() -> None:
    """The arms counted are those played: an agent zeroing its returned array in ``update`` changes no record."""
    from agents import UCB
    from agents.audit.runner import step_runs

    class Edits(UCB):
        def update(self, action, reward, info=None):  # type: ignore[no-untyped-def, override]
            super().update(action, reward, info)
            if isinstance(action, np.ndarray):
                action[...] = 0

    def build(env, n_envs, seed):  # type: ignore[no-untyped-def]
        return Edits(2, n_envs=n_envs, seed=seed)

    def plain(env, n_envs, seed):  # type: ignore[no-untyped-def]
        return UCB(2, n_envs=n_envs, seed=seed)

    table = np.random.default_rng(3).random((40, 2))
    graph = np.zeros((2, 2), dtype=bool)
    edited = step_runs(build, table, graph, 4, 0, batched=True)
    played = step_runs(plain, table, graph, 4, 0, batched=True)
    np.testing.assert_array_equal(edited, played)
    assert edited.any()
