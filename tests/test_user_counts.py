"""Every count a user gives is bounded before any work, and named when it is past its bound:
a sensitivity analysis's samples (the points they make, at most a sweep's), a trace's shared
prompt prefix (a count of tokens, never longer than a prompt), a measured profile's token
counts, and every whole number or time the standalone models take from Python (never a
C++ cast error). The bounds are restated here from what the engine holds: 32-bit token
counts, 16,384 simulated threads, a 4 GiB TLM payload, 64-bit picoseconds."""

import json

import pytest

import cosim
from cosim import standalone
from cosim.devices._latency_csv import load_latency_profile
from cosim.errors import ConfigError
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from cosim.uncertainty._analysis import analyse
from cosim.uncertainty._factors import Factor
from conftest import run_cli

MAX_POINTS = 10_000          # a sweep's points, and an analysis's
TOKENS = 2**31 - 1           # a context's tokens, counted in 32-bit integers
THREADS = 16384              # simulated threads the engine runs
PAYLOAD = 2**32 - 1          # bytes of one TLM payload (an unsigned int)
CLOCK_NS = (2**63 - 1) / 1e3  # the kernel's 64-bit picosecond clock, in ns
TRACE_TOKENS = 1_000_000     # the most tokens a trace's counts hold
HUGE = 2**70
NATIVE = ("Unable to cast", "incompatible function arguments", "Traceback")


def refused(proc, *parts):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("cosim: error: ") and not any(bad in proc.stderr for bad in NATIVE), proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


# ---- sensitivity samples -------------------------------------------------------------------

FACTORS = [Factor(n, 0.0, 1.0, 0.5, "given") for n in ("a", "b", "c")]


