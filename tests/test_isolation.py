import os
import signal
import threading
import time

import pytest

from cosim import SimulationError, WorkerCrashed, standalone
from cosim.engine._isolation import run_isolated
from cosim._extension import native
from ctrl_c import ctrl_c_raises
from test_worker_lifetime import EVENT_BOUND_S, alive, children


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
def test_ctrl_c_in_the_worker_stops_a_long_simulation(tmp_path):
    # A simulation of about a minute of wall time; the worker sends itself SIGINT half a second
    # in. Only a worker that stops comes back with KeyboardInterrupt (the parent gets no
    # signal, so the class is the worker's, kept), and none is left behind.
    pid_file = tmp_path / "worker.pid"

    def long_run():
        pid_file.write_text(str(os.getpid()))
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            return native().kernel_floor(2_000_000_000, 1.0)
        finally:
            timer.cancel()

    with ctrl_c_raises(), pytest.raises(KeyboardInterrupt):
        run_isolated(long_run)
    worker = int(pid_file.read_text())
    assert worker != os.getpid() and not alive(worker)


def test_ctrl_c_in_the_parent_kills_the_worker():
    # Ctrl-C once the worker of a simulation of about a minute is running: the call ends with
    # KeyboardInterrupt, and the worker was killed and reaped before it returned.
    workers = []

    def ctrl_c_once_the_worker_runs():
        deadline = time.monotonic() + EVENT_BOUND_S
        while not workers and time.monotonic() < deadline:
            workers.extend(children(os.getpid()))
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    with ctrl_c_raises():
        sender = threading.Thread(target=ctrl_c_once_the_worker_runs)
        sender.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                standalone.kernel_floor(2_000_000_000, 1.0)
        finally:
            sender.join()  # its one signal has landed: none reaches another test
    assert workers, "no worker started"
    assert not any(alive(pid) for pid in workers)
