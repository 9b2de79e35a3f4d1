"""A worker that crashes says where: WorkerCrashed carries its native and Python stacks."""

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

from cosim import errors
from cosim.engine._isolation import run_isolated


def _read_address_zero():
    # string_at(0) makes libc's strlen read address 0, called by ctypes through libffi.
    return ctypes.string_at(0)


def _crash_here():
    return _read_address_zero()


def _abort():
    os.abort()


def test_a_segfault_names_the_signal_the_address_and_both_stacks():
    with pytest.raises(errors.WorkerCrashed) as caught:
        run_isolated(_crash_here)
    assert str(caught.value).endswith("died without answering (signal SIGSEGV)")
    (note,) = caught.value.__notes__
    assert note.startswith("in the simulation worker:\nnative crash: SIGSEGV at address 0x0\nbacktrace:\n")
    native, _, python = note.partition("Fatal Python error: Segmentation fault")
    # The native frames run from the fault through ctypes' call of libffi.
    assert "_ctypes" in native and "libffi" in native
    # The Python stack names the functions that led there, innermost first.
    assert python.index("_read_address_zero") < python.index("_crash_here")


def test_an_abort_names_the_signal_without_an_address():
    with pytest.raises(errors.WorkerCrashed) as caught:
        run_isolated(_abort)
    assert str(caught.value).endswith("(signal SIGABRT)")
    (note,) = caught.value.__notes__
    assert note.startswith("in the simulation worker:\nnative crash: SIGABRT\nbacktrace:\n")
    assert "_abort" in note.partition("Fatal Python error: Aborted")[2]


def test_the_python_stack_comes_whatever_handles_a_segfault_in_the_parent(tmp_path):
    # A library loaded after faulthandler may have put its own handler (here the default)
    # in place of faulthandler's; the worker still reports both stacks. In a process of its
    # own, so that this one's handlers stay as they are.
    script = textwrap.dedent("""\
        import ctypes, faulthandler, signal
        from cosim import errors
        from cosim.engine._isolation import run_isolated

        def crash_here():
            return ctypes.string_at(0)

        faulthandler.enable()
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)
        try:
            run_isolated(crash_here)
        except errors.WorkerCrashed as e:
            print(e.__notes__[0].partition("Fatal Python error: Segmentation fault")[2])
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "crash_here" in done.stdout


def test_a_worker_that_ends_without_crashing_leaves_no_report():
    with pytest.raises(errors.WorkerCrashed) as caught:
        run_isolated(os._exit, 3)
    assert str(caught.value).endswith("(exit code 3)")
    assert not getattr(caught.value, "__notes__", None)
