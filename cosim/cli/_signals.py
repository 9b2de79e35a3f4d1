"""SIGTERM for the command line. A job manager stopping a command ends it as Ctrl-C does:
the signal raises Terminated, which unwinds the command (staged outputs removed, workers
stopped), and the command exits with the signal's conventional status after one line,
wherever the signal lands."""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any, Callable

# What a shell reports for a command a SIGTERM ended: 128 + the signal's number.
TERMINATED_STATUS = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM (a job manager stopping the command): unwinds like Ctrl-C, so staged
    outputs are removed and workers are stopped before the command exits."""


class _Again:
    """Raises a lost Terminated again. Python cannot raise from a finaliser or a weakref
    callback, so a SIGTERM handled in one (as objects are freed, at any moment) is printed
    there and lost, and the command would go on. The unraisable-exception hook hands it
    here, and a thread of its own sends the signal to the main thread again: it lands once
    the hook has returned, and, sent to the main thread, interrupts a wait there too."""

    def __init__(self) -> None:
        self.main = threading.main_thread().ident
        self.wanted = threading.Event()
        self.lock = threading.Lock()
        self.active = True
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._send, name="cosim-sigterm", daemon=True)
            self.thread.start()

    def _send(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()
            with self.lock:  # never once the command's handler is gone: the signal would kill it
                if not self.active:
                    return
                signal.pthread_kill(self.main, signal.SIGTERM)

    def stop(self) -> None:
        with self.lock:
            self.active = False
        self.wanted.set()

    def hook(self, previous: Callable[[Any], None]) -> Callable[[Any], None]:
        """An unraisable-exception hook that hands a lost Terminated on, quietly."""

        def hook(unraisable: Any) -> None:
            try:
                if isinstance(unraisable.exc_value, Terminated):
                    self.wanted.set()
                    return
            except Terminated:  # the signal sent again, landing in this hook itself: once more
                self.wanted.set()
                return
            previous(unraisable)

        return hook


def run_terminable(body: Callable[[], int]) -> int:
    """``body()``'s exit status, or, once a SIGTERM came while it ran, TERMINATED_STATUS
    after the line "cosim: terminated". The previous handler is back on return."""
    received: list[int] = []
    again = _Again()

    def on_sigterm(signum: int, frame: object) -> None:
        received.append(signum)
        again.start()
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    hook = sys.unraisablehook
    sys.unraisablehook = again.hook(hook)
    code = 0
    try:
        code = body()
    except Terminated:
        pass
    finally:
        while True:
            try:
                again.stop()
                # Setting a handler first runs the handler of a signal that has come but not yet
                # been handled: a SIGTERM in this very instant raises here and is kept too.
                signal.signal(signal.SIGTERM, previous)
                break
            except Terminated:
                continue
        sys.unraisablehook = hook
    if received:
        print("cosim: terminated", file=sys.stderr)
        return TERMINATED_STATUS
    return code
