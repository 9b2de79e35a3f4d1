"""LLMServingSim's skew fit: a batch of decoding sequences at unequal contexts is timed at
its mean context and blended toward the time at its longest, t_mean + alpha (t_max - t_mean),
alpha by the batch's bucket in the bundle's skew_fit.csv (or the pass's pooled alpha), each
case worked by hand from the tiny profile of test_operator_profiles."""

import textwrap

import pytest

import cosim
from cosim import ConfigError
from cosim.devices._operator_profile import load_operator_profile
from test_operator_profiles import ATTENTION, META, MODEL, dense_us, write_profile

HEADER = "pc,n_label,skew_rate_label,kv_big_label,kp_label,alpha,n_samples\n"
# The tiny model's table: two decoding sequences at 16 take 12 us, at 32 20 us; one at 16
# takes 10 us. Two at 16 and 32: mean 24, t_mean (12 + 20) / 2 = 16 us, t_max 20 us, and
# skew rate (24 - 16) / (32 - 16) = 0.5, so bucket pc=0 | n<=2 | sr<=70% | kvB<=1k | kp=0.
BUCKET = "0,n<=2,sr<=70%,kvB<=1k,kp=0"


def skew_meta(pooled=0.1, table="skew_fit.csv", enabled="true", extra=""):
    return META + textwrap.dedent(f"""\
        skew_fit:
          enabled: {enabled}
          per_tp:
            1:
              alpha_default: {pooled}
              bucket_table: {table}
        """) + extra


def iteration_us(attention_us):
    # Two decodes: the dense operators at 2 tokens, attention in each of the 2 layers, the
    # head at 2 sequences (100 + 30 / 3) and the sampler (5 + 3 / 3).
    return dense_us(2) + 2 * attention_us + 110 + 6


def step_ns(folder, model, contexts):
    work = [("decode", 1, kv, 0.0) for kv in contexts]
    batch = cosim.standalone.gpu_batch("rtx3090", model, work, profile=folder)
    assert batch["iterations"] == 1
    return batch["sequences"][0]["end_ns"]


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(MODEL)
    return str(path)


@pytest.mark.parametrize("rows, attention_us", [
    # The batch's bucket fitted at 0.25: 16 + 0.25 x 4.
    (f"{BUCKET},0.25,4\n", 17.0),
    # Another bucket fitted, not the batch's: the pooled 0.1, 16 + 0.1 x 4.
    ("0,n<=2,sr<=70%,kvB<=4k,kp=0,0.25,4\n", 16.4),
    # A bucket measured faster than its mean (alpha -3: 16 - 12 = 4 us) is held at every
    # sequence at the shortest context, 12 us.
    (f"{BUCKET},-3,1\n", 12.0),
    # A small negative alpha stays as fitted: 16 - 0.5 x 4.
    (f"{BUCKET},-0.5,2\n", 14.0),
])
def test_unequal_contexts_blend_toward_the_longest_by_their_bucket(tmp_path, model, rows, attention_us):
    folder = write_profile(tmp_path / "profile", meta=skew_meta())
    (folder / "skew_fit.csv").write_text(HEADER + rows)
    assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(attention_us) * 1e3)


def test_equal_contexts_and_a_bundle_without_a_fit_take_the_mean(tmp_path, model):
    skewed = write_profile(tmp_path / "skewed", meta=skew_meta())
    (skewed / "skew_fit.csv").write_text(HEADER + f"{BUCKET},0.25,4\n")
    # Two sequences at 24: nothing to blend, (12 + 20) / 2 = 16 us.
    assert step_ns(skewed, model, [24, 24]) == pytest.approx(iteration_us(16.0) * 1e3)
    # A fit the meta turns off, or none at all: the mean context alone.
    off = write_profile(tmp_path / "off", meta=skew_meta(enabled="false"))
    (off / "skew_fit.csv").write_text(HEADER + f"{BUCKET},0.25,4\n")
    plain = write_profile(tmp_path / "plain")
    for folder in (off, plain):
        assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(16.0) * 1e3)


def test_a_pass_the_fit_does_not_cover_takes_the_blocks_pooled_alpha(tmp_path, model):
    meta = META + "skew_fit:\n  enabled: true\n  alpha_default: 0.5\n  per_tp:\n    2: {alpha_default: 0.9}\n"
    folder = write_profile(tmp_path / "profile", meta=meta)
    assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(16 + 0.5 * 4) * 1e3)


def test_an_inline_table_and_the_meta_bucket_axes_are_read(tmp_path, model):
    # Axes of the meta's own: n in one bucket up to 8, skew rate split at 0.6, so the batch's
    # key is pc=0 | few | low | short | none.
    axes = textwrap.dedent("""\
        skew_fit:
          enabled: true
          bucket_axes:
            n_bins: [0, 8, 1000]
            n_labels: [few, many]
            skew_rate_bins: [-0.01, 0.6, 1.01]
            skew_rate_labels: [low, high]
            kv_big_bins: [0, 100, 100000]
            kv_big_labels: [short, long]
            kp_bins: [-1, 0, 100000]
            kp_labels: [none, some]
          per_tp:
            1:
              alpha_default: 0.0
              alpha_by_bucket: {"pc=0|few|low|short|none": 0.75}
        """)
    folder = write_profile(tmp_path / "profile", meta=META + axes)
    assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(16 + 0.75 * 4) * 1e3)


