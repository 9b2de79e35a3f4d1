"""Folders of measured operator times as a GPU role's latency model (docs/hardware.md,
"Operator profiles"): LLMServingSim's profiler bundle (``meta.yaml``, ``dense.csv``,
``attention.csv``, ``per_sequence.csv``, at the top or in ``tp1/``; times in microseconds,
one transformer layer) or Vidur's profiling CSVs (``mlp.csv`` and ``attention.csv``, times in
milliseconds, rows for several model shapes). Every file is checked line by line; an error
names the file, line and field. The native model (models/operator_profile.hpp) sums the
operators per iteration."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._inputs import csv_records
from ..errors import ConfigError
from ._yamlio import LocatedDict, load_yaml

# LLMServingSim's dense decoders (profiler/models/llama.yaml, qwen3.yaml): per layer, the
# pre-attention norm, the projections, rotary embedding, the post-attention norm and the MLP;
# once an iteration, the embedding and the final norm.
LSS_PER_LAYER = {"layernorm": 2, "qkv_proj": 1, "qk_norm": 1, "rotary_emb": 1, "o_proj": 1, "gate_up_proj": 1,
                 "act_fn": 1, "down_proj": 1}
LSS_ONCE = ("embedding", "final_layernorm")
LSS_REQUIRED = ("layernorm", "qkv_proj", "o_proj", "gate_up_proj", "act_fn", "down_proj", "embedding")
LSS_PER_SEQUENCE = ("lm_head", "sampler")
LSS_ATTENTION = ("prefill_chunk", "kv_prefill", "n_decode", "kv_decode")
# Vidur's per-layer operators (vidur/profiling/mlp, ExecutionTime: a block is its attention
# layer, its MLP layer and one residual add) and the embedding once an iteration.
VIDUR_PER_LAYER = ("attn_pre_proj", "attn_rope", "attn_post_proj", "mlp_up_proj", "mlp_act", "mlp_down_proj",
                   "input_layernorm", "post_attention_layernorm", "add")
VIDUR_REQUIRED = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_act", "mlp_down_proj")
VIDUR_MODEL_COLUMNS = {"n_head": "heads", "n_kv_head": "kv_heads", "n_embd": "hidden", "n_expanded_embd": "ffn",
                       "vocab_size": "vocab"}
VIDUR_ATTENTION_MODEL = {"n_q_head": "heads", "n_kv_head": "kv_heads", "n_embd": "hidden"}
# LLMServingSim's meta.yaml hf_overrides and the model YAML fields they must match.
LSS_META_MODEL = {"num_attention_heads": "heads", "num_key_value_heads": "kv_heads", "intermediate_size": "ffn",
                  "vocab_size": "vocab", "hidden_size": "hidden"}
US, MS = 1e3, 1e6  # nanoseconds per microsecond and per millisecond


@dataclass(frozen=True)
class OperatorProfile:
    source: str
    format: str  # "llmservingsim" or "vidur"
    terms: tuple[dict[str, Any], ...]  # name, input, count, file, axes, rows (times in ns)
    head_from_roofline: bool

    def native(self) -> dict[str, Any]:
        return {"source": self.source, "head_from_roofline": self.head_from_roofline, "terms": list(self.terms)}


class _Csv:
    """A CSV's rows as dicts, each with its line number, the header checked."""

    def __init__(self, path: Path, required: tuple[str, ...]):
        self.path = path
        try:
            records = list(csv_records(path))
        except ConfigError as exc:
            if not path.exists():
                raise ConfigError(f"{path}: no such file (an operator profile needs it)") from None
            raise exc from None
        header = [h.strip() for h in records[0][1]] if records else []
        for name in required:
            if name not in header:
                # The header is not quoted: a message does not show what a file holds.
                raise ConfigError(f"{path}:1: {name}: missing column (the header needs {', '.join(required)})")
        self.header = header
        self.rows: list[tuple[int, dict[str, str]]] = []
        for line, record in records[1:]:
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(header):
                raise ConfigError(f"{path}:{line}: expected {len(header)} fields, got {len(record)}")
            self.rows.append((line, dict(zip(header, (cell.strip() for cell in record)))))
        if not self.rows:
            raise ConfigError(f"{path}: no rows")

    def number(self, line: int, row: dict[str, str], field: str, whole: bool = False, time: bool = False) -> float:
        text = row[field]
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"{self.path}:{line}: {field}: not a number: {text!r}") from None
        if not math.isfinite(value):
            raise ConfigError(f"{self.path}:{line}: {field}: must be finite, got {text!r}")
        if time and value <= 0:
            raise ConfigError(f"{self.path}:{line}: {field}: a measured time must be > 0, got {text!r}")
        if value < 0:
            raise ConfigError(f"{self.path}:{line}: {field}: must be >= 0, got {text!r}")
        if whole and value != int(value):
            raise ConfigError(f"{self.path}:{line}: {field}: must be a whole number, got {text!r}")
        return value


