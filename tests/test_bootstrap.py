"""The bootstrap over problems: a paired interval worked out by enumerating every resample
of a tiny set of problems, the acceleration against a BCa written here from Efron and
Tibshirani's formulas, the width shrinking as 1/sqrt(N), coverage, no interval from too few
problems, and bad options."""

import itertools
import math
from collections import Counter
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest

from cosim.errors import ConfigError
from cosim._stats._bootstrap import MIN_UNITS, bootstrap, ratios

# Four problems, their latencies on a baseline and on a faster system (seconds).
BASE = [4, 6, 5, 9]
FAST = [2, 5, 5, 6]
N = len(BASE)


def exact_distribution():
    """Every one of the 4^4 equally likely ordered resamples and its speedup, exactly."""
    values = [Fraction(sum(BASE[i] for i in idx), sum(FAST[i] for i in idx))
              for idx in itertools.product(range(N), repeat=N)]
    counts = Counter(values)
    atoms = sorted(counts)
    cdf, total = [], 0
    for a in atoms:
        total += counts[a]
        cdf.append(Fraction(total, len(values)))
    return atoms, cdf, values


def inverse_cdf(atoms, cdf, level):
    """The smallest atom whose CDF reaches ``level``, and how far the level sits from the
    CDF's jumps on either side of it (a Monte Carlo bootstrap finds that atom when the
    level is well inside its step)."""
    for k, (a, c) in enumerate(zip(atoms, cdf)):
        if c >= level:
            below = cdf[k - 1] if k else 0
            return a, min(level - float(below), float(c) - level)
    raise AssertionError(level)


def test_paired_percentile_interval_matches_the_enumerated_resamples():
    atoms, cdf, _ = exact_distribution()
    low, margin_low = inverse_cdf(atoms, cdf, 0.025)
    high, margin_high = inverse_cdf(atoms, cdf, 0.975)
    # By hand: 2.5% falls in the step of 11/10 (CDF 11/256 there, 5/256 below it), 97.5% in
    # the step of 18/11 (251/256; 247/256 below).
    assert (low, high) == (Fraction(11, 10), Fraction(18, 11))
    assert min(margin_low, margin_high) > 0.005  # > 7 standard errors of a 50,000-resample quantile
    # Four problems are below the floor for an interval a user sees; the arithmetic is checked here.
    out = bootstrap(np.column_stack([BASE, FAST]), ratios([(0, 1)]), resamples=50_000, method="percentile",
                    min_units=N)
    assert out.estimate[0] == pytest.approx(24 / 18, abs=1e-15)
    assert out.low[0] == pytest.approx(float(low), abs=1e-12)
    assert out.high[0] == pytest.approx(float(high), abs=1e-12)


def test_paired_bca_interval_matches_the_enumerated_resamples():
    atoms, cdf, values = exact_distribution()
    theta = Fraction(sum(BASE), sum(FAST))
    # Efron's BCa: z0 from the share of resamples below the estimate, the acceleration from
    # the jackknife (each problem left out in turn).
    z0 = NormalDist().inv_cdf(sum(v < theta for v in values) / len(values))
    loo = [(sum(BASE) - b) / (sum(FAST) - f) for b, f in zip(BASE, FAST)]
    d = [sum(loo) / N - x for x in loo]
    a = sum(x ** 3 for x in d) / (6 * sum(x * x for x in d) ** 1.5)
    ends = []
    for z in (NormalDist().inv_cdf(0.025), NormalDist().inv_cdf(0.975)):
        level = NormalDist().cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
        end, margin = inverse_cdf(atoms, cdf, level)
        assert margin > 0.005
        ends.append(end)
    out = bootstrap(np.column_stack([BASE, FAST]), ratios([(0, 1)]), resamples=50_000, method="bca", min_units=N)
    assert (out.low[0], out.high[0]) == pytest.approx([float(e) for e in ends], abs=1e-12)
    assert ends[0] != Fraction(11, 10) or ends[1] != Fraction(18, 11)  # the correction moved an end


