"""Folders of measured operator times as a GPU role's latency model: LLMServingSim's and
Vidur's formats, an iteration as the sum of its operators interpolated between measured
points (worked by hand here), the limit of extrapolation, and bad folders named by file,
line and field."""

import textwrap

import pytest

import cosim
from cosim import ConfigError
from cosim.devices._operator_profile import load_operator_profile
from cosim.standalone import gpu_timing

MODEL = """kind: model
name: tiny
layers: 2
hidden: 8
heads: 2
kv_heads: 1
head_dim: 4
ffn: 16
vocab: 32
params: 1000
context_window: 4096
"""
META = """profiler_version: 1.0.0
model: tiny
engine_effective:
  hf_overrides: {num_hidden_layers: 1, intermediate_size: 16, num_attention_heads: 2, num_key_value_heads: 1,
                 vocab_size: 32}
"""
# Each operator's time (us) is easy to add up: per layer, layernorm 1 (twice), qkv_proj 2,
# rotary_emb 0.5, o_proj 1, gate_up_proj 4, act_fn 0.5, down_proj 2 at one token, each
# doubling by 32 tokens; embedding 3 and final_layernorm 1 once.
DENSE = {"layernorm": 1, "qkv_proj": 2, "rotary_emb": 0.5, "o_proj": 1, "gate_up_proj": 4, "act_fn": 0.5,
         "down_proj": 2, "embedding": 3, "final_layernorm": 1}
ATTENTION = """prefill_chunk,kv_prefill,n_decode,kv_decode,time_us
0,0,1,16,10
0,0,1,32,14
0,0,2,16,12
0,0,2,32,20
16,0,0,0,30
16,16,0,0,40
32,0,0,0,50
32,16,0,0,70
16,0,1,16,44
16,0,1,32,48
32,0,1,16,64
32,0,1,32,70
"""
PER_SEQUENCE = "layer,sequences,time_us\nlm_head,1,100\nlm_head,4,130\nsampler,1,5\nsampler,4,8\n"


def write_profile(folder, dense=None, attention=ATTENTION, per_sequence=PER_SEQUENCE, meta=META):
    folder.mkdir(parents=True, exist_ok=True)
    if dense is None:
        dense = "layer,tokens,time_us\n" + "".join(f"{op},{n},{us * (1 if n == 1 else 2)}\n"
                                                   for op, us in DENSE.items() for n in (1, 32))
    for name, text in (("dense.csv", dense), ("attention.csv", attention), ("per_sequence.csv", per_sequence),
                       ("meta.yaml", meta)):
        if text is not None:
            (folder / name).write_text(text)
    return folder


@pytest.fixture
def setup(tmp_path):
    model = tmp_path / "tiny.yaml"
    model.write_text(MODEL)
    return write_profile(tmp_path / "profile"), str(model)


def dense_us(tokens):
    """The dense operators of one iteration of ``tokens`` tokens, 2 layers (us)."""
    scale = 1 + (tokens - 1) / 31  # 1 at one token, 2 at 32, linear between
    per_layer = sum(us * (2 if op == "layernorm" else 1) for op, us in DENSE.items()
                    if op not in ("embedding", "final_layernorm"))
    return scale * (2 * per_layer + DENSE["embedding"] + DENSE["final_layernorm"])


def test_a_decode_between_measured_contexts_interpolates_each_operator(setup):
    folder, model = setup
    # Decode at context 24: halfway between kv_decode 16 and 32 of one decoding sequence,
    # attention (10 + 14) / 2 = 12 us a layer; one token of dense operators; the head and
    # sampler of one sequence.
    expected_us = dense_us(1) + 2 * 12 + 100 + 5
    (ns,) = gpu_timing("rtx3090", model, [("decode", 1, 24)], profile=folder)["ns"]
    assert ns == pytest.approx(expected_us * 1e3)
    assert gpu_timing("rtx3090", model, [("decode", 1, 24)], profile=folder)["bound"] == ["profile"]


def test_a_prefill_chunk_between_grid_rows_interpolates_on_every_axis(setup):
    folder, model = setup
    # 24 tokens after 8: chunk 24 is halfway between 16 and 32, KV 8 halfway between 0 and 16:
    # chunk 16 gives (30 + 40) / 2 = 35, chunk 32 gives (50 + 70) / 2 = 60, so 47.5 us a layer.
    expected_us = dense_us(24) + 2 * 47.5 + 100 + 5
    (ns,) = gpu_timing("rtx3090", model, [("prefill", 24, 8)], profile=folder)["ns"]
    assert ns == pytest.approx(expected_us * 1e3)


