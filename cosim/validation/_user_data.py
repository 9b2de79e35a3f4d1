"""`cosim validate --data PATH`: a user's own measurements through the same table.

- an ML.ENERGY model JSON (its ``configurations``): every configuration, as the shipped
  mlenergy-h100 case predicts them (cosim/validation/_mlenergy.py), on the device given
  (default the H100 SXM where the file says H100) and the model given or the shipped one
  its ``model_id`` names;
- an LLMServingSim-style bench folder: vLLM's ``requests.jsonl`` and ``meta.json`` (at the
  top or under ``vllm/``), the model's ``config.json`` (or ``--model``), and an operator
  profile bundle under ``profile/`` where there is one. The run is replayed by the
  autoregressive system's vLLM engine (as the shipped rtx4090-vllm case does) with the
  engine settings of ``meta.json`` (its resolved configuration where it has one, else
  its engine arguments and vLLM's defaults), timed by the roofline of the device given and,
  where the bundle reads for this model, by its operators; where the folder holds
  LLMServingSim's cluster file (``llmservingsim_cluster.json``) and the run's GPUs form a
  parallel group, the operators once more with the link that file gives the GPUs
  (``link_bw``, ``link_latency``) as the group's peer link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .._args import real
from .._files import read_text
from .._inputs import MAX_YAML_BYTES
from ..config._hf_import import import_config
from ..config.hardware import load_device, load_model
from ..config.scenario import build_scenario
from ..errors import ConfigError
from ..serve import run
from ..trace._vllm_log import read_request_log
from . import _mlenergy

# vLLM's defaults where a bench's meta.json gives only the engine's arguments
# (vllm/config: CacheConfig block_size 16, gpu_memory_utilization 0.9, prefix caching on in
# the V1 engine; SchedulerConfig async_scheduling, on by default from vLLM 0.11).
VLLM_DEFAULTS = {"block_size": 16, "gpu_memory_utilization": 0.9, "prefix_caching": True, "async_scheduling": True}
QUANTITIES = (("ttft", "mean"), ("ttft", "median"), ("ttft", "p99"), ("tpot", "mean"), ("tpot", "median"),
              ("tpot", "p99"), ("e2el", "mean"))


def rows_for(path: str | Path, device: str | None = None, model: str | None = None
             ) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of a user's measurements and what the prediction leaves out (notes)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".json":
        data, _ = _mlenergy.read(path)
        gpus = {c.get("gpu_model") for c in data["configurations"] if isinstance(c, dict)}
        if device is None:
            if gpus != {"H100"}:
                raise ConfigError(f"--data {path}: measured on {', '.join(map(str, sorted(gpus, key=str)))}; give "
                                  f"the device (--device)")
            device = _mlenergy.DEVICE
        return _mlenergy.rows_of(path, device, model, label=f"data {path.stem}"), []
    if path.is_dir():
        return bench_folder(path, device, model, f"data {path.name}")
    raise ConfigError(f"--data {path}: expected an ML.ENERGY model JSON or a bench folder (requests.jsonl, "
                      f"meta.json, config.json)")


def _find(folder: Path, name: str) -> Path:
    for candidate in (folder / name, folder / "vllm" / name):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"--data {folder}: no {name} (at the top or under vllm/)")


def _model(folder: Path, model: str | None) -> Any:
    if model is not None:
        return load_model(model)
    config = folder / "config.json"
    if not config.is_file():
        raise ConfigError(f"--data {folder}: no config.json; give the model (--model)")
    imported = import_config(config)
    return load_model(yaml.safe_load(imported.yaml_text()))


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON file holding one object; ConfigError naming the file (and line) otherwise."""
    try:
        data = json.loads(read_text(path, MAX_YAML_BYTES))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


