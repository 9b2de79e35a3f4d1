"""Intervals of a serving run: blocks of consecutive requests keep the correlation that
queueing makes (an independent bootstrap would be too narrow), the resampled percentile
is numpy's, and cosim serve prints and writes them."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from cosim._stats._serving import _weighted_percentile, serve_intervals
from conftest import run_cli


class _Rows:
    def __init__(self, columns):
        self.columns = columns

    def column(self, name):
        return self.columns[name]


def _run(latency, arrival=None):
    """What serve_intervals reads of a serving run, for latencies written here."""
    n = len(latency)
    arrival = np.arange(n, dtype=float) if arrival is None else arrival
    cols = {"arrival_s": arrival, "latency_s": latency, "queue_s": 0.1 * latency, "service_s": 0.9 * latency}
    summary = SimpleNamespace(slo_s=None, latency_mean_s=latency.mean(), queueing_mean_s=(0.1 * latency).mean(),
                              service_mean_s=(0.9 * latency).mean(),
                              **{f"latency_p{q}_s": np.percentile(latency, q) for q in (50, 90, 99)},
                              queueing_p99_s=np.percentile(0.1 * latency, 99))
    return SimpleNamespace(per_request=_Rows(cols), summary=summary)


def _ar1(n, phi, rng):
    e = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = phi * x[i - 1] + math.sqrt(1 - phi * phi) * e[i]
    return 10 + x


@pytest.mark.parametrize("phi", [0.0, 0.95])
def test_blocks_widen_the_interval_as_much_as_the_correlation_does(phi):
    """For an AR(1) series the standard error of the mean is the independent one times
    sqrt((1 + phi) / (1 - phi)): 1 for independent requests, 6.2 for a queue's phi = 0.95."""
    rng = np.random.default_rng(0)
    ratios = []
    for _ in range(8):
        latency = _ar1(4000, phi, rng)
        iv = serve_intervals(_run(latency), percentiles=())["latency_mean_s"]
        ratios.append((iv.high - iv.low) / (2 * 1.96 * latency.std() / math.sqrt(len(latency))))
    assert np.mean(ratios) == pytest.approx(math.sqrt((1 + phi) / (1 - phi)), rel=0.2)


def test_requests_are_taken_in_arrival_order_not_finishing_order():
    rng = np.random.default_rng(1)
    latency = _ar1(3000, 0.95, rng)
    arrival = np.arange(3000, dtype=float)
    shuffled = rng.permutation(3000)  # rows come in the order requests finished
    a = serve_intervals(_run(latency, arrival), percentiles=())["latency_mean_s"]
    b = serve_intervals(_run(latency[shuffled], arrival[shuffled]), percentiles=())["latency_mean_s"]
    assert (a.low, a.high) == pytest.approx((b.low, b.high), rel=1e-12)


def test_the_resampled_percentile_is_numpys_of_the_repeated_values():
    rng = np.random.default_rng(3)
    values = np.sort(rng.lognormal(size=41))
    weights = rng.integers(0, 4, (60, 41))
    weights[:, 0] += 1
    for q in (50, 90, 99):
        expected = [np.percentile(np.repeat(values, row), q) for row in weights]
        assert _weighted_percentile(values, weights, q) == pytest.approx(expected, rel=1e-12)


def test_cosim_serve_prints_and_writes_the_intervals(tmp_path):
    proc = run_cli("serve", "cluster-heteroreason-u280-200", "--rate", "1.2", "--requests", "120", "--slo", "30",
                   "--out", "s", "--quiet", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    low, high = summary["intervals"]["latency_p99_s"]
    assert low <= summary["latency_p99_s"] <= high
    mean_low, mean_high = summary["intervals"]["latency_mean_s"]
    assert mean_low < summary["latency_mean_s"] < mean_high
    line = next(line for line in proc.stdout.splitlines() if "95% intervals" in line)
    assert f"p99 {summary['latency_p99_s']:.2f} [{low:.2f}, {high:.2f}]" in line
