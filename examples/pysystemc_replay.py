"""A trace replayed through the Python top of examples/pysystemc_node.py in a pysystemc session,
its problems' times compared with the package's own run of the same trace:

    python examples/pysystemc_replay.py PREFIX INPUTS.json   # PREFIX: the library built against
                                                             # pysystemc's SystemC

INPUTS.json (scripts/pysystemc_replay_inputs.py writes it with the package) holds a
scenario's engine description, a generated trace's problems and events, and each problem's
start and end from cosim.simulate. A `SystemSpec` is filled from the description and the
example's `Node` (the same pysystemc module, written in Python, that runs the hand-written
problem) instantiates the scenario's devices and links from it, with the library's workflow
host as its host; the trace goes to the node's request dispatcher when it pauses the kernel
for it, as the package's engine hands it over. Each problem's start and end, in the
kernel's picoseconds, are compared with the package's; "identical" when every one matches.
"""

from __future__ import annotations

import json
import sys

from pysystemc_node import load, node_class

# The description's sections and the library's parameter structs they fill, field by field.
ROLE_PARTS = {"model": "ModelSpec", "gpu": "GpuParams", "power": "PowerParams", "link": "PcieLinkParams",
              "fpga": "FpgaAcceleratorParams", "hbm": "HbmParams", "prefill_gpu": "GpuParams"}


def filled(struct, values: dict):
    for name, value in values.items():
        setattr(struct, name, value)
    return struct


def system_spec(cosim, system: dict):
    """The SystemSpec a description gives (one device of each, no measured profiles, no batching)."""
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
    system = inputs["system"]
    one_of_each = all(system["cluster"][k] == 1 for k in ("draft_devices", "draft_contexts_per_device",
                                                          "prm_devices", "target_devices"))
    one_gpu = all(v == 1 for r in ("prm", "target")
                  for k, v in system[r]["parallel"].items() if k.endswith("_parallel"))
    measured = system["draft"].get("fpga_profile") or any(system[r].get("profile") for r in ("prm", "target"))
    on_fpga = system["draft"]["kind"] == "fpga"
    if system["batching"]["enabled"] or measured or not (on_fpga and one_of_each and one_gpu):
        sys.exit("pysystemc_replay: the scenario must have one FPGA draft, one PRM GPU and one target GPU, "
                 "no batching and no measured profiles")
    node = node_class(gbl)("node", system_spec(cosim, system), "library")
    chunks = [chunk(cosim, inputs), cosim.TraceChunk()]  # an empty chunk ends the trace
    while True:
        sc_core.sc_start()
        if node.failed():
            sys.exit("pysystemc_replay: the simulation stopped with an error")
        if not node.dispatcher.wants_chunk() or not chunks:
            break
        node.dispatcher.supply(chunks.pop(0))
    found = {int(m.request): (int(m.start_units), int(m.end_units)) for m in node.dispatcher.take_metrics()}
    same = len(found) == len(inputs["expected"])
    for i, want in enumerate(inputs["expected"]):
        got = found.get(i)
        print(f"problem {i}: start {got[0] if got else '-'} ps, end {got[1] if got else '-'} ps "
              f"(the package's: {want['start_ps']}, {want['end_ps']})")
        same = same and got == (want["start_ps"], want["end_ps"])
    print(f"{len(found)} problems of {inputs['scenario']} replayed through the Python top", flush=True)
    print("identical" if same else "different", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/pysystemc_replay.py PREFIX INPUTS.json")
    sys.exit(main(*sys.argv[1:]))