@pytest.mark.parametrize("meta, rows, message", [
    (skew_meta(), "0,n<=3,sr<=70%,kvB<=1k,kp=0,0.2,1\n",
     r"skew_fit\.csv:2: n: unknown bucket 'n<=3'"),
    (skew_meta(), f"{BUCKET},lots,1\n", r"skew_fit\.csv:2: alpha: not a number: 'lots'"),
    (skew_meta(), f"{BUCKET},0.2,1\n{BUCKET},0.3,1\n", r"skew_fit\.csv:3: the same bucket is fitted on line 2"),
    (skew_meta(), "1.5,n<=2,sr<=70%,kvB<=1k,kp=0,0.2,1\n", r"skew_fit\.csv:2: pc: must be a whole number"),
    (skew_meta(), None, r"meta\.yaml:\d+: skew_fit\.per_tp\.1\.bucket_table: .*skew_fit\.csv: no such file"),
    (skew_meta(table="missing.csv"), None, r"meta\.yaml:\d+: skew_fit\.per_tp\.1\.bucket_table: expected the "
                                            r"pass's table, skew_fit\.csv, got 'missing\.csv'"),
    (skew_meta(table="../skew_fit.csv"), None, r"bucket_table: expected the pass's table"),
    (skew_meta(pooled="high"), f"{BUCKET},0.2,1\n", r"alpha_default: must be a number, got 'high'"),
    (skew_meta(enabled="yes please"), None, r"skew_fit\.enabled: expected true or false"),
    (skew_meta(extra="  bucket_axes: {n_bins: [0, 4, 2], n_labels: [a, b]}\n"), None,
     r"skew_fit\.bucket_axes\.n_bins: the bin edges must rise"),
])
def test_a_bad_skew_fit_is_named_by_file_line_and_field(tmp_path, model, meta, rows, message):
    folder = write_profile(tmp_path / "profile", meta=meta)
    if rows is not None:
        (folder / "skew_fit.csv").write_text(HEADER + rows)
    with pytest.raises(ConfigError, match=message):
        load_operator_profile(folder)


def test_the_shipped_moe_bundle_brings_its_fit_and_the_rtx4090_one_none():
    from importlib import resources
    root = resources.files("cosim") / "data" / "validation"
    moe = load_operator_profile(root / "rtxpro6000-qwen3-30b-a3b" / "profile", cosim.load_model("qwen3-30b-a3b"))
    (attention,) = [t for t in moe.terms if t["name"] == "attention"]
    table = root / "rtxpro6000-qwen3-30b-a3b" / "profile" / "tp1" / "skew_fit.csv"
    # Every row of the pass's table, and the pooled alpha meta.yaml gives tp 1.
    assert len(attention["skew"]["rows"]) == len(table.read_text().splitlines()) - 1
    assert attention["skew"]["alpha_default"] == 0.0645
    plain = load_operator_profile(root / "rtx4090-llama-3.1-8b" / "profile", cosim.load_model("llama-3.1-8b"))
    assert all("skew" not in t for t in plain.terms)


def test_the_shipped_fit_is_read_at_the_bucket_worked_by_hand(tmp_path):
    # A 512-token chunk at context 600 and four decodes at 1000, 1000, 4000 and 2000: mean
    # 2000, skew rate (2000 - 1000) / 3000 = 0.33, so the bucket is pc=512 | n<=4 |
    # sr<=40% | kvB<=4k | kp<=1k, whose row the test reads from the CSV itself. The step with
    # that alpha lies that far from the step at the mean (every alpha 0) toward the step at
    # the longest (every alpha 1), in the 48 layers alike.
    import shutil
    from importlib import resources
    shipped = resources.files("cosim") / "data" / "validation" / "rtxpro6000-qwen3-30b-a3b" / "profile"
    rows = (shipped / "tp1" / "skew_fit.csv").read_text().splitlines()
    (alpha,) = [float(r.split(",")[5]) for r in rows if r.startswith("512,n<=4,sr<=40%,kvB<=4k,kp<=1k,")]
    work = [("prefill", 512, 600, 0.0)] + [("decode", 1, kv, 0.0) for kv in (1000, 1000, 4000, 2000)]

    def step(folder):
        batch = cosim.standalone.gpu_batch("rtx-pro-6000", "qwen3-30b-a3b", work, profile=str(folder))
        return batch["sequences"][0]["end_ns"]

    ends = {}
    for name, every in (("mean", 0.0), ("longest", 1.0)):
        folder = tmp_path / name
        shutil.copytree(shipped, folder)
        (folder / "tp1" / "skew_fit.csv").write_text(rows[0] + "\n" + "".join(
            ",".join(r.split(",")[:5] + [str(every)] + r.split(",")[6:]) + "\n" for r in rows[1:]))
        meta = (folder / "meta.yaml").read_text().replace("alpha_default: 0.0645", f"alpha_default: {every}")
        (folder / "meta.yaml").write_text(meta)
        ends[name] = step(folder)
    assert ends["longest"] > ends["mean"]
    assert step(shipped) == pytest.approx(ends["mean"] + alpha * (ends["longest"] - ends["mean"]), rel=1e-9)


