import json
from importlib import resources

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import trace
from cosim.trace import Backtrack, Draft, Refine, TraceError, TraceHeader, TrajectoryBuilder

HEADER = ('{"format":"cosim-trace","version":1,"accept_threshold":0.7,"backtrack_threshold":0.7,'
          '"max_backtracks":5,"backtracking":true}')


def problem_line(events, **fields):
    obj = {"id": "p", "dataset": "d", "prompt_tokens": 100, **fields, "events": events}
    return json.dumps(obj)


def draft(step, tokens=10, score=0.9, accepted=True):
    return {"type": "draft", "step": step, "tokens": tokens, "score": score, "accepted": accepted}


def refine(step, tokens=10, score=0.9, accepted=True):
    return {"type": "refine", "step": step, "tokens": tokens, "score": score, "accepted": accepted}


def write(tmp_path, *lines):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def schema():
    return json.loads((resources.files("cosim") / "data" / "schema" / "trace-v1.schema.json").read_text())


def test_round_trip_is_byte_exact_and_every_line_matches_the_schema(tmp_path):
    original = trace.generate("olympiadbench", 200, seed=3)
    first = original.save(tmp_path / "a.jsonl")
    loaded = trace.load(first)
    assert loaded.problems == original.problems and loaded.header == original.header
    second = loaded.save(tmp_path / "b.jsonl")
    assert first.read_bytes() == second.read_bytes()
    validator = jsonschema.Draft202012Validator(schema())
    for line in first.read_text().splitlines():
        validator.validate(json.loads(line))
    assert any(isinstance(e, Backtrack) for p in loaded for e in p.events)  # the sample exercises backtracks


MALFORMED = [
    ("bad JSON", problem_line([draft(1)])[:-9], r":2: not valid JSON .*truncated line"),
    ("missing field", json.dumps({"id": "p", "dataset": "d", "events": [draft(1)]}), r":2: prompt_tokens: missing field"),
    ("wrong type", problem_line([draft(1, tokens="ten")]), r":2: events\[0\]\.tokens: expected an integer, got \"ten\""),
    ("step out of order", problem_line([draft(1), draft(3)]),
     r":2: events\[1\]\.step: step 3 out of order: the algorithm is at step 2"),
    ("backtrack without failed refinement", problem_line([draft(1), draft(2), {"type": "backtrack", "to_step": 1}]),
     r":2: events\[2\]\.type: a backtrack must follow a failed refinement"),
    ("score above 1", problem_line([draft(1, score=1.5)]), r":2: events\[0\]\.score: must be in \[0, 1\], got 1.5"),
    ("score below 0", problem_line([draft(1, score=-0.1, accepted=False), refine(1)]),
     r":2: events\[0\]\.score: must be in \[0, 1\], got -0.1"),
    ("zero tokens", problem_line([draft(1, tokens=0)]), r":2: events\[0\]\.tokens: must be >= 1, got 0"),
    ("negative tokens", problem_line([draft(1, tokens=-5)]), r":2: events\[0\]\.tokens: must be >= 1, got -5"),
    ("absurd tokens", problem_line([draft(1, tokens=10**9)]), r":2: events\[0\]\.tokens: 1000000000 is absurdly large"),
    ("unknown event", problem_line([{"type": "verify", "step": 1}]),
     r":2: events\[0\]\.type: unknown event \"verify\""),
    ("unknown field", problem_line([draft(1)], colour="red"), r":2: colour: unknown field"),
    ("accepted flag mismatch", problem_line([draft(1, score=0.65, accepted=True)]),
     r":2: events\[0\]\.accepted: accepted is true but score 0.65 is < the acceptance threshold 0.7"),
    ("refine without rejected draft", problem_line([draft(1), refine(2)]),
     r":2: events\[1\]\.type: a refine must follow a rejected draft or a backtrack"),
    ("trace ends before refinement", problem_line([draft(1), draft(2, score=0.2, accepted=False)]),
     r":2: events: the trace ends before step 2 is refined"),
    ("empty events", problem_line([]), r":2: events: expected a non-empty list"),
    ("backtrack to the wrong step", problem_line([draft(1), draft(2), draft(3, score=0.1, accepted=False),
                                                  refine(3, score=0.2, accepted=False),
                                                  {"type": "backtrack", "to_step": 1}]),
     r":2: events\[4\]\.to_step: to_step must be 2"),
]