def _unique(csvfile: _Csv, points: dict[tuple, int], key: tuple, line: int) -> None:
    if key in points:
        raise ConfigError(f"{csvfile.path}:{line}: the same point is measured on line {points[key]}")
    points[key] = line


def _term(name: str, input: str, count: float, file: Path, axes: tuple[str, ...],
          rows: list[list[float]]) -> dict[str, Any]:
    return {"name": name, "input": input, "count": float(count), "file": str(file), "axes": list(axes),
            "rows": rows}


def _by_layer(csvfile: _Csv, key: str, known: tuple[str, ...], scale: float) -> dict[str, list[list[float]]]:
    tables: dict[str, list[list[float]]] = {}
    seen: dict[tuple, int] = {}
    for line, row in csvfile.rows:
        layer = row["layer"]
        if layer not in known:
            raise ConfigError(f"{csvfile.path}:{line}: layer: unknown operator {layer!r} (known: {', '.join(known)})")
        x = csvfile.number(line, row, key, whole=True)
        if x < 1:
            raise ConfigError(f"{csvfile.path}:{line}: {key}: must be >= 1, got {row[key]!r}")
        _unique(csvfile, seen, (layer, x), line)
        tables.setdefault(layer, []).append([x, csvfile.number(line, row, "time_us", time=True) * scale])
    return tables


