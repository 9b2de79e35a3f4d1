"""Traces of any length are streamed, not held: a generated trace draws each
problem when read, a loaded trace reads each problem from its file when read,
the engine takes them a chunk at a time, and results are kept as columns."""

import os

import numpy as np
import pytest

import cosim
import cosim.engine._engine_run as engine_run
from cosim.errors import ConfigError
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder


def test_a_generated_trace_draws_the_same_problems_on_every_read():
    trace = cosim.trace.generate("gsm8k", 40, seed=3)
    first = list(trace.problems)
    assert list(trace.problems) == first
    assert trace.problems[7] == first[7] and trace.problems[-1] == first[-1]
    assert trace.problems[5:9] == first[5:9]
    # Problem i depends on (seed, i) alone: a longer trace starts with the same problems.
    assert list(cosim.trace.generate("gsm8k", 60, seed=3).problems)[:40] == first
    with pytest.raises(IndexError):
        trace.problems[40]


def test_a_loaded_trace_reads_each_problem_from_the_file_and_notices_a_changed_file(tmp_path):
    trace = cosim.trace.generate("math500", 30, seed=2)
    path = trace.save(tmp_path / "t.jsonl")
    loaded = cosim.trace.load(path)
    assert len(loaded.problems) == 30
    assert loaded.problems == list(trace.problems)
    assert loaded.problems[29] == trace.problems[29]
    assert list(loaded.lines()) == list(trace.lines())  # and so its save round-trips byte for byte
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n")
    with pytest.raises(cosim.trace.TraceError, match="changed since it was loaded"):
        loaded.problems[0]


def test_results_do_not_depend_on_how_the_trace_is_chunked(monkeypatch):
    scn = cosim.scenario("heteroreason", 1)
    trace = cosim.trace.generate("olympiadbench", 12, seed=4)
    whole = cosim.simulate(scn, trace)
    monkeypatch.setattr(engine_run, "CHUNK_PROBLEMS", 5)  # the worker is forked after this
    seen = []
    chunked = cosim.simulate(scn, trace, progress=seen.append)
    # Progress comes as each later chunk is asked for, with the problems finished so far
    # (one slot takes a chunk once the last one is done): 5, 10, then the last 2.
    assert seen == [5, 10, 12]
    assert chunked.per_problem == whole.per_problem
    assert chunked.summary == whole.summary


def test_a_bad_problem_past_the_first_chunk_is_still_named(monkeypatch):
    monkeypatch.setattr(engine_run, "CHUNK_PROBLEMS", 2)
    problems = []
    for i, tokens in enumerate([40, 30, 50, 20, 40_000]):
        problems.append(TrajectoryBuilder(f"p{i}", 100).accept(tokens).build())
    with pytest.raises(ConfigError, match=r"problem 'p4', events\[0\].*40100 tokens"):
        cosim.simulate(cosim.scenario("heteroreason", 1), Trace(TraceHeader(), problems))


def test_per_problem_rows_are_made_from_columns():
    result = cosim.simulate(cosim.scenario("heteroreason", 1), cosim.trace.generate("gsm8k", 6, seed=1))
    rows = list(result.per_problem)
    assert len(rows) == 6 and result.per_problem == rows and rows != result.per_problem[:5]
    latency = result.per_problem.column("latency_s")
    assert [r["latency_s"] for r in rows] == latency.tolist()
    # Each row's own identity: goodput is its final tokens over its latency.
    for r in rows:
        assert r["goodput_tok_s"] == r["final_tokens"] / r["latency_s"]
        assert isinstance(r["final_tokens"], int) and isinstance(r["latency_s"], float)
    with pytest.raises(KeyError, match="not a per-problem metric"):
        result.per_problem.column("nope")
    # As a list behaves: numpy integers index it, a tuple is not equal to it.
    assert result.per_problem[np.int64(2)] == rows[2] and result.per_problem != tuple(rows)
    # Columns are read-only numbers; 'not known' is NaN there and None in a row.
    accuracy = result.per_problem.column("accuracy")
    assert accuracy.dtype == np.float64 and set(accuracy.tolist()) <= {0.0, 1.0}
    assert all(np.isnan(result.per_problem.column("speedup"))) and rows[0]["speedup"] is None
    with pytest.raises(ValueError):
        latency[0] = 0.0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")