def hand_bca(values, level=0.95, resamples=400_000, seed=1, acceleration=True):
    """Efron and Tibshirani's BCa (An Introduction to the Bootstrap, chapter 14) of the mean,
    from draws of its own: z0 from the share of resamples below the estimate, the
    acceleration from the jackknife's leave-one-out means."""
    n = len(values)
    theta = values.mean()
    boot = values[np.random.default_rng(seed).integers(0, n, (resamples, n))].mean(axis=1)
    z0 = NormalDist().inv_cdf(float(np.mean(boot < theta)))
    loo = (values.sum() - values) / (n - 1)
    d = loo.mean() - loo
    a = float(np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)) if acceleration else 0.0
    ends = []
    for z in (NormalDist().inv_cdf((1 - level) / 2), NormalDist().inv_cdf((1 + level) / 2)):
        ends.append(float(np.quantile(boot, NormalDist().cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))))
    return a, ends


def test_the_acceleration_moves_the_ends_of_a_skewed_mean():
    # Twelve values far from symmetric: the squares of an exponential's quantiles.
    n = 12
    values = (-np.log(1 - (np.arange(1, n + 1) - 0.5) / n)) ** 2
    a, (low, high) = hand_bca(values)
    _, (low0, high0) = hand_bca(values, acceleration=False)
    # For a mean the jackknife acceleration is the values' skewness over 6 sqrt(n).
    centred = values - values.mean()
    skew = np.mean(centred ** 3) / np.mean(centred ** 2) ** 1.5
    assert a == pytest.approx(skew / (6 * math.sqrt(n)), rel=1e-12) and a > 0.1
    width = high - low
    # Without the acceleration the upper end falls by over 15% of the width: far beyond the
    # Monte Carlo spread of either bootstrap (about 2% of it at these resample counts).
    assert high - high0 > 0.15 * width
    out = bootstrap(np.column_stack([values, np.ones(n)]), ratios([(0, 1)]), resamples=50_000)
    assert out.low[0] == pytest.approx(low, abs=0.05 * width)
    assert out.high[0] == pytest.approx(high, abs=0.05 * width)
    assert abs(out.high[0] - high0) > 0.1 * width


def test_a_run_against_itself_is_exactly_one_under_every_resample():
    latency = np.random.default_rng(5).lognormal(1.0, 0.7, 200)
    out = bootstrap(np.column_stack([latency, latency]), ratios([(0, 1)]))
    assert (out.estimate[0], out.low[0], out.high[0]) == (1.0, 1.0, 1.0)


def _population(n, rng):
    """Paired latencies: a lognormal baseline and a system about 15% faster, noisily."""
    base = rng.lognormal(1.5, 0.6, n)
    return base, base * rng.lognormal(-0.15, 0.12, n)


def test_the_interval_shrinks_as_one_over_sqrt_n():
    # The population's constants, from a draw so large their own error is negligible: the
    # delta method gives the half-width of the ratio R = sum b / sum f as
    # 1.96 sd(b - R f) / (sqrt(N) mean(f)), and of the mean as 1.96 sd(b) / sqrt(N).
    big_base, big_fast = _population(2_000_000, np.random.default_rng(99))
    r = big_base.mean() / big_fast.mean()
    constants = np.array([1.96 * np.std(big_base - r * big_fast) / big_fast.mean(), 1.96 * np.std(big_base)])
    rng = np.random.default_rng(11)
    scaled = {}
    for n in (50, 200, 800, 3200):
        widths = []
        for replicate in range(12):  # the mean width over independent samples of N problems
            base, fast = _population(n, rng)
            out = bootstrap(np.column_stack([base, fast, np.ones(n)]), ratios([(0, 1), (0, 2)]), resamples=1000,
                            seed=replicate)
            widths.append((out.high - out.low) / 2)
        scaled[n] = np.mean(widths, axis=0) * math.sqrt(n)
        assert scaled[n] == pytest.approx(constants, rel=0.1), n
    # Each fourfold increase of N halves the width.
    for small, large in ((50, 200), (200, 800), (800, 3200)):
        assert scaled[small] / scaled[large] == pytest.approx([1.0, 1.0], rel=0.12)


def test_ninety_five_percent_intervals_cover_the_true_ratio_about_95_percent_of_the_time():
    rng = np.random.default_rng(2)
    # The population's ratio of means, from a draw so large its own error is negligible.
    big_base, big_fast = _population(2_000_000, np.random.default_rng(99))
    truth = big_base.mean() / big_fast.mean()
    hits = 0
    trials = 300
    for t in range(trials):
        base, fast = _population(60, rng)
        out = bootstrap(np.column_stack([base, fast]), ratios([(0, 1)]), resamples=1000, seed=t)
        hits += out.low[0] <= truth <= out.high[0]
    # Binomial(300, 0.95) lies in [270, 295] with probability > 0.999.
    assert 270 <= hits <= 295


