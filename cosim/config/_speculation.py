"""A scenario's ``speculation:`` section (token-level speculative decoding, docs/system.md):
its parameters (cosim/schema/_speculation.py), its files found from the scenario's folder,
and its checks against the target, each error naming the line or the flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _acceptance
from .. import devices, systems
from .hardware import load_model
from ..errors import ConfigError
from ..schema import _params
from ..schema._speculation import SPECULATION

Speculation = _params.config_class(SPECULATION, __name__)


def reads(system: Any, toggles: Any) -> bool:
    """Whether a scenario's runs read its speculation section: the token-level systems always,
    a step-level system when its target or its draft GPU decodes speculatively
    (toggles.target_speculation, toggles.draft_speculation)."""
    return reads_target(system, toggles) or ("speculation" in system.sections and "toggles" in system.sections
                                              and bool(toggles.draft_speculation))


def reads_target(system: Any, toggles: Any) -> bool:
    """Whether the section sets the target's decoding (not only a draft GPU's)."""
    if "speculation" not in system.sections:
        return False
    return "toggles" not in system.sections or bool(toggles.target_speculation)


def _place(spec: Any, name: str) -> str:
    return _params.origin(spec, name) or f"speculation.{name}"


def located(spec: Any, base: Path | None) -> Any:
    """``spec`` with its relative file references (an acceptance or a draft model YAML) taken
    from the scenario's folder ``base``."""
    if base is None:
        return spec
    changes = {}
    for name in ("acceptance", "draft_model"):
        value = getattr(spec, name)
        if value.endswith((".yaml", ".yml")) and not Path(value).is_absolute():
            changes[name] = str(base / value)
    return _params.replaced(spec, **changes) if changes else spec


def acceptance(spec: Any) -> _acceptance.Acceptance:
    """The section's acceptance profile, its rates scaled by ``acceptance_scale``."""
    try:
        return _acceptance.load(spec.acceptance).scaled(spec.acceptance_scale)
    except ConfigError as exc:
        raise ConfigError(f"{_place(spec, 'acceptance')}: {exc}") from None


def drafter(spec: Any) -> Any:
    """The proposer's model for proposer draft_model (None for the others)."""
    if spec.proposer != "draft_model":
        return None
    try:
        return load_model(spec.draft_model)
    except ConfigError as exc:
        raise ConfigError(f"{_place(spec, 'draft_model')}: {exc}") from None


def eagle_head(model: Any) -> Any:
    """An EAGLE-style draft head of ``model``: one decoder layer of its shape (dense: a MoE
    model's layer with its dense MLP) and its output head over the vocabulary, which a pass
    reads; EAGLE-3's fusion of three hidden states (3 x hidden^2 weights) is stored too."""
    m = model
    h, q, kv = m.hidden, m.heads * m.head_dim, m.kv_heads * m.head_dim
    layer = h * q + 2 * h * kv + q * h + 3 * h * m.ffn
    return _params.replaced(m, name=f"{m.name} EAGLE head", layers=1, experts=0, experts_per_token=0, expert_ffn=0,
                            shared_expert_ffn=0, dense_layers=0, kv_lora_rank=0, q_lora_rank=0, rope_head_dim=0,
                            v_head_dim=0, params=float(layer + h * m.vocab + 3 * h * h))


def mtp_head(model: Any) -> Any:
    """A multi-token-prediction module of ``model`` (DeepSeek-V3's): one layer as its MoE
    layers are (its experts, routed and shared, and its attention, MLA included) and the
    output head it shares; the projection of two hidden states (2 x hidden^2) stored too. A
    dense model's module is its dense layer."""
    m = model
    if m.experts == 0:
        head = eagle_head(m)
        return _params.replaced(head, name=f"{m.name} MTP module", params=head.params - m.hidden * m.hidden)
    moe_layers = m.layers - m.dense_layers
    routed = m.experts * 3 * m.hidden * m.expert_ffn
    # A layer's share of the rest (attention, norms, router, shared experts; the dense layers
    # counted as MoE ones), its routed experts, the output head and the projection.
    per_layer = (m.params - moe_layers * routed - m.hidden * m.vocab) / m.layers
    return _params.replaced(m, name=f"{m.name} MTP module", layers=1, dense_layers=0,
                            params=float(per_layer + routed + m.hidden * m.vocab + 2 * m.hidden * m.hidden))


def proposer_model(spec: Any, target: Any) -> Any:
    """The proposer's model on the target's GPU, or None for a host lookup."""
    return {"eagle": lambda: eagle_head(target.model), "mtp": lambda: mtp_head(target.model),
            "draft_model": lambda: drafter(spec), "ngram": lambda: None}[spec.proposer]()


def drafter_section(spec: Any, target: Any) -> dict[str, Any] | None:
    """The engine's proposer section: its model and the GPU it runs on (the target's, its
    passes inside the target's step: no host cost of their own beyond their kernels'
    launches, CUDA graphs replaying them; no sort of its logits either, as vLLM's proposers
    take each draft's argmax), or None for a host lookup."""
    model = proposer_model(spec, target)
    if model is None:
        return None
    gpu = _params.replaced(target.device.gpu, forward_overhead_ns=0.0, sampler_logit_ns=0.0)
    return {"gpu": _params.native(gpu), "model": _params.native(model)}


def _batch_one(batching: Any, why: str) -> None:
    """ConfigError naming batching.enabled's place where batching is on: ``why`` runs at batch 1."""
    if batching.enabled:
        raise ConfigError(f"{_params.origin(batching, 'enabled') or 'batching.enabled'}: {why}")


