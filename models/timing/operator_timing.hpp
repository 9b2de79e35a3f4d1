#pragma once
// Every forward pass, lone or batched, timed from measured operators (OperatorProfile: a
// folder of LLMServingSim or Vidur profiles), with the output head from the roofline when
// the profile measured none. A prefill longer than the operators were measured for runs in
// chunks of the largest measured size, as chunked prefill would run it.
#include <cstdint>
#include <memory>
#include <vector>

#include "latency_model.hpp"
#include "operator_profile.hpp"
#include "roofline_timing.hpp"

namespace cosim {

class OperatorTiming : public LatencyModel {
public:
    OperatorTiming(std::shared_ptr<const OperatorProfile> operators, std::shared_ptr<const RooflineTiming> roofline);

    const char* kind() const override { return "operator_profile"; }
    double decode_token_ns(int64_t context) const override;
    double prefill_ns(int64_t tokens, int64_t context) const override;
    double batch_ns(const std::vector<BatchWork>& work) const override;
    bool profiled(Phase /*phase*/) const override { return true; }

private:
    std::shared_ptr<const OperatorProfile> operators_;
    std::shared_ptr<const RooflineTiming> roofline_;
};

}  // namespace cosim