def _settings(meta_path: Path) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """The batching section, the parallel groups and notes from a bench's meta.json."""
    meta = _json_object(meta_path)
    engine = meta.get("engine_kwargs") or {}
    resolved = meta.get("resolved_config") or {}
    cache, scheduler = resolved.get("cache_config") or {}, resolved.get("scheduler_config") or {}
    notes = []

    def setting(key: str, section: dict[str, Any], default: Any = None) -> Any:
        value = section.get(key, engine.get(key, default))
        if value is None:
            raise ConfigError(f"{meta_path}: {key}: missing (neither resolved_config nor engine_kwargs gives it)")
        return value

    batching = {"enabled": True, "max_batch": setting("max_num_seqs", scheduler),
                "token_budget": setting("max_num_batched_tokens", scheduler),
                "block_size": cache.get("block_size", VLLM_DEFAULTS["block_size"]),
                "gpu_memory_utilization": cache.get("gpu_memory_utilization",
                                                    engine.get("gpu_memory_utilization",
                                                               VLLM_DEFAULTS["gpu_memory_utilization"])),
                "prefix_caching": cache.get("enable_prefix_caching", engine.get("enable_prefix_caching",
                                                                                VLLM_DEFAULTS["prefix_caching"])),
                "async_scheduling": scheduler.get("async_scheduling", engine.get("async_scheduling",
                                                                                 VLLM_DEFAULTS["async_scheduling"]))}
    if cache.get("num_gpu_blocks"):
        batching["num_gpu_blocks"] = cache["num_gpu_blocks"]
    else:
        notes.append("the KV blocks are derived from gpu_memory_utilization (meta.json gives no num_gpu_blocks)")
    tp = int(engine.get("tensor_parallel_size", 1) or 1)
    dp = int(engine.get("data_parallel_size", 1) or 1)
    ep = bool(engine.get("enable_expert_parallel", False))
    if dp > 1 and ep:
        notes.append(f"data_parallel_size {dp} with expert parallel: the ranks' MoE layers are taken as equally "
                     f"loaded (each GPU serves its experts for {dp} ranks' worth of its own tokens)")
    elif dp > 1:
        notes.append(f"data_parallel_size {dp}: each rank is a replica, requests balanced by the dispatcher")
    group = {"tensor_parallel": tp, "expert_parallel": tp * dp if ep and tp * dp > 1 else 1,
             "data_parallel": dp if ep else 1, "replicas": dp}
    return batching, group, notes


CLUSTER_FILE = "llmservingsim_cluster.json"


def _cluster_link(folder: Path) -> dict[str, Any] | None:
    """The peer link an LLMServingSim cluster file gives the GPUs, as a link description, or
    None without one. An array (one figure per network dimension, the data-parallel one
    last: LLMServingSim's configs/cluster/README.md) gives its last figure: the dimension
    across which engines exchange their MoE layers' tokens."""
    path = folder / CLUSTER_FILE
    if not path.is_file():
        return None
    data = _json_object(path)
    figures = {}
    for key in ("link_bw", "link_latency"):
        value = data.get(key)
        if isinstance(value, list) and value:
            value = value[-1]
        figures[key] = real(value, f"{path}: {key}", positive=key == "link_bw")
    source = f"{path.name}: link_bw, link_latency"
    return {"kind": "pcie", "name": "the cluster file's link", "description": f"as {path.name} gives it",
            "bandwidth": {"value": f"{figures['link_bw']} GB/s", "source": source},
            "efficiency": {"value": 1.0, "source": f"{path.name}: its bandwidth is what a transfer gets"},
            "latency": {"value": f"{figures['link_latency']} ns", "source": source}}


def bench_folder(folder: Path, device: str | None, model_ref: str | None, label: str
                 ) -> tuple[list[dict[str, Any]], list[str]]:
    """A bench folder's rows (``label (variant)`` their case) and notes."""
    if device is None:
        raise ConfigError(f"--data {folder}: a bench folder does not name a shipped device; give one (--device)")
    log = read_request_log(_find(folder, "requests.jsonl"))
    batching, group, notes = _settings(_find(folder, "meta.json"))
    model = _model(folder, model_ref)
    target: dict[str, Any] = {"device": load_device(device), "model": model}
    if group["expert_parallel"] > 1 or group["tensor_parallel"] > 1:
        target["parallel"] = {key: group[key] for key in ("tensor_parallel", "expert_parallel", "data_parallel")}
    base = {"system": "autoregressive", "name": f"data-{folder.name}", "batching": batching,
            "cluster": {"target": {"devices": group["replicas"]}}}
    where = f"--data {folder}"
    variants = {"roofline": build_scenario({**base, "target": target}, source=where)}
    profile = folder / "profile"
    if profile.is_dir():
        try:  # its pass at the run's tensor-parallel degree
            variants["profile"] = build_scenario({**base, "target": {**target, "profile": str(profile)}}, source=where)
        except ConfigError as exc:
            notes.append(f"the profile is not used: {exc}")
        link = _cluster_link(folder)
        if "profile" in variants and link is not None and "parallel" in target:
            variants["profile, cluster link"] = build_scenario(
                {**base, "target": {**target, "profile": str(profile), "peer_link": link}}, source=where)
    trace = log.to_trace("engine")
    measured = log.measured()
    rows = []
    for variant, scn in variants.items():
        tokens = run(scn, trace).summary.tokens
        for quantity, statistic in QUANTITIES:
            rows.append({"case": f"{label} ({variant})", "quantity": f"{quantity.upper()} {statistic}",
                         "unit": "ms", "measured": measured.value(quantity, statistic) * 1e3,
                         "predicted": tokens.value(quantity, statistic) * 1e3})
    return rows, notes
