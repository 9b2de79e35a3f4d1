#include "hbm.hpp"

#include <sstream>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string size_text(double bytes) {
    std::ostringstream out;
    out.precision(4);
    if (bytes < 9.0e15)  // exact as an integer
        out << static_cast<uint64_t>(bytes) << " bytes (" << bytes / kBytesPerGiB << " GiB)";
    else
        out << bytes << " bytes (" << bytes / kBytesPerGiB << " GiB)";
    return out.str();
}
}  // namespace

void HbmParams::validate(const std::string& where) const {
    COSIM_HBM_PARAMS(COSIM_CHECK_PARAM)
}

Hbm::Hbm(std::string label, const HbmParams& params) : label_(std::move(label)), params_(params) {
    params_.validate(label_);
}

void Hbm::check_fits(const std::string& name, double new_used, double bytes) const {
    if (new_used <= params_.capacity_bytes) return;
    std::ostringstream out;
    out << label_ << ": region '" << name << "' needs " << size_text(bytes) << " but the memory holds "
        << size_text(params_.capacity_bytes) << " and the other regions use " << size_text(new_used - bytes)
        << " (weights + KV cache = " << size_text(new_used) << ")";
    throw CapacityError(out.str());
}

void Hbm::allocate(const std::string& name, double bytes) {
    if (regions_.count(name)) throw SimulationError(label_ + ": region '" + name + "' allocated twice");
    require_non_negative(label_ + " region '" + name + "' size", bytes);
    check_fits(name, used_bytes_ + bytes, bytes);
    regions_[name] = bytes;
    used_bytes_ += bytes;
}

void Hbm::resize(const std::string& name, double bytes) {
    auto it = regions_.find(name);
    if (it == regions_.end()) throw SimulationError(label_ + ": no region '" + name + "'");
    require_non_negative(label_ + " region '" + name + "' size", bytes);
    const double new_used = used_bytes_ - it->second + bytes;
    check_fits(name, new_used, bytes);
    used_bytes_ = new_used;
    it->second = bytes;
}

double Hbm::region_bytes(const std::string& name) const {
    auto it = regions_.find(name);
    return it == regions_.end() ? 0.0 : it->second;
}

}  // namespace cosim
