#pragma once
// vLLM V1's pool of KV-cache blocks (vllm/v1/core/block_pool.py, BlockPool): a fixed
// number of blocks of block_size tokens, the first of them vLLM's placeholder null block,
// which no request ever holds. Free blocks wait in a queue: allocation takes from its head,
// a freed block joins its tail (FreeKVCacheBlockQueue). With prefix caching a full block
// keeps the hash of the tokens it holds after it is freed, so a later request whose prefix
// matches takes it back (touch) instead of recomputing it, until allocation reuses the
// block for other tokens and evicts the hash (_maybe_evict_cached_block). A request frees
// its blocks last first, so its tail is evicted before its head (KVCacheManager.free).
// Pure bookkeeping: no SystemC, no time.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace cosim {

class KvBlockPool {
public:
    static constexpr uint64_t kNoHash = 0;

    // `num_gpu_blocks` as vLLM counts them (the null block included); `caching`: prefix caching.
    KvBlockPool(int64_t num_gpu_blocks, bool caching);

    // Blocks requests can hold: all but the null block.
    int64_t usable_blocks() const { return static_cast<int64_t>(blocks_.size()) - 1; }
    // Blocks in the free queue, cached ones included (they are evictable).
    int64_t free_blocks() const { return free_count_; }
    bool caching() const { return caching_; }

    // The block cached under `hash`, or -1.
    int64_t cached(uint64_t hash) const;
    int32_t ref_count(int64_t block) const { return blocks_[static_cast<size_t>(block)].ref; }
    // One more request holds `block` (a prefix-cache hit): out of the free queue if nobody did.
    void touch(int64_t block);
    // `n` blocks from the head of the free queue, evicting the hashes they kept; the caller
    // has checked that free_blocks() >= n.
    void allocate(int64_t n, std::vector<int64_t>& out);
    // A request gives its blocks back, last first; a block nobody holds any more joins the
    // free queue's tail (keeping its hash).
    void free(const std::vector<int64_t>& blocks);
    // `block` holds the full block of tokens `hash` names (prefix caching only).
    void cache(int64_t block, uint64_t hash);

private:
    struct Block {
        int32_t ref = 0;
        uint64_t hash = kNoHash;
        int64_t prev = -1;
        int64_t next = -1;
        bool queued = false;
    };
    void push_back(int64_t b);
    void unlink(int64_t b);
    void evict(int64_t b);

    std::vector<Block> blocks_;
    int64_t head_ = -1;
    int64_t tail_ = -1;
    int64_t free_count_ = 0;
    bool caching_;
    // Several blocks may hold the same tokens (two requests computed one prefix at once);
    // a lookup returns the first (BlockHashToBlockMap.get_one_block).
    std::unordered_map<uint64_t, std::vector<int64_t>> by_hash_;
};

}  // namespace cosim
