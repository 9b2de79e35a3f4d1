"""A live run's errors name the policy's hook that failed (also ProfilePolicy.decide, which
the run reaches through verdict and, to size step-ahead work, through draft and refine),
and the files the run writes as the user knows them, never a hidden file behind them."""

import re

import pytest

import cosim
from cosim.live import ProfilePolicy, TracePolicy
from conftest import run_cli

POLICIES = '''
from cosim.live import ProfilePolicy


class NoVerdict(ProfilePolicy):
    def decide(self, view, score):
        raise ValueError("no verdict today")
'''


def test_an_error_in_decide_names_decide_and_the_hook_that_asked(tmp_path):
    (tmp_path / "policies.py").write_text(POLICIES)
    # The GPU baseline drafts nothing ahead: decide is first asked by the verdict on step 1.
    proc = run_cli("run", "gpu-baseline", "--problems", "2", "--quiet", "--out", "r",
                   "--policy", "policies.py:NoVerdict", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "cosim: error: policy NoVerdict.decide (asked by verdict), problem 'math500-00000', step 1: "
        "ValueError: no verdict today"]


class Yes(ProfilePolicy):
    def decide(self, view, score):
        return True  # not (kept, score)


def test_decide_answering_other_than_kept_and_score_is_named():
    trace = cosim.trace.generate("math500", 2, seed=1).in_memory()
    with pytest.raises(cosim.PolicyError, match=r"^policy Yes\.decide \(asked by verdict\), problem "
                                                r"'math500-00000', step 1: answer \(kept, score\), got True$"):
        cosim.cosimulate(cosim.load_scenario("gpu-baseline"), Yes(trace), trace)


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_write_of_the_made_trace_names_the_trace_not_its_hidden_part(tmp_path):
    rows = tmp_path / "rows"
    rows.mkdir()
    (rows / ".trace.jsonl.part").symlink_to("/dev/full")  # every write to it fails: no space
    trace = cosim.trace.generate("math500", 3, seed=1).in_memory()
    with pytest.raises(cosim.OutputError) as raised:
        cosim.cosimulate(cosim.load_scenario("heteroreason-u280-300"), TracePolicy(trace), trace, rows_to=rows)
    assert str(raised.value) == f"{rows / 'trace.jsonl'}: writing failed: No space left on device"
    assert not re.search(r"\.part|partial", str(raised.value))
