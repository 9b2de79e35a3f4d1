"""The split-decoding system (docs/system.md, "Split decoding"): a draft device drafting
tokens for the target GPU, the host relaying drafts and verdicts over both links. A lone
request's timeline and its draft device's energy worked by hand from the FPGA and GPU
formulas and the links' legs; what it refuses."""

import pytest
import yaml

import cosim
from cosim import ConfigError, devices, load_device, load_model
from cosim.config.scenario import build_scenario, load_scenario
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem

from handmodel import Fpga, Link
from test_spec_decode import hand_pass
from test_vllm_scheduler import TINY_GPU, TINY_MODEL

TARGET, TARGET_MODEL, DRAFT_MODEL = "rtx3090", "qwen2.5-7b-instruct", "qwen2.5-0.5b"


def scenario(tmp_path, **extra):
    (tmp_path / "all.yaml").write_text("kind: acceptance\nname: every draft kept\nper_draft: 1.0\ndrafts: 8\n")
    data = {"system": "split-decoding",
            "draft": {"device": "u280", "model": DRAFT_MODEL, "overrides": {"accelerator.clock": "200 MHz"}},
            "target": {"device": TARGET, "model": TARGET_MODEL},
            "speculation": {"draft_tokens": 4, "acceptance": "all.yaml"}, **extra}
    return build_scenario(data, source=str(tmp_path / "s.yaml"))


def test_a_lone_request_is_its_prefills_drafts_relays_and_verifications(tmp_path):
    # 200 prompt tokens, 11 out: the target's prefill gives the first; two rounds of four
    # drafts (every one kept) give 5 each. The U280 prefills the prompt from when it arrives
    # over its Gen3 link; the target's first token goes to it (a leg on each link); a round
    # is four FPGA tokens, the drafts to the target, a verification of five positions, and,
    # after the first, the kept count and the token back.
    prompt, out = 200, 11
    per = cosim.simulate(scenario(tmp_path), Trace(plain_header("t"), [plain_problem("r", prompt, out)])).per_problem
    fpga = Fpga("u280", DRAFT_MODEL, clock_mhz=200)
    gen3, gen4 = Link("pcie_gen3_x16"), Link("pcie_gen4_x16")
    target = load_model(TARGET_MODEL)
    prefill = hand_pass(target, prompt, 0, False, device=TARGET)
    draft_ready = gen3.ns(prompt * 4) + fpga.prefill(prompt, 0)
    start = max(gen4.ns(4) + gen3.ns(4), draft_ready - prefill)
    rounds = 0.0
    for ctx, back in ((200, True), (205, False)):
        rounds += sum(fpga.token(ctx + j) for j in range(4)) + gen3.ns(16) + gen4.ns(16)
        rounds += hand_pass(target, 5, ctx, True, device=TARGET)
        rounds += gen4.ns(68) + gen3.ns(68) if back else 0.0
    overhead = load_device(TARGET).gpu.request_overhead_ns
    assert per.column("ttft_s")[0] == pytest.approx((overhead + prefill) * 1e-9, rel=1e-9)
    latency = overhead + prefill + start + rounds
    assert per.column("latency_s")[0] == pytest.approx(latency * 1e-9, rel=1e-9)
    # The draft device: its prefill and its eight tokens busy, idle the rest of the request.
    u280 = load_device("u280")
    watts = devices.kind_of(u280).state_powers(scenario(tmp_path).draft.device, load_model(DRAFT_MODEL))
    busy = fpga.prefill(prompt, 0) + sum(fpga.token(c + j) for c in (200, 205) for j in range(4))
    joules = (watts["prefill_w"] * fpga.prefill(prompt, 0) + watts["decode_w"] * (busy - fpga.prefill(prompt, 0))
              + watts["idle_w"] * (latency - busy)) * 1e-9
    assert per.column("energy_j_draft")[0] == pytest.approx(joules, rel=1e-6)


def test_the_fpga_drafts_for_less_energy_a_token_than_the_target_alone():
    trace = cosim.trace.generate("math500", 4, seed=1)
    split = cosim.simulate(load_scenario("split-decoding-u280"), trace).summary
    alone = cosim.simulate(load_scenario("target-alone"), trace).summary
    assert split["latency_s"] < alone["latency_s"]
    assert split["energy_j_per_token"] < alone["energy_j_per_token"]
    assert split["energy_j_draft"] > 0


def test_a_written_scenario_reloads(tmp_path):
    scn = scenario(tmp_path)
    written = tmp_path / "w.yaml"
    written.write_text(yaml.safe_dump(scn.reloadable()))
    again = load_scenario(str(written))
    assert again.speculation == scn.speculation and again.draft.device == scn.draft.device