def test_generate_then_simulate_does_not_hold_the_trace(monkeypatch):
    # The worker must see only what the feed hands it: problems are drawn one chunk at a time.
    drawn = []
    real = cosim.trace.GeneratedProblems.__iter__

    def counting(self):
        for problem in real(self):
            drawn.append(problem.id)
            yield problem

    monkeypatch.setattr(cosim.trace.GeneratedProblems, "__iter__", counting)
    result = cosim.simulate(cosim.scenario("gpu-baseline", 1), cosim.trace.generate("gsm8k", 3, seed=1))
    assert len(result.per_problem) == 3
    assert drawn == []  # drawn in the worker, not in the parent


def test_a_run_that_fails_midway_leaves_an_earlier_waveform_as_it_was(tmp_path, monkeypatch):
    scn = cosim.scenario("heteroreason", 1)
    good = Trace(TraceHeader(), [TrajectoryBuilder("a", 100).accept(40).build()])
    path = tmp_path / "run.vcd"
    cosim.simulate(scn, good, vcd=path)
    before = path.read_bytes()
    monkeypatch.setattr(engine_run, "CHUNK_PROBLEMS", 1)
    bad = Trace(TraceHeader(), [TrajectoryBuilder("a", 100).accept(40).build(),
                                TrajectoryBuilder("b", 100).accept(40_000).build()])
    with pytest.raises(ConfigError, match="problem 'b'"):
        cosim.simulate(scn, bad, vcd=path)
    assert path.read_bytes() == before
    # The earlier waveform and its save file, and no partial file left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.gtkw", "run.vcd"]


def test_trace_errors_found_in_the_worker_keep_their_class(tmp_path):
    trace = cosim.trace.generate("gsm8k", 3, seed=1)
    path = trace.save(tmp_path / "t.jsonl")
    loaded = cosim.trace.load(path)
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(cosim.trace.TraceError, match="changed since it was loaded"):
        cosim.simulate(cosim.scenario("gpu-baseline", 1), loaded)


def test_a_trace_from_a_pipe_is_held_and_one_saved_over_its_own_file_stays_usable(tmp_path):
    trace = cosim.trace.generate("gsm8k", 4, seed=2)
    path = trace.save(tmp_path / "t.jsonl")
    read, write = os.pipe()
    with os.fdopen(write, "w", encoding="utf-8") as handle:
        handle.write(path.read_text(encoding="utf-8"))
    piped = cosim.trace.load(f"/dev/fd/{read}")
    os.close(read)
    assert isinstance(piped.problems, list) and piped.problems == list(trace.problems)
    loaded = cosim.trace.load(path)
    loaded.save(path)
    assert loaded.problems == list(trace.problems)
    assert cosim.trace.load(path).problems == list(trace.problems)


def test_a_trace_rewritten_in_place_while_it_is_read_is_an_error(tmp_path):
    # Long enough that the reader has not buffered its end when the file changes.
    path = cosim.trace.generate("gsm8k", 300, seed=1).save(tmp_path / "t.jsonl")
    loaded = cosim.trace.load(path)
    problems = iter(loaded.problems)
    next(problems)
    # The same file, inode and size, with one problem's id changed while the run reads it.
    data = path.read_bytes().replace(b"gsm8k-00290", b"gsm8k-90290")
    with path.open("r+b") as handle:
        handle.write(data)
    with pytest.raises(cosim.trace.TraceError, match=r"t\.jsonl: the file changed while it was being read"):
        list(problems)


def test_a_trace_cut_short_while_it_is_read_names_the_file_and_line(tmp_path):
    path = cosim.trace.generate("gsm8k", 300, seed=1).save(tmp_path / "t.jsonl")
    loaded = cosim.trace.load(path)
    problems = iter(loaded.problems)
    next(problems)
    lines = path.read_bytes().splitlines(keepends=True)
    with path.open("r+b") as handle:  # line 300 loses its end, in place
        handle.seek(sum(len(x) for x in lines[:299]) + 10)
        handle.write(b" " * (len(lines[299]) - 10))
    with pytest.raises(cosim.trace.TraceError, match=r"t\.jsonl:300: .*not valid JSON.*changed since it was loaded"):
        list(problems)
