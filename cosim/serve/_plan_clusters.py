"""Capacity plans for several systems (``cosim plan``): each system's cheapest cluster
that meets a p99 objective at an arrival rate, its clusters simulated in local workers or
on Ray, each later system also given the first one's resources (as many GPUs, the same
cost), and the plan written as ``plan.csv`` and ``plan.json`` in a run folder. The search
itself is cosim.serve._plan."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import devices, errors, systems
from ..errors import ConfigError, CosimError
from .._args import real
from ._plan import ROLES, PlanResult, plan, pools
from ..schema._yamlio import LocatedDict, load_yaml
from ..engine._isolation import stop_workers
from ..engine._serving_sections import CLUSTER_PATHS, with_cluster
from .._sweep._executors import check_ray_address, ray_results
from ..outputs._arrow import column, write_csv
from ..outputs._atomic import write_atomically
from ..outputs._safety import RunFolder
from ._run import run

FILES = ("plan.csv", "plan.json")  # written in the plan's folder, with the manifest
# A request trace this long or shorter is held in memory while its clusters are simulated.
_IN_MEMORY = 20_000


def _roles(scn: Any) -> tuple[str, ...]:
    """The pools a system has: the target alone (the autoregressive system) has no draft or PRM."""
    return systems.of(scn).pools()


def cost_table(path: str | None, scenarios: list[Any]) -> dict[str, float] | None:
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


def costs_for(table: dict[str, float] | None, scn: Any) -> Any:
    """One system's cost per device of each pool: the table's (a pool it lacks costs nothing), or
    its devices' power."""
    if table is None:
        return scn
    return {r: table[r] if r in _roles(scn) else 0.0 for r in ROLES}


def mapper(executor: str, workers: int, ray_address: str | None, scn: Any, trace: Any,
           served: dict[str, Any]) -> Callable[..., Iterable]:
    """Evaluates a round's clusters together: threads waiting on local workers, or Ray tasks."""
    if executor == "local":
        pool = ThreadPoolExecutor(max_workers=workers)

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
    check_ray_address(ray_address, "ray")

    def on_ray(evaluate: Any, clusters: list[dict[str, int]]) -> list[float]:
        points = [{**{CLUSTER_PATHS[k]: v for k, v in c.items()}, **{f"serve.{k}": v for k, v in served.items()}}
                  for c in clusters]
        found: dict[str, float] = {}
        for row in ray_results(scn, trace, points, workers, ray_address):
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


def cost_unit(costs: dict[str, float] | None) -> str:
    """What a plan's cost is counted in: by default each device's highest power, in watts; a
    cost table's numbers are in a unit of its own, which it does not name ("")."""
    return "W" if costs is None else ""


def gpus(scn: Any, cluster: dict[str, int]) -> int:
    """GPUs in a cluster: the PRM and target pools, and the draft pool when it is of GPUs (the
    autoregressive system: its target pool alone); a device of a pool whose model spans a
    tensor-parallel group counts as that many."""
    return sum(cluster[f"{pool}_devices"] * getattr(scn, pool).parallel.tensor_parallel
               for pool in systems.of(scn).pools() if devices.kind_of(getattr(scn, pool).device).gpu)


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


@dataclass(frozen=True)
class Settings:
    """What every system of a plan shares: the grid of pool sizes, the objective, the
    arrivals, the executor and the optional cost table."""

    grid: dict[str, list[int]]
    slo_s: float
    served: dict[str, Any]  # serve.run's rate, seed and cv
    arrivals: str           # the arrivals in words, for the report
    executor: str = "local"
    workers: int = 1
    ray_address: str | None = None
    costs: dict[str, float] | None = None  # a cost per device of each pool (cost_table); None: devices' power


def plan_systems(scenarios: list[Any], requests: Callable[[Any], tuple[Any, str]], settings: Settings,
                 folder: Path, progress: Callable[[Any, PlanResult], None] | None = None) -> tuple[list[tuple[Any, PlanResult]], list[Any], str]:
    """Each scenario's plan, in order, with its comparison at the first plan's resources (None for
    the first, or when the first found no cluster), and the requests in words. ``requests(scn)``
    gives a scenario's request trace and its description; ``progress(scn, plan)`` hears of
    each plan as it is made. Writes ``plan.csv``, ``plan.json`` and
    the manifest in ``folder`` only when every plan is through."""
    table = settings.costs
    grid, served = settings.grid, settings.served
    run_folder = RunFolder(folder)
    plans: list[tuple[Any, PlanResult]] = []
    rows, comparisons = [], []
    described = ""
    try:
        with run_folder.writing():
            for scn in scenarios:
                trace, described = requests(scn)
                trace = trace.in_memory() if len(trace) <= _IN_MEMORY else trace

                def evaluate(cluster: dict[str, int], scn: Any = scn, trace: Any = trace) -> float:
                    try:
                        return run(with_cluster(scn, cluster), trace, **served).summary.latency_p99_s
                    except CosimError as exc:  # an error is never a result: the plan stops with it
                        raise type(exc)(f"{scn.name} on {describe(scn, cluster)}: {exc}") from None

                def mapped(scn: Any = scn, trace: Any = trace) -> Callable[..., Iterable]:
                    return mapper(settings.executor, settings.workers, settings.ray_address, scn, trace, served)

                # The target alone (the autoregressive system) varies its target pool only.
                sizes = {pool: grid[pool] if pool in _roles(scn) else [1] for pool in grid}
                result = plan(evaluate, **sizes, slo_s=settings.slo_s, costs=costs_for(table, scn),
                              draft_contexts_per_device=scn.cluster.draft.contexts_per_device, map=mapped(),
                              width=settings.workers)
                comparison = None
                if plans and plans[0][1].cluster is not None:  # the first scenario's cheapest, as a yardstick
                    comparison = equal_resources(plans[0][0], plans[0][1], scn, evaluate, grid, mapped(),
                                                 result.costs)
                plans.append((scn, result))
                comparisons.append(comparison)
                for e in result.evaluations:
                    rows.append({"scenario": scn.name, **e.cluster, "p99_s": e.p99_s, "cost": e.cost,
                                 "meets_slo": e.meets_slo})
                if progress is not None:
                    progress(scn, result)
            import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

            names = ("scenario", "draft_devices", "draft_contexts_per_device", "prm_devices", "target_devices", "p99_s",
                     "cost", "meets_slo")
            write_csv(pa.table({k: column([r[k] for r in rows]) for k in names}), run_folder.staged("plan.csv"))
            report = {"rate": served["rate"], "arrivals": settings.arrivals, "slo_s": settings.slo_s,
                      "requests": described, "cost_unit": cost_unit(table),
                      "plans": [{"scenario": scn.name, "cluster": r.cluster, "cost": r.cost, "p99_s": r.p99_s,
                                 "costs": r.costs, "candidates": r.candidates, "evaluated": len(r.evaluations),
                                 "with_the_first_plans_resources": c}
                                for (scn, r), c in zip(plans, comparisons)]}
            write_atomically(run_folder.staged("plan.json"), json.dumps(report, indent=1))
            run_folder.publish({"command": "cosim plan", "scenarios": [s.name for s in scenarios],
                                "rate": served["rate"], "slo_s": settings.slo_s, "seed": served["seed"]})
    except BaseException:
        run_folder.discard()
        raise
    return plans, comparisons, described
