"""Dataset profiles: the distributions a synthetic trace is drawn from.

Built-in profiles live in ``cosim/data/profiles`` (every value cites its basis
or says it is an estimate); a user adds one by writing a YAML file of the same
shape and passing its path wherever a profile name is taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schema._params import param
from ..errors import ConfigError
from ._events import TraceHeader
from ._io import MAX_TOKENS

# The paper this models: the PRM rejects typically below 30% of draft steps (at its default thresholds).
MAX_REJECT_PROBABILITY = 0.3
REFERENCE_THRESHOLD = TraceHeader().accept_threshold  # the default, where that holds
# Parameters of earlier profiles that the step-quality model now derives.
RETIRED = {
    "reject_probability": "the draft reject rate follows from the steps' quality and the PRM's score "
                          "distributions at the trace's threshold; use draft_good_step_probability",
    "refine_failure_probability": "failed refinements follow from the target's steps' quality; use "
                                  "target_7b_good_step_probability and target_1_5b_good_step_probability",
    "accuracy": "correctness follows from the quality of the kept steps; use clean_chain_accuracy and "
                "bad_step_penalty",
}
# A log-space spread beyond this puts the 99th percentile 10^10 times the median: no real data.
MAX_SIGMA = 10.0


@dataclass(frozen=True, kw_only=True)
class DatasetProfile:
    name: str = param("dataset name as it appears in traces", rule="any")
    description: str = param("what the profile describes", rule="any", default="")
    template_tokens: int = param("chat-template tokens around each question", rule="non_negative")
    prompt_tokens_median: float = param("median question length, tokens (lognormal)")
    prompt_tokens_sigma: float = param("log-space standard deviation of question length", rule="non_negative")
    prompt_tokens_max: int = param("longest question, tokens (longer draws are redrawn)")
    steps_median: float = param("median reasoning steps per solution (lognormal, rounded, >= 1)")
    steps_sigma: float = param("log-space standard deviation of steps per solution", rule="non_negative")
    steps_max: int = param("most steps in one solution (longer draws are redrawn)")
    step_tokens_median: float = param("median tokens per step (lognormal)")
    step_tokens_sigma: float = param("log-space standard deviation of tokens per step", rule="non_negative")
    step_tokens_max: int = param("longest step, tokens (longer draws are redrawn)")
    draft_good_step_probability: float = param("probability that a step the 0.5B draft writes is good",
                                               rule="fraction")
    target_7b_good_step_probability: float = param("probability that a step the 7B target writes is good "
                                                   "(Config 1)", rule="fraction")
    target_1_5b_good_step_probability: float = param("probability that a step the 1.5B target writes is good "
                                                     "(Config 2)", rule="fraction")
    prm_good_logit_mean: float = param("mean log-odds of the PRM's score of a good step (normal)", rule="any")
    prm_good_logit_sigma: float = param("standard deviation of the log-odds of a good step's score")
    prm_bad_logit_mean: float = param("mean log-odds of the PRM's score of a bad step (normal)", rule="any")
    prm_bad_logit_sigma: float = param("standard deviation of the log-odds of a bad step's score")
    clean_chain_accuracy: float = param("probability of a right answer when every step of the final chain is "
                                        "good", rule="fraction")
    bad_step_penalty: float = param("share of the probability of a right answer that each bad step kept in the "
                                    "final chain takes away", rule="non_negative")
    max_context_tokens: int = param("prompt + solution never exceed this (the target's window); a solution "
                                    "that would is cut at a step boundary", default=4096)
    target_7b_alone_accuracy: float = param(
        "share of right answers when the Config 1 target (7B) writes whole solutions alone, measured on real "
        "responses (the report's target alone); 0: no data for this dataset", rule="non_negative", default=0.0)

    def check(self, where_of: Any) -> None:
        """Checks across parameters; ``where_of(field)`` names a field's place (the draft's
        reject rate, which needs the step-quality model, is checked by load_profile)."""
        if self.target_7b_alone_accuracy > 1:
            raise ConfigError(f"{where_of('target_7b_alone_accuracy')}: a share, at most 1, got "
                              f"{self.target_7b_alone_accuracy}")
        if self.bad_step_penalty > 1:
            raise ConfigError(f"{where_of('bad_step_penalty')}: must be at most 1 (a share), got "
                              f"{self.bad_step_penalty}")
        if self.prm_good_logit_mean <= self.prm_bad_logit_mean:
            raise ConfigError(f"{where_of('prm_good_logit_mean')}: {self.prm_good_logit_mean} must be above "
                              f"prm_bad_logit_mean ({self.prm_bad_logit_mean}): the PRM scores good steps higher")
        for stem in ("prompt_tokens", "steps", "step_tokens"):
            median, top = getattr(self, f"{stem}_median"), getattr(self, f"{stem}_max")
            if top < median:
                raise ConfigError(f"{where_of(stem + '_max')}: {top} is below {stem}_median ({median})")
            if getattr(self, f"{stem}_sigma") > MAX_SIGMA:
                raise ConfigError(f"{where_of(stem + '_sigma')}: {getattr(self, stem + '_sigma')} is not a "
                                  f"plausible log-space spread (at most {MAX_SIGMA})")
        if self.step_tokens_max > MAX_TOKENS or self.prompt_tokens_max > MAX_TOKENS:
            raise ConfigError(f"{where_of('step_tokens_max')}: steps and prompts stay under {MAX_TOKENS} tokens")
        longest_first = self.template_tokens + self.prompt_tokens_max + self.step_tokens_max
        if longest_first > self.max_context_tokens:
            raise ConfigError(f"{where_of('max_context_tokens')}: {self.max_context_tokens} cannot hold the "
                              f"longest prompt and first step ({longest_first} tokens)")
