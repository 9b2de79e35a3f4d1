"""A sweep's journal never lends one scenario's rows to another, names the line it cannot
read, and is written by one sweep at a time; a sweep that cannot run is refused before
any point runs."""

import fcntl
import json

import pytest

import cosim
from conftest import one_line_error, SCENARIOS, run_cli
from cosim._sweep import MAX_POINTS
from cosim._sweep._journal import Journal

U280 = str(SCENARIOS / "heteroreason-u280-200.yaml")
V80 = str(SCENARIOS / "heteroreason-v80.yaml")
GRID = {"pcie.bandwidth_gbps": [4, 8]}


@pytest.fixture(scope="module")
def workload():
    return cosim.trace.generate("math500", 4, seed=3).in_memory()




def test_a_damaged_first_line_is_refused_not_read_as_another_scenarios(tmp_path, workload):
    out = tmp_path / "sweep"
    cosim.sweep(cosim.load_scenario(U280), workload, GRID, out=out)
    journal = out / "points.jsonl"
    kept = journal.read_bytes()
    lines = kept.decode().splitlines(keepends=True)
    v80 = cosim.load_scenario(V80)
    for damaged in ('{"_fingerprint": "18434', '{"_fingerprint": 7}\n', "\n", '{"fingerprint": "x"}\n',
                    '["_fingerprint"]\n'):
        # The first line cut or changed: the U280's rows are still there, after it.
        journal.write_text(damaged + ("\n" if not damaged.endswith("\n") else "") + "".join(lines[1:]))
        before = journal.read_bytes()
        with pytest.raises(cosim.ConfigError, match=r"points.jsonl:1: not the line that names a sweep's scenario"):
            cosim.sweep(v80, workload, GRID, out=out)
        assert journal.read_bytes() == before  # nothing lost, nothing added
    # Whole, it names the U280 sweep: the V80 is refused as another scenario.
    journal.write_bytes(kept)
    with pytest.raises(cosim.ConfigError, match="holds the points of another scenario or trace"):
        cosim.sweep(v80, workload, GRID, out=out)
    assert journal.read_bytes() == kept