def test_bca_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    base, fast = _population(300, np.random.default_rng(4))
    ours = bootstrap(np.column_stack([base, fast]), ratios([(0, 1)]), resamples=20_000)
    theirs = stats.bootstrap((base, fast), lambda b, f, axis: b.sum(axis) / f.sum(axis), paired=True,
                             vectorized=True, n_resamples=20_000, method="BCa", random_state=1)
    width = ours.high[0] - ours.low[0]
    assert ours.low[0] == pytest.approx(theirs.confidence_interval.low, abs=0.03 * width)
    assert ours.high[0] == pytest.approx(theirs.confidence_interval.high, abs=0.03 * width)


def test_the_same_seed_gives_the_same_interval_and_another_seed_a_close_one():
    base, fast = _population(300, np.random.default_rng(4))
    cols = np.column_stack([base, fast])
    a, b = bootstrap(cols, ratios([(0, 1)]), seed=7), bootstrap(cols, ratios([(0, 1)]), seed=7)
    c = bootstrap(cols, ratios([(0, 1)]), seed=8)
    assert (a.low[0], a.high[0]) == (b.low[0], b.high[0])
    assert (a.low[0], a.high[0]) != (c.low[0], c.high[0])
    assert c.low[0] == pytest.approx(a.low[0], abs=0.1 * (a.high[0] - a.low[0]))


def test_a_long_run_is_resampled_in_blocks_with_the_same_interval(monkeypatch):
    from cosim._stats import _bootstrap

    base, fast = _population(20_000, np.random.default_rng(8))
    cols = np.column_stack([base, fast])
    whole = bootstrap(cols, ratios([(0, 1)]))
    monkeypatch.setattr(_bootstrap, "MAX_UNITS", 2_000)
    blocked = bootstrap(cols, ratios([(0, 1)]))
    assert blocked.units == 2_000 and whole.units == 20_000
    assert blocked.estimate[0] == pytest.approx(whole.estimate[0], rel=1e-12)
    width = whole.high[0] - whole.low[0]
    assert blocked.high[0] - blocked.low[0] == pytest.approx(width, rel=0.15)


def test_a_zero_denominator_gives_no_interval_not_an_error():
    out = bootstrap(np.column_stack([np.arange(12.0), np.zeros(12)]), ratios([(0, 1)]), resamples=200)
    assert out.available and math.isnan(out.low[0]) and math.isnan(out.high[0])


@pytest.mark.parametrize("options,message", [
    ({"level": 1.0}, "level: a confidence level in [0.5, 1)"),
    ({"level": float("nan")}, "level: a confidence level"),
    ({"resamples": 10}, "resamples: a whole number >= 100"),
    ({"method": "bc"}, "method: one of bca, percentile"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        bootstrap(np.ones((10, 2)), ratios([(0, 1)]), **options)


def test_fewer_problems_than_the_floor_give_the_estimate_without_ends():
    stat = ratios([(0, 1)])
    # Two problems: BCa would put the mean at one end ([1.81, 3.11] for a mean of 3.11: z0 is
    # Phi^-1(1/4) whatever the values, as half the resamples are the sample itself).
    two = bootstrap(np.column_stack([[1.81, 4.41], [1.0, 1.0]]), stat)
    assert not two.available and two.estimate[0] == pytest.approx(3.11)
    assert math.isnan(two.low[0]) and math.isnan(two.high[0])
    values = np.random.default_rng(3).lognormal(0, 1, MIN_UNITS)
    below = bootstrap(np.column_stack([values[:-1], np.ones(MIN_UNITS - 1)]), stat)
    at = bootstrap(np.column_stack([values, np.ones(MIN_UNITS)]), stat)
    assert not below.available and math.isnan(below.low[0]) and below.units == MIN_UNITS - 1
    assert at.available and at.low[0] < values.mean() < at.high[0]
    assert bootstrap(np.ones((1, 2)), stat).estimate[0] == 1.0  # one problem: its value, no interval
    with pytest.raises(ConfigError, match="at least 1 problem"):
        bootstrap(np.ones((0, 2)), stat)
