"""A value that would change nothing is refused, on every system, before any work: the
autoregressive system's batching policy and target link (from a file and from --set
alike), --config beside a --trace on a scenario that names its own target model, a
sensitivity range on a value the scenario does not use or given twice, the
sensitivity's own factors on the target alone (only what it uses), and plan costs of
pools a cluster does not have."""

import json

import pytest

import cosim
from conftest import one_line_error, refused_serving, run_cli
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from cosim.uncertainty._factors import factors

U280 = "heteroreason-u280-200"




# ---- the autoregressive system: from a file and from --set alike ---------------------------

AUTOREGRESSIVE = {
    # vLLM's engine admits requests in arrival order: the speculative batchers' policy does nothing there.
    "policy": ("batching:\n  enabled: true\n  policy: verify_first\n", ["batching.enabled=true",
                                                                         "batching.policy=verify_first"],
               "batching.policy sets the speculative systems' batchers"),
    # Requests reach the target GPU's engine directly: nothing crosses its link.
    "target-link": ("target:\n  link: pcie_gen3_x16\n", ["target.link.bandwidth_gbps=8"],
                    "the autoregressive system moves nothing over the target's link"),
}


@pytest.mark.parametrize("case", AUTOREGRESSIVE)
def test_a_value_the_target_alone_never_reads_is_refused_from_a_file_and_from_set(tmp_path, case):
    text, sets, reason = AUTOREGRESSIVE[case]
    path = tmp_path / "s.yaml"
    path.write_text("system: autoregressive\n" + text)
    from_file = refused_serving(tmp_path, path)
    assert reason in from_file and f"{path}:" in from_file
    from_set = refused_serving(tmp_path, "target-alone", sets)
    assert reason in from_set and f"--set {sets[-1]}" in from_set


def test_the_target_alone_s_written_form_leaves_out_what_it_never_reads():
    scn = cosim.load_scenario("vllm-rtx4090")
    written = scn.reloadable()
    assert "policy" not in written["batching"] and "link" not in written["target"]
    # The speculative systems keep their policy and links.
    speculative = cosim.load_scenario(U280).with_values({"batching.enabled": True}).reloadable()
    assert speculative["batching"]["policy"] == "fcfs" and "link" in speculative["target"]


# ---- --config beside a --trace -------------------------------------------------------------

@pytest.fixture
def requests(tmp_path):
    path = tmp_path / "t.jsonl"
    Trace(plain_header("test"), [plain_problem("a", 100, 10, 0.0), plain_problem("b", 80, 12, 1.0)]).save(path)
    return path


@pytest.mark.parametrize("command", [["run"], ["serve"], ["sensitivity", "--method", "morris", "--samples", "4"]])
def test_config_beside_a_trace_on_a_scenario_naming_its_target_is_refused(tmp_path, requests, command):
    # vllm-rtx4090 names Llama-3.1-8B, so neither config picks its model, and the trace is the workload.
    proc = run_cli(command[0], "vllm-rtx4090", *command[1:], "--config", "2", "--trace", requests, "--quiet",
                   "--out", tmp_path / "o", cwd=tmp_path, timeout=300)
    line = one_line_error(proc)
    assert line.startswith("cosim: error: --config 2: vllm-rtx4090 names its own target model (Llama-3.1-8B)")
    assert not (tmp_path / "o" / "summary.json").exists() and not (tmp_path / "o" / "points.jsonl").exists()


