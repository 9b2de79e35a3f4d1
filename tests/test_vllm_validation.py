"""The RTX 4090 vLLM serving run: what vLLM measured, computed from its request log as its
benchmark does, against the vLLM column of LLMServingSim's published summary; and the
replay's predictions within the bounds docs/validation.md states."""

import re

import pytest

from cosim.validation import _vllm_serving as case
from cosim.trace import read_request_log

# LLMServingSim's summary names its rows "TTFT Mean", "TPOT P99", "Latency Median", ...
SUMMARY_ROW = re.compile(r"^(TTFT|TPOT|Latency) (Mean|Median|P90|P95|P99)\s+([\d.]+)\s+([\d.]+)\s+")


def published():
    """{(quantity, statistic): vLLM's measured ms} from the shipped summary."""
    out = {}
    for line in (case.folder() / "vllm" / "llmservingsim_summary.txt").read_text().splitlines():
        m = SUMMARY_ROW.match(line)
        if m:
            quantity = {"TTFT": "ttft", "TPOT": "tpot", "Latency": "e2el"}[m[1]]
            out[quantity, m[2].lower()] = float(m[3])
    return out


def test_the_logs_latencies_are_the_ones_vllm_reported():
    measured = read_request_log(case.folder() / "vllm" / "requests.jsonl").measured()
    rows = published()
    assert len(rows) == 15
    for (quantity, statistic), ms in rows.items():
        # The summary prints one decimal.
        assert measured.value(quantity, statistic) * 1e3 == pytest.approx(ms, abs=0.051), (quantity, statistic)


def test_the_replay_is_within_the_stated_errors():
    rows = {(r["case"], r["quantity"]): r for r in case.rows()}
    error = {key: r["predicted"] / r["measured"] - 1 for key, r in rows.items()}
    profile, roofline, ampere = (f"{case.CASE} ({v})" for v in case.VARIANTS)
    for variant, tpot, ttft in ((profile, 0.05, 0.10), (roofline, 0.15, 0.25), (ampere, 0.15, 0.25)):
        for statistic in ("mean", "p99"):
            assert abs(error[variant, f"TPOT {statistic}"]) <= tpot, (variant, statistic)
            assert abs(error[variant, f"TTFT {statistic}"]) <= ttft, (variant, statistic)
    # The measured side is the log's, the same in every variant.
    assert rows[profile, "TTFT mean"]["measured"] == pytest.approx(65456.57, abs=0.01)


def test_the_replay_uses_vllms_settings_from_the_run():
    settings = case.vllm_settings()
    assert settings == {"enabled": True, "max_batch": 256, "token_budget": 2048, "block_size": 16,
                        "num_gpu_blocks": 2588, "gpu_memory_utilization": 0.9, "prefix_caching": True,
                        "async_scheduling": True}
    scn = case.scenario("profile")
    assert scn.system == "autoregressive" and scn.target.model.name == "Llama-3.1-8B"
    assert scn.target.device.name == "RTX 4090" and scn.target.profile.endswith("profile")
