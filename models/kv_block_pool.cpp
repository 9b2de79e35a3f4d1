#include "kv_block_pool.hpp"

#include <algorithm>
#include <string>

#include "errors.hpp"

namespace cosim {

KvBlockPool::KvBlockPool(int64_t num_gpu_blocks, bool caching) : caching_(caching) {
    if (num_gpu_blocks < 2)
        throw ConfigError("batching.num_gpu_blocks: " + std::to_string(num_gpu_blocks) +
                          " blocks leave none for requests beside vLLM's null block (at least 2)");
    blocks_.resize(static_cast<size_t>(num_gpu_blocks));
    // Block 0 is the null block (BlockPool.__init__ pops it off the free queue first).
    for (int64_t b = 1; b < num_gpu_blocks; ++b) push_back(b);
}

void KvBlockPool::push_back(int64_t b) {
    Block& block = blocks_[static_cast<size_t>(b)];
    block.prev = tail_;
    block.next = -1;
    block.queued = true;
    if (tail_ >= 0) blocks_[static_cast<size_t>(tail_)].next = b;
    else head_ = b;
    tail_ = b;
    ++free_count_;
}

void KvBlockPool::unlink(int64_t b) {
    Block& block = blocks_[static_cast<size_t>(b)];
    if (block.prev >= 0) blocks_[static_cast<size_t>(block.prev)].next = block.next;
    else head_ = block.next;
    if (block.next >= 0) blocks_[static_cast<size_t>(block.next)].prev = block.prev;
    else tail_ = block.prev;
    block.prev = block.next = -1;
    block.queued = false;
    --free_count_;
}

int64_t KvBlockPool::cached(uint64_t hash) const {
    const auto it = by_hash_.find(hash);
    return it == by_hash_.end() ? -1 : it->second.front();
}

void KvBlockPool::touch(int64_t block) {
    Block& b = blocks_[static_cast<size_t>(block)];
    if (b.ref == 0 && b.queued) unlink(block);
    ++b.ref;
}

void KvBlockPool::evict(int64_t b) {
    Block& block = blocks_[static_cast<size_t>(b)];
    if (block.hash == kNoHash) return;
    auto it = by_hash_.find(block.hash);
    if (it != by_hash_.end()) {
        auto& holders = it->second;
        holders.erase(std::remove(holders.begin(), holders.end(), b), holders.end());
        if (holders.empty()) by_hash_.erase(it);
    }
    block.hash = kNoHash;
}

void KvBlockPool::allocate(int64_t n, std::vector<int64_t>& out) {
    if (n > free_count_)
        throw SimulationError("internal: " + std::to_string(n) + " KV blocks asked of " +
                              std::to_string(free_count_) + " free");
    for (int64_t i = 0; i < n; ++i) {
        const int64_t b = head_;
        unlink(b);
        evict(b);
        blocks_[static_cast<size_t>(b)].ref = 1;
        out.push_back(b);
    }
}

void KvBlockPool::free(const std::vector<int64_t>& blocks) {
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
        Block& b = blocks_[static_cast<size_t>(*it)];
        if (b.ref <= 0) throw SimulationError("internal: a KV block freed twice");
        if (--b.ref == 0) push_back(*it);
    }
}

void KvBlockPool::cache(int64_t block, uint64_t hash) {
    if (!caching_ || hash == kNoHash) return;
    Block& b = blocks_[static_cast<size_t>(block)];
    if (b.hash == hash) return;
    evict(block);
    b.hash = hash;
    by_hash_[hash].push_back(block);
}

}  // namespace cosim
