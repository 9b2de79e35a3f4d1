"""The simulator's cost per simulated token against the bare kernel, for one build.

    .venv/bin/python bench/core.py [--package DIR] [--problems N] [--repeats R]

Prints one JSON line: the kernel floor (one b_transport + wait per transaction, no model;
events per second), heteroreason (U280 @ 200 MHz) replaying N Math500-profile problems
(tokens per second of its SystemC run), `events_per_token` (kernel delta cycles per
simulated token) and `floor_ratio` (tokens per second over floor events per second). Each
figure is the median of R timed runs, each lasting a second or more. `--package DIR` loads
the `cosim` package (and its built extension) found in DIR instead of the installed one:
bench/run.py measures a recorded build beside the current one in the same run with it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys


def use_package(folder: str) -> None:
    # An editable install redirects `cosim` to its checkout: take that finder out first.
    sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
    sys.path.insert(0, folder)


FLOOR_TRANSACTIONS = 8_000_000  # above a second at the ~7 M/s of a busy 2-core machine


def measure(problems: int, repeats: int) -> dict[str, float]:
    import cosim

    floors, rates, walls, deltas = [], [], [], []
    scn = cosim.load_scenario("heteroreason-u280-200")
    trace = cosim.trace.generate("math500", problems, seed=1)
    for _ in range(repeats):
        floor = cosim.standalone.kernel_floor(FLOOR_TRANSACTIONS, 10.0)
        floors.append(floor["events_per_s"])
        run = cosim.simulate(scn, trace)
        tokens = run.summary["generated_tokens"]
        rates.append(tokens / run.wall_s)
        walls.append(run.wall_s)
        deltas.append(run.kernel_deltas / tokens)
    floor_rate = statistics.median(floors)
    rate = statistics.median(rates)
    return {"floor_events_per_s": floor_rate, "tokens_per_s": rate, "events_per_token": statistics.median(deltas),
            "floor_ratio": rate / floor_rate, "run_wall_s": statistics.median(walls),
            "run_wall_spread": (max(walls) - min(walls)) / statistics.median(walls), "package": cosim.__file__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", help="load cosim from this folder")
    parser.add_argument("--problems", type=int, default=12_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.package:
        use_package(args.package)
    print(json.dumps(measure(args.problems, args.repeats)))


if __name__ == "__main__":
    main()
