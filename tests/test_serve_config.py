"""A scenario's cluster and batching sections: defaults, paths, checks and the engine's sections."""

import dataclasses

import pytest
from conftest import DRAFT_KV_ELEMENTS, U280_HBM_BYTES, run_cli

import cosim
from cosim import ConfigError
from cosim.config._cluster import Batching, DraftPool, GpuPool
from cosim.serve import serving_sections

# Qwen2.5-0.5B: 494,032,768 parameters, a 32,768-token window (its config.json).
DRAFT_PARAMS, DRAFT_WINDOW = 494_032_768, 32_768
RTX3090_BYTES = 24 * 1024**3


def fpga_fit(kv_tokens, weight_bytes=1, kv_bytes=1, capacity=U280_HBM_BYTES):
    """Contexts of ``kv_tokens`` that fit beside the W8 weights, by hand."""
    return (capacity - DRAFT_PARAMS * weight_bytes) // (kv_tokens * DRAFT_KV_ELEMENTS * kv_bytes)


def test_a_scenario_without_the_sections_is_the_single_request_system():
    scn = cosim.load_scenario("heteroreason-u280-300")
    assert serving_sections(scn) == {
        "cluster": {"draft_devices": 1, "draft_contexts_per_device": 1, "draft_boards_per_host_link": 1,
                    "prm_devices": 1, "target_devices": 1},
        "batching": {"enabled": False, "max_batch": 64, "token_budget": 2048, "policy": "fcfs",
                     "gpu_memory_utilization": 0.9, "block_size": 16, "num_gpu_blocks": 0,
                     "prefix_caching": True, "async_scheduling": True},
    }
    resolved = scn.resolved()
    assert resolved["cluster"] == {"draft": {"devices": 1, "contexts_per_device": 1, "boards_per_host_link": 1,
                                             "host_link": "pcie_gen4_x16"},
                                   "prm": {"devices": 1}, "target": {"devices": 1}}
    assert resolved["batching"] == {"enabled": False, "max_batch": 64, "token_budget": 2048, "policy": "fcfs",
                                    "gpu_memory_utilization": 0.9, "block_size": 16, "num_gpu_blocks": 0,
                                    "runtime_memory_bytes": 1.24e9, "prefix_caching": True,
                                    "async_scheduling": True}


def test_a_scenario_file_gives_the_pools_and_the_batching(tmp_yaml):
    path = tmp_yaml("s.yaml", "system: heteroreason\ncluster:\n  draft: {devices: 2, contexts_per_device: 8}\n"
                              "  target: {devices: 3}\nbatching:\n  enabled: true\n  max_batch: 32\n"
                              "  token_budget: 512\n  policy: verify_first\n")
    sections = serving_sections(cosim.load_scenario(path))
    assert sections == {
        "cluster": {"draft_devices": 2, "draft_contexts_per_device": 8, "draft_boards_per_host_link": 1,
                    "prm_devices": 1, "target_devices": 3},
        "batching": {"enabled": True, "max_batch": 32, "token_budget": 512, "policy": "verify_first",
                     "gpu_memory_utilization": 0.9, "block_size": 16, "num_gpu_blocks": 0,
                     "prefix_caching": True, "async_scheduling": True},
    }
    assert all(type(v) is int for v in sections["cluster"].values())


