"""Dataset profiles: the distributions a synthetic trace is drawn from.

Built-in profiles live in ``cosim/data/profiles`` (every value cites its basis
or says it is an estimate); a user adds one by writing a YAML file of the same
shape and passing its path wherever a profile name is taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .._params import build, param
from .._yamlio import LocatedDict, load_yaml
from ..errors import ConfigError
from ._io import MAX_TOKENS

# SPEC section 3: the rejection probability is typically below 30%.
MAX_REJECT_PROBABILITY = 0.3
# A log-space spread beyond this puts the 99th percentile 10^10 times the median: no real data.
MAX_SIGMA = 10.0


@dataclass(frozen=True, kw_only=True)
class DatasetProfile:
    name: str = param("dataset name as it appears in traces", rule="any")
    description: str = param("what the profile describes", rule="any", default="")
    template_tokens: int = param("chat-template tokens around each question", rule="non_negative")
    prompt_tokens_median: float = param("median question length, tokens (lognormal)")
    prompt_tokens_sigma: float = param("log-space standard deviation of question length", rule="non_negative")
    prompt_tokens_max: int = param("longest question, tokens (longer draws are redrawn)")
    steps_median: float = param("median reasoning steps per solution (lognormal, rounded, >= 1)")
    steps_sigma: float = param("log-space standard deviation of steps per solution", rule="non_negative")
    steps_max: int = param("most steps in one solution (longer draws are redrawn)")
    step_tokens_median: float = param("median tokens per step (lognormal)")
    step_tokens_sigma: float = param("log-space standard deviation of tokens per step", rule="non_negative")
    step_tokens_max: int = param("longest step, tokens (longer draws are redrawn)")
    reject_probability: float = param("probability the PRM rejects a draft step", rule="fraction")
    refine_failure_probability: float = param("probability a refined step scores below the backtracking threshold",
                                              rule="fraction")
    accuracy: float = param("share of problems answered correctly", rule="fraction")
    max_context_tokens: int = param("prompt + solution never exceed this (the target's window); a solution "
                                    "that would is cut at a step boundary", default=4096)

    def check(self, where_of: Any) -> None:
        """Checks across parameters; ``where_of(field)`` names a field's place."""
        if self.reject_probability >= MAX_REJECT_PROBABILITY:
            raise ConfigError(f"{where_of('reject_probability')}: {self.reject_probability} is not below "
                              f"{MAX_REJECT_PROBABILITY} (SPEC section 3)")
        for stem in ("prompt_tokens", "steps", "step_tokens"):
            median, top = getattr(self, f"{stem}_median"), getattr(self, f"{stem}_max")
            if top < median:
                raise ConfigError(f"{where_of(stem + '_max')}: {top} is below {stem}_median ({median})")
            if getattr(self, f"{stem}_sigma") > MAX_SIGMA:
                raise ConfigError(f"{where_of(stem + '_sigma')}: {getattr(self, stem + '_sigma')} is not a "
                                  f"plausible log-space spread (at most {MAX_SIGMA})")
        if self.step_tokens_max > MAX_TOKENS or self.prompt_tokens_max > MAX_TOKENS:
            raise ConfigError(f"{where_of('step_tokens_max')}: steps and prompts stay under {MAX_TOKENS} tokens")
        longest_first = self.template_tokens + self.prompt_tokens_max + self.step_tokens_max
        if longest_first > self.max_context_tokens:
            raise ConfigError(f"{where_of('max_context_tokens')}: {self.max_context_tokens} cannot hold the "
                              f"longest prompt and first step ({longest_first} tokens)")


def _profiles_dir() -> Path:
    return Path(str(resources.files("cosim") / "data" / "profiles"))


def builtin_profiles() -> list[str]:
    return sorted(p.stem for p in _profiles_dir().glob("*.yaml"))


def load_profile(ref: Any) -> DatasetProfile:
    """A profile: built-in name (``math500``), YAML path, or DatasetProfile."""
    if isinstance(ref, DatasetProfile):
        ref.check(lambda name: f"profile {ref.name!r}: {name}")
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
        raise ConfigError(f"{where}: kind must be 'dataset-profile', got {data.get('kind')!r}")
    body = LocatedDict({k: v for k, v in data.items() if k != "kind"}, data.where, data.lines)
    profile = build(DatasetProfile, body)
    profile.check(lambda name: str(body.where_of(name)) if name in body else f"{path}: {name}")
    return profile
