"""The cluster and batching sections are declared once (cosim/schema/_cluster.py): the
Python classes, the engine's sections, the compiled C++ structs and their readers all
follow that declaration, one name per value. These fail when a side lacks a declared
parameter or names it differently."""

import dataclasses

import pytest

import cosim
from cosim import ConfigError
from cosim._extension import native
from cosim.engine._serving_sections import CLUSTER_PATHS, with_cluster
from cosim.engine._workflow import system_dict
from cosim.config._cluster import Batching, Cluster, DraftPool, GpuPool
from cosim.schema import _cluster

CPP = {float: "double", int: "int64_t", bool: "bool", str: "std::string"}


def test_the_compiled_structs_hold_exactly_the_declared_native_parameters():
    compiled = native().param_declarations()
    assert [tuple(p) for p in compiled["cluster"]] == [
        ("draft_devices", "int64_t", "positive"), ("draft_contexts_per_device", "int64_t", "positive"),
        ("draft_boards_per_host_link", "int64_t", "positive"), ("prm_devices", "int64_t", "positive"),
        ("target_devices", "int64_t", "positive")]
    assert [tuple(p) for p in compiled["batching"]] == [
        (d.name, CPP[d.type], d.rule) for d in _cluster.BATCHING.params if d.native]


def test_each_flat_key_is_its_scenario_path_by_one_rule():
    # cluster.<pool>.<name> <-> <pool>_<name>, for every native pool parameter and nothing else.
    assert CLUSTER_PATHS == {"draft_devices": "cluster.draft.devices",
                             "draft_contexts_per_device": "cluster.draft.contexts_per_device",
                             "draft_boards_per_host_link": "cluster.draft.boards_per_host_link",
                             "prm_devices": "cluster.prm.devices", "target_devices": "cluster.target.devices"}
    scn = cosim.scenario("heteroreason")
    for n, (key, path) in enumerate(CLUSTER_PATHS.items(), start=2):
        assert scn.canonical_path(path) == path
        changed = with_cluster(scn, {key: n})
        pool, name = path.split(".")[1:]
        assert getattr(getattr(changed.cluster, pool), name) == n
        assert system_dict(changed)["cluster"][key] == n


def test_the_python_classes_follow_the_declarations():
    for cls, group in ((DraftPool, _cluster.DRAFT_POOL), (GpuPool, _cluster.GPU_POOL),
                       (Batching, _cluster.BATCHING)):
        fields = dataclasses.fields(cls)
        assert [f.name for f in fields] == [d.name for d in group.params]
        assert [(f.metadata["help"], f.metadata["rule"], f.default) for f in fields] == \
            [(d.help, d.rule, d.default) for d in group.params]
    assert [(f.name, f.metadata["help"]) for f in dataclasses.fields(Cluster)] == \
        [(pool, help) for pool, _, help in _cluster.POOLS]


@pytest.mark.parametrize("system", ["heteroreason", "gpu-stepahead", "autoregressive"])
def test_the_engine_is_handed_the_declared_sections_with_the_scenarios_values(system):
    # The shared host link is loaded and handed over only where boards share one.
    shared = cosim.scenario("heteroreason").with_values({"cluster.draft.devices": 4,
                                                        "cluster.draft.boards_per_host_link": 2})
    assert "host_link" not in system_dict(cosim.scenario("heteroreason"))
    assert system_dict(shared)["host_link"]["bandwidth_gbps"] == 31.5  # PCIe Gen4 x16, the default
    scn = cosim.scenario(system).with_values({"cluster.target.devices": 3, "batching.enabled": True,
                                              "batching.max_batch": 48})
    sections = system_dict(scn)
    assert list(sections["cluster"]) == [f.key for f in _cluster.SHAPE]
    assert sections["cluster"]["target_devices"] == 3
    assert list(sections["batching"]) == [d.name for d in _cluster.BATCHING.params if d.native]
    assert sections["batching"]["max_batch"] == 48 and sections["batching"]["enabled"] is True


def _refused(system, match):
    with pytest.raises(ConfigError, match=match):
        native().simulate("stepwise", system, lambda finished: None)


