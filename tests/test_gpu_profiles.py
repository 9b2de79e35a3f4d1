"""Measured GPU latency profiles: rows by batch size time batched iterations, and a
scenario's GPU roles take a profile (a measured CSV) in place of the roofline."""

import pytest

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import FAST_FPGA, Fpga, Gpu
from test_gpu_batching import iteration_ns

MS = 1e6  # ns
# Decode iterations measured at batch 1 and 4, each at contexts 0 and 1000 (ms).
DECODE = {1: (20.0, 30.0), 4: (26.0, 44.0)}


def write_profile(path, rows, batch_column=True):
    header = "phase,tokens,context,seconds" + (",batch" if batch_column else "")
    path.write_text(header + "\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows))
    return path


def decode_profile(tmp_path):
    rows = [("decode", 1, ctx, ms / 1e3, batch) for batch, pair in DECODE.items()
            for ctx, ms in zip((0, 1000), pair)]
    return write_profile(tmp_path / "decode.csv", rows)


def measured_ms(batch, context):
    """Linear in context within a batch size, then in batch size."""
    def at(b):
        lo, hi = DECODE[b]
        return lo + (hi - lo) * context / 1000
    return at(1) + (at(4) - at(1)) * (batch - 1) / 3


def test_the_csv_may_carry_a_batch_column(tmp_path):
    table = cosim.load_latency_profile(decode_profile(tmp_path))
    assert table.rows == (("decode", 1, 0, 0.02), ("decode", 1, 1000, 0.03))
    assert table.batched == (("decode", 1, 0, 0.026, 4), ("decode", 1, 1000, 0.044, 4))
    plain = cosim.load_latency_profile(write_profile(tmp_path / "p.csv", [("decode", 1, 0, 0.02)], False))
    assert plain.rows == (("decode", 1, 0, 0.02),) and plain.batched == ()


@pytest.mark.parametrize("rows,error", [
    ([("decode", 1, 0, 0.02, 4)], r"b.csv:2: decode rows at batch > 1 need decode rows at batch 1 too"),
    ([("decode", 1, 0, 0.02, 0)], r"b.csv:2: batch: must be > 0, got 0"),
    ([("decode", 1, 0, 0.02, 2), ("decode", 1, 0, 0.03, 2)], r"b.csv:3: the same point is measured on line 2"),
    ([("decode", 1, 0, 0.02, "x")], r"b.csv:2: batch: not a int: 'x'"),
])
def test_bad_batch_rows_are_named_with_their_line(tmp_path, rows, error):
    with pytest.raises(cosim.ConfigError, match=error):
        cosim.load_latency_profile(write_profile(tmp_path / "b.csv", rows))


def test_two_decodes_together_take_the_measured_iteration_time_between_batch_sizes(tmp_path):
    profile = decode_profile(tmp_path)
    r = cosim.standalone.gpu_batch("rtx3090", "qwen2.5-math-7b", [("decode", 3, 100, 0.0), ("decode", 3, 200, 0.0)],
                                   profile=profile)
    # Batch 2 at mean contexts 150, 151, 152: a third of the way from batch 1 to batch 4.
    expected = sum(measured_ms(2, 150 + i) for i in range(3)) * MS
    for seq in r["sequences"]:
        assert seq["end_ns"] == pytest.approx(expected, rel=1e-9)
    # A sequence alone decodes at the batch-1 rows.
    alone = cosim.standalone.gpu_batch("rtx3090", "qwen2.5-math-7b", [("decode", 2, 500, 0.0)], profile=profile)
    assert alone["sequences"][0]["end_ns"] == pytest.approx((measured_ms(1, 500) + measured_ms(1, 501)) * MS)


def test_an_iteration_of_decodes_and_a_prefill_scales_the_roofline_by_the_measured_part(tmp_path):
    # Decode measured by batch, prefill not: the prefill part keeps its roofline time.
    profile = decode_profile(tmp_path)
    r = cosim.standalone.gpu_batch("rtx3090", "qwen2.5-math-7b",
                                   [("decode", 1, 400, 0.0), ("decode", 1, 600, 0.0), ("prefill", 100, 0, 0.0)],
                                   profile=profile)
    roofline = iteration_ns(decode_contexts=(400, 600), prefills=((100, 0),))
    decode_part, prefill_part = iteration_ns(decode_contexts=(400, 600)), iteration_ns(prefills=((100, 0),))
    expected = roofline * (measured_ms(2, 500) * MS + prefill_part) / (decode_part + prefill_part)
    assert r["iterations"] == 1
    assert r["sequences"][0]["end_ns"] == pytest.approx(expected, rel=1e-9)


PROMPT, STEPS = 100, [40, 30, 50, 20, 64]


def prm_profile(tmp_path, seconds):
    # A PRM that scores any context in `seconds` (prefill measured at 1 and 10,000 tokens).
    rows = [("prefill", n, 0, seconds) for n in (1, 10000)] + [("decode", 1, c, 0.02) for c in (0, 10000)]
    return write_profile(tmp_path / "prm.csv", rows, batch_column=False)


def test_a_scenario_gpu_role_takes_a_measured_profile(tmp_path, tmp_yaml):
    csv = prm_profile(tmp_path, 0.05)
    scenario = tmp_yaml("s.yaml", f"system: heteroreason\ndraft:\n  overrides:\n"
                                  f"    accelerator.macs_per_cycle: {FAST_FPGA['accelerator.macs_per_cycle']}\n"
                                  f"    accelerator.clock_mhz: {FAST_FPGA['accelerator.clock_mhz']}\n"
                                  f"    accelerator.hbm_ports: {FAST_FPGA['accelerator.hbm_ports']}\n"
                                  f"prm:\n  profile: {csv.name}\n")
    scn = cosim.load_scenario(scenario)
    assert scn.prm.profile == str(csv.resolve()) and scn.resolved()["prm"]["profile"] == str(csv.resolve())
    b = TrajectoryBuilder("accept", PROMPT)
    for n in STEPS:
        b.accept(n)
    trace = Trace(TraceHeader(), [b.build()])
    measured = cosim.simulate(scn, trace).per_problem[0]["latency_s"]
    formula = cosim.simulate(cosim.scenario("heteroreason", 1, draft={"overrides": FAST_FPGA}), trace)
    # This draft device finishes each step before the PRM's verdict, so the verdicts chain:
    # each one is later by the measured score time less the roofline's.
    prm, fast = Gpu("rtx3090", "qwen2.5-math-prm-7b"), Fpga(overrides=FAST_FPGA)
    contexts = [PROMPT + sum(STEPS[:i + 1]) for i in range(len(STEPS))]
    assert all(fast.step(c, n) < prm.request + min(prm.prefill(c, 0), 0.05e9) for c, n in zip(contexts, STEPS[1:]))
    shift_ns = sum(0.05e9 - prm.prefill(c, 0) for c in contexts)
    assert measured - formula.per_problem[0]["latency_s"] == pytest.approx(shift_ns * 1e-9, abs=1e-8)


def test_a_profile_is_refused_where_it_cannot_apply(tmp_path, tmp_yaml):
    csv = prm_profile(tmp_path, 0.05)
    fpga = tmp_yaml("f.yaml", f"system: heteroreason\ndraft:\n  profile: {csv}\n")
    with pytest.raises(cosim.ConfigError, match=r"f.yaml:3: draft.profile: an FPGA's measured profile goes "
                                                r"in its device file"):
        cosim.load_scenario(fpga)
    bad = write_profile(tmp_path / "bad.csv", [("decode", 2, 0, 0.02)], batch_column=False)
    wrong = tmp_yaml("w.yaml", f"system: gpu-stepahead\ntarget:\n  profile: {bad}\n")
    with pytest.raises(cosim.ConfigError, match=r"w.yaml:3: .*bad.csv:2: tokens: decode rows give seconds per token"):
        cosim.load_scenario(wrong)


@pytest.mark.parametrize("batch4_s", [0.5, 2.0])
def test_a_serving_cluster_times_its_batched_iterations_from_the_profile(tmp_path, tmp_yaml, batch4_s):
    # Every PRM iteration is a pure prefill (verifications; no prompt prefill without a
    # prefix cache): measured flat in batch size (0.5 s) or linear in it (0.5 s a sequence).
    rows = [("prefill", n, 0, s, b) for n in (1, 10000) for b, s in ((1, 0.5), (4, batch4_s))]
    rows += [("decode", 1, c, 0.02, 1) for c in (0, 10000)]
    csv = write_profile(tmp_path / "prm.csv", rows)
    scenario = tmp_yaml("c.yaml", f"system: heteroreason\nprm:\n  profile: {csv}\ncluster:\n  draft: {{devices: 6}}\n"
                                  "batching:\n  enabled: true\n")
    trace = cosim.trace.generate("gsm8k", 12, seed=2).in_memory()
    run = cosim.serve.run(cosim.load_scenario(scenario), trace, rate=50.0, seed=1)
    prm = run.summary.pools["prm"]
    assert prm.mean_batch > 1.2  # several verifications did share iterations
    per_sequence = (batch4_s - 0.5) / 3  # the profile's slope in batch size
    batched = prm.mean_batch * prm.iterations
    assert prm.busy_s == pytest.approx(0.5 * prm.iterations + per_sequence * (batched - prm.iterations), rel=1e-9)


def test_a_large_latency_csv_costs_its_numbers_not_objects_per_row(tmp_path):
    # 200,000 decode points (about 6 MB of CSV). Held as an array, a row costs its five
    # 8-byte numbers and its line (48 bytes); with the sort that checks for repeats and the
    # arrays' growth, well under 150 bytes a row. As tuples with a dict of seen points a
    # row took about 40 bytes for each byte of the file.
    import tracemalloc

    from cosim.devices._latency_csv import COLUMNS

    rows = [("decode", 1, ctx, 0.02 + ctx * 1e-9, batch) for batch in (1, 2) for ctx in range(100_000)]
    path = write_profile(tmp_path / "big.csv", rows)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        table = cosim.load_latency_profile(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.table.shape == (len(rows), len(COLUMNS)) and table.table.nbytes == 40 * len(rows)
    assert peak < 150 * len(rows) and peak < 6 * size, (peak, size)
    # The last row, read back: decode (1), one token, its context, batch 2, its seconds.
    assert tuple(table.table[-1]) == (1.0, 1.0, 99_999.0, 2.0, 0.02 + 99_999 * 1e-9)


def test_the_native_table_reads_the_array_as_it_reads_rows(tmp_path):
    # The same profile given to the GPU model as the loader's array and as a list of tuples
    # times every call alike.
    from cosim.devices._latency_csv import LatencyProfile

    loaded = cosim.load_latency_profile(decode_profile(tmp_path))
    as_rows = LatencyProfile(loaded.source, loaded.rows, loaded.batched)
    calls = [(1, ctx) for ctx in (0, 500, 1000, 3000)]
    timed = [[cosim.standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", b, c, profile=p).time_ns for b, c in calls]
             for p in (loaded, as_rows)]
    assert timed[0] == timed[1]
    assert timed[0][1] == pytest.approx(measured_ms(1, 500) * MS)
