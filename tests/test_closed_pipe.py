"""A reader that goes away (`cosim ... | head`) ends the command quietly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def test_a_closed_pipe_ends_the_command_without_a_traceback():
    # The read end is closed before the command starts, so its first write fails: no race
    # with how much a pipe buffers.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cosim.cli", "builtins"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=600,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr == ""
    assert done.returncode == 128 + signal.SIGPIPE
