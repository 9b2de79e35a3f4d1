#include "spec_decode.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace cosim {

namespace {
// splitmix64's finaliser: a well-mixed 64-bit value of its input.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}
}  // namespace

void SpecDecodeSetup::validate(const std::string& where) const {
    if (draft_tokens < 1) throw ConfigError(where + ".draft_tokens: must be >= 1");
    if (static_cast<int64_t>(acceptance.size()) < draft_tokens)
        throw ConfigError(where + ".acceptance: " + std::to_string(acceptance.size()) + " rates for " +
                          std::to_string(draft_tokens) + " draft tokens; give one a position");
    double before = 1.0;
    for (size_t i = 0; i < acceptance.size(); ++i) {
        const double p = acceptance[i];
        if (!(p >= 0.0 && p <= before))
            throw ConfigError(where + ".acceptance[" + std::to_string(i) + "]: " + std::to_string(p) +
                              " must be within [0, " + std::to_string(before) +
                              "]: the first i + 1 drafts are accepted no more often than the first i");
        before = p;
    }
    if (!(lookup_ns >= 0.0) || !std::isfinite(lookup_ns)) throw ConfigError(where + ".lookup_ns: must be >= 0");
}

int64_t SpecDecodeSetup::next_drafts(int64_t drafts, int64_t accepted) const {
    if (!heuristic) return draft_tokens;
    const auto most = static_cast<int64_t>(acceptance.size());
    return accepted == drafts ? std::min(drafts + 2, most) : std::max<int64_t>(1, drafts - 1);
}

int64_t accepted_drafts(const SpecDecodeSetup& setup, uint64_t request, uint64_t pass, int64_t drafts) {
    const uint64_t bits = mix(mix(mix(setup.seed) ^ request) ^ pass);
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // 53 bits: uniform in [0, 1)
    int64_t accepted = 0;
    while (accepted < drafts && u < setup.acceptance[static_cast<size_t>(accepted)]) ++accepted;
    return accepted;
}

SpecDecoder::SpecDecoder(const SpecDecodeSetup& setup, const GpuTiming& target,
                         std::shared_ptr<const GpuTiming> drafter)
    : setup_(setup), target_(target), drafter_(std::move(drafter)) {
    setup_.validate("speculation");
}

SpecDecoder::SpecDecoder(const SpecDecodeSetup& setup, const GpuTiming& target,
                         std::shared_ptr<const DraftDevice> device)
    : setup_(setup), target_(target), device_(std::move(device)) {
    setup_.validate("speculation");
    if (device_ == nullptr) throw ConfigError("speculation: a split decoder needs its draft device");
    device_->validate("draft");
}

void SpecDecoder::pass(const GpuTiming& timing, const std::vector<BatchWork>& work, Decode& d) const {
    const double ns = timing.batch_ns(work);
    d.ns += ns;
    d.gpu_ns += ns;
    d.work += timing.work(work);
}

void SpecDecoder::propose(int64_t fresh, int64_t context, int64_t drafts, Decode& d) const {
    if (drafter_ == nullptr) {
        d.ns += setup_.lookup_ns;
        return;
    }
    // Its first pass takes what the target kept since it last ran (the prompt, the first
    // time); each further pass one draft of its own.
    pass(*drafter_, {BatchWork{fresh, context - fresh, fresh == 1}}, d);
    for (int64_t j = 1; j < drafts; ++j) pass(*drafter_, {BatchWork{1, context + j - 1, true}}, d);
}

SpecDecoder::Decode SpecDecoder::propose_batch(const std::vector<Proposal>& proposals) const {
    if (device_ != nullptr) return propose_split(proposals);
    Decode d;
    std::vector<BatchWork> work;
    int64_t most = 0;
    for (const Proposal& p : proposals) {
        if (p.drafts <= 0) continue;
        if (drafter_ == nullptr) {
            d.ns += setup_.lookup_ns;
            continue;
        }
        work.push_back(BatchWork{p.fresh, p.context, p.fresh == 1});
        most = std::max(most, p.drafts);
    }
    if (work.empty()) return d;
    pass(*drafter_, work, d);
    for (int64_t j = 1; j < most; ++j) {
        work.clear();
        for (const Proposal& p : proposals)
            if (p.drafts > j) work.push_back(BatchWork{1, p.context + p.fresh + j - 1, true});
        pass(*drafter_, work, d);
    }
    return d;
}

