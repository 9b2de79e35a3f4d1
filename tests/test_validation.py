"""`cosim validate`: every row's measured value read again from the data independently, every
predicted value worked out again from the published formulas, the errors, the table, the
command and its files, and the RTX 3090 layer-time goal."""

import csv
import json
import os
import re
import stat
import statistics
import sys
import types

import pytest

import cosim.validation as validation
from cosim import ConfigError, load_device, load_model
from cosim.validation._figure import draw
from cosim.validation._table import Row, format_table, summary
from cosim.validation import _units as units
from cosim.validation._units import readable_unit
from conftest import ROOT, qwen_linear_macs, run_cli
from handmodel import Fpga, Gpu

DATA = ROOT / "cosim" / "data" / "validation"
LAYER_OPS = ("input_layernorm", "q_proj", "k_proj", "v_proj", "rope", "attn", "o_proj", "post_layernorm",
             "gate_proj", "up_proj", "act_fn", "down_proj")


@pytest.fixture(scope="module")
def rows():
    return {(r.case, r.quantity): r for r in validation.run()}


def measured_forward_ms(n):
    """Llama-3.1-8B on the RTX 3090 from the CSV itself: 32 layers of ops at n tokens, the
    embedding and final norm at n, the output head at the one token that is sampled."""
    ns = {}
    with open(DATA / "rtx3090-llama-3.1-8b" / "layers.csv", newline="") as handle:
        for rec in csv.DictReader(handle):
            if rec["kv_cache"] == "0" and rec["tp_size"] == "1":
                ns[rec["layer_name"], int(rec["input"])] = float(rec["latency(ns)"])
    total = ns["embedding", n] + 32 * sum(ns[op, n] for op in LAYER_OPS) + ns["final_layernorm", n]
    return (total + ns["lm_head", 1]) * 1e-6


def test_rtx3090_rows_are_the_measured_forward_passes_and_the_fitted_roofline(rows):
    gpu = Gpu("rtx3090", "llama-3.1-8b")
    for n in (1, 16, 64, 512, 2048):
        label = "decode, 1 token" if n == 1 else f"prefill, {n} tokens"
        row = rows["rtx3090-layers", f"forward pass, {label}"]
        assert row.measured == pytest.approx(measured_forward_ms(n), rel=1e-12)
        # The GPU proxy's formula less its overheads (docs/hardware.md), written again in handmodel.
        kernels = gpu.decode(0) if n == 1 else gpu.prefill(n, 0)
        assert row.predicted == pytest.approx((kernels - gpu.overhead()) * 1e-6, rel=1e-9)
        assert row.error == pytest.approx(row.predicted / row.measured - 1, rel=1e-12)
    # By hand at 2,048 tokens: 510.1 ms measured (the layers' GEMMs at ~64 TFLOPS); compute
    # 2 x (2048 x 6.98 G + 0.525 G + 2,096,128 x 262,144) MACs at 71 x 0.817 TFLOPS = 509.9 ms.
    row = rows["rtx3090-layers", "forward pass, prefill, 2048 tokens"]
    assert row.measured == pytest.approx(510.1, abs=0.05)
    assert row.predicted == pytest.approx(511.9, abs=0.1)


def test_the_rtx3090_layer_times_meet_the_goal(rows):
    errors = [abs(r.error) for (case, _), r in rows.items() if case == "rtx3090-layers"]
    assert len(errors) == 9  # decode, and prefills of 16 to 2,048 tokens
    assert statistics.median(errors) <= 0.05
    assert max(errors) <= 0.12


# QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst, vLLM tables, BF16 rows (tok/s).
QWEN = {("Qwen2.5-0.5B", 1): 311.55, ("Qwen2.5-0.5B", 30720): 264.51, ("Qwen2.5-1.5B-Instruct", 6144): 176.68,
        ("Qwen2.5-7B-Instruct", 1): 84.28, ("Qwen2.5-7B-Instruct", 14336): 77.69}
QWEN_MODELS = {"Qwen2.5-0.5B": "qwen2.5-0.5b", "Qwen2.5-1.5B-Instruct": "qwen2.5-1.5b-instruct",
               "Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct"}


