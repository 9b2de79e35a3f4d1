#pragma once
// Turns the generated parameter lists (cosim_params.hpp, one X-macro list per struct,
// from cosim/schema/_declarations.py) into struct fields and rule checks, so a
// parameter's name, type, rule and default are written once, in the declarations.
#include <cstdint>
#include <string>

#include "cosim_params.hpp"
#include "errors.hpp"

// Inside a struct: one field per declared parameter, at its declared default.
#define COSIM_DECLARE_PARAM(type, name, rule, init) type name = init;
// Inside validate(where): the declared rule of each parameter, errors naming where.name.
#define COSIM_CHECK_PARAM(type, name, rule, init) ::cosim::check_##rule(where + "." #name, name);

namespace cosim {

inline void check_positive(const std::string& where, double value) { require_positive(where, value); }
inline void check_non_negative(const std::string& where, double value) { require_non_negative(where, value); }
inline void check_fraction(const std::string& where, double value) { require_fraction(where, value); }
template <typename T>
inline void check_any(const std::string&, const T&) {}

}  // namespace cosim
