"""Every kind of bad input, through the command line: a non-zero exit, a message
that names the file, line and field, and no traceback."""

import json
import re

import pytest

from conftest import SCENARIOS, run_cli

GOOD_SCENARIO = """name: hr-v80
system: heteroreason
draft:
  device: v80
  model: qwen2.5-0.5b
prm:
  device: rtx3090
  model: qwen2.5-math-prm-7b
target:
  device: rtx3090
"""
HEADER = ('{"format":"cosim-trace","version":1,"accept_threshold":0.7,"backtrack_threshold":0.7,'
          '"max_backtracks":5,"backtracking":true}')


def draft(step, tokens=10, score=0.9, accepted=True):
    return {"type": "draft", "step": step, "tokens": tokens, "score": score, "accepted": accepted}


def problem(events, prompt=100):
    return json.dumps({"id": "p", "dataset": "d", "prompt_tokens": prompt, "events": events})


def draft_override(line):
    return GOOD_SCENARIO.replace("model: qwen2.5-0.5b\n", f"model: qwen2.5-0.5b\n  overrides:\n    {line}\n", 1)


SCENARIO_CASES = [
    ("syntax error", GOOD_SCENARIO.replace("device: v80", "device: [v80"), r"s.yaml:\d+: YAML syntax error"),
    ("unknown key at depth", draft_override("hbm.colour: 3"), r"s.yaml:\d+: draft.overrides.hbm.colour"),
    ("wrong type", GOOD_SCENARIO + "toggles:\n  shadow_sync: 3\n", r"s.yaml:\d+: toggles.shadow_sync: expected true or false"),
    ("missing unit", draft_override("accelerator.clock: 300"), r"s.yaml:\d+: .*clock: missing unit"),
    ("wrong unit", draft_override("accelerator.clock: 300 GB/s"), r"clock: unit 'GB/s' is not a frequency"),
    ("negative size", draft_override("hbm.capacity: -8 GiB"), r"s.yaml:\d+: draft.overrides.hbm.capacity: must be > 0, got '-8 GiB'"),
    ("zero clock", draft_override("accelerator.clock_mhz: 0"), r"clock_mhz: must be > 0, got 0"),
    ("NaN", draft_override("hbm.efficiency: .nan"), r"efficiency: must be a finite number"),
    ("model beyond HBM", draft_override("hbm.capacity: 100 MB"),
     r"fpga.hbm: region 'weights' needs 494032768 bytes .* holds 100000000 bytes"),
]


