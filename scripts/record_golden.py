"""Records every built-in scenario's per-problem (or per-request) results on a small trace,
to the nanosecond, in tests/data/golden_results.json, and those of hand-written cases the
drawn traces do not reach in tests/data/golden_cases.json: tests/test_golden_results.py
checks that the simulator still gives exactly these. Rerun it only when a change of the
models is meant to change results, and say why in the commit.

    .venv/bin/python scripts/record_golden.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cosim
from cosim.config.scenario import builtin_scenarios
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "golden_results.json"
CASES_OUT = OUT.with_name("golden_cases.json")
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


# A backtrack whose alternative reuses the target's prefetched tokens: step 2's draft is
# rejected, its refinement fails, the problem backtracks to step 2's start and the target
# writes the alternative from the run it had begun there. The drawn traces above hold no
# backtrack, and nothing there reuses a prefetch.
PROMPT = 100
CASE_SCENARIOS = ("heteroreason-u280-300", "heteroreason-noprefetch")  # the same design, prefetch cache on and off


def backtrack_reuse_trace() -> Trace:
    problem = (TrajectoryBuilder("backtrack-reuse", PROMPT).accept(40).accept(30).reject(25).refine_fails(35)
               .backtrack().refine(30).accept(20).build())
    return Trace(TraceHeader(backtracking=True), [problem])


def record_cases() -> dict:
    trace = backtrack_reuse_trace()

    def case(name: str, config: int) -> dict:
        return {"kind": "single", "rows": rows(cosim.simulate(cosim.load_scenario(name, config), trace).per_problem)}

    return {f"{name}/config{config}": case(name, config) for name in CASE_SCENARIOS for config in (1, 2)}


def _write(path: Path, found: dict) -> None:
    path.write_text(json.dumps(found, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {path} ({len(found)} cases)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    args = parser.parse_args()
    files = {OUT: json.loads(json.dumps(record())), CASES_OUT: json.loads(json.dumps(record_cases()))}
    if args.check:
        bad = []
        for path, now in files.items():
            stored = json.loads(path.read_text())
            bad += [n for n in stored if stored[n] != now.get(n)]
        print("identical" if not bad else f"differ: {', '.join(bad)}")
        sys.exit(1 if bad else 0)
    for path, now in files.items():
        _write(path, now)


if __name__ == "__main__":
    main()
