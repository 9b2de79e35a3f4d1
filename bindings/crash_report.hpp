// A native crash in a simulation worker (a segfault, an abort) leaves a backtrace
// behind: the worker's parent reads it and attaches it to the WorkerCrashed it raises,
// so a crash names where it happened rather than only the signal that ended it.
#pragma once

namespace cosim::bindings {

// From now on, a fatal signal in this process writes its name, the faulting address
// and a backtrace to `fd`, then goes on to whatever handled that signal before (Python's
// faulthandler, say, or the default: the process still dies of the same signal).
void report_crashes_to(int fd);

}  // namespace cosim::bindings