def test_config_still_picks_the_target_of_a_scenario_that_leaves_it_out(tmp_path, requests):
    proc = run_cli("run", "target-alone", "--config", "2", "--trace", requests, "--quiet", "--out", tmp_path / "o",
                   cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["problems"] == 2
    assert cosim.load_scenario("target-alone", 2).target.model.name == "Qwen2.5-Math-1.5B"


# ---- sensitivity ---------------------------------------------------------------------------

def test_the_target_alone_s_factors_are_only_what_it_uses():
    """The target alone reads its target's device and model (and batching when it batches):
    no serving section, no draft, PRM or link; the vLLM engine's runtime memory only where it
    derives the KV blocks, which vllm-rtx4090 gives."""
    for name in ("target-alone", "vllm-rtx4090"):
        found = factors(cosim.load_scenario(name))
        assert found, name
        for f in found:
            assert all(p.startswith(("target.device.", "target.model.", "batching.")) for p in f.paths), (name, f)
            assert not f.baseline_paths and f.name != "batching.runtime_memory_bytes", (name, f)
    blocks = cosim.load_scenario("target-alone").with_values({"batching.enabled": True})
    assert "batching.runtime_memory_bytes" in {f.name for f in factors(blocks)}  # derives its blocks


def test_the_target_alone_s_own_factors_run(tmp_path):
    """Every point of the target alone's default analysis runs (none sets a value it refuses)."""
    out = tmp_path / "o"
    proc = run_cli("sensitivity", "target-alone", "--problems", "2", "--method", "morris", "--samples", "4",
                   "--out", out, "--quiet", cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (out / "points.jsonl").read_text().splitlines()[1:]]
    ranked = {r["name"] for r in json.loads((out / "sensitivity.json").read_text())["ranking"]}
    # The target's and the drawn workload's (its profile's values change the problems drawn).
    assert ranked == {f.name for f in factors(cosim.load_scenario("target-alone"),
                                              profile=cosim.trace.load_profile("math500"))}
    # Morris: (factors + 1) points a trajectory, then the nominal point and both ends of each factor.
    assert len(rows) == 4 * (len(ranked) + 1) + 1 + 2 * len(ranked) and all(r["status"] == "ok" for r in rows)


@pytest.mark.parametrize("scenario,ranges,message", [
    ("target-alone", ["serving.control_bytes=100:1000"], "--range serving.control_bytes=100:1000: the "
                                                         "autoregressive system runs the target alone"),
    ("target-alone", ["target.link.bandwidth_gbps=8:40"], "moves nothing over the target's link"),
    (U280, ["batching.max_batch=32:128"], "--range batching.max_batch=32:128: has no effect while batching is off"),
    (U280, ["fpga.clock_mhz=150:300", "draft.device.accelerator.clock_mhz=160:300"],
     "--range draft.device.accelerator.clock_mhz=160:300: draft.device.accelerator.clock_mhz already has a range "
     "(--range fpga.clock_mhz=150:300)"),
    (U280, ["rtx3090:gpu.request_overhead_ns=20ms:40ms", "rtx3090:gpu.request_overhead_ns=15ms:40ms"],
     "already has a range (--range rtx3090:gpu.request_overhead_ns=20ms:40ms)"),
    (U280, ["target.device.gpu.request_overhead_ns=20ms:40ms"], "target.device.gpu.request_overhead_ns is also set "
                                                                "by the factor rtx3090:gpu.request_overhead_ns"),
], ids=["serving-on-target-alone", "link-on-target-alone", "batching-off", "one-path-twice", "one-factor-twice",
        "a-factor-s-path"])
def test_a_range_without_effect_or_given_twice_is_refused_before_any_point(scenario, ranges, message):
    with pytest.raises(cosim.ConfigError) as caught:
        factors(cosim.load_scenario(scenario), ranges=ranges)
    assert message in str(caught.value)


def test_the_command_refuses_such_a_range_with_one_line_and_no_point(tmp_path):
    proc = run_cli("sensitivity", "target-alone", "--range", "serving.control_bytes=100:1000", "--problems", "2",
                   "--out", tmp_path / "o", "--quiet", cwd=tmp_path, timeout=300)
    assert "--range serving.control_bytes=100:1000: the autoregressive system" in one_line_error(proc)
    assert not (tmp_path / "o" / "points.jsonl").exists()


# ---- plan costs ----------------------------------------------------------------------------

PLAN = ["--rate", "0.2", "--requests", "3", "--slo", "1000", "--draft", "1", "--prm", "1", "--target", "1-2",
        "--quiet"]


def test_the_target_alone_s_plan_costs_its_target_pool_alone(tmp_path):
    (tmp_path / "c.yaml").write_text("target: 300\n")
    proc = run_cli("plan", "target-alone", *PLAN, "--costs", "c.yaml", "--out", tmp_path / "p", cwd=tmp_path,
                   timeout=600)
    assert proc.returncode == 0, proc.stderr
    found = json.loads((tmp_path / "p" / "plan.json").read_text())["plans"][0]
    assert found["costs"] == {"draft": 0.0, "prm": 0.0, "target": 300.0}
    # An objective of 1000 s: one GPU meets it, at one GPU's cost.
    assert found["cluster"]["target_devices"] == 1 and found["cost"] == 300.0


def test_plan_costs_of_pools_no_planned_system_has_are_refused(tmp_path):
    (tmp_path / "c.yaml").write_text("draft: 60\nprm: 330\ntarget: 300\n")
    line = one_line_error(run_cli("plan", "target-alone", *PLAN, "--costs", "c.yaml", "--out", tmp_path / "p",
                                  cwd=tmp_path, timeout=300))
    assert line.startswith("cosim: error: --costs c.yaml:1: draft: no system planned has a draft pool")
    assert not (tmp_path / "p").exists()
    # Beside a speculative system, the draft and PRM costs are its: the same file is taken.
    both = run_cli("plan", "target-alone", U280, *PLAN, "--costs", "c.yaml", "--out", tmp_path / "q", cwd=tmp_path,
                   timeout=600)
    assert both.returncode == 0, both.stderr
    plans = json.loads((tmp_path / "q" / "plan.json").read_text())["plans"]
    assert [p["costs"] for p in plans] == [{"draft": 0.0, "prm": 0.0, "target": 300.0},
                                           {"draft": 60.0, "prm": 330.0, "target": 300.0}]
