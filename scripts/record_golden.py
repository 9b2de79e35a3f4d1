"""Records every built-in scenario's per-problem (or per-request) results on a small trace,
to the nanosecond, in tests/data/golden_results.json: tests/test_golden_results.py checks
that the simulator still gives exactly these. Rerun it only when a change of the models is
meant to change results, and say why in the commit.

    .venv/bin/python scripts/record_golden.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cosim
from cosim.config.scenario import builtin_scenarios

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "golden_results.json"
PROBLEMS = 6     # single-request systems: problems replayed one after another
REQUESTS = 12    # serving systems: requests at RATE per second
RATE = 2.0


def rows(table) -> list[dict]:
    return [{k: v for k, v in dict(r).items()} for r in table]


SERVING = ("cluster-", "vllm-")  # the serving systems: requests arriving, not replayed one by one


def results(name: str) -> dict:
    scn = cosim.load_scenario(name)
    # Forward-only RSD systems replay a trace drawn without backtracks.
    backtracking = getattr(scn, "algorithm", "") != "rsd" and "nobacktrack" not in name
    if name.startswith(SERVING):
        trace = cosim.trace.generate("math500", REQUESTS, seed=0, backtracking=backtracking)
        served = cosim.serve.run(scn, trace, rate=RATE, seed=1)
        return {"kind": "serve", "rows": rows(served.per_request)}
    result = cosim.simulate(scn, cosim.trace.generate("math500", PROBLEMS, seed=0, backtracking=backtracking))
    return {"kind": "single", "rows": rows(result.per_problem)}


def record() -> dict:
    return {name: results(name) for name in builtin_scenarios()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    args = parser.parse_args()
    now = json.loads(json.dumps(record()))
    if args.check:
        stored = json.loads(OUT.read_text())
        bad = [n for n in stored if stored[n] != now.get(n)]
        print("identical" if not bad else f"differ: {', '.join(bad)}")
        sys.exit(1 if bad else 0)
    OUT.write_text(json.dumps(now, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(now)} scenarios)")


if __name__ == "__main__":
    main()