def test_a_batched_step_is_timed_at_its_shape(setup):
    folder, model = setup
    # Two decodes at 20 and 28 (mean 24) and a 16-token chunk at 0, in one iteration: 18
    # tokens, 3 sequences. Attention at chunk 16, KV 0, 2 decoding sequences at 24: the mixed
    # table stops at one decoding sequence for chunk 16, so 2 extends its line from none
    # (30 us) through one ((44 + 48) / 2 = 46 us): 62 us. Head and sampler at 3 sequences:
    # 100 + (130 - 100) x 2 / 3 = 120 and 5 + 3 x 2 / 3 = 7 us.
    batch = cosim.standalone.gpu_batch("rtx3090", model, [("decode", 1, 20, 0.0), ("decode", 1, 28, 0.0),
                                                          ("prefill", 16, 0, 0.0)], profile=folder)
    assert batch["iterations"] == 1
    expected_us = dense_us(18) + 2 * 62 + 120 + 7
    assert [s["end_ns"] for s in batch["sequences"]] == pytest.approx([expected_us * 1e3] * 3)


def test_a_point_far_beyond_the_grid_is_an_error_naming_file_and_point(setup):
    folder, model = setup
    # Up to twice the largest measured value is extended; 80 tokens is beyond 2 x 32.
    assert gpu_timing("rtx3090", model, [("decode", 1, 60)], profile=folder)["ns"][0] > 0
    with pytest.raises(ConfigError, match=r"attention\.csv: the run needs kv_decode = 65 \(at prefill_chunk 0, "
                                          r"kv_prefill 0, n_decode 1\), beyond the measured kv_decode up to 32"):
        gpu_timing("rtx3090", model, [("decode", 1, 65)], profile=folder)
    # A lone prefill longer than the dense table runs in chunks of its largest token count.
    (ns,) = gpu_timing("rtx3090", model, [("prefill", 64, 0)], profile=folder)["ns"]
    # The second chunk's KV (32) extends the chunk-32 line from 0 (50 us) through 16 (70 us): 90 us.
    assert ns == pytest.approx((2 * dense_us(32) + 2 * (50 + 90) + 2 * (100 + 5)) * 1e3)


def test_a_role_takes_the_folder_and_the_target_alone_runs_on_it(setup):
    folder, model = setup
    scn = cosim.scenario("autoregressive", target={"device": "rtx3090", "model": model, "profile": str(folder),
                                                   "overrides": {"gpu.request_overhead_ns": 0}})
    trace = cosim.trace.Trace(cosim.trace.plain_header("t"), [cosim.trace.plain_problem("a", 16, 3)])
    result = cosim.simulate(scn, trace)
    prefill_us = dense_us(16) + 2 * 30 + 100 + 5
    decode_us = [dense_us(1) + 2 * (10 + (c - 16) / 16 * 4) + 100 + 5 for c in (16, 17)]
    assert result.per_problem.column("latency_s")[0] == pytest.approx((prefill_us + sum(decode_us)) * 1e-6)


BAD = [
    (dict(dense="layer,tokens\nqkv_proj,1\n"), r"dense\.csv:1: time_us: missing column"),
    (dict(dense="layer,tokens,time_us\nqkv_proj,1,nan\n"), r"dense\.csv:2: time_us: must be finite, got 'nan'"),
    (dict(dense="layer,tokens,time_us\nqkv_proj,1,-2\n"), r"dense\.csv:2: time_us: a measured time must be > 0"),
    (dict(dense="layer,tokens,time_us\nqkv_projection,1,2\n"), r"dense\.csv:2: layer: unknown operator "
                                                                 r"'qkv_projection'"),
    (dict(dense="layer,tokens,time_us\nqkv_proj,1,2,3\n"), r"dense\.csv:2: expected 3 fields, got 4"),
    (dict(dense="layer,tokens,time_us\nqkv_proj,1,2\n"), r"dense\.csv: layer: no rows for 'layernorm'"),
    (dict(attention=ATTENTION + "0,0,1,16,11\n"), r"attention\.csv:14: the same point is measured on line 2"),
    (dict(attention=ATTENTION + "0,0,0,16,11\n"), r"attention\.csv:14: prefill_chunk and n_decode"),
    (dict(attention=ATTENTION.replace("0,0,2,32,20", "0,0,2.5,32,20")), r"attention\.csv:5: n_decode: must be a "
                                                                         r"whole number"),
    (dict(per_sequence=None), r"per_sequence\.csv: no such file"),
    (dict(meta=META.replace("intermediate_size: 16", "intermediate_size: 14336")),
     r"meta\.yaml:4: engine_effective\.hf_overrides\.intermediate_size: the profile measured intermediate_size "
     r"14336; the role's model tiny has ffn 16"),
]


