"""A measured latency profile that reaches zero or negative time at a point a run can ask
for is refused when the scenario loads, naming the profile and the point; one that stays
positive over that range loads, however it extends past it.

Expected points and values are worked by hand from the table's documented rule
(models/latency_profile.hpp: linear between measured points, end segments extended), and
the corner search is checked against every integer point of a small range."""

import itertools
import random

import pytest

import cosim
from cosim import ConfigError, SimulationError, standalone
from cosim.devices._latency_csv import LatencyProfile
from cosim.config._profile_range import least_point
from conftest import run_cli

# Qwen2.5-Math-7B's window (its config.json max_position_embeddings), the target's default model.
TARGET_WINDOW = 4096


def scenario(folder, profile_rows, extra=""):
    (folder / "prof.csv").write_text("phase,tokens,context,seconds" + ("" if "batch" not in extra else ",batch")
                                     + "\n" + "\n".join(profile_rows) + "\n")
    path = folder / "s.yaml"
    path.write_text(f"system: heteroreason\ntarget: {{device: rtx3090, profile: prof.csv}}\n{extra}")
    return path


def test_a_decode_extrapolated_below_zero_within_the_window_is_refused_at_load(tmp_path):
    # 20 ms at context 0, 10 ms at 1000: 0.02 - 1e-5 * 4096 = -0.02096 s at the window.
    path = scenario(tmp_path, ["decode,1,0,0.02", "decode,1,1000,0.01"])
    before = (tmp_path / "prof.csv").read_bytes()
    with pytest.raises(ConfigError) as caught:
        cosim.load_scenario(path)
    message = str(caught.value)
    assert "s.yaml:2: target.profile" in message and "prof.csv" in message
    assert "-0.021 s for a decode at context 4096" in message
    # The CLI: one line, status 2, nothing written, the profile as it was.
    proc = run_cli("run", path, "--problems", "1", "--out", "o", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "a decode at context 4096" in proc.stderr
    assert not (tmp_path / "o").exists() and (tmp_path / "prof.csv").read_bytes() == before


def test_exactly_zero_time_is_refused_too(tmp_path):
    # 0.5 s at 0, 0.375 s at 1024: 0.5 - 0.125 * 4 = 0 at context 4096 (exact in binary).
    path = scenario(tmp_path, ["decode,1,0,0.5", "decode,1,1024,0.375"])
    with pytest.raises(ConfigError, match=r"gives 0 s for a decode at context 4096"):
        cosim.load_scenario(path)


def test_a_prefill_falling_with_its_tokens_is_named_by_its_tokens(tmp_path):
    # 30 ms at 100 tokens, 20 ms at 200: 0.03 - 1e-4 * 3996 = -0.3696 s at 4096 tokens.
    path = scenario(tmp_path, ["decode,1,0,0.02", "prefill,100,0,0.03", "prefill,200,0,0.02"])
    with pytest.raises(ConfigError, match=r"-0\.37 s for a prefill of 4096 tokens at context 0"):
        cosim.load_scenario(path)


def test_a_batch_dimension_counts_only_when_the_gpus_batch(tmp_path):
    # Decode at context 0: 50 ms at batch 8, 40 ms at 16; extended to batch 64:
    # 0.04 - 0.01 / 8 * 48 = -0.02 s. Batch 1 alone never reaches it.
    rows = ["decode,1,0,0.02,1", "decode,1,1000,0.021,1", "decode,1,0,0.05,8", "decode,1,0,0.04,16"]
    batching = "batching: {enabled: true, max_batch: 64}\n"
    with pytest.raises(ConfigError, match=r"-0\.02 s for a decode at context 0 in a batch of 64"):
        cosim.load_scenario(scenario(tmp_path, rows, batching))
    assert cosim.load_scenario(scenario(tmp_path, rows, "batching: {enabled: false}\n")).target.profile
    # Batching up to 24 stays positive (0.04 - 0.01 / 8 * 8 = 0.03 s at batch 24).
    assert cosim.load_scenario(scenario(tmp_path, rows, "batching: {enabled: true, max_batch: 24, "
                                                        "token_budget: 2048}\n"))


def test_a_profile_falling_only_past_the_window_loads(tmp_path):
    # 20 ms at 0, 19 ms at 1000: 0.02 - 1e-6 * 4096 = 15.9 ms at the window, negative only
    # past 20000 tokens of context, which the 7B target's 4096-token window never reaches.
    scn = cosim.load_scenario(scenario(tmp_path, ["decode,1,0,0.02", "decode,1,1000,0.019"]))
    assert scn.target.profile.endswith("prof.csv")


def test_the_engine_agrees_at_the_point_named(tmp_path):
    # The native table gives the same non-positive time at the point the check names.
    csv = tmp_path / "steep.csv"
    csv.write_text("phase,tokens,context,seconds\nprefill,100,0,0.03\nprefill,200,0,0.02\n")
    with pytest.raises(SimulationError, match="extrapolates"):
        standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", TARGET_WINDOW, 0, profile=csv)
    path = scenario(tmp_path, ["decode,1,0,0.02", "prefill,100,0,0.03", "prefill,200,0,0.02"])
    with pytest.raises(ConfigError, match=f"a prefill of {TARGET_WINDOW} tokens at context 0"):
        cosim.load_scenario(path)


def test_an_fpga_decode_table_is_checked_over_its_kv_reservation(tmp_path):
    from cosim.config.hardware import builtin_path

    folder = tmp_path / "boards"
    folder.mkdir()
    # 10 ms at 0, 9 ms at 1000: 0.01 - 1e-6 * 32768 < 0 within Qwen2.5-0.5B's 32768 window;
    # with 8192 tokens reserved, 0.01 - 1e-6 * 8192 = 1.8 ms stays positive.
    (folder / "measured.csv").write_text("phase,tokens,context,seconds\ndecode,1,0,0.010\ndecode,1,1000,0.009\n")
    text = builtin_path("device", "u280").read_text() + "profile:\n  file: measured.csv\n  measured_clock: 200 MHz\n"
    (folder / "board.yaml").write_text(text)
    (tmp_path / "s.yaml").write_text("system: heteroreason\ndraft: {device: boards/board.yaml}\n")
    with pytest.raises(ConfigError, match=r"draft\.device\.profile\.file: .*boards/measured\.csv: the profile gives "
                                          r"-0\.0228 s for a decode at context 32768"):
        cosim.load_scenario(tmp_path / "s.yaml")
    (tmp_path / "s.yaml").write_text("system: heteroreason\ndraft: {device: boards/board.yaml, overrides: "
                                     "{accelerator.kv_reserve_tokens: 8192}}\n")
    assert cosim.load_scenario(tmp_path / "s.yaml").draft.device.profile is not None


def test_a_change_after_load_is_checked_before_the_run(tmp_path):
    rows = ["decode,1,0,0.02,1", "decode,1,1000,0.021,1", "decode,1,0,0.05,8", "decode,1,0,0.04,16"]
    scn = cosim.load_scenario(scenario(tmp_path, rows, "batching: {enabled: true, max_batch: 24, "
                                                       "token_budget: 2048}\n"))
    wider = scn.with_value("batching.max_batch", 64)
    trace = cosim.trace.generate("gsm8k", 2, 0)
    with pytest.raises(ConfigError, match="in a batch of 64"):
        cosim.simulate(wider, trace)


def test_the_least_time_can_sit_at_a_measured_point_inside_the_range(tmp_path):
    # Context 0 peaks at 10 tokens (10, 50, 10 ms at 1, 10, 20 tokens); context 10 is 20 ms
    # flat. Extended to context 40: 0.02 + 3 * (0.02 - c0(t)), least at t = 10:
    # 0.02 + 3 * (0.02 - 0.05) = -0.07 s, while 1 and 20 tokens give +0.05 s.
    profile = LatencyProfile("p", (("prefill", 1, 0, 0.01), ("prefill", 10, 0, 0.05), ("prefill", 20, 0, 0.01),
                                   ("prefill", 5, 10, 0.02)))
    seconds, point = least_point(profile, 40)
    assert seconds == pytest.approx(-0.07) and point == "a prefill of 10 tokens at context 40"
    # The same in context: batch 1 peaks at context 10 (10, 50, 10 ms at 0, 10, 20), batch 2
    # is 20 ms flat; extended to batch 4: 0.02 + 2 * (0.02 - 0.05) = -0.04 s at context 10.
    profile = LatencyProfile("p", (("decode", 1, 0, 0.01), ("decode", 1, 10, 0.05), ("decode", 1, 20, 0.01)),
                             (("decode", 1, 5, 0.02, 2),))
    seconds, point = least_point(profile, 20, 4)
    assert seconds == pytest.approx(-0.04) and point == "a decode at context 10 in a batch of 4"
    assert least_point(profile, 20, 2) is None


def reference_seconds(points, tokens, context, batch):
    """The documented rule, written out plainly: piecewise linear in tokens within each
    context, then in context, then in batch, end segments extended."""
    def line(pairs, x):
        pairs = sorted(pairs)
        if len(pairs) == 1:
            return pairs[0][1]
        for k, y in pairs:
            if k == x:
                return y
        i = 1
        while i < len(pairs) - 1 and pairs[i][0] < x:
            i += 1
        (x0, y0), (x1, y1) = pairs[i - 1], pairs[i]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    batches = sorted({b for b, _, _, _ in points})
    planes = []
    for b in batches:
        contexts = sorted({c for bb, c, _, _ in points if bb == b})
        curves = [(c, line([(t, s) for bb, cc, t, s in points if bb == b and cc == c], tokens)) for c in contexts]
        planes.append((b, line(curves, context)))
    return line(planes, batch)


@pytest.mark.parametrize("seed", range(12))
def test_the_corners_find_the_least_time_of_every_point(seed):
    rng = random.Random(seed)
    window, top = 30, 6
    points = []
    for b in sorted({1, *rng.sample(range(2, 9), rng.randint(0, 2))}):
        for c in rng.sample(range(0, 30), rng.randint(1, 3)):
            for t in rng.sample(range(1, 30), rng.randint(1, 3)):
                points.append((b, c, t, rng.uniform(0.001, 0.05)))
    profile = LatencyProfile("p", tuple(("prefill", t, c, s) for b, c, t, s in points if b == 1),
                             tuple(("prefill", t, c, s, b) for b, c, t, s in points if b > 1))
    every = min(reference_seconds(points, t, c, b)
                for t, c, b in itertools.product(range(1, window + 1), range(0, window + 1),
                                                 range(1, (top if len({p[0] for p in points}) > 1 else 1) + 1)))
    found = least_point(profile, window, top)
    if every > 0:
        assert found is None
    else:
        assert found is not None and found[0] == pytest.approx(every, rel=1e-9, abs=1e-12)
