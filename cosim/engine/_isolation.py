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
import faulthandler
import multiprocessing as mp
import os
import signal
import tempfile
import threading
import traceback
from typing import Any, Callable, Iterator

from .. import errors
from .._extension import native

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# Held back from a fork until the worker is known (a stop then always finds and kills it).
_HELD = {signal.SIGINT, signal.SIGTERM}

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


# What a crash report may add to WorkerCrashed: a backtrace is a few kB.
_CRASH_REPORT_BYTES = 64 * 1024


def _child(conn: Any, parent: int, crash_fd: int, sigint_ignored: bool, func: Callable[..., Any], args: tuple,
           kwargs: dict) -> None:
    global _report
    _die_with_parent(parent)
    # A crash leaves the Python stack (faulthandler) and the native one (the native
    # module's handler, which runs first and hands on to faulthandler) for the parent.
    # Disabled first: enable() on an enabled faulthandler only changes its file, and its
    # handlers may no longer be the ones installed (a library loaded since can replace them).
    faulthandler.disable()
    faulthandler.enable(file=crash_fd)
    native().report_crashes_to(crash_fd)
    _report = lambda value: conn.send(("progress", value))  # noqa: E731
    # The fork happened while the parent held these signals back (_Held): a worker takes
    # Ctrl-C as a KeyboardInterrupt, and SIGTERM ends it at once, even inside the native
    # simulation (where a Python handler would wait for it to return), so whoever stops it
    # that way (multiprocessing at exit, a job manager) is obeyed promptly. A parent that
    # ignores Ctrl-C (a background job of a script: the shell ignores it there, so that
    # Ctrl-C at the terminal spares it) has workers that ignore it too.
    signal.signal(signal.SIGINT, signal.SIG_IGN if sigint_ignored else signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)  # one that came meanwhile arrives now
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


class _Held:
    """Ctrl-C and SIGTERM held back from now until ``release()``, then raised. Blocking
    them in this thread alone would not do: Python runs its handlers in the main thread
    whichever thread the kernel gave the signal to (a progress bar's monitor thread, say),
    so the main thread's handlers are replaced by ones that only note the signal. From
    another thread, where handlers cannot change, the main thread hears the signal and
    stops every worker (stop_workers)."""

    def __init__(self) -> None:
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)  # the child starts with them held
        self.caught: list[int] = []
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in _HELD:
                self.previous[signum] = signal.signal(signum, lambda number, frame: self.caught.append(number))

    def release(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self.previous = {}
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)  # one pending in the kernel arrives now
        for signum in dict.fromkeys(self.caught):
            self.caught = []
            signal.raise_signal(signum)  # its own handler runs now (Terminated, KeyboardInterrupt)


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
    with _crash_report_file() as crash_report:
        return _run_in_child(func, args, kwargs, on_progress, crash_report)


def _crash_report_file() -> Any:
    """Where a crashing worker leaves its backtrace: in memory where Linux allows
    (memfd), so a full or read-only temporary folder cannot stop a run."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("cosim-crash-report"), "w+b")
    return tempfile.TemporaryFile()


def _run_in_child(func: Callable[..., Any], args: tuple, kwargs: dict, on_progress: Callable[[Any], None] | None,
                  crash_report: Any) -> Any:
    ctx = mp.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # read before _Held replaces it
    child = ctx.Process(target=_child, args=(sender, os.getpid(), crash_report.fileno(), ignored, func, args,
                                             kwargs), daemon=True)
    # A Ctrl-C or SIGTERM landing inside fork's own hooks would be swallowed ("Exception
    # ignored") or raised before the worker is known, leaving it to run on: hold them back
    # until the fork is done and the worker is watched below, then raise them there.
    held = _Held()
    try:
        with _REAPING:
            child.start()
            _LIVE.add(child)
        sender.close()
    except BaseException:
        held.release()
        raise
    try:
        try:
            held.release()  # a signal held back is raised now, inside this try
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
            crashed = errors.WorkerCrashed(f"the simulation worker (pid {child.pid}) died without answering ({how})")
            crash_report.seek(0)
            report = crash_report.read(_CRASH_REPORT_BYTES).decode("utf-8", "replace")
            if report:
                crashed.__notes__ = [f"in the simulation worker:\n{report.rstrip()}"]
            raise crashed from None
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
        # The worker's pipes are closed by a finalizer of multiprocessing's, which swallows
        # a Ctrl-C landing inside it ("Exception ignored") and lets the run go on: it runs
        # now, with the signals held back, and a signal held is raised after it.
        held = _Held()
        try:
            with _REAPING:
                _LIVE.discard(child)
                if child.exitcode is not None:
                    child.close()
        finally:
            held.release()
    if message[0] == "ok":
        return message[1]
    raise _rebuild(*message[1:])
