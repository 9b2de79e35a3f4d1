#pragma once
// How long a model's forward passes take on a device: the interface every latency formula
// implements, so that a device model (GpuProxy, FpgaDraftAccelerator, the draft unit that
// drives either) asks it the same questions whatever answers them. The implementations:
//   RooflineTiming        the GPU roofline with the serving stack's launch overheads
//   MeasuredTiming        a measured latency table, the roofline where it has no rows
//   OperatorTiming        a measured operator profile (LLMServingSim's or Vidur's)
//   FpgaDecoderTiming     a streaming HLS decoder: MAC array, HBM ports, pipeline
// A new formula is a new implementation (and its line in the factory that picks one,
// GpuTiming::latency_for), never an edit of a device model.
// Pure arithmetic: no SystemC, so a fit can evaluate it outside a simulation.
#include <cstdint>
#include <vector>

namespace cosim {

enum class Phase : int { prefill = 0, decode = 1 };

// One sequence's share of a batched forward pass: a decode token, or a prefill chunk of
// `tokens`, after `context` tokens already in its KV cache. `verify`: a speculative
// decoding's verification of tokens - 1 drafted tokens, which samples at every position,
// so the output head runs for each (a prefill runs it for the last token alone).
struct BatchWork {
    int64_t tokens = 1;
    int64_t context = 0;
    bool decode = true;
    bool verify = false;
};

class LatencyModel {
public:
    virtual ~LatencyModel() = default;
    // What kind of formula this is, as errors and descriptions name it.
    virtual const char* kind() const = 0;
    // One token decoded after `context` tokens, alone on the device.
    virtual double decode_token_ns(int64_t context) const = 0;
    // A prefill of `tokens` after `context`, alone on the device.
    virtual double prefill_ns(int64_t tokens, int64_t context) const = 0;
    // One iteration over a batch (iteration-level batching). A batch of one is the lone
    // operation's time. A formula with no batched form refuses a larger batch (SimulationError).
    virtual double batch_ns(const std::vector<BatchWork>& work) const;
    // Whether measured times, not the formula, answer for `phase`.
    virtual bool profiled(Phase /*phase*/) const { return false; }

protected:
    // The lone operation a batch of one stands for.
    double lone_ns(const BatchWork& w) const {
        return w.decode ? decode_token_ns(w.context) : prefill_ns(w.tokens, w.context);
    }
};

}  // namespace cosim