@pytest.mark.parametrize("change,message", BAD)
def test_a_bad_profile_folder_is_named_by_file_line_and_field(tmp_path, change, message):
    (tmp_path / "tiny.yaml").write_text(MODEL)
    folder = write_profile(tmp_path / "bad", **change)
    with pytest.raises(ConfigError, match=message):
        cosim.scenario("autoregressive", target={"device": "rtx3090", "model": str(tmp_path / "tiny.yaml"),
                                                 "profile": str(folder)})


VIDUR_MLP = textwrap.dedent("""\
    time_stats.emb.median,time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,time_stats.mlp_down_proj.median,time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers
    0.001,0.002,0.001,0.004,0.0005,0.002,0.0005,2,1,8,16,32,True,1,1
    0.002,0.004,0.002,0.008,0.001,0.004,0.001,2,1,8,16,32,True,32,1
    9,9,9,9,9,9,9,4,4,8,16,32,True,1,1
    """)
VIDUR_ATTENTION = textwrap.dedent("""\
    time_stats.attn_prefill.median,time_stats.attn_decode.median,n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,max_model_len,batch_size,prefill_chunk_size,kv_cache_size,is_prefill,attention_backend
    0.03,,8,2,1,16,1,4096,1,16,0,True,FLASHINFER
    0.04,,8,2,1,16,1,4096,1,16,16,True,FLASHINFER
    0.05,,8,2,1,16,1,4096,1,32,0,True,FLASHINFER
    ,0.010,8,2,1,16,1,4096,1,0,16,False,FLASHINFER
    ,0.014,8,2,1,16,1,4096,1,0,32,False,FLASHINFER
    ,0.012,8,2,1,16,1,4096,2,0,16,False,FLASHINFER
    """)


def test_vidurs_csvs_are_read_for_the_models_shape(tmp_path):
    (tmp_path / "tiny.yaml").write_text(MODEL)
    folder = tmp_path / "vidur"
    folder.mkdir()
    (folder / "mlp.csv").write_text(VIDUR_MLP)
    (folder / "attention.csv").write_text(VIDUR_ATTENTION)
    model = cosim.load_model(tmp_path / "tiny.yaml")
    profile = load_operator_profile(folder, model)
    assert profile.format == "vidur" and profile.head_from_roofline
    # Decode at 24: Vidur's per-layer operators at one token (ms), the embedding once, decode
    # attention halfway between 0.010 and 0.014 ms, 2 layers; and the output head from the
    # roofline: 8 x 32 weights at 2 bytes on the RTX 3090's bandwidth (compute is less).
    gpu = cosim.load_device("rtx3090").gpu
    layer_ms = 0.002 + 0.001 + 0.004 + 0.0005 + 0.002 + 0.0005
    head_ns = 8 * 32 * gpu.weight_bytes_per_param / (gpu.memory_bandwidth_gbps * gpu.memory_efficiency)
    expected_ns = (2 * layer_ms + 0.001 + 2 * 0.012) * 1e6 + head_ns
    (ns,) = gpu_timing("rtx3090", tmp_path / "tiny.yaml", [("decode", 1, 24)], profile=folder)["ns"]
    assert ns == pytest.approx(expected_ns)
    # A token count measured twice (Vidur's real files repeat some) counts as the mean of both.
    (folder / "mlp.csv").write_text(VIDUR_MLP + "0.003,0.006,0.001,0.004,0.0005,0.002,0.0005,2,1,8,16,32,True,1,1\n")
    pre_proj = next(t for t in load_operator_profile(folder, model).terms if t["name"] == "attn_pre_proj")
    assert list(pre_proj["rows"][0]) == [1, pytest.approx((0.002 + 0.006) / 2 * 1e6)]
    wrong = tmp_path / "other.yaml"
    wrong.write_text(MODEL.replace("hidden: 8", "hidden: 16"))
    with pytest.raises(ConfigError, match=r"mlp\.csv: no row for tiny's shape at one GPU \(n_head 2, n_kv_head 1, "
                                          r"n_embd 16"):
        load_operator_profile(folder, cosim.load_model(wrong))
    # Rows of two tensor-parallel workers serve a group of two: its own times, not one GPU's.
    (folder / "mlp.csv").write_text(VIDUR_MLP + "0.007,0.007,0.007,0.007,0.007,0.007,0.007,2,1,8,16,32,True,1,2\n")
    with pytest.raises(ConfigError, match=r"attention\.csv: no prefill row for tiny's shape at 2 GPUs"):
        load_operator_profile(folder, model, 2)
    (folder / "attention.csv").write_text(VIDUR_ATTENTION + "0.09,,8,2,1,16,2,4096,1,16,0,True,FLASHINFER\n"
                                          ",0.05,8,2,1,16,2,4096,1,0,16,False,FLASHINFER\n")
    two = load_operator_profile(folder, model, 2)
    assert {t["name"]: list(t["rows"][0]) for t in two.terms}["attn_pre_proj"] == [1, pytest.approx(0.007e6)]


