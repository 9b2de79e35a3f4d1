"""The system and device-kind registries (cosim/systems/, cosim/devices/): a system added
through the registry alone runs to a timeline worked out by hand, each registered entry is
what the scenarios and device files get, and nothing outside the registries asks a
system's name or a device's class."""

import ast
import re
from pathlib import Path

import pytest

import cosim
from cosim import devices, systems
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import FAST_FPGA, all_accept_timeline

PACKAGE = Path(cosim.__file__).resolve().parent
PROMPT = 100
NS = 1e-9


@pytest.mark.parametrize("fpga", [None, FAST_FPGA], ids=["u280", "fast"])
def test_fpga_baseline_waits_for_every_verdict_before_drafting_on(fpga):
    # Strictly sequential: the FPGA drafts a step only once the last verdict's command has
    # reached it, so an all-accept problem takes the sum of its steps (the hand model's
    # timeline without step-ahead drafting), and the target never runs.
    steps = [40, 30, 50, 20]
    b = TrajectoryBuilder("accept", PROMPT)
    for n in steps:
        b.accept(n)
    scn = cosim.scenario("fpga-baseline", 1, draft={"overrides": fpga or {}})
    assert devices.kind_of(scn.draft.device).name == "fpga" and scn.sequential
    result = cosim.simulate(scn, Trace(TraceHeader(), [b.build()]), activities=True)
    hand = all_accept_timeline(PROMPT, steps, False, fpga)
    row = result.per_problem[0]
    assert row["latency_s"] == pytest.approx(hand["verdicts"][-1] * NS, abs=10 * NS)
    assert row["stall_ratio"] == 0.0
    # The target GPU only prefills the prompt for the draft model (phase 1), its request first.
    assert {a.kind for a in result.activities if a.device == "target"} == {"request", "migrate"}


def test_fpga_baseline_refuses_overlap_and_a_gpu_draft():
    with pytest.raises(cosim.ConfigError, match=r"toggles: fpga-baseline is strictly sequential; its toggles stay "
                                                r"off \(use gpu-stepahead or heteroreason or lookahead for overlap\)"):
        cosim.scenario("fpga-baseline", 1, toggles={"shadow_sync": True})
    with pytest.raises(cosim.ConfigError, match=r"fpga-baseline drafts on an FPGA; a GPU draft is the gpu-baseline "
                                                r"or gpu-stepahead or heteroreason or specreason or lookahead system"):
        cosim.scenario("fpga-baseline", 1, draft={"device": "rtx3090"})
    with pytest.raises(cosim.ConfigError, match=r"gpu-baseline drafts on a GPU; an FPGA draft is the heteroreason "
                                                r"or fpga-baseline or specreason or lookahead system"):
        cosim.scenario("gpu-baseline", 1, draft={"device": "u280"})


@pytest.mark.parametrize("name", systems.names())
def test_each_registered_system_builds_from_its_preset(name):
    system = systems.by_name(name)
    scn = cosim.scenario(name, 1)
    assert scn.system == name and systems.of(scn) is system
    assert {k: getattr(scn.toggles, k) for k in system.preset} == dict(system.preset)
    assert scn.sequential == system.sequential
    if "draft" in system.roles:
        assert system.wrong_draft(devices.kind_of(scn.draft.device).name) is None
    with pytest.raises(cosim.ConfigError, match=r"system must be one of " + re.escape(", ".join(systems.names()))):
        cosim.scenario(name + "-x", 1)


@pytest.mark.parametrize("name", cosim.hardware.builtin_names("device"))
def test_every_built_in_device_is_of_a_registered_kind(name):
    device = cosim.load_device(name)
    kind = devices.kind_of(device)
    assert kind is devices.by_name(kind.name) and isinstance(device, kind.config)
    assert cosim.hardware.kind_of(device) == kind.name
    assert hasattr(device, kind.design) and hasattr(getattr(device, kind.memory.group), kind.memory.field)


def test_a_device_file_of_an_unknown_kind_names_the_registered_ones(tmp_path):
    path = tmp_path / "asic.yaml"
    path.write_text("kind: asic\nname: x\n")
    with pytest.raises(cosim.ConfigError, match=r"asic.yaml:1: kind: kind must be one of " + ", ".join(devices.names())):
        cosim.load_device(str(path))


def _outside(folder: str):
    for path in sorted(PACKAGE.rglob("*.py")):
        if folder not in path.relative_to(PACKAGE).parts:
            yield path, ast.parse(path.read_text())


def test_nothing_outside_the_systems_registry_compares_a_system_name():
    names = set(systems.names())
    found = []
    for path, tree in _outside("systems"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                literal = [s for s in sides if isinstance(s, ast.Constant) and s.value in names]
                system = [s for s in sides if isinstance(s, ast.Attribute) and s.attr == "system"]
                if literal and system:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_nothing_outside_the_device_registry_tests_a_device_class():
    classes = {kind.config.__name__ for kind in (devices.by_name(n) for n in devices.names())}
    found = []
    for path, tree in _outside("devices"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
                named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if named & classes:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_nothing_outside_the_device_registry_compares_a_kind_name():
    # A kind's name ("fpga", "gpu") compared with anything is a device-kind check: the
    # registry's kinds answer such questions (devices.kind_of, and cosim.fit.FITTERS for fits).
    kinds = set(devices.names())
    found = []
    for path, tree in _outside("devices"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Constant) and s.value in kinds for s in sides):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize("name", systems.names())
def test_each_system_names_a_top_the_engine_has(name):
    # The engine reads the description only after it has found the top: a top it has
    # answers about the missing description, an unknown one names the tops there are.
    from cosim._extension import native

    top = systems.by_name(name).top
    with pytest.raises(cosim.ConfigError) as refused:
        native().simulate(top, {}, lambda finished: None)
    assert "system top" not in str(refused.value) and "missing" in str(refused.value)


def test_the_engine_refuses_an_unknown_top_and_an_unknown_run_option():
    from cosim._extension import native

    with pytest.raises(cosim.ConfigError, match=r"^system top 'tree': one of stepwise, autoregressive$"):
        native().simulate("tree", {}, lambda finished: None)
    with pytest.raises(cosim.ConfigError, match=r"^run option 'vcd': unknown$"):
        native().simulate("stepwise", {}, lambda finished: None, {"vcd": "x"})
