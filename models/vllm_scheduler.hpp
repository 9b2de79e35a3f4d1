#pragma once
// vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, Scheduler.schedule, as of vLLM
// 0.19) over a pool of KV blocks (kv_block_pool.hpp), for requests that each prefill a
// prompt and generate a fixed number of tokens. There is no prefill or decode phase: at
// each step a request is given tokens so that its computed tokens catch up with its tokens
// (prompt plus output so far), within a budget of max_num_batched_tokens per step
// (chunked prefill). The step serves the running requests first, in admission order; a
// running request that needs a block when none is free preempts the newest running
// request (the last admitted), itself last: its blocks are freed, its computed tokens
// forgotten, and it goes back to the head of the waiting queue, to be recomputed
// (prompt and output so far) when readmitted. Only a step that preempted nothing admits
// waiting requests, in order, while fewer than max_num_seqs run and the budget lasts; one
// is admitted only when the blocks of its whole sequence so far fit beside the prefix-
// cache hits it reuses (scheduler_reserve_full_isl, on by default in vLLM 0.19), and the
// first that does not fit stops admission (FCFS). A request samples a token at the end of
// each step in which it caught up; the first of them ends its prefill.
// Speculative decoding (params.spec, spec_decode.hpp), as vLLM V1 schedules it: a running
// request that sampled holds drafts for its next step, its tokens counting them
// (num_tokens_with_spec), so a verification takes 1 + drafts of the step's budget; a budget
// cut short drops the drafts past it. After the pass, verify() draws the drafts each
// verification keeps; complete() takes the rejected ones back from its computed tokens (their
// KV slots stay its own, overwritten later, as vLLM's num_computed_tokens -= num_rejected)
// and gives it the kept drafts and one token more. A request drafts after every step it
// sampled in, no draft past its last token; a prefill chunk carries none; a preempted
// request drops its drafts. A model proposer (an EAGLE head, MTP, a draft model) writes its
// drafts' KV beside the target's: each running request's blocks are allocated for
// `lookahead_tokens` (k) positions past the tokens scheduled (vLLM's num_lookahead_tokens,
// capped at the window); a request admitted from the waiting queue has computed nothing and
// reserves none.
// What it leaves out: the long-prefill threshold (0 by default),
// the KV watermark (0 by default), priority scheduling, and asynchronous scheduling (the
// step is scheduled when the previous one has ended, so a finished request's blocks are
// free one step earlier than under vLLM's async scheduling).
// Pure bookkeeping: no SystemC, no time.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "kv_block_pool.hpp"
#include "spec_decode.hpp"

namespace cosim {

struct VllmSchedulerParams {
    int64_t block_size = 16;              // CacheConfig.block_size
    int64_t num_gpu_blocks = 0;           // as vLLM counts them, its null block included
    int64_t max_num_seqs = 256;           // SchedulerConfig.max_num_seqs
    int64_t max_num_batched_tokens = 2048;  // SchedulerConfig.max_num_batched_tokens
    bool prefix_caching = true;           // CacheConfig.enable_prefix_caching
    int64_t max_model_len = 0;            // the model's window: a request's prompt + output at most
    std::shared_ptr<const SpecDecodeSetup> spec;  // speculative decoding (its drafts and acceptance), or none
    int64_t lookahead_tokens = 0;         // KV slots a running request keeps past its scheduled tokens
};

// One request: `prompt` tokens, then `output` generated tokens. The first `shared_prefix`
// prompt tokens are the same for every request that gives a non-zero value (a system
// prompt); other tokens are the request's own (`uid` names them).
struct SeqSpec {
    int64_t prompt = 0;
    int64_t output = 0;
    int64_t shared_prefix = 0;
    int64_t uid = 0;
};

class VllmScheduler {
public:
    explicit VllmScheduler(const VllmSchedulerParams& params);

    // ConfigError if the request could never run (longer than the window, or more blocks
    // than the pool holds).
    void check(const SeqSpec& spec) const;
    // Queues a request at the tail of the waiting queue (checked); its handle.
    int64_t add(const SeqSpec& spec);

