#pragma once
// A target run as the GPU decodes it and the host follows it (DeviceOp::gpu_decode_run):
// the GPU decodes up to `limit` tokens, one wait for all of them, and counts them in
// `generated`; the host may change `limit` or ask for the stream meanwhile (notifying
// `retune`), and while it streams the GPU publishes when each token will be done.
#include <cstdint>
#include <vector>

#include <systemc>

namespace cosim {

struct DecodeRun {
    int64_t limit = 0;
    int64_t generated = 0;
    sc_core::sc_event token;   // tokens decoded, or their schedule published
    bool streaming = false;    // someone waits on `token` (shadow sync)
    // While streaming: the kernel time at which each token from `scheduled_from` on
    // will have been decoded (the run cannot change while the host streams it).
    std::vector<uint64_t> schedule;
    int64_t scheduled_from = 0;
    sc_core::sc_event retune;  // `limit` or `streaming` changed under the run
};

}  // namespace cosim
