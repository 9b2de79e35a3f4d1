#pragma once
// Errors raised by the models. The bindings translate each into the Python
// exception of the same name (cosim.errors), keeping the message, so a bad
// parameter or an impossible placement never surfaces as a SystemC abort.
#include <limits>
#include <stdexcept>
#include <string>

namespace cosim {

// A parameter is missing, unknown, of the wrong sign or otherwise unusable.
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A model, KV cache or region does not fit the memory it is placed in.
struct CapacityError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An illegal KVMU transition or a violation of valid <= curr <= ahead.
struct KvmuError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Anything else that makes a simulation impossible to continue.
struct SimulationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws ConfigError("<where>: must be > 0, got <v>") unless value > 0.
void require_positive(const std::string& where, double value);
// Throws ConfigError unless value >= 0.
void require_non_negative(const std::string& where, double value);
// A model's argument on a path taken per token: the check is one comparison, and the message
// (naming the call and the argument) is built only when it fails.
inline void check_argument_non_negative(const char* call, const char* argument, double value) {
    if (!(value >= 0.0 && value <= std::numeric_limits<double>::max()))
        require_non_negative(std::string(call) + ": " + argument, value);
}
inline void check_argument_positive(const char* call, const char* argument, double value) {
    if (!(value > 0.0 && value <= std::numeric_limits<double>::max()))
        require_positive(std::string(call) + ": " + argument, value);
}
// Throws ConfigError unless 0 < value <= 1.
void require_fraction(const std::string& where, double value);

}  // namespace cosim
