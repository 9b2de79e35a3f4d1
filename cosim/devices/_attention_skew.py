"""LLMServingSim's skew fit of an attention table (docs/hardware.md, "Operator profiles"):
its profiler measures attention with every decoding sequence at one context and, where a
bundle's ``meta.yaml`` enables ``skew_fit``, also batches of unequal contexts, fitted per
bucket as t = t_mean + alpha (t_max - t_mean). The buckets are read on (the prefill chunk as
measured, the decoding sequences, the skew rate (mean - min) / (max - min), the longest
context, the prefill's context); their edges and labels are the meta's ``bucket_axes``, the
alphas an inline ``alpha_by_bucket`` or else a pass's ``skew_fit.csv``
(``per_tp.<N>.bucket_table``), a bucket without a row the pass's pooled ``alpha_default``
(0 where it gives none). The native model (models/attention_skew.hpp) applies it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .._args import real
from ..errors import ConfigError
from ..schema._yamlio import LocatedDict
from ._profile_csv import ProfileCsv

# The bucket axes in key order after the prefill chunk: meta.yaml's bins and labels.
AXES = ("n", "skew_rate", "kv_big", "kp")
# LLMServingSim's axes for a meta.yaml that predates ``bucket_axes``
# (serving/core/trace_generator.py, _DEFAULT_SKEW_AXES).
DEFAULT_AXES = {
    "n_bins": [0, 2, 4, 8, 16, 32, 64, 128, 1_000_000],
    "n_labels": ["n<=2", "n<=4", "n<=8", "n<=16", "n<=32", "n<=64", "n<=128", "n>128"],
    "skew_rate_bins": [-0.01, 0.05, 0.15, 0.40, 0.70, 1.01],
    "skew_rate_labels": ["sr<=5%", "sr<=15%", "sr<=40%", "sr<=70%", "sr>70%"],
    "kv_big_bins": [0, 1024, 4096, 16384, 1_000_000_000],
    "kv_big_labels": ["kvB<=1k", "kvB<=4k", "kvB<=16k", "kvB>16k"],
    "kp_bins": [-1, 0, 2048, 1_000_000_000],
    "kp_labels": ["kp=0", "kp<=2k", "kp>2k"],
}
COLUMNS = ("pc", "n_label", "skew_rate_label", "kv_big_label", "kp_label", "alpha")


def _where(mapping: Any, key: str, fallback: Path) -> Any:
    return mapping.where_of(key) if isinstance(mapping, LocatedDict) else f"{fallback}: {key}"


def _axes(axes: Any, where: Any) -> tuple[list[list[float]], list[dict[str, int]]]:
    """The bins of each axis and each label's bucket index."""
    if not isinstance(axes, dict):
        raise ConfigError(f"{where}: expected a mapping of bins and labels")
    edges, labels = [], []
    for axis in AXES:
        bins, names = axes.get(f"{axis}_bins"), axes.get(f"{axis}_labels")
        at = _where(axes, f"{axis}_bins", where)
        if not isinstance(bins, list) or len(bins) < 2 or not isinstance(names, list) or \
                len(names) != len(bins) - 1:
            raise ConfigError(f"{at}: expected a list of bin edges and {axis}_labels, one fewer")
        values = [real(b, str(at), minimum=None) for b in bins]
        if any(b >= a for a, b in zip(values[1:], values)):
            raise ConfigError(f"{at}: the bin edges must rise")
        edges.append(values)
        labels.append({str(name): i for i, name in enumerate(names)})
    return edges, labels


def _key(line_at: str, pc_text: str, names: list[str], labels: list[dict[str, int]]) -> tuple[int, ...]:
    try:
        pc = float(pc_text)
    except ValueError:
        raise ConfigError(f"{line_at}: pc: not a number: {pc_text!r}") from None
    if not math.isfinite(pc) or pc < 0 or pc != int(pc):
        raise ConfigError(f"{line_at}: pc: must be a whole number >= 0, got {pc_text!r}")
    key = [int(pc)]
    for axis, name, known in zip(AXES, names, labels):
        if name not in known:
            raise ConfigError(f"{line_at}: {axis}: unknown bucket {name!r} (meta.yaml's: {', '.join(known)})")
        key.append(known[name])
    return tuple(key)


