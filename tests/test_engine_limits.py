"""Sizes and casts name their parameter: values past what the engine simulates are refused
when the scenario is built, naming the parameter, where it was given and the limit; the
command line's errors name its flags; numpy integers are integers."""

import shutil

import numpy as np
import pytest

import cosim
from cosim.cli import _estimate, main
from cosim.errors import ConfigError
from conftest import run_cli

THREADS = 16384          # simulated threads (devices and request slots) the engine runs
TOKENS = 2**31 - 1       # a context's tokens, counted in 32-bit integers
GPU_BLOCKS = 2**22       # KV blocks of the vLLM engine's pool
KERNEL_CLOCK_S = (2**63 - 1) / 1e12  # 64-bit picoseconds
NATIVE_FAILURES = ("Unable to cast", "E518", "E549", "stack setup", "bad_alloc", "Traceback", "SystemC")


def _refused(proc, *parts):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert not any(bad in proc.stderr for bad in NATIVE_FAILURES), proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("scenario,settings,named,limit", [
    ("heteroreason-u280-300", ["cluster.target.devices=3000000000"], "cluster.target.devices", THREADS),
    ("heteroreason-u280-300", ["cluster.prm.devices=100000"], "cluster.prm.devices", THREADS),
    ("heteroreason-u280-300", ["cluster.draft.boards_per_host_link=3000000000"],
     "cluster.draft.boards_per_host_link", THREADS),
    ("heteroreason-u280-300", ["batching.enabled=true", "batching.token_budget=200000", "batching.max_batch=100000"],
     "batching.max_batch", THREADS),
    ("vllm-rtx4090", ["batching.num_gpu_blocks=1000000000000"], "batching.num_gpu_blocks", GPU_BLOCKS),
    ("vllm-rtx4090", ["cluster.target.devices=40000"], "cluster.target.devices", THREADS),
])
def test_a_size_past_the_engine_s_limit_is_refused_naming_it_before_any_work(tmp_path, scenario, settings, named,
                                                                              limit):
    sets = [arg for s in settings for arg in ("--set", s)]
    proc = run_cli("serve", scenario, "--rate", "1", "--requests", "3", *sets, "--out", "out", "--quiet",
                   cwd=tmp_path, timeout=600)
    _refused(proc, named, f"past the engine's limit of {limit}")
    assert not (tmp_path / "out").exists()


def test_devices_and_slots_are_counted_together(tmp_path):
    # 100 boards of 200 contexts: 100 + 20000 + one PRM + one target threads.
    proc = run_cli("serve", "heteroreason-u280-300", "--rate", "1", "--requests", "3",
                   "--set", "cluster.draft.devices=100", "--set", "cluster.draft.contexts_per_device=200",
                   "--out", "out", "--quiet", cwd=tmp_path)
    _refused(proc, "cluster.draft.contexts_per_device", f"{100 + 100 * 200 + 1 + 1} simulated threads in all",
             f"past the engine's limit of {THREADS}")
    assert not (tmp_path / "out").exists()


