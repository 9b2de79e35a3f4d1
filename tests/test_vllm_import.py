"""Importing a vLLM benchmark request log, and TTFT / TPOT / end-to-end latency as vLLM's
benchmark defines them, against hand computations; bad logs get a one-line error naming
the file, line and field, and nothing is written."""

import json
import math

import numpy as np
import pytest

from cosim import ConfigError
from cosim.errors import TraceError
from cosim.cli import main
from cosim._token_metrics import token_latency
from cosim.trace import load
from cosim.trace._plain import shared_prefix_tokens
from cosim.trace._vllm_log import import_vllm_requests, read_request_log

LINES = [
    # Out of order on purpose: the third line arrives first.
    {"request_id": "a", "input_toks": 100, "output_toks": 5, "arrival_time": 1000.5, "queued_ts": 20.6,
     "scheduled_ts": 20.6, "first_token_ts": 21.1, "last_token_ts": 23.1},
    {"request_id": "b", "input_toks": 40, "output_toks": 1, "arrival_time": 1001.0, "queued_ts": 21.0,
     "scheduled_ts": 21.1, "first_token_ts": 21.2, "last_token_ts": 21.2},
    {"request_id": "c", "input_toks": 7, "output_toks": 3, "arrival_time": 1000.0, "queued_ts": 20.0,
     "scheduled_ts": 21.5, "first_token_ts": 22.0, "last_token_ts": 24.0},
]


