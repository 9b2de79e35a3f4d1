#include "errors.hpp"

#include <cmath>
#include <sstream>

namespace cosim {

namespace {
std::string describe(const std::string& where, const char* rule, double value) {
    std::ostringstream out;
    out << where << ": must be " << rule << ", got " << value;
    return out.str();
}
}  // namespace

void require_positive(const std::string& where, double value) {
    if (!(std::isfinite(value) && value > 0.0)) throw ConfigError(describe(where, "a finite number > 0", value));
}

void require_non_negative(const std::string& where, double value) {
    if (!(std::isfinite(value) && value >= 0.0)) throw ConfigError(describe(where, "a finite number >= 0", value));
}

void require_fraction(const std::string& where, double value) {
    if (!(std::isfinite(value) && value > 0.0 && value <= 1.0))
        throw ConfigError(describe(where, "in (0, 1]", value));
}

}  // namespace cosim
