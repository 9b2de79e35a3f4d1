"""What step-level speculation without a PRM's verdicts costs the simulator: the same
forward-only trace on Config 1's RTX 3090s through specreason (the target scoring each drafted
step itself) against gpu-baseline (a PRM scores it, strictly sequential), and through
lookahead (the target writing the drafted steps at once, a judge comparing) against
gpu-stepahead (the draft a step ahead of a PRM's verdicts), a request at a time and served on
two GPUs of each pool with batching; and gpu-stepahead with its draft GPU decoding each
drafted step speculatively (toggles.draft_speculation, an n-gram lookup) against plain
gpu-stepahead, a request at a time (the toggle is refused with batching).

    .venv/bin/python bench/step_level.py [--problems 30000] [--requests 8000] [--repeats 3]

Prints one JSON line: per system, the median SystemC wall time of the single-request run
(`run_wall_s`), its kernel delta cycles per simulated token (`events_per_token`), the
median wall time of serving the requests at 4 a second (`serve_wall_s`); then the ratios of
each system to the one it is set against. The goal: events per token within 0.3.
"""

from __future__ import annotations

import argparse
import json
import statistics

import cosim
from cosim import serve

# Each measured system and the one it is set against.
PAIRS = (("specreason", "gpu-baseline"), ("lookahead", "gpu-stepahead"))
CLUSTER = {"draft": {"devices": 2}, "prm": {"devices": 2}, "target": {"devices": 2}}
# The draft's own decoding made speculative, a request at a time.
DRAFTING = {"toggles.draft_speculation": True, "speculation.proposer": "ngram",
            "speculation.acceptance": "ngram-code-edit-k5"}


def key(name: str) -> str:
    return name.replace("-", "_")


def measure(problems: int, requests: int, repeats: int) -> dict[str, float]:
    trace = cosim.trace.generate("math500", problems, seed=1, backtracking=False)
    served = cosim.trace.generate("math500", requests, seed=1, backtracking=False)
    out: dict[str, float] = {}
    for name in dict.fromkeys(n for pair in PAIRS for n in pair):
        single = cosim.scenario(name, 1, algorithm="rsd")
        pools = {role: CLUSTER[role] for role in cosim.systems.by_name(name).pools()}
        batched = cosim.scenario(name, 1, algorithm="rsd", cluster=pools, batching={"enabled": True})
        walls, deltas, serves = [], [], []
        for _ in range(repeats):
            run = cosim.simulate(single, trace)
            walls.append(run.wall_s)
            deltas.append(run.kernel_deltas / run.summary["generated_tokens"])
            serves.append(serve.run(batched, served, rate=4.0, seed=1).wall_s)
        out[f"{key(name)}_run_wall_s"] = statistics.median(walls)
        out[f"{key(name)}_events_per_token"] = statistics.median(deltas)
        out[f"{key(name)}_serve_wall_s"] = statistics.median(serves)
    for name, against in PAIRS:
        for what in ("run", "serve"):
            out[f"{key(name)}_{what}_ratio"] = out[f"{key(name)}_{what}_wall_s"] / out[f"{key(against)}_{what}_wall_s"]
    drafting = cosim.scenario("gpu-stepahead", 1, algorithm="rsd").with_values(DRAFTING)
    walls, deltas = [], []
    for _ in range(repeats):
        run = cosim.simulate(drafting, trace)
        walls.append(run.wall_s)
        deltas.append(run.kernel_deltas / run.summary["generated_tokens"])
    out["draft_speculation_run_wall_s"] = statistics.median(walls)
    out["draft_speculation_events_per_token"] = statistics.median(deltas)
    out["draft_speculation_run_ratio"] = out["draft_speculation_run_wall_s"] / out["gpu_stepahead_run_wall_s"]
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