@pytest.mark.parametrize("extra,message", [
    ({"prm": {"device": "rtx3090"}}, r"the split-decoding system has a draft device beside each target GPU; it has "
                                     r"no prm"),
    ({"cluster": {"draft": {"devices": 2}}}, r"cluster\.draft: the split-decoding system has no draft pool; its "
                                             r"cluster is cluster.target.devices"),
])
def test_what_it_refuses(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=message):
        scenario(tmp_path, **extra)


@pytest.mark.parametrize("speculation,message", [
    ({"proposer": "ngram"}, r"proposer: the draft device drafts with the draft role's model"),
    ({"acceptance": "eagle3-llama-3.1-8b-mtbench"}, r"measured with proposer eagle; a draft device drafts with a "
                                                    r"draft model"),
])
def test_its_proposer_is_the_draft_device(tmp_path, speculation, message):
    (tmp_path / "all.yaml").write_text("kind: acceptance\nname: x\nper_draft: 1.0\ndrafts: 8\n")
    with pytest.raises(ConfigError, match=message):
        build_scenario({"system": "split-decoding", "target": {"device": TARGET},
                        "speculation": {"acceptance": "all.yaml", **speculation}}, source=str(tmp_path / "s.yaml"))


def test_batched_the_board_drafts_for_each_request_in_turn_after_the_step(tmp_path):
    # vLLM's engine on a GPU whose every step takes its 1 ms forward overhead (the tiny GPU of
    # tests/test_vllm_scheduler.py), the U280 drafting two tokens a pass, every one kept. A and
    # B (2 prompt tokens, 7 out) prefill together in step 1; then the board gets both prompts
    # in one crossing of its link, prefills and drafts for A, then for B, and the four drafts
    # cross to the target. Steps 2 and 3 verify them (3 tokens each); after step 2 the kept
    # counts and tokens cross to the board first. After step 3 both are done.
    (tmp_path / "gpu.yaml").write_text(TINY_GPU)
    (tmp_path / "model.yaml").write_text(TINY_MODEL)
    scn = scenario(tmp_path, target={"device": "gpu.yaml", "model": "model.yaml"},
                   speculation={"draft_tokens": 2, "acceptance": "all.yaml"},
                   batching={"enabled": True, "max_batch": 2, "token_budget": 16, "block_size": 4,
                             "num_gpu_blocks": 32})
    trace = Trace(plain_header("test"), [plain_problem("a", 2, 7, 0.0), plain_problem("b", 2, 7, 0.0)])
    served = cosim.serve.run(scn, trace)
    fpga = Fpga("u280", DRAFT_MODEL, clock_mhz=200)
    gen3, gen4 = Link("pcie_gen3_x16"), Link("pcie_gen4_x16")
    assert scn.target.link == cosim.load_link("pcie_gen4_x16")
    first = gen3.ns(2 * 2 * 4) + 2 * (fpga.prefill(2, 0) + fpga.token(2) + fpga.token(3)) + gen3.ns(16) + gen4.ns(16)
    second = gen4.ns(2 * 68) + gen3.ns(2 * 68) + 2 * (fpga.token(5) + fpga.token(6)) + gen3.ns(16) + gen4.ns(16)
    per = served.per_request
    assert [float(v) for v in per.column("ttft_s")] == pytest.approx([(1e6 + first) * 1e-9] * 2, rel=1e-9)
    assert [float(v) for v in per.column("latency_s")] == pytest.approx([(3e6 + first + second) * 1e-9] * 2,
                                                                         rel=1e-9)
    assert [int(v) for v in per.column("kept_draft_tokens")] == [4, 4]
    # The board's energy: its share of each step's window (prefilling, drafting, idle), and
    # idle between; the pool's is all of it.
    assert set(served.summary.pools) == {"draft", "target"}
    assert sum(per.column("energy_j_draft")) <= served.summary.pools["draft"].energy_j
    assert all(float(v) > 0 for v in per.column("energy_j_draft"))


def test_batched_one_decoder_a_board_caps_the_requests_served():
    # Every request needs its board's decoder for its share of the drafting and prefills, one
    # request at a time: two boards serve at most 2 / (mean board time a request) a second.
    trace = cosim.trace.generate("math500", 60, seed=4).in_memory()
    scn = load_scenario("split-decoding-u280").with_values({"cluster.target.devices": 2, "batching.enabled": True})
    served = cosim.serve.run(scn, trace, rate=5.0, seed=1)
    per = served.per_request
    board_s = sum(per.column("busy_s_draft")) / len(per.column("busy_s_draft"))
    assert board_s > 0
    assert served.summary.throughput_req_s <= 2 / board_s * 1.05
    assert served.summary.pools["draft"].utilisation <= 1.0 + 1e-9
