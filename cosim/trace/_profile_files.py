"""Dataset profiles by name or file: the built-in ones (cosim/data/profiles) and YAML
files, each checked across its parameters, the draft's reject rate at the default
threshold included (the step-quality model, cosim/trace/_quality.py)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Callable

from ..schema._params import build
from ..schema._yamlio import LocatedDict, load_yaml
from ..errors import ConfigError
from ._profiles import MAX_REJECT_PROBABILITY, REFERENCE_THRESHOLD, RETIRED, DatasetProfile
from ._quality import DRAFT, reject_probability


def _check(profile: DatasetProfile, where_of: Callable[[str], str]) -> None:
    profile.check(where_of)
    rejected = reject_probability(profile, DRAFT, REFERENCE_THRESHOLD)
    if rejected >= MAX_REJECT_PROBABILITY:
        raise ConfigError(f"{where_of('draft_good_step_probability')}: {profile.draft_good_step_probability} "
                          f"gives a draft reject rate of {rejected:.3f} at threshold {REFERENCE_THRESHOLD}, "
                          f"not below {MAX_REJECT_PROBABILITY} (typical of the PRM on draft steps)")


def _profiles_dir() -> Path:
    return Path(str(resources.files("cosim") / "data" / "profiles"))


def builtin_profiles() -> list[str]:
    return sorted(p.stem for p in _profiles_dir().glob("*.yaml"))


def load_profile(ref: Any) -> DatasetProfile:
    """A profile: built-in name (``math500``), YAML path, or DatasetProfile."""
    if isinstance(ref, DatasetProfile):
        _check(ref, lambda name: f"profile {ref.name!r}: {name}")
        return ref
    if not isinstance(ref, str | Path):
        raise ConfigError(f"a profile is a name, a YAML path or a DatasetProfile, not {type(ref).__name__}")
    path = Path(ref)
    if path.suffix not in (".yaml", ".yml"):
        if str(ref) not in builtin_profiles():
            raise ConfigError(f"unknown dataset profile {str(ref)!r}; built-in: {', '.join(builtin_profiles())}")
        path = _profiles_dir() / f"{ref}.yaml"
    data = load_yaml(path)
    if not isinstance(data, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping of profile parameters")
    if data.get("kind") != "dataset-profile":
        where = data.where_of("kind") if "kind" in data else path
        raise ConfigError(f"{where}: kind must be 'dataset-profile'; the file is not a dataset profile")
    body = LocatedDict({k: v for k, v in data.items() if k != "kind"}, data.where, data.lines)
    for key in body:
        if key in RETIRED:
            raise ConfigError(f"{body.where_of(key)}: no longer a parameter: {RETIRED[key]}")
    profile = build(DatasetProfile, body)
    _check(profile, lambda name: str(body.where_of(name)) if name in body else f"{path}: {name}")
    return profile
