"""What a target that spans GPUs costs the simulator: the same trace on Qwen3-32B's
HeteroReason with the target on one H100 and on a tensor-parallel group of two, single
requests and serving.

    .venv/bin/python bench/parallel_groups.py [--problems 10000] [--requests 3000] [--repeats 3] [--pcie]

`--pcie`: the H100 PCIe card instead of the SXM's NVLink (every H100 of the scenarios), so
that the group's collectives are booked on its PCIe links (docs/hardware.md, "Collectives
on shared links").

Prints one JSON line: per group size, the median SystemC wall time of the single-request
run (`run_wall_s`, each run a second or more at the defaults), its kernel delta cycles per
simulated token, and the median end-to-end wall time of serving the requests at 1.4 a
second on the built-in cluster (`serve_wall_s`); then the ratios tp2 / tp1. The group's
arithmetic is per forward pass (model_spec.hpp, parallel_layout.hpp), so the ratios
should stay near 1 (the goal: at most 2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import cosim
from cosim import serve

SCENARIOS = Path(cosim.__file__).parent / "data" / "scenarios"
SINGLE = "heteroreason-qwen3-32b-tp2"
SERVING = "cluster-heteroreason-qwen3-32b-tp2"


def scenario(name: str, pcie: bool, folder: Path) -> cosim.Scenario:
    """The built-in scenario, its H100 SXMs swapped for H100 PCIe cards with `pcie`."""
    if not pcie:
        return cosim.load_scenario(name)
    text = (SCENARIOS / f"{name}.yaml").read_text().replace("h100-sxm", "h100-pcie")
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return cosim.load_scenario(str(path))


def measure(problems: int, requests: int, repeats: int, pcie: bool = False) -> dict[str, float]:
    trace = cosim.trace.generate("math500", problems, seed=1)
    served = cosim.trace.generate("math500", requests, seed=1)
    folder = Path(tempfile.mkdtemp())
    out: dict[str, float] = {}
    for tp in (1, 2):
        single = scenario(SINGLE, pcie, folder).with_value("target.parallel.tensor_parallel", tp)
        cluster = scenario(SERVING, pcie, folder).with_value("target.parallel.tensor_parallel", tp)
        walls, deltas, serves = [], [], []
        for _ in range(repeats):
            run = cosim.simulate(single, trace)
            walls.append(run.wall_s)
            deltas.append(run.kernel_deltas / run.summary["generated_tokens"])
            start = time.perf_counter()
            serve.run(cluster, served, rate=1.4, seed=1)
            serves.append(time.perf_counter() - start)
        out[f"tp{tp}_run_wall_s"] = statistics.median(walls)
        out[f"tp{tp}_events_per_token"] = statistics.median(deltas)
        out[f"tp{tp}_serve_wall_s"] = statistics.median(serves)
    out["run_ratio"] = out["tp2_run_wall_s"] / out["tp1_run_wall_s"]
    out["serve_ratio"] = out["tp2_serve_wall_s"] / out["tp1_serve_wall_s"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pcie", action="store_true", help="H100 PCIe cards: collectives booked on their links")
    args = parser.parse_args()
    print(json.dumps(measure(args.problems, args.requests, args.repeats, args.pcie)))


if __name__ == "__main__":
    main()
