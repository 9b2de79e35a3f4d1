"""Drives the KVMU's pins one clock cycle at a time and checks every output against the
Python reference (kvmu_reference.py) after every rising edge."""

from __future__ import annotations

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from kvmu_reference import COMMANDS, NOP, KvmuReference

PTR_W = int(os.environ.get("KVMU_PTR_W", "32"))
MAX_DEPTH = int(os.environ.get("KVMU_MAX_DEPTH", "2"))
CLOCK_NS = 10


class Mismatch(AssertionError):
    pass


class Bench:
    """The DUT, its clock, and the reference it must agree with every cycle."""

    def __init__(self, dut, capacity: int):
        self.dut = dut
        self.ref = KvmuReference(capacity=capacity, max_depth=MAX_DEPTH)
        self.cycles = 0
        self.seen_transitions: set[tuple[int, int]] = set()
        self.seen_errors: set[int] = set()

    async def start(self) -> None:
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        self.dut.capacity.value = self.ref.capacity
        await self.reset()

    async def reset(self) -> None:
        """Holds rst_n low over one rising edge."""
        self._drive(NOP, 0, False, False)
        self.ref.reset()
        self.dut.rst_n.value = 0
        await RisingEdge(self.dut.clk)
        await self.check()
        await FallingEdge(self.dut.clk)
        self.dut.rst_n.value = 1

    def _drive(self, cmd: int, arg: int, tok_we: bool, tok_pcie: bool) -> None:
        self.dut.cmd.value = cmd
        self.dut.cmd_arg.value = arg
        self.dut.tok_we.value = int(tok_we)
        self.dut.tok_pcie.value = int(tok_pcie)

    async def cycle(self, cmd: int = NOP, arg: int = 0, tok_we: bool = False, tok_pcie: bool = False) -> dict:
        """Applies one operation at the next rising edge; returns the outputs after it."""
        before = self.ref.mode
        self._drive(cmd, arg, tok_we, tok_pcie)
        self.ref.cycle(cmd, arg, tok_we, tok_pcie)
        await RisingEdge(self.dut.clk)
        self.cycles += 1
        outputs = await self.check()
        await FallingEdge(self.dut.clk)
        self._drive(NOP, 0, False, False)
        self.seen_transitions.add((before, self.ref.mode))
        self.seen_errors.add(self.ref.err_code)
        return outputs

    async def op(self, name: str, arg: int = 0) -> dict:
        """One named operation: a command, or `sample`/`pcie` (a token written from that source)."""
        if name == "sample":
            return await self.cycle(tok_we=True, tok_pcie=False)
        if name == "pcie":
            return await self.cycle(tok_we=True, tok_pcie=True)
        return await self.cycle(COMMANDS[name], arg)

    def read(self) -> dict:
        names = ("valid_ptr", "curr_ptr", "ahead_ptr", "mode", "mux_pcie", "fresh", "following", "drafting",
                 "depth", "n_marks", "mark", "steps_ahead", "err", "err_code")
        out = {n: int(getattr(self.dut, n).value) for n in names}
        flat = int(self.dut.marks.value)
        mask = (1 << PTR_W) - 1
        out["marks"] = [(flat >> (i * PTR_W)) & mask for i in range(out["n_marks"])]
        return out

    async def check(self) -> dict:
        await ReadOnly()
        got = self.read()
        want = self.ref.outputs()
        want["marks"] = list(self.ref.marks)
        differ = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
        if differ:
            text = ", ".join(f"{k}: rtl {g} reference {w}" for k, (g, w) in sorted(differ.items()))
            raise Mismatch(f"cycle {self.cycles}: {text}")
        return got
