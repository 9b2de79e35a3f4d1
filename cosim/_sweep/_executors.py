"""Where a sweep's points run: local worker processes, or Ray tasks."""

from __future__ import annotations

import ipaddress
import os
import re
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable

from .._isolation import in_this_process, native, stop_workers
from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import FileProblems, Trace
from ..trace._arrivals import ArrivalProblems
from ._point import run_point

EXECUTORS = ("local", "ray")
# `ray start --head` prints the address to join: the head's host and its GCS port.
RAY_ADDRESS = re.compile(r"^[A-Za-z0-9.\-]+:\d{1,5}$")


def check_ray_address(address: str | None, executor: str) -> None:
    """Refuses an address the Ray executor cannot use, or one given to the local executor."""
    if address is None:
        return
    if executor != "ray":
        raise ConfigError("--ray-address: applies to --executor ray only")
    if not RAY_ADDRESS.match(address):
        raise ConfigError(f"--ray-address: {address!r} is not HOST:PORT (the address `ray start --head` prints, "
                          f"e.g. 10.0.0.5:6379)")


# What runs one point: run_point(scn, trace, values) -> its row, never raising for a bad point.
# Sensitivity analysis (cosim.uncertainty) passes its own, with its model in place of scn.
Runner = Callable[[Any, Trace, dict[str, Any]], dict[str, Any]]


def local_results(scn: Scenario, trace: Trace, points: list[dict[str, Any]], workers: int,
                  runner: Runner = run_point) -> Iterable[dict]:
    if workers == 1:
        for values in points:
            yield runner(scn, trace, values)
        return
    # Each point already simulates in a forked process of its own; threads here only wait on
    # those processes, so a killed one fails its point alone. The extension is loaded before
    # any thread starts, so no child ever has to import it.
    native()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cosim-sweep") as pool:
        pending: dict[Future, dict[str, Any]] = {pool.submit(runner, scn, trace, v): v for v in points}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    values = pending.pop(future)
                    try:
                        yield future.result()
                    except Exception as exc:  # noqa: BLE001 - report the point, go on
                        yield {**values, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
        except BaseException:
            for future in pending:
                future.cancel()
            stop_workers()  # the points under way end now; the pool's threads return
            raise


def _ray_point(scn: Scenario, trace: Trace, values: dict[str, Any], runner: Runner = run_point) -> dict[str, Any]:
    # A Ray worker process runs this one task and ends (max_calls=1), so the simulation runs
    # in it directly: SystemC elaborates once in that process, and nothing forks under
    # Ray's threads.
    with in_this_process():
        return runner(scn, trace, values)


# Ray binds its servers to its node's address, and takes the machine's outward address for
# it, whatever ray.init's _node_ip_address says, unless clustering is off: then the node is
# the loopback. The switch is this variable, read when ray is imported (by this process and
# by every process Ray starts), and the constant it sets.
_CLUSTERING = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _init_on_loopback(ray: Any, workers: int) -> None:
    """Starts a Ray instance for this command alone, every server of it listening on the
    loopback only: a Ray cluster runs any job sent to its ports, without authentication
    unless it is set up (docs/serving.md). Refused when the node would not be the loopback."""
    constants = ray._private.ray_constants
    given, clustering = os.environ.get(_CLUSTERING), getattr(constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[_CLUSTERING] = "0"
    if clustering is not None:  # a Ray without it is refused below if its node is not the loopback
        constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    finally:
        if clustering is not None:
            constants.ENABLE_RAY_CLUSTER = clustering
        if given is None:
            os.environ.pop(_CLUSTERING, None)
        else:
            os.environ[_CLUSTERING] = given
    node = ray.util.get_node_ip_address()
    if not ipaddress.ip_address(node).is_loopback:
        ray.shutdown()
        raise ConfigError(f"--executor ray: the local Ray instance would listen on {node}, beyond the loopback; "
                          f"start a Ray cluster bound as docs/serving.md shows and give --ray-address")


def ray_results(scn: Scenario, trace: Trace, points: list[dict[str, Any]], workers: int,
                address: str | None, runner: Runner = run_point) -> Iterable[dict]:
    try:
        import ray  # lazy: ray, the optional [ray] extra
    except ImportError:
        raise ConfigError("the ray executor needs Ray: pip install 'heteroreason-cosim[ray]'") from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            _init_on_loopback(ray, workers)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_calls=1)(_ray_point)
        # Nodes of a cluster may not see this machine's files: a trace read from a file
        # travels whole, with any arrival times attached to it (a generated one travels as its
        # recipe and is drawn there).
        source = trace.problems.base if isinstance(trace.problems, ArrivalProblems) else trace.problems
        if isinstance(source, FileProblems):
            trace = Trace(trace.header, list(trace.problems))
        scn_ref, trace_ref = ray.put(scn), ray.put(trace)
        pending = {remote.remote(scn_ref, trace_ref, v, runner): v for v in points}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                values = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a lost task: report the point, go on
                    yield {**values, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        if started:
            ray.shutdown()
