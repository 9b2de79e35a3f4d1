"""HuggingFace causal LMs behind the three roles of BRSD, with every forward
call timed for the latency profile: greedy step generation (prefill, then
decode token by token until the step delimiter or EOS), and step scoring by a
PRM (one prefill over context + step)."""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError

STEP_DELIMITER = "\n\n"


def _torch() -> Any:
    try:
        import torch  # lazy: torch, the optional [record] extra
    except ImportError:
        raise ConfigError("recording needs torch and transformers: pip install 'heteroreason-cosim[record]'") from None
    return torch


@dataclass
class Timings:
    """Measured seconds per call: (phase, tokens, context) -> [seconds, ...]."""

    calls: dict[tuple[str, int, int], list[float]] = field(default_factory=dict)

    def add(self, phase: str, tokens: int, context: int, seconds: float) -> None:
        self.calls.setdefault((phase, tokens, context), []).append(seconds)


class CausalModel:
    """A causal LM (a local folder or an already built model) and its tokenizer."""

    def __init__(self, model: Any, tokenizer: Any = None, device: str = "cpu", name: str = "model"):
        torch = _torch()
        if isinstance(model, str | Path):
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: the [record] extra
            except ImportError:
                raise ConfigError("recording needs transformers: pip install 'heteroreason-cosim[record]'") from None
            path = Path(model)
            if not path.is_dir():
                raise ConfigError(f"{name}: {path} is not a model folder")
            try:
                model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
                tokenizer = tokenizer or AutoTokenizer.from_pretrained(path, local_files_only=True)
            except (OSError, ValueError, KeyError) as exc:
                raise ConfigError(f"{name}: {path} does not hold a causal LM and its tokenizer: "
                                  f"{str(exc).splitlines()[0][:200]}") from None
        if tokenizer is None:
            raise ConfigError(f"{name}: a tokenizer is needed")
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.name = name
        self.timings = Timings()
        self._torch = torch
        # transformers renamed the KV-cache argument (past_key_values -> cache); use what this one takes.
        params = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _forward(self, ids: list[int], past: Any) -> Any:
        torch = self._torch
        with torch.inference_mode():
            return self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True,
                              **{self._cache_arg: past})

    def generate_step(self, context: list[int], max_tokens: int) -> tuple[list[int], bool]:
        """Greedy tokens of the next step after ``context``; True if it ended the answer (EOS)."""
        eos = self.tokenizer.eos_token_id
        start = time.perf_counter()
        out = self._forward(context, None)
        self.timings.add("prefill", len(context), 0, time.perf_counter() - start)
        past, logits = out.past_key_values, out.logits[0, -1]
        step: list[int] = []
        for _ in range(max_tokens):
            token = int(logits.argmax())
            if eos is not None and token == eos:
                return step, True
            step.append(token)
            if self.decode(step).endswith(STEP_DELIMITER):
                return step, False
            start = time.perf_counter()
            out = self._forward([token], past)
            self.timings.add("decode", 1, len(context) + len(step) - 1, time.perf_counter() - start)
            past, logits = out.past_key_values, out.logits[0, -1]
        return step, False

    def prefill_timed(self, ids: list[int]) -> Any:
        start = time.perf_counter()
        out = self._forward(ids, None)
        self.timings.add("prefill", len(ids), 0, time.perf_counter() - start)
        return out


class ValueHeadPrm:
    """A process reward model: a causal LM whose last hidden state at the step's
    last token goes through a scalar value head and a sigmoid (Skywork-style).
    The head's weights come from ``value_head.pt`` beside the model, or are
    given (a torch Linear(hidden, 1))."""

    def __init__(self, model: Any, tokenizer: Any = None, head: Any = None, device: str = "cpu"):
        torch = _torch()
        self.lm = CausalModel(model, tokenizer, device, name="prm")
        if head is None and isinstance(model, str | Path):
            weights = Path(model) / "value_head.pt"
            if not weights.exists():
                raise ConfigError(f"prm: {weights} is missing (a Linear(hidden, 1) state dict), or pass a scorer")
            head = torch.nn.Linear(self.lm.model.config.hidden_size, 1)
            head.load_state_dict(torch.load(weights, map_location=device))
        if head is None:
            raise ConfigError("prm: give the value head, or a folder with value_head.pt")
        self.head = head.to(device).eval()
        self.timings = self.lm.timings

    def __call__(self, context: list[int], step: list[int]) -> float:
        torch = self.lm._torch
        ids = context + step
        start = time.perf_counter()
        with torch.inference_mode():
            out = self.lm.model(input_ids=torch.tensor([ids], device=self.lm.device), output_hidden_states=True)
            score = float(torch.sigmoid(self.head(out.hidden_states[-1][0, -1])).item())
        self.timings.add("prefill", len(ids), 0, time.perf_counter() - start)
        return score


Scorer = Callable[[list[int], list[int]], float]
