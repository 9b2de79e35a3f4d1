"""BRSD (docs/system.md) over real models, recorded as a trace and latency profiles."""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..outputs._atomic import write_atomically
from .._files import parse_json_line, read_json_lines
from ..errors import ConfigError
from ..trace import Backtrack, Draft, Problem, Refine, Trace, TraceHeader
from ..trace._io import check_problem
from ._brsd import BrsdRun
from ._models import CausalModel, Scorer, Timings

PROMPT_TEMPLATE = "Question: {question}\nPlease reason step by step, and put your final answer within \\boxed{{}}.\n\n"
_BOXED = re.compile(r"\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")


# What a recording writes in its folder: the trace and each timed role's profile.
FILES = ("trace.jsonl", *(f"profile_{role}.csv" for role in ("draft", "target", "prm")))


@dataclass
class Recording:
    trace: Trace
    timings: dict[str, Timings]
    texts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # problems that left nothing to replay

    def profile_rows(self, role: str) -> list[tuple[str, int, int, float]]:
        """The median seconds of each measured (phase, tokens, context)."""
        return [(phase, tokens, context, statistics.median(seconds))
                for (phase, tokens, context), seconds in sorted(self.timings[role].calls.items())]

    def write(self, folder: str | Path) -> dict[str, Path]:
        folder = Path(folder)
        paths = {"trace": self.trace.save(folder / "trace.jsonl")}
        for role in self.timings:
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["phase", "tokens", "context", "seconds"])
            for row in self.profile_rows(role):
                writer.writerow([row[0], row[1], row[2], f"{row[3]:.9g}"])
            paths[role] = write_atomically(folder / f"profile_{role}.csv", out.getvalue())
        return paths


def final_answer(text: str) -> str | None:
    found = _BOXED.findall(text)
    return found[-1].strip() if found else None


def problem_questions(problems: Iterable[Any]) -> list[tuple[str, str | None]]:
    out = []
    for i, p in enumerate(problems):
        if isinstance(p, str):
            out.append((p, None))
            continue
        if not isinstance(p, dict):
            raise ConfigError(f"problem {i}: expected a question or a mapping with question/problem and answer")
        question = p.get("question", p.get("problem"))
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"problem {i}: no question text (fields question or problem)")
        answer = p.get("answer")
        out.append((question, None if answer is None else str(answer)))
    return out


def record_brsd(draft: CausalModel, target: CausalModel, prm: Scorer, problems: Iterable[Any], *,
                dataset: str = "recorded", header: TraceHeader | None = None, max_step_tokens: int = 256,
                max_steps: int = 40, progress: Callable[[int, int], None] | None = None) -> Recording:
    """Runs BRSD on each problem (cosim.record._brsd.BrsdRun) and records what happened."""
    head = header or TraceHeader()
    if max_step_tokens < 1 or max_steps < 1:
        raise ConfigError("max_step_tokens and max_steps must be >= 1")
    if draft.tokenizer.get_vocab() != target.tokenizer.get_vocab():
        raise ConfigError("draft and target must share a tokenizer (speculative decoding works on token ids)")
    items = problem_questions(problems)
    recorded: list[Problem] = []
    texts: list[str] = []
    skipped: list[str] = []
    for index, (question, answer) in enumerate(items):
        prompt = draft.encode(PROMPT_TEMPLATE.format(question=question))
        run = BrsdRun(draft, target, prm, prompt, head, max_step_tokens, max_steps)
        events = run.all()
        chain = run.chain
        if progress:
            progress(index + 1, len(items))
        if not events:  # the draft ended the answer before writing a step
            skipped.append(f"{dataset}-{index:05d}: the draft model ended the answer at once (no step to replay)")
            continue
        text = draft.decode([t for s in chain for t in s])
        texts.append(text)
        correct = None if answer is None else final_answer(text) == answer.strip()
        recorded.append(Problem(f"{dataset}-{index:05d}", dataset, len(prompt), tuple(events), correct))
    if not recorded:
        raise ConfigError("recording left no problem to replay: " + "; ".join(skipped))
    meta = {"recorded": {"draft": draft.name, "target": target.name, "max_step_tokens": max_step_tokens,
                         "max_steps": max_steps}, "tokenizer": "the models' own"}
    trace = Trace(TraceHeader(head.accept_threshold, head.backtrack_threshold, head.max_backtracks,
                              head.backtracking, meta), recorded)
    for problem in recorded:  # the algorithm's own checks, before anything is written
        check_problem(problem, trace.header)
    timings = {"draft": draft.timings, "target": target.timings}
    prm_timings = getattr(prm, "timings", None)
    if prm_timings is not None:
        timings["prm"] = prm_timings
    return Recording(trace, timings, texts, skipped)


def read_problems(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    rows = []
    given = read_json_lines(path)
    for number, line in enumerate(given, start=1):
        if not line.strip():
            continue
        rows.append(parse_json_line(line, f"{path}:{number}"))
        if limit and len(rows) >= limit:
            break
    return rows