def test_the_command_line_refuses_a_damaged_journal_with_one_line(tmp_path):
    out = tmp_path / "sweep"
    args = ["--set", "pcie.bandwidth_gbps=4,8", "--problems", "3", "--quiet", "--out", out]
    first = run_cli("sweep", U280, *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    journal = out / "points.jsonl"
    rows = journal.read_text().splitlines()
    journal.write_text('{"_fingerprint": "0000\n' + "\n".join(rows[1:]) + "\n")
    before = journal.read_bytes(), (out / "sweep.csv").read_bytes()
    line = one_line_error(run_cli("sweep", V80, *args, cwd=tmp_path))
    assert f"{journal}:1: not the line that names a sweep's scenario and trace" in line
    assert (journal.read_bytes(), (out / "sweep.csv").read_bytes()) == before


@pytest.mark.parametrize("bad,why", [
    ("{not json\n", "not a JSON object"),
    ("[1, 2]\n", "not a JSON object"),
    ('{"pcie.bandwidth_gbps": 4, "status": "ok"}\n', "a _key and a status"),
    ('{"_key": "{}", "status": "maybe"}\n', "a _key and a status"),
    ('{"_key": 3, "status": "ok"}\n', "a _key and a status"),
    (b"\xff\xfe{}\n", "not a JSON object"),
], ids=["cut-json", "a-list", "no-key", "bad-status", "key-not-text", "not-utf8"])
def test_a_malformed_row_is_named_by_journal_and_line(tmp_path, workload, bad, why):
    out = tmp_path / "sweep"
    scn = cosim.load_scenario(U280)
    cosim.sweep(scn, workload, GRID, out=out)
    journal = out / "points.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    damaged = lines[0] + lines[1] + (bad if isinstance(bad, bytes) else bad.encode()) + lines[2]
    journal.write_bytes(damaged)
    with pytest.raises(cosim.ConfigError) as caught:
        cosim.sweep(scn, workload, GRID, out=out)
    message = str(caught.value)
    assert message.startswith(f"{journal}:3: ") and why in message and "\n" not in message
    assert journal.read_bytes() == damaged


def test_only_a_last_line_without_its_newline_is_taken_as_cut_by_a_kill(tmp_path, workload):
    out = tmp_path / "sweep"
    scn = cosim.load_scenario(U280)
    cosim.sweep(scn, workload, {"pcie.bandwidth_gbps": [4, 8, 16]}, out=out)
    journal = out / "points.jsonl"
    text = journal.read_text()
    journal.write_text(text[:-25])  # the last row loses its end, newline included
    table = cosim.sweep(scn, workload, {"pcie.bandwidth_gbps": [4, 8, 16]}, out=out)
    lines = journal.read_text().splitlines()
    rows = [json.loads(line) for line in lines]  # every line whole again
    assert [r.get("pcie.bandwidth_gbps") for r in rows] == [None, 4, 8, 16]
    assert [r["status"] for r in table.rows] == ["ok"] * 3


def test_a_second_sweep_into_a_folder_being_written_is_refused(tmp_path, workload):
    out = tmp_path / "sweep"
    out.mkdir()
    journal = out / "points.jsonl"
    scn = cosim.load_scenario(U280)
    holder = Journal(out, "a" * 16)  # a sweep under way holds the journal
    try:
        before = journal.read_bytes()
        with pytest.raises(cosim.ConfigError, match=r"another sweep is writing into it now"):
            cosim.sweep(scn, workload, GRID, out=out)
        assert journal.read_bytes() == before and not (out / "sweep.csv").exists()
        line = one_line_error(run_cli("sweep", U280, "--set", "pcie.bandwidth_gbps=4", "--problems", "2",
                                      "--quiet", "--out", out, cwd=tmp_path))
        assert "another sweep is writing into it now" in line
    finally:
        holder.close()
    # Once the first ends, the lock is gone (an independent flock says so) and the folder is usable.
    with open(journal, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(handle, fcntl.LOCK_UN)
    journal.unlink()
    assert len(cosim.sweep(scn, workload, GRID, out=out).rows) == 2


def test_the_lock_is_held_for_the_whole_sweep_and_released_after(tmp_path, workload, monkeypatch):
    out = tmp_path / "sweep"
    scn = cosim.load_scenario(U280)
    seen = []

    def probe():
        with open(out / "points.jsonl", "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return "locked"
            fcntl.flock(handle, fcntl.LOCK_UN)
            return "free"

    from cosim._sweep import _journal

    add = _journal.Journal.add

    def add_and_probe(self, key, row):
        seen.append(probe())
        add(self, key, row)

    monkeypatch.setattr(_journal.Journal, "add", add_and_probe)
    cosim.sweep(scn, workload, GRID, out=out)
    assert seen == ["locked", "locked"] and probe() == "free"


def test_a_grid_past_the_bound_is_refused_with_its_size(tmp_path, workload):
    scn = cosim.load_scenario(U280)
    side = int(MAX_POINTS ** 0.5) + 1  # side x side > MAX_POINTS
    grid = {"pcie.bandwidth_gbps": list(range(1, side + 1)), "fpga.clock_mhz": list(range(100, 100 + side))}
    with pytest.raises(cosim.ConfigError, match=rf"the grid has {side * side} points \({side} pcie.bandwidth_gbps "
                                                rf"x {side} fpga.clock_mhz\), more than the {MAX_POINTS}"):
        cosim.sweep(scn, workload, grid, out=tmp_path / "sweep")
    assert not (tmp_path / "sweep").exists()
    bandwidths = ",".join(map(str, range(1, side + 1)))
    line = one_line_error(run_cli("sweep", U280, "--set", f"pcie.bandwidth_gbps={bandwidths}",
                                  "--set", "fpga.clock_mhz=" + ",".join(map(str, range(100, 100 + side))),
                                  "--problems", "2", "--quiet", "--out", tmp_path / "cli", cwd=tmp_path))
    assert f"the grid has {side * side} points" in line and not (tmp_path / "cli").exists()


@pytest.mark.parametrize("grid,message", [
    (["serve.cv=1,2"], "--set serve.cv: the variation of drawn arrival times needs their rate"),
    (["serve.slo_s=10"], "--set serve.slo_s: serving needs arrival times and the trace carries none"),
    (["serve.seed=1,2", "pcie.bandwidth_gbps=4"], "--set serve.seed: serving needs arrival times"),
])
def test_a_serving_sweep_without_a_rate_is_a_usage_error_before_any_point(tmp_path, grid, message):
    args = [a for g in grid for a in ("--set", g)]
    result = run_cli("sweep", U280, *args, "--problems", "2", "--quiet", "--out", tmp_path / "out", cwd=tmp_path)
    assert message in one_line_error(result)
    assert not (tmp_path / "out" / "points.jsonl").exists()  # no point ran


def test_a_serving_sweep_on_a_trace_with_arrival_times_needs_no_rate(tmp_path):
    trace = cosim.trace.generate("math500", 3, seed=1).in_memory().with_arrivals([0.0, 5.0, 10.0])
    table = cosim.sweep(cosim.load_scenario(U280), trace, {"serve.slo_s": [30.0]})
    assert [r["status"] for r in table.rows] == ["ok"] and table.rows[0]["requests"] == 3


def test_points_of_the_command_line_are_checked_with_their_values_together(tmp_path):
    base = ["--problems", "2", "--quiet", "--out", tmp_path / "out"]
    scenario = str(SCENARIOS / "cluster-heteroreason-u280-200.yaml")
    # 4096 sequences need a budget of 4096 tokens: fine with 8192, in either order of the options.
    for order in (("batching.max_batch=4096", "batching.token_budget=8192"),
                  ("batching.token_budget=8192", "batching.max_batch=4096")):
        result = run_cli("sweep", scenario, *[a for o in order for a in ("--set", o)], "--set", "serve.rate=0.5",
                         *base, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert ": 1 point, 0 failed" in result.stdout
        (tmp_path / "out" / "points.jsonl").unlink()
    # A point no order can make is refused before any point runs, naming the point.
    result = run_cli("sweep", scenario, "--set", "batching.max_batch=64,4096", "--set", "batching.token_budget=2048",
                     "--set", "serve.rate=0.5", *base, cwd=tmp_path)
    line = one_line_error(result)
    assert "sweep point batching.max_batch=4096, batching.token_budget=2048" in line
    assert "cannot hold one decoding token for each of max_batch = 4096" in line
    assert not (tmp_path / "out" / "points.jsonl").exists()