def _check_split(spec: Any, found: _acceptance.Acceptance) -> None:
    """A draft device drafts (the split-decoding system): the proposer is its draft role, so
    the section's own proposer settings would have no effect, and the profile was measured
    with a draft model."""
    for name in ("proposer", "draft_model", "lookup_ns"):
        if _params.given(spec, name):
            raise ConfigError(f"{_place(spec, name)}: the draft device drafts with the draft role's model; {name} "
                              f"would have no effect, so drop it")
    if found.proposer not in ("", "draft_model"):
        raise ConfigError(f"{_place(spec, 'acceptance')}: profile {found.name!r} was measured with proposer "
                          f"{found.proposer}; a draft device drafts with a draft model: give a profile of one")


def check_target(spec: Any, target: Any, batching: Any, batched: bool = False) -> None:
    """A step-level system's target decoding speculatively: its refinements run on its own
    GPU at batch 1 (the batchers verify drafts only for runs that promise their length:
    ``batched``, Lookahead Reasoning's)."""
    if not batched:
        _batch_one(batching, "the target decodes speculatively at batch 1 here (toggles.target_speculation); "
                             "the batchers do not schedule drafts")
    check(spec, target)


def check_draft(spec: Any, scn: Any) -> None:
    """A step-level system's draft decoding its steps speculatively: a draft model on a GPU
    (a Jetson's included; an FPGA's streaming decoder writes one token a pass), alone on it
    (unbatched), timed by its roofline, the section's proposer resolved against the draft
    model."""
    where = _params.origin(scn.toggles, "draft_speculation") or "toggles.draft_speculation"
    kind = devices.kind_of(scn.draft.device)
    if not kind.verifies_drafts:
        raise ConfigError(f"{where}: the draft runs on {scn.draft.device.name}, {kind.label}, whose decoder writes "
                          f"one token a pass; token-level speculation in the draft needs a draft on a GPU")
    _batch_one(scn.batching, "the draft decodes speculatively at batch 1 here (toggles.draft_speculation); the "
                             "batchers do not schedule drafts")
    check(spec, scn.draft, role="draft")
    smaller = drafter(spec)
    if smaller is not None and smaller.params >= scn.draft.model.params:
        raise ConfigError(f"{_place(spec, 'draft_model')}: {smaller.name} ({smaller.params:.3g} parameters) would "
                          f"propose for the draft model {scn.draft.model.name} ({scn.draft.model.params:.3g}); a "
                          f"draft model's proposer is a smaller model")


def check(spec: Any, target: Any, split: bool = False, role: str = "target") -> None:
    """The section against itself and the target role: a draft model given with its proposer
    only; acceptance rates for every drafted position, measured with this proposer; the
    target timed by its roofline. A draft model shares its target's tokenizer, which the
    simulator cannot check (padded vocabulary sizes differ within a family: Qwen2.5-0.5B's
    151,936 against Qwen2.5-7B's 152,064).
    ``split``: a draft device drafts instead (split decoding). ``role``: which role
    ``target`` is (a step-level system's draft GPU may decode speculatively too)."""
    if target.profile is not None:
        raise ConfigError(f"{_place(spec, 'draft_tokens')}: the {role} has a measured profile; speculative decoding "
                          f"times its verifications (every position sampled) by the roofline, so drop the profile")
    found = acceptance(spec)
    if len(found.rates) < spec.draft_tokens:
        raise ConfigError(f"{_place(spec, 'draft_tokens')}: {spec.draft_tokens} drafts a pass, but acceptance "
                          f"profile {found.name!r} gives rates for {len(found.rates)} positions")
    if split:
        _check_split(spec, found)
        return
    if (spec.proposer == "draft_model") != bool(spec.draft_model):
        raise ConfigError(f"{_place(spec, 'draft_model')}: a draft model goes with proposer draft_model, and "
                          f"proposer draft_model needs one")
    if spec.proposer != "ngram" and _params.given(spec, "lookup_ns"):
        raise ConfigError(f"{_place(spec, 'lookup_ns')}: the host looks n-grams up for proposer ngram alone; with "
                          f"proposer {spec.proposer} it would have no effect, so drop it")
    if found.proposer and found.proposer != spec.proposer:
        raise ConfigError(f"{_place(spec, 'acceptance')}: profile {found.name!r} was measured with proposer "
                          f"{found.proposer}, not {spec.proposer}; give a profile of this proposer")


def _check_schedule(spec: Any, system: Any, batching: Any) -> None:
    """The heuristic_transient schedule follows one request's passes: a token-level system's
    request alone (vLLM's engine drafts a fixed number; a step-level run is cut and resumed)."""
    if spec.draft_schedule == "constant":
        return
    where = _place(spec, "draft_schedule")
    if "toggles" in system.sections:
        raise ConfigError(f"{where}: a step-level system's runs are cut short and resumed, which a schedule that "
                          f"follows a request's passes cannot; use constant")
    if batching.enabled:
        raise ConfigError(f"{where}: the vLLM engine drafts a fixed number a step (num_speculative_tokens); the "
                          f"heuristic_transient schedule is for a request alone on its GPU (batching off)")


def check_scenario(scn: Any) -> None:
    """The speculation section where the scenario's runs read it."""
    system = systems.of(scn)
    if not reads(system, scn.toggles):
        return
    _check_schedule(scn.speculation, system, scn.batching)
    if "toggles" in system.sections:
        if scn.toggles.target_speculation:
            check_target(scn.speculation, scn.target, scn.batching, system.lookahead)
        if scn.toggles.draft_speculation:
            check_draft(scn.speculation, scn)
    else:
        check(scn.speculation, scn.target, system.drafts_on_draft_device)
