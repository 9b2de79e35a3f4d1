"""``cosim plan``: the flags read and the plans printed; the plans themselves are
cosim.serve._plan_clusters."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import systems
from ..errors import ConfigError
from ..serve._plan import MAX_CLUSTERS, check_grid_size
from ..serve._plan_clusters import FILES, Settings, cost_table, cost_unit, gpus, plan_systems
from ._protect import check_run_outputs, later_inputs
from ._serve_inputs import arrivals_text, requests_of, scenario_with_settings
from ._words import counted


def counts(text: str, option: str) -> list[int]:
    """``1-8`` or ``1,2,4``: the device counts to try."""
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-", 1))
            values = range(low, high + 1)
        else:
            values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{option} {text!r}: give a range (1-8) or a list (1,2,4)") from None
    if len(values) > MAX_CLUSTERS:  # refused before a list that long is made
        raise ConfigError(f"{option} {text!r}: {len(values)} device counts, more than the {MAX_CLUSTERS} clusters "
                          f"a plan searches; give a narrower range")
    values = list(values)
    if not values or min(values) < 1:
        raise ConfigError(f"{option} {text!r}: give device counts of at least 1")
    return values


def run_plans(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise ConfigError(f"--workers: must be >= 1, got {args.workers}")
    if args.executor == "local" and args.ray_address:
        raise ConfigError("--ray-address: applies to --executor ray only")
    grid = {k: counts(getattr(args, k), f"--{k}") for k in ("draft", "prm", "target")}
    check_grid_size(*(len(set(v)) for v in grid.values()), names=("--draft", "--prm", "--target"))
    scenarios = [scenario_with_settings(name, args.config, args.set) for name in args.scenarios]
    costs = cost_table(args.costs, scenarios)
    seed = 0 if args.seed is None else args.seed
    served = {"rate": args.rate, "seed": seed, **({"cv": args.cv} if args.cv is not None else {})}
    folder = Path(args.out or "out/plan")
    # Every output against every input, before any cluster is simulated.
    check_run_outputs(folder, FILES, {}, {**{f"the scenario {name}": name for name in args.scenarios},
                                          "--trace": args.trace, "--costs": args.costs,
                                          **later_inputs(None if args.trace else args.profile)})
    settings = Settings(grid=grid, slo_s=args.slo, served=served, arrivals=arrivals_text(args),
                        executor=args.executor, workers=args.workers, ray_address=args.ray_address,
                        costs=costs)

    def progress(scn: Any, result: Any) -> None:
        if not args.quiet:
            print(f"{scn.name}: {len(result.evaluations)} of {counted(result.candidates, 'cluster')} simulated")

    plans, comparisons, described = plan_systems(scenarios, lambda scn: requests_of(args, scn), settings, folder,
                                                 progress)
    print(f"\ncheapest cluster with p99 <= {args.slo:g} s at {arrivals_text(args)} ({described}):\n")
    unit = cost_unit(costs)
    print(f"  {'scenario':<28} {'draft':>5} {'prm':>4} {'target':>6} {'GPUs':>5} {f'cost {unit}'.strip():>9} "
          f"{'p99 s':>8}")
    for scn, r in plans:
        if r.cluster is None:
            print(f"  {scn.name:<28} none of the clusters tried meets the objective")
            continue
        c = r.cluster
        have = systems.of(scn).pools()  # the target alone has no draft and no PRM pool
        print(f"  {scn.name:<28} {c['draft_devices'] if 'draft' in have else '-':>5} "
              f"{c['prm_devices'] if 'prm' in have else '-':>4} "
              f"{c['target_devices']:>6} "
              f"{gpus(scn, c):>5} {r.cost:>9.0f} {r.p99_s:>8.2f}")
    reference = plans[0]
    for (scn, r), c in zip(plans[1:], comparisons[1:]):
        if c is None:
            continue
        ref = reference[1]
        for key, what in (("same_gpus", counted(gpus(reference[0], ref.cluster), "GPU")),
                          ("same_cost", f"a cost of {f'{ref.cost:.0f} {unit}'.strip()}")):
            got = c[key]
            if got is None:
                print(f"  {scn.name} with {what}: no cluster of the grid")
                continue
            verdict = "meets" if got["p99_s"] <= args.slo else "misses"
            print(f"  {scn.name} with {what} as {reference[0].name}'s: best p99 {got['p99_s']:.2f} s "
                  f"({got['cluster']['draft_devices']} draft, {got['cluster']['prm_devices']} PRM, "
                  f"{got['cluster']['target_devices']} target), {verdict} the objective")
    if args.costs is not None:
        print(f"  (costs per device from --costs {args.costs}, in its units)")
    print(f"\nwrote {folder}/plan.json, plan.csv, manifest.json")
    return 0