def test_qwen_rows_are_the_published_speeds_and_one_generate_call(rows):
    assert sum(1 for case, _ in rows if case == "qwen-a100") == 12
    for (name, prompt), speed in QWEN.items():
        note = " (sets the overhead)" if (name, prompt) == ("Qwen2.5-0.5B", 1) else ""
        row = rows["qwen-a100", f"{name}, input {prompt}{note}"]
        assert row.measured == speed
        gpu = Gpu("a100-80gb", QWEN_MODELS[name])
        seconds = (gpu.prefill(prompt, 0) + sum(gpu.decode(prompt + i) for i in range(1, 2048))) * 1e-9
        assert row.predicted == pytest.approx(2048 / seconds, rel=1e-9)


def test_the_7b_row_worked_by_hand():
    # Qwen2.5-7B-Instruct at input 1 on the A100: 14.14 GB of BF16 layer and head weights a
    # token at 2039 GB/s x 0.710 (9.77 ms), plus 2.5 ms a step; the KV of at most 2,048 tokens
    # adds about 0.4%.
    weights = 2 * (28 * (3584 * 3584 * 2 + 2 * 3584 * 512 + 3 * 3584 * 18944) + 3584 * 152064)
    step_ms = weights / (2039e9 * 0.710) * 1e3 + 2.5
    assert step_ms == pytest.approx(12.27, abs=0.01)
    row = next(r for r in validation.run(["qwen_a100"]) if r.quantity == "Qwen2.5-7B-Instruct, input 1")
    assert row.predicted == pytest.approx(1e3 / step_ms, rel=0.01)


def test_fpga_rows_are_the_published_ratios_against_both_models(rows):
    tokens = 1024
    a100 = Gpu("a100-80gb", "llama-3.2-1b")
    a100_rate = tokens / (sum(a100.decode(c) for c in range(tokens)) * 1e-9)
    w4 = {"accelerator.weight_bytes_per_param": 0.5}
    u280 = Fpga("u280-flexllm", "llama-3.2-1b", overrides=w4)
    u280_rate = tokens / (sum(u280.token(c) for c in range(tokens)) * 1e-9)
    row = rows["fpga-designs", "FlexLLM U280 decode / A100 BF16, Llama-3.2-1B"]
    assert row.measured == 1.64  # FlexLLM, arXiv 2601.15710
    assert row.predicted == pytest.approx(u280_rate / a100_rate, rel=1e-9)
    # The V80 design for 4-bit weights: its 32 ports x 512 bits feed 4,096 lanes.
    v80 = Fpga("v80", "llama-3.2-1b", overrides={**w4, "accelerator.macs_per_cycle": 32 * 512 / 4})
    row = rows["fpga-designs", "V80 decode / A100 BF16 (FlexLLM's projection)"]
    assert row.measured == 6.55
    assert row.predicted == pytest.approx(tokens / (sum(v80.token(c) for c in range(tokens)) * 1e-9) / a100_rate,
                                          rel=1e-9)
    row = rows["fpga-designs", "FlexLLM U280 board power running (log mean above 40 W)"]
    readings = [41.281787, 41.664168, 53.061519, 54.881010, 41.888947, 41.800577, 41.644346, 45.334645,
                57.696465, 59.785920, 55.494086, 43.692086, 44.008252]  # the power log's readings above 40 W
    assert row.measured == pytest.approx(statistics.fmean(readings), rel=1e-12)
    # The design model's decode power, a token at context 0: the 37 W floor, 5 pJ a MAC of
    # Llama-3.2-1B's weight MACs and 7 pJ a bit of its 4-bit weights over the token's time.
    macs = qwen_linear_macs(16, 2048, 32, 8, 64, 8192, 2048 * 128256)
    u280_w = 37.0 + (5.0 * macs + 7.0 * 8 * macs * 0.5) / u280.token(0) * 1e-3
    assert row.predicted == pytest.approx(u280_w, rel=1e-9)
    # Tokens per joule: the A100 at its 250 W decode power, the board at its design's, each over
    # its 1,024 decoded tokens.
    row = rows["fpga-designs", "FlexLLM U280 decode tokens/J / A100 BF16, Llama-3.2-1B"]
    assert row.measured == 3.14
    assert row.predicted == pytest.approx((250.0 * tokens / a100_rate) / (u280_w * tokens / u280_rate), rel=1e-6)


