"""Serving over the documented range: 10^6 s of simulated time and 10^6 requests.

    .venv/bin/python bench/serve_range.py [--requests 1000000] [--json out.json]

1. 1,000 Math500-profile requests at 0.05 requests/s on gpu-baseline, seeds 0, 1 and 2
   (about 20,000 s each: past 2^53 ps, where a time in ns as a double stops holding every
   picosecond);
2. 2,000 requests at 0.002 requests/s (about 10^6 s) on gpu-baseline;
3. ``--requests`` requests (default 10^6) at 1.4 requests/s on the built-in cluster of 8
   U280 boards, 2 PRM and 2 target GPUs batching (about 7 x 10^5 s), rows streamed to disk
   as ``cosim serve`` does.

Each prints its wall time, span, requests and the checks the serving summary makes (every
start at or after its arrival, every end at or after its start), and the peak memory of
the simulation's worker for the last.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import cosim
from cosim import serve


def run(label: str, scn: str, requests: int, rate: float, seed: int, rows_to: Path | None = None) -> dict:
    trace = cosim.trace.generate("math500", requests, seed=seed)
    start = time.perf_counter()
    result = serve.run(cosim.load_scenario(scn), trace, rate=rate, seed=seed, rows_to=rows_to)
    wall = time.perf_counter() - start
    s = result.summary
    # serve_summary has checked start >= arrival and end >= start for every request.
    out = {"label": label, "requests": s.requests, "span_s": s.span_s, "wall_s": wall,
           "latency_p99_s": s.latency_p99_s, "queueing_mean_s": s.queueing_mean_s}
    print(f"{label:44} {s.requests:>9} requests  span {s.span_s:>12.1f} s  p99 {s.latency_p99_s:8.2f} s  "
          f"wall {wall:8.1f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000, help="requests of the last run")
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args()
    out = []
    for seed in (0, 1, 2):
        out.append(run(f"gpu-baseline 1,000 at 0.05/s, seed {seed}", "gpu-baseline", 1000, 0.05, seed))
    out.append(run("gpu-baseline 2,000 at 0.002/s", "gpu-baseline", 2000, 0.002, 1))
    with tempfile.TemporaryDirectory() as tmp:
        out.append(run(f"U280 cluster {args.requests:,} at 1.4/s", "cluster-heteroreason-u280-200", args.requests,
                       1.4, 1, rows_to=Path(tmp)))
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory of a simulation worker: {worker_mb:.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": out, "worker_peak_mb": worker_mb}, indent=1))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent.parent))
    main()
