#pragma once
// An enum class made from a generated X-macro list of names (cosim_params.hpp): the
// members in the list's order, so a member's value is its code; how many there are; and
// each one's name. The kinds declared in cosim/schema/ become C++ enums through this.

#define COSIM_NAMED_ENUM_MEMBER(name) name,
#define COSIM_NAMED_ENUM_ONE(name) +1
#define COSIM_NAMED_ENUM_TEXT(name) #name,

#define COSIM_NAMED_ENUM(Enum, LIST, count, name_of)                       \
    enum class Enum : int { LIST(COSIM_NAMED_ENUM_MEMBER) };               \
    constexpr int count = 0 LIST(COSIM_NAMED_ENUM_ONE);                    \
    inline const char* name_of(Enum value) {                               \
        static const char* const names[] = {LIST(COSIM_NAMED_ENUM_TEXT)};  \
        const int i = static_cast<int>(value);                             \
        return i >= 0 && i < count ? names[i] : "?";                       \
    }
