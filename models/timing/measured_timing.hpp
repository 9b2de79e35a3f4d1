#pragma once
// A measured latency table (LatencyProfile: phase, tokens, context, batch -> seconds) that
// answers for the phases it covers; the roofline answers for the rest. A batch of several
// sequences where the table measured batches of a phase: that part at its size and mean
// context (prefill: mean tokens too); an iteration holding both parts is the batch's
// roofline scaled by the parts' measured over modelled times.
#include <cstdint>
#include <memory>
#include <vector>

#include "latency_model.hpp"
#include "latency_profile.hpp"
#include "roofline_timing.hpp"

namespace cosim {

class MeasuredTiming : public LatencyModel {
public:
    MeasuredTiming(LatencyProfile profile, std::shared_ptr<const RooflineTiming> roofline);

    const char* kind() const override { return "latency_profile"; }
    double decode_token_ns(int64_t context) const override;
    double prefill_ns(int64_t tokens, int64_t context) const override;
    double batch_ns(const std::vector<BatchWork>& work) const override;
    bool profiled(Phase phase) const override { return profile_.covers(phase); }

private:
    // A batch's part of one phase at its size, mean tokens and mean context.
    double measured_ns(Phase phase, const std::vector<BatchWork>& part) const;

    LatencyProfile profile_;
    std::shared_ptr<const RooflineTiming> roofline_;
};

}  // namespace cosim
