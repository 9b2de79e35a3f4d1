"""What SpecReason costs the simulator: the same forward-only trace on Config 1's RTX 3090s
through gpu-baseline (the draft, a PRM and the target, strictly sequential) and through
specreason (the target scoring each drafted step itself), a request at a time and served
on two draft and two target GPUs with batching.

    .venv/bin/python bench/specreason.py [--problems 30000] [--requests 8000] [--repeats 3]

Prints one JSON line: per system, the median SystemC wall time of the single-request run
(`run_wall_s`), its kernel delta cycles per simulated token (`events_per_token`), the
median wall time of serving the requests at 4 a second (`serve_wall_s`); then the ratios
specreason / gpu-baseline. The goal: events per token within 0.3.
"""

from __future__ import annotations

import argparse
import json
import statistics

import cosim
from cosim import serve

SYSTEMS = ("gpu-baseline", "specreason")
CLUSTER = {"draft": {"devices": 2}, "prm": {"devices": 2}, "target": {"devices": 2}}


def measure(problems: int, requests: int, repeats: int) -> dict[str, float]:
    trace = cosim.trace.generate("math500", problems, seed=1, backtracking=False)
    served = cosim.trace.generate("math500", requests, seed=1, backtracking=False)
    out: dict[str, float] = {}
    for name in SYSTEMS:
        single = cosim.scenario(name, 1, algorithm="rsd")
        pools = {role: CLUSTER[role] for role in cosim.systems.by_name(name).pools()}
        batched = cosim.scenario(name, 1, algorithm="rsd", cluster=pools, batching={"enabled": True})
        walls, deltas, serves = [], [], []
        for _ in range(repeats):
            run = cosim.simulate(single, trace)
            walls.append(run.wall_s)
            deltas.append(run.kernel_deltas / run.summary["generated_tokens"])
            serves.append(serve.run(batched, served, rate=4.0, seed=1).wall_s)
        key = name.replace("-", "_")
        out[f"{key}_run_wall_s"] = statistics.median(walls)
        out[f"{key}_events_per_token"] = statistics.median(deltas)
        out[f"{key}_serve_wall_s"] = statistics.median(serves)
    out["run_ratio"] = out["specreason_run_wall_s"] / out["gpu_baseline_run_wall_s"]
    out["serve_ratio"] = out["specreason_serve_wall_s"] / out["gpu_baseline_serve_wall_s"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=30000)
    parser.add_argument("--requests", type=int, default=8000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(measure(args.problems, args.requests, args.repeats)))


if __name__ == "__main__":
    main()
