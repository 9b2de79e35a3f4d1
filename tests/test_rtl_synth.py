"""Generic Yosys synthesis of the KVMU's RTL (rtl/synth.py): it synthesises, and keeps
exactly the register bits the block needs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rtl"))

import synth  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("yosys") is None,
                                reason="synthesis needs Yosys, which is not installed (apt-get install yosys)")


@pytest.mark.parametrize("ptr_w,max_depth", [(32, 2), (16, 1)])
def test_generic_synthesis_keeps_every_register_bit(ptr_w, max_depth, capsys):
    counts = synth.synthesise(ptr_w, max_depth)
    # Counted by hand from the block's registers: valid, curr, ahead and one mark per
    # level of depth (ptr_w bits each), mode (2), fresh, following, drafting, depth (2),
    # n_marks (2), err and err_code (4).
    assert synth.flip_flops(counts) == (3 + max_depth) * ptr_w + 2 + 3 + 2 + 2 + 1 + 4
    # The logic around them: pointer increments and comparators at least one gate a bit.
    assert counts["cells"] > 3 * ptr_w + synth.flip_flops(counts)
    with capsys.disabled():
        print(f"\n  kvmu PTR_W={ptr_w} MAX_DEPTH={max_depth}: {counts['cells']} generic cells, "
              f"{synth.flip_flops(counts)} flip-flops")
