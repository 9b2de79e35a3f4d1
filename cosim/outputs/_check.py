"""The one check of the files a command writes, made before any work: each can take an
output (cosim.outputs._paths.check_output: a regular file or nothing yet, not read-only,
in something that can be a folder), none is an input or another output (by identity, so
links and other spellings are caught: cosim.outputs._safety.check_distinct), and none lies
in a folder the command reads (a model folder, a folder of measured operator times, the
package's shipped data), where a new file would change that input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ConfigError
from ._guard import within
from ._paths import check_output
from ._safety import check_distinct


def check_files(outputs: Iterable[tuple[str, str | Path]], inputs: Mapping[str, Any] | None = None) -> list[Path]:
    """``outputs``: (the flag that names it, its path) each; ``inputs``: how a message names
    each input (e.g. "the fit's input profile CSV m.csv") -> its path, a file or a folder
    (None: not given). The checked paths, in order; ConfigError naming the flag otherwise."""
    # Each named as the user gave it.
    checked = {f"{flag} {path}": check_output(path, flag) for flag, path in outputs}
    given = {what: Path(path) for what, path in (inputs or {}).items() if path is not None}
    check_distinct(checked, given)
    folders = {what: os.path.realpath(path) for what, path in given.items() if path.is_dir()}
    for named, path in checked.items():
        target = os.path.realpath(path)  # a link is written through: where it points counts
        for what, folder in folders.items():
            if within(target, folder):
                raise ConfigError(f"{named}: lies in {what}, which the command reads; write it elsewhere")
    return list(checked.values())
