"""Runs each simulation in its own forked process.

The SystemC kernel can elaborate and run only once per process, so every call
into cosim._native that simulates happens in a fresh child: the parent never
elaborates, and any number of simulations can run from one Python process.
Errors come back as the same exception class with the same message; a child
that dies (a signal, a crash) becomes WorkerCrashed; Ctrl-C in the parent stops
the child.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import signal
import threading
import traceback
from typing import Any, Callable, Iterator

from . import errors

_PR_SET_PDEATHSIG = 1  # linux/prctl.h

# The SystemC banner would otherwise be printed by every worker.
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

_PASSED_THROUGH = (
    errors.ConfigError,
    errors.CapacityError,
    errors.KvmuError,
    errors.SimulationError,
    errors.OutputError,
    errors.PolicyError,
    KeyboardInterrupt,
)


def _die_with_parent(parent: int) -> None:
    """Has the kernel kill this worker when its parent dies, however it dies (Linux
    prctl PR_SET_PDEATHSIG); a parent gone before that took effect ends it now."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pipe's end still stops a waiting worker
        pass
    if os.getppid() != parent:
        os._exit(1)


# Set while a simulation runs: where report_progress() sends its news.
_report: Callable[[Any], None] | None = None


def report_progress(value: Any) -> None:
    """From inside a simulation: tells whoever waits on it how far it got (the worker
    sends it up its pipe; run_isolated hands it to its ``on_progress``)."""
    if _report is not None:
        _report(value)


def _child(conn: Any, parent: int, func: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    global _report
    _die_with_parent(parent)
    _report = lambda value: conn.send(("progress", value))  # noqa: E731
    # The parent held SIGINT back across the fork; a Ctrl-C pending now arrives here.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        result = func(*args, **kwargs)
        conn.send(("ok", result))
    except _PASSED_THROUGH as exc:
        conn.send(("error", type(exc).__name__, str(exc), None))
    except BaseException as exc:  # noqa: BLE001 - everything must reach the parent
        conn.send(("error", "SimulationError", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        conn.close()


def _rebuild(name: str, message: str, detail: str | None) -> BaseException:
    if name == "KeyboardInterrupt":
        return KeyboardInterrupt(message)
    cls = getattr(errors, name, errors.SimulationError)
    exc = cls(message)
    if detail:
        exc.__notes__ = [f"in the simulation worker:\n{detail}"]
    return exc


# Process.start() reaps every finished child of this process (multiprocessing's
# _cleanup); racing another thread's join() for the same child, it can leave that
# join without the exit status (waitpid: ECHILD, exit code None). Starts and joins
# take turns; a join happens only once the child has answered or died, so it is short.
_REAPING = threading.Lock()
_LIVE: set[Any] = set()  # workers started and not yet joined, for stop_workers()


def stop_workers() -> None:
    """Kills every worker this process has running (an interrupted sweep: the threads
    waiting on them then see them die and return at once)."""
    with _REAPING:
        for child in list(_LIVE):
            if child.is_alive():
                child.kill()


_in_this_process = False


@contextlib.contextmanager
def in_this_process() -> Iterator[None]:
    """Simulations run in this process itself, not in a forked child: for a process that
    exists to run one simulation and then ends (a Ray task with max_calls=1), where a
    fork under the framework's threads would be unsafe. A second simulation in such a
    process is refused by the native module."""
    global _in_this_process
    _in_this_process = True
    try:
        yield
    finally:
        _in_this_process = False


def run_isolated(func: Callable[..., Any], *args: Any, on_progress: Callable[[Any], None] | None = None,
                 **kwargs: Any) -> Any:
    """Calls ``func(*args, **kwargs)`` in a forked child and returns its result;
    ``on_progress`` gets what the child passes to report_progress, as it comes."""
    global _report
    if _in_this_process:
        _report = on_progress
        try:
            return func(*args, **kwargs)
        finally:
            _report = None
    ctx = mp.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(sender, os.getpid(), func, args, kwargs), daemon=True)
    # A Ctrl-C landing inside fork's own hooks would be swallowed ("Exception ignored"):
    # hold it back until the fork is done, then it is raised here or in the child.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _REAPING:
            child.start()
            _LIVE.add(child)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    sender.close()
    try:
        try:
            message = receiver.recv()
            while message[0] == "progress":
                if on_progress is not None:
                    on_progress(message[1])
                message = receiver.recv()
        except EOFError:
            with _REAPING:
                child.join()
                code = child.exitcode
            how = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
            raise errors.WorkerCrashed(
                f"the simulation worker (pid {child.pid}) died without answering ({how})") from None
        with _REAPING:
            child.join()
    except BaseException:
        with _REAPING:
            if child.is_alive():
                child.kill()
                child.join()
        raise
    finally:
        receiver.close()
        with _REAPING:
            _LIVE.discard(child)
    if message[0] == "ok":
        return message[1]
    raise _rebuild(*message[1:])


def native() -> Any:
    """The native module. Its simulating calls run in a worker (run_isolated); its pure
    timing functions (fpga_timing, gpu_timing, param_declarations) run anywhere."""
    from . import _native

    return _native
