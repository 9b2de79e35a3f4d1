"""Operator-profile folders read as their format names them: only the named files (a deep or
unreadable tree beside them is never walked), one format a folder, LLMServingSim's bundles
as that project ships them (numbered keys, a tensor-parallel pass's shard shape, tp1/ and
tp2/), measured times bounded, extrapolation never to zero, and memory bounded by the
tables' numbers, not by Python objects per row."""

import os
import tracemalloc

import pytest

import cosim
from cosim import ConfigError
from cosim.devices._operator_profile import load_operator_profile
from cosim.standalone import gpu_timing

from test_operator_profiles import ATTENTION, META, MODEL, dense_us, write_profile


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(MODEL)
    return path


def test_only_the_files_the_format_names_are_looked_at(tmp_path, model):
    folder = write_profile(tmp_path / "profile")
    # A tree past PATH_MAX beside the profile: a walk of the folder stats paths no system
    # call takes. Built by relative steps, as only that way it can be made at all.
    here = os.getcwd()
    os.chdir(folder)
    try:
        for _ in range(24):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        open("x", "w").close()
    finally:
        os.chdir(here)
    (ns,) = gpu_timing("rtx3090", model, [("decode", 1, 24)], profile=folder)["ns"]
    assert ns == pytest.approx((dense_us(1) + 2 * 12 + 100 + 5) * 1e3)


def test_a_folder_of_no_format_is_refused_without_walking_it():
    with pytest.raises(ConfigError, match=r"^/: not an operator profile: expected LLMServingSim's meta\.yaml"):
        load_operator_profile("/")


def test_a_folder_holding_both_formats_is_refused(tmp_path, model):
    folder = write_profile(tmp_path / "both")
    (folder / "mlp.csv").write_text("num_tokens\n1\n")
    with pytest.raises(ConfigError, match=r"both: holds both Vidur's mlp\.csv and LLMServingSim's meta\.yaml, "
                                          r"dense\.csv, per_sequence\.csv: one operator profile a folder"):
        load_operator_profile(folder, cosim.load_model(model))


@pytest.mark.parametrize("time_us,message", [
    ("1e16", r"attention\.csv:14: time_us: 1e16 is past the engine's limit of 3600"),
    # One hour is the most a measured time may be; a microsecond past it is refused.
    ("3600000001", r"attention\.csv:14: time_us: 3600000001 is past"),
])
def test_a_measured_time_past_an_hour_is_refused_naming_the_line(tmp_path, model, time_us, message):
    folder = write_profile(tmp_path / "p", attention=ATTENTION + f"0,0,4,16,{time_us}\n")
    with pytest.raises(ConfigError, match=message):
        load_operator_profile(folder, cosim.load_model(model))


def test_an_hour_exactly_is_a_measured_time(tmp_path, model):
    folder = write_profile(tmp_path / "p", attention=ATTENTION + "0,0,4,16,3600000000\n")
    load_operator_profile(folder, cosim.load_model(model))


def test_extending_a_table_to_zero_time_is_refused_naming_the_file(tmp_path, model):
    # Decode attention falls from 10 us at KV 16 to 5 us at 32: extended linearly it reaches
    # 0 at KV 48, within the 2x the table may be extended.
    attention = "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n0,0,1,16,10\n0,0,1,32,5\n16,0,0,0,30\n"
    folder = write_profile(tmp_path / "p", attention=attention)
    (ns,) = gpu_timing("rtx3090", model, [("decode", 1, 40)], profile=folder)["ns"]
    assert ns == pytest.approx((dense_us(1) + 2 * 2.5 + 100 + 5) * 1e3)  # 10 - 5 x (40 - 16) / 16
    with pytest.raises(ConfigError, match=r"attention\.csv: extending the measured points to \(prefill_chunk 0, "
                                          r"kv_prefill 0, n_decode 1, kv_decode 48\) gives a time <= 0"):
        gpu_timing("rtx3090", model, [("decode", 1, 48)], profile=folder)


