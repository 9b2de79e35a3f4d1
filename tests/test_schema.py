"""Every column that crosses the boundary is declared once (cosim/schema/): the C++ struct
and the binding's export are generated from it, the Python row lists and docs/metrics.md's
tables derived from it. These fail when one side lacks a declared column or names it
differently."""

import dataclasses
import os
import shutil
import subprocess
import sys

import pytest

import cosim
from cosim import schema
import cosim._rows as rows_module
from cosim._extension import native
from cosim._rows import ROW_FIELDS, SERVE_ROW_FIELDS, Totals
from conftest import ROOT

DTYPES = {"int32_t": "int32", "int64_t": "int64", "double": "float64", "uint64_t": "int64"}


def test_the_binding_exports_exactly_the_declared_engine_columns_with_their_types():
    exported = native().exported_columns()
    declared = {name: DTYPES[e.type] for e in schema.ENGINE for name in e.columns}
    assert dict(exported["problem"]) == declared
    assert list(exported["problem"]) == list(schema.engine_columns())
    assert list(exported["devices"]) == [d.name for d in schema.DEVICES]


def test_a_run_hands_over_the_declared_engine_and_device_columns():
    scn = cosim.load_scenario("cluster-gpu-stepahead")
    trace = cosim.trace.generate("math500", 3, seed=0)
    served = cosim.serve.run(scn, trace, rate=2.0, seed=1)
    # A step-level system: the columns every engine reports and the step-level systems' own.
    assert set(served.devices[0]) == {d.name for d in schema.DEVICES if d.runs in ("all", "workflow")}
    assert list(served.per_request.column("request")) and served.per_request.to_arrow().column_names == \
        list(SERVE_ROW_FIELDS)


def test_the_rows_follow_the_declared_columns_in_order():
    names = [c.name for c in schema.COLUMNS]
    assert len(set(names)) == len(names)
    assert list(ROW_FIELDS) == [c.name for c in schema.COLUMNS if c.table == "problem"]
    assert list(SERVE_ROW_FIELDS) == names
    result = cosim.simulate(cosim.load_scenario("gpu-stepahead"), cosim.trace.generate("math500", 2, seed=0))
    assert list(result.per_problem[0]) == list(ROW_FIELDS)
    assert result.per_problem.to_arrow().column_names == list(ROW_FIELDS)
    assert list(result.summary) == [t.name for t in schema.TOTALS]
    assert set(result.totals) == {s.name for s in schema.SUMS if s.shown}


def test_every_elapsed_column_names_an_engine_instant_that_may_be_missing():
    kinds = {e.name: e.kind for e in schema.ENGINE}
    for c in schema.COLUMNS:
        if c.elapsed:
            assert kinds.get(c.elapsed) == "instant_or_none", c.name


def test_every_total_is_made_of_declared_sums():
    sums = {s.name for s in schema.SUMS}
    assert len(sums) == len(schema.SUMS)
    for t in schema.TOTALS:
        assert {t.of, *t.per} - {""} <= sums, t.name


def test_every_sum_takes_a_declared_column():
    sources = {"row": {c.name for c in schema.COLUMNS}, "engine": set(schema.engine_columns()),
               "worked": {"latency_ns"}}
    for s in schema.SUMS:
        assert s.of in sources[s.source] and s.take in ("all", "known", "count"), s.name


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker is forked with the declarations patched")
def test_a_sum_declared_alone_is_accumulated(monkeypatch):
    # Toy sums and a toy total declared beside the real ones, with no other change: the run
    # adds them up problem by problem, as a sum over the rows worked out here says.
    toys = (schema.Sum("toy_drafted", "drafted_tokens"), schema.Sum("toy_stall", "stall_ns", "engine"),
            schema.Sum("toy_correct", "accuracy", take="known"), schema.Sum("toy_labelled", "accuracy", take="count"))
    monkeypatch.setattr(rows_module, "SUMS", schema.SUMS + toys)
    monkeypatch.setattr(rows_module, "TOTALS", schema.TOTALS + (schema.Total("toy_total", "sum", "toy_drafted"),))
    drawn = cosim.trace.generate("olympiadbench", 7, seed=2)
    unlabelled = dataclasses.replace(drawn.problems[0], id="unlabelled", answer_correct=None)
    trace = cosim.trace.Trace(drawn.header, [*drawn.problems, unlabelled])
    result = cosim.simulate(cosim.scenario("heteroreason", 1), trace)
    rows = list(result.per_problem)
    drafted = 0.0
    for r in rows:
        drafted += r["drafted_tokens"]
    assert result.totals["toy_drafted"] == drafted == result.summary["toy_total"] > 0
    # The engine's stall time, seen in the rows as a share of each problem's latency.
    assert result.totals["toy_stall"] == pytest.approx(sum(r["stall_ratio"] * r["latency_s"] * 1e9 for r in rows))
    assert result.totals["toy_stall"] == result.totals["stall_ns"]
    known = [r["accuracy"] for r in rows if r["accuracy"] is not None]
    assert (result.totals["toy_correct"], result.totals["toy_labelled"]) == (sum(known), len(known)) == (4, 7)
    assert result.summary["accuracy"] == sum(known) / len(known)


