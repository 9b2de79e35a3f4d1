"""Plain serving requests in the trace format (docs/workload.md): a request with a prompt,
an output length and an arrival time is a problem of one step, a draft of the output's
length that was accepted, so its final chain is the output. The autoregressive system
generates exactly that after the prompt; a speculative system replays it as one accepted
step. A trace header may say that every prompt starts with the same tokens
(``metadata.shared_prefix_tokens``, a system prompt), which a serving engine with prefix
caching computes once. The prefix is a count of tokens like any other (at most MAX_TOKENS)
and no longer than any prompt: a prompt cannot begin with more tokens than it has."""

from __future__ import annotations

import numbers
from typing import Any

from ..errors import TraceError
from ._events import SHARED_PREFIX, Draft, Problem, TraceHeader
from ._parse import MAX_TOKENS

PLAIN_KIND = "plain-requests"


def plain_problem(id: str, prompt_tokens: int, output_tokens: int, arrival_s: float | None = None,
                  dataset: str = "requests") -> Problem:
    """One plain request: ``prompt_tokens`` in, ``output_tokens`` out, arriving at ``arrival_s``."""
    return Problem(id=id, dataset=dataset, prompt_tokens=prompt_tokens,
                   events=(Draft(step=1, tokens=output_tokens, score=1.0, accepted=True),),
                   arrival_s=arrival_s)


def plain_header(source: str, shared_prefix_tokens: int = 0, **metadata: Any) -> TraceHeader:
    """The header of a trace of plain requests: the default thresholds (a score of 1 passes
    any), and metadata saying what the problems are."""
    meta: dict[str, Any] = {"kind": PLAIN_KIND, "source": source,
                            "encoding": "each request is one accepted draft step as long as its output", **metadata}
    if shared_prefix_tokens:
        meta[SHARED_PREFIX] = shared_prefix_tokens
    return TraceHeader(metadata=meta)


def shared_prefix_tokens(header: TraceHeader) -> int:
    """The prompt tokens every problem shares (0 when the header does not say)."""
    value = header.metadata.get(SHARED_PREFIX, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise TraceError(f"trace header: metadata.{SHARED_PREFIX}: expected a whole number of tokens from 0 to "
                         f"{MAX_TOKENS}, got {value!r}")
    return value


def check_shared_prefix(value: Any, shortest: int, where: str, name: str = SHARED_PREFIX) -> int:
    """``value`` as the tokens every prompt shares, when the shortest prompt has ``shortest``
    tokens (``where`` names it): TraceError naming ``name`` otherwise, never a prefix
    quietly cut to a prompt's length."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value <= MAX_TOKENS:
        raise TraceError(f"{name}: expected a whole number of tokens from 0 to {MAX_TOKENS}, got {value!r}")
    value = int(value)  # a numpy integer as the int a file holds
    if value > shortest:
        raise TraceError(f"{name}: {value} tokens, but the prompt of {where} has {shortest}, and every prompt begins "
                         f"with the shared prefix; give at most {shortest}")
    return value
