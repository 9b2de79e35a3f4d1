// libheteroreason_embed: an sc_main for processes that drive the SystemC kernel themselves
// (Python through cppyy or pysystemc, a test harness). Debian's libsystemc.so is linked with
// immediate binding and refers to sc_main, so it cannot be loaded into a process that has
// none; loading this first (RTLD_GLOBAL) lets it load. A C++ program links its own sc_main
// and never this library. Called, it says why and fails.
#include <cstdio>

extern "C" int sc_main(int, char*[]) {
    std::fputs("libheteroreason_embed: this process has no sc_main of its own; it drives the kernel with "
               "sc_start() instead\n",
               stderr);
    return 1;
}