# llama-fpga's boards as their block designs give them: ports x width at the kernel clock,
# and the DDR4 channels behind them (MT/s x 64 bits), each at 0.9 of its peak.
LLAMA_FPGA = {  # device: (ports, port bits, clock MHz, channels, channel MT/s, measured tok/s)
    "kv260-llama-fpga": (4, 128, 300.0, 1, 2400, 4.9),
    "zcu104-llama-fpga": (1, 512, 266.5, 1, 2132, 4.0),
    "zcu104-llama-fpga-ps-pl": (2, 512, 266.5, 2, 2132, 8.5),
    "u250-llama-fpga": (4, 512, 300.0, 4, 2400, 18.5),
}


def test_llama_fpga_rows_are_the_weight_stream_over_each_boards_ddr4(rows):
    # Llama-2-7B: 32 layers of 4 x 4096^2 attention and 3 x 4096 x 11008 MLP weights, and the
    # 4096 x 32000 output head, at AWQ's 4 bits + an FP16 scale + a 4-bit zero per 128.
    weights = (32 * (4 * 4096 ** 2 + 3 * 4096 * 11008) + 4096 * 32000) * (4 + 16 / 128 + 4 / 128) / 8
    kv = 2 * 32 * 32 * 128  # 8-bit K and V per token of context
    for device, (ports, bits, mhz, channels, mts, measured) in LLAMA_FPGA.items():
        gbps = min(ports * bits / 8 * mhz / 1e3 * 0.9, min(ports, channels) * mts * 8 / 1e3 * 0.9)
        pipeline = 32 * 400 / mhz * 1e3  # ns
        seconds = sum((weights + c * kv) / gbps + pipeline for c in range(1024)) * 1e-9
        name = load_device(device).name.split(" (")[0]
        row = rows["fpga-designs", f"llama-fpga {name} decode, Llama-2-7B W4"]
        assert row.measured == measured
        assert row.predicted == pytest.approx(1024 / seconds, rel=2e-3)
    # Every board within 10% of its measured rate, the median within 5%: predicted from the
    # designs, with no parameter set from these rates.
    errors = [abs(rows["fpga-designs", f"llama-fpga {load_device(d).name.split(' (')[0]} decode, "
                                      f"Llama-2-7B W4"].error) for d in LLAMA_FPGA]
    assert max(errors) < 0.10 and statistics.median(errors) < 0.05


def test_the_v80_design_follows_from_its_ports_and_dsps():
    v80, flexllm = load_device("v80"), load_device("u280-flexllm")
    a = v80.accelerator
    assert a.hbm_ports == v80.hbm.pseudo_channels == 32  # every pseudo-channel
    assert v80.hbm.pseudo_channels * v80.hbm.channel_bandwidth_gbps == pytest.approx(819.2)
    assert a.macs_per_cycle == a.hbm_ports * a.port_width_bits / 8  # lanes fed by the ports at W8
    # The same rule gives FlexLLM's own U280 array at its 4-bit weights.
    assert flexllm.accelerator.macs_per_cycle == flexllm.accelerator.hbm_ports * 512 / 4
    assert a.macs_per_cycle / 3 < 0.1 * 10848  # DSP58s at three INT8 MACs each: the DSPs do not bind
    u280 = load_device("u280")
    assert (a.macs_per_cycle, a.hbm_ports) != (u280.accelerator.macs_per_cycle, u280.accelerator.hbm_ports)
    # By hand at context 0: 0.494 GB of W8 weights over 32 ports x 17.28 GB/s = 0.894 ms, more than the
    # MAC array's 0.494 G / 2048 / 300 MHz = 0.804 ms: port-bound, about 1,080 tok/s with the pipeline.
    fpga = Fpga("v80")
    assert fpga.bandwidth() == pytest.approx(32 * 64 * 0.3 * 0.9)
    assert 1e9 / fpga.token(0) == pytest.approx(1082, rel=0.01)


def test_errors_and_summaries_by_hand():
    made = [Row("a", "x", "ms", 10.0, 11.0), Row("a", "y", "ms", 20.0, 18.0), Row("a", "z", "ms", 4.0, 4.0),
            Row("b", "w", "W", 50.0, 40.0)]
    assert [r.error for r in made] == pytest.approx([0.1, -0.1, 0.0, -0.2])
    s = summary(made)
    assert s["a"] == {"rows": 3, "median_abs_error": pytest.approx(0.1), "worst_abs_error": pytest.approx(0.1)}
    assert s["b"]["worst_abs_error"] == pytest.approx(0.2)
    text = format_table(made)
    assert "+10.0%" in text and "-20.0%" in text and "a: 3 rows, median |error| 10.0%, worst 10.0%" in text


