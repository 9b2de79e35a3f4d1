"""Where a sweep's points run: local worker processes, or Ray tasks."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import socket
import sys
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator

from ..engine._isolation import in_this_process, stop_workers
from .._extension import native
from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import FileProblems, Trace
from ..trace._arrivals import ArrivalProblems
from ._point import run_point

EXECUTORS = ("local", "ray")
# `ray start --head` prints the address to join: the head's host and its GCS port.
RAY_ADDRESS = re.compile(r"^[A-Za-z0-9.\-]+:\d{1,5}$")
# How long a cluster's head may take to accept a connection: a reachable head answers in
# milliseconds, so this only bounds a firewall that drops the packets.
_PROBE_S = 10.0


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


def _join(ray: Any, address: str) -> None:
    """Joins the cluster at address, or says in one line why it cannot."""
    # Ray retries an address where nothing listens for minutes; a plain connection says so at once.
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=_PROBE_S).close()
    except OSError as exc:
        raise ConfigError(f"--ray-address: no Ray cluster answers at {address} ({exc.strerror or exc}); "
                          f"start one with `ray start --head` (docs/serving.md)") from None
    try:
        with _core_log_held():
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    except Exception as exc:  # noqa: BLE001 - Ray raises several kinds; each becomes one line
        causes, seen = [], exc
        while seen is not None and len(causes) < 8:
            causes.append(f"{type(seen).__name__}: {seen}")
            seen = seen.__cause__ or seen.__context__
        if any("AuthenticationError" in c or "InvalidAuthToken" in c for c in causes):
            raise ConfigError(f"--ray-address: the Ray cluster at {address} asks for its token: set RAY_AUTH_MODE=token "
                              f"and give the head's token (its ~/.ray/auth_token, or RAY_AUTH_TOKEN); "
                              f"docs/serving.md shows the set-up") from None
        raise ConfigError(f"--ray-address: the Ray cluster at {address} could not be joined "
                          f"({causes[0].splitlines()[0]})") from None


@contextlib.contextmanager
def _core_log_held() -> Iterator[None]:
    """Ray's core writes each retry of a refused connection to file descriptor 2, a line a
    second for twenty seconds; they go to a scratch file, shown only if joining succeeds."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        joined = False
        try:
            yield
            joined = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if joined:
                held.seek(0)
                sys.stderr.write(held.read().decode(errors="replace"))


def ray_results(scn: Scenario, trace: Trace, points: list[dict[str, Any]], workers: int,
                address: str | None, runner: Runner = run_point) -> Iterable[dict]:
    try:
        import ray  # lazy: ray, the optional [ray] extra
    except ImportError:
        raise ConfigError("the ray executor needs Ray: pip install 'heteroreason-cosim[ray]'") from None
    started = False
    if not ray.is_initialized():
        if address:
            _join(ray, address)
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
