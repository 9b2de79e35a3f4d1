"""Trace format version 2: per-problem arrival times, read and written beside version 1."""

import json
import math
from importlib import resources

import jsonschema
import numpy as np
import pytest

from cosim import ConfigError, trace
from cosim._lazy import LazySequence
from cosim.trace import Problem, TraceError, TraceHeader, TrajectoryBuilder

HEADER_V1 = ('{"format":"cosim-trace","version":1,"accept_threshold":0.7,"backtrack_threshold":0.7,'
             '"max_backtracks":5,"backtracking":true}')
HEADER_V2 = HEADER_V1.replace('"version":1', '"version":2')
DRAFT = {"type": "draft", "step": 1, "tokens": 10, "score": 0.9, "accepted": True}


def line(pid, **fields):
    return json.dumps({"id": pid, "dataset": "d", "prompt_tokens": 100, **fields, "events": [DRAFT]})


def write(tmp_path, *lines):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def schema(version):
    text = (resources.files("cosim") / "data" / "schema" / f"trace-v{version}.schema.json").read_text()
    return jsonschema.Draft202012Validator(json.loads(text))


def test_a_version_2_file_gives_each_problem_its_arrival(tmp_path):
    path = write(tmp_path, HEADER_V2, line("a", arrival_s=0), line("b", arrival_s=0.25), line("c", arrival_s=0.25),
                 line("d", arrival_s=7))
    loaded = trace.load(path)
    assert [p.arrival_s for p in loaded] == [0.0, 0.25, 0.25, 7.0]
    assert loaded.arrivals().tolist() == [0.0, 0.25, 0.25, 7.0]
    assert loaded.version() == 2


def test_a_version_1_file_reads_as_before_and_carries_no_arrivals(tmp_path):
    loaded = trace.load(write(tmp_path, HEADER_V1, line("a"), line("b")))
    assert [p.arrival_s for p in loaded] == [None, None]
    assert loaded.arrivals() is None and loaded.version() == 1
    written = loaded.save(tmp_path / "again.jsonl").read_text()
    assert json.loads(written.splitlines()[0])["version"] == 1 and "arrival_s" not in written


BAD_V2 = [
    ("missing", [line("a", arrival_s=0), line("b")], r":3: arrival_s: missing field"),
    ("negative", [line("a", arrival_s=-0.5)], r":2: arrival_s: must be in \[0, 1e\+06\] seconds, got -0.5"),
    ("text", [line("a", arrival_s="1 s")], r":2: arrival_s: expected a finite number of seconds, got '1 s'"),
    ("boolean", [line("a", arrival_s=True)], r":2: arrival_s: expected a finite number of seconds, got True"),
    ("NaN", ['{"id":"a","dataset":"d","prompt_tokens":100,"arrival_s":NaN,"events":[%s]}' % json.dumps(DRAFT)],
     r":2: arrival_s: expected a finite number of seconds, got nan"),
    ("beyond the limit", [line("a", arrival_s=2e6)], r":2: arrival_s: must be in \[0, 1e\+06\] seconds"),
    ("decreasing", [line("a", arrival_s=1), line("b", arrival_s=3), line("c", arrival_s=2)],
     r":4: arrival_s: 2.0 s is before the previous problem's 3.0 s \(line 3\); arrivals must not decrease"),
]


@pytest.mark.parametrize("name,lines,message", BAD_V2, ids=[b[0] for b in BAD_V2])
def test_bad_arrivals_name_the_file_line_and_field(tmp_path, name, lines, message):
    with pytest.raises(TraceError, match=r"t\.jsonl" + message):
        trace.load(write(tmp_path, HEADER_V2, *lines))


def test_a_version_1_file_may_not_carry_arrivals(tmp_path):
    with pytest.raises(TraceError, match=r"t\.jsonl:2: arrival_s: a version 1 trace carries no arrival times"):
        trace.load(write(tmp_path, HEADER_V1, line("a", arrival_s=1.0)))


def test_each_version_matches_its_own_schema_and_not_the_other(tmp_path):
    arrived = trace.generate("gsm8k", 20, seed=2).with_arrivals(np.arange(20) * 0.5)
    path = arrived.save(tmp_path / "v2.jsonl")
    rows = [json.loads(t) for t in path.read_text().splitlines()]
    for row in rows:
        schema(2).validate(row)
    assert not schema(1).is_valid(rows[0]) and not schema(1).is_valid(rows[1])  # version 2, arrival_s
    without = dict(rows[1])
    del without["arrival_s"]
    assert not schema(2).is_valid(without)


class CountingProblems(LazySequence):
    """A base trace that counts how often its problems are read."""

    def __init__(self, problems):
        self.problems, self.reads = problems, 0

    def __len__(self):
        return len(self.problems)

    def _item(self, index):
        self.reads += 1
        return self.problems[index]


def test_with_arrivals_reads_no_problem_until_asked():
    base = CountingProblems([TrajectoryBuilder(f"p{i}", 50).accept(10).build() for i in range(4)])
    arrived = trace.Trace(TraceHeader(), base).with_arrivals([0.0, 1.0, 1.5, 4.0])
    assert base.reads == 0 and len(arrived) == 4
    assert arrived.problems[2] == Problem("p2", base.problems[2].dataset, 50, base.problems[2].events, None, 1.5)
    assert base.reads == 1
    assert arrived.arrivals().tolist() == [0.0, 1.0, 1.5, 4.0] and base.reads == 1  # the times, not the problems


