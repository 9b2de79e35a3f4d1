"""Capacity planning (docs/serving.md): the cheapest cluster, among candidate pool sizes,
whose p99 latency meets an objective.

The search assumes that more devices never hurt the p99 latency: adding a draft, PRM or
target device to a cluster that meets the objective keeps it met. Then a cluster that
misses the objective tells that every smaller one (fewer devices in every pool) misses
it, and one that meets it tells that every larger one meets it at a higher cost. For
each (draft, prm) pair the search bisects the target count, narrowing every pair's
range by what the points evaluated so far tell, and stops looking in a range once all
its points cost at least as much as the cheapest cluster found. Under the assumption
its answer is the brute-force answer; if the evaluation breaks it (a scheduling anomaly,
noise between runs), the answer still meets the objective but may not be the cheapest.

Points of one round are evaluated together through a ``map`` callable (the built-in
``map``, ``ThreadPoolExecutor.map`` or ``ProcessPoolExecutor.map``, or a function that
sends them to Ray), ``width`` at a time.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import devices, systems
from .._args import real, whole
from ..config.scenario import Scenario
from ..errors import ConfigError

ROLES = ("draft", "prm", "target")
# The most clusters a plan's grid holds. The search evaluates a few of them (tens, for the
# default 8 x 4 x 4 grid) but keeps a state per (draft, prm) pair and scans them every
# round; a grid past this is a mistake more often than a plan.
MAX_CLUSTERS = 10_000
ClusterDict = dict[str, int]  # as the engine's cluster section: draft_devices, draft_contexts_per_device, ...


def pools(draft: int, contexts: int, prm: int, target: int) -> ClusterDict:
    """A cluster's pools as the engine's cluster section names them."""
    return {"draft_devices": draft, "draft_contexts_per_device": contexts, "prm_devices": prm,
            "target_devices": target}


def device_costs(scn: Scenario) -> dict[str, float]:
    """Each role's cost per device, by default its highest power state in watts (the power a
    deployment provisions for it; a GPU of the load model: its power limit; an FPGA of the
    design model: the states its design draws), from the
    scenario's device descriptions; a device whose model spans a tensor-parallel group costs
    that many GPUs."""
    costs = {}
    pools = systems.of(scn).pools()
    for role in ROLES:
        if role not in pools:
            costs[role] = 0.0  # a pool the system does not have (the target alone's): none to provision
            continue
        device = getattr(scn, role).device
        states = devices.kind_of(device).state_powers(device, getattr(scn, role).model)
        costs[role] = max(*states.values(), device.power.limit_w) * getattr(scn, role).parallel.tensor_parallel
    return costs


@dataclass(frozen=True)
class Evaluation:
    """One cluster the search evaluated, in the order it ran."""

    cluster: ClusterDict
    p99_s: float
    cost: float
    meets_slo: bool


@dataclass(frozen=True)
class PlanResult:
    cluster: ClusterDict | None  # the cheapest cluster meeting the objective; None: no candidate does
    cost: float | None
    p99_s: float | None
    slo_s: float
    costs: dict[str, float]  # per device of each role
    candidates: int  # clusters in the grid
    evaluations: tuple[Evaluation, ...]
    rounds: int  # calls to ``map``


def _counts(values: Any, name: str) -> tuple[int, ...]:
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ConfigError(f"{name}: give the device counts to try (a range or a list), got {values!r}")
    counts = sorted({whole(v, name, minimum=1) for v in values})
    if not counts:
        raise ConfigError(f"{name}: give at least one device count")
    return tuple(counts)


def check_grid_size(draft: int, prm: int, target: int, names: tuple[str, ...] = ROLES) -> None:
    """Refuses a grid of more than MAX_CLUSTERS clusters, saying its size."""
    size = draft * prm * target
    if size > MAX_CLUSTERS:
        raise ConfigError(f"{', '.join(names)}: the grid has {size} clusters ({draft} x {prm} x {target}), more than "
                          f"the {MAX_CLUSTERS} a plan searches; give narrower ranges")


def _costs(costs: Mapping[str, Any] | Scenario) -> dict[str, float]:
    if isinstance(costs, Scenario):
        return device_costs(costs)
    if not isinstance(costs, Mapping) or set(costs) != set(ROLES):
        raise ConfigError(f"costs: a cost per device of each role ({', '.join(ROLES)}) or a Scenario, got "
                          f"{costs!r}")
    # A pool may cost nothing (a device already there; the target alone's draft and PRM).
    return {role: real(costs[role], f"costs[{role!r}]") for role in ROLES}


class _Search:
    """The search's state: per (draft, prm) column, the target indices known to miss
    (up to ``lo``) and to meet (from ``hi``) the objective."""

    def __init__(self, grid: tuple[tuple[int, ...], ...], costs: dict[str, float], slo_s: float, contexts: int):
        self.draft, self.prm, self.target = grid
        self.costs, self.slo_s, self.contexts = costs, slo_s, contexts
        self.lo = {(d, p): -1 for d in range(len(self.draft)) for p in range(len(self.prm))}
        self.hi = {column: len(self.target) for column in self.lo}
        self.best: tuple[Any, ...] | None = None  # the key of the cheapest cluster meeting the objective
        self.found: Evaluation | None = None  # that cluster's evaluation
        self.evaluations: list[Evaluation] = []

    def key(self, d: int, p: int, t: int) -> tuple[Any, ...]:
        """Cost first; equal costs go to fewer draft, then PRM, then target devices."""
        counts = (self.draft[d], self.prm[p], self.target[t])
        cost = counts[0] * self.costs["draft"] + counts[1] * self.costs["prm"] + counts[2] * self.costs["target"]
        return (cost, *counts)

    def cluster(self, d: int, p: int, t: int) -> ClusterDict:
        return pools(self.draft[d], self.contexts, self.prm[p], self.target[t])

    def open_range(self, column: tuple[int, int]) -> tuple[int, int]:
        """Target indices of the column still unknown and cheaper than the best so far."""
        first, last = self.lo[column] + 1, self.hi[column] - 1
        while self.best is not None and last >= first and self.key(*column, last) >= self.best:
            last -= 1
        return first, last

    def probes(self, width: int) -> list[tuple[int, int, int]]:
        """The next points: the middle of the open range of the ``width`` columns whose
        cheapest open point is cheapest."""
        ranges = [(column, *self.open_range(column)) for column in self.lo]
        ranges = sorted((self.key(*c, first), c, first, last) for c, first, last in ranges if first <= last)
        return [(*column, (first + last) // 2) for _, column, first, last in ranges[:width]]

    def record(self, point: tuple[int, int, int], p99_s: Any) -> None:
        d, p, t = point
        cluster = self.cluster(d, p, t)
        if isinstance(p99_s, bool) or not isinstance(p99_s, numbers.Real) or math.isnan(p99_s) or p99_s < 0:
            raise ConfigError(f"evaluate returned {p99_s!r} for {cluster}; return the p99 latency in seconds "
                              f"(inf for a cluster that cannot keep up)")
        meets = float(p99_s) <= self.slo_s
        key = self.key(d, p, t)
        evaluation = Evaluation(cluster, float(p99_s), key[0], meets)
        self.evaluations.append(evaluation)
        for (dd, pp) in self.lo:
            if meets and dd >= d and pp >= p:  # every larger cluster meets it too
                self.hi[dd, pp] = min(self.hi[dd, pp], t)
            if not meets and dd <= d and pp <= p:  # every smaller cluster misses it too
                self.lo[dd, pp] = max(self.lo[dd, pp], t)
        if meets and (self.best is None or key < self.best):
            self.best, self.found = key, evaluation


def plan(evaluate: Callable[[ClusterDict], float], *, draft: Any, prm: Any, target: Any, slo_s: float,
         costs: Mapping[str, float] | Scenario, draft_contexts_per_device: int | None = None,
         map: Callable[..., Iterable[Any]] | None = None, width: int = 1,
         contexts_per_draft: int | None = None) -> PlanResult:
    """The cheapest cluster whose p99 latency is at most ``slo_s`` seconds.

    ``evaluate(cluster)`` gives a cluster's p99 latency in seconds (inf when it cannot keep
    up); the cluster is a dict as the engine's cluster section (``draft_devices``,
    ``draft_contexts_per_device``, ``prm_devices``, ``target_devices``: the scenario's
    ``cluster.draft.devices``, ``cluster.draft.contexts_per_device``, ...), its draft
    contexts ``draft_contexts_per_device`` (default 1). ``draft``, ``prm``,
    ``target``: the device counts to try (ranges or lists). ``costs``: a cost per device of
    each role, or a Scenario for its devices' power (``device_costs``); a cluster costs the
    sum over its devices. ``map(evaluate, clusters)`` evaluates a round's clusters, at most
    ``width`` of them (default: the built-in map, one at a time). ``contexts_per_draft`` is
    the old name of ``draft_contexts_per_device`` (deprecated)."""
    grid = (_counts(draft, "draft"), _counts(prm, "prm"), _counts(target, "target"))
    check_grid_size(*(len(g) for g in grid))
    slo = real(slo_s, "slo_s", positive=True)
    per_device = _costs(costs)
    if contexts_per_draft is not None:  # the old name
        if draft_contexts_per_device is not None:
            raise ConfigError("contexts_per_draft: the old name of draft_contexts_per_device; give only that")
        warnings.warn("plan: contexts_per_draft is now named draft_contexts_per_device", DeprecationWarning,
                      stacklevel=2)
        draft_contexts_per_device = contexts_per_draft
    draft_contexts_per_device = 1 if draft_contexts_per_device is None else draft_contexts_per_device
    contexts = whole(draft_contexts_per_device, "draft_contexts_per_device", minimum=1)
    step = whole(width, "width", minimum=1)
    if not callable(evaluate):
        raise ConfigError(f"evaluate: expected a function of a cluster, got {type(evaluate).__name__}")
    mapper = builtins.map if map is None else map
    search = _Search(grid, per_device, slo, contexts)
    rounds = 0
    while points := search.probes(step):
        results = list(mapper(evaluate, [search.cluster(*point) for point in points]))
        if len(results) != len(points):
            raise ConfigError(f"map: returned {len(results)} results for {len(points)} clusters")
        rounds += 1
        for point, p99_s in zip(points, results):
            search.record(point, p99_s)
    best = search.found
    return PlanResult(cluster=None if best is None else dict(best.cluster), cost=None if best is None else best.cost,
                      p99_s=None if best is None else best.p99_s, slo_s=slo, costs=per_device,
                      candidates=math.prod(len(g) for g in grid), evaluations=tuple(search.evaluations),
                      rounds=rounds)