def _yaml_meta(path: Path, model: Any) -> None:
    """meta.yaml: a mapping; its model shape, when it gives one, must be the role's model."""
    meta = load_yaml(path)
    if not isinstance(meta, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping (LLMServingSim's meta.yaml)")
    engine = meta.get("engine_effective") or {}
    overrides = engine.get("hf_overrides") if isinstance(engine, dict) else None
    if not isinstance(overrides, dict) or model is None:
        return
    for key, field in LSS_META_MODEL.items():
        if key in overrides and overrides[key] != getattr(model, field):
            where = overrides.where_of(key) if isinstance(overrides, LocatedDict) else path
            raise ConfigError(f"{where}: the profile measured {key} {overrides[key]!r}; the role's model "
                              f"{model.name} has {field} {getattr(model, field)!r}")


def _llmservingsim(folder: Path, model: Any) -> OperatorProfile:
    base = folder / "tp1" if (folder / "tp1").is_dir() else folder
    _yaml_meta(folder / "meta.yaml", model)
    dense = _Csv(base / "dense.csv", ("layer", "tokens", "time_us"))
    layers = _by_layer(dense, "tokens", (*LSS_PER_LAYER, *LSS_ONCE), US)
    for name in LSS_REQUIRED:
        if name not in layers:
            raise ConfigError(f"{dense.path}: layer: no rows for {name!r} (LLMServingSim's dense decoder needs it)")
    per_seq = _Csv(base / "per_sequence.csv", ("layer", "sequences", "time_us"))
    heads = _by_layer(per_seq, "sequences", LSS_PER_SEQUENCE, US)
    if "lm_head" not in heads:
        raise ConfigError(f"{per_seq.path}: layer: no rows for 'lm_head'")
    attention = _Csv(base / "attention.csv", (*LSS_ATTENTION, "time_us"))
    points: list[list[float]] = []
    seen: dict[tuple, int] = {}
    for line, row in attention.rows:
        key = [attention.number(line, row, name, whole=True) for name in LSS_ATTENTION]
        if key[0] == 0 and key[2] == 0:
            raise ConfigError(f"{attention.path}:{line}: prefill_chunk and n_decode: an attention point needs a "
                              f"prefill chunk or decoding sequences")
        _unique(attention, seen, tuple(key), line)
        points.append([*key, attention.number(line, row, "time_us", time=True) * US])
    n = model.layers if model is not None else 1
    terms = [_term(name, "tokens", n * LSS_PER_LAYER[name], dense.path, ("tokens",), rows)
             for name, rows in layers.items() if name in LSS_PER_LAYER]
    terms += [_term(name, "tokens", 1, dense.path, ("tokens",), rows) for name, rows in layers.items()
              if name in LSS_ONCE]
    terms += [_term(name, "sequences", 1, per_seq.path, ("sequences",), rows) for name, rows in heads.items()]
    terms.append(_term("attention", "attention", n, attention.path, LSS_ATTENTION, points))
    return OperatorProfile(str(folder), "llmservingsim", tuple(terms), False)


def _matches(csvfile: _Csv, line: int, row: dict[str, str], columns: dict[str, str], model: Any) -> bool:
    if model is None:
        return True
    return all(csvfile.number(line, row, column, whole=True) == getattr(model, field)
               for column, field in columns.items()) and \
        csvfile.number(line, row, "num_tensor_parallel_workers", whole=True) == 1


def _vidur(folder: Path, model: Any) -> OperatorProfile:
    mlp = _Csv(folder / "mlp.csv", ("num_tokens", "num_tensor_parallel_workers", *VIDUR_MODEL_COLUMNS))
    ops = [op for op in (*VIDUR_PER_LAYER, "emb") if f"time_stats.{op}.median" in mlp.header]
    for op in VIDUR_REQUIRED:
        if op not in ops:
            raise ConfigError(f"{mlp.path}:1: time_stats.{op}.median: missing column")
    # Vidur's profiler may measure a token count more than once (its fit then spans the
    # repeats); each operator's repeats are averaged here.
    repeats: dict[str, dict[float, list[float]]] = {op: {} for op in ops}
    for line, row in mlp.rows:
        if not _matches(mlp, line, row, VIDUR_MODEL_COLUMNS, model):
            continue
        tokens = mlp.number(line, row, "num_tokens", whole=True)
        for op in ops:
            repeats[op].setdefault(tokens, []).append(
                mlp.number(line, row, f"time_stats.{op}.median", time=True) * MS)
    tables = {op: [[x, sum(v) / len(v)] for x, v in sorted(by_tokens.items())] for op, by_tokens in repeats.items()}
    if not tables[ops[0]]:
        raise ConfigError(f"{mlp.path}: no row for {model.name}'s shape at one GPU ("
                          + ", ".join(f"{c} {getattr(model, f)}" for c, f in VIDUR_MODEL_COLUMNS.items()) + ")")
    attn = _Csv(folder / "attention.csv", ("is_prefill", "batch_size", "prefill_chunk_size", "kv_cache_size",
                                           "num_tensor_parallel_workers", *VIDUR_ATTENTION_MODEL,
                                           "time_stats.attn_prefill.median", "time_stats.attn_decode.median"))
    prefill: list[list[float]] = []
    decode: list[list[float]] = []
    save: dict[float, list[float]] = {}
    points: dict[tuple, int] = {}
    for line, row in attn.rows:
        if not _matches(attn, line, row, VIDUR_ATTENTION_MODEL, model):
            continue
        flag = row["is_prefill"].lower()
        if flag not in ("true", "false"):
            raise ConfigError(f"{attn.path}:{line}: is_prefill: expected True or False, got {row['is_prefill']!r}")
        kv = attn.number(line, row, "kv_cache_size", whole=True)
        if flag == "true":
            x = attn.number(line, row, "prefill_chunk_size", whole=True)
            _unique(attn, points, ("prefill", x, kv), line)
            prefill.append([x, kv, attn.number(line, row, "time_stats.attn_prefill.median", time=True) * MS])
        else:
            x = attn.number(line, row, "batch_size", whole=True)
            _unique(attn, points, ("decode", x, kv), line)
            decode.append([x, kv, attn.number(line, row, "time_stats.attn_decode.median", time=True) * MS])
        if "time_stats.attn_kv_cache_save.median" in attn.header and row["time_stats.attn_kv_cache_save.median"]:
            save.setdefault(x, []).append(
                attn.number(line, row, "time_stats.attn_kv_cache_save.median", time=True) * MS)
    if not prefill or not decode:
        raise ConfigError(f"{attn.path}: no {'prefill' if not prefill else 'decode'} row for {model.name}'s shape "
                          f"at one GPU")
    n = model.layers if model is not None else 1
    terms = [_term(op, "tokens", 1 if op == "emb" else n, mlp.path, ("num_tokens",), rows)
             for op, rows in tables.items()]
    terms.append(_term("attn_prefill", "prefill_attention", n, attn.path, ("prefill_chunk_size", "kv_cache_size"),
                       prefill))
    terms.append(_term("attn_decode", "decode_attention", n, attn.path, ("batch_size", "kv_cache_size"), decode))
    if save:
        # Vidur fits one model over every row of a token count; their mean stands for it here.
        terms.append(_term("attn_kv_cache_save", "tokens", n, attn.path, ("num_tokens",),
                           [[x, sum(v) / len(v)] for x, v in sorted(save.items())]))
    return OperatorProfile(str(folder), "vidur", tuple(terms), True)


def is_operator_profile(path: str | Path) -> bool:
    return Path(path).is_dir()


@functools.lru_cache(maxsize=8)
def _cached(folder: str, stamp: tuple, model: Any) -> OperatorProfile:
    path = Path(folder)
    if (path / "mlp.csv").exists():
        return _vidur(path, model)
    if (path / "meta.yaml").exists() or (path / "dense.csv").exists() or (path / "tp1").is_dir():
        return _llmservingsim(path, model)
    raise ConfigError(f"{path}: not an operator profile: expected LLMServingSim's meta.yaml, dense.csv, "
                      f"attention.csv and per_sequence.csv, or Vidur's mlp.csv and attention.csv")


def load_operator_profile(folder: str | Path, model: Any = None) -> OperatorProfile:
    """The folder's operator profile for ``model`` (its layers scale the per-layer operators;
    its shape picks Vidur's rows and is checked against LLMServingSim's meta.yaml)."""
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(f"{path}: no such folder")
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(path.rglob("*")) if p.is_file())
    return _cached(str(path.resolve()), stamp, model)