def test_the_summary_combines_sums_as_declared_worked_by_hand():
    totals = Totals()
    totals.problems = 2
    totals.sums.update(latency_ns=4e9, final_tokens=100.0, generated_tokens=125.0, energy_j=50.0, stall_ns=1e9,
                       stalled_verdicts=1.0, verdicts=4.0, accepted_draft_tokens=60.0, target_trace_tokens=40.0,
                       steps=6.0, correct=1.0, labelled=2.0)
    s = totals.summary()
    # 4e9 ns over 2 problems: 2 s each; 100 tokens in 4 s; 50 J for 100 and 125 tokens.
    assert (s["latency_s"], s["goodput_tok_s"], s["energy_j_per_token"]) == (2.0, 25.0, 0.5)
    assert (s["energy_j_per_generated_token"], s["stall_ratio"], s["stall_step_share"]) == (0.4, 0.25, 0.25)
    assert (s["acceptance_rate"], s["steps_per_problem"], s["accuracy"], s["problems"]) == (0.6, 3.0, 0.5, 2)
    assert s["speedup"] is None and s["final_tokens"] == 100 and isinstance(s["final_tokens"], int)
    totals.sums.update(verdicts=0.0, labelled=0.0, accepted_draft_tokens=0.0, target_trace_tokens=0.0)
    s = totals.summary()
    assert (s["stall_step_share"], s["acceptance_rate"], s["accuracy"]) == (0.0, 0.0, None)


