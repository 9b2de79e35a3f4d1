"""Every kind of bad input, through the command line: a non-zero exit, a message
that names the file, line and field, and no traceback."""

import json

import pytest

from conftest import SCENARIOS, run_cli

GOOD_SCENARIO = (SCENARIOS / "heteroreason_v80.yaml").read_text()  # no overrides of its own
HEADER = ('{"format":"cosim-trace","version":1,"accept_threshold":0.7,"backtrack_threshold":0.7,'
          '"max_backtracks":5,"backtracking":true}')


def draft(step, tokens=10, score=0.9, accepted=True):
    return {"type": "draft", "step": step, "tokens": tokens, "score": score, "accepted": accepted}


def problem(events, prompt=100):
    return json.dumps({"id": "p", "dataset": "d", "prompt_tokens": prompt, "events": events})


def draft_override(line):
    return GOOD_SCENARIO.replace("model: qwen2.5-0.5b\n", f"model: qwen2.5-0.5b\n  overrides:\n    {line}\n", 1)


SCENARIO_CASES = [
    ("syntax error", GOOD_SCENARIO.replace("device: v80", "device: [v80"), r"s.yaml:\d+: YAML syntax error"),
    ("unknown key at depth", draft_override("hbm.colour: 3"), r"s.yaml:\d+: draft.overrides.hbm.colour"),
    ("wrong type", GOOD_SCENARIO + "toggles:\n  shadow_sync: 3\n", r"s.yaml:\d+: toggles.shadow_sync: expected true or false"),
    ("missing unit", draft_override("accelerator.clock: 300"), r"s.yaml:\d+: .*clock: missing unit"),
    ("wrong unit", draft_override("accelerator.clock: 300 GB/s"), r"clock: unit 'GB/s' is not a frequency"),
    ("negative size", draft_override("hbm.capacity: -8 GiB"), r"s.yaml:\d+: draft.overrides.hbm.capacity: must be > 0, got '-8 GiB'"),
    ("zero clock", draft_override("accelerator.clock_mhz: 0"), r"clock_mhz: must be > 0, got 0"),
    ("NaN", draft_override("hbm.efficiency: .nan"), r"efficiency: must be a finite number"),
    ("model beyond HBM", draft_override("hbm.capacity: 100 MB"),
     r"fpga.hbm: region 'weights' needs 494032768 bytes .* holds 100000000 bytes"),
]


@pytest.mark.parametrize("name,text,message", SCENARIO_CASES, ids=[c[0] for c in SCENARIO_CASES])
def test_bad_scenarios(tmp_path, name, text, message):
    (tmp_path / "s.yaml").write_text(text)
    proc = run_cli("run", "s.yaml", "--problems", "2", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert __import__("re").search(message, proc.stderr), proc.stderr


TRACE_CASES = [
    ("truncated line", problem([draft(1)])[:-7], r"t.jsonl:2: not valid JSON"),
    ("unknown version", HEADER.replace('"version":1', '"version":7'), r"t.jsonl:1: version: unknown trace version 7"),
    ("unknown event", problem([{"type": "think", "step": 1}]), r"t.jsonl:2: events\[0\].type: unknown event"),
    ("broken step order", problem([draft(2)]), r"t.jsonl:2: events\[0\].step: step 2 out of order"),
    ("backtrack without failed refinement", problem([draft(1), {"type": "backtrack", "to_step": 1}]),
     r"t.jsonl:2: events\[1\].type: a backtrack must follow a failed refinement"),
    ("score outside [0, 1]", problem([draft(1, score=2)]), r"t.jsonl:2: events\[0\].score: must be in \[0, 1\]"),
    ("tokens <= 0", problem([draft(1, tokens=0)]), r"t.jsonl:2: events\[0\].tokens: must be >= 1"),
    ("absurdly large", problem([draft(1)], prompt=10**12), r"t.jsonl:2: prompt_tokens: .* absurdly large"),
    ("context beyond the window", problem([draft(1, tokens=4000)], prompt=500),
     r"problem 'p', events\[0\] .*4500 tokens, beyond the 4096-token window"),
]


@pytest.mark.parametrize("name,line,message", TRACE_CASES, ids=[c[0] for c in TRACE_CASES])
def test_bad_traces(tmp_path, name, line, message):
    lines = [line] if name == "unknown version" else [HEADER, line]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    proc = run_cli("run", SCENARIOS / "heteroreason_u280_200.yaml", "--trace", "t.jsonl", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert __import__("re").search(message, proc.stderr), proc.stderr


def test_missing_files_and_unwritable_output(tmp_path):
    for args, message in ((["run", "nope.yaml"], "nope.yaml: no such file"),
                          (["trace", "validate", "nope.jsonl"], "nope.jsonl: cannot read"),
                          (["run", SCENARIOS / "gpu_baseline.yaml", "--out", "/proc/x"], "--out /proc/x")):
        proc = run_cli(*args, cwd=tmp_path, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