def test_paths_into_the_sections_work_for_sweeps():
    scn = cosim.scenario("heteroreason")
    assert scn.canonical_path("cluster.target.devices") == "cluster.target.devices"
    two = scn.with_value("cluster.target.devices", 2).with_value("cluster.draft.contexts_per_device", 4)
    batched = two.with_value("batching.enabled", True).with_value("batching.token_budget", 4096)
    assert serving_sections(batched) == {
        "cluster": {"draft_devices": 1, "draft_contexts_per_device": 4, "draft_boards_per_host_link": 1,
                    "prm_devices": 1, "target_devices": 2},
        "batching": {"enabled": True, "max_batch": 64, "token_budget": 4096, "policy": "fcfs",
                     "gpu_memory_utilization": 0.9, "block_size": 16, "num_gpu_blocks": 0,
                     "prefix_caching": True, "async_scheduling": True},
    }
    assert serving_sections(scn)["cluster"]["target_devices"] == 1  # the original is unchanged
    assert two.fingerprint() != scn.fingerprint()
    with pytest.raises(ConfigError, match=r"cluster.gpus.devices: gpus: not a group of parameters \(groups: draft, prm, target\)"):
        scn.with_value("cluster.gpus.devices", 2)
    with pytest.raises(ConfigError, match=r"cluster.target.devices: .*must be > 0, got 0"):
        scn.with_value("cluster.target.devices", 0)


