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


def _parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", default="heteroreason-u280-300")
    parser.add_argument("--profile", default="math500")
    parser.add_argument("--problems", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    return parser


def arguments(description: str) -> argparse.Namespace:
    return _parser(description).parse_args()


def defaults() -> argparse.Namespace:
    """The scripts' settings when given no options."""
    return _parser("").parse_args([])


def draws(args: argparse.Namespace) -> tuple[cosim.Scenario, Any]:
    """The scenario and the problems every run of a comparison replays."""
    scn = cosim.load_scenario(args.scenario)
    return scn, cosim.trace.generate(args.profile, args.problems, seed=args.seed, backtracking=scn.backtracking)


def rule(args: argparse.Namespace, at: cosim.Scenario, problems: Any) -> Any:
    """The algorithm's own thresholds, played live on ``problems``."""
    return cosim.cosimulate(at, ProfilePolicy(args.profile, seed=args.seed, header=problems.header), problems)


def compare(args: argparse.Namespace, policy: ProfilePolicy, label: str, depth: int | None = None
            ) -> dict[str, Any]:
    """Runs the default rule and ``policy`` on the same problems; prints and returns both
    summaries. With ``depth`` the policy runs at that step-ahead depth, and the default
    rule at that depth is shown too."""
    scn, problems = draws(args)
    columns = {"thresholds": rule(args, scn, problems).result.summary}
    policy_scn = scn
    if depth is not None:
        policy_scn = with_depth(scn, depth)
        columns[f"depth {depth}"] = rule(args, policy_scn, problems).result.summary
    chosen = cosim.cosimulate(policy_scn, policy, problems)
    columns[label] = chosen.result.summary
    print(f"{args.scenario}, {args.problems} {args.profile} problems (seed {args.seed}):\n")
    print(f"  {'':<24}" + "".join(f" {name:>16}" for name in columns))
    for key, name, fmt in ROWS:
        print(f"  {name:<24}" + "".join(f" {fmt.format(summary[key]):>16}" for summary in columns.values()))
    print(f"\n  verdicts against the PRM score: {chosen.overridden_verdicts}; "
          f"{chosen.decisions} decisions, {chosen.us_per_decision:.1f} us each in the policy")
    return {"default": columns["thresholds"], "policy": chosen.result.summary, "live": chosen, "columns": columns}


def with_depth(scn: cosim.Scenario, depth: int) -> cosim.Scenario:
    return scn.with_value("toggles.step_ahead_depth", depth)
