"""The performance benchmark of the whole simulator, in one go.

    .venv/bin/python bench/run.py [--json out.json] [--quick] [--core] [--before DIR]

1. the kernel floor: b_transport + wait per transaction, no model (events/s), and
   heteroreason's tokens per second, events per token and floor ratio on GROWTH_BASE
   problems (bench/core.py, in a fresh process each time; with `--before DIR`, an earlier
   build's package in DIR is measured the same way, the two interleaved, so both figures
   come from one run);
2. heteroreason (U280 @ 200 MHz, Config 1) replaying 500 Math500-profile problems, VCD off;
3. gpu-baseline on the same trace;
4. run 2 with a VCD, and with a timeline;
5. growth: heteroreason on GROWTH_BASE and on 10x as many problems;
6. a 16-point sweep on 1 worker and on 2 workers;
7. `cosim report` with its defaults;
9. serving: 10,000 Math500-profile requests at 1.4 requests/s (below the knee) on the
   built-in cluster of 8 U280 boards, 2 PRM and 2 target GPUs batching (`serve_10k_s`,
   end to end, and the requests simulated per wall-second);
10. live co-simulation: run 2 decided by a TracePolicy (`live_us_per_decision`: the
   simulation's wall time per decision beyond run 2's, policy included);
11. `cosim validate`: every shipped validation case, table and figure (`validate_s`, the
   median of three; the goal is under a minute);
12. the vLLM engine: 20,000 plain requests (the RTX 4090 log's lengths, repeated) at 1.5
   requests/s on `vllm-rtx4090` (one GPU, vLLM's scheduler, operator-profile timing):
   engine steps and output tokens simulated per wall-second (`vllm_steps_per_s`,
   `vllm_tokens_per_s`, the median of three);
8. peak memory (parent and simulation worker, each in a fresh process) for
   500, 5,000 and 20,000 problems, rows streamed to disk as `cosim run` does:
   flat when the trace and the rows are streamed.

The figures of 1, 5 and 6 are each the median of REPEATS timed runs of a second or more, so
that their ratios repeat from run to run (`--core`: only these). Simulated tokens are the
tokens the devices generate (drafted + target-decoded).
Wall times of runs 2-5 are the SystemC run itself, measured in the worker;
end-to-end times (fork, trace conversion, metrics) are reported beside them.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cosim
from cosim.report import run_report

PROBLEMS = 500
GROWTH_BASE = 16_000  # problems: a run of a second or more, the machine idle or busy
SWEEP_PROBLEMS = 600  # per sweep point: each 16-point sweep lasts a second or more, idle or busy
REPEATS = 3


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


MEMORY_SIZES = (500, 5_000, 20_000)
# VmHWM, not ru_maxrss, for the process itself: ru_maxrss survives exec, so a child
# of a large benchmark process would report the benchmark's peak.
MEMORY_SCRIPT = """
import resource, sys, tempfile
import cosim
scn = cosim.load_scenario("heteroreason-u280-200")
with tempfile.TemporaryDirectory() as rows:
    cosim.simulate(scn, cosim.trace.generate("math500", int(sys.argv[1]), seed=1), rows_to=rows)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(int(hwm) / 1024, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def memory_profile(sizes: tuple[int, ...]) -> dict[str, list[float]]:
    """Peak RSS in MB of a fresh process simulating n problems, and of its worker."""
    parent, worker = [], []
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(n)], capture_output=True, text=True,
                             check=True, cwd=Path(__file__).parent.parent).stdout.split()
        parent.append(float(out[0]))
        worker.append(float(out[1]))
    return {"problems": list(sizes), "parent_mb": parent, "worker_mb": worker}


def median_of(fn, repeats: int = REPEATS) -> float:
    return statistics.median(fn() for _ in range(repeats))


def core_figures(before: str | None, problems: int) -> dict[str, float]:
    """bench/core.py for this build and, with `before`, for that one, interleaved."""
    script = Path(__file__).with_name("core.py")

    def once(package: str | None) -> dict:
        cmd = [sys.executable, str(script), "--problems", str(problems), "--repeats", "1"]
        if package:
            cmd += ["--package", package]
        return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True,
                                         cwd=tempfile.gettempdir()).stdout.splitlines()[-1])

    runs: dict[str, list[dict]] = {"": [], "before_": []}
    for _ in range(REPEATS):
        runs[""].append(once(None))
        if before:
            runs["before_"].append(once(before))
    out: dict[str, float] = {}
    for prefix, measured in runs.items():
        if not measured:
            continue
        for key in ("floor_events_per_s", "tokens_per_s", "events_per_token", "floor_ratio", "run_wall_s"):
            out[prefix + key] = statistics.median(m[key] for m in measured)
    return out


