#pragma once
// The few checks the C++ unit tests need: each failed check prints its file, line and
// values, and check_failures() becomes the program's exit status.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include <systemc>  // declares sc_main, which every test defines, with C linkage

namespace check {

inline int& failures() {
    static int count = 0;
    return count;
}

inline void fail(const char* file, int line, const std::string& what) {
    std::fprintf(stderr, "%s:%d: %s\n", file, line, what.c_str());
    ++failures();
}

inline void near(const char* file, int line, const char* expr, double got, double want, double tolerance) {
    if (!(std::fabs(got - want) <= tolerance))
        fail(file, line, std::string(expr) + " is " + std::to_string(got) + ", expected " + std::to_string(want));
}

}  // namespace check

#define CHECK(cond) \
    do { \
        if (!(cond)) ::check::fail(__FILE__, __LINE__, "failed: " #cond); \
    } while (0)
// Exact for values that are whole numbers of ns, as the tests' parameters make them.
#define CHECK_EQ_NUM(got, want) ::check::near(__FILE__, __LINE__, #got, static_cast<double>(got), static_cast<double>(want), 0.0)
#define CHECK_NEAR(got, want, tolerance) ::check::near(__FILE__, __LINE__, #got, (got), (want), (tolerance))
// `stmt` must throw `type` (a message containing `fragment`).
#define CHECK_THROWS(type, fragment, stmt) \
    do { \
        bool thrown_ = false; \
        try { \
            stmt; \
        } catch (const type& e_) { \
            thrown_ = true; \
            if (std::string(e_.what()).find(fragment) == std::string::npos) \
                ::check::fail(__FILE__, __LINE__, std::string(#stmt " threw '") + e_.what() + "', not naming '" fragment "'"); \
        } \
        if (!thrown_) ::check::fail(__FILE__, __LINE__, "did not throw " #type ": " #stmt); \
    } while (0)

inline int check_failures() {
    if (::check::failures() == 0) std::printf("all checks passed\n");
    return ::check::failures() == 0 ? 0 : 1;
}
