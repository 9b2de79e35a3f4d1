#pragma once
// A measured latency table (phase, tokens, context, batch -> seconds) that replaces
// the GPU roofline formula. A row at batch b is one iteration in which b sequences
// each compute `tokens` after `context` (decode: one token each); batch 1 is a lone
// operation. Between measured points the time is interpolated linearly, first in
// tokens within each measured context, then in context, then in batch; beyond the
// table the nearest segment is extended. A lookup that would give a non-positive
// time is an error, not a clamp.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "latency_model.hpp"
#include "operator_profile.hpp"

namespace cosim {

struct ProfilePoint {
    Phase phase = Phase::decode;
    int64_t tokens = 0;   // decode rows: 1 (seconds per decoded token)
    int64_t context = 0;  // tokens already in the KV cache
    double seconds = 0.0;
    int64_t batch = 1;    // sequences in the iteration
};

class LatencyProfile {
public:
    LatencyProfile() = default;
    LatencyProfile(std::string source, const std::vector<ProfilePoint>& points);
    // Measured operator times (a folder of LLMServingSim or Vidur profiles) instead of a table:
    // they time every forward pass, lone or batched (OperatorTiming).
    explicit LatencyProfile(OperatorProfile operators);

    const OperatorProfile* operators() const { return operators_.get(); }
    std::shared_ptr<const OperatorProfile> shared_operators() const { return operators_; }

    bool covers(Phase phase) const { return !table_[static_cast<int>(phase)].empty(); }
    // Iterations of several sequences were measured for `phase` (besides batch 1).
    bool covers_batches(Phase phase) const { return table_[static_cast<int>(phase)].size() > 1; }
    double seconds(Phase phase, int64_t tokens, int64_t context, int64_t batch = 1) const;
    const std::string& source() const { return source_; }

private:
    using Curve = std::map<int64_t, double>;  // tokens -> seconds
    std::string source_;
    using Plane = std::map<int64_t, Curve>;   // context -> curve
    std::map<int64_t, Plane> table_[2];       // per phase: batch -> plane
    std::shared_ptr<const OperatorProfile> operators_;
};

}  // namespace cosim
