"""Shared by the policy scripts: one policy against the algorithm's own rule on the same
problems (the same draws), and the difference printed."""

from __future__ import annotations

import argparse
from typing import Any

import cosim
from cosim.live import ProfilePolicy

ROWS = (("latency_s", "mean latency (s)", "{:.3f}"), ("accuracy", "accuracy", "{:.3f}"),
        ("energy_j_per_token", "J per final token", "{:.3f}"),
        ("wasted_energy_share", "wasted energy share", "{:.4f}"), ("stall_ratio", "stall ratio", "{:.3f}"),
        ("steps_per_problem", "steps per problem", "{:.2f}"))


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", default="heteroreason-u280-300")
    parser.add_argument("--profile", default="math500")
    parser.add_argument("--problems", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def compare(args: argparse.Namespace, policy: ProfilePolicy, label: str) -> dict[str, Any]:
    """Runs the default rule and ``policy`` on the same problems; prints and returns both summaries."""
    scn = cosim.load_scenario(args.scenario)
    problems = cosim.trace.generate(args.profile, args.problems, seed=args.seed, backtracking=scn.backtracking)
    default = cosim.cosimulate(scn, ProfilePolicy(args.profile, seed=args.seed, header=problems.header), problems)
    chosen = cosim.cosimulate(scn, policy, problems)
    print(f"{args.scenario}, {args.problems} {args.profile} problems (seed {args.seed}):\n")
    print(f"  {'':<24} {'thresholds':>12} {label:>16}")
    for key, name, fmt in ROWS:
        a, b = default.result.summary[key], chosen.result.summary[key]
        print(f"  {name:<24} {fmt.format(a):>12} {fmt.format(b):>16}")
    print(f"\n  verdicts against the PRM score: {chosen.overridden_verdicts}; "
          f"{chosen.decisions} decisions, {chosen.us_per_decision:.1f} us each in the policy")
    return {"default": default.result.summary, "policy": chosen.result.summary, "live": chosen}