def test_a_case_with_a_bad_row_is_named(monkeypatch):
    bad = types.ModuleType("cosim.validation._bad")
    bad.rows = lambda: [{"case": "bad", "quantity": "q", "unit": "s", "measured": float("nan"), "predicted": 1.0}]
    monkeypatch.setitem(sys.modules, "cosim.validation._bad", bad)
    monkeypatch.setitem(validation.CASES, "_bad", "a broken case")
    with pytest.raises(ConfigError, match=r"validation case bad, row 0 \(q\): measured must be a finite number"):
        validation.run(["bad"])
    with pytest.raises(ConfigError, match="unknown case 'nope'"):
        validation.run(["nope"])


def test_the_command_prints_the_table_and_writes_its_files(tmp_path):
    out = tmp_path / "v"
    done = run_cli("validate", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split()
    assert header == ["case", "quantity", "measured", "predicted", "error"]
    assert "rtx3090-layers: 9 rows" in done.stdout and "qwen-a100: 12 rows" in done.stdout
    with open(out / "validation.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    # Nine layer times, twelve Qwen speeds, four llama-fpga boards and four FlexLLM rows; the
    # vLLM serving case: three timings of twelve quantities; the MoE serving case: three timings
    # of seven (the roofline, the profile, the profile over its cluster file's link); the ML.ENERGY case: three quantities of each of its 80 configurations; the
    # carry-over case: the points of each profiled GPU (9 layer-time passes, 19 lone passes of
    # each operator profile, 9 H100 latencies); EAGLE-3 in vLLM: two batch-1 rates and eight
    # batch sizes.
    assert len(table) == 9 + 12 + 4 + 4 + 3 * 12 + 3 * 7 + 3 * 80 + 9 + 19 + 19 + 9 + 2 + 8
    first = table[0]
    assert float(first["error"]) == pytest.approx(float(first["predicted"]) / float(first["measured"]) - 1, abs=1e-6)
    report = json.loads((out / "validation.json").read_text())
    assert set(report["summary"]) == {"rtx3090-layers", "qwen-a100", "fpga-designs", "rtx4090-vllm (profile)",
                                      "rtx4090-vllm (roofline)", "rtx4090-vllm (roofline-ampere)",
                                      "rtxpro6000-moe (roofline)", "rtxpro6000-moe (profile)",
                                      "rtxpro6000-moe (profile, cluster link)",
                                      "mlenergy-h100 (ITL)", "mlenergy-h100 (power)", "mlenergy-h100 (energy)",
                                      *(f"gpu-carry-over ({gpu} left out)"
                                        for gpu in ("RTX 3090", "RTX 4090", "RTX PRO 6000", "H100 SXM")),
                                      "eagle3-vllm"}
    assert (out / "validation.png").read_bytes()[:4] == b"\x89PNG"
    one = run_cli("validate", "--case", "rtx3090_layers", "--out", tmp_path / "one", cwd=tmp_path)
    assert one.returncode == 0 and "qwen-a100" not in one.stdout
    bad = run_cli("validate", "--case", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_the_validation_models_exist_with_the_windows_the_cases_need():
    assert load_model("qwen2.5-0.5b").context_window >= 30720 + 2048
    assert load_model("qwen2.5-1.5b-instruct").context_window >= 30720 + 2048


def tree(folder):
    """Every path under ``folder``: a file's bytes and mode, a link's target, or its kind."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[path] = ("link", os.readlink(path))
        elif stat.S_ISFIFO(path.lstat().st_mode):
            found[path] = "fifo"
        elif path.is_dir():
            found[path] = "folder"
        else:
            found[path] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return found


@pytest.fixture
def data_kept():
    """The package's data as it was, put back whatever a failing test wrote there."""
    shipped = tree(DATA)
    yield shipped
    for path in set(tree(DATA)) - set(shipped):
        path.unlink()
    for path, entry in shipped.items():
        if isinstance(entry, tuple) and entry[0] != "link" and tree(DATA).get(path) != entry:
            path.write_bytes(entry[0])


def read_only(out):
    (out / "validation.csv").write_text("mine\n")
    (out / "validation.csv").chmod(0o444)


def a_data_file(out):
    (out / "validation.json").symlink_to(DATA / "flexllm.yaml")  # a case reads it


@pytest.mark.parametrize("make,message", [
    (read_only, "--out o/validation.csv: is read-only; it is not replaced"),
    (lambda out: os.mkfifo(out / "validation.csv"), "--out o/validation.csv: is a FIFO; name a regular file"),
    (lambda out: (out / "validation.json").mkdir(), "--out o/validation.json: is a folder; name a regular file"),
    (a_data_file, "--out o/validation.json: lies in the package's data folder"),
    (lambda out: (out / "validation.png").symlink_to(DATA / "README.md"), "--out o/validation.png: lies in the "
                                                                          "package's data folder"),
])
def test_outputs_that_cannot_take_the_files_are_refused_before_any_case_runs(tmp_path, data_kept, make, message):
    (tmp_path / "o").mkdir()
    make(tmp_path / "o")
    before = tree(tmp_path)
    done = run_cli("validate", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"cosim: error: {message}"), done.stderr
    assert done.stdout == ""  # no case ran: no table
    assert tree(tmp_path) == before and tree(DATA) == data_kept


def test_a_link_to_the_data_folder_is_refused(tmp_path, data_kept):
    (tmp_path / "o").symlink_to(DATA / "rtx3090-llama-3.1-8b")
    done = run_cli("validate", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("cosim: error: --out o/validation.csv: lies in the "
                                                           "package's data folder"), done.stderr
    assert tree(DATA) == data_kept


SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def test_the_table_keeps_every_number_within_four_integer_digits(rows):
    made = list(rows.values())
    text = format_table(made).split("\n\n")[0].splitlines()[2:]
    assert len(text) == len(made)
    for line, row in zip(text, made):
        cells = re.findall(r"(\S+) (ns|us|ms|s|tok/s|x|W|J)(?=\s)", line + " ")
        assert len(cells) == 2, line
        for (number, unit), raw in zip(cells, (row.measured, row.predicted)):
            assert "e" not in number and float(number) < 1e4, line
            if unit in SECONDS:  # the same time, in the unit shown (4 significant digits)
                assert float(number) * SECONDS[unit] == pytest.approx(raw * SECONDS[row.unit], rel=5e-4)
            else:
                assert unit == row.unit
    # The vLLM replay's times in ms run past 10,000 (TTFT): they are shown in seconds, TPOT stays in ms.
    ttft = rows["rtx4090-vllm (profile)", "TTFT mean"]
    assert ttft.unit == "ms" and ttft.measured > 1e4
    line = next(t for t, r in zip(text, made) if r is ttft)
    assert f"{ttft.measured / 1e3:.4g} s" in line
    assert " ms " in next(t for t, r in zip(text, made) if r.quantity == "TPOT mean")


def test_readable_units_move_up_only_past_four_digits():
    assert readable_unit("ms", 9999.0) == ("ms", 1.0)
    assert readable_unit("ms", 10000.0) == ("s", 1e3)
    assert readable_unit("ns", 2.5e7) == ("ms", 1e6)
    assert readable_unit("s", 5e6) == ("s", 1.0)  # no larger time unit: as it is
    assert readable_unit("tok/s", 1e6) == ("tok/s", 1.0)


def test_each_panel_of_the_figure_is_titled_once(rows):
    fig = draw(list(rows.values()))
    try:
        shown = [ax for ax in fig.axes if ax.get_visible()]
        titles = [ax.get_title() for ax in shown]
        assert all(titles) and len(set(titles)) == len(titles), titles
        for ax in shown:
            legend = ax.get_legend()
            names = [t.get_text() for t in legend.get_texts()] if legend else []
            assert ax.get_title() not in names  # the title is not said again beside it
            assert len(names) != 1  # a legend only tells several variants apart
            # And the axes read in units that keep their numbers short.
            for number in re.findall(r"[\d.]+", ax.get_xlabel() + ax.get_ylabel()):
                assert float(number) < 1e4
            limits = ax.get_xlim() + ax.get_ylim()
            assert max(limits) < 1e4 * 1.3
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def test_what_the_docs_say_of_the_units_is_what_is_shown():
    text = " ".join((ROOT / "docs" / "validation.md").read_text().split())
    words = {4: "four"}
    assert f"within {words[units.MAX_DIGITS]} digits before the point" in text
    assert f"span more than a factor of {units.WIDE:,}" in text
