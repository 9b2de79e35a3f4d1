"""The HeteroReason node of examples/heteroreason_node.cpp with its top written in Python,
in a pysystemc session on Python 3.14:

    python examples/pysystemc_node.py PREFIX [STEM [EXPECTED]]
      # PREFIX: the library built against pysystemc's SystemC (scripts/pysystemc_check.sh);
      # STEM: trace the KVMU's pointers to STEM.vcd; EXPECTED: compare the log with this file

`Node` is a pysystemc module (``sc_core.ScModule``) that instantiates the library's models
from a `SystemSpec` (the parameters of examples/node_params.hpp here, a scenario's in
examples/pysystemc_replay.py): a PCIe link per device (`PcieFabric`), the U280
`FpgaDraftAccelerator` with its HBM and KVMU, the PRM and target `GpuProxy`s and the draft
model on the target GPU. Its host is one of two:
- `python`: a host thread, in Python, that moves data with the `HostDma` initiator bound
  to each link's target socket and replays the same hand-written problem as the C++
  example: step 1 accepted; step 2 rejected, refined on the target, synced into the U280
  and kept; step 3 rejected and the host backtracks; step 2' drafted again and accepted.
  Each blocking call (a DMA transfer, a prefill, a drafted step) runs the C++ model, which
  waits on pysystemc's kernel. It prints the C++ example's log, line for line
  (examples/heteroreason_node.expected, worked out by hand in examples/README.md), and,
  given a STEM, traces the KVMU's pointers to STEM.vcd with SystemC's own tracing, from
  signals the Python host drives. Given EXPECTED as well, it compares its log with that
  file and the VCD's pointers with the log's at each logged instant, and prints
  "identical" when both agree.
- `library`: the library's workflow host (`HostOrchestrator`, with a device server per
  device, the draft unit bound to the U280 through its link, and a request dispatcher)
  serving the problems of a trace, as the package's single-request systems do.
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
    # stepwise_top.hpp brings the workflow's parts and the SystemSpec that holds parameters.
    for header in ("host_dma.hpp", "gpu_proxy.hpp", "sim_time.hpp", "kvmu.hpp", "stepwise_top.hpp"):
        cppyy.include(f"heteroreason/{header}")
    cppyy.include(str(Path(__file__).resolve().parent / "node_params.hpp"))
    for cls, methods in BLOCKING.items():
        for method in methods:
            getattr(getattr(cppyy.gbl.cosim, cls), method).__release_gil__ = True
    return cppyy.gbl


def example_spec(gbl):
    """The example node's parameters (examples/node_params.hpp) as a SystemSpec."""
    cosim, example = gbl.cosim, gbl.example
    spec = cosim.SystemSpec()
    spec.draft_on_fpga = True
    spec.fpga, spec.hbm, spec.draft_model = example.u280_decoder(), example.u280_hbm(), example.draft_model()
    spec.prm_model, spec.target_model = example.prm_model(), example.target_model()
    spec.prm_gpu = spec.target_gpu = spec.draft_on_target_gpu = example.gpu()
    spec.draft_power = example.power(40.0, 60.0, 50.0, 41.0)
    spec.prm_power = spec.target_power = example.power(20.0, 400.0, 300.0, 60.0)
    for i in range(3):
        spec.links[i] = example.link()
    return spec