def write(path, records, raw=None):
    path.write_text(raw if raw is not None else "".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_log_becomes_plain_requests_in_arrival_order_relative_to_the_first(tmp_path):
    log = write(tmp_path / "requests.jsonl", LINES)
    trace = import_vllm_requests(log)
    assert [p.id for p in trace.problems] == ["c", "a", "b"]
    assert [p.prompt_tokens for p in trace.problems] == [7, 100, 40]
    assert [p.arrival_s for p in trace.problems] == pytest.approx([0.0, 0.5, 1.0])
    for problem, output in zip(trace.problems, (3, 5, 1)):
        (event,) = problem.events  # one accepted step as long as the output
        assert (event.type, event.tokens, event.accepted) == ("draft", output, True)
    assert shared_prefix_tokens(trace.header) == 0
    # Every prompt begins with the shared prefix: at most the shortest prompt, c's 7 tokens on line 3.
    assert shared_prefix_tokens(import_vllm_requests(log, shared_prefix_tokens=7).header) == 7
    with pytest.raises(TraceError, match=r"shared_prefix_tokens: 8 tokens, but the prompt of .*requests.jsonl:3 "
                                         r"\(request_id 'c'\) has 7"):
        import_vllm_requests(log, shared_prefix_tokens=8)
    engine = import_vllm_requests(log, clock="engine")
    assert [p.arrival_s for p in engine.problems] == pytest.approx([0.0, 0.6, 1.0])  # queued_ts - 20.0


def test_measured_latencies_are_vllms_benchmark_definitions(tmp_path):
    measured = read_request_log(write(tmp_path / "requests.jsonl", LINES)).measured()
    # From queued_ts: TTFT a 0.5, b 0.2, c 2.0; end-to-end a 2.5, b 0.2, c 4.0.
    # TPOT only for outputs above one token: a (23.1 - 21.1) / 4 = 0.5, c (24 - 22) / 2 = 1.0.
    assert measured.requests == 3
    assert measured.ttft_mean_s == pytest.approx(2.7 / 3)
    assert measured.ttft_median_s == pytest.approx(0.5)
    # Sorted TTFTs 0.2, 0.5, 2.0; the 90th percentile at rank 0.9 x 2 = 1.8: 0.5 + 0.8 x 1.5.
    assert measured.ttft_p90_s == pytest.approx(1.7)
    assert measured.ttft_p99_s == pytest.approx(0.5 + 0.98 * 1.5)
    assert (measured.tpot_mean_s, measured.tpot_median_s) == pytest.approx((0.75, 0.75))
    assert measured.tpot_p95_s == pytest.approx(0.5 + 0.95 * 0.5)
    assert measured.e2el_mean_s == pytest.approx(6.7 / 3)
    assert measured.e2el_median_s == pytest.approx(2.5)


def test_token_latency_refuses_what_is_not_a_run():
    with pytest.raises(ConfigError, match=r"first_token_s\[1\] = 0.5 is before start_s\[1\] = 1.0"):
        token_latency([0, 1], [0.5, 0.5], [1, 2], [2, 2])
    with pytest.raises(ConfigError, match=r"end_s\[0\]: expected a finite number, got nan"):
        token_latency([0], [0.5], [math.nan], [2])
    single = token_latency([0, 0], [1, 2], [1, 2], [1, 1])
    assert single.tpot_mean_s is None and single.ttft_mean_s == 1.5


def test_the_cli_imports_and_says_what_vllm_measured(tmp_path, capsys):
    log = write(tmp_path / "requests.jsonl", LINES)
    out = tmp_path / "t.jsonl"
    assert main(["trace", "import", str(log), "--clock", "engine", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3 requests, 147 prompt and 9 output tokens, arriving over 1.000 s (engine clock)" in printed
    assert "TTFT       900.0     500.0" in printed
    loaded = load(out)
    assert [p.id for p in loaded.problems] == ["c", "a", "b"]
    assert loaded.header.metadata["kind"] == "plain-requests" and loaded.header.metadata["clock"] == "engine"


BAD = [
    ("{not json\n", r":1: not valid JSON"),
    ('{"request_id": "a", "input_toks": 5, "arrival_time": 1.0}\n', r":1: output_toks: missing field"),
    ('{"request_id": "a", "input_toks": 5, "output_toks": 0, "arrival_time": 1.0}\n',
     r":1: output_toks: must be between 1 and"),
    ('{"request_id": "a", "input_toks": 5.5, "output_toks": 2, "arrival_time": 1.0}\n',
     r":1: input_toks: expected a whole number of tokens, got 5.5"),
    ('{"request_id": "a", "input_toks": 5, "output_toks": 2, "arrival_time": NaN}\n',
     r":1: arrival_time: expected a finite number of seconds, got NaN"),
    ('{"request_id": "a", "input_toks": 5, "output_toks": 2, "arrival_time": -3}\n',
     r":1: arrival_time: a time cannot be negative, got -3"),
    (json.dumps(LINES[0]) + "\n" + json.dumps({**LINES[1], "last_token_ts": 20.0}) + "\n",
     r":2: last_token_ts: 20.0 is before first_token_ts 21.2"),
    (json.dumps(LINES[0]) + "\n" + json.dumps({k: v for k, v in LINES[1].items() if k != "first_token_ts"}) + "\n",
     r":2: first_token_ts: missing field \(vLLM's timestamps come together\)"),
    (json.dumps(LINES[0]) + "\n" + json.dumps(LINES[0]) + "\n", r":2: request_id: 'a' is also on line 1"),
    ("[1, 2]\n", r":1: expected a JSON object"),
    ("\n\n", r"no request in the log"),
]


@pytest.mark.parametrize("raw,message", BAD)
def test_a_bad_log_is_named_by_file_line_and_field(tmp_path, raw, message, capsys):
    log = write(tmp_path / "requests.jsonl", None, raw)
    with pytest.raises(TraceError, match=message):
        import_vllm_requests(log)
    out = tmp_path / "t.jsonl"
    assert main(["trace", "import", str(log), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "requests.jsonl" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_log_without_timestamps_imports_on_the_client_clock_only(tmp_path):
    bare = [{k: r[k] for k in ("request_id", "input_toks", "output_toks", "arrival_time")} for r in LINES]
    log = write(tmp_path / "requests.jsonl", bare)
    assert len(import_vllm_requests(log)) == 3
    with pytest.raises(TraceError, match=r"requests\.jsonl:1: the engine clock needs vLLM's timestamps"):
        import_vllm_requests(log, clock="engine")
    with pytest.raises(TraceError, match=r"the measured latencies needs vLLM's timestamps"):
        read_request_log(log).measured()
    assert np.all(read_request_log(log).arrivals_s() >= 0)