@pytest.mark.parametrize("name,text,message", SCENARIO_CASES, ids=[c[0] for c in SCENARIO_CASES])
def test_bad_scenarios(tmp_path, name, text, message):
    (tmp_path / "s.yaml").write_text(text)
    proc = run_cli("run", "s.yaml", "--problems", "2", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert __import__("re").search(message, proc.stderr), proc.stderr


TRACE_CASES = [
    ("truncated line", problem([draft(1)])[:-7], r"t.jsonl:2: not valid JSON"),
    ("unknown version", HEADER.replace('"version":1', '"version":7'), r"t.jsonl:1: version: unknown trace version 7"),
    ("unknown event", problem([{"type": "think", "step": 1}]), r"t.jsonl:2: events\[0\].type: unknown event"),
    ("broken step order", problem([draft(2)]), r"t.jsonl:2: events\[0\].step: step 2 out of order"),
    ("backtrack without failed refinement", problem([draft(1), {"type": "backtrack", "to_step": 1}]),
     r"t.jsonl:2: events\[1\].type: a backtrack must follow a failed refinement"),
    ("score outside [0, 1]", problem([draft(1, score=2)]), r"t.jsonl:2: events\[0\].score: must be in \[0, 1\]"),
    ("tokens <= 0", problem([draft(1, tokens=0)]), r"t.jsonl:2: events\[0\].tokens: must be >= 1"),
    ("absurdly large", problem([draft(1)], prompt=10**12), r"t.jsonl:2: prompt_tokens: .* absurdly large"),
    ("context beyond the window", problem([draft(1, tokens=4000)], prompt=500),
     r"problem 'p', events\[0\] .*4500 tokens, beyond the 4096-token window"),
]


@pytest.mark.parametrize("name,line,message", TRACE_CASES, ids=[c[0] for c in TRACE_CASES])
def test_bad_traces(tmp_path, name, line, message):
    lines = [line] if name == "unknown version" else [HEADER, line]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    proc = run_cli("run", SCENARIOS / "heteroreason-u280-200.yaml", "--trace", "t.jsonl", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert __import__("re").search(message, proc.stderr), proc.stderr


def test_missing_files_and_unwritable_output(tmp_path):
    for args, message in ((["run", "nope.yaml"], "nope.yaml: no such file"),
                          (["trace", "validate", "nope.jsonl"], "nope.jsonl: no such file"),
                          (["run", SCENARIOS / "gpu-baseline.yaml", "--out", "/proc/x"], "--out /proc/x")):
        proc = run_cli(*args, cwd=tmp_path, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_odd_yaml_and_values_give_named_errors(tmp_path):
    import cosim

    bomb = "a: &a [1, 2]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}]\n"
                                      for i in range(20))
    (tmp_path / "bomb.yaml").write_text("kind: pcie\nname: x\n" + bomb)
    with pytest.raises(cosim.ConfigError, match=r"bomb.yaml:\d+: a: unknown parameter"):
        cosim.load_link(tmp_path / "bomb.yaml")  # aliases are converted once: no blow-up
    (tmp_path / "loop.yaml").write_text("kind: pcie\nname: x\ndescription: &x [*x]\n")
    with pytest.raises(cosim.ConfigError, match=r"loop.yaml:\d+: description.*alias refers to a node that contains it"):
        cosim.load_link(tmp_path / "loop.yaml")
    (tmp_path / "latin1.yaml").write_bytes(b"kind: pcie\nname: caf\xe9\n")
    with pytest.raises(cosim.ConfigError, match=r"latin1.yaml: not UTF-8 text"):
        cosim.load_link(tmp_path / "latin1.yaml")
    good = "kind: pcie\nname: x\nbandwidth: 16 GB/s\nefficiency: 0.8\n"
    (tmp_path / "mu.yaml").write_text(good + "latency: 2 \u03bcs\n")  # Greek mu, not the micro sign
    assert cosim.load_link(tmp_path / "mu.yaml").latency_ns == 2000.0
    (tmp_path / "huge.yaml").write_text(good + "latency_ns: " + "9" * 400 + "\n")
    with pytest.raises(cosim.ConfigError, match=r"huge.yaml:5: latency_ns: .* is out of range"):
        cosim.load_link(tmp_path / "huge.yaml")
    with pytest.raises(cosim.ConfigError, match=r"config: config must be 1 .* got \[1\]"):
        cosim.scenario("heteroreason", config=[1])
    with pytest.raises(cosim.ConfigError, match=r"name must be letters, digits"):
        cosim.build_scenario({"system": "heteroreason", "name": "../../etc"})


@pytest.mark.coroutine_unwind  # the clock error is thrown inside a SystemC process
def test_times_beyond_the_kernel_clock_and_kv_reservations_are_errors():
    import cosim
    from cosim.trace import Trace, TraceHeader, TrajectoryBuilder

    one = Trace(TraceHeader(), [TrajectoryBuilder("a", 100).accept(40).build()])
    # One token past what any operation may take: refused before the run, naming the parameter.
    slow = cosim.scenario("heteroreason", 1, draft={"overrides": {"accelerator.macs_per_cycle": 1e-9}})
    with pytest.raises(cosim.ConfigError, match=r"draft\.device\.accelerator\.macs_per_cycle = 1e-09"):
        cosim.simulate(slow, one)
    # Each token 2.5e14 ns (under the limit of one operation): a local prefill of a window's
    # 32768 tokens, one operation, would take 8e18 ns; refused before the run, naming it.
    slower = cosim.scenario("heteroreason", 1, draft={"overrides": {"accelerator.macs_per_cycle": 1e-5}})
    with pytest.raises(cosim.ConfigError, match=r"a local prefill of up to 32768 tokens would take .*"
                                                r"macs_per_cycle = 1e-05"):
        cosim.simulate(slower, one)
    small = cosim.scenario("heteroreason", 1, target={"overrides": {"gpu.kv_reserve_tokens": 10}})
    with pytest.raises(cosim.ConfigError, match=r"beyond the 10-token KV reservation .* target model"):
        cosim.simulate(small, one)


def test_options_that_would_be_ignored_or_cannot_work(tmp_path):
    (tmp_path / "t.jsonl").write_text(HEADER + "\n" + problem([draft(1)]) + "\n")
    proc = run_cli("run", SCENARIOS / "gpu-baseline.yaml", "--trace", "t.jsonl", "--problems", "5", cwd=tmp_path,
                   timeout=120)
    assert proc.returncode == 2 and "--problems would be ignored" in proc.stderr
    proc = run_cli("trace", "gen", "--profile", "gsm8k", "--out", str(tmp_path), cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "is a folder; name a regular file" in proc.stderr
    proc = run_cli("sweep", SCENARIOS / "gpu-baseline.yaml", "--set", "pcie.bandwidth=2 GB/s",
                   "--set", "pcie.bandwidth_gbps=4", "--out", str(tmp_path / "s"), cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "are the same parameter" in proc.stderr


def test_the_api_takes_numpy_numbers_and_names_bad_arguments():
    import numpy as np

    import cosim
    from cosim import standalone

    by_numpy = standalone.fpga_decode("u280", context=np.int64(10), tokens=np.int32(3), clock_mhz=np.float32(250))
    by_python = standalone.fpga_decode("u280", context=10, tokens=3, clock_mhz=250)
    assert by_numpy.time_ns == by_python.time_ns
    for call, message in [
        (lambda: standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", tokens=5, context=-1000),
         "context: must be >= 0, got -1000"),
        (lambda: standalone.fpga_decode(tokens=10**9), r"tokens: context 0 \+ 1000000000 tokens exceeds the 32768"),
        (lambda: standalone.fpga_decode(tokens=2.5), "tokens: must be a whole number, got 2.5"),
        (lambda: standalone.fpga_decode(clock_mhz=float("nan")), "clock_mhz: must be a finite number"),
        (lambda: standalone.fpga_run(ops=[("decode",)]), r"ops\[0\] \(decode\): give its token count"),
        (lambda: standalone.transfer("pcie_gen3_x16", -5), "nbytes: must be >= 0, got -5"),
        (lambda: standalone.kvmu_replay([], capacity_tokens=0), "capacity_tokens: must be >= 1"),
    ]:
        with pytest.raises(cosim.ConfigError, match=message):
            call()
    result = cosim.simulate(cosim.scenario("heteroreason", 1), cosim.trace.generate("math500", 1))
    with pytest.raises(cosim.ConfigError, match="with_baseline: expected the Result of the baseline's simulate"):
        result.with_baseline({"latency_s": 1.0})


@pytest.mark.parametrize("override,message", [
    ("accelerator.macs_per_cycle: 1e-12", r"draft\.device: one draft token .* would take 9\.5\d*e\+21 ns.*s\.yaml:\d+: "
                                          r"draft\.overrides\.accelerator\.macs_per_cycle = 1e-12"),
    ("accelerator.kv_bytes_per_element: 1e12", r"draft: the KV cache of one window would take .* bytes.*"
                                               r"s\.yaml:\d+: draft\.overrides\.accelerator\.kv_bytes_per_element"),
])
def test_values_the_simulation_cannot_hold_are_named_with_their_file_and_line(tmp_path, override, message):
    (tmp_path / "s.yaml").write_text(f"system: heteroreason\ndraft:\n  device: u280\n  overrides:\n    {override}\n")
    proc = run_cli("run", "s.yaml", "--problems", "2", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert re.search(message, proc.stderr), proc.stderr


def test_the_command_line_checks_every_value_before_any_work(tmp_path):
    proc = run_cli("sweep", "heteroreason-u280-200", "--set", "fpga.clock_mhz=200,abc", "--problems", "2",
                   "--out", "s", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "--set fpga.clock_mhz=abc: " in proc.stderr
    assert not (tmp_path / "s").exists()  # nothing ran, nothing written
    proc = run_cli("sweep", "heteroreason-u280-200", "--set", "pcie..x=1", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "names joined by single dots" in proc.stderr
    (tmp_path / "s.yaml").write_text("system: heteroreason\ndraft:\n  device: u280\n  overrides:\n"
                                     "    accelerator.clock_mhz: 3e2\n")
    proc = run_cli("run", "s.yaml", "--problems", "1", "--out", "r", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "clock_mhz: 300.0" in (tmp_path / "r" / "scenario.resolved.yaml").read_text()
    (tmp_path / "deep.yaml").write_text("system: heteroreason\nx: " + "[" * 500 + "]" * 500 + "\n")
    proc = run_cli("run", "deep.yaml", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "nested too deeply" in proc.stderr and "Traceback" not in proc.stderr
