import json

import pyarrow.parquet as pq
import pytest

import cosim
from conftest import SCENARIOS
from cosim.cli._set_option import parse_set

SCENARIO = str(SCENARIOS / "heteroreason-u280-200.yaml")


@pytest.fixture(scope="module")
def workload():
    return cosim.trace.generate("math500", 12, seed=2)


def strip(rows):
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


def test_mixed_and_huge_values_still_write_parquet(tmp_path, workload):
    scn = cosim.load_scenario(SCENARIO)
    cosim.sweep(scn, workload, {"pcie.bandwidth_gbps": [2, "8 GB/s"]}, out=tmp_path)
    assert pq.read_table(tmp_path / "sweep.parquet").column("pcie.bandwidth_gbps").to_pylist() == ["2", "8 GB/s"]


def test_grid_rows_follow_the_model_and_failed_points_are_recorded(tmp_path, workload):
    scn = cosim.load_scenario(SCENARIO)
    grid = {"fpga.clock_mhz": [200, 300, 0], "pcie.bandwidth_gbps": [4, 16]}
    table = cosim.sweep(scn, workload, grid, out=tmp_path)
    assert len(table.rows) == 6
    assert [(r["fpga.clock_mhz"], r["pcie.bandwidth_gbps"]) for r in table.rows] == \
        [(200, 4), (200, 16), (300, 4), (300, 16), (0, 4), (0, 16)]
    bad = table.failed()
    assert len(bad) == 2 and all("clock_mhz: must be > 0, got 0" in r["error"] for r in bad)
    # Each point equals a direct simulation of the changed scenario.
    direct = cosim.simulate(scn.with_value("fpga.clock_mhz", 300).with_value("pcie.bandwidth_gbps", 16), workload)
    assert table.rows[3]["latency_s"] == direct.summary["latency_s"]
    # A faster clock never slows the problem; the files hold the same rows.
    assert table.rows[2]["latency_s"] <= table.rows[0]["latency_s"]
    parquet = pq.read_table(tmp_path / "sweep.parquet").to_pylist()
    assert [r["status"] for r in parquet] == [r["status"] for r in table.rows]
    assert parquet[3]["latency_s"] == pytest.approx(table.rows[3]["latency_s"])
    csv_lines = (tmp_path / "sweep.csv").read_text().splitlines()
    assert len(csv_lines) == 7 and csv_lines[0].startswith("fpga.clock_mhz,pcie.bandwidth_gbps,status,error")


def test_a_rerun_skips_finished_points(tmp_path, workload):
    scn = cosim.load_scenario(SCENARIO)
    grid = {"fpga.clock_mhz": [200, 300]}
    first = cosim.sweep(scn, workload, grid, out=tmp_path)
    assert len(points(tmp_path)) == 2
    again = cosim.sweep(scn, workload, {"fpga.clock_mhz": [200, 300, 250]}, out=tmp_path)
    journal = points(tmp_path)
    assert len(journal) == 3  # only the new point ran
    assert journal[-1]["fpga.clock_mhz"] == 250
    assert strip(again.rows[:2]) == strip(first.rows)
    # Another scenario or another trace never reuses these points.
    with pytest.raises(cosim.ConfigError, match="holds the points of another scenario or trace"):
        cosim.sweep(scn.with_value("pcie.bandwidth_gbps", 4), workload, grid, out=tmp_path)
    with pytest.raises(cosim.ConfigError, match="holds the points of another scenario or trace"):
        cosim.sweep(scn, cosim.trace.generate("math500", 3, seed=9), grid, out=tmp_path)


def points(folder):
    rows = []
    for line in (folder / "points.jsonl").read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line a kill cut short
    return [r for r in rows if "_key" in r]


def test_a_journal_line_cut_short_by_a_kill_is_run_again(tmp_path, workload):
    scn = cosim.load_scenario(SCENARIO)
    cosim.sweep(scn, workload, {"fpga.clock_mhz": [200, 300]}, out=tmp_path)
    journal = tmp_path / "points.jsonl"
    journal.write_text(journal.read_text()[:-40])  # the last point's line loses its end
    table = cosim.sweep(scn, workload, {"fpga.clock_mhz": [200, 300]}, out=tmp_path)
    assert [r["status"] for r in table.rows] == ["ok", "ok"]
    # The cut line is dropped before the point's new row: every line of the journal is whole.
    lines = journal.read_text().splitlines()
    assert len(lines) == 3 and len(points(tmp_path)) == 2
    assert [json.loads(line)["fpga.clock_mhz"] for line in lines[1:]] == [200, 300]


def test_two_local_workers_give_the_rows_of_one(workload):
    scn = cosim.load_scenario(SCENARIO)
    grid = {"pcie.bandwidth_gbps": [2, 8, 32], "toggles.shadow_sync": [True, False]}
    assert strip(cosim.sweep(scn, workload, grid, workers=2).rows) == strip(cosim.sweep(scn, workload, grid).rows)


def test_ray_executor_on_a_local_two_cpu_instance_gives_the_local_rows(workload):
    pytest.importorskip("ray", reason="the Ray executor's test needs the [ray] extra")
    scn = cosim.load_scenario(SCENARIO)
    grid = {"fpga.clock_mhz": [200, 300], "pcie.bandwidth_gbps": [4, 16]}
    on_ray = cosim.sweep(scn, workload, grid, workers=2, executor="ray")
    assert strip(on_ray.rows) == strip(cosim.sweep(scn, workload, grid).rows)


def test_bad_sweep_requests():
    scn = cosim.load_scenario(SCENARIO)
    workload = cosim.trace.generate("gsm8k", 2, seed=0)
    with pytest.raises(cosim.ConfigError, match="fpga.clok: .*did you mean 'clock"):
        cosim.sweep(scn, workload, {"fpga.clok": [1]})
    with pytest.raises(cosim.ConfigError, match="'pcie.bandwidth_gbps' and 'pcie.bandwidth' are the same parameter"):
        cosim.sweep(scn, workload, {"pcie.bandwidth": ["2 GB/s"], "pcie.bandwidth_gbps": [4]})
    # A bad value fails its own point wherever it stands in the grid.
    for values in ([-5, 200], [200, -5]):
        table = cosim.sweep(scn, workload, {"fpga.clock_mhz": values})
        assert [r["status"] for r in table.rows] == ["error" if v < 0 else "ok" for v in values]
    with pytest.raises(cosim.ConfigError, match="executor must be one of local, ray"):
        cosim.sweep(scn, workload, {"fpga.clock_mhz": [200]}, executor="dask")
    with pytest.raises(cosim.ConfigError, match="--ray-address: applies to --executor ray only"):
        cosim.sweep(scn, workload, {"fpga.clock_mhz": [200]}, ray_address="10.0.0.5:6379")
    with pytest.raises(cosim.ConfigError, match="'ray://head:10001' is not HOST:PORT"):
        cosim.sweep(scn, workload, {"fpga.clock_mhz": [200]}, executor="ray", ray_address="ray://head:10001")
    with pytest.raises(cosim.ConfigError, match="write PATH=VALUE"):
        parse_set("fpga.clock_mhz")
    assert parse_set("fpga.clock=200 MHz,300 MHz") == ("fpga.clock", ["200 MHz", "300 MHz"])
    assert parse_set("toggles.shadow_sync=true,false") == ("toggles.shadow_sync", [True, False])
