"""No interval from too few problems: below the floor every command gives the estimate
alone, null in its JSON and "n/a (N < 10)" in its tables; the floor's reasons are the
figures docs/metrics.md gives; and the report never asks for fewer problems than it ran."""

import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

import cosim
from cosim._stats._bootstrap import MIN_UNITS, bootstrap, ratios
from cosim.cli import main
from cosim.report import _intervals as report_intervals
from cosim.uncertainty._analysis import analyse
from cosim.uncertainty._factors import Factor

DOC = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"
MISSING = f"n/a (N < {MIN_UNITS})"


def floor_paragraph():
    text = " ".join(DOC.read_text().split())
    return text.split("**Too few problems.**")[1].split("- **")[0]


def test_the_floor_s_reasons_are_the_figures_the_docs_give():
    stats = pytest.importorskip("scipy.stats")
    text = floor_paragraph()
    assert f"Below {MIN_UNITS} problems" in text and MISSING in text

    def tie(n):  # a resample that redraws each problem once: n! orderings of n^n
        return math.factorial(n) / n ** n

    assert f"{tie(2):.0%} at 2 problems, {tie(4):.1%} at 4, {tie(10):.3%} at {MIN_UNITS}" in text

    def bound(n):  # the largest skewness of n values: one apart from n - 1 equal ones
        x = np.zeros(n)
        x[0] = 1.0
        c = x - x.mean()
        return np.mean(c ** 3) / np.mean(c ** 2) ** 1.5

    for n in (2, 5, 10):
        assert bound(n) == pytest.approx((n - 2) / math.sqrt(n - 1), abs=1e-12)
        skews = [(lambda c: np.mean(c ** 3) / np.mean(c ** 2) ** 1.5)(v - v.mean())
                 for v in np.random.default_rng(n).lognormal(0, 2, (2000, n))]
        assert max(skews) <= bound(n) + 1e-9
    assert f"0 at 2 problems, whatever the data, {bound(5):.2f} at 5 and {bound(10):.2f} at {MIN_UNITS}" in text

    def width(n):  # the bootstrap's spread and normal quantile against Student's t
        z = NormalDist().inv_cdf(0.975)
        return math.sqrt((n - 1) / n) * z / stats.t.ppf(0.975, n - 1)

    assert f"{width(5):.0%} as wide as the exact one at 5 problems, {width(10):.0%} at 10 and {width(20):.0%} at 20" \
        in text


def test_two_problems_put_the_bca_mean_at_an_end_as_the_docs_say():
    # By hand: the resamples of (1.81, 4.41) are both low (1/4), one of each (1/2) and both
    # high (1/4); a quarter lie below the mean 3.11, so z0 = Phi^-1(1/4) and, with no
    # acceleration from two values, the ends fall at levels Phi(2 z0 -+ 1.96).
    z0 = NormalDist().inv_cdf(0.25)
    levels = [NormalDist().cdf(2 * z0 + z) for z in (-1.959964, 1.959964)]
    cdf = [(0.25, 1.81), (0.75, 3.11), (1.0, 4.41)]
    ends = [next(v for c, v in cdf if c >= level) for level in levels]
    assert ends == [1.81, 3.11]
    text = floor_paragraph()
    assert f"{z0:.2f}" in text and f"the interval [{ends[0]:.2f}, {ends[1]:.2f}]" in text
    columns = np.column_stack([[1.81, 4.41], [1.0, 1.0]])
    old = bootstrap(columns, ratios([(0, 1)]), resamples=20_000, min_units=2)
    assert (old.low[0], old.high[0]) == pytest.approx(ends)
    assert not bootstrap(columns, ratios([(0, 1)])).available


