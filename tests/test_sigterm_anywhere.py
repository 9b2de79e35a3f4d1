"""A SIGTERM ends a command with status 143 and one line wherever it lands, also inside a
finaliser, where Python cannot raise (it printed the exception there, lost it, and the
command went on to exit 0)."""

import signal

from conftest import run_cli

# A policy module whose import frees an object whose finaliser is running when the
# SIGTERM is handled: the signal arrives inside __del__, and Python runs the handler
# there at the loop's next instruction.
POLICY = '''
import os
import signal

from cosim.live import TracePolicy


class _Freed:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass


_Freed()


class Replay(TracePolicy):
    pass
'''


def test_sigterm_inside_a_finaliser_ends_the_command_with_143(tmp_path):
    (tmp_path / "freed_policy.py").write_text(POLICY)
    proc = run_cli("run", "heteroreason-u280-200", "--problems", "3", "--quiet", "--out", tmp_path / "run",
                   "--policy", "freed_policy.py:Replay", cwd=tmp_path, timeout=600)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr.strip().splitlines() == ["cosim: terminated"], proc.stderr
    assert not (tmp_path / "run").exists()  # stopped before anything was written
