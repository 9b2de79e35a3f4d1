#pragma once
// High-bandwidth memory of an FPGA board: a capacity shared by named regions
// (weights, KV cache) and a streaming bandwidth of pseudo-channels x
// per-channel bandwidth x efficiency.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "param_rules.hpp"

namespace cosim {

// capacity_bytes, pseudo_channels, channel_bandwidth_gbps (per pseudo-channel), efficiency.
struct HbmParams {
    COSIM_HBM_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    double peak_gbps() const { return static_cast<double>(pseudo_channels) * channel_bandwidth_gbps; }
    double effective_gbps() const { return peak_gbps() * efficiency; }
    // What `ports` ports that each move at most `port_gbps` draw together: up to one port a
    // channel, each reads its own; ports beyond the channels share them.
    double ports_gbps(int64_t ports, double port_gbps) const {
        const double channel = channel_bandwidth_gbps * efficiency;
        return std::min(static_cast<double>(ports) * port_gbps,
                        static_cast<double>(std::min<int64_t>(ports, pseudo_channels)) * channel);
    }
};

class Hbm {
public:
    // `label` names the memory in errors, e.g. "u280.hbm" (GPU memory reuses this model).
    Hbm(std::string label, const HbmParams& params);

    // Reserves `bytes` for region `name`; CapacityError naming both sizes if it does not fit.
    void allocate(const std::string& name, double bytes);
    // Changes an existing region's size, with the same check.
    void resize(const std::string& name, double bytes);

    double region_bytes(const std::string& name) const;
    double used_bytes() const { return used_bytes_; }
    double free_bytes() const { return params_.capacity_bytes - used_bytes_; }
    const HbmParams& params() const { return params_; }

    // Time to stream `bytes` at the effective bandwidth (1 GB/s = 1 byte/ns).
    double stream_ns(double bytes) const {
        check_argument_non_negative("Hbm::stream_ns", "bytes", bytes);
        return bytes / params_.effective_gbps();
    }

private:
    void check_fits(const std::string& name, double new_used, double bytes) const;

    std::string label_;
    HbmParams params_;
    std::map<std::string, double> regions_;
    double used_bytes_ = 0.0;
};

}  // namespace cosim
