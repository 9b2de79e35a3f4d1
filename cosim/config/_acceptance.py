"""Acceptance profiles of token-level speculative decoding (docs/workload.md, "How often
drafts are kept"): how often a target keeps a proposer's drafts, as vLLM reports it per
position, P(the first i drafts of a pass all kept), i = 1, 2, ... Each is one file of
cosim/data/acceptance (or a user's YAML file) that cites its measurement, giving either
the per-position rates (``rates``) or one rate a per draft given the drafts before it
(``per_draft``, the rates a^i for ``drafts`` positions)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._builtin_files import BuiltinFolder
from ..errors import ConfigError
from ..schema._yamlio import LocatedDict, load_yaml


@dataclass(frozen=True)
class Acceptance:
    name: str
    proposer: str           # the proposer it was measured with ("" where the file does not say)
    rates: tuple[float, ...]  # P(the first i drafts kept), i = 1 ..
    source: str

    def expected_tokens(self, drafts: int) -> float:
        """Tokens a verification of ``drafts`` drafts yields on average: 1 + the first rates."""
        return 1.0 + sum(self.rates[:drafts])

    def scaled(self, scale: float) -> Acceptance:
        """The profile with each draft's acceptance given the drafts before it kept multiplied
        by ``scale`` and capped at 1 (a per-draft rate a becomes scale x a): the rates stay
        within [0, 1] and non-increasing."""
        if scale == 1.0:
            return self
        rates, measured, kept = [], 1.0, 1.0  # the profile's rate before this one, and its scaled one
        for rate in self.rates:
            kept = kept * min(1.0, scale * rate / measured) if measured > 0.0 else 0.0
            rates.append(kept)
            measured = rate
        return Acceptance(self.name, self.proposer, tuple(rates), self.source)


FILES = BuiltinFolder("acceptance", "acceptance profile")
names, path_of = FILES.names, FILES.path_of


def _cited(data: LocatedDict, key: str) -> tuple[Any, str]:
    entry = data[key]
    if isinstance(entry, dict):
        if "value" not in entry:
            raise ConfigError(f"{data.where_of(key)}: give {key} as a value, or as {{value: ..., source: ...}}")
        return entry["value"], str(entry.get("source") or entry.get("estimate") or "")
    return entry, ""


def _rate(value: Any, where: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"{where}: a rate within [0, 1], got {value!r}")
    return float(value)


def load(ref: str, beside: Path | None = None) -> Acceptance:
    """An acceptance profile: a built-in name or a YAML file (relative: from ``beside``),
    checked (rates within [0, 1] and non-increasing), errors naming its line."""
    path = path_of(ref, beside)
    data = load_yaml(path)
    if not isinstance(data, LocatedDict) or data.get("kind") != "acceptance":
        raise ConfigError(f"{path}: kind must be acceptance")
    for key in data:
        if key not in ("kind", "name", "proposer", "rates", "per_draft", "drafts"):
            raise ConfigError(f"{data.where_of(key)}: unknown key (name, proposer, rates, or per_draft and drafts)")
    if ("rates" in data) == ("per_draft" in data):
        raise ConfigError(f"{data.where}: give rates (per position) or per_draft (one rate a draft), one of them")
    if "rates" in data:
        value, source = _cited(data, "rates")
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{data.where_of('rates')}: a list of per-position rates")
        rates = [_rate(v, data.where_of("rates")) for v in value]
        if "drafts" in data:
            raise ConfigError(f"{data.where_of('drafts')}: drafts goes with per_draft; rates give their own count")
    else:
        value, source = _cited(data, "per_draft")
        a = _rate(value, data.where_of("per_draft"))
        drafts = data.get("drafts")
        if isinstance(drafts, bool) or not isinstance(drafts, int) or not 1 <= drafts <= 64:
            raise ConfigError(f"{data.where_of('drafts') if 'drafts' in data else data.where}: drafts: the "
                              f"positions per_draft covers, 1 to 64")
        rates = [a ** i for i in range(1, drafts + 1)]
    for i in range(1, len(rates)):
        if rates[i] > rates[i - 1]:
            raise ConfigError(f"{data.where_of('rates')}: rate {i + 1} ({rates[i]:g}) exceeds rate {i} "
                              f"({rates[i - 1]:g}): the first i + 1 drafts are kept no more often than the first i")
    proposer = data.get("proposer", "")
    return Acceptance(str(data.get("name", path.stem)), str(proposer), tuple(rates), source)
