// The plain autoregressive system elaborated from its top module, as a C++ user of the
// library does it: an AutoregressiveSpec (the target GPU and model of node_params.hpp, two
// GPUs, one request at a time each), the AutoregressiveTop that owns the dispatcher, the
// GPUs, their servers and the host slots and binds their sockets, three requests handed to
// its dispatcher when it asks, and the kernel run until the last is served:
//   request 0   48 prompt tokens, 3 output tokens
//   request 1   48 prompt tokens, 2 output tokens
//   request 2   24 prompt tokens, 2 output tokens
// All arrive at 0; request 2 waits for the first GPU to come free. README.md works the log
// out by hand, and CI compares it with target_alone_top.expected.
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include <systemc>

#include <heteroreason/autoregressive_top.hpp>
#include <heteroreason/sim_time.hpp>

#include "node_params.hpp"

int sc_main(int, char*[]) {
    cosim::AutoregressiveSpec spec;
    spec.gpu = example::gpu();
    spec.model = example::target_model();
    spec.power = example::power(20.0, 400.0, 300.0, 60.0);
    spec.target_devices = 2;
    cosim::AutoregressiveTop top("autoregressive", spec);

    cosim::TraceChunk requests;
    for (auto [prompt, output] : {std::pair<int32_t, int64_t>{48, 3}, {48, 2}, {24, 2}}) {
        cosim::TraceProblem p;
        p.prompt_tokens = prompt;
        p.output_tokens = output;
        requests.problems.push_back(p);
    }
    // The dispatcher pauses the kernel when it wants the trace's next chunk; an empty chunk
    // ends the trace.
    std::vector<cosim::TraceChunk> chunks{requests, cosim::TraceChunk{}};
    size_t next = 0;
    for (;;) {
        sc_core::sc_start();
        if (const std::exception_ptr error = top.error()) std::rethrow_exception(error);
        if (!top.dispatcher().wants_chunk() || next == chunks.size()) break;
        top.dispatcher().supply(chunks[next++]);
    }
    for (const cosim::ServedRequest& r : top.take_finished())
        std::printf("request %lld on target%d: started %12.3f ns, first token %12.3f ns, done %12.3f ns\n",
                    static_cast<long long>(r.request), r.target_device, cosim::units_to_ns(r.start_units),
                    cosim::units_to_ns(r.first_token_units), cosim::units_to_ns(r.end_units));
    for (int i = 0; i < top.gpus(); ++i)
        std::printf("target%d held %12.3f ns\n", i, top.server(i)->held_ns());
    return 0;
}
