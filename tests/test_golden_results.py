"""Every built-in scenario gives, to the nanosecond and the joule's last bit, the per-problem
(or per-request) results stored in tests/data/golden_results.json. The stored file was
recorded by scripts/record_golden.py before the devices were given TLM-2.0 sockets; moving
the host's calls onto transactions must not move a single result. Its drawn traces hold no
backtrack and no prefetch reuse, so tests/data/golden_cases.json adds a hand-written
problem that has both, with the prefetch cache on and off, checked against the timing
formulas of tests/handmodel.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import record_golden  # noqa: E402
import cosim  # noqa: E402
from cosim.schema import COLUMNS  # noqa: E402
from handmodel import Gpu  # noqa: E402

STORED = json.loads(record_golden.OUT.read_text())


def test_the_stored_results_cover_every_built_in_scenario():
    from cosim.config.scenario import builtin_scenarios

    assert sorted(STORED) == builtin_scenarios()
    assert all(len(v["rows"]) > 0 for v in STORED.values())


@pytest.mark.parametrize("name", sorted(STORED))
def test_a_built_in_scenario_gives_its_stored_results(name):
    now = json.loads(json.dumps(record_golden.results(name)))
    assert now["kind"] == STORED[name]["kind"]
    assert len(now["rows"]) == len(STORED[name]["rows"])
    declared = {c.name for c in COLUMNS}
    for i, (row, stored) in enumerate(zip(now["rows"], STORED[name]["rows"])):
        # A column declared after the file was recorded adds to the rows; the stored ones keep
        # their values exactly.
        assert set(stored) <= set(row) and set(row) - set(stored) <= declared, (name, i)
        assert {k: row[k] for k in stored} == stored, (name, i)


CASES = json.loads(record_golden.CASES_OUT.read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hand_written_case_gives_its_stored_results(name):
    scenario, config = name.split("/config")
    now = json.loads(json.dumps(record_golden.rows(
        cosim.simulate(cosim.load_scenario(scenario, int(config)), record_golden.backtrack_reuse_trace()).per_problem)))
    assert len(now) == len(CASES[name]["rows"])
    for row, stored in zip(now, CASES[name]["rows"]):
        assert {k: row[k] for k in stored} == stored, name


@pytest.mark.parametrize("config,target", [(1, "qwen2.5-math-7b"), (2, "qwen2.5-math-1.5b")])
def test_the_stored_backtrack_reuses_the_prefetch_saving_what_the_formulas_say(config, target):
    on, = CASES[f"heteroreason-u280-300/config{config}"]["rows"]
    off, = CASES[f"heteroreason-noprefetch/config{config}"]["rows"]
    assert on["backtracks_per_problem"] == off["backtracks_per_problem"] == 1
    reused = on["reused_tokens"]
    assert reused > 0 and off["reused_tokens"] == 0
    # The backtrack returns to step 2's start (the prompt and step 1's 40 tokens); with the
    # cache the target prefills the tokens its interrupted run had written there instead of
    # decoding them again, and nothing else differs between the two designs.
    start = record_golden.PROMPT + 40
    gpu = Gpu("rtx3090", target)
    saved_ns = sum(gpu.decode(start + j) for j in range(reused)) - gpu.prefill(reused, start)
    assert saved_ns > 0
    assert off["latency_s"] - on["latency_s"] == pytest.approx(saved_ns * 1e-9, abs=10e-9)
    assert on["final_tokens"] == off["final_tokens"]
