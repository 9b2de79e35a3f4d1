#pragma once
// A measured latency table (phase, tokens, context -> seconds) that replaces
// the GPU roofline formula. Between measured points the time is interpolated
// linearly, first in tokens within each measured context, then in context;
// beyond the table the nearest segment is extended. A lookup that would give a
// non-positive time is an error, not a clamp.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cosim {

enum class Phase : int { prefill = 0, decode = 1 };

struct ProfilePoint {
    Phase phase = Phase::decode;
    int64_t tokens = 0;   // decode rows: 1 (seconds per decoded token)
    int64_t context = 0;  // tokens already in the KV cache
    double seconds = 0.0;
};

class LatencyProfile {
public:
    LatencyProfile() = default;
    LatencyProfile(std::string source, const std::vector<ProfilePoint>& points);

    bool covers(Phase phase) const { return !table_[static_cast<int>(phase)].empty(); }
    double seconds(Phase phase, int64_t tokens, int64_t context) const;
    const std::string& source() const { return source_; }

private:
    using Curve = std::map<int64_t, double>;  // tokens -> seconds
    std::string source_;
    std::map<int64_t, Curve> table_[2];      // per phase: context -> curve
};

}  // namespace cosim
