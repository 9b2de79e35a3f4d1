"""The scenario, requests and arrivals ``cosim serve`` and ``cosim plan`` both take from
their options."""

from __future__ import annotations

import argparse
from typing import Any

from .. import trace as traces
from ..config._model_names import CONFIG_TARGETS
from ..config.hardware import load_model
from ..config._role_files import role_file, with_role_files
from ..config.scenario import load_scenario
from ..errors import ConfigError
from ._set_option import parse_value
from ._words import counted


def scenario_with_settings(name: str, config: int | None, settings: list[str]) -> Any:
    """The scenario with its ``--set PATH=VALUE`` options applied: a role's file
    (``target.model=FILE``, ``target.device=FILE``, ``target.profile=DIR``...) as the
    scenario file would name it, then the parameters."""
    pairs, labels, files = [], {}, []
    for option in settings:
        path, sep, text = option.partition("=")
        if not sep or not path.strip() or not text.strip():
            raise ConfigError(f"--set {option!r}: write PATH=VALUE, e.g. cluster.target.devices=2")
        path = path.strip()
        if role_file(path) is not None:
            if path in labels:
                raise ConfigError(f"--set {path}: given twice")
            files.append((path, text.strip(), f"--set {option.strip()}"))
        else:
            pairs.append((path, parse_value(text)))
        labels[path] = f"--set {option.strip()}"
    scn = with_role_files(name, config, files) if files else load_scenario(name, config)
    # Applied together and then checked, so the order of the --set options never matters.
    return scn.with_values(pairs, given_as=labels) if pairs else scn


def check_config_used(config: int | None, scn: Any) -> None:
    """``--config`` beside ``--trace``: the config picks the target model a scenario leaves
    out, and the target that refines a drawn workload's steps. A scenario that names its own
    target model, replaying a file, takes nothing from it: refused, as a value without effect."""
    if config is not None and scn.target.model != load_model(CONFIG_TARGETS[scn.config]):
        raise ConfigError(f"--config {config}: {scn.name} names its own target model ({scn.target.model.name}) and "
                          f"--trace gives the workload, so the config picks neither and would have no effect; "
                          f"drop --config")


def requests_of(args: argparse.Namespace, scn: Any) -> tuple[Any, str]:
    """The requests to serve (a trace file, or drawn from a profile), and how to name them."""
    if args.trace:
        if args.profile is not None or args.requests is not None:
            raise ConfigError("--trace serves a file: --profile and --requests would be ignored; drop them")
        check_config_used(args.config, scn)
        loaded = traces.load(args.trace)
        if args.rate is None and loaded.arrivals() is None:
            raise ConfigError(f"--trace {args.trace}: carries no arrival times (trace version 1); give --rate")
        return loaded, f"trace {args.trace}"
    if args.rate is None:
        raise ConfigError("--rate: give the arrival rate (requests per second), or a --trace with arrival times")
    count = 1000 if args.requests is None else args.requests
    if count < 1:
        raise ConfigError(f"--requests: must be >= 1, got {count}")
    profile = args.profile or "math500"
    drawn = traces.generate(profile, count, 0 if args.seed is None else args.seed, backtracking=scn.backtracking,
                            config=scn.config)
    return drawn, f"{counted(count, 'request')} from profile {profile}"


def arrivals_text(args: argparse.Namespace) -> str:
    if args.rate is None:
        return "the trace's arrival times"
    return f"{args.rate:g}/s " + ("Poisson" if args.cv is None else f"Gamma (cv {args.cv:g})")
