"""What token-level speculative decoding costs the simulator: the same trace on Llama-3.1-8B
on one H100, the target alone and the speculative-decoding system (EAGLE-3, three drafts a
pass, and starting from three on Hugging Face's heuristic_transient schedule), a request at a time and
served by the vLLM engine (which drafts a fixed number: the schedule is not served).

    .venv/bin/python bench/speculation.py [--problems 20000] [--requests 2000] [--live 2000] [--repeats 3]

Prints one JSON line: per system, the median SystemC wall time of the single-request run
(`run_wall_s`), its kernel delta cycles per simulated token (`events_per_token`: a request's
decode is one wait, so it stays far below 1), the median SystemC wall time of serving the
requests at 20 a second with batching (`serve_wall_s`); then the ratios to the target alone.
Then `--live` of the problems run live with a policy that sets every pass's drafts (the
scenario's three, so the run is the constant one's): its wall time (`live_wall_s`), its
ratio to the same problems replayed (`live_ratio`), its questions per simulated token
(`live_decisions_per_token`), the microseconds each costs over the replay
(`live_us_per_decision`) and its events per token.
The goal: events per token within 0.3.
"""

from __future__ import annotations

import argparse
import json
import statistics

import cosim
from cosim import serve
from cosim.config.scenario import build_scenario
from cosim.live import TracePolicy

TARGET = {"device": "h100-sxm", "model": "llama-3.1-8b"}
SYSTEMS = {"alone": {"system": "autoregressive"},
           "speculative": {"system": "speculative-decoding", "speculation": {"draft_tokens": 3}},
           "heuristic": {"system": "speculative-decoding",
                         "speculation": {"draft_tokens": 3, "draft_schedule": "heuristic_transient"}}}
SERVED = ("alone", "speculative")


def measure(problems: int, requests: int, repeats: int) -> dict[str, float]:
    trace = cosim.trace.generate("math500", problems, seed=1)
    served = cosim.trace.generate("math500", requests, seed=1)
    out: dict[str, float] = {}
    for name, system in SYSTEMS.items():
        single = build_scenario({**system, "target": TARGET})
        walls, deltas, serves = [], [], []
        for _ in range(repeats):
            run = cosim.simulate(single, trace)
            walls.append(run.wall_s)
            deltas.append(run.kernel_deltas / run.summary["generated_tokens"])
            if name in SERVED:
                batched = build_scenario({**system, "target": TARGET, "batching": {"enabled": True}})
                serves.append(serve.run(batched, served, rate=20, seed=1).wall_s)
        out[f"{name}_run_wall_s"] = statistics.median(walls)
        out[f"{name}_events_per_token"] = statistics.median(deltas)
        if serves:
            out[f"{name}_serve_wall_s"] = statistics.median(serves)
    for name in SYSTEMS:
        if name != "alone":
            out[f"{name}_run_ratio"] = out[f"{name}_run_wall_s"] / out["alone_run_wall_s"]
    out["speculative_serve_ratio"] = out["speculative_serve_wall_s"] / out["alone_serve_wall_s"]
    return out


class Drafts(TracePolicy):
    """Sets every pass's drafts to the scenario's own: each pass is a question."""

    def speculate(self, view):
        return view.proposed


def measure_live(problems: int, repeats: int) -> dict[str, float]:
    trace = cosim.trace.generate("math500", problems, seed=1)
    scn = build_scenario({**SYSTEMS["speculative"], "target": TARGET})
    walls, replays, per_token, deltas = [], [], [], []
    for _ in range(repeats):
        live = cosim.cosimulate(scn, Drafts(trace), trace)
        tokens = live.result.summary["generated_tokens"]
        walls.append(live.result.wall_s)
        replays.append(cosim.simulate(scn, trace).wall_s)
        per_token.append(live.decisions / tokens)
        deltas.append(live.result.kernel_deltas / tokens)
    wall, replay = statistics.median(walls), statistics.median(replays)
    decisions = statistics.median(per_token) * live.result.summary["generated_tokens"]
    return {"live_wall_s": wall, "live_ratio": wall / replay,
            "live_decisions_per_token": statistics.median(per_token),
            "live_us_per_decision": 1e6 * (wall - replay) / decisions,
            "live_events_per_token": statistics.median(deltas)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--live", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({**measure(args.problems, args.requests, args.repeats), **measure_live(args.live, args.repeats)}))


if __name__ == "__main__":
    main()