def test_a_run_that_needs_a_point_beyond_the_profile_stops_naming_it(setup):
    folder, model = setup
    scn = cosim.scenario("autoregressive", target={"device": "rtx3090", "model": model, "profile": str(folder)},
                         batching={"enabled": True, "max_batch": 4, "token_budget": 32, "num_gpu_blocks": 64})
    # 30 prompt tokens then 40 decodes: the decodes reach 69 tokens of KV, past 2 x 32.
    trace = cosim.trace.Trace(cosim.trace.plain_header("t"), [cosim.trace.plain_problem("a", 30, 40, 0.0)])
    with pytest.raises(ConfigError, match=r"attention\.csv: the run needs kv_decode = 65 "):
        cosim.serve.run(scn, trace)


MOE_MODEL = MODEL.replace("name: tiny", "name: tiny-moe").replace("params: 1000", "params: 5000") + """experts: 8
experts_per_token: 2
expert_ffn: 4
"""
# A MoE layer's time (us) is its activated experts x 3, whatever its tokens: only the
# experts axis tells.
MOE = "tokens,activated_experts,time_us\n" + "".join(f"{t},{e},{3 * e}\n" for t in (1, 64) for e in (2, 8))


def test_a_moe_layer_is_timed_at_the_experts_its_tokens_touch(tmp_path):
    model = tmp_path / "tiny-moe.yaml"
    model.write_text(MOE_MODEL)
    dense = "layer,tokens,time_us\n" + "".join(f"{op},{n},{us * (1 if n == 1 else 2)}\n"
                                               for op, us in DENSE.items() for n in (1, 32)
                                               if op not in ("gate_up_proj", "act_fn", "down_proj"))
    folder = write_profile(tmp_path / "profile", dense=dense, meta=META.replace("intermediate_size: 16, ", ""))
    (folder / "moe.csv").write_text(MOE)
    mlp = DENSE["gate_up_proj"] + DENSE["act_fn"] + DENSE["down_proj"]  # not in this bundle
    # A decode: one token touches its 2 experts: 6 us a layer. 24 prefill tokens touch, in
    # expectation, 8 x (1 - (1 - 2/8)^24) = 7.992 of the 8: 23.98 us a layer.
    touched = 8 * (1 - 0.75 ** 24)
    (decode,) = gpu_timing("rtx3090", str(model), [("decode", 1, 24)], profile=folder)["ns"]
    assert decode == pytest.approx((dense_us(1) - 2 * mlp + 2 * 12 + 100 + 5 + 2 * 3 * 2) * 1e3)
    (prefill,) = gpu_timing("rtx3090", str(model), [("prefill", 24, 8)], profile=folder)["ns"]
    dense_24 = dense_us(24) - 2 * mlp * (1 + 23 / 31)
    assert prefill == pytest.approx((dense_24 + 2 * 47.5 + 100 + 5 + 2 * 3 * touched) * 1e3)


