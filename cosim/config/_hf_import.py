"""A model description from a HuggingFace ``config.json``: the shapes the timing models
need, each value citing the config field it came from, and the stored parameter count
worked out from those shapes.

Dense decoder-only causal LMs of the families below are read; anything else (a
mixture-of-experts, another architecture, a scoring head instead of the vocabulary
projection) is refused with the field that says so, because the timing models stream
every weight for every token and would be wrong for them.
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

# model_type -> (q/k/v biases always, whether attention_bias adds q/k/v/o biases, q/k norms per head)
FAMILIES: dict[str, tuple[bool, bool, bool]] = {
    "llama": (False, True, False),
    "mistral": (False, False, False),
    "qwen2": (True, False, False),   # Qwen2 and Qwen2.5: biases on q, k and v
    "qwen3": (False, True, True),    # Qwen3: RMSNorm on each head's q and k
}
# Fields that mark a mixture-of-experts config, whatever its model_type says.
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
            raise ConfigError(f"{self.path}: {key}: missing (a dense causal LM's config.json gives it)")
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
    for key in MOE_FIELDS:
        if data.get(key) not in (None, 0, 1):
            raise ConfigError(f"{fields.where(key)}: a mixture-of-experts model ({data.get(key)!r}); the timing "
                              f"models stream every weight for every token, which an MoE does not: not supported")
    model_type = data.get("model_type")
    if not isinstance(model_type, str):
        raise ConfigError(f"{fields.where('model_type') if 'model_type' in data else str(fields.path) + ': model_type'}"
                          f": {'missing' if 'model_type' not in data else f'must be text, got {model_type!r}'}")
    if model_type not in FAMILIES:
        moe = "a mixture-of-experts model; " if "moe" in model_type or model_type == "mixtral" else ""
        raise ConfigError(f"{fields.where('model_type')}: {model_type!r}: {moe}unsupported architecture "
                          f"(supported: {', '.join(FAMILIES)}: dense decoder-only causal LMs)")
    architectures = data.get("architectures", [])
    if not isinstance(architectures, list) or not all(isinstance(a, str) for a in architectures):
        raise ConfigError(f"{fields.where('architectures')}: must be a list of class names, got {architectures!r}")
    if architectures and not architectures[0].endswith("ForCausalLM"):
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
    always_qkv_bias, attention_bias_flag, qk_norm = FAMILIES[model_type]
    layers = fields.whole("num_hidden_layers")
    hidden = fields.whole("hidden_size")
    heads = fields.whole("num_attention_heads")
    kv_heads = fields.whole("num_key_value_heads", heads) if data.get("num_key_value_heads") is not None else heads
    ffn = fields.whole("intermediate_size")
    vocab = fields.whole("vocab_size")
    window = fields.whole("max_position_embeddings")
    if heads % kv_heads:
        raise ConfigError(f"{fields.where('num_key_value_heads')}: {kv_heads} does not divide num_attention_heads "
                          f"({heads})")
    if data.get("head_dim") is not None:
        head_dim, head_note = fields.whole("head_dim"), "head_dim"
    else:
        if hidden % heads:
            raise ConfigError(f"{fields.where('hidden_size')}: {hidden} is not a multiple of num_attention_heads "
                              f"({heads}) and no head_dim is given")
        head_dim, head_note = hidden // heads, f"hidden_size / num_attention_heads ({hidden} / {heads})"
    tied = fields.flag("tie_word_embeddings", False)
    all_bias = attention_bias_flag and fields.flag("attention_bias", False)
    mlp_bias = model_type == "llama" and fields.flag("mlp_bias", False)

    q, kv = heads * head_dim, kv_heads * head_dim
    attention = hidden * q + 2 * hidden * kv + q * hidden
    biases = (q + 2 * kv) if (always_qkv_bias or all_bias) else 0
    biases += hidden if all_bias else 0
    attention += biases + (2 * head_dim if qk_norm else 0)
    mlp = 3 * hidden * ffn + ((2 * ffn + hidden) if mlp_bias else 0)
    layer = attention + mlp + 2 * hidden
    embedding = vocab * hidden
    params = embedding + layers * layer + hidden + (0 if tied else embedding)
    extras = ", ".join(part for part in (
        "with q/k/v biases" if biases and not all_bias else "with q/k/v/o biases" if all_bias else "",
        "q/k norms" if qk_norm else "") if part)
    shapes = (f"the shapes it gives: embedding {embedding} + {layers} layers x {layer} (attention {attention}"
              f"{' ' + extras if extras else ''}, gated MLP {mlp}, norms {2 * hidden}) + final norm {hidden}"
              + (" (output head tied to the embedding)" if tied else
                 f" + output head {embedding} (tie_word_embeddings false)"))

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
        "kv_heads": (kv_heads, "num_key_value_heads" if data.get("num_key_value_heads") is not None
                     else "num_key_value_heads not given: num_attention_heads (no grouped-query attention)"),
        "head_dim": (head_dim, head_note),
        "ffn": (ffn, "intermediate_size"),
        "vocab": (vocab, "vocab_size"),
        "params": (params, shapes),
        "lm_head": (True, f"{head} (an output head onto the vocabulary)"),
        "context_window": (window, "max_position_embeddings"),
    }
    return ImportedModel(name.strip(), origin, model_type, head.removeprefix("architectures "), values)
