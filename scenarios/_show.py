"""Shared printing for the trajectory scripts: the events, the final chain and
the token counts, and an optional trace file to replay later."""

from __future__ import annotations

import argparse

from cosim import trace


def show(problems: list[trace.Problem], description: str) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", help="write the trajectory as a trace file (JSON Lines)")
    args = parser.parse_args()
    header = trace.TraceHeader()
    for problem in problems:
        summary = trace.summarize(problem, header)
        print(f"{problem.id}: prompt {problem.prompt_tokens} tokens")
        for event in problem.events:
            if isinstance(event, trace.Backtrack):
                print(f"  backtrack to step {event.to_step}")
            else:
                verdict = "accepted" if event.accepted else "rejected"
                print(f"  {event.type:6} step {event.step}: {event.tokens:4d} tokens, score {event.score} -> {verdict}")
        print(f"  final chain {list(summary.final_steps)} = {summary.final_tokens} tokens; drafted "
              f"{summary.drafted_tokens} (accepted {summary.accepted_draft_tokens}, discarded "
              f"{summary.discarded_draft_tokens}); target {summary.target_tokens}; backtracks {summary.backtracks}; "
              f"acceptance rate {summary.acceptance_rate:.3f}")
    if args.out:
        path = trace.Trace(header, problems).save(args.out)
        print(f"wrote {path}")