def _table(path: Path, labels: list[dict[str, int]]) -> list[list[float]]:
    table = ProfileCsv(path, COLUMNS)
    layered = "layer" in table.column
    rows: dict[tuple[int, ...], tuple[int, float]] = {}
    for line, row in table.rows():
        # A bundle that fits several kernels names each row's; attention's are the ones here.
        if layered and table.text(row, "layer") != "attention":
            continue
        at = f"{path}:{line}"
        key = _key(at, table.text(row, "pc"), [table.text(row, c) for c in COLUMNS[1:5]], labels)
        alpha = table.real(line, row, "alpha")
        if key in rows:
            raise ConfigError(f"{at}: the same bucket is fitted on line {rows[key][0]}")
        rows[key] = (line, alpha)
    return [[*key, alpha] for key, (_, alpha) in rows.items()]


def _inline(mapping: Any, where: Any, labels: list[dict[str, int]]) -> list[list[float]]:
    if not isinstance(mapping, dict):
        raise ConfigError(f"{where}: expected a mapping of bucket keys to alphas")
    rows = []
    for text, alpha in mapping.items():
        parts = str(text).split("|")
        if len(parts) != 5 or not parts[0].startswith("pc="):
            raise ConfigError(f"{where}: {text!r}: a bucket key is pc=N|n|skew_rate|kv_big|kp")
        key = _key(f"{where}: {text}", parts[0][3:], parts[1:], labels)
        rows.append([*key, real(alpha, str(where), minimum=None)])
    return rows


def attention_skew(meta: Any, folder: Path, base: Path, tp: int) -> dict[str, Any] | None:
    """The skew fit of the pass at tensor-parallel degree ``tp`` (its folder ``base``) for
    the native model, or None where the bundle's meta.yaml does not enable one."""
    block = meta.get("skew_fit") if isinstance(meta, dict) else None
    if block is None:
        return None
    where = _where(meta, "skew_fit", folder / "meta.yaml")
    if not isinstance(block, dict):
        raise ConfigError(f"{where}: expected a mapping")
    enabled = block.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{_where(block, 'enabled', where)}: expected true or false")
    if not enabled:
        return None
    per_tp = block.get("per_tp") or {}
    if not isinstance(per_tp, dict):
        raise ConfigError(f"{_where(block, 'per_tp', where)}: expected a mapping by tensor-parallel degree")
    key = tp if tp in per_tp else str(tp)
    entry = per_tp.get(key)
    at = per_tp.where_of(key) if isinstance(per_tp, LocatedDict) and key in per_tp else where
    if entry is not None and not isinstance(entry, dict):
        raise ConfigError(f"{at}: expected a mapping (the pass's alpha_default and bucket_table)")
    source = str(folder / "meta.yaml")
    # A pass's own axes before the block's, LLMServingSim's defaults before neither.
    if isinstance(entry, dict) and entry.get("bucket_axes"):
        edges, labels = _axes(entry["bucket_axes"], _where(entry, "bucket_axes", at))
    else:
        edges, labels = _axes(block.get("bucket_axes") or DEFAULT_AXES, _where(block, "bucket_axes", where))
    if entry is None:
        # No fit of this pass: the block's pooled alpha for every batch, as LLMServingSim has it.
        return {"source": source, "edges": edges, "rows": [],
                "alpha_default": real(block.get("alpha_default", 0.0), str(_where(block, "alpha_default", where)),
                                      minimum=None)}
    # A bucket without a row: the pass's pooled alpha, else none (LLMServingSim's fallback 0).
    pooled = real(entry.get("alpha_default", 0.0), str(_where(entry, "alpha_default", at)), minimum=None)
    inline = entry.get("alpha_by_bucket")
    if inline or "bucket_table" not in entry:
        # An inline table is the fit itself; LLMServingSim reads bucket_table only without one.
        rows = _inline(inline or {}, _where(entry, "alpha_by_bucket", at), labels)
        return {"source": source, "edges": edges, "rows": rows, "alpha_default": pooled}
    name = entry["bucket_table"]
    table_at = _where(entry, "bucket_table", at)
    # The pass's own skew_fit.csv, as LLMServingSim writes it: the one file of a pass a
    # profile reads besides its tables (and whose change a cached profile notices).
    path = base / "skew_fit.csv"
    if not isinstance(name, str) or (folder / name).resolve() != path.resolve():
        raise ConfigError(f"{table_at}: expected the pass's table, {path.relative_to(folder).as_posix()}, "
                          f"got {name!r}")
    if not path.is_file():
        raise ConfigError(f"{table_at}: {path}: no such file (the pass's skew fit)")
    return {"source": str(path), "edges": edges, "rows": _table(path, labels), "alpha_default": pooled}
