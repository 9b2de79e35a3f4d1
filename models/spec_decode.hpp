#pragma once
// Token-level speculative decoding on one GPU (Leviathan et al., "Fast Inference from
// Transformers via Speculative Decoding", 2023; vLLM's spec decode): a proposer drafts k
// tokens, the target verifies them and the token after them in one forward pass over k + 1
// positions (sampling at each: BatchWork::verify), keeps the longest accepted prefix and
// adds its own next token, so a pass yields 1 to k + 1 tokens. The proposer is a model on
// the same GPU (an EAGLE-style head, a draft model), whose first pass takes the
// tokens the last verification kept and whose other k - 1 passes one token each, or a
// lookup on the host (n-gram) of a fixed time. The KV of rejected positions is overwritten
// by the next pass (the context advances by the tokens kept).
// Acceptance: `acceptance[i - 1]` is the probability that the first i drafts of a pass are
// all accepted (vLLM's per-position acceptance rate); with one rate a per draft given its
// predecessors it is a^i, and a pass yields (1 - a^(k+1)) / (1 - a) tokens on average. Each
// pass draws one uniform number from a counter-based generator keyed by (seed, request,
// pass), so a request's draws do not depend on what else runs.
// Pure arithmetic: no SystemC.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "draft_choice.hpp"
#include "draft_device.hpp"
#include "gpu_timing.hpp"

namespace cosim {

struct SpecDecodeSetup {
    int64_t draft_tokens = 1;         // k, drafted before each verification
    std::vector<double> acceptance;   // P(the first i drafts accepted), i = 1..k, non-increasing
    uint64_t seed = 0;
    double lookup_ns = 0.0;           // a host proposer's time per proposal (no drafter model)
    // Hugging Face's heuristic_transient schedule (a request alone, from draft_tokens each
    // request): the next pass drafts two more after one that kept every draft, one fewer
    // (at least one) after any other, at most acceptance.size(); else draft_tokens every pass.
    bool heuristic = false;

    // The drafts of the pass after one of `drafts` drafts that kept `accepted` of them.
    int64_t next_drafts(int64_t drafts, int64_t accepted) const;

    // ConfigError naming `where` and the field.
    void validate(const std::string& where) const;
};

// The drafts a verification of `drafts` drafts accepts: the draw u in [0, 1) of pass `pass`
// of request `request`, and the number of leading rates above it.
int64_t accepted_drafts(const SpecDecodeSetup& setup, uint64_t request, uint64_t pass, int64_t drafts);

class SpecDecoder {
public:
    // `drafter`: the proposer's model on the target's GPU, or null for a host lookup.
    SpecDecoder(const SpecDecodeSetup& setup, const GpuTiming& target, std::shared_ptr<const GpuTiming> drafter);
    // A draft device apart from the target (draft_device.hpp) drafts instead.
    SpecDecoder(const SpecDecodeSetup& setup, const GpuTiming& target, std::shared_ptr<const DraftDevice> device);

    // What decoding `output` tokens after a `prompt`-token prompt took, the first of them
    // the prefill's (not counted here): the proposals and verifications in turn.
    struct Decode {
        double ns = 0.0;          // all of it
        double gpu_ns = 0.0;      // the GPU's passes (the rest is the host's lookups)
        StepWork work;            // the GPU's FLOPs and bytes over them
        int64_t passes = 0;       // target forward passes (verifications, and plain decodes)
        int64_t drafted = 0;      // tokens the proposer drafted
        int64_t accepted = 0;     // of which the target kept
        double draft_busy_ns = 0.0;  // a draft device's: its time drafting
        double draft_prefill_ns = 0.0;  // a draft device's: its prompt's prefill
    };
    // With a draft device: `target_prefill_ns`, the target's prefill since the prompt came,
    // which the draft device's own prompt prefill overlaps; `ns` counts from its end.
    // `choose`, where given, sets each pass's drafts (a recorded schedule, a live policy); it
    // sees what the decode has taken so far, which a live caller waits out before asking.
    using Chooser = std::function<int64_t(const PassChoice&, const Decode& so_far)>;
    Decode decode(int64_t prompt, int64_t output, uint64_t request, double target_prefill_ns = 0.0,
                  const Chooser* choose = nullptr) const;
    const DraftDevice* device() const { return device_.get(); }
    // The KV bytes per token of context a proposer model on the target's GPU keeps there (0 for
    // a host lookup or a draft device).
    double drafter_kv_bytes_per_token() const { return drafter_ != nullptr ? drafter_->kv_bytes_per_token() : 0.0; }
    // The weight bytes a proposer model keeps on the target's GPU (0 as above).
    double drafter_weight_bytes() const { return drafter_ != nullptr ? drafter_->stored_weight_bytes() : 0.0; }

    // One batched step's proposals (vLLM drafts for every request that sampled, in the same
    // step): each request's `fresh` kept tokens after `context` and the drafts it makes.
    struct Proposal {
        int64_t fresh = 1;
        int64_t context = 0;
        int64_t drafts = 0;
        bool prompt = false;  // its first token: a draft device has not seen its prompt yet
    };
    // The proposer's passes over them all: the first over every request's fresh tokens, the
    // j-th over one token of each request drafting j or more (a host lookup: one a request).
    // Answers their time in `ns` (the GPU's in `gpu_ns`) and the GPU's work. A draft device
    // drafts for one request after another (propose_split).
    Decode propose_batch(const std::vector<Proposal>& proposals) const;
    const SpecDecodeSetup& setup() const { return setup_; }

    // A target run decoding speculatively from token `from` to `to` after `context` (a
    // step-level system's refinement, GpuProxy::decode_run): each token's time, a round's on
    // its first token and none on the others (they end together, at its verification), and
    // the GPU's work over them. Draws are keyed by `key` and each round's first position, so
    // a run recomputed from a later token draws as it would have.
    struct Run {
        std::vector<double> durations;
        StepWork work;
        double ns = 0.0;
    };
    Run run(int64_t context, int64_t from, int64_t to, uint64_t key) const;

private:
    // The proposer's passes for `drafts` drafts, its first over `fresh` new tokens at `context`.
    void propose(int64_t fresh, int64_t context, int64_t drafts, Decode& d) const;
    void pass(const GpuTiming& timing, const std::vector<BatchWork>& work, Decode& d) const;
    Decode decode_split(int64_t prompt, int64_t output, uint64_t request, double target_prefill_ns,
                        const Chooser* choose) const;
    // The drafts of the next pass: the schedule's `k`, or what `choose` makes of it, checked.
    int64_t chosen(const Chooser* choose, PassChoice q, const Decode& d) const;
    // A step's proposals made on a draft device (batched split decoding): the verdicts reach
    // it, it prefills new prompts and drafts for each request in turn, the drafts cross back.
    Decode propose_split(const std::vector<Proposal>& proposals) const;
    // `tokens` tokens decoded in rounds from `context`, the proposer's first pass over `fresh`
    // tokens; draws keyed by `key` and each round's position (`by_position`) or its index;
    // each token's time into `durations` where given (Run's layout).
    Decode rounds(int64_t context, int64_t tokens, int64_t fresh, uint64_t key, bool by_position,
                  std::vector<double>* durations, const Chooser* choose = nullptr) const;

    SpecDecodeSetup setup_;
    const GpuTiming& target_;
    std::shared_ptr<const GpuTiming> drafter_;
    std::shared_ptr<const DraftDevice> device_;
};

}  // namespace cosim
