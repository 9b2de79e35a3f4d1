"""What the uncertainty figures cost.

    .venv/bin/python bench/uncertainty.py [--json out.json] [--quick]

1. `bootstrap_ms`: the paired intervals of one report trace: every metric of nine systems on
   300 Math500-profile problems and the latency ratio of each pair (BCa, 2,000 resamples),
   median of five;
2. `serve_intervals_ms`: the block-bootstrap intervals of a 600-request serving run, median
   of five;
3. `depends_s`: the report's "What the numbers depend on" (both configs, two workers);
4. `sensitivity_s`: `cosim sensitivity heteroreason-u280-200 --metric speedup --workers 2`
   with its defaults (100 problems, Morris, 10 trajectories), end to end in a fresh process.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time

import cosim
from cosim.report import SYSTEMS, _depends
from cosim.uncertainty import compare
from cosim._stats._serving import serve_intervals


def median_ms(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    parser.add_argument("--quick", action="store_true", help="leave out the sensitivity run")
    args = parser.parse_args()
    out = {}
    brsd = cosim.trace.generate("math500", 300, 1).in_memory()
    rsd = cosim.trace.generate("math500", 300, 1, backtracking=False).in_memory()
    results = {}
    for name in SYSTEMS:
        scn = cosim.load_scenario(name)
        results[name] = cosim.simulate(scn, brsd if scn.backtracking else rsd)
    pairs = list(itertools.combinations(results, 2))
    out["bootstrap_ms"] = median_ms(lambda: compare(results, "gpu-baseline", pairs=pairs))
    served = cosim.serve.run(cosim.load_scenario("cluster-heteroreason-u280-200"),
                             cosim.trace.generate("math500", 600, 1), rate=1.4, seed=1)
    out["serve_intervals_ms"] = median_ms(lambda: serve_intervals(served))
    start = time.perf_counter()
    _depends.depends(300, 1, lambda label: None)
    out["depends_s"] = time.perf_counter() - start
    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cosim.cli", "sensitivity", "heteroreason-u280-200", "--metric",
                            "speedup", "--workers", "2", "--out", f"{tmp}/s", "--quiet"], check=True,
                           capture_output=True)
            out["sensitivity_s"] = time.perf_counter() - start
    for key, value in out.items():
        print(f"{key:<22} {value:10.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
