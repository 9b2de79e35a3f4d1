"""``--policy MODULE:CLASS`` (or ``path/to/file.py:CLASS``): the live co-simulation's
policy, made with the run's trace. A file's folder goes on the import path first, so a
policy file imports the modules beside it as it does when run as a script."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError, PolicyError
from ..live._policy import described
from ._signals import Terminated


def _importer(spec: str, where: str) -> Callable[[], Any]:
    """What imports the policy's module, once the option itself is checked (run it to import)."""
    if not where.endswith(".py"):
        return lambda: importlib.import_module(where)
    path = Path(where)
    if not path.is_file():
        raise ConfigError(f"--policy {spec}: no file {where}")
    unit = importlib.util.spec_from_file_location(f"cosim_policy_{path.stem}", path)
    if unit is None or unit.loader is None:
        raise ConfigError(f"--policy {spec}: {where} is not a Python module")

    def load() -> Any:
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module = importlib.util.module_from_spec(unit)
        sys.modules[unit.name] = module
        unit.loader.exec_module(module)
        return module
    return load


def load_policy(spec: str, trace: Any) -> Any:
    """The policy class named by ``spec``, made as ``Class(trace)`` (or ``Class()`` when it
    takes no argument). Importing the module runs its code: an exception there or in the
    constructor, SystemExit included, is a PolicyError naming the policy and where."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(f"--policy {spec!r}: write MODULE:CLASS or FILE.py:CLASS")
    load = _importer(spec, where)
    try:
        module = load()
    except (KeyboardInterrupt, Terminated):  # the command is being stopped: not the policy's error
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: any import failure is the policy's
        raise PolicyError(f"policy {spec}, import of {where}: {described(exc)}") from None
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        raise ConfigError(f"--policy {spec}: {where} has no class {name}")
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        signature = None
    takes_trace = signature is not None and len(
        [p for p in signature.parameters.values()
         if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 1
    try:
        policy = cls(trace) if takes_trace else cls()
    except (KeyboardInterrupt, Terminated):  # the command is being stopped: not the policy's error
        raise
    except PolicyError:
        raise
    except BaseException as exc:  # noqa: BLE001
        raise PolicyError(f"policy {spec}, {name}.__init__({'trace' if takes_trace else ''}): "
                          f"{described(exc)}") from None
    for method in ("draft", "refine", "verdict"):
        if not callable(getattr(policy, method, None)):
            raise ConfigError(f"--policy {spec}: {name} has no {method}() (subclass cosim.live.Policy)")
    return policy
