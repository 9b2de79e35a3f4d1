"""``--policy MODULE:CLASS`` (or ``path/to/file.py:CLASS``): the live co-simulation's
policy, made with the run's trace."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def load_policy(spec: str, trace: Any) -> Any:
    """The policy class named by ``spec``, made as ``Class(trace)`` (or ``Class()`` when it
    takes no argument)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(f"--policy {spec!r}: write MODULE:CLASS or FILE.py:CLASS")
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise ConfigError(f"--policy {spec}: no file {where}")
            unit = importlib.util.spec_from_file_location(f"cosim_policy_{path.stem}", path)
            assert unit is not None and unit.loader is not None
            module = importlib.util.module_from_spec(unit)
            sys.modules[unit.name] = module
            unit.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is the option's fault
        raise ConfigError(f"--policy {spec}: cannot import {where}: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        raise ConfigError(f"--policy {spec}: {where} has no class {name}")
    takes_trace = len([p for p in inspect.signature(cls).parameters.values()
                       if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                              p.POSITIONAL_OR_KEYWORD)]) >= 1
    try:
        policy = cls(trace) if takes_trace else cls()
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"--policy {spec}: {name}({'trace' if takes_trace else ''}) failed: "
                          f"{type(exc).__name__}: {exc}") from None
    for method in ("draft", "refine", "verdict"):
        if not callable(getattr(policy, method, None)):
            raise ConfigError(f"--policy {spec}: {name} has no {method}() (subclass cosim.live.Policy)")
    return policy
