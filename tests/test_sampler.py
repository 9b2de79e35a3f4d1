"""The sampler's sort: where requests sample with top-p or top-k by sorting each sampled
row's logits (vLLM's PyTorch path), a pass costs sampler_logit_ns x the vocabulary a
row more: a decode samples one row, a verification of k drafts k + 1, a prefill none, and a
proposer none (it takes its drafts' argmax)."""

import dataclasses

import pytest

import cosim
from cosim import load_device, load_model
from cosim._extension import native
from cosim.config.hardware import ParallelConfig, load_link
from cosim.schema import _params
from cosim.config.scenario import build_scenario
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from cosim.validation import _mlenergy
from test_speculative_decoding import profile

S = 0.25  # ns a logit: an arbitrary cost, large enough to see


def with_sampler(device, s):
    d = load_device(device)
    return dataclasses.replace(d, gpu=_params.replaced(d.gpu, sampler_logit_ns=s))


def step_ns(device, steps):
    par = ParallelConfig()
    return native().gpu_batch_ns(_params.native(device.gpu), _params.native(load_model("llama-3.1-8b")),
                                 _params.native(par), _params.native(load_link("nvlink4_h100")), steps, False)[0]


@pytest.mark.parametrize("steps, rows", [([(64, 900, 0, 0)], 64), ([(1, 300, 0, 0)], 1), ([(0, 0, 512, 0)], 0),
                                         ([(32, 700, 256, 0)], 32)])
def test_a_step_pays_the_sort_of_each_row_it_samples(steps, rows):
    vocab = load_model("llama-3.1-8b").vocab
    plain = step_ns(load_device("h100-sxm"), steps)
    sorted_ = step_ns(with_sampler("h100-sxm", S), steps)
    assert sorted_ - plain == pytest.approx(rows * vocab * S, rel=1e-9, abs=1e-6)


def _scenario(system, tmp_path, s, **extra):
    profile(tmp_path, "per_draft: 1.0\ndrafts: 3\n")
    data = {"system": system, "target": {"device": "h100-sxm", "model": "llama-3.1-8b"}, **extra}
    scn = build_scenario(data, source=str(tmp_path / "s.yaml"))
    return scn.with_values({"target.device.gpu.sampler_logit_ns": s}) if s else scn


def test_a_lone_request_sorts_once_a_token_after_its_first(tmp_path):
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 41)])
    vocab = load_model("llama-3.1-8b").vocab
    plain = cosim.simulate(_scenario("autoregressive", tmp_path, 0.0), trace).per_problem
    sorted_ = cosim.simulate(_scenario("autoregressive", tmp_path, S), trace).per_problem
    assert sorted_.column("ttft_s")[0] == plain.column("ttft_s")[0]  # the prefill samples nothing here
    assert sorted_.column("latency_s")[0] - plain.column("latency_s")[0] == pytest.approx(40 * vocab * S * 1e-9,
                                                                                          rel=1e-6)


def test_a_verification_sorts_each_position_and_the_head_none(tmp_path):
    # Every draft kept: 20 tokens after the first in five passes of three drafts, each
    # verification sampling four positions; the EAGLE head's passes take their argmax.
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 21)])
    vocab = load_model("llama-3.1-8b").vocab
    spec = {"speculation": {"acceptance": "acceptance.yaml", "draft_tokens": 3}}
    plain = cosim.simulate(_scenario("speculative-decoding", tmp_path, 0.0, **spec), trace).per_problem
    sorted_ = cosim.simulate(_scenario("speculative-decoding", tmp_path, S, **spec), trace).per_problem
    assert sorted_.column("latency_s")[0] - plain.column("latency_s")[0] == pytest.approx(
        5 * 4 * vocab * S * 1e-9, rel=1e-6)


def test_the_benchmarks_sort_is_the_measured_one_scaled_by_bandwidth():
    # vLLM PR 40376: 6.150 ms for 512 rows of 131,072 logits on a B200; the H100 takes it at
    # the B200's rate times the ratio of their memory bandwidths.
    b200, h100 = (load_device(d).gpu.memory_bandwidth_gbps for d in ("b200", "h100-sxm"))
    per_logit = 6.150e6 / (512 * 131072) * b200 / h100
    assert _mlenergy.benchmark_device(load_device("h100-sxm")).gpu.sampler_logit_ns == pytest.approx(per_logit)
    assert 0.175 < per_logit < 0.317  # the range the estimate declares
    # A device that sets its own keeps it.
    own = with_sampler("h100-sxm", 0.1)
    assert _mlenergy.benchmark_device(own).gpu.sampler_logit_ns == 0.1
