"""Shared by the trajectory scripts: the hand-written trajectory, then the same
problem simulated step by step (device activities with their times, the KVMU's
pointers and mode at every verdict), its metrics, and optionally a VCD,
a Perfetto timeline and the trace file."""

from __future__ import annotations

import argparse
from pathlib import Path

import cosim
from cosim import trace



def _events(problem: trace.Problem, header: trace.TraceHeader) -> None:
    summary = trace.summarize(problem, header)
    print(f"{problem.id}: prompt {problem.prompt_tokens} tokens")
    for event in problem.events:
        if isinstance(event, trace.Backtrack):
            print(f"  backtrack to step {event.to_step}")
        else:
            verdict = "accepted" if event.accepted else "rejected"
            score = "-" if event.score is None else event.score
            print(f"  {event.type:6} step {event.step}: {event.tokens:4d} tokens, score {score} -> {verdict}")
    print(f"  final chain {list(summary.final_steps)} = {summary.final_tokens} tokens; drafted "
          f"{summary.drafted_tokens} (accepted {summary.accepted_draft_tokens}, discarded "
          f"{summary.discarded_draft_tokens}); target {summary.target_tokens}; backtracks {summary.backtracks}")


def _timeline(result: cosim.Result) -> None:
    rows = []
    for a in result.activities or []:
        if a.kind.startswith("transfer") or a.end_ns <= a.start_ns:
            continue
        detail = f"{a.tokens} tokens" if a.kind != "request" else "serving request"
        rows.append((a.start_ns, f"{a.start_ns / 1e6:10.3f} - {a.end_ns / 1e6:10.3f} ms  {a.device:6} {a.kind:14} "
                                 f"step {a.step:2d}  {detail}"))
    for r in result.kvmu or []:
        rows.append((r.time_ns, f"{r.time_ns / 1e6:10.3f} ms               kvmu   {r.op:14} valid={r.valid} "
                                f"curr={r.curr} ahead={r.ahead} mode={r.mode}"))
    for _, line in sorted(rows, key=lambda row: row[0]):
        print("  " + line)


def show(problems: list[trace.Problem], description: str, header: trace.TraceHeader | None = None) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", default="heteroreason-u280-200",
                        help="built-in scenario or scenario YAML to simulate on (default: heteroreason-u280-200)")
    parser.add_argument("--vcd", help="write SystemC waveforms (VCD) here")
    parser.add_argument("--timeline", help="write a Perfetto timeline (JSON) here")
    parser.add_argument("--out", help="write the trajectory as a trace file (JSON Lines)")
    args = parser.parse_args()
    header = header or trace.TraceHeader()
    for problem in problems:
        _events(problem, header)
    workload = trace.Trace(header, problems)
    scn = cosim.load_scenario(args.scenario)
    result = cosim.simulate(scn, workload, vcd=args.vcd, timeline=args.timeline, activities=True, vcd_detail="token")
    print(f"\nSimulated on {scn.name} ({scn.system}, draft on {scn.draft.device.name}):")
    _timeline(result)
    s = result.summary
    print(f"\n  latency {s['latency_s']:.3f} s, goodput {s['goodput_tok_s']:.1f} tok/s, "
          f"{s['energy_j_per_token']:.2f} J/token, stall ratio {s['stall_ratio']:.3f}, "
          f"wasted energy {s['wasted_energy_share']:.3f}")
    if args.vcd:
        print(f"  waveforms: {args.vcd} (GTKWave or Surfer)")
    if args.timeline:
        print(f"  timeline: {args.timeline} (ui.perfetto.dev)")
    if args.out:
        print(f"  trace: {workload.save(args.out)}")