@pytest.mark.parametrize("method,samples,points,most", [
    # Morris: (factors + 1) points a trajectory; Sobol: (factors + 2) a base sample; then the
    # nominal point and both ends of each of the 3 factors, 7 points.
    ("morris", 5000, 5000 * 4 + 7, (MAX_POINTS - 7) // 4),
    ("sobol", 4096, 4096 * 5 + 7, 1024),  # (10000 - 7) // 5 = 1998: the power of 2 below is 1024
])
def test_samples_making_more_points_than_a_sweep_takes_are_refused_before_any_point(method, samples, points, most):
    calls = []
    with pytest.raises(ConfigError, match=rf"^--samples {samples}: {method} on 3 factors makes {points} points, "
                                          rf"more than the {MAX_POINTS} one analysis takes .* give at most {most}$"):
        analyse("y", FACTORS, lambda pts: calls.append(pts) or [0.0] * len(pts), method, samples)
    assert calls == []
    # At the most it names, it runs: every point evaluated once.
    analyse("y", FACTORS, lambda pts: calls.append(len(pts)) or [p["a"] for p in pts], method, most)
    assert calls == [most * (4 if method == "morris" else 5) + 7]


def test_the_command_refuses_samples_past_the_bound_with_one_line_and_no_journal(tmp_path):
    # Sobol's 2^30 base samples would need terabytes for their design alone.
    proc = run_cli("sensitivity", "heteroreason-u280-200", "--method", "sobol", "--samples", str(2**30),
                   "--only", "fpga.clock_mhz,pcie.bandwidth_gbps", "--range", "fpga.clock_mhz=150:300",
                   "--range", "pcie.bandwidth_gbps=4:16", "--out", tmp_path / "o", "--quiet", cwd=tmp_path,
                   timeout=300)
    points = 2**30 * (2 + 2) + 1 + 2 * 2
    refused(proc, f"--samples {2**30}: sobol on 2 factors makes {points} points, more than the {MAX_POINTS}",
            "give at most 2048")  # (10000 - 5) // 4 = 2498
    assert not (tmp_path / "o" / "points.jsonl").exists() and not (tmp_path / "o" / "sensitivity.json").exists()


# ---- a trace's shared prompt prefix --------------------------------------------------------

def _request_log(path, prompts):
    lines = [json.dumps({"request_id": f"q{i}", "input_toks": p, "output_toks": 8, "arrival_time": 100.0 + i})
             for i, p in enumerate(prompts)]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("prefix,message", [
    (str(10**20), f"--shared-prefix-tokens: expected a whole number of tokens from 0 to {TRACE_TOKENS}"),
    # The shortest prompt is the second request's, on line 2: 20 tokens.
    ("21", "--shared-prefix-tokens: 21 tokens, but the prompt of log.jsonl:2 (request_id 'q1') has 20"),
])
def test_a_shared_prefix_past_a_count_or_a_prompt_is_refused_naming_the_flag(tmp_path, prefix, message):
    _request_log(tmp_path / "log.jsonl", [50, 20, 80])
    proc = run_cli("trace", "import", "log.jsonl", "--shared-prefix-tokens", prefix, "--out", "t.jsonl",
                   cwd=tmp_path)
    refused(proc, message)
    assert not (tmp_path / "t.jsonl").exists()
    # As long as the shortest prompt, it is what the header says.
    ok = run_cli("trace", "import", "log.jsonl", "--shared-prefix-tokens", "20", "--out", "t.jsonl", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    header = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert header["metadata"]["shared_prefix_tokens"] == 20


@pytest.mark.parametrize("prefix,message", [
    (10**20, f"t.jsonl:1: metadata.shared_prefix_tokens: {10**20} is absurdly large (limit {TRACE_TOKENS})"),
    (30, "t.jsonl:3: prompt_tokens: 20 tokens, fewer than the 30 every prompt begins with"),
])
def test_a_trace_whose_prefix_does_not_fit_its_prompts_is_refused_not_clamped(tmp_path, prefix, message):
    trace = Trace(plain_header("log", 10), [plain_problem("a", 50, 8, 0.0), plain_problem("b", 20, 8, 1.0)])
    trace.save(tmp_path / "t.jsonl")
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["metadata"]["shared_prefix_tokens"] = prefix  # edited by hand
    (tmp_path / "t.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    proc = run_cli("serve", "vllm-rtx4090", "--trace", "t.jsonl", "--out", "o", "--quiet", cwd=tmp_path,
                   timeout=300)
    refused(proc, message)
    assert not (tmp_path / "o").exists()


def test_a_trace_built_in_code_with_a_prefix_longer_than_a_prompt_is_refused_when_run():
    trace = Trace(plain_header("code", 30), [plain_problem("a", 50, 8), plain_problem("b", 20, 8)])
    with pytest.raises(ConfigError, match=r"problem 'b': 20 prompt tokens, fewer than the 30 every prompt begins "
                                          r"with"):
        cosim.simulate(cosim.load_scenario("target-alone"), trace)


# ---- a measured profile's counts -----------------------------------------------------------

@pytest.mark.parametrize("row,message", [
    ("prefill,100000000000000000000,0,0.5", f"tokens: 100000000000000000000 is past the engine's limit of {TOKENS}"),
    ("decode,1,4000000000,0.02", f"context: 4000000000 is past the engine's limit of {TOKENS}"),
    ("prefill,2000000000,2000000000,0.5", f"context + tokens: 4000000000 is past the engine's limit of {TOKENS}"),
])
def test_a_measured_row_past_the_engine_s_counts_is_named_by_line(tmp_path, row, message):
    (tmp_path / "m.csv").write_text("phase,tokens,context,seconds\ndecode,1,100,0.01\ndecode,1,200,0.011\n"
                                    f"{row}\ndecode,1,400,0.012\n")
    proc = run_cli("fit", "gpu", "m.csv", "--model", "qwen2.5-math-7b", cwd=tmp_path, timeout=300)
    refused(proc, f"m.csv:4: {message}")


def test_a_measured_batch_past_the_engine_s_threads_is_named(tmp_path):
    (tmp_path / "m.csv").write_text("phase,tokens,context,seconds,batch\ndecode,1,100,0.01,1\n"
                                    f"decode,1,100,0.5,{THREADS + 1}\n")
    with pytest.raises(ConfigError, match=rf"m.csv:3: batch: {THREADS + 1} is past the engine's limit of {THREADS}"):
        load_latency_profile(tmp_path / "m.csv")


# ---- the standalone models -----------------------------------------------------------------

GPU, MODEL = "rtx3090", "qwen2.5-0.5b"


@pytest.mark.parametrize("call,message", [
    (lambda: standalone.transfer("pcie_gen3_x16", nbytes=HUGE), f"nbytes: {HUGE} is past the engine's limit of "
                                                                 f"{PAYLOAD}"),
    (lambda: standalone.pcie_transfers("pcie_gen3_x16", [("h2d", HUGE)]),
     f"transfers[0] bytes: {HUGE} is past the engine's limit of {PAYLOAD}"),
    (lambda: standalone.pcie_transfers("pcie_gen3_x16", [("h2d", 64, 1e300)]),
     "transfers[0] issue_ns: 1e+300 ns is past the kernel's clock"),
    (lambda: standalone.fpga_timing("u280", contexts=[HUGE]), f"contexts: {HUGE} is past the engine's limit of "
                                                               f"{TOKENS}"),
    (lambda: standalone.fpga_timing("u280", prefill_tokens=[HUGE]), "prefill_tokens: "),
    (lambda: standalone.fpga_decode("u280", context=HUGE), f"context: {HUGE} is past the engine's limit"),
    (lambda: standalone.fpga_run("u280", ops=[("load", HUGE)]), f"ops[0] (load): {HUGE} is past"),
    (lambda: standalone.gpu_timing(GPU, MODEL, [("decode", HUGE, 0)]), f"tokens: {HUGE} is past the engine's "
                                                                       f"limit of {TOKENS}"),
    (lambda: standalone.gpu_timing(GPU, MODEL, [("decode", 1, HUGE)]), f"context: {HUGE} is past"),
    (lambda: standalone.gpu_prefill(GPU, MODEL, tokens=HUGE), f"tokens: {HUGE} is past"),
    (lambda: standalone.gpu_decode(GPU, MODEL, tokens=1, context=HUGE), f"context: {HUGE} is past"),
    (lambda: standalone.gpu_run(GPU, MODEL, [("decode", 1, HUGE)]), f"ops[0] (decode): {HUGE} is past"),
    (lambda: standalone.gpu_batch(GPU, MODEL, [("decode", 1, 0, 0.0)], max_batch=HUGE),
     f"max_batch: {HUGE} is past the engine's limit of {THREADS}"),
    (lambda: standalone.gpu_batch(GPU, MODEL, [("decode", 1, 0, 0.0)], token_budget=HUGE),
     f"token_budget: {HUGE} is past the engine's limit of {TOKENS}"),
    (lambda: standalone.gpu_batch(GPU, MODEL, [("decode", HUGE, 0, 0.0)]), f"sequences[0] tokens: {HUGE} is past"),
    (lambda: standalone.gpu_batch(GPU, MODEL, [("decode", 1, 0, 1e300)]),
     "sequences[0] arrival_s: 1e+300 s is past the kernel's clock"),
    (lambda: standalone.kvmu_replay([], capacity_tokens=HUGE), f"capacity_tokens: {HUGE} is past"),
    (lambda: standalone.kvmu_replay([("initialize", HUGE)]), f"ops[0] (initialize): {HUGE} is past"),
    (lambda: standalone.kvmu_replay([("initialize", -HUGE)]), f"ops[0] (initialize): must be >= -{TOKENS}"),
    (lambda: standalone.kernel_floor(HUGE), f"transactions x delay_ns ({HUGE} x 10 ns)"),
    (lambda: standalone.kernel_floor(1, 1e300), "transactions x delay_ns (1 x 1e+300 ns): 1e+300 ns is past"),
])
def test_a_huge_number_in_the_api_names_its_parameter(call, message):
    with pytest.raises(ConfigError) as caught:
        call()
    text = str(caught.value)
    assert text.startswith(message) or message in text, text
    assert not any(bad in text for bad in NATIVE), text


def test_a_power_timeline_past_the_kernel_s_clock_is_refused_not_cut_short():
    # Two segments of 60% of the clock each: the second ends past it.
    half = 0.6 * CLOCK_NS
    with pytest.raises(ConfigError, match=r"segments\[1\] duration_ns: .* ns after .* ns is past the kernel's clock"):
        standalone.power_timeline("rtx3090", [("idle", half), ("decode", half)])
    # Within the clock it is simulated in full: its idle energy is its power times its time.
    done = standalone.power_timeline("rtx3090", [("idle", 1e9)])
    assert done["state_time_ns"]["idle"] == 1e9
    assert done["energy_j"] == pytest.approx(cosim.load_device("rtx3090").power.idle_w * 1.0)