def test_a_moe_model_needs_its_moe_table_and_a_dense_one_refuses_it(tmp_path):
    model = tmp_path / "tiny-moe.yaml"
    model.write_text(MOE_MODEL)
    folder = write_profile(tmp_path / "profile", meta=META.replace("intermediate_size: 16, ", ""))
    with pytest.raises(ConfigError, match=r"moe\.csv: no such file; tiny-moe is a mixture-of-experts model"):
        load_operator_profile(folder, cosim.load_model(str(model)))
    (folder / "moe.csv").write_text(MOE)
    dense_model = tmp_path / "tiny.yaml"
    dense_model.write_text(MODEL)
    with pytest.raises(ConfigError, match=r"moe\.csv: a mixture-of-experts layer's times, but the role's model tiny "
                                          r"has no experts"):
        load_operator_profile(folder, cosim.load_model(str(dense_model)))
    (folder / "moe.csv").write_text(MOE + "2,9,27\n")
    with pytest.raises(ConfigError, match=r"moe\.csv:6: tokens >= 1 and activated_experts 1 to 8"):
        load_operator_profile(folder, cosim.load_model(str(model)))


def test_a_tensor_parallel_group_takes_its_pass_and_adds_its_all_reduces(tmp_path):
    from cosim import load_device, load_link, load_model
    from cosim.config.hardware import ParallelConfig
    from cosim.schema import _params
    from cosim._extension import native

    model_file = tmp_path / "tiny.yaml"
    model_file.write_text(MODEL)
    folder = tmp_path / "bundle"
    write_profile(folder / "tp1", meta=None)
    # The tp2 pass: every dense operator half the tp1 pass's (one GPU's shard).
    half = "layer,tokens,time_us\n" + "".join(f"{op},{n},{us * (1 if n == 1 else 2) / 2}\n"
                                              for op, us in DENSE.items() for n in (1, 32))
    write_profile(folder / "tp2", dense=half, meta=None)
    (folder / "meta.yaml").write_text(META + "tp_degrees: [1, 2]\n")
    model = load_model(str(model_file))
    gpu, link = load_device("rtx3090").gpu, load_link("nvlink4_h100")
    par = _params.replaced(ParallelConfig(), tensor_parallel=2)
    profile = load_operator_profile(folder, model, 2).native()
    (ns,) = native().gpu_timing(_params.native(gpu), _params.native(model), profile, [("decode", 1, 24)],
                                _params.native(par), _params.native(link))["ns"]
    # The decode of the first test on the halved dense operators, and two ring all-reduces a
    # layer of one token's 8 BF16 values over two GPUs: 6600 + 2 x 600 + 16 / 360 ns each.
    all_reduce = 6600 + 2 * link.latency_ns + 16 / (link.bandwidth_gbps * link.efficiency)
    assert ns == pytest.approx((dense_us(1) / 2 + 2 * 12 + 100 + 5) * 1e3 + 2 * 2 * all_reduce)
    with pytest.raises(ConfigError, match=r"bundle: no tp4/ pass for tensor_parallel 4 \(the bundle's: tp1, tp2\)"):
        load_operator_profile(folder, model, 4)


def test_a_role_takes_its_groups_pass_and_a_latency_table_stays_on_one_gpu(tmp_path):
    model_file = tmp_path / "tiny.yaml"
    model_file.write_text(MODEL)
    folder = tmp_path / "bundle"
    write_profile(folder / "tp1", meta=None)
    (folder / "meta.yaml").write_text(META)
    target = {"device": "rtx3090", "model": str(model_file), "parallel": {"tensor_parallel": 2},
              "peer_link": "pcie_gen4_x16", "profile": str(folder)}
    with pytest.raises(ConfigError, match=r"bundle: no tp2/ pass for tensor_parallel 2 \(the bundle's: tp1\)"):
        cosim.scenario("autoregressive", target=target)
    write_profile(folder / "tp2", meta=None)
    scn = cosim.scenario("autoregressive", target=target)
    assert scn.target.parallel.tensor_parallel == 2
    table = tmp_path / "lat.csv"
    table.write_text("phase,tokens,context,seconds\ndecode,1,0,0.01\nprefill,16,0,0.02\n")
    with pytest.raises(ConfigError, match=r"tensor_parallel: 2 with a latency CSV, which times one GPU"):
        cosim.scenario("autoregressive", target={**target, "profile": str(table)})