def bundle(folder, degrees):
    """An LLMServingSim bundle as its profiler writes one: meta.yaml with numbered per_tp
    keys and hf_overrides left at the last pass's shard, a folder per degree."""
    # The tiny model's heads, MLP width and vocabulary split over the last degree; its one
    # KV head is replicated on each GPU.
    heads, kv_heads, ffn, vocab = 2 // degrees[-1], 1, 16 // degrees[-1], 32 // degrees[-1]
    meta = META.replace("intermediate_size: 16", f"intermediate_size: {ffn}") \
        .replace("num_attention_heads: 2", f"num_attention_heads: {heads}") \
        .replace("num_key_value_heads: 1", f"num_key_value_heads: {kv_heads}") \
        .replace("vocab_size: 32", f"vocab_size: {vocab}")
    meta += f"tp_degrees: {list(degrees)}\nskew_fit:\n  per_tp:\n" + "".join(
        f"    {d}:\n      bucket_table: tp{d}/skew_fit.csv\n" for d in degrees)
    folder.mkdir(parents=True)
    (folder / "meta.yaml").write_text(meta)
    for d in degrees:
        write_profile(folder / f"tp{d}", meta=None)
    return folder


def test_a_bundle_profiled_at_two_degrees_loads_as_shipped(tmp_path, model):
    folder = bundle(tmp_path / "bundle", (1, 2))
    # One GPU's times come from tp1/: the same numbers as a plain folder.
    (ns,) = gpu_timing("rtx3090", model, [("decode", 1, 24)], profile=folder)["ns"]
    assert ns == pytest.approx((dense_us(1) + 2 * 12 + 100 + 5) * 1e3)
    assert all(t["file"].startswith(str(folder / "tp1")) for t in load_operator_profile(folder).terms)


def test_a_shard_shape_at_no_profiled_degree_is_refused(tmp_path, model):
    folder = bundle(tmp_path / "bundle", (1, 2))
    meta = folder / "meta.yaml"
    meta.write_text(meta.read_text().replace("tp_degrees: [1, 2]", "tp_degrees: [1]"))
    with pytest.raises(ConfigError, match=r"meta\.yaml:4: engine_effective\.hf_overrides\.num_attention_heads: "
                                          r"the profile measured num_attention_heads 1; the role's model tiny has "
                                          r"heads 2$"):
        load_operator_profile(folder, cosim.load_model(model))


def test_a_bad_degree_list_is_named(tmp_path, model):
    folder = bundle(tmp_path / "bundle", (1, 2))
    meta = folder / "meta.yaml"
    meta.write_text(meta.read_text().replace("tp_degrees: [1, 2]", "tp_degrees: [0, two]"))
    with pytest.raises(ConfigError, match=r"meta\.yaml:\d+: tp_degrees: expected a list of whole numbers >= 1"):
        load_operator_profile(folder, cosim.load_model(model))


def test_a_duplicate_point_names_its_line_and_the_first(tmp_path, model):
    # Three measurements of one point, and another point twice further down: the error names
    # the first line that repeats a point (14) and where that point was first (3).
    attention = ATTENTION + "0,0,1,32,99\n0,0,1,32,98\n0,0,2,16,1\n"
    folder = write_profile(tmp_path / "p", attention=attention)
    attention_lines = attention.splitlines()
    assert attention_lines[2].startswith("0,0,1,32") and attention_lines[13].startswith("0,0,1,32")
    with pytest.raises(ConfigError, match=r"attention\.csv:14: the same point is measured on line 3$"):
        load_operator_profile(folder, cosim.load_model(model))


def test_a_large_table_costs_its_numbers_not_objects_per_row(tmp_path, model):
    # 200,000 attention points (about 4 MB of CSV). Held as arrays, a row costs its five
    # 8-byte numbers and its line (48 bytes), with the sort that checks for repeats and the
    # arrays' growth at most about three times that: well under 150 bytes a row, about six
    # bytes for each byte of the file. As lists of Python floats and dicts a row took over
    # 1,500 bytes (65 for each byte of the file).
    rows = ["prefill_chunk,kv_prefill,n_decode,kv_decode,time_us", *ATTENTION.splitlines()[1:]]
    rows += [f"0,0,{n},{kv},{10 + n + kv / 1000:.3f}" for n in range(3, 203) for kv in range(16, 16016, 16)]
    folder = write_profile(tmp_path / "big", attention="\n".join(rows) + "\n")
    size = (folder / "attention.csv").stat().st_size
    tracemalloc.start()
    try:
        profile = load_operator_profile(folder, cosim.load_model(model))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    table = next(t for t in profile.terms if t["name"] == "attention")["rows"]
    assert table.shape == (len(rows) - 1, 5) and table.nbytes == 40 * (len(rows) - 1)
    assert peak < 150 * (len(rows) - 1) and peak < 8 * size, (peak, size)
