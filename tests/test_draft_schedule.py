"""Hugging Face's heuristic schedule of drafts a pass (speculation.draft_schedule:
heuristic_transient):
two more after a pass that kept every draft, one fewer (at least one) after any other, up to
the acceptance profile's positions. A request's passes, drafts and kept drafts are set
against an independent walk of the schedule written here; a request's latency is worked by
hand from its passes; the places it cannot follow a request's passes are refused."""

import pytest

import cosim
from cosim import ConfigError, load_device, load_model
from cosim.config._speculation import eagle_head
from cosim.config.scenario import build_scenario
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem

from test_spec_decode import hand_pass

DEVICE, MODEL, PROMPT = "h100-sxm", "llama-3.1-8b", 300


def scenario(tmp_path, rate, system="speculative-decoding", positions=6, start=2, **extra):
    rates = f"per_draft: {rate}\ndrafts: {positions}" if rate is not None else \
        "rates: [1.0" + ", 0.0" * (positions - 1) + "]"
    (tmp_path / "acc.yaml").write_text(f"kind: acceptance\nname: fixed\n{rates}\n")
    return build_scenario({"system": system, "target": {"device": DEVICE, "model": MODEL},
                           "speculation": {"acceptance": "acc.yaml", "draft_tokens": start,
                                           "draft_schedule": "heuristic_transient"},
                           **extra}, source=str(tmp_path / "s.yaml"))


def walk(output, kept_of, start=2, most=6):
    """The schedule's passes after the prefill's token: each drafts min(k, tokens left - 1)
    and keeps ``kept_of(drafts)`` of them; k then grows by two if it kept every draft, else
    shrinks by one (at least one), at most ``most``."""
    k, left, passes = start, output - 1, []
    while left > 0:
        drafts = min(k, left - 1)
        kept = kept_of(drafts)
        passes.append((drafts, kept))
        if drafts > 0:
            k = min(k + 2, most) if kept == drafts else max(1, k - 1)
        left -= kept + 1
    return passes


def every(drafts):
    return drafts


def none(drafts):
    return 0


def first_only(drafts):
    return min(drafts, 1)


def run(scn, output):
    trace = Trace(plain_header("test"), [plain_problem("r0", PROMPT, output, 0.0)])
    return cosim.serve.run(scn, trace).per_request


@pytest.mark.parametrize("rate, kept_of", [(1.0, every), (0.0, none), (None, first_only)])
@pytest.mark.parametrize("start", [2, 5])
@pytest.mark.parametrize("output", [2, 7, 40, 101])
def test_a_requests_passes_follow_the_schedule(tmp_path, rate, kept_of, start, output):
    # None: the first draft always kept, the others never (rates 1, 0, 0, ...), so a pass
    # of one draft keeps it all and grows k while a longer one shrinks it.
    per = run(scenario(tmp_path, rate, start=start), output)
    passes = walk(output, kept_of, start=start)
    assert int(per.column("verify_passes")[0]) == len(passes)
    assert int(per.column("drafted_tokens")[0]) == sum(d for d, _ in passes)
    assert int(per.column("kept_draft_tokens")[0]) == sum(k for _, k in passes)


def test_a_requests_latency_is_its_prefill_and_the_scheduled_rounds(tmp_path):
    # Every draft kept, 30 tokens: rounds of 2, 4, 6 and 6 drafts, then 7 tokens left: 6 drafts.
    per = run(scenario(tmp_path, 1.0), 30)
    target, head = load_model(MODEL), eagle_head(load_model(MODEL))
    ns, ctx, fresh = 0.0, PROMPT, PROMPT
    for drafts, _ in walk(30, every):
        ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False)
        ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False) for j in range(1, drafts))
        ns += hand_pass(target, drafts + 1, ctx, True)
        ctx, fresh = ctx + drafts + 1, drafts + 1
    first = load_device(DEVICE).gpu.request_overhead_ns + hand_pass(target, PROMPT, 0, False)
    assert per.column("latency_s")[0] == pytest.approx((first + ns) * 1e-9, rel=1e-9)


def test_split_decoding_follows_the_schedule_too(tmp_path):
    scn = scenario(tmp_path, 1.0, system="split-decoding", draft={"device": "u280", "model": "qwen2.5-0.5b"},
                   target={"device": "rtx3090", "model": "qwen2.5-math-7b"})
    passes = walk(60, every)
    per = run(scn, 60)
    assert int(per.column("verify_passes")[0]) == len(passes)
    assert int(per.column("drafted_tokens")[0]) == sum(d for d, _ in passes)


def test_where_the_schedule_cannot_follow_a_request_it_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"speculation\.draft_schedule: the vLLM engine drafts a fixed number"):
        scenario(tmp_path, 0.7, batching={"enabled": True})
    with pytest.raises(ConfigError, match=r"speculation\.draft_schedule: a step-level system's runs are cut short"):
        build_scenario({"system": "heteroreason", "toggles": {"target_speculation": True, "step_ahead": False},
                        "speculation": {"draft_schedule": "heuristic_transient"}})
    with pytest.raises(ConfigError, match=r"draft_schedule: one of constant, heuristic_transient"):
        build_scenario({"system": "speculative-decoding", "speculation": {"draft_schedule": "adaptive"}})