def node_class(gbl):
    from amal.eda.systemc import sc_core

    cosim = gbl.cosim
    to_device, to_host = cosim.LinkDirection.host_to_device, cosim.LinkDirection.device_to_host

    class Node(sc_core.ScModule):
        """One draft FPGA, one PRM GPU and one target GPU, each on its own PCIe link to the host,
        built from `spec`; `host` is "python" (the hand-written problem) or "library" (a trace)."""

        def __init__(self, name: str, spec, host: str = "python", vcd: str | None = None):
            super().__init__(sc_core.sc_module_name(name))
            if not spec.draft_on_fpga:
                raise ValueError("Node: the draft runs on the FPGA in this node")
            names = sc_core.sc_module_name
            link_params, link_names = gbl.std.vector[cosim.PcieLinkParams](), gbl.std.vector["std::string"]()
            for i, link in enumerate(("pcie_draft", "pcie_prm", "pcie_target")):
                link_params.push_back(spec.links[i])
                link_names.push_back(link)
            self.fabric = cosim.PcieFabric(names("fabric"), link_params, link_names)
            self.u280 = cosim.FpgaDraftAccelerator(names("u280"), spec.fpga, spec.hbm, spec.draft_model,
                                                   spec.draft_power)
            self.prm = cosim.GpuProxy(names("prm"), spec.prm_gpu, spec.prm_model, spec.prm_power)
            self.target = cosim.GpuProxy(names("target"), spec.target_gpu, spec.target_model, spec.target_power)
            # The draft model's prompt prefill runs on the target GPU, on its power meter.
            self.helper = cosim.GpuProxy(names("draft_on_target"), spec.draft_on_target_gpu, spec.draft_model,
                                         self.target.power())
            self.lines: list[str] = []  # the log, as printed
            self.trace = None
            if host == "python":
                self.python_host(vcd)
            elif host == "library":
                self.library_host(spec.options)
            else:
                raise ValueError(f"Node: host {host!r} is neither 'python' nor 'library'")

        def link(self, index: int):
            return self.fabric.interconnect(index)

        # --- the library's workflow host, fed by the request dispatcher ---------------------

        def library_host(self, options) -> None:
            names = sc_core.sc_module_name
            self.servers = [cosim.DeviceServer(names(f"{role}_server")) for role in ("draft", "prm", "target")]
            # The host reaches each device through its link: the draft unit's port and the
            # host's GPU ports are routed to the devices' `host` sockets.
            self.draft_unit = cosim.DraftUnit(names("draft_port"), self.u280, self.link(0),
                                              self.link(0).attach(self.u280.host))
            self.activity = cosim.ActivityLog()
            ends = gbl.std.array["size_t", 3]()
            for i in range(3):
                ends[i] = i
            self.port = cosim.FabricPort(self.fabric, self.activity, ends)
            d = cosim.WorkflowDevices()
            d.draft, d.prm, d.target, d.draft_on_target = self.draft_unit, self.prm, self.target, self.helper
            d.prm_link, d.target_link = self.link(1), self.link(2)
            d.prm_route = self.link(1).attach(self.prm.host)
            d.target_route = self.link(2).attach(self.target.host)
            d.helper_route = self.link(2).attach(self.helper.host)
            d.draft_server, d.prm_server, d.target_server = self.servers
            d.fabric = self.port
            self.devices = d
            self.options = cosim.WorkflowOptions(options)
            self.options.draft_prompt_on_target = True
            self.dispatcher = cosim.RequestDispatcher(names("dispatcher"), 1)
            self.host = cosim.HostOrchestrator(names("host"), self.options, d, self.activity, self.dispatcher, 0)

        def failed(self) -> bool:
            """Whether a device server, the host or the dispatcher stopped the simulation with an error."""
            return any(bool(part.error()) for part in (*self.servers, self.host, self.dispatcher))

        # --- the hand-written problem, hosted in Python --------------------------------------

        def python_host(self, vcd: str | None) -> None:
            # The host moves data with the DMA engine the fabric binds to each link's target socket.
            self.fpga_dma, self.prm_dma, self.target_dma = (self.fabric.dma(i) for i in range(3))
            # The KVMU's pointers as signals the host drives, traced by SystemC to a VCD.
            self.pointers = {p: sc_core.sc_signal["long long"](f"kvmu_{p}") for p in ("valid", "curr", "ahead")}
            if vcd:
                self.trace = sc_core.sc_create_vcd_trace_file(vcd)
                for p, signal in self.pointers.items():
                    sc_core.sc_trace(self.trace, signal, f"kvmu.{p}")
            self.sc_thread("host", self.hand_written)

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

        def hand_written(self) -> None:
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
            links = [(self.link(0), "u280"), (self.link(1), "prm"), (self.link(2), "target")]
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

    node = node_class(gbl)("node", example_spec(gbl), "python", stem)
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
