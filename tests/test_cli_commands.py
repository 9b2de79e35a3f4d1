import csv
import json
import pytest
import yaml

from cosim import trace
from cosim.cli import main
from conftest import SCENARIOS, run_cli
from handmodel import Fpga

SCENARIO = str(SCENARIOS / "heteroreason-u280-300.yaml")


def test_run_writes_the_table_csv_and_resolved_scenario(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", SCENARIO, "--profile", "gsm8k", "--problems", "8", "--seed", "3", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "latency_s" in printed and "goodput_tok_s" in printed and "energy_j_per_token" in printed
    rows = list(csv.DictReader((out / "per_problem.csv").open()))
    assert len(rows) == 8 and rows[0]["id"] == "gsm8k-00000"
    resolved = yaml.safe_load((out / "scenario.resolved.yaml").read_text())
    assert resolved["draft"]["device"]["accelerator"]["clock_mhz"] == 300.0
    assert resolved["target"]["model"]["name"] == "Qwen2.5-Math-7B"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["problems"] == 8
    # The trace it drew is saved and replays to the same result.
    again = tmp_path / "again"
    assert main(["run", SCENARIO, "--trace", str(out / "trace.jsonl"), "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "summary.json").read_text()) == summary


def cli(*args, cwd):
    return run_cli(*args, cwd=cwd, timeout=300)


@pytest.mark.parametrize("args,message", [
    (["run", "missing.yaml"], "missing.yaml: no such file"),
    (["run", SCENARIO, "--trace", "missing.jsonl"], "missing.jsonl: no such file"),
    (["run", SCENARIO, "--out", "/proc/cosim-out"], "--out /proc/cosim-out: cannot create it"),
    (["sweep", SCENARIO, "--set", "fpga.clok=1"], "fpga.clok"),
    (["trace", "gen", "--profile", "aime", "--out", "x.jsonl"], "unknown dataset profile 'aime'"),
])
def test_user_errors_exit_2_with_a_message_and_no_traceback(tmp_path, args, message):
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_report_writes_markdown_json_and_figures(tmp_path):
    out = tmp_path / "report"
    proc = cli("report", "--problems", "12", "--seed", "2", "--out", str(out), "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    from cosim import METRICS
    assert len(report["records"]) == 4 * 2 * 9
    systems = {r["system"] for r in report["records"]}
    assert systems == {"gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
                       "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-nobacktrack",
                       "heteroreason-jetson", "heteroreason-vanilla"}
    baseline = {(r["dataset"], r["config"]): r["latency_s"] for r in report["records"] if r["system"] == "gpu-baseline"}
    for record in report["records"]:
        assert set(METRICS) <= set(record) and record["config"] in (1, 2)
        # A speedup is the baseline's mean latency on the same problems over the system's.
        assert record["speedup"] == pytest.approx(baseline[record["dataset"], record["config"]] / record["latency_s"],
                                                  rel=1e-12)
        if record["system"] == "gpu-baseline":
            assert record["speedup"] == 1.0
    assert set(report["sweeps"]) == {"pcie_bandwidth_gbps", "fpga_clock_mhz"}
    space = report["design_space"]
    assert {"u280 @ 200 MHz (measured design)", "u280-flexllm @ 300 MHz"} <= set(space["designs"])
    # The measured design's decode rate at its quoted context, from the FPGA timing formulas.
    measured = space["designs"]["u280 @ 200 MHz (measured design)"]
    assert measured["decode_tok_s"] == pytest.approx(1e9 / Fpga(clock_mhz=200).token(space["rate_context"]), rel=1e-9)
    assert set(space["references"]) == {"gpu-baseline", "gpu-stepahead"}
    rates = [p["decode_tok_s"] for p in space["curve"]]
    assert rates == sorted(rates) and rates[0] < 17 < rates[-1]  # from below a Jetson to the ports' limit
    served = report["serving"]
    for points in served["curves"].values():
        # Below the knee every request offered is served; beyond it, no more than at the knee.
        assert points[0]["throughput_req_s"] == pytest.approx(points[0]["rate"], rel=0.1)
        assert points[-1]["throughput_req_s"] < points[-1]["rate"]
        assert points[-1]["latency_p99_s"] > points[0]["latency_p99_s"]
    markdown = (out / "report.md").read_text()
    for figure in ("speedup", "latency", "energy_per_token", "goodput", "baseline_breakdown", "stall_ratio",
                   "sweep_pcie_bandwidth", "sweep_fpga_clock", "design_space", "accuracy_latency", "serving"):
        png = out / f"{figure}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"({figure}.png)" in markdown
    manifest = json.loads((out / "manifest.json").read_text())  # one report, published whole
    assert {p.name for p in out.iterdir()} == set(manifest["files"]) | {"manifest.json"}
    assert manifest["command"] == "cosim report" and manifest["problems"] == 12
    # Accuracy: each config's own traces, RSD and BRSD, and the threshold sweep.
    accuracy = {(r["dataset"], r["config"], r["mode"]): r["accuracy"] for r in report["accuracy"]}
    assert len(accuracy) == 4 * 2 * 2
    assert any(accuracy[d, c, "brsd"] != accuracy[d, c, "rsd"] for d, c, _ in accuracy)
    assert any(accuracy[d, 1, m] != accuracy[d, 2, m] for d, _, m in accuracy)
    # The forward-only system replays the RSD run: its labels are the RSD trace's.
    for row in report["accuracy"]:
        system = "heteroreason-nobacktrack" if row["mode"] == "rsd" else "heteroreason-u280-300"
        record = next(r for r in report["records"]
                      if (r["dataset"], r["config"], r["system"]) == (row["dataset"], row["config"], system))
        assert record["accuracy"] == pytest.approx(row["label_accuracy"])
    points = report["threshold_sweep"]["points"]
    assert len(points) == 2 * 5 * 2 * 3
    assert {p["threshold"] for p in points} == {0.5, 0.6, 0.7, 0.8, 0.9}
    assert "| dataset | C1 RSD | C1 BRSD | C1 gain | C2 RSD | C2 BRSD | C2 gain |" in markdown
    assert "| average |" in markdown
    # The target alone on every dataset and config; its own accuracy only where real responses give it.
    alone = {(a["dataset"], a["config"]): a for a in report["target_alone"]}
    assert len(alone) == 4 * 2 and all(a["latency_s"] > 0 for a in alone.values())
    assert alone["math500", 1]["accuracy"] == 0.91 and alone["math500", 2]["accuracy"] is None
    assert "## Target alone (the autoregressive system)" in markdown
    # Its speedups are the ratio of the two runs' mean latencies, inside their paired intervals.
    for a in alone.values():
        low, high = a["intervals"]["latency_s"]
        assert low <= a["latency_s"] <= high
        for name, s in a["speedups"].items():
            r = next(r for r in report["records"] if (r["dataset"], r["config"], r["system"]) ==
                     (a["dataset"], a["config"], name))
            assert s["speedup"] == pytest.approx(a["latency_s"] / r["latency_s"], rel=1e-9)
            low, high = s["intervals"]["speedup"]
            assert low < s["speedup"] < high


def test_trace_gen_takes_the_target_and_thresholds(tmp_path):
    out = tmp_path / "t.jsonl"
    assert main(["trace", "gen", "--profile", "math500", "--problems", "300", "--out", str(out), "--quiet",
                 "--config", "2", "--accept-threshold", "0.6", "--backtrack-threshold", "0.5"]) == 0
    loaded = trace.load(out)
    assert (loaded.header.accept_threshold, loaded.header.backtrack_threshold) == (0.6, 0.5)
    assert loaded.header.metadata["generator"]["target"] == "qwen2.5-math-1.5b"
    default = trace.generate("math500", 300, seed=0, config=2)
    lower = trace.trace_statistics(loaded)["math500"]["reject_rate"]
    assert lower < trace.trace_statistics(default)["math500"]["reject_rate"]


@pytest.mark.parametrize("args,message", [
    (["--accept-threshold", "1.5"], "--accept-threshold: must be in [0, 1], got 1.5"),
    (["--backtrack-threshold", "nan"], "--backtrack-threshold: must be in [0, 1], got nan"),
    (["--max-backtracks", "-1"], "--max-backtracks: must be >= 0, got -1"),
    (["--config", "3"], "--config: must be 1 (7B target) or 2 (1.5B target), got 3"),
    (["--target", "gpt"], "--target: one of qwen2.5-math-7b, qwen2.5-math-1.5b, got 'gpt'"),
    (["--target", "qwen2.5-math-7b", "--config", "2"], "name different targets"),
])
def test_trace_gen_refuses_bad_targets_and_thresholds(tmp_path, capsys, args, message):
    assert main(["trace", "gen", "--profile", "math500", "--out", str(tmp_path / "t.jsonl"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.jsonl").exists()


def test_run_draws_the_profile_trace_for_the_scenario_config(tmp_path):
    out = tmp_path / "c2"
    assert main(["run", "heteroreason-u280-300", "--config", "2", "--profile", "gsm8k", "--problems", "4",
                 "--out", str(out), "--quiet"]) == 0
    assert trace.load(out / "trace.jsonl").header.metadata["generator"]["target"] == "qwen2.5-math-1.5b"
