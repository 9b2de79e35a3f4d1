"""Folders of measured operator times as a GPU role's latency model (docs/hardware.md,
"Operator profiles"): LLMServingSim's profiler bundle (``meta.yaml``, ``dense.csv``,
``attention.csv``, ``per_sequence.csv``, ``moe.csv`` and ``skew_fit.csv`` where it has them,
at the top or in ``tp1/``, ``tp2/``, ... for a tensor-parallel group of that many GPUs; times
in microseconds, one transformer layer) or Vidur's profiling CSVs (``mlp.csv`` and
``attention.csv``, times in milliseconds, rows for several model shapes). Every file is
checked line by line; an error names the file, line and field. The native model
(models/operator_profile.hpp) sums the operators per iteration."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._attention_skew import attention_skew
from ._point_table import PointTable
from ._profile_csv import ProfileCsv
from ..schema._yamlio import LocatedDict, load_yaml

# LLMServingSim's dense decoders (profiler/models/llama.yaml, qwen3.yaml): per layer, the
# pre-attention norm, the projections, rotary embedding, the post-attention norm and the MLP;
# once an iteration, the embedding and the final norm.
LSS_PER_LAYER = {"layernorm": 2, "qkv_proj": 1, "qk_norm": 1, "rotary_emb": 1, "o_proj": 1, "gate_up_proj": 1,
                 "act_fn": 1, "down_proj": 1}
LSS_ONCE = ("embedding", "final_layernorm")
LSS_REQUIRED = ("layernorm", "qkv_proj", "o_proj", "gate_up_proj", "act_fn", "down_proj", "embedding")
LSS_PER_SEQUENCE = ("lm_head", "sampler")
LSS_MLP = ("gate_up_proj", "act_fn", "down_proj")  # a MoE model's moe.csv replaces them in its MoE layers
LSS_ATTENTION = ("prefill_chunk", "kv_prefill", "n_decode", "kv_decode")
LSS_FILES = ("dense.csv", "per_sequence.csv", "attention.csv")
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


def _term(name: str, input: str, count: float, file: Path, axes: tuple[str, ...], rows: np.ndarray
          ) -> dict[str, Any]:
    return {"name": name, "input": input, "count": float(count), "file": str(file), "axes": list(axes),
            "rows": rows}


def _by_layer(csvfile: ProfileCsv, key: str, known: tuple[str, ...], scale: float) -> dict[str, np.ndarray]:
    tables: dict[str, PointTable] = {}
    for line, row in csvfile.rows():
        layer = csvfile.text(row, "layer")
        if layer not in known:
            raise ConfigError(f"{csvfile.path}:{line}: layer: unknown operator {layer!r} (known: {', '.join(known)})")
        x = csvfile.number(line, row, key, whole=True)
        if x < 1:
            raise ConfigError(f"{csvfile.path}:{line}: {key}: must be >= 1, got {csvfile.text(row, key)!r}")
        points = tables.setdefault(layer, PointTable(csvfile.path, 2))
        points.add(line, [x, csvfile.number(line, row, "time_us", time_ns=scale)])
    return {layer: points.unique() for layer, points in tables.items()}


def _shard(meta: LocatedDict) -> list[int]:
    """The tensor-parallel degrees a bundle was profiled at (``tp_degrees``, else 1)."""
    degrees = meta.get("tp_degrees", [1])
    if not isinstance(degrees, list) or not degrees or \
            not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in degrees):
        raise ConfigError(f"{meta.where_of('tp_degrees')}: expected a list of whole numbers >= 1")
    return degrees


def _yaml_meta(path: Path, model: Any) -> LocatedDict:
    """meta.yaml: a mapping; its model shape, when it gives one, must be the role's model.
    LLMServingSim profiles one layer of the model per tensor-parallel degree and leaves
    ``hf_overrides`` as its last pass set them: the heads, KV heads, MLP width and
    vocabulary of one GPU's shard. A shape matches when it is the model's at one of the
    bundle's ``tp_degrees``."""
    meta = load_yaml(path, scalar_keys=True)
    if not isinstance(meta, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping (LLMServingSim's meta.yaml)")
    degrees = _shard(meta)
    engine = meta.get("engine_effective") or {}
    overrides = engine.get("hf_overrides") if isinstance(engine, dict) else None
    if not isinstance(overrides, dict) or model is None:
        return meta
    def shard(field: str, tp: int) -> float:
        # One GPU's share at degree tp; vLLM replicates KV heads when there are fewer than GPUs.
        value = getattr(model, field)
        return value if field == "hidden" else max(1.0, value / tp) if field == "kv_heads" else value / tp
    given = [(key, field) for key, field in LSS_META_MODEL.items() if key in overrides]
    if any(all(overrides[key] == shard(field, tp) for key, field in given) for tp in degrees):
        return meta
    # None fits: name the first difference at the last degree profiled, the one the file describes.
    tp = degrees[-1]
    key, field = next((k, f) for k, f in given if overrides[k] != shard(f, tp))
    where = overrides.where_of(key) if isinstance(overrides, LocatedDict) else path
    at = "" if tp == 1 else f" ({shard(field, tp):g} a GPU at tensor-parallel degree {tp}, the bundle's last)"
    raise ConfigError(f"{where}: the profile measured {key} {overrides[key]!r}; the role's model "
                      f"{model.name} has {field} {getattr(model, field)!r}{at}")


def _pass(folder: Path, tp: int) -> Path:
    """The folder of a bundle's pass at tensor-parallel degree ``tp``: ``tp{tp}/``, or the top
    folder for one GPU where the bundle has no tp1/."""
    if (folder / f"tp{tp}").is_dir():
        return folder / f"tp{tp}"
    if tp == 1:
        return folder
    passes = sorted(p.name for p in folder.glob("tp*") if p.is_dir()) or ["one GPU's, at the top"]
    raise ConfigError(f"{folder}: no tp{tp}/ pass for tensor_parallel {tp} (the bundle's: {', '.join(passes)})")


def _llmservingsim(folder: Path, model: Any, tp: int) -> OperatorProfile:
    # One GPU's operators at the group's degree: the top folder, or tp{tp}/ of a bundle
    # profiled at several degrees (LLMServingSim profiles one GPU's shard at each).
    base = _pass(folder, tp)
    meta = _yaml_meta(folder / "meta.yaml", model)
    dense = ProfileCsv(base / "dense.csv", ("layer", "tokens", "time_us"))
    layers = _by_layer(dense, "tokens", (*LSS_PER_LAYER, *LSS_ONCE), US)
    moe = _moe(base / "moe.csv", model) if (base / "moe.csv").exists() else None
    if moe is None and model is not None and model.experts:
        raise ConfigError(f"{base / 'moe.csv'}: no such file; {model.name} is a mixture-of-experts model, whose "
                          f"MoE layers an LLMServingSim bundle times there")
    # A MoE model's MLP is its moe.csv in every MoE layer; dense.csv's MLP operators serve
    # the dense layers beside them, where it has any.
    mlp_layers = model.dense_layers if moe is not None else (model.layers if model is not None else 1)
    for name in LSS_REQUIRED:
        if name not in layers and (name not in LSS_MLP or mlp_layers):
            raise ConfigError(f"{dense.path}: layer: no rows for {name!r} (LLMServingSim's dense decoder needs it)")
    per_seq = ProfileCsv(base / "per_sequence.csv", ("layer", "sequences", "time_us"))
    heads = _by_layer(per_seq, "sequences", LSS_PER_SEQUENCE, US)
    if "lm_head" not in heads:
        raise ConfigError(f"{per_seq.path}: layer: no rows for 'lm_head'")
    attention = ProfileCsv(base / "attention.csv", (*LSS_ATTENTION, "time_us"))
    points = PointTable(attention.path, len(LSS_ATTENTION) + 1)
    for line, row in attention.rows():
        key = [attention.number(line, row, name, whole=True) for name in LSS_ATTENTION]
        if key[0] == 0 and key[2] == 0:
            raise ConfigError(f"{attention.path}:{line}: prefill_chunk and n_decode: an attention point needs a "
                              f"prefill chunk or decoding sequences")
        points.add(line, [*key, attention.number(line, row, "time_us", time_ns=US)])
    n = model.layers if model is not None else 1
    terms = [_term(name, "tokens", (mlp_layers if name in LSS_MLP else n) * LSS_PER_LAYER[name], dense.path,
                   ("tokens",), rows) for name, rows in layers.items() if name in LSS_PER_LAYER]
    if moe is not None:
        terms.append(moe)
    terms += [_term(name, "tokens", 1, dense.path, ("tokens",), rows) for name, rows in layers.items()
              if name in LSS_ONCE]
    terms += [_term(name, "sequences", 1, per_seq.path, ("sequences",), rows) for name, rows in heads.items()]
    terms.append(_term("attention", "attention", n, attention.path, LSS_ATTENTION, points.unique()))
    skew = attention_skew(meta, folder, base, tp)
    if skew is not None:
        terms[-1]["skew"] = skew
    return OperatorProfile(str(folder), "llmservingsim", tuple(terms), False)


def _moe(path: Path, model: Any) -> dict[str, Any]:
    """moe.csv: a MoE layer's time by (tokens, activated_experts), every MoE layer of the model."""
    if model is None or not model.experts:
        raise ConfigError(f"{path}: a mixture-of-experts layer's times, but the role's model "
                          f"{getattr(model, 'name', '')} has no experts")
    table = ProfileCsv(path, ("tokens", "activated_experts", "time_us"))
    points = PointTable(path, 3)
    for line, row in table.rows():
        tokens = table.number(line, row, "tokens", whole=True)
        experts = table.number(line, row, "activated_experts", whole=True)
        if tokens < 1 or not 1 <= experts <= model.experts:
            raise ConfigError(f"{path}:{line}: tokens >= 1 and activated_experts 1 to {model.experts} "
                              f"({model.name}'s experts)")
        points.add(line, [tokens, experts, table.number(line, row, "time_us", time_ns=US)])
    return _term("moe", "moe", model.layers - model.dense_layers, path, ("tokens", "activated_experts"),
                 points.unique())


def _matches(csvfile: ProfileCsv, line: int, row: list[str], columns: dict[str, str], model: Any, tp: int) -> bool:
    if model is None:
        return True
    return all(csvfile.number(line, row, column, whole=True) == getattr(model, field)
               for column, field in columns.items()) and \
        csvfile.number(line, row, "num_tensor_parallel_workers", whole=True) == tp


def _mean_by_first(points: PointTable) -> np.ndarray:
    """(x, mean time) for each x: Vidur's profiler may measure a point more than once (its
    fit then spans the repeats); here their mean stands for it."""
    rows = points.table()
    xs, which = np.unique(rows[:, 0], return_inverse=True)
    return np.column_stack((xs, np.bincount(which, rows[:, 1]) / np.bincount(which)))


def _gpus(tp: int) -> str:
    return "one GPU" if tp == 1 else f"{tp} GPUs (num_tensor_parallel_workers {tp})"


def _vidur(folder: Path, model: Any, tp: int) -> OperatorProfile:
    mlp = ProfileCsv(folder / "mlp.csv", ("num_tokens", "num_tensor_parallel_workers", *VIDUR_MODEL_COLUMNS))
    ops = [op for op in (*VIDUR_PER_LAYER, "emb") if f"time_stats.{op}.median" in mlp.header]
    for op in VIDUR_REQUIRED:
        if op not in ops:
            raise ConfigError(f"{mlp.path}:1: time_stats.{op}.median: missing column")
    repeats = {op: PointTable(mlp.path, 2) for op in ops}
    for line, row in mlp.rows():
        if not _matches(mlp, line, row, VIDUR_MODEL_COLUMNS, model, tp):
            continue
        tokens = mlp.number(line, row, "num_tokens", whole=True)
        for op in ops:
            repeats[op].add(line, [tokens, mlp.number(line, row, f"time_stats.{op}.median", time_ns=MS)])
    if not len(repeats[ops[0]]):
        raise ConfigError(f"{mlp.path}: no row for {model.name}'s shape at {_gpus(tp)} ("
                          + ", ".join(f"{c} {getattr(model, f)}" for c, f in VIDUR_MODEL_COLUMNS.items()) + ")")
    attn = ProfileCsv(folder / "attention.csv", ("is_prefill", "batch_size", "prefill_chunk_size", "kv_cache_size",
                                           "num_tensor_parallel_workers", *VIDUR_ATTENTION_MODEL,
                                           "time_stats.attn_prefill.median", "time_stats.attn_decode.median"))
    prefill, decode, save = PointTable(attn.path, 3), PointTable(attn.path, 3), PointTable(attn.path, 2)
    has_save = "time_stats.attn_kv_cache_save.median" in attn.header
    for line, row in attn.rows():
        if not _matches(attn, line, row, VIDUR_ATTENTION_MODEL, model, tp):
            continue
        flag = attn.text(row, "is_prefill").lower()
        if flag not in ("true", "false"):
            raise ConfigError(f"{attn.path}:{line}: is_prefill: expected True or False, got "
                              f"{attn.text(row, 'is_prefill')!r}")
        kv = attn.number(line, row, "kv_cache_size", whole=True)
        if flag == "true":
            x = attn.number(line, row, "prefill_chunk_size", whole=True)
            prefill.add(line, [x, kv, attn.number(line, row, "time_stats.attn_prefill.median", time_ns=MS)])
        else:
            x = attn.number(line, row, "batch_size", whole=True)
            decode.add(line, [x, kv, attn.number(line, row, "time_stats.attn_decode.median", time_ns=MS)])
        if has_save and attn.text(row, "time_stats.attn_kv_cache_save.median"):
            save.add(line, [x, attn.number(line, row, "time_stats.attn_kv_cache_save.median", time_ns=MS)])
    if not len(prefill) or not len(decode):
        raise ConfigError(f"{attn.path}: no {'prefill' if not len(prefill) else 'decode'} row for {model.name}'s "
                          f"shape at {_gpus(tp)}")
    n = model.layers if model is not None else 1
    terms = [_term(op, "tokens", 1 if op == "emb" else n, mlp.path, ("num_tokens",), _mean_by_first(points))
             for op, points in repeats.items()]
    terms.append(_term("attn_prefill", "prefill_attention", n, attn.path, ("prefill_chunk_size", "kv_cache_size"),
                       prefill.unique()))
    terms.append(_term("attn_decode", "decode_attention", n, attn.path, ("batch_size", "kv_cache_size"),
                       decode.unique()))
    if len(save):
        # Vidur fits one model over every row of a token count; their mean stands for it here.
        terms.append(_term("attn_kv_cache_save", "tokens", n, attn.path, ("num_tokens",), _mean_by_first(save)))
    return OperatorProfile(str(folder), "vidur", tuple(terms), True)


def is_operator_profile(path: str | Path) -> bool:
    return Path(path).is_dir()


# The files each format names; nothing else in a folder is read, or even looked at.
VIDUR_FILES = ("mlp.csv", "attention.csv")
LSS_MARKS = ("meta.yaml", "dense.csv", "per_sequence.csv", "tp1")


def _format(path: Path, tp: int) -> tuple[str, tuple[Path, ...]]:
    """Which format a folder holds, and the files it reads: refused when it holds neither,
    or the marks of both (it would be read as one and silently not as the other)."""
    vidur = (path / "mlp.csv").exists()
    lss = [name for name in LSS_MARKS if (path / name).exists()]
    if vidur and lss:
        raise ConfigError(f"{path}: holds both Vidur's mlp.csv and LLMServingSim's {', '.join(lss)}: one operator "
                          f"profile a folder; move one of them out")
    if vidur:
        return "vidur", tuple(path / name for name in VIDUR_FILES)
    if lss:
        base = _pass(path, tp)
        read = (*LSS_FILES, "moe.csv", "skew_fit.csv")
        return "llmservingsim", (path / "meta.yaml", *(base / name for name in read))
    raise ConfigError(f"{path}: not an operator profile: expected LLMServingSim's meta.yaml, dense.csv, "
                      f"attention.csv and per_sequence.csv, or Vidur's mlp.csv and attention.csv")


def _stamp(files: tuple[Path, ...]) -> tuple:
    """What a cached profile is valid for: each file's identity, size and time."""
    out = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            out.append((str(file), None))
            continue
        out.append((str(file), info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(out)


# A profile is read once a process (and a forked worker inherits it): the scenario's check
# and the run's description take the same tables.
@functools.lru_cache(maxsize=8)
def _cached(folder: str, kind: str, stamp: tuple, model: Any, tp: int) -> OperatorProfile:
    path = Path(folder)
    return _vidur(path, model, tp) if kind == "vidur" else _llmservingsim(path, model, tp)


def load_operator_profile(folder: str | Path, model: Any = None, tensor_parallel: int = 1) -> OperatorProfile:
    """The folder's operator profile for ``model`` (its layers scale the per-layer operators;
    its shape picks Vidur's rows and is checked against LLMServingSim's meta.yaml), one
    GPU's of a tensor-parallel group of ``tensor_parallel``: LLMServingSim's ``tp{N}/``
    pass, Vidur's rows of that many workers."""
    path = Path(folder)
    try:
        if not path.is_dir():
            raise ConfigError(f"{path}: no such folder")
        kind, files = _format(path, tensor_parallel)
        resolved = str(path.resolve())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the folder: {exc.strerror}") from None
    return _cached(resolved, kind, _stamp(files), model, tensor_parallel)
