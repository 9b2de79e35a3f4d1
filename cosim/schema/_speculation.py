"""The speculation section of a token-level speculative decoding scenario (docs/system.md,
"Token-level speculative decoding"): which proposer drafts, how many tokens a pass, and
how often the target keeps them."""

from __future__ import annotations

from ._declarations import Decl, Group, Limit

PROPOSERS = ("eagle", "mtp", "draft_model", "ngram")
SCHEDULES = ("constant", "heuristic_transient")
# Drafts a verification checks at most: vLLM's num_speculative_tokens in practice stays
# under ten; a pass of more would verify tokens nobody keeps.
DRAFTS = Limit(64, "a verification checks at most 64 drafted tokens")

SPECULATION = Group("speculation", "Speculation", "SpeculationSettings", "COSIM_SPECULATION_SETTINGS",
                    "Token-level speculative decoding on the target's GPU: a proposer drafts tokens, the target "
                    "verifies them in one forward pass and keeps the accepted prefix and one token of its own.", (
    Decl("proposer", str, "what drafts: eagle, a draft head of the target (one decoder layer of its shape and its "
         "output head) on its GPU; mtp, the target's multi-token-prediction module (one layer as the target's "
         "last, its experts included, and the output head; DeepSeek-V3); draft_model, a smaller model "
         "(draft_model) on its GPU; ngram, a lookup of the context's n-grams on the host", rule="any", default="eagle", native=False, choices=PROPOSERS,
         note="source: vLLM's speculative decoding docs: model-based proposers such as EAGLE give the best "
              "latency reduction (docs/features/spec_decode)"),
    Decl("draft_tokens", int, "tokens drafted before each verification (vLLM's num_speculative_tokens)", default=3,
         native=False, limit=DRAFTS,
         note="estimate: vLLM's EAGLE example drafts 2 and its n-gram example 5; third-party vLLM runs of "
              "EAGLE-3 found 3-4 the best. Range: 2-5", range=(2, 5)),
    Decl("draft_schedule", str, "how the drafts a pass change: constant, draft_tokens every pass (vLLM); "
         "heuristic_transient, each request from draft_tokens, two more after a pass that kept every draft and "
         "one fewer (at least one) after any other, up to the positions the acceptance profile gives (Hugging "
         "Face's assisted generation)",
         rule="any", default="constant", native=False, choices=SCHEDULES,
         note="source: Hugging Face transformers, generation/candidate_generator.py, "
              "AssistedCandidateGenerator.update_candidate_strategy (num_assistant_tokens_schedule "
              "'heuristic_transient': the count starts again at each request)"),
    Decl("acceptance", str, "how often the target keeps the drafts: a built-in acceptance profile "
         "(cosim/data/acceptance) or a YAML file of per-position rates", rule="any",
         default="eagle3-llama-3.1-8b-mtbench", native=False,
         note="source: the profile's own file cites its measurement"),
    Decl("acceptance_scale", float, "a factor on each draft's acceptance given the drafts before it kept, each "
         "capped at 1 (with one rate a a draft, a becomes scale x a): how a profile measured on one workload "
         "moves on another", default=1.0, native=False,
         note="estimate: 1 keeps the profile as measured. The shipped profiles' first-draft rates differ by about "
              "a tenth between workloads of one kind of proposer (EAGLE-3: 0.62 on gpt-oss, 0.74 on Llama-3.1-8B "
              "MT-bench) and DeepSeek-V3 reports 85-90% across topics; a draft model's rate moved from translation "
              "to reasoning text is less certain. Range: 0.8-1.2", range=(0.8, 1.2)),
    Decl("draft_model", str, "the proposer's model with proposer draft_model (a built-in model or a file)",
         rule="any", default="", native=False),
    Decl("lookup_ns", float, "the host's time to propose with proposer ngram (a lookup of the context's last "
         "n-gram)", rule="non_negative", default=50e3, native=False,
         note="estimate: vLLM's n-gram proposer matches with a compiled KMP search over the request's tokens, "
              "tens of microseconds a request on a server CPU. Range: 10-200 us", range=(10e3, 200e3)),
    Decl("seed", int, "seed of the acceptance draws: a request's draws depend on it, its index and the pass",
         rule="non_negative", default=0, native=False, limit=Limit(2**62, "a seed below 2^62")),
))
