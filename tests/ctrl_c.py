"""Ctrl-C in the tests, whatever the suite inherited. A shell without job control (a
script, `nohup pytest &`, many CI runners) starts background commands with SIGINT
ignored, and every process below inherits that: Python then installs no
KeyboardInterrupt handler, and a cosim command, as a background job should, goes on
ignoring SIGINT. A test of what Ctrl-C does gives the process it signals the disposition
a command typed at an interactive terminal has."""

import contextlib
import signal


def as_typed_at_a_terminal():
    """For subprocess's ``preexec_fn``: the command starts with SIGINT's default action, so
    Python turns a Ctrl-C into KeyboardInterrupt there."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def as_a_background_job():
    """For subprocess's ``preexec_fn``: the command starts with SIGINT ignored, as a shell
    without job control starts a background job."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def ctrl_c_raises():
    """In this process, SIGINT raises KeyboardInterrupt while the block runs, as in an
    interactive session, whatever it did before; the previous handler is back after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
