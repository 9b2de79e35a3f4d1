"""``cosim plan``: for each system, the cheapest cluster whose p99 latency meets the
objective at the given arrival rate, its points simulated locally or on Ray."""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import devices, errors, systems
from ..errors import ConfigError, CosimError
from .._args import real
from ..serve._plan import MAX_CLUSTERS, ROLES, check_grid_size, pools
from ..schema._yamlio import LocatedDict, load_yaml
from .._isolation import stop_workers
from .._system import CLUSTER_PATHS
from .._sweep._executors import check_ray_address, ray_results
from ..outputs._arrow import column, write_csv
from ..outputs._atomic import write_atomically
from ..outputs._safety import RunFolder
from ..serve import plan, run, with_cluster
from ._protect import check_run_outputs, later_inputs
from ._serve_inputs import arrivals_text, requests_of, scenario_with_settings
from ._words import counted

_FILES = ("plan.csv", "plan.json")  # written in the --out folder, with the manifest


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


def _roles(scn: Any) -> tuple[str, ...]:
    """The pools a system has: the target alone (the autoregressive system) has no draft or PRM."""
    return systems.of(scn).pools()


def _cost_table(path: str | None, scenarios: list[Any]) -> dict[str, float] | None:
    """--costs: a cost per device of each pool the planned systems have, no more and no less
    (a cost of a pool none of them has would have no effect)."""
    if path is None:
        return None
    try:  # a regular file of bounded size; errors name its line and never quote it
        data = load_yaml(path)
    except ConfigError as exc:
        raise ConfigError(f"--costs {exc}") from None
    needed = [r for r in ROLES if any(r in _roles(scn) for scn in scenarios)]
    if not isinstance(data, dict) or set(data) - set(needed) or set(needed) - set(data):
        unused = [r for r in (data if isinstance(data, dict) else ()) if r not in needed]
        if unused and isinstance(data, LocatedDict) and unused[0] in ROLES:
            raise ConfigError(f"--costs {data.where_of(unused[0])}: no system planned has a {unused[0]} pool (the "
                              f"autoregressive system has its target pool alone); give a cost for "
                              f"{', '.join(needed)} only")
        raise ConfigError(f"--costs {path}: give a cost for each of {', '.join(needed)}")
    return {r: real(data[r], f"--costs {data.where_of(r) if isinstance(data, LocatedDict) else path}: {r}",
                    positive=True) for r in needed}


def _costs(table: dict[str, float] | None, scn: Any) -> Any:
    """One system's cost per device of each pool: the table's (a pool it lacks costs nothing), or
    its devices' power."""
    if table is None:
        return scn
    return {r: table[r] if r in _roles(scn) else 0.0 for r in ROLES}


def _mapper(args: argparse.Namespace, scn: Any, trace: Any, served: dict[str, Any]) -> Callable[..., Iterable]:
    """Evaluates a round's clusters together: threads waiting on local workers, or Ray tasks."""
    if args.executor == "local":
        pool = ThreadPoolExecutor(max_workers=args.workers)

        def local(evaluate: Any, clusters: list[dict[str, int]]) -> list[float]:
            futures = [pool.submit(evaluate, c) for c in clusters]
            try:
                return [f.result() for f in futures]
            except BaseException:  # one cluster's error ends the plan: the others stop now
                for f in futures:
                    f.cancel()
                stop_workers()
                raise

        return local
    check_ray_address(args.ray_address, "ray")

    def on_ray(evaluate: Any, clusters: list[dict[str, int]]) -> list[float]:
        points = [{**{CLUSTER_PATHS[k]: v for k, v in c.items()}, **{f"serve.{k}": v for k, v in served.items()}}
                  for c in clusters]
        found: dict[str, float] = {}
        for row in ray_results(scn, trace, points, args.workers, args.ray_address):
            key = json.dumps({k: row[k] for k in points[0]}, sort_keys=True)
            if row.get("status") != "ok":  # an error is never a result: the plan stops with it
                name, _, message = str(row.get("error")).partition(": ")
                cls = getattr(errors, name, None)
                cls = cls if isinstance(cls, type) and issubclass(cls, CosimError) else errors.SimulationError
                cluster = {k: row[CLUSTER_PATHS[k]] for k in clusters[0]}
                raise cls(f"{scn.name} on {describe(scn, cluster)}: {message or row.get('error')}")
            found[key] = row.get("latency_p99_s")
        return [found[json.dumps(p, sort_keys=True)] for p in points]

    return on_ray


def describe(scn: Any, cluster: dict[str, int]) -> str:
    """A cluster in words, as the plan's table shows it."""
    return systems.of(scn).cluster_words(cluster)


def cost_unit(costs: str | None) -> str:
    """What a plan's cost is counted in: by default each device's highest power, in watts; a
    --costs file's numbers are in a unit of its own, which it does not name ("")."""
    return "W" if costs is None else ""


def gpus(scn: Any, cluster: dict[str, int]) -> int:
    """GPUs in a cluster: the PRM and target pools, and the draft pool when it is of GPUs (the
    autoregressive system: its target pool alone)."""
    return sum(cluster[f"{pool}_devices"] for pool in systems.of(scn).pools()
               if devices.kind_of(getattr(scn, pool).device).gpu)


