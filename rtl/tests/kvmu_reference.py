"""A cycle-level Python reference of the KVMU's register semantics (docs/system.md), used
by the cocotb testbench to predict the RTL's outputs after every clock edge.

Written from the documented rules, not from the Verilog: three pointers valid <= curr <=
ahead, four modes, the input MUX, the marks of finished step-ahead steps, and an
illegal operation that changes nothing and reports why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Pin encodings (rtl/kvmu.v documents them).
NOP, INIT, SPEC, END_STEP, ACCEPT, ROLLBACK, CLEAR, DEPTH = range(8)
COMMANDS = {"nop": NOP, "init": INIT, "spec": SPEC, "end_step": END_STEP, "accept": ACCEPT,
            "rollback": ROLLBACK, "clear": CLEAR, "depth": DEPTH}
INITIALIZATION, SPECULATION, ACCEPTED, ROLLED_BACK = range(4)  # the mode register
MODE_NAMES = ("initialization", "speculation", "accept", "rollback")

# Why an operation was refused (err_code).
(OK, MUX_PCIE, MUX_SAMPLER, REVERT, FULL, NOT_INIT, DEPTH_FULL, NO_DRAFT, ACCEPT_NONE,
 DRAFTING, ROLLBACK_NONE, COLLISION, BAD_DEPTH) = range(13)


@dataclass
class KvmuReference:
    capacity: int
    max_depth: int = 2
    valid: int = 0
    curr: int = 0
    ahead: int = 0
    mode: int = INITIALIZATION
    fresh: bool = True
    following: bool = False
    drafting: bool = False
    depth: int = 1
    marks: list[int] = field(default_factory=list)
    err_code: int = OK

    @property
    def mux_pcie(self) -> bool:
        return self.mode in (INITIALIZATION, ROLLED_BACK)

    @property
    def steps_ahead(self) -> int:
        return len(self.marks) + (1 if self.drafting and not self.following else 0)

    @property
    def mark(self) -> int:
        return self.marks[0] if self.marks else self.curr

    def outputs(self) -> dict[str, int]:
        """What the RTL's output pins should read now."""
        return {"valid_ptr": self.valid, "curr_ptr": self.curr, "ahead_ptr": self.ahead, "mode": self.mode,
                "mux_pcie": int(self.mux_pcie), "fresh": int(self.fresh), "following": int(self.following),
                "drafting": int(self.drafting), "depth": self.depth, "n_marks": len(self.marks),
                "mark": self.mark, "steps_ahead": self.steps_ahead, "err": int(self.err_code != OK),
                "err_code": self.err_code}

    def reset(self) -> None:
        capacity, max_depth = self.capacity, self.max_depth
        self.__init__(capacity=capacity, max_depth=max_depth)

    def cycle(self, cmd: int = NOP, arg: int = 0, tok_we: bool = False, tok_pcie: bool = False) -> None:
        """One rising clock edge with these inputs."""
        self.err_code = OK
        if tok_we and cmd != NOP:
            self.err_code = COLLISION
        elif tok_we:
            self._token(tok_pcie)
        elif cmd != NOP:
            {INIT: lambda: self._init(arg), SPEC: self._speculation, END_STEP: self._end_step,
             ACCEPT: self._accept, ROLLBACK: self._rollback, CLEAR: self._clear,
             DEPTH: lambda: self._depth(arg)}[cmd]()

    # Each operation returns early with err_code set when it is illegal, touching nothing.
    def _refuse(self, why: int) -> None:
        self.err_code = why

    def _token(self, from_pcie: bool) -> None:
        if from_pcie:
            # A target token over PCIe: only in a PCIe mode with a context held.
            if not self.mux_pcie or self.fresh:
                return self._refuse(MUX_PCIE if self.mux_pcie else MUX_SAMPLER)
            if self.ahead + 1 > self.capacity:
                return self._refuse(FULL)
            self.ahead += 1
            self.curr += 1  # it extends the step under verification
            return None
        if self.mux_pcie:
            return self._refuse(MUX_PCIE)
        follow = self.following
        if not self.drafting:
            # A new step: under verification when nothing else is, else a step-ahead step.
            follow = self.curr == self.valid
            if not follow and len(self.marks) >= self.depth:
                return self._refuse(DEPTH_FULL)
        if self.ahead + 1 > self.capacity:
            return self._refuse(FULL)
        self.ahead += 1
        if follow:
            self.curr += 1
        self.following = follow
        self.drafting = True
        return None

    def _init(self, position: int) -> None:
        if not self.fresh and position > self.valid:
            return self._refuse(REVERT)
        if position > self.capacity:
            return self._refuse(FULL)
        self.valid = self.curr = self.ahead = position
        self.mode = INITIALIZATION
        self.fresh = self.following = self.drafting = False
        self.marks = []
        return None

    def _speculation(self) -> None:
        if self.fresh:
            return self._refuse(NOT_INIT)
        self.mode = SPECULATION
        return None

    def _end_step(self) -> None:
        if self.mux_pcie:
            return self._refuse(MUX_PCIE)
        if not self.drafting:
            return self._refuse(NO_DRAFT)
        if not self.following:
            self.marks.append(self.ahead)
        self.following = self.drafting = False
        return None

    def _accept(self) -> None:
        if self.curr == self.valid:
            return self._refuse(ACCEPT_NONE)
        if self.following:
            return self._refuse(DRAFTING)
        self.valid = self.curr
        if self.marks:
            self.curr = self.marks.pop(0)
        else:
            self.curr = self.ahead
            self.following = self.drafting
        self.mode = ACCEPTED
        return None

    def _rollback(self) -> None:
        if self.mux_pcie:
            return self._refuse(MUX_PCIE)
        if self.curr == self.valid:
            return self._refuse(ROLLBACK_NONE)
        if self.following:
            return self._refuse(DRAFTING)
        self.curr = self.ahead = self.valid
        self.following = self.drafting = False
        self.marks = []
        self.mode = ROLLED_BACK
        return None

    def _clear(self) -> None:
        self.valid = self.curr = self.ahead = 0
        self.mode = INITIALIZATION
        self.fresh = True
        self.following = self.drafting = False
        self.marks = []

    def _depth(self, depth: int) -> None:
        if depth > self.max_depth:
            return self._refuse(BAD_DEPTH)
        self.depth = depth
        return None