def test_metrics_doc_tables_are_what_the_declarations_write():
    done = subprocess.run([sys.executable, ROOT / "scripts" / "gen_metrics_doc.py", "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    text = (ROOT / "docs" / "metrics.md").read_text()
    for c in schema.COLUMNS:
        assert f"| `{c.name}` | {c.unit} | " in text
    for d in schema.DEVICES:
        assert f"| `{d.name}` | {d.unit} | {d.help} |" in text


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_toy_column_declared_once_is_a_cpp_field_and_an_exported_name(tmp_path):
    # A copy of the declarations with one more engine column, through the build's generator
    # and the real headers: the struct has the field and the export loop names the column.
    schema_dir = tmp_path / "schema"
    shutil.copytree(ROOT / "cosim" / "schema", schema_dir)
    columns = schema_dir / "_columns.py"
    columns.write_text(columns.read_text() + "\nENGINE = ENGINE + (EngineColumn('toy_ns', 'double', 'a toy'), "
                       "EngineColumn('toy_seen', 'uint64_t', 'a toy instant', 'instant_or_none'))\n")
    header = tmp_path / "gen" / "cosim_params.hpp"
    subprocess.run([sys.executable, ROOT / "scripts" / "gen_native_params.py", header,
                    ROOT / "cosim" / "schema" / "_declarations.py", schema_dir], check=True)
    (tmp_path / "toy.cpp").write_text(
        '#include <cstdio>\n#include "workflow_inputs.hpp"\n'
        "#define NAME(type, field, kind, c0, c1, c2) std::printf(\"%s %s\\n\", #field, c0);\n"
        "int main() {\n  cosim::ProblemMetrics m;\n  m.toy_ns = 2.5;\n"
        "  if (m.toy_seen_units != cosim::kNoInstant || m.devices[2] != 0) return 1;\n"
        "  COSIM_PROBLEM_METRICS(NAME)\n  return m.toy_ns == 2.5 ? 0 : 1;\n}\n")
    exe = tmp_path / "toy"
    subprocess.run(["g++", "-std=c++17", f"-I{ROOT / 'models'}", f"-I{ROOT / 'models' / 'workflow'}",
                    f"-I{header.parent}", tmp_path / "toy.cpp", "-o", exe], check=True)
    done = subprocess.run([exe], capture_output=True, text=True)
    assert done.returncode == 0
    printed = [line.split() for line in done.stdout.splitlines()]
    assert printed[-2:] == [["toy_ns", "toy_ns"], ["toy_seen_units", "toy_seen_ps"]]
    assert [p[0] for p in printed[:-2]] == [e.field for e in schema.ENGINE]


def test_the_engines_event_and_decision_kinds_are_the_declared_ones():
    from cosim.schema import _toggles

    assert dict(native().EVENT_KINDS) == {k: i for i, k in enumerate(_toggles.EVENT_KINDS)}
    assert dict(native().DECISION_KINDS) == {k: i for i, k in enumerate(_toggles.DECISION_KINDS)}


def test_toggles_and_serving_are_the_declared_parameters():
    from cosim.config.scenario import Serving, Toggles
    from cosim.schema import _toggles

    for cls, group in ((Toggles, _toggles.TOGGLES), (Serving, _toggles.SERVING)):
        fields = dataclasses.fields(cls)
        assert [f.name for f in fields] == [d.name for d in group.params]
        assert [f.metadata["help"] for f in fields] == [d.help for d in group.params]


@pytest.mark.parametrize("system", ["gpu-baseline", "heteroreason", "gpu-stepahead"])
def test_the_engine_is_handed_exactly_the_options_it_reads_from_their_declared_sources(system):
    from cosim.engine._workflow import system_dict
    from cosim.schema import _toggles

    scn = cosim.scenario(system, 1)
    options = system_dict(scn)["options"]
    read = [o for o in _toggles.OPTIONS if o.read]
    assert set(options) == {o.name for o in read}
    toggles = {d.name for d in _toggles.TOGGLES.params}
    serving = {d.name for d in _toggles.SERVING.params}
    for o in read:
        section, _, name = o.source.partition(".")
        assert o.source == "system" or name in (toggles if section == "toggles" else serving), o.name
        if section == "serving":  # passed as given
            assert options[o.name] == getattr(scn.serving, name)


def test_a_bad_option_is_refused_by_its_declared_name_and_rule():
    from cosim.engine._workflow import system_dict
    from cosim.errors import ConfigError

    system = system_dict(cosim.scenario("heteroreason", 1))
    system["options"]["token_bytes"] = 0
    # The options are read before anything is simulated: the engine refuses at once.
    with pytest.raises(ConfigError, match=r"^options\.token_bytes: must be a finite number > 0, got 0"):
        native().simulate("stepwise", system, lambda finished: None)
    del system["options"]["control_bytes"]
    system["options"]["token_bytes"] = 4
    with pytest.raises(ConfigError, match=r"^options\.control_bytes: missing"):
        native().simulate("stepwise", system, lambda finished: None)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_generated_options_and_kinds_follow_the_declarations(tmp_path):
    from cosim.schema import _toggles

    header = tmp_path / "gen" / "cosim_params.hpp"
    subprocess.run([sys.executable, ROOT / "scripts" / "gen_native_params.py", header], check=True)
    (tmp_path / "opts.cpp").write_text(
        '#include <cstdio>\n#include "workflow_inputs.hpp"\n'
        "#define NAME(type, name, init, rule, read) std::printf(\"%s %d\\n\", #name, read);\n"
        "#define KIND(name) std::printf(\"kind %s %d\\n\", #name, static_cast<int>(cosim::EventKind::name));\n"
        "int main() {\n  cosim::WorkflowOptions o;\n  COSIM_WORKFLOW_OPTIONS(NAME)\n  COSIM_EVENT_KINDS(KIND)\n"
        "  return o.token_bytes == 4 && o.control_bytes == 64 && o.step_ahead_depth == 1 ? 0 : 1;\n}\n")
    exe = tmp_path / "opts"
    subprocess.run(["g++", "-std=c++17", f"-I{ROOT / 'models'}", f"-I{ROOT / 'models' / 'workflow'}",
                    f"-I{header.parent}", tmp_path / "opts.cpp", "-o", exe], check=True)
    done = subprocess.run([exe], capture_output=True, text=True)
    assert done.returncode == 0
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [(n, int(r)) for n, r in (x for x in lines if x[0] != "kind")] == \
        [(o.name, int(o.read)) for o in _toggles.OPTIONS]
    assert [(x[1], int(x[2])) for x in lines if x[0] == "kind"] == list(zip(_toggles.EVENT_KINDS, range(3)))