SpecDecoder::Run SpecDecoder::run(int64_t context, int64_t from, int64_t to, uint64_t key) const {
    // A run resumed from a later token would restart the schedule.
    if (setup_.heuristic) throw ConfigError("speculation.draft_schedule: a step-level run drafts a fixed number");
    Run out;
    const Decode d = rounds(context + from, to - from, 1, key, true, &out.durations);
    out.work = d.work;
    out.ns = d.ns;
    return out;
}

int64_t SpecDecoder::chosen(const Chooser* choose, PassChoice q, const Decode& d) const {
    if (choose == nullptr) return q.proposed;
    q.most = static_cast<int64_t>(setup_.acceptance.size());
    const int64_t k = (*choose)(q, d);
    if (k < 0 || k > q.most)
        throw ConfigError("pass " + std::to_string(q.pass) + ": " + std::to_string(k) +
                          " drafts; a pass drafts 0 to the acceptance profile's " + std::to_string(q.most) +
                          " positions");
    return k;
}

SpecDecoder::Decode SpecDecoder::rounds(int64_t context, int64_t tokens, int64_t fresh, uint64_t key,
                                        bool by_position, std::vector<double>* durations,
                                        const Chooser* choose) const {
    Decode d;
    int64_t k = setup_.draft_tokens;  // the schedule's drafts for the next pass
    int64_t last_drafts = 0, last_accepted = 0;
    for (int64_t pos = 0; pos < tokens;) {
        const double before = d.ns;
        // No draft past the last token needed: its verification would not keep it.
        const int64_t want = tokens - pos - 1 > 0
            ? chosen(choose, PassChoice{d.passes, k, 0, pos + 1, tokens + 1, last_drafts, last_accepted}, d)
            : k;
        const int64_t drafts = std::min(want, tokens - pos - 1);
        const auto pass_key = static_cast<uint64_t>(by_position ? context + pos : d.passes);
        ++d.passes;
        int64_t kept = 1;
        if (drafts <= 0) {
            pass(target_, {BatchWork{1, context + pos, true}}, d);
            last_drafts = last_accepted = 0;
        } else {
            propose(fresh, context + pos, drafts, d);
            pass(target_, {BatchWork{drafts + 1, context + pos, false, true}}, d);
            const int64_t accepted = accepted_drafts(setup_, key, pass_key, drafts);
            d.drafted += drafts;
            d.accepted += accepted;
            kept = accepted + 1;
            k = setup_.next_drafts(drafts, accepted);
            last_drafts = drafts;
            last_accepted = accepted;
        }
        if (durations != nullptr) {
            durations->push_back(d.ns - before);
            durations->insert(durations->end(), static_cast<size_t>(kept - 1), 0.0);
        }
        pos += kept;
        // The proposer takes what it has not seen: after a pass without drafts, that too.
        fresh = drafts <= 0 ? fresh + kept : kept;
    }
    return d;
}