def test_a_yaml_value_past_a_limit_names_its_file_and_line(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("name: big\nsystem: heteroreason\ncluster:\n  prm:\n    devices: 20000\n")
    with pytest.raises(ConfigError, match=rf"{path}:5: cluster\.prm\.devices: 20000 is past the engine's limit of "
                                          rf"{THREADS}"):
        cosim.load_scenario(path)


def test_a_cluster_at_the_limit_runs():
    """The limit is one the engine holds: the threads of a cluster at it all start, and the
    requests are served as on the smallest cluster."""
    single = cosim.load_scenario("heteroreason-u280-300")
    scn = single.with_value("cluster.prm.devices", THREADS - 3)
    trace = cosim.trace.generate("math500", 3, seed=1).in_memory()
    result = cosim.serve.run(scn, trace, rate=1.0)
    assert result.summary.pools["prm"].devices == THREADS - 3
    # One request slot: each request is served alone, in its single-request time, once the
    # one before it has left (a FIFO queue worked here from the arrivals).
    alone = cosim.simulate(single, trace).per_problem.column("latency_s")
    rows = result.per_request
    free = 0.0
    for arrival, service, queue in zip(rows.column("arrival_s"), rows.column("service_s"), rows.column("queue_s")):
        start = max(arrival, free)
        assert queue == pytest.approx(start - arrival, abs=1e-9)
        free = start + service
    assert max(rows.column("queue_s")) > 0  # a request did wait (at 1 per second, for a run of seconds)
    assert list(rows.column("service_s")) == pytest.approx(list(alone), abs=1e-9)
    assert list(rows.column("latency_s")) == pytest.approx(
        [q + s for q, s in zip(rows.column("queue_s"), alone)], abs=1e-9)


@pytest.mark.parametrize("path", ["draft.model.context_window", "target.device.gpu.kv_reserve_tokens",
                                  "draft.device.accelerator.kv_reserve_tokens"])
def test_token_counts_past_32_bits_are_refused_naming_the_parameter(path):
    scn = cosim.load_scenario("heteroreason-u280-300")
    with pytest.raises(ConfigError, match=rf"{TOKENS + 1} is past the engine's limit of {TOKENS} \(the engine "
                                          rf"counts a context's tokens in 32-bit integers\)"):
        scn.with_value(path, TOKENS + 1)


def test_an_fpga_prefill_past_the_kernel_s_clock_names_its_parameters():
    scn = cosim.load_scenario("heteroreason-u280-300").with_value("draft.model.vocab", 4 * 10**12)
    with pytest.raises(ConfigError, match=r"draft\.device: a local prefill of up to 32768 tokens would take .* "
                                          r"past what a simulation can hold.*draft\.model\.vocab = 4e\+12"):
        cosim.simulate(scn, cosim.trace.generate("math500", 2, seed=1))


@pytest.mark.parametrize("devices", [1, 4])
def test_a_batched_pass_past_the_kernel_s_clock_is_one_line_from_any_number_of_gpus(tmp_path, devices):
    # Each batched pass takes at least the forward overhead: 1e14 ns is 1e5 s, so the passes
    # of eight requests arriving together run the kernel's clock (about 9.2e6 s) out. With
    # four GPUs, their batchers fail in one delta: one error, and no warning of SystemC's
    # about the kernel stopped twice.
    proc = run_cli("serve", "cluster-heteroreason-u280-200", "--rate", "1e9", "--requests", "8", "--quiet",
                   "--set", "target.device.gpu.forward_overhead_ns=1e14", "--set", f"cluster.target.devices={devices}",
                   "--out", "out", cwd=tmp_path, timeout=600)
    _refused(proc, "a duration of 1e+14 ns at", "cannot be simulated")
    assert proc.stdout == "" and "W545" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,message", [
    (["--rate", "-1"], "--rate: must be > 0, got -1.0"),
    (["--rate", "1", "--cv", "-1"], "--cv: must be > 0"),
    (["--rate", "1", "--seed", "-1"], "--seed: must be a whole number >= 0, got -1"),
    (["--rate", "1", "--slo", "-1"], "--slo: must be > 0"),
    (["--rate", "1", "--requests", str(10**10)], "--requests: must be <= 100000000, got 10000000000"),
    (["--rate", "0.0001", "--requests", "1000"], "--rate: 1000 requests at 0.0001 per second arrive over about 1e+07 s"),
    (["--rate", "1", "--vcd", "w.vcd", "--vcd-window", "1e12:"],
     f"--vcd-window: the start (1e+12 s) is past the kernel's clock of about {KERNEL_CLOCK_S:.2g} s"),
    (["--rate", "1", "--vcd", "w.vcd", "--vcd-window", "1:1e12"], "--vcd-window: the end (1e+12 s) is past"),
    (["--rate", "1", "--vcd", "w.vcd", "--vcd-slot", "5"], "--vcd-slot: 5, but heteroreason-u280-300 has request "
                                                           "slots 0 to 0"),
])
def test_serve_s_errors_name_its_flags(tmp_path, args, message):
    proc = run_cli("serve", "heteroreason-u280-300", "--requests", "3", *args, "--out", "out", "--quiet",
                   cwd=tmp_path, timeout=600)
    assert _refused(proc).startswith(f"cosim: error: {message}"), proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "w.vcd").exists()