def equal_resources(reference: Any, best: Any, scn: Any, evaluate: Callable[[dict[str, int]], float],
                    grid: dict[str, list[int]], mapper: Callable[..., Iterable],
                    cost: dict[str, float]) -> dict[str, Any]:
    """``scn`` given what the reference's cheapest cluster holds: its best p99 with as many
    GPUs (every split of them into pools), and within the same cost (every cluster of the
    grid that costs no more, at ``scn``'s cost per device)."""
    contexts = scn.cluster.draft.contexts_per_device

    def cluster(d: int, p: int, t: int) -> dict[str, int]:
        return pools(d, contexts, p, t)

    count = gpus(reference, best.cluster)
    # Draft GPUs come out of the same count; other draft devices are the grid's.
    draft_pool = range(1, count - 1) if devices.kind_of(scn.draft.device).gpu else grid["draft"]
    same_gpus = [cluster(d, p, t) for d in draft_pool for p in range(1, count) for t in range(1, count)
                 if gpus(scn, cluster(d, p, t)) == count]
    budget = [cluster(d, p, t) for d in grid["draft"] for p in grid["prm"] for t in grid["target"]
              if d * cost["draft"] + p * cost["prm"] + t * cost["target"] <= best.cost]
    out: dict[str, Any] = {}
    for key, candidates in (("same_gpus", same_gpus), ("same_cost", budget)):
        results = list(mapper(evaluate, candidates)) if candidates else []
        if not results:
            out[key] = None
            continue
        p99, chosen = min(zip(results, candidates), key=lambda pair: pair[0])
        out[key] = {"cluster": chosen, "p99_s": p99, "gpus": gpus(scn, chosen),
                    "cost": sum(chosen[f"{r}_devices"] * cost[r] for r in ("draft", "prm", "target"))}
    return out


def run_plans(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise ConfigError(f"--workers: must be >= 1, got {args.workers}")
    if args.executor == "local" and args.ray_address:
        raise ConfigError("--ray-address: applies to --executor ray only")
    grid = {k: counts(getattr(args, k), f"--{k}") for k in ("draft", "prm", "target")}
    check_grid_size(*(len(set(v)) for v in grid.values()), names=("--draft", "--prm", "--target"))
    scenarios = [scenario_with_settings(name, args.config, args.set) for name in args.scenarios]
    costs = _cost_table(args.costs, scenarios)
    seed = 0 if args.seed is None else args.seed
    served = {"rate": args.rate, "seed": seed, **({"cv": args.cv} if args.cv is not None else {})}
    folder = Path(args.out or "out/plan")
    # Every output against every input, before any cluster is simulated.
    check_run_outputs(folder, _FILES, {}, {**{f"the scenario {name}": name for name in args.scenarios},
                                           "--trace": args.trace, "--costs": args.costs,
                                           **later_inputs(None if args.trace else args.profile)})
    run_folder = RunFolder(folder)
    plans, rows, comparisons = [], [], []
    try:
        with run_folder.writing():
            for scn in scenarios:
                trace, described = requests_of(args, scn)
                trace = trace.in_memory() if len(trace) <= 20_000 else trace

                def evaluate(cluster: dict[str, int], scn: Any = scn, trace: Any = trace) -> float:
                    try:
                        return run(with_cluster(scn, cluster), trace, **served).summary.latency_p99_s
                    except CosimError as exc:  # an error is never a result: the plan stops with it
                        raise type(exc)(f"{scn.name} on {describe(scn, cluster)}: {exc}") from None

                contexts = scn.cluster.draft.contexts_per_device
                # The target alone (the autoregressive system) varies its target pool only.
                pools = {pool: grid[pool] if pool in systems.of(scn).pools() else [1] for pool in grid}
                result = plan(evaluate, **pools, slo_s=args.slo, costs=_costs(costs, scn),
                              draft_contexts_per_device=contexts, map=_mapper(args, scn, trace, served),
                              width=args.workers)
                comparison = None
                if plans and plans[0][1].cluster is not None:  # the first scenario's cheapest, as a yardstick
                    comparison = equal_resources(plans[0][0], plans[0][1], scn, evaluate, grid,
                                                 _mapper(args, scn, trace, served), result.costs)
                plans.append((scn, result))
                comparisons.append(comparison)
                for e in result.evaluations:
                    rows.append({"scenario": scn.name, **e.cluster, "p99_s": e.p99_s, "cost": e.cost,
                                 "meets_slo": e.meets_slo})
                if not args.quiet:
                    print(f"{scn.name}: {len(result.evaluations)} of {counted(result.candidates, 'cluster')} "
                          f"simulated")
            import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

            names = ("scenario", "draft_devices", "draft_contexts_per_device", "prm_devices", "target_devices", "p99_s",
                     "cost", "meets_slo")
            write_csv(pa.table({k: column([r[k] for r in rows]) for k in names}), run_folder.staged("plan.csv"))
            report = {"rate": args.rate, "arrivals": arrivals_text(args), "slo_s": args.slo, "requests": described,
                      "cost_unit": cost_unit(args.costs),
                      "plans": [{"scenario": scn.name, "cluster": r.cluster, "cost": r.cost, "p99_s": r.p99_s,
                                 "costs": r.costs, "candidates": r.candidates, "evaluated": len(r.evaluations),
                                 "with_the_first_plans_resources": c}
                                for (scn, r), c in zip(plans, comparisons)]}
            write_atomically(run_folder.staged("plan.json"), json.dumps(report, indent=1))
            run_folder.publish({"command": "cosim plan", "scenarios": [s.name for s in scenarios],
                                "rate": args.rate, "slo_s": args.slo, "seed": seed})
    except BaseException:
        run_folder.discard()
        raise
    print(f"\ncheapest cluster with p99 <= {args.slo:g} s at {arrivals_text(args)} ({described}):\n")
    unit = cost_unit(args.costs)
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
