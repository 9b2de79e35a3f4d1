"""A model description from a HuggingFace ``config.json``: the shapes the timing models
need, each value citing the config field it came from, and the stored parameter count
worked out from those shapes (per family: cosim/config/_hf_shapes.py).

Decoder-only causal LMs of the families in _hf_shapes.FAMILIES are read, dense or
mixture-of-experts (Llama 4's text model from its multimodal config); anything else
(another architecture, a scoring head instead of the vocabulary projection, experts
in a family this reader does not know) is refused with the field that says so.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._files import read_text
from .._inputs import MAX_YAML_BYTES
from ..errors import ConfigError
from ..schema._yamltext import commented, quoted
from ._hf_shapes import FAMILIES, experts_of, mla_attention, precision, gqa_attention

# Fields that mark a mixture-of-experts config: refused in a dense family (Mixtral's
# model_type is its own, but a llama config with experts is not a llama).
MOE_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")


@dataclass(frozen=True)
class ImportedModel:
    name: str
    origin: str                        # whose config.json: the repository, or the model's name
    model_type: str
    architecture: str
    values: dict[str, tuple[Any, str]]  # parameter -> (value, citation)

    def yaml_text(self) -> str:
        """The model YAML, every value citing the config field (or the shapes) it came from."""
        description = f"{self.origin} ({self.model_type}), from its config.json"
        lines = [f"# Written by `cosim model import` from the config.json of {commented(self.origin)}",
                 f"# (model_type {commented(self.model_type)}, {commented(self.architecture)}).",
                 "kind: model",
                 f"name: {quoted(self.name)}",
                 f"description: {quoted(description)}"]
        for key, (value, note) in self.values.items():
            shown = "true" if value is True else "false" if value is False else str(value)
            source = f"{self.origin} config.json: {note}"
            lines.append(f"{key}: {{value: {shown}, source: {quoted(source)}}}")
        return "\n".join(lines) + "\n"


def _reject_constant(token: str) -> float:
    raise ValueError(token)


def _line_of(text: str, key: str) -> int:
    match = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _load(path: Path) -> tuple[dict[str, Any], str]:
    text = read_text(path, MAX_YAML_BYTES)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # NaN, Infinity, or an integer too long to read
        token = str(exc)
        if token not in ("NaN", "Infinity", "-Infinity"):
            raise ConfigError(f"{path}: not a usable config.json ({token})") from None
        line = text.count("\n", 0, text.find(token)) + 1
        raise ConfigError(f"{path}:{line}: not a finite number: {token} (JSON has no NaN or Infinity)") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a usable config.json (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a config.json is a JSON object of fields, got {type(data).__name__}")
    return data, text


class _Fields:
    """Reads fields of one config, each error naming the file, the line and the field."""

    def __init__(self, path: Path, data: dict[str, Any], text: str) -> None:
        self.path, self.data, self.text = path, data, text

    def where(self, key: str) -> str:
        return f"{self.path}:{_line_of(self.text, key)}: {key}"

    def whole(self, key: str, default: Any = None) -> int:
        value = self.data.get(key, default)
        if key not in self.data and default is None:
            raise ConfigError(f"{self.path}: {key}: missing (a config.json of its family gives it)")
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not (math.isfinite(value) and value == int(value))):
            raise ConfigError(f"{self.where(key)}: must be a whole number, got {value!r}")
        if value < 1:
            raise ConfigError(f"{self.where(key)}: must be >= 1, got {value!r}")
        return int(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{self.where(key)}: must be true or false, got {value!r}")
        return value


def _architecture(fields: _Fields) -> tuple[str, str]:
    data = fields.data
    model_type = data.get("model_type")
    if not isinstance(model_type, str):
        raise ConfigError(f"{fields.where('model_type') if 'model_type' in data else str(fields.path) + ': model_type'}"
                          f": {'missing' if 'model_type' not in data else f'must be text, got {model_type!r}'}")
    if model_type not in FAMILIES or not FAMILIES[model_type].moe:
        for key in MOE_FIELDS:
            if data.get(key) not in (None, 0, 1):
                raise ConfigError(f"{fields.where(key)}: a mixture-of-experts model ({data.get(key)!r}) of a family "
                                  f"read as dense ({model_type!r}); MoE families: "
                                  f"{', '.join(k for k, f in FAMILIES.items() if f.moe)}")
    if model_type not in FAMILIES:
        raise ConfigError(f"{fields.where('model_type')}: {model_type!r}: unsupported architecture "
                          f"(supported: {', '.join(FAMILIES)}: decoder-only causal LMs)")
    architectures = data.get("architectures", [])
    if not isinstance(architectures, list) or not all(isinstance(a, str) for a in architectures):
        raise ConfigError(f"{fields.where('architectures')}: must be a list of class names, got {architectures!r}")
    causal = ("ForCausalLM", "Llama4ForConditionalGeneration")
    if architectures and not architectures[0].endswith(causal):
        raise ConfigError(f"{fields.where('architectures')}: {architectures[0]!r}: only causal LMs (...ForCausalLM) "
                          f"are imported; a scoring head replaces the vocabulary projection, so write its "
                          f"score_head_params into the YAML by hand (see the qwen2.5-math-prm-7b model)")
    head = f"architectures {architectures[0]}" if architectures else f"model_type {model_type} (a causal LM)"
    return model_type, head


def _count(params: int) -> str:
    """A parameter count as model names give it: 8.03B, 494M, 1352."""
    for unit, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if params >= size:
            return f"{params / size:.3g}{unit}"
    return str(params)


def _own_name(given: str | None, model_type: str, params: int) -> str:
    """The name a config gives its model: the last part of its ``_name_or_path`` (a
    repository or the folder it was saved from), else its model_type and size. Hub
    configs often carry no ``_name_or_path``, and their file sits in a folder named for
    the snapshot, not the model."""
    parts = [p for p in re.split(r"[/\\]", given or "") if p.strip() not in ("", ".", "..")]
    return parts[-1].strip() if parts else f"{model_type}-{_count(params)}"


def import_config(path: str | Path, name: str | None = None, origin: str | None = None) -> ImportedModel:
    """Reads ``config.json`` into a model description. ``name``: the model's name (default:
    the config's ``_name_or_path`` without its owner, else its model_type and size, e.g.
    llama-8.03B); ``origin``:
    whose config the citations name, e.g. a repository (default: ``_name_or_path``, else
    the name)."""
    path = Path(path)
    data, text = _load(path)
    fields = _Fields(path, data, text)
    model_type, head = _architecture(fields)
    family = FAMILIES[model_type]
    tied = fields.flag("tie_word_embeddings", False)
    outer, prefix = fields, ""
    if model_type == "llama4":
        # The multimodal config holds its language model under text_config; the vision
        # tower is not timed (a text prompt never runs it) and not counted.
        text = data.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError(f"{fields.where('text_config') if 'text_config' in data else str(path) + ': text_config'}"
                              f": a Llama 4 config holds its language model there")
        fields, prefix = _Fields(path, text, outer.text), "text_config."
        data = text
    layers = fields.whole("num_hidden_layers")
    hidden = fields.whole("hidden_size")
    heads = fields.whole("num_attention_heads")
    kv_heads = fields.whole("num_key_value_heads", heads) if data.get("num_key_value_heads") is not None else heads
    ffn_key = "intermediate_size_mlp" if model_type == "llama4" else "intermediate_size"
    ffn = fields.whole(ffn_key)
    vocab = fields.whole("vocab_size")
    window = fields.whole("max_position_embeddings")
    if heads % kv_heads:
        raise ConfigError(f"{fields.where('num_key_value_heads')}: {kv_heads} does not divide num_attention_heads "
                          f"({heads})")
    extra: dict[str, tuple[Any, str]] = {}
    if family.mla:
        attention, mla = mla_attention(data, fields.whole, hidden, heads)
        head_dim, head_note = mla.pop("head_dim")
        extra.update(mla)
        extras = "multi-head latent attention"
    else:
        if data.get("head_dim") is not None:
            head_dim, head_note = fields.whole("head_dim"), "head_dim"
        else:
            if hidden % heads:
                raise ConfigError(f"{fields.where('hidden_size')}: {hidden} is not a multiple of num_attention_heads "
                                  f"({heads}) and no head_dim is given")
            head_dim, head_note = hidden // heads, f"hidden_size / num_attention_heads ({hidden} / {heads})"
        attention, extras = gqa_attention(family, hidden, heads, kv_heads, head_dim, fields.flag)
    mlp_bias = model_type == "llama" and fields.flag("mlp_bias", False)
    dense_mlp = 3 * hidden * ffn + ((2 * ffn + hidden) if mlp_bias else 0)
    if family.moe:
        moe_values, moe_mlp, dense_layers, moe_words = experts_of(family, data, fields.whole, fields.where, layers,
                                                                  hidden)
        extra.update(moe_values)
        blocks = (f"{layers} layers: attention {attention}{' ' + extras if extras else ''}, norms {2 * hidden}; "
                  f"{dense_layers} with a gated MLP {dense_mlp}, {layers - dense_layers} with a MoE MLP {moe_mlp} "
                  f"({moe_words})")
        body = layers * (attention + 2 * hidden) + dense_layers * dense_mlp + (layers - dense_layers) * moe_mlp
    else:
        layer = attention + dense_mlp + 2 * hidden
        blocks = (f"{layers} layers x {layer} (attention {attention}{' ' + extras if extras else ''}, gated MLP "
                  f"{dense_mlp}, norms {2 * hidden})")
        body = layers * layer
    extra.update(precision(outer.data, outer.where))
    embedding = vocab * hidden
    params = embedding + body + hidden + (0 if tied else embedding)
    shapes = (f"the shapes it gives: embedding {embedding} + {blocks} + final norm {hidden}"
              + (" (output head tied to the embedding)" if tied else
                 f" + output head {embedding} (tie_word_embeddings false)"))
    data = outer.data

    given = data.get("_name_or_path")
    given = given.strip() if isinstance(given, str) and given.strip() else None
    if name is None:
        name = _own_name(given, model_type, params)
    if not name or not name.strip():
        raise ConfigError(f"{path}: give the model a name (--name)")
    origin = (origin or given or name).strip()
    values: dict[str, tuple[Any, str]] = {
        "layers": (layers, "num_hidden_layers"),
        "hidden": (hidden, "hidden_size"),
        "heads": (heads, "num_attention_heads"),
        "kv_heads": (kv_heads, "num_key_value_heads" if fields.data.get("num_key_value_heads") is not None
                     else "num_key_value_heads not given: num_attention_heads (no grouped-query attention)"),
        "head_dim": (head_dim, head_note),
        "ffn": (ffn, ffn_key),
        "vocab": (vocab, "vocab_size"),
        "params": (params, shapes),
        "lm_head": (True, f"{head} (an output head onto the vocabulary)"),
        "context_window": (window, "max_position_embeddings"),
        **extra,
    }
    if prefix:
        values = {key: (value, prefix + note if note[:1].islower() and not note.startswith("the shapes")
                        and not note.startswith("architectures") else note)
                  for key, (value, note) in values.items()}
    return ImportedModel(name.strip(), origin, model_type, head.removeprefix("architectures "), values)
