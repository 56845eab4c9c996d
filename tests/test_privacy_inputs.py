"""Bad inputs of bandit_envs.privacy get one sentence naming the argument; valid ones work as before.

Each test of a refusal failed before its fix (a silent wrong result, or a traceback from deep
inside numpy, dp_accounting or an lru_cache); the valid cases next to them pin the old results.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from bandit_envs.privacy import gaussian_mechanism, laplace_mechanism
from bandit_envs.privacy._checks import gaussian_tail_delta, laplace_tail_delta
from bandit_envs.privacy.accounting import (
    ReportLedger,
    ReportMechanism,
    basic_composition,
    gdp_epsilon,
    max_reports,
    report_cap,
    tight_composition,
    user_privacy,
)
from bandit_envs.privacy.counters import BinaryTreeCounter, HybridCounter, laplace_sum_bound
from bandit_envs.privacy.geodesy import haversine_m
from bandit_envs.privacy.planar_laplace import (
    planar_laplace,
    planar_laplace_latlon,
    planar_laplace_radius_cdf,
    planar_laplace_radius_quantile,
    spherical_laplace_radius_cdf,
    spherical_laplace_radius_quantile,
)
from bandit_envs.validation import MEMORY_LIMIT_ENV_VAR

DOCS = Path(__file__).resolve().parents[1] / "docs"


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# 1. ReportLedger's batch: refused before a list of `batch` dicts is built.


@pytest.mark.parametrize("batch", [10**30, 10**5000], ids=["1e30", "5001 digits"])
def test_ledger_refuses_a_batch_beyond_the_memory_limit(batch, monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_ENV_VAR, "1e9")
    with pytest.raises(ValueError, match=r"^batch=.*would need about .*use fewer copies\.$"):
        ReportLedger(batch)


@pytest.mark.parametrize(("batch", "error"), [(0, ValueError), (-3, ValueError), (True, TypeError), (2.0, TypeError)])
def test_ledger_refuses_a_batch_that_is_not_an_integer_of_at_least_one(batch, error):
    with pytest.raises(error, match="batch"):
        ReportLedger(batch)


def test_ledger_of_a_valid_batch_still_works():
    ledger = ReportLedger(3, max_reports=2)
    assert ledger.batch == 3 and ledger.worst.tolist() == [0, 0, 0]
    ledger.record(None, np.ones(3, dtype=bool))
    assert ledger.worst.tolist() == [1, 1, 1]


# 2. ReportMechanism built directly is checked.


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        (("laplace", float("nan")), ValueError, "epsilon"),
        (("laplace", "1"), TypeError, "epsilon"),
        (("laplace", -5.0), ValueError, "epsilon"),
        (("laplace", True), TypeError, "epsilon"),
        (("laplace", 20.0, 0.0, 0.05), ValueError, "epsilon"),
        (("bogus", 1.0), ValueError, "kind"),
        ((None, 1.0), ValueError, "kind"),
        (("laplace", 1.0, 0.1, 1.0), ValueError, "delta"),
        (("gaussian", 1.0, 2.0, 1.0), ValueError, "delta"),
        (("gaussian", 1.0, "0.1", 1.0), TypeError, "delta"),
        (("laplace", 1.0), ValueError, "noise_multiplier"),  # the default 0: LaplaceDpEvent(0)
        (("laplace", 1.0, 0.0, 3.0), ValueError, "noise_multiplier"),
        (("gaussian", 1.0, 1e-5), ValueError, "noise_multiplier"),
        (("gaussian", 1.0, 1e-5, float("inf")), ValueError, "noise_multiplier"),
        (("randomized_response", 1.0, 0.0, 2.0), ValueError, "noise_multiplier"),
        (("laplace", 1.0, 0.0, 1.0, -1.0), ValueError, "tail_delta"),
        (("gaussian", 1.0, 1e-5, 1.0, float("nan")), ValueError, "tail_delta"),
        (("randomized_response", 1.0, 0.0, 0.0, [0.0]), TypeError, "tail_delta"),
    ],
)
def test_report_mechanism_checks_its_fields(args, error, name):
    with pytest.raises(error, match=rf"^{name} must"):
        ReportMechanism(*args)


def test_report_mechanism_constructors_and_valid_fields_still_work():
    lap = ReportMechanism.laplace(1.0)
    assert lap == ReportMechanism("laplace", 1.0, 0.0, 1.0, laplace_tail_delta(1.0))
    assert basic_composition(lap, 3) == (3.0, 3 * laplace_tail_delta(1.0))
    gauss = ReportMechanism.gaussian(2.0, 1.0, 0.5, 0.06)  # exact delta 0.0525
    assert (gauss.noise_multiplier, gauss.tail_delta) == (2.0, gaussian_tail_delta(0.5))
    assert ReportMechanism.gaussian(1.0, 1.0, 8e5, 1.0).epsilon == 8e5  # LDP-LinUCB's large epsilon
    rr = ReportMechanism.randomized_response(2)
    assert rr == ReportMechanism("randomized_response", 2.0) and isinstance(rr.epsilon, float)
    assert tight_composition(rr, 1, 0.0) == (2.0, 0.0)
    direct = ReportMechanism("laplace", np.float64(0.5), 0, 2)  # numbers of any real type, stored as floats
    assert type(direct.epsilon) is float and direct.noise_multiplier == 2.0 and direct.tail_delta == 0.0


# 3. The accounting functions check their mechanism; gdp_epsilon validates before its cache.


@pytest.mark.parametrize(
    "call",
    [
        lambda m: basic_composition(m, 3),
        lambda m: tight_composition(m, 3, 1e-6),
        lambda m: max_reports(m, 5, 1e-6),
        lambda m: user_privacy(m, 5),
        lambda m: report_cap(m, None, (1.0, 0.0)),
        lambda m: report_cap(m, 4, None),
    ],
)
@pytest.mark.parametrize("mechanism", [1.0, "laplace", None, ("laplace", 1.0)])
def test_accounting_functions_refuse_a_mechanism_that_is_not_a_report_mechanism(call, mechanism):
    with pytest.raises(TypeError, match=r"^mechanism must be a ReportMechanism .*, got "):
        call(mechanism)


def test_accounting_functions_of_a_report_mechanism_still_work():
    mechanism = ReportMechanism.randomized_response(1.0)
    assert basic_composition(mechanism, 2) == (2.0, 0.0)
    assert max_reports(mechanism, 3.0, 0.0) == 3
    assert report_cap(mechanism, 4, None) == 4 and report_cap(mechanism, None, None) is None
    assert user_privacy(mechanism, 2).basic == (2.0, 0.0)


@pytest.mark.parametrize(("mu", "delta", "name"), [([1.0], 1e-5, "mu"), ({1.0}, 1e-5, "mu"), (1.0, [1e-5], "delta")])
def test_gdp_epsilon_refuses_a_list_in_one_sentence_not_as_an_unhashable_key(mu, delta, name):
    with pytest.raises(TypeError, match=rf"^{name} must be a real number"):
        gdp_epsilon(mu, delta)


def test_gdp_epsilon_of_numbers_still_works():
    assert gdp_epsilon(0, 1e-5) == 0.0
    assert gdp_epsilon(1, 1e-5) == gdp_epsilon(1.0, 1e-5) > 0.0
    assert gdp_epsilon(np.float64(0.5), 1e-5) < gdp_epsilon(1.0, 1e-5)


# 4. BinaryTreeCounter's grid.


@pytest.mark.parametrize(
    ("grid", "bounds", "epsilon"),
    [
        (1e-310, (0.0, 1.0), 1.0),  # subnormal: values / grid overflow to inf, releases inf and NaN
        (1e-307, (0.0, 1.0), 1.0),  # normal, but 36 noise scales over it overflow
        (1e-300, (0.0, 1e10), 1e-100),  # too fine for the p-sums and noise of these bounds and epsilon
        (1e308, (0.0, 1.0), 1.0),  # the noise scale depth * (width + grid) / epsilon overflows
    ],
)
def test_counter_refuses_a_grid_that_makes_releases_overflow_and_names_it(grid, bounds, epsilon):
    with pytest.raises(ValueError, match=r"^grid must "):
        BinaryTreeCounter(4, epsilon, rng(), bounds, grid=grid)


def test_counter_refuses_bounds_whose_width_is_outside_the_sensitivity_range():
    with pytest.raises(ValueError, match=r"^bounds must have a width"):
        BinaryTreeCounter(4, 1.0, rng(), (0.0, 1e-320))
    with pytest.raises(ValueError, match=r"^bounds must have a width"):
        HybridCounter(1.0, rng(), (0.0, 1e-300))


def test_counter_of_a_valid_grid_still_releases_finite_multiples_of_it():
    counter = BinaryTreeCounter(4, 1.0, rng(), grid=2.0**-20)
    values = np.array([counter.add(x) for x in (1.0, 0.0, 0.5, 1.0)])
    assert np.all(np.isfinite(values)) and np.array_equal(values / 2.0**-20, np.rint(values / 2.0**-20))
    assert BinaryTreeCounter(4, 1.0, rng(), grid=2.0**-996).grid == 2.0**-996  # fine but no overflow: kept
    hybrid = HybridCounter(0.5, rng(), (0.0, 2.0))  # passes its own grid to its binary counters
    assert all(math.isfinite(hybrid.add(1.0)) for _ in range(40))


# 5. laplace_sum_bound.


def test_laplace_sum_bound_is_finite_for_a_subnormal_gamma():
    log_term = math.log(2.0) - math.log(1e-310)
    assert laplace_sum_bound([1.0], 1e-310) == pytest.approx(math.sqrt(log_term) * math.sqrt(8.0 * log_term))


@pytest.mark.parametrize("scales", [b"3", "3", 1.0, None, np.array(2.0), np.ones((2, 2)), bytearray(b"3")])
def test_laplace_sum_bound_refuses_scales_that_are_not_a_sequence(scales):
    with pytest.raises(TypeError, match=r"^scales must be a sequence"):
        laplace_sum_bound(scales, 0.1)


def test_laplace_sum_bound_refuses_a_bound_beyond_the_largest_float():
    with pytest.raises(ValueError, match=r"^scales must give a bound below the largest float"):
        laplace_sum_bound([1e308, 1e308], 0.1)


def test_laplace_sum_bound_scales_sums_of_squares_that_over_or_underflow():
    factor = math.sqrt(8.0 * math.log(20.0))
    assert laplace_sum_bound([1e200] * 100, 0.1) == pytest.approx(10.0 * 1e200 * factor)
    assert laplace_sum_bound([1e-200] * 100, 0.1) == pytest.approx(10.0 * 1e-200 * factor)


def test_laplace_sum_bound_of_valid_scales_is_unchanged():
    assert laplace_sum_bound([3.0], 0.1) == 3.0 * math.sqrt(math.log(20.0)) * math.sqrt(8.0 * math.log(20.0))
    scales = [3.0, 4.0]
    assert laplace_sum_bound(scales, 0.5) == math.sqrt(25.0) * math.sqrt(8.0 * math.log(4.0))
    assert laplace_sum_bound((x for x in scales), 0.5) == laplace_sum_bound(np.array(scales), 0.5)
    assert laplace_sum_bound([], 0.1) == 0.0


# 6. planar_laplace: radii and probabilities are real numbers, never parsed or cast.


RADIUS_FUNCTIONS = [planar_laplace_radius_cdf, spherical_laplace_radius_cdf]
QUANTILE_FUNCTIONS = [planar_laplace_radius_quantile, spherical_laplace_radius_quantile]


@pytest.mark.parametrize("function", RADIUS_FUNCTIONS)
@pytest.mark.parametrize("r", ["3", np.array([1 + 5j]), True, [1.0, False], np.array(["1"])])
def test_radius_cdfs_refuse_strings_complex_numbers_and_booleans(function, r):
    with pytest.raises(TypeError, match=r"^r must be an array of radii"):
        function(r, 0.01)


@pytest.mark.parametrize("function", RADIUS_FUNCTIONS)
def test_radius_cdfs_refuse_a_radius_beyond_the_range_of_a_float_in_one_sentence(function):
    with pytest.raises(ValueError, match=r"^r must be an array of radii >= 0, got a number beyond"):
        function(np.array([10**400], dtype=object), 0.01)


@pytest.mark.parametrize("function", QUANTILE_FUNCTIONS)
@pytest.mark.parametrize("p", [True, False, "0.5", np.array([0.5 + 1j])])
def test_radius_quantiles_refuse_strings_complex_numbers_and_booleans(function, p):
    with pytest.raises(TypeError, match=r"^p must be"):
        function(p, 0.01)


def test_radius_functions_of_valid_inputs_still_work():
    assert planar_laplace_radius_cdf(3, 0.01) == pytest.approx(1.0 - (1.0 + 0.03) * math.exp(-0.03))
    assert planar_laplace_radius_cdf(np.array([10**3], dtype=object), 0.01) == pytest.approx(
        1.0 - 11.0 * math.exp(-10.0)
    )
    r = planar_laplace_radius_quantile([0.25, 0.5], 0.01)
    assert planar_laplace_radius_cdf(r, 0.01) == pytest.approx([0.25, 0.5])
    assert spherical_laplace_radius_cdf(spherical_laplace_radius_quantile(0.5, 0.01), 0.01) == pytest.approx(0.5)


def test_coordinates_refuse_booleans():
    with pytest.raises(TypeError, match=r"^xy must be"):
        planar_laplace([True, False], 0.01, rng())
    with pytest.raises(TypeError, match=r"^lat must be"):
        planar_laplace_latlon(True, 0.0, 1.0, rng())
    with pytest.raises(TypeError, match=r"^lon must be"):
        planar_laplace_latlon(0.0, [False], 1.0, rng())
    with pytest.raises(TypeError, match=r"^lon2 must be"):
        haversine_m(0.0, 0.0, 1.0, True)
    assert planar_laplace([[0, 1]], 0.01, rng()).shape == (1, 2)  # integer coordinates still work


# 7. A clipping width used as the sensitivity is named by lower and upper, with a sensitivity's range.


@pytest.mark.parametrize("upper", [1e-320, 1e-300])
@pytest.mark.parametrize(
    "mechanism",
    [
        lambda **kw: laplace_mechanism([0.5], 1.0, rng(), **kw),
        lambda **kw: gaussian_mechanism([0.5], 1.0, 1e-5, rng(), **kw),
    ],
)
def test_a_clipping_width_out_of_range_is_refused_naming_lower_and_upper(mechanism, upper):
    with pytest.raises(ValueError, match=r"^lower and upper must be between 1e-100 and 1e\+100 apart") as info:
        mechanism(lower=0, upper=upper)
    assert "grid" not in str(info.value) and not re.search(r"^\w*sensitivity must", str(info.value))


def test_a_clipping_width_beyond_1e100_is_refused_naming_lower_and_upper():
    with pytest.raises(ValueError, match=r"^lower and upper must be"):
        laplace_mechanism([0.5], 1.0, rng(), lower=-1e200, upper=1e200)


def test_valid_clipping_still_works():
    out = laplace_mechanism([0.5, 2.0], 1.0, rng(), lower=0, upper=1)
    again = laplace_mechanism([0.5, 1.0], 1.0, rng(), sensitivity=1.0, lower=0.0, upper=1.0)
    assert np.array_equal(out, again)  # the width is the default sensitivity, as before
    tiny = laplace_mechanism(
        [0.5], 1.0, rng(), sensitivity=1.0, lower=0, upper=1e-300
    )  # explicit: the width is only a floor
    assert np.isfinite(tiny).all()
    assert np.isfinite(gaussian_mechanism([0.5], 1.0, 1e-5, rng(), lower=0, upper=1e-100)).all()


# 8. The documented sampler tail matches the code.


def test_docs_state_the_laplace_tail_the_code_computes():
    text = (DOCS / "mechanisms.md").read_text(encoding="utf-8")
    at_1, at_15 = laplace_tail_delta(1.0), laplace_tail_delta(15.0)
    assert f"{at_1:.1e}" == "3.0e-16" and f"{at_15:.1e}" == "3.6e-10"
    assert "about 3.0·10⁻¹⁶ at ε = 1, 3.6·10⁻¹⁰ at\nε = 15" in text
    assert "2·10⁻¹⁶" not in text and "4·10⁻¹⁰" not in text
    assert laplace_tail_delta(36.8) == 1.0 and "1 from ε = 36.7 on" in text


@pytest.mark.parametrize("grid", [0.3, 3.0, 2.0**-20 * 1.5])
def test_a_counter_grid_that_is_not_a_power_of_two_is_refused(grid):
    # snap(x) = g * rint(x / g) is exact only on a power-of-two grid: elsewhere the output set
    # of the lattice sampler would depend on the input again (bandit_envs/privacy/lattice.py).
    with pytest.raises(ValueError, match="grid must be a power of two"):
        BinaryTreeCounter(4, 1.0, np.random.default_rng(0), grid=grid)
    BinaryTreeCounter(4, 1.0, np.random.default_rng(0), grid=2.0**-20)  # a power of two is accepted
