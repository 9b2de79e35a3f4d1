"""cosim serve, cosim plan and serving sweeps from the command line."""

import csv
import json
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent

CLUSTER = "cluster-heteroreason-u280-200"


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_serve_writes_a_row_per_request_the_summary_devices_and_a_timeline(tmp_path):
    proc = run_cli("serve", CLUSTER, "--rate", "1.5", "--requests", "40", "--profile", "gsm8k", "--slo", "30",
                   "--out", "s", "--timeline", "t.json", "--vcd", "w.vcd", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "latency p50 / p90 / p99 / max" in proc.stdout
    folder = tmp_path / "s"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert {p.name for p in folder.iterdir()} == set(manifest["files"]) | {"manifest.json"}
    assert set(manifest["files"]) == {"per_request.csv", "per_request.arrow", "summary.json", "devices.csv",
                                      "scenario.resolved.yaml", "trace.jsonl"}
    rows = list(csv.DictReader((folder / "per_request.csv").open()))
    assert sorted(int(r["request"]) for r in rows) == list(range(40))
    for r in rows:  # latency runs from arrival: queueing plus service
        assert abs(float(r["latency_s"]) - float(r["queue_s"]) - float(r["service_s"])) < 1e-9
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["requests"] == 40 and summary["slo_s"] == 30 and summary["devices_draft"] == 8
    devices = list(csv.DictReader((folder / "devices.csv").open()))
    assert sorted((d["role"], int(d["index"])) for d in devices) == sorted(
        [("draft", i) for i in range(8)] + [("prm", 0), ("prm", 1), ("target", 0), ("target", 1)])
    # Busy: computing or transferring; held: what jobs (or iterations) held the device, at least that.
    assert all(float(d["held_ns"]) >= float(d["busy_ns"]) * (1 - 1e-9) for d in devices)
    for role in ("draft", "prm", "target"):
        busy = sum(float(d["busy_ns"]) for d in devices if d["role"] == role) / 1e9
        rows_busy = sum(float(r[f"busy_s_{role}"]) for r in rows)
        assert abs(busy - rows_busy) <= 1e-6 * max(busy, 1.0)
    # The timeline lands where it was asked for, with a track per device of every pool.
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    tracks = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"draft 0 (U280)", "draft 7 (U280)", "target 1 (RTX 3090)", "pcie_target 1 d2h"} <= tracks
    requests = {e["args"]["request"] for e in events if e["ph"] == "X"}
    assert requests == set(range(40))
    # The waveform follows slot 0: the requests the dispatcher handed it (0 first, then every
    # one it took when it was the lowest idle slot) and its devices.
    vcd = (tmp_path / "w.vcd").read_text()
    assert "$scope module kvmu $end" in vcd and "heteroreason-cosim: end of waveform" in vcd
    slot0 = {int(r["request"]) for r in rows if r["slot"] == "0"}
    assert 0 in slot0 and (tmp_path / "w.gtkw").exists()
    # The trace it served carries the arrivals (version 2): served again, it gives the same rows.
    again = run_cli("serve", CLUSTER, "--trace", "s/trace.jsonl", "--out", "s2", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "s2" / "per_request.csv").read_text() == (folder / "per_request.csv").read_text()


def test_serve_refuses_what_it_cannot_serve_before_any_work(tmp_path):
    refused(run_cli("serve", CLUSTER, "--rate", "-1", cwd=tmp_path), "rate")
    refused(run_cli("serve", CLUSTER, cwd=tmp_path), "--rate: give the arrival rate")
    refused(run_cli("serve", CLUSTER, "--rate", "1", "--set", "cluster.draft.devices=0", cwd=tmp_path),
            "cluster.draft.devices")
    refused(run_cli("serve", CLUSTER, "--rate", "1", "--set", "cluster.draft.contexts_per_device=1000",
                    cwd=tmp_path), "contexts_per_device")
    assert list(tmp_path.iterdir()) == []


