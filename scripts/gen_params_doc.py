"""Writes docs/params.md from the declarations: every group of parameters `cosim params`
lists (the hardware's in cosim/schema/_declarations.py, the scenario's sections in
cosim/schema/, a dataset profile's), each parameter with its unit, rule, meaning and,
where no file gives it, its default and where that comes from. The whole file is
generated; tests/test_schema_serving.py fails when it is not what this script writes.

    python scripts/gen_params_doc.py [--check]
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from doc_tables import run

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "params.md"

HEAD = """# Parameters

Every parameter, by group, as `cosim params` lists it. Written by
`scripts/gen_params_doc.py` from the declarations (CONTRIBUTING.md); do not edit by hand.
Units are in the names (docs/hardware.md, "Parameters and units"); a device, link or model
file gives the hardware groups' values, each with its source, and a scenario's sections
default as below. A path names a parameter by its group: `fpga.clock_mhz`,
`cluster.draft.contexts_per_device`, `batching.max_batch`.
"""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(group: str, cls: type, name: str) -> str:
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    if field.default is dataclasses.MISSING:
        # The toggles' defaults are each system's preset; the rest are given by each file.
        return "the system's preset (docs/system.md)" if group == "toggles" else "given by each file"
    value = field.default
    if value == "":
        return "(empty)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def render() -> str:
    sys.path.insert(0, str(ROOT))
    from cosim.cli import param_groups
    from cosim.schema._params import describe

    lines = [HEAD]
    for group, cls in param_groups().items():
        doc = (cls.__doc__ or "").strip()
        doc = "" if doc.startswith(f"{cls.__name__}(") else " ".join(doc.split())  # not the generated signature
        lines += [f"## `{group}`", "", *([_cell(doc), ""] if doc else []),
                  "| parameter | unit | rule | meaning | default | where the default comes from |",
                  "|---|---|---|---|---|---|"]
        for row in describe(cls):
            note = row["note"]
            if row["range"]:
                note += f" (plausible {row['range'][0]:g} to {row['range'][1]:g})"
            lines.append(f"| `{row['name']}` | {row['unit']} | {_cell(row['bounds'])} | {_cell(row['help'])} | "
                         f"{_default(group, cls, row['name'])} | {_cell(note)} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    run(DOC, lambda text: render(), "gen_params_doc.py", __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
