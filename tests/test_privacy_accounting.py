"""Tests of bandit_envs.privacy.accounting: per-user composition of local-DP reports and the ledger.

Composition results are checked against exact privacy curves computed here independently
(binomial hockey-stick for randomized response, the Gaussian curve for the Gaussian) and against
dp-accounting itself; a statistical test with Clopper-Pearson bounds shows that a user's k reports
lose more than the per-report epsilon and stay within the composed one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lazy_module
from scipy import special

from bandit_envs import privacy as P
from bandit_envs.privacy._checks import GAUSSIAN_SAMPLER_BOUND, laplace_tail_delta
from bandit_envs.privacy.accounting import (
    NO_USER,
    ReportLedger,
    ReportMechanism,
    basic_composition,
    max_reports,
    report_cap,
    tight_composition,
    user_ids,
    user_key,
    user_privacy,
)

dp_accounting = lazy_module("dp_accounting")  # imports scipy.stats

stats = lazy_module("scipy.stats")

ALPHA = 1e-3


def rr_hockey_stick(epsilon: float, k: int, eps_prime: float) -> float:
    """Exact delta(eps') of k-fold randomized response: E_P[(1 - e^{eps' - L})_+], L = eps (2J - k)."""
    j = np.arange(k + 1)
    log_p = special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1)
    log_p += j * math.log(special.expit(epsilon)) + (k - j) * math.log(special.expit(-epsilon))
    loss = epsilon * (2 * j - k)
    return float(np.sum(np.exp(log_p) * np.clip(1 - np.exp(eps_prime - loss), 0, None)))


@pytest.mark.parametrize("k", [1, 5, 40, 300])
def test_randomized_response_composition_is_the_exact_optimal_one(k: int) -> None:
    eps, delta = 0.5, 1e-6
    mech = ReportMechanism.randomized_response(eps)
    tight, d = tight_composition(mech, k, delta)
    assert d == delta
    # Valid: the exact curve at that epsilon is within delta (up to the PLD's rounding) ...
    assert rr_hockey_stick(eps, k, tight) <= delta * (1 + 1e-6)
    # ... and tight: 1% less is not (the discretization is sized for that).
    assert rr_hockey_stick(eps, k, 0.99 * tight) > delta
    assert tight <= k * eps


@pytest.mark.parametrize("k", [1, 7, 100, 5000])
def test_gaussian_composition_is_the_gaussian_of_sigma_over_sqrt_k(k: int) -> None:
    eps, delta, sens = 1.0, 1e-5, 2.0
    sigma = P.gaussian_sigma_analytic(eps, delta, sens)
    mech = ReportMechanism.gaussian(sigma, sens, eps, delta)
    tight, _ = tight_composition(mech, k, delta)
    # k Gaussian reports are one Gaussian with sigma / sqrt(k) (Balle & Wang's exact curve).
    assert P.gaussian_delta(sigma / math.sqrt(k), tight, sens) <= delta * (1 + 1e-6)
    assert P.gaussian_delta(sigma / math.sqrt(k), tight * 0.995, sens) > delta
    assert tight <= k * eps


def test_gaussian_beyond_the_pld_range_uses_the_exact_curve() -> None:
    # The authors' LDP-LinUCB setting: classic sigma at epsilon = 8e5, sensitivity 2 sqrt(2).
    sens = 2 * math.sqrt(2)
    sigma = 4 * math.sqrt(math.log(12.5)) / 8e5
    mech = ReportMechanism.gaussian(sigma, sens, 8e5, P.gaussian_delta(sigma, 8e5, sens))
    for k in (1, 1000):
        tight, _ = tight_composition(mech, k, 0.1)
        assert tight > 1e10
        assert P.gaussian_delta(sigma / math.sqrt(k), tight, sens) == pytest.approx(0.1, rel=1e-6)


@pytest.mark.parametrize(("mech", "k"), [(ReportMechanism.laplace(1.0), 30), (ReportMechanism.laplace(0.2), 400)])
def test_laplace_composition_matches_dp_accounting(mech: ReportMechanism, k: int) -> None:
    delta = 1e-6
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0 / mech.epsilon), k))
    reference = accountant.get_epsilon(delta)
    tight, _ = tight_composition(mech, k, delta)
    assert tight == pytest.approx(reference, rel=1e-3)
    assert tight < k * mech.epsilon
    event = mech.dp_event(k)
    assert isinstance(event, dp_accounting.SelfComposedDpEvent) and event.count == k
    assert event.event == dp_accounting.LaplaceDpEvent(1.0 / mech.epsilon)


def test_pure_mechanisms_at_delta_zero_compose_exactly_to_k_epsilon() -> None:
    for mech in (ReportMechanism.laplace(0.3), ReportMechanism.randomized_response(0.3)):
        assert tight_composition(mech, 10, 0.0) == pytest.approx((3.0, 0.0))
        assert basic_composition(mech, 10) == pytest.approx((3.0, 0.0))
    assert tight_composition(ReportMechanism.laplace(1.0), 0, 1e-6) == (0.0, 0.0)


def test_composed_bounds_include_each_reports_sampler_tail() -> None:
    """k reports of a bounded sampler add k delta_s: basic adds it, tight holds at the delta it returns."""
    mech = ReportMechanism.laplace(15.0)
    tail = laplace_tail_delta(15.0)
    assert mech.tail_delta == tail and 3.6e-10 < tail < 3.7e-10
    k = 100_000  # at epsilon = 15 a busy user's tail (3.6e-5) exceeds a usual delta of 1e-5
    out = user_privacy(mech, k, 1e-5)
    assert out.tail_delta == pytest.approx(k * tail, rel=1e-12)
    assert out.basic == pytest.approx((k * 15.0, k * tail), rel=1e-12)
    assert out.tight == pytest.approx((k * 15.0, 1e-5 + k * tail), rel=1e-12)  # tail >= delta: delta + tail
    assert tight_composition(mech, 10, 0.0) == pytest.approx((150.0, 10 * tail), rel=1e-12)
    # a tail below the requested delta: the ideal reports are composed at delta - k delta_s
    low = ReportMechanism.laplace(1.0)
    eps, delta = tight_composition(low, 30, 1e-6)
    assert delta == 1e-6
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 30))
    assert eps == pytest.approx(accountant.get_epsilon(1e-6 - 30 * low.tail_delta), rel=1e-3)
    gauss = ReportMechanism.gaussian(0.01, 1.0, 15.0, 1.0)  # sigma far below the sensitivity: a real tail
    assert gauss.tail_delta == pytest.approx(special.ndtr(100.0 - GAUSSIAN_SAMPLER_BOUND))
    assert ReportMechanism.randomized_response(15.0).tail_delta == 0.0
    # no budget with delta = 0 holds a report of a bounded sampler, and the sentence says why
    assert max_reports(mech, 100.0, 0.0) == 0
    with pytest.raises(ValueError, match=r"^user_budget must allow at least one report.*sampler's tail delta 3\.6e-10"):
        report_cap(mech, None, (100.0, 0.0))
    assert report_cap(ReportMechanism.randomized_response(1.0), None, (3.0, 0.0)) == 3
    assert laplace_tail_delta(1e9) == 1.0  # no overflow: the bound is vacuous there


@pytest.mark.parametrize(
    ("mech", "budget"),
    [
        (ReportMechanism.laplace(0.5), (4.0, 1e-6)),
        (ReportMechanism.randomized_response(1.0), (3.0, 0.0)),
        (ReportMechanism.gaussian(P.gaussian_sigma_analytic(1.0, 1e-6), 1.0, 1.0, 1e-6), (8.0, 1e-5)),
    ],
)
def test_max_reports_is_the_last_count_within_budget(mech: ReportMechanism, budget: tuple[float, float]) -> None:
    k = max_reports(mech, *budget)
    assert k >= 1
    assert tight_composition(mech, k, budget[1])[0] <= budget[0]
    assert tight_composition(mech, k + 1, budget[1])[0] > budget[0]
    assert max_reports(mech, 0.5 * mech.epsilon, budget[1]) == 0


def test_user_privacy_reports_all_three_guarantees() -> None:
    mech = ReportMechanism.randomized_response(0.5)
    out = user_privacy(mech, 40, 1e-6)
    assert out.reports == 40 and out.per_report == (0.5, 0.0)
    assert out.basic == pytest.approx((20.0, 0.0))
    assert out.tight == (tight_composition(mech, 40, 1e-6)[0], 1e-6) and out.tight[0] < 20.0
    assert user_privacy(mech, 40).tight == pytest.approx((20.0, 0.0))  # default delta: the per-report one


def test_a_users_reports_lose_more_than_one_reports_epsilon() -> None:
    """Empirical check: k randomized-response reports of one bit, neighbouring bits 0 and 1.

    The sum of the reports is a sufficient statistic; its upper tails show the per-report
    epsilon is not what the user loses (the check rejects it), while the composed
    (epsilon', delta) holds.
    """
    eps, k, n, delta = 0.5, 8, 400_000, 1e-6
    gen = np.random.default_rng(50)
    sums0 = P.randomized_response(np.zeros((n, k), dtype=int), eps, gen).sum(axis=1)
    sums1 = P.randomized_response(np.ones((n, k), dtype=int), eps, gen).sum(axis=1)
    levels = np.arange(1, k + 1)
    events0 = np.stack([sums0 >= s for s in levels] + [sums0 < s for s in levels])
    events1 = np.stack([sums1 >= s for s in levels] + [sums1 < s for s in levels])
    level = ALPHA / (2 * 2 * events0.shape[0])

    def lower(e: np.ndarray) -> np.ndarray:
        m = e.sum(axis=1)
        return np.where(m > 0, stats.beta.ppf(level, np.maximum(m, 1), n - m + 1), 0.0)

    def upper(e: np.ndarray) -> np.ndarray:
        m = e.sum(axis=1)
        return np.where(m < n, stats.beta.ppf(1 - level, m + 1, np.maximum(n - m, 1)), 1.0)

    with np.errstate(divide="ignore"):
        loss = float(np.max(np.log(np.concatenate([(lower(events1) - delta) / upper(events0),
                                                   (lower(events0) - delta) / upper(events1)]))))  # fmt: skip
    composed, _ = tight_composition(ReportMechanism.randomized_response(eps), k, delta)
    assert loss > eps  # the per-report claim fails for this user
    assert loss <= composed


def test_ledger_counts_per_user_and_copy_and_charges_anonymous_reports_to_all() -> None:
    ledger = ReportLedger(2)
    for users in (["a", 1], ["a", 2], ["b", 1]):
        ledger.record(users, ledger.allowed(users))
    np.testing.assert_array_equal(ledger.worst, [2, 2])
    np.testing.assert_array_equal(ledger.n_users, [2, 2])
    ledger.record(None, np.array([True, True]))
    np.testing.assert_array_equal(ledger.worst, [3, 3])
    anonymous = ReportLedger(1)
    for _ in range(5):
        anonymous.record(None, anonymous.allowed(None))
    assert anonymous.worst[0] == 5 and anonymous.n_users[0] == 1


def test_ledger_cap_withholds_exactly_after_the_allowed_count() -> None:
    ledger = ReportLedger(1, max_reports=3)
    sent = []
    for u in ["x", "x", "y", "x", "x", "y", "y", "y"]:
        ok = ledger.allowed([u])
        ledger.record([u], ok)
        sent.append(bool(ok[0]))
    assert sent == [True, True, True, True, False, True, True, False]
    assert ledger.worst[0] == 3 and ledger.withheld[0] == 2
    ledger.record(None, ledger.allowed(None))  # the worst user is at the cap: no anonymous report
    assert ledger.withheld[0] == 3


def test_ledger_blocks_match_step_by_step_counting() -> None:
    users = np.random.default_rng(51).integers(0, 7, size=(200, 3))
    by_step, by_block = ReportLedger(3), ReportLedger(3)
    for row in users.tolist():
        by_step.record(row, np.ones(3, dtype=bool))
    block = by_block.block_counts(users, 200)
    np.testing.assert_array_equal(by_block.worst_after(block, 200), by_step.worst)
    by_block.record_block(block, 200)
    np.testing.assert_array_equal(by_block.worst, by_step.worst)
    np.testing.assert_array_equal(by_block.worst, [np.bincount(users[:, b]).max() for b in range(3)])
    shared = ReportLedger(2)
    shared.record_block(shared.block_counts(users[:, 0], 200), 200)
    np.testing.assert_array_equal(shared.worst, [np.bincount(users[:, 0]).max()] * 2)


def test_user_ids_name_the_info_key_and_the_copy_of_an_id_that_cannot_be_a_key() -> None:
    ids = np.array([3, [1], 4], dtype=object)
    with pytest.raises(ValueError, match=r"^info\['user_id'\] must hold hashable user ids .*got \[1\] for copy 1\.$"):
        user_ids({"user_id": ids}, 3)
    with pytest.raises(ValueError, match=r"^info\['user_id'\] must hold hashable user ids .*got \{\}\.$"):
        user_ids({"user_id": np.array([{}], dtype=object)}, 1)  # one env: no copy to name


def test_user_ids_of_one_env_ask_for_a_single_id() -> None:
    with pytest.raises(
        ValueError, match=r"^info\['user_id'\] must hold one user id \(a single id\), got shape \(2,\)\.$"
    ):
        user_ids({"user_id": [1, 2]}, 1)
    with pytest.raises(ValueError, match=r"one user id per copy \(3\), got shape \(2,\)\.$"):
        user_ids({"user_id": [1, 2]}, 3)


def test_ldp_thompson_sampling_reads_the_user_id_of_any_mapping_info() -> None:
    """A read-only mapping's user id is charged to that user, as a dict's is (not to every user)."""
    from types import MappingProxyType

    from agents import LDPThompsonSampling

    counts = []
    for wrap in (dict, MappingProxyType):
        agent = LDPThompsonSampling(3, 1.0, seed=1)
        for user in (3, 3, 4):
            agent.update(agent.act(), 0.5, wrap({"user_id": user}))
        counts.append(agent.max_user_reports)
    assert counts == [2, 2]


def test_user_ids_refuse_a_masked_array_whose_masked_entries_would_be_read() -> None:
    with pytest.raises(ValueError, match=r"^info\['user_id'\] must hold one user id per copy \(2\), not a masked"):
        user_ids({"user_id": np.ma.array([1, 2], mask=[0, 1])}, 2)


def test_one_user_is_one_key_whatever_the_ids_type_and_missing_ids_count_for_everyone() -> None:
    """A NaN id is never equal to another, and np.asarray([1, "bob"]) makes 1 the string "1":
    keyed naively, either would split one user into many and understate what it lost."""
    pd = pytest.importorskip("pandas")
    for missing in (None, float("nan"), np.float64("nan"), pd.NA, pd.NaT):
        assert user_key(missing) is NO_USER
    assert user_key(np.int64(7)) == 7 and user_key(7.0) == 7 and user_key("7") == "7"
    with pytest.raises(ValueError, match=r"^a user id must be hashable .*got \[1\]"):
        user_key([1])
    assert user_ids({"user_id": [1, "bob"]}, 2) == [1, "bob"]
    assert user_ids({"user_id": [float("nan"), 3]}, 2) == [NO_USER, 3]
    # step by step: 50 reports with a NaN id are one anonymous user's, charged to everyone
    ledger = ReportLedger(1, max_reports=3)
    ledger.record([5], ledger.allowed([5]))
    sent = 0
    for _ in range(50):
        users = user_ids({"user_id": float("nan")}, 1)
        ok = ledger.allowed(users)
        ledger.record(users, ok)
        sent += int(ok[0])
    assert sent == 2 and ledger.worst[0] == 3 and ledger.withheld[0] == 48
    # blocks: the same user across an int block and a mixed one; NaN blocks add up as anonymous
    ledger = ReportLedger(1)
    for block in (np.array([1, 1, 1, 1, 1]), [1, 1, 1, 1, "x"], np.full(5, np.nan), np.full(5, np.nan)):
        counts = ledger.block_counts(block, 5)
        assert ledger.worst_after(counts, 5)[0] >= ledger.worst[0]
        ledger.record_block(counts, 5)
    assert ledger.worst[0] == 10 + 9  # 10 anonymous reports and user 1's 9
    by_step = ReportLedger(2)
    rows = [[1, 2], [1, "bob"], [None, 2], [1, float("nan")]]
    for row in rows:
        by_step.record(user_ids({"user_id": row}, 2), np.ones(2, dtype=bool))
    by_block = ReportLedger(2)
    by_block.record_block(by_block.block_counts(np.array(rows, dtype=object), 4), 4)
    np.testing.assert_array_equal(by_step.worst, by_block.worst)
    np.testing.assert_array_equal(by_step.worst, [4, 3])  # copy 0: user 1 thrice + one anonymous


def test_user_ids_from_info() -> None:
    assert user_ids(None, 1) is None and user_ids({"regret": 0.0}, 1) is None
    assert user_ids({"user_id": np.int64(7)}, 1) == [7]
    assert user_ids({"user_id": np.array([3, 4])}, 2) == [3, 4]
    with pytest.raises(ValueError, match="user_id"):
        user_ids({"user_id": np.array([3, 4, 5])}, 2)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: tight_composition(ReportMechanism.gaussian(1.0, 1.0, 1.0, 0.2), 3, 0.0), "delta"),
        (lambda: tight_composition(ReportMechanism.laplace(1.0), 3, 1.0), "delta"),
        (lambda: tight_composition(ReportMechanism.laplace(1.0), -1, 0.1), "reports"),
        (lambda: max_reports(ReportMechanism.laplace(1.0), 0.0, 0.1), "epsilon"),
        (lambda: ReportMechanism.laplace(-1.0), "epsilon"),
        (lambda: ReportMechanism.gaussian(0.0, 1.0, 1.0, 0.1), "sigma"),
        (lambda: ReportLedger(2, max_reports=0), "max_reports"),
        (lambda: ReportLedger(2).block_counts(np.zeros((5, 3)), 5), "users"),
    ],
)
def test_bad_arguments_raise_one_sentence(call, name) -> None:
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
