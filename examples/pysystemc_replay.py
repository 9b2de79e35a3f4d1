"""A trace replayed through the library's step-level system top in a pysystemc session, its
problems' times compared with the package's own run of the same trace:

    python examples/pysystemc_replay.py PREFIX INPUTS.json   # PREFIX: the library built against
                                                             # pysystemc's SystemC

INPUTS.json (scripts/pysystemc_replay_inputs.py writes it with the package) holds a
scenario's engine description, a generated trace's problems and events, and each problem's
start and end from cosim.simulate. `Replay` is a pysystemc module written in Python that
fills a `SystemSpec` from the description, elaborates `StepwiseTop` inside itself and hands
its dispatcher the trace when it pauses the kernel for it, as the package's engine does;
pysystemc's kernel runs it. Each problem's start and end, in the kernel's picoseconds, are
compared with the package's; "identical" when every one matches.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

# The description's sections and the library's parameter structs they fill, field by field.
ROLE_PARTS = {"model": "ModelSpec", "gpu": "GpuParams", "power": "PowerParams", "link": "PcieLinkParams",
              "fpga": "FpgaAcceleratorParams", "hbm": "HbmParams", "prefill_gpu": "GpuParams"}


def load(prefix: str):
    import amal.eda.systemc  # noqa: F401 - loads pysystemc's SystemC and cppyy, once
    import cppyy

    ctypes.CDLL(os.path.join(prefix, "lib", "libheteroreason_models.so"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    cppyy.add_include_path(os.path.join(prefix, "include"))
    cppyy.include("heteroreason/stepwise_top.hpp")
    return cppyy.gbl


def filled(struct, values: dict):
    for name, value in values.items():
        setattr(struct, name, value)
    return struct


def system_spec(cosim, system: dict):
    """The SystemSpec a description gives (no measured profiles, no batching: the check's scenario has none)."""
    spec = cosim.SystemSpec()
    spec.options = filled(cosim.WorkflowOptions(), system["options"])
    draft, prm, target = system["draft"], system["prm"], system["target"]
    part = {role: {k: filled(getattr(cosim, ROLE_PARTS[k])(), v) for k, v in section.items() if k in ROLE_PARTS}
            for role, section in (("draft", draft), ("prm", prm), ("target", target))}
    spec.draft_on_fpga = draft["kind"] == "fpga"
    spec.draft_model, spec.prm_model, spec.target_model = (part[r]["model"] for r in ("draft", "prm", "target"))
    spec.prm_gpu, spec.target_gpu = part["prm"]["gpu"], part["target"]["gpu"]
    spec.draft_power, spec.prm_power, spec.target_power = (part[r]["power"] for r in ("draft", "prm", "target"))
    for i, role in enumerate(("draft", "prm", "target")):
        spec.links[i] = part[role]["link"]
    if spec.draft_on_fpga:
        spec.fpga, spec.hbm, spec.draft_on_target_gpu = (part["draft"][k] for k in ("fpga", "hbm", "prefill_gpu"))
    else:
        spec.draft_gpu = part["draft"]["gpu"]
    spec.shape = filled(cosim.ClusterShape(), system["cluster"])
    spec.batching = False
    return spec


def chunk(cosim, inputs: dict):
    """The whole trace as one chunk, as the engine takes it."""
    c = cosim.TraceChunk()
    for e in inputs["events"]:
        c.events.push_back(filled(cosim.TraceEvent(), {**e, "kind": getattr(cosim.EventKind, e["kind"])}))
    for p in inputs["problems"]:
        c.problems.push_back(filled(cosim.TraceProblem(), p))
    return c


def main(prefix: str, path: str) -> int:
    gbl = load(prefix)
    from amal.eda.systemc import sc_core

    cosim = gbl.cosim
    with open(path) as f:
        inputs = json.load(f)
    if inputs["system"]["batching"]["enabled"] or any(inputs["system"][r].get("profile") for r in ("prm", "target")):
        sys.exit("pysystemc_replay: the scenario must have no batching and no measured profiles")

    class Replay(sc_core.ScModule):
        def __init__(self, name: str):
            super().__init__(sc_core.sc_module_name(name))
            self.system = cosim.StepwiseTop(sc_core.sc_module_name("system"), system_spec(cosim, inputs["system"]))

    top = Replay("replay")
    dispatcher = top.system.dispatcher()
    chunks = [chunk(cosim, inputs), cosim.TraceChunk()]  # an empty chunk ends the trace
    while True:
        sc_core.sc_start()
        if top.system.error():
            sys.exit("pysystemc_replay: the simulation stopped with an error")
        if not dispatcher.wants_chunk() or not chunks:
            break
        dispatcher.supply(chunks.pop(0))
    found = {int(m.request): (int(m.start_units), int(m.end_units)) for m in dispatcher.take_metrics()}
    same = len(found) == len(inputs["expected"])
    for i, want in enumerate(inputs["expected"]):
        got = found.get(i)
        print(f"problem {i}: start {got[0] if got else '-'} ps, end {got[1] if got else '-'} ps "
              f"(the package's: {want['start_ps']}, {want['end_ps']})")
        same = same and got == (want["start_ps"], want["end_ps"])
    print(f"{len(found)} problems of {inputs['scenario']} replayed", flush=True)
    print("identical" if same else "different", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/pysystemc_replay.py PREFIX INPUTS.json")
    sys.exit(main(*sys.argv[1:]))
