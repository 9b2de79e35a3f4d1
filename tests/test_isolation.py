import os
import signal
import threading
import time

import pytest

from cosim import SimulationError, WorkerCrashed, standalone
from cosim._isolation import native, run_isolated


def test_two_simulations_in_one_process_both_succeed():
    first = standalone.transfer("pcie_gen3_x16", 4096)
    second = standalone.transfer("pcie_gen4_x16", 4096)
    assert first.time_ns > second.time_ns > 0
    third = standalone.fpga_decode("u280", tokens=2)
    assert third.tokens_drafted == 2


@pytest.mark.coroutine_unwind
def test_a_second_elaboration_in_one_process_is_a_clear_error():
    def twice():
        n = native()
        n.kernel_floor(10, 1.0)
        return n.kernel_floor(10, 1.0)

    with pytest.raises(SimulationError, match="already elaborated a SystemC design"):
        run_isolated(twice)


def test_a_worker_killed_by_a_signal_is_reported():
    with pytest.raises(WorkerCrashed, match="SIGKILL"):
        run_isolated(lambda: os.kill(os.getpid(), signal.SIGKILL))


@pytest.mark.coroutine_unwind
def test_ctrl_c_in_the_worker_stops_a_long_simulation():
    # A simulation of about a minute of wall time (more on a busy machine); SIGINT to the
    # worker must end it in well under that: half a second and its unwinding, bounded at 30 s.
    def long_run():
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            return native().kernel_floor(2_000_000_000, 1.0)
        finally:
            timer.cancel()

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_isolated(long_run)
    assert time.monotonic() - start < 30


def test_ctrl_c_in_the_parent_kills_the_worker():
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            standalone.kernel_floor(2_000_000_000, 1.0)
    finally:
        timer.cancel()  # never let a late signal reach another test
    assert time.monotonic() - start < 30