def test_a_bad_section_is_refused_by_its_declared_name_and_rule():
    # The sections are read before anything is simulated: the engine refuses at once.
    good = system_dict(cosim.scenario("heteroreason"))
    system = {**good, "cluster": {k: v for k, v in good["cluster"].items() if k != "draft_contexts_per_device"}}
    _refused(system, r"^cluster\.draft_contexts_per_device: missing parameter")
    _refused({**good, "cluster": {**good["cluster"], "contexts_per_draft": 1}},
             r"^cluster\.contexts_per_draft: unknown parameter")
    # A value's rule is named by its scenario path, as the scenario's own checks name it.
    _refused({**good, "cluster": {**good["cluster"], "prm_devices": 0}}, r"^cluster\.prm\.devices: must be .*> 0")
    _refused({**good, "cluster": {**good["cluster"], "draft_contexts_per_device": 16385}},
             r"^cluster\.draft\.contexts_per_device: 16385 is past the engine's limit of 16384")
    # 100 boards x (1 + 163 contexts) + 2 GPUs = 16402 threads: each count is within the limit, not all.
    _refused({**good, "cluster": {**good["cluster"], "draft_devices": 100, "draft_contexts_per_device": 163}},
             r"^cluster: 16402 devices and request slots, past the engine's limit of 16384")
    _refused({**good, "batching": {**good["batching"], "policy": "lifo"}},
             r"^batching\.policy: one of fcfs, verify_first, got 'lifo'")
    _refused({**good, "batching": {**good["batching"], "gpu_memory_utilization": 1.5}},
             r"^batching\.gpu_memory_utilization: must be")


def test_each_option_takes_the_scenario_value_its_declaration_names(monkeypatch):
    from cosim.engine import _workflow
    from cosim.schema import _toggles

    scn = cosim.scenario("heteroreason").with_values({"toggles.shadow_sync": False, "serving.control_bytes": 96})
    options = _workflow.options_section(scn)
    assert options["shadow_sync"] is False and options["control_bytes"] == 96
    assert options["sequential"] is False and options["step_ahead_depth"] == 1
    # A toy option declared once reaches the engine's section with no other line.
    toy = _toggles.Option("toy_control_bytes", "int64_t", "0", "serving.control_bytes", "a toy option")
    monkeypatch.setattr(_workflow, "OPTIONS", _toggles.OPTIONS + (toy,))
    assert _workflow.options_section(scn)["toy_control_bytes"] == 96
    # Without step-ahead nothing runs ahead: no depth, no kept target runs, whatever the toggles say.
    off = cosim.scenario("gpu-stepahead").with_value("toggles.step_ahead", False)
    assert off.toggles.prefetch_cache and off.toggles.step_ahead_depth == 1
    assert (_workflow.options_section(off)["prefetch_cache"], _workflow.options_section(off)["step_ahead_depth"]) == \
        (False, 0)


def test_the_params_doc_lists_every_declared_cluster_and_batching_parameter():
    # Its staleness is checked with the hardware groups (tests/test_param_declarations.py).
    from conftest import ROOT

    doc = (ROOT / "docs" / "params.md").read_text()
    sections = {f"cluster.{pool}": group for pool, group, _ in _cluster.POOLS}
    for name, group in {**sections, "batching": _cluster.BATCHING}.items():
        section = doc.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        for d in group.params:
            assert f"| `{d.name}` |" in section and d.help in section, (name, d.name)


def test_the_target_alones_request_slots_stay_within_the_engines_threads():
    scn = cosim.scenario("autoregressive").with_values({"cluster.target.devices": 2, "batching.enabled": True})
    system = system_dict(scn)
    system["batching"] = {**system["batching"], "max_batch": 16384}  # each value within the limit
    # 2 GPUs x 16384 sequences = 32768 slots, past 16384 threads: refused before anything is
    # elaborated, so the same process may ask again and hears the same answer.
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"^batching\.max_batch: 32768 request slots on 2 GPUs, past the "
                                              r"engine's limit of 16384"):
            native().simulate("autoregressive", system, lambda finished: None)
