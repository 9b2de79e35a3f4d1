"""Every built-in scenario gives, to the nanosecond and the joule's last bit, the per-problem
(or per-request) results stored in tests/data/golden_results.json. The stored file was
recorded by scripts/record_golden.py before the devices were given TLM-2.0 sockets; moving
the host's calls onto transactions must not move a single result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import record_golden  # noqa: E402
from cosim.schema import COLUMNS  # noqa: E402

STORED = json.loads(record_golden.OUT.read_text())


def test_the_stored_results_cover_every_built_in_scenario():
    from cosim.config.scenario import builtin_scenarios

    assert sorted(STORED) == builtin_scenarios()
    assert all(len(v["rows"]) > 0 for v in STORED.values())


@pytest.mark.parametrize("name", sorted(STORED))
def test_a_built_in_scenario_gives_its_stored_results(name):
    now = json.loads(json.dumps(record_golden.results(name)))
    assert now["kind"] == STORED[name]["kind"]
    assert len(now["rows"]) == len(STORED[name]["rows"])
    declared = {c.name for c in COLUMNS}
    for i, (row, stored) in enumerate(zip(now["rows"], STORED[name]["rows"])):
        # A column declared after the file was recorded adds to the rows; the stored ones keep
        # their values exactly.
        assert set(stored) <= set(row) and set(row) - set(stored) <= declared, (name, i)
        assert {k: row[k] for k in stored} == stored, (name, i)