    struct Scheduled {
        int64_t seq = 0;
        int64_t tokens = 0;           // computed this step
        int64_t computed_before = 0;  // in its KV cache before them
        int64_t drafts = 0;           // of them, drafted tokens it verifies
        int64_t kept = 0;             // verify(): the drafts it keeps
        int64_t uid = 0;              // the request's own id
    };
    struct Step {
        std::vector<Scheduled> scheduled;
        int64_t preempted = 0;        // running requests preempted for blocks
        bool kv_limited = false;      // a waiting request was left out because its blocks did not fit
    };
    // The next step's work (num_computed_tokens advance as vLLM does at schedule time).
    const Step& schedule();
    // Speculative decoding, after schedule(): draws the drafts each verification keeps
    // (Scheduled::kept), keyed by the request and its pass.
    void verify();
    // Whether a scheduled request samples at the end of the step (it caught up).
    bool samples(const Scheduled& x) const;
    // The drafts a request that samples this step makes for its next (after verify()): k, or
    // fewer near its last token; 0 once it is done or without speculation.
    int64_t drafts_after(const Scheduled& x) const;
    // Whether a scheduled request has sampled nothing yet (this step gives its first token).
    bool first_sample(const Scheduled& x) const;
    // After the step's forward pass: every scheduled request that caught up samples a token
    // (a verification, its kept drafts and one token more);
    // `on_token(seq, first, finished)` for each. A finished request's blocks are freed and
    // its handle is reused.
    void complete(const std::function<void(int64_t seq, bool first, bool finished)>& on_token);

    bool idle() const { return running_.empty() && waiting_.empty(); }
    size_t running() const { return running_.size(); }
    size_t waiting() const { return waiting_.size(); }
    int64_t free_blocks() const { return pool_.free_blocks(); }
    int64_t usable_blocks() const { return pool_.usable_blocks(); }
    // Per request, once finished: how often it was preempted, and the tokens it recomputed
    // on readmission (beyond its own blocks still cached); prefix-cache hits at its first admission.
    int32_t preemptions(int64_t seq) const { return seqs_[static_cast<size_t>(seq)].preemptions; }
    int64_t recomputed(int64_t seq) const { return seqs_[static_cast<size_t>(seq)].recomputed; }
    int64_t cached_prompt(int64_t seq) const { return seqs_[static_cast<size_t>(seq)].cached_prompt; }
    const VllmSchedulerParams& params() const { return params_; }

private:
    struct Seq {
        SeqSpec spec;
        int64_t computed = 0;
        int64_t output = 0;
        std::vector<int64_t> blocks;
        int64_t hashed = 0;  // leading blocks given their hash
        int32_t preemptions = 0;
        int64_t recomputed = 0;
        int64_t cached_prompt = -1;  // prompt tokens found cached at first admission
        bool live = false;
        int64_t drafts = 0;  // drafted for its next step
        int64_t passes = 0;  // verifications so far (the key of their draws)
    };
    int64_t tokens(const Seq& s) const { return s.spec.prompt + s.output; }
    int64_t tokens_with_spec(const Seq& s) const { return tokens(s) + s.drafts; }
    int64_t blocks_for(int64_t tokens) const { return (tokens + params_.block_size - 1) / params_.block_size; }
    // The KV slots `tokens` computed tokens hold with the proposer's lookahead past them (a
    // request's tokens never pass the window: check()).
    int64_t slots_for(int64_t tokens) const {
        return std::min(tokens + params_.lookahead_tokens, params_.max_model_len);
    }
    uint64_t hash(const Seq& s, int64_t block) const;
    // Prefix-cache hits: the leading blocks of `s` some block still holds (at most num_tokens - 1 tokens).
    void lookup(const Seq& s, std::vector<int64_t>& hits) const;
    int64_t evictable(const std::vector<int64_t>& hits) const;
    bool grow(Seq& s, int64_t new_tokens);
    bool admit(Seq& s, const std::vector<int64_t>& hits, int64_t new_tokens);
    void cache_full(Seq& s, int64_t upto_tokens);
    void preempt(int64_t seq);

    VllmSchedulerParams params_;
    KvBlockPool pool_;
    std::vector<Seq> seqs_;
    std::vector<int64_t> spare_;  // handles of finished requests
    std::vector<int64_t> running_;  // admission order
    std::deque<int64_t> waiting_;
    Step step_;
    std::vector<int64_t> hits_;  // scratch
};

}  // namespace cosim
