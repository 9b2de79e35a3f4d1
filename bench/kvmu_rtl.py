"""What the KVMU's RTL in the loop costs: the same trace through heteroreason-u280-300 with
``fpga.kvmu: tlm`` (the behavioural model) and ``rtl`` (the Verilated block, driven pin by
pin, with the model checking it), wall time per simulated step.

    .venv/bin/python bench/kvmu_rtl.py [--problems 20000] [--repeats 5] [--json out.json]

A simulated step is a reasoning step the run settles (steps_per_problem summed over the
problems). Wall time is the SystemC run itself, measured in the worker (without reading
the trace between kernel slices); each figure is the median of the repeats. It also checks
that both runs give the same per-problem results.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics

import cosim


def measure(problems: int, repeats: int) -> dict:
    scn = cosim.load_scenario("heteroreason-u280-300")
    trace = cosim.trace.generate("math500", problems, seed=0).in_memory()
    runs: dict[str, list] = {"tlm": [], "rtl": []}
    for _ in range(repeats):
        for kvmu in runs:  # interleaved, so that a busy machine weighs on both alike
            runs[kvmu].append(cosim.simulate(scn.with_value("fpga.kvmu", kvmu), trace))
    tlm, rtl = runs["tlm"][0], runs["rtl"][0]
    if [dict(r) for r in tlm.per_problem] != [dict(r) for r in rtl.per_problem]:
        raise SystemExit("kvmu_rtl: the rtl and tlm runs differ")
    steps = int(sum(r["steps_per_problem"] for r in tlm.per_problem))
    tokens = int(sum(r["drafted_tokens"] + r["target_tokens"] for r in tlm.per_problem))
    wall = {k: statistics.median(r.wall_s for r in v) for k, v in runs.items()}
    return {
        "machine": platform.processor() or platform.machine(),
        "problems": problems,
        "repeats": repeats,
        "steps": steps,
        "tokens": tokens,
        "wall_s_tlm": wall["tlm"],
        "wall_s_rtl": wall["rtl"],
        "us_per_step_tlm": wall["tlm"] / steps * 1e6,
        "us_per_step_rtl": wall["rtl"] / steps * 1e6,
        "rtl_cost_us_per_step": (wall["rtl"] - wall["tlm"]) / steps * 1e6,
        "ratio": wall["rtl"] / wall["tlm"],
        "ns_per_token_rtl_extra": (wall["rtl"] - wall["tlm"]) / tokens * 1e9,
        "wall_s_rtl_all": [r.wall_s for r in runs["rtl"]],
        "wall_s_tlm_all": [r.wall_s for r in runs["tlm"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args()
    out = measure(args.problems, args.repeats)
    for key, value in out.items():
        if isinstance(value, list):
            value = " ".join(f"{v:.3f}" for v in value)
        print(f"{key:24} {value:.4g}" if isinstance(value, float) else f"{key:24} {value}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=2)


if __name__ == "__main__":
    main()
