"""Writes the C++ lists of everything declared once in Python (run by CMake).

    python scripts/gen_native_params.py OUT.hpp [DECLARATIONS.py [SCHEMA_DIR]]

From cosim/schema/_declarations.py, each parameter group becomes an X-macro list
`X(type, name, rule, default)` of the parameters the native models take;
models/param_rules.hpp turns a list into struct fields, checks and dict readers. From
cosim/schema/ come the engine's per-problem columns (ProblemMetrics, exported by the
binding), each device's columns, the host's options and the event and decision kinds
(cosim/schema/_columns.py, _rows.py, _toggles.py), and the cluster's shape and the
batching settings (_cluster.py). Only the standard library is used: the
build environment has nothing else.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CPP_TYPES = {float: "double", int: "int64_t", bool: "bool", str: "std::string"}


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are built
    spec.loader.exec_module(module)
    return module


def declarations(path: Path):
    module = load(path, "cosim_declarations")
    return module.GROUPS, module.REQUIRED


def cpp_default(decl, required) -> str:
    """The C++ default member initializer; a required parameter starts at zero (a reader sets it)."""
    value = decl.default
    if decl.type is str:
        return '""' if value is required else '"' + value.replace('"', '\\"') + '"'
    if decl.type is bool:
        return "false" if value is required else ("true" if value else "false")
    if decl.type is int:
        return "0" if value is required else str(int(value))
    return "0.0" if value is required else repr(float(value))


def render(groups, required) -> str:
    lines = ["#pragma once",
             "// Generated at build time from cosim/schema/_declarations.py by scripts/gen_native_params.py;",
             "// edit the declarations, not this file. X(type, name, rule, default) per native parameter.",
             "#include <cstdint>", "#include <string>", ""]
    for group in groups:
        native = [d for d in group.params if d.native]
        lines.append(f"// {group.native}: {group.doc}")
        lines.append(f"#define {group.macro}(X) \\")
        for decl in native:
            lines.append(f"    X({CPP_TYPES[decl.type]}, {decl.name}, {decl.rule}, {cpp_default(decl, required)}) \\")
        lines.append("")
    return "\n".join(lines) + "\n"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _comment(text: str) -> str:
    """A declaration's help as a comment inside a macro line, for whoever reads the header."""
    return " /* " + text.replace("*/", "* /") + " */" if text else ""


def render_columns(engine, devices) -> str:
    """The engine's per-problem columns, X(type, field, kind, column0, column1, column2):
    kind value or instant* has one column, per_role one per device role; and each device's
    columns, X(type, name, runs)."""
    lines = ["// ProblemMetrics: what the engine reports per problem (cosim/schema/_columns.py).",
             "// X(type, field, kind, column0, column1, column2); kind: value, instant, instant_or_none, per_role.",
             "#define COSIM_PROBLEM_METRICS(X) \\"]
    for e in engine:
        names = list(e.columns) + [""] * (3 - len(e.columns))
        ctype = "uint64_t" if e.kind.startswith("instant") else e.type
        lines.append(f"    X({ctype}, {e.field}, {e.kind}, {', '.join(_string(n) for n in names)}){_comment(e.help)} \\")
    lines += ["", "// DeviceMetrics: each device over the whole run (cosim/schema/_rows.py).",
              "// X(type, name, runs); runs: all, autoregressive or vllm.", "#define COSIM_DEVICE_METRICS(X) \\"]
    for d in devices:
        lines.append(f"    X({'std::string' if d.type == 'text' else d.type}, {d.name}, {d.runs}){_comment(d.help)} \\")
    return "\n".join(lines) + "\n\n"


def render_options(options, event_kinds, decision_kinds) -> str:
    """WorkflowOptions' fields, X(type, name, default, rule, read) (read: 1 when the binding
    reads it from the engine's options section), and the event and decision kinds,
    X(name) in the order of their codes."""
    lines = ["// WorkflowOptions: the host's switches (cosim/schema/_toggles.py).",
             "// X(type, name, default, rule, read); read: 1 when the binding reads it from `options`.",
             "#define COSIM_WORKFLOW_OPTIONS(X) \\"]
    for o in options:
        lines.append(f"    X({o.type}, {o.name}, {o.default}, {o.rule}, {int(o.read)}){_comment(o.help)} \\")
    for macro, kinds, what in (("COSIM_EVENT_KINDS", event_kinds, "the trace's event kinds"),
                               ("COSIM_DECISION_KINDS", decision_kinds, "a live run's questions")):
        lines += ["", f"// {what}, X(name) in the order of their codes.", f"#define {macro}(X) \\"]
        lines += [f"    X({k}) \\" for k in kinds]
    return "\n".join(lines) + "\n\n"


def render_serving(cluster, required) -> str:
    """The engine's serving sections (cosim/schema/_cluster.py): ClusterShape's fields, each
    pool's native parameters under <pool>_<name>, and BatchingSettings' fields, each
    X(type, name, rule, default); the batching policies, X(name); and the most simulated
    threads the engine runs (the declared PROCESSES limit)."""
    lines = ["// ClusterShape: the engine's cluster section (cosim/schema/_cluster.py).",
             "// X(type, name, rule, default); name: <pool>_<parameter>, e.g. draft_contexts_per_device.",
             "#define COSIM_CLUSTER_SHAPE(X) \\"]
    for f in cluster.SHAPE:
        d = f.decl
        lines.append(f"    X({CPP_TYPES[d.type]}, {f.key}, {d.rule}, {cpp_default(d, required)}){_comment(d.help)} \\")
    group = cluster.BATCHING
    lines += ["", f"// {group.native}: {group.doc}", f"#define {group.macro}(X) \\"]
    for d in group.params:
        if d.native:
            lines.append(f"    X({CPP_TYPES[d.type]}, {d.name}, {d.rule}, {cpp_default(d, required)})"
                         f"{_comment(d.help)} \\")
    lines += ["", "// The batching policies, X(name).", "#define COSIM_BATCHING_POLICIES(X) \\"]
    lines += [f"    X({p}) \\" for p in cluster.POLICIES]
    lines += ["", f"// {cluster.PROCESSES.why}.", f"#define COSIM_MAX_THREADS {cluster.PROCESSES.value}"]
    return "\n".join(lines) + "\n\n"


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        # An option here would become the output file's name.
        sys.exit("usage: python scripts/gen_native_params.py OUT.hpp [DECLARATIONS.py [SCHEMA_DIR]]")
    out = Path(sys.argv[1])
    root = Path(__file__).resolve().parent.parent / "cosim"
    source = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "schema" / "_declarations.py"
    schema = Path(sys.argv[3]) if len(sys.argv) > 3 else root / "schema"
    columns = load(schema / "_columns.py", "cosim_schema_columns")
    rows = load(schema / "_rows.py", "cosim_schema_rows")
    # The toggles build on the declarations' classes, which they import by this name when read by path.
    shared = load(root / "schema" / "_declarations.py", "cosim_schema_declarations")
    toggles = load(schema / "_toggles.py", "cosim_schema_toggles")
    cluster = load(schema / "_cluster.py", "cosim_schema_cluster")
    groups, required = declarations(source)
    text = (render(groups, required) + render_columns(columns.ENGINE, rows.DEVICES) +
            render_options(toggles.OPTIONS, toggles.EVENT_KINDS, toggles.DECISION_KINDS) +
            render_serving(cluster, shared.REQUIRED))
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text() != text:  # unchanged: nothing recompiles
        out.write_text(text)


if __name__ == "__main__":
    main()
