"""Writes the C++ parameter lists from cosim/config/_declarations.py (run by CMake).

    python scripts/gen_native_params.py OUT.hpp

Each group becomes an X-macro list `X(type, name, rule, default)` of the parameters the
native models take; models/param_rules.hpp turns a list into struct fields, checks and
dict readers. Only the standard library is used: the build environment has nothing else.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CPP_TYPES = {float: "double", int: "int64_t", bool: "bool", str: "std::string"}


def declarations(path: Path):
    spec = importlib.util.spec_from_file_location("cosim_declarations", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are built
    spec.loader.exec_module(module)
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
             "// Generated at build time from cosim/config/_declarations.py by scripts/gen_native_params.py;",
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


def main() -> None:
    out = Path(sys.argv[1])
    source = Path(sys.argv[2]) if len(sys.argv) > 2 else \
        Path(__file__).resolve().parent.parent / "cosim" / "config" / "_declarations.py"
    text = render(*declarations(source))
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text() != text:  # unchanged: nothing recompiles
        out.write_text(text)


if __name__ == "__main__":
    main()
