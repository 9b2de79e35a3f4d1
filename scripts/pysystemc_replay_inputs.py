"""The inputs of examples/pysystemc_replay.py, written with the package on this machine's
Python: a scenario's engine description, a generated trace's problems and events as the
engine takes them, and each problem's start and end from cosim.simulate on that trace.

    .venv/bin/python scripts/pysystemc_replay_inputs.py OUT.json [SCENARIO [PROBLEMS]]
"""

from __future__ import annotations

import json
import sys

import cosim
from cosim.engine._workflow import system_dict
from cosim.trace import Backtrack, Refine


def main(out: str, scenario: str = "heteroreason", problems: int = 8) -> int:
    scn = cosim.scenario(scenario)
    trace = cosim.trace.generate("math500", int(problems), seed=7)
    result = cosim.simulate(scn, trace)
    rows = {r["id"]: r for r in result.per_problem}
    events, table = [], []
    for problem in trace.problems:
        table.append({"prompt_tokens": problem.prompt_tokens, "first_event": len(events),
                      "events": len(problem.events)})
        for e in problem.events:
            backtrack = isinstance(e, Backtrack)
            events.append({"kind": type(e).__name__.lower(), "step": e.to_step if backtrack else e.step,
                           "tokens": 0 if backtrack else e.tokens,
                           "accepted": False if backtrack else bool(e.accepted),
                           "scored": isinstance(e, Refine) and e.score is not None})
    # Each problem's start and end in whole picoseconds, the kernel's unit.
    expected = [{"start_ps": round(rows[p.id]["start_s"] * 1e12), "end_ps": round(rows[p.id]["end_s"] * 1e12)}
                for p in trace.problems]
    with open(out, "w") as f:
        json.dump({"scenario": scenario, "system": system_dict(scn), "events": events, "problems": table,
                   "expected": expected}, f)
    return 0


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 4:
        sys.exit("usage: python scripts/pysystemc_replay_inputs.py OUT.json [SCENARIO [PROBLEMS]]")
    sys.exit(main(*sys.argv[1:]))