@pytest.mark.parametrize("args,message", [
    (["run", "heteroreason-u280-300", "--problems", "0"], "cosim: error: --problems: must be a whole number > 0"),
    (["trace", "gen", "--profile", "math500", "--seed", "-3", "--out", "t.jsonl"],
     "cosim: error: --seed: must be a whole number >= 0, got -3"),
])
def test_run_and_trace_errors_name_their_flags(tmp_path, args, message):
    proc = run_cli(*args, cwd=tmp_path)
    assert _refused(proc).startswith(message)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_serve_estimates_a_huge_run_before_it_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_estimate, "ESTIMATE_ABOVE", 60)
    monkeypatch.setattr(_estimate, "SAMPLE_PROBLEMS", 20)
    assert main(["serve", "heteroreason-u280-300", "--rate", "2", "--requests", "80", "--out", str(tmp_path / "a"),
                 "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("80 requests: about ") and "measured on the first 20" in first
    # The disk estimate is what the run writes, within a generous factor.
    wrote = sum(p.stat().st_size for p in (tmp_path / "a").glob("per_request.*"))
    said = float(first.split(" and ")[1].split(" kB")[0]) * 1000
    assert 0.5 < said / wrote < 2.0, (said, wrote)

    monkeypatch.setattr(_estimate.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 1000))
    assert main(["serve", "heteroreason-u280-300", "--rate", "2", "--requests", "80", "--out", str(tmp_path / "b"),
                 "--quiet"]) == 2
    assert "--requests 80: the outputs need about" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_numpy_integers_are_integers_wherever_an_int_is():
    assert list(cosim.trace.generate("math500", np.int64(3), seed=np.int32(4))) == \
        list(cosim.trace.generate("math500", 3, seed=4))
    scn = cosim.load_scenario("heteroreason-u280-300")
    assert scn.with_value("cluster.target.devices", np.int64(2)) == scn.with_value("cluster.target.devices", 2)
    assert scn.with_value("batching.enabled", np.bool_(True)).batching.enabled is True
    assert scn.with_value("toggles.step_ahead_depth", np.uint8(2)).toggles.step_ahead_depth == 2
    assert cosim.load_scenario("heteroreason-u280-300", np.int64(2)).config == 2
    assert cosim.trace.generate("math500", 2, config=np.int64(2)).header.metadata["generator"]["target"] == \
        cosim.trace.generate("math500", 2, config=2).header.metadata["generator"]["target"]
    numpy_header = cosim.trace.TraceHeader(np.float64(0.6), np.float64(0.65), np.int64(3))
    drawn = cosim.trace.generate("math500", 3, seed=1, header=numpy_header)
    assert list(drawn) == list(cosim.trace.generate("math500", 3, seed=1,
                                                    header=cosim.trace.TraceHeader(0.6, 0.65, 3)))
    assert type(drawn.header.max_backtracks) is int  # a file can hold it
    with pytest.raises(ConfigError, match=r"problems: must be a whole number > 0, got .*2\.5"):
        cosim.trace.generate("math500", np.float64(2.5))


def test_a_trace_built_with_numpy_numbers_saves_and_replays(tmp_path):
    from cosim.trace import Draft, Problem, Trace, TraceHeader, TrajectoryBuilder

    built = TrajectoryBuilder("a", np.int64(100)).accept(np.int64(40)).build()
    made = Problem("b", "d", np.int64(120), (Draft(np.int64(1), np.int64(30), np.float64(0.9), np.bool_(True)),),
                   np.bool_(True))
    Trace(TraceHeader(), [built, made]).save(tmp_path / "t.jsonl")
    back = cosim.trace.load(tmp_path / "t.jsonl")
    assert list(back) == [Problem("a", "scripted", 100, (Draft(1, 40, 0.9, True),)),
                          Problem("b", "d", 120, (Draft(1, 30, 0.9, True),), True)]


def test_a_transfer_past_one_link_payload_names_its_parameter():
    scn = cosim.load_scenario("heteroreason-u280-300")
    payload = 2**32 - 1  # a TLM payload's length is an unsigned int
    with pytest.raises(ConfigError, match=rf"control_bytes: {10**15} is past the engine's limit of {payload}"):
        scn.with_value("serving.control_bytes", 10**15)
    # A window of token ids in one transfer: the largest window here is the draft's 32768.
    wide = scn.with_value("serving.token_bytes", 10**6)
    with pytest.raises(ConfigError, match=rf"^serving\.token_bytes: 1000000 bytes a token make a window of 32768 "
                                          rf"tokens {32768 * 10**6} bytes, past the engine's limit of {payload}"):
        cosim.simulate(wide, cosim.trace.generate("math500", 2, seed=1))


def test_cosim_params_shows_each_limit_beside_its_parameter(tmp_path):
    shown = run_cli("params", cwd=tmp_path).stdout
    for name, limit in (("context_window", TOKENS), ("kv_reserve_tokens", TOKENS), ("max_batch", THREADS),
                        ("num_gpu_blocks", GPU_BLOCKS), ("control_bytes", 2**32 - 1)):
        assert any(line.split()[:1] == [name] and f"<= {limit})" in line for line in shown.splitlines()), name
