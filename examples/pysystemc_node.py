"""The HeteroReason node of examples/heteroreason_node.cpp with its top written in Python,
in a pysystemc session on Python 3.14:

    python examples/pysystemc_node.py PREFIX [STEM [EXPECTED]]
      # PREFIX: the library built against pysystemc's SystemC (scripts/pysystemc_check.sh);
      # STEM: trace the KVMU's pointers to STEM.vcd; EXPECTED: compare the log with this file

`Node` is a pysystemc module (``sc_core.ScModule``) that instantiates the library's models
(a `HostDma` initiator bound to a `PcieLink` target per device, the U280
`FpgaDraftAccelerator` with its HBM and KVMU, the PRM and target `GpuProxy`s), with the
parameters of examples/node_params.hpp, and whose host thread, in Python, replays the same
hand-written problem as the C++ example: step 1 accepted; step 2 rejected, refined on the
target, synced into the U280 and kept; step 3 rejected and the host backtracks; step 2'
drafted again and accepted. Each blocking call (a DMA transfer, a prefill, a drafted step)
runs the C++ model, which waits on pysystemc's kernel. It prints the C++ example's log,
line for line (examples/heteroreason_node.expected, worked out by hand in
examples/README.md), and, given a STEM, traces the KVMU's pointers to STEM.vcd with
SystemC's own tracing, from signals the Python host drives. Given EXPECTED as well, it
compares its log with that file and the VCD's pointers with the log's at each logged
instant, and prints "identical" when both agree.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path

PROMPT_TOKENS = 48
STEP_TOKENS = 24
TOKEN_BYTES = 4     # a 32-bit token id
CONTROL_BYTES = 48  # a score or a verdict
# The C++ calls that wait on the kernel: the GIL is released around each, as pysystemc
# releases it around its own waits.
BLOCKING = {"HostDma": ("transfer",), "GpuProxy": ("prefill", "decode"),
            "FpgaDraftAccelerator": ("decode_step", "load_context", "prefill_local", "sync_token")}


def load(prefix: str):
    """pysystemc's kernel and cppyy, the library loaded into them, and the example's parameters."""
    import amal.eda.systemc  # noqa: F401 - loads pysystemc's SystemC and cppyy, once
    import cppyy

    ctypes.CDLL(os.path.join(prefix, "lib", "libheteroreason_models.so"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    cppyy.add_include_path(os.path.join(prefix, "include"))
    for header in ("host_dma.hpp", "gpu_proxy.hpp", "sim_time.hpp", "kvmu.hpp"):
        cppyy.include(f"heteroreason/{header}")
    cppyy.include(str(Path(__file__).resolve().parent / "node_params.hpp"))
    for cls, methods in BLOCKING.items():
        for method in methods:
            getattr(getattr(cppyy.gbl.cosim, cls), method).__release_gil__ = True
    return cppyy.gbl


def node_class(gbl, vcd: str | None):
    from amal.eda.systemc import sc_core

    cosim, example = gbl.cosim, gbl.example
    to_device, to_host = cosim.LinkDirection.host_to_device, cosim.LinkDirection.device_to_host

    class Node(sc_core.ScModule):
        def __init__(self, name: str):
            super().__init__(sc_core.sc_module_name(name))
            names = sc_core.sc_module_name
            self.fpga_dma, self.prm_dma, self.target_dma = (cosim.HostDma(names(n)) for n in
                                                            ("fpga_dma", "prm_dma", "target_dma"))
            self.fpga_link, self.prm_link, self.target_link = (cosim.PcieLink(names(n), example.link()) for n in
                                                               ("fpga_link", "prm_link", "target_link"))
            self.u280 = cosim.FpgaDraftAccelerator(names("u280"), example.u280_decoder(), example.u280_hbm(),
                                                   example.draft_model(), example.power(40.0, 60.0, 50.0, 41.0))
            gpu_power = example.power(20.0, 400.0, 300.0, 60.0)
            self.prm = cosim.GpuProxy(names("prm"), example.gpu(), example.prm_model(), gpu_power)
            self.target = cosim.GpuProxy(names("target"), example.gpu(), example.target_model(), gpu_power)
            # The host's DMA engines are the initiators; each link is the target they bind to.
            self.fpga_dma.socket.bind(self.fpga_link.socket)
            self.prm_dma.socket.bind(self.prm_link.socket)
            self.target_dma.socket.bind(self.target_link.socket)
            # The KVMU's pointers as signals the host drives, traced by SystemC to a VCD.
            self.pointers = {p: sc_core.sc_signal["long long"](f"kvmu_{p}") for p in ("valid", "curr", "ahead")}
            self.trace = None
            self.lines: list[str] = []  # the log, as printed
            if vcd:
                self.trace = sc_core.sc_create_vcd_trace_file(vcd)
                for p, signal in self.pointers.items():
                    sc_core.sc_trace(self.trace, signal, f"kvmu.{p}")
            self.sc_thread("host", self.host)

        def log(self, what: str) -> None:
            kvmu = self.u280.kvmu()
            p = kvmu.pointers()
            for name, signal in self.pointers.items():
                signal.write(getattr(p, name))
            self.say(f"{cosim.now_ns():14.3f} ns  {what:<44} kvmu {str(cosim.kvmu_mode_name(kvmu.mode())):<14} "
                     f"valid {p.valid:3d} curr {p.curr:3d} ahead {p.ahead:3d}")

        def say(self, line: str) -> None:
            self.lines.append(line)
            print(line)

        def score(self, step: str, context: int) -> None:
            # The PRM scores the drafted tokens: to the host, on to the PRM, its prefill, the score back.
            self.fpga_dma.transfer(to_host, STEP_TOKENS * TOKEN_BYTES)
            self.prm_dma.transfer(to_device, STEP_TOKENS * TOKEN_BYTES)
            self.prm.prefill(STEP_TOKENS, context)
            self.prm_dma.transfer(to_host, CONTROL_BYTES)
            self.log(f"{step} scored by the PRM")

        def draft(self, step: str) -> None:
            context = self.u280.kvmu().pointers().ahead
            self.u280.decode_step(STEP_TOKENS)
            self.log(f"{step} drafted on the U280")
            self.score(step, context)

        def verdict(self, step: str, accept: bool) -> None:
            self.fpga_dma.transfer(to_device, CONTROL_BYTES)
            if accept:
                self.u280.kvmu().accept()
            else:
                self.u280.kvmu().rollback()
            self.log(f"{step} {'accepted' if accept else 'rejected'}")

        def host(self) -> None:
            u280, prm, target = self.u280, self.prm, self.target
            # The prompt: its ids to each device, a prefill on each; the U280 prefills it locally.
            self.target_dma.transfer(to_device, PROMPT_TOKENS * TOKEN_BYTES)
            target.prefill(PROMPT_TOKENS, 0)
            self.log("prompt prefilled on the target GPU")
            self.prm_dma.transfer(to_device, PROMPT_TOKENS * TOKEN_BYTES)
            prm.prefill(PROMPT_TOKENS, 0)
            self.log("prompt prefilled on the PRM GPU")
            self.fpga_dma.transfer(to_device, PROMPT_TOKENS * TOKEN_BYTES)
            u280.load_context(0)
            u280.prefill_local(PROMPT_TOKENS)
            u280.kvmu().accept()
            self.log("prompt prefilled on the U280")

            self.draft("step 1")
            self.verdict("step 1", True)

            self.draft("step 2")
            self.verdict("step 2", False)
            # The target catches up on step 1, decodes its own step 2 and sends it back; the
            # U280 writes it into its KV cache pass by pass (shadow sync).
            self.target_dma.transfer(to_device, STEP_TOKENS * TOKEN_BYTES)
            target.prefill(STEP_TOKENS, PROMPT_TOKENS)
            target.decode(STEP_TOKENS, PROMPT_TOKENS + STEP_TOKENS)
            self.target_dma.transfer(to_host, STEP_TOKENS * TOKEN_BYTES)
            self.log("step 2 refined on the target GPU")
            self.fpga_dma.transfer(to_device, STEP_TOKENS * TOKEN_BYTES)
            for _ in range(STEP_TOKENS):
                u280.sync_token()
            self.log("step 2 refinement synced into the U280")
            self.prm_dma.transfer(to_device, STEP_TOKENS * TOKEN_BYTES)
            prm.prefill(STEP_TOKENS, PROMPT_TOKENS + STEP_TOKENS)
            self.prm_dma.transfer(to_host, CONTROL_BYTES)
            self.log("step 2 refinement scored by the PRM")
            self.verdict("step 2 refinement", True)

            self.draft("step 3")
            self.fpga_dma.transfer(to_device, CONTROL_BYTES)
            u280.kvmu().initialize(PROMPT_TOKENS + STEP_TOKENS)
            self.log("step 3 rejected: backtrack to end of step 1")

            self.draft("step 2'")
            self.verdict("step 2'", True)

            self.say(f"tokens: drafted {u280.tokens_drafted()}, synced {u280.tokens_synced()}, prefilled on the U280 "
                  f"{u280.tokens_prefilled()}, target decoded {target.tokens_decoded()}")
            self.say(f"energy: u280 {u280.power().energy_j():.6f} J, prm {prm.power().energy_j():.6f} J, "
                  f"target {target.power().energy_j():.6f} J")
            links = [(self.fpga_link, "u280"), (self.prm_link, "prm"), (self.target_link, "target")]
            self.say("pcie bytes: " + ", ".join(f"{name} {link.bytes(to_device)} down {link.bytes(to_host)} up"
                                             for link, name in links))
            # One resolution step more, so that the trace holds the last instant's values.
            sc_core.wait(sc_core.sc_get_time_resolution())

    return Node


def vcd_values(path: str) -> dict[str, list[tuple[int, int]]]:
    """Each traced signal's (time in ps, value) changes in a VCD file."""
    names, changes, now = {}, {}, 0
    for line in Path(path).read_text().splitlines():
        if line.startswith("$var"):
            _, _, _, code, name, *_ = line.split()
            names[code] = name
            changes[name] = []
        elif line.startswith("#"):
            now = int(line[1:])
        elif line.startswith("b") and " " in line:
            bits, code = line[1:].split()
            changes[names[code]].append((now, int(bits, 2)))
    return changes