def tokens(result: cosim.Result) -> int:
    return result.summary["generated_tokens"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the numbers to this file")
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke run)")
    parser.add_argument("--core", action="store_true", help="only the kernel floor, growth and the sweep")
    parser.add_argument("--before", metavar="DIR",
                        help="also measure the cosim package (with its built extension) in DIR")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    problems = PROBLEMS // scale
    out: dict[str, float | str] = {"machine": platform.machine(), "python": platform.python_version()}

    hr = cosim.load_scenario("heteroreason-u280-200")
    out.update(core_figures(args.before, GROWTH_BASE // scale))
    base = cosim.trace.generate("math500", GROWTH_BASE // scale, seed=1)
    big = cosim.trace.generate("math500", GROWTH_BASE * 10 // scale, seed=1)
    # Each ratio is the median of REPEATS pairs run back to back, so that a change in the
    # machine's load between runs moves both sides of a pair alike.
    out["growth_10x"] = median_of(lambda: cosim.simulate(hr, big).wall_s / cosim.simulate(hr, base).wall_s)
    grid = {"pcie.bandwidth_gbps": [2, 4, 8, 16], "fpga.clock_mhz": [150, 200, 250, 300]}
    small = cosim.trace.generate("math500", max(SWEEP_PROBLEMS // scale, 10), seed=2)
    pairs = [(timed(lambda: cosim.sweep(hr, small, grid, workers=1))[1],
              timed(lambda: cosim.sweep(hr, small, grid, workers=2))[1]) for _ in range(REPEATS)]
    one = statistics.median(p[0] for p in pairs)
    two = statistics.median(p[1] for p in pairs)
    out["sweep_1w_s"], out["sweep_2w_s"] = one, two
    out["sweep_speedup_2w"] = statistics.median(p[0] / p[1] for p in pairs)
    if args.core:
        report(out, args.json)
        return

    base = cosim.load_scenario("gpu-baseline")
    workload = cosim.trace.generate("math500", problems, seed=1)
    runs = [timed(lambda: cosim.simulate(hr, workload)) for _ in range(3)]
    run2, run2_e2e = min(runs, key=lambda r: r[0].wall_s)
    out["tokens"] = tokens(run2)
    out["run2_wall_s"] = run2.wall_s
    out["run2_end_to_end_s"] = run2_e2e
    out["run2_tokens_per_s"] = tokens(run2) / run2.wall_s

    run3, run3_e2e = timed(lambda: cosim.simulate(base, workload))
    out["baseline_tokens_per_s"] = tokens(run3) / run3.wall_s

    with tempfile.TemporaryDirectory() as tmp:
        # Best of three, as for run 2: the ratio of two noisy minima, not of a minimum and a sample.
        run4v = min((cosim.simulate(hr, workload, vcd=Path(tmp) / "run.vcd") for _ in range(3)),
                    key=lambda r: r.wall_s)
        run4t, run4t_e2e = timed(lambda: cosim.simulate(hr, workload, timeline=Path(tmp) / "run.json"))
    out["vcd_overhead"] = run4v.wall_s / run2.wall_s
    out["timeline_overhead"] = run4t_e2e / run2_e2e

    with tempfile.TemporaryDirectory() as tmp:
        _, report_s = timed(lambda: run_report(300 // scale, 1, tmp))
    out["report_s"] = report_s
    out["peak_rss_mb"] = peak_rss_mb()

    # Live co-simulation: the cost of a decision on top of the simulation, with a policy that
    # answers from the same trace (so the runs are the same run).
    live = min((cosim.cosimulate(hr, cosim.live.TracePolicy(workload), workload) for _ in range(3)),
               key=lambda r: r.result.wall_s)
    out["live_decisions"] = live.decisions
    out["live_us_per_decision"] = (live.result.wall_s - run2.wall_s) / live.decisions * 1e6
    out["live_policy_us_per_decision"] = live.us_per_decision

    served = cosim.trace.generate("math500", 10_000 // scale, seed=1)
    cluster = cosim.load_scenario("cluster-heteroreason-u280-200")
    serve_run, serve_s = timed(lambda: cosim.serve.run(cluster, served, rate=1.4, seed=1))
    out["serve_10k_s"] = serve_s
    out["serve_requests_per_s"] = serve_run.summary.requests / serve_s
    out["serve_p99_s"] = serve_run.summary.latency_p99_s

    with tempfile.TemporaryDirectory() as tmp:
        from cosim.cli import main as cli_main

        times = sorted(timed(lambda: cli_main(["validate", "--out", tmp]))[1] for _ in range(3))
    out["validate_s"] = times[1]

    from cosim.trace import Trace, plain_header, plain_problem, read_request_log
    from cosim.validation._vllm_serving import folder

    log = read_request_log(folder() / "vllm" / "requests.jsonl")
    lengths = [(int(p), int(o)) for p, o in zip(log.input_tokens, log.output_tokens)]
    plain = Trace(plain_header("bench"), [plain_problem(f"r{i}", *lengths[i % len(lengths)])
                                          for i in range(max(20_000 // scale, 300))])
    engine = cosim.load_scenario("vllm-rtx4090")
    runs = sorted((cosim.serve.run(engine, plain, rate=1.5, seed=1) for _ in range(3)), key=lambda r: r.wall_s)
    vllm = runs[1]
    out["vllm_requests"] = len(plain)
    out["vllm_steps_per_s"] = vllm.devices[0]["iterations"] / vllm.wall_s
    out["vllm_tokens_per_s"] = float(sum(vllm.per_request.column("generated_tokens"))) / vllm.wall_s

    memory = memory_profile(tuple(max(n // scale, 10) for n in MEMORY_SIZES))
    out["memory"] = memory
    # Growth from the smallest to the largest run, per 1,000 problems (0: flat).
    extra = (memory["problems"][-1] - memory["problems"][0]) / 1000
    out["memory_growth_mb_per_1k"] = max(memory["parent_mb"][-1] - memory["parent_mb"][0],
                                         memory["worker_mb"][-1] - memory["worker_mb"][0]) / extra

    report(out, args.json)


def report(out: dict, json_path: str | None) -> None:
    for key, value in out.items():
        print(f"{key:26} {value:.4g}" if isinstance(value, float) else f"{key:26} {value}")
    if json_path:
        Path(json_path).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent.parent))
    main()
