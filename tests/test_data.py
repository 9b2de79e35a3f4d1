"""The shipped device, link and model descriptions: cited, loadable, consistent."""

import pytest
import yaml

from cosim import hardware, load_device, load_link, load_model
from conftest import qwen_linear_macs

ALL = [(what, name) for what in ("device", "link", "model") for name in hardware.builtin_names(what)]


def leaves(node, path=""):
    if isinstance(node, dict) and "value" not in node:
        for key, value in node.items():
            yield from leaves(value, f"{path}.{key}" if path else key)
    else:
        yield path, node


@pytest.mark.parametrize("what,name", ALL)
def test_every_shipped_value_cites_a_source_or_says_estimate(what, name):
    data = yaml.safe_load(hardware.builtin_path(what, name).read_text())
    for path, value in leaves(data):
        if path in ("kind", "name", "description", "host_link", "peer_link", "architecture"):
            continue
        assert isinstance(value, dict), f"{name}: {path} has no source or estimate note"
        note = value.get("source") or value.get("estimate")
        assert isinstance(note, str) and len(note) > 5, f"{name}: {path}"


def test_the_required_descriptions_exist_and_load():
    for device in ("u280", "v80", "rtx3090", "jetson_orin_nano"):
        load_device(device)
    for link in ("pcie_gen3_x16", "pcie_gen4_x16"):
        load_link(link)
    for model in ("qwen2.5-0.5b", "qwen2.5-math-1.5b", "qwen2.5-math-7b", "qwen2.5-math-prm-7b"):
        load_model(model)
    for device in ("u280", "v80", "rtx3090", "jetson_orin_nano"):
        assert load_device(device).host_link in hardware.builtin_names("link")


@pytest.mark.parametrize(
    "name,published",
    [("qwen2.5-0.5b", 0.494e9), ("qwen2.5-math-1.5b", 1.544e9), ("qwen2.5-math-7b", 7.616e9)],
)
def test_architecture_accounts_for_the_published_parameter_count(name, published):
    m = load_model(name)
    head = m.hidden * m.vocab
    linear = qwen_linear_macs(m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, head)
    # Tied models store the embedding once (it is the head); untied ones store both.
    tied = name != "qwen2.5-math-7b"
    stored = linear if tied else linear + head
    assert stored == pytest.approx(published, rel=0.01)  # biases and norms are the rest
    assert m.params == pytest.approx(published, rel=0.001)


def test_u280_numbers_match_the_datasheet():
    u280 = load_device("u280")
    assert u280.hbm.capacity_bytes == 8 * 1024**3
    assert u280.hbm.pseudo_channels * u280.hbm.channel_bandwidth_gbps == pytest.approx(460.0)
    v80 = load_device("v80")
    assert v80.hbm.pseudo_channels * v80.hbm.channel_bandwidth_gbps == pytest.approx(819.2)


def test_jetson_overheads_reproduce_the_published_draft_rate():
    from cosim import standalone

    result = standalone.gpu_decode("jetson_orin_nano", "qwen2.5-0.5b", 10, 0)
    rate = 10 / (result.time_ns * 1e-9)
    assert rate == pytest.approx(17.0, rel=0.03)  # HeteroReason authors: ~17 tok/s