def test_plan_prints_and_writes_each_systems_cheapest_cluster(tmp_path):
    proc = run_cli("plan", CLUSTER, "cluster-gpu-stepahead", "--rate", "1", "--requests", "30", "--profile",
                   "gsm8k", "--slo", "60", "--draft", "1-3", "--prm", "1", "--target", "1", "--workers", "2",
                   "--out", "p", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads((tmp_path / "p" / "plan.json").read_text())
    assert [p["scenario"] for p in plan["plans"]] == [CLUSTER, "cluster-gpu-stepahead"]
    rows = list(csv.DictReader((tmp_path / "p" / "plan.csv").open()))
    for p in plan["plans"]:
        mine = [r for r in rows if r["scenario"] == p["scenario"]]
        meeting = [r for r in mine if r["meets_slo"] == "true"]
        if p["cluster"] is None:
            assert not meeting
            continue
        cheapest = min(meeting, key=lambda r: float(r["cost"]))
        assert float(cheapest["cost"]) == p["cost"] and float(cheapest["p99_s"]) <= 60
    assert "cheapest cluster with p99 <= 60 s" in proc.stdout
    first, second = plan["plans"]
    if first["cluster"] is not None:  # the second system given the first's GPUs and cost
        compared = second["with_the_first_plans_resources"]
        gpus = first["cluster"]["prm_devices"] + first["cluster"]["target_devices"]  # FPGA drafts: no GPU
        assert compared["same_gpus"] is None or compared["same_gpus"]["gpus"] == gpus
        assert compared["same_cost"] is None or compared["same_cost"]["cost"] <= first["cost"]


def test_a_sweep_over_the_rate_serves_every_point(tmp_path):
    proc = run_cli("sweep", CLUSTER, "--set", "serve.rate=0.5,4", "--set", "cluster.target.devices=1,2",
                   "--problems", "30", "--profile", "gsm8k", "--out", "w", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((tmp_path / "w" / "sweep.csv").open()))
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    p99 = {(r["serve.rate"], r["cluster.target.devices"]): float(r["latency_p99_s"]) for r in rows}
    assert p99[("4", "1")] > p99[("0.5", "1")]  # queueing at eight times the rate
    refused(run_cli("sweep", CLUSTER, "--set", "serve.rate=fast", cwd=tmp_path), "serve.rate")


def test_a_timeline_given_as_a_plain_name_lands_in_the_working_folder(tmp_path):
    proc = run_cli("run", "heteroreason-u280-200", "--problems", "3", "--out", "r", "--timeline", "t.json",
                   "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "t.json").exists() and not (tmp_path / "r" / "t.json").exists()


def test_devices_csv_has_every_documented_column_and_the_vllm_engines_blocks(tmp_path):
    # The vLLM engine of vllm-rtx4090 is given 2,588 KV blocks in the scenario file (its
    # num_gpu_blocks); a run of 12 short requests on it never runs out of them.
    proc = run_cli("serve", "vllm-rtx4090", "--rate", "2", "--requests", "12", "--out", "v", "--quiet",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    header = (tmp_path / "v" / "devices.csv").read_text().splitlines()[0].split(",")
    documented = {line.split("`")[1] for line in (ROOT / "docs" / "metrics.md").read_text().splitlines()
                  if line.startswith("| `") and "the target alone's vLLM engine" in line}
    assert documented == {"preemptions", "kv_blocks"} and documented <= set(header)
    (device,) = csv.DictReader((tmp_path / "v" / "devices.csv").open())
    # vLLM keeps block 0 as its null block: 2,587 of the 2,588 are usable.
    assert device["role"] == "target" and int(device["kv_blocks"]) == 2588 - 1 and int(device["preemptions"]) == 0
    # A speculative cluster's engines report neither: the columns are there, empty.
    proc = run_cli("serve", CLUSTER, "--rate", "1", "--requests", "4", "--out", "c", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((tmp_path / "c" / "devices.csv").open()))
    assert rows and all(r["kv_blocks"] == "" and r["preemptions"] == "" for r in rows)
