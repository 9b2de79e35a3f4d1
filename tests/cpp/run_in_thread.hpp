#pragma once
// Runs a test body in an SC_THREAD (where the models may wait), then the kernel to the end.
#include <exception>
#include <functional>
#include <string>

#include <systemc>

#include "check.hpp"

struct TestThread : sc_core::sc_module {
    std::function<void()> body;
    SC_HAS_PROCESS(TestThread);
    TestThread(sc_core::sc_module_name name, std::function<void()> b) : sc_core::sc_module(name), body(std::move(b)) {
        SC_THREAD(run);
    }
    void run() {
        try {
            body();
        } catch (const std::exception& e) {
            ::check::fail(__FILE__, __LINE__, std::string("the test body threw: ") + e.what());
        }
    }
};

// Elaborates `top` with the body and runs the simulation until nothing is left to do.
inline int run_in_thread(std::function<void()> body) {
    TestThread thread("test", std::move(body));
    sc_core::sc_start();
    return check_failures();
}