def agrees(lines: list[str], expected: str, vcd: str) -> bool:
    """The log is the expected one, and at each logged instant the VCD's pointers are the log's."""
    same = lines == Path(expected).read_text().splitlines()
    changes = vcd_values(vcd)
    for line in lines:
        logged = re.match(r"\s*([\d.]+) ns .* valid +(\d+) curr +(\d+) ahead +(\d+)$", line)
        if not logged:
            continue
        at_ps = round(float(logged[1]) * 1000)
        for name, value in zip(("valid", "curr", "ahead"), logged.groups()[1:]):
            seen = [v for t, v in changes[name] if t <= at_ps]
            same = same and bool(seen) and seen[-1] == int(value)
    return same


def main(prefix: str, stem: str | None = None, expected: str | None = None) -> int:
    gbl = load(prefix)
    from amal.eda.systemc import sc_core

    node = node_class(gbl, stem)("node")
    sc_core.sc_start()
    if node.trace is not None:
        sc_core.sc_close_vcd_trace_file(node.trace)
    sys.stdout.flush()
    if expected is None:
        return 0
    same = agrees(node.lines, expected, f"{stem}.vcd")
    print("identical" if same else "different", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3, 4):
        sys.exit("usage: python examples/pysystemc_node.py PREFIX [STEM [EXPECTED]]")
    sys.exit(main(*sys.argv[1:]))
