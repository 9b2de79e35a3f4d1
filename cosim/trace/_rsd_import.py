"""Importing the outputs of the public RSD code (reward-guided speculative
decoding, `--save_outputs`) as forward-only traces.

An RSD record holds, per problem: ``question`` (and ``idx``), ``code`` (final
responses; the first is the greedy one), ``score`` (correctness per response),
``token_counts`` = [accepted draft tokens, target tokens, discarded draft
tokens], ``turn_info`` = [[step, model], ...] with model 1 = a draft step kept
and 2 = a target step after a rejected draft, and ``reward`` = the PRM score of
every draft step in order. Steps are separated by "\\n\\n".

RSD does not save how long each discarded draft was, only their total
(``token_counts[2]``). The importer splits that total across the rejected
steps in proportion to the length of the target step that replaced each
(largest remainders, at least one token each), and says so in the trace's
metadata. RSD has no backtracking: the trace is forward-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ._dataset_stats import STEP_DELIMITER, TOKENIZER_NOTE, default_counter, split_steps
from .._files import parse_json_line, read_json_lines
from ..errors import ConfigError, TraceError
from ._events import Draft, Problem, Refine, TraceHeader
from ._io import MAX_TOKENS, Trace, check_storable

# Qwen2.5-Math's chat template around each question (estimate, as in the dataset profiles).
TEMPLATE_TOKENS = 30
SPLIT_METHOD = ("discarded draft tokens (RSD token_counts[2]) split across the rejected steps in proportion to "
                "the target step that replaced each, largest remainders, at least 1 token each")


class RsdRecordError(TraceError):
    """An RSD record that is missing fields or does not add up."""


@dataclass
class RsdImport:
    trace: Trace
    skipped: list[str] = field(default_factory=list)


def _split(total: int, weights: list[int], where: str) -> list[int]:
    n = len(weights)
    if n == 0:
        if total != 0:
            raise RsdRecordError(f"{where}: token_counts[2]: {total} discarded draft tokens but no rejected step "
                                 f"in turn_info")
        return []
    if total < n:
        raise RsdRecordError(f"{where}: token_counts[2]: {total} discarded draft tokens cannot cover {n} rejected "
                             f"steps (at least one token each)")
    spare = total - n
    scale = sum(weights)
    exact = [spare * w / scale for w in weights]
    parts = [int(x) for x in exact]
    for i in sorted(range(n), key=lambda i: exact[i] - parts[i], reverse=True)[: spare - sum(parts)]:
        parts[i] += 1
    return [p + 1 for p in parts]


def _field(record: dict[str, Any], name: str, kind: type | tuple, where: str) -> Any:
    if name not in record:
        raise RsdRecordError(f"{where}: {name}: missing field")
    value = record[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise RsdRecordError(f"{where}: {name}: expected {getattr(kind, '__name__', kind)}, got "
                             f"{type(value).__name__}")
    return value


def rsd_problem(record: Any, where: str, dataset: str, count: Callable[[str], int], header: TraceHeader,
                index: int) -> Problem:
    if not isinstance(record, dict):
        raise RsdRecordError(f"{where}: expected a JSON object")
    question = _field(record, "question", str, where)
    code = _field(record, "code", list, where)
    if not code or not isinstance(code[0], str):
        raise RsdRecordError(f"{where}: code: expected a list whose first item is the greedy response")
    turns = _field(record, "turn_info", list, where)
    rewards = _field(record, "reward", list, where)
    counts = _field(record, "token_counts", list, where)
    if len(counts) != 3 or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_TOKENS * 1000
                                   for c in counts):
        raise RsdRecordError(f"{where}: token_counts: expected [accepted, target, discarded], three counts >= 0, "
                             f"got {counts!r}")
    steps = split_steps(code[0])
    if len(turns) != len(steps):
        raise RsdRecordError(f"{where}: turn_info: {len(turns)} turns but the greedy response has {len(steps)} "
                             f"steps (split at {STEP_DELIMITER!r})")
    if len(rewards) != len(turns):
        raise RsdRecordError(f"{where}: reward: {len(rewards)} rewards for {len(turns)} draft steps (every step "
                             f"is drafted and scored once)")
    models = []
    for i, turn in enumerate(turns):
        if not (isinstance(turn, list) and len(turn) == 2 and turn[1] in (1, 2)):
            raise RsdRecordError(f"{where}: turn_info[{i}]: expected [step, 1 or 2], got {turn!r}")
        models.append(turn[1])
    lengths = [max(1, count(step)) for step in steps]
    for i, (model, reward) in enumerate(zip(models, rewards)):
        if isinstance(reward, bool) or not isinstance(reward, int | float) or not 0 <= reward <= 1:
            raise RsdRecordError(f"{where}: reward[{i}]: expected a score in [0, 1], got {reward!r}")
        kept = reward >= header.accept_threshold
        if kept != (model == 1):
            raise RsdRecordError(f"{where}: turn_info[{i}] and reward[{i}] disagree: model {model} "
                                 f"({'draft kept' if model == 1 else 'target step'}) but reward {reward} is "
                                 f"{'>=' if kept else '<'} the threshold {header.accept_threshold}")
    if counts[1] == 0 and 2 in models:
        raise RsdRecordError(f"{where}: token_counts[1]: no target tokens but turn_info has target steps")
    rejected = [i for i, m in enumerate(models) if m == 2]
    discarded = _split(counts[2], [lengths[i] for i in rejected], where)
    events: list[Any] = []
    drafts = dict(zip(rejected, discarded))
    for i, (model, reward) in enumerate(zip(models, rewards)):
        step = i + 1
        if model == 1:
            events.append(Draft(step, lengths[i], float(reward), True))
        else:
            events.append(Draft(step, drafts[i], float(reward), False))
            events.append(Refine(step, lengths[i], None, True))
    scores = record.get("score")
    correct = scores[0] if isinstance(scores, list) and scores and isinstance(scores[0], bool) else None
    ident = record.get("idx", index)
    if not isinstance(ident, int | str) or isinstance(ident, bool) or \
            not str(ident).isprintable() or any(0xD800 <= ord(c) <= 0xDFFF for c in str(ident)):
        raise RsdRecordError(f"{where}: idx: expected a number or printable text, got {ident!r}")
    return Problem(f"{dataset}-{ident}", dataset, TEMPLATE_TOKENS + max(1, count(question)), tuple(events), correct)


def import_rsd(path: str | Path, dataset: str, *, count: Callable[[str], int] | None = None,
               tokenizer: str | None = None, skip_bad: bool = False,
               header: TraceHeader | None = None) -> RsdImport:
    """Rebuilds a forward-only trace from RSD's saved outputs (one JSON object per line).

    Token counts use the offline tokenizer proxy of the dataset profiles, a local
    HuggingFace tokenizer folder (``tokenizer``), or any ``count(text) -> int``.
    ``skip_bad`` skips records that fail their checks and lists them in ``skipped``.
    """
    path = Path(path)
    if not dataset:
        raise ConfigError("import-rsd: --dataset names the dataset of the records")
    if tokenizer and count:
        raise ConfigError("import-rsd: give a tokenizer or a count function, not both")
    note = TOKENIZER_NOTE
    if tokenizer:
        count, note = _hf_counter(tokenizer), f"HuggingFace tokenizer {tokenizer}"
    count = count or default_counter()
    base = header or TraceHeader()
    head = TraceHeader(base.accept_threshold, base.backtrack_threshold, base.max_backtracks, backtracking=False,
                       metadata={"source": {"format": "rsd --save_outputs", "file": str(path)},
                                 "tokenizer": note, "template_tokens": TEMPLATE_TOKENS,
                                 "discarded_draft_lengths": SPLIT_METHOD})
    lines = read_json_lines(path)
    problems: list[Problem] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = parse_json_line(line, where, RsdRecordError)
            problem = rsd_problem(record, where, dataset, count, head, len(problems) + len(skipped))
            if problem.id in seen:
                raise RsdRecordError(f"{where}: idx: problem {problem.id!r} appears twice")
            try:  # what the trace itself would refuse (no step at all, a step past the token limit)
                check_storable(problem, head)
            except TraceError as exc:
                raise RsdRecordError(f"{where}: the record makes a problem no trace can hold: {exc}") from None
        except RsdRecordError as exc:
            if not skip_bad:
                raise
            skipped.append(str(exc))
            continue
        seen.add(problem.id)
        problems.append(problem)
    if not problems:
        raise ConfigError(f"{path}: no usable RSD record" + (f" ({len(skipped)} skipped)" if skipped else ""))
    head.metadata["skipped_records"] = len(skipped)
    return RsdImport(Trace(head, problems), skipped)


def _hf_counter(tokenizer: str) -> Callable[[str], int]:
    try:
        from transformers import AutoTokenizer  # lazy: transformers, the optional [record] extra
    except ImportError:
        raise ConfigError("--tokenizer needs transformers: pip install 'heteroreason-cosim[record]'") from None
    try:
        tok = AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any loading failure is the user's path
        raise ConfigError(f"--tokenizer {tokenizer}: cannot load a tokenizer there: {exc}") from None
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])
