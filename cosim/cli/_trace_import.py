"""`cosim trace import REQUESTS.jsonl [--clock client|engine] [--dataset NAME] [--out F]`:
a vLLM benchmark request log as a trace of plain requests (docs/workload.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError
from ..outputs._atomic import writable_file
from ..outputs._check import check_files
from .._token_metrics import format_latency
from ..trace._vllm_log import CLOCKS, read_request_log
from ._words import counted


def add_parser(tsub: argparse._SubParsersAction) -> None:
    p = tsub.add_parser("import", help="a vLLM serving benchmark's request log (JSON Lines: request_id, input_toks, "
                                       "output_toks, arrival_time and vLLM's timestamps) as a trace of plain requests")
    p.add_argument("file", help="the request log, one JSON object per request")
    p.add_argument("--clock", choices=CLOCKS, default="client",
                   help="arrivals from the client's arrival_time (default) or the engine's queued_ts, each "
                        "relative to the first request's")
    p.add_argument("--dataset", default="vllm-requests", help="dataset name to give the requests")
    p.add_argument("--shared-prefix-tokens", type=int, default=0,
                   help="every prompt begins with the same this many tokens (a system prompt), which a vLLM "
                        "engine with prefix caching computes once (default 0)")
    p.add_argument("--out", help="trace to write (default FILE.trace.jsonl)")
    p.set_defaults(func=cmd_trace_import)


def cmd_trace_import(args: argparse.Namespace) -> int:
    given = args.out or str(Path(args.file).with_suffix("")) + ".trace.jsonl"
    out, = check_files([("--out", given)], {f"the request log {args.file}": args.file})
    writable_file(out, "--out")
    if args.shared_prefix_tokens < 0:
        raise ConfigError(f"--shared-prefix-tokens: must be >= 0, got {args.shared_prefix_tokens}")
    log = read_request_log(args.file)
    trace = log.to_trace(args.clock, args.dataset, args.shared_prefix_tokens)
    path = trace.save(out)
    arrivals = trace.arrivals()
    print(f"{counted(len(trace), 'request')}, {int(log.input_tokens.sum())} prompt and "
          f"{int(log.output_tokens.sum())} output tokens, arriving over {arrivals[-1]:.3f} s ({args.clock} clock)")
    if log.timestamps is not None:
        measured = log.measured()
        print("as vLLM measured them (queued_ts to first_token_ts and last_token_ts):")
        print(format_latency(measured))
    print(f"wrote {path}")
    return 0