SpecDecoder::Decode SpecDecoder::propose_split(const std::vector<Proposal>& proposals) const {
    const DraftDevice& dev = *device_;
    Decode d;
    int64_t prompt_bytes = 0, verdict_bytes = 0, draft_bytes = 0;
    for (const Proposal& p : proposals) {
        if (p.drafts <= 0) continue;
        // After this step the request holds context + fresh tokens and the one it sampled;
        // the draft device's first decode takes that token (as decode_split's rounds do).
        const int64_t known = p.context + p.fresh;
        if (p.prompt) {
            // Its prompt reaches the board and is prefilled there (one decoder, a request at a time).
            prompt_bytes += known * dev.token_bytes;
            d.draft_prefill_ns += dev.timing->prefill_ns(known, 0);
        } else {
            verdict_bytes += dev.token_bytes + dev.control_bytes;  // the kept count and the target's token
        }
        for (int64_t j = 0; j < p.drafts; ++j) d.draft_busy_ns += dev.timing->decode_token_ns(known + j);
        draft_bytes += p.drafts * dev.token_bytes;
    }
    if (draft_bytes == 0) return d;
    // Each crossing carries every request's bytes at once: the verdicts (and new prompts) to
    // the board, then the drafts to the target.
    if (verdict_bytes > 0) d.ns += dev.relay_ns(verdict_bytes);
    if (prompt_bytes > 0) d.ns += dev.draft_link.transfer_ns(static_cast<uint64_t>(prompt_bytes));
    d.ns += d.draft_prefill_ns + d.draft_busy_ns + dev.relay_ns(draft_bytes);
    return d;
}

SpecDecoder::Decode SpecDecoder::decode_split(int64_t prompt, int64_t output, uint64_t request,
                                              double target_prefill_ns, const Chooser* choose) const {
    const DraftDevice& dev = *device_;
    Decode d;
    // The prompt reaches the draft device and it prefills it while the target prefills; it
    // drafts once it has the target's first token too.
    d.draft_prefill_ns = dev.timing->prefill_ns(prompt, 0);
    const double draft_ready = dev.draft_link.transfer_ns(static_cast<uint64_t>(prompt * dev.token_bytes)) +
                               d.draft_prefill_ns;
    if (output > 2) d.ns = std::max(0.0, std::max(dev.relay_ns(dev.token_bytes), draft_ready - target_prefill_ns));
    int64_t context = prompt;
    int64_t produced = 1;
    int64_t k = setup_.draft_tokens;  // the schedule's drafts for the next pass
    int64_t last_drafts = 0, last_accepted = 0;
    for (uint64_t p = 0; produced < output; ++p) {
        const int64_t want = output - produced - 1 > 0
            ? chosen(choose, PassChoice{d.passes, k, 0, produced, output, last_drafts, last_accepted}, d)
            : k;
        const int64_t drafts = std::min(want, output - produced - 1);
        ++d.passes;
        if (drafts <= 0) {
            pass(target_, {BatchWork{1, context, true}}, d);
            ++produced;
            ++context;
            // A pass a chooser left without drafts: its token still reaches the board.
            if (output - produced - 1 > 0) d.ns += dev.relay_ns(dev.token_bytes + dev.control_bytes);
            last_drafts = last_accepted = 0;
            continue;
        }
        for (int64_t j = 0; j < drafts; ++j) {
            const double t = dev.timing->decode_token_ns(context + j);
            d.ns += t;
            d.draft_busy_ns += t;
        }
        d.ns += dev.relay_ns(drafts * dev.token_bytes);
        pass(target_, {BatchWork{drafts + 1, context, false, true}}, d);
        const int64_t accepted = accepted_drafts(setup_, request, p, drafts);
        d.drafted += drafts;
        d.accepted += accepted;
        k = setup_.next_drafts(drafts, accepted);
        last_drafts = drafts;
        last_accepted = accepted;
        produced += accepted + 1;
        context += accepted + 1;
        // The kept count and the target's token go back while there is more to draft.
        if (output - produced - 1 > 0) d.ns += dev.relay_ns(dev.token_bytes + dev.control_bytes);
    }
    return d;
}

SpecDecoder::Decode SpecDecoder::decode(int64_t prompt, int64_t output, uint64_t request,
                                        double target_prefill_ns, const Chooser* choose) const {
    if (device_ != nullptr) return decode_split(prompt, output, request, target_prefill_ns, choose);
    // After the prefill: its token is not in the KV cache yet, and the proposer first takes
    // the prompt; draws keyed by the pass.
    return rounds(prompt, output - 1, prompt, request, false, nullptr, choose);
}

}  // namespace cosim
