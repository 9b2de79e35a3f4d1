#include "vllm_scheduler.hpp"

#include <algorithm>
#include <string>

#include "errors.hpp"

namespace cosim {

namespace {
// Block hashes: a tag for whose tokens they are (1: the shared prefix; 2 + uid: one
// request's own) and the block's index. vLLM chains a hash over every earlier token; two
// requests' blocks match here exactly when they hold the same prefix, as there.
constexpr uint64_t kSharedTag = 1;
constexpr uint64_t kIndexBits = 32;
}  // namespace

VllmScheduler::VllmScheduler(const VllmSchedulerParams& params)
    : params_(params), pool_(params.num_gpu_blocks, params.prefix_caching) {
    if (params.block_size < 1) throw ConfigError("batching.block_size: must be >= 1");
    if (params.max_num_seqs < 1) throw ConfigError("batching.max_batch: must be >= 1");
    if (params.max_num_batched_tokens < params.max_num_seqs)
        throw ConfigError("batching.token_budget: must be >= batching.max_batch (vLLM requires "
                          "max_num_batched_tokens >= max_num_seqs)");
    if (params.max_model_len < 1) throw ConfigError("the model's context window must be >= 1 token");
    if (params.lookahead_tokens < 0) throw ConfigError("speculation.draft_tokens: must be >= 0");
    if (params.spec != nullptr && params.spec->heuristic)
        throw ConfigError("speculation.draft_schedule: the vLLM engine drafts a fixed number a step");
}

void VllmScheduler::check(const SeqSpec& spec) const {
    if (spec.prompt < 1 || spec.output < 1)
        throw ConfigError("a request needs a prompt and an output of at least one token each");
    if (spec.prompt + spec.output > params_.max_model_len)
        throw ConfigError("a request of " + std::to_string(spec.prompt) + " prompt and " +
                          std::to_string(spec.output) + " output tokens exceeds the model's window of " +
                          std::to_string(params_.max_model_len) + " tokens");
    // The last token sampled is never computed: the longest sequence in the cache is one less,
    // with its proposer's lookahead slots past it.
    const int64_t need = blocks_for(slots_for(spec.prompt + spec.output - 1));
    if (need > pool_.usable_blocks())
        throw ConfigError("a request of " + std::to_string(spec.prompt + spec.output) + " tokens needs " +
                          std::to_string(need) + " KV blocks of " + std::to_string(params_.block_size) +
                          " tokens" +
                          (params_.lookahead_tokens > 0
                               ? " with its proposer's " + std::to_string(params_.lookahead_tokens) + " lookahead slots"
                               : std::string()) +
                          "; the GPU holds " + std::to_string(pool_.usable_blocks()) +
                          " (batching.num_gpu_blocks less vLLM's null block): it could never run");
}

int64_t VllmScheduler::add(const SeqSpec& spec) {
    check(spec);
    int64_t id;
    if (!spare_.empty()) {
        id = spare_.back();
        spare_.pop_back();
        seqs_[static_cast<size_t>(id)] = Seq{};
    } else {
        id = static_cast<int64_t>(seqs_.size());
        seqs_.emplace_back();
    }
    Seq& s = seqs_[static_cast<size_t>(id)];
    s.spec = spec;
    s.live = true;
    waiting_.push_back(id);
    return id;
}

uint64_t VllmScheduler::hash(const Seq& s, int64_t block) const {
    const bool shared = (block + 1) * params_.block_size <= s.spec.shared_prefix;
    const uint64_t tag = shared ? kSharedTag : kSharedTag + 1 + static_cast<uint64_t>(s.spec.uid);
    return (tag << kIndexBits) | static_cast<uint64_t>(block);
}

void VllmScheduler::lookup(const Seq& s, std::vector<int64_t>& hits) const {
    hits.clear();
    if (!params_.prefix_caching) return;
    // KVCacheManager.get_computed_blocks: at most num_tokens - 1 tokens hit, so that the
    // last one is computed to give logits.
    const int64_t most = (tokens(s) - 1) / params_.block_size;
    for (int64_t i = 0; i < most; ++i) {
        const int64_t b = pool_.cached(hash(s, i));
        if (b < 0) break;
        hits.push_back(b);
    }
}

int64_t VllmScheduler::evictable(const std::vector<int64_t>& hits) const {
    int64_t n = 0;
    for (int64_t b : hits) n += pool_.ref_count(b) == 0 ? 1 : 0;
    return n;
}

void VllmScheduler::cache_full(Seq& s, int64_t upto_tokens) {
    // KVCacheManager.allocate_slots caches the full blocks of the tokens it allocates for,
    // up to request.num_tokens.
    const int64_t full = std::min(upto_tokens, tokens(s)) / params_.block_size;
    for (; s.hashed < full; ++s.hashed) pool_.cache(s.blocks[static_cast<size_t>(s.hashed)], hash(s, s.hashed));
}

bool VllmScheduler::grow(Seq& s, int64_t new_tokens) {
    // KVCacheManager.allocate_slots: num_computed + num_new + num_lookahead tokens, capped at
    // max_model_len.
    const int64_t need = blocks_for(slots_for(s.computed + new_tokens)) - static_cast<int64_t>(s.blocks.size());
    if (need > pool_.free_blocks()) return false;
    if (need > 0) pool_.allocate(need, s.blocks);
    cache_full(s, s.computed + new_tokens);
    return true;
}

bool VllmScheduler::admit(Seq& s, const std::vector<int64_t>& hits, int64_t new_tokens) {
    const auto hit_blocks = static_cast<int64_t>(hits.size());
    const int64_t revived = evictable(hits);  // cached blocks nobody holds: they leave the free queue
    // scheduler_reserve_full_isl: the whole sequence so far must fit, not just this chunk.
    if (blocks_for(tokens(s)) - hit_blocks + revived > pool_.free_blocks()) return false;
    const int64_t computed = hit_blocks * params_.block_size;
    if (blocks_for(computed + new_tokens) - hit_blocks + revived > pool_.free_blocks()) return false;
    for (int64_t b : hits) pool_.touch(b);
    s.blocks.assign(hits.begin(), hits.end());
    s.hashed = hit_blocks;
    pool_.allocate(blocks_for(computed + new_tokens) - hit_blocks, s.blocks);
    s.computed = computed;
    cache_full(s, computed + new_tokens);
    return true;
}

void VllmScheduler::preempt(int64_t seq) {
    Seq& s = seqs_[static_cast<size_t>(seq)];
    pool_.free(s.blocks);
    s.blocks.clear();
    s.hashed = 0;
    s.computed = 0;
    s.drafts = 0;
    ++s.preemptions;
    waiting_.push_front(seq);
}

const VllmScheduler::Step& VllmScheduler::schedule() {
    Step& step = step_;
    step.scheduled.clear();
    step.preempted = 0;
    step.kv_limited = false;
    int64_t budget = params_.max_num_batched_tokens;
    // The running requests first, in admission order.
    for (size_t i = 0; i < running_.size() && budget > 0;) {
        const int64_t id = running_[i];
        Seq& s = seqs_[static_cast<size_t>(id)];
        const int64_t n = std::min(tokens_with_spec(s) - s.computed, budget);
        if (n <= 0) {
            ++i;
            continue;
        }
        bool fits = false;
        for (;;) {
            if (grow(s, n)) {
                fits = true;
                break;
            }
            const int64_t victim = running_.back();
            running_.pop_back();
            preempt(victim);
            ++step.preempted;
            if (victim == id) break;
        }
        if (!fits) break;
        // Drafts past the budget are dropped (vLLM trims spec_token_ids to what it scheduled).
        const int64_t drafts = std::max<int64_t>(0, s.computed + n - tokens(s));
        s.drafts = drafts;
        step.scheduled.push_back(Scheduled{id, n, s.computed, drafts, 0, s.spec.uid});
        budget -= n;
        ++i;
    }
    // Then the waiting queue, unless this step preempted.
    if (step.preempted == 0) {
        while (!waiting_.empty() && budget > 0 && static_cast<int64_t>(running_.size()) < params_.max_num_seqs) {
            const int64_t id = waiting_.front();
            Seq& s = seqs_[static_cast<size_t>(id)];
            lookup(s, hits_);
            const int64_t computed = static_cast<int64_t>(hits_.size()) * params_.block_size;
            const int64_t n = std::min(tokens(s) - computed, budget);
            if (!admit(s, hits_, n)) {
                step.kv_limited = true;
                break;
            }
            waiting_.pop_front();
            running_.push_back(id);
            if (s.preemptions > 0) s.recomputed += tokens(s) - computed;
            if (s.cached_prompt < 0) s.cached_prompt = computed;
            step.scheduled.push_back(Scheduled{id, n, computed, 0, 0, s.spec.uid});
            budget -= n;
        }
    }
    // _update_after_schedule: computed tokens advance when scheduled.
    for (const Scheduled& x : step.scheduled) seqs_[static_cast<size_t>(x.seq)].computed += x.tokens;
    return step;
}

bool VllmScheduler::samples(const Scheduled& x) const {
    const Seq& s = seqs_[static_cast<size_t>(x.seq)];
    return s.computed >= tokens(s);  // a prefill chunk short of the end samples nothing
}

bool VllmScheduler::first_sample(const Scheduled& x) const {
    return seqs_[static_cast<size_t>(x.seq)].output == 0;
}

int64_t VllmScheduler::drafts_after(const Scheduled& x) const {
    if (params_.spec == nullptr || !samples(x)) return 0;
    const Seq& s = seqs_[static_cast<size_t>(x.seq)];
    return std::max<int64_t>(0, std::min(params_.spec->draft_tokens, s.spec.output - (s.output + x.kept + 1) - 1));
}

void VllmScheduler::verify() {
    if (params_.spec == nullptr) return;
    for (Scheduled& x : step_.scheduled) {
        if (x.drafts <= 0) continue;
        Seq& s = seqs_[static_cast<size_t>(x.seq)];
        x.kept = accepted_drafts(*params_.spec, static_cast<uint64_t>(s.spec.uid), static_cast<uint64_t>(s.passes++),
                                 x.drafts);
    }
}

void VllmScheduler::complete(const std::function<void(int64_t, bool, bool)>& on_token) {
    bool any_finished = false;
    for (const Scheduled& x : step_.scheduled) {
        Seq& s = seqs_[static_cast<size_t>(x.seq)];
        if (!samples(x)) continue;
        const bool first = s.output == 0;
        // The rejected drafts' positions are computed again; the kept ones and one token more
        // join the output.
        s.computed -= x.drafts - x.kept;
        s.drafts = 0;
        s.output += x.kept + 1;
        const bool finished = s.output >= s.spec.output;
        if (!finished && params_.spec != nullptr)
            s.drafts = std::max<int64_t>(0, std::min(params_.spec->draft_tokens, s.spec.output - s.output - 1));
        if (finished) {
            pool_.free(s.blocks);
            s.blocks.clear();
            s.live = false;
            any_finished = true;
        }
        on_token(x.seq, first, finished);
    }
    if (!any_finished) return;
    running_.erase(std::remove_if(running_.begin(), running_.end(),
                                  [this](int64_t id) { return !seqs_[static_cast<size_t>(id)].live; }),
                   running_.end());
    for (const Scheduled& x : step_.scheduled)
        if (!seqs_[static_cast<size_t>(x.seq)].live) spare_.push_back(x.seq);
}

}  // namespace cosim