BAD = [
    ("zero devices", "cluster:\n  prm: {devices: 0}\n", r"s.yaml:3: cluster.prm.devices: must be > 0, got 0"),
    ("fractional devices", "cluster:\n  target: {devices: 1.5}\n", r"s.yaml:3: cluster.target.devices: must be a whole"),
    ("unknown pool", "cluster:\n  verifier: {devices: 2}\n", r"s.yaml:3: cluster.verifier: unknown parameter"),
    ("unknown key", "cluster:\n  draft: {boards: 2}\n", r"s.yaml:3: cluster.draft.boards: unknown parameter"),
    ("not a mapping", "cluster: 4\n", r"s.yaml:2: cluster: expected a mapping"),
    ("bad policy", "batching:\n  policy: lifo\n", r"s.yaml:3: batching.policy: one of fcfs, verify_first, got 'lifo'"),
    ("enabled not a boolean", "batching:\n  enabled: 1\n", r"s.yaml:3: batching.enabled: expected true or false"),
    ("budget below the batch", "batching:\n  enabled: true\n  max_batch: 128\n  token_budget: 100\n",
     r"s.yaml:5: batching.token_budget: 100 tokens cannot hold one decoding token for each of max_batch = 128 "
     r"sequences \(.*s.yaml:4: batching.max_batch\)"),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_sections_name_the_file_line_and_field(tmp_yaml, name, text, message):
    path = tmp_yaml("s.yaml", "system: heteroreason\n" + text)
    with pytest.raises(ConfigError, match=message):
        cosim.load_scenario(path)


def test_batching_values_while_batching_is_off_are_refused_and_checked_when_it_is_on():
    # Without batching they would have no effect: refused, in code as in a file.
    with pytest.raises(ConfigError, match=r"^batching.max_batch: has no effect while batching is off"):
        cosim.scenario("heteroreason", batching={"max_batch": 128, "token_budget": 100})
    scn = cosim.scenario("heteroreason")
    with pytest.raises(ConfigError, match=r"batching.token_budget: 100 tokens"):
        scn.with_values({"batching.max_batch": 128, "batching.token_budget": 100, "batching.enabled": True})
    on = scn.with_values({"batching.token_budget": 128, "batching.max_batch": 128, "batching.enabled": True})
    assert (on.batching.enabled, on.batching.max_batch, on.batching.token_budget) == (True, 128, 128)


def test_the_u280_holds_as_many_contexts_as_its_hbm_allows(tmp_yaml):
    # 8 GiB - 494,032,768 bytes of W8 weights leaves room for 40 windows of 32,768 tokens x 6,144 bytes.
    fit = fpga_fit(DRAFT_WINDOW)
    assert fit == 40
    scn = cosim.scenario("heteroreason", cluster={"draft": {"contexts_per_device": fit}})
    assert scn.cluster.draft.contexts_per_device == 40
    path = tmp_yaml("s.yaml", "system: heteroreason\ncluster:\n  draft:\n    devices: 4\n"
                              "    contexts_per_device: 41\n")
    need = DRAFT_PARAMS + 41 * DRAFT_WINDOW * DRAFT_KV_ELEMENTS
    with pytest.raises(ConfigError, match=rf"s.yaml:5: cluster.draft.contexts_per_device: 41 contexts do not fit the "
                                          rf"HBM of U280: .*\(32768 tokens a context, the window of Qwen2.5-0.5B\) "
                                          rf"= {need} bytes, more than its {U280_HBM_BYTES} bytes "
                                          rf"\(.*u280.yaml:\d+: hbm.capacity\); at most 40 fit"):
        cosim.load_scenario(path)


def test_a_smaller_kv_reservation_leaves_room_for_more_contexts():
    # 4,096 tokens a context: (8 GiB - weights) / (4,096 x 6,144) = 321.7.
    assert fpga_fit(4096) == 321
    draft = {"overrides": {"accelerator.kv_reserve_tokens": 4096}}
    assert cosim.scenario("heteroreason", draft=draft, cluster={"draft": {"contexts_per_device": 321}})
    with pytest.raises(ConfigError, match=r"322 contexts .*\(4096 tokens a context, kv_reserve_tokens of U280\) .* at most 321 fit"):
        cosim.scenario("heteroreason", draft=draft, cluster={"draft": {"contexts_per_device": 322}})


def test_a_gpu_draft_device_is_checked_against_its_memory():
    # RTX 3090, BF16: 24 GiB - 2 x 494,032,768 bytes of weights, 32,768 x 6,144 x 2 bytes per context: 61.5.
    fit = (RTX3090_BYTES - 2 * DRAFT_PARAMS) // (DRAFT_WINDOW * DRAFT_KV_ELEMENTS * 2)
    assert fit == 61
    assert cosim.scenario("gpu-stepahead", cluster={"draft": {"contexts_per_device": 61}})
    with pytest.raises(ConfigError, match=r"62 contexts do not fit the memory of RTX 3090: .*at most 61 fit"):
        cosim.scenario("gpu-stepahead", cluster={"draft": {"contexts_per_device": 62}})


def test_shrinking_the_draft_memory_under_its_contexts_is_refused():
    scn = cosim.scenario("heteroreason", cluster={"draft": {"contexts_per_device": 20}})
    # 4 GiB holds (4 GiB - weights) / 201,326,592 = 18.88 windows.
    with pytest.raises(ConfigError, match=r"hbm.capacity: .*20 contexts do not fit .* at most 18 fit"):
        scn.with_value("hbm.capacity", "4 GiB")
    assert scn.with_value("hbm.capacity", "16 GiB").draft.device.hbm.capacity_bytes == 16 * 1024**3


@pytest.mark.parametrize("cls", [DraftPool, GpuPool, Batching])
def test_every_default_says_where_it_comes_from(cls):
    for f in dataclasses.fields(cls):
        assert f.metadata["note"].startswith(("source: ", "estimate: ")), f.name
        assert f.metadata["help"]


def test_params_lists_the_sections_with_their_notes(tmp_path):
    out = run_cli("params", "batching", cwd=tmp_path).stdout
    assert "token_budget" in out and "default 2048, estimate: vLLM's default max_num_batched_tokens" in out
    assert "default 'fcfs', source:" in out
    assert "contexts_per_device" in run_cli("params", "cluster.draft", cwd=tmp_path).stdout


def test_a_sweep_over_the_pools_checks_every_value_first(tmp_path):
    proc = run_cli("sweep", "heteroreason-u280-300", "--set", "cluster.draft.contexts_per_device=2,41",
                   "--problems", "1", "--out", tmp_path / "sw", "--quiet", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "41 contexts do not fit the HBM of U280" in proc.stderr
    assert not (tmp_path / "sw" / "points.jsonl").exists()


def test_a_changed_count_is_named_once():
    with pytest.raises(ConfigError) as info:
        cosim.scenario("heteroreason").with_value("cluster.draft.contexts_per_device", 41)
    assert str(info.value).startswith("cluster.draft.contexts_per_device: 41 contexts do not fit")
