#include "crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "errors.hpp"

namespace cosim::bindings {

namespace {

constexpr std::array<int, 5> kFatal = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kMaxFrames = 64;
// Its own stack: a crash from a stack overflow has none left to run on.
alignas(16) char g_alt_stack[64 * 1024];
int g_fd = -1;
struct sigaction g_previous[NSIG];

void put(const char* text) {
    size_t left = std::strlen(text);
    while (left > 0) {
        const ssize_t n = ::write(g_fd, text, left);
        if (n <= 0) return;
        text += n;
        left -= static_cast<size_t>(n);
    }
}

// Hex by hand: printf is not safe inside a signal handler.
void put_hex(uintptr_t v) {
    char buf[2 + 2 * sizeof v + 1];
    int i = sizeof buf - 1;
    buf[i] = '\0';
    do {
        buf[--i] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v != 0);
    buf[--i] = 'x';
    buf[--i] = '0';
    put(buf + i);
}

void on_fatal(int sig, siginfo_t* info, void*) {
    const int saved = errno;
    const char* abbrev = sigabbrev_np(sig);  // "SEGV"
    put("native crash: ");
    put(abbrev != nullptr ? "SIG" : "signal ?");
    if (abbrev != nullptr) put(abbrev);
    if (sig != SIGABRT) {
        put(" at address ");
        put_hex(reinterpret_cast<uintptr_t>(info->si_addr));
    }
    put("\nbacktrace:\n");
    void* frames[kMaxFrames];
    const int n = ::backtrace(frames, kMaxFrames);
    ::backtrace_symbols_fd(frames, n, g_fd);
    // Whoever handled it before takes over: a fault re-runs its instruction on return
    // and reaches that handler; a signal that was sent (abort() raises one) is sent
    // again, and arrives there once this handler returns.
    ::sigaction(sig, &g_previous[sig], nullptr);
    if (info->si_code <= 0) ::raise(sig);
    errno = saved;
}

}  // namespace

void report_crashes_to(int fd) {
    if (fd < 0) throw ConfigError("report_crashes_to: fd must be an open file descriptor");
    g_fd = fd;
    // The first backtrace() loads libgcc's unwinder (it allocates): never inside a handler.
    void* warm[1];
    ::backtrace(warm, 1);
    stack_t alt{};
    alt.ss_sp = g_alt_stack;
    alt.ss_size = sizeof g_alt_stack;
    ::sigaltstack(&alt, nullptr);
    struct sigaction act{};
    act.sa_sigaction = on_fatal;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    for (const int sig : kFatal) ::sigaction(sig, &act, &g_previous[sig]);
}

}  // namespace cosim::bindings
