"""Sampling intervals of real runs: every metric's parts sum to the summary's value, a
speedup is resampled paired with its baseline, cosim run prints and writes them."""

import json
import math

import numpy as np
import pytest

import cosim
from cosim.errors import ConfigError
from cosim.uncertainty import METRICS, compare, intervals


@pytest.fixture(scope="module")
def runs():
    trace = cosim.trace.generate("math500", problems=60, seed=4).in_memory()
    return {name: cosim.simulate(cosim.load_scenario(name), trace)
            for name in ("gpu-baseline", "heteroreason-u280-200", "heteroreason-u280-300")}


def test_each_metric_is_the_summarys_ratio_of_sums(runs):
    result = runs["heteroreason-u280-200"]
    found = intervals(result)
    assert set(found) == set(METRICS)
    for metric, iv in found.items():
        assert iv.estimate == pytest.approx(result.summary[metric], rel=1e-9, abs=1e-15), metric
        assert iv.low <= iv.estimate <= iv.high or iv.low == iv.high, metric


def test_mean_latency_interval_is_the_bootstrap_of_the_plain_mean(runs):
    # The same resamples as an independent percentile bootstrap of the mean, written here.
    latency = np.asarray(runs["gpu-baseline"].per_problem.column("latency_s"))
    found = intervals(runs["gpu-baseline"], method="percentile", resamples=4000)["latency_s"]
    rng = np.random.default_rng(12)
    means = latency[rng.integers(0, len(latency), (4000, len(latency)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    width = high - low
    assert found.low == pytest.approx(low, abs=0.05 * width) and found.high == pytest.approx(high, abs=0.05 * width)


def test_a_speedup_interval_is_paired_and_narrower_than_unpaired(runs):
    base, fast = runs["gpu-baseline"], runs["heteroreason-u280-200"]
    speedup = intervals(fast, base)["speedup"]
    assert speedup.estimate == pytest.approx(base.summary["latency_s"] / fast.summary["latency_s"], rel=1e-12)
    # Unpaired: each run's mean latency resampled on its own; the ratio of the ends bounds
    # how wide an interval that ignores the pairing would be.
    b, f = intervals(base)["latency_s"], intervals(fast)["latency_s"]
    unpaired_width = b.high / f.low - b.low / f.high
    assert speedup.high - speedup.low < 0.3 * unpaired_width


def test_compare_gives_every_pair_its_latency_ratio(runs):
    out = compare(runs, "gpu-baseline", pairs=[("heteroreason-u280-200", "heteroreason-u280-300")])
    ratio = out.ratios[("heteroreason-u280-200", "heteroreason-u280-300")]
    expected = runs["heteroreason-u280-200"].summary["latency_s"] / runs["heteroreason-u280-300"].summary["latency_s"]
    assert ratio.estimate == pytest.approx(expected, rel=1e-12)
    assert ratio.low > 1  # the 300 MHz clock is faster on these problems, resolved
    assert out.metrics["gpu-baseline"]["speedup"].low == out.metrics["gpu-baseline"]["speedup"].high == 1.0


def test_runs_on_different_problems_cannot_be_paired(runs):
    other = cosim.simulate(cosim.load_scenario("gpu-baseline"), cosim.trace.generate("gsm8k", 60, seed=4))
    with pytest.raises(ConfigError, match="same trace"):
        intervals(runs["heteroreason-u280-200"], other)
    with pytest.raises(ConfigError, match="'energy_j_draft': no interval"):
        compare(runs, metrics=("energy_j_draft",))


def test_cosim_run_prints_each_mean_with_its_interval_and_writes_both_ends(tmp_path, capsys):
    from cosim.cli import main

    out = tmp_path / "run"
    assert main(["run", "heteroreason-u280-200", "--problems", "30", "--seed", "2", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    low, high = summary["intervals"]["latency_s"]
    assert low < summary["latency_s"] < high
    assert summary["intervals"]["method"].startswith("bca") and summary["intervals"]["seed"] == 0
    line = next(line for line in printed.splitlines() if line.strip().startswith("latency_s"))
    assert f"[{low:.4f}, {high:.4f}]" in line
    assert math.isfinite(summary["intervals"]["accuracy"][0])


def test_a_run_on_disk_is_read_a_batch_at_a_time_into_the_same_blocks(tmp_path, monkeypatch):
    from cosim._stats import _bootstrap

    trace = cosim.trace.generate("gsm8k", problems=1200, seed=6).in_memory()
    scn = cosim.load_scenario("heteroreason-u280-300")
    in_memory = cosim.simulate(scn, trace)
    on_disk = cosim.simulate(scn, trace, rows_to=tmp_path)
    assert on_disk.per_problem._reader is not None  # the rows stay in the Arrow file
    monkeypatch.setattr(_bootstrap, "MAX_UNITS", 100)  # 1,200 problems: 100 blocks of 12
    a, b = intervals(in_memory), intervals(on_disk)
    for metric in ("latency_s", "energy_j_per_token", "acceptance_rate", "stall_step_share"):
        assert (b[metric].low, b[metric].high) == pytest.approx((a[metric].low, a[metric].high), rel=1e-9), metric
        assert b[metric].estimate == pytest.approx(on_disk.summary[metric], rel=1e-9)


def test_a_declared_metric_gets_its_interval_from_its_declaration():
    # Every summary value declared with its per-problem parts has an interval, and the parts
    # read a row as declared: the numerator a product of columns, the denominator a sum
    # (none: one per problem), a column known for some problems counting only where known.
    from cosim.schema._rows import TOTALS, Parts
    from cosim._stats._intervals import _part_functions
    assert METRICS == tuple(t.name for t in TOTALS if t.parts is not None)
    row = {"a": np.array([2.0, 3.0]), "b": np.array([5.0, 7.0]), "c": np.array([1.0, 0.5]),
           "k": np.array([1.0, np.nan])}
    num, den = _part_functions(Parts(("a", "b"), ("b", "c")))
    assert num(row).tolist() == [10.0, 21.0] and den(row).tolist() == [6.0, 7.5]
    num, den = _part_functions(Parts(("a",)))
    assert num(row).tolist() == [2.0, 3.0] and den(row).tolist() == [1.0, 1.0]
    num, den = _part_functions(Parts(("k",), known="k"))
    assert num(row).tolist() == [1.0, 0.0] and den(row).tolist() == [1.0, 0.0]


def test_the_speedup_is_the_declared_ratio_everywhere(runs):
    # result.with_baseline and the paired interval both take the speedup from its declaration:
    # the baseline's mean latency over the run's.
    from cosim.schema._rows import RATIOS
    speedup = next(r for r in RATIOS if r.name == "speedup")
    assert (speedup.of, speedup.baseline) == ("latency_s", "gpu-baseline")
    run, base = runs["heteroreason-u280-300"], runs["gpu-baseline"]
    with_base = run.with_baseline(base)
    expected = base.summary["latency_s"] / run.summary["latency_s"]
    assert with_base.summary["speedup"] == pytest.approx(expected, rel=1e-12)
    assert intervals(run, base)["speedup"].estimate == pytest.approx(expected, rel=1e-9)
    per = np.asarray(with_base.per_problem.column("speedup"))
    assert per[0] == pytest.approx(base.per_problem[0]["latency_s"] / run.per_problem[0]["latency_s"], rel=1e-12)