def axes_meta(entry_lines=()):
    """A fit on the block's own axes (n: "one" up to 1, "few" up to 1.5; one bucket on the
    others), a pooled 0.9 for the block, and pass 1's entry of ``entry_lines``."""
    lines = ["skew_fit:", "  enabled: true", "  alpha_default: 0.9", "  bucket_axes:",
             "    n_bins: [0, 1, 1.5]", "    n_labels: [one, few]",
             "    skew_rate_bins: [-0.01, 1.01]", "    skew_rate_labels: [any]",
             "    kv_big_bins: [0, 100000]", "    kv_big_labels: [any]",
             "    kp_bins: [-1, 100000]", "    kp_labels: [any]",
             "  per_tp:", "    1:", *("      " + line for line in entry_lines)]
    return META + "\n".join(lines) + "\n"


def test_a_value_past_the_last_edge_falls_in_the_last_bucket(tmp_path, model):
    # Two sequences, past the last n edge (1.5): the last bucket, "few".
    folder = write_profile(tmp_path / "p", meta=axes_meta(["alpha_by_bucket: {'pc=0|few|any|any|any': 0.5}"]))
    assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(16 + 0.5 * 4) * 1e3)


def test_a_pass_without_its_own_pooled_alpha_takes_none_and_its_axes_come_first(tmp_path, model):
    # The pass's own axes (n in one bucket "all") before the block's; its bucket unfitted and
    # no alpha_default of its own: 0, not the block's 0.9 (LLMServingSim's fallback).
    entry_axes = ("bucket_axes: {n_bins: [0, 1000], n_labels: [all], skew_rate_bins: [-0.01, 1.01], "
                  "skew_rate_labels: [any], kv_big_bins: [0, 100000], kv_big_labels: [any], kp_bins: [-1, 100000], "
                  "kp_labels: [any]}")
    fitted = write_profile(tmp_path / "fitted", meta=axes_meta(
        [entry_axes, "alpha_by_bucket: {'pc=0|all|any|any|any': 0.25}"]))
    assert step_ns(fitted, model, [16, 32]) == pytest.approx(iteration_us(17.0) * 1e3)
    unfitted = write_profile(tmp_path / "unfitted", meta=axes_meta(
        [entry_axes, "alpha_by_bucket: {'pc=16|all|any|any|any': 0.25}"]))
    assert step_ns(unfitted, model, [16, 32]) == pytest.approx(iteration_us(16.0) * 1e3)


def test_an_inline_fit_comes_before_the_table_and_a_layered_table_gives_attentions_rows(tmp_path, model):
    both = write_profile(tmp_path / "both", meta=skew_meta() + "      alpha_by_bucket: "
                                                              "{'pc=0|n<=2|sr<=70%|kvB<=1k|kp=0': 0.75}\n")
    (both / "skew_fit.csv").write_text(HEADER + f"{BUCKET},0.25,4\n")
    assert step_ns(both, model, [16, 32]) == pytest.approx(iteration_us(19.0) * 1e3)
    layered = write_profile(tmp_path / "layered", meta=skew_meta())
    (layered / "skew_fit.csv").write_text("layer," + HEADER + f"mla,{BUCKET},0.9,4\nattention,{BUCKET},0.25,4\n")
    assert step_ns(layered, model, [16, 32]) == pytest.approx(iteration_us(17.0) * 1e3)


def test_a_longest_context_no_slower_than_the_mean_is_no_skew(tmp_path, model):
    # Two decoding sequences take 12 us at 16 and 10 at 32: at the mean 24, 11 us; the
    # longest is faster, so the blend does not apply, whatever alpha says.
    table = ATTENTION.replace("0,0,2,32,20", "0,0,2,32,10")
    folder = write_profile(tmp_path / "p", attention=table, meta=skew_meta())
    (folder / "skew_fit.csv").write_text(HEADER + f"{BUCKET},0.5,4\n")
    assert step_ns(folder, model, [16, 32]) == pytest.approx(iteration_us(11.0) * 1e3)


def test_a_pass_entry_that_is_not_a_mapping_is_named(tmp_path):
    meta = META + "skew_fit:\n  enabled: true\n  per_tp:\n    1: 0.3\n"
    folder = write_profile(tmp_path / "p", meta=meta)
    with pytest.raises(ConfigError, match=r"meta\.yaml:\d+: skew_fit\.per_tp\.1: expected a mapping"):
        load_operator_profile(folder)
