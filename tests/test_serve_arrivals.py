"""Arrival processes: their distributions against closed-form moments, determinism, errors."""

import math

import numpy as np
import pytest

from cosim import ConfigError, serve, trace

N = 400_000


def gaps(times):
    return np.diff(np.concatenate([[0.0], times]))


def ks_exponential(sample, rate):
    """The Kolmogorov-Smirnov distance between a sample and the exponential of ``rate``."""
    x = np.sort(sample)
    cdf = 1.0 - np.exp(-rate * x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


# The 1% critical value of the one-sample KS distance for large n: 1.628 / sqrt(n).
KS_CRITICAL = 1.628 / math.sqrt(N)


def test_poisson_gaps_are_exponential_with_mean_one_over_the_rate():
    rate = 4.0
    g = gaps(serve.poisson(rate, N, seed=11))
    # The sample mean of N exponentials has standard error (1 / rate) / sqrt(N).
    assert abs(g.mean() - 1 / rate) < 5 * (1 / rate) / math.sqrt(N)
    # Memoryless: P(gap > 1 / rate) = e^-1, a binomial share with standard error sqrt(p (1 - p) / N).
    p = math.exp(-1)
    assert abs(np.mean(g > 1 / rate) - p) < 5 * math.sqrt(p * (1 - p) / N)
    assert ks_exponential(g, rate) < KS_CRITICAL


def test_the_first_arrival_is_one_inter_arrival_time_after_zero():
    times = serve.poisson(1000.0, 50, seed=3)
    assert times[0] > 0 and np.all(np.diff(times) >= 0)
    assert times.dtype == np.float64 and times.shape == (50,)


@pytest.mark.parametrize("cv", [0.25, 0.5, 2.0, 3.0])
def test_gamma_gaps_have_the_asked_mean_and_coefficient_of_variation(cv):
    rate = 2.0
    g = gaps(serve.gamma(rate, cv, N, seed=5))
    mean, sd = 1 / rate, cv / rate
    k = 1 / cv**2
    # Standard errors: the mean's sd / sqrt(N); the sample sd's, from the Gamma's fourth moment
    # (excess kurtosis 6 / k), sd * sqrt((2 + 6 / k) / N) / 2.
    assert abs(g.mean() - mean) < 5 * sd / math.sqrt(N)
    se_sd = sd * math.sqrt((2 + 6 / k) / N) / 2
    assert abs(g.std() - sd) < 5 * se_sd


def test_gamma_with_cv_one_is_poisson_in_distribution():
    rate = 3.0
    g = gaps(serve.gamma(rate, 1.0, N, seed=8))
    assert ks_exponential(g, rate) < KS_CRITICAL
    # ... and the test can tell: a smoother process is far from the exponential.
    assert ks_exponential(gaps(serve.gamma(rate, 0.5, N, seed=8)), rate) > 10 * KS_CRITICAL


def test_draws_are_seeded_and_deterministic():
    assert np.array_equal(serve.poisson(1.0, 100, seed=1), serve.poisson(1.0, 100, seed=1))
    assert not np.array_equal(serve.poisson(1.0, 100, seed=1), serve.poisson(1.0, 100, seed=2))
    assert np.array_equal(serve.gamma(1.0, 2.0, 100, seed=np.int64(4)), serve.gamma(1.0, 2.0, 100, seed=4))
    # A longer draw begins with the shorter one: request i's time does not depend on n.
    assert np.array_equal(serve.poisson(1.0, 200, seed=1)[:100], serve.poisson(1.0, 100, seed=1))


def test_a_trace_with_drawn_arrivals_keeps_its_problems():
    base = trace.generate("math500", 20, seed=7)
    arrived = base.with_arrivals(serve.poisson(0.5, 20, seed=7))
    assert [dict(vars(p), arrival_s=None) for p in arrived] == [vars(p) for p in base]
    assert np.array_equal(serve.trace_arrivals(arrived), serve.poisson(0.5, 20, seed=7))
    assert serve.trace_arrivals(base) is None


BAD = [
    (lambda: serve.poisson(0, 10, 1), r"rate_per_s: must be > 0, got 0.0"),
    (lambda: serve.poisson(-2, 10, 1), r"rate_per_s: must be > 0"),
    (lambda: serve.poisson(math.nan, 10, 1), r"rate_per_s: must be a finite number, got nan"),
    (lambda: serve.poisson(math.inf, 10, 1), r"rate_per_s: must be a finite number"),
    (lambda: serve.poisson("2", 10, 1), r"rate_per_s: must be a number, got '2'"),
    (lambda: serve.poisson(True, 10, 1), r"rate_per_s: must be a number, got True"),
    (lambda: serve.poisson(1, 0, 1), r"n: must be >= 1, got 0"),
    (lambda: serve.poisson(1, 2.5, 1), r"n: must be a whole number, got 2.5"),
    (lambda: serve.poisson(1, 10, -1), r"seed: must be >= 0, got -1"),
    (lambda: serve.gamma(1, 0, 10, 1), r"cv: must be > 0, got 0.0"),
    (lambda: serve.gamma(1, -1, 10, 1), r"cv: must be > 0"),
    (lambda: serve.gamma(1, math.nan, 10, 1), r"cv: must be a finite number, got nan"),
    (lambda: serve.gamma(0, 1, 10, 1), r"rate_per_s: must be > 0"),
    (lambda: serve.poisson(1e-6, 10, 1), r"rate_per_s: 10 requests at 1e-06 per second arrive over about 1e\+07 s"),
]


@pytest.mark.parametrize("call,message", BAD)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


def test_arrival_ns_is_the_engine_column():
    column = serve.arrival_ns([0.0, 3e-9, 1.25, 1.25])
    assert column.dtype == np.int64 and column.tolist() == [0, 3, 1_250_000_000, 1_250_000_000]
    with pytest.raises(ConfigError, match=r"times_s\[1\]: .* is before times_s\[0\]"):
        serve.arrival_ns([2.0, 1.0])