def test_a_run_below_the_floor_writes_null_and_prints_n_a(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "heteroreason-u280-200", "--problems", str(MIN_UNITS - 1), "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    found = summary["intervals"]
    assert found["min_problems"] == MIN_UNITS
    assert found["latency_s"] is None and found["accuracy"] is None
    line = next(line for line in printed.splitlines() if line.strip().startswith("latency_s"))
    assert f"{summary['latency_s']:.4f}" in line and f"[{MISSING}]" in line


def test_a_serving_run_below_the_floor_writes_null_and_prints_n_a(tmp_path, capsys):
    out = tmp_path / "serve"
    assert main(["serve", "heteroreason-u280-300", "--rate", "1", "--requests", "5", "--slo", "30",
                 "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    found = json.loads((out / "summary.json").read_text())["intervals"]
    assert found["min_requests"] == MIN_UNITS
    for metric in ("latency_mean_s", "latency_p99_s", "queueing_mean_s", "slo_attainment"):
        assert found[metric] is None, metric
    assert f"[{MISSING}]" in next(line for line in printed.splitlines() if "95% intervals" in line)
    assert "nan" not in printed


@pytest.fixture(scope="module")
def few():
    trace = cosim.trace.generate("math500", MIN_UNITS - 2, seed=5).in_memory()
    return {name: cosim.simulate(cosim.load_scenario(name), trace)
            for name in ("gpu-baseline", "heteroreason-u280-200")}


def test_report_records_below_the_floor_hold_null_and_cells_say_n_a(few):
    base = few["gpu-baseline"].summary["latency_s"]
    records = [{"system": name, **result.summary, "speedup": base / result.summary["latency_s"]}
               for name, result in few.items()]
    pairs = report_intervals.attach(records, few)
    fast = records[1]
    assert fast["intervals"]["speedup"] is None and fast["intervals"]["latency_s"] is None
    assert pairs[0]["low"] is None and pairs[0]["high"] is None
    assert report_intervals.cell(fast, "speedup", "{:.2f}") == f"{fast['speedup']:.2f} [{MISSING}]"
    assert report_intervals.error_bar(fast, "speedup") == (0.0, 0.0)
    assert report_intervals.mean_interval(np.arange(MIN_UNITS - 1.0)) is None
    assert report_intervals.mean_interval(np.arange(float(MIN_UNITS))) is not None
    json.dumps(records, allow_nan=False)  # no NaN stands in for an interval


def _headline_report(problems, low, high):
    records = [{"system": report_intervals.HEADLINE, "dataset": "math500", "config": c, "speedup": 1.2,
                "intervals": {"speedup": None if low is None else [low, high]}} for c in (1, 2)]
    return {"problems": problems, "records": records, "pairs": [], "accuracy_gains": []}


def test_the_report_never_asks_for_fewer_problems_than_it_ran():
    # A half-width of 0.3% at 300 problems: +/-1% and +/-0.5% are already reached there; the
    # 1/sqrt(N) law says nothing about fewer problems, so 300 it is.
    lines = report_intervals.significance(_headline_report(300, 1.2 * 0.997, 1.2 * 1.003), ("math500",))
    row = next(line for line in lines if line.startswith("| math500 | 1 |"))
    assert row.endswith("| 300 (reached) | 300 (reached) |")
    # +/-1.5% at 300: N x (1.5 / 1)^2 = 675 and N x (1.5 / 0.5)^2 = 2,700 (one more where
    # the float half-width lands a hair above 1.5%).
    lines = report_intervals.significance(_headline_report(300, 1.2 * 0.985, 1.2 * 1.015), ("math500",))
    row = next(line for line in lines if line.startswith("| math500 | 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "+/-1.50%"
    assert int(cells[4]) in (675, 676) and int(cells[5].replace(",", "")) in (2700, 2701)


def test_the_report_below_the_floor_resolves_nothing_and_asks_for_nothing():
    lines = report_intervals.significance(_headline_report(MIN_UNITS - 1, None, None), ("math500",))
    text = "\n".join(lines)
    assert MISSING in text and f"Run {MIN_UNITS} or more" in text
    assert "N for +/-" not in text and "### Speedups" not in text


def test_morris_confidence_below_the_floor_is_null_and_printed_n_a():
    from cosim.cli._sensitivity import _table

    factors = [Factor(n, 0.0, 1.0, 0.5, "given") for n in ("a", "b")]

    def known(points):
        return [4 * p["a"] + p["b"] ** 2 for p in points]

    few = analyse("y", factors, known, "morris", MIN_UNITS - 1, seed=1)
    enough = analyse("y", factors, known, "morris", MIN_UNITS, seed=1)
    assert all(r.conf is None for r in few.ranking)
    assert all(r.conf is not None and math.isfinite(r.conf) for r in enough.ranking)
    ranking = few.to_json()["ranking"]
    assert [r["mu_star_conf"] for r in ranking] == [None, None]
    json.dumps(few.to_json(), allow_nan=False)
    table = _table(few, {"scenario": "s", "config": 1, "workload": "w"})
    assert f"+/-: {MISSING}" in table and "nan" not in table
    first = next(line for line in table.splitlines() if line.split()[:1] == ["1"])
    assert first.split()[3] == "n/a"  # rank, factor, mu*, +/-
