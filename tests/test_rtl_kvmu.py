"""The KVMU's Verilog (rtl/kvmu.v) under cocotb on Icarus Verilog: the directed and
randomised tests of rtl/tests/kvmu_tb.py, at two builds of the block, and a broken build
that the suite must catch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl" / "tests"))

from cocotb_suite import TESTS, missing_tools, run_suite  # noqa: E402

pytestmark = pytest.mark.skipif(missing_tools() is not None, reason=f"RTL tests need {missing_tools()}")


def test_the_suite_passes_on_the_block(tmp_path):
    outcome = run_suite(tmp_path)
    assert set(outcome) == set(TESTS)
    assert {name: message for name, message in outcome.items() if message} == {}


def test_a_narrow_deep_build_matches_at_the_top_of_its_pointer_range(tmp_path):
    # 6-bit pointers with the KV cache filling all of them (63 tokens), three marks deep.
    outcome = run_suite(tmp_path, ptr_w=6, max_depth=3, testcase="random_stream_matches_the_reference_every_cycle",
                        env={"KVMU_RANDOM_CAPACITY": "63", "KVMU_RANDOM_SEED": "7"})
    assert outcome == {"random_stream_matches_the_reference_every_cycle": None}


def test_a_block_whose_accept_keeps_valid_fails_the_suite(tmp_path):
    outcome = run_suite(tmp_path, defines={"KVMU_FAULT_ACCEPT_KEEPS_VALID": 1})
    failed = {name for name, message in outcome.items() if message}
    # The first accept of each sequence exposes it: valid stays where it was.
    for name in ("hand_worked_sequence", "every_mode_transition", "depth_two_keeps_the_marks_in_order",
                 "random_stream_matches_the_reference_every_cycle"):
        assert name in failed
        assert "valid_ptr: rtl" in outcome[name]
    # Tests without an accept cannot see it.
    assert "reset_returns_to_the_empty_state" not in failed