@pytest.mark.parametrize("name,line,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_each_malformed_line_gets_its_own_error_with_file_and_line(tmp_path, name, line, message):
    path = write(tmp_path, HEADER, line)
    with pytest.raises(TraceError, match=r"t\.jsonl" + message):
        trace.load(path)


def test_header_problems(tmp_path):
    with pytest.raises(TraceError, match=r":1: version: unknown trace version 3 \(this cosim reads versions 1 and 2\)"):
        trace.load(write(tmp_path, HEADER.replace('"version":1', '"version":3')))
    with pytest.raises(TraceError, match=r":1: version: unknown trace version true"):
        trace.load(write(tmp_path, HEADER.replace('"version":1', '"version":true')))
    with pytest.raises(TraceError, match=r":1: format: expected 'cosim-trace'"):
        trace.load(write(tmp_path, problem_line([draft(1)])))
    with pytest.raises(TraceError, match=r":3: id: problem 'p' already appears on line 2"):
        trace.load(write(tmp_path, HEADER, problem_line([draft(1)]), problem_line([draft(1)])))
    with pytest.raises(TraceError, match=r"empty trace"):
        trace.load(write(tmp_path, ""))


def test_backtrack_cap_and_kept_refinement_past_it(tmp_path):
    header = HEADER.replace('"max_backtracks":5', '"max_backtracks":1')
    events = [draft(1), draft(2, score=0.1, accepted=False), refine(2, score=0.2, accepted=False),
              {"type": "backtrack", "to_step": 1}, refine(1), draft(2, score=0.1, accepted=False)]
    # The cap is used up: a refinement scoring 0.2 must now be kept ...
    ok = write(tmp_path, header, problem_line(events + [refine(2, score=0.2, accepted=True)]))
    assert trace.load(ok).problems[0].events[-1].accepted
    # ... and calling it failed contradicts the cap, with both values named.
    bad = write(tmp_path, header, problem_line(events + [refine(2, score=0.2, accepted=False)]))
    with pytest.raises(TraceError, match=r"events\[6\]\.accepted: accepted is false but score 0.2 vs threshold 0.7 "
                                         r"means true \(no backtrack is possible .*1 of 1 backtracks used\)"):
        trace.load(bad)


def test_forward_only_traces_keep_refinements_unscored(tmp_path):
    header = HEADER.replace('"backtracking":true', '"backtracking":false')
    good = write(tmp_path, header, problem_line([draft(1, score=0.3, accepted=False), refine(1, score=None)]))
    assert trace.load(good).problems[0].events[1].score is None
    bad = write(tmp_path, header, problem_line([draft(1, score=0.3, accepted=False), refine(1, score=0.9)]))
    with pytest.raises(TraceError, match=r"does not score refinements"):
        trace.load(bad)


# A hand-written problem through every path: accept, reject-refine, a failed refinement and
# two backtracks (one to the step before), then accepts.
MIXED_EVENTS = (
    Draft(1, 64, 0.9, True),
    Draft(2, 50, 0.3, False), Refine(2, 70, 0.9, True),
    Draft(3, 36, 0.9, True),
    Draft(4, 44, 0.3, False), Refine(4, 38, 0.3, False), Backtrack(3),
    Refine(3, 41, 0.3, False), Backtrack(2),
    Refine(2, 66, 0.9, True),
    Draft(3, 30, 0.9, True), Draft(4, 28, 0.9, True), Draft(5, 90, 0.9, True),
)


def test_chain_and_counts_of_a_hand_worked_problem():
    problem = trace.Problem("mixed", "d", 120, MIXED_EVENTS)
    s = trace.summarize(problem)
    assert s.final_steps == (64, 66, 30, 28, 90)
    assert s.drafted_tokens == 64 + 50 + 36 + 44 + 30 + 28 + 90
    assert s.accepted_draft_tokens == 64 + 36 + 30 + 28 + 90
    assert s.discarded_draft_tokens == 50 + 44
    assert s.drafted_tokens == s.accepted_draft_tokens + s.discarded_draft_tokens
    assert s.target_tokens == 70 + 38 + 41 + 66 and s.kept_target_tokens == 70 + 66
    assert s.reverted_tokens == 36 + 70  # step 3 (draft) and step 2 (first refinement) dropped
    assert s.backtracks == 2 and s.rejected_drafts == 2 and s.failed_refinements == 2
    assert s.acceptance_rate == pytest.approx(248 / (248 + 215))


def test_builder_writes_exactly_the_events_by_hand():
    built = (
        TrajectoryBuilder("mixed", prompt_tokens=120)
        .accept(64)
        .reject(50).refine(70)
        .accept(36)
        .reject(44).refine_fails(38).backtrack()
        .refine_fails(41).backtrack()
        .refine(66)
        .accept(30).accept(28).accept(90)
        .build()
    )
    assert built.events == MIXED_EVENTS


def test_builder_refuses_what_the_algorithm_cannot_do():
    from cosim import ConfigError

    with pytest.raises(ConfigError, match="a backtrack must follow a failed refinement"):
        TrajectoryBuilder("x", 10).accept(5).backtrack()
    with pytest.raises(ConfigError, match="the trace ends before step 1 is refined"):
        TrajectoryBuilder("x", 10).reject(5).build()
    with pytest.raises(ConfigError, match="score 0.3"):
        TrajectoryBuilder("x", 10).reject(5).refine_fails(5)  # step 1 cannot backtrack: it must be kept


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_fail_only_with_the_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "t.jsonl"
    path.write_bytes(HEADER.encode() + b"\n" + data)
    try:
        trace.load(path)
    except TraceError as exc:
        assert "t.jsonl" in str(exc)


def test_trace_header_defaults_follow_the_algorithm():
    assert TraceHeader() == TraceHeader(0.7, 0.7, 5, True)
