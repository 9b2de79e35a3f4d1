import json

import pytest

from cosim import trace
from cosim.cli import main
from cosim.trace import Draft, Refine, RsdRecordError

WORDS = lambda text: len(text.split())  # noqa: E731 - an independent, checkable token count


def record(**fields):
    base = {
        "idx": 7,
        "question": "What is one plus one ?",           # 6 words
        "code": ["We add .\n\nOne plus one is two .\n\nSo the answer is 2", "other sample"],
        "score": [True, False],
        "token_counts": [14, 0, 0],
        "turn_info": [[0, 1], [1, 1], [2, 1]],
        "reward": [0.9, 0.8, 0.95],
    }
    base.update(fields)
    return base


def write(tmp_path, *records):
    path = tmp_path / "rsd.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_accept_only_record(tmp_path):
    imported = trace.import_rsd(write(tmp_path, record()), "math500", count=WORDS)
    [p] = imported.trace.problems
    assert p.id == "math500-7" and p.answer_correct is True
    assert p.prompt_tokens == 30 + 6  # chat template + question words
    assert p.events == (Draft(1, 3, 0.9, True), Draft(2, 6, 0.8, True), Draft(3, 5, 0.95, True))
    assert not imported.trace.header.backtracking


def test_reject_refine_record_splits_the_discarded_total_by_the_refined_lengths(tmp_path):
    rec = record(turn_info=[[0, 1], [1, 2], [2, 2]], reward=[0.9, 0.2, 0.5], token_counts=[3, 11, 9])
    [p] = trace.import_rsd(write(tmp_path, rec), "math500", count=WORDS).trace.problems
    # Refined steps are 6 and 5 words: 9 discarded tokens = 1 + 1 each, and 7 shared 6:5
    # (3.82 and 3.18 -> 4 and 3 by largest remainder): 5 and 4.
    assert p.events == (
        Draft(1, 3, 0.9, True),
        Draft(2, 5, 0.2, False), Refine(2, 6, None, True),
        Draft(3, 4, 0.5, False), Refine(3, 5, None, True),
    )
    s = trace.summarize(p, TraceHeaderRSD)
    assert s.discarded_draft_tokens == 9 and s.final_steps == (3, 6, 5)


TraceHeaderRSD = trace.TraceHeader(backtracking=False)


def test_a_mixed_file_round_trips_and_replays(tmp_path):
    import cosim

    recs = [record(idx=i) for i in range(3)] + [record(idx=9, turn_info=[[0, 2], [1, 1], [2, 1]],
                                                       reward=[0.1, 0.9, 0.9], token_counts=[11, 3, 4])]
    imported = trace.import_rsd(write(tmp_path, *recs), "gsm8k", count=WORDS)
    saved = imported.trace.save(tmp_path / "t.jsonl")
    loaded = trace.load(saved)
    assert loaded.problems == imported.trace.problems
    assert loaded.header.metadata["discarded_draft_lengths"].startswith("discarded draft tokens")
    result = cosim.simulate(cosim.scenario("heteroreason", 1), loaded)
    assert result.summary["problems"] == 4


@pytest.mark.parametrize("fields,message", [
    ({"turn_info": [[0, 1], [1, 1]]}, r"turn_info: 2 turns but the greedy response has 3 steps"),
    ({"reward": [0.9, 0.8]}, r"reward: 2 rewards for 3 draft steps"),
    ({"reward": [0.9, 0.3, 0.95]}, r"turn_info\[1\] and reward\[1\] disagree: model 1 .* reward 0.3 is <"),
    ({"turn_info": [[0, 1], [1, 2], [2, 1]], "reward": [0.9, 0.3, 0.9], "token_counts": [8, 6, 0]},
     r"token_counts\[2\]: 0 discarded draft tokens cannot cover 1 rejected"),
    ({"token_counts": [14, 0, 5]}, r"token_counts\[2\]: 5 discarded draft tokens but no rejected step"),
    ({"token_counts": [14, -1, 0]}, r"token_counts: expected \[accepted, target, discarded\]"),
    ({"turn_info": [[0, 1], [1, 3], [2, 1]]}, r"turn_info\[1\]: expected \[step, 1 or 2\]"),
    ({"reward": [0.9, "high", 0.9]}, r"reward\[1\]: expected a score in \[0, 1\]"),
])
def test_inconsistent_records_name_the_record_and_field(tmp_path, fields, message):
    path = write(tmp_path, record(), record(**fields))
    with pytest.raises(RsdRecordError, match=r"rsd\.jsonl:2: " + message):
        trace.import_rsd(path, "math500", count=WORDS)


def test_missing_fields_and_skipping(tmp_path):
    bad = record()
    del bad["reward"]
    path = write(tmp_path, record(idx=1), bad, record(idx=3))
    with pytest.raises(RsdRecordError, match=r"rsd\.jsonl:2: reward: missing field"):
        trace.import_rsd(path, "math500", count=WORDS)
    imported = trace.import_rsd(path, "math500", count=WORDS, skip_bad=True)
    assert [p.id for p in imported.trace.problems] == ["math500-1", "math500-3"]
    assert len(imported.skipped) == 1 and "reward: missing field" in imported.skipped[0]
    assert imported.trace.header.metadata["skipped_records"] == 1


def test_command_line_import(tmp_path, capsys):
    path = write(tmp_path, record(idx=1), record(idx=2))
    out = tmp_path / "t.jsonl"
    assert main(["trace", "import-rsd", str(path), "--dataset", "math500", "--out", str(out)]) == 0
    assert "wrote 2 problems" in capsys.readouterr().out
    assert len(trace.load(out)) == 2