def test_with_arrivals_replaces_earlier_arrivals_and_keeps_the_base():
    base = trace.generate("math500", 3, seed=4)
    once = base.with_arrivals([1, 2, 3])
    twice = once.with_arrivals([0, 0, 9])
    assert twice.problems.base is base.problems
    assert [p.arrival_s for p in twice] == [0.0, 0.0, 9.0]
    assert [dict(vars(p), arrival_s=None) for p in twice] == [vars(p) for p in base]


BAD_TIMES = [
    ([0, 1], r"times_s: 2 arrival times for 3 problems"),
    ([0, -1, 2], r"times_s\[1\]: an arrival time is a finite number of seconds in \[0, 1e\+06\], got -1.0"),
    ([0, math.nan, 2], r"times_s\[1\]: .* got nan"),
    ([0, math.inf, 2], r"times_s\[1\]: .* got inf"),
    ([0, 3, 2], r"times_s\[2\]: 2.0 s is before times_s\[1\] = 3.0 s"),
    ([[0, 1, 2]], r"times_s: expected one dimension"),
    (["0", "1", "2"], r"times_s: expected real numbers"),
    ([True, True, True], r"times_s: expected real numbers"),
    (None, r"times_s: expected one dimension"),
]


@pytest.mark.parametrize("times,message", BAD_TIMES)
def test_with_arrivals_names_the_bad_time(times, message):
    with pytest.raises(ConfigError, match=message):
        trace.generate("math500", 3, seed=4).with_arrivals(times)


def test_numpy_times_of_any_real_type_are_taken():
    arrived = trace.generate("math500", 3, seed=4).with_arrivals(np.array([1, 2, 5], dtype=np.int32))
    assert arrived.arrivals().dtype == np.float64 and arrived.arrivals().tolist() == [1.0, 2.0, 5.0]


def test_a_saved_arrival_trace_loads_with_the_same_problems_and_times(tmp_path):
    arrived = trace.generate("olympiadbench", 30, seed=5).with_arrivals(np.linspace(0, 29, 30) ** 1.5)
    loaded = trace.load(arrived.save(tmp_path / "a.jsonl"))
    assert loaded.problems == list(arrived.problems)
    assert np.array_equal(loaded.arrivals(), arrived.arrivals())


def test_arrivals_over_a_trace_file_can_replace_that_file(tmp_path):
    path = trace.generate("math500", 4, seed=1).save(tmp_path / "t.jsonl")
    arrived = trace.load(path).with_arrivals([0, 1, 2, 3])
    arrived.save(path)  # read whole before the file is replaced
    assert trace.load(path).arrivals().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_trace_mixing_problems_with_and_without_arrivals_is_refused(tmp_path):
    a = TrajectoryBuilder("a", 50).accept(10).build()
    b = TrajectoryBuilder("b", 50).accept(10).build()
    mixed = trace.Trace(TraceHeader(), [Problem(**{**vars(a), "arrival_s": 1.0}), b])
    with pytest.raises(TraceError, match=r"problem 'b': arrival_s: missing; the first problem carries an arrival time"):
        mixed.save(tmp_path / "m.jsonl")
    with pytest.raises(TraceError, match=r"problem 'b' carries no arrival_s while others do"):
        mixed.arrivals()
    falling = trace.Trace(TraceHeader(), [Problem(**{**vars(a), "arrival_s": 2.0}),
                                          Problem(**{**vars(b), "arrival_s": 1.0})])
    with pytest.raises(TraceError, match=r"problem 'b': arrival_s: 1.0 s is before the previous problem's 2.0 s"):
        falling.save(tmp_path / "f.jsonl")
    assert not (tmp_path / "m.jsonl").exists() and not (tmp_path / "f.jsonl").exists()


def test_the_arrivals_are_part_of_the_fingerprint():
    base = trace.generate("math500", 5, seed=1)
    one = base.with_arrivals([0, 1, 2, 3, 4])
    assert one.fingerprint() == base.with_arrivals([0, 1, 2, 3, 4]).fingerprint()
    assert one.fingerprint() != base.fingerprint()
    assert one.fingerprint() != base.with_arrivals([0, 1, 2, 3, 5]).fingerprint()


def test_validate_names_the_version_and_the_arrival_span(tmp_path):
    from conftest import run_cli

    path = trace.generate("math500", 3, seed=1).with_arrivals([2.0, 2.5, 6.0]).save(tmp_path / "v2.jsonl")
    proc = run_cli("trace", "validate", path, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "valid, 3 problems (version 2, with backtracking, arriving over 4 s)" in proc.stdout


def test_the_ray_executor_sends_an_arrival_trace_read_from_a_file_whole(tmp_path, monkeypatch):
    import itertools
    import sys
    from types import SimpleNamespace

    import cosim
    from cosim._sweep._executors import ray_results

    sent, refs = [], itertools.count()
    fake_ray = SimpleNamespace(  # records what would travel to the cluster; runs nothing
        is_initialized=lambda: True,
        remote=lambda **options: (lambda fn: SimpleNamespace(remote=lambda *args: next(refs))),
        put=lambda obj: sent.append(obj) or obj,
        wait=lambda pending, num_returns: (pending[:1], pending[1:]),
        get=lambda ref: {"status": "ok"},
    )
    monkeypatch.setitem(sys.modules, "ray", fake_ray)
    path = trace.generate("math500", 3, seed=1).save(tmp_path / "t.jsonl")
    arrived = trace.load(path).with_arrivals([0.0, 1.0, 2.0])
    rows = list(ray_results(cosim.scenario("heteroreason"), arrived, [{"p": 1}], 1, None))
    travelled = sent[1]
    assert rows == [{"status": "ok"}]
    assert isinstance(travelled.problems, list) and travelled.problems == list(arrived.problems)
    assert travelled.arrivals().tolist() == [0.0, 1.0, 2.0]
